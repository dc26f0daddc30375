//! Seed 004's claims judged from a real Locust run: a master and two worker processes on
//! loopback offer the fixture's four closed loops (at test scale: 32 users, 600 ms each,
//! 3 interleaved rounds) to perfshape's demo service on the fixture's pool — what
//! `perfshape serve --workers 8 --max-blocking 12` serves — and the throughput ordering,
//! Little's law per row and each row against the model are decided from Locust's own
//! statistics.

use std::path::Path;
use std::time::Duration;

use super::{Entry, Setup, Shapes, shape};
use crate::claim::{artifact_dir, shape_lock};
use crate::error::Result;
use crate::experiment::Experiment;
use crate::external::{EngineStats, Judge, LocustRun, Schedule};
use crate::pool::{Pool, PoolSettings};
use crate::server::{Server, app};
use crate::vocab::ClientStrategy;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[Entry {
    name: "locust::seed004_from_a_distributed_run",
    control: "each row's users sent to another row's endpoint (async to /blocking, blocking to /async, mixed and offload swapped) for the throughput claims; users thinking 400 ms where 2 ms is claimed, on 64 workers and 64 blocking threads, for Little's law",
    run: seed004_from_a_distributed_run,
}];

/// Locust worker processes: the "a master and 2 workers".
const WORKERS: usize = 2;

/// Each closed loop's duration: ~9 cycles of the slowest row's 62 ms, where Little's law's
/// half-cycle correction is exact to a few per cent.
const LOOP: Duration = Duration::from_millis(600);

/// The throughput ordering async > mixed > offload > blocking (each beats the next by 10 %),
/// Locust keeping each row's 32 users in the system, and each row within [0.75, 1.25] of
/// the model, from one Locust run of a master and 2 workers (about 16 s).
///
/// The control needs two runs, each wrong for its own claims. The throughput claims: the
/// fixture's pool with each row's users sent to another row's endpoint, in reverse, so the
/// order comes out reversed (a flat order, as a pool where nothing starves gives, would
/// sit only 10 % under the band's 1.1). Little's law: users thinking 400 ms where 2 ms is
/// claimed, on a pool where nothing starves (on the fixture's pool a saturated row's
/// queue hides a wrong think time: its cycle is the queue's).
pub fn seed004_from_a_distributed_run(setup: Setup) -> Result<Shapes> {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seed-004-jmeter-endpoints.toml");
    let claimed = Experiment::load(&fixture)?
        .at_test_scale()?
        .with_loop_duration(LOOP)?;
    let judged = Schedule::new(&claimed, 3)?;
    let fixture_pool = PoolSettings::new(8, 12)?;
    let judge = Judge::new().against_model();
    let decided = match setup {
        Setup::Claimed => judge.judge(&judged, &offer(fixture_pool, &judged, "claimed")?)?,
        Setup::Control => {
            let swapped = offer(fixture_pool, &endpoints_reversed(&judged), "swapped")?;
            let thinking = Schedule::new(&thinking(&claimed, Duration::from_millis(400)), 3)?;
            let relaxed = offer(PoolSettings::new(64, 64)?, &thinking, "thinking")?;
            let mut decided = judge.without_littles_law().judge(&judged, &swapped)?;
            decided.extend(Judge::new().without_ordering().judge(&judged, &relaxed)?);
            decided
        }
    };
    Ok(decided
        .into_iter()
        .map(|j| shape(&j.name, j.checked))
        .collect())
}

/// Offers `schedule` with Locust to the demo service on a pool of `pool`, its files in
/// the artifact folder's `locust/<label>`; Locust's statistics.
fn offer(pool: PoolSettings, schedule: &Schedule, label: &str) -> Result<EngineStats> {
    // No other timing measurement in this process while Locust offers load.
    let _serialised = shape_lock();
    let server = Server::serve_on(
        app(),
        Pool::new("server", pool)?,
        "127.0.0.1:0".parse().expect("an address"),
    )?;
    let dir = artifact_dir().join("locust").join(label);
    LocustRun::new(&format!("http://{}", server.addr()), WORKERS, dir)?.run(schedule)
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
