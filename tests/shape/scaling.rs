//! Pool scaling and the offload cap: an async server does not care about its workers,
//! and offloading only moves the cap. (A blocking server halving its wall with twice the
//! workers is seed 000's C2.)

use perfshape::ClientStrategy::FanOut;
use perfshape::ServerStrategy::{Async, Blocking, Offload};
use perfshape::limits::DEFAULT_MAX_BLOCKING;
use perfshape::{Claim, PoolSettings, Result, Target, assert_shape};

use crate::ms;

/// An async server's fan-out does not move with its workers: 20 × 20 ms on one worker ÷ on
/// two (the model: 1).
#[test]
fn an_async_server_does_not_care_about_its_workers() -> Result {
    fn fan_out(target: &Target) -> Result<perfshape::Load<'_>> {
        let scenario = target.scenario().server(Async).client(FanOut);
        target.load(scenario.requests(20).work(ms(20)))
    }
    let (one, two) = (
        Target::demo(PoolSettings::workers(1)?)?,
        Target::demo(PoolSettings::workers(2)?)?,
    );
    let checked = Claim::ratio(
        "async fan-out on 1 ÷ on 2 workers",
        fan_out(&one)?.wall(),
        fan_out(&two)?.wall(),
    )
    .within(0.8, 1.25)
    .check()?;
    assert_shape!(checked);
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
