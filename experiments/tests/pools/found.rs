//! Each kind of pool at a size between two doublings, claimed at its size (holds) and at
//! half and twice it (broken); anyio's default pool of 40 with `up_to(64)`.

use perfshape::{Claim, Verdict};
use perfshape_experiments::Result;

use crate::common::pools::{Kind, PYTHON_SMALL_POOL_WORK_MS, PoolUnderTest, fastapi};

/// The claim a table row makes: `about(k)` up to twice the larger of `k` and 8 callers, its
/// steps at least two requests long.
pub(crate) fn about(pool: &PoolUnderTest, size: usize, k: f64) -> Claim<'static> {
    about_replaying(pool, size, k, Vec::new())
}

/// [`about`], judging another claim's rounds on the same pool before probing again.
fn about_replaying(pool: &PoolUnderTest, size: usize, k: f64, rounds: Vec<f64>) -> Claim<'static> {
    pool.endpoint
        .concurrency_limit()
        .up_to(2 * size.max(8))
        .step(pool.step)
        .replaying(rounds)
        .about(k)
}

/// `about(k)` holds and its sentence names the pool; `about(k/2)` and `about(2k)` break on
/// the same sweeps (the table, tests/pools/table.rs, probes each of them afresh).
fn found(kind: Kind, k: usize) -> Result {
    found_in(PoolUnderTest::start(kind, k)?, k)
}

/// `found` on a pool already started.
fn found_in(pool: PoolUnderTest, k: usize) -> Result {
    let held = about(&pool, k, k as f64).check()?;
    holds_naming_the_knee(&held);
    for wrong in [k as f64 / 2.0, 2.0 * k as f64] {
        let checked = about_replaying(&pool, k, wrong, held.figures(0)).check()?;
        assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    }
    Ok(())
}

#[test]
fn a_tower_limit_of_six_is_a_pool_of_six() -> Result {
    found(Kind::TowerLimit, 6)
}

/// With eager driver hand-off. On tokio's default scheduler the same router read ≈2.7–3.0 in
/// one claim of a fresh clone's CI (workers 1–7 parked throughout): the table's finding, and
/// not a pool this test can claim.
#[test]
fn twelve_blocking_workers_are_a_pool_of_twelve() -> Result {
    found(Kind::HandoffWorkers, 12)
}

#[test]
fn a_python_pool_of_five_threads_is_a_pool_of_five() -> Result {
    let pool = PoolUnderTest::start_with(Kind::PythonThreads, 5, PYTHON_SMALL_POOL_WORK_MS)?;
    found_in(pool, 5)
}

/// FastAPI's `def` endpoint on anyio's default limiter, as a new user finds it by URL:
/// `up_to(64)` reaches it, between the doublings 32 and 64, and reads ≈40. On 100 ms
/// requests, where 40 busy threads ask uvicorn's interpreter for 400 requests a second
/// (0.37–0.50 of a CPU here), it read 0.94–0.97 of 40; on 50 ms requests (0.65–0.77 of a
/// CPU) 0.82–0.93, and in a steal burst that took the interpreter's core from it 0.84,
/// at the band's edge: the probe then measured the core, not the pool.
#[test]
fn anyio_s_default_pool_is_forty() -> Result {
    let service = fastapi(None)?;
    let target = perfshape::Target::url(&service.url())?;
    let checked = target
        .get("/sync-def?ms=100")
        .concurrency_limit()
        .up_to(64)
        .about(40.0)
        .check()?;
    holds_naming_the_knee(&checked);
    Ok(())
}

/// The claim held, and its report gives the sweep's knee.
fn holds_naming_the_knee(checked: &perfshape::Checked) {
    let report = checked.report();
    assert_eq!(checked.verdict(), Verdict::Holds, "{report}");
    assert!(
        report
            .explanation()
            .iter()
            .any(|line| line.contains("the sweep: throughput stops growing past")),
        "{report}"
    );
}
