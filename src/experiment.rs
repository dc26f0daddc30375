//! An Experiment: one source experiment's scenarios, loaded from `fixtures/*.toml`, with
//! the published figure beside each.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::client::{ClientStrategy, Lifecycle};
use crate::error::{Error, FixtureError, FixtureErrorKind, Result, check_range};
use crate::inproc::{CpuBound, InProcess};
use crate::model::{Model, Prediction};
use crate::pool::{DEFAULT_MAX_BLOCKING, Pool, PoolSettings};
use crate::run::Run;
use crate::scenario::Scenario;
use crate::server::{MAX_WORK, ServerStrategy};
use crate::summary::Summary;

/// A source experiment, scaled down, with the published figures.
#[derive(Clone, Debug)]
pub struct Experiment {
    /// The fixture it came from.
    pub path: PathBuf,
    /// Short id, e.g. `seed-000`.
    pub id: String,
    /// The experiment's title.
    pub title: String,
    /// Where it was published.
    pub source: String,
    /// How it was scaled down (e.g. `1200 ms → 24 ms`).
    pub scale: String,
    /// The unit of the published figures (e.g. `s`, `QPS`).
    pub published_unit: String,
    /// What the figures are: wall time or throughput.
    pub metric: Metric,
    /// Index into `rows` of the row every figure is normalised to.
    pub baseline: usize,
    /// The scenarios, in table order.
    pub rows: Vec<ExperimentRow>,
}

/// What an experiment's figures measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Metric {
    /// Time to finish the load (lower is better).
    Wall,
    /// Requests (or items) per second (higher is better).
    Throughput,
}

/// What a row runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// HTTP load against a perfshape server.
    Http(Scenario),
    /// N waits in-process, no HTTP (seed 002).
    InProcess {
        /// How the waits are done.
        strategy: InProcess,
        /// The pool they run on.
        pool: PoolSettings,
        /// How many.
        n: usize,
        /// How long each.
        work: Duration,
    },
    /// Tiny CPU-bound items (seed 003).
    Cpu {
        /// How they are computed.
        strategy: CpuBound,
        /// How many.
        items: u64,
    },
}

impl Workload {
    /// The model of this workload, when perfshape has one (CPU-bound work has none).
    pub fn model(&self) -> Option<Model> {
        match self {
            Workload::Http(scenario) => Some(scenario.model()),
            Workload::InProcess {
                strategy,
                pool,
                n,
                work,
            } => {
                // The in-process strategies are the model's handlers without HTTP: a timer
                // wait holds nothing, a blocking-pool wait holds a blocking thread, a
                // blocking wait inside a task holds a worker.
                let server = match strategy {
                    InProcess::Aio => ServerStrategy::Async,
                    InProcess::Bio => ServerStrategy::Offload,
                    InProcess::BlockingInsideAsync => ServerStrategy::Blocking,
                };
                Some(Model::of(server, *pool, *work, ClientStrategy::FanOut, *n))
            }
            Workload::Cpu { .. } => None,
        }
    }

    /// The size of the load as a reader would say it: `40`, or `100 users` for a closed loop.
    pub fn size(&self) -> String {
        match self {
            Workload::Http(scenario) => match scenario.client {
                ClientStrategy::ClosedLoop { users, .. } => format!("{users} users"),
                _ => scenario.n.to_string(),
            },
            other => other.count().to_string(),
        }
    }

    /// How many requests or items one run does (at most, for a closed loop).
    pub fn count(&self) -> u64 {
        match self {
            Workload::Http(scenario) => scenario.n as u64,
            Workload::InProcess { n, .. } => *n as u64,
            Workload::Cpu { items, .. } => *items,
        }
    }
}

/// One row of an experiment's table.
#[derive(Clone, Debug)]
pub struct ExperimentRow {
    /// Short id, e.g. `a`, `b20`.
    pub id: String,
    /// The row's label as the seed wrote it.
    pub label: String,
    /// What to run.
    pub workload: Workload,
    /// The published figure, in the experiment's unit.
    pub published: f64,
    /// A remark on the published figure, if any.
    pub published_note: Option<String>,
}

/// A row as measured.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Time to finish the load (for a closed or open loop: its whole run).
    pub wall: Duration,
    /// The experiment's metric, measured: seconds of wall, or per-second throughput.
    pub figure: f64,
    /// Every request (HTTP rows only).
    pub run: Option<Run>,
    /// The run's figures, waves split at half the work time (HTTP rows only).
    pub summary: Option<Summary>,
    /// What the model predicts, when there is a model.
    pub predicted: Option<Prediction>,
    /// The model's figure in the experiment's metric.
    pub model_figure: Option<f64>,
    /// The model, in stable form.
    pub model: Option<String>,
    /// For CPU rows: the sum every strategy must agree on.
    pub checksum: Option<u64>,
}

