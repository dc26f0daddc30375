//! The client side: strategies, lifecycles, and the load client that runs them.

mod connections;
mod dispatch;
mod driver;
mod framing;
#[cfg(feature = "grpc")]
mod grpc;
mod http;
mod inner;
mod limits;
mod loops;
mod offer;
mod request;
mod retry;
mod send;
mod shards;
mod tls;

pub use driver::Driver;
pub use http::check_url;
pub use limits::Limits;
pub use offer::{Canary, CanaryPlan, LoadRequest};
pub use request::Plan;
pub use request::Request;
pub(crate) use request::{Vary, path_and_query};

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

pub use crate::vocab::{ClientStrategy, Lifecycle};

use crate::error::{Result, check_range};
use crate::pool::{Activity, Pool};
use crate::run::Run;
use http::build_client;
use inner::Inner;

/// Offers load to a URL with a [`ClientStrategy`], from its own [`Pool`], and returns a
/// [`Run`] with one record per request.
///
/// The pool is separate from any server's, so a server whose workers are blocked cannot
/// slow the clock that measures it.
///
/// ```no_run
/// use std::time::Duration;
/// use axum::{Router, routing::get};
/// use perfshape::client::{ClientStrategy, Lifecycle, LoadClient};
/// use perfshape::runtime::{Pool, Server};
///
/// // Arrange: a handler that awaits 20 ms, on two workers.
/// let router = Router::new().route("/wait", get(|| async {
///     tokio::time::sleep(Duration::from_millis(20)).await;
///     "done"
/// }));
/// let server = Server::serve(Pool::workers("server", 2)?, router)?;
/// let client = LoadClient::new(Pool::workers("client", 2)?, Lifecycle::Shared)?;
/// let url = format!("{}/wait", server.base_url());
/// // Act
/// let run = client.run(ClientStrategy::FanOut, &url, 20)?;
/// // Assert: every request is accounted for.
/// assert_eq!(run.sent(), run.ok() + run.failed());
/// # Ok::<(), perfshape::Error>(())
/// ```
pub struct LoadClient {
    inner: Arc<Inner>,
    pool: Pool,
    /// What sends its closed loops; chosen before a load starts, never read by its tasks.
    driver: Driver,
    /// The connections driver's threads, one per worker of `pool`, started by its first
    /// load.
    shards: OnceLock<shards::Shards>,
}

impl std::fmt::Debug for LoadClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadClient")
            .field("pool", &self.pool.settings())
            .field("lifecycle", &self.inner.lifecycle)
            .field("limits", &self.inner.limits)
            .finish()
    }
}

impl LoadClient {
    /// A load client on `pool` with the default [`Limits`].
    pub fn new(pool: Pool, lifecycle: Lifecycle) -> Result<LoadClient> {
        LoadClient::with_limits(pool, lifecycle, Limits::default())
    }

    /// A load client on `pool` with the given limits (each 1 ms to 1 hour).
    pub fn with_limits(pool: Pool, lifecycle: Lifecycle, limits: Limits) -> Result<LoadClient> {
        let hour = Duration::from_secs(3600).as_millis();
        check_range(
            "request_timeout",
            limits.request_timeout.as_millis(),
            1,
            hour,
            " ms",
        )?;
        check_range(
            "run_deadline",
            limits.run_deadline.as_millis(),
            1,
            hour,
            " ms",
        )?;
        lifecycle.validate()?;
        let count = match lifecycle {
            Lifecycle::Pooled { clients } => clients,
            _ => 1,
        };
        let clients = (0..count)
            .map(|_| build_client(limits, inner::idle_per_host(lifecycle), false))
            .collect::<Result<Vec<_>>>()?;
        Ok(LoadClient {
            inner: Arc::new(Inner {
                lifecycle,
                limits,
                clients,
                http2_clients: OnceLock::new(),
                next_client: AtomicUsize::new(0),
                issued: std::sync::atomic::AtomicU64::new(0),
                cap: lifecycle
                    .connection_cap()
                    .map(|per_host| Arc::new(Semaphore::new(per_host))),
                seen: Mutex::new(HashSet::new()),
            }),
            pool,
            driver: Driver::Reqwest,
            shards: OnceLock::new(),
        })
    }

    /// The same client (its pool and settings) sending closed loops with `driver`.
    #[must_use]
    pub fn with_driver(mut self, driver: Driver) -> LoadClient {
        self.driver = driver;
        self
    }

