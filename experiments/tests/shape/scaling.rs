//! Pool scaling and the offload cap (`src/catalog/pools.rs`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::pools;

#[test]
fn an_async_server_does_not_care_about_its_workers() -> Result {
    assert_shapes!(pools::an_async_server_does_not_care_about_its_workers(
        Claimed
    )?);
    Ok(())
}

#[test]
fn offload_is_capped_by_the_blocking_pool() -> Result {
    assert_shapes!(pools::offload_is_capped_by_the_blocking_pool(Claimed)?);
    Ok(())
}

#[test]
fn offload_with_the_default_cap_is_flat() -> Result {
    assert_shapes!(pools::offload_with_the_default_cap_is_flat(Claimed)?);
    Ok(())
}
