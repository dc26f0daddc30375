//! The bottom layer: plain data that the runtime (pool, server, client, in-process) and
//! the model both speak — strategies, lifecycles, pool settings, phases and the wire
//! format of a served response. Nothing here runs anything, and nothing here imports from
//! a layer above.

pub(crate) mod allowance;
mod client_strategy;
mod inproc_strategy;
mod lifecycle;
pub(crate) mod millis;
mod phase;
mod pool_settings;
mod scheduler;
mod server_strategy;
pub(crate) mod wire;

pub(crate) use allowance::Allowance;
pub use client_strategy::ClientStrategy;
pub use inproc_strategy::{CpuBound, InProcess};
pub use lifecycle::Lifecycle;
pub use phase::Phase;
pub use pool_settings::PoolSettings;
pub use scheduler::Scheduler;
pub use server_strategy::ServerStrategy;
pub use wire::{Held, RuntimeFigures, WorkReport};
