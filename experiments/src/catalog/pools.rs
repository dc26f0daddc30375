//! Pool scaling and the offload cap: an async server does not care about its workers, and
//! offloading only moves the cap. (A blocking server halving its wall with twice the
//! workers is seed 000's C2.)

use super::seed000::load;
use super::{Entry, Setup, Shapes, ms, shape};
use crate::error::Result;
use crate::load::Loads;
use crate::vocab::ServerStrategy::{Async, Blocking, Offload};
use perfshape::Target;
use perfshape::claim::Claim;
use perfshape::client::ClientStrategy::FanOut;
use perfshape::runtime::DEFAULT_MAX_BLOCKING;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "pools::an_async_server_does_not_care_about_its_workers",
        control: "the async server made blocking",
        run: an_async_server_does_not_care_about_its_workers,
    },
    Entry {
        name: "pools::offload_is_capped_by_the_blocking_pool",
        control: "the offloaded work run inline",
        run: offload_is_capped_by_the_blocking_pool,
    },
    Entry {
        name: "pools::offload_with_the_default_cap_is_flat",
        control: "a blocking pool of 4 where tokio's 512 is claimed",
        run: offload_with_the_default_cap_is_flat,
    },
];

/// An async server's fan-out does not move with its workers: 10 × 50 ms on one worker ÷ on
/// two (the model: 1; the band [0.8, 1.25]).
///
/// The wait is 50 ms, not 10: the server's own CPU per request (HTTP, routing, the
/// tracing layer; perfshape's code is unoptimised in the test build) is 0.1–0.4 ms, so
/// 10 requests cost one worker 1–4 ms where two workers share it — up to 40 % of a 10 ms
/// figure, at most 8 % of a 50 ms one. Ten requests, not twenty: the control's blocking
/// server serialises them, 0.5 s a round on one worker where twenty took 1 s.
pub fn an_async_server_does_not_care_about_its_workers(setup: Setup) -> Result<Shapes> {
    let targets = [
        crate::demo::target(super::workers(1)?)?,
        crate::demo::target(super::workers(2)?)?,
    ];
    let fan_out = |target: &Target| {
        target
            .scenario()
            .server(Async)
            .client(FanOut)
            .requests(10)
            .work(ms(50))
    };
    let on_one = load(setup, &targets[0], fan_out(&targets[0]), |s| {
        s.server(Blocking)
    })?;
    let on_two = load(setup, &targets[1], fan_out(&targets[1]), |s| {
        s.server(Blocking)
    })?;
    let checked = Claim::ratio(
        "async fan-out on 1 ÷ on 2 workers",
        on_one.wall(),
        on_two.wall(),
    )
    .within(0.8, 1.25)
    .check()?;
    Ok(vec![shape(
        "an_async_server_does_not_care_about_its_workers",
        checked,
    )])
}

/// Offloading blocking work only moves the cap: 40 offloaded requests on a blocking pool of
/// 4 take ceil(40/4) work times (seed 004's AsyncSleepTime: better than blocking, far from
/// async).
pub fn offload_is_capped_by_the_blocking_pool(setup: Setup) -> Result<Shapes> {
    let target = crate::demo::target(super::pool(2, 4)?)?;
    let scenario = target
        .scenario()
        .server(Offload)
        .client(FanOut)
        .requests(40)
        .work(ms(20));
    let offload = load(setup, &target, scenario, |s| s.server(Blocking))?;
    let bound = Claim::bound(
        "offload fan-out of 40 on a blocking pool of 4 ÷ model",
        offload.wall(),
    )
    .within(0.95, 1.5)
    .check()?;
    Ok(vec![shape("offload_is_capped__bound", bound)])
}

/// With tokio's default cap of 512 the same load is flat: at most a quarter of what the 2
/// workers would need if they blocked themselves (the model: 1/20).
pub fn offload_with_the_default_cap_is_flat(setup: Setup) -> Result<Shapes> {
    let claimed = super::pool(2, DEFAULT_MAX_BLOCKING)?;
    let capped = super::pool(2, 4)?;
    let target = crate::demo::target(setup.pick(claimed, capped))?;
    let scenario = target
        .scenario()
        .pool(claimed)
        .client(FanOut)
        .requests(40)
        .work(ms(20));
    let offload = load(setup, &target, scenario.clone().server(Offload), |s| {
        s.pool(capped)
    })?;
    let blocking = scenario.server(Blocking).build()?;
    let flat = Claim::bound(
        "offload fan-out of 40 with the default cap ÷ model of a blocking server",
        offload.wall().expecting(blocking.expected_wall()?),
    )
    .at_most(0.25)
    .check()?;
    Ok(vec![shape("offload_is_capped__default_cap_is_flat", flat)])
}
