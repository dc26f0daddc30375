//! The ready-made claims, one file each, each adding its methods to [`Endpoint`]
//! (or [`Mix`]) from where it lives: does not block its worker, keeps answering, concurrency
//! limit, faster than, and the traffic mix's none blocks. A comparison of two builds is
//! [`Comparison`](crate::Comparison).
//!
//! What they share: how a load's requests held their worker, read from a served router's
//! polls (`holding.rs`), and where a timing from outside has power (`outside.rs`).
//!
//! [`Endpoint`]: crate::Endpoint
//! [`Mix`]: crate::Mix

mod answering;
mod blocking;
mod faster;
mod holding;
mod limit;
mod mix;
mod outside;

pub use limit::ConcurrencyLimit;
