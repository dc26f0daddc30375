//! `perfshape`: reproduce the source experiments' tables on this machine.
//!
//! With no arguments it runs every fixture (`perfshape all`), which is what
//! `cargo run --release` does.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use exit::{EXIT_STATUS, Exit};
use perfshape::claim::artifact_dir;
use perfshape::experiment::{Experiment, Measured};
use perfshape::limits::DEFAULT_MAX_BLOCKING;
use perfshape::report::{TABLE_SUFFIX, TimeAxis, experiment_svg, experiment_table, timeline};

mod exit;

#[derive(Parser)]
#[command(
    version,
    about = "Reproduce the async-vs-blocking experiments as performance shapes",
    after_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Where the fixtures are (default: ./fixtures, else the crate's own).
    #[arg(long, global = true)]
    fixtures: Option<PathBuf>,
    /// Print every request's begin and completion, as the seed's client did.
    #[arg(long, short, global = true)]
    verbose: bool,
    /// Write raw per-request records and summaries to this JSON file (one per experiment
    /// is always written to $PERFSHAPE_ARTIFACTS, else target/perfshape/).
    #[arg(long, global = true)]
    json: Option<PathBuf>,
    /// How the timelines' panels share time: one axis for all (rows compare at their true
    /// scale), or each its own (every row's detail).
    #[arg(long, global = true, value_enum, default_value_t = Axis::Shared)]
    timeline_axis: Axis,
}

/// [`TimeAxis`], as the command line spells it.
#[derive(Clone, Copy, clap::ValueEnum)]
enum Axis {
    Shared,
    PerPanel,
}

