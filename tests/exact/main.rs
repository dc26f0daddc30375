//! Everything that is exact: the claims engine on synthetic figures, the model's
//! properties, what the server answers and a run accounts for, bad input, and the
//! deterministic tier under paused time. Nothing here asserts a timing except relative to
//! a work time it chose, so these tests run in parallel with each other.

mod claims;
mod cpu;
mod deterministic;
mod errors;
mod faults;
mod model;
mod report;
mod rule;
mod server;
mod targets;

use std::time::Duration;

/// Milliseconds.
fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}
