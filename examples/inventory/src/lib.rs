//! An inventory API on SQLite, the kind of service a team puts under perfshape: items
//! with a stock count, a JSON `POST` that records a stock movement in a transaction, a
//! `GET` by key, a page of the list, and a health check.
//!
//! The same handlers come in four builds ([`Build`]), and the database call is where they
//! differ:
//! - [`Build::OnWorker`] calls rusqlite, a synchronous driver, straight from the async
//!   handler. A write commits with `synchronous=FULL`, so the handler waits for the disk's
//!   `fsync` while it holds its tokio worker: the bug.
//! - [`Build::SharedConnection`] makes the same calls on tokio's blocking pool
//!   (`spawn_blocking`), on one connection behind a mutex: the worker is free, and the
//!   requests queue behind the connection instead, one at a time.
//! - [`Build::Pool`] takes a connection from a deadpool-sqlite pool and runs the calls in
//!   its `interact` (on tokio's blocking pool too).
//! - [`Build::Sqlx`] uses sqlx's SQLite driver, the async SQL driver Rust services use
//!   most: each of its connections runs SQLite on a thread of its own, and the handler
//!   awaits the answer.
//!
//! A store can also be [`Store::audited`]: every lookup then records who read what, in a
//! durable transaction of its own — a read that commits, and so waits for the disk.

mod api_error;
mod build;
mod database;
mod error;
mod queries;
mod records;
mod routes;
mod sqlx_queries;
mod store;
mod sync_driver;

pub use api_error::ApiError;
pub use build::Build;
pub use database::{Database, SEEDED_ITEMS};
pub use error::Error;
pub use records::{Delivered, Delivery, Item, Line, Movement, NewItem, Stock};
pub use routes::{TOKEN, app};
pub use store::{POOL_SIZE, Store};
