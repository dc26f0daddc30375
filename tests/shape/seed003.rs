//! seed 003 — CPU-bound: a loop vs rayon vs one task per item (`src/catalog/seed003.rs`).

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::seed003::{self, ITEMS, batches};
use perfshape::inproc::CpuBound;
use perfshape::{Pool, Result, assert_shapes};

#[test]
fn one_task_per_item_is_far_slower_than_a_loop() -> Result {
    assert_shapes!(seed003::one_task_per_item_is_far_slower_than_a_loop(
        Claimed
    )?);
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
