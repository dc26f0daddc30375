//! Any request, from any test: a POST with a JSON body and a bearer token, a generator
//! that varies each request, and what goes wrong with them named at once — the refused
//! first request with its method and status, a body serde cannot serialise and a
//! generator that panics, each before any load. And the same API from `#[tokio::test]` in
//! both flavours, where blocking on a runtime would panic.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use perfshape::{PoolSettings, Request, Result, Target, client::ClientStrategy};
use serde_json::{Value, json};

/// `POST /orders`: 401 without `Bearer secret`, else the JSON body echoed, with every
/// order id seen counted.
fn orders(seen: Arc<AtomicUsize>) -> Router {
    Router::new().route(
        "/orders",
        post(move |headers: HeaderMap, Json(order): Json<Value>| {
            let seen = Arc::clone(&seen);
            async move {
                if headers.get("authorization").and_then(|v| v.to_str().ok())
                    != Some("Bearer secret")
                {
                    return Err(StatusCode::UNAUTHORIZED);
                }
                seen.fetch_add(
                    order["id"].as_u64().map_or(0, |id| id as usize + 1),
                    Ordering::Relaxed,
                );
                Ok(Json(order))
            }
        }),
    )
}

#[test]
fn a_post_with_json_and_a_token_is_sent_as_given() -> Result {
    let seen = Arc::new(AtomicUsize::new(0));
    let target = Target::serve(PoolSettings::workers(1)?, orders(Arc::clone(&seen)))?;
    let run = target
        .post("/orders")
        .json(&json!({ "id": 4, "item": "tea" }))
        .bearer_auth("secret")
        .run(ClientStrategy::FanOut, 3)?;
    assert_eq!(run.request, "POST /orders");
    assert_eq!((run.sent(), run.ok()), (3, 3));
    assert_eq!(seen.load(Ordering::Relaxed), 3 * 5);
    Ok(())
}

/// The connections driver writes the same request reqwest does: its JSON body (with its
/// length), its token and `Host`, on each of 200 requests of a closed loop.
#[test]
fn the_connections_driver_sends_a_post_with_json_and_a_token_as_given() -> Result {
    let seen = Arc::new(AtomicUsize::new(0));
    let target = Target::builder()
        .driver(perfshape::client::Driver::Connections)
        .serve(PoolSettings::workers(1)?, orders(Arc::clone(&seen)))?;
    let looping = ClientStrategy::ClosedLoop {
        users: 4,
        think: std::time::Duration::ZERO,
        ramp: std::time::Duration::ZERO,
        duration: std::time::Duration::from_secs(10),
    };
    let run = target
        .post("/orders")
        .json(&json!({ "id": 4, "item": "tea" }))
        .bearer_auth("secret")
        .run(looping, 200)?;
    assert_eq!(
        (run.sent(), run.ok()),
        (200, 200),
        "{:?}",
        run.records[0].error
    );
    assert_eq!(seen.load(Ordering::Relaxed), 200 * 5);
    // The echoed body: the one sent.
    let sent = json!({ "id": 4, "item": "tea" }).to_string().len();
    assert!(run.records.iter().all(|r| r.body_len() == Some(sent)));
    Ok(())
}

/// A request past its timeout is a timeout, on the connections driver as on reqwest, and
/// its connection is not used again: the next request opens a new one.
#[test]
fn the_connections_driver_times_a_stalled_request_out() -> Result {
    use perfshape::client::{Driver, Limits};
    use perfshape::load::{Connection, FailureKind, Outcome};
    use perfshape::{client::Lifecycle, client::LoadClient, runtime::Pool, runtime::Server};
    use std::time::Duration;

    let stalls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&stalls);
    // The first request stalls for 5 s, every later one answers at once.
    let router = Router::new().route(
        "/maybe",
        axum::routing::get(move || {
            let first = counted.fetch_add(1, Ordering::Relaxed) == 0;
            async move {
                if first {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
                "ok"
            }
        }),
    );
    let server = Server::serve(Pool::workers("server", 1)?, router)?;
    let limits = Limits {
        request_timeout: Duration::from_millis(100),
        run_deadline: Duration::from_secs(10),
    };
    let client = LoadClient::with_limits(Pool::workers("client", 1)?, Lifecycle::Shared, limits)?
        .with_driver(Driver::Connections);
    let looping = ClientStrategy::ClosedLoop {
        users: 1,
        think: Duration::ZERO,
        ramp: Duration::ZERO,
        duration: Duration::from_secs(10),
    };
    let run = client.run(looping, &format!("{}/maybe", server.base_url()), 3)?;
    let outcomes: Vec<_> = run
        .records
        .iter()
        .map(|r| (r.outcome.clone(), r.connection))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (
                Outcome::Failed {
                    kind: FailureKind::Timeout
                },
                Connection::New
            ),
            (Outcome::Ok { status: 200 }, Connection::New),
            (Outcome::Ok { status: 200 }, Connection::Reused),
        ]
    );
    Ok(())
}

