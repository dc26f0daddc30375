//! seed 002 — AIO vs BIO, in-process — as claims (`src/catalog/seed002.rs`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::seed002;

#[test]
fn bio_is_capped_by_its_pool_and_aio_is_not() -> Result {
    assert_shapes!(seed002::bio_is_capped_by_its_pool(Claimed)?);
    Ok(())
}

#[test]
fn aio_is_one_wait_whatever_n() -> Result {
    assert_shapes!(seed002::aio_is_one_wait(Claimed)?);
    Ok(())
}

#[test]
fn blocking_inside_async_runs_one_at_a_time_per_worker() -> Result {
    assert_shapes!(seed002::blocking_inside_async(Claimed)?);
    Ok(())
}
