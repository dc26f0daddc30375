//! perfshape's demo service: one route per [`ServerStrategy`] plus `/health`, and faults
//! on demand — the service every experiment's claims run on, served by the gate like any
//! router ([`target`] and [`Demo`] make it a [`Target`]).

mod faults;
mod routes;

use std::time::{Duration, Instant};

use perfshape::runtime::{Pool, PoolSettings, Server};
use perfshape::{Endpoint, Target, TargetBuilder};

use crate::error::Result;
use crate::vocab::ServerStrategy;

/// What reports call the demo service (`demo service on W=2 B=512`).
const NOUN: &str = "demo service";

/// perfshape's demo router, for calling without a socket (tests, paused time).
///
/// Every strategy's route (`/blocking?ms=20`, `/async?ms=20`, `/offload?ms=20`,
/// `/mixed?block_ms=10&wait_ms=10`, `/cpu?ms=20` or `?iters=N`, `/lock?ms=20`) and
/// `/health`, each answering with a [`WorkReport`](crate::vocab::WorkReport); and faults on
/// demand (`/fault/status?every=3&ms=N` answers 500 to every third request,
/// `/fault/drop?ms=N` cuts its response short, `/fault/stall?ms=N` waits N ms).
pub fn app() -> axum::Router {
    routes::app(routes::AppState::new(Instant::now())).merge(faults::routes())
}

/// The demo service on a new pool with `settings`, measured by the default load client.
///
/// ```
/// use perfshape::PoolSettings;
/// use perfshape_experiments::demo;
///
/// let target = demo::target(PoolSettings::workers(2)?)?;
/// assert_eq!(target.to_string(), "demo service on W=2 B=512");
/// # Ok::<(), perfshape_experiments::Error>(())
/// ```
pub fn target(settings: PoolSettings) -> Result<Target> {
    Target::builder().demo(settings)
}

/// Whether `target` is the demo service, which serves every server strategy.
pub fn is_demo(target: &Target) -> bool {
    perfshape::__support::noun(target) == NOUN
}

/// The demo service's server, for a client of one's own.
pub fn serve(pool: Pool) -> Result<Server> {
    Ok(Server::serve(pool, app())?)
}

/// The demo service's URL on `server` for `strategy` with `work` (validated against
/// [`MAX_WORK`](perfshape::runtime::MAX_WORK)).
pub fn url(server: &Server, strategy: &ServerStrategy, work: Duration) -> Result<String> {
    Ok(format!(
        "{}{}",
        server.base_url(),
        strategy.path_and_query(work)?
    ))
}

/// The demo service's `/health` on `server`, which answers at once when a worker is free
/// to run it.
pub fn health_url(server: &Server) -> String {
    format!("{}/health", server.base_url())
}

/// The demo service where a target is made: a [`TargetBuilder`] ends with it, and a demo
/// [`Target`] names its strategy routes.
pub trait Demo: Sized {
    /// What the demo makes here.
    type Made;

    /// The demo service on a new pool with `settings`.
    fn demo(self, settings: PoolSettings) -> Result<Self::Made>;
}

impl Demo for TargetBuilder {
    type Made = Target;

    fn demo(self, settings: PoolSettings) -> Result<Target> {
        let server = serve(Pool::new("server", settings)?)?;
        Ok(perfshape::__support::with_noun(self.server(server)?, NOUN))
    }
}

/// The demo service's routes on a [`Target`] that serves it.
pub trait DemoRoutes {
    /// The endpoint for `strategy` with `work` (`/blocking?ms=20`, …), checked as
    /// [`Target::checked_get`] checks one.
    fn demo_endpoint(&self, strategy: ServerStrategy, work: Duration) -> Result<Endpoint>;
}

impl DemoRoutes for Target {
    fn demo_endpoint(&self, strategy: ServerStrategy, work: Duration) -> Result<Endpoint> {
        Ok(self.checked_get(&strategy.path_and_query(work)?)?)
    }
}
