//! The client side: strategies, lifecycles, and the load client that runs them.

mod connections;
mod framing;
mod offer;
mod request;
mod send;
mod shards;
mod tls;

pub use offer::{Canary, LoadRequest};
pub use request::Request;
pub(crate) use request::{Plan, Vary, path_and_query};

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

pub use crate::vocab::{ClientStrategy, Lifecycle};

use crate::error::{Error, Result, check_range};
use crate::limits::MAX_REQUESTS;
use crate::pool::{Activity, Pool};
use crate::record::{FailureKind, RequestRecord};
use crate::run::Run;

/// Bounds on a load, so no run can hang: each request times out, and the run as a whole
/// stops sending (counting what it did not send) at its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest one request may take, connect to last byte.
    pub request_timeout: Duration,
    /// The longest one load may take.
    pub run_deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_timeout: Duration::from_secs(30),
            run_deadline: Duration::from_secs(120),
        }
    }
}

/// What sends a load's requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Driver {
    /// reqwest, with the configured [`Lifecycle`]: what the seed strategies measure.
    #[default]
    Reqwest,
    /// For a closed loop with no think time or ramp, of one plain-HTTP request with a
    /// shared client: one TCP connection per user, one single-threaded event loop per
    /// client worker (as wrk's threads), the same request bytes written each time and the
    /// response read with httparse — the load driver of `perfshape load` and `perfshape
    /// probe`, whose figures a general-purpose client's cost per request would cap (it
    /// costs what wrk costs, a third of reqwest). Any other load is sent by reqwest.
    Connections,
}

/// Offers load to a URL with a [`ClientStrategy`], from its own [`Pool`], and returns a
/// [`Run`] with one record per request.
///
/// The pool is separate from any server's, so a server whose workers are blocked cannot
/// slow the clock that measures it.
///
/// ```no_run
/// use std::time::Duration;
/// use perfshape::{ClientStrategy, Lifecycle, LoadClient, Pool, Server, ServerStrategy};
///
/// // Arrange
/// let server = Server::start(Pool::workers("server", 2)?)?;
/// let client = LoadClient::new(Pool::workers("client", 2)?, Lifecycle::Shared)?;
/// let url = server.url(&ServerStrategy::Async, Duration::from_millis(20))?;
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

