//! What a claim measures: a router perfshape serves on a constrained pool (yours or its
//! demo), or a service already running at a URL — with the load client that measures it,
//! on a pool of its own, reused across rounds.

use std::net::{TcpStream, ToSocketAddrs};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::client::{Limits, LoadClient, Plan};
use crate::error::{Error, Result};
use crate::pool::{Pool, PoolSettings};
use crate::server::Server;
use crate::service_process::ServiceProcess;
use crate::vocab::Lifecycle;

/// How long [`Target::url`] waits for a TCP connection before calling a service
/// unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// How long a load waits, once its last response has arrived, for a served router to record
/// responses whose bodies it is still finishing (it drops a body a moment after its last
/// byte is written).
const RECORDED_WITHIN: Duration = Duration::from_secs(1);

/// The limits a target's load client starts with: a side that needs longer than this is
/// reported as too slow by its claim, well before a test runner's kill (nextest's default
/// here is 2 minutes).
const LIMITS: Limits = Limits {
    request_timeout: Duration::from_secs(10),
    run_deadline: Duration::from_secs(20),
};

/// A service under measurement, and the load client that measures it.
///
/// - [`Target::serve`]: your `axum::Router`, served by perfshape on a pool it owns
///   (`workers`, `max_blocking`), on `127.0.0.1` at a free port, every response stamped
///   with the worker that served it;
/// - [`Target::url`]: any running service, in any language, on any host you name;
/// - [`Target::demo`]: perfshape's own demo service, whose routes are the server
///   strategies of the experiments (the suite's claims run on it).
///
/// The load client runs on its own 2-worker pool, so a starved server cannot stall the
/// clock that measures it.
///
/// A `Target` is a cheap handle, like `reqwest::Client`: clones share the server and the
/// load client (an `Arc` inside), so an endpoint or a claim can own one and be `'static`
/// and `Send`. The server stops when the last clone is dropped.
///
/// ```
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target};
///
/// let router = Router::new().route("/health", get(|| async { "ok" }));
/// let target = Target::serve(router, PoolSettings::workers(1)?)?;
/// assert_eq!(target.to_string(), "router on W=1 B=512");
/// let health = target.endpoint("/health")?; // one GET: the endpoint answers 2xx
/// assert!(health.url().ends_with("/health"));
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Target {
    base: String,
    kind: Kind,
    name: Option<String>,
    client: Arc<LoadClient>,
    /// A URL's service, when it runs on this machine in a process of its own: found once,
    /// when a claim first needs its CPU.
    local: Arc<OnceLock<Option<ServiceProcess>>>,
    // Declared last: the server's pool is dropped after the client stops sending.
    server: Option<Arc<Server>>,
}

/// Which kind of target, for reports and for what a target can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Demo,
    Router,
    Url,
}

impl Target {
    /// `service` — your `axum::Router` (with its state given), or a tower stack around
    /// one — served by perfshape on a new pool with `settings`.
    pub fn serve<S: crate::server::Service>(service: S, settings: PoolSettings) -> Result<Target> {
        let server = Server::serve(service, Pool::new("server", settings)?)?;
        Target::with_server(server, Kind::Router)
    }

    /// A router you started yourself with [`Server::serve`] (on a pool you built, say
    /// because building the router needs its runtime).
    pub fn server(server: Server) -> Result<Target> {
        Target::with_server(server, Kind::Router)
    }

    /// perfshape's demo service (every server strategy, and `/health`) on a new pool with
    /// `settings`.
    pub fn demo(settings: PoolSettings) -> Result<Target> {
        let server = Server::start(Pool::new("server", settings)?)?;
        Target::with_server(server, Kind::Demo)
    }

