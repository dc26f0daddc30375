//! A fixture's claims decided from an engine's statistics: the same [`Claim`]s, verdicts,
//! reports and shape summaries as in-process, with each side's rounds replayed from the
//! engine's stages instead of measured here.
//!
//! The claims need no model of the remote service: the rows' ordering by the published
//! figures (each beats the next by 10 %), and per closed loop Little's law — the engine
//! kept its users in the system, so its figures are the load it was asked for. Against a
//! `perfshape serve` on the fixture's own pool, [`Judge::against_model`] adds each row's
//! figure ÷ the model's.

use std::path::PathBuf;
use std::time::Duration;

use super::schedule::Schedule;
use super::scheduled_row::EngineLoad;
use super::stats::{EngineStats, StageStats};
use crate::error::Result;
use crate::experiment::Metric;
use perfshape::claim::{Checked, Claim, Expected, GateMode, Measure};

/// The smallest step between neighbours in the published order that an engine's figures
/// must show: 10 %. Rows published closer than that are not ordered against each other.
pub const ORDER_STEP: f64 = 1.1;

/// Little's law's slack beyond the range the users' phases allow (see [`Judge::judge`]).
pub const LITTLE_SLACK: f64 = 0.05;

/// The least share of an open loop's planned starts the engine must have sent: 99 %.
pub const OFFERED: f64 = 0.99;

/// A row's figure ÷ the model's, when the host is `perfshape serve` on the fixture's pool:
/// wider than in-process, since the engine's own client costs are not calibrated out.
pub const MODEL_BAND: (f64, f64) = (0.75, 1.25);

/// Decides a schedule's claims from an engine's statistics.
#[derive(Clone, Debug)]
pub struct Judge {
    ordering: bool,
    littles_law: bool,
    against_model: bool,
    artifacts: Option<PathBuf>,
    gate: Option<GateMode>,
}

/// One decided claim and the name its shape summary is snapshotted under.
#[derive(Debug)]
pub struct Judged {
    /// A short name, e.g. `ordering` or `little-blocking`.
    pub name: String,
    /// The decided claim.
    pub checked: Checked,
}

impl Default for Judge {
    fn default() -> Self {
        Judge::new()
    }
}

impl Judge {
    /// The ordering and Little's law claims.
    pub fn new() -> Judge {
        Judge {
            ordering: true,
            littles_law: true,
            against_model: false,
            artifacts: None,
            gate: None,
        }
    }

    /// Leaves out the ordering claim: for a run whose setup is wrong for Little's law only
    /// (a negative control), so that a claim it does not test writes no report.
    pub fn without_ordering(mut self) -> Judge {
        self.ordering = false;
        self
    }

    /// Leaves out the Little's law claims, as [`Judge::without_ordering`] does the
    /// ordering.
    pub fn without_littles_law(mut self) -> Judge {
        self.littles_law = false;
        self
    }

    /// Adds each row's figure ÷ the model's prediction for the fixture's pool: only for a
    /// host that is `perfshape serve` with that pool.
    pub fn against_model(mut self) -> Judge {
        self.against_model = true;
        self
    }

    /// Writes the claims' reports to `dir` instead of the artifact folder.
    pub fn artifacts_in(mut self, dir: impl Into<PathBuf>) -> Judge {
        self.artifacts = Some(dir.into());
        self
    }

    /// Fixes the gate mode instead of reading the environment.
    pub fn gate_mode(mut self, mode: GateMode) -> Judge {
        self.gate = Some(mode);
        self
    }

