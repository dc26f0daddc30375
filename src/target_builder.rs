//! How a [`Target`] is made: what it is (a router perfshape serves, a service it launches, a URL) and the
//! load client that will measure it, configured before the target exists — as reqwest's
//! `ClientBuilder` makes a `Client` — so the client's runtime starts once, with every
//! setting, and every endpoint of the target shares it.

use std::future::Future;
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use crate::client::{Driver, Limits, LoadClient};
use crate::error::{Error, Result};
use crate::pool::{Pool, PoolSettings};
use crate::server::Server;
use crate::target::{Kind, Target};
use crate::vocab::Lifecycle;

/// How long [`Target::url`] waits for a TCP connection before calling a service
/// unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// The limits a target's load client has unless told otherwise: a side that needs longer
/// than this is reported as too slow by its claim, well before a test runner's kill
/// (nextest's default here is 2 minutes).
const LIMITS: Limits = Limits {
    request_timeout: Duration::from_secs(10),
    run_deadline: Duration::from_secs(20),
};

/// The load client's workers unless told otherwise: two of its own, so its clock keeps
/// running whatever the server does.
const CLIENT_WORKERS: usize = 2;

/// A [`Target`] before it exists: the load client that will measure it. Start with
/// [`Target::builder`], end with what the target is — [`serve`](Self::serve),
/// [`server`](Self::server), [`url`](Self::url).
///
/// Its setters never fail; the one that ends the chain checks them all and names the first
/// out of range (`invalid workers: 0 (allowed: 1 to 256)`), before any server or client
/// starts.
///
/// ```
/// use axum::{Router, routing::get};
/// use perfshape::{client::Lifecycle, PoolSettings, Target};
///
/// let router = Router::new().route("/health", get(|| async { "ok" }));
/// let target = Target::builder()
///     .lifecycle(Lifecycle::ConnectionCap { per_host: 2 })
///     .client_workers(1)
///     .serve(PoolSettings::workers(1)?, router)?;
/// assert_eq!(target.client().pool().settings().workers, 1);
///
/// let err = Target::builder().client_workers(0).serve(PoolSettings::workers(1)?, Router::new()).unwrap_err();
/// assert_eq!(err.to_string(), "invalid workers: 0 (allowed: 1 to 256)");
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
#[must_use]
pub struct TargetBuilder {
    lifecycle: Lifecycle,
    client_workers: usize,
    driver: Driver,
    limits: Limits,
}

impl Default for TargetBuilder {
    fn default() -> Self {
        TargetBuilder {
            lifecycle: Lifecycle::Shared,
            client_workers: CLIENT_WORKERS,
            driver: Driver::default(),
            limits: LIMITS,
        }
    }
}

impl TargetBuilder {
    /// How the load client holds its HTTP clients (default one shared client): a client
    /// per request, pooled clients, a per-host connection cap — seed 001's question.
    pub fn lifecycle(self, lifecycle: Lifecycle) -> Self {
        TargetBuilder { lifecycle, ..self }
    }

    /// The load client's worker threads (default 2): a heavier load needs more, on a
    /// machine that has them.
    pub fn client_workers(self, workers: usize) -> Self {
        TargetBuilder {
            client_workers: workers,
            ..self
        }
    }

    /// What sends the load client's closed loops
    /// ([`Driver::Connections`]: one HTTP/1 connection per user, for a figure the
    /// client's own cost per request must not cap).
    pub fn driver(self, driver: Driver) -> Self {
        TargetBuilder { driver, ..self }
    }

    /// The per-request and per-run [`Limits`] (default 10 s a request, 20 s a load).
    pub fn limits(self, limits: Limits) -> Self {
        TargetBuilder { limits, ..self }
    }

    /// `service` — your `axum::Router` (with its state given), or a tower stack around
    /// one — served by perfshape on a new pool with `settings`.
    pub fn serve<S: crate::server::Service>(
        self,
        settings: PoolSettings,
        service: S,
    ) -> Result<Target> {
        let client = self.client()?;
        let server = Server::serve(Pool::new("server", settings)?, service)?;
        Ok(served(server, Kind::Router, client))
    }

