//! The demo service's strategy routes: one per
//! [`ServerStrategy`](crate::vocab::ServerStrategy), plus `/health`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use crate::kernel::{compute_for, compute_iterations};
use crate::vocab::WorkReport;
use perfshape::runtime::{MAX_ITERATIONS, MAX_WORK};

/// What the handlers share: the server's epoch and the lock of the `Lock` strategy.
#[derive(Clone)]
pub(crate) struct AppState {
    epoch: Instant,
    lock: Arc<Mutex<()>>,
}

impl AppState {
    pub(crate) fn new(epoch: Instant) -> Self {
        AppState {
            epoch,
            lock: Arc::new(Mutex::new(())),
        }
    }

    fn micros(&self, at: Instant) -> u64 {
        u64::try_from(at.duration_since(self.epoch).as_micros()).unwrap_or(u64::MAX)
    }
}

/// The demo router; its state's epoch is the zero of every report's `begin_us`/`end_us`.
pub(crate) fn app(state: AppState) -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/blocking", get(blocking))
        .route("/async", get(asynchronous))
        .route("/offload", get(offload))
        .route("/mixed", get(mixed))
        .route("/cpu", get(cpu))
        .route("/lock", get(lock))
        .with_state(state)
}

/// `?ms=N`: the work time in milliseconds.
#[derive(Deserialize)]
struct WorkQuery {
    ms: Option<u64>,
}

/// `?ms=N` or `?iters=N` for the CPU handler: a duration, or a fixed amount of computation.
#[derive(Deserialize)]
struct CpuQuery {
    ms: Option<u64>,
    iters: Option<u64>,
}

/// `?block_ms=N&wait_ms=M` for the mixed handler.
#[derive(Deserialize)]
struct MixedQuery {
    block_ms: Option<u64>,
    wait_ms: Option<u64>,
}

/// A 400 with a message that names the parameter and the allowed range.
struct BadRequest(String);

impl IntoResponse for BadRequest {
    fn into_response(self) -> Response {
        (StatusCode::BAD_REQUEST, self.0).into_response()
    }
}

fn millis(name: &str, value: Option<u64>) -> Result<Duration, BadRequest> {
    let max = MAX_WORK.as_millis();
    match value {
        None => Err(BadRequest(format!(
            "missing query parameter {name} (milliseconds, 0 to {max})"
        ))),
        Some(ms) if u128::from(ms) > max => Err(BadRequest(format!(
            "{name}={ms} is out of range (milliseconds, 0 to {max})"
        ))),
        Some(ms) => Ok(Duration::from_millis(ms)),
    }
}

fn work_time(query: Result<Query<WorkQuery>, QueryRejection>) -> Result<Duration, BadRequest> {
    let Query(query) = query.map_err(|e| BadRequest(format!("{e} (expected ?ms=N)")))?;
    millis("ms", query.ms)
}

/// The bookkeeping every handler does around its work, so each handler is only its work.
/// (Which thread served it and over which connection, the tracing layer adds for every
/// router.)
struct Served {
    state: AppState,
    strategy: &'static str,
    begin: Instant,
}

impl Served {
    fn begin(state: AppState, strategy: &'static str) -> Self {
        Served {
            state,
            strategy,
            begin: Instant::now(),
        }
    }

    fn end(self, iterations: Option<u64>) -> Json<WorkReport> {
        Json(WorkReport {
            strategy: self.strategy.to_string(),
            begin_us: self.state.micros(self.begin),
            end_us: self.state.micros(Instant::now()),
            iterations,
        })
    }
}

type Work = Result<Json<WorkReport>, BadRequest>;

async fn blocking(
    State(state): State<AppState>,
    query: Result<Query<WorkQuery>, QueryRejection>,
) -> Work {
    let work = work_time(query)?;
    let served = Served::begin(state, "blocking");
    // The point of this strategy: the worker thread can do nothing else meanwhile.
    std::thread::sleep(work);
    Ok(served.end(None))
}

async fn asynchronous(
    State(state): State<AppState>,
    query: Result<Query<WorkQuery>, QueryRejection>,
) -> Work {
    let work = work_time(query)?;
    let served = Served::begin(state, "async");
    tokio::time::sleep(work).await;
    Ok(served.end(None))
}

async fn offload(
    State(state): State<AppState>,
    query: Result<Query<WorkQuery>, QueryRejection>,
) -> Work {
    let work = work_time(query)?;
    let served = Served::begin(state, "offload");
    tokio::task::spawn_blocking(move || std::thread::sleep(work))
        .await
        .map_err(|e| BadRequest(format!("the offloaded work failed: {e}")))?;
    Ok(served.end(None))
}

async fn mixed(
    State(state): State<AppState>,
    query: Result<Query<MixedQuery>, QueryRejection>,
) -> Work {
    let Query(query) =
        query.map_err(|e| BadRequest(format!("{e} (expected ?block_ms=N&wait_ms=M)")))?;
    let block = millis("block_ms", query.block_ms)?;
    let wait = millis("wait_ms", query.wait_ms)?;
    if block + wait > MAX_WORK {
        return Err(BadRequest(format!(
            "block_ms + wait_ms = {} is out of range (milliseconds, 0 to {})",
            (block + wait).as_millis(),
            MAX_WORK.as_millis()
        )));
    }
    let served = Served::begin(state, "mixed");
    std::thread::sleep(block);
    tokio::time::sleep(wait).await;
    Ok(served.end(None))
}

async fn cpu(
    State(state): State<AppState>,
    query: Result<Query<CpuQuery>, QueryRejection>,
) -> Work {
    let Query(query) =
        query.map_err(|e| BadRequest(format!("{e} (expected ?ms=N or ?iters=N)")))?;
    match (query.ms, query.iters) {
        (None, Some(iters)) if iters > MAX_ITERATIONS => Err(BadRequest(format!(
            "iters={iters} is out of range (0 to {MAX_ITERATIONS})"
        ))),
        (None, Some(iters)) => {
            let served = Served::begin(state, "cpu");
            std::hint::black_box(compute_iterations(iters));
            Ok(served.end(Some(iters)))
        }
        (Some(_), Some(_)) => Err(BadRequest("give ?ms=N or ?iters=N, not both".into())),
        (ms, None) => {
            let work = millis("ms", ms)?;
            let served = Served::begin(state, "cpu");
            Ok(served.end(Some(compute_for(work))))
        }
    }
}

async fn lock(
    State(state): State<AppState>,
    query: Result<Query<WorkQuery>, QueryRejection>,
) -> Work {
    let work = work_time(query)?;
    let lock = Arc::clone(&state.lock);
    let served = Served::begin(state, "lock");
    // A poisoned lock still serialises; the work is a sleep, so no state can be torn.
    let guard = lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    std::thread::sleep(work);
    drop(guard);
    Ok(served.end(None))
}
