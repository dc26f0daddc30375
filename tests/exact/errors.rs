//! Bad input gets a typed error naming what is wrong and what is allowed; never a panic.

use std::time::Duration;

use perfshape::{
    Error, PoolSettings, Result, client::ClientStrategy, client::Lifecycle, client::LoadClient,
    runtime::Pool,
};

#[test]
fn zero_workers_names_the_field_and_the_range() {
    let err = PoolSettings::new(0, 512).unwrap_err();
    assert_eq!(err.to_string(), "invalid workers: 0 (allowed: 1 to 256)");
    let err = PoolSettings::new(2, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid max_blocking: 0 (allowed: 1 to 4096)"
    );
}

#[test]
fn unknown_strategy_names_list_the_known_ones() {
    let err = "fanout".parse::<ClientStrategy>().unwrap_err();
    assert!(matches!(err, Error::Unknown { .. }));
    assert!(
        err.to_string()
            .contains("sequential, fan-out, sync-over-async")
    );
    let err = "factory".parse::<Lifecycle>().unwrap_err();
    assert!(
        err.to_string()
            .contains("shared, per-request, pooled, connection-cap")
    );
}

#[test]
fn a_load_of_zero_requests_is_refused_before_anything_is_sent() -> Result {
    let client = LoadClient::new(Pool::workers("client", 1)?, Lifecycle::Shared)?;
    let err = client
        .run(ClientStrategy::FanOut, "http://127.0.0.1:9/", 0)
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid n: 0 (allowed: 1 to 100000)");
    Ok(())
}

#[test]
fn a_poll_budget_of_zero_and_a_waiting_share_outside_the_unit_are_refused_by_name() -> Result {
    let target = perfshape::Target::serve(PoolSettings::workers(1)?, axum::Router::new())?;
    // Named where the chain ends: the claim's check(), or the endpoint's first request.
    let err = target
        .get("/orders")
        .poll_budget(Duration::ZERO)
        .does_not_block_its_worker()
        .check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid poll budget: 0ns (allowed: a duration above 0 and at most 60 s (the most CPU one poll may use))"
    );
    for share in [0.0, 1.5, -0.05, f64::NAN] {
        let err = target
            .get("/orders")
            .waits_at_most(share)
            .preflight()
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("invalid waiting share: {share}")),
            "{err}"
        );
        assert!(
            err.to_string()
                .ends_with("(allowed: a share of each request in (0, 1], e.g. 0.05 for 5 %)"),
            "{err}"
        );
    }
    Ok(())
}

/// The concurrency-limit claim refuses a bad `up_to`, an `up_to` below the pool it claims
/// and a step shorter than one request by name, before any load: the router counts what
/// reached it (none, none, and the three requests that measured the step too short).
#[test]
fn a_concurrency_limit_refuses_its_bad_settings_before_any_load() -> Result {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let seen = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&seen);
    let router = axum::Router::new().route(
        "/slow",
        axum::routing::get(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(Duration::from_millis(30)).await;
                "slow"
            }
        }),
    );
    let target = perfshape::Target::serve(PoolSettings::workers(1)?, router)?;
    let limit = || target.get("/slow").concurrency_limit();
    let refused = |claim: perfshape::Claim<'static>| match claim.check() {
        Err(error) => error.to_string(),
        Ok(checked) => panic!("a bad setting was measured: {}", checked.report()),
    };
    assert_eq!(
        refused(limit().up_to(0).about(2.0)),
        "invalid up_to: 0 (allowed: 1 to 4096)"
    );
    assert_eq!(
        refused(limit().up_to(16).about(40.0)),
        "invalid up_to: 16 (allowed: at least the pool claimed, 40: a sweep up to 16 callers cannot reach it)"
    );
    assert_eq!(
        seen.load(Ordering::SeqCst),
        0,
        "nothing is sent before the checks"
    );
    let message = refused(limit().step(Duration::from_millis(10)).about(1.0));
    assert!(
        message.starts_with("invalid step: 10 ms (allowed: at least one request's time: ")
            && message.ends_with(" ms, the quickest of 3 GET /slow alone)"),
        "{message}"
    );
    assert_eq!(
        seen.load(Ordering::SeqCst),
        3,
        "three requests, then the refusal"
    );
    Ok(())
}

/// A ready-made claim's band and sentences are its model's: a setter that would replace
/// them silently is refused by name before any load, and the named replacement is shown in
/// the claim's settings (and so in its snapshot) beside the model's band.
#[test]
fn a_ready_made_claim_refuses_a_silent_new_band_and_shows_a_named_one() -> Result {
    let router = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
    let target = perfshape::Target::serve(PoolSettings::workers(1)?, router)?;
    let endpoint = target.get("/");
    let refused = match endpoint.does_not_block_its_worker().at_most(50.0).check() {
        Err(error) => error.to_string(),
        Ok(checked) => panic!("a silent band was measured: {}", checked.report()),
    };
    assert!(
        refused.starts_with("invalid setting: at_most (allowed: a ready-made claim's band and sentences are its model's; `band_set_by_test(…)` replaces its band ≤ 1 by name"),
        "{refused}"
    );
    let explained = endpoint
        .does_not_block_its_worker()
        .explain(|_| vec!["fine".into()])
        .check();
    assert!(
        matches!(&explained, Err(e) if e.to_string().starts_with("invalid setting: explain")),
        "{explained:?}"
    );
    let claim = endpoint
        .does_not_block_its_worker()
        .band_set_by_test(perfshape::claim::Band::at_most(2.0));
    let settings = format!("{claim:?}");
    assert!(
        settings.contains("≤ 2, set by the test (the model's: ≤ 1)"),
        "{settings}"
    );
    Ok(())
}
