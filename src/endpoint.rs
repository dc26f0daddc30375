//! An endpoint of a [`Target`]: a request template — method, path and query, headers,
//! body, optionally varied per request — and what a claim needs of it (its plan, a
//! preflight, one request alone). The ready-made claims about it live in
//! [`claims`](crate::claims), a file each.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::client::{Plan, Request, Vary};
use crate::error::{Refused, Result, check_range};
use crate::limits::MAX_REQUESTS;
use crate::run::Run;
use crate::target::Target;

use crate::vocab::{Allowance, ClientStrategy, Held, PoolSettings};

/// A comparison's fan-out ([`Endpoint::faster_than`]): at least this many requests, and
/// at least [`COMPARISON_PER_WORKER`] per server worker, so a handler holding its worker
/// stands out by far.
pub(crate) const COMPARISON_FAN_OUT: usize = 10;
/// See [`COMPARISON_FAN_OUT`].
const COMPARISON_PER_WORKER: usize = 4;

/// A request template on a [`Target`] — method, path and query, headers, body, and
/// optionally a generator that varies it per request — and the ready-made shape claims
/// about it.
///
/// An endpoint owns a clone of its target (a cheap handle), so it is `'static` and
/// `Send`: a helper can return one, and its claims can be awaited in an async test.
///
/// ```
/// use axum::{Json, Router, routing::post};
/// use perfshape::{PoolSettings, Target, Verdict};
///
/// // A handler that waits asynchronously: it gives its worker back while it waits.
/// let router = Router::new().route("/orders", post(|Json(order): Json<serde_json::Value>| async move {
///     tokio::time::sleep(std::time::Duration::from_millis(20)).await;
///     Json(order)
/// }));
/// let target = Target::serve(PoolSettings::workers(1)?, router)?;
/// let order = serde_json::json!({ "item": "tea" });
/// let checked = target
///     .post("/orders")
///     .json(&order)
///     .bearer_auth("secret")
///     .does_not_block_its_worker()
///     .check()?;
/// assert_eq!(checked.verdict(), Verdict::Holds);
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone)]
pub struct Endpoint {
    target: Target,
    request: Request,
    vary: Option<Vary>,
    concurrency: Option<usize>,
    allowance: Allowance,
    /// The holds its team accepts ([`allow`](Self::allow)).
    allows: Vec<crate::vocab::Allow>,
    /// The first setting refused on the way here ([`concurrency`](Self::concurrency), a
    /// poll budget), named by the first request or the claim's `check()`.
    refused: Option<Refused>,
    /// The redirects (3xx statuses) its requests were answered with, shared by its clones:
    /// a claim names them ([`Endpoint::naming_redirects`]), since the request it judges is the
    /// one that answered them, not the page they point to.
    redirects: Arc<Mutex<BTreeSet<u16>>>,
    /// The next number its generator is given ([`vary`](Self::vary)), shared by its clones
    /// and so by every load of its claims: a number is never given twice.
    numbering: Arc<AtomicUsize>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("target", &self.target.to_string())
            .field("request", &self.request.to_string())
            .field("varied", &self.vary.is_some())
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

impl Endpoint {
    /// Adds a header to every request (as reqwest's `RequestBuilder::header`).
    pub fn header<K, V>(self, name: K, value: V) -> Self
    where
        K: TryInto<reqwest::header::HeaderName>,
        K::Error: std::fmt::Display,
        V: TryInto<reqwest::header::HeaderValue>,
        V::Error: std::fmt::Display,
    {
        self.map(|r| r.header(name, value))
    }

    /// `Authorization: Bearer <token>` on every request.
    pub fn bearer_auth(self, token: impl std::fmt::Display) -> Self {
        self.map(|r| r.bearer_auth(token))
    }

    /// The same body on every request (bytes or text).
    pub fn body(self, body: impl Into<bytes::Bytes>) -> Self {
        self.map(|r| r.body(body))
    }

    /// The same JSON body on every request, serialised once by serde (a value that cannot
    /// be serialised is named before any load).
    pub fn json<T: serde::Serialize + ?Sized>(self, value: &T) -> Self {
        self.map(|r| r.json(value))
    }

    /// The same form body on every request (`application/x-www-form-urlencoded`, as an
    /// HTML form posts), encoded once by serde.
    pub fn form<T: serde::Serialize + ?Sized>(self, value: &T) -> Self {
        self.map(|r| r.form(value))
    }

    /// Varies the request per request: `vary(i, template)` returns the request numbered `i`
    /// — ids, cursors, bodies that differ. The numbers run 0, 1, 2, … across every load of
    /// this endpoint's claims (every round, the warm-up, the request alone), in the order
    /// the requests are built, and none is given twice: a request that must differ across
    /// the whole claim (a new account, a picture not yet cached) needs no counter of its
    /// own. It runs on the load
    /// client's workers as each request is sent; one that panics or returns a request that
    /// cannot be built is named with its index, and its request counted as failed.
    ///
    /// ```
    /// use perfshape::{Request, Target};
    /// # let target = Target::serve(perfshape::PoolSettings::workers(1)?, axum::Router::new())?;
    /// let orders = target.post("/orders").bearer_auth("secret").vary(|i, request: Request| {
    ///     request.json(&serde_json::json!({ "id": i, "item": "tea" }))
    /// });
    /// # let _ = orders;
    /// # Ok::<(), perfshape::Error>(())
    /// ```
    pub fn vary(
        mut self,
        vary: impl Fn(usize, Request) -> Request + Send + Sync + 'static,
    ) -> Self {
        self.vary = Some(Arc::new(vary));
        self
    }

