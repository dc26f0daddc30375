//! Running a [`Schedule`] on Locust: a master and `workers` worker processes, headless,
//! bounded in time, on this machine — or the exact commands to start them on others.
//!
//! Everything that can be checked before load is checked first: the host answers a TCP
//! connect, the Locust executable exists. A master that exits non-zero or workers that
//! never connect (`--expect-workers` not met within its wait) end the run with the
//! master's own last words; statistics missing a stage are refused when read.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use super::locustfile::locustfile;
use super::process::{
    check_host, find_engine, free_port, kill, path_arg, spawn_logged, tail, wait_bounded,
};
use super::schedule::Schedule;
use super::stats::EngineStats;
use crate::error::{Error, Result};

/// Where perfshape looks for Locust first: this environment variable (a path to the
/// `locust` executable); then `target/engines-venv/bin/locust` (where `.ci/run` installs
/// it), then `locust` on the `PATH`.
pub const LOCUST_ENV: &str = "PERFSHAPE_LOCUST";

/// How long the master waits for its workers to connect before giving up.
pub const WORKER_WAIT: Duration = Duration::from_secs(20);

/// The most workers a local run starts.
pub const MAX_LOCAL_WORKERS: usize = 16;

/// One Locust run: which executable, how many workers, against which host, where its
/// files go.
#[derive(Clone, Debug)]
pub struct LocustRun {
    locust: PathBuf,
    workers: usize,
    host: String,
    dir: PathBuf,
    worker_wait: Duration,
}

impl LocustRun {
    /// A run of `workers` local worker processes (0: one process, no master) against
    /// `host` (`http://host:port`, only the host the user names), writing the locustfile,
    /// logs and statistics under `dir`. Refused at once when the host does not accept a
    /// TCP connection or Locust cannot be found.
    pub fn new(host: &str, workers: usize, dir: impl Into<PathBuf>) -> Result<LocustRun> {
        let run = LocustRun::remote(host, workers, dir)?;
        Ok(run.executable(find_locust()?))
    }

    /// A run whose commands go to other machines ([`remote_commands`](Self::remote_commands)):
    /// nothing runs here, so Locust need not be installed here, and the commands name `locust`
    /// as each load machine's `PATH` finds it. The host is still checked at once.
    pub fn remote(host: &str, workers: usize, dir: impl Into<PathBuf>) -> Result<LocustRun> {
        perfshape::__support::check_range("workers", workers, 0, MAX_LOCAL_WORKERS, "")?;
        let host = check_host(host)?;
        Ok(LocustRun {
            locust: PathBuf::from("locust"),
            workers,
            host,
            dir: dir.into(),
            worker_wait: WORKER_WAIT,
        })
    }

    /// Runs this Locust executable instead of the one found by [`find_locust`].
    pub fn executable(mut self, locust: impl Into<PathBuf>) -> LocustRun {
        self.locust = locust.into();
        self
    }

    /// How long the master waits for its workers (default [`WORKER_WAIT`]; whole seconds,
    /// at least 1).
    pub fn worker_wait(mut self, wait: Duration) -> LocustRun {
        self.worker_wait = wait.max(Duration::from_secs(1));
        self
    }

    /// The Locust executable this run uses.
    pub fn locust(&self) -> &Path {
        &self.locust
    }

    /// The locustfile's path.
    pub fn locustfile(&self) -> PathBuf {
        self.dir.join("locustfile.py")
    }

    /// The statistics file Locust writes (`--json-file`).
    pub fn stats_file(&self) -> PathBuf {
        self.dir.join("stats.json")
    }

    /// The master's arguments for a local run (or the single process's, without workers),
    /// its bus on 127.0.0.1:`port`.
    pub fn master_args(&self, schedule: &Schedule, port: u16) -> Vec<String> {
        let file = path_arg(&self.locustfile());
        let stats = path_arg(&self.dir.join("stats"));
        self.args(schedule, &file, &stats, "127.0.0.1", port)
    }

    /// A local worker's arguments.
    pub fn worker_args(&self, port: u16) -> Vec<String> {
        worker_args(&path_arg(&self.locustfile()), "127.0.0.1", port)
    }

    /// The commands to run this schedule with workers on other machines: the master's
    /// (its bus on `bind`:5557 — the address the workers reach it at, which the user
    /// names; the locustfile and statistics in its working folder) and each worker's
    /// (`MASTER_HOST` to be replaced by that address), each starting with this run's Locust
    /// executable (`locust` for a [`remote`](Self::remote) run).
    pub fn remote_commands(&self, schedule: &Schedule, bind: &str) -> (String, String) {
        let locust = path_arg(&self.locust);
        let master = self.args(schedule, "locustfile.py", "stats", bind, 5557);
        let worker = worker_args("locustfile.py", "MASTER_HOST", 5557);
        (
            format!("{locust} {}", master.join(" ")),
            format!("{locust} {}", worker.join(" ")),
        )
    }

