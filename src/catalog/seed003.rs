//! seed 003 — CPU-bound: a loop vs one task per item — as a claim.

use std::time::Duration;

use super::{Entry, Setup, Shapes, shape};
use crate::claim::{Claim, Measure};
use crate::error::Result;
use crate::pool::Pool;
use crate::vocab::CpuBound;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[Entry {
    name: "seed003::one_task_per_item_is_far_slower_than_a_loop",
    control: "a loop where one task per item is claimed",
    run: one_task_per_item_is_far_slower_than_a_loop,
}];

/// 100,000 items per batch; each measurement does 5 batches so that even the fast side
/// takes ≥ 10 ms (a single batch is about 2 ms in the test build, within OS jitter).
pub const ITEMS: u64 = 100_000;
/// Batches per measurement.
pub const BATCHES: u32 = 5;

/// `BATCHES` batches of `ITEMS` items with `strategy`: their wall time and the sum of the
/// last batch.
pub fn batches(strategy: CpuBound, pool: &Pool) -> Result<(Duration, u64)> {
    let mut total = (Duration::ZERO, 0);
    for _ in 0..BATCHES {
        let (wall, sum) = strategy.run(pool, ITEMS)?;
        total = (total.0 + wall, sum);
    }
    Ok(total)
}

fn measure(strategy: CpuBound, runs: CpuBound, pool: &Pool) -> Measure<'_> {
    Measure::duration(&strategy.to_string(), move || Ok(batches(runs, pool)?.0))
        .context(
            "items",
            format!("{BATCHES} batches of {ITEMS} base-10 logarithms"),
        )
        .context("pool", pool.settings())
}

/// One tokio task per tiny item is at least 5× slower than a plain loop (the seed
/// measured 69–85 ms against 4–5 ms: ~17×): async is for work that waits. The model has
/// no CPU phase for this (it is the cost of a task, not of a resource), so the band is
/// the seed's, not the model's.
pub fn one_task_per_item_is_far_slower_than_a_loop(setup: Setup) -> Result<Shapes> {
    let pool = Pool::workers("cpu", 2)?;
    let runs = setup.pick(CpuBound::TaskPerItem, CpuBound::SingleThread);
    let checked = Claim::ratio(
        "seed 003 task per item ÷ single-thread loop",
        measure(CpuBound::TaskPerItem, runs, &pool),
        measure(CpuBound::SingleThread, CpuBound::SingleThread, &pool),
    )
    .at_least(5.0)
    .check()?;
    Ok(vec![shape(
        "one_task_per_item_is_far_slower_than_a_loop",
        checked,
    )])
}