    /// Every claim, decided from `stats`; refused when the statistics miss a stage or
    /// hold a failed request.
    pub fn judge(&self, schedule: &Schedule, stats: &EngineStats) -> Result<Vec<Judged>> {
        let stages = stats.for_schedule(schedule)?;
        let rounds = schedule.rounds;
        // Each row's stages in round order: the schedule lists stages round by round.
        let per_row: Vec<Vec<StageStats>> = (0..schedule.rows.len())
            .map(|row| {
                schedule
                    .stages
                    .iter()
                    .zip(&stages)
                    .filter(|(stage, _)| stage.row == row)
                    .map(|(_, stats)| *stats)
                    .collect()
            })
            .collect();
        // Several summaries added up (k6's runners) are named as such in every claim, so a
        // split run's claims are told from a single process's.
        let engine = match stats.parts {
            0 | 1 => stats.engine.name().to_string(),
            n => format!("{} ({n} summaries added up)", stats.engine.name()),
        };
        let sent: u64 = stages.iter().map(|s| s.requests).sum();
        let failed: u64 = stages.iter().map(|s| s.failures).sum();
        let dropped: u64 = stages.iter().map(|s| s.dropped).sum();
        let open_loops = schedule
            .rows
            .iter()
            .any(|r| matches!(r.load, EngineLoad::Arrival { .. }));
        let accounting = format!(
            "{engine}: sent {sent} = ok {} + failed {failed}{} over {} stages ({} rows × {rounds} rounds)",
            sent - failed,
            match open_loops {
                true => format!("; {dropped} starts dropped (no user free)"),
                false => String::new(),
            },
            stages.len(),
            schedule.rows.len()
        );
        let mut judged = Vec::new();

        // The published order, largest first; rows closer than ORDER_STEP to the row
        // before them are left out of it.
        let mut order: Vec<usize> = (0..schedule.rows.len()).collect();
        order.sort_by(|&a, &b| {
            schedule.rows[b]
                .published
                .total_cmp(&schedule.rows[a].published)
        });
        let mut chain: Vec<usize> = Vec::new();
        for row in order {
            match chain.last() {
                Some(&last)
                    if schedule.rows[last].published / schedule.rows[row].published
                        < ORDER_STEP => {}
                _ => chain.push(row),
            }
        }
        if self.ordering && chain.len() >= 2 {
            let sides = chain
                .iter()
                .map(|&row| self.side(schedule, row, &per_row[row]))
                .collect();
            let what = match schedule.metric {
                Metric::Throughput => "throughput",
                Metric::Wall => "wall time",
            };
            let claim = Claim::ordering(
                &format!(
                    "{} {what} in the published order, from {engine}",
                    schedule.experiment
                ),
                sides,
            )
            .at_least(ORDER_STEP);
            self.add(
                &mut judged,
                "ordering".into(),
                claim,
                schedule,
                stats,
                &accounting,
            )?;
        }

        let closed_loops = schedule.rows.iter().enumerate();
        for (row, scheduled) in closed_loops.filter(|_| self.littles_law) {
            let EngineLoad::ClosedLoop {
                users,
                think,
                duration,
                ..
            } = scheduled.load
            else {
                continue;
            };
            // Requests started in [0, D) by U users of cycle c: each user starts D ÷ c of
            // them, plus a fraction of one that depends on where its cycles fall — ½ on
            // average when the users' phases are spread, anything in [0, 1) when they
            // start together and stay in step (they do here: no ramp, one server). So
            // requests × c ÷ (U × (D + c ÷ 2)) lies in [k ÷ (k + ½), (k + 1) ÷ (k + ½)]
            // for k = D ÷ c when the engine kept every user busy; the band is that range,
            // from the model's cycle, widened by 5 % each way. (Seed 004's async row: 9
            // whole cycles of 66.6 ms in 600 ms, every user in step, gave 0.95 every run.)
            let figures: Vec<f64> = per_row[row]
                .iter()
                .map(|s| {
                    let cycle = s.mean_latency + think.as_secs_f64();
                    s.requests as f64 * cycle
                        / (users as f64 * (duration.as_secs_f64() + cycle / 2.0))
                })
                .collect();
            let k = duration.as_secs_f64() / scheduled.model_cycle.as_secs_f64().max(1e-3);
            let (lo, hi) = (
                k / (k + 0.5) * (1.0 - LITTLE_SLACK),
                (k + 1.0) / (k + 0.5) * (1.0 + LITTLE_SLACK),
            );
            // Replayed from the engine's stages; none is measured here.
            let measure = Measure::value(
                &format!("{} users in the system ÷ {users}", scheduled.id),
                exhausted,
            )
            .replaying(figures);
            let claim = Claim::figure(
                &format!(
                    "{} {}: {engine} kept {users} users in the system (Little's law)",
                    schedule.experiment, scheduled.id
                ),
                measure,
            )
            .within(round3(lo), round3(hi))
            .ideal(1.0);
            self.add(
                &mut judged,
                format!("little-{}", scheduled.id),
                claim,
                schedule,
                stats,
                &accounting,
            )?;
        }

        for (row, scheduled) in schedule.rows.iter().enumerate() {
            let EngineLoad::Arrival {
                rate,
                max_in_flight,
                ..
            } = scheduled.load
            else {
                continue;
            };
            // An open loop's figures are of the load asked for only when the engine
            // started it: a start dropped because all its users were busy is load not
            // offered (k6's own count of coordinated omission).
            let figures: Vec<f64> = per_row[row]
                .iter()
                .map(|s| s.requests as f64 / (s.requests + s.dropped).max(1) as f64)
                .collect();
            let measure = Measure::value(
                &format!("{} starts sent ÷ planned", scheduled.id),
                exhausted,
            )
            .replaying(figures);
            let claim = Claim::figure(
                &format!(
                    "{} {}: {engine} offered {rate}/s with {max_in_flight} users (at most {:.0} % of starts dropped)",
                    schedule.experiment,
                    scheduled.id,
                    (1.0 - OFFERED) * 100.0
                ),
                measure,
            )
            .at_least(OFFERED)
            .ideal(1.0);
            self.add(
                &mut judged,
                format!("offered-{}", scheduled.id),
                claim,
                schedule,
                stats,
                &accounting,
            )?;
        }

        if self.against_model {
            for (row, scheduled) in schedule.rows.iter().enumerate() {
                let side = self.side(schedule, row, &per_row[row]);
                let claim = Claim::bound(
                    &format!(
                        "{} {} from {engine} ÷ the model on {}",
                        schedule.experiment, scheduled.id, scheduled.pool
                    ),
                    side,
                )
                .within(MODEL_BAND.0, MODEL_BAND.1);
                self.add(
                    &mut judged,
                    format!("model-{}", scheduled.id),
                    claim,
                    schedule,
                    stats,
                    &accounting,
                )?;
            }
        }
        Ok(judged)
    }

