//! seed 001 — HttpClient lifecycle × sync/async — as shape claims.

use perfshape::ClientStrategy::{FanOut, Sequential, SyncOverAsync};
use perfshape::ServerStrategy::{Async, Blocking};
use perfshape::{Checked, Claim, Lifecycle, Measure, PoolSettings, Result, Target, assert_shape};

use crate::ms;

/// For every lifecycle, sync→sync is the slowest and async→async the fastest (seed 001's
/// three tables agree on that whatever the client lifecycle). The model puts each step at
/// ≥ 2× (sync→sync ÷ async→sync = W = 2; async→sync ÷ async→async = ceil(N/W) = 5); we
/// demand each step ≥ 1.5×. 20 ms of work, not 10: a client built per request costs about
/// 3.6 ms of CPU that the model does not count, and at 10 ms it squeezed the first step to
/// 1.45–1.58 with one core busy.
fn ordering_holds_for(lifecycle: Lifecycle) -> Result<Checked> {
    let target = Target::demo(PoolSettings::workers(2)?)?.with_lifecycle(lifecycle)?;
    let scenario = target.scenario().requests(10).work(ms(20));
    let sync_sync = target.load(
        scenario
            .clone()
            .server(Blocking)
            .client(SyncOverAsync { threads: 1 }),
    )?;
    let async_sync = target.load(scenario.clone().server(Blocking).client(FanOut))?;
    let async_async = target.load(scenario.server(Async).client(FanOut))?;
    Claim::ordering(
        &format!("seed 001 with a {lifecycle} client: sync→sync > async→sync > async→async"),
        vec![sync_sync.wall(), async_sync.wall(), async_async.wall()],
    )
    .at_least(1.5)
    .check()
}

#[test]
fn sync_over_sync_is_slowest_and_async_over_async_fastest_with_a_shared_client() -> Result {
    assert_shape!(ordering_holds_for(Lifecycle::Shared)?);
    Ok(())
}

#[test]
fn sync_over_sync_is_slowest_and_async_over_async_fastest_with_a_client_per_request() -> Result {
    assert_shape!(ordering_holds_for(Lifecycle::PerRequest)?);
    Ok(())
}

#[test]
fn sync_over_sync_is_slowest_and_async_over_async_fastest_with_pooled_clients() -> Result {
    assert_shape!(ordering_holds_for(Lifecycle::Pooled { clients: 4 })?);
    Ok(())
}

/// A per-host cap of 2 connections turns an async client over an async server back into a
/// queue: N requests take ceil(N/2) work times (.NET Framework's static client: 61 s for
/// 100 × 1.2 s ≈ N/2 × delay).
#[test]
fn a_cap_of_two_connections_serialises_an_async_client() -> Result {
    let target = Target::demo(PoolSettings::workers(2)?)?
        .with_lifecycle(Lifecycle::ConnectionCap { per_host: 2 })?;
    let capped = target.load(
        target
            .scenario()
            .server(Async)
            .client(FanOut)
            .requests(20)
            .work(ms(20)),
    )?;
    let checked = Claim::bound(
        "seed 001 async fan-out through 2 connections per host ÷ model",
        capped.wall(),
    )
    .within(0.95, 1.5)
    .check()?;
    assert_shape!(checked);
    Ok(())
}

/// A sequential client that builds a new client per request is slower than one sharing a
/// client, and the server's accepted-connection count says why: one connection per request
/// against one for the whole run. Zero-work requests (`/health`), since a zero sleep still
/// costs a timer tick; 50 of them, since building a client costs ~3.6 ms of CPU and the
/// ratio is ~100× at any N.
#[test]
fn a_client_per_request_is_slower_than_a_shared_one() -> Result {
    let n = 50;
    let pool = PoolSettings::workers(2)?;
    let per_request = Target::demo(pool)?.with_lifecycle(Lifecycle::PerRequest)?;
    let shared = Target::demo(pool)?;
    let (fresh, reused) = (
        per_request.endpoint("/health")?,
        shared.endpoint("/health")?,
    );
    let accepted = |target: &Target| target.served().map_or(0, |s| s.accepted_connections());
    let before = [accepted(&per_request), accepted(&shared)];
    let checked = Claim::ratio(
        "seed 001 sequential with a client per request ÷ with a shared client",
        Measure::duration("per-request", || Ok(fresh.run(Sequential, n)?.wall)),
        Measure::duration("shared", || Ok(reused.run(Sequential, n)?.wall)),
    )
    .at_least(1.2)
    .context("n", n)
    .context("route", fresh.path())
    .check()?;
    // Connections each server accepted over the warm-up and the rounds: the shared client
    // keeps the one its endpoint's first request opened.
    let runs = checked.report().rounds.len() as u64 + 1;
    let opened = |target: &Target, before: u64| (accepted(target) - before).div_ceil(runs);
    let checked = checked
        .fact(
            "connections opened per run, per-request client",
            opened(&per_request, before[0]),
        )
        .fact(
            "connections opened per run, shared client",
            opened(&shared, before[1]),
        );
    assert_shape!(checked);
    Ok(())
}
