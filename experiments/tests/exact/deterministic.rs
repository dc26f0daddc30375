//! The deterministic tier: shapes that need no wall clock.
//!
//! Async-only behaviour runs under tokio's paused time (current-thread runtime), where a
//! 20 ms sleep takes exactly 20 ms of virtual time, so these shapes are exact and compared
//! with the model to the nanosecond. Real blocking (`std::thread::sleep`,
//! `spawn_blocking`) never runs under paused time: the poll checks below use real time and
//! assert only how the handlers poll.

use perfshape_experiments::{model::Model, scenario::ServerStrategy};
use std::time::Duration;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use perfshape::{PoolSettings, client::ClientStrategy};
use perfshape_experiments::demo::app;
use perfshape_experiments::model::Offered;
use tokio::time::Instant;
use tokio_test::{assert_pending, assert_ready};
use tower::ServiceExt;

use crate::ms;

fn get(uri: &str) -> Request<Body> {
    Request::get(uri)
        .body(Body::empty())
        .expect("a valid request")
}

/// Calls the router (no socket) and checks the answer.
async fn call(router: &axum::Router, uri: &str) {
    let response = router.clone().oneshot(get(uri)).await.expect("infallible");
    assert_eq!(response.status(), StatusCode::OK, "{uri}");
}

fn model(client: ClientStrategy, n: usize, work: Duration) -> Model {
    let pool = PoolSettings::new(1, 512).expect("valid pool");
    Model::of(ServerStrategy::Async, pool, work, client, n)
}

/// seed 000's shape without a clock: awaiting each of 10 async requests in turn takes
/// exactly 10 work times, as the model says.
#[tokio::test(start_paused = true)]
async fn sequential_over_async_waits_takes_exactly_n_work_times() {
    let router = app();
    let start = Instant::now();
    for _ in 0..10 {
        call(&router, "/async?ms=20").await;
    }
    let predicted = model(ClientStrategy::Sequential, 10, ms(20))
        .predict()
        .unwrap()
        .wall;
    assert_eq!(start.elapsed(), predicted);
    assert_eq!(predicted, ms(200));
}

/// ... and fanning 100 of them out takes exactly one work time.
#[tokio::test(start_paused = true)]
async fn fan_out_over_async_waits_takes_exactly_one_work_time() {
    let router = app();
    let start = Instant::now();
    let mut calls = tokio::task::JoinSet::new();
    for _ in 0..100 {
        let router = router.clone();
        calls.spawn(async move { call(&router, "/async?ms=20").await });
    }
    while let Some(done) = calls.join_next().await {
        done.expect("no call panicked");
    }
    let predicted = model(ClientStrategy::FanOut, 100, ms(20))
        .predict()
        .unwrap()
        .wall;
    assert_eq!(start.elapsed(), predicted);
    assert_eq!(predicted, ms(20));
}

/// A closed loop of 3 users (20 ms work, 10 ms think, 300 ms) completes exactly what the
/// model predicts, and Little's law holds exactly in steady state.
#[tokio::test(start_paused = true)]
async fn a_closed_loop_completes_exactly_what_the_model_predicts() {
    let (users, work, think, duration) = (3, ms(20), ms(10), ms(300));
    let router = app();
    let start = Instant::now();
    let mut loops = tokio::task::JoinSet::new();
    for _ in 0..users {
        let router = router.clone();
        loops.spawn(async move {
            let mut completed = 0;
            loop {
                call(&router, "/async?ms=20").await;
                completed += 1;
                // As the model: the next request is sent only if its start is within the run.
                if start.elapsed() + think > duration {
                    return completed;
                }
                tokio::time::sleep(think).await;
            }
        });
    }
    let mut completed = 0;
    while let Some(done) = loops.join_next().await {
        completed += done.expect("no loop panicked");
    }
    let prediction = Model {
        offered: Offered::ClosedLoop {
            users,
            think,
            ramp: Duration::ZERO,
            duration,
        },
        ..model(ClientStrategy::Sequential, 1, work)
    }
    .predict()
    .unwrap();
    assert_eq!(completed, prediction.completed);
    assert_eq!(start.elapsed(), prediction.wall);
    // Each user completes at 20, 50, …, 290 ms; the 11th request is sent at 300 ms (still
    // within the run) and ends at 320 ms: 3 × 11 requests.
    assert_eq!((completed, prediction.wall), (33, ms(320)));
    let littles = prediction.throughput * (prediction.mean_latency + think.as_secs_f64());
    assert!((littles / users as f64 - 1.0).abs() < 0.04, "{littles}");
}

fn real_time_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

/// The async handler gives its thread back at once: Pending at its first poll.
#[test]
fn the_async_handler_is_pending_at_its_first_poll() {
    real_time_runtime().block_on(async {
        let mut handler = tokio_test::task::spawn(app().oneshot(get("/async?ms=10")));
        assert_pending!(handler.poll());
        let response = handler.await.expect("infallible");
        assert_eq!(response.status(), StatusCode::OK);
    });
}

/// The blocking handler never yields: its first poll returns the finished response, after
/// holding the thread for the whole work time.
#[test]
fn the_blocking_handler_never_yields() {
    real_time_runtime().block_on(async {
        let mut handler = tokio_test::task::spawn(app().oneshot(get("/blocking?ms=10")));
        let started = std::time::Instant::now();
        let response = assert_ready!(handler.poll()).expect("infallible");
        assert!(
            started.elapsed() >= ms(10),
            "the poll itself did the 10 ms of work"
        );
        assert_eq!(response.status(), StatusCode::OK);
    });
}

/// The offload handler hands the blocking work to the blocking pool and yields.
#[test]
fn the_offload_handler_yields() {
    real_time_runtime().block_on(async {
        let mut handler = tokio_test::task::spawn(app().oneshot(get("/offload?ms=10")));
        assert_pending!(handler.poll());
        let response = handler.await.expect("infallible");
        assert_eq!(response.status(), StatusCode::OK);
    });
}
