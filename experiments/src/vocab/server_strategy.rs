//! How a handler spends its work time: the server half of every experiment.

use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

use super::phase::Phase;
use crate::error::{Error, Result};
use perfshape::__support::check_range;
use perfshape::runtime::MAX_WORK;

/// How a handler spends the work time it is asked for.
///
/// Each is the Rust rendering of one of the seeds' endpoints: `Thread.Sleep` is
/// [`Blocking`](Self::Blocking), `await Task.Delay` is [`Async`](Self::Async),
/// `await Task.Run(Thread.Sleep)` is [`Offload`](Self::Offload).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "strategy")]
#[non_exhaustive]
pub enum ServerStrategy {
    /// `std::thread::sleep` on the worker: the worker can do nothing else meanwhile.
    Blocking,
    /// `tokio::time::sleep`: the worker is free while the request waits.
    Async,
    /// `spawn_blocking(std::thread::sleep)`: the worker is free, a blocking thread is not.
    Offload,
    /// Block the worker for `block`, then wait asynchronously for `wait` (seed 004's
    /// `AsyncMixedTime`). The request's work time is `block + wait`.
    Mixed {
        /// Time spent blocking the worker.
        block: Duration,
        /// Time spent waiting without a thread.
        wait: Duration,
    },
    /// Real computation (base-10 logarithms) on the worker until the work time is spent.
    Cpu,
    /// A process-wide `std::sync::Mutex` held across a blocking wait: requests serialise
    /// whatever the number of workers.
    Lock,
}

impl ServerStrategy {
    /// Every strategy name, as accepted by [`FromStr`] and used in URLs.
    pub const NAMES: &'static str = "blocking, async, offload, mixed, cpu, lock";

    /// The strategy's name, which is also its route (`/blocking`, `/async`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            ServerStrategy::Blocking => "blocking",
            ServerStrategy::Async => "async",
            ServerStrategy::Offload => "offload",
            ServerStrategy::Mixed { .. } => "mixed",
            ServerStrategy::Cpu => "cpu",
            ServerStrategy::Lock => "lock",
        }
    }

    /// The time one request takes when it has the server to itself: `work`, except for
    /// [`Mixed`](Self::Mixed), which carries its own split.
    pub fn work_time(&self, work: Duration) -> Duration {
        match self {
            ServerStrategy::Mixed { block, wait } => *block + *wait,
            _ => work,
        }
    }

    /// Checks `work` (or a mixed handler's own split) against [`MAX_WORK`].
    pub fn validate(&self, work: Duration) -> Result<()> {
        let field = match self {
            ServerStrategy::Mixed { .. } => "block_ms + wait_ms",
            _ => "work_ms",
        };
        let work = self.work_time(work).as_millis();
        check_range(field, work, 0, MAX_WORK.as_millis(), " ms")?;
        Ok(())
    }

    /// What one request with `work` holds on the server, phase by phase: the model runs
    /// these, and they are this strategy's definition in one line each.
    pub fn phases(&self, work: Duration) -> Vec<Phase> {
        let w = self.work_time(work);
        let instant = Phase::Worker(Duration::ZERO);
        match *self {
            ServerStrategy::Blocking | ServerStrategy::Cpu => vec![Phase::Worker(w)],
            ServerStrategy::Async => vec![instant, Phase::Wait(w), instant],
            ServerStrategy::Offload => vec![instant, Phase::Offload(w), instant],
            ServerStrategy::Mixed { block, wait } => {
                vec![Phase::Worker(block), Phase::Wait(wait), instant]
            }
            ServerStrategy::Lock => vec![Phase::Locked(w)],
        }
    }

    /// The path and query that ask perfshape's demo server for this strategy with `work`.
    pub fn path_and_query(&self, work: Duration) -> Result<String> {
        self.validate(work)?;
        Ok(match self {
            ServerStrategy::Mixed { block, wait } => {
                format!(
                    "/mixed?block_ms={}&wait_ms={}",
                    block.as_millis(),
                    wait.as_millis()
                )
            }
            other => format!("/{}?ms={}", other.name(), work.as_millis()),
        })
    }
}

impl std::fmt::Display for ServerStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerStrategy::Mixed { block, wait } => write!(
                f,
                "mixed(block {} ms + wait {} ms)",
                block.as_millis(),
                wait.as_millis()
            ),
            other => f.write_str(other.name()),
        }
    }
}

/// Parses a strategy name. `mixed` parses to an even split of zero time; fixtures and the
/// CLI give its `block` and `wait` separately.
impl FromStr for ServerStrategy {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        Ok(match name {
            "blocking" => ServerStrategy::Blocking,
            "async" => ServerStrategy::Async,
            "offload" => ServerStrategy::Offload,
            "mixed" => ServerStrategy::Mixed {
                block: Duration::ZERO,
                wait: Duration::ZERO,
            },
            "cpu" => ServerStrategy::Cpu,
            "lock" => ServerStrategy::Lock,
            _ => {
                return Err(Error::unknown(
                    "server strategy",
                    name.to_string(),
                    Self::NAMES.to_string(),
                ));
            }
        })
    }
}
