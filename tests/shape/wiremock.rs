//! The client strategies against a server that is not perfshape's: wiremock's
//! `MockServer`, an async server on its own thread and runtime, answering after a fixed
//! delay — a running service reached by URL, claimed to behave like an async handler of
//! that delay. Fan-out over it stays near one delay, a sequential client takes N delays,
//! and the mock's own count proves every request arrived exactly once.

use std::time::Duration;

use perfshape::ClientStrategy::{self, FanOut, Sequential, SyncOverAsync};
use perfshape::ServerStrategy::Async;
use perfshape::{Checked, Claim, Pool, Result, Target, assert_shape};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const DELAY: Duration = Duration::from_millis(20);

/// `n` requests offered by `strategy` to the mock's `/slow` ÷ the model of an async server
/// with the mock's delay, within `[lo, hi]`; the facts say whether the mock saw each
/// request exactly once.
fn matches_the_model(strategy: ClientStrategy, n: usize, lo: f64, hi: f64) -> Result<Checked> {
    // wiremock's server runs on a thread of its own; this runtime only starts it.
    let runtime = Pool::workers("mock", 1)?;
    let mock = runtime.block_on(MockServer::start());
    runtime.block_on(
        Mock::given(method("GET"))
            .and(path("/slow"))
            .respond_with(ResponseTemplate::new(200).set_delay(DELAY))
            .mount(&mock),
    );
    let target = Target::url(&mock.uri())?;
    let slow = target.endpoint("/slow")?;
    let load = slow.load(
        target
            .scenario()
            .server(Async)
            .client(strategy)
            .requests(n)
            .work(DELAY),
    )?;
    let checked = Claim::bound(&format!("wiremock {strategy} of {n} ÷ model"), load.wall())
        .within(lo, hi)
        .check()?;
    // The endpoint's first request, then the warm-up and every round: n each.
    let runs = checked.report().rounds.len() + 1;
    let arrived = runtime
        .block_on(mock.received_requests())
        .map_or(0, |r| r.len());
    Ok(checked.fact(
        "every request arrived exactly once",
        arrived == 1 + runs * n,
    ))
}

/// Fan-out over an async server stays near one delay whatever N (here 20).
#[test]
fn fan_out_over_an_async_mock_takes_one_delay() -> Result {
    assert_shape!(matches_the_model(FanOut, 20, 1.0, 2.0)?);
    Ok(())
}

/// A sequential client takes N delays, even over an async server.
#[test]
fn sequential_over_an_async_mock_takes_n_delays() -> Result {
    assert_shape!(matches_the_model(Sequential, 10, 0.95, 1.5)?);
    Ok(())
}

/// `threads` blocking OS threads give ceil(N / threads) delays: the `.Result` pattern
/// caps concurrency at the thread count.
#[test]
fn sync_over_async_is_capped_by_its_threads() -> Result {
    assert_shape!(matches_the_model(
        SyncOverAsync { threads: 4 },
        12,
        0.95,
        1.5
    )?);
    Ok(())
}
