//! The strategies without HTTP: seed 002's in-process waits and seed 003's tiny CPU-bound
//! items. What they are lives here; how they run lives in the in-process runner above.

use std::str::FromStr;

use serde::Serialize;

use super::server_strategy::ServerStrategy;
use crate::error::{Error, Result};

/// How N in-process waits are done (seed 002).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum InProcess {
    /// N tasks, each `tokio::time::sleep`: no thread is held while waiting (AIO).
    Aio,
    /// N `spawn_blocking(std::thread::sleep)`: each wait holds a blocking thread, at most
    /// `max_blocking` at once (BIO on a thread pool, `Task.Run(Thread.Sleep)`).
    Bio,
    /// N tasks, each calling `std::thread::sleep` inside async code: each wait holds a
    /// worker, so at most W progress at once (seed 002's "AIO that blocks").
    BlockingInsideAsync,
}

impl InProcess {
    /// Every name, as accepted by [`FromStr`].
    pub const NAMES: &'static str = "aio, bio, blocking-inside-async";

    /// The server strategy that holds what this one holds, for the model: a timer wait
    /// holds nothing, a blocking-pool wait holds a blocking thread, a blocking wait inside
    /// a task holds a worker.
    pub fn holds_like(&self) -> ServerStrategy {
        match self {
            InProcess::Aio => ServerStrategy::Async,
            InProcess::Bio => ServerStrategy::Offload,
            InProcess::BlockingInsideAsync => ServerStrategy::Blocking,
        }
    }
}

impl std::fmt::Display for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            InProcess::Aio => "aio",
            InProcess::Bio => "bio",
            InProcess::BlockingInsideAsync => "blocking-inside-async",
        })
    }
}

impl FromStr for InProcess {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        match name {
            "aio" => Ok(InProcess::Aio),
            "bio" => Ok(InProcess::Bio),
            "blocking-inside-async" => Ok(InProcess::BlockingInsideAsync),
            _ => Err(Error::unknown(
                "in-process strategy",
                name.to_string(),
                Self::NAMES.to_string(),
            )),
        }
    }
}

/// How N tiny CPU-bound items are computed (seed 003).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum CpuBound {
    /// A plain loop on one thread.
    SingleThread,
    /// rayon's work-stealing parallel iterator (`Parallel.For`).
    Rayon,
    /// One tokio task per item, then wait for all (`Task.Run` per item, `WhenAll`).
    TaskPerItem,
}

impl CpuBound {
    /// Every name, as accepted by [`FromStr`].
    pub const NAMES: &'static str = "single-thread, rayon, task-per-item";
}

impl std::fmt::Display for CpuBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CpuBound::SingleThread => "single-thread",
            CpuBound::Rayon => "rayon",
            CpuBound::TaskPerItem => "task-per-item",
        })
    }
}

impl FromStr for CpuBound {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        match name {
            "single-thread" => Ok(CpuBound::SingleThread),
            "rayon" => Ok(CpuBound::Rayon),
            "task-per-item" => Ok(CpuBound::TaskPerItem),
            _ => Err(Error::unknown(
                "CPU-bound strategy",
                name.to_string(),
                Self::NAMES.to_string(),
            )),
        }
    }
}
