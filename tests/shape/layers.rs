//! A tower stack under the gate: a concurrency limit of 5 around an async handler shows as
//! what it is, a pool of ≈5 (between the sweep's doublings 4 and 8) — and the handler still
//! gives its worker back. The controls (tests/controls/) claim ≈2.5 and ≈10 of it.

use perfshape::{Result, assert_shape};

use crate::common::layers::limited;

#[test]
fn a_concurrency_limit_layer_behaves_like_a_pool_of_its_size() -> Result {
    let target = limited(5)?;
    let checked = crate::common::layers::behaves_like_a_pool_of(&target, 5.0).check()?;
    assert_shape!(checked);
    Ok(())
}

/// A setting nobody gave never refuses the request it measures: the probe's default step
/// (100 ms) is shorter than this route's request of 110 ms, and is lengthened to it
/// instead of refused (a step given that short is refused by name: tests/exact/errors.rs).
#[test]
fn the_default_step_fits_a_route_longer_than_it() -> Result {
    let router = axum::Router::new().route(
        "/report",
        axum::routing::get(|| async {
            tokio::time::sleep(std::time::Duration::from_millis(110)).await;
            "report"
        }),
    );
    let target = perfshape::Target::serve(router, perfshape::PoolSettings::workers(1)?)?;
    let checked = target
        .get("/report")
        .concurrency_limit()
        .up_to(2)
        .of_at_least(1.0)
        .check()?;
    assert_eq!(
        checked.verdict(),
        perfshape::Verdict::Holds,
        "{}",
        checked.report()
    );
    Ok(())
}
