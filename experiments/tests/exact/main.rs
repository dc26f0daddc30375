//! The experiments' exact tests: the model's properties, the demo service's answers and
//! faults, the in-process CPU strategies, the engines' statistics judged, the report read
//! back, and the deterministic tier under paused time. Nothing here asserts a timing except
//! relative to a work time it chose, so these tests run in parallel with each other.

mod cpu;
mod deterministic;
mod engines;
mod errors;
mod faults;
mod model;
mod report;
mod server;
mod started;
mod targets;

use std::time::Duration;

/// Milliseconds.
fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// Where the claims decided here write their reports: a scratch folder, not the suite's
/// artifact folder, so that `perfshape report` over a run shows only measured claims
/// (these include claims that break on purpose).
fn scratch() -> std::path::PathBuf {
    std::env::temp_dir().join("perfshape-experiments-exact-tests")
}
