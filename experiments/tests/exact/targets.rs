//! A scenario runs only where it can: on the demo service, on the scenario's own pool.

use std::time::Duration;

use axum::{Router, routing::get};
use perfshape::{PoolSettings, Target};
use perfshape_experiments::load::Loads;
use perfshape_experiments::scenario::ServerStrategy;
use perfshape_experiments::{Result, demo};

#[test]
fn a_scenario_runs_only_where_it_can() -> Result {
    let router = Router::new().route("/ok", get(|| async { "ok" }));
    let router_target = Target::serve(PoolSettings::workers(1)?, router)?;
    let err = router_target
        .load(router_target.scenario().server(ServerStrategy::Async))
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid target: router on W=1 B=512 (allowed: perfshape's demo service"),
        "{err}"
    );
    let demo = demo::target(PoolSettings::workers(2)?)?;
    let err = demo
        .load(demo.scenario().workers(4).server(ServerStrategy::Async))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid server pool: W=4 B=512 in the scenario (allowed: the target's demo service on W=2 B=512 (build it with target.scenario()))"
    );
    let err = demo
        .load(demo.scenario().work(Duration::from_millis(61_000)))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid work_ms: 61000 ms (allowed: 0 ms to 60000 ms)"
    );
    Ok(())
}

/// A load is an owned handle: a helper can return one, and a test can move it to another
/// thread.
#[test]
fn a_load_is_static_and_send() {
    fn owned<T: Send + 'static>() {}
    owned::<perfshape_experiments::load::Load>();
}
