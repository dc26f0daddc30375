//! Everything that is exact: the claims engine on synthetic figures, the model's
//! properties, what the server answers and a run accounts for, bad input, and the
//! deterministic tier under paused time. Nothing here asserts a timing except relative to
//! a work time it chose, so these tests run in parallel with each other.

mod claims;
mod compare;
mod downstream;
mod errors;
mod readme;
mod requests;
mod retry;
mod rule;
mod targets;

/// Where the claims decided here write their reports: a scratch folder, not the suite's
/// artifact folder, so that `perfshape report` over a run shows only measured claims
/// (these include claims that break on purpose).
fn scratch() -> std::path::PathBuf {
    std::env::temp_dir().join("perfshape-exact-tests")
}