    /// What sends this client's closed loops.
    pub fn driver(&self) -> Driver {
        self.driver
    }

    /// The pool the load runs on.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// What the load client's workers have done so far: its pool's workers, each with the
    /// connections driver's thread of the same index added (its busy time and parks).
    pub fn activity(&self) -> Activity {
        self.with_shards(self.pool.activity())
    }

    /// [`activity`](Self::activity) once every worker and shard thread is parked (or
    /// after `limit`), as [`Pool::settled_activity`].
    pub fn settled_activity(&self, limit: Duration) -> Activity {
        let deadline = Instant::now() + limit;
        if let Some(shards) = self.shards.get() {
            while !shards.parked() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        let pool = self
            .pool
            .settled_activity(deadline.saturating_duration_since(Instant::now()));
        self.with_shards(pool)
    }

    fn with_shards(&self, mut activity: Activity) -> Activity {
        if let Some(shards) = self.shards.get() {
            for (worker, shard) in activity.workers.iter_mut().zip(shards.activity()) {
                worker.busy += shard.busy;
                worker.parks += shard.parks;
            }
        }
        activity
    }

    /// The connections driver's threads, started on first use.
    fn shards(&self) -> Result<&shards::Shards> {
        if self.shards.get().is_none() {
            let started = shards::Shards::new(self.pool.name(), self.pool.settings().workers)?;
            // Two loads racing here each start a set: the second is dropped, its threads end.
            let _ = self.shards.set(started);
        }
        Ok(self.shards.get().expect("set above"))
    }

    /// Requests this client has handed to an HTTP client so far, over every load (warm-ups
    /// and canaries included; an open loop's dropped requests and requests past a run's
    /// deadline never are): a server should have received exactly these.
    pub fn issued(&self) -> u64 {
        self.inner.issued.load(Ordering::Relaxed)
    }

    /// The limits every load of this client runs under.
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// The lifecycle of the HTTP clients this load client uses.
    pub fn lifecycle(&self) -> Lifecycle {
        self.inner.lifecycle
    }

    /// Sends `n` GET requests to `url` the way `strategy` says, and waits for all of them.
    pub fn run(&self, strategy: ClientStrategy, url: &str, n: usize) -> Result<Run> {
        self.offer(LoadRequest::new(strategy, url, n))
    }

    /// Offers the load `request` asks for and waits for all of it, its canary too when it
    /// has one ([`Run::canary`]).
    pub fn offer(&self, request: LoadRequest<'_>) -> Result<Run> {
        // Parsed once, here, so a typo fails before anything is sent and no request pays
        // for parsing it again.
        let canary = match request.canary {
            Some(canary) => Some((Plan::get(&check_url(canary.url)?), canary.after)),
            None => None,
        };
        let plan = Plan::get(&check_url(request.url)?);
        self.run_plan(
            request.strategy,
            &plan,
            request.n,
            canary.as_ref().map(|(plan, after)| CanaryPlan {
                plan,
                after: *after,
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The load client's busy time counts its connections driver's threads: 30 ms of work
    /// on shard 1 shows in worker 1's busy time (tokio counts a task's poll, however it
    /// spends it), and nothing is lost between loads.
    #[test]
    fn the_activity_counts_the_connections_driver_s_threads() -> Result<()> {
        let client = LoadClient::new(Pool::workers("client-test", 2)?, Lifecycle::Shared)?;
        let before = client.settled_activity(Duration::from_secs(1));
        let work = |share: usize| async move {
            std::thread::sleep(Duration::from_millis(30));
            share
        };
        // 3 users: shard 0 takes 2, shard 1 takes 1.
        let loads = client.shards()?.spread(3, work);
        let shares = client.pool.block_on(async { joined(loads).await });
        assert_eq!(shares, vec![2, 1]);
        let window = client
            .settled_activity(Duration::from_secs(1))
            .since(&before);
        assert!(
            window
                .workers
                .iter()
                .all(|w| w.busy >= Duration::from_millis(30)),
            "{window}"
        );
        Ok(())
    }

    async fn joined(loads: Vec<tokio::task::JoinHandle<usize>>) -> Vec<usize> {
        let mut shares = Vec::new();
        for load in loads {
            shares.push(load.await.expect("no panic"));
        }
        shares
    }
}
