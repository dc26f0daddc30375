//! A service as teams stack it: an async handler behind tower's concurrency limit, which
//! perfshape serves as it is (what `axum::serve` takes, it takes).

use std::time::Duration;

use axum::Router;
use axum::routing::get;
use perfshape::{Claim, PoolSettings, Result, Target};
use tower::ServiceBuilder;

/// What each request to `/report` does: wait 20 ms, as the pools' Rust kinds do.
pub(crate) const WORK_MS: u64 = 20;

/// `/report` (an async 20 ms wait) behind `ConcurrencyLimitLayer::new(limit)`, on one
/// worker: the handler never holds its worker, so the limit is the only pool there is.
pub(crate) fn limited(limit: usize) -> Result<Target> {
    let router = Router::new().route(
        "/report",
        get(|| async {
            tokio::time::sleep(Duration::from_millis(WORK_MS)).await;
            "report"
        }),
    );
    let service = ServiceBuilder::new()
        .concurrency_limit(limit)
        .service(router);
    Target::serve(PoolSettings::workers(1)?, service)
}

/// `/report` behaves like a pool of ≈`k`: the probe up to 16 callers, 50 ms a step at the
/// least, judging the `replayed` rounds of another such claim first.
pub(crate) fn behaves_like_a_pool_of(
    target: &Target,
    k: f64,
    replayed: Vec<f64>,
) -> Claim<'static> {
    target
        .get("/report")
        .concurrency_limit()
        .up_to(16)
        .step(Duration::from_millis(50))
        .replaying(replayed)
        .about(k)
}
