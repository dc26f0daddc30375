//! Open and closed loops measure what users see; the probe reads a pool off an endpoint.

use perfshape::ClientStrategy::OpenLoop;
use perfshape::ServerStrategy::{Async, Blocking};
use perfshape::{Claim, PoolSettings, Result, Target, assert_shape};

use crate::ms;

/// No coordinated omission: an open loop offering 75 requests per second to a server that
/// can serve 50 (one worker, 20 ms each) measures latency from each request's intended
/// start, so the queue that builds up shows — the mean matches the model's (which grows by
/// 6.7 ms a request), where a client that waited for each response would report 20 ms.
#[test]
fn an_open_loop_sees_the_queue_a_closed_client_would_hide() -> Result {
    let target = Target::demo(PoolSettings::workers(1)?)?;
    let open = OpenLoop {
        rate: 75.0,
        max_in_flight: 15,
    };
    let load = target.load(
        target
            .scenario()
            .server(Blocking)
            .client(open)
            .requests(15)
            .work(ms(20)),
    )?;
    let checked = Claim::bound(
        "open loop at 75/s into 50/s: mean latency ÷ model",
        load.mean_latency(),
    )
    .within(0.9, 1.5)
    .check()?;
    assert_shape!(checked);
    Ok(())
}

/// The probe recovers the pool of a server it does not know: a blocking server on 2
/// workers "behaves like a pool of ≈2" (estimate ÷ 2 within [0.8, 1.25]), and an async
/// server shows no limit up to 16.
#[test]
fn the_probe_finds_the_pool_of_a_blocking_server() -> Result {
    let target = Target::demo(PoolSettings::workers(2)?)?;
    let blocking = target.demo_endpoint(Blocking, ms(10))?;
    let pool_of_two = blocking
        .concurrency_limit()
        .up_to(16)
        .step(ms(50))
        .about(2.0)
        .check()?;
    assert_shape!("the_probe_finds_a_pool_of_two", pool_of_two);
    let asynchronous = target.demo_endpoint(Async, ms(10))?;
    let unlimited = asynchronous
        .concurrency_limit()
        .up_to(16)
        .step(ms(50))
        .none()
        .check()?;
    assert_shape!("the_probe_finds_no_limit_on_async", unlimited);
    Ok(())
}
