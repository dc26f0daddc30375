//! The orders service's functional tests (`tests/api/`, the same files), with the other
//! helper teams write: the app served on the test's own runtime (`tokio::spawn` of
//! `axum::serve`) with the watch's layer on its router. The watch decides when the test
//! drops the app, as in `tests/api/`; `twins.rs` runs them again on the blocking ledger.

#[path = "../api/health.rs"]
mod health;
mod helpers;
#[path = "../api/orders.rs"]
mod orders;
#[path = "../api/report.rs"]
mod report;
#[path = "../api/twins.rs"]
mod twins;
