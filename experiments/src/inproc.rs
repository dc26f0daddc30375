//! Running the strategies without HTTP: seed 002's in-process waits (timer waits vs
//! blocking waits, and blocking inside async) and seed 003's tiny CPU-bound items.

use std::time::{Duration, Instant};

pub use crate::vocab::{CpuBound, InProcess};

use crate::error::{Error, Result};
use crate::kernel::item;
use perfshape::__support::check_range;
use perfshape::runtime::Pool;
use perfshape::runtime::{MAX_ITEMS, MAX_REQUESTS, MAX_WORK};

impl InProcess {
    /// Runs `n` waits of `work` on `pool` and returns the wall time of all of them.
    ///
    /// ```
    /// use std::time::Duration;
    /// use perfshape::runtime::Pool;
    /// use perfshape_experiments::inproc::InProcess;
    ///
    /// let pool = Pool::workers("inproc", 1)?;
    /// let wall = InProcess::Aio.run(&pool, 100, Duration::from_millis(10))?;
    /// assert!(wall >= Duration::from_millis(10));
    /// # Ok::<(), perfshape_experiments::Error>(())
    /// ```
    pub fn run(&self, pool: &Pool, n: usize, work: Duration) -> Result<Duration> {
        check_range("n", n, 1, MAX_REQUESTS, "")?;
        check_range("work_ms", work.as_millis(), 0, MAX_WORK.as_millis(), " ms")?;
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

impl CpuBound {
    /// Computes `items` items (item i is `⌊log10(i + 1) × 10⁶⌋`) and returns their sum
    /// with the wall time. The sum is an integer, so every strategy must return the
    /// same one: a check that the work was really done, in full.
    pub fn run(&self, pool: &Pool, items: u64) -> Result<(Duration, u64)> {
        check_range("items", items, 1, MAX_ITEMS, "")?;
        let start = Instant::now();
        let sum = match self {
            CpuBound::SingleThread => (0..items).map(item).sum(),
            CpuBound::Rayon => rayon_sum(items)?,
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

/// The sum of `items` items on rayon's pool.
fn rayon_sum(items: u64) -> Result<u64> {
    use rayon::prelude::*;
    Ok((0..items).into_par_iter().map(item).sum())
}
