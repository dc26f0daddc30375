//! An Experiment: one source experiment's scenarios, loaded from `fixtures/*.toml`, with
//! the published figure beside each.

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use crate::client::{ClientStrategy, Lifecycle};
use crate::error::{Error, FixtureError, FixtureErrorKind, Result};
use crate::model::Prediction;
use crate::run::Run;
use crate::scenario::Scenario;
use crate::server::ServerStrategy;
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
    /// The unit of the published figures (e.g. `s`).
    pub published_unit: String,
    /// Index into `rows` of the row every figure is normalised to.
    pub baseline: usize,
    /// The scenarios, in table order.
    pub rows: Vec<ExperimentRow>,
}

/// One row of an experiment's table.
#[derive(Clone, Debug)]
pub struct ExperimentRow {
    /// Short id, e.g. `a`, `b20`.
    pub id: String,
    /// The row's label as the seed wrote it.
    pub label: String,
    /// What to run.
    pub scenario: Scenario,
    /// The published figure, in the experiment's unit.
    pub published: f64,
    /// A remark on the published figure, if any.
    pub published_note: Option<String>,
}

/// A row as measured.
#[derive(Clone, Debug)]
pub struct Measured {
    /// Every request.
    pub run: Run,
    /// Its figures (waves split at half the work time).
    pub summary: Summary,
    /// What the model predicts for the row.
    pub predicted: Prediction,
    /// The model, in stable form.
    pub model: String,
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
        let mut rows: Vec<ExperimentRow> = Vec::with_capacity(raw.scenario.len());
        for (i, s) in raw.scenario.iter().enumerate() {
            let at = |name: &str| format!("scenario[{i}].{name}");
            let server = parse_spanned::<ServerStrategy>(&s.server)
                .map_err(|e| field(at("server"), s.server.span().start, e))?;
            let server = match server {
                ServerStrategy::Mixed { .. } => {
                    let (block, wait) = match (&s.block_ms, &s.wait_ms) {
                        (Some(b), Some(w)) => (*b.get_ref(), *w.get_ref()),
                        _ => {
                            return Err(field(
                                at("block_ms"),
                                s.server.span().start,
                                Error::invalid(
                                    "block_ms / wait_ms",
                                    "missing",
                                    "both, for server = \"mixed\"",
                                ),
                            ));
                        }
                    };
                    ServerStrategy::Mixed {
                        block: Duration::from_millis(block),
                        wait: Duration::from_millis(wait),
                    }
                }
                other => other,
            };
            let mut client = parse_spanned::<ClientStrategy>(&s.client)
                .map_err(|e| field(at("client"), s.client.span().start, e))?;
            if let (ClientStrategy::SyncOverAsync { threads }, Some(t)) = (&mut client, &s.threads)
            {
                *threads = *t.get_ref();
            }
            let lifecycle = match &s.lifecycle {
                Some(l) => parse_spanned::<Lifecycle>(l)
                    .map_err(|e| field(at("lifecycle"), l.span().start, e))?,
                None => Lifecycle::Shared,
            };
            let mut builder = Scenario::builder()
                .server(server)
                .client(client)
                .lifecycle(lifecycle)
                .workers(*s.workers.get_ref())
                .requests(*s.n.get_ref())
                .work(Duration::from_millis(*s.work_ms.get_ref()));
            if let Some(b) = &s.max_blocking {
                builder = builder.max_blocking(*b.get_ref());
            }
            if let Some(c) = &s.client_workers {
                builder = builder.client_workers(*c.get_ref());
            }
            // Point the error at the field the builder names.
            let scenario = builder.build().map_err(|e| {
                let (name, offset) = match &e {
                    Error::Invalid { field: f, .. } => (*f, span_of(s, f)),
                    _ => ("scenario", s.id.span().start),
                };
                field(at(name), offset, e)
            })?;
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
                scenario,
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
            baseline,
            rows,
        })
    }

    /// Runs every row in order, calling `progress` after each; waves are split at half
    /// the row's work time.
    pub fn measure(
        &self,
        mut progress: impl FnMut(&ExperimentRow, &Measured),
    ) -> Result<Vec<Measured>> {
        let mut measured = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            let run = row.scenario.measure()?;
            let summary = run.summary(row.scenario.work / 2);
            let model = row.scenario.model();
            let m = Measured {
                run,
                summary,
                predicted: model.predict()?,
                model: model.describe(),
            };
            progress(row, &m);
            measured.push(m);
        }
        Ok(measured)
    }
}

fn parse_spanned<T: FromStr<Err = Error>>(value: &Spanned<String>) -> Result<T> {
    value.get_ref().parse()
}

fn span_of(s: &RawScenario, field: &str) -> usize {
    let opt = |v: &Option<Spanned<usize>>| v.as_ref().map(|x| x.span().start);
    match field {
        "n" => Some(s.n.span().start),
        "work_ms" | "block_ms + wait_ms" => Some(s.work_ms.span().start),
        "workers" => Some(s.workers.span().start),
        "max_blocking" => opt(&s.max_blocking),
        "threads" => opt(&s.threads),
        _ => None,
    }
    .unwrap_or_else(|| s.id.span().start)
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
    baseline: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    id: Spanned<String>,
    label: String,
    server: Spanned<String>,
    client: Spanned<String>,
    threads: Option<Spanned<usize>>,
    lifecycle: Option<Spanned<String>>,
    workers: Spanned<usize>,
    max_blocking: Option<Spanned<usize>>,
    client_workers: Option<Spanned<usize>>,
    n: Spanned<usize>,
    work_ms: Spanned<u64>,
    block_ms: Option<Spanned<u64>>,
    wait_ms: Option<Spanned<u64>>,
    published: Spanned<f64>,
    published_note: Option<String>,
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
