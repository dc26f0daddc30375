//! Work done in-process, without HTTP: seed 002's in-process half (timer waits vs blocking
//! waits, and blocking inside async) and seed 003's CPU-bound strategies.

use std::str::FromStr;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::error::{Error, Result, check_range};
use crate::pool::Pool;

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

    /// Runs `n` waits of `work` on `pool` and returns the wall time of all of them.
    pub fn run(&self, pool: &Pool, n: usize, work: Duration) -> Result<Duration> {
        check_range("n", n, 1, crate::client::MAX_REQUESTS, "")?;
        check_range(
            "work_ms",
            work.as_millis(),
            0,
            crate::server::MAX_WORK.as_millis(),
            " ms",
        )?;
        let strategy = *self;
        pool.block_on(pool.handle().spawn(async move {
            let start = Instant::now();
            let mut tasks = tokio::task::JoinSet::new();
            for _ in 0..n {
                match strategy {
                    InProcess::Aio => {
                        tasks.spawn(tokio::time::sleep(work));
                    }
                    InProcess::Bio => {
                        tasks.spawn_blocking(move || std::thread::sleep(work));
                    }
                    InProcess::BlockingInsideAsync => {
                        tasks.spawn(async move { std::thread::sleep(work) });
                    }
                }
            }
            let mut failed = 0;
            while let Some(done) = tasks.join_next().await {
                failed += usize::from(done.is_err());
            }
            (start.elapsed(), failed)
        }))
        .map_err(|e| Error::io("the in-process load", std::io::Error::other(e.to_string())))
        .and_then(|(wall, failed)| match failed {
            0 => Ok(wall),
            _ => Err(Error::invalid(
                "in-process tasks",
                format!("{failed} of {n} failed"),
                "none failed",
            )),
        })
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
            _ => Err(Error::Unknown {
                what: "in-process strategy",
                name: name.to_string(),
                expected: Self::NAMES.to_string(),
            }),
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

    /// Computes `items` items (item i is `⌊log10(i + 1) × 10⁶⌋`) and returns their sum
    /// with the wall time. The sum is an integer, so every strategy must return the
    /// same one: a check that the work was really done, in full.
    pub fn run(&self, pool: &Pool, items: u64) -> Result<(Duration, u64)> {
        check_range("items", items, 1, 100_000_000, "")?;
        let start = Instant::now();
        let sum = match self {
            CpuBound::SingleThread => (0..items).map(item).sum(),
            CpuBound::Rayon => {
                use rayon::prelude::*;
                (0..items).into_par_iter().map(item).sum()
            }
            CpuBound::TaskPerItem => pool
                .block_on(pool.handle().spawn(async move {
                    let handles: Vec<_> = (0..items)
                        .map(|i| tokio::spawn(async move { item(i) }))
                        .collect();
                    let mut sum = 0u64;
                    for handle in handles {
                        sum += handle.await.map_err(|e| e.to_string())?;
                    }
                    Ok::<u64, String>(sum)
                }))
                .map_err(|e| e.to_string())
                .and_then(|r| r)
                .map_err(|e| Error::io("the task-per-item load", std::io::Error::other(e)))?,
        };
        Ok((start.elapsed(), sum))
    }
}

/// One tiny CPU-bound item: a base-10 logarithm, in integer micro-units.
fn item(i: u64) -> u64 {
    (std::hint::black_box((i + 1) as f64).log10() * 1e6) as u64
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
            _ => Err(Error::Unknown {
                what: "CPU-bound strategy",
                name: name.to_string(),
                expected: Self::NAMES.to_string(),
            }),
        }
    }
}

/// Computes `iterations` base-10 logarithms (seed 003's unit of work) and returns their
/// sum, so the optimiser cannot drop the work.
pub fn compute_iterations(iterations: u64) -> f64 {
    (1..=iterations)
        .map(|i| std::hint::black_box(i as f64).log10())
        .sum()
}

/// Computes base-10 logarithms until `work` has elapsed, and returns how many it
/// computed. The clock is read every 1,024 logarithms, so the overshoot is microseconds.
pub fn compute_for(work: Duration) -> u64 {
    let start = Instant::now();
    let mut iterations: u64 = 0;
    let mut sink = 0.0_f64;
    loop {
        for _ in 0..1024 {
            iterations += 1;
            sink += std::hint::black_box(iterations as f64).log10();
        }
        if start.elapsed() >= work {
            break;
        }
    }
    std::hint::black_box(sink);
    iterations
}
