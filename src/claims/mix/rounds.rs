//! The rounds of [`none_blocks_its_worker`](crate::Mix::none_blocks_its_worker): each
//! route alone, then a fan-out of the mix with the workers watched and sampled, and the
//! round's figure route by route.

use std::collections::BTreeMap;
use std::time::Duration;

use super::super::holding::{self, FAN_OUT_PER_WORKER, Holding, LEAST};
use super::super::worker_watch::WorkerWatch;
use super::RouteRound;
use crate::error::{Error, Result};
use crate::evidence::Evidence;
use crate::held::called::{self, CallsSampled};
use crate::held::distance::LocalLook;
use crate::mix::Mix;
use crate::pool::sampler::Place;
use crate::run::Run;
use crate::vocab::ClientStrategy;

/// What the claim's rounds share: the mix, its fan-out's size, and what the rounds saw
/// beside their figures. Its clones share the handles.
#[derive(Clone)]
pub(super) struct Mixing {
    pub(super) mix: Mix,
    /// The requests sent at once.
    pub(super) n: usize,
    /// The machine and the pools around each fan-out.
    pub(super) evidence: Evidence,
    /// The served workers, from the first round to the claim's end.
    watch: WorkerWatch,
    pub(super) look: LocalLook,
    /// What the workers were sampled in, over every round, by route.
    pub(super) sampled: CallsSampled,
    /// Each route's place in the samples, in the mix's order.
    pub(super) places: Vec<Place>,
    /// Each route's name, in the mix's order.
    pub(super) names: Vec<String>,
}

impl Mixing {
    /// The mix's claim's context.
    pub(super) fn of(mix: &Mix) -> Mixing {
        let workers = mix.target.pool_settings().map_or(1, |p| p.workers);
        Mixing {
            mix: mix.clone(),
            n: mix.concurrency.unwrap_or(FAN_OUT_PER_WORKER * workers),
            evidence: Evidence::default(),
            watch: WorkerWatch::default(),
            look: LocalLook::default(),
            sampled: CallsSampled::default(),
            places: mix
                .routes
                .iter()
                .map(|(endpoint, _)| {
                    called::route(endpoint.request().method().as_str(), endpoint.path())
                })
                .collect(),
            names: mix.routes.iter().map(|(e, _)| e.name()).collect(),
        }
    }

    /// Each route's request alone.
    pub(super) fn alone(&self) -> Result<Vec<Duration>> {
        self.mix
            .routes
            .iter()
            .map(|(endpoint, _)| endpoint.alone().map(|(d, _)| d))
            .collect()
    }

    /// The mix refused where it cannot be run, each route answering, and one fan-out,
    /// unmeasured.
    pub(super) fn warm(&self) -> Result<()> {
        let mix = &self.mix;
        mix.validate()?;
        for (endpoint, _) in &mix.routes {
            endpoint.preflight()?;
        }
        let run =
            mix.target
                .client()
                .run_plan(ClientStrategy::FanOut, &mix.plan()?, self.n, None)?;
        run.require_ok().map(drop)
    }

    /// One fan-out of the mix, and the share of its time the workers waited outside every
    /// route's polls.
    pub(super) fn fan_out(&self) -> Result<(Run, f64)> {
        let mix = &self.mix;
        mix.validate()?;
        let plan = mix.plan()?;
        self.evidence.observe(&mix.target, || {
            let server = mix.target.served();
            if let Some(server) = server {
                self.watch.begin(server);
            }
            let run = mix
                .target
                .run_plan(ClientStrategy::FanOut, &plan, self.n, None)?;
            run.require_ok()?;
            self.sampled.add(&run.calls);
            let share = server.and_then(|server| self.watch.share(server));
            Ok((run, share.unwrap_or_default()))
        })
    }

    /// A round's figure — the largest share of its allowance any route used, or the
    /// workers' waiting outside every route's polls — and the round.
    pub(super) fn figure(
        &self,
        run: &Run,
        alone: Vec<Duration>,
        share: f64,
    ) -> Result<(f64, RouteRound)> {
        let round = self
            .mix
            .round(run, alone, share, self.look.talks_locally())?;
        let figure = round
            .worst()
            .map_or(LEAST, |(_, used)| used)
            .max(round.outside_used);
        if let Some(why) = self.look.hides_a_hold(&self.mix.target, figure, 1.0) {
            return Err(why);
        }
        Ok((figure.max(LEAST), round))
    }
}

impl Mix {
    /// One round's figures, route by route, from a fan-out of the mix, with `share`, the
    /// share of the round's time the workers waited outside every route's polls; refused
    /// when the server received the routes in other proportions than the weights.
    pub(super) fn round(
        &self,
        run: &Run,
        alone: Vec<Duration>,
        share: f64,
        local: bool,
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