    /// A running service at `base` (e.g. `http://127.0.0.1:8080` or
    /// `https://staging.example.com/api`); endpoints' paths are appended to it.
    ///
    /// Fails at once, before any load, when `base` is not an `http(s)` URL or no TCP
    /// connection to its host can be made within 3 s — naming the URL and the error.
    ///
    /// ```
    /// use perfshape::Target;
    ///
    /// let err = Target::url("not a url").unwrap_err();
    /// assert!(err.to_string().starts_with("cannot reach not a url: not a URL"), "{err}");
    /// ```
    pub fn url(base: &str) -> Result<Target> {
        let parsed = crate::client::check_url(base)?;
        let unreachable = |reason: String| Error::Unreachable {
            url: base.to_string(),
            reason,
        };
        let host = parsed.host_str().unwrap_or_default();
        let port = parsed.port_or_known_default().unwrap_or(80);
        let addrs: Vec<_> = (host, port)
            .to_socket_addrs()
            .map_err(|e| unreachable(format!("looking up {host}:{port}: {e}")))?
            .collect();
        let mut last = None;
        for addr in &addrs {
            match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
                Ok(_) => {
                    last = None;
                    break;
                }
                Err(e) => last = Some(format!("connecting to {addr}: {e}")),
            }
        }
        if let Some(reason) = last {
            return Err(unreachable(reason));
        }
        if addrs.is_empty() {
            return Err(unreachable(format!("{host}:{port} has no address")));
        }
        Ok(Target {
            base: base.trim_end_matches('/').to_string(),
            kind: Kind::Url,
            name: None,
            client: Arc::new(default_client(Lifecycle::Shared, LIMITS)?),
            local: Arc::default(),
            server: None,
        })
    }

    /// A running service reached at the origin of `url` (scheme, host, port), and the
    /// path and query of `url` for [`endpoint`](Self::endpoint): what `perfshape probe URL`
    /// takes apart.
    ///
    /// ```
    /// use perfshape::Target;
    ///
    /// let err = Target::split_url("http://127.0.0.1:9/orders").unwrap_err();
    /// assert!(err.to_string().starts_with("cannot reach http://127.0.0.1:9/orders"), "{err}");
    /// ```
    pub fn split_url(url: &str) -> Result<(Target, String)> {
        let parsed = crate::client::check_url(url)?;
        let path = crate::client::path_and_query(&parsed);
        let origin = parsed.origin().ascii_serialization();
        let target = Target::url(&origin).map_err(|e| match e {
            Error::Unreachable { reason, .. } => Error::Unreachable {
                url: url.to_string(),
                reason,
            },
            other => other,
        })?;
        Ok((target, path))
    }

    fn with_server(server: Server, kind: Kind) -> Result<Target> {
        Ok(Target {
            base: server.base_url(),
            kind,
            name: None,
            client: Arc::new(default_client(Lifecycle::Shared, LIMITS)?),
            local: Arc::default(),
            server: Some(Arc::new(server)),
        })
    }

    /// The same target measured by a client of another lifecycle (a client per request,
    /// pooled clients, a per-host connection cap: seed 001's question).
    pub fn with_lifecycle(mut self, lifecycle: Lifecycle) -> Result<Target> {
        self.client = Arc::new(self.rebuilt_client(lifecycle, self.client.limits())?);
        Ok(self)
    }

    /// The same target measured by a load client with `workers` worker threads (default
    /// 2): a heavier load needs more, on a machine that has them.
    pub fn with_client_workers(mut self, workers: usize) -> Result<Target> {
        self.client = Arc::new(
            LoadClient::with_limits(
                Pool::workers("client", workers)?,
                self.client.lifecycle(),
                self.client.limits(),
            )?
            .with_driver(self.client.driver()),
        );
        Ok(self)
    }

    /// The same target measured by a load client whose closed loops `driver` sends
    /// ([`Driver::Connections`](crate::client::Driver::Connections): one HTTP/1 connection
    /// per user, for a figure the client's own cost per request must not cap).
    pub fn with_driver(mut self, driver: crate::client::Driver) -> Result<Target> {
        let client = self.rebuilt_client(self.client.lifecycle(), self.client.limits())?;
        self.client = Arc::new(client.with_driver(driver));
        Ok(self)
    }

    /// A load client like the current one (its pool size) with another lifecycle or
    /// limits.
    fn rebuilt_client(&self, lifecycle: Lifecycle, limits: Limits) -> Result<LoadClient> {
        let workers = self.client.pool().settings().workers;
        Ok(
            LoadClient::with_limits(Pool::workers("client", workers)?, lifecycle, limits)?
                .with_driver(self.client.driver()),
        )
    }

    /// The same target measured with other per-request and per-run [`Limits`].
    pub fn with_limits(mut self, limits: Limits) -> Result<Target> {
        self.client = Arc::new(self.rebuilt_client(self.client.lifecycle(), limits)?);
        Ok(self)
    }

    /// The same target under a name of yours (`"old service"`), which its claims' reports
    /// and artifacts carry: two targets with the same routes (an old and a new
    /// implementation) are told apart by it.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Target {
        self.name = Some(name.into());
        self
    }

    /// The URL paths are appended to: `http://127.0.0.1:PORT` for a served router.
    pub(crate) fn base(&self) -> &str {
        &self.base
    }

    /// Whether `other` reaches the same service (clones, or the same URL).
    pub(crate) fn same_service(&self, other: &Target) -> bool {
        self.base == other.base
    }

    /// The full URL of `path_and_query` on this target.
    pub fn url_of(&self, path_and_query: &str) -> Result<String> {
        if !path_and_query.starts_with('/') {
            return Err(Error::invalid(
                "path",
                format!("{path_and_query:?}"),
                "a path that starts with / (e.g. \"/orders?limit=10\")",
            ));
        }
        Ok(format!("{}{path_and_query}", self.base))
    }

    /// The load client that measures this target.
    pub fn client(&self) -> &LoadClient {
        &self.client
    }

    /// Sends `plan` as `strategy` says on this target's load client. On a router perfshape
    /// serves, each record's [`held`](crate::run::Run) — the canary's too — is then what the
    /// server recorded of the whole response: its body's polls with its future's (a
    /// compression layer computes as the body is written), each split by the worker
    /// thread's clocks into computing, waiting and preempted where they can be read.
    pub(crate) fn run_plan(
        &self,
        strategy: crate::vocab::ClientStrategy,
        plan: &Plan,
        n: usize,
        canary: Option<(&Plan, Duration)>,
    ) -> Result<crate::run::Run> {
        let Some(server) = self.served() else {
            return self.client.run_plan(strategy, plan, n, canary);
        };
        let _recording = server.ledger().record();
        let mut run = self.client.run_plan(strategy, plan, n, canary)?;
        let records: Vec<&mut crate::record::RequestRecord> =
            run.records.iter_mut().chain(run.canary.as_mut()).collect();
        let seqs: Vec<u64> = records.iter().filter_map(|r| r.seq).collect();
        let mut whole = server.ledger().take(&seqs, RECORDED_WITHIN).into_iter();
        for record in records {
            if record.seq.is_some()
                && let Some(Some(served)) = whole.next()
            {
                record.received = Some(format!("{} {}", served.method, served.path));
                record.held = Some(served.held);
                record.spans = served.spans;
            }
        }
        Ok(run)
    }

    /// A URL's service, when it listens on this machine's loopback in a process other than
    /// this one: whose CPU time splits a hold measured from outside into computing and
    /// waiting. `None` for a router perfshape serves (its polls say more), a service on
    /// another host, or one whose process `/proc` does not name.
    pub(crate) fn service_process(&self) -> Option<ServiceProcess> {
        if self.server.is_some() {
            return None;
        }
        *self
            .local
            .get_or_init(|| ServiceProcess::of_url(&self.base))
    }

    /// The server perfshape runs for this target, if it runs one (not for a URL).
    pub fn served(&self) -> Option<&Server> {
        self.server.as_deref()
    }

    /// The pool settings of the server, when perfshape serves it.
    pub fn pool_settings(&self) -> Option<PoolSettings> {
        self.server.as_ref().map(|s| s.pool().settings())
    }

    /// Whether this is perfshape's demo service, which serves every server strategy.
    pub fn is_demo(&self) -> bool {
        self.kind == Kind::Demo
    }

    /// The name given with [`named`](Self::named), if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

impl std::fmt::Display for Target {
    /// What the target is, in stable words for reports and snapshots (never a port):
    /// `router on W=1 B=512`, `demo service on W=2 B=512`, `running service`; a
    /// [`named`](Target::named) target is `new service (router on W=1 B=512)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match (self.kind, self.pool_settings()) {
            (Kind::Demo, Some(pool)) => format!("demo service on {pool}"),
            (Kind::Router, Some(pool)) => format!("router on {pool}"),
            _ => "running service".to_string(),
        };
        match &self.name {
            Some(name) => write!(f, "{name} ({what})"),
            None => f.write_str(&what),
        }
    }
}

/// The load client every target gets: two workers of its own, so that its clock keeps
/// running whatever the server does.
fn default_client(lifecycle: Lifecycle, limits: Limits) -> Result<LoadClient> {
    LoadClient::with_limits(Pool::workers("client", 2)?, lifecycle, limits)
}