#[test]
fn a_generator_varies_each_request_by_its_index() -> Result {
    let seen = Arc::new(AtomicUsize::new(0));
    let target = Target::serve(PoolSettings::workers(1)?, orders(Arc::clone(&seen)))?;
    let run = target
        .post("/orders")
        .bearer_auth("secret")
        .vary(|i, request: Request| request.json(&json!({ "id": i })))
        .run(ClientStrategy::FanOut, 10)?;
    assert_eq!((run.sent(), run.ok()), (10, 10));
    // Ids 0..10 each once: 1 + 2 + … + 10.
    assert_eq!(seen.load(Ordering::Relaxed), 55);
    Ok(())
}

/// The generator's numbers run on across an endpoint's loads — a claim's rounds, its
/// warm-up, its request alone — and its clones': none is given twice.
#[test]
fn a_generator_never_gets_the_same_number_twice() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, orders(Arc::default()))?;
    let given = Arc::new(std::sync::Mutex::new(Vec::new()));
    let noted = Arc::clone(&given);
    let orders = target
        .post("/orders")
        .bearer_auth("secret")
        .vary(move |i, request: Request| {
            noted.lock().unwrap().push(i);
            request.json(&json!({ "id": i }))
        });
    orders.run(ClientStrategy::FanOut, 10)?;
    orders.clone().run(ClientStrategy::Sequential, 5)?;
    let mut given = given.lock().unwrap().clone();
    // Each load's plan checks the generator once (number 0, never sent); the 15 requests
    // sent took 0 to 14.
    given.sort_unstable();
    let sent: Vec<usize> = given.iter().copied().filter(|&i| i > 0).collect();
    assert_eq!(sent, (1..15).collect::<Vec<_>>());
    assert_eq!(given.iter().filter(|&&i| i == 0).count(), 3);
    Ok(())
}

#[test]
fn a_refused_first_request_names_the_method_path_and_status() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, orders(Arc::default()))?;
    let err = target
        .post("/orders")
        .json(&json!({ "id": 1 }))
        .does_not_block_its_worker()
        .check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "POST /orders answered 401 in 1 of 1 requests; failed: #0: no figure is taken from a run with failed requests"
    );
    // The claim's first request was its only one.
    assert_eq!(target.served().map(|s| s.accepted_connections()), Some(1));
    Ok(())
}

#[test]
fn a_body_serde_cannot_serialise_is_named_before_any_load() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, orders(Arc::default()))?;
    // JSON object keys must be strings.
    let body: BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
    let err = target
        .post("/orders")
        .json(&body)
        .bearer_auth("secret")
        .does_not_block_its_worker()
        .check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid JSON body: key must be a string (for POST /orders) (allowed: a value serde_json can serialise)"
    );
    let err = target
        .post("/orders")
        .header("x-trace", "line\nbreak")
        .run(ClientStrategy::Sequential, 1)
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid header value: x-trace: "),
        "{err}"
    );
    assert_eq!(target.served().map(|s| s.accepted_connections()), Some(0));
    Ok(())
}

#[test]
fn a_generator_that_panics_is_named_with_its_index_never_a_hang() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, orders(Arc::default()))?;
    let panics_at = |at: usize| {
        target
            .post("/orders")
            .bearer_auth("secret")
            .vary(move |i, request: Request| {
                assert!(i != at, "no order for index {i}");
                request.json(&json!({ "id": i }))
            })
    };
    // At the first request: refused before any load.
    let err = panics_at(0).run(ClientStrategy::FanOut, 5).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request generator: the generator panicked at request #0: no order for index 0 (allowed: a generator that returns a request that can be built for every index)"
    );
    assert_eq!(target.served().map(|s| s.accepted_connections()), Some(0));
    // Later: that request is counted as failed and named, the others are sent.
    let err = panics_at(3).run(ClientStrategy::Sequential, 5).unwrap_err();
    assert_eq!(
        err.to_string(),
        "POST /orders failed in 1 of 5 requests (could not be built: 1; first error: the generator panicked at request #3: no order for index 3); failed: #3: no figure is taken from a run with failed requests"
    );
    // A generated path that is not one.
    let err = target
        .get("/orders")
        .vary(|i, _| Request::get(format!("orders/{i}")))
        .run(ClientStrategy::Sequential, 2)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid request generator: request #0 (GET orders/0): invalid path: \"orders/0\" (allowed: a path that starts with / (e.g. \"/orders?limit=10\")) (allowed: a generator that returns a request that can be built for every index)"
    );
    Ok(())
}