    /// Your service built on the pool that serves it, then served there as
    /// [`serve`](Self::serve) serves it: `build` is the async function that makes the
    /// router — connects its database pool, spawns its background jobs, warms its caches —
    /// and it runs on the served pool, so that every task it spawns runs on the workers the
    /// claims measure, as in production. (A router built in a `#[tokio::test]`'s body
    /// leaves what it spawns on the test's runtime, where no claim sees it.)
    ///
    /// A builder that returns an error, panics or runs past
    /// [`BUILT_WITHIN`](crate::limits::BUILT_WITHIN) is named, before any load.
    pub fn serve_with<F, Fut, S, E>(self, settings: PoolSettings, build: F) -> Result<Target>
    where
        F: FnOnce() -> Fut + Send,
        Fut: Future<Output = std::result::Result<S, E>>,
        S: crate::server::Service,
        E: std::fmt::Display,
    {
        let client = self.client()?;
        let pool = Pool::new("server", settings)?;
        let within = crate::limits::BUILT_WITHIN;
        // The builder future is driven on a thread of its own inside the served pool's
        // runtime (`Handle::block_on`), never handed to another thread: it need not be
        // `Send` (`App::new().await?.router().await` holds a `Box<dyn Error>` across an
        // await), and every task it spawns, every timer and socket it makes, is the pool's.
        let handle = pool.handle().clone();
        let service = std::thread::scope(|scope| {
            let building = std::thread::Builder::new()
                .name("server-builder".into())
                .spawn_scoped(scope, move || {
                    handle.block_on(async move {
                        match tokio::time::timeout(within, build()).await {
                            Ok(Ok(service)) => Ok(service),
                            Ok(Err(e)) => Err(format!("the builder returned an error: {e:#}")),
                            Err(_) => Err(format!(
                                "the builder did not finish within {} s",
                                within.as_secs()
                            )),
                        }
                    })
                })
                .map_err(|e| format!("the builder's thread could not start: {e}"))?;
            building
                .join()
                .map_err(|panic| format!("the builder {}", crate::error::panicked(panic)))
                .and_then(|built| built)
        })
        .map_err(|what| Error::Build { what })?;
        let server = Server::serve(pool, service)?.built_on_pool();
        Ok(served(server, Kind::Router, client))
    }

    /// Your service started the way its `main` starts it, by its own launch function, on
    /// a new pool with `settings` ([`Target::launch`]).
    pub fn launch<F, Fut, E>(self, settings: PoolSettings, launch: F) -> Result<Target>
    where
        F: FnOnce(tokio::net::TcpListener, crate::server::Shutdown) -> Fut + Send + 'static,
        Fut: Future<Output = std::result::Result<(), E>> + Send + 'static,
        E: std::fmt::Display,
    {
        let client = self.client()?;
        let server = Server::launch(Pool::new("server", settings)?, launch)?;
        Ok(served(server, Kind::Launched, client))
    }

    /// A router you started yourself with [`Server::serve`] (on a pool you built, say
    /// because building the router needs its runtime).
    pub fn server(self, server: Server) -> Result<Target> {
        Ok(served(server, Kind::Router, self.client()?))
    }

    /// A running service at `base` (e.g. `http://127.0.0.1:8080` or
    /// `https://staging.example.com/api`); endpoints' paths are appended to it.
    ///
    /// Fails at once, before any load, when `base` is not an `http(s)` URL or no TCP
    /// connection to its host can be made within 3 s — naming the URL and the error.
    pub fn url(self, base: &str) -> Result<Target> {
        reachable(base)?;
        let client = self.client()?;
        Ok(Target::assemble(
            base.trim_end_matches('/').to_string(),
            Kind::Url,
            client,
            None,
        ))
    }

    /// A running service reached at the origin of `url` (scheme, host, port), and the
    /// path and query of `url` for an endpoint: what `perfshape probe URL` takes apart.
    pub fn split_url(self, url: &str) -> Result<(Target, String)> {
        let parsed = crate::client::check_url(url)?;
        let path = crate::client::path_and_query(&parsed);
        let origin = parsed.origin().ascii_serialization();
        let target = self.url(&origin).map_err(|e| match e {
            Error::Unreachable { reason, .. } => Error::Unreachable {
                url: url.to_string(),
                reason,
            },
            other => other,
        })?;
        Ok((target, path))
    }

    /// The load client, every setting checked.
    fn client(self) -> Result<LoadClient> {
        let pool = Pool::workers("client", self.client_workers)?;
        Ok(LoadClient::with_limits(pool, self.lifecycle, self.limits)?.with_driver(self.driver))
    }
}

/// A target of a server perfshape runs.
fn served(server: Server, kind: Kind, client: LoadClient) -> Target {
    Target::assemble(server.base_url(), kind, client, Some(server))
}

/// Refuses `base` unless it is an `http(s)` URL to whose host a TCP connection can be
/// made within [`CONNECT_TIMEOUT`], naming the URL and the error.
fn reachable(base: &str) -> Result<()> {
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
    if addrs.is_empty() {
        return Err(unreachable(format!("{host}:{port} has no address")));
    }
    let mut last = None;
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
            Ok(_) => return Ok(()),
            Err(e) => last = Some(format!("connecting to {addr}: {e}")),
        }
    }
    Err(unreachable(last.unwrap_or_default()))
}

// The shortcuts, beside the builder they start, so that `target.rs` reads nothing above
// it.
impl Target {
    /// A target configured before it exists: its load client's lifecycle, workers,
    /// driver and limits.
    pub fn builder() -> TargetBuilder {
        TargetBuilder::default()
    }

