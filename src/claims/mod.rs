//! The ready-made claims, one file each, each adding its methods to [`Endpoint`]
//! (or [`Mix`]) from where it lives: does not block its worker, keeps answering, concurrency
//! limit, faster than, and the traffic mix's none blocks; and a [`Comparison`] of two builds
//! (a base and a candidate) in the same interleaved rounds.
//!
//! What they share: how a load's requests held their worker, read from a served router's
//! polls (`holding.rs`), the served workers' waits outside any response over a claim's whole
//! life (`worker_watch.rs`), where a timing from outside has power (`outside.rs`), and what a
//! served router's claim says of a downstream it meets on this machine (`distance.rs`).
//!
//! [`Endpoint`]: crate::Endpoint
//! [`Mix`]: crate::Mix

mod answering;
mod blocking;
mod fan_out;
mod faster;
pub(crate) mod holding;
mod limit;
mod mix;
mod outside;
mod worker_watch;

pub use crate::compare::{Comparison, Percentile, SINGLE_IN_A_ROW, SideLoad};
pub use limit::ConcurrencyLimit;
