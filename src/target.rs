//! What a claim measures: a router perfshape serves on a constrained pool, or a service
//! already running at a URL — with the load client that measures it,
//! on a pool of its own, reused across rounds.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::client::{LoadClient, Plan};
use crate::error::{Error, Result};
use crate::pool::PoolSettings;
use crate::server::Server;
use crate::service_process::ServiceProcess;

/// How long a load waits, once its last response has arrived, for a served router to record
/// responses whose bodies it is still finishing (it drops a body a moment after its last
/// byte is written).
const RECORDED_WITHIN: Duration = Duration::from_secs(1);

/// How long a load waits, once its responses are recorded, for a served router's workers to
/// park: the tasks its requests spawned (an audit write sent off after the answer) run
/// after their responses, and are the load's doing as much as its polls.
const SETTLED_WITHIN: Duration = Duration::from_millis(200);

/// A service under measurement, and the load client that measures it.
///
/// - [`Target::serve`]: your `axum::Router`, served by perfshape on a pool it owns
///   (`workers`, `max_blocking`), on `127.0.0.1` at a free port, every response stamped
///   with the worker that served it;
/// - [`Target::serve_with`]: your service built on the pool that serves it, what it spawns
///   as it starts on the workers the claims measure;
/// - [`Target::launch`]: your service started as its `main` starts it;
/// - [`Target::url`]: any running service, in any language, on any host you name.
///
/// The load client runs on its own 2-worker pool, so a starved server cannot stall the
/// clock that measures it; [`Target::builder`] configures another before the target
/// exists (its lifecycle, workers, driver, limits).
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
/// let target = Target::serve(PoolSettings::workers(1)?, router)?;
/// assert_eq!(target.to_string(), "router on W=1 B=512");
/// let health = target.checked_get("/health")?; // one GET: the endpoint answers 2xx (or 3xx)
/// assert!(health.url().ends_with("/health"));
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Target {
    base: String,
    kind: Kind,
    /// What a served router is called in reports: `router`, unless the experiments call
    /// theirs `demo service`.
    noun: &'static str,
    name: Option<String>,
    client: Arc<LoadClient>,
    /// A URL's service, when it runs on this machine in a process of its own: found once,
    /// when a claim first needs its CPU.
    local: Arc<OnceLock<Option<ServiceProcess>>>,
    /// Whether the processes the service talks to on this machine are where production's
    /// are too ([`local_downstreams_are_production`](Self::local_downstreams_are_production)).
    local_is_production: bool,
    // Declared last: the server's pool is dropped after the client stops sending.
    server: Option<Arc<Server>>,
}

/// Which kind of target, for reports and for what a target can do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A router perfshape serves.
    Router,
    /// A running service at a URL.
    Url,
    /// A service perfshape started by its own launch function, on a pool of perfshape's.
    Launched,
}

impl Target {
    /// A target of `kind` at `base`, measured by `client`, with the server perfshape runs
    /// for it (none for a URL): what [`TargetBuilder`](crate::TargetBuilder) makes.
    pub(crate) fn assemble(
        base: String,
        kind: Kind,
        client: LoadClient,
        server: Option<Server>,
    ) -> Target {
        Target {
            base,
            kind,
            noun: "router",
            name: None,
            client: Arc::new(client),
            local: Arc::default(),
            local_is_production: false,
            server: server.map(Arc::new),
        }
    }

    /// The same target under a name of yours (`"old service"`), which its claims' reports
    /// and artifacts carry: two targets with the same routes (an old and a new
    /// implementation) are told apart by it.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Target {
        self.name = Some(name.into());
        self
    }

    /// The same target, for a service whose downstreams on this machine are on the same
    /// machine in production too — a sidecar, a cache on the host: a claim that would hold
    /// while the service talks to a local process directly then holds, instead of being
    /// inconclusive for want of production's distance (what a database a network hop away
    /// does to a synchronous call on the worker; [`Downstream`](crate::Downstream) puts one
    /// there).
    #[must_use]
    pub fn local_downstreams_are_production(mut self) -> Target {
        self.local_is_production = true;
        self
    }

    /// Whether [`local_downstreams_are_production`](Self::local_downstreams_are_production)
    /// was said.
    pub(crate) fn local_is_production(&self) -> bool {
        self.local_is_production
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
    /// thread's clocks into computing, waiting and preempted where they can be read; and
    /// the run's `worker_waits` are its workers' waits outside those polls, from the first
    /// send until the workers parked after the load.
    pub(crate) fn run_plan(
        &self,
        strategy: crate::vocab::ClientStrategy,
        plan: &Plan,
        n: usize,
        canary: Option<crate::client::CanaryPlan<'_>>,
    ) -> Result<crate::run::Run> {
        let Some(server) = self.server.as_deref() else {
            return self.client.run_plan(strategy, plan, n, canary);
        };
        let timeline = server.pool().timeline();
        let _clocked = timeline.record();
        let from = std::time::Instant::now();
        let sampled = timeline.calls();
        let mut run = self.run_polls(strategy, plan, n, canary)?;
        // What the requests left their workers to do — a task they spawned — runs after
        // their responses: read it once every worker has parked.
        server.pool().settled_activity(SETTLED_WITHIN);
        run.worker_waits = timeline.since(from);
        run.calls = timeline.calls().since(&sampled);
        Ok(run)
    }

    /// [`run_plan`](Self::run_plan) without the workers' waits outside the responses'
    /// polls: for a request sent while another load of the same target runs, which reads
    /// them for both.
    pub(crate) fn run_polls(
        &self,
        strategy: crate::vocab::ClientStrategy,
        plan: &Plan,
        n: usize,
        canary: Option<crate::client::CanaryPlan<'_>>,
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

    /// The server perfshape runs for this target, if it serves a router (not for a URL,
    /// nor for a service started by its own launch function: see
    /// [`launched`](Self::launched)).
    pub fn served(&self) -> Option<&Server> {
        self.server
            .as_deref()
            .filter(|_| self.kind != Kind::Launched)
    }

    /// The server of a service perfshape started by its own launch function
    /// ([`Target::launch`]): its pool's workers are clocked, its responses' polls are not.
    pub fn launched(&self) -> Option<&Server> {
        self.server
            .as_deref()
            .filter(|_| self.kind == Kind::Launched)
    }

    /// The pool settings of the server, when perfshape serves it.
    pub fn pool_settings(&self) -> Option<PoolSettings> {
        self.server.as_ref().map(|s| s.pool().settings())
    }

    /// The same target, its served router called `noun` in reports (`demo service on W=2
    /// B=512`): what the experiments' crate calls its demo.
    pub(crate) fn with_noun(mut self, noun: &'static str) -> Target {
        self.noun = noun;
        self
    }

    /// What a served router is called in reports ([`with_noun`](Self::with_noun)).
    pub(crate) fn noun(&self) -> &'static str {
        self.noun
    }

    /// The name given with [`named`](Self::named), if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

impl std::fmt::Display for Target {
    /// What the target is, in stable words for reports and snapshots (never a port):
    /// `router on W=1 B=512`, `launched service on W=1 B=512`, `running service`; a
    /// [`named`](Target::named) target is `new service (router on W=1 B=512)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match (self.kind, self.pool_settings()) {
            (Kind::Router, Some(pool)) => format!("{} on {pool}", self.noun),
            (Kind::Launched, Some(pool)) => format!("launched service on {pool}"),
            _ => "running service".to_string(),
        };
        match &self.name {
            Some(name) => write!(f, "{name} ({what})"),
            None => f.write_str(&what),
        }
    }
}
