//! seed 002 — AIO vs BIO, in-process — as claims (`src/catalog/seed002.rs`).

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::seed002;
use perfshape::{Result, assert_shapes};

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
