//! The server side: any axum `Router` served on a constrained [`Pool`], every response
//! stamped with the worker that served it and its polls clocked.

mod launched;
pub(crate) mod ledger;
pub(crate) mod trace;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::serve::ListenerExt;

pub use crate::vocab::wire::{HELD, PEER, RUNTIME, SEQ, SERVED_BY, Split};
pub use crate::vocab::{Held, RuntimeFigures};
pub use launched::Shutdown;

use self::ledger::Ledger;
use crate::error::{Error, Result};
use crate::limits::ACCEPT_BACKLOG;
use crate::pool::Pool;

/// What a [`Server`] serves: a tower service of HTTP requests that never fails (its errors
/// are responses), as `axum::serve` takes — an `axum::Router`, or layers around one.
pub trait Service:
    tower_service::Service<
        axum::extract::Request,
        Error = std::convert::Infallible,
        Response: axum::response::IntoResponse + 'static,
        Future: Send + 'static,
    > + Clone
    + Send
    + Sync
    + 'static
{
}

impl<S> Service for S where
    S: tower_service::Service<
            axum::extract::Request,
            Error = std::convert::Infallible,
            Response: axum::response::IntoResponse + 'static,
            Future: Send + 'static,
        > + Clone
        + Send
        + Sync
        + 'static
{
}

/// A router running on its own [`Pool`], bound to a local port.
///
/// Every response gets the [`SERVED_BY`], [`PEER`], [`RUNTIME`] and [`HELD`] headers, Nagle is off
/// on every accepted connection (a small response held back by Nagle plus a delayed ACK
/// adds ~40 ms, which would drown a 20 ms work time), and accepted connections are
/// counted. Dropping the handle shuts the server down without waiting for workers that
/// are stuck in a blocking call.
///
/// ```
/// use axum::{Router, routing::get};
/// use perfshape::runtime::{Pool, Server};
///
/// let router = Router::new().route("/hello", get(|| async { "hello" }));
/// let server = Server::serve(Pool::workers("server", 1)?, router)?;
/// assert!(server.base_url().starts_with("http://127.0.0.1:"));
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    accepted: Arc<AtomicU64>,
    ledger: Arc<Ledger>,
    built_on_pool: bool,
    /// A service started by its own launch function: its stop, sent when this is dropped.
    _launched: Option<launched::Launched>,
    // Declared last: dropped after the fields above, and it owns every server thread.
    pool: Pool,
}

impl Server {
    /// Serves `router` on `pool`, which the server owns from now on, at `127.0.0.1` on a
    /// port the system picks.
    ///
    /// Anything `axum::serve` serves will do: a `Router` (with its state given), or a
    /// tower stack around one (`ServiceBuilder::new().concurrency_limit(2).service(router)`)
    /// — whatever the layers do shows in the claims (a concurrency limit as a pool of ≈2).
    pub fn serve<S: Service>(pool: Pool, service: S) -> Result<Server> {
        Server::serve_on(pool, service, SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Serves `service` on `pool` at `addr` (for `perfshape serve` and other machines).
    pub fn serve_on<S: Service>(pool: Pool, service: S, addr: SocketAddr) -> Result<Server> {
        let router = axum::Router::new().fallback_service(service);
        let accepted = Arc::new(AtomicU64::new(0));
        let listener = {
            // Registering the socket with the pool's reactor must run there.
            let _entered = pool.handle().enter();
            listen(addr)?
        };
        let addr = listener
            .local_addr()
            .map_err(|e| Error::io("reading the listener's address", e))?;
        let counter = Arc::clone(&accepted);
        let listener = listener.tap_io(move |stream| {
            let _ = stream.set_nodelay(true);
            counter.fetch_add(1, Ordering::Relaxed);
        });
        let ledger = Arc::new(Ledger::default());
        let service = trace::traced(router, Arc::clone(&ledger))
            .into_make_service_with_connect_info::<SocketAddr>();
        pool.handle().spawn(async move {
            // serve only returns on a fatal listener error; the handle's drop ends it.
            let _ = axum::serve(listener, service).await;
        });
        Ok(Server {
            addr,
            accepted,
            ledger,
            built_on_pool: false,
            _launched: None,
            pool,
        })
    }

    /// Starts a service by its own launch function on `pool`, which the server owns from
    /// now on: `launch` is given a listener bound to `127.0.0.1` on a free port and a
    /// [`Shutdown`] that resolves when the server is dropped, as a service's `main` gives
    /// them. A launch function that returns at once — an error, a panic, or no serving — is
    /// named ([`Error::Build`]).
    ///
    /// Its responses are not wrapped by perfshape's layer: no response poll is timed one by
    /// one, and the claims decide on the workers' timeline.
    pub fn launch<F, Fut, E>(pool: Pool, launch: F) -> Result<Server>
    where
        F: FnOnce(tokio::net::TcpListener, Shutdown) -> Fut + Send + 'static,
        Fut: std::future::Future<Output = std::result::Result<(), E>> + Send + 'static,
        E: std::fmt::Display,
    {
        let listener = {
            let _entered = pool.handle().enter();
            listen(SocketAddr::from(([127, 0, 0, 1], 0)))?
        };
        let addr = listener
            .local_addr()
            .map_err(|e| Error::io("reading the listener's address", e))?;
        let launched = launched::Launched::start(&pool, listener, launch)?;
        Ok(Server {
            addr,
            accepted: Arc::default(),
            ledger: Arc::default(),
            built_on_pool: true,
            _launched: Some(launched),
            pool,
        })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://<addr>`, to which a path is appended.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// TCP connections accepted so far.
    pub fn accepted_connections(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// What the server records of each response while a claim reads it.
    pub(crate) fn ledger(&self) -> &Arc<Ledger> {
        &self.ledger
    }

    /// Marks the service as built on its own pool (`Target::serve_with`): what its builder
    /// spawned — a background job — runs on the workers the claims measure.
    pub(crate) fn built_on_pool(mut self) -> Server {
        self.built_on_pool = true;
        self
    }

    /// Whether the service was built on its own pool, so that tasks it spawned as it was
    /// built may run on the workers whatever the requests.
    pub(crate) fn runs_its_own_tasks(&self) -> bool {
        self.built_on_pool
    }

    /// The pool the server runs on: its settings, and its workers' activity.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }
}

/// A listener on `addr` whose accept queue holds [`ACCEPT_BACKLOG`] connections.
///
/// A blocking server accepts only when a worker is free, so a fan-out's connections wait in
/// the kernel's accept queue while its handlers sleep. `std::net::TcpListener::bind` asks
/// for 128: the 129th SYN was dropped and its client retried after 1 s, then 3 s — the
/// 1000-request rows of seed 002 ran 1.8–5.5× the model in rounds that opened new
/// connections. tokio's own `TcpListener::bind` asks for 1024, as here, so a user's axum
/// service and perfshape's see the same queue. (The kernel caps it at `net.core.somaxconn`.)
fn listen(addr: SocketAddr) -> Result<tokio::net::TcpListener> {
    let bind = |e| Error::io(format!("binding {addr}"), e);
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(bind)?;
    // As tokio's TcpListener::bind does on Unix: a restarted `perfshape serve` can bind its
    // port again while old connections sit in TIME_WAIT.
    #[cfg(unix)]
    socket.set_reuseaddr(true).map_err(bind)?;
    socket.bind(addr).map_err(bind)?;
    socket.listen(ACCEPT_BACKLOG).map_err(bind)
}
