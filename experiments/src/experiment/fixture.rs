//! Loading an [`Experiment`] from a fixture file, with errors that name the file, the
//! line and the field.
//!
//! Every field is read through [`Raw`], which knows its TOML key and where it sits: a
//! missing, unknown or out-of-range value is reported at its own line by construction,
//! never recovered afterwards from an error's wording.

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::{Experiment, ExperimentRow, Metric, Workload};
use crate::error::{Error, FixtureError, FixtureErrorKind, Result};
use crate::scenario::Scenario;
use crate::vocab::{InProcess, ServerStrategy};
use perfshape::__support::check_range;
use perfshape::client::{ClientStrategy, Lifecycle};
use perfshape::runtime::{DEFAULT_MAX_BLOCKING, MAX_ITEMS, MAX_REQUESTS};
use perfshape::runtime::{PoolSettings, Scheduler};

/// Reads and parses the fixture at `path`.
pub(super) fn load(path: &Path) -> Result<Experiment> {
    let text = std::fs::read_to_string(path).map_err(|e| FixtureError {
        path: path.to_path_buf(),
        line: 1,
        kind: FixtureErrorKind::Read(e),
    })?;
    parse(path, &text)
}

/// A problem at a byte offset of the fixture, with the field it concerns.
struct At {
    field: String,
    offset: usize,
    error: Error,
}

/// Parses and validates fixture `text`; `path` names it in errors.
pub(super) fn parse(path: &Path, text: &str) -> Result<Experiment> {
    let located = |at: At| -> Error {
        FixtureError {
            path: path.to_path_buf(),
            line: line_of(text, at.offset),
            kind: FixtureErrorKind::Field {
                field: at.field,
                source: Box::new(at.error),
            },
        }
        .into()
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        Error::from(FixtureError {
            path: path.to_path_buf(),
            line: line_of(text, e.span().map_or(0, |s| s.start)),
            kind: FixtureErrorKind::Toml(e.message().trim().to_string()),
        })
    })?;
    if raw.scenario.is_empty() {
        return Err(located(At {
            field: "scenario".into(),
            offset: 0,
            error: Error::invalid("scenario", "none", "at least one [[scenario]] table"),
        }));
    }
    let metric = match raw.experiment.metric.as_ref() {
        None => Metric::Wall,
        Some(metric) => match metric.get_ref().as_str() {
            "wall" => Metric::Wall,
            "throughput" => Metric::Throughput,
            other => {
                return Err(located(At {
                    field: "experiment.metric".into(),
                    offset: metric.span().start,
                    error: Error::unknown("metric", other, "wall, throughput"),
                }));
            }
        },
    };
    let mut rows: Vec<ExperimentRow> = Vec::with_capacity(raw.scenario.len());
    for (i, s) in raw.scenario.iter().enumerate() {
        let in_row = |at: At| {
            located(At {
                field: format!("scenario[{i}].{}", at.field),
                ..at
            })
        };
        let workload = s.workload().map_err(in_row)?;
        let published = *s.published.get_ref();
        if !(published.is_finite() && published > 0.0) {
            return Err(in_row(At {
                field: "published".into(),
                offset: s.published.span().start,
                error: Error::invalid("published", published, "a figure above 0"),
            }));
        }
        if rows.iter().any(|r| r.id == *s.id.get_ref()) {
            return Err(in_row(At {
                field: "id".into(),
                offset: s.id.span().start,
                error: Error::invalid("id", s.id.get_ref(), "an id no other scenario uses"),
            }));
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
            let ids = rows.iter().map(|r| r.id.as_str()).collect::<Vec<_>>();
            located(At {
                field: "experiment.baseline".into(),
                offset: raw.experiment.baseline.span().start,
                error: Error::unknown("scenario id", baseline_id.clone(), ids.join(", ")),
            })
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
    lifecycle: Option<Spanned<String>>,
    clients: Option<Spanned<usize>>,
    per_host: Option<Spanned<usize>>,
}

/// One field of a scenario: its TOML key, its value if present, and where to point.
struct Raw<'a, T> {
    key: &'static str,
    value: Option<&'a Spanned<T>>,
    /// Where the scenario starts: the place to point at for a missing field.
    row: usize,
}

