//! seed 002 — AIO vs BIO, in-process — as shape claims.

use perfshape::inproc::InProcess;
use perfshape::load::InProcessLoad;
use perfshape::{Claim, Pool, PoolSettings, Result, assert_shape};

use crate::ms;

/// 2,000 blocking waits of 10 ms on a blocking pool capped at 64 take ceil(2000/64) waits
/// (BIO is capped by its pool, like the model's offload); 2,000 timer waits take about
/// one, so AIO is at least 2× faster (the model says 32×; the seed measured 50×).
#[test]
fn bio_is_capped_by_its_pool_and_aio_is_not() -> Result {
    let pool = Pool::new("inproc", PoolSettings::new(2, 64)?)?;
    let bio = InProcessLoad::new(&pool, InProcess::Bio, 2_000, ms(10))?;
    let aio = bio.with(InProcess::Aio)?;
    let faster = Claim::ratio("seed 002 in-process BIO ÷ AIO", bio.wall(), aio.wall())
        .at_least(2.0)
        .check()?;
    assert_shape!("bio_is_capped_by_its_pool__aio_faster", faster);
    // The same BIO runs, held against the model.
    let bound = Claim::bound(
        "seed 002 in-process BIO ÷ model",
        bio.wall().replaying(faster.figures(0)),
    )
    .within(0.95, 1.4)
    .check()?;
    assert_shape!("bio_is_capped_by_its_pool__bound", bound);
    Ok(())
}

/// An "async" function that blocks inside holds its worker, like the model's blocking
/// handler: 200 such tasks of 1 ms on 2 workers take N × work / W = 100 ms, one at a time
/// per worker, and are at least 5× slower than timer waits (the seed's AIO-that-blocks
/// fell to 95 QPS against BIO's 801).
#[test]
fn blocking_inside_async_runs_one_at_a_time_per_worker() -> Result {
    let pool = Pool::new("inproc", PoolSettings::workers(2)?)?;
    let blocking = InProcessLoad::new(&pool, InProcess::BlockingInsideAsync, 200, ms(1))?;
    let aio = blocking.with(InProcess::Aio)?;
    let slower = Claim::ratio(
        "seed 002 blocking inside async ÷ AIO",
        blocking.wall(),
        aio.wall(),
    )
    .at_least(5.0)
    .check()?;
    assert_shape!("blocking_inside_async__slower_than_aio", slower);
    let bound = Claim::bound(
        "seed 002 blocking inside async ÷ model",
        blocking.wall().replaying(slower.figures(0)),
    )
    .within(1.0, 1.5)
    .check()?;
    assert_shape!("blocking_inside_async__bound", bound);
    Ok(())
}