    /// A row's figure in the experiment's metric, one per round, expecting the model's.
    fn side(&self, schedule: &Schedule, row: usize, stats: &[StageStats]) -> Measure<'static> {
        let scheduled = &schedule.rows[row];
        let figures: Vec<f64> = stats
            .iter()
            .map(|s| figure(schedule.metric, scheduled.load, s))
            .collect();
        let measure = match schedule.metric {
            Metric::Throughput => Measure::rate(&scheduled.id, exhausted),
            Metric::Wall => Measure::duration(&scheduled.id, || {
                exhausted().map(std::time::Duration::from_secs_f64)
            }),
        };
        let expected = Expected::new(
            scheduled.model_figure,
            format!("the model on {}", scheduled.pool),
        );
        measure.replaying(figures).expecting(expected)
    }

    /// Decides `claim` and adds it to `judged` under `name`; the first claim judged
    /// carries the engine run's time.
    fn add(
        &self,
        judged: &mut Vec<Judged>,
        name: String,
        claim: Claim<'static>,
        schedule: &Schedule,
        stats: &EngineStats,
        accounting: &str,
    ) -> Result<()> {
        let first = judged.is_empty();
        let accounting = accounting.to_string();
        // Several summaries added up (k6's runners) are named as such in every claim, so a
        // split run's claims are told from a single process's.
        let engine = match stats.parts {
            0 | 1 => stats.engine.name().to_string(),
            n => format!("{} ({n} summaries added up)", stats.engine.name()),
        };
        let mut claim = claim
            .rounds(3, schedule.rounds)
            .warmup(0)
            .context("engine", engine)
            .explain(move |_| vec![accounting]);
        if let Some(took) = stats.took {
            // The engine's run counts once, with the first claim; the others replay it.
            claim = if first {
                perfshape::__support::measured_elsewhere(claim, took, schedule.physical_limit())
            } else {
                perfshape::__support::measured_elsewhere(claim, Duration::ZERO, Duration::ZERO)
            };
        }
        if let Some(dir) = &self.artifacts {
            claim = claim.artifacts_in(dir);
        }
        if let Some(mode) = self.gate {
            claim = claim.gate_mode(mode);
        }
        judged.push(Judged {
            name,
            checked: claim.check()?,
        });
        Ok(())
    }
}

/// A row's figure in `metric` from one stage: a closed loop's requests ÷ its duration (or
/// its duration and the slowest request for a wall time); a counted load's slowest
/// request (a fan-out: all start together) or its mean × requests per user (in turn); an
/// open loop's time of starts and its slowest request, its requests ÷ that.
fn figure(metric: Metric, load: EngineLoad, stats: &StageStats) -> f64 {
    let wall = match load {
        EngineLoad::ClosedLoop { .. } | EngineLoad::Arrival { .. } => {
            load.active().as_secs_f64() + stats.max_latency
        }
        EngineLoad::Count { per_user: 1, .. } => stats.max_latency,
        EngineLoad::Count { per_user, .. } => stats.mean_latency * per_user as f64,
    };
    match (metric, load) {
        (Metric::Wall, _) => wall,
        (Metric::Throughput, EngineLoad::ClosedLoop { duration, .. }) => {
            stats.requests as f64 / duration.as_secs_f64()
        }
        (Metric::Throughput, EngineLoad::Count { .. } | EngineLoad::Arrival { .. }) => {
            stats.requests as f64 / wall.max(f64::MIN_POSITIVE)
        }
    }
}

/// A band edge to three places, so that the snapshot shows it as the report does.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A replayed side asked for more rounds than the statistics hold: the claim's rounds are
/// capped at the schedule's, so this is never reached.
fn exhausted() -> perfshape::Result<f64> {
    Err(perfshape::Error::Invalid {
        field: "rounds",
        value: "more than the statistics hold".into(),
        allowed: "the schedule's rounds".into(),
    })
}
