//! Seed 004 offered by a distributed engine and judged from its statistics: what the
//! Locust and k6 entries share — the fixture at test scale, the demo service on the
//! fixture's pool, the claims, and the two wrong setups of their control.

use std::time::Duration;

use super::{Setup, Shapes, shape};
use crate::demo::app;
use crate::error::Result;
use crate::experiment::Experiment;
use crate::external::{EngineStats, Judge, Schedule};
use perfshape::__support::shape_lock;
use perfshape::client::ClientStrategy;
use perfshape::runtime::Server;
use perfshape::runtime::{Pool, PoolSettings};

/// The control's words, the same for every engine.
pub(super) const CONTROL: &str = "the claims' own run read wrongly: each row's statistics put on another row (async's on blocking, blocking's on async, mixed's and offload's swapped) for the throughput claims; users claimed to think 400 ms where they thought 2 ms, for Little's law";

/// The think time the Little's law control claims.
const WRONG_THINK: Duration = Duration::from_millis(400);

/// Seed 004's four closed loops of `loop_duration`, 3 interleaved rounds, judged from what
/// `offer(pool, schedule, label)` returns: the engine's statistics of `schedule` offered to
/// the demo service on `pool`. A control is the same one run, read wrongly
/// ([`wrongly_judged`]).
pub(super) fn seed004_judged(
    setup: Setup,
    loop_duration: Duration,
    offer: impl Fn(PoolSettings, &Schedule, &str) -> Result<EngineStats>,
) -> Result<Shapes> {
    let (claimed, judged, stats) =
        seed004_offered(loop_duration, offer, setup.pick("claimed", "control"))?;
    let decided = match setup {
        Setup::Claimed => Judge::new().against_model().judge(&judged, &stats)?,
        Setup::Control => wrongly_judged(&claimed, &judged, &stats)?,
    };
    Ok(shapes(decided))
}

/// The claims and their control from one engine run: the run judged as claimed, and read
/// wrongly ([`wrongly_judged`]). The engines' tests assert both, so that a control costs
/// no engine run of its own.
pub(super) fn seed004_with_control(
    loop_duration: Duration,
    offer: impl Fn(PoolSettings, &Schedule, &str) -> Result<EngineStats>,
) -> Result<(Shapes, Shapes)> {
    let (claimed, judged, stats) = seed004_offered(loop_duration, offer, "claimed")?;
    Ok((
        shapes(Judge::new().against_model().judge(&judged, &stats)?),
        shapes(wrongly_judged(&claimed, &judged, &stats)?),
    ))
}

/// Seed 004 at test scale, its schedule of 3 rounds, and the engine's statistics of that
/// schedule offered to the demo service on the fixture's pool (`label` names the run's
/// folder).
fn seed004_offered(
    loop_duration: Duration,
    offer: impl Fn(PoolSettings, &Schedule, &str) -> Result<EngineStats>,
    label: &str,
) -> Result<(Experiment, Schedule, EngineStats)> {
    let claimed = seed004(loop_duration)?;
    let judged = Schedule::new(&claimed, 3)?;
    let stats = offer(fixture_pool()?, &judged, label)?;
    Ok((claimed, judged, stats))
}

/// The control of seed 004's claims, read from the claims' own run, each claim wrongly:
/// - the throughput claims (the order and each row against the model) on the rows'
///   statistics reversed, so that each row's figure is another endpoint's — what sending
///   each row's users to another row's endpoint gave, when that was a run of its own;
/// - Little's law with the users claimed to think 400 ms where they thought 2 ms: every
///   row's figure, requests × (latency + think) ÷ (users × the loop), then reads 1.7 to
///   5 times the users in the system against a band that ends at 1.34.
///
/// One run instead of two: the control proves the claims read what the engine measured,
/// which the same run's statistics put on the wrong rows, or under the wrong think time,
/// prove as well as a run made wrong.
fn wrongly_judged(
    claimed: &Experiment,
    judged: &Schedule,
    stats: &EngineStats,
) -> Result<Vec<crate::external::Judged>> {
    let thinking = Schedule::new(&thinking(claimed, WRONG_THINK), 3)?;
    let mut decided = Judge::new()
        .against_model()
        .without_littles_law()
        .judge(judged, &rows_reversed(judged, stats))?;
    decided.extend(Judge::new().without_ordering().judge(&thinking, stats)?);
    Ok(decided)
}

/// The fixture at test scale (32 users a row) with every closed loop `loop_duration` long.
pub(super) fn seed004(loop_duration: Duration) -> Result<Experiment> {
    let fixture = crate::repository().join("fixtures/seed-004-jmeter-endpoints.toml");
    Experiment::load(&fixture)?
        .at_test_scale()?
        .with_loop_duration(loop_duration)
}

/// The pool the fixture's model assumes: what `perfshape serve --workers 8 --max-blocking
/// 12` serves.
pub(super) fn fixture_pool() -> Result<PoolSettings> {
    Ok(PoolSettings::new(8, 12)?)
}

/// Each judged claim under its snapshot name.
pub(super) fn shapes(decided: Vec<crate::external::Judged>) -> Shapes {
    decided
        .into_iter()
        .map(|j| shape(&j.name, j.checked))
        .collect()
}

/// Runs `load` against the demo service on a pool of `pool`, served on loopback for as long
/// as it takes, with no other timing measurement in this process meanwhile.
pub(super) fn against_demo<T>(
    pool: PoolSettings,
    load: impl FnOnce(&str) -> Result<T>,
) -> Result<T> {
    let _serialised = shape_lock();
    let server = Server::serve_on(
        Pool::new("server", pool)?,
        app(),
        "127.0.0.1:0".parse().expect("an address"),
    )?;
    load(&format!("http://{}", server.addr()))
}

/// `stats` with each row's stages put on the row the reverse order puts in its place:
/// the first row's on the last, the second's on the one before, round by round.
fn rows_reversed(schedule: &Schedule, stats: &EngineStats) -> EngineStats {
    let mut reversed = stats.clone();
    let rows = schedule.rows.len();
    for stage in &schedule.stages {
        let other = crate::external::Stage {
            row: rows - 1 - stage.row,
            ..*stage
        };
        if let Some(figures) = stats.stages.get(&schedule.request_name(&other)) {
            reversed
                .stages
                .insert(schedule.request_name(stage), *figures);
        }
    }
    reversed
}

/// `experiment` with every closed loop's users thinking `think`.
fn thinking(experiment: &Experiment, think: Duration) -> Experiment {
    let mut changed = experiment.clone();
    for client in changed.closed_loops_mut() {
        if let ClientStrategy::ClosedLoop { think: t, .. } = client {
            *t = think;
        }
    }
    changed
}
