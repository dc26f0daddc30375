//! seed 004 — JMeter against four endpoints — as shape claims: a closed loop of users
//! (each sends, waits, thinks, sends again) against blocking, offloaded, async and mixed
//! handlers. Scaled 3 s → 60 ms of work; 12 users on 2 workers (the seed: 300 on 8), the
//! blocking pool capped at 3 so that offloading has a cap of its own.

use std::time::Duration;

use perfshape::ClientStrategy::ClosedLoop;
use perfshape::ServerStrategy::{Async, Blocking, Mixed, Offload};
use perfshape::scenario::ScenarioBuilder;
use perfshape::{Claim, PoolSettings, Result, Target, assert_shape};

use crate::ms;

/// The target and the scenario every claim here shares: 12 users thinking 2 ms, 60 ms of
/// work, at most 10,000 requests (the run's duration stops it long before).
fn jmeter(duration: Duration) -> Result<(Target, ScenarioBuilder)> {
    let target = Target::demo(PoolSettings::new(2, 3)?)?;
    let users = ClosedLoop {
        users: 12,
        think: ms(2),
        ramp: Duration::ZERO,
        duration,
    };
    let scenario = target
        .scenario()
        .client(users)
        .requests(10_000)
        .work(ms(60));
    Ok((target, scenario))
}

/// Seed 004's mixed endpoint: 20 ms blocking, then 40 ms async.
const MIXED: perfshape::ServerStrategy = Mixed {
    block: Duration::from_millis(20),
    wait: Duration::from_millis(40),
};

// No warm-up round for these claims: a 200 ms closed loop pays its one-time costs (12
// connections, ~0.1 ms each) well under 1 % of a run, and a warm-up would add a whole
// round of four endpoints, each draining a queue behind blocked workers.

/// Throughput orders async > mixed > offload (capped blocking pool) > blocking, as the
/// seed's 93.6 > 70.4 > 26.0 > 18.6 per second. The model's smallest step is 1.5×
/// (offload 3 threads ÷ blocking 2 workers); we demand each step ≥ 1.2×.
#[test]
fn throughput_orders_async_mixed_offload_blocking() -> Result {
    let (target, scenario) = jmeter(ms(200))?;
    let loads = [Async, MIXED, Offload, Blocking]
        .into_iter()
        .map(|server| target.load(scenario.clone().server(server)))
        .collect::<Result<Vec<_>>>()?;
    let checked = Claim::ordering(
        "seed 004 closed-loop throughput",
        loads.iter().map(|load| load.throughput()).collect(),
    )
    .at_least(1.2)
    .warmup(0)
    .check()?;
    assert_shape!(checked);
    Ok(())
}

/// Async latency stays at the work time with a tight spread: the mean is within
/// [0.95, 1.3] of what the model predicts (60 ms plus nothing).
#[test]
fn async_latency_stays_at_the_work_time() -> Result {
    let (target, scenario) = jmeter(ms(200))?;
    let asynchronous = target.load(scenario.server(Async))?;
    let checked = Claim::bound(
        "seed 004 async mean latency ÷ model",
        asynchronous.mean_latency(),
    )
    .within(0.95, 1.3)
    .warmup(0)
    .check()?;
    assert_shape!(checked);
    Ok(())
}

/// Little's law: throughput × (mean latency + think) = users in the system. Over a
/// 500 ms run the tail (requests still in flight when users stop) lowers it; the model
/// predicts that finite-run figure, and the measurement must lie within [0.9, 1.1] of it.
/// 500 ms, not 200: the tail is a discrete edge, and over ~2 cycles per user it swings
/// the figure by ±3 %.
#[test]
fn a_closed_loop_obeys_littles_law() -> Result {
    let (target, scenario) = jmeter(ms(500))?;
    let mixed = target.load(scenario.server(MIXED))?;
    let checked = Claim::bound(
        "seed 004 Little's law on the mixed endpoint ÷ model",
        mixed.users_in_system(),
    )
    .within(0.9, 1.1)
    .warmup(0)
    .check()?;
    assert_shape!(checked);
    Ok(())
}