/// `#[tokio::test]` on the current-thread runtime: serving, the first request and a
/// check all work inside it, and `claim.await` too.
#[tokio::test]
async fn the_api_works_inside_a_current_thread_runtime() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, orders(Arc::default()))?;
    let endpoint = target
        .post("/orders")
        .json(&json!({ "id": 1 }))
        .bearer_auth("secret");
    endpoint.preflight()?;
    let run = endpoint.run(ClientStrategy::Sequential, 2)?;
    assert_eq!(run.ok(), 2);
    let health = Target::serve(PoolSettings::workers(1)?, orders(Arc::default()))?
        .checked_get("/orders")
        .unwrap_err();
    assert!(
        health.to_string().starts_with("GET /orders answered 405"),
        "{health}"
    );
    drop(target);
    Ok(())
}

/// `#[tokio::test]` on the multi-thread runtime: the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_works_inside_a_multi_thread_runtime() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, orders(Arc::default()))?;
    let endpoint = target
        .post("/orders")
        .json(&json!({ "id": 1 }))
        .bearer_auth("secret");
    let run = tokio::task::spawn_blocking(move || endpoint.run(ClientStrategy::FanOut, 2))
        .await
        .expect("the task ran")?;
    assert_eq!(run.ok(), 2);
    let run = target
        .post("/orders")
        .json(&json!({ "id": 2 }))
        .bearer_auth("secret")
        .run(ClientStrategy::FanOut, 2)?;
    assert_eq!(run.ok(), 2);
    Ok(())
}

#[test]
fn a_mix_it_cannot_read_route_by_route_is_refused_before_any_load() -> Result {
    // Every request either service answers is counted: none may be sent.
    let answered = Arc::new(AtomicUsize::new(0));
    let counting = || {
        let answered = Arc::clone(&answered);
        Router::new().route(
            "/orders",
            axum::routing::get(move || {
                answered.fetch_add(1, Ordering::Relaxed);
                async { "orders" }
            }),
        )
    };
    let target = Target::serve(PoolSettings::workers(1)?, counting())?;
    let other = Target::serve(PoolSettings::workers(1)?, counting())?;
    let refused = |mix: perfshape::Mix| {
        mix.none_blocks_its_worker()
            .check()
            .unwrap_err()
            .to_string()
    };
    assert_eq!(
        refused(target.mix([])),
        "invalid mix routes: 0 (allowed: 1 to 16)"
    );
    assert_eq!(
        refused(target.mix([(target.get("/orders"), 0)])),
        "invalid mix weight: 0 (allowed: 1 to 1000)"
    );
    assert_eq!(
        refused(target.mix([(other.get("/orders"), 1)])),
        "invalid mix route: /orders on another target (allowed: endpoints of the target the mix was made on)"
    );
    let url = Target::url(&target.served().expect("served").base_url())?;
    assert!(
        refused(url.mix([(url.get("/orders"), 1)]))
            .starts_with("invalid target: running service (allowed: a router perfshape serves"),
    );
    // Requests, not connections: Target::url's reachability check opens a connection,
    // which the server's accept loop counts whenever it gets to it.
    assert_eq!(answered.load(Ordering::Relaxed), 0);
    Ok(())
}

/// Owned handles: a helper can return an endpoint or a claim, and an async test can move
/// a claim to another thread (`claim.await` runs it on tokio's blocking pool).
#[test]
fn endpoints_claims_and_mixes_are_static_and_send() {
    fn owned<T: Send + 'static>() {}
    owned::<Target>();
    owned::<perfshape::Endpoint>();
    owned::<perfshape::Claim<'static>>();
    owned::<perfshape::Mix>();
    owned::<perfshape::Checked>();
    owned::<perfshape::Error>();
    fn shared<T: Sync>() {}
    shared::<Target>();
    shared::<perfshape::Error>();
}

