//! The client strategies against a server that is not perfshape's: wiremock's
//! `MockServer`, an async server on its own thread and runtime, answering after a fixed
//! delay. Fan-out over it stays near one delay, a sequential client takes N delays, and a
//! scoped `expect(n)` proves every request arrived exactly once, in every round.
//!
//! Timing tests: in the nextest `shape` group, never retried (see shape_seed000.rs).

mod common;

use std::time::Duration;

use perfshape::{
    Claim, ClientStrategy, Error, Expected, Lifecycle, LoadClient, Measure, Model, Pool,
    PoolSettings, Result, ServerStrategy,
};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const DELAY: Duration = Duration::from_millis(20);

/// Runs one load against `/slow` under a scoped `expect(n)`, and returns the wall time
/// only when the mock saw exactly `n` requests and the client saw `n` successes.
fn exactly_once(
    client: &LoadClient,
    mock: &MockServer,
    strategy: ClientStrategy,
    n: usize,
) -> Result<Duration> {
    let guard = client.pool().block_on(
        Mock::given(method("GET"))
            .and(path("/slow"))
            .respond_with(ResponseTemplate::new(200).set_delay(DELAY))
            .expect(n as u64)
            .mount_as_scoped(mock),
    );
    let run = client.run(strategy, &format!("{}/slow", mock.uri()), n)?;
    let arrived = client.pool().block_on(guard.received_requests()).len();
    if arrived != n {
        // Leave the guard undropped: its drop would panic on the same finding.
        std::mem::forget(guard);
        return Err(Error::Invalid {
            field: "requests arrived at the mock",
            value: arrived.to_string(),
            allowed: format!("exactly {n}, once each"),
        });
    }
    drop(guard);
    assert_eq!(run.sent(), run.ok() + run.failed());
    Ok(run.require_ok()?.wall)
}

/// wiremock answers after an async delay: the model of an async server (its pool does
/// not matter to an async server, which the model's properties pin).
fn model(client: ClientStrategy, n: usize) -> Result<Expected> {
    let pool = PoolSettings::new(1, perfshape::DEFAULT_MAX_BLOCKING)?;
    Expected::model_wall(&Model::of(ServerStrategy::Async, pool, DELAY, client, n))
}

fn setup() -> Result<(LoadClient, MockServer)> {
    let client = LoadClient::new(Pool::workers("client", 2)?, Lifecycle::Shared)?;
    let mock = client.pool().block_on(MockServer::start());
    Ok((client, mock))
}

/// Checks that `n` requests offered by `strategy` to the mock take what the model of an
/// async server predicts, within `[lo, hi]`, every request arriving exactly once.
fn matches_the_model(
    strategy: ClientStrategy,
    n: usize,
    lo: f64,
    hi: f64,
) -> Result<perfshape::Checked> {
    let (client, mock) = setup()?;
    Claim::bound(
        &format!("wiremock {strategy} of {n} ÷ model"),
        Measure::duration(&format!("{strategy} → wiremock"), || {
            exactly_once(&client, &mock, strategy, n)
        }),
        model(strategy, n)?,
    )
    .within(lo, hi)
    .context("n", n)
    .context("delay", "20 ms")
    .check()
}

/// Fan-out over an async server stays near one delay whatever N (here 20).
#[test]
fn fan_out_over_an_async_mock_takes_one_delay() -> Result {
    let checked = matches_the_model(ClientStrategy::FanOut, 20, 1.0, 2.0)?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// A sequential client takes N delays, even over an async server.
#[test]
fn sequential_over_an_async_mock_takes_n_delays() -> Result {
    let checked = matches_the_model(ClientStrategy::Sequential, 10, 0.95, 1.5)?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// `threads` blocking OS threads give ceil(N / threads) delays: the `.Result` pattern
/// caps concurrency at the thread count.
#[test]
fn sync_over_async_is_capped_by_its_threads() -> Result {
    let strategy = ClientStrategy::SyncOverAsync { threads: 4 };
    let checked = matches_the_model(strategy, 12, 0.95, 1.5)?;
    assert_shape!(checked, checked.summary());
    Ok(())
}