impl From<Axis> for TimeAxis {
    fn from(axis: Axis) -> TimeAxis {
        match axis {
            Axis::Shared => TimeAxis::Shared,
            Axis::PerPanel => TimeAxis::PerPanel,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run every fixture (the default).
    All,
    /// Run one fixture.
    Run {
        /// The fixture file, e.g. fixtures/seed-000-why-async.toml.
        fixture: PathBuf,
    },
    /// List the fixtures and their scenarios.
    List,
    /// Serve every server strategy on a chosen pool, for external load tools (JMeter, k6,
    /// oha, wrk): `/blocking?ms=N`, `/async?ms=N`, `/offload?ms=N`,
    /// `/mixed?block_ms=N&wait_ms=M`, `/cpu?ms=N`, `/lock?ms=N`, `/health`.
    Serve {
        /// Server worker threads.
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// Server blocking-thread cap.
        #[arg(long, default_value_t = DEFAULT_MAX_BLOCKING)]
        max_blocking: usize,
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        bind: std::net::SocketAddr,
        /// Stop after this many seconds (Ctrl-C stops it sooner).
        #[arg(long = "for", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        seconds: u64,
    },
    /// Raise concurrency step by step against a URL and report where throughput stops
    /// growing: "behaves like a blocking pool of ≈k".
    Probe {
        /// The endpoint, e.g. http://127.0.0.1:8080/blocking?ms=20.
        url: String,
        /// The highest concurrency tried (steps double from 1).
        #[arg(long, default_value_t = 64)]
        max_concurrency: usize,
        /// How long each step offers load, in milliseconds.
        #[arg(long, default_value_t = 500)]
        step_ms: u64,
        /// Seconds before one request counts as failed.
        #[arg(long, default_value_t = 30)]
        timeout: u64,
    },
    /// Offer a closed loop of users to a URL for a while and print what the client saw
    /// (sent = ok + failed, throughput, latency percentiles): a small wrk.
    Load {
        /// The endpoint, e.g. http://127.0.0.1:8080/health.
        url: String,
        /// Concurrent users, each sending its next request as soon as its response is in.
        #[arg(long, default_value_t = 16)]
        users: usize,
        /// How long to offer load, in seconds.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=600))]
        seconds: u64,
        /// Pause between a response and the user's next request, in milliseconds.
        #[arg(long, default_value_t = 0)]
        think_ms: u64,
        /// Load-generator worker threads.
        #[arg(long, default_value_t = 2)]
        client_workers: usize,
    },
    /// Sum what the claims of a run measured against their physical limit — what their
    /// rounds had to wait for however fast the machine — from their JSON reports.
    Limits {
        /// The folder of the claims' JSON reports (default: target/perfshape).
        dir: Option<PathBuf>,
        /// nextest's JUnit report of the same run, for the suite's test time.
        #[arg(long)]
        junit: Option<PathBuf>,
    },
    /// Summarise a run for people: the claims as a Markdown table (appended to
    /// $GITHUB_STEP_SUMMARY when set, printed otherwise) and one self-contained HTML page
    /// with every claim's rounds against its band, the experiments' tables and timelines,
    /// and the probes' curves.
    Report {
        /// The folder of the run's JSON (default: target/perfshape).
        dir: Option<PathBuf>,
        /// Where to write the HTML (default: report.html in that folder).
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// Prove the gate can fail: run every claim of perfshape's catalog on its negative
    /// control — a deliberately wrong setup — and check that each comes out broken.
    Selftest {
        /// Run the claims as claimed instead (each must hold).
        #[arg(long)]
        claimed: bool,
        /// Only the entries whose name contains this.
        #[arg(long)]
        only: Option<String>,
    },
    /// Run a fixture's rows on Locust — a master and local worker processes, headless,
    /// bounded in time — and judge its claims from Locust's statistics; or, with
    /// --print-commands, write the locustfile and print the commands to run the master and
    /// workers on other machines.
    Locust {
        /// The fixture, e.g. fixtures/seed-004-jmeter-endpoints.toml.
        fixture: PathBuf,
        /// The service to load, http://host:port (only the host you name).
        #[arg(long)]
        host: String,
        /// Local worker processes (0: one Locust process, no master).
        #[arg(long, default_value_t = 2)]
        workers: usize,
        /// Where the locustfile, logs and statistics go.
        #[arg(long, default_value = "target/perfshape/locust")]
        dir: PathBuf,
        /// Write the locustfile and print the master and worker commands; run nothing.
        #[arg(long)]
        print_commands: bool,
        /// With --print-commands: the address the master's bus listens on, which the
        /// workers on other machines connect to (loopback unless you name one).
        #[arg(long, default_value = "127.0.0.1")]
        master_bind: String,
        /// Also judge each row against the model (the host is `perfshape serve` on the
        /// fixture's pool).
        #[arg(long)]
        against_model: bool,
        #[command(flatten)]
        schedule: ScheduleArgs,
    },
    /// Judge a fixture's claims from an engine's statistics produced elsewhere: Locust's
    /// --json-file output or _stats.csv, or k6's end-of-test summary. Give the same
    /// schedule flags the engine's script was written with.
    Judge {
        /// The fixture.
        fixture: PathBuf,
        /// The statistics file; several (k6-operator's runners' summaries) are added up.
        #[arg(required = true)]
        stats: Vec<PathBuf>,
        /// Also judge each row against the model (the host was `perfshape serve` on the
        /// fixture's pool).
        #[arg(long)]
        against_model: bool,
        #[command(flatten)]
        schedule: ScheduleArgs,
    },
    /// Write a fixture's rows as a script for another engine.
    Export {
        #[command(subcommand)]
        engine: ExportEngine,
    },
    /// Predict with the model, running nothing: a fixture's scenarios, or the what-if the
    /// flags describe (more workers? a bigger blocking pool? a connection cap?).
    Model {
        /// A fixture whose scenarios to predict; without it, the flags describe one.
        fixture: Option<PathBuf>,
        #[command(flatten)]
        what_if: WhatIf,
    },
}

/// The engines `perfshape export` writes for.
#[derive(Subcommand)]
enum ExportEngine {
    /// A k6 script: one scenario per row and round, ready for `k6 run` or k6-operator;
    /// its summary comes back through `perfshape judge`.
    K6 {
        /// The fixture.
        fixture: PathBuf,
        /// Where to write the script (default: print it).
        #[arg(long, short)]
        out: Option<PathBuf>,
        #[command(flatten)]
        schedule: ScheduleArgs,
    },
}

/// How a fixture's rows are laid out for an engine: the same flags must be given to the
/// command that writes the script and to `perfshape judge`.
#[derive(clap::Args)]
struct ScheduleArgs {
    /// Rounds: every row once per round, rounds interleaved.
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Only these rows (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    rows: Vec<String>,
    /// The fixture at test scale (N ≤ 250, closed loops of ≤ 32 users).
    #[arg(long)]
    test_scale: bool,
    /// Every closed loop's duration, in milliseconds (default: the fixture's).
    #[arg(long)]
    loop_ms: Option<u64>,
    /// The least time after each stage for its last requests (default: from the model
    /// of the fixture's pool); give more for a service slower than that.
    #[arg(long)]
    drain_ms: Option<u64>,
}

impl ScheduleArgs {
    fn schedule(&self, fixture: &Path) -> perfshape::Result<perfshape::external::Schedule> {
        let mut experiment = Experiment::load(fixture)?;
        if self.test_scale {
            experiment = experiment.at_test_scale()?;
        }
        if let Some(ms) = self.loop_ms {
            experiment = experiment.with_loop_duration(std::time::Duration::from_millis(ms))?;
        }
        let schedule = perfshape::external::Schedule::only(&experiment, self.rounds, &self.rows)?;
        Ok(match self.drain_ms {
            Some(ms) => schedule.with_drain_at_least(std::time::Duration::from_millis(ms)),
            None => schedule,
        })
    }
}

/// One scenario described on the command line.
#[derive(clap::Args)]
struct WhatIf {
    /// Server strategy: blocking, async, offload, mixed, cpu, lock.
    #[arg(long, default_value = "blocking")]
    server: String,
    /// Server worker threads.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Server blocking-thread cap.
    #[arg(long, default_value_t = DEFAULT_MAX_BLOCKING)]
    max_blocking: usize,
    /// Client strategy: sequential, fan-out, sync-over-async.
    #[arg(long, default_value = "fan-out")]
    client: String,
    /// Threads for sync-over-async.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Requests.
    #[arg(long, short, default_value_t = 20)]
    n: usize,
    /// Work per request, in milliseconds.
    #[arg(long, default_value_t = 20)]
    work_ms: u64,
    /// For --server mixed: the blocking part, in milliseconds (the rest of the work waits).
    #[arg(long)]
    block_ms: Option<u64>,
    /// Connections per host the client may open.
    #[arg(long)]
    connection_cap: Option<usize>,
}

impl WhatIf {
    fn model(&self) -> perfshape::Result<perfshape::Model> {
        let work = std::time::Duration::from_millis(self.work_ms);
        let mut server: perfshape::ServerStrategy = self.server.parse()?;
        if let perfshape::ServerStrategy::Mixed { .. } = server {
            let block = std::time::Duration::from_millis(self.block_ms.unwrap_or(self.work_ms / 2));
            server = perfshape::ServerStrategy::Mixed {
                block: block.min(work),
                wait: work.saturating_sub(block),
            };
        }
        let mut client: perfshape::ClientStrategy = self.client.parse()?;
        if let perfshape::ClientStrategy::SyncOverAsync { threads } = &mut client {
            *threads = self.threads;
        }
        // A cap is a client lifecycle; the scenario validates it and gives it to the model.
        let lifecycle = match self.connection_cap {
            Some(per_host) => perfshape::Lifecycle::ConnectionCap { per_host },
            None => perfshape::Lifecycle::Shared,
        };
        let scenario = perfshape::Scenario::builder()
            .server(server)
            .workers(self.workers)
            .max_blocking(self.max_blocking)
            .client(client)
            .lifecycle(lifecycle)
            .requests(self.n)
            .work(work)
            .build()?;
        Ok(scenario.model())
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are not errors. A bad flag is bad input: 3, not clap's
            // own 2, which here means inconclusive.
            return if e.use_stderr() {
                Exit::CouldNotRun.code()
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(cli) {
        Ok(exit) => exit.code(),
        Err(e) => {
            eprintln!("perfshape: error: {e}");
            Exit::CouldNotRun.code()
        }
    }
}

/// Runs the command; what it decided, or why it could not run.
fn run(mut cli: Cli) -> perfshape::Result<Exit> {
    let dir = cli.fixtures.clone().unwrap_or_else(default_fixtures);
    match cli.command.take().unwrap_or(Command::All) {
        Command::List => {
            for experiment in load_all(&dir)? {
                println!(
                    "{}  {}  ({})",
                    experiment.path.display(),
                    experiment.title,
                    experiment.scale
                );
                for row in &experiment.rows {
                    println!("    {:<6} {}", row.id, row.label);
                }
            }
            Ok(Exit::Holds)
        }
        Command::Model { fixture, what_if } => {
            let models: Vec<(String, perfshape::Model)> = match fixture {
                Some(path) => Experiment::load(&path)?
                    .rows
                    .into_iter()
                    .filter_map(|row| {
                        let model = row.workload.model()?;
                        Some((format!("{} {}", row.id, row.label), model))
                    })
                    .collect(),
                None => vec![("what-if".to_string(), what_if.model()?)],
            };
            println!("| scenario | model | wall | throughput | waves | p50 | p99 |");
            println!("|---|---|---:|---:|---:|---:|---:|");
            for (name, model) in models {
                let p = model.predict()?;
                let ms = |d: std::time::Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
                println!(
                    "| {name} | {} | {} | {:.1}/s | {} | {} | {} |",
                    model.describe(),
                    ms(p.wall),
                    p.throughput,
                    p.waves,
                    p.latency.map(|l| ms(l.p50)).unwrap_or_default(),
                    p.latency.map(|l| ms(l.p99)).unwrap_or_default(),
                );
            }
            Ok(Exit::Holds)
        }
        Command::Serve {
            workers,
            max_blocking,
            bind,
            seconds,
        } => {
            let pool = perfshape::Pool::new(
                "server",
                perfshape::PoolSettings::new(workers, max_blocking)?,
            )?;
            let server = perfshape::Server::serve_on(perfshape::server::app(), pool, bind)?;
            println!(
                "perfshape serving on http://{} (W={workers} B={max_blocking}) for {seconds} s",
                server.addr()
            );
            for route in [
                "blocking?ms=20",
                "async?ms=20",
                "offload?ms=20",
                "mixed?block_ms=10&wait_ms=10",
                "cpu?ms=20",
                "lock?ms=20",
                "health",
            ] {
                println!("  http://{}/{route}", server.addr());
            }
            std::thread::sleep(std::time::Duration::from_secs(seconds));
            println!("accepted {} connections", server.accepted_connections());
            Ok(Exit::Holds)
        }
        Command::Probe {
            url,
            max_concurrency,
            step_ms,
            timeout,
        } => {
            let limits = perfshape::client::Limits {
                request_timeout: std::time::Duration::from_secs(timeout),
                run_deadline: std::time::Duration::from_secs(timeout + 60),
            };
            // Parse and connect first: a typo or a dead host fails here, before any load.
            let (target, path) = perfshape::Target::split_url(&url)?;
            let target = target.with_limits(limits)?;
            let endpoint = target.endpoint(&path)?;
            let settings = perfshape::probe::ProbeSettings {
                max_concurrency,
                step: std::time::Duration::from_millis(step_ms),
                ..perfshape::probe::ProbeSettings::default()
            };
            eprintln!(
                "probing {url} at concurrency 1, 2, 4, … up to {max_concurrency} ({step_ms} ms each) …"
            );
            let report = perfshape::probe::probe(target.client(), &endpoint.url(), settings)?;
            println!("{report}");
            let path = artifact_dir().join(format!("probe-{}.json", file_name(&url)));
            write(
                &path,
                &serde_json::to_string_pretty(&report).unwrap_or_default(),
            )?;
            eprintln!("raw figures: {}", path.display());
            Ok(Exit::Holds)
        }
        Command::Locust {
            fixture,
            host,
            workers,
            dir,
            print_commands,
            master_bind,
            against_model,
            schedule,
        } => {
            let schedule = schedule.schedule(&fixture)?;
            let run = perfshape::external::LocustRun::new(&host, workers, &dir)?;
            if print_commands {
                write(
                    &run.locustfile(),
                    &perfshape::external::locustfile(&schedule),
                )?;
                let (master, worker) = run.remote_commands(&schedule, &master_bind);
                println!("# the locustfile: {}", run.locustfile().display());
                println!("# on the master, beside a copy of the locustfile (workers: --workers):");
                println!("{master}");
                println!("# on each worker machine, beside a copy of the locustfile:");
                println!("{worker}");
                println!(
                    "# then, with the master's stats.json and this command's schedule flags:\n\
                     perfshape judge {} stats.json",
                    fixture.display()
                );
                return Ok(Exit::Holds);
            }
            eprintln!(
                "locust: {} rows × {} rounds, {} users, {:.1} s, {workers} workers against {host} …",
                schedule.rows.len(),
                schedule.rounds,
                schedule.users(),
                schedule.total().as_secs_f64()
            );
            let stats = run.run(&schedule)?;
            judge(&schedule, &stats, against_model)
        }
        Command::Judge {
            fixture,
            stats,
            against_model,
            schedule,
        } => {
            let schedule = schedule.schedule(&fixture)?;
            let stats = perfshape::external::EngineStats::read_all(&stats)?;
            judge(&schedule, &stats, against_model)
        }
        Command::Export {
            engine:
                ExportEngine::K6 {
                    fixture,
                    out,
                    schedule,
                },
        } => {
            let script = perfshape::external::k6_script(&schedule.schedule(&fixture)?);
            match out {
                Some(path) => write(&path, &script).map(|()| Exit::Holds),
                None => {
                    print!("{script}");
                    Ok(Exit::Holds)
                }
            }
        }
        Command::Selftest { claimed, only } => selftest(claimed, only.as_deref()),
        Command::Report { dir, html } => {
            report(&dir.unwrap_or_else(artifact_dir), html).map(|()| Exit::Holds)
        }
        Command::Limits { dir, junit } => {
            limits(&dir.unwrap_or_else(artifact_dir), junit.as_deref()).map(|()| Exit::Holds)
        }
        Command::Load {
            url,
            users,
            seconds,
            think_ms,
            client_workers,
        } => {
            let (target, path) = perfshape::Target::split_url(&url)?;
            let target = target.with_client_workers(client_workers)?;
            let endpoint = target.endpoint(&path)?;
            let strategy = perfshape::ClientStrategy::ClosedLoop {
                users,
                think: std::time::Duration::from_millis(think_ms),
                ramp: std::time::Duration::ZERO,
                duration: std::time::Duration::from_secs(seconds),
            };
            // Connections first, then the measured loop.
            endpoint.run(perfshape::ClientStrategy::FanOut, users)?;
            let run =
                target
                    .client()
                    .run(strategy, &endpoint.url(), perfshape::limits::MAX_REQUESTS)?;
            let summary = run.summary(std::time::Duration::from_millis(1));
            let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
            println!(
                "{} users for {seconds} s: sent {} = ok {} + failed {}; {:.1} requests/s",
                users, summary.sent, summary.ok, summary.failed, summary.throughput
            );
            if let Some(l) = summary.latency {
                println!(
                    "latency: min {:.3} ms, mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
                    ms(l.min),
                    ms(l.mean),
                    ms(l.p50),
                    ms(l.p99),
                    ms(l.max)
                );
            }
            if summary.sent == perfshape::limits::MAX_REQUESTS {
                eprintln!(
                    "note: the loop reached its cap of {} requests before its time",
                    perfshape::limits::MAX_REQUESTS
                );
            }
            Ok(Exit::Holds)
        }
        Command::Run { fixture } => {
            let experiment = Experiment::load(&fixture)?;
            reproduce(&experiment, &cli).map(|()| Exit::Holds)
        }
        Command::All => {
            let experiments = load_all(&dir)?;
            for (i, experiment) in experiments.iter().enumerate() {
                let json = cli.json.as_ref().map(|p| numbered(p, i, experiments.len()));
                reproduce_into(experiment, &cli, json.as_deref())?;
            }
            Ok(Exit::Holds)
        }
    }
}

/// Reads every claim report under `dir` and prints the claims' measured time against their
/// physical limit, and (from nextest's JUnit report) the suite's test time against it.
fn limits(dir: &Path, junit: Option<&Path>) -> perfshape::Result {
    let io = |what: String| move |e| perfshape::Error::Io { what, source: e };
    let records = perfshape::report::read_claims(dir)?;
    let claims = records.len();
    let measured: f64 = records.iter().map(|c| c.elapsed / 1e3).sum();
    let limit: f64 = records.iter().filter_map(|c| c.limit).sum::<f64>() / 1e3;
    let unknown = records.iter().filter(|c| c.limit.is_none()).count();
    println!(
        "{claims} claims measured for {measured:.1} s; their physical limit {limit:.1} s (measured ÷ limit {:.2}){}",
        measured / limit.max(f64::MIN_POSITIVE),
        if unknown > 0 {
            format!("; {unknown} without a known limit")
        } else {
            String::new()
        }
    );
    if let Some(junit) = junit {
        let text =
            std::fs::read_to_string(junit).map_err(io(format!("reading {}", junit.display())))?;
        // The first `time="…"` is the whole run's (the <testsuites> element).
        let time = text
            .split("time=\"")
            .nth(1)
            .and_then(|t| t.split('"').next())
            .and_then(|t| t.parse::<f64>().ok())
            .ok_or_else(|| perfshape::Error::Invalid {
                field: "junit",
                value: junit.display().to_string(),
                allowed: "nextest's JUnit report, with a time attribute".into(),
            })?;
        println!(
            "suite test time {time:.1} s = {:.2} × the claims' physical limit",
            time / limit.max(f64::MIN_POSITIVE)
        );
    }
    Ok(())
}

/// Writes `text` to `path`, creating its folder.
fn write(path: &Path, text: &str) -> perfshape::Result {
    path.parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| std::fs::write(path, text))
        .map_err(|e| perfshape::Error::Io {
            what: format!("writing {}", path.display()),
            source: e,
        })
}

/// A URL as a file name: letters and digits kept, every run of others one `-`.
fn file_name(url: &str) -> String {
    let name: String = url
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    name.split('-')
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

/// `perfshape report`: the Markdown summary and the HTML page of the run in `dir`.
fn report(dir: &Path, html: Option<PathBuf>) -> perfshape::Result {
    let started = std::time::Instant::now();
    let artifacts = perfshape::report::read_artifacts(dir)?;
    if artifacts.claims.is_empty()
        && artifacts.experiments.is_empty()
        && artifacts.probes.is_empty()
    {
        return Err(perfshape::Error::Invalid {
            field: "report folder",
            value: dir.display().to_string(),
            allowed: "a folder a run wrote to: claims' JSON from `cargo nextest run`, experiment \
                      tables from `perfshape run`, probes from `perfshape probe` \
                      ($PERFSHAPE_ARTIFACTS, else target/perfshape)"
                .into(),
        });
    }
    let markdown = perfshape::report::claims_markdown(&artifacts.claims);
    let page = perfshape::report::html_report(&artifacts)?;
    let html = html.unwrap_or_else(|| dir.join("report.html"));
    write(&html, &page)?;
    let md = dir.join("report.md");
    write(&md, &markdown)?;
    match std::env::var_os("GITHUB_STEP_SUMMARY") {
        Some(summary) => {
            use std::io::Write as _;
            let path = PathBuf::from(summary);
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(markdown.as_bytes()))
                .map_err(|e| perfshape::Error::Io {
                    what: format!("appending to $GITHUB_STEP_SUMMARY ({})", path.display()),
                    source: e,
                })?;
            eprintln!("job summary: appended to {}", path.display());
        }
        None => print!("{markdown}"),
    }
    eprintln!(
        "report: {} and {} ({}; {:.0} ms)",
        html.display(),
        md.display(),
        artifacts.counts(),
        started.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}

/// Runs the catalog's entries (their controls, or as claimed) and prints one line per
/// claim; fails when any control did not break (or any claim did not hold).
/// Decides the schedule's claims from an engine's statistics, prints a table, and fails
/// (strict gate) when any does not hold.
fn judge(
    schedule: &perfshape::external::Schedule,
    stats: &perfshape::external::EngineStats,
    against_model: bool,
) -> perfshape::Result<Exit> {
    let mut judge = perfshape::external::Judge::new();
    if against_model {
        judge = judge.against_model();
    }
    let judged = judge.judge(schedule, stats)?;
    println!("| claim | verdict | median | band | margin | rounds |");
    println!("|---|---|---:|---|---:|---:|");
    for j in &judged {
        let report = j.checked.report();
        println!(
            "| {} | {} | {:.3} | {} | {} | {} |",
            report.name,
            report.verdict,
            report.median,
            report.band,
            margin(report),
            report.rounds.len()
        );
    }
    if let Some(first) = judged.first() {
        for line in &first.checked.report().explanation {
            println!("{line}");
        }
    }
    Ok(Exit::of(judged.iter().map(|j| j.checked.report())))
}

/// The catalog's claims as claimed or on their controls: 0 when every claim came out as
/// it must (held, or broken on its control), 2 when one was inconclusive, 1 when one came
/// out the other way.
fn selftest(claimed: bool, only: Option<&str>) -> perfshape::Result<Exit> {
    use perfshape::catalog::{Setup, entries};
    let setup = if claimed {
        Setup::Claimed
    } else {
        Setup::Control
    };
    let wanted = if claimed {
        perfshape::Verdict::Holds
    } else {
        perfshape::Verdict::Broken
    };
    let entries: Vec<_> = entries()
        .into_iter()
        .filter(|e| only.is_none_or(|o| e.name.contains(o)))
        .collect();
    eprintln!(
        "running {} catalog entries {} …",
        entries.len(),
        if claimed {
            "as claimed"
        } else {
            "on their negative controls"
        }
    );
    println!("| entry | control | claim | verdict | median | band | margin | time |");
    println!("|---|---|---|---|---:|---|---:|---:|");
    let started = std::time::Instant::now();
    let mut wrong = Vec::new();
    let mut exit = Exit::Holds;
    for entry in &entries {
        let control = if claimed { "—" } else { entry.control };
        for (_, checked) in (entry.run)(setup)? {
            let report = checked.report();
            println!(
                "| {} | {control} | {} | {} | {:.3} | {} | {} | {:.2} s |",
                entry.name,
                report.name,
                report.verdict,
                report.median,
                report.band,
                margin(report),
                report.elapsed.as_secs_f64()
            );
            if report.verdict != wanted {
                exit = exit.max(match report.verdict {
                    perfshape::Verdict::Inconclusive => Exit::Inconclusive,
                    _ => Exit::Broken,
                });
                wrong.push(format!(
                    "{}: {} ({})",
                    entry.name, report.name, report.verdict
                ));
            }
        }
    }
    eprintln!("selftest took {:.1} s", started.elapsed().as_secs_f64());
    if !wrong.is_empty() {
        eprintln!(
            "perfshape: {} claim(s) did not come out {wanted}:\n  {}",
            wrong.len(),
            wrong.join("\n  ")
        );
    }
    Ok(exit)
}

/// A claim's margin from its band's nearest edge, for a table cell ("—" without one).
fn margin(report: &perfshape::claim::ClaimReport) -> String {
    report.margin.map_or("—".into(), |m| m.to_string())
}

fn reproduce(experiment: &Experiment, cli: &Cli) -> perfshape::Result {
    reproduce_into(experiment, cli, cli.json.as_deref())
}

/// Runs `experiment`, prints its table, and writes its table, timeline and raw figures
/// under the artifact folder (raw figures also to `json`, if given).
fn reproduce_into(experiment: &Experiment, cli: &Cli, json: Option<&Path>) -> perfshape::Result {
    let verbose = cli.verbose;
    eprintln!(
        "running {} ({} scenarios) …",
        experiment.id,
        experiment.rows.len()
    );
    let measured = experiment.measure(|row, m| {
        let requests = m
            .summary
            .as_ref()
            .map(|s| format!("  ({}/{} ok)", s.ok, s.sent))
            .unwrap_or_default();
        eprintln!(
            "  {:<6} {:<50} {:>9.1} ms{requests}",
            row.id,
            row.label,
            m.wall.as_secs_f64() * 1e3,
        );
        if verbose {
            eprint!("{}", timeline(m));
        }
    })?;
    let table = experiment_table(experiment, &measured);
    println!("{table}");
    let dir = artifact_dir();
    write(
        &dir.join(format!("{}{TABLE_SUFFIX}", experiment.id)),
        &table,
    )?;
    let svg_path = dir.join(format!("{}.svg", experiment.id));
    let svg = experiment_svg(experiment, &measured, cli.timeline_axis.into());
    write(&svg_path, &svg)?;
    eprintln!("timeline: {}", svg_path.display());
    let default_path = artifact_dir().join(format!("{}.json", experiment.id));
    for path in std::iter::once(default_path.as_path()).chain(json) {
        write_json(path, experiment, &measured)?;
        eprintln!("raw figures: {}", path.display());
    }
    Ok(())
}

fn write_json(path: &Path, experiment: &Experiment, measured: &[Measured]) -> perfshape::Result {
    let rows: Vec<_> = experiment
        .rows
        .iter()
        .zip(measured)
        .map(|(row, m)| {
            serde_json::json!({
                "id": row.id,
                "label": row.label,
                "published": row.published,
                "wall_ms": m.wall.as_secs_f64() * 1e3,
                "figure": m.figure,
                "model": m.model,
                "model_figure": m.model_figure,
                "predicted": m.predicted,
                "summary": m.summary,
                "checksum": m.checksum,
                "records": m.run.as_ref().map(|r| &r.records),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "experiment": experiment.id,
        "title": experiment.title,
        "scale": experiment.scale,
        "published_unit": experiment.published_unit,
        "metric": experiment.metric,
        "rows": rows,
    });
    let io = |e| perfshape::Error::Io {
        what: format!("writing {}", path.display()),
        source: e,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(&doc).map_err(|e| io(std::io::Error::other(e)))?;
    std::fs::write(path, text).map_err(io)
}

fn numbered(path: &Path, i: usize, count: usize) -> PathBuf {
    if count == 1 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}-{i}.json"))
}

fn default_fixtures() -> PathBuf {
    let local = PathBuf::from("fixtures");
    if local.is_dir() {
        local
    } else {
        // The repository's, beside this package.
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
    }
}

fn load_all(dir: &Path) -> perfshape::Result<Vec<Experiment>> {
    let entries = std::fs::read_dir(dir).map_err(|e| perfshape::Error::Io {
        what: format!("reading the fixtures folder {}", dir.display()),
        source: e,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(perfshape::Error::Invalid {
            field: "fixtures folder",
            value: dir.display().to_string(),
            allowed: "a folder with at least one *.toml fixture".into(),
        });
    }
    paths.iter().map(Experiment::load).collect()
}
