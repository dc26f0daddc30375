//! seed 004 — JMeter against four endpoints — as claims (`src/catalog/seed004.rs`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::seed004;

#[test]
fn throughput_orders_async_mixed_offload_blocking() -> Result {
    assert_shapes!(seed004::throughput_orders_the_endpoints(Claimed)?);
    Ok(())
}

#[test]
fn async_latency_stays_at_the_work_time() -> Result {
    assert_shapes!(seed004::async_latency_stays_at_the_work_time(Claimed)?);
    Ok(())
}

#[test]
fn a_closed_loop_obeys_littles_law() -> Result {
    assert_shapes!(seed004::a_closed_loop_obeys_littles_law(Claimed)?);
    Ok(())
}
