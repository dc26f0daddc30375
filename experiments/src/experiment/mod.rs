//! An Experiment: one source experiment's scenarios, loaded from `fixtures/*.toml`, with
//! the published figure beside each.

mod fixture;
mod rounds;

pub use rounds::{ROUNDS, Rounds};

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

use crate::error::Result;
use crate::load::in_process_model;
use crate::model::{Model, Prediction};
use crate::scenario::Scenario;
use crate::vocab::{CpuBound, InProcess};
use perfshape::client::ClientStrategy;
use perfshape::load::Run;
use perfshape::load::Summary;
use perfshape::runtime::{Pool, PoolSettings};

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

impl Metric {
    /// The model's figure in this metric.
    pub fn of(self, prediction: &Prediction) -> f64 {
        match self {
            Metric::Wall => prediction.wall.as_secs_f64(),
            Metric::Throughput => prediction.throughput,
        }
    }

    /// How much slower than `model` a `measured` figure is: measured ÷ model for a wall
    /// time, model ÷ measured for a throughput, so that above 1 always means slower.
    pub fn slowdown(self, measured: f64, model: f64) -> f64 {
        match self {
            Metric::Wall => measured / model.max(f64::MIN_POSITIVE),
            Metric::Throughput => model / measured.max(f64::MIN_POSITIVE),
        }
    }
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
    /// The per-request (in-process: per-task) overhead calibrated beside the row, which
    /// its model counts (zero for CPU rows and closed loops).
    pub overhead: Duration,
    /// For CPU rows: the sum every strategy must agree on.
    pub checksum: Option<u64>,
    /// For a row measured in rounds (CPU-bound: [`ROUNDS`]), how they spread; every
    /// other field is then the median round's.
    pub rounds: Option<Rounds>,
}

impl Measured {
    /// Every request the row sent and how many of them were answered: over all its rounds
    /// when it was measured in rounds, else its one run's; `None` for a row that sends no
    /// HTTP request.
    pub fn requests(&self) -> Option<(usize, usize)> {
        match (&self.rounds, &self.summary) {
            (Some(rounds), _) => Some((rounds.sent, rounds.ok)),
            (None, Some(summary)) => Some((summary.sent, summary.ok)),
            (None, None) => None,
        }
    }

    /// How much slower than the model the row ran: measured ÷ model for a wall time,
    /// model ÷ measured for a throughput, so that above 1 always means slower. `None`
    /// without a model.
    pub fn slowdown(&self, metric: Metric) -> Option<f64> {
        self.model_figure
            .map(|model| metric.slowdown(self.figure, model))
    }
}

/// The longest a row's model may take at test scale ([`Experiment::at_test_scale`]).
const TEST_SCALE_WALL: Duration = Duration::from_millis(80);
/// The longest closed loop at test scale.
const TEST_SCALE_LOOP: Duration = Duration::from_millis(200);
/// The most requests (users, tasks) a row has at test scale.
const TEST_SCALE_N: usize = 250;
/// The most closed-loop users at test scale: a blocking queue of 100 users of 60 ms on 8
/// workers takes 0.75 s to drain after the run ends; of 32, 0.24 s.
const TEST_SCALE_USERS: usize = 32;