    /// `request` on `target`, sent as it is.
    pub(crate) fn new(target: &Target, request: Request) -> Endpoint {
        Endpoint {
            target: target.clone(),
            request,
            vary: None,
            concurrency: None,
            allowance: Allowance::default(),
            allows: Vec::new(),
            refused: None,
            redirects: Arc::default(),
            numbering: Arc::default(),
        }
    }

    fn map(mut self, f: impl FnOnce(Request) -> Request) -> Self {
        self.request = f(self.request);
        self
    }

    /// This endpoint's next request: the template, or the generator's with the next number
    /// (a traffic mix builds each route's requests so).
    pub(crate) fn next_request(&self) -> Request {
        match &self.vary {
            Some(vary) => vary(
                self.numbering.fetch_add(1, Ordering::Relaxed),
                self.request.clone(),
            ),
            None => self.request.clone(),
        }
    }

    /// What this endpoint's load is made of, checked: refused before anything is sent
    /// when the template (or the generator's first request) cannot be built.
    pub(crate) fn plan(&self) -> Result<Plan> {
        if let Some(refused) = &self.refused {
            return Err(refused.to_error());
        }
        Ok(
            Plan::new(self.target.base(), &self.request, self.vary.clone())?
                .numbered(self.numbering.clone()),
        )
    }

    /// Sends the first request once, refusing anything but a 2xx or a 3xx (a redirect, the route's answer, not followed): a broken endpoint
    /// fails here, with its status or connect error (`POST /orders answered 401 in 1 of 1
    /// requests`), before any load is offered. Every ready-made claim does this first.
    pub fn preflight(&self) -> Result<()> {
        self.run(ClientStrategy::Sequential, 1).map(drop)
    }

    /// The target this endpoint belongs to.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The request template.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The path and query, e.g. `/orders?limit=10`.
    pub fn path(&self) -> &str {
        self.request.path()
    }

    /// How claims name this endpoint: its path for a GET (`/report`), else method and path
    /// (`POST /orders`).
    pub fn name(&self) -> String {
        if self.request.method() == reqwest::Method::GET {
            self.request.path().to_string()
        } else {
            self.request.to_string()
        }
    }

    /// The full URL.
    pub fn url(&self) -> String {
        format!("{}{}", self.target.base(), self.request.path())
    }

    /// The number of concurrent requests a claim fans out to this endpoint (1..=100,000;
    /// another number is named by the claim's `check()`, or by the first request).
    /// Default: 20 per server worker for
    /// [`does_not_block_its_worker`](Self::does_not_block_its_worker), 10 or 4 per worker
    /// for [`faster_than`](Self::faster_than), the server's workers for
    /// [`keeps_answering_during`](Self::keeps_answering_during).
    pub fn concurrency(mut self, n: usize) -> Self {
        if let Some(n) = Refused::keep(
            &mut self.refused,
            check_range("concurrency", n, 1, MAX_REQUESTS, ""),
        ) {
            self.concurrency = Some(n);
        }
        self
    }

    /// The first setting this endpoint's chain refused, for the claims made of it.
    pub(crate) fn refused(&self) -> Option<Refused> {
        self.refused.clone()
    }

    /// Keeps what `result` refused, as the chain's first refusal unless it has one.
    pub(crate) fn keep<T>(&mut self, result: Result<T>) -> Option<T> {
        Refused::keep(&mut self.refused, result)
    }

    /// Sends `n` requests the way `strategy` says and returns the run, refusing one with
    /// failed requests (`GET /orders answered 500 in 3 of 20 requests`).
    pub fn run(&self, strategy: ClientStrategy, n: usize) -> Result<Run> {
        let run = self.target.run_plan(strategy, &self.plan()?, n, None)?;
        run.require_ok()?;
        let mut redirects = self.redirects.lock().unwrap_or_else(|p| p.into_inner());
        for record in run.records.iter().filter(|r| r.outcome.is_redirect()) {
            if let crate::record::Outcome::Ok { status } = record.outcome {
                redirects.insert(status);
            }
        }
        drop(redirects);
        Ok(run)
    }

