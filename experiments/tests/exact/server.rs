//! What the server answers and what a run accounts for. No timing is asserted here
//! except relative to a work time.

use perfshape_experiments::{Result, scenario::ServerStrategy};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::ConnectInfo;
use axum::routing::get as route;
use perfshape::client::Limits;
use perfshape::load::{Connection, FailureKind, Outcome};
use perfshape::{
    client::ClientStrategy, client::Lifecycle, client::LoadClient, runtime::Pool, runtime::Server,
};
use perfshape_experiments::vocab::WorkReport;

use crate::ms;

fn client(lifecycle: Lifecycle) -> Result<LoadClient> {
    Ok(LoadClient::new(Pool::workers("client", 1)?, lifecycle)?)
}

/// GET `url` and return (status, body).
fn get(client: &LoadClient, url: &str) -> (u16, String) {
    client.pool().block_on(async {
        let response = reqwest::get(url).await.expect("the server answers");
        let status = response.status().as_u16();
        (status, response.text().await.expect("a body"))
    })
}

#[test]
fn health_answers_ok() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    assert_eq!(
        get(
            &client(Lifecycle::Shared)?,
            &perfshape_experiments::demo::health_url(&server)
        ),
        (200, "ok".into())
    );
    Ok(())
}

#[test]
fn every_strategy_reports_who_served_it_and_the_pool_it_found() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 3)?)?;
    let client = client(Lifecycle::Shared)?;
    let strategies = [
        ServerStrategy::Blocking,
        ServerStrategy::Async,
        ServerStrategy::Offload,
        ServerStrategy::Mixed {
            block: ms(1),
            wait: ms(1),
        },
        ServerStrategy::Cpu,
        ServerStrategy::Lock,
    ];
    for strategy in strategies {
        let url = perfshape_experiments::demo::url(&server, &strategy, ms(2))?;
        let (status, body) = get(&client, &url);
        assert_eq!(status, 200, "{strategy}: {body}");
        let report: WorkReport = serde_json::from_str(&body).expect("a WorkReport");
        assert_eq!(report.strategy, strategy.name());
        assert!(report.end_us >= report.begin_us);
        assert_eq!(report.iterations.is_some(), strategy == ServerStrategy::Cpu);
        // Who served it and the runtime it found travel in headers, for any router.
        let run = client.run(ClientStrategy::Sequential, &url, 1)?;
        let record = &run.records[0];
        let served_by = record.served_by.as_deref().unwrap_or_default();
        assert!(served_by.starts_with("server-"), "{served_by}");
        assert_eq!(record.server_at_start.map(|f| f.num_workers), Some(3));
    }
    Ok(())
}

/// A user's router gets the same accounting as the demo's: the serving worker, the
/// connection (new, then reused), the accepted-connection count — and its own
/// `ConnectInfo<SocketAddr>` extractor still works.
#[test]
fn any_router_is_served_with_the_same_accounting() -> Result {
    let router = Router::new().route(
        "/whoami",
        route(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.to_string() }),
    );
    let server = Server::serve(Pool::workers("server", 2)?, router)?;
    let client = client(Lifecycle::Shared)?;
    let url = format!("{}/whoami", server.base_url());
    let (status, body) = get(&client, &url);
    assert_eq!(status, 200);
    assert!(body.starts_with("127.0.0.1:"), "{body}");
    let run = client.run(ClientStrategy::Sequential, &url, 3)?;
    assert_eq!((run.sent(), run.ok(), run.failed()), (3, 3, 0));
    let connections: Vec<_> = run.records.iter().map(|r| r.connection).collect();
    assert_eq!(
        connections,
        [Connection::New, Connection::Reused, Connection::Reused]
    );
    assert!(run.records.iter().all(|r| {
        r.served_by
            .as_deref()
            .is_some_and(|s| s.starts_with("server-"))
    }));
    // One from `get`'s own client, one from the load client.
    assert_eq!(server.accepted_connections(), 2);
    Ok(())
}

#[test]
fn out_of_range_or_missing_work_is_a_400_naming_the_parameter() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let client = client(Lifecycle::Shared)?;
    let base = format!("http://{}", server.addr());
    let cases = [
        (
            "/blocking?ms=60001",
            "ms=60001 is out of range (milliseconds, 0 to 60000)",
        ),
        (
            "/async",
            "missing query parameter ms (milliseconds, 0 to 60000)",
        ),
        (
            "/mixed?block_ms=1",
            "missing query parameter wait_ms (milliseconds, 0 to 60000)",
        ),
        (
            "/mixed?block_ms=40000&wait_ms=30000",
            "block_ms + wait_ms = 70000 is out of range",
        ),
    ];
    for (path, message) in cases {
        let (status, body) = get(&client, &format!("{base}{path}"));
        assert_eq!(status, 400, "{path}");
        assert!(body.contains(message), "{path}: {body}");
    }
    let (status, body) = get(&client, &format!("{base}/cpu?ms=ten"));
    assert_eq!(status, 400);
    assert!(body.contains("expected ?ms=N or ?iters=N"), "{body}");
    let (status, body) = get(&client, &format!("{base}/cpu?ms=1&iters=5"));
    assert_eq!(
        (status, body.as_str()),
        (400, "give ?ms=N or ?iters=N, not both")
    );
    let (status, body) = get(&client, &format!("{base}/cpu?iters=2000000000"));
    assert_eq!(
        (status, body.as_str()),
        (400, "iters=2000000000 is out of range (0 to 1000000000)")
    );
    let (status, body) = get(&client, &format!("{base}/cpu?iters=1000"));
    assert_eq!(status, 200);
    assert!(body.contains("\"iterations\":1000"), "{body}");
    Ok(())
}

