//! The timing claims: every test here measures real work on real threads.
//!
//! This binary runs in the nextest `shape` test group: one test at a time, never retried
//! by the runner (a claim re-measures inside itself and says `inconclusive` when it cannot
//! tell; a retry would hide exactly that). Under plain `cargo test` each claim takes
//! perfshape's process-wide lock while it measures, so claims never overlap either way.
//!
//! Every test is written on perfshape's public API, as a user's would be: a target, a
//! scenario or an endpoint, a claim, `assert_shape!`.

mod endpoints;
mod loops;
mod model_vs_reality;
mod orders;
mod scaling;
mod seed000;
mod seed001;
mod seed002;
mod seed003;
mod seed004;
mod wiremock;

use std::time::Duration;

/// Milliseconds.
fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}
