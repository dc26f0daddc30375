//! What an endpoint sends: a request template (method, path and query, headers, body),
//! and optionally a generator that varies it per request (ids, cursors, bodies).
//!
//! The vocabulary is reqwest's (`header`, `bearer_auth`, `json`, `body`), and so is the
//! way errors travel: a header that is not valid HTTP or a body serde cannot serialise is
//! kept in the template and named when the template is first used — before any request is
//! sent — so a builder chain needs no `?` at every step.

use std::borrow::Cow;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use reqwest::Method;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};

use crate::error::{Error, Refused, Result};

/// One request a load sends: method, path and query, headers and body.
///
/// ```
/// use perfshape::Request;
///
/// let order = serde_json::json!({ "item": "tea", "quantity": 2 });
/// let request = Request::post("/orders").json(&order).bearer_auth("secret");
/// assert_eq!(request.to_string(), "POST /orders");
/// assert_eq!(request.headers()["content-type"], "application/json");
/// ```
#[derive(Clone, Debug)]
pub struct Request {
    method: Method,
    path: String,
    headers: HeaderMap,
    body: Option<bytes::Bytes>,
    /// A gRPC unary call: sent over HTTP/2, its status read from its trailers.
    grpc: bool,
    /// The first thing wrong with the template, named when it is used.
    problem: Option<Refused>,
}

/// Varies the template per request: the request's number (0, 1, … in a load, or across
/// every load of an endpoint: [`Plan::numbered`]) and the template in, the request to send
/// out.
pub(crate) type Vary = Arc<dyn Fn(usize, Request) -> Request + Send + Sync>;

impl Request {
    /// A request with `method` to `path` (which must start with `/`, query included).
    pub fn new(method: Method, path: impl Into<String>) -> Request {
        let path = path.into();
        let problem = (!path.starts_with('/')).then(|| {
            Refused::new(
                "path",
                format!("{path:?}"),
                "a path that starts with / (e.g. \"/orders?limit=10\")",
            )
        });
        Request {
            method,
            path,
            headers: HeaderMap::new(),
            body: None,
            grpc: false,
            problem,
        }
    }

    /// A gRPC unary call of `method_path` (`/package.Service/Method`) with `message`, the
    /// request message already encoded (`message.encode_to_vec()` with prost, whichever
    /// version the service's own tonic uses). It is sent over HTTP/2 (cleartext, prior
    /// knowledge) as a `POST` with `content-type: application/grpc`; metadata is
    /// [`header`](Request::header). It succeeds when the call's `grpc-status` is OK — any
    /// other status is a failed request, named with its code and message.
    ///
    /// ```
    /// use perfshape::Request;
    ///
    /// let call = Request::grpc("/ledger.Ledger/Open", vec![0x0a, 0x03, b'a', b'd', b'a'])
    ///     .header("x-tenant", "acme");
    /// assert_eq!(call.to_string(), "gRPC /ledger.Ledger/Open");
    /// assert_eq!(call.headers()["content-type"], "application/grpc");
    /// ```
    #[cfg(feature = "grpc")]
    pub fn grpc(method_path: impl Into<String>, message: impl Into<bytes::Bytes>) -> Request {
        let mut request = Request::new(Method::POST, method_path);
        request.grpc = true;
        if !super::grpc::is_method_path(&request.path) {
            request.problem = Some(Refused::new(
                "gRPC method",
                format!("{:?}", request.path),
                "/package.Service/Method (the path tonic routes, e.g. \"/ledger.Ledger/Open\")",
            ));
        }
        request
            .with_message(message)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/grpc"))
            .header("te", HeaderValue::from_static("trailers"))
    }

    /// Whether this is a gRPC call (`Request::grpc`, with the `grpc` feature).
    pub fn is_grpc(&self) -> bool {
        self.grpc
    }

    /// The same request — method, headers, body — to another `path` (and query; it must
    /// start with `/`): what a generator returns for request *i* of `/todos/{id}`.
    ///
    /// ```
    /// use perfshape::Request;
    ///
    /// let update = Request::patch("/todos/1").json(&serde_json::json!({ "completed": true }));
    /// let third = update.with_path(format!("/todos/{}", 3));
    /// assert_eq!(third.to_string(), "PATCH /todos/3");
    /// assert_eq!(third.headers()["content-type"], "application/json");
    /// ```
    pub fn with_path(self, path: impl Into<String>) -> Request {
        let Request {
            method,
            headers,
            body,
            grpc,
            problem,
            ..
        } = self;
        let moved = Request::new(method, path);
        Request {
            headers,
            body,
            grpc,
            // The template's own problem first: it was there before the path changed.
            problem: problem.or(moved.problem),
            ..moved
        }
    }

