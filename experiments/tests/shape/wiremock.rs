//! The client strategies against wiremock, a running service that is not perfshape's
//! (`tests/common/wiremock.rs`): fan-out over it stays near one delay, a sequential
//! client takes N delays, and the mock's own count proves every request arrived exactly
//! once.

use perfshape::assert_shapes;
use perfshape::client::ClientStrategy::{FanOut, Sequential, SyncOverAsync};
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;

use crate::common::wiremock::matches_the_model;

/// Fan-out over an async server stays near one delay whatever N (here 20).
#[test]
fn fan_out_over_an_async_mock_takes_one_delay() -> Result {
    assert_shapes!(matches_the_model(
        Claimed,
        FanOut,
        Sequential,
        20,
        (1.0, 2.0)
    )?);
    Ok(())
}

/// A sequential client takes N delays, even over an async server.
#[test]
fn sequential_over_an_async_mock_takes_n_delays() -> Result {
    assert_shapes!(matches_the_model(
        Claimed,
        Sequential,
        FanOut,
        10,
        (0.95, 1.5)
    )?);
    Ok(())
}

/// `threads` blocking OS threads give ceil(N / threads) delays: the `.Result` pattern
/// caps concurrency at the thread count.
#[test]
fn sync_over_async_is_capped_by_its_threads() -> Result {
    let threads = SyncOverAsync { threads: 4 };
    assert_shapes!(matches_the_model(
        Claimed,
        threads,
        Sequential,
        12,
        (0.95, 1.5)
    )?);
    Ok(())
}