impl Experiment {
    /// The same experiment at a scale a test can afford, each row's shape kept: a
    /// concurrent or in-process row's N capped at 250 and then halved until its model
    /// takes at most 80 ms (a sequential 40 × 24 ms becomes 2 × 24 ms; a fan-out of 100
    /// onto 8 blocking workers, 13 waves of 24 ms, becomes 3 waves), a closed loop cut to
    /// 32 users and about 200 ms (half a cycle past its last whole cycle of work and think
    /// time). Work times, pools and clients stay as the fixture has them.
    pub fn at_test_scale(&self) -> Result<Experiment> {
        let mut scaled = self.clone();
        for row in &mut scaled.rows {
            match &mut row.workload {
                Workload::Http(scenario) => match &mut scenario.client {
                    ClientStrategy::ClosedLoop {
                        users,
                        think,
                        ramp,
                        duration,
                    } => {
                        *users = (*users).min(TEST_SCALE_USERS);
                        // Half a cycle past the last whole one: a user's k-th request
                        // starts near k × (work + think), and a deadline right behind one
                        // of those starts would let a few ms of jitter drop a whole
                        // cycle — a quarter of a 200 ms run's requests (a round at 1.4 ×
                        // the model in 1 of 20 runs).
                        let cycle = (scenario.work + *think).max(Duration::from_millis(1));
                        let whole = (TEST_SCALE_LOOP.as_secs_f64() / cycle.as_secs_f64())
                            .floor()
                            .max(1.0);
                        *duration = (*duration).min(cycle.mul_f64(whole + 0.5));
                        *ramp = (*ramp).min(*duration);
                    }
                    _ => {
                        scenario.n = scenario.n.min(TEST_SCALE_N);
                        while scenario.n > 1 && scenario.model().predict()?.wall > TEST_SCALE_WALL {
                            scenario.n /= 2;
                        }
                    }
                },
                Workload::InProcess {
                    strategy,
                    pool,
                    n,
                    work,
                } => {
                    *n = (*n).min(TEST_SCALE_N);
                    while *n > 1
                        && in_process_model(*strategy, *pool, *n, *work)
                            .predict()?
                            .wall
                            > TEST_SCALE_WALL
                    {
                        *n /= 2;
                    }
                }
                Workload::Cpu { .. } => {}
            }
        }
        scaled.scale = format!(
            "{}; at test scale: N ≤ {TEST_SCALE_N}, each model ≤ {} ms, closed loops of ≤ \
             {TEST_SCALE_USERS} users for about {} ms",
            self.scale,
            TEST_SCALE_WALL.as_millis(),
            TEST_SCALE_LOOP.as_millis()
        );
        Ok(scaled)
    }

    /// The same experiment with every closed loop offering load for `duration` (100 ms to
    /// 10 min): an external engine's stages may want longer loops than a test scale's.
    pub fn with_loop_duration(&self, duration: Duration) -> Result<Experiment> {
        perfshape::__support::check_range(
            "loop duration",
            duration.as_millis() as u64,
            100,
            600_000,
            " ms",
        )?;
        let mut changed = self.clone();
        for client in changed.closed_loops_mut() {
            if let ClientStrategy::ClosedLoop {
                ramp, duration: d, ..
            } = client
            {
                *d = duration;
                *ramp = (*ramp).min(duration);
            }
        }
        Ok(changed)
    }

    /// Every HTTP row's client that is a closed loop, to change in place.
    pub fn closed_loops_mut(&mut self) -> impl Iterator<Item = &mut ClientStrategy> {
        self.rows
            .iter_mut()
            .filter_map(|row| match &mut row.workload {
                Workload::Http(scenario)
                    if matches!(scenario.client, ClientStrategy::ClosedLoop { .. }) =>
                {
                    Some(&mut scenario.client)
                }
                _ => None,
            })
    }

    /// Loads and validates a fixture.
    pub fn load(path: impl AsRef<Path>) -> Result<Experiment> {
        fixture::load(path.as_ref())
    }

    /// Parses and validates fixture `text`; `path` names it in errors.
    pub fn parse(path: &Path, text: &str) -> Result<Experiment> {
        fixture::parse(path, text)
    }

    /// Runs every row in order for its table ([`table_row`](Self::table_row)), calling
    /// `progress` after each.
    pub fn measure(
        &self,
        mut progress: impl FnMut(&ExperimentRow, &Measured),
    ) -> Result<Vec<Measured>> {
        let mut measured = Vec::with_capacity(self.rows.len());
        for row in &self.rows {
            let m = self.table_row(row)?;
            progress(row, &m);
            measured.push(m);
        }
        Ok(measured)
    }