    /// `claim`, keeping the fact where this endpoint was answered with a redirect — `POST
    /// /login answers: 303 See Other, a redirect: judged as the route's answer (not
    /// followed; …)` — asked as the claim decides (its preflight has sent a request by then).
    pub(crate) fn naming_redirects<'a>(&self, claim: crate::Claim<'a>) -> crate::Claim<'a> {
        let redirects = self.redirects.clone();
        claim.fact_when(format!("{} answers", self.name()), move || {
            let seen = redirects.lock().unwrap_or_else(|p| p.into_inner());
            let named: Vec<String> = seen
                .iter()
                .map(|&status| {
                    let reason = reqwest::StatusCode::from_u16(status)
                        .ok()
                        .and_then(|s| s.canonical_reason());
                    match reason {
                        Some(reason) => format!("{status} {reason}"),
                        None => status.to_string(),
                    }
                })
                .collect();
            (!named.is_empty()).then(|| {
                format!(
                    "{}, a redirect: judged as the route's answer (not followed; the page it points to is another request)",
                    named.join(" or ")
                )
            })
        })
    }

    /// One request alone: its time, and how it held its worker when the server says. One
    /// keeps the baseline cheap for a slow endpoint; a claim's median over rounds and its
    /// noise floor absorb one slow request.
    pub(crate) fn alone(&self) -> Result<(Duration, Option<Held>)> {
        let run = self.run(ClientStrategy::Sequential, 1)?;
        Ok((run.wall, run.records.first().and_then(|r| r.held)))
    }

    pub(crate) fn workers(&self) -> Option<PoolSettings> {
        self.target.pool_settings()
    }

    /// Whether a generator varies the requests ([`vary`](Self::vary)).
    pub(crate) fn is_varied(&self) -> bool {
        self.vary.is_some()
    }

    /// The concurrency set with [`concurrency`](Self::concurrency), if any.
    pub(crate) fn concurrency_set(&self) -> Option<usize> {
        self.concurrency
    }

    /// What its handler may do with its worker ([`poll_budget`](Self::poll_budget),
    /// [`waits_at_most`](Self::waits_at_most)).
    pub(crate) fn allowance(&self) -> Allowance {
        self.allowance
    }

    /// The holds its team accepts, in the order they were given.
    pub(crate) fn allows(&self) -> &[crate::vocab::Allow] {
        &self.allows
    }

    pub(crate) fn add_allow(mut self, allow: crate::vocab::Allow) -> Self {
        if !self.allows.contains(&allow) {
            self.allows.push(allow);
        }
        self
    }

    pub(crate) fn set_allowance(mut self, allowance: Allowance) -> Self {
        self.allowance = allowance;
        self
    }

    /// The fan-out of a comparison: as set, else enough to stand out on the pool.
    pub(crate) fn fan_out(&self) -> usize {
        self.concurrency.unwrap_or_else(|| {
            let workers = self.workers().map_or(1, |p| p.workers);
            COMPARISON_FAN_OUT.max(COMPARISON_PER_WORKER * workers)
        })
    }
}

// A target's endpoints are made here, beside what an endpoint is, so that `target.rs`
// reads nothing above it.
impl Target {
    /// `GET path` on this target (with its query, if any; it must start with `/`), checked
    /// now: one GET is sent at once, and an endpoint that does not answer 2xx or 3xx fails here,
    /// before any claim is made — `GET /orders answered 500 in 1 of 1 requests`, or the
    /// connect error. ([`get`](Self::get) makes the same endpoint without sending
    /// anything; its claims send the first request before any load.)
    pub fn checked_get(&self, path: &str) -> Result<Endpoint> {
        let endpoint = self.get(path);
        endpoint.preflight()?;
        Ok(endpoint)
    }

    /// `GET path` on this target; nothing is sent until a claim is checked
    /// ([`checked_get`](Self::checked_get) sends one request at once).
    pub fn get(&self, path: impl Into<String>) -> Endpoint {
        self.request(Request::get(path))
    }

    /// `POST path` on this target: add a body with [`json`](Endpoint::json) or
    /// [`body`](Endpoint::body), headers with [`header`](Endpoint::header).
    pub fn post(&self, path: impl Into<String>) -> Endpoint {
        self.request(Request::post(path))
    }

    /// `PUT path` on this target.
    pub fn put(&self, path: impl Into<String>) -> Endpoint {
        self.request(Request::put(path))
    }

    /// `PATCH path` on this target.
    pub fn patch(&self, path: impl Into<String>) -> Endpoint {
        self.request(Request::patch(path))
    }

    /// `DELETE path` on this target.
    pub fn delete(&self, path: impl Into<String>) -> Endpoint {
        self.request(Request::delete(path))
    }

    /// A gRPC unary call of `method_path` (`/package.Service/Method`) with `message`, the
    /// request message encoded by the service's prost (`message.encode_to_vec()`): sent
    /// over HTTP/2, failed when its `grpc-status` is not OK ([`Request::grpc`]).
    #[cfg(feature = "grpc")]
    pub fn grpc(
        &self,
        method_path: impl Into<String>,
        message: impl Into<bytes::Bytes>,
    ) -> Endpoint {
        self.request(Request::grpc(method_path, message))
    }

    /// Any [`Request`] on this target, sent as it is (or varied per request with
    /// [`Endpoint::vary`]).
    pub fn request(&self, request: Request) -> Endpoint {
        Endpoint::new(self, request)
    }
}
