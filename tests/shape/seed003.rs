//! seed 003 — CPU-bound: a loop vs rayon vs one task per item — as shape claims.

use std::time::Duration;

use perfshape::inproc::CpuBound;
use perfshape::{Claim, Measure, Pool, Result, assert_shape};

/// 100,000 items per batch; each measurement does 8 batches so that even the fast side
/// takes ≥ 10 ms (a single batch is a millisecond, within OS jitter).
const ITEMS: u64 = 100_000;
const BATCHES: u32 = 8;

fn batches(strategy: CpuBound, pool: &Pool) -> Result<(Duration, u64)> {
    let mut total = (Duration::ZERO, 0);
    for _ in 0..BATCHES {
        let (wall, sum) = strategy.run(pool, ITEMS)?;
        total = (total.0 + wall, sum);
    }
    Ok(total)
}

fn measure(strategy: CpuBound, pool: &Pool) -> Measure<'_> {
    Measure::duration(
        &strategy.to_string(),
        move || Ok(batches(strategy, pool)?.0),
    )
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
#[test]
fn one_task_per_item_is_far_slower_than_a_loop() -> Result {
    let pool = Pool::workers("cpu", 2)?;
    let checked = Claim::ratio(
        "seed 003 task per item ÷ single-thread loop",
        measure(CpuBound::TaskPerItem, &pool),
        measure(CpuBound::SingleThread, &pool),
    )
    .at_least(5.0)
    .check()?;
    assert_shape!(checked);
    Ok(())
}

/// Every strategy computes the same sum (the work is really done, in full). Rayon's time
/// is reported, not gated: on 2 cores a parallel loop lands anywhere from 0.2× to 2× of
/// the plain one, as the seed's own Parallel.For did (6–11 ms against 4–5).
#[test]
fn every_strategy_computes_the_same_result_and_rayon_is_reported() -> Result {
    let pool = Pool::workers("cpu", 2)?;
    let (loop_wall, expected) = batches(CpuBound::SingleThread, &pool)?;
    let (rayon_wall, rayon) = batches(CpuBound::Rayon, &pool)?;
    let (_, per_task) = CpuBound::TaskPerItem.run(&pool, ITEMS)?;
    assert_eq!(rayon, expected, "rayon's sum");
    assert_eq!(per_task, expected, "task-per-item's sum");
    eprintln!(
        "perfshape: seed 003 rayon ÷ loop = {:.2} (not gated: {:.1} ms ÷ {:.1} ms)",
        rayon_wall.as_secs_f64() / loop_wall.as_secs_f64(),
        rayon_wall.as_secs_f64() * 1e3,
        loop_wall.as_secs_f64() * 1e3
    );
    Ok(())
}
