//! Every strategy against the model, and every option that shapes a load: so that a 2×
//! slowdown of any one handler, or an option the load client ignored, breaks a claim.

use std::time::Duration;

use super::seed000::load;
use super::{Entry, Setup, Shapes, ms, shape};
use crate::error::Result;
use crate::load::Loads;
use crate::vocab::ServerStrategy::{Async, Blocking, Cpu, Lock, Mixed};
use perfshape::claim::Claim;
use perfshape::client::ClientStrategy::{ClosedLoop, FanOut, OpenLoop};

/// This module's entries.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "strategies::mixed_cpu_and_lock_match_the_model",
        control: "the mixed wait made blocking, the CPU work made a timer, the lock removed",
        run: mixed_cpu_and_lock_match_the_model,
    },
    Entry {
        name: "strategies::tails_match_the_model",
        control: "the blocking handler made async and the async one blocking",
        run: tails_match_the_model,
    },
    Entry {
        name: "strategies::a_ramp_spreads_the_users",
        control: "the ramp ignored",
        run: a_ramp_spreads_the_users,
    },
    Entry {
        name: "strategies::an_in_flight_cap_bounds_the_queue",
        control: "the cap on requests in flight ignored",
        run: an_in_flight_cap_bounds_the_queue,
    },
];

/// A fan-out of 4 × 20 ms to the handlers no other claim bounds, each ÷ the model:
/// mixed (5 ms blocking, then 15 ms async) on one worker, 4 × 5 + 15 = 35 ms; CPU work on
/// one worker, 4 × 20 = 80 ms; a lock on four workers, serial, 80 ms (its control, the
/// lock removed, spreads over the four).
pub fn mixed_cpu_and_lock_match_the_model(setup: Setup) -> Result<Shapes> {
    let mixed = Mixed {
        block: ms(5),
        wait: ms(15),
    };
    let mut shapes = Vec::new();
    for (name, server, wrong, workers) in [
        ("mixed_matches_the_model", mixed, Blocking, 1),
        ("cpu_matches_the_model", Cpu, Async, 1),
        ("lock_matches_the_model", Lock, Blocking, 4),
    ] {
        let target = crate::demo::target(super::workers(workers)?)?;
        let scenario = target
            .scenario()
            .server(server)
            .client(FanOut)
            .requests(4)
            .work(ms(20));
        let fan_out = load(setup, &target, scenario, |s| s.server(wrong).work(ms(20)))?;
        let checked = Claim::bound(&format!("{server} fan-out of 4 ÷ model"), fan_out.wall())
            .within(0.95, 1.5)
            .check()?;
        shapes.push(shape(name, checked));
    }
    Ok(shapes)
}

/// The tail a user sees: under a fan-out of 10 × 20 ms on one worker, a blocking handler's
/// p99 latency is the last request's, 10 × 20 ms = 200 ms; an async handler's is one work
/// time. Each ÷ the model's p99, within [0.95, 1.5]. One worker: on two, tokio now and then
/// runs simultaneous blocking requests on one worker while the other idles (the README's
/// finding), and a round's tail grows by whole waves (1.54 × the model in one round of
/// 15), which the rule rightly reads as a shape that comes and goes.
pub fn tails_match_the_model(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::workers(1)?)?;
    let scenario = target.scenario().client(FanOut).requests(10).work(ms(20));
    let blocking = load(setup, &target, scenario.clone().server(Blocking), |s| {
        s.server(Async)
    })?;
    let asynchronous = load(setup, &target, scenario.server(Async), |s| {
        s.server(Blocking)
    })?;
    let mut shapes = Vec::new();
    for (name, tail) in [("blocking_p99", &blocking), ("async_p99", &asynchronous)] {
        let server = tail.scenario().server;
        let checked = Claim::bound(
            &format!("p99 of a fan-out of 10 to {server} on 1 worker ÷ model"),
            tail.p99(),
        )
        .within(0.95, 1.5)
        .check()?;
        shapes.push(shape(name, checked));
    }
    Ok(shapes)
}

/// A ramp spreads the users: 8 users thinking 140 ms, starting 20 ms apart over a 160 ms
/// ramp, never queue for a blocking worker — the mean latency is the work time (the
/// model: 20 ms), where users that all start at once queue in their first cycle (the
/// model: 55 ms over a 300 ms run).
pub fn a_ramp_spreads_the_users(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::workers(1)?)?;
    let users = |ramp: Duration| ClosedLoop {
        users: 8,
        think: ms(140),
        ramp,
        duration: ms(300),
    };
    let scenario = target
        .scenario()
        .server(Blocking)
        .client(users(ms(160)))
        .requests(10_000)
        .work(ms(20));
    let ramped = load(setup, &target, scenario, |s| {
        s.client(users(Duration::ZERO))
    })?;
    let checked = Claim::bound(
        "mean latency of 8 ramped users on a blocking worker ÷ model",
        ramped.mean_latency(),
    )
    .within(0.9, 1.5)
    .warmup(0)
    .check()?;
    Ok(vec![shape("a_ramp_spreads_the_users", checked)])
}

/// A cap on requests in flight bounds the queue an open loop builds: 20 requests at 200/s
/// into one blocking worker (50/s) with at most 3 in flight wait about 2.5 work times on
/// average (the model), the rest dropped and counted; without the cap they would queue
/// for over 150 ms.
pub fn an_in_flight_cap_bounds_the_queue(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::workers(1)?)?;
    let open = |max_in_flight| OpenLoop {
        rate: 200.0,
        max_in_flight,
    };
    let scenario = target
        .scenario()
        .server(Blocking)
        .client(open(3))
        .requests(20)
        .work(ms(20));
    let capped = load(setup, &target, scenario, |s| s.client(open(20)))?;
    let checked = Claim::bound(
        "mean latency of an open loop capped at 3 in flight ÷ model",
        capped.mean_latency(),
    )
    .within(0.9, 1.5)
    .check()?;
    Ok(vec![shape("an_in_flight_cap_bounds_the_queue", checked)])
}
