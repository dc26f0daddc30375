//! A fixture's rows laid out in time for an external engine: every row once per round,
//! rounds interleaved the way a claim interleaves its sides (A B C, C B A, A B C, …), each
//! row's stage long enough for its load to finish before the next begins.
//!
//! The engine's users run this schedule by the clock rather than by the engine's own
//! staging: Locust's `LoadTestShape` is polled once a second and does not restart users
//! when only the user classes change (measured: stages of ≥ 2 s, 24 s for seed 004's 4 rows
//! × 3 rounds), where a clock-driven stage can be as short as the row's load.

use std::time::Duration;

use serde::Serialize;

use super::engine::Engine;
use super::scheduled_row::{EngineLoad, ScheduledRow, scheduled};
use crate::error::{Error, Result};
use crate::experiment::{Experiment, Metric};

/// How long the users wait after the run starts before the first stage: every user is
/// spawned and every worker has the start time by then (Locust: 128 users on 2 local
/// workers were spawned in 0.16 s).
pub const LEAD: Duration = Duration::from_millis(1000);

/// Rounds a schedule may have: a verdict needs 3; more than 15 the decision rule never
/// looks at.
pub const ROUNDS: std::ops::RangeInclusive<usize> = 3..=15;

/// The shortest scenario k6 runs: a `constant-vus`, `constant-arrival-rate` or
/// `per-vu-iterations` scenario of less is a configuration error (k6 1.1: "the duration
/// must be at least 1s").
pub const K6_MIN_DURATION: Duration = Duration::from_secs(1);

/// The k6 scenario of the schedule's `index`-th stage (here, beside the stages, because
/// both the script writer and the statistics reader name scenarios by it): `s000`, `s001`, … (k6 allows only
/// letters, digits, `_` and `-` in a scenario's name, so not the stage's `row@round`).
pub fn scenario_name(index: usize) -> String {
    format!("s{index:03}")
}

/// One stage: one row in one round.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Stage {
    /// Index into [`Schedule::rows`].
    pub row: usize,
    /// The round, from 0.
    pub round: usize,
    /// When the stage begins, after the schedule's start.
    #[serde(with = "perfshape::__support::millis")]
    pub start: Duration,
    /// How long it lasts: the load's active part and its drain.
    #[serde(with = "perfshape::__support::millis")]
    pub length: Duration,
}

/// A fixture's HTTP rows in interleaved rounds, for Locust or k6.
#[derive(Clone, Debug, Serialize)]
pub struct Schedule {
    /// The experiment's id, e.g. `seed-004`.
    pub experiment: String,
    /// Its title.
    pub title: String,
    /// What its figures measure.
    pub metric: Metric,
    /// The rows, in the fixture's order.
    pub rows: Vec<ScheduledRow>,
    /// Every stage, in time order.
    pub stages: Vec<Stage>,
    /// Rounds.
    pub rounds: usize,
    /// The least drain of any stage ([`Schedule::with_drain_at_least`]).
    #[serde(with = "perfshape::__support::millis")]
    pub drain_floor: Duration,
}

impl Schedule {
    /// Lays out every row of `experiment` in `rounds` interleaved rounds. A row an engine
    /// cannot offer as perfshape does (in-process, CPU-bound, sync-over-async, a client
    /// lifecycle other than one shared client) is refused with its id and the reason;
    /// [`Schedule::only`] picks the rows to run, [`Schedule::check_engine`] says whether an
    /// engine can run them.
    pub fn new(experiment: &Experiment, rounds: usize) -> Result<Schedule> {
        Self::only(experiment, rounds, &[])
    }

