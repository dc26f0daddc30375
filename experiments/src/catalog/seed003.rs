//! seed 003 — CPU-bound: a loop vs one task per item — as a claim.

use std::time::Duration;

use super::{Entry, Setup, Shapes, shape};
use crate::error::Result;
use crate::vocab::CpuBound;
use perfshape::claim::{Claim, Measure};
use perfshape::runtime::Pool;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[Entry {
    name: "seed003::one_task_per_item_is_far_slower_than_a_loop",
    control: "a loop where one task per item is claimed",
    run: one_task_per_item_is_far_slower_than_a_loop,
}];

/// Items per batch; each side's figure is its time per batch.
pub const ITEMS: u64 = 100_000;
/// Batches a loop measurement computes, so that it takes ≥ 10 ms (one batch is about 2 ms
/// in the test build, within OS jitter). One task per item needs one batch for that.
pub const BATCHES: u32 = 5;

/// `count` batches of `ITEMS` items with `strategy`: their wall time and the sum of the
/// last batch.
pub fn batches(strategy: CpuBound, pool: &Pool, count: u32) -> Result<(Duration, u64)> {
    let mut total = (Duration::ZERO, 0);
    for _ in 0..count {
        let (wall, sum) = strategy.run(pool, ITEMS)?;
        total = (total.0 + wall, sum);
    }
    Ok(total)
}

/// `strategy`'s time per batch of `ITEMS` items, over `count` batches (computed by `runs`,
/// which is `strategy` except in the control).
fn per_batch(strategy: CpuBound, runs: CpuBound, pool: &Pool, count: u32) -> Measure<'_> {
    Measure::duration(&format!("{strategy}, per batch"), move || {
        Ok(batches(runs, pool, count)?.0 / count)
    })
    // One batch warms what a measurement uses (the pool's threads, the allocator).
    .warm_with(move || Ok(runs.run(pool, ITEMS).map(drop)?))
    .context("items", format!("batches of {ITEMS} base-10 logarithms"))
    .context("pool", pool.settings())
}

/// One tokio task per tiny item is at least 5× slower than a plain loop (the seed
/// measured 69–85 ms against 4–5 ms: ~17×): async is for work that waits. The model has
/// no CPU phase for this (it is the cost of a task, not of a resource), so the band is
/// the seed's, not the model's. Each side is its time per batch: the loop over 5 batches
/// (to last ≥ 10 ms), one task per item over one (70× longer already).
pub fn one_task_per_item_is_far_slower_than_a_loop(setup: Setup) -> Result<Shapes> {
    let pool = Pool::workers("cpu", 2)?;
    let runs = setup.pick(CpuBound::TaskPerItem, CpuBound::SingleThread);
    let checked = Claim::ratio(
        "seed 003 task per item ÷ single-thread loop",
        per_batch(CpuBound::TaskPerItem, runs, &pool, setup.pick(1, BATCHES)),
        per_batch(
            CpuBound::SingleThread,
            CpuBound::SingleThread,
            &pool,
            BATCHES,
        ),
    )
    .at_least(5.0)
    .check()?;
    Ok(vec![shape(
        "one_task_per_item_is_far_slower_than_a_loop",
        checked,
    )])
}
