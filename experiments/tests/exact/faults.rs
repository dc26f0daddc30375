//! Every way a request can fail is accounted for: a share of 500s, a connection dropped
//! mid-response, a stall past the client's timeout — `sent == ok + failed`, failures by
//! kind — and a claim refuses to judge a run with failures, naming which failed and why.

use perfshape_experiments::demo::{Demo, DemoRoutes};
use perfshape_experiments::{Result, scenario::ServerStrategy};
use std::time::Duration;

use perfshape::client::Limits;
use perfshape::{
    PoolSettings, Target, Verdict, client::ClientStrategy, client::Lifecycle, client::LoadClient,
    runtime::Pool,
};

use crate::ms;

fn client(limits: Limits) -> Result<LoadClient> {
    Ok(LoadClient::with_limits(
        Pool::workers("client", 1)?,
        Lifecycle::Shared,
        limits,
    )?)
}

fn limits(timeout: Duration) -> Limits {
    Limits {
        request_timeout: timeout,
        run_deadline: Duration::from_secs(10),
    }
}

#[test]
fn a_share_of_500s_is_counted_by_status() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let client = client(limits(Duration::from_secs(5)))?;
    let url = format!("{}/fault/status?every=3&ms=1", server.base_url());
    let run = client.run(ClientStrategy::FanOut, &url, 12)?;
    assert_eq!((run.sent(), run.ok(), run.failed()), (12, 8, 4));
    assert_eq!(run.summary(ms(1)).failures.get("status 500"), Some(&4));
    let message = run.require_ok().unwrap_err().to_string();
    assert!(
        message.starts_with(
            "GET /fault/status?every=3&ms=1 answered 500 in 4 of 12 requests; failed: #"
        ),
        "{message}"
    );
    Ok(())
}

#[test]
fn a_connection_dropped_mid_response_is_a_body_failure() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let client = client(limits(Duration::from_secs(5)))?;
    let url = format!("{}/fault/drop?ms=1", server.base_url());
    let run = client.run(ClientStrategy::Sequential, &url, 5)?;
    assert_eq!((run.sent(), run.ok(), run.failed()), (5, 0, 5));
    assert_eq!(
        run.summary(ms(1)).failures.get("body"),
        Some(&5),
        "{:?} {:?}",
        run.summary(ms(1)).failures,
        run.records[0].error
    );
    let message = run.require_ok().unwrap_err().to_string();
    assert!(
        message.contains("failed in 5 of 5 requests (body: 5; first error: "),
        "{message}"
    );
    // A dropped connection is not reused: each request needed a new one.
    assert_eq!(server.accepted_connections(), 5);
    Ok(())
}

#[test]
fn a_stall_past_the_timeout_is_a_timeout_failure() -> Result {
    let server = perfshape_experiments::demo::serve(Pool::workers("server", 1)?)?;
    let client = client(limits(ms(50)))?;
    let url = format!("{}/fault/stall?ms=400", server.base_url());
    let run = client.run(ClientStrategy::FanOut, &url, 3)?;
    assert_eq!((run.sent(), run.ok(), run.failed()), (3, 0, 3));
    assert_eq!(run.summary(ms(1)).failures.get("timeout"), Some(&3));
    assert!(matches!(
        run.require_ok().unwrap_err(),
        perfshape::Error::TooSlow { .. }
    ));
    Ok(())
}

/// A claim on an endpoint that answers 500 now and then ends with an error that names the
/// endpoint, the status, how many and which — no verdict measured on failures.
#[test]
fn a_claim_refuses_a_run_with_failures() -> Result {
    let target = perfshape_experiments::demo::target(PoolSettings::workers(1)?)?;
    // The endpoint's first request is the 1st; every 4th fails, so the claim's runs do.
    let faulty = target.checked_get("/fault/status?every=4&ms=1")?;
    let err = faulty
        .does_not_block_its_worker()
        .artifacts_in(crate::scratch())
        .check()
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("GET /fault/status?every=4&ms=1 answered 500 in "),
        "{message}"
    );
    assert!(message.contains("; failed: #"), "{message}");
    Ok(())
}

/// A side that runs past its time limit ends its claim inconclusive, with a report that
/// says so and the rounds measured so far — never in the test runner's kill.
#[test]
fn a_side_past_its_time_limit_ends_the_claim_with_a_report() -> Result {
    let target = Target::builder()
        .limits(limits(ms(120)))
        .demo(PoolSettings::workers(1)?)?;
    // One 50 ms request passes; 10 at once on one blocking worker queue past 120 ms.
    let slow = target.demo_endpoint(ServerStrategy::Blocking, ms(50))?;
    let checked = slow
        .does_not_block_its_worker()
        .artifacts_in(crate::scratch())
        .check()?;
    assert_eq!(
        checked.verdict(),
        Verdict::Inconclusive,
        "{}",
        checked.report()
    );
    let reason = &checked.report().reason();
    assert!(reason.contains("ran past its time limit"), "{reason}");
    assert!(
        checked.gate().is_err(),
        "inconclusive fails the strict gate"
    );
    Ok(())
}

/// A load that ends on a bound says which and when: a closed loop of 5 s that reaches its
/// cap of 40 requests first, one that runs into the run's deadline, and one that ends on
/// its own time (no bound).
#[test]
fn a_load_cut_short_by_a_bound_says_which_and_when() -> perfshape_experiments::Result {
    use perfshape::load::CutShort;
    use perfshape::{
        client::ClientStrategy, client::Lifecycle, client::LoadClient, runtime::Pool,
        runtime::Server,
    };
    use std::time::Duration;

    let server = Server::serve(
        Pool::workers("server", 1)?,
        axum::Router::new().route("/ok", axum::routing::get(|| async { "ok" })),
    )?;
    let url = format!("{}/ok", server.base_url());
    let looping = |seconds: f64| ClientStrategy::ClosedLoop {
        users: 2,
        think: Duration::ZERO,
        ramp: Duration::ZERO,
        duration: Duration::from_secs_f64(seconds),
    };
    let unbounded = LoadClient::new(Pool::workers("client", 1)?, Lifecycle::Shared)?;
    let run = unbounded.run(looping(5.0), &url, 40)?;
    assert_eq!(run.sent(), 40);
    match run.cut_short {
        Some(CutShort::Requests { n: 40, at, meant }) => {
            assert!(at < meant && meant == Duration::from_secs(5), "{at:?}");
        }
        other => panic!("the request bound, not {other:?}"),
    }
    let summary = run.summary(Duration::from_millis(1));
    assert!(
        summary.cut_short.is_some_and(|c| c
            .to_string()
            .starts_with("cut short by its bound of 40 requests at ")),
        "{summary:?}"
    );
    let run = unbounded.run(looping(0.05), &url, 100_000)?;
    assert_eq!(run.cut_short, None, "ended on its own time");
    let bounded = client(Limits {
        request_timeout: Duration::from_secs(1),
        run_deadline: Duration::from_millis(100),
    })?;
    let run = bounded.run(looping(2.0), &url, 100_000)?;
    assert_eq!(
        run.cut_short,
        Some(CutShort::Deadline {
            at: Duration::from_millis(100)
        })
    );
    Ok(())
}