    /// `service` — your `axum::Router` (with its state given), or a tower stack around
    /// one — served by perfshape on a new pool with `settings`, measured by the default
    /// load client ([`Target::builder`] configures another).
    pub fn serve<S: crate::server::Service>(settings: PoolSettings, service: S) -> Result<Target> {
        Target::builder().serve(settings, service)
    }

    /// Your service built on the pool that serves it by the async function `build`, then
    /// served there: what the service spawns while it is built — a database pool's
    /// maintenance task, a connection's driver, a cache refresher — runs on the workers the
    /// claims measure ([`TargetBuilder::serve_with`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use axum::{Router, routing::get};
    /// use perfshape::{PoolSettings, Target};
    ///
    /// let target = Target::serve_with(PoolSettings::workers(1)?, || async {
    ///     // A cache refresher, spawned as the service starts: on the served pool.
    ///     let (tx, rx) = tokio::sync::watch::channel(0u64);
    ///     tokio::spawn(async move {
    ///         for generation in 1.. {
    ///             tokio::time::sleep(Duration::from_millis(50)).await;
    ///             if tx.send(generation).is_err() {
    ///                 break;
    ///             }
    ///         }
    ///     });
    ///     let router = Router::new().route("/generation", get(move || {
    ///         let rx = rx.clone();
    ///         async move { rx.borrow().to_string() }
    ///     }));
    ///     Ok::<_, std::convert::Infallible>(router)
    /// })?;
    /// target.get("/generation").does_not_block_its_worker().check()?.gate()?;
    ///
    /// let err = Target::serve_with(PoolSettings::workers(1)?, || async {
    ///     Err::<Router, _>("no database at 127.0.0.1:1")
    /// })
    /// .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "building the service on its served pool: the builder returned an error: no database at 127.0.0.1:1"
    /// );
    /// # Ok::<(), perfshape::Error>(())
    /// ```
    pub fn serve_with<F, Fut, S, E>(settings: PoolSettings, build: F) -> Result<Target>
    where
        F: FnOnce() -> Fut + Send,
        Fut: Future<Output = std::result::Result<S, E>>,
        S: crate::server::Service,
        E: std::fmt::Display,
    {
        Target::builder().serve_with(settings, build)
    }

    /// Your service started the way its `main` starts it: `launch` is given a listener
    /// bound to `127.0.0.1` on a free port and a [`Shutdown`](crate::Shutdown) that
    /// resolves when the target is dropped, and runs on a pool of perfshape's with
    /// `settings` — for a service whose router is private to its crate. Its responses are
    /// not timed poll by poll; its workers are clocked whole, and the claims that judge a
    /// hold decide on that. A launch function that returns at once (an error, a panic, or
    /// no serving) is named before any load.
    ///
    /// ```
    /// use axum::{Router, routing::get};
    /// use perfshape::{PoolSettings, Shutdown, Target};
    ///
    /// // What the service's crate exports, and its `main` calls.
    /// async fn launch(listener: tokio::net::TcpListener, shutdown: Shutdown) -> std::io::Result<()> {
    ///     let router = Router::new().route("/health", get(|| async { "ok" }));
    ///     axum::serve(listener, router).with_graceful_shutdown(shutdown).await
    /// }
    ///
    /// let target = Target::launch(PoolSettings::workers(1)?, launch)?;
    /// target.get("/health").does_not_block_its_worker().check()?.gate()?;
    ///
    /// let err = Target::launch(PoolSettings::workers(1)?, |_, _| async {
    ///     Err::<(), _>("no configuration at /etc/app.toml")
    /// })
    /// .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "building the service on its served pool: the launch function returned an error: no configuration at /etc/app.toml"
    /// );
    /// # Ok::<(), perfshape::Error>(())
    /// ```
    pub fn launch<F, Fut, E>(settings: PoolSettings, launch: F) -> Result<Target>
    where
        F: FnOnce(tokio::net::TcpListener, crate::server::Shutdown) -> Fut + Send + 'static,
        Fut: Future<Output = std::result::Result<(), E>> + Send + 'static,
        E: std::fmt::Display,
    {
        Target::builder().launch(settings, launch)
    }

    /// A router you started yourself with [`Server::serve`] (on a pool you built, say
    /// because building the router needs its runtime).
    pub fn server(server: Server) -> Result<Target> {
        Target::builder().server(server)
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
        Target::builder().url(base)
    }

    /// A running service reached at the origin of `url` (scheme, host, port), and the
    /// path and query of `url` for an endpoint: what `perfshape probe URL` takes apart.
    ///
    /// ```
    /// use perfshape::Target;
    ///
    /// let err = Target::split_url("http://127.0.0.1:9/orders").unwrap_err();
    /// assert!(err.to_string().starts_with("cannot reach http://127.0.0.1:9/orders"), "{err}");
    /// ```
    pub fn split_url(url: &str) -> Result<(Target, String)> {
        Target::builder().split_url(url)
    }
}