#[test]
fn a_shared_client_reuses_one_connection_and_a_per_request_client_opens_one_each() -> Result {
    let n = 5;
    for (lifecycle, connections) in [(Lifecycle::Shared, 1), (Lifecycle::PerRequest, n)] {
        let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
        let client = client(lifecycle)?;
        let url = perfshape_experiments::demo::url(&server, &ServerStrategy::Async, ms(0))?;
        let run = client.run(ClientStrategy::Sequential, &url, n)?;
        assert_eq!((run.sent(), run.ok(), run.failed()), (n, n, 0));
        assert_eq!(
            server.accepted_connections(),
            connections as u64,
            "{lifecycle}"
        );
        let new = run
            .records
            .iter()
            .filter(|r| r.connection == Connection::New)
            .count();
        assert_eq!(new, connections, "{lifecycle}");
    }
    Ok(())
}

#[test]
fn failures_are_counted_by_kind_never_dropped() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let client = client(Lifecycle::Shared)?;
    let run = client.run(
        ClientStrategy::FanOut,
        &format!("http://{}/nowhere", server.addr()),
        7,
    )?;
    assert_eq!((run.sent(), run.ok(), run.failed()), (7, 0, 7));
    let summary = run.summary(ms(1));
    assert_eq!(summary.failures.get("status 404"), Some(&7));
    assert!(summary.latency.is_none());
    assert_eq!(
        run.require_ok().unwrap_err().to_string(),
        "GET /nowhere answered 404 in 7 of 7 requests; failed: #0, #1, #2, #3, #4, #5, #6: no figure is taken from a run with failed requests"
    );

    // A port nobody listens on: connection refused, counted as connect failures.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let addr = closed.local_addr().expect("an address");
    drop(closed);
    let run = client.run(ClientStrategy::Sequential, &format!("http://{addr}/"), 3)?;
    assert_eq!((run.sent(), run.ok(), run.failed()), (3, 0, 3));
    assert!(run.records.iter().all(|r| r.outcome
        == Outcome::Failed {
            kind: FailureKind::Connect
        }));
    let message = run.require_ok().unwrap_err().to_string();
    assert!(
        message.starts_with("GET / failed in 3 of 3 requests (connect: 3; first error: "),
        "{message}"
    );
    assert!(message.contains("Connection refused"), "{message}");
    Ok(())
}

#[test]
fn a_run_deadline_counts_what_it_did_not_send() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let limits = Limits {
        request_timeout: Duration::from_secs(5),
        run_deadline: ms(50),
    };
    let client = LoadClient::with_limits(Pool::workers("client", 1)?, Lifecycle::Shared, limits)?;
    let url = perfshape_experiments::demo::url(&server, &ServerStrategy::Async, ms(20))?;
    let run = client.run(ClientStrategy::Sequential, &url, 10)?;
    assert_eq!(run.sent(), 10);
    assert_eq!(run.sent(), run.ok() + run.failed());
    assert!(
        run.ok() >= 1 && run.failed() >= 1,
        "ok {} failed {}",
        run.ok(),
        run.failed()
    );
    let deadline = run.summary(ms(10)).failures.get("deadline").copied();
    assert_eq!(deadline, Some(run.failed()));
    Ok(())
}

#[test]
fn a_request_timeout_is_a_timeout_failure() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let limits = Limits {
        request_timeout: ms(30),
        run_deadline: Duration::from_secs(10),
    };
    let client = LoadClient::with_limits(Pool::workers("client", 1)?, Lifecycle::Shared, limits)?;
    let run = client.run(
        ClientStrategy::FanOut,
        &perfshape_experiments::demo::url(&server, &ServerStrategy::Async, ms(500))?,
        2,
    )?;
    assert_eq!((run.sent(), run.ok(), run.failed()), (2, 0, 2));
    assert_eq!(run.summary(ms(1)).failures.get("timeout"), Some(&2));
    Ok(())
}