    /// As [`Schedule::new`], with only the rows whose ids are in `ids` (all when empty).
    pub fn only(experiment: &Experiment, rounds: usize, ids: &[String]) -> Result<Schedule> {
        if !ROUNDS.contains(&rounds) {
            return Err(Error::invalid(
                "rounds",
                rounds,
                format!("{} to {}", ROUNDS.start(), ROUNDS.end()),
            ));
        }
        for id in ids {
            if !experiment.rows.iter().any(|r| &r.id == id) {
                let known: Vec<&str> = experiment.rows.iter().map(|r| r.id.as_str()).collect();
                return Err(Error::unknown("row", id.clone(), known.join(", ")));
            }
        }
        let mut rows = Vec::new();
        let mut refused = Vec::new();
        for row in &experiment.rows {
            if !ids.is_empty() && !ids.contains(&row.id) {
                continue;
            }
            match scheduled(experiment.metric, row) {
                Ok(scheduled) => rows.push(scheduled),
                Err(why) => refused.push(format!("row {:?}: {why}", row.id)),
            }
        }
        if !refused.is_empty() {
            return Err(Error::invalid(
                "rows",
                refused.join("; "),
                "HTTP rows with a shared client, offered by a closed loop, an open loop, a \
                 fan-out or a sequential client (pick rows with --rows)",
            ));
        }
        if rows.len() < 2 {
            return Err(Error::invalid(
                "rows",
                rows.len(),
                "at least 2: every claim compares rows",
            ));
        }
        let mut stages = Vec::with_capacity(rows.len() * rounds);
        for round in 0..rounds {
            let mut order: Vec<usize> = (0..rows.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for row in order {
                stages.push(Stage {
                    row,
                    round,
                    start: Duration::ZERO,
                    length: Duration::ZERO,
                });
            }
        }
        let mut schedule = Schedule {
            experiment: experiment.id.clone(),
            title: experiment.title.clone(),
            metric: experiment.metric,
            rows,
            stages,
            rounds,
            drain_floor: Duration::ZERO,
        };
        schedule.lay_out();
        Ok(schedule)
    }

    /// Every stage's drain at least `floor`: for a service slower than the model of the
    /// fixture's pool (a staging deployment), so that a stage's last requests end before
    /// the next stage begins. The judge does not need it: stages keep their names and
    /// loops.
    pub fn with_drain_at_least(mut self, floor: Duration) -> Schedule {
        self.drain_floor = floor;
        self.lay_out();
        self
    }

    /// Time left after `row`'s active part for its last requests to finish: the model's
    /// tail × 1.5 and 100 ms, room for jitter, or the floor given.
    pub fn drain(&self, row: usize) -> Duration {
        (self.rows[row].tail.mul_f64(1.5) + Duration::from_millis(100)).max(self.drain_floor)
    }

    /// Each stage's start and length, one after another from [`LEAD`].
    fn lay_out(&mut self) {
        let mut at = LEAD;
        for i in 0..self.stages.len() {
            let row = self.stages[i].row;
            let length = self.rows[row].load.active() + self.drain(row);
            self.stages[i].start = at;
            self.stages[i].length = length;
            at += length;
        }
    }

    /// From the start of the run to the end of the last stage.
    pub fn total(&self) -> Duration {
        self.stages
            .last()
            .map_or(LEAD, |stage| stage.start + stage.length)
    }

    /// What the stages must wait for however fast the machine: each stage's active part
    /// and the model's tail (not the drain's margin, nor the engine's start).
    pub fn physical_limit(&self) -> Duration {
        self.stages
            .iter()
            .map(|s| self.rows[s.row].load.active() + self.rows[s.row].tail)
            .sum()
    }

    /// Users the engine must spawn: every row's own, since each row's users wait for its
    /// stages (a Locust user class per row, `fixed_count` users each).
    pub fn users(&self) -> usize {
        self.rows.iter().map(|r| r.load.users()).sum()
    }

    /// The name a stage's requests carry in the engine's statistics: `row@round`.
    pub fn request_name(&self, stage: &Stage) -> String {
        format!("{}@{}", self.rows[stage.row].id, stage.round)
    }

    /// The requests a counted row's stage sends, or an arrival rate's starts (sent and
    /// dropped), when the row plans a number.
    pub fn planned_requests(&self, row: usize) -> Option<usize> {
        match self.rows[row].load {
            EngineLoad::Count { users, per_user } => Some(users * per_user),
            EngineLoad::Arrival { requests, .. } => Some(requests),
            EngineLoad::ClosedLoop { .. } => None,
        }
    }

    /// Refuses, naming the rows, a schedule `engine` cannot run as written: Locust has no
    /// arrival-rate users; k6 runs a scenario of a fixed duration for at least
    /// [`K6_MIN_DURATION`] (it refuses the script otherwise, exit 104, before any load).
    pub fn check_engine(&self, engine: Engine) -> Result<()> {
        let refused: Vec<String> = self
            .rows
            .iter()
            .filter_map(|row| match (engine, row.load) {
                (Engine::Locust, EngineLoad::Arrival { .. }) => Some(format!(
                    "row {:?} is an open loop (an arrival rate), which Locust's users do not \
                     offer (export it for k6: perfshape export k6)",
                    row.id
                )),
                (Engine::K6, EngineLoad::ClosedLoop { duration, ramp, .. })
                    if ramp.is_zero() && duration < K6_MIN_DURATION =>
                {
                    Some(format!(
                        "row {:?} is a closed loop of {} ms, and k6 runs one for at least {} ms \
                         (give the loops {} ms or more: --loop-ms on the command line, the same \
                         to perfshape judge)",
                        row.id,
                        duration.as_millis(),
                        K6_MIN_DURATION.as_millis(),
                        K6_MIN_DURATION.as_millis()
                    ))
                }
                (Engine::K6, load @ EngineLoad::Arrival { rate, requests, .. })
                    if load.active() < K6_MIN_DURATION =>
                {
                    Some(format!(
                        "row {:?} is an open loop of {requests} requests at {rate}/s, {} ms, and \
                         k6 runs one for at least {} ms (raise the row's n or lower its rate)",
                        row.id,
                        load.active().as_millis(),
                        K6_MIN_DURATION.as_millis()
                    ))
                }
                _ => None,
            })
            .collect();
        if refused.is_empty() {
            Ok(())
        } else {
            Err(Error::invalid(
                "rows",
                refused.join("; "),
                format!("rows {} can run as written", engine.name()),
            ))
        }
    }
}
