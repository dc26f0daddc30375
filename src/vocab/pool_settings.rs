//! The two numbers that define a constrained pool.

use serde::Serialize;

use super::Scheduler;
use crate::error::{Result, check_range};
use crate::limits::{DEFAULT_MAX_BLOCKING, MAX_BLOCKING, MAX_WORKERS};

/// Worker threads and the blocking-thread cap of a pool: `Copy`, printable, and part of
/// every claim report.
///
/// ```
/// use perfshape::PoolSettings;
///
/// let settings = PoolSettings::workers(2)?;
/// assert_eq!(settings.to_string(), "W=2 B=512");
/// assert!(PoolSettings::new(0, 512).is_err());
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PoolSettings {
    /// Worker threads: how many tasks can run at the same instant.
    pub workers: usize,
    /// The cap on `spawn_blocking` threads; beyond it blocking work queues.
    pub max_blocking: usize,
    /// tokio's scheduler variant (default: tokio's defaults).
    pub scheduler: Scheduler,
}

impl PoolSettings {
    /// Validated settings: `workers` in 1..=256, `max_blocking` in 1..=4096.
    pub fn new(workers: usize, max_blocking: usize) -> Result<Self> {
        check_range("workers", workers, 1, MAX_WORKERS, "")?;
        check_range("max_blocking", max_blocking, 1, MAX_BLOCKING, "")?;
        Ok(Self {
            workers,
            max_blocking,
            scheduler: Scheduler::Default,
        })
    }

    /// These settings on `scheduler`; an error when this build cannot run it
    /// ([`Scheduler::available`]).
    pub fn with_scheduler(self, scheduler: Scheduler) -> Result<Self> {
        Ok(Self {
            scheduler: scheduler.check()?,
            ..self
        })
    }

    /// `workers` workers and tokio's default blocking cap (512).
    pub fn workers(workers: usize) -> Result<Self> {
        PoolSettings::new(workers, DEFAULT_MAX_BLOCKING)
    }
}

impl std::fmt::Display for PoolSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "W={} B={}", self.workers, self.max_blocking)?;
        // tokio's default is left out, so that reports and snapshots written before the
        // option existed read the same.
        if self.scheduler != Scheduler::Default {
            write!(f, " {}", self.scheduler)?;
        }
        Ok(())
    }
}
