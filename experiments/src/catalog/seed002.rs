//! seed 002 — AIO vs BIO, in-process — as claims.

use super::{Entry, Setup, Shapes, ms, shape};
use crate::error::Result;
use crate::load::InProcessLoad;
use crate::vocab::InProcess;
use perfshape::claim::Claim;
use perfshape::runtime::Pool;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "seed002::bio_is_capped_by_its_pool",
        control: "timer waits where blocking waits are claimed",
        run: bio_is_capped_by_its_pool,
    },
    Entry {
        name: "seed002::aio_is_one_wait",
        control: "blocking waits where timer waits are claimed",
        run: aio_is_one_wait,
    },
    Entry {
        name: "seed002::blocking_inside_async",
        control: "the blocking wait made async",
        run: blocking_inside_async,
    },
];

/// `strategy` as claimed, or `wrong` run while the measures still state `strategy`.
fn waits<'p>(
    setup: Setup,
    pool: &'p Pool,
    strategy: InProcess,
    wrong: InProcess,
    n: usize,
    work: std::time::Duration,
) -> Result<InProcessLoad<'p>> {
    let load = InProcessLoad::new(pool, strategy, n, work)?;
    Ok(match setup {
        Setup::Claimed => load,
        Setup::Control => load.running(wrong),
    })
}

/// 2,000 blocking waits of 10 ms on a blocking pool capped at 64 take ceil(2000/64) waits
/// (BIO is capped by its pool, like the model's offload); 2,000 timer waits take about
/// one, so AIO is at least 2× faster, at most 51× (the model's 32× × 1.6; the seed
/// measured 50×). The same
/// BIO runs are held against the model.
pub fn bio_is_capped_by_its_pool(setup: Setup) -> Result<Shapes> {
    let pool = Pool::new("inproc", super::pool(2, 64)?)?;
    let bio = waits(setup, &pool, InProcess::Bio, InProcess::Aio, 1_000, ms(10))?;
    let aio = InProcessLoad::new(&pool, InProcess::Aio, 1_000, ms(10))?;
    let faster = Claim::ratio("seed 002 in-process BIO ÷ AIO", bio.wall(), aio.wall())
        .within(2.0, 26.0)
        .check()?;
    let bound = Claim::bound(
        "seed 002 in-process BIO ÷ model",
        bio.wall().replaying(faster.figures(0)),
    )
    .within(0.95, 1.4)
    .check()?;
    Ok(vec![
        shape("bio_is_capped_by_its_pool__aio_faster", faster),
        shape("bio_is_capped_by_its_pool__bound", bound),
    ])
}

/// 500 timer waits of 50 ms on 2 workers take about one wait: AIO holds no thread while it
/// waits (the model: 50 ms; we demand [1.0, 2.0], scheduling 500 timers included). 50 ms,
/// not 10: scheduling the timers costs the test build ~8 µs each, which at 10 ms and 1,000
/// timers put the figure at 1.87, within the noise of the band's edge.
pub fn aio_is_one_wait(setup: Setup) -> Result<Shapes> {
    let pool = Pool::new("inproc", super::pool(2, 64)?)?;
    let aio = waits(setup, &pool, InProcess::Aio, InProcess::Bio, 500, ms(50))?;
    let bound = Claim::bound("seed 002 in-process AIO ÷ model", aio.wall())
        .within(1.0, 2.0)
        .check()?;
    Ok(vec![shape("aio_is_one_wait", bound)])
}

/// An "async" function that blocks inside holds its worker, like the model's blocking
/// handler: 20 such tasks of 10 ms on 2 workers take N × work / W = 100 ms, one at a time
/// per worker, and are 5× to 16× slower than timer waits (the model: 10×; the seed's
/// AIO-that-blocks fell to 95 QPS against BIO's 801). Each task is 10 ms because a
/// measured wait must last 10 ms: 200 tasks of 1 ms would put the timer side at ≈2 ms.
pub fn blocking_inside_async(setup: Setup) -> Result<Shapes> {
    let pool = Pool::new("inproc", super::workers(2)?)?;
    let blocking = waits(
        setup,
        &pool,
        InProcess::BlockingInsideAsync,
        InProcess::Aio,
        20,
        ms(10),
    )?;
    let aio = InProcessLoad::new(&pool, InProcess::Aio, 20, ms(10))?;
    let slower = Claim::ratio(
        "seed 002 blocking inside async ÷ AIO",
        blocking.wall(),
        aio.wall(),
    )
    .within(5.0, 16.0)
    .check()?;
    let bound = Claim::bound(
        "seed 002 blocking inside async ÷ model",
        blocking.wall().replaying(slower.figures(0)),
    )
    .within(1.0, 1.5)
    .check()?;
    Ok(vec![
        shape("blocking_inside_async__slower_than_aio", slower),
        shape("blocking_inside_async__bound", bound),
    ])
}