impl<'a, T> Raw<'a, T> {
    fn offset(&self) -> usize {
        self.value.map_or(self.row, |v| v.span().start)
    }

    /// An error about this field, pointing at it (or at the row when it is missing).
    fn at(&self, error: Error) -> At {
        At {
            field: self.key.to_string(),
            offset: self.offset(),
            error,
        }
    }

    /// Checks a value built from this field: an `Invalid` error is this field's.
    fn check<U, E: Into<Error>>(&self, built: Result<U, E>) -> Result<U, At> {
        built.map_err(|e| self.at(e.into()))
    }
}

impl<T: Copy> Raw<'_, T> {
    fn get(&self) -> Option<T> {
        self.value.map(|v| *v.get_ref())
    }

    /// The value, or an error saying which kind of scenario needs it.
    fn required(&self, kind: &str) -> Result<T, At> {
        self.get().ok_or_else(|| {
            self.at(Error::invalid(
                self.key,
                "missing",
                format!("a value, for {kind} scenarios"),
            ))
        })
    }
}

impl Raw<'_, String> {
    /// The value parsed as a name (`blocking`, `fan-out`, …), when present.
    fn parse<N: FromStr<Err: Into<Error>>>(&self) -> Option<Result<N, At>> {
        self.value
            .map(|v| v.get_ref().parse().map_err(|e: N::Err| self.at(e.into())))
    }
}

