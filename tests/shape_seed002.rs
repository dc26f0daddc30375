//! seed 002 — AIO vs BIO, in-process — as shape claims.
//!
//! Timing tests: in the nextest `shape` group, never retried (see shape_seed000.rs).

mod common;

use common::{model_ratio, ms, with_context};
use perfshape::{
    Claim, ClientStrategy, Expected, InProcess, Measure, Model, Pool, PoolSettings, Result,
    ServerStrategy,
};

/// 2,000 blocking waits of 10 ms on a blocking pool capped at 64 take ceil(2000/64) waits
/// (BIO is capped by its pool); 2,000 timer waits take about one, so AIO is at least 2×
/// faster (the model says 32×; the seed measured 50× in-process).
#[test]
fn bio_is_capped_by_its_pool_and_aio_is_not() -> Result {
    let (n, work) = (2_000, ms(10));
    let settings = PoolSettings::new(2, 64)?;
    let pool = Pool::new("inproc", settings)?;
    let bio = || InProcess::Bio.run(&pool, n, work);
    let aio = || InProcess::Aio.run(&pool, n, work);
    let context = [
        ("n", n.to_string()),
        ("work", "10 ms".to_string()),
        ("pool", settings.to_string()),
    ];
    // BIO is the model's offload: each wait holds a blocking thread.
    let model = Model::of(
        ServerStrategy::Offload,
        settings,
        work,
        ClientStrategy::FanOut,
        n,
    );
    let capped = with_context(
        Claim::bound(
            "seed 002 in-process BIO ÷ model",
            Measure::duration("bio", bio),
            Expected::model_wall(&model)?,
        ),
        &context,
    )
    .within(0.95, 1.4)
    .check()?;
    assert_shape!("bio_is_capped_by_its_pool__bound", capped, capped.summary());

    let faster = with_context(
        Claim::ratio(
            "seed 002 in-process BIO ÷ AIO",
            Measure::duration("bio", bio),
            Measure::duration("aio", aio),
        ),
        &context,
    )
    .at_least(2.0)
    .ideal(model_ratio(
        &model,
        &Model::of(
            ServerStrategy::Async,
            settings,
            work,
            ClientStrategy::FanOut,
            n,
        ),
    )?)
    .check()?;
    assert_shape!(
        "bio_is_capped_by_its_pool__aio_faster",
        faster,
        faster.summary()
    );
    Ok(())
}

/// An "async" function that blocks inside holds its worker: 200 such tasks of 1 ms on 2
/// workers take N × work / W = 100 ms, one at a time per worker, and are at least 5× slower
/// than real timer waits (the seed's AIO-that-blocks fell to 95 QPS against BIO's 801).
#[test]
fn blocking_inside_async_runs_one_at_a_time_per_worker() -> Result {
    let (n, work) = (200, ms(1));
    let settings = PoolSettings::new(2, 512)?;
    let pool = Pool::new("inproc", settings)?;
    let blocking = || InProcess::BlockingInsideAsync.run(&pool, n, work);
    let aio = || InProcess::Aio.run(&pool, n, work);
    let context = [
        ("n", n.to_string()),
        ("work", "1 ms (100 ms per worker in all)".to_string()),
        ("pool", settings.to_string()),
    ];
    // Blocking inside a task is the model's blocking handler: it holds a worker.
    let model = Model::of(
        ServerStrategy::Blocking,
        settings,
        work,
        ClientStrategy::FanOut,
        n,
    );
    let serial = with_context(
        Claim::bound(
            "seed 002 blocking inside async ÷ model",
            Measure::duration("blocking inside async", blocking),
            Expected::model_wall(&model)?,
        ),
        &context,
    )
    .within(1.0, 1.5)
    .check()?;
    assert_shape!("blocking_inside_async__bound", serial, serial.summary());

    let slower = with_context(
        Claim::ratio(
            "seed 002 blocking inside async ÷ AIO",
            Measure::duration("blocking inside async", blocking),
            Measure::duration("aio", aio),
        ),
        &context,
    )
    .at_least(5.0)
    .ideal(model_ratio(
        &model,
        &Model::of(
            ServerStrategy::Async,
            settings,
            work,
            ClientStrategy::FanOut,
            n,
        ),
    )?)
    .check()?;
    assert_shape!(
        "blocking_inside_async__slower_than_aio",
        slower,
        slower.summary()
    );
    Ok(())
}
