//! seed 001 — HttpClient lifecycle × sync/async — as shape claims.
//!
//! Timing tests: in the nextest `shape` group, never retried (see shape_seed000.rs).

mod common;

use common::{Rig, model_ratio, ms, with_context};
use perfshape::{
    Claim, ClientStrategy, Expected, Lifecycle, Measure, Model, PoolSettings, Result,
    ServerStrategy,
};

const SYNC_CLIENT: ClientStrategy = ClientStrategy::SyncOverAsync { threads: 1 };

/// For every lifecycle, sync→sync is the slowest and async→async the fastest (seed 001's
/// three tables agree on that whatever the client lifecycle). The model puts each step at
/// ≥ 2× (sync→sync ÷ async→sync = W = 2; async→sync ÷ async→async = ceil(N/W) = 5); we
/// demand each step ≥ 1.5×. 20 ms of work, not 10: a client built per request costs about
/// 3.6 ms of CPU that the model does not count, and at 10 ms it squeezed the first step to
/// 1.45–1.58 with one core busy.
fn ordering_holds_for(lifecycle: Lifecycle) -> Result<perfshape::Checked> {
    let (n, work) = (10, ms(20));
    let rig = Rig::with_lifecycle(PoolSettings::new(2, 512)?, lifecycle)?;
    let blocking = rig.url(ServerStrategy::Blocking, work)?;
    let asynchronous = rig.url(ServerStrategy::Async, work)?;
    let pool = rig.server.pool_settings();
    let walls = [
        Model::of(ServerStrategy::Blocking, pool, work, SYNC_CLIENT, n),
        Model::of(
            ServerStrategy::Blocking,
            pool,
            work,
            ClientStrategy::FanOut,
            n,
        ),
        Model::of(ServerStrategy::Async, pool, work, ClientStrategy::FanOut, n),
    ];
    let ideal = model_ratio(&walls[0], &walls[1])?.min(model_ratio(&walls[1], &walls[2])?);
    Claim::ordering(
        &format!("seed 001 with a {lifecycle} client: sync→sync > async→sync > async→async"),
        vec![
            Measure::duration("sync → sync", || rig.wall(SYNC_CLIENT, &blocking, n)),
            Measure::duration("async → sync", || {
                rig.wall(ClientStrategy::FanOut, &blocking, n)
            }),
            Measure::duration("async → async", || {
                rig.wall(ClientStrategy::FanOut, &asynchronous, n)
            }),
        ],
    )
    .at_least(1.5)
    .ideal(ideal)
    .context("n", n)
    .context("work", "20 ms")
    .context("server pool", rig.server.pool_settings())
    .check()
}

#[test]
fn sync_over_sync_is_slowest_and_async_over_async_fastest_with_a_shared_client() -> Result {
    let checked = ordering_holds_for(Lifecycle::Shared)?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

#[test]
fn sync_over_sync_is_slowest_and_async_over_async_fastest_with_a_client_per_request() -> Result {
    let checked = ordering_holds_for(Lifecycle::PerRequest)?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

#[test]
fn sync_over_sync_is_slowest_and_async_over_async_fastest_with_pooled_clients() -> Result {
    let checked = ordering_holds_for(Lifecycle::Pooled { clients: 4 })?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// A per-host cap of 2 connections turns an async client over an async server back into a
/// queue: N requests take ceil(N/2) work times (.NET Framework's static client: 61 s for
/// 100 × 1.2 s ≈ N/2 × delay).
#[test]
fn a_cap_of_two_connections_serialises_an_async_client() -> Result {
    let (n, work) = (20, ms(20));
    let pool = PoolSettings::new(2, 512)?;
    let rig = Rig::with_lifecycle(pool, Lifecycle::ConnectionCap { per_host: 2 })?;
    let url = rig.url(ServerStrategy::Async, work)?;
    let model = Model::of(ServerStrategy::Async, pool, work, ClientStrategy::FanOut, n)
        .with_connection_cap(2);
    let checked = Claim::bound(
        "seed 001 async fan-out through 2 connections per host ÷ model",
        Measure::duration("fan-out (cap 2) → async", || {
            rig.wall(ClientStrategy::FanOut, &url, n)
        }),
        Expected::model_wall(&model)?,
    )
    .within(0.95, 1.5)
    .context("n", n)
    .context("work", "20 ms")
    .context("server pool", pool)
    .check()?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// A sequential client that builds a new client per request is slower than one sharing a
/// client, and the server's accepted-connection count says why: one connection per request
/// against one for the whole run. Zero-work requests (`/health`), since a zero sleep still
/// costs a timer tick.
#[test]
fn a_client_per_request_is_slower_than_a_shared_one() -> Result {
    let n = 100;
    let pool = PoolSettings::new(2, 512)?;
    let per_request = Rig::with_lifecycle(pool, Lifecycle::PerRequest)?;
    let shared = Rig::with_pool(pool)?;
    let per_request_url = per_request.server.health_url();
    let shared_url = shared.server.health_url();
    let settings = [("n", n.to_string()), ("route", "/health".to_string())];
    let checked = with_context(
        Claim::ratio(
            "seed 001 sequential with a client per request ÷ with a shared client",
            Measure::duration("per-request", || {
                per_request.wall(ClientStrategy::Sequential, &per_request_url, n)
            }),
            Measure::duration("shared", || {
                shared.wall(ClientStrategy::Sequential, &shared_url, n)
            }),
        ),
        &settings,
    )
    .at_least(1.2)
    .check()?;
    // Connections accepted by each server over the whole claim (warm-up + rounds).
    let runs = checked.report().rounds.len() as u64 + 1;
    let per_run = |rig: &Rig| rig.server.accepted_connections().div_ceil(runs);
    let summary = checked
        .summary()
        .fact(
            "connections accepted per run (rounded up), per-request client",
            per_run(&per_request),
        )
        .fact(
            "connections accepted per run (rounded up), shared client",
            per_run(&shared),
        );
    assert_shape!(checked, summary);
    Ok(())
}
