//! An accounts API on PostgreSQL, the kind of service a team puts under perfshape: a page
//! of accounts, one account by id, a JSON `POST` that opens one, and a health check.
//!
//! The same handlers come in three builds ([`Build`]), and the database call is where they
//! differ:
//! - [`Build::OnWorker`] calls diesel, a synchronous driver on libpq, straight from the
//!   async handler, on one connection behind a std mutex — as axum's own diesel example
//!   would be without its pool's `interact`: the handler waits for PostgreSQL while it
//!   holds its tokio worker. The bug.
//! - [`Build::Offloaded`] makes the same calls on tokio's blocking pool (`spawn_blocking`).
//! - [`Build::Async`] uses tokio-postgres behind a deadpool pool of [`POOL_SIZE`]
//!   connections: the handler awaits the answer.
//!
//! On a database on the same machine the bug hardly shows: PostgreSQL answers a query in
//! tens of microseconds. The tests put the database at production's distance with
//! `perfshape::Downstream`, where each query holds the worker for a round trip.

mod build;
mod routes;
mod store;

pub use build::Build;
pub use routes::app;
pub use store::{Account, NewAccount, POOL_SIZE, SEEDED, Store, StoreError, seed};