    /// The same gRPC call — method, metadata — with another message (already encoded):
    /// what a generator returns for call *i* ([`Endpoint::vary`](crate::Endpoint::vary)).
    #[cfg(feature = "grpc")]
    pub fn with_message(mut self, message: impl Into<bytes::Bytes>) -> Request {
        let message: bytes::Bytes = message.into();
        match super::grpc::framed(&message) {
            Some(frame) => self.body = Some(frame),
            None => self.fail(
                "gRPC message",
                format!("{} bytes", message.len()),
                "at most 4 GiB",
            ),
        }
        self
    }

    /// `GET path`.
    pub fn get(path: impl Into<String>) -> Request {
        Request::new(Method::GET, path)
    }

    /// `POST path`.
    pub fn post(path: impl Into<String>) -> Request {
        Request::new(Method::POST, path)
    }

    /// `PUT path`.
    pub fn put(path: impl Into<String>) -> Request {
        Request::new(Method::PUT, path)
    }

    /// `PATCH path`.
    pub fn patch(path: impl Into<String>) -> Request {
        Request::new(Method::PATCH, path)
    }

    /// `DELETE path`.
    pub fn delete(path: impl Into<String>) -> Request {
        Request::new(Method::DELETE, path)
    }

    /// Adds a header (as reqwest's `RequestBuilder::header`); a name or value that is not
    /// valid HTTP is named when the request is first used.
    pub fn header<K, V>(mut self, name: K, value: V) -> Request
    where
        K: TryInto<HeaderName>,
        K::Error: fmt::Display,
        V: TryInto<HeaderValue>,
        V::Error: fmt::Display,
    {
        match (name.try_into(), value.try_into()) {
            (Ok(name), Ok(value)) => {
                self.headers.append(name, value);
            }
            (Err(e), _) => self.fail("header name", e.to_string(), "a valid HTTP header name"),
            (Ok(name), Err(e)) => self.fail(
                "header value",
                format!("{name}: {e}"),
                "visible ASCII (a valid HTTP header value)",
            ),
        }
        self
    }

    /// `Authorization: Bearer <token>`, marked sensitive (never printed).
    pub fn bearer_auth(self, token: impl fmt::Display) -> Request {
        match HeaderValue::from_str(&format!("Bearer {token}")) {
            Ok(mut value) => {
                value.set_sensitive(true);
                self.header(AUTHORIZATION, value)
            }
            Err(e) => {
                let mut request = self;
                request.fail(
                    "bearer token",
                    e.to_string(),
                    "visible ASCII (a valid HTTP header value)",
                );
                request
            }
        }
    }

    /// The body, as bytes or text (`Vec<u8>`, `String`, `&'static str`, `Bytes`).
    pub fn body(mut self, body: impl Into<bytes::Bytes>) -> Request {
        self.body = Some(body.into());
        self
    }

    /// A JSON body serialised by serde, with `Content-Type: application/json`; a value serde
    /// cannot serialise is named when the request is first used, before any load.
    pub fn json<T: serde::Serialize + ?Sized>(self, value: &T) -> Request {
        self.encoded(
            serde_json::to_vec(value).map_err(|e| e.to_string()),
            "application/json",
            "JSON body",
            "a value serde_json can serialise",
        )
    }

    /// A form body (`application/x-www-form-urlencoded`, as an HTML form posts), encoded by
    /// serde (as reqwest's `RequestBuilder::form`): a sign-in, a search. A value that cannot
    /// be encoded is named when the request is first used, before any load.
    pub fn form<T: serde::Serialize + ?Sized>(self, value: &T) -> Request {
        self.encoded(
            serde_urlencoded::to_string(value).map_err(|e| e.to_string()),
            "application/x-www-form-urlencoded",
            "form body",
            "a struct or a list of pairs of plain values (serde_urlencoded)",
        )
    }

    /// The body `encoded` with its `content_type`, or, where it could not be encoded, the
    /// refusal naming `what` and what is `allowed`.
    fn encoded(
        mut self,
        encoded: std::result::Result<impl Into<bytes::Bytes>, String>,
        content_type: &'static str,
        what: &'static str,
        allowed: &'static str,
    ) -> Request {
        match encoded {
            Ok(body) => {
                self.headers
                    .insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
                self.body = Some(body.into());
            }
            Err(e) => {
                let value = format!("{e} (for {} {})", self.method, self.path);
                self.fail(what, value, allowed);
            }
        }
        self
    }

    /// The method.
    pub fn method(&self) -> &Method {
        &self.method
    }

    /// The path and query.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body, if any.
    pub fn body_bytes(&self) -> Option<&[u8]> {
        self.body.as_deref()
    }

    fn fail(&mut self, field: &'static str, value: String, allowed: &'static str) {
        self.problem
            .get_or_insert_with(|| Refused::new(field, value, allowed));
    }

    /// This request against `base`, or what is wrong with it.
    fn prepare(&self, base: &str) -> Result<Prepared> {
        if let Some(problem) = &self.problem {
            return Err(problem.to_error());
        }
        let url = reqwest::Url::parse(&format!("{base}{}", self.path)).map_err(|e| {
            Error::invalid(
                "path",
                format!("{:?} ({e})", self.path),
                "a valid URL path and query",
            )
        })?;
        Ok(Prepared {
            method: self.method.clone(),
            url,
            headers: self.headers.clone(),
            body: self.body.clone(),
            grpc: self.grpc,
        })
    }
}

