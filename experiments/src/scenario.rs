//! A Scenario: server strategy × pools × load, validated — one cell of an experiment, and
//! what a [`Load`](crate::load::Load) runs on a demo target.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::model::Model;
pub use crate::vocab::ServerStrategy;
use perfshape::__support::check_range;
use perfshape::Target;
use perfshape::claim::Expected;
use perfshape::client::{ClientStrategy, Lifecycle};
use perfshape::runtime::{DEFAULT_MAX_BLOCKING, MAX_REQUESTS};
use perfshape::runtime::{PoolSettings, Scheduler};

/// One experiment cell: how the server works, how the client offers load, how much.
///
/// ```
/// use std::time::Duration;
/// use perfshape::client::ClientStrategy;
/// use perfshape_experiments::scenario::{Scenario, ServerStrategy};
///
/// let scenario = Scenario::builder()
///     .server(ServerStrategy::Blocking)
///     .client(ClientStrategy::FanOut)
///     .workers(2)
///     .requests(20)
///     .work(Duration::from_millis(20))
///     .build()?;
/// assert_eq!(scenario.label(), "fan-out → blocking");
/// assert_eq!(scenario.model().predict()?.wall, Duration::from_millis(200)); // ceil(20/2) × 20 ms
/// # Ok::<(), perfshape_experiments::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// How the handler spends its work time.
    pub server: ServerStrategy,
    /// The server's pool.
    pub server_pool: PoolSettings,
    /// How load is offered.
    pub client: ClientStrategy,
    /// How the client gets its HTTP client.
    pub lifecycle: Lifecycle,
    /// Requests in the load (for a closed loop: at most).
    pub n: usize,
    /// Work time per request (for `Mixed`, its own block + wait).
    pub work: Duration,
}

impl Scenario {
    /// A builder with the seed-000 defaults: blocking server on 2 workers, sequential
    /// client, shared lifecycle, N = 10, 20 ms of work.
    pub fn builder() -> ScenarioBuilder {
        ScenarioBuilder::default()
    }

    /// The [`Model`] of this scenario: where every claim on it takes its expectation.
    pub fn model(&self) -> Model {
        let model = Model::of(
            self.server,
            self.server_pool,
            self.work,
            self.client,
            self.n,
        );
        match self.lifecycle.connection_cap() {
            Some(cap) => model.with_connection_cap(cap),
            None => model,
        }
    }

    /// What the model predicts for this scenario's wall time, with how it follows: a
    /// [`Load`](crate::load::Load)'s `wall()` expects it, and another measure may be held
    /// against it (`async_load.wall().expecting(blocking.expected_wall()?)`).
    pub fn expected_wall(&self) -> Result<Expected> {
        let model = self.model();
        Ok(Expected::duration(model.predict()?.wall, model.to_string()))
    }

    /// `client → server`, e.g. `sync-over-async(1 threads) → blocking` or `12 users →
    /// async`: how a claim's side is labelled (a loop's full settings are in the context).
    pub fn label(&self) -> String {
        let server = self.server;
        match self.client {
            ClientStrategy::ClosedLoop { users, .. } => format!("{users} users → {server}"),
            ClientStrategy::OpenLoop { rate, .. } => format!("open loop at {rate}/s → {server}"),
            client => format!("{client} → {server}"),
        }
    }

    /// The settings a claim shows for this scenario, in stable form.
    pub fn context(&self) -> Vec<(&'static str, String)> {
        let mut context = vec![
            ("client", self.client.to_string()),
            ("server pool", self.server_pool.to_string()),
            ("lifecycle", self.lifecycle.to_string()),
            ("work", format!("{} ms", self.work.as_millis())),
        ];
        // A closed loop is bounded by its duration; its N only caps it.
        if !matches!(self.client, ClientStrategy::ClosedLoop { .. }) {
            context.push(("n", self.n.to_string()));
        }
        context
    }
}

