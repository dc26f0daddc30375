//! The experiments' timing claims: every test here measures real work on real threads.
//!
//! This binary runs in the nextest `shape` test group: one test at a time, never retried
//! by the runner (a claim re-measures inside itself and says `inconclusive` when it cannot
//! tell; a retry would hide exactly that). Under plain `cargo test` each claim takes
//! perfshape's process-wide lock while it measures, so claims never overlap either way.
//!
//! The claims live in the catalog (`src/catalog/`), written on the gate's public API: a
//! target, a scenario or an endpoint, a claim. Each test here checks one entry as claimed
//! and snapshots it with `assert_shapes!`, which reports every claim of the entry before it
//! fails. The same claims on deliberately wrong setups — the negative controls that prove
//! each claim can fail — are in `tests/controls/`.

#[path = "../common/mod.rs"]
mod common;
mod compare;
mod endpoints;
mod loops;
mod model_vs_reality;
mod scaling;
mod scheduler;
mod seed000;
mod seed001;
mod seed002;
mod seed003;
mod seed004;
mod strategies;
mod wiremock;
