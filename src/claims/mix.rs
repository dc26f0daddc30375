//! **None blocks its worker**: in a traffic mix sent together by weight, no route's handler
//! waits while holding its worker past its allowance or computes past its poll budget —
//! and the report names the route that does, and what the server received of each.

use std::collections::BTreeMap;
use std::time::Duration;

use super::called::{self, CallsSampled};
use super::distance::LocalLook;
use super::holding::{self, Holding, millis};
use super::holding::{FAN_OUT_PER_WORKER, LEAST, SLEEPS_AT_MOST};
use super::remedy::{self, Hold};
use super::worker_watch::WorkerWatch;
use crate::claim::{Advice, Claim, ClaimReport, Measure, median};
use crate::error::{Error, Result};
use crate::evidence::Evidence;
use crate::mix::Mix;
use crate::pool::sampler::{Calls, Place};
use crate::run::Run;
use crate::vocab::ClientStrategy;

/// What one round of the mix claim saw, route by route.
#[derive(Clone, Debug)]
struct RouteRound {
    /// Each route's request alone.
    alone: Vec<Duration>,
    /// How each route's requests held their worker in the fan-out, when their polls say.
    held: Vec<Option<Holding>>,
    /// Each route's share of its allowance used.
    used: Vec<Option<f64>>,
    /// Each route's longest poll ÷ the poll budget: the computing part of `used`, which
    /// tells the sentence whether the route broke by computing or by waiting.
    computing_used: Vec<Option<f64>>,
    /// Each route's waiting per request ÷ the waiting allowed: the waiting part of `used`.
    waiting_used: Vec<Option<f64>>,
    /// What the server received of each request label (`GET /health`), over the fan-out.
    received: BTreeMap<String, usize>,
    /// The share of the round's time the workers waited outside every route's polls, ÷ the
    /// tightest waiting share the routes allow: a task the routes spawned, or a background
    /// job ([`WorkerWatch`]).
    outside_used: f64,
}

