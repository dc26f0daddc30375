//! Pool scaling and the offload cap: the blocking shape follows the pool it is given.

use perfshape::ClientStrategy::FanOut;
use perfshape::ServerStrategy::{self, Async, Blocking, Offload};
use perfshape::limits::DEFAULT_MAX_BLOCKING;
use perfshape::{Checked, Claim, PoolSettings, Result, Target, assert_shape};

use crate::ms;

/// A fan-out of 20 × 20 ms of `server` on `target`.
fn fan_out(target: &Target, server: ServerStrategy) -> Result<perfshape::Load<'_>> {
    target.load(
        target
            .scenario()
            .server(server)
            .client(FanOut)
            .requests(20)
            .work(ms(20)),
    )
}

/// The wall of a fan-out of 20 × 20 ms of `server` on `small` workers ÷ on `large`.
fn scaling(server: ServerStrategy, small: usize, large: usize) -> Result<Checked> {
    let a = Target::demo(PoolSettings::workers(small)?)?;
    let b = Target::demo(PoolSettings::workers(large)?)?;
    let (on_small, on_large) = (fan_out(&a, server)?, fan_out(&b, server)?);
    let claim = Claim::ratio(
        &format!("{server} fan-out on {small} ÷ on {large} workers"),
        on_small.wall(),
        on_large.wall(),
    );
    match server {
        // The model: exactly 2×, from ceil(20/W) rounds.
        Blocking => claim.within(1.5, 2.4),
        // The model: 1, an async server does not care about its workers.
        _ => claim.within(0.8, 1.25),
    }
    .check()
}

/// Doubling the workers of a blocking server halves its fan-out wall.
#[test]
fn a_blocking_server_halves_its_wall_from_one_to_two_workers() -> Result {
    assert_shape!(scaling(Blocking, 1, 2)?);
    Ok(())
}

#[test]
fn a_blocking_server_halves_its_wall_from_two_to_four_workers() -> Result {
    assert_shape!(scaling(Blocking, 2, 4)?);
    Ok(())
}

/// An async server's fan-out does not move with its workers.
#[test]
fn an_async_server_does_not_care_about_its_workers() -> Result {
    assert_shape!(scaling(Async, 1, 2)?);
    Ok(())
}

/// Offloading blocking work only moves the cap: 40 offloaded requests on a blocking pool of
/// 4 take ceil(40/4) work times (seed 004's AsyncSleepTime: better than blocking, far from
/// async). With tokio's default cap of 512 the same load is flat: at most a quarter of what
/// the 2 workers would need if they blocked themselves (the model: 1/20).
#[test]
fn offload_is_capped_by_the_blocking_pool() -> Result {
    let capped = Target::demo(PoolSettings::new(2, 4)?)?;
    let offload = capped.load(
        capped
            .scenario()
            .server(Offload)
            .client(FanOut)
            .requests(40)
            .work(ms(20)),
    )?;
    let bound = Claim::bound(
        "offload fan-out of 40 on a blocking pool of 4 ÷ model",
        offload.wall(),
    )
    .within(0.95, 1.5)
    .check()?;
    assert_shape!("offload_is_capped__bound", bound);

    let uncapped = Target::demo(PoolSettings::new(2, DEFAULT_MAX_BLOCKING)?)?;
    let scenario = uncapped.scenario().client(FanOut).requests(40).work(ms(20));
    let offload = uncapped.load(scenario.clone().server(Offload))?;
    let blocking = uncapped.load(scenario.server(Blocking))?;
    let flat = Claim::bound(
        "offload fan-out of 40 with the default cap ÷ model of a blocking server",
        offload.wall().expecting(blocking.expected_wall()),
    )
    .at_most(0.25)
    .check()?;
    assert_shape!("offload_is_capped__default_cap_is_flat", flat);
    Ok(())
}
