//! A tower stack under the gate: a concurrency limit of 5 around an async handler shows as
//! what it is, a pool of ≈5 (between the sweep's doublings 4 and 8) — and the handler still
//! gives its worker back. Its controls claim ≈2.5 and ≈10 of it, on the same sweeps.

use perfshape::{Result, Verdict, assert_shape};

use crate::common::layers::{behaves_like_a_pool_of, limited};

/// The limit of 5 holds as a pool of ≈5; its controls, ≈2.5 and ≈10 judged on the rounds
/// that held (`ConcurrencyLimit::replaying`), break.
#[test]
fn a_concurrency_limit_layer_behaves_like_a_pool_of_its_size() -> Result {
    let target = limited(5)?;
    let checked = behaves_like_a_pool_of(&target, 5.0, Vec::new()).check()?;
    for wrong in [2.5, 10.0] {
        let control = behaves_like_a_pool_of(&target, wrong, checked.figures(0)).check()?;
        let Some(verdict) = crate::common::decided(&control) else {
            continue;
        };
        assert_eq!(verdict, Verdict::Broken, "{}", control.report());
    }
    assert_shape!(checked);
    Ok(())
}

/// A setting nobody gave never refuses the request it measures: the claims' default step
/// (`CLAIM_STEP`, 100 ms, not chosen) shorter than this route's request of
/// 110 ms is lengthened to it instead of refused (a step given that short is refused by
/// name: tests/exact/errors.rs). One sweep of the probe the claim runs, up to 2 callers:
/// every request answered, and 2 callers on the sleeping route do not queue.
#[test]
fn the_default_step_fits_a_route_longer_than_it() -> Result {
    let router = axum::Router::new().route(
        "/report",
        axum::routing::get(|| async {
            tokio::time::sleep(std::time::Duration::from_millis(110)).await;
            "report"
        }),
    );
    let target = perfshape::Target::serve(perfshape::PoolSettings::workers(1)?, router)?;
    let settings = perfshape::probe::ProbeSettings {
        max_concurrency: 2,
        step: perfshape::probe::CLAIM_STEP,
        step_chosen: false,
    };
    let endpoint = target.get("/report");
    let report = perfshape::probe::probe(target.client(), &endpoint.url(), settings)?;
    let concurrencies: Vec<usize> = report.steps.iter().map(|s| s.concurrency).collect();
    assert_eq!(concurrencies, [1, 2], "{report}");
    for step in &report.steps {
        assert!(step.sent > 0 && step.ok == step.sent, "{report}");
        assert!(
            step.mean_latency >= std::time::Duration::from_millis(110),
            "{report}"
        );
    }
    assert!(report.pool_estimate > 1.5, "{report}");
    Ok(())
}