/// Dropping a server whose only worker is stuck in a 2 s blocking sleep returns in a
/// small fraction of that sleep: the runtime is shut down in the background.
#[test]
fn dropping_a_server_with_blocked_workers_does_not_wait_for_them() -> Result {
    let work = Duration::from_secs(2);
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let limits = Limits {
        request_timeout: ms(100),
        run_deadline: Duration::from_secs(5),
    };
    let client = LoadClient::with_limits(Pool::workers("client", 1)?, Lifecycle::Shared, limits)?;
    // The request times out client-side while the worker keeps sleeping.
    let run = client.run(
        ClientStrategy::Sequential,
        &perfshape_experiments::demo::url(&server, &ServerStrategy::Blocking, work)?,
        1,
    )?;
    assert_eq!(run.failed(), 1);
    let started = Instant::now();
    drop(server);
    assert!(
        started.elapsed() < work / 4,
        "drop waited {:?}",
        started.elapsed()
    );
    Ok(())
}

/// An open loop never spawns past its cap: 20 requests intended 1 ms apart against one
/// worker blocked 50 ms per request, at most 2 in flight, send 2 and drop 18 — every one
/// accounted for.
#[test]
fn an_open_loop_drops_and_counts_what_its_cap_refuses() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let client = client(Lifecycle::Shared)?;
    let strategy = ClientStrategy::OpenLoop {
        rate: 1000.0,
        max_in_flight: 2,
    };
    let run = client.run(
        strategy,
        &perfshape_experiments::demo::url(&server, &ServerStrategy::Blocking, ms(50))?,
        20,
    )?;
    assert_eq!((run.sent(), run.ok(), run.failed()), (20, 2, 18));
    assert_eq!(run.summary(ms(25)).failures.get("dropped"), Some(&18));
    Ok(())
}

/// What each lifecycle does to TCP connections, counted by the server: a shared client
/// keeps one; a client per request opens one each; 4 pooled clients used in turn open 4; a
/// cap of 2 per host holds 20 concurrent requests to exactly 2 connections.
#[test]
fn lifecycles_open_the_connections_they_say() -> Result {
    let cases = [
        (Lifecycle::Shared, ClientStrategy::Sequential, 1),
        (Lifecycle::PerRequest, ClientStrategy::Sequential, 8),
        (
            Lifecycle::Pooled { clients: 4 },
            ClientStrategy::Sequential,
            4,
        ),
        (
            Lifecycle::ConnectionCap { per_host: 2 },
            ClientStrategy::FanOut,
            2,
        ),
    ];
    for (lifecycle, strategy, connections) in cases {
        let server = perfshape_experiments::demo::serve(Pool::workers("server", 2)?)?;
        let client = client(lifecycle)?;
        let url = perfshape_experiments::demo::url(&server, &ServerStrategy::Async, ms(5))?;
        for _ in 0..2 {
            let run = client.run(strategy, &url, 8)?;
            assert_eq!((run.sent(), run.ok()), (8, 8), "{lifecycle}");
        }
        // Twice the load, and still the same connections (a per-request client: twice).
        let expected = match lifecycle {
            Lifecycle::PerRequest => 2 * connections,
            _ => connections,
        };
        assert_eq!(
            server.accepted_connections(),
            expected as u64,
            "{lifecycle}"
        );
    }
    Ok(())
}

/// A blocking server cannot accept while its workers sleep, so new connections wait in the
/// kernel's accept queue. That queue must hold a fan-out's worth of them: with std's
/// backlog of 128, the 129th SYN was dropped and its client retried only after 1 s (then
/// 3 s), which made seed 002's 1000-request rows 1.8–5.5× the model in rounds that opened
/// new connections (nstat: ListenOverflows, TCPSynRetrans). Here 600 connections are
/// opened while the only worker sleeps in a handler; each must complete its handshake at
/// once.
#[test]
fn the_accept_queue_holds_a_fan_out_while_the_workers_block() -> Result {
    use std::io::Write as _;
    use std::net::TcpStream;
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let addr = server.addr();
    // Occupy the only worker for 1.5 s.
    let mut blocker = TcpStream::connect(addr).expect("a connection");
    write!(
        blocker,
        "GET /blocking?ms=1500 HTTP/1.1\r\nHost: {addr}\r\n\r\n"
    )
    .expect("a request");
    std::thread::sleep(ms(100));
    let started = Instant::now();
    let mut open = Vec::new();
    for i in 0..600 {
        match TcpStream::connect_timeout(&addr, ms(500)) {
            Ok(stream) => open.push(stream),
            Err(e) => panic!(
                "connection {} of 600 not accepted into the queue within 500 ms \
                 ({:?} after the first): {e}",
                i + 1,
                started.elapsed()
            ),
        }
    }
    assert!(
        started.elapsed() < ms(1000),
        "the worker was still blocked: every connection waited in the queue"
    );
    Ok(())
}