impl Experiment {
    /// Loads and validates a fixture.
    pub fn load(path: impl AsRef<Path>) -> Result<Experiment> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| FixtureError {
            path: path.to_path_buf(),
            line: 1,
            kind: FixtureErrorKind::Read(e),
        })?;
        Experiment::parse(path, &text)
    }

    /// Parses and validates fixture `text`; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Experiment> {
        let fail = |offset: usize, kind: FixtureErrorKind| -> Error {
            FixtureError {
                path: path.to_path_buf(),
                line: line_of(text, offset),
                kind,
            }
            .into()
        };
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let offset = e.span().map_or(0, |s| s.start);
            fail(
                offset,
                FixtureErrorKind::Toml(e.message().trim().to_string()),
            )
        })?;
        let field = |name: String, offset: usize, e: Error| {
            fail(
                offset,
                FixtureErrorKind::Field {
                    field: name,
                    source: Box::new(e),
                },
            )
        };
        if raw.scenario.is_empty() {
            return Err(field(
                "scenario".into(),
                0,
                Error::invalid("scenario", "none", "at least one [[scenario]] table"),
            ));
        }
        let metric = match raw.experiment.metric.as_ref().map(|m| m.get_ref().as_str()) {
            None | Some("wall") => Metric::Wall,
            Some("throughput") => Metric::Throughput,
            Some(other) => {
                let offset = raw.experiment.metric.as_ref().map_or(0, |m| m.span().start);
                return Err(field(
                    "experiment.metric".into(),
                    offset,
                    Error::Unknown {
                        what: "metric",
                        name: other.to_string(),
                        expected: "wall, throughput".into(),
                    },
                ));
            }
        };
        let mut rows: Vec<ExperimentRow> = Vec::with_capacity(raw.scenario.len());
        for (i, s) in raw.scenario.iter().enumerate() {
            let at = |name: &str| format!("scenario[{i}].{name}");
            // Point an error at the field it names, else at the scenario's id.
            let blame = |e: Error| {
                let name = match &e {
                    Error::Invalid { field: f, .. } => *f,
                    Error::Unknown { what, .. } => match *what {
                        "server strategy" => "server",
                        "client strategy" => "client",
                        "client lifecycle" => "lifecycle",
                        "in-process strategy" => "inprocess",
                        "CPU-bound strategy" => "cpu",
                        _ => "scenario",
                    },
                    _ => "scenario",
                };
                field(at(name), s.span_of(name), e)
            };
            let workload = s.workload().map_err(blame)?;
            let published = *s.published.get_ref();
            if !(published.is_finite() && published > 0.0) {
                return Err(field(
                    at("published"),
                    s.published.span().start,
                    Error::invalid("published", published, "a figure above 0"),
                ));
            }
            if rows.iter().any(|r| r.id == *s.id.get_ref()) {
                return Err(field(
                    at("id"),
                    s.id.span().start,
                    Error::invalid("id", s.id.get_ref(), "an id no other scenario uses"),
                ));
            }
            rows.push(ExperimentRow {
                id: s.id.get_ref().clone(),
                label: s.label.clone(),
                workload,
                published,
                published_note: s.published_note.clone(),
            });
        }
        let baseline_id = raw.experiment.baseline.get_ref();
        let baseline = rows
            .iter()
            .position(|r| &r.id == baseline_id)
            .ok_or_else(|| {
                let ids = rows
                    .iter()
                    .map(|r| r.id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                field(
                    "experiment.baseline".into(),
                    raw.experiment.baseline.span().start,
                    Error::Unknown {
                        what: "scenario id",
                        name: baseline_id.clone(),
                        expected: ids,
                    },
                )
            })?;
        Ok(Experiment {
            path: path.to_path_buf(),
            id: raw.experiment.id,
            title: raw.experiment.title,
            source: raw.experiment.source,
            scale: raw.experiment.scale,
            published_unit: raw.experiment.published_unit,
            metric,
            baseline,
            rows,
        })
    }

    /// Runs every row in order, calling `progress` after each.
    pub fn measure(
        &self,
        mut progress: impl FnMut(&ExperimentRow, &Measured),
    ) -> Result<Vec<Measured>> {
        let mut measured = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            let m = self.measure_row(row)?;
            progress(row, &m);
            measured.push(m);
        }
        Ok(measured)
    }

    fn measure_row(&self, row: &ExperimentRow) -> Result<Measured> {
        let count = row.workload.count() as f64;
        let (wall, run, summary, checksum) = match &row.workload {
            Workload::Http(scenario) => {
                let run = scenario.measure()?;
                let summary = run.summary(scenario.work / 2);
                (run.wall, Some(run), Some(summary), None)
            }
            Workload::InProcess {
                strategy,
                pool,
                n,
                work,
            } => {
                let pool = Pool::new("inproc", *pool)?;
                strategy.run(&pool, (*n).min(64), *work)?; // warm up threads
                (strategy.run(&pool, *n, *work)?, None, None, None)
            }
            Workload::Cpu { strategy, items } => {
                let pool = Pool::workers("cpu", 2)?;
                strategy.run(&pool, *items)?; // warm up (the seed dropped round 1 too)
                let (wall, sum) = strategy.run(&pool, *items)?;
                (wall, None, None, Some(sum))
            }
        };
        let figure = match self.metric {
            Metric::Wall => wall.as_secs_f64(),
            Metric::Throughput => match &summary {
                Some(summary) => summary.throughput,
                None => count / wall.as_secs_f64().max(f64::MIN_POSITIVE),
            },
        };
        let model = row.workload.model();
        let predicted = model.as_ref().map(Model::predict).transpose()?;
        let model_figure = predicted.as_ref().map(|p| match self.metric {
            Metric::Wall => p.wall.as_secs_f64(),
            Metric::Throughput => p.throughput,
        });
        Ok(Measured {
            wall,
            figure,
            run,
            summary,
            predicted,
            model_figure,
            model: model.map(|m| m.describe()),
            checksum,
        })
    }
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    experiment: RawExperiment,
    #[serde(default)]
    scenario: Vec<RawScenario>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExperiment {
    id: String,
    title: String,
    source: String,
    scale: String,
    published_unit: String,
    metric: Option<Spanned<String>>,
    baseline: Spanned<String>,
}

