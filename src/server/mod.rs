//! The server side: strategies, the router, and a handle to a running server.

mod listener;
mod report;
mod routes;
mod strategy;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use report::{RuntimeFigures, WorkReport};
pub use strategy::{MAX_WORK, ServerStrategy};

use crate::error::{Error, Result};
use crate::pool::{Pool, PoolSettings};
use listener::{CountingListener, Peer};

/// The router a [`Server`] serves, for calling without a socket (tests, paused time).
///
/// Every strategy's route (`/blocking?ms=20`, ...) and `/health`. Reports it produces have
/// no `peer`, since there is no connection.
pub fn app() -> axum::Router {
    routes::app(routes::AppState::new(Instant::now()))
}

/// A perfshape server running on its own [`Pool`], bound to `127.0.0.1` on a free port.
///
/// It serves every [`ServerStrategy`] at once (`/blocking?ms=20`, `/async?ms=20`, ...)
/// plus `/health`. Dropping the handle shuts the server down without waiting for
/// workers that are stuck in a blocking sleep.
///
/// ```
/// use std::time::Duration;
/// use perfshape::{Pool, Server, ServerStrategy};
///
/// // Arrange: a server with two workers.
/// let server = Server::start(Pool::workers("server", 2)?)?;
/// // Act: ask where a 20 ms blocking request goes.
/// let url = server.url(&ServerStrategy::Blocking, Duration::from_millis(20))?;
/// // Assert
/// assert!(url.starts_with("http://127.0.0.1:"));
/// assert!(url.ends_with("/blocking?ms=20"));
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    accepted: Arc<AtomicU64>,
    // Declared last: dropped after the fields above, and it owns every server thread.
    pool: Pool,
}

impl Server {
    /// Starts serving on `pool`, which the server owns from now on, at `127.0.0.1` on a
    /// port the system picks.
    pub fn start(pool: Pool) -> Result<Server> {
        Server::start_on(pool, SocketAddr::from(([127, 0, 0, 1], 0)))
    }

    /// Starts serving on `pool` at `addr` (for `perfshape serve` and external load tools).
    pub fn start_on(pool: Pool, addr: SocketAddr) -> Result<Server> {
        let std_listener = std::net::TcpListener::bind(addr)
            .map_err(|e| Error::io(format!("binding {addr}"), e))?;
        std_listener
            .set_nonblocking(true)
            .map_err(|e| Error::io("making the listener non-blocking", e))?;
        let addr = std_listener
            .local_addr()
            .map_err(|e| Error::io("reading the listener's address", e))?;
        let accepted = Arc::new(AtomicU64::new(0));
        let listener = {
            // from_std registers the socket with the pool's reactor, so it must run there.
            let _entered = pool.handle().enter();
            tokio::net::TcpListener::from_std(std_listener)
                .map_err(|e| Error::io("registering the listener", e))?
        };
        let counting = CountingListener {
            inner: listener,
            accepted: Arc::clone(&accepted),
        };
        let app = app();
        pool.handle().spawn(async move {
            // serve only returns on a fatal listener error; the handle's drop ends it.
            let _ = axum::serve(counting, app.into_make_service_with_connect_info::<Peer>()).await;
        });
        Ok(Server {
            addr,
            accepted,
            pool,
        })
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The URL that asks for `strategy` with `work` (validated against [`MAX_WORK`]).
    pub fn url(&self, strategy: &ServerStrategy, work: Duration) -> Result<String> {
        Ok(format!(
            "http://{}{}",
            self.addr,
            strategy.path_and_query(work)?
        ))
    }

    /// The URL of `/health`, which answers at once when a worker is free to run it.
    pub fn health_url(&self) -> String {
        format!("http://{}/health", self.addr)
    }

    /// TCP connections accepted so far.
    pub fn accepted_connections(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// The settings of the pool the server runs on.
    pub fn pool_settings(&self) -> PoolSettings {
        self.pool.settings()
    }
}
