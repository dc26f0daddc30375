//! The bottom layer: plain data that the runtime (pool, server, client) speaks — client
//! strategies, lifecycles, pool settings, allowances, the holds a team allows and the wire
//! format of a served response. Nothing here runs anything, and nothing here imports from
//! a layer above.

pub(crate) mod allow;
pub(crate) mod allowance;
mod client_strategy;
mod lifecycle;
pub mod millis;
mod pool_settings;
mod scheduler;
pub(crate) mod wire;

pub use allow::Allow;
pub(crate) use allowance::Allowance;
pub use client_strategy::ClientStrategy;
pub use lifecycle::Lifecycle;
pub use pool_settings::PoolSettings;
pub use scheduler::Scheduler;
pub use wire::{Held, RuntimeFigures};
