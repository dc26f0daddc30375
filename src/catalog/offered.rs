//! Seed 004 offered by a distributed engine and judged from its statistics: what the
//! Locust and k6 entries share — the fixture at test scale, the demo service on the
//! fixture's pool, the claims, and the two wrong setups of their control.

use std::path::Path;
use std::time::Duration;

use super::{Setup, Shapes, shape};
use crate::claim::shape_lock;
use crate::error::Result;
use crate::experiment::Experiment;
use crate::external::{EngineStats, Judge, Schedule};
use crate::pool::{Pool, PoolSettings};
use crate::server::{Server, app};
use crate::vocab::ClientStrategy;

/// The control's words, the same for every engine.
pub(super) const CONTROL: &str = "each row's users sent to another row's endpoint (async to /blocking, blocking to /async, mixed and offload swapped) for the throughput claims; users thinking 400 ms where 2 ms is claimed, on 64 workers and 64 blocking threads, for Little's law";

/// The think time of the Little's law control.
const WRONG_THINK: Duration = Duration::from_millis(400);

/// Seed 004's four closed loops of `loop_duration`, 3 interleaved rounds, judged from what
/// `offer(pool, schedule, label)` returns: the engine's statistics of `schedule` offered to
/// the demo service on `pool`.
///
/// The control needs two runs, each wrong for its own claims. The throughput claims: the
/// fixture's pool with each row's users sent to another row's endpoint, in reverse, so the
/// order comes out reversed (a flat order, as a pool where nothing starves gives, would
/// sit only 10 % under the band's 1.1). Little's law: users thinking 400 ms where 2 ms is
/// claimed, on a pool where nothing starves (on the fixture's pool a saturated row's
/// queue hides a wrong think time: its cycle is the queue's).
pub(super) fn seed004_judged(
    setup: Setup,
    loop_duration: Duration,
    offer: impl Fn(PoolSettings, &Schedule, &str) -> Result<EngineStats>,
) -> Result<Shapes> {
    let claimed = seed004(loop_duration)?;
    let judged = Schedule::new(&claimed, 3)?;
    let fixture_pool = fixture_pool()?;
    let judge = Judge::new().against_model();
    let decided = match setup {
        Setup::Claimed => judge.judge(&judged, &offer(fixture_pool, &judged, "claimed")?)?,
        Setup::Control => {
            let swapped = offer(fixture_pool, &endpoints_reversed(&judged), "swapped")?;
            let thinking = Schedule::new(&thinking(&claimed, WRONG_THINK), 3)?;
            let relaxed = offer(PoolSettings::new(64, 64)?, &thinking, "thinking")?;
            let mut decided = judge.without_littles_law().judge(&judged, &swapped)?;
            decided.extend(Judge::new().without_ordering().judge(&judged, &relaxed)?);
            decided
        }
    };
    Ok(shapes(decided))
}

/// The fixture at test scale (32 users a row) with every closed loop `loop_duration` long.
pub(super) fn seed004(loop_duration: Duration) -> Result<Experiment> {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seed-004-jmeter-endpoints.toml");
    Experiment::load(&fixture)?
        .at_test_scale()?
        .with_loop_duration(loop_duration)
}

/// The pool the fixture's model assumes: what `perfshape serve --workers 8 --max-blocking
/// 12` serves.
pub(super) fn fixture_pool() -> Result<PoolSettings> {
    PoolSettings::new(8, 12)
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
        app(),
        Pool::new("server", pool)?,
        "127.0.0.1:0".parse().expect("an address"),
    )?;
    load(&format!("http://{}", server.addr()))
}

/// `schedule` with the rows' endpoints in reverse order (the first row's users request the
/// last row's path, and so on), each stage long enough to drain the slowest row's tail.
fn endpoints_reversed(schedule: &Schedule) -> Schedule {
    let slowest = schedule
        .rows
        .iter()
        .map(|r| r.tail)
        .max()
        .unwrap_or_default();
    let mut reversed = schedule.clone().with_drain_at_least(slowest.mul_f64(1.5));
    let paths: Vec<String> = schedule.rows.iter().rev().map(|r| r.path.clone()).collect();
    for (row, path) in reversed.rows.iter_mut().zip(paths) {
        row.path = path;
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
