//! A constrained tokio runtime: a fixed number of workers and a capped blocking pool.
//!
//! The experiments are about what happens when a handful of threads is all there is, so a
//! [`Pool`] is built explicitly (never `#[tokio::main]`'s defaults) on its own named OS
//! threads. The server and the load generator each get their own, so a server whose
//! workers are all blocked can never stall the client that measures it.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Serialize;
use tokio::runtime::{Handle, Runtime};

use crate::error::{Result, check_range};

/// The most worker threads a pool may have; more says nothing on a small machine.
pub const MAX_WORKERS: usize = 256;
/// The most blocking threads a pool may have (tokio's own default is 512).
pub const MAX_BLOCKING: usize = 4096;
/// tokio's default cap on blocking threads, used when none is given.
pub const DEFAULT_MAX_BLOCKING: usize = 512;

/// The two numbers that define a pool; `Copy`, printable, and part of every claim report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PoolSettings {
    /// Worker threads: how many tasks can run at the same instant.
    pub workers: usize,
    /// The cap on `spawn_blocking` threads; beyond it blocking work queues.
    pub max_blocking: usize,
}

impl PoolSettings {
    /// Validated settings: `workers` in 1..=256, `max_blocking` in 1..=4096.
    pub fn new(workers: usize, max_blocking: usize) -> Result<Self> {
        check_range("workers", workers, 1, MAX_WORKERS, "")?;
        check_range("max_blocking", max_blocking, 1, MAX_BLOCKING, "")?;
        Ok(Self {
            workers,
            max_blocking,
        })
    }
}

impl std::fmt::Display for PoolSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "W={} B={}", self.workers, self.max_blocking)
    }
}

/// A multi-thread tokio runtime with `workers` worker threads and at most `max_blocking`
/// blocking threads, whose threads are named `<name>-<k>`.
///
/// tokio starts the workers when the runtime is built, so `k < workers` are the workers
/// and later numbers are blocking threads. Dropping a pool shuts it down in the background:
/// a worker stuck in `std::thread::sleep` finishes its sleep on its own, and the drop
/// returns at once instead of waiting for it.
#[derive(Debug)]
pub struct Pool {
    runtime: Option<Runtime>,
    settings: PoolSettings,
    name: String,
}

impl Pool {
    /// Builds a pool named `name` with the given settings.
    pub fn new(name: &str, settings: PoolSettings) -> Result<Pool> {
        let counter = Arc::new(AtomicUsize::new(0));
        let prefix = name.to_string();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(settings.workers)
            .max_blocking_threads(settings.max_blocking)
            .thread_name_fn(move || format!("{prefix}-{}", counter.fetch_add(1, Ordering::Relaxed)))
            .enable_all()
            .build()
            .map_err(|e| crate::Error::io(format!("starting the {name} runtime"), e))?;
        Ok(Pool {
            runtime: Some(runtime),
            settings,
            name: name.to_string(),
        })
    }

    /// A pool with `workers` workers and tokio's default blocking cap.
    pub fn workers(name: &str, workers: usize) -> Result<Pool> {
        Pool::new(name, PoolSettings::new(workers, DEFAULT_MAX_BLOCKING)?)
    }

    /// The settings this pool was built with.
    pub fn settings(&self) -> PoolSettings {
        self.settings
    }

    /// The thread-name prefix.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// A handle for spawning onto this pool.
    pub fn handle(&self) -> &Handle {
        self.runtime().handle()
    }

    /// Runs `future` to completion, driving it from the calling thread while everything it
    /// spawns runs on the pool's workers.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime().block_on(future)
    }

    fn runtime(&self) -> &Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime is only taken out in Drop")
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}
