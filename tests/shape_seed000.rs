//! seed 000 — "Why async? Does it really improve performance?" — as shape claims C1–C5.
//!
//! These tests time real work on real threads. They run one at a time: nextest puts this
//! binary in the `shape` test group (`max-threads = 1`), and under plain `cargo test` each
//! claim takes perfshape's process-wide lock while it measures. They are never retried by
//! the runner: a claim re-measures inside itself and says `inconclusive` when it cannot tell.

mod common;

use std::cell::RefCell;
use std::time::Duration;

use common::{Rig, model_ratio, ms, with_context};
use perfshape::{Claim, ClientStrategy, Expected, Measure, Model, Result, ServerStrategy, median};

/// The seed's synchronous client: one OS thread blocking on each response in turn.
const SYNC_CLIENT: ClientStrategy = ClientStrategy::SyncOverAsync { threads: 1 };

/// C1 — both sides async beats both sides blocking by ~N×: ideally 20× at N = 20; we
/// demand ≥ 6× (the seed's 100-request run showed 14.2 s ÷ (7.8 s ÷ 10) ≈ 18× per request).
#[test]
fn c1_async_over_async_beats_sync_over_sync() -> Result {
    let (n, work) = (20, ms(20));
    let rig = Rig::new(2)?;
    let blocking = rig.url(ServerStrategy::Blocking, work)?;
    let asynchronous = rig.url(ServerStrategy::Async, work)?;
    let pool = rig.server.pool_settings();
    let ideal = Model::of(ServerStrategy::Blocking, pool, work, SYNC_CLIENT, n)
        .predict()?
        .wall
        .as_secs_f64()
        / Model::of(ServerStrategy::Async, pool, work, ClientStrategy::FanOut, n)
            .predict()?
            .wall
            .as_secs_f64();
    let checked = Claim::ratio(
        "C1 sync over sync ÷ async over async",
        Measure::duration("sync client → blocking server", || {
            rig.wall(SYNC_CLIENT, &blocking, n)
        }),
        Measure::duration("fan-out client → async server", || {
            rig.wall(ClientStrategy::FanOut, &asynchronous, n)
        }),
    )
    .at_least(6.0)
    .ideal(ideal)
    .context("n", n)
    .context("work", "20 ms")
    .context("server pool", rig.server.pool_settings())
    .check()?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// C2 — a concurrent client over a blocking server is bounded by the pool: N requests take
/// ceil(N/W) work times and complete in ceil(N/W) waves (seed 000's staircase).
///
/// The snapshot records that the staircase exists (at least ceil(N/W) waves), not the
/// exact count: on this machine W = 4 shows 5 or 6 waves from run to run (a connection
/// task can wait in the local slot of a worker that is blocked), which the wall bound
/// already measures.
fn blocking_fan_out_is_bounded_by_the_pool(
    workers: usize,
) -> Result<(perfshape::Checked, perfshape::ShapeSummary)> {
    let (n, work) = (20, ms(20));
    let rig = Rig::new(workers)?;
    let url = rig.url(ServerStrategy::Blocking, work)?;
    let model = Model::of(
        ServerStrategy::Blocking,
        rig.server.pool_settings(),
        work,
        ClientStrategy::FanOut,
        n,
    );
    let waves = RefCell::new(Vec::new());
    let checked = Claim::bound(
        &format!("C2 blocking fan-out on {workers} workers ÷ model"),
        Measure::duration("fan-out client → blocking server", || {
            let run = rig.client.run(ClientStrategy::FanOut, &url, n)?;
            run.require_ok()?;
            waves.borrow_mut().push(run.summary(work / 2).waves as f64);
            Ok(run.wall)
        }),
        Expected::model_wall(&model)?,
    )
    .within(0.95, 1.5)
    .context("n", n)
    .context("work", "20 ms")
    .context("server pool", rig.server.pool_settings())
    .check()?;
    let steps = 20_usize.div_ceil(workers);
    let waves = median(&waves.borrow());
    let summary = checked.summary().fact(
        &format!("waves ≥ ceil(N/W) = {steps}"),
        waves >= steps as f64,
    );
    Ok((checked, summary))
}

#[test]
fn c2_blocking_fan_out_is_bounded_by_one_worker() -> Result {
    let (checked, summary) = blocking_fan_out_is_bounded_by_the_pool(1)?;
    assert_shape!(checked, summary);
    Ok(())
}

#[test]
fn c2_blocking_fan_out_is_bounded_by_two_workers() -> Result {
    let (checked, summary) = blocking_fan_out_is_bounded_by_the_pool(2)?;
    assert_shape!(checked, summary);
    Ok(())
}

#[test]
fn c2_blocking_fan_out_is_bounded_by_four_workers() -> Result {
    let (checked, summary) = blocking_fan_out_is_bounded_by_the_pool(4)?;
    assert_shape!(checked, summary);
    Ok(())
}

/// C3 — an async server is flat in N: 100 concurrent requests on ONE worker finish within
/// 2 work times (harness overhead included), and within a tenth of what a blocking server
/// with the same pool would need (ceil(100/1) × 20 ms = 2 s).
#[test]
fn c3_async_server_is_flat_in_n() -> Result {
    let (n, work) = (100, ms(20));
    let rig = Rig::new(1)?;
    let url = rig.url(ServerStrategy::Async, work)?;
    let fan_out = || rig.wall(ClientStrategy::FanOut, &url, n);
    let pool = rig.server.pool_settings();
    let near_one_work_time = Claim::bound(
        "C3 async fan-out of 100 on 1 worker ÷ model",
        Measure::duration("fan-out client → async server", fan_out),
        Expected::model_wall(&Model::of(
            ServerStrategy::Async,
            pool,
            work,
            ClientStrategy::FanOut,
            n,
        ))?,
    )
    .within(1.0, 2.0)
    .context("n", n)
    .context("work", "20 ms")
    .context("server pool", rig.server.pool_settings())
    .check()?;
    assert_shape!(
        "c3_async_server_is_flat_in_n__near_one_work_time",
        near_one_work_time,
        near_one_work_time.summary()
    );

    let far_below_blocking = Claim::bound(
        "C3 async fan-out of 100 on 1 worker ÷ model of a blocking server",
        Measure::duration("fan-out client → async server", fan_out),
        Expected::model_wall(&Model::of(
            ServerStrategy::Blocking,
            pool,
            work,
            ClientStrategy::FanOut,
            n,
        ))?,
    )
    .at_most(0.1)
    .context("n", n)
    .context("work", "20 ms")
    .context("server pool", rig.server.pool_settings())
    .check()?;
    assert_shape!(
        "c3_async_server_is_flat_in_n__far_below_blocking",
        far_below_blocking,
        far_below_blocking.summary()
    );
    Ok(())
}

/// C4 — blocking starves the pool: with both workers blocked for 100 ms, a `/health` sent
/// 20 ms later waits for a worker (≥ 0.75 of the remaining 80 ms); on an async or offload
/// server it is answered at once (≤ a quarter of the work time); blocking ÷ async ≥ 3.
/// N = W: with more requests than workers the health request is served last or not, and
/// its latency turns bimodal.
#[test]
fn c4_blocking_starves_the_pool() -> Result {
    let (n, work, after) = (2, ms(100), ms(20));
    let rig = Rig::new(2)?;
    let blocking = rig.url(ServerStrategy::Blocking, work)?;
    let asynchronous = rig.url(ServerStrategy::Async, work)?;
    let offload = rig.url(ServerStrategy::Offload, work)?;
    let health = |url: &str| rig.health_during(url, n, after);
    let settings = [
        ("n", n.to_string()),
        ("work", "100 ms".to_string()),
        ("health sent after", "20 ms".to_string()),
        ("server pool", rig.server.pool_settings().to_string()),
    ];
    let context = |claim| with_context(claim, &settings);

    let pool = rig.server.pool_settings();
    let probe = |server| Model::of(server, pool, work, ClientStrategy::FanOut, n).with_probe(after);
    let starved = context(Claim::bound(
        "C4 /health during blocking work ÷ model",
        Measure::duration("/health during blocking", || health(&blocking)),
        Expected::model_probe(&probe(ServerStrategy::Blocking))?,
    ))
    .at_least(0.75)
    .check()?;
    assert_shape!(
        "c4_blocking_starves_the_pool__starved",
        starved,
        starved.summary()
    );

    for (name, server, url) in [
        ("async", ServerStrategy::Async, &asynchronous),
        ("offload", ServerStrategy::Offload, &offload),
    ] {
        // The model says a free worker answers at once (0 ms), which no band can divide by:
        // the bound is a quarter of the work time the blocking server would make it wait.
        let predicted = probe(server).predict()?.probe_latency.unwrap_or_default();
        assert_eq!(
            predicted,
            Duration::ZERO,
            "the model sees a free worker for {name}"
        );
        let free = context(Claim::bound(
            &format!("C4 /health during {name} work ÷ work"),
            Measure::duration(&format!("/health during {name}"), || health(url)),
            Expected::duration(work, "100 ms of work; the model predicts 0 ms"),
        ))
        .at_most(0.25)
        .check()?;
        assert_shape!(
            format!("c4_blocking_starves_the_pool__free_during_{name}"),
            free,
            free.summary()
        );
    }

    let ratio = context(Claim::ratio(
        "C4 /health during blocking ÷ during async",
        Measure::duration("/health during blocking", || health(&blocking)),
        Measure::duration("/health during async", || health(&asynchronous)),
    ))
    .at_least(3.0)
    .check()?;
    assert_shape!(
        "c4_blocking_starves_the_pool__blocking_over_async",
        ratio,
        ratio.summary()
    );
    Ok(())
}

/// C5 — a sequential client is serial whatever the server: async handlers do not help a
/// client that awaits each response before sending the next. Both take ≈ N × work.
#[test]
fn c5_sequential_client_is_serial_whatever_the_server() -> Result {
    let (n, work) = (6, ms(20));
    let rig = Rig::new(2)?;
    let blocking = rig.url(ServerStrategy::Blocking, work)?;
    let asynchronous = rig.url(ServerStrategy::Async, work)?;
    let sequential = |url: &str| rig.wall(ClientStrategy::Sequential, url, n);
    let settings = [
        ("n", n.to_string()),
        ("work", "20 ms".to_string()),
        ("server pool", rig.server.pool_settings().to_string()),
    ];
    let context = |claim| with_context(claim, &settings);
    let same = context(Claim::ratio(
        "C5 sequential over async ÷ sequential over blocking",
        Measure::duration("sequential → async", || sequential(&asynchronous)),
        Measure::duration("sequential → blocking", || sequential(&blocking)),
    ))
    .within(0.8, 1.25)
    .ideal(model_ratio(
        &Model::of(
            ServerStrategy::Async,
            rig.server.pool_settings(),
            work,
            ClientStrategy::Sequential,
            n,
        ),
        &Model::of(
            ServerStrategy::Blocking,
            rig.server.pool_settings(),
            work,
            ClientStrategy::Sequential,
            n,
        ),
    )?)
    .check()?;
    assert_shape!(
        "c5_sequential_client_is_serial__same_whatever_the_server",
        same,
        same.summary()
    );

    for (name, server, url) in [
        ("async", ServerStrategy::Async, &asynchronous),
        ("blocking", ServerStrategy::Blocking, &blocking),
    ] {
        let model = Model::of(
            server,
            rig.server.pool_settings(),
            work,
            ClientStrategy::Sequential,
            n,
        );
        let serial = context(Claim::bound(
            &format!("C5 sequential over {name} ÷ model"),
            Measure::duration(&format!("sequential → {name}"), || sequential(url)),
            Expected::model_wall(&model)?,
        ))
        .within(0.95, 1.5)
        .check()?;
        assert_shape!(
            format!("c5_sequential_client_is_serial__n_times_work_over_{name}"),
            serial,
            serial.summary()
        );
    }
    Ok(())
}
