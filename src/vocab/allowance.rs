//! What a handler may do with its worker, as a claim allows it: wait for at most a share of
//! each request while holding it, and compute for at most a poll budget in any one poll.
//! Plain data an endpoint carries; the claims that judge a hold read it
//! ([`claims`](crate::claims)).
//!
//! A handler's hold on its worker is harmless while it computes in short polls — that is
//! what a worker is for, however short the request — and a problem in two cases: it waits
//! while holding the worker (a sleep, sync I/O, a sync database driver, a contended std
//! mutex), or it computes for a long stretch without yielding.

use std::time::Duration;

use crate::build::unoptimised;
use crate::error::{Error, Result};

/// The share of each request a handler may spend waiting while it holds its worker, by
/// default: 5 % sits halfway (on a log scale) between what a correct handler shows (none:
/// it never sleeps inside a poll) and a 2 ms sync call in a 20 ms request (10 %).
pub(crate) const WAITS_AT_MOST: f64 = 0.05;

/// The least waiting per request that counts against a handler, however short its
/// requests: the kernel puts a correct handler's worker to sleep inside a poll now and then
/// — an allocator's lock, a page to map — for up to ≈0.2 ms, in 0–2 % of its requests on a
/// quiet machine and up to half of them on a busy one (measured over 1,000 requests each of
/// five in-memory routes), ≤ 4 µs a request on average. 50 µs is more than ten times that,
/// and a twentieth of the shortest real wait the claim must catch (a 1 ms sync call).
pub(crate) const WAIT_FLOOR: Duration = Duration::from_micros(50);

/// The default poll budget in a build with optimisations: the most CPU one poll may use.
/// tokio's own guidance is tens to a hundred microseconds between awaits; a gate must not
/// call ordinary work a bug, and gzip of a 64 KiB text body, the costliest poll of the
/// in-memory services in the suite, computes ≈2.2 ms in one poll, where 5 ms of hashing in
/// a handler is a worker held. 4 ms sits between them.
pub(crate) const POLL_BUDGET: Duration = Duration::from_millis(4);

/// How much longer the same work takes in a build without optimisations (a team's default
/// `cargo test` profile builds every dependency that way), for the default budget there:
/// measured on this machine, opt-level 0 against release, gzip 6.6×, an FNV hash 7.3×,
/// `serde_json::from_slice` 13.5×, a `HashMap` insert 13.6×, a sort 26×,
/// `serde_json::to_vec` 31×, `format!` 1.9×. The budget is stated for optimised work, so
/// the smallest slowdown of the code handlers run most (compression, hashing) scales it:
/// work past 4 ms optimised is past 24 ms unoptimised.
pub(crate) const UNOPTIMISED_SLOWDOWN: u32 = 6;

/// The least one poll must hold its worker — computing and waiting — for all of it to
/// count against a request that waited behind it, in a build with optimisations: a poll
/// this long is a stretch another request notices (tokio's guidance is 10–100 µs between
/// awaits), where the polls of fast endpoints — a CRUD handler's 50 µs, gzip of a small
/// body — are well under it. A build without optimisations scales it as the budget
/// ([`UNOPTIMISED_SLOWDOWN`]).
pub(crate) const HOLD_FLOOR: Duration = Duration::from_millis(1);

/// The profile lines that make a test build decisive: every dependency — perfshape, the
/// database driver, the compression and hashing crates a handler calls — optimised in the
/// dev profile, while the team's own crates still build fast and debuggable.
pub(crate) const PROFILE_LINE: &str = "[profile.dev.package.\"*\"] opt-level = 1";

/// What a handler may do with its worker: wait for at most a share of each request, and
/// compute for at most a budget in any one poll.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Allowance {
    /// The most of each request it may wait while holding its worker (0 < share ≤ 1).
    pub(crate) waiting: f64,
    /// The most CPU one poll may use; `None` for the default of this build.
    pub(crate) poll_budget: Option<Duration>,
}

impl Default for Allowance {
    fn default() -> Self {
        Allowance {
            waiting: WAITS_AT_MOST,
            poll_budget: None,
        }
    }
}

impl Allowance {
    /// The poll budget in force: as set, else the default for how perfshape was built.
    pub(crate) fn budget(&self) -> Duration {
        self.poll_budget.unwrap_or_else(|| {
            if unoptimised() {
                POLL_BUDGET * UNOPTIMISED_SLOWDOWN
            } else {
                POLL_BUDGET
            }
        })
    }

    /// How the budget was chosen, for a report: `4 ms`, or `24 ms: 4 ms × 6, perfshape
    /// built without optimisations`.
    pub(crate) fn describe_budget(&self) -> String {
        let budget = format!("{} ms", self.budget().as_millis());
        match self.poll_budget {
            Some(_) => budget,
            None if unoptimised() => format!(
                "{budget}: 4 ms × {UNOPTIMISED_SLOWDOWN}, perfshape built without optimisations"
            ),
            None => budget,
        }
    }

    /// Where this build cannot tell a poll's computing from a stretch that holds its worker:
    /// the default budget in a build without optimisations, where a poll computing more
    /// than the optimised budget (4 ms) and no more than the unoptimised one (24 ms) may be
    /// a correct handler slowed by the build (up to 30×) or a long stretch in any build.
    /// `None` where the budget decides (optimised, or a budget the user set).
    pub(crate) fn undecided(&self) -> Option<(Duration, Duration)> {
        (self.poll_budget.is_none() && unoptimised())
            .then(|| (POLL_BUDGET, POLL_BUDGET * UNOPTIMISED_SLOWDOWN))
    }

    /// [`HOLD_FLOOR`] for how perfshape was built.
    pub(crate) fn hold_floor(&self) -> Duration {
        if unoptimised() {
            HOLD_FLOOR * UNOPTIMISED_SLOWDOWN
        } else {
            HOLD_FLOOR
        }
    }

    /// `poll_budget` checked: above zero, at most a minute.
    pub(crate) fn with_budget(mut self, budget: Duration) -> Result<Allowance> {
        if budget.is_zero() || budget > Duration::from_secs(60) {
            return Err(Error::invalid(
                "poll budget",
                format!("{budget:?}"),
                "a duration above 0 and at most 60 s (the most CPU one poll may use)",
            ));
        }
        self.poll_budget = Some(budget);
        Ok(self)
    }

    /// `waiting` checked: a share in (0, 1].
    pub(crate) fn with_waiting(mut self, share: f64) -> Result<Allowance> {
        if !(share > 0.0 && share <= 1.0) {
            return Err(Error::invalid(
                "waiting share",
                share,
                "a share of each request in (0, 1], e.g. 0.05 for 5 %",
            ));
        }
        self.waiting = share;
        Ok(self)
    }

    /// The waiting allowed per request of `alone`: its share of the request, and never
    /// less than [`WAIT_FLOOR`].
    pub(crate) fn waiting_allowed(&self, alone: Duration) -> Duration {
        alone.mul_f64(self.waiting).max(WAIT_FLOOR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_of_zero_and_a_share_outside_the_unit_are_refused_by_name() {
        let err = Allowance::default()
            .with_budget(Duration::ZERO)
            .unwrap_err();
        assert!(
            err.to_string().starts_with("invalid poll budget: 0ns"),
            "{err}"
        );
        for share in [0.0, -0.1, 1.5, f64::NAN] {
            let err = Allowance::default().with_waiting(share).unwrap_err();
            assert!(
                err.to_string().starts_with("invalid waiting share"),
                "{err}"
            );
        }
    }
}
