//! `perfshape compare BASE CANDIDATE`: the same request on two builds, interleaved — the
//! regression gate in one run.

use std::str::FromStr;
use std::time::Duration;

use perfshape::claim::artifact_dir;
use perfshape::{Error, Target, claims::Percentile, claims::SideLoad};
use perfshape_experiments::external::StartedService;

use crate::exit::Exit;

/// Compare the same request on two builds of a service, measured in the same interleaved
/// rounds: "the candidate is at most 10 % slower than the base". Give two running
/// services (full URLs, so paths may differ; or bases with --path), or two commands that
/// start them (--base-cmd, --candidate-cmd: each gets a port as {port} and $PORT, is
/// waited for and stopped after). One line per endpoint.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The base's URL (the merge base, main): the full URL of the request, or with --path
    /// the base the paths are appended to.
    #[arg(required_unless_present = "base_cmd", conflicts_with = "base_cmd")]
    base: Option<String>,
    /// The candidate's URL (the pull request's build), as BASE.
    #[arg(
        required_unless_present = "candidate_cmd",
        conflicts_with = "candidate_cmd"
    )]
    candidate: Option<String>,
    /// A shell command that starts the base on {port} (also $PORT), e.g.
    /// 'target/main/server --port {port}'.
    #[arg(long, requires = "candidate_cmd")]
    base_cmd: Option<String>,
    /// A shell command that starts the candidate on {port} (also $PORT).
    #[arg(long, requires = "base_cmd")]
    candidate_cmd: Option<String>,
    /// The base command's port (default: a free one on 127.0.0.1).
    #[arg(long, requires = "base_cmd")]
    base_port: Option<u16>,
    /// The candidate command's port (default: a free one on 127.0.0.1).
    #[arg(long, requires = "candidate_cmd")]
    candidate_port: Option<u16>,
    /// Seconds a started command has to listen on its port.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=600))]
    start_timeout: u64,
    /// A path and query to compare, appended to both sides (repeat for several; one line
    /// each). Default with commands: /.
    #[arg(long = "path")]
    paths: Vec<String>,
    /// What each side is sent: single (one request at a time), fanout:N (N at once), or
    /// closed:USERS (a closed loop for --loop-ms).
    #[arg(long, default_value = "fanout:20")]
    load: LoadArg,
    /// The closed loop's length, in milliseconds.
    #[arg(long, default_value_t = 500)]
    loop_ms: u64,
    /// The closed loop's figure: throughput, p50, p90 or p99 (latency).
    #[arg(long, default_value = "throughput")]
    figure: FigureArg,
    /// How much slower the candidate may be: 10% (or 0.10).
    #[arg(long, default_value = "10%", conflicts_with = "faster")]
    tolerance: Share,
    /// Claim instead that the candidate is at least this much faster: 20% (or 0.20).
    #[arg(long)]
    faster: Option<Share>,
    /// Accept first answers whose body lengths differ (by default refused: different
    /// answers are rarely the same request).
    #[arg(long)]
    bodies_may_differ: bool,
    /// Seconds before one request counts as failed.
    #[arg(long, default_value_t = 10)]
    timeout: u64,
    /// The request's method, the same on both sides.
    #[arg(long, value_enum, default_value_t = MethodArg::Get)]
    method: MethodArg,
    /// A header of every request, `NAME: VALUE` (repeat for several), e.g.
    /// 'authorization: Bearer …'.
    #[arg(long = "header", short = 'H', value_name = "NAME: VALUE", value_parser = header)]
    headers: Vec<(String, String)>,
    /// A JSON body for every request (sent as application/json), checked as JSON before
    /// anything is sent.
    /// (`--json` is the global raw-records file.)
    #[arg(long, value_name = "JSON", value_parser = json_body, conflicts_with = "body")]
    json_body: Option<JsonBody>,
    /// A body for every request, sent as given.
    #[arg(long)]
    body: Option<String>,
}

/// The methods a compared request may have.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum MethodArg {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

