//! **Keeps answering**: a cheap endpoint, sent while a slow one fills every worker, is
//! answered about as soon as it would be alone.

mod rounds;
mod said;

use std::time::Duration;

use super::holding::Holding;
use crate::claim::{Claim, Measure};
use crate::endpoint::Endpoint;
use rounds::Answering;

/// How long a round waits for the slow requests to start on the server before it sends the
/// cheap one anyway: a slow request that has not started by then is not holding a worker.
pub(super) const STARTED_WITHIN: Duration = Duration::from_secs(1);

/// The most of one slow request the cheap one may wait behind a held worker.
pub(super) const AT_MOST: f64 = 0.25;

/// The most cheap requests a round sends while the slow ones run: enough to spread over
/// one slow request at [`PROBES_PER_UNIT`], few enough that the load client's own cost
/// stays small beside the slow requests'.
pub(super) const MAX_PROBES: usize = 24;

/// How many times its own time alone the cheap request's wait must be, besides more than
/// [`AT_MOST`] of one slow request, before a wait no hold explains is named: below it, a
/// busy machine's scheduling and the load client's own work are enough to explain it.
pub(super) const UNEXPLAINED_TIMES: u32 = 10;

/// How many cheap requests a round spreads over one slow request's time (from the second
/// round on, when the first has measured one): a hold of a sixteenth of a slow request
/// — well under the quarter the claim allows — is met wherever it lies.
pub(super) const PROBES_PER_UNIT: u32 = 16;

/// What one round saw.
#[derive(Clone, Copy, Debug)]
pub(super) struct Round {
    /// The cheap request's time from its send to its answer, sent during the slow load.
    pub(super) wait: Duration,
    /// The cheap request alone, in the same round.
    pub(super) alone: Duration,
    /// One slow request: the quickest of the load's, one served without queueing.
    pub(super) unit: Duration,
    /// The most time one slow request held its worker in a way the cheap one waits behind
    /// (a wait in a poll, or a poll past the hold floor) while the cheap request waited,
    /// when their polls were split.
    pub(super) blocking: Option<Duration>,
    /// How the slow requests held their worker, when their polls were split.
    pub(super) slow: Option<Holding>,
    /// Cheap requests sent during the slow ones (one from outside).
    pub(super) probes: usize,
    /// The longest wait beyond its own time of a cheap request that no hold read of the
    /// slow requests during it explains (on a served router; zero from outside, where the
    /// whole wait counts).
    pub(super) unexplained: Duration,
}

impl Round {
    /// The cheap request's wait beyond its own time alone.
    pub(super) fn extra(&self) -> Duration {
        self.wait.saturating_sub(self.alone)
    }

    /// The wait the claim counts: on a served router, what the slow requests' blocking
    /// during it explains; from outside, all of it. What it leaves out is not nothing:
    /// [`said::unexplained`] names it where it is large.
    pub(super) fn counted(&self) -> Duration {
        match self.blocking {
            Some(blocking) => self.extra().min(blocking),
            None => self.extra(),
        }
    }
}

impl Endpoint {
    /// **Keeps answering**: this (cheap) endpoint, sent while `slow` fills every worker,
    /// waits beyond its own time alone less than a quarter of one `slow` request. On an
    /// async or offloading server a worker is free and it answers at once (the model: 0);
    /// where `slow` holds its workers it waits for one. Seed 000's C4 on your service.
    ///
    /// `slow` is sent `slow.concurrency` times (default: the server's workers, which a
    /// handler holding its worker fills exactly); one `slow` request served without
    /// queueing, and this endpoint alone, are measured in the same rounds. On a router
    /// perfshape serves, this endpoint is sent again and again across the `slow` requests'
    /// time, and its wait counts only as far as `slow` held its worker during it — waiting
    /// in a poll, or a poll longer than 1 ms (6 ms unoptimised) or past its
    /// [poll budget](Endpoint::poll_budget) — so two fast endpoints never break it. By URL
    /// its whole wait counts, and the claim is inconclusive where a `slow` request is too
    /// short for a timing from outside
    /// ([`does_not_block_its_worker`](Endpoint::does_not_block_its_worker) says where).
    pub fn keeps_answering_during(&self, slow: &Endpoint) -> Claim<'static> {
        let answering = Answering::of(self, slow);
        let n = answering.n;
        let mut measuring = answering.clone();
        let (during, rounds) = Measure::noting(
            &format!(
                "{} wait during {n} × {} that its hold explains ÷ one {}",
                self.name(),
                slow.name(),
                slow.name()
            ),
            move || measuring.round(),
        );
        let (warmed, described) = (answering.clone(), answering.clone());
        let what = format!("{n} × {}", slow.name());
        let during = during
            .warm_with(move || warmed.warm())
            .evidence(move || described.evidence.describe(&what));
        let (sent, counted) = answering.read_as();
        let claim = Claim::figure(
            &format!("{} keeps answering while {} runs", self.name(), slow.name()),
            during,
        );
        let claim = slow.naming_redirects(self.naming_redirects(claim));
        let claim = claim
            .at_most(AT_MOST)
            .refusing(self.refused().or_else(|| slow.refused()))
            .context("target", self.target().to_string())
            .context("n", n)
            .context("sent", sent)
            .context("wait counted", counted);
        said::said_of(claim, answering, rounds).ready_made()
    }
}
