//! The endpoint claims a user writes, on the demo service (`src/catalog/endpoints.rs`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::endpoints;

#[test]
fn waiting_handlers_do_not_block_their_worker() -> Result {
    assert_shapes!(endpoints::waiting_handlers_do_not_block_their_worker(
        Claimed
    )?);
    Ok(())
}

#[test]
fn an_async_handler_is_faster_than_a_blocking_one() -> Result {
    assert_shapes!(endpoints::an_async_handler_is_faster_than_a_blocking_one(
        Claimed
    )?);
    Ok(())
}