/// `NAME: VALUE`, split at the first colon and trimmed.
fn header(text: &str) -> Result<(String, String), String> {
    match text.split_once(':') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!(
            "{text:?}: expected NAME: VALUE, e.g. 'authorization: Bearer …'"
        )),
    }
}

/// A JSON body, parsed when the command line is, so that a typo is named with its line and
/// column before any service starts.
#[derive(Clone, Debug)]
struct JsonBody(serde_json::Value);

fn json_body(text: &str) -> Result<JsonBody, String> {
    serde_json::from_str(text)
        .map(JsonBody)
        .map_err(|e| format!("not JSON: {e}"))
}

/// `single`, `fanout:N` or `closed:USERS`.
#[derive(Clone, Copy, Debug)]
enum LoadArg {
    Single,
    FanOut(usize),
    Closed(usize),
}

impl FromStr for LoadArg {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let count = |what: &str, n: &str| {
            n.parse::<usize>()
                .map_err(|_| format!("{what} {n:?} is not a whole number"))
        };
        match text.split_once(':') {
            None if text == "single" => Ok(LoadArg::Single),
            Some(("fanout", n)) => count("fanout", n).map(LoadArg::FanOut),
            Some(("closed", n)) => count("closed", n).map(LoadArg::Closed),
            _ => Err(format!(
                "{text:?}: expected single, fanout:N or closed:USERS"
            )),
        }
    }
}

/// A closed loop's figure.
#[derive(Clone, Copy, Debug)]
enum FigureArg {
    Throughput,
    Latency(Percentile),
}

impl FromStr for FigureArg {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "throughput" => Ok(FigureArg::Throughput),
            "p50" => Ok(FigureArg::Latency(Percentile::P50)),
            "p90" => Ok(FigureArg::Latency(Percentile::P90)),
            "p99" => Ok(FigureArg::Latency(Percentile::P99)),
            _ => Err(format!("{text:?}: expected throughput, p50, p90 or p99")),
        }
    }
}

/// A share: `10%`, `2.5%` or `0.10`.
#[derive(Clone, Copy, Debug)]
struct Share(f64);

