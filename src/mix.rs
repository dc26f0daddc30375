//! A traffic mix: several endpoints of one target, sent together by weight, and the claim
//! that none of their handlers holds its worker — whose report names the route that does.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::claim::{Claim, ClaimReport, Measure, median as middle};
use crate::client::{Plan, Request};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result, check_range};
use crate::evidence::Evidence;
use crate::limits::MAX_REQUESTS;
use crate::target::Target;
use crate::vocab::ClientStrategy;

/// Concurrent requests per server worker in a mix's fan-out, as for one endpoint's
/// blocking claim.
const FAN_OUT_PER_WORKER: usize = 20;
/// The share of the mix's longest request a route may hold its worker for.
const HELD_SHARE_AT_MOST: f64 = 0.05;
/// A share is a positive figure: a route held for nothing reads as this.
const LEAST_SHARE: f64 = 0.001;

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
/// let target = Target::serve(router, PoolSettings::workers(1)?)?;
/// let mix = target.mix([
///     (target.get("/health"), 8),
///     (target.get("/report"), 1),
///     (target.get("/export"), 1),
/// ]);
/// let checked = mix.none_blocks_its_worker().check()?;
/// assert_eq!(checked.verdict(), Verdict::Broken);
/// assert!(checked.report().headline().contains("/export holds its worker"));
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Mix {
    target: Target,
    routes: Vec<(Endpoint, usize)>,
    concurrency: Option<usize>,
}

impl Mix {
    pub(crate) fn new(target: &Target, routes: Vec<(Endpoint, usize)>) -> Mix {
        Mix {
            target: target.clone(),
            routes,
            concurrency: None,
        }
    }

    /// Concurrent requests in the mix's fan-out (1..=100,000); default 20 per server
    /// worker.
    pub fn concurrency(mut self, n: usize) -> Result<Self> {
        check_range("concurrency", n, 1, MAX_REQUESTS, "")?;
        self.concurrency = Some(n);
        Ok(self)
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
    fn validate(&self) -> Result<()> {
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
                self.target.describe(),
                "a router perfshape serves (Target::serve): the mix reads each route's held \
                 time from its handler's timed polls; on a running service, claim \
                 does_not_block_its_worker() of each endpoint",
            ));
        }
        Ok(())
    }

    /// The order of one cycle of the mix: route and the route's own count before it.
    fn cycle(&self) -> Vec<(usize, usize)> {
        let total: usize = self.routes.iter().map(|(_, w)| w).sum();
        let mut current = vec![0i64; self.routes.len()];
        let mut seen = vec![0usize; self.routes.len()];
        let mut cycle = Vec::with_capacity(total);
        for _ in 0..total {
            for (c, (_, weight)) in current.iter_mut().zip(&self.routes) {
                *c += *weight as i64;
            }
            let best = (0..current.len())
                .max_by_key(|&r| (current[r], std::cmp::Reverse(r)))
                .unwrap_or(0);
            current[best] -= total as i64;
            cycle.push((best, seen[best]));
            seen[best] += 1;
        }
        cycle
    }

    /// The mix's requests, request i from route `cycle[i % len]` with that route's own
    /// index, so each endpoint's generator sees 0, 1, 2, … as it would alone.
    fn plan(&self) -> Result<Plan> {
        let cycle = Arc::new(self.cycle());
        let routes: Arc<Vec<(Endpoint, usize)>> = Arc::new(self.routes.clone());
        let (first, _) = &self.routes[0];
        let weights: Vec<usize> = self.routes.iter().map(|(_, w)| *w).collect();
        let vary = move |i: usize, _: Request| {
            let (route, within) = cycle[i % cycle.len()];
            let own = (i / cycle.len()) * weights[route] + within;
            routes[route].0.request_at(own)
        };
        Ok(
            Plan::new(self.target.base(), first.request(), Some(Arc::new(vary)))?
                .labelled(self.name()),
        )
    }

    /// **None blocks its worker**: in a fan-out of the mix, no route's handler holds its
    /// worker for more than 5 % of the mix's longest request (each route's request alone,
    /// measured in the same round) — read from each request's timed polls, so the report
    /// names the route that does: "/export holds its worker ≈2.1 ms of each request, 10.2
    /// % of the mix's longest (/report, 21 ms)".
    ///
    /// Needs a router perfshape serves (the polls are timed by its layer); a hold in a
    /// task the handler spawns and awaits is not in the handler's polls — the single
    /// endpoint claim, [`Endpoint::does_not_block_its_worker`], catches that too.
    pub fn none_blocks_its_worker(&self) -> Claim<'static> {
        let workers = self.target.pool_settings().map_or(1, |p| p.workers);
        let n = self.concurrency.unwrap_or(FAN_OUT_PER_WORKER * workers);
        let names: Vec<String> = self.routes.iter().map(|(e, _)| e.name()).collect();
        let rounds: Arc<Mutex<Vec<RouteRound>>> = Arc::default();
        let evidence = Evidence::default();
        let (this, seen, noted) = (self.clone(), evidence.clone(), Arc::clone(&rounds));
        let label = format!(
            "largest held share in {n} concurrent of the {}",
            self.name()
        );
        let what = format!("{n} concurrent of the {}", self.name());
        let held = Measure::value(&label, move || {
            this.validate()?;
            let alone = this
                .routes
                .iter()
                .map(|(endpoint, _)| endpoint.alone().map(|(d, _)| d))
                .collect::<Result<Vec<Duration>>>()?;
            let plan = this.plan()?;
            let run = seen.observe(&this.target, || {
                let run = this
                    .target
                    .client()
                    .run_plan(ClientStrategy::FanOut, &plan, n, None)?;
                run.require_ok()?;
                Ok(run)
            })?;
            let cycle = this.cycle();
            let mut held: Vec<Vec<Duration>> = vec![Vec::new(); this.routes.len()];
            for record in &run.records {
                let (route, _) = cycle[record.index % cycle.len()];
                if let Some(h) = record.held {
                    held[route].push(h.total);
                }
            }
            let per_route: Vec<Option<Duration>> = held
                .into_iter()
                .map(|mut h| {
                    h.sort();
                    h.get(h.len() / 2).copied()
                })
                .collect();
            let longest = alone.iter().copied().max().unwrap_or_default();
            let round = RouteRound {
                alone,
                held: per_route,
                longest,
            };
            let figure = round.largest_share().map_or(LEAST_SHARE, |(_, s)| s);
            noted.lock().unwrap_or_else(|p| p.into_inner()).push(round);
            Ok(figure.max(LEAST_SHARE))
        })
        .warm_with({
            let this = self.clone();
            move || {
                this.validate()?;
                for (endpoint, _) in &this.routes {
                    endpoint.preflight()?;
                }
                let run = this.target.client().run_plan(
                    ClientStrategy::FanOut,
                    &this.plan()?,
                    n,
                    None,
                )?;
                run.require_ok().map(drop)
            }
        })
        .evidence(move || evidence.describe(&what));
        Claim::figure(
            &format!("no route of the {} blocks its worker", self.name()),
            held,
        )
        .at_most(HELD_SHARE_AT_MOST)
        .ideal(0.0)
        .context("target", self.target.describe())
        .context("n", n)
        .context(
            "held share",
            "a route's median timed polls ÷ the mix's longest request alone",
        )
        .explain(move |report: &ClaimReport| {
            let rounds = rounds.lock().unwrap_or_else(|p| p.into_inner()).clone();
            route_sentences(report, &rounds, &names)
        })
    }
}

