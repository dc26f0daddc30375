//! How a load's requests held their worker, read from what a served router recorded of
//! each response ([`Held`] with its [`Split`]), and what a handler is allowed: a share of
//! each request spent *waiting* while it holds its worker, and a *poll budget* of CPU in
//! any one poll.
//!
//! A handler's hold on its worker is harmless while it computes in short polls — that is
//! what a worker is for, however short the request — and a problem in two cases: it waits
//! while holding the worker (a sleep, sync I/O, a sync database driver, a contended std
//! mutex), or it computes for a long stretch without yielding.

use std::time::Duration;

use crate::build::unoptimised;
use crate::error::{Error, Result};
use crate::record::RequestRecord;
use crate::server::thread_clock::PollTime;
use crate::vocab::Held;
use crate::vocab::wire::Split;

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
        let budget = millis(self.budget());
        match self.poll_budget {
            Some(_) => budget,
            None if unoptimised() => format!(
                "{budget}: 4 ms × {UNOPTIMISED_SLOWDOWN}, perfshape built without optimisations"
            ),
            None => budget,
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

    /// The share of its allowance a load's requests used: the larger of their waiting per
    /// request ÷ the waiting allowed and their longest poll's CPU ÷ the budget. At most 1
    /// keeps within both.
    pub(crate) fn used(&self, holding: &Holding, alone: Duration) -> f64 {
        let waiting = holding.waiting.as_secs_f64() / self.waiting_allowed(alone).as_secs_f64();
        let computing = holding.longest_computing.as_secs_f64() / self.budget().as_secs_f64();
        waiting.max(computing)
    }

    /// The share of one poll that blocked its worker in a way that can starve another
    /// request: its waiting, and its computing too when that ran past the budget.
    pub(crate) fn blocking_share(&self, poll: &PollTime) -> f64 {
        let long = if poll.computing > self.budget() {
            poll.computing
        } else {
            Duration::ZERO
        };
        ((poll.waiting + long).as_secs_f64() / poll.wall.as_secs_f64().max(f64::MIN_POSITIVE))
            .min(1.0)
    }
}

/// How a load's requests held their worker, from the server's record of each whole
/// response: what the claims decide on — the waiting per request on average (every request
/// that waits takes its worker from the others, so a wait in some of them counts in
/// proportion) and the longest poll of nine requests in ten (one odd request in twenty does
/// not make a handler; one in ten does) — and the median request's figures, for a report.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Holding {
    /// Requests whose polls were split by the worker's clocks.
    pub(crate) requests: usize,
    /// The median request's time in polls (its worker could run nothing else).
    pub(crate) held: Duration,
    /// The median request's CPU time in its polls.
    pub(crate) computing: Duration,
    /// The requests' sleep in the kernel inside their polls, per request on average.
    pub(crate) waiting: Duration,
    /// The median request's time runnable without a CPU inside its polls.
    pub(crate) preempted: Duration,
    /// The 90th percentile of the requests' longest polls, in CPU time.
    pub(crate) longest_computing: Duration,
    /// The longest poll of any request, in CPU time.
    pub(crate) most_computing: Duration,
}

impl Holding {
    /// The figures over `records`; `None` when no record carries a split (a URL target, or
    /// clocks that cannot be read).
    pub(crate) fn of<'r>(records: impl IntoIterator<Item = &'r RequestRecord>) -> Option<Holding> {
        let held: Vec<(Held, Split)> = records
            .into_iter()
            .filter_map(|r| r.held)
            .filter_map(|h| Some((h, h.split?)))
            .collect();
        if held.is_empty() {
            return None;
        }
        let median = |f: &dyn Fn(&(Held, Split)) -> Duration| middle(held.iter().map(f));
        let mut longest: Vec<Duration> = held.iter().map(|(_, s)| s.longest_computing).collect();
        longest.sort();
        let waited: Duration = held.iter().map(|(_, s)| s.waiting).sum();
        Some(Holding {
            requests: held.len(),
            held: median(&|(h, _)| h.total),
            computing: median(&|(_, s)| s.computing),
            waiting: waited / held.len() as u32,
            preempted: median(&|(_, s)| s.preempted),
            longest_computing: longest[(held.len() * 9 / 10).min(held.len() - 1)],
            most_computing: held
                .iter()
                .map(|(_, s)| s.longest_computing)
                .max()
                .unwrap_or_default(),
        })
    }
}

/// The median of `values` (the upper one of an even count), zero when there are none.
pub(crate) fn middle(values: impl IntoIterator<Item = Duration>) -> Duration {
    let mut values: Vec<Duration> = values.into_iter().collect();
    values.sort();
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// `2.0 ms`, `0.06 ms`, `24 ms`: a duration as a report says it.
pub(crate) fn millis(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms >= 10.0 {
        format!("{ms:.0} ms")
    } else if ms >= 1.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.2} ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holding(waiting_us: u64, longest_us: u64) -> Holding {
        Holding {
            requests: 1,
            waiting: Duration::from_micros(waiting_us),
            longest_computing: Duration::from_micros(longest_us),
            ..Holding::default()
        }
    }

    #[test]
    fn the_allowance_is_the_larger_of_waiting_and_the_longest_poll() {
        let allowance = Allowance::default()
            .with_budget(Duration::from_millis(4))
            .unwrap();
        let request = Duration::from_millis(20);
        // 2 ms of 20 waited: twice the 5 % allowed.
        assert!((allowance.used(&holding(2000, 60), request) - 2.0).abs() < 1e-9);
        // 2 ms computed in one poll: half the budget.
        assert!((allowance.used(&holding(0, 2000), request) - 0.5).abs() < 1e-9);
        // A poll past the budget blocks; waiting always does.
        let poll = |computing: u64, waiting: u64| PollTime {
            wall: Duration::from_micros(computing + waiting),
            computing: Duration::from_micros(computing),
            waiting: Duration::from_micros(waiting),
            preempted: Duration::ZERO,
        };
        assert_eq!(allowance.blocking_share(&poll(2000, 0)), 0.0);
        assert_eq!(allowance.blocking_share(&poll(5000, 0)), 1.0);
        assert!((allowance.blocking_share(&poll(100, 300)) - 0.75).abs() < 1e-9);
    }

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
