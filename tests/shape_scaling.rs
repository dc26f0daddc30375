//! Pool scaling and the offload cap: the blocking shape follows the pool it is given.
//!
//! Timing tests: in the nextest `shape` group, never retried (see shape_seed000.rs).

mod common;

use common::{Rig, model_ratio, ms};
use perfshape::{
    Claim, ClientStrategy, Expected, Measure, Model, PoolSettings, Result, ServerStrategy,
};

const N: usize = 20;

fn fan_out_wall(rig: &Rig, server: ServerStrategy) -> Result<std::time::Duration> {
    rig.wall(ClientStrategy::FanOut, &rig.url(server, ms(20))?, N)
}

/// Doubling the workers of a blocking server halves its fan-out wall (the model: exactly
/// 2×, from ceil(20/W) rounds); each doubling must give a ratio in [1.5, 2.4].
fn blocking_halves(from: usize) -> Result<perfshape::Checked> {
    let small = Rig::new(from)?;
    let large = Rig::new(2 * from)?;
    let model = |rig: &Rig| {
        Model::of(
            ServerStrategy::Blocking,
            rig.server.pool_settings(),
            ms(20),
            ClientStrategy::FanOut,
            N,
        )
    };
    let ideal = model_ratio(&model(&small), &model(&large))?;
    Claim::ratio(
        &format!("blocking fan-out on {from} ÷ on {} workers", 2 * from),
        Measure::duration(&format!("W={from}"), || {
            fan_out_wall(&small, ServerStrategy::Blocking)
        }),
        Measure::duration(&format!("W={}", 2 * from), || {
            fan_out_wall(&large, ServerStrategy::Blocking)
        }),
    )
    .within(1.5, 2.4)
    .ideal(ideal)
    .context("n", N)
    .context("work", "20 ms")
    .check()
}

#[test]
fn a_blocking_server_halves_its_wall_from_one_to_two_workers() -> Result {
    let checked = blocking_halves(1)?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

#[test]
fn a_blocking_server_halves_its_wall_from_two_to_four_workers() -> Result {
    let checked = blocking_halves(2)?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// An async server's fan-out does not move with its workers (the model: ratio 1).
#[test]
fn an_async_server_does_not_care_about_its_workers() -> Result {
    let one = Rig::new(1)?;
    let two = Rig::new(2)?;
    let model = |rig: &Rig| {
        Model::of(
            ServerStrategy::Async,
            rig.server.pool_settings(),
            ms(20),
            ClientStrategy::FanOut,
            N,
        )
    };
    let ideal = model_ratio(&model(&one), &model(&two))?;
    let checked = Claim::ratio(
        "async fan-out on 1 ÷ on 2 workers",
        Measure::duration("W=1", || fan_out_wall(&one, ServerStrategy::Async)),
        Measure::duration("W=2", || fan_out_wall(&two, ServerStrategy::Async)),
    )
    .within(0.8, 1.25)
    .ideal(ideal)
    .context("n", N)
    .context("work", "20 ms")
    .check()?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// Offloading blocking work only moves the cap: 40 offloaded requests on a blocking pool of
/// 4 take ceil(40/4) work times (seed 004's AsyncSleepTime: better than blocking, far from
/// async). With tokio's default cap of 512 the same load is flat: at most a quarter of what
/// the 2 workers would need if they blocked themselves (the model: 1/20).
#[test]
fn offload_is_capped_by_the_blocking_pool() -> Result {
    let (n, work) = (40, ms(20));
    let capped_pool = PoolSettings::new(2, 4)?;
    let capped = Rig::with_pool(capped_pool)?;
    let url = capped.url(ServerStrategy::Offload, work)?;
    let model = Model::of(
        ServerStrategy::Offload,
        capped_pool,
        work,
        ClientStrategy::FanOut,
        n,
    );
    let bound = Claim::bound(
        "offload fan-out of 40 on a blocking pool of 4 ÷ model",
        Measure::duration("offload (B=4)", || {
            capped.wall(ClientStrategy::FanOut, &url, n)
        }),
        Expected::model_wall(&model)?,
    )
    .within(0.95, 1.5)
    .context("n", n)
    .context("work", "20 ms")
    .context("server pool", capped_pool)
    .check()?;
    assert_shape!("offload_is_capped__bound", bound, bound.summary());

    let default_pool = PoolSettings::new(2, perfshape::DEFAULT_MAX_BLOCKING)?;
    let uncapped = Rig::with_pool(default_pool)?;
    let url = uncapped.url(ServerStrategy::Offload, work)?;
    let blocking = Model::of(
        ServerStrategy::Blocking,
        default_pool,
        work,
        ClientStrategy::FanOut,
        n,
    );
    let flat = Claim::bound(
        "offload fan-out of 40 with the default cap ÷ model of a blocking server",
        Measure::duration("offload (B=512)", || {
            uncapped.wall(ClientStrategy::FanOut, &url, n)
        }),
        Expected::model_wall(&blocking)?,
    )
    .at_most(0.25)
    .context("n", n)
    .context("work", "20 ms")
    .context("server pool", default_pool)
    .check()?;
    assert_shape!(
        "offload_is_capped__default_cap_is_flat",
        flat,
        flat.summary()
    );
    Ok(())
}
