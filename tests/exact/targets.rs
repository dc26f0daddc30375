//! Bad input to a target gets a clear error at once, before any load: not a URL, nobody
//! listening, a path without `/`, an endpoint that answers 404 or 500, one that fails now
//! and then, a setting out of range, a scenario the target cannot run.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use perfshape::{Error, PoolSettings, Result, Target};

/// A port on 127.0.0.1 that nobody listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    listener.local_addr().expect("an address").port()
}

fn router() -> Router {
    let calls = Arc::new(AtomicUsize::new(0));
    Router::new()
        .route("/ok", get(|| async { "ok" }))
        .route("/boom", get(|| async { StatusCode::INTERNAL_SERVER_ERROR }))
        .route(
            "/flaky",
            get(move || {
                // Every third request fails, after the first (the endpoint's check) passed.
                let call = calls.fetch_add(1, Ordering::Relaxed);
                async move {
                    if call % 3 == 2 {
                        StatusCode::INTERNAL_SERVER_ERROR
                    } else {
                        StatusCode::OK
                    }
                }
            }),
        )
}

#[test]
fn a_url_that_is_not_one_is_refused_with_the_parse_error() {
    let err = Target::url("not a url").unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot reach not a url: not a URL (relative URL without a base)"
    );
    let err = Target::url("ftp://127.0.0.1/").unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot reach ftp://127.0.0.1/: scheme \"ftp\" is not http or https"
    );
}

#[test]
fn a_url_nobody_listens_on_is_refused_with_the_connect_error() {
    let port = closed_port();
    let url = format!("http://127.0.0.1:{port}");
    let err = Target::url(&url).unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with(&format!(
            "cannot reach {url}: connecting to 127.0.0.1:{port}: "
        )),
        "{message}"
    );
    assert!(message.contains("refused"), "{message}");
    assert!(matches!(err, Error::Unreachable { .. }));
}

#[test]
fn a_path_without_a_leading_slash_is_refused() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, router())?;
    let err = target.checked_get("ok").unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid path: \"ok\" (allowed: a path that starts with / (e.g. \"/orders?limit=10\"))"
    );
    Ok(())
}

#[test]
fn an_endpoint_that_answers_500_or_404_is_refused_at_its_first_request() -> Result {
    // The requests the server received, counted as they arrive.
    let received = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&received);
    let app = router().layer(axum::middleware::from_fn(
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            counted.fetch_add(1, Ordering::Relaxed);
            next.run(request)
        },
    ));
    let target = Target::serve(PoolSettings::workers(1)?, app)?;
    let err = target.checked_get("/boom").unwrap_err();
    assert_eq!(
        err.to_string(),
        "GET /boom answered 500 in 1 of 1 requests; failed: #0: no figure is taken from a run with failed requests"
    );
    let err = target.checked_get("/missing?x=1").unwrap_err();
    assert!(
        err.to_string()
            .starts_with("GET /missing?x=1 answered 404 in 1 of 1 requests"),
        "{err}"
    );
    // Exactly one request each: nothing was sent beyond the check. (Counted as requests,
    // not connections: at hyper-util's floor the shared client's pool opened a second
    // connection for the second request now and then, the first not yet back in it.)
    assert_eq!(received.load(Ordering::Relaxed), 2, "one request each");
    Ok(())
}

/// A redirect is the route's answer: the request is answered (a sign-in's `303 See Other`)
/// and not followed — here to a page that would answer 404 — and its record keeps its
/// status.
#[test]
fn a_redirect_is_the_routes_answer_and_is_not_followed() -> Result {
    let router = router().route(
        "/moved",
        get(|| async {
            (
                StatusCode::SEE_OTHER,
                [(axum::http::header::LOCATION, "/missing")],
            )
        }),
    );
    let target = Target::serve(PoolSettings::workers(1)?, router)?;
    let moved = target.checked_get("/moved")?;
    let run = moved.run(perfshape::client::ClientStrategy::Sequential, 2)?;
    assert_eq!(run.sent(), 2);
    for record in &run.records {
        assert_eq!(record.outcome, perfshape::load::Outcome::Ok { status: 303 });
        assert!(record.outcome.is_redirect());
    }
    Ok(())
}

/// A claim on an endpoint that fails some requests ends with an error that counts them,
/// not with a verdict measured on failures.
#[test]
fn a_claim_on_a_flaky_endpoint_names_its_failures_instead_of_a_verdict() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, router())?;
    let flaky = target.checked_get("/flaky")?;
    let err = flaky
        .does_not_block_its_worker()
        .artifacts_in(crate::scratch())
        .check()
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("GET /flaky answered 500 in ")
            && message.contains(" of 20 requests; failed: #"),
        "{message}"
    );
    Ok(())
}

#[test]
fn settings_out_of_range_name_the_field_and_the_range() -> Result {
    assert_eq!(
        PoolSettings::workers(0).unwrap_err().to_string(),
        "invalid workers: 0 (allowed: 1 to 256)"
    );
    let target = Target::serve(PoolSettings::workers(1)?, router())?;
    // Named where the chain ends (the claim's check()), the first refusal kept.
    let err = target
        .get("/ok")
        .concurrency(0)
        .concurrency(4)
        .does_not_block_its_worker()
        .check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid concurrency: 0 (allowed: 1 to 100000)"
    );
    let err = target
        .get("/ok")
        .concurrency(100_001)
        .faster_than(&target.get("/ok"), 2.0)
        .check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid concurrency: 100001 (allowed: 1 to 100000)"
    );
    let err = target
        .get("/ok")
        .faster_than(&target.get("/ok"), 0.5)
        .check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid times: 0.5 (allowed: a factor of at least 1 and at most 1000 (3.0 is 3× faster))"
    );
    let mix = target.mix([(target.get("/ok"), 1)]).concurrency(0);
    let err = mix.none_blocks_its_worker().check().unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid concurrency: 0 (allowed: 1 to 100000)"
    );
    Ok(())
}

/// A builder whose future is not `Send` — it holds an `Rc` (or a `Box<dyn Error>`) across an
/// await, as `App::new().await?.router().await` does — is built all the same, and what it
/// spawns runs on the served pool's workers.
#[test]
fn a_builder_future_that_is_not_send_builds_on_the_served_pool() -> Result {
    async fn app() -> std::result::Result<Router, Box<dyn std::error::Error>> {
        let settings = std::rc::Rc::new(String::from("/held"));
        let worker = tokio::spawn(async {
            std::thread::current()
                .name()
                .map(str::to_string)
                .unwrap_or_default()
        })
        .await?;
        assert!(worker.starts_with("server"), "spawned on {worker}");
        Ok(router().route(settings.as_str(), get(|| async { "held" })))
    }
    let target = Target::serve_with(PoolSettings::workers(1)?, || async {
        app().await.map_err(|e| e.to_string())
    })?;
    target.checked_get("/held")?;
    Ok(())
}
