//! **None blocks its worker**: in a traffic mix sent together by weight, no route's handler
//! waits while holding its worker past its allowance or computes past its poll budget —
//! and the report names the route that does, and what the server received of each.

mod rounds;
mod said;

use std::collections::BTreeMap;
use std::time::Duration;

use super::holding::Holding;
use crate::claim::{Claim, Measure};
use crate::mix::Mix;
use rounds::Mixing;

/// What one round of the mix claim saw, route by route.
#[derive(Clone, Debug)]
pub(super) struct RouteRound {
    /// Each route's request alone.
    pub(super) alone: Vec<Duration>,
    /// How each route's requests held their worker in the fan-out, when their polls say.
    pub(super) held: Vec<Option<Holding>>,
    /// Each route's share of its allowance used.
    pub(super) used: Vec<Option<f64>>,
    /// Each route's longest poll ÷ the poll budget: the computing part of `used`, which
    /// tells the sentence whether the route broke by computing or by waiting.
    pub(super) computing_used: Vec<Option<f64>>,
    /// Each route's waiting per request ÷ the waiting allowed: the waiting part of `used`.
    pub(super) waiting_used: Vec<Option<f64>>,
    /// What the server received of each request label (`GET /health`), over the fan-out.
    pub(super) received: BTreeMap<String, usize>,
    /// The share of the round's time the workers waited outside every route's polls, ÷ the
    /// tightest waiting share the routes allow: a task the routes spawned, or a background
    /// job (`claims::worker_watch`).
    pub(super) outside_used: f64,
}

impl RouteRound {
    /// The route that used most of its allowance, and how much.
    pub(super) fn worst(&self) -> Option<(usize, f64)> {
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
        let mixing = Mixing::of(self);
        let n = mixing.n;
        let label = format!(
            "largest allowance used in {n} concurrent of the {}",
            self.name()
        );
        let (single, fanned, judged) = (mixing.clone(), mixing.clone(), mixing.clone());
        let (used, rounds) = Measure::paired(
            &label,
            move || single.alone(),
            move || fanned.fan_out(),
            move |alone, (run, share)| judged.figure(&run, alone, share),
        );
        let (warmed, described) = (mixing.clone(), mixing.clone());
        let what = format!("{n} concurrent of the {}", self.name());
        let used = used
            .warm_with(move || warmed.warm())
            .evidence(move || described.evidence.describe(&what));
        // A mix is judged on the routes' polls: a round far outside is the service's.
        let claim = Claim::figure(
            &format!("no route of the {} blocks its worker", self.name()),
            used,
        );
        let claim = self.routes.iter().fold(claim, |claim, (endpoint, _)| {
            endpoint.naming_redirects(claim)
        });
        let claim = claim
            .about_a_hold()
            .at_most(1.0)
            .ideal(0.0)
            .refusing(self.refused())
            .context("target", self.target.to_string())
            .context("n", n)
            .context(
                "allowance used",
                "per route, the largest of waiting ÷ its share of the route's request, the longest poll ÷ the poll budget, and the share of its requests whose polls slept in the kernel ÷ 50 %; and the share of the time the workers waited outside every route's polls ÷ the tightest waiting share",
            );
        said::said_of(claim, mixing, rounds).ready_made()
    }
}