/// One `[[scenario]]` table as written. Exactly one of `server` (HTTP), `inprocess` and
/// `cpu` says what the row runs; the other fields apply to the kinds that use them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    id: Spanned<String>,
    label: String,
    published: Spanned<f64>,
    published_note: Option<String>,
    // What runs.
    server: Option<Spanned<String>>,
    inprocess: Option<Spanned<String>>,
    cpu: Option<Spanned<String>>,
    // The pool.
    workers: Option<Spanned<usize>>,
    max_blocking: Option<Spanned<usize>>,
    // The load.
    n: Option<Spanned<usize>>,
    items: Option<Spanned<u64>>,
    work_ms: Option<Spanned<u64>>,
    block_ms: Option<Spanned<u64>>,
    wait_ms: Option<Spanned<u64>>,
    // The client (HTTP).
    client: Option<Spanned<String>>,
    threads: Option<Spanned<usize>>,
    users: Option<Spanned<usize>>,
    think_ms: Option<Spanned<u64>>,
    ramp_ms: Option<Spanned<u64>>,
    duration_ms: Option<Spanned<u64>>,
    rate: Option<Spanned<f64>>,
    max_in_flight: Option<Spanned<usize>>,
    client_workers: Option<Spanned<usize>>,
    lifecycle: Option<Spanned<String>>,
    clients: Option<Spanned<usize>>,
    per_host: Option<Spanned<usize>>,
}

fn get<T: Copy>(value: &Option<Spanned<T>>) -> Option<T> {
    value.as_ref().map(|v| *v.get_ref())
}

fn required<T: Copy>(value: &Option<Spanned<T>>, name: &'static str, kind: &str) -> Result<T> {
    get(value)
        .ok_or_else(|| Error::invalid(name, "missing", format!("a value, for {kind} scenarios")))
}

fn parse<T: FromStr<Err = Error>>(value: &Option<Spanned<String>>) -> Option<Result<T>> {
    value.as_ref().map(|v| v.get_ref().parse())
}

impl RawScenario {
    /// Where the field the builder names sits, for the error's line.
    fn span_of(&self, field: &str) -> usize {
        let at = |v: Option<usize>| v.unwrap_or_else(|| self.id.span().start);
        let u = |v: &Option<Spanned<usize>>| v.as_ref().map(|x| x.span().start);
        let l = |v: &Option<Spanned<u64>>| v.as_ref().map(|x| x.span().start);
        let s = |v: &Option<Spanned<String>>| v.as_ref().map(|x| x.span().start);
        at(match field {
            "n" => u(&self.n),
            "items" => l(&self.items),
            "work_ms" | "block_ms + wait_ms" => l(&self.work_ms),
            "block_ms" | "block_ms / wait_ms" => l(&self.block_ms).or(s(&self.server)),
            "workers" => u(&self.workers),
            "max_blocking" => u(&self.max_blocking),
            "threads" => u(&self.threads),
            "users" => u(&self.users),
            "think_ms" => l(&self.think_ms),
            "ramp_ms" => l(&self.ramp_ms),
            "duration_ms" => l(&self.duration_ms),
            "rate" => self.rate.as_ref().map(|x| x.span().start),
            "max_in_flight" => u(&self.max_in_flight),
            "clients" => u(&self.clients),
            "per_host" => u(&self.per_host),
            "client_workers" => u(&self.client_workers),
            "server" | "server / inprocess / cpu" => {
                s(&self.server).or(s(&self.inprocess)).or(s(&self.cpu))
            }
            "inprocess" => s(&self.inprocess),
            "cpu" => s(&self.cpu),
            "client" => s(&self.client),
            "lifecycle" => s(&self.lifecycle),
            _ => None,
        })
    }

