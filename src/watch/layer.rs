//! The watch as a tower layer, for the functional tests that call a router where they run
//! — `tower::ServiceExt::oneshot` on the test's own runtime, as axum's testing example
//! does, or axum-test's `TestServer` — rather than through a target perfshape serves.
//!
//! The layer times every poll of each response it wraps, its future's and its body's, on
//! the thread that polls it, with the same clocks a served router's polls are timed by
//! (`thread_clock`): computing, asleep in the kernel, preempted. While the watch runs, each
//! thread that polls through the layer is sampled for the call it sleeps in, as a served
//! pool's workers are (`pool::sampler`), so a report names the call and the line.
//!
//! What it cannot see, and a served target can ([`Target::watch`](crate::Target::watch)):
//! a task a handler spawned, a connection's driver or a background job — anything the
//! threads run outside the layer's own polls; and tokio's `block_in_place` hand-off, which
//! only a pool perfshape builds is hooked to tell (a handler that hands its core off reads
//! as holding its thread here).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;

use crate::pool::sampler::{Sampler, route_key};
use crate::server::ledger::{Ledger, Served};
use crate::server::trace::{AtDrop, Marks, Timed, TimedBody};
use crate::vocab::Held;

/// What a watch layer shares with its watch: the responses it recorded, and the sampler of
/// the threads that polled them.
#[derive(Debug, Default)]
pub(crate) struct Layered {
    pub(crate) ledger: Arc<Ledger>,
    pub(crate) sampler: Arc<Sampler>,
}

impl Layered {
    /// Starts sampling the threads that poll through the layer, for as long as the ledger
    /// records.
    pub(crate) fn sample(&self) {
        let ledger = Arc::downgrade(&self.ledger);
        self.sampler
            .start(move || ledger.upgrade().is_some_and(|l| l.recording()));
    }
}

/// A tower layer that puts a router under a [`Watch`](crate::Watch): every response it
/// serves is recorded, its polls timed on the thread that runs them, until the watch's
/// [`nothing_blocked`](crate::Watch::nothing_blocked) decides. Made with its watch by
/// [`Watch::layer`](crate::Watch::layer).
///
/// ```
/// use axum::{Router, body::Body, http::Request, routing::get};
/// use perfshape::{Verdict, Watch};
/// use tower::ServiceExt; // oneshot
///
/// #[tokio::main(flavor = "current_thread")] // #[tokio::test] in a test
/// async fn main() -> perfshape::Result {
///     let (layer, watch) = Watch::layer();
///     let app = Router::new()
///         .route("/health", get(|| async { "ok" }))
///         .layer(layer);
///     let response = app
///         .oneshot(Request::get("/health").body(Body::empty()).unwrap())
///         .await
///         .unwrap();
///     assert_eq!(response.status(), 200);
///     assert_eq!(watch.nothing_blocked()?.verdict(), Verdict::Holds);
///     Ok(())
/// }
/// ```
#[derive(Clone, Debug)]
pub struct WatchLayer {
    layered: Arc<Layered>,
}

impl WatchLayer {
    pub(crate) fn new(layered: Arc<Layered>) -> WatchLayer {
        WatchLayer { layered }
    }
}

impl<S> tower_layer::Layer<S> for WatchLayer {
    type Service = WatchService<S>;

    fn layer(&self, inner: S) -> WatchService<S> {
        WatchService {
            inner,
            layered: Arc::clone(&self.layered),
        }
    }
}

/// A service under a [`WatchLayer`]: its responses' polls recorded while the watch runs.
/// Its responses' bodies are axum's `Body`, whatever the service's were.
#[derive(Clone, Debug)]
pub struct WatchService<S> {
    inner: S,
    layered: Arc<Layered>,
}

/// The future of a [`WatchService`]'s response.
type Responding<E> = Pin<Box<dyn Future<Output = Result<axum::http::Response<Body>, E>> + Send>>;

impl<S, In, Out> tower_service::Service<axum::http::Request<In>> for WatchService<S>
where
    S: tower_service::Service<axum::http::Request<In>, Response = axum::http::Response<Out>>,
    S::Future: Send + 'static,
    Out: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    Out::Error: Into<axum::BoxError>,
{
    type Response = axum::http::Response<Body>;
    type Error = S::Error;
    type Future = Responding<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: axum::http::Request<In>) -> Self::Future {
        let ledger = Arc::clone(&self.layered.ledger);
        let recording = ledger.recording();
        let seq = ledger.next_seq();
        let (method, path) = (
            request.method().to_string(),
            request.uri().path().to_string(),
        );
        let sampler = Arc::clone(&self.layered.sampler);
        let route = sampler.route(&route_key(&method, &path));
        let marks = Marks::Layer(sampler, route);
        let responding = self.inner.call(request);
        Box::pin(async move {
            let (response, (held, spans)) = Timed::new(responding, recording, marks.clone()).await;
            let response = response?;
            if !recording {
                return Ok(response.map(Body::new));
            }
            // Kept now: the test may still hold the response when its watch decides. Its
            // body's polls are added when it is dropped, if the watch has not decided yet.
            let served = Served {
                method,
                path,
                status: response.status().as_u16(),
                held,
                spans,
            };
            // The body's own polls, from none.
            let body = Served {
                held: Held::default(),
                spans: Vec::new(),
                ..served.clone()
            };
            ledger.keep(seq, served);
            Ok(response.map(|inner| {
                Body::new(TimedBody::new(
                    inner,
                    body,
                    AtDrop::Amend,
                    seq,
                    ledger,
                    marks,
                ))
            }))
        })
    }
}
