//! A Scenario: server strategy × pools × load, validated, runnable on its own.

use std::time::Duration;

use crate::client::{ClientStrategy, Lifecycle, LoadClient, MAX_REQUESTS};
use crate::error::{Result, check_range};
use crate::model::Model;
use crate::pool::{DEFAULT_MAX_BLOCKING, Pool, PoolSettings};
use crate::run::Run;
use crate::server::{MAX_WORK, Server, ServerStrategy};

/// One experiment cell: how the server works, how the client offers load, how much.
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
    /// The load generator's pool.
    pub client_pool: PoolSettings,
    /// Requests in the load.
    pub n: usize,
    /// Work time per request (for `Mixed`, its own block + wait).
    pub work: Duration,
}

impl Scenario {
    /// A builder with the seed-000 defaults: blocking server on 2 workers, sequential
    /// client, shared lifecycle, 2 client workers, N = 10, 20 ms of work.
    pub fn builder() -> ScenarioBuilder {
        ScenarioBuilder::default()
    }

    /// The [`Model`] of this scenario.
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

    /// Starts a server and a load client on fresh pools, warms up with one request per
    /// connection the load will use, runs the load, and returns its run.
    pub fn measure(&self) -> Result<Run> {
        let concurrency = self.client.concurrency(self.n) as u64;
        // Two descriptors per connection (both ends are in this process), plus slack.
        crate::fd_limit::ensure_fd_limit(2 * concurrency + 256)?;
        let server = Server::start(Pool::new("server", self.server_pool)?)?;
        let client = LoadClient::new(Pool::new("client", self.client_pool)?, self.lifecycle)?;
        let url = server.url(&self.server, self.work)?;
        // Warm up what the load will use (connections, threads) without repeating it whole.
        client.run(ClientStrategy::FanOut, &url, concurrency.max(1) as usize)?;
        client.run(self.client, &url, self.n)
    }
}

/// Builds a [`Scenario`], validating every field in [`build`](Self::build).
#[derive(Clone, Debug)]
#[must_use]
pub struct ScenarioBuilder {
    server: ServerStrategy,
    workers: usize,
    max_blocking: usize,
    client: ClientStrategy,
    lifecycle: Lifecycle,
    client_workers: usize,
    n: usize,
    work: Duration,
}

impl Default for ScenarioBuilder {
    fn default() -> Self {
        ScenarioBuilder {
            server: ServerStrategy::Blocking,
            workers: 2,
            max_blocking: DEFAULT_MAX_BLOCKING,
            client: ClientStrategy::Sequential,
            lifecycle: Lifecycle::Shared,
            client_workers: 2,
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
    /// Load-generator worker threads (1..=256).
    pub fn client_workers(mut self, workers: usize) -> Self {
        self.client_workers = workers;
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
        let work = self.server.work_time(self.work);
        check_range("work_ms", work.as_millis(), 0, MAX_WORK.as_millis(), " ms")?;
        self.client.validate()?;
        self.lifecycle.validate()?;
        Ok(Scenario {
            server: self.server,
            server_pool: PoolSettings::new(self.workers, self.max_blocking)?,
            client: self.client,
            lifecycle: self.lifecycle,
            client_pool: PoolSettings::new(self.client_workers, DEFAULT_MAX_BLOCKING)?,
            n: self.n,
            work,
        })
    }
}
