//! An Experiment: one source experiment's scenarios, loaded from `fixtures/*.toml`, with
//! the published figure beside each.

mod fixture;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::error::Result;
use crate::load::in_process_model;
use crate::model::{Model, Prediction};
use crate::pool::{Pool, PoolSettings};
use crate::run::Run;
use crate::scenario::Scenario;
use crate::summary::Summary;
use crate::vocab::{ClientStrategy, CpuBound, InProcess};

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
            } => Some(in_process_model(*strategy, *pool, *n, *work)),
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
        fixture::load(path.as_ref())
    }

    /// Parses and validates fixture `text`; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Experiment> {
        fixture::parse(path, text)
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
        let mut overhead = Duration::ZERO;
        let (wall, run, summary, checksum) = match &row.workload {
            Workload::Http(scenario) => {
                let (run, calibrated) = scenario.measure_calibrated()?;
                overhead = calibrated;
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
                // Warm up the threads at 1 ms of work: a warm-up at full work cost as
                // much as the row itself where the strategy blocks a worker.
                strategy.run(&pool, (*n).min(64), Duration::from_millis(1))?;
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
        // The HTTP rows' model counts the per-request cost calibrated beside the row.
        let model = row.workload.model().map(|m| m.with_overhead(overhead));
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
