//! The layer every served router gets: each response says which thread started its
//! handler, which connection carried it, and what the runtime looked like then.
//!
//! This is what seed 000's server printed for each request, for any router — a user's as
//! much as perfshape's demo — so a verdict about a user's handler can name the worker;
//! and how long the handler's future held that worker ([`Held`]), timed poll by poll.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderName, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

use crate::vocab::RuntimeFigures;
use crate::vocab::wire::{HELD, Held, PEER, RUNTIME, SERVED_BY};

/// Wraps `router` so that every response carries the served-by, peer and runtime headers.
pub(crate) fn traced(router: axum::Router) -> axum::Router {
    router.layer(axum::middleware::from_fn(stamp))
}

async fn stamp(request: Request, next: Next) -> Response {
    // Read before the handler runs: it is polled on this thread, now, and may block it.
    let served_by = std::thread::current()
        .name()
        .unwrap_or("unnamed")
        .to_string();
    let figures = runtime_figures();
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| *addr);
    let (mut response, held) = Timed::new(next.run(request)).await;
    let headers = response.headers_mut();
    let mut set = |name: &'static str, value: String| {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(name), value);
        }
    };
    set(SERVED_BY, served_by);
    set(RUNTIME, figures.to_string());
    set(HELD, held.to_string());
    if let Some(peer) = peer {
        set(PEER, peer.to_string());
    }
    response
}

/// The runtime's stable metrics, read on the runtime the caller runs on.
pub(crate) fn runtime_figures() -> RuntimeFigures {
    let metrics = tokio::runtime::Handle::current().metrics();
    RuntimeFigures {
        num_workers: metrics.num_workers(),
        num_alive_tasks: metrics.num_alive_tasks(),
        global_queue_depth: metrics.global_queue_depth(),
    }
}

/// A future whose polls are timed: each poll is time its worker could run nothing else.
struct Timed<F> {
    inner: Pin<Box<F>>,
    held: Held,
}

impl<F: Future> Timed<F> {
    fn new(inner: F) -> Self {
        Timed {
            inner: Box::pin(inner),
            held: Held::default(),
        }
    }
}

impl<F: Future> Future for Timed<F> {
    type Output = (F::Output, Held);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let started = Instant::now();
        let polled = self.inner.as_mut().poll(cx);
        let took: Duration = started.elapsed();
        let held = &mut self.held;
        held.polls = held.polls.saturating_add(1);
        held.longest = held.longest.max(took);
        held.total += took;
        match polled {
            Poll::Ready(output) => Poll::Ready((output, self.held)),
            Poll::Pending => Poll::Pending,
        }
    }
}