/// The connections driver accounts for every request as reqwest does: a closed loop of 3
/// users on 2 client workers opens 3 connections and reuses them, sends exactly its bound
/// and says it ended on it; a 500 is a failure by status; a chunked body is counted after
/// its framing; a server that closes each connection gets a new one per request; a dead
/// port ends each user at its first failure (3 records, not a flood), the connect error
/// quoted.
#[test]
fn the_connections_driver_accounts_for_every_request() -> perfshape::Result {
    use axum::http::{StatusCode, header};
    use axum::routing::get;
    use perfshape::client::Driver;
    use perfshape::load::{Connection, FailureKind, Outcome};
    use perfshape::{
        client::ClientStrategy, client::Lifecycle, client::LoadClient, runtime::Pool,
        runtime::Server,
    };

    let router = axum::Router::new()
        .route("/ok", get(|| async { "ok" }))
        .route("/boom", get(|| async { StatusCode::INTERNAL_SERVER_ERROR }))
        .route(
            "/close",
            get(|| async { ([(header::CONNECTION, "close")], "bye") }),
        )
        .route(
            "/chunked",
            get(|| async {
                let pieces = ["hello", ", ", "world"].map(Ok::<_, std::io::Error>);
                axum::body::Body::from_stream(futures_util::stream::iter(pieces))
            }),
        );
    let server = Server::serve(Pool::workers("server", 1)?, router)?;
    let client = LoadClient::new(Pool::workers("client", 2)?, Lifecycle::Shared)?
        .with_driver(Driver::Connections);
    let looping = ClientStrategy::ClosedLoop {
        users: 3,
        think: std::time::Duration::ZERO,
        ramp: std::time::Duration::ZERO,
        // Long enough that every load below ends on its request bound, however slow the
        // machine.
        duration: std::time::Duration::from_secs(10),
    };
    let url = |path: &str| format!("{}{path}", server.base_url());
    let count = |run: &perfshape::load::Run, connection: Connection| {
        run.records
            .iter()
            .filter(|r| r.connection == connection)
            .count()
    };

    let run = client.run(looping, &url("/ok"), 500)?;
    assert_eq!(run.sent(), run.ok() + run.failed());
    assert_eq!((run.sent(), run.failed()), (500, 0), "{:?}", run.cut_short);
    assert_eq!(count(&run, Connection::New), 3, "one connection per user");
    let mut indices: Vec<usize> = run.records.iter().map(|r| r.index).collect();
    indices.sort_unstable();
    assert_eq!(indices, (0..500).collect::<Vec<_>>(), "each index once");
    assert!(run.records.iter().all(|r| r.body_len() == Some(2)));
    assert!(matches!(
        run.cut_short,
        Some(perfshape::load::CutShort::Requests { n: 500, .. })
    ));

    let run = client.run(looping, &url("/boom"), 50)?;
    assert_eq!((run.sent(), run.failed()), (50, 50));
    assert!(run.records.iter().all(|r| r.outcome
        == Outcome::Failed {
            kind: FailureKind::Status(500)
        }));

    let run = client.run(looping, &url("/chunked"), 30)?;
    assert_eq!((run.sent(), run.ok()), (30, 30));
    assert!(run.records.iter().all(|r| r.body_len() == Some(12)));
    // A chunked body keeps its connection: one new connection per user at the most (a
    // user may find the 30 requests taken before it starts: one run here had one user
    // send them all), every other request on a connection already open.
    let new = count(&run, Connection::New);
    assert!((1..=3).contains(&new), "{new} new connections for 3 users");
    assert_eq!(
        count(&run, Connection::Reused),
        30 - new,
        "a chunked body keeps its connection"
    );

    let run = client.run(looping, &url("/close"), 40)?;
    assert_eq!((run.sent(), run.ok()), (40, 40));
    assert_eq!(
        count(&run, Connection::New),
        40,
        "a new connection per closed one"
    );

    let dead = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        listener.local_addr().expect("an address").port()
    };
    let run = client.run(looping, &format!("http://127.0.0.1:{dead}/ok"), 100_000)?;
    assert_eq!(
        (run.sent(), run.failed()),
        (3, 3),
        "each user stops at its first failure"
    );
    let error = run.records[0].error.clone().unwrap_or_default();
    assert!(
        error.starts_with(&format!("connecting to 127.0.0.1:{dead}: ")),
        "{error}"
    );
    Ok(())
}