impl fmt::Display for Request {
    /// `POST /orders`: how reports and errors name the request (never its headers, which
    /// may carry a token).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.grpc {
            return write!(f, "gRPC {}", self.path);
        }
        write!(f, "{} {}", self.method, self.path)
    }
}

/// A request ready to send: its URL parsed once.
#[derive(Clone, Debug)]
pub(crate) struct Prepared {
    pub(crate) method: Method,
    pub(crate) url: reqwest::Url,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Option<bytes::Bytes>,
    /// A gRPC unary call ([`Request::grpc`]).
    pub(crate) grpc: bool,
}

/// The requests of one load on a target: the template's (checked before anything is sent)
/// for every index, or the generator's for each.
#[derive(Clone)]
pub struct Plan {
    /// How reports name the load's requests: `POST /orders`.
    pub(crate) label: String,
    base: String,
    first: Prepared,
    template: Request,
    vary: Option<Vary>,
    /// Numbers the generator's requests across every load that shares it, where set
    /// ([`Plan::numbered`]): else each load numbers its own from 0.
    numbering: Option<Arc<AtomicUsize>>,
}

impl fmt::Debug for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Plan")
            .field("label", &self.label)
            .field("varied", &self.vary.is_some())
            .finish_non_exhaustive()
    }
}

impl Plan {
    /// `template` against `base`, varied by `vary`: refused at once, naming what is wrong,
    /// when the template or the generator's first request cannot be built.
    pub(crate) fn new(base: &str, template: &Request, vary: Option<Vary>) -> Result<Plan> {
        let first = template.prepare(base)?;
        let plan = Plan {
            label: template.to_string(),
            base: base.to_string(),
            first,
            template: template.clone(),
            vary,
            numbering: None,
        };
        if plan.vary.is_some() {
            plan.build(0).map_err(|what| {
                Error::invalid(
                    "request generator",
                    what,
                    "a generator that returns a request that can be built for every index",
                )
            })?;
        }
        Ok(plan)
    }

    /// The same plan whose generator numbers its requests from `counter`, shared by every
    /// load that uses it: an endpoint's claims send requests that must differ across all
    /// their rounds (a new account, a picture not yet cached), and a number is never given
    /// twice. The check [`Plan::new`] made of the generator took no number.
    pub(crate) fn numbered(mut self, counter: Arc<AtomicUsize>) -> Plan {
        self.numbering = Some(counter);
        self
    }

    /// The same plan under another name in reports (`mix of /health ×8, POST /orders ×1`).
    pub(crate) fn labelled(mut self, label: String) -> Plan {
        self.label = label;
        self
    }

    /// A plain `GET` of an absolute URL (what [`LoadClient::run`](super::LoadClient::run)
    /// takes).
    pub fn get(url: &reqwest::Url) -> Plan {
        let template = Request::get(path_and_query(url));
        Plan {
            label: template.to_string(),
            base: url.origin().ascii_serialization(),
            first: Prepared {
                method: Method::GET,
                url: url.clone(),
                headers: HeaderMap::new(),
                body: None,
                grpc: false,
            },
            template,
            vary: None,
            numbering: None,
        }
    }

    /// The one request every index sends, when no generator varies it.
    pub(crate) fn fixed(&self) -> Option<&Prepared> {
        self.vary.is_none().then_some(&self.first)
    }

    /// Request `index` of a load: the template's (borrowed: a plain load copies nothing
    /// per request), or the generator's, given the load's index or, where the plan is
    /// [`numbered`](Self::numbered), the next number of its counter (a generator that
    /// panics or returns a request that cannot be built is named with that number).
    pub(crate) fn prepared(&self, index: usize) -> std::result::Result<Cow<'_, Prepared>, String> {
        if self.vary.is_none() {
            return Ok(Cow::Borrowed(&self.first));
        }
        let number = match &self.numbering {
            Some(counter) => counter.fetch_add(1, Ordering::Relaxed),
            None => index,
        };
        self.build(number)
    }

    /// The generator's request `index` (the template's where there is none).
    fn build(&self, index: usize) -> std::result::Result<Cow<'_, Prepared>, String> {
        let Some(vary) = &self.vary else {
            return Ok(Cow::Borrowed(&self.first));
        };
        let template = self.template.clone();
        let request =
            catch_unwind(AssertUnwindSafe(|| vary(index, template))).map_err(|panic| {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".to_string());
                format!("the generator panicked at request #{index}: {message}")
            })?;
        request
            .prepare(&self.base)
            .map(Cow::Owned)
            .map_err(|error| format!("request #{index} ({request}): {error}"))
    }
}

/// `/orders?limit=10` of `http://host:port/orders?limit=10`.
pub(crate) fn path_and_query(url: &reqwest::Url) -> String {
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    }
}
