//! seed 000 — "Why async? Does it really improve performance?" — as claims C1–C5. The
//! claims are perfshape's catalog (`src/catalog/seed000.rs`), each with a negative control
//! in `tests/controls/`.

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::seed000;

/// C1 — both sides async beats both sides blocking by ~N×.
#[test]
fn c1_async_over_async_beats_sync_over_sync() -> Result {
    assert_shapes!(seed000::c1(Claimed)?);
    Ok(())
}

/// C2 — a blocking fan-out is bounded by the pool, and halves with twice the workers.
#[test]
fn c2_blocking_fan_out_is_bounded_by_one_and_two_workers() -> Result {
    assert_shapes!(seed000::c2_one_and_two_workers(Claimed)?);
    Ok(())
}

#[test]
fn c2_blocking_fan_out_is_bounded_by_four_workers() -> Result {
    assert_shapes!(seed000::c2_two_and_four_workers(Claimed)?);
    Ok(())
}

/// C3 — an async server is flat in N, even on one worker.
#[test]
fn c3_async_server_is_flat_in_n() -> Result {
    assert_shapes!(seed000::c3(Claimed)?);
    Ok(())
}

/// C4 — blocking starves the pool; async and offloaded work leave a worker free.
#[test]
fn c4_blocking_starves_the_pool() -> Result {
    assert_shapes!(seed000::c4_starved(Claimed)?);
    Ok(())
}

#[test]
fn c4_health_keeps_answering_during_async_work() -> Result {
    assert_shapes!(seed000::c4_free_during_async(Claimed)?);
    Ok(())
}

#[test]
fn c4_health_keeps_answering_during_offloaded_work() -> Result {
    assert_shapes!(seed000::c4_free_during_offload(Claimed)?);
    Ok(())
}

/// C5 — a sequential client is serial whatever the server.
#[test]
fn c5_sequential_client_is_serial_whatever_the_server() -> Result {
    assert_shapes!(seed000::c5(Claimed)?);
    Ok(())
}
