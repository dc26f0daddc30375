//! seed 004 — JMeter against four endpoints — as claims: a closed loop of users (each
//! sends, waits, thinks, sends again) against blocking, offloaded, async and mixed
//! handlers. Scaled 3 s → 30 ms of work; 12 users on 2 workers (the seed: 300 on 8), the
//! blocking pool capped at 3 so that offloading has a cap of its own.

use std::time::Duration;

use super::seed000::load;
use super::{Entry, Setup, Shapes, ms, shape};
use crate::error::Result;
use crate::load::Loads;
use crate::scenario::ScenarioBuilder;
use crate::vocab::ServerStrategy::{self, Async, Blocking, Mixed, Offload};
use perfshape::Target;
use perfshape::claim::Claim;
use perfshape::client::ClientStrategy;
use perfshape::client::ClientStrategy::ClosedLoop;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "seed004::throughput_orders_the_endpoints",
        control: "the mixed handler's wait made blocking",
        run: throughput_orders_the_endpoints,
    },
    Entry {
        name: "seed004::async_latency_stays_at_the_work_time",
        control: "the async wait made blocking",
        run: async_latency_stays_at_the_work_time,
    },
    Entry {
        name: "seed004::a_closed_loop_obeys_littles_law",
        control: "users thinking 60 ms where 2 ms is claimed",
        run: a_closed_loop_obeys_littles_law,
    },
];

/// Seed 004's mixed endpoint: a third blocking, then two thirds async (10 ms + 20 ms).
const MIXED: ServerStrategy = Mixed {
    block: Duration::from_millis(10),
    wait: Duration::from_millis(20),
};

/// 12 users thinking `think`, for `duration`.
fn users(think: Duration, duration: Duration) -> ClientStrategy {
    ClosedLoop {
        users: 12,
        think,
        ramp: Duration::ZERO,
        duration,
    }
}

/// The target and the scenario every claim here shares: 12 users thinking 2 ms, 30 ms of
/// work, at most 10,000 requests (the run's duration stops it long before).
fn jmeter(duration: Duration) -> Result<(Target, ScenarioBuilder)> {
    let target = crate::demo::target(super::pool(2, 3)?)?;
    let scenario = target
        .scenario()
        .client(users(ms(2), duration))
        .requests(10_000)
        .work(ms(30));
    Ok((target, scenario))
}

// No warm-up round for these claims: a closed loop pays its one-time costs (12
// connections, ~0.1 ms each) well under 1 % of a run, and a warm-up would add a whole
// round of four endpoints, each draining a queue behind blocked workers.

/// Throughput orders async > mixed > offload (capped blocking pool) > blocking, as the
/// seed's 93.6 > 70.4 > 26.0 > 18.6 per second. The model's smallest step is 1.5×
/// (offload 3 threads ÷ blocking 2 workers); we demand the smallest step in [1.2, 2.4].
pub fn throughput_orders_the_endpoints(setup: Setup) -> Result<Shapes> {
    let (target, scenario) = jmeter(ms(150))?;
    let mut loads = Vec::new();
    for server in [Async, MIXED, Offload, Blocking] {
        let wrong = |s: ScenarioBuilder| match server {
            Mixed { block, wait } => s.server(Blocking).work(block + wait),
            _ => s,
        };
        loads.push(load(
            setup,
            &target,
            scenario.clone().server(server),
            wrong,
        )?);
    }
    let checked = Claim::ordering(
        "seed 004 closed-loop throughput",
        loads.iter().map(|load| load.throughput()).collect(),
    )
    .within(1.2, 2.4)
    .warmup(0)
    .check()?;
    Ok(vec![shape(
        "throughput_orders_async_mixed_offload_blocking",
        checked,
    )])
}

/// Async latency stays at the work time with a tight spread: the mean is within
/// [0.95, 1.3] of what the model predicts (30 ms plus nothing).
pub fn async_latency_stays_at_the_work_time(setup: Setup) -> Result<Shapes> {
    let (target, scenario) = jmeter(ms(200))?;
    let asynchronous = load(setup, &target, scenario.server(Async), |s| {
        s.server(Blocking)
    })?;
    let checked = Claim::bound(
        "seed 004 async mean latency ÷ model",
        asynchronous.mean_latency(),
    )
    .within(0.95, 1.3)
    .warmup(0)
    .check()?;
    Ok(vec![shape("async_latency_stays_at_the_work_time", checked)])
}

/// Little's law: throughput × (mean latency + think) = users in the system. Over a
/// 300 ms run the tail (requests still in flight when users stop) lowers it; the model
/// predicts that finite-run figure, and the measurement must lie within [0.9, 1.1] of it.
/// The tail is a discrete edge that swings the figure by ±3 % over ~2 cycles per user;
/// 300 ms is ~9 cycles of this endpoint's 30 ms of work. The control's users think 60 ms
/// where 2 ms is claimed: fewer of them are in the system than the claimed think time
/// accounts for.
pub fn a_closed_loop_obeys_littles_law(setup: Setup) -> Result<Shapes> {
    let (target, scenario) = jmeter(ms(300))?;
    let mixed = load(setup, &target, scenario.server(MIXED), |s| {
        s.client(users(ms(60), ms(300)))
    })?;
    let checked = Claim::bound(
        "seed 004 Little's law on the mixed endpoint ÷ model",
        mixed.users_in_system(),
    )
    .within(0.9, 1.1)
    .warmup(0)
    .check()?;
    Ok(vec![shape("a_closed_loop_obeys_littles_law", checked)])
}