impl RouteRound {
    /// The route that used most of its allowance, and how much.
    fn worst(&self) -> Option<(usize, f64)> {
        (0..self.used.len())
            .filter_map(|r| Some((r, self.used[r]?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }
}

impl Mix {
    /// **None blocks its worker**: in a fan-out of the mix, no route's handler waits while
    /// holding its worker past its share of the route's own request alone (5 %), nor
    /// computes past its poll budget in one poll — as
    /// [`Endpoint::does_not_block_its_worker`](crate::Endpoint::does_not_block_its_worker)
    /// decides for one endpoint, with each route's own settings. The figure is the largest
    /// share of its allowance any route used; the report names that route — "/export waits
    /// ≈2.0 ms of each 20 ms request while holding its worker" — every route's figures, and
    /// how many requests of each route the server received (in proportion to the weights,
    /// or the claim refuses the run).
    ///
    /// The workers' waiting outside every route's polls — a task the routes spawned, a
    /// background job — counts too: its share of the time measured against the tightest
    /// waiting share the routes allow.
    ///
    /// Needs a router perfshape serves (the polls are timed by its layer).
    pub fn none_blocks_its_worker(&self) -> Claim<'static> {
        let workers = self.target.pool_settings().map_or(1, |p| p.workers);
        let n = self.concurrency.unwrap_or(FAN_OUT_PER_WORKER * workers);
        let names: Vec<String> = self.routes.iter().map(|(e, _)| e.name()).collect();
        let evidence = Evidence::default();
        let (this, single, fanned) = (self.clone(), self.clone(), self.clone());
        let label = format!(
            "largest allowance used in {n} concurrent of the {}",
            self.name()
        );
        let what = format!("{n} concurrent of the {}", self.name());
        let seen = evidence.clone();
        // The served workers, watched from the first round to the claim's end.
        let watch = WorkerWatch::default();
        let look = LocalLook::default();
        // What the workers were sampled in, over every round, by route.
        let sampled = CallsSampled::default();
        let sampling = sampled.clone();
        let places: Vec<Place> = self
            .routes
            .iter()
            .map(|(endpoint, _)| {
                called::route(endpoint.request().method().as_str(), endpoint.path())
            })
            .collect();
        let (used, rounds) = Measure::paired(
            &label,
            move || {
                single
                    .routes
                    .iter()
                    .map(|(endpoint, _)| endpoint.alone().map(|(d, _)| d))
                    .collect::<Result<Vec<Duration>>>()
            },
            move || {
                fanned.validate()?;
                let plan = fanned.plan()?;
                seen.observe(&fanned.target, || {
                    let server = fanned.target.served();
                    if let Some(server) = server {
                        watch.begin(server);
                    }
                    let run = fanned
                        .target
                        .run_plan(ClientStrategy::FanOut, &plan, n, None)?;
                    run.require_ok()?;
                    sampling.add(&run.calls);
                    let share = server.and_then(|server| watch.share(server));
                    Ok((run, share.unwrap_or_default()))
                })
            },
            move |alone, (run, share)| {
                let round = this.round(&run, alone, (share, look.talks_locally()))?;
                let figure = round
                    .worst()
                    .map_or(LEAST, |(_, used)| used)
                    .max(round.outside_used);
                if let Some(why) = look.hides_a_hold(&this.target, figure, 1.0) {
                    return Err(why);
                }
                Ok((figure.max(LEAST), round))
            },
        );
        let used = used
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
        // A mix is judged on the routes' polls: a round far outside is the service's.
        let claim = Claim::figure(
            &format!("no route of the {} blocks its worker", self.name()),
            used,
        );
        let claim = self.routes.iter().fold(claim, |claim, (endpoint, _)| {
            endpoint.naming_redirects(claim)
        });
        claim
            .about_a_hold()
        .at_most(1.0)
        .ideal(0.0)
        .refusing(self.refused())
        .context("target", self.target.to_string())
        .context("n", n)
        .context(
            "allowance used",
            "per route, the largest of waiting ÷ its share of the route's request, the longest poll ÷ the poll budget, and the share of its requests whose polls slept in the kernel ÷ 50 %; and the share of the time the workers waited outside every route's polls ÷ the tightest waiting share",
        )
        .untold_when({
            let (rounds, names) = (rounds.clone(), names.clone());
            let allowances: Vec<_> = self.routes.iter().map(|(e, _)| e.allowance()).collect();
            move || {
                rounds.with(|rounds| {
                    let longest = |r: usize| {
                        rounds
                            .iter()
                            .filter_map(move |x| x.held[r].map(|h| h.longest_computing))
                    };
                    let mut routes = allowances.iter().zip(&names).enumerate();
                    routes.find_map(|(r, (allowance, name))| {
                        holding::untold(allowance, longest(r)).map(|why| format!("{name}: {why}"))
                    })
                })
            }
        })
        .observed({
            let rounds = rounds.clone();
            move || {
                let received = rounds.with(|r| r.last().map(|r| r.received.clone()).unwrap_or_default());
                received
                    .into_iter()
                    .map(|(label, count)| (format!("received {label}"), count as f64))
                    .collect()
            }
        })
        .advise({
            let (rounds, names) = (rounds.clone(), names.clone());
            move |report: &ClaimReport| {
                advice(report, &rounds.to_vec(), &names, (&sampled.get(), &places))
            }
        })
        .explain(move |report: &ClaimReport| {
            route_sentences(report, &rounds.to_vec(), &names)
        })
        .ready_made()
    }

    /// One round's figures, route by route, from a fan-out of the mix, with `share`, the
    /// share of the round's time the workers waited outside every route's polls; refused
    /// when the server received the routes in other proportions than the weights.
    fn round(
        &self,
        run: &Run,
        alone: Vec<Duration>,
        (share, local): (f64, bool),
    ) -> Result<RouteRound> {
        let cycle = self.cycle();
        let mut records: Vec<Vec<&crate::record::RequestRecord>> =
            vec![Vec::new(); self.routes.len()];
        let mut received: BTreeMap<String, usize> = BTreeMap::new();
        for record in &run.records {
            records[cycle[record.index % cycle.len()]].push(record);
            if let Some(label) = &record.received {
                *received.entry(label.clone()).or_default() += 1;
            }
        }
        self.check_received(&received, run.records.len())?;
        let held: Vec<Option<Holding>> = records
            .iter()
            .map(|r| Holding::of(r.iter().copied()).map(|h| Holding { local, ..h }))
            .collect();
        if held.iter().any(Option::is_none) {
            return Err(Error::Unread {
                what: crate::thread_clock::unclocked("the routes'"),
            });
        }
        let used = held
            .iter()
            .zip(&self.routes)
            .zip(&alone)
            .map(|((holding, (endpoint, _)), alone)| {
                holding
                    .map(|h| holding::used(&endpoint.allowance(), &h, *alone))
                    .transpose()
            })
            .collect::<Result<_>>()?;
        // Each route's waiting and computing parts of `used`, which tell the sentence how it
        // broke.
        let (waiting_used, computing_used): (Vec<Option<f64>>, Vec<Option<f64>>) = held
            .iter()
            .zip(&self.routes)
            .zip(&alone)
            .map(|((holding, (endpoint, _)), alone)| {
                match holding.map(|h| holding::parts(&endpoint.allowance(), &h, *alone)) {
                    Some((waiting, computing, _)) => (Some(waiting), Some(computing)),
                    None => (None, None),
                }
            })
            .unzip();
        let allowed = self
            .routes
            .iter()
            .map(|(endpoint, _)| endpoint.allowance().waiting)
            .fold(f64::INFINITY, f64::min);
        let outside_used = holding::outside_used(share, allowed)?;
        Ok(RouteRound {
            alone,
            held,
            used,
            computing_used,
            waiting_used,
            received,
            outside_used,
        })
    }

    /// Whether the server received each route that sends one fixed request — its method
    /// and path — in proportion to its weight, within one request: a mix that sent its
    /// routes evenly whatever their weights would measure another mix than the one claimed.
    fn check_received(&self, received: &BTreeMap<String, usize>, sent: usize) -> Result<()> {
        let total: usize = self.routes.iter().map(|(_, w)| w).sum();
        let mut expected: BTreeMap<String, f64> = BTreeMap::new();
        for (endpoint, weight) in &self.routes {
            if endpoint.is_varied() {
                continue;
            }
            let path = endpoint.path().split('?').next().unwrap_or_default();
            let label = format!("{} {path}", endpoint.request().method());
            *expected.entry(label).or_default() += (sent * weight) as f64 / total as f64;
        }
        for (label, want) in &expected {
            let got = received.get(label).copied().unwrap_or(0) as f64;
            if (got - want).abs() > 1.0 + 1e-9 {
                let seen: Vec<String> = received.iter().map(|(l, c)| format!("{l} {c}")).collect();
                return Err(Error::invalid(
                    "mix",
                    format!(
                        "the server received {} of {sent} requests as {label}, where the weights ask for {want:.0} (it received: {})",
                        got,
                        seen.join(", ")
                    ),
                    "each route in proportion to its weight",
                ));
            }
        }
        Ok(())
    }
}

/// The median over the rounds of what `f` reads of each, where any round has it.
fn mid(rounds: &[RouteRound], f: &dyn Fn(&RouteRound) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = rounds.iter().filter_map(f).collect();
    (!values.is_empty()).then(|| median(&values))
}

/// The route whose median share of its allowance is the largest: the one the report names.
fn worst_route(rounds: &[RouteRound], routes: usize) -> usize {
    let used = |r: usize| mid(rounds, &|x| x.used[r]).unwrap_or(0.0);
    (0..routes)
        .max_by(|&a, &b| used(a).total_cmp(&used(b)))
        .unwrap_or(0)
}

/// Where the mix broke, the likely cause and what to do for the route that used most of
/// its allowance, by how it held its worker.
fn advice(
    report: &ClaimReport,
    rounds: &[RouteRound],
    names: &[String],
    (calls, places): (&Calls, &[Place]),
) -> Option<Advice> {
    if report.verdict != crate::claim::Verdict::Broken {
        return None;
    }
    let mid = |f: &dyn Fn(&RouteRound) -> Option<f64>| mid(rounds, f);
    let worst = worst_route(rounds, names.len());
    if outside_leads(rounds) {
        let how = Hold::WaitsInATask;
        return Some(remedy::for_hold(
            "the mix",
            how,
            called::call(calls, &Place::Outside, how),
        ));
    }
    let how = if mid(&|x| x.computing_used[worst]) >= mid(&|x| x.used[worst]) {
        Hold::Computes
    } else {
        Hold::Waits
    };
    Some(remedy::for_hold(
        &names[worst],
        how,
        called::call(calls, &places[worst], how),
    ))
}

/// Whether the workers' waiting outside every route's polls used more of its allowance than
/// any route did, in the median round.
fn outside_leads(rounds: &[RouteRound]) -> bool {
    let outside = mid(rounds, &|x| Some(x.outside_used)).unwrap_or_default();
    outside > 1.0 && outside > mid(rounds, &|x| x.worst().map(|(_, used)| used)).unwrap_or_default()
}

/// "/export waits ≈2.0 ms of each 20 ms request while holding its worker (10.0 %)", then
/// every route's figures and what the server received.
fn route_sentences(report: &ClaimReport, rounds: &[RouteRound], names: &[String]) -> Vec<String> {
    let mid = |f: &dyn Fn(&RouteRound) -> Option<f64>| mid(rounds, f);
    let routes = names.len();
    let alone = |r: usize| mid(&|x| Some(x.alone[r].as_secs_f64())).unwrap_or_default();
    let waiting = |r: usize| mid(&|x| x.held[r].map(|h| h.waiting.as_secs_f64()));
    let longest = |r: usize| mid(&|x| x.held[r].map(|h| h.longest_computing.as_secs_f64()));
    let used = |r: usize| mid(&|x| x.used[r]);
    let slept = |r: usize| mid(&|x| x.held[r].map(|h| h.slept_share() / SLEEPS_AT_MOST));
    let secs = Duration::from_secs_f64;
    let worst = worst_route(rounds, routes);
    let mut lines = Vec::new();
    let (w, l) = (
        secs(waiting(worst).unwrap_or_default()),
        secs(longest(worst).unwrap_or_default()),
    );
    let share = 100.0 * w.as_secs_f64() / alone(worst).max(f64::MIN_POSITIVE);
    lines.push(if !report.verdict.holds() && outside_leads(rounds) {
        format!(
            "outside every route's polls the workers waited past their allowance ({:.1} × it in the median round): a task the routes spawned, or another task on the worker, slept in the kernel while it held the worker",
            mid(&|x| Some(x.outside_used)).unwrap_or_default()
        )
    } else if report.verdict.holds() {
        format!(
            "{} uses most of its allowance: it waits ≈{} of each {} request while holding its worker ({share:.1} %) and computes at most {} in one poll",
            names[worst],
            millis(w),
            millis(secs(alone(worst))),
            millis(l)
        )
    } else if mid(&|x| x.computing_used[worst]) >= used(worst) {
        format!(
            "{} computes {} in one poll without giving its worker back; it waits ≈{} of each {} request while holding it",
            names[worst],
            millis(l),
            millis(w),
            millis(secs(alone(worst)))
        )
    } else if slept(worst) >= used(worst)
        && mid(&|x| x.waiting_used[worst]).unwrap_or(0.0) <= 1.0
    {
        format!(
            "{}'s polls slept in the kernel in {:.0} % of its requests (at most {:.0} %), waiting ≈{} of each {} request here",
            names[worst],
            slept(worst).unwrap_or_default() * SLEEPS_AT_MOST * 100.0,
            SLEEPS_AT_MOST * 100.0,
            millis(w),
            millis(secs(alone(worst)))
        )
    } else {
        format!(
            "{} waits ≈{} of each {} request while holding its worker ({share:.1} %)",
            names[worst],
            millis(w),
            millis(secs(alone(worst)))
        )
    });
    let each: Vec<String> = (0..routes)
        .map(|r| match (waiting(r), longest(r)) {
            (Some(w), Some(l)) => format!(
                "{} waits {}, longest poll {} of {} alone",
                names[r],
                millis(secs(w)),
                millis(secs(l)),
                millis(secs(alone(r)))
            ),
            _ => format!("{} not split (no clocks)", names[r]),
        })
        .collect();
    lines.push(format!("route by route: {}", each.join("; ")));
    if let Some(last) = rounds.last() {
        let received: Vec<String> = last
            .received
            .iter()
            .map(|(label, count)| format!("{label} {count}"))
            .collect();
        lines.push(format!(
            "the server received, in the last round: {}",
            received.join(", ")
        ));
    }
    lines
}