impl RawScenario {
    fn raw<'a, T>(&'a self, key: &'static str, value: &'a Option<Spanned<T>>) -> Raw<'a, T> {
        Raw {
            key,
            value: value.as_ref(),
            row: self.id.span().start,
        }
    }

    fn workload(&self) -> Result<Workload, At> {
        let server = self.raw("server", &self.server);
        let inprocess = self.raw("inprocess", &self.inprocess);
        let cpu = self.raw("cpu", &self.cpu);
        match (server.parse(), inprocess.parse(), cpu.parse()) {
            (Some(server), None, None) => self.http(server?).map(Workload::Http),
            (None, Some(strategy), None) => self.in_process(strategy?),
            (None, None, Some(strategy)) => {
                let items = self.raw("items", &self.items);
                let count = items.required("cpu")?;
                items.check(check_range("items", count, 1, MAX_ITEMS, ""))?;
                Ok(Workload::Cpu {
                    strategy: strategy?,
                    items: count,
                })
            }
            _ => Err(server.at(Error::invalid(
                "server / inprocess / cpu",
                "none or several",
                "exactly one of server (HTTP), inprocess or cpu",
            ))),
        }
    }

    fn pool(&self, kind: &str) -> Result<PoolSettings, At> {
        let workers = self.raw("workers", &self.workers);
        let max_blocking = self.raw("max_blocking", &self.max_blocking);
        let w = workers.required(kind)?;
        let b = max_blocking.get().unwrap_or(DEFAULT_MAX_BLOCKING);
        workers.check(PoolSettings::new(w, DEFAULT_MAX_BLOCKING))?;
        // On the scheduler under which a fan-out of W blocking requests on W workers is
        // one wave, as the seeds' thread pools and the model have it (docs/coscheduling.md).
        max_blocking.check(
            PoolSettings::new(w, b).and_then(|pool| pool.with_scheduler(Scheduler::one_wave())),
        )
    }

    fn in_process(&self, strategy: InProcess) -> Result<Workload, At> {
        let n = self.raw("n", &self.n);
        let work_ms = self.raw("work_ms", &self.work_ms);
        let count = n.required("inprocess")?;
        n.check(check_range("n", count, 1, MAX_REQUESTS, ""))?;
        let work = Duration::from_millis(work_ms.required("inprocess")?);
        work_ms.check(ServerStrategy::Blocking.validate(work))?;
        Ok(Workload::InProcess {
            strategy,
            pool: self.pool("inprocess")?,
            n: count,
            work,
        })
    }

    fn http(&self, server: ServerStrategy) -> Result<Scenario, At> {
        let work_ms = self.raw("work_ms", &self.work_ms);
        let work = Duration::from_millis(work_ms.required("HTTP")?);
        let server = match server {
            ServerStrategy::Mixed { .. } => {
                let block = self.raw("block_ms", &self.block_ms);
                let wait = self.raw("wait_ms", &self.wait_ms);
                let mixed = ServerStrategy::Mixed {
                    block: Duration::from_millis(block.required("mixed")?),
                    wait: Duration::from_millis(wait.required("mixed")?),
                };
                block.check(mixed.validate(work))?;
                mixed
            }
            other => {
                work_ms.check(other.validate(work))?;
                other
            }
        };
        let n = self.raw("n", &self.n);
        let count = n.required("HTTP")?;
        n.check(check_range("n", count, 1, MAX_REQUESTS, ""))?;
        let client = self.client()?;
        let lifecycle = self.lifecycle()?;
        let pool = self.pool("HTTP")?;
        let scenario = Scenario::builder()
            .server(server)
            .client(client)
            .lifecycle(lifecycle)
            .pool(pool)
            .requests(count)
            .work(work)
            .build();
        // Every field was checked where it sits; what is left is the row as a whole.
        scenario.map_err(|error| At {
            field: "id".into(),
            offset: self.id.span().start,
            error,
        })
    }

    fn client(&self) -> Result<ClientStrategy, At> {
        let client = self.raw("client", &self.client);
        let strategy = client.parse::<ClientStrategy>().unwrap_or_else(|| {
            Err(client.at(Error::invalid("client", "missing", ClientStrategy::NAMES)))
        })?;
        let threads = self.raw("threads", &self.threads);
        let users = self.raw("users", &self.users);
        let think = self.raw("think_ms", &self.think_ms);
        let ramp = self.raw("ramp_ms", &self.ramp_ms);
        let duration = self.raw("duration_ms", &self.duration_ms);
        let rate = self.raw("rate", &self.rate);
        let in_flight = self.raw("max_in_flight", &self.max_in_flight);
        let ms = |raw: &Raw<'_, u64>| Duration::from_millis(raw.get().unwrap_or(0));
        // Each setting is checked alone, so an error names the field that holds it.
        Ok(match strategy {
            ClientStrategy::SyncOverAsync { .. } => {
                let built = ClientStrategy::SyncOverAsync {
                    threads: threads.get().unwrap_or(1),
                };
                threads.check(built.validate().map(|()| built))?
            }
            ClientStrategy::ClosedLoop { .. } => {
                let users_count = users.required("closed-loop")?;
                let run = Duration::from_millis(duration.required("closed-loop")?);
                let with = |users, think, ramp, duration| ClientStrategy::ClosedLoop {
                    users,
                    think,
                    ramp,
                    duration,
                };
                let one = Duration::from_millis(1);
                users.check(with(users_count, one, one, one).validate())?;
                think.check(with(1, ms(&think), one, one).validate())?;
                ramp.check(with(1, one, ms(&ramp), one).validate())?;
                duration.check(with(1, one, one, run).validate())?;
                with(users_count, ms(&think), ms(&ramp), run)
            }
            ClientStrategy::OpenLoop { .. } => {
                let per_second = rate.required("open-loop")?;
                let cap = in_flight.required("open-loop")?;
                let with = |rate, max_in_flight| ClientStrategy::OpenLoop {
                    rate,
                    max_in_flight,
                };
                rate.check(with(per_second, 1).validate())?;
                in_flight.check(with(1.0, cap).validate())?;
                with(per_second, cap)
            }
            other => other,
        })
    }

    fn lifecycle(&self) -> Result<Lifecycle, At> {
        let lifecycle = self.raw("lifecycle", &self.lifecycle);
        let clients = self.raw("clients", &self.clients);
        let per_host = self.raw("per_host", &self.per_host);
        Ok(match lifecycle.parse::<Lifecycle>().transpose()? {
            None => Lifecycle::Shared,
            Some(Lifecycle::Pooled { .. }) => {
                let built = Lifecycle::Pooled {
                    clients: clients.required("pooled")?,
                };
                clients.check(built.validate().map(|()| built))?
            }
            Some(Lifecycle::ConnectionCap { .. }) => {
                let built = Lifecycle::ConnectionCap {
                    per_host: per_host.required("connection-cap")?,
                };
                per_host.check(built.validate().map(|()| built))?
            }
            Some(other) => other,
        })
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
