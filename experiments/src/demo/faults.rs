//! Faults on demand, so the load client's accounting can be tested against every way a
//! request fails: a share of 500s, a connection dropped mid-response, a stall past the
//! client's timeout.
//!
//! - `GET /fault/status?every=K&ms=N`: every K-th request (counted per server) answers
//!   500 after N ms of async work; the others 200.
//! - `GET /fault/drop?ms=N`: after N ms, a streamed body whose second chunk is an error:
//!   the server aborts the connection mid-response, and the client sees the body cut short.
//! - `GET /fault/stall?ms=N`: answers 200 after N ms of async work — past the client's
//!   timeout when N is larger.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Deserialize;

use perfshape::runtime::MAX_WORK;

/// `?every=K&ms=N`.
#[derive(Deserialize)]
struct FaultQuery {
    every: Option<u64>,
    ms: Option<u64>,
}

impl FaultQuery {
    /// The wait, capped at [`MAX_WORK`] so a typo cannot stall a server for hours.
    fn wait(&self) -> Duration {
        Duration::from_millis(self.ms.unwrap_or(0)).min(MAX_WORK)
    }
}

/// The fault routes, with their own request counter.
pub(crate) fn routes() -> Router {
    Router::new()
        .route("/fault/status", get(status))
        .route("/fault/drop", get(drop_mid_response))
        .route("/fault/stall", get(stall))
        .with_state(Arc::new(AtomicU64::new(0)))
}

async fn status(State(count): State<Arc<AtomicU64>>, Query(query): Query<FaultQuery>) -> Response {
    tokio::time::sleep(query.wait()).await;
    let nth = count.fetch_add(1, Ordering::Relaxed) + 1;
    match query.every {
        Some(every) if every > 0 && nth % every == 0 => (
            StatusCode::INTERNAL_SERVER_ERROR,
            "fault: every k-th request fails",
        )
            .into_response(),
        _ => "ok".into_response(),
    }
}

async fn drop_mid_response(Query(query): Query<FaultQuery>) -> Response {
    tokio::time::sleep(query.wait()).await;
    Body::new(CutShort {
        sent: false,
        pause: Box::pin(tokio::time::sleep(Duration::from_millis(5))),
    })
    .into_response()
}

/// A body that sends one chunk, and fails 5 ms later (once the headers and the chunk are
/// on the wire): hyper aborts the connection mid-response.
struct CutShort {
    sent: bool,
    pause: Pin<Box<tokio::time::Sleep>>,
}

impl HttpBody for CutShort {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Self::Error>>> {
        if self.sent {
            std::task::ready!(self.pause.as_mut().poll(cx));
            Poll::Ready(Some(Err(std::io::Error::other(
                "fault: dropped mid-response",
            ))))
        } else {
            self.sent = true;
            Poll::Ready(Some(Ok(http_body::Frame::data(Bytes::from_static(
                b"the first chunk",
            )))))
        }
    }
}

async fn stall(Query(query): Query<FaultQuery>) -> &'static str {
    tokio::time::sleep(query.wait()).await;
    "ok"
}
