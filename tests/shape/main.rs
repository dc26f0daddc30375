//! The timing claims: every test here measures real work on real threads.
//!
//! This binary runs in the nextest `shape` test group: one test at a time, never retried
//! by the runner (a claim re-measures inside itself and says `inconclusive` when it cannot
//! tell; a retry would hide exactly that). Under plain `cargo test` each claim takes
//! perfshape's process-wide lock while it measures, so claims never overlap either way.
//!
//! Each test puts a service of the kinds teams write (`tests/apps/`, `tests/common/`) under
//! the gate's claims, as a team's own test does, and snapshots the claims' shapes. The same
//! claims on the services' blocking twins — the negative controls that prove each claim can
//! fail — are in `tests/controls/`. The experiments' claims are the experiments crate's
//! (`experiments/tests/shape/`).

mod allowed;
mod calls;
#[path = "../common/mod.rs"]
mod common;
mod layers;
mod orders;
mod outside;
mod services;
mod signin;
mod twins;
mod worker;
