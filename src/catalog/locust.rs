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
use crate::external::{Judge, LocustRun, Schedule};
use crate::pool::{Pool, PoolSettings};
use crate::server::{Server, app};
use crate::vocab::ClientStrategy;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[Entry {
    name: "locust::seed004_from_a_distributed_run",
    control: "a server of 64 workers and 64 blocking threads (nothing starves), users thinking 400 ms where 2 ms is claimed",
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
pub fn seed004_from_a_distributed_run(setup: Setup) -> Result<Shapes> {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/seed-004-jmeter-endpoints.toml");
    let claimed = Experiment::load(&fixture)?
        .at_test_scale()?
        .with_loop_duration(LOOP)?;
    let judged = Schedule::new(&claimed, 3)?;
    let (pool, offered) = match setup {
        Setup::Claimed => (PoolSettings::new(8, 12)?, judged.clone()),
        Setup::Control => (
            PoolSettings::new(64, 64)?,
            Schedule::new(&thinking(&claimed, Duration::from_millis(400)), 3)?,
        ),
    };
    let stats = {
        // No other timing measurement in this process while Locust offers load.
        let _serialised = shape_lock();
        let server = Server::serve_on(
            app(),
            Pool::new("server", pool)?,
            "127.0.0.1:0".parse().expect("an address"),
        )?;
        let dir = artifact_dir().join("locust").join(match setup {
            Setup::Claimed => "claimed",
            Setup::Control => "control",
        });
        LocustRun::new(&format!("http://{}", server.addr()), WORKERS, dir)?.run(&offered)?
    };
    Ok(Judge::new()
        .against_model()
        .judge(&judged, &stats)?
        .into_iter()
        .map(|j| shape(&j.name, j.checked))
        .collect())
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
