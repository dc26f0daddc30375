//! Open and closed loops measure what users see; the probe reads a pool off an endpoint.

use super::seed000::load;
use super::{Entry, Setup, Shapes, ms, shape};
use crate::demo::DemoRoutes;
use crate::error::Result;
use crate::load::Loads;
use crate::vocab::ServerStrategy::{Async, Blocking, Lock};
use perfshape::claim::Claim;
use perfshape::client::ClientStrategy::{OpenLoop, Sequential};

/// This module's entries.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "loops::an_open_loop_sees_the_queue",
        control: "a sequential client where an open loop is claimed",
        run: an_open_loop_sees_the_queue,
    },
    Entry {
        name: "loops::the_probe_finds_the_pool",
        control: "a lock where a pool of 2 is claimed; a blocking pool where no limit is",
        run: the_probe_finds_the_pool,
    },
    Entry {
        name: "loops::the_probe_says_what_limits_it",
        control: "the blocking pool claimed limited by the CPU, /health claimed limited by a pool",
        run: the_probe_says_what_limits_it,
    },
];

/// No coordinated omission: an open loop offering 10 requests at 75 per second to a server
/// that can serve 50 (one worker, 20 ms each) measures latency from each request's
/// intended start, so the queue that builds up shows — the mean matches the model's (which
/// grows by 6.7 ms a request, 50 ms on average), where a client that waited for each
/// response would report 20 ms.
pub fn an_open_loop_sees_the_queue(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::workers(1)?)?;
    let open = OpenLoop {
        rate: 75.0,
        max_in_flight: 10,
    };
    let scenario = target
        .scenario()
        .server(Blocking)
        .client(open)
        .requests(10)
        .work(ms(20));
    let queue = load(setup, &target, scenario, |s| s.client(Sequential))?;
    let checked = Claim::bound(
        "open loop at 75/s into 50/s: mean latency ÷ model",
        queue.mean_latency(),
    )
    .within(0.9, 1.5)
    .check()?;
    Ok(vec![shape(
        "an_open_loop_sees_the_queue_a_closed_client_would_hide",
        checked,
    )])
}

/// The probe recovers the pool of a server it does not know: a blocking server on 2
/// workers "behaves like a pool of ≈2" (estimate ÷ 2 within [0.8, 1.25]), and an async
/// server shows no limit up to 16.
pub fn the_probe_finds_the_pool(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::workers(2)?)?;
    let pool_of_two = target
        .demo_endpoint(setup.pick(Blocking, Lock), ms(10))?
        .concurrency_limit()
        .up_to(16)
        .step(ms(50))
        .about(2.0)
        .check()?;
    let unlimited = target
        .demo_endpoint(setup.pick(Async, Blocking), ms(10))?
        .concurrency_limit()
        .up_to(16)
        .step(ms(50))
        .none()
        .check()?;
    Ok(vec![
        shape("the_probe_finds_a_pool_of_two", pool_of_two),
        shape("the_probe_finds_no_limit_on_async", unlimited),
    ])
}

/// The probe attributes each plateau by looking at the machine: a blocking server on 2
/// workers stops growing while the CPU idles (a pool); `/health`, no work, served and
/// loaded on the same 2 cores, stops when the cores are busy (the CPU, not a pool).
pub fn the_probe_says_what_limits_it(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::workers(2)?)?;
    let blocking = target.demo_endpoint(Blocking, ms(20))?.concurrency_limit();
    let health = target.checked_get("/health")?.concurrency_limit();
    let (pool, cpu) = match setup {
        Setup::Claimed => (blocking.limited_by_a_pool(), health.limited_by_cpu()),
        Setup::Control => (blocking.limited_by_cpu(), health.limited_by_a_pool()),
    };
    Ok(vec![
        shape("a_blocking_pool_is_a_pool", pool.check()?),
        shape("health_is_limited_by_the_cpu", cpu.check()?),
    ])
}
