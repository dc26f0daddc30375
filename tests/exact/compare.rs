//! A comparison refuses, before any load and naming both sides, a pair it cannot compare:
//! a side answering non-2xx, two statuses, two bodies of clearly different lengths, two
//! pools; and its settings out of range.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use perfshape::{Error, PoolSettings, Result, Target};

/// A router answering `/ok` ("ok"), `/created` (201), `/long` (200 bytes) and `/boom`
/// (500), counting every request.
fn service(calls: &Arc<AtomicUsize>) -> Router {
    let count = |calls: &Arc<AtomicUsize>| {
        let calls = Arc::clone(calls);
        move || {
            calls.fetch_add(1, Ordering::Relaxed);
        }
    };
    let (a, b, c, d) = (count(calls), count(calls), count(calls), count(calls));
    Router::new()
        .route(
            "/ok",
            get(move || async move {
                a();
                "ok"
            }),
        )
        .route(
            "/created",
            get(move || async move {
                b();
                (StatusCode::CREATED, "ok")
            }),
        )
        .route(
            "/long",
            get(move || async move {
                c();
                "x".repeat(200)
            }),
        )
        .route(
            "/boom",
            get(move || async move {
                d();
                StatusCode::INTERNAL_SERVER_ERROR
            }),
        )
}

fn served(calls: &Arc<AtomicUsize>, workers: usize) -> Result<Target> {
    Target::serve(PoolSettings::workers(workers)?, service(calls))
}

#[test]
fn a_pair_that_answers_differently_is_named_before_any_load() -> Result {
    let (base_calls, candidate_calls) = (Arc::default(), Arc::default());
    let base = served(&base_calls, 1)?.named("main");
    let candidate = served(&candidate_calls, 1)?.named("pull request");
    // A candidate answering 500: named as the candidate, with its URL.
    let err = candidate
        .get("/boom")
        .compared_with(&base.get("/ok"))
        .slower_by_at_most(0.1)
        .check()
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("the candidate's GET /boom (http://127.0.0.1:")
            && err.contains("/boom) answered 500 in 1 of 1 requests"),
        "{err}"
    );
    // Two statuses.
    let err = candidate
        .get("/created")
        .compared_with(&base.get("/ok"))
        .preflight()
        .unwrap_err();
    assert!(matches!(err, Error::Differs { .. }), "{err}");
    assert!(
        err.to_string()
            .ends_with("answer differently: status 200 from the base, 201 from the candidate"),
        "{err}"
    );
    // Two bodies: 2 bytes against 200, unless they may differ.
    let comparison = candidate.get("/long").compared_with(&base.get("/ok"));
    let err = comparison.preflight().unwrap_err().to_string();
    assert!(
        err.contains("a body of 2 bytes from the base, 200 from the candidate"),
        "{err}"
    );
    comparison.bodies_may_differ().preflight()?;
    // And the check of a pair that differs sent nothing but the first requests.
    let before = (
        base_calls.load(Ordering::Relaxed),
        candidate_calls.load(Ordering::Relaxed),
    );
    let err = candidate
        .get("/long")
        .compared_with(&base.get("/ok"))
        .fan_out(50)
        .slower_by_at_most(0.1)
        .check()
        .unwrap_err();
    assert!(matches!(err, Error::Differs { .. }), "{err}");
    let after = (
        base_calls.load(Ordering::Relaxed),
        candidate_calls.load(Ordering::Relaxed),
    );
    assert_eq!(
        (after.0 - before.0, after.1 - before.1),
        (1, 1),
        "one request each"
    );
    Ok(())
}

#[test]
fn two_pools_or_settings_out_of_range_are_refused() -> Result {
    let calls = Arc::default();
    let (one, two) = (served(&calls, 1)?, served(&calls, 2)?);
    let err = two
        .get("/ok")
        .compared_with(&one.get("/ok"))
        .preflight()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid pools: base on W=1 B=512, candidate on W=2 B=512 (allowed: the same pool on \
         both sides: a comparison measures the code, not the pool)"
    );
    // A setting out of range is named where the chain ends, by the claim's check(),
    // before anything is sent.
    let sent = calls.load(Ordering::SeqCst);
    let refused = |claim: perfshape::Claim<'static>| match claim.check() {
        Err(error) => error.to_string(),
        Ok(checked) => panic!("a bad setting was measured: {}", checked.report()),
    };
    let comparison = one.get("/ok").compared_with(&one.get("/ok"));
    for tolerance in [0.0, -0.1, f64::NAN, 11.0] {
        let err = refused(comparison.clone().slower_by_at_most(tolerance));
        assert!(err.starts_with("invalid tolerance"), "{err}");
    }
    for share in [0.0, 1.0, f64::NAN] {
        let err = refused(comparison.clone().faster_by_at_least(share));
        assert!(err.starts_with("invalid share"), "{err}");
    }
    // The first refusal is kept: a later valid setting does not hide it.
    let err = refused(
        comparison
            .clone()
            .fan_out(0)
            .single()
            .slower_by_at_most(0.1),
    );
    assert!(err.starts_with("invalid fan-out: 0"), "{err}");
    let bad_loop = comparison.closed_loop(0, Duration::from_millis(500));
    let err = bad_loop.preflight().unwrap_err().to_string();
    assert!(err.starts_with("invalid users: 0"), "{err}");
    assert_eq!(calls.load(Ordering::SeqCst), sent, "nothing is sent");
    Ok(())
}
