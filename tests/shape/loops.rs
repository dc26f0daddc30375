//! Open and closed loops, and the probe (`src/catalog/loops.rs`).

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::loops;
use perfshape::{Result, assert_shapes};

#[test]
fn an_open_loop_sees_the_queue_a_closed_client_would_hide() -> Result {
    assert_shapes!(loops::an_open_loop_sees_the_queue(Claimed)?);
    Ok(())
}

#[test]
fn the_probe_finds_the_pool_of_a_blocking_server() -> Result {
    assert_shapes!(loops::the_probe_finds_the_pool(Claimed)?);
    Ok(())
}
