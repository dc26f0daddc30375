//! Seed 004's claims judged from a real Locust run: a master and two worker processes on
//! loopback offer the fixture's four closed loops (at test scale: 32 users, 600 ms each,
//! 3 interleaved rounds) to perfshape's demo service on the fixture's pool — what
//! `perfshape serve --workers 8 --max-blocking 12` serves — and the throughput ordering,
//! Little's law per row and each row against the model are decided from Locust's own
//! statistics.

use std::time::Duration;

use super::offered::{CONTROL, against_demo, seed004_judged, seed004_with_control};
use super::{Entry, Setup, Shapes};
use crate::error::Result;
use crate::external::LocustRun;
use perfshape::claim::artifact_dir;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[Entry {
    name: "locust::seed004_from_a_distributed_run",
    control: CONTROL,
    run: seed004_from_a_distributed_run,
}];

/// Locust worker processes: the "a master and 2 workers".
const WORKERS: usize = 2;

/// Each closed loop's duration: ~9 cycles of the slowest row's 62 ms, where Little's law's
/// half-cycle correction is exact to a few per cent.
const LOOP: Duration = Duration::from_millis(600);

/// The throughput ordering async > mixed > offload > blocking (each beats the next by 10 %),
/// Locust keeping each row's 32 users in the system, and each row within [0.75, 1.25] of
/// the model, from one Locust run of a master and 2 workers (about 16 s). The control is
/// the same run read wrongly: each row's statistics on another row for the throughput
/// claims, users claimed to think 400 ms where they thought 2 ms for Little's law.
pub fn seed004_from_a_distributed_run(setup: Setup) -> Result<Shapes> {
    seed004_judged(setup, LOOP, run_locust)
}

/// [`seed004_from_a_distributed_run`]'s claims and its control from one Locust run (the
/// engines' test).
pub fn seed004_from_a_distributed_run_with_control() -> Result<(Shapes, Shapes)> {
    seed004_with_control(LOOP, run_locust)
}

/// A master and [`WORKERS`] workers offering `schedule` to the demo service on `pool`.
fn run_locust(
    pool: perfshape::PoolSettings,
    schedule: &crate::external::Schedule,
    label: &str,
) -> Result<crate::external::EngineStats> {
    against_demo(pool, |host| {
        let dir = artifact_dir().join("locust").join(label);
        LocustRun::new(host, WORKERS, dir)?.run(schedule)
    })
}