impl FromStr for Share {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let bad = || format!("{text:?}: expected a percentage (10%) or a fraction (0.10)");
        let share = match text.strip_suffix('%') {
            Some(percent) => percent.trim().parse::<f64>().map_err(|_| bad())? / 100.0,
            None => text.parse::<f64>().map_err(|_| bad())?,
        };
        if share.is_finite() && share > 0.0 {
            Ok(Share(share))
        } else {
            Err(bad())
        }
    }
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let load = self.side_load()?;
        let limits = perfshape::client::Limits {
            request_timeout: Duration::from_secs(self.timeout),
            run_deadline: Duration::from_secs(self.timeout + 60),
        };
        // Started services are stopped when these drop, whatever happens below.
        let mut started = Vec::new();
        let (base, candidate, paths) = match (&self.base_cmd, &self.candidate_cmd) {
            (Some(base_cmd), Some(candidate_cmd)) => {
                let within = Duration::from_secs(self.start_timeout);
                let dir = artifact_dir();
                std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
                    what: format!("creating {}", dir.display()),
                    source: e,
                })?;
                for (name, command, port) in [
                    ("base", base_cmd, self.base_port),
                    ("candidate", candidate_cmd, self.candidate_port),
                ] {
                    let log = dir.join(format!("compare-{name}.log"));
                    let service = StartedService::start(name, command, port, within, &log)?;
                    eprintln!(
                        "the {name} listens at {}: {} (its output: {})",
                        service.url(),
                        service.command(),
                        log.display()
                    );
                    started.push(service);
                }
                let paths = if self.paths.is_empty() {
                    vec!["/".to_string()]
                } else {
                    self.paths.clone()
                };
                (started[0].url(), started[1].url(), paths)
            }
            _ => {
                let (base, candidate) = (
                    self.base.clone().unwrap_or_default(),
                    self.candidate.clone().unwrap_or_default(),
                );
                if self.paths.is_empty() {
                    // Full URLs: each side its own path.
                    let (b, bp) = Target::builder().limits(limits).split_url(&base)?;
                    let (c, cp) = Target::builder().limits(limits).split_url(&candidate)?;
                    let line = self.compare_one(
                        &b.named("base").request(self.request(&bp)),
                        &c.named("candidate").request(self.request(&cp)),
                        load,
                    )?;
                    return Ok(line);
                }
                (base, candidate, self.paths.clone())
            }
        };
        let base = Target::builder().limits(limits).url(&base)?.named("base");
        let candidate = Target::builder()
            .limits(limits)
            .url(&candidate)?
            .named("candidate");
        let mut exit = Exit::Holds;
        for path in &paths {
            base.url_of(path)?;
            let line = self.compare_one(
                &base.request(self.request(path)),
                &candidate.request(self.request(path)),
                load,
            )?;
            exit = exit.max(line);
        }
        drop(started);
        Ok(exit)
    }

    /// The request both sides are sent to `path`: the method, headers and body asked for.
    fn request(&self, path: &str) -> perfshape::Request {
        use perfshape::Request;
        let mut request = match self.method {
            MethodArg::Get => Request::get(path),
            MethodArg::Post => Request::post(path),
            MethodArg::Put => Request::put(path),
            MethodArg::Patch => Request::patch(path),
            MethodArg::Delete => Request::delete(path),
        };
        for (name, value) in &self.headers {
            request = request.header(name.as_str(), value.as_str());
        }
        if let Some(JsonBody(json)) = &self.json_body {
            request = request.json(json);
        }
        if let Some(body) = &self.body {
            request = request.body(body.clone());
        }
        request
    }

    /// The load flags as the library's [`SideLoad`].
    fn side_load(&self) -> perfshape_experiments::Result<SideLoad> {
        let duration = Duration::from_millis(self.loop_ms);
        Ok(match (self.load, self.figure) {
            (LoadArg::Single, _) => SideLoad::Single,
            (LoadArg::FanOut(n), _) => SideLoad::FanOut(n),
            (LoadArg::Closed(users), FigureArg::Throughput) => {
                SideLoad::Throughput { users, duration }
            }
            (LoadArg::Closed(users), FigureArg::Latency(percentile)) => SideLoad::Latency {
                users,
                duration,
                percentile,
            },
        })
    }

    /// One endpoint's comparison, decided and printed on one line; its exit status.
    fn compare_one(
        &self,
        base: &perfshape::Endpoint,
        candidate: &perfshape::Endpoint,
        load: SideLoad,
    ) -> perfshape_experiments::Result<Exit> {
        let mut comparison = candidate.compared_with(base).under(load);
        if self.bodies_may_differ {
            comparison = comparison.bodies_may_differ();
        }
        // Before any load: both sides up, 2xx, answering alike.
        comparison.preflight()?;
        let claim = match self.faster {
            Some(Share(share)) => comparison.faster_by_at_least(share),
            None => comparison.slower_by_at_most(self.tolerance.0),
        };
        eprintln!(
            "comparing {} (base) with {} (candidate): {load}, interleaved …",
            base.url(),
            candidate.url()
        );
        let checked = claim.check()?;
        let report = checked.report();
        let what = report.explanation().first().cloned().unwrap_or_default();
        let path = if base.path() == candidate.path() {
            base.path().to_string()
        } else {
            format!("{} vs {}", base.path(), candidate.path())
        };
        println!(
            "{:<12} {path}: {what}; {:.3} against a band {} in {} rounds",
            report.verdict().to_string(),
            report.median(),
            report.band(),
            report.rounds().len()
        );
        // A claim that does not hold has printed its whole report, artifact included.
        if let (true, Some(artifact)) = (report.verdict().holds(), &report.artifact()) {
            eprintln!("raw figures: {}", artifact.display());
        }
        Ok(Exit::of([report]))
    }
}
