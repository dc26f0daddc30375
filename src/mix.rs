//! A traffic mix: several endpoints of one target, sent together by weight. Its claim,
//! that none of their handlers blocks its worker, is in [`claims`](crate::claims).

use std::sync::Arc;

use crate::client::{Plan, Request};
use crate::endpoint::Endpoint;
use crate::error::{Error, Refused, Result, check_range};
use crate::limits::MAX_REQUESTS;
use crate::target::Target;

/// Endpoints of one [`Target`] sent together, each in proportion to its weight, in a
/// fixed interleaved order (smooth weighted round robin: weights 8, 1, 1 send the rare
/// routes apart, not in a burst).
///
/// ```
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, Verdict};
///
/// let router = Router::new()
///     .route("/health", get(|| async { "ok" }))
///     .route("/report", get(|| async {
///         tokio::time::sleep(std::time::Duration::from_millis(20)).await;
///         "report"
///     }))
///     .route("/export", get(|| async {
///         std::thread::sleep(std::time::Duration::from_millis(2)); // the bug, 2 ms of 20
///         tokio::time::sleep(std::time::Duration::from_millis(18)).await;
///         "export"
///     }));
/// let target = Target::serve(PoolSettings::workers(1)?, router)?;
/// let mix = target.mix([
///     (target.get("/health"), 8),
///     (target.get("/report"), 1),
///     (target.get("/export"), 1),
/// ]);
/// let checked = mix.none_blocks_its_worker().check()?;
/// assert_eq!(checked.verdict(), Verdict::Broken);
/// // The route that held its worker leads what the claim found.
/// assert!(checked.report().finding().unwrap().starts_with("/export waits ≈2."));
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Mix {
    pub(crate) target: Target,
    pub(crate) routes: Vec<(Endpoint, usize)>,
    pub(crate) concurrency: Option<usize>,
    /// The first setting refused on the way here, named by the claim's `check()`.
    pub(crate) refused: Option<Refused>,
}

impl Mix {
    pub(crate) fn new(target: &Target, routes: Vec<(Endpoint, usize)>) -> Mix {
        Mix {
            target: target.clone(),
            routes,
            concurrency: None,
            refused: None,
        }
    }

    /// Concurrent requests in the mix's fan-out (1..=100,000; another number is named by
    /// the claim's `check()`); default 20 per server worker.
    pub fn concurrency(mut self, n: usize) -> Self {
        let checked = check_range("concurrency", n, 1, MAX_REQUESTS, "");
        if let Some(n) = Refused::keep(&mut self.refused, checked) {
            self.concurrency = Some(n);
        }
        self
    }

    /// The first setting refused in this mix's chain or in one of its routes'.
    pub(crate) fn refused(&self) -> Option<Refused> {
        self.refused
            .clone()
            .or_else(|| self.routes.iter().find_map(|(e, _)| e.refused()))
    }

    /// How reports name the mix: `mix of /health ×8, /report ×1, /export ×1`.
    pub fn name(&self) -> String {
        let routes: Vec<String> = self
            .routes
            .iter()
            .map(|(endpoint, weight)| format!("{} ×{weight}", endpoint.name()))
            .collect();
        format!("mix of {}", routes.join(", "))
    }

    /// Refuses, before any load, a mix perfshape cannot read route by route.
    pub(crate) fn validate(&self) -> Result<()> {
        if let Some(refused) = self.refused() {
            return Err(refused.to_error());
        }
        check_range("mix routes", self.routes.len(), 1, 16, "")?;
        for (endpoint, weight) in &self.routes {
            check_range("mix weight", *weight, 1, 1000, "")?;
            if !endpoint.target().same_service(&self.target) {
                return Err(Error::invalid(
                    "mix route",
                    format!("{} on another target", endpoint.name()),
                    "endpoints of the target the mix was made on",
                ));
            }
        }
        if self.target.served().is_none() {
            return Err(Error::invalid(
                "target",
                self.target.to_string(),
                "a router perfshape serves (Target::serve): the mix reads each route's held \
                 time from its handler's timed polls; on a running service, claim \
                 does_not_block_its_worker() of each endpoint",
            ));
        }
        Ok(())
    }

    /// The order of one cycle of the mix: the route of each of its requests.
    pub(crate) fn cycle(&self) -> Vec<usize> {
        let total: usize = self.routes.iter().map(|(_, w)| w).sum();
        let mut current = vec![0i64; self.routes.len()];
        let mut cycle = Vec::with_capacity(total);
        for _ in 0..total {
            for (c, (_, weight)) in current.iter_mut().zip(&self.routes) {
                *c += *weight as i64;
            }
            let best = (0..current.len())
                .max_by_key(|&r| (current[r], std::cmp::Reverse(r)))
                .unwrap_or(0);
            current[best] -= total as i64;
            cycle.push(best);
        }
        cycle
    }

    /// The mix's requests, request i from route `cycle[i % len]`, each endpoint's
    /// generator given its own next number, as it would be alone.
    pub(crate) fn plan(&self) -> Result<Plan> {
        let cycle = Arc::new(self.cycle());
        let routes: Arc<Vec<(Endpoint, usize)>> = Arc::new(self.routes.clone());
        let (first, _) = &self.routes[0];
        let vary = move |i: usize, _: Request| routes[cycle[i % cycle.len()]].0.next_request();
        Ok(
            Plan::new(self.target.base(), first.request(), Some(Arc::new(vary)))?
                .labelled(self.name()),
        )
    }
}

impl Target {
    /// A traffic mix of this target's endpoints, each sent in proportion to its weight:
    /// [`Mix::none_blocks_its_worker`] names the route whose handler holds its worker.
    pub fn mix(&self, routes: impl IntoIterator<Item = (Endpoint, usize)>) -> Mix {
        Mix::new(self, routes.into_iter().collect())
    }
}