/// Builds a [`Scenario`], validating every field in [`build`](Self::build).
#[derive(Clone, Debug)]
#[must_use]
pub struct ScenarioBuilder {
    server: ServerStrategy,
    workers: usize,
    max_blocking: usize,
    scheduler: Scheduler,
    client: ClientStrategy,
    lifecycle: Lifecycle,
    n: usize,
    work: Duration,
}

impl Default for ScenarioBuilder {
    fn default() -> Self {
        ScenarioBuilder {
            server: ServerStrategy::Blocking,
            workers: 2,
            max_blocking: DEFAULT_MAX_BLOCKING,
            scheduler: Scheduler::Default,
            client: ClientStrategy::Sequential,
            lifecycle: Lifecycle::Shared,
            n: 10,
            work: Duration::from_millis(20),
        }
    }
}

impl ScenarioBuilder {
    /// The server strategy.
    pub fn server(mut self, server: ServerStrategy) -> Self {
        self.server = server;
        self
    }
    /// Server worker threads (1..=256).
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers;
        self
    }
    /// The server's blocking-thread cap (1..=4096).
    pub fn max_blocking(mut self, max_blocking: usize) -> Self {
        self.max_blocking = max_blocking;
        self
    }
    /// The server's tokio scheduler variant (validated in `build`).
    pub fn scheduler(mut self, scheduler: Scheduler) -> Self {
        self.scheduler = scheduler;
        self
    }
    /// The server's pool, every setting at once.
    pub fn pool(self, pool: PoolSettings) -> Self {
        self.workers(pool.workers)
            .max_blocking(pool.max_blocking)
            .scheduler(pool.scheduler)
    }
    /// The client strategy.
    pub fn client(mut self, client: ClientStrategy) -> Self {
        self.client = client;
        self
    }
    /// The client lifecycle (validated in `build`).
    pub fn lifecycle(mut self, lifecycle: Lifecycle) -> Self {
        self.lifecycle = lifecycle;
        self
    }
    /// Requests in the load (1..=100,000).
    pub fn requests(mut self, n: usize) -> Self {
        self.n = n;
        self
    }
    /// Work time per request (0 to 60 s).
    pub fn work(mut self, work: Duration) -> Self {
        self.work = work;
        self
    }

    /// Validates and builds.
    pub fn build(self) -> Result<Scenario> {
        check_range("n", self.n, 1, MAX_REQUESTS, "")?;
        self.server.validate(self.work)?;
        self.client.validate()?;
        self.lifecycle.validate()?;
        Ok(Scenario {
            server: self.server,
            server_pool: PoolSettings::new(self.workers, self.max_blocking)?
                .with_scheduler(self.scheduler)?,
            client: self.client,
            lifecycle: self.lifecycle,
            n: self.n,
            work: self.server.work_time(self.work),
        })
    }
}

/// Checks that `target` measures the way `scenario` says: with the scenario's client
/// lifecycle and, when perfshape serves it, on the scenario's server pool.
pub(crate) fn check_matches(target: &Target, scenario: &Scenario) -> Result<()> {
    if target
        .pool_settings()
        .is_some_and(|pool| pool != scenario.server_pool)
    {
        return Err(Error::invalid(
            "server pool",
            format!("{} in the scenario", scenario.server_pool),
            format!("the target's {} (build it with target.scenario())", target),
        ));
    }
    if target.client().lifecycle() != scenario.lifecycle {
        return Err(Error::invalid(
            "lifecycle",
            format!("{} in the scenario", scenario.lifecycle),
            format!(
                "the target's {} (build it with target.scenario())",
                target.client().lifecycle()
            ),
        ));
    }
    Ok(())
}

/// A scenario builder with `target`'s server pool and client lifecycle.
pub(crate) fn builder_for(target: &Target) -> ScenarioBuilder {
    let builder = Scenario::builder().lifecycle(target.client().lifecycle());
    match target.pool_settings() {
        Some(pool) => builder.pool(pool),
        None => builder,
    }
}
