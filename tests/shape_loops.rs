//! Open and closed loops measure what users see.
//!
//! Timing tests: in the nextest `shape` group, never retried (see shape_seed000.rs).

mod common;

use common::{Rig, ms};
use perfshape::{
    Claim, ClientStrategy, Expected, Measure, Model, PoolSettings, Result, ServerStrategy,
};

/// No coordinated omission: an open loop offering 75 requests per second to a server that
/// can serve 50 (one worker, 20 ms each) measures latency from each request's intended
/// start, so the queue that builds up shows — the mean matches the model's (which grows by
/// 6.7 ms a request), where a client that waited for each response would report 20 ms.
#[test]
fn an_open_loop_sees_the_queue_a_closed_client_would_hide() -> Result {
    let (n, work) = (15, ms(20));
    let pool = PoolSettings::new(1, 512)?;
    let rig = Rig::with_pool(pool)?;
    let url = rig.url(ServerStrategy::Blocking, work)?;
    let strategy = ClientStrategy::OpenLoop {
        rate: 75.0,
        max_in_flight: n,
    };
    let model = Model::of(ServerStrategy::Blocking, pool, work, strategy, n);
    let predicted = model.predict()?;
    let checked = Claim::bound(
        "open loop at 75/s into 50/s: mean latency ÷ model",
        Measure::duration("mean latency from intended start", || {
            let run = rig.client.run(strategy, &url, n)?;
            run.require_ok()?;
            Ok(run
                .summary(work / 2)
                .latency
                .map(|l| l.mean)
                .unwrap_or_default())
        }),
        Expected::duration(
            std::time::Duration::from_secs_f64(predicted.mean_latency),
            format!("mean latency of {}", model.describe()),
        ),
    )
    .within(0.9, 1.5)
    .context("n", n)
    .context("work", "20 ms")
    .context("server pool", pool)
    .check()?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// The probe recovers the pool of a server it does not know: a blocking server on 2
/// workers "behaves like a blocking pool of ≈2" (estimate ÷ 2 within [0.8, 1.25]), its
/// throughput stops growing, and an async server's does not stop growing up to 16.
#[test]
fn the_probe_finds_the_pool_of_a_blocking_server() -> Result {
    let rig = Rig::with_pool(PoolSettings::new(2, 512)?)?;
    let settings = perfshape::ProbeSettings {
        max_concurrency: 16,
        step: ms(50),
        ..perfshape::ProbeSettings::default()
    };
    let blocking = rig.url(ServerStrategy::Blocking, ms(10))?;
    let stopped = std::cell::Cell::new(true);
    let checked = Claim::bound(
        "probe of a blocking server on 2 workers: pool estimate ÷ 2",
        Measure::value("pool estimate", || {
            let report = perfshape::probe(&rig.client, &blocking, settings)?;
            stopped.set(stopped.get() && report.stops_growing_at.is_some());
            Ok(report.pool_estimate)
        }),
        Expected::new(2.0, "the server's 2 workers"),
    )
    .within(0.8, 1.25)
    .warmup(0)
    .context("work", "10 ms")
    .context("steps", "concurrency 1, 2, 4, … up to 16, 50 ms each")
    .check()?;
    let asynchronous = perfshape::probe(
        &rig.client,
        &rig.url(ServerStrategy::Async, ms(10))?,
        settings,
    )?;
    let summary = checked
        .summary()
        .fact(
            "blocking: throughput stopped growing in every round",
            stopped.get(),
        )
        .fact(
            "async: throughput stopped growing",
            asynchronous.stops_growing_at.is_some(),
        );
    assert_shape!(checked, summary);
    Ok(())
}