/// What one round of the mix claim saw, route by route.
#[derive(Clone, Debug)]
struct RouteRound {
    /// Each route's request alone.
    alone: Vec<Duration>,
    /// Each route's median held time in the fan-out, when its responses said.
    held: Vec<Option<Duration>>,
    /// The longest of `alone`: the mix's request time.
    longest: Duration,
}

impl RouteRound {
    /// Route r's held time ÷ the mix's longest request.
    fn share(&self, route: usize) -> Option<f64> {
        let held = self.held[route]?;
        Some(held.as_secs_f64() / self.longest.as_secs_f64().max(f64::MIN_POSITIVE))
    }

    /// The route that held its worker longest, and its share.
    fn largest_share(&self) -> Option<(usize, f64)> {
        (0..self.held.len())
            .filter_map(|r| Some((r, self.share(r)?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// "/export holds its worker ≈2.1 ms of each request, 10.2 % of the mix's longest (/report,
/// 21 ms)", then every route's figure.
fn route_sentences(report: &ClaimReport, rounds: &[RouteRound], names: &[String]) -> Vec<String> {
    let held = |r: usize| {
        middle(
            &rounds
                .iter()
                .filter_map(|x| x.held[r].map(|h| h.as_secs_f64()))
                .collect::<Vec<f64>>(),
        )
    };
    let alone = |r: usize| {
        middle(
            &rounds
                .iter()
                .map(|x| x.alone[r].as_secs_f64())
                .collect::<Vec<f64>>(),
        )
    };
    let longest = middle(
        &rounds
            .iter()
            .map(|x| x.longest.as_secs_f64())
            .collect::<Vec<f64>>(),
    );
    let slowest = (0..names.len())
        .max_by(|&a, &b| alone(a).total_cmp(&alone(b)))
        .unwrap_or(0);
    let worst = (0..names.len())
        .max_by(|&a, &b| held(a).total_cmp(&held(b)))
        .unwrap_or(0);
    let verb = if report.verdict.holds() {
        "holds its worker longest"
    } else {
        "holds its worker"
    };
    let mut lines = vec![format!(
        "{} {verb}: ≈{:.1} ms of each request, {:.1} % of the mix's longest ({}, {:.0} ms)",
        names[worst],
        held(worst) * 1e3,
        100.0 * held(worst) / longest,
        names[slowest],
        longest * 1e3
    )];
    let each: Vec<String> = (0..names.len())
        .map(|r| {
            format!(
                "{} {:.2} ms held of {:.1} ms alone",
                names[r],
                held(r) * 1e3,
                alone(r) * 1e3
            )
        })
        .collect();
    lines.push(format!("route by route: {}", each.join("; ")));
    lines
}
