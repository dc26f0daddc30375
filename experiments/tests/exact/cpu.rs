//! seed 003's CPU-bound strategies compute the same thing: the work is really done, in
//! full, whatever the strategy (the timing claim is in `tests/shape/seed003.rs`).

use perfshape::runtime::Pool;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::seed003::{BATCHES, ITEMS, batches};
use perfshape_experiments::inproc::CpuBound;

/// Every strategy computes the same sum (the work is really done, in full). Rayon's time
/// is reported, not gated: on 2 cores a parallel loop lands anywhere from 0.2× to 2× of
/// the plain one, as the seed's own Parallel.For did (6–11 ms against 4–5).
#[test]
fn every_strategy_computes_the_same_result_and_rayon_is_reported() -> Result {
    let pool = Pool::workers("cpu", 2)?;
    let (loop_wall, expected) = batches(CpuBound::SingleThread, &pool, BATCHES)?;
    let (rayon_wall, rayon) = batches(CpuBound::Rayon, &pool, BATCHES)?;
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
