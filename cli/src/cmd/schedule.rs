//! What the engine verbs (`locust`, `k6`, `judge`, `export k6`) share: how a fixture's rows
//! are laid out for an engine, the line announcing a run, and the verdict table of its
//! statistics.

use std::path::Path;
use std::time::Duration;

use perfshape_experiments::experiment::Experiment;
use perfshape_experiments::external::{EngineStats, Judge, Schedule};

use super::margin;
use crate::exit::Exit;

/// How a fixture's rows are laid out for an engine: the same flags must be given to the
/// command that writes the script and to `perfshape judge`.
#[derive(clap::Args)]
pub(crate) struct ScheduleArgs {
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
    /// The schedule of `fixture`'s rows these flags describe.
    pub(super) fn schedule(&self, fixture: &Path) -> perfshape_experiments::Result<Schedule> {
        let mut experiment = Experiment::load(fixture)?;
        if self.test_scale {
            experiment = experiment.at_test_scale()?;
        }
        if let Some(ms) = self.loop_ms {
            experiment = experiment.with_loop_duration(Duration::from_millis(ms))?;
        }
        let schedule = Schedule::only(&experiment, self.rounds, &self.rows)?;
        Ok(match self.drain_ms {
            Some(ms) => schedule.with_drain_at_least(Duration::from_millis(ms)),
            None => schedule,
        })
    }
}

/// Says on stderr what an engine is about to offer: `engine` with `processes` (e.g. "2
/// workers") against `host`.
pub(super) fn announce(engine: &str, schedule: &Schedule, processes: &str, host: &str) {
    eprintln!(
        "{engine}: {} rows × {} rounds, {} users, {:.1} s, {processes} against {host} …",
        schedule.rows.len(),
        schedule.rounds,
        schedule.users(),
        schedule.total().as_secs_f64(),
    );
}

/// Decides the schedule's claims from an engine's statistics, prints a table, and says
/// what was decided (the exit status: broken, inconclusive or holds).
pub(super) fn judge(
    schedule: &Schedule,
    stats: &EngineStats,
    against_model: bool,
) -> perfshape_experiments::Result<Exit> {
    let mut judge = Judge::new();
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
            report.name(),
            report.verdict(),
            report.median(),
            report.band(),
            margin(report),
            report.rounds().len()
        );
    }
    if let Some(first) = judged.first() {
        for line in first.checked.report().explanation() {
            println!("{line}");
        }
    }
    Ok(Exit::of(judged.iter().map(|j| j.checked.report())))
}