    fn workload(&self) -> Result<Workload> {
        match (&self.server, &self.inprocess, &self.cpu) {
            (Some(_), None, None) => self.http().map(Workload::Http),
            (None, Some(_), None) => {
                let strategy = parse::<InProcess>(&self.inprocess).expect("present")?;
                let n = required(&self.n, "n", "inprocess")?;
                check_range("n", n, 1, crate::client::MAX_REQUESTS, "")?;
                let work = required(&self.work_ms, "work_ms", "inprocess")?;
                check_range("work_ms", u128::from(work), 0, MAX_WORK.as_millis(), " ms")?;
                Ok(Workload::InProcess {
                    strategy,
                    pool: PoolSettings::new(
                        required(&self.workers, "workers", "inprocess")?,
                        get(&self.max_blocking).unwrap_or(DEFAULT_MAX_BLOCKING),
                    )?,
                    n,
                    work: Duration::from_millis(work),
                })
            }
            (None, None, Some(_)) => {
                let strategy = parse::<CpuBound>(&self.cpu).expect("present")?;
                let items = required(&self.items, "items", "cpu")?;
                check_range("items", items, 1, 100_000_000, "")?;
                Ok(Workload::Cpu { strategy, items })
            }
            _ => Err(Error::invalid(
                "server / inprocess / cpu",
                "none or several",
                "exactly one of server (HTTP), inprocess or cpu",
            )),
        }
    }

    fn http(&self) -> Result<Scenario> {
        let work_ms = required(&self.work_ms, "work_ms", "HTTP")?;
        let work = Duration::from_millis(work_ms);
        let server = match parse::<ServerStrategy>(&self.server).expect("present")? {
            ServerStrategy::Mixed { .. } => match (get(&self.block_ms), get(&self.wait_ms)) {
                (Some(block), Some(wait)) => ServerStrategy::Mixed {
                    block: Duration::from_millis(block),
                    wait: Duration::from_millis(wait),
                },
                _ => {
                    return Err(Error::invalid(
                        "block_ms / wait_ms",
                        "missing",
                        "both, for server = \"mixed\"",
                    ));
                }
            },
            other => other,
        };
        let client = match parse::<ClientStrategy>(&self.client)
            .ok_or_else(|| Error::invalid("client", "missing", ClientStrategy::NAMES))??
        {
            ClientStrategy::SyncOverAsync { .. } => ClientStrategy::SyncOverAsync {
                threads: get(&self.threads).unwrap_or(1),
            },
            ClientStrategy::ClosedLoop { .. } => ClientStrategy::ClosedLoop {
                users: required(&self.users, "users", "closed-loop")?,
                think: Duration::from_millis(get(&self.think_ms).unwrap_or(0)),
                ramp: Duration::from_millis(get(&self.ramp_ms).unwrap_or(0)),
                duration: Duration::from_millis(required(
                    &self.duration_ms,
                    "duration_ms",
                    "closed-loop",
                )?),
            },
            ClientStrategy::OpenLoop { .. } => ClientStrategy::OpenLoop {
                rate: required(&self.rate, "rate", "open-loop")?,
                max_in_flight: required(&self.max_in_flight, "max_in_flight", "open-loop")?,
            },
            other => other,
        };
        let lifecycle = match parse::<Lifecycle>(&self.lifecycle).transpose()? {
            None => Lifecycle::Shared,
            Some(Lifecycle::Pooled { .. }) => Lifecycle::Pooled {
                clients: required(&self.clients, "clients", "pooled")?,
            },
            Some(Lifecycle::ConnectionCap { .. }) => Lifecycle::ConnectionCap {
                per_host: required(&self.per_host, "per_host", "connection-cap")?,
            },
            Some(other) => other,
        };
        let mut builder = Scenario::builder()
            .server(server)
            .client(client)
            .lifecycle(lifecycle)
            .workers(required(&self.workers, "workers", "HTTP")?)
            .requests(required(&self.n, "n", "HTTP")?)
            .work(work);
        if let Some(b) = get(&self.max_blocking) {
            builder = builder.max_blocking(b);
        }
        if let Some(c) = get(&self.client_workers) {
            builder = builder.client_workers(c);
        }
        builder.build()
    }
}

#[cfg(test)]
mod tests {
    use super::line_of;

    #[test]
    fn lines_are_one_based() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
    }
}