    fn args(
        &self,
        schedule: &Schedule,
        file: &str,
        stats: &str,
        bind: &str,
        port: u16,
    ) -> Vec<String> {
        // The bound: the locustfile ends the run itself a worker report (3 s) after the
        // last stage.
        let run_time = schedule.total().as_secs_f64().ceil() as u64 + 6;
        let users = schedule.users().to_string();
        let mut args: Vec<String> = [
            "-f",
            file,
            "--headless",
            "--host",
            &self.host,
            "--users",
            &users,
            "--spawn-rate",
            &users,
            "--run-time",
            &format!("{run_time}s"),
            "--stop-timeout",
            "5",
            "--json-file",
            stats,
            "--csv",
            stats,
            // Failed requests are judged from the statistics (and refused there, named);
            // a non-zero exit means Locust itself failed.
            "--exit-code-on-error",
            "0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if self.workers > 0 {
            args.extend(
                [
                    "--master",
                    "--master-bind-host",
                    bind,
                    "--master-bind-port",
                    &port.to_string(),
                    "--expect-workers",
                    &self.workers.to_string(),
                    "--expect-workers-max-wait",
                    &self.worker_wait.as_secs().to_string(),
                ]
                .iter()
                .map(|s| s.to_string()),
            );
        }
        args
    }

    /// Writes the locustfile and runs the master and its workers to the end, bounded by
    /// the schedule's length plus the workers' wait and a minute; returns Locust's
    /// statistics.
    pub fn run(&self, schedule: &Schedule) -> Result<EngineStats> {
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io(format!("creating {}", self.dir.display()), e))?;
        let file = self.locustfile();
        std::fs::write(&file, locustfile(schedule)?)
            .map_err(|e| Error::io(format!("writing {}", file.display()), e))?;
        let _ = std::fs::remove_file(self.stats_file());
        let port = free_port()?;
        let started = Instant::now();
        let master_log = self.dir.join("master.log");
        let mut master = self.spawn(&self.master_args(schedule, port), &master_log)?;
        let mut workers = Vec::new();
        for i in 0..self.workers {
            let log = self.dir.join(format!("worker-{i}.log"));
            match self.spawn(&self.worker_args(port), &log) {
                Ok(child) => workers.push(child),
                Err(e) => {
                    kill(&mut master);
                    workers.iter_mut().for_each(kill);
                    return Err(e);
                }
            }
        }
        let bound = schedule.total() + self.worker_wait + Duration::from_secs(60);
        let status = wait_bounded(&mut master, bound);
        // Workers quit when the master tells them; any left after a few seconds are ended.
        for worker in &mut workers {
            if wait_bounded(worker, Duration::from_secs(5)).is_none() {
                kill(worker);
            }
        }
        let Some(status) = status else {
            kill(&mut master);
            return Err(Error::Engine {
                engine: "locust",
                what: format!(
                    "the master did not finish within {} s; its log: {}",
                    bound.as_secs(),
                    tail(&master_log)
                ),
            });
        };
        if !status.success() {
            return Err(Error::Engine {
                engine: "locust",
                what: format!(
                    "the master exited with {status} ({} {}); its log: {}",
                    self.locust.display(),
                    self.master_args(schedule, port).join(" "),
                    tail(&master_log)
                ),
            });
        }
        if !self.stats_file().exists() {
            return Err(Error::Engine {
                engine: "locust",
                what: format!(
                    "the master exited without writing {}; its log: {}",
                    self.stats_file().display(),
                    tail(&master_log)
                ),
            });
        }
        let took = started.elapsed();
        EngineStats::read(&self.stats_file()).map(|stats| EngineStats {
            took: Some(took),
            ..stats
        })
    }

    fn spawn(&self, args: &[String], log: &Path) -> Result<Child> {
        spawn_logged("locust", &self.locust, args, log)
    }
}

/// A worker's arguments: the locustfile and the master's bus.
fn worker_args(file: &str, master: &str, port: u16) -> Vec<String> {
    let port = port.to_string();
    [
        "-f",
        file,
        "--worker",
        "--master-host",
        master,
        "--master-port",
        &port,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// The Locust executable: [`LOCUST_ENV`], then `locust` in
/// [`ENGINES_VENV`](super::ENGINES_VENV), then on the `PATH`.
pub fn find_locust() -> Result<PathBuf> {
    find_engine("locust", LOCUST_ENV, "locust")
}
