//! Pool scaling and the offload cap (`src/catalog/pools.rs`).

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::pools;
use perfshape::{Result, assert_shapes};

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
