//! seed 000 — "Why async? Does it really improve performance?" — as shape claims C1–C5.

use perfshape::ClientStrategy::{FanOut, Sequential, SyncOverAsync};
use perfshape::ServerStrategy::{Async, Blocking, Offload};
use perfshape::claim::median;
use perfshape::{Checked, Claim, ClientStrategy, PoolSettings, Result, Target, assert_shape};

use crate::ms;

/// The seed's synchronous client: one OS thread blocking on each response in turn.
const SYNC_CLIENT: ClientStrategy = SyncOverAsync { threads: 1 };

/// C1 — both sides async beats both sides blocking by ~N×: the model says 20× at N = 20;
/// we demand ≥ 6× (the seed's 100-request run showed 14.2 s ÷ (7.8 s ÷ 10) ≈ 18× per
/// request).
#[test]
fn c1_async_over_async_beats_sync_over_sync() -> Result {
    let target = Target::demo(PoolSettings::workers(2)?)?;
    let scenario = target.scenario().requests(20).work(ms(20));
    let sync_sync = target.load(scenario.clone().server(Blocking).client(SYNC_CLIENT))?;
    let async_async = target.load(scenario.server(Async).client(FanOut))?;
    let checked = Claim::ratio(
        "C1 sync over sync ÷ async over async",
        sync_sync.wall(),
        async_async.wall(),
    )
    .at_least(6.0)
    .check()?;
    assert_shape!(checked);
    Ok(())
}

/// C2 — a concurrent client over a blocking server is bounded by the pool: N requests take
/// ceil(N/W) work times (the model) and complete in at least ceil(N/W) waves (seed 000's
/// staircase), so doubling the workers halves the wall (the model: exactly 2×; we demand
/// [1.5, 2.4]). Each pair of pools is measured once, interleaved, for the halving; each
/// pool's runs are then held against its model. The snapshot records that the staircase
/// exists, not the exact count: at W = 4 tokio sometimes runs simultaneous blocking
/// requests on one worker while another idles (the README's finding).
fn blocking_fan_out_is_bounded_by_the_pool(small: usize) -> Result<[Checked; 3]> {
    let large = 2 * small;
    let targets = [
        Target::demo(PoolSettings::workers(small)?)?,
        Target::demo(PoolSettings::workers(large)?)?,
    ];
    fn fan_out(target: &Target) -> Result<perfshape::Load<'_>> {
        let scenario = target.scenario().server(Blocking).client(FanOut);
        target.load(scenario.requests(20).work(ms(20)))
    }
    let loads = [fan_out(&targets[0])?, fan_out(&targets[1])?];
    let halves = Claim::ratio(
        &format!("C2 blocking fan-out on {small} ÷ on {large} workers"),
        loads[0].wall(),
        loads[1].wall(),
    )
    .within(1.5, 2.4)
    .check()?;
    let mut bounds = Vec::new();
    for (side, (load, workers)) in loads.iter().zip([small, large]).enumerate() {
        let bound = Claim::bound(
            &format!("C2 blocking fan-out on {workers} workers ÷ model"),
            load.wall().replaying(halves.figures(side)),
        )
        .within(0.95, 1.5)
        .check()?;
        let waves: Vec<f64> = load.summaries().iter().map(|s| s.waves as f64).collect();
        let steps = load.prediction().waves;
        bounds.push(bound.fact(
            &format!("waves ≥ ceil(N/W) = {steps}"),
            median(&waves) >= steps as f64,
        ));
    }
    let [on_small, on_large] = <[Checked; 2]>::try_from(bounds).expect("two pools");
    Ok([halves, on_small, on_large])
}

#[test]
fn c2_blocking_fan_out_is_bounded_by_one_and_two_workers() -> Result {
    let [halves, one, two] = blocking_fan_out_is_bounded_by_the_pool(1)?;
    assert_shape!("c2_blocking_fan_out_halves_from_one_to_two_workers", halves);
    assert_shape!("c2_blocking_fan_out_is_bounded_by_one_worker", one);
    assert_shape!("c2_blocking_fan_out_is_bounded_by_two_workers", two);
    Ok(())
}

#[test]
fn c2_blocking_fan_out_is_bounded_by_four_workers() -> Result {
    let [halves, _, four] = blocking_fan_out_is_bounded_by_the_pool(2)?;
    assert_shape!(
        "c2_blocking_fan_out_halves_from_two_to_four_workers",
        halves
    );
    assert_shape!("c2_blocking_fan_out_is_bounded_by_four_workers", four);
    Ok(())
}