    /// Measures one row for its table: once ([`measure_row`](Self::measure_row)), or,
    /// where its requests' own handling outlasts its work (a CPU-bound fan-out, whose one
    /// run is as noisy as the machine's CPU), as the round of median slowdown among
    /// [`ROUNDS`]: that first measurement and `ROUNDS − 1` more on a fresh target, each
    /// after its own calibration. How they spread is in [`Measured::rounds`].
    pub fn table_row(&self, row: &ExperimentRow) -> Result<Measured> {
        let first = self.measure_row(row)?;
        let Workload::Http(scenario) = &row.workload else {
            return Ok(first);
        };
        if !rounds::cpu_bound(scenario, first.overhead)? {
            return Ok(first);
        }
        let mut all = vec![first];
        for (run, overhead) in scenario.measure_calibrated_rounds(ROUNDS - 1)? {
            all.push(self.judged_http(row, scenario, run, overhead)?);
        }
        let slowdown = |m: &Measured| m.slowdown(self.metric).unwrap_or(f64::NAN);
        let slowdowns: Vec<f64> = all.iter().map(slowdown).collect();
        let (sent, ok) = all
            .iter()
            .filter_map(|m| m.summary.as_ref())
            .fold((0, 0), |(sent, ok), s| (sent + s.sent, ok + s.ok));
        all.sort_by(|a, b| slowdown(a).total_cmp(&slowdown(b)));
        let mut median = all.swap_remove(all.len() / 2);
        median.rounds = Some(Rounds {
            slowdowns,
            stack: rounds::handling(scenario, median.overhead),
            work: scenario.model().predict()?.wall,
            sent,
            ok,
        });
        Ok(median)
    }

    /// Measures one row: its load once (an HTTP row after calibrating its per-request
    /// overhead on the same target), and the model's prediction with that overhead.
    pub fn measure_row(&self, row: &ExperimentRow) -> Result<Measured> {
        match &row.workload {
            Workload::Http(scenario) => {
                let (run, overhead) = scenario.measure_calibrated()?;
                self.judged_http(row, scenario, run, overhead)
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
                // What one task costs beyond its wait (spawning, the timer, joining): the
                // same N with no work, median of three, as for an HTTP row.
                let mut idle = (0..3)
                    .map(|_| strategy.run(&pool, *n, Duration::ZERO))
                    .collect::<Result<Vec<_>>>()?;
                idle.sort();
                let overhead = idle[1] / u32::try_from(*n).unwrap_or(u32::MAX);
                let wall = strategy.run(&pool, *n, *work)?;
                self.judged(row, wall, None, overhead, None)
            }
            Workload::Cpu { strategy, items } => {
                let pool = Pool::workers("cpu", 2)?;
                strategy.run(&pool, *items)?; // warm up (the seed dropped round 1 too)
                let (wall, sum) = strategy.run(&pool, *items)?;
                self.judged(row, wall, None, Duration::ZERO, Some(sum))
            }
        }
    }

    /// An HTTP row's `run`, its per-request overhead calibrated at `overhead`, against its
    /// model.
    fn judged_http(
        &self,
        row: &ExperimentRow,
        scenario: &Scenario,
        run: Run,
        overhead: Duration,
    ) -> Result<Measured> {
        let wall = run.wall;
        let summary = run.summary(scenario.work / 2);
        self.judged(row, wall, Some((run, summary)), overhead, None)
    }

    /// A row's measured `wall` (with its HTTP run and summary, or a CPU row's checksum)
    /// in the experiment's metric, beside its model counting `overhead`.
    fn judged(
        &self,
        row: &ExperimentRow,
        wall: Duration,
        http: Option<(Run, Summary)>,
        overhead: Duration,
        checksum: Option<u64>,
    ) -> Result<Measured> {
        let count = row.workload.count() as f64;
        let (run, summary) = http.unzip();
        let figure = match self.metric {
            Metric::Wall => wall.as_secs_f64(),
            Metric::Throughput => match &summary {
                Some(summary) => summary.throughput,
                None => count / wall.as_secs_f64().max(f64::MIN_POSITIVE),
            },
        };
        // The model counts the per-request (per-task) cost calibrated beside the row.
        let model = row.workload.model().map(|m| m.with_overhead(overhead));
        let predicted = model.as_ref().map(Model::predict).transpose()?;
        let model_figure = predicted.as_ref().map(|p| self.metric.of(p));
        Ok(Measured {
            wall,
            figure,
            run,
            summary,
            predicted,
            model_figure,
            model: model.map(|m| m.to_string()),
            overhead,
            checksum,
            rounds: None,
        })
    }
}