/// What the tasks of a load share.
struct Inner {
    lifecycle: Lifecycle,
    limits: Limits,
    /// One client (shared, capped), or the pool's clients used in turn.
    clients: Vec<reqwest::Client>,
    next_client: AtomicUsize,
    /// Requests handed to an HTTP client so far, over every load: what a server should
    /// have received, for checking that each arrived exactly once.
    issued: std::sync::atomic::AtomicU64,
    /// Permits for requests in flight to the host, when the lifecycle caps connections.
    cap: Option<Arc<Semaphore>>,
    /// Peers seen on earlier responses: tells a reused connection from a new one.
    seen: Mutex<HashSet<SocketAddr>>,
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
        let (count, idle_per_host) = match lifecycle {
            Lifecycle::Pooled { clients } => (clients, usize::MAX),
            Lifecycle::ConnectionCap { per_host } => (1, per_host),
            _ => (1, usize::MAX),
        };
        let clients = (0..count)
            .map(|_| build_client(limits, idle_per_host))
            .collect::<Result<Vec<_>>>()?;
        Ok(LoadClient {
            inner: Arc::new(Inner {
                lifecycle,
                limits,
                clients,
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
            canary.as_ref().map(|(p, a)| (p, *a)),
        )
    }

    /// Sends `n` requests of `plan` the way `strategy` says (and the canary's one request
    /// `after` the load started), and waits for all of them.
    pub(crate) fn run_plan(
        &self,
        strategy: ClientStrategy,
        plan: &Plan,
        n: usize,
        canary: Option<(&Plan, Duration)>,
    ) -> Result<Run> {
        check_range("n", n, 1, MAX_REQUESTS, "")?;
        strategy.validate()?;
        let canary = canary.map(|(plan, after)| (Arc::new(plan.clone()), after));
        let label = plan.label.clone();
        let plan = Arc::new(plan.clone());
        // The connections driver's threads start before the clock does, not inside the
        // first load's time.
        let shards = match self.driver {
            Driver::Connections => Some(self.shards()?),
            Driver::Reqwest => None,
        };
        let origin = Instant::now();
        let deadline = origin + self.inner.limits.run_deadline;
        // The canary is its own task on the pool: it must not wait behind the load (and
        // cannot ride on sync-over-async's blocked threads).
        let canary = self.spawn_canary(canary, origin, deadline);
        let (records, canary) = match strategy {
            ClientStrategy::SyncOverAsync { threads } => {
                let records = self.sync_over_async(threads, &plan, n, origin, deadline);
                (
                    records,
                    self.pool.block_on(async { join_canary(canary).await }),
                )
            }
            _ => {
                let inner = Arc::clone(&self.inner);
                let at = Timing { origin, deadline };
                // The connections driver, where it can send this load.
                let raw = plan
                    .fixed()
                    .filter(|request| {
                        self.driver == Driver::Connections
                            && self.inner.lifecycle == Lifecycle::Shared
                            && connections::suits(request)
                    })
                    .map(|request| Arc::new(request.clone()));
                let load = match (strategy, raw.zip(shards)) {
                    (
                        ClientStrategy::ClosedLoop {
                            users,
                            think,
                            ramp,
                            duration,
                        },
                        Some((request, shards)),
                    ) if think.is_zero() && ramp.is_zero() => {
                        let timeout = self.inner.limits.request_timeout;
                        let next = Arc::new(AtomicUsize::new(0));
                        let shards = shards.spread(users, |share| {
                            connections::closed_loop(
                                Arc::clone(&request),
                                Arc::clone(&next),
                                n,
                                share,
                                duration,
                                at,
                                timeout,
                            )
                        });
                        self.pool.handle().spawn(async move {
                            let mut records = Vec::new();
                            for shard in shards {
                                // A shard that panicked loses its records: Run::new
                                // refuses the gap loudly.
                                records.extend(shard.await.unwrap_or_default());
                            }
                            inner
                                .issued
                                .fetch_add(records.len() as u64, Ordering::Relaxed);
                            records
                        })
                    }
                    _ => self.pool.handle().spawn(async move {
                        match strategy {
                            ClientStrategy::FanOut => fan_out(inner, plan, n, at).await,
                            ClientStrategy::ClosedLoop {
                                users,
                                think,
                                ramp,
                                duration,
                            } => {
                                let users = Users {
                                    users,
                                    think,
                                    ramp,
                                    duration,
                                };
                                closed_loop(inner, plan, n, users, at).await
                            }
                            ClientStrategy::OpenLoop {
                                rate,
                                max_in_flight,
                            } => open_loop(inner, plan, n, rate, max_in_flight, at).await,
                            _ => sequential(inner, plan, n, at).await,
                        }
                    }),
                };
                self.pool.block_on(async {
                    let records = load.await.map_err(task_failed)?;
                    Ok::<_, Error>((records, join_canary(canary).await))
                })?
            }
        };
        let wall = records.iter().map(|r| r.end).max().unwrap_or_default();
        let cut_short = cut_short(strategy, n, &records, origin.elapsed(), self.inner.limits);
        let mut run = Run::new(label, records, wall);
        run.cut_short = cut_short;
        if self.inner.lifecycle == Lifecycle::PerRequest {
            // A fresh client per request always opens a fresh connection.
            run.classify_connections(&mut HashSet::new());
        } else {
            let mut seen = self.inner.seen.lock().unwrap_or_else(|p| p.into_inner());
            run.classify_connections(&mut seen);
        }
        run.canary = canary;
        run.origin = Some(origin);
        Ok(run)
    }

    fn spawn_canary(
        &self,
        canary: Option<(Arc<Plan>, Duration)>,
        origin: Instant,
        deadline: Instant,
    ) -> Option<tokio::task::JoinHandle<RequestRecord>> {
        let (plan, after) = canary?;
        let inner = Arc::clone(&self.inner);
        Some(self.pool.handle().spawn(async move {
            send_at(origin + after).await;
            inner.send(&plan, 0, origin, after, deadline).await
        }))
    }

    fn sync_over_async(
        &self,
        threads: usize,
        plan: &Plan,
        n: usize,
        origin: Instant,
        deadline: Instant,
    ) -> Vec<RequestRecord> {
        let next = AtomicUsize::new(0);
        let records = Mutex::new(Vec::with_capacity(n));
        let handle = self.pool.handle();
        std::thread::scope(|scope| {
            for _ in 0..threads.min(n) {
                scope.spawn(|| {
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= n {
                            break;
                        }
                        let intended = origin.elapsed();
                        // The `.Result` pattern: this OS thread does nothing until the
                        // response is in.
                        let record = handle
                            .block_on(self.inner.send(plan, index, origin, intended, deadline));
                        records
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(record);
                    }
                });
            }
        });
        records.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}

impl Inner {
    /// Sends one request with a client of the configured lifecycle, bounded by `deadline`.
    /// Under a connection cap it first queues for a permit: that wait counts as latency,
    /// since latency runs from the intended start.
    async fn send(
        &self,
        plan: &Plan,
        index: usize,
        origin: Instant,
        intended: Duration,
        deadline: Instant,
    ) -> RequestRecord {
        let request = match plan.prepared(index) {
            Ok(request) => request,
            Err(what) => {
                let mut record =
                    RequestRecord::failed_at(index, origin.elapsed(), FailureKind::Build);
                record.error = Some(what);
                return record;
            }
        };
        let work = async {
            let _permit = match &self.cap {
                Some(cap) => cap.acquire().await.ok(),
                None => None,
            };
            self.issued.fetch_add(1, Ordering::Relaxed);
            match self.lifecycle {
                Lifecycle::PerRequest => match build_client(self.limits, usize::MAX) {
                    Ok(client) => send::send(&client, &request, index, origin, intended).await,
                    Err(_) => {
                        RequestRecord::failed_at(index, origin.elapsed(), FailureKind::Request)
                    }
                },
                _ => {
                    let turn = self.next_client.fetch_add(1, Ordering::Relaxed);
                    let client = &self.clients[turn % self.clients.len()];
                    send::send(client, &request, index, origin, intended).await
                }
            }
        };
        match tokio::time::timeout_at(deadline.into(), work).await {
            Ok(record) => record,
            Err(_) => RequestRecord::failed_at(index, origin.elapsed(), FailureKind::Deadline),
        }
    }
}

/// The clock of one load: its start, and the deadline after which nothing is sent.
#[derive(Clone, Copy)]
struct Timing {
    origin: Instant,
    deadline: Instant,
}

/// The closed loop's users.
#[derive(Clone, Copy)]
struct Users {
    users: usize,
    think: Duration,
    ramp: Duration,
    duration: Duration,
}

async fn sequential(
    inner: Arc<Inner>,
    plan: Arc<Plan>,
    n: usize,
    at: Timing,
) -> Vec<RequestRecord> {
    let mut records = Vec::with_capacity(n);
    for index in 0..n {
        let intended = at.origin.elapsed();
        records.push(
            inner
                .send(&plan, index, at.origin, intended, at.deadline)
                .await,
        );
    }
    records
}

async fn fan_out(inner: Arc<Inner>, plan: Arc<Plan>, n: usize, at: Timing) -> Vec<RequestRecord> {
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..n {
        let inner = Arc::clone(&inner);
        let plan = Arc::clone(&plan);
        tasks.spawn(async move {
            let intended = at.origin.elapsed();
            inner
                .send(&plan, index, at.origin, intended, at.deadline)
                .await
        });
    }
    join_all(tasks, Vec::with_capacity(n), n, at).await
}

/// Each user sends, waits for the response, thinks, and sends again; as in the model, a
/// user sends its next request only if that start lies within `duration`.
async fn closed_loop(
    inner: Arc<Inner>,
    plan: Arc<Plan>,
    n: usize,
    users: Users,
    at: Timing,
) -> Vec<RequestRecord> {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for user in 0..users.users {
        let (inner, plan, next) = (Arc::clone(&inner), Arc::clone(&plan), Arc::clone(&next));
        let first = users.ramp.mul_f64(user as f64 / users.users as f64);
        tasks.spawn(async move {
            tokio::time::sleep_until((at.origin + first).into()).await;
            let mut records = Vec::new();
            while at.origin.elapsed() <= users.duration && Instant::now() < at.deadline {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= n {
                    break;
                }
                let intended = at.origin.elapsed();
                records.push(
                    inner
                        .send(&plan, index, at.origin, intended, at.deadline)
                        .await,
                );
                if at.origin.elapsed() + users.think > users.duration {
                    break;
                }
                // No think time means no wait: a zero sleep still waits for the timer's
                // next tick (up to ~1 ms), which would cap a fast endpoint's throughput.
                if !users.think.is_zero() {
                    tokio::time::sleep(users.think).await;
                }
            }
            records
        });
    }
    gather(tasks).await
}

/// Every user's records, once all have ended.
async fn gather(mut tasks: tokio::task::JoinSet<Vec<RequestRecord>>) -> Vec<RequestRecord> {
    let mut records = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        // A user task that panicked loses its records: Run::new refuses the gap loudly.
        if let Ok(user_records) = joined {
            records.extend(user_records);
        }
    }
    records
}

/// The bound that ended a load early, if one did: a closed loop whose `n` requests were
/// all sent before its duration was up, or any load past the run's deadline (requests
/// recorded as past it, or a closed loop meant to outlast it that ran into it).
fn cut_short(
    strategy: ClientStrategy,
    n: usize,
    records: &[RequestRecord],
    elapsed: Duration,
    limits: Limits,
) -> Option<crate::cut_short::CutShort> {
    use crate::cut_short::CutShort;
    let deadline = records
        .iter()
        .any(|r| {
            r.outcome
                == crate::record::Outcome::Failed {
                    kind: FailureKind::Deadline,
                }
        })
        .then_some(CutShort::Deadline {
            at: limits.run_deadline,
        });
    let ClientStrategy::ClosedLoop { duration, .. } = strategy else {
        return deadline;
    };
    if duration > limits.run_deadline && elapsed >= limits.run_deadline {
        return Some(CutShort::Deadline {
            at: limits.run_deadline,
        });
    }
    let last = records.iter().map(|r| r.start).max().unwrap_or_default();
    if records.len() >= n && last < duration {
        return Some(CutShort::Requests {
            n,
            at: last,
            meant: duration,
        });
    }
    deadline
}

/// Request i is intended at i / rate. It is sent then if fewer than `max_in_flight` are in
/// flight, and dropped (recorded as such) otherwise: the load never spawns without bound
/// and never waits for a slow server before offering the next request.
async fn open_loop(
    inner: Arc<Inner>,
    plan: Arc<Plan>,
    n: usize,
    rate: f64,
    max_in_flight: usize,
    at: Timing,
) -> Vec<RequestRecord> {
    let slots = Arc::new(Semaphore::new(max_in_flight));
    let mut tasks = tokio::task::JoinSet::new();
    let mut records = Vec::with_capacity(n);
    for index in 0..n {
        let intended = Duration::from_secs_f64(index as f64 / rate);
        tokio::time::sleep_until((at.origin + intended).into()).await;
        if Instant::now() >= at.deadline {
            records.push(RequestRecord::failed_at(
                index,
                at.origin.elapsed(),
                FailureKind::Deadline,
            ));
            continue;
        }
        match Arc::clone(&slots).try_acquire_owned() {
            Err(_) => {
                let mut dropped =
                    RequestRecord::failed_at(index, at.origin.elapsed(), FailureKind::Dropped);
                dropped.intended_start = intended;
                records.push(dropped);
            }
            Ok(slot) => {
                let (inner, plan) = (Arc::clone(&inner), Arc::clone(&plan));
                tasks.spawn(async move {
                    let record = inner
                        .send(&plan, index, at.origin, intended, at.deadline)
                        .await;
                    drop(slot);
                    record
                });
            }
        }
    }
    join_all(tasks, records, n, at).await
}

/// Collects the tasks' records into `records`, adding a deadline record for any index of
/// `0..n` that is still missing (a task that panicked), so nothing is ever dropped.
async fn join_all(
    mut tasks: tokio::task::JoinSet<RequestRecord>,
    mut records: Vec<RequestRecord>,
    n: usize,
    at: Timing,
) -> Vec<RequestRecord> {
    while let Some(joined) = tasks.join_next().await {
        if let Ok(record) = joined {
            records.push(record);
        }
    }
    let mut done = vec![false; n];
    for record in &records {
        done[record.index] = true;
    }
    let now = at.origin.elapsed();
    records.extend(
        (0..n)
            .filter(|&i| !done[i])
            .map(|i| RequestRecord::failed_at(i, now, FailureKind::Deadline)),
    );
    records
}

async fn join_canary(
    canary: Option<tokio::task::JoinHandle<RequestRecord>>,
) -> Option<RequestRecord> {
    match canary {
        Some(handle) => handle.await.ok(),
        None => None,
    }
}

fn task_failed(error: tokio::task::JoinError) -> Error {
    Error::io(
        "the load task ended abnormally",
        std::io::Error::other(error.to_string()),
    )
}

/// Refuses, before anything is sent, a URL that is not an absolute `http(s)://` URL: a
/// typo must fail at once, not as N failed requests.
pub(crate) fn check_url(url: &str) -> Result<reqwest::Url> {
    let unreachable = |reason: String| Error::Unreachable {
        url: url.to_string(),
        reason,
    };
    let parsed = reqwest::Url::parse(url).map_err(|e| unreachable(format!("not a URL ({e})")))?;
    match parsed.scheme() {
        "https" if !cfg!(feature = "https") => Err(unreachable(
            "https needs perfshape's `https` feature (rustls); this build has plain HTTP only"
                .into(),
        )),
        "http" | "https" if parsed.host().is_some() => Ok(parsed),
        "http" | "https" => Err(unreachable("the URL has no host".into())),
        other => Err(unreachable(format!(
            "scheme {other:?} is not http or https"
        ))),
    }
}

/// A reqwest client bound by `limits`, keeping at most `idle_per_host` idle connections;
/// proxies are ignored because every target of a shape measurement is reached directly.
fn build_client(limits: Limits, idle_per_host: usize) -> Result<reqwest::Client> {
    tls::ensure_crypto_provider();
    reqwest::Client::builder()
        .no_proxy()
        .timeout(limits.request_timeout)
        .pool_max_idle_per_host(idle_per_host)
        .build()
        .map_err(Error::Client)
}

/// Waits until `at`, to within microseconds: tokio's timer fires on millisecond ticks, so a
/// canary meant for 0.5 ms into a load would leave at 1 or 2 ms — after a fast slow request
/// it was meant to overlap. The last millisecond is yielded away instead of slept.
async fn send_at(at: Instant) {
    if let Some(early) = at.checked_sub(Duration::from_millis(1)) {
        tokio::time::sleep_until(early.into()).await;
    }
    while Instant::now() < at {
        tokio::task::yield_now().await;
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