/// C3 — an async server is flat in N: 100 concurrent requests on ONE worker finish within
/// 2 work times of the model's one (harness overhead included), and within a tenth of
/// what a blocking server with the same pool would need (ceil(100/1) × 20 ms = 2 s).
#[test]
fn c3_async_server_is_flat_in_n() -> Result {
    let target = Target::demo(PoolSettings::workers(1)?)?;
    let scenario = target.scenario().client(FanOut).requests(100).work(ms(20));
    let asynchronous = target.load(scenario.clone().server(Async))?;
    let blocking = target.load(scenario.server(Blocking))?;
    let near_one_work_time = Claim::bound(
        "C3 async fan-out of 100 on 1 worker ÷ model",
        asynchronous.wall(),
    )
    .within(1.0, 2.0)
    .check()?;
    assert_shape!("c3__near_one_work_time", near_one_work_time);
    // The same runs, held against what a blocking server would need.
    let far_below_blocking = Claim::bound(
        "C3 async fan-out of 100 on 1 worker ÷ model of a blocking server",
        asynchronous
            .wall()
            .expecting(blocking.expected_wall())
            .replaying(near_one_work_time.figures(0)),
    )
    .at_most(0.1)
    .check()?;
    assert_shape!("c3__far_below_blocking", far_below_blocking);
    Ok(())
}

/// C4 — blocking starves the pool: with both workers blocked for 100 ms, a `/health` sent
/// 20 ms later waits for a worker (≥ 0.75 of the model's remaining 80 ms) and at least 3×
/// longer than during async work; during async or offloaded work it is answered at once
/// (the endpoint claim *keeps answering*: within a quarter of one request's time).
/// N = W: with more requests than workers the health request is served last or not, and
/// its latency turns bimodal.
#[test]
fn c4_blocking_starves_the_pool() -> Result {
    let (after, work) = (ms(20), ms(100));
    let target = Target::demo(PoolSettings::workers(2)?)?;
    let scenario = target.scenario().client(FanOut).requests(2).work(work);
    let blocking = target.load(scenario.clone().server(Blocking))?;
    let asynchronous = target.load(scenario.server(Async))?;
    let ratio = Claim::ratio(
        "C4 /health during blocking ÷ during async",
        blocking.health_during(after),
        asynchronous.health_during(after),
    )
    .at_least(3.0)
    .check()?;
    assert_shape!("c4__blocking_over_async", ratio);
    // The same waits during blocking work, held against the model's.
    let starved = Claim::bound(
        "C4 /health during blocking work ÷ model",
        blocking.health_during(after).replaying(ratio.figures(0)),
    )
    .at_least(0.75)
    .check()?;
    assert_shape!("c4__starved", starved);

    let health = target.endpoint("/health")?;
    for strategy in [Async, Offload] {
        let slow = target.demo_endpoint(strategy, work)?;
        let free = health.keeps_answering_during(&slow).check()?;
        assert_shape!(format!("c4__free_during_{}", strategy.name()), free);
    }
    Ok(())
}

/// C5 — a sequential client is serial whatever the server: async handlers do not help a
/// client that awaits each response before sending the next. Both take ≈ N × work.
#[test]
fn c5_sequential_client_is_serial_whatever_the_server() -> Result {
    let target = Target::demo(PoolSettings::workers(2)?)?;
    let scenario = target
        .scenario()
        .client(Sequential)
        .requests(6)
        .work(ms(20));
    let over_async = target.load(scenario.clone().server(Async))?;
    let over_blocking = target.load(scenario.server(Blocking))?;
    let same = Claim::ratio(
        "C5 sequential over async ÷ sequential over blocking",
        over_async.wall(),
        over_blocking.wall(),
    )
    .within(0.8, 1.25)
    .check()?;
    assert_shape!("c5__same_whatever_the_server", same);
    // The same runs, each held against the model.
    for (side, load) in [&over_async, &over_blocking].into_iter().enumerate() {
        let server = load.scenario().server;
        let serial = Claim::bound(
            &format!("C5 sequential over {server} ÷ model"),
            load.wall().replaying(same.figures(side)),
        )
        .within(0.95, 1.5)
        .check()?;
        assert_shape!(format!("c5__n_times_work_over_{server}"), serial);
    }
    Ok(())
}
