//! How a load's requests held their worker, read from what a served router recorded of
//! each response ([`Held`] with its [`Split`]), and how much of its [`Allowance`] that is.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::held::{in_ms, middle};
use crate::record::RequestRecord;
use crate::run::Run;
use crate::thread_clock::{self, PollTime};
use crate::vocab::wire::Split;
use crate::vocab::{Allowance, Held};

/// Concurrent requests per server worker in a blocking claim's fan-out — one endpoint's or
/// a mix's — and at least this many in all: enough to contend for a lock the handler
/// takes, and for the timing from outside, where a handler that holds its worker for a
/// share b of a request makes N concurrent requests take 1 + b·(N/W − 1) request times —
/// at 20 per worker a 10 % hold reads 2.9× where a free handler reads ≈1.1×.
pub(crate) const FAN_OUT_PER_WORKER: usize = 20;

/// A figure is positive: a share of nothing reads as this, "under 0.1 %".
pub(crate) const LEAST: f64 = 0.001;

/// The most of a load's requests whose polls may sleep in the kernel at all. A correct
/// async handler's worker sleeps inside a poll now and then — an allocator's lock, a page
/// to map, a channel's lock — in 0–2 % of its requests (measured on the in-memory services,
/// the inventory's sqlx and the accounts' async driver, quiet and with a core busy: the
/// power table, docs/blocking-power.md); a sync call to another process sleeps in nearly
/// every request where the kernel lets it. Half sits between them; the false-alarm rate is
/// computed in `tests/exact/rule.rs`.
pub(crate) const SLEEPS_AT_MOST: f64 = 0.5;

/// The share of its allowance a load's requests used: the largest of the workers' waiting
/// per request (in the requests' polls, and outside them while the load ran: a task they
/// spawned) ÷ the waiting allowed, their longest poll's CPU ÷ the budget and the share of
/// them whose polls slept ÷ [`SLEEPS_AT_MOST`]. At most 1 keeps within all three.
///
/// Where the build cannot tell ([`Allowance::undecided`]: the default budget, unoptimised)
/// the budget is the unoptimised one; whether the rounds' longest poll falls where that
/// leaves no verdict is asked of the rounds together, by [`this_build_cannot_tell`].
///
/// Where a poll's time off the CPU is not split into waiting and preemption
/// ([`thread_clock::splits_off_cpu`] false: off Linux) its waiting is a bound, and a figure
/// past 1 that only that bound puts there is no verdict — the machine may have preempted
/// the polls ([`Error::Unread`]). Computing past the budget is exact everywhere.
///
/// [`thread_clock::splits_off_cpu`]: crate::thread_clock::splits_off_cpu
pub(crate) fn used(allowance: &Allowance, holding: &Holding, alone: Duration) -> Result<f64> {
    let measured = waiting_used(allowance, holding, alone);
    let (waiting, computing, slept) = parts(allowance, holding, alone);
    if measured > 1.0 && computing <= 1.0 && !thread_clock::splits_off_cpu() {
        return Err(Error::Unread {
            what: format!(
                "the worker spent ≈{} of each request off the CPU, more than the {} a wait may take, and {}",
                in_ms(holding.all_waiting()),
                in_ms(allowance.waiting_allowed(alone)),
                thread_clock::unsplit()
            ),
        });
    }
    Ok(waiting.max(computing).max(slept))
}

/// Why this build cannot tell a claim that held from one that did not, where it cannot:
/// the median of the rounds' longest polls (each of nine requests in ten) between the
/// optimised and the unoptimised budget ([`Allowance::undecided`]: the default budget,
/// unoptimised) may be a correct handler slowed 2–30× or a long stretch, and the profile
/// line that makes it decisive is named.
///
/// It is asked of the rounds' median, not of each round: the same requests' polls compute
/// 2–4× longer in one round now and then (user time alone — no page fault, interrupt or
/// steal inside them; the CPU under the guest slower for a moment), and one such round
/// must not end a claim the others settle.
pub(crate) fn this_build_cannot_tell(
    allowance: &Allowance,
    rounds_longest: impl IntoIterator<Item = Duration>,
) -> Option<String> {
    let (optimised, unoptimised) = allowance.undecided()?;
    let longest = middle(rounds_longest);
    (longest > optimised && longest <= unoptimised).then(|| {
        format!(
            "its longest poll (of nine requests in ten, in the median round) is between {} and {}, where this build cannot tell a long stretch from ordinary work: code built without optimisations runs 2–30× slower than in release; `{}` in the workspace's Cargo.toml (or `--release`) makes it decisive",
            in_ms(optimised),
            in_ms(unoptimised),
            crate::vocab::allowance::PROFILE_LINE
        )
    })
}

/// The three parts of [`used`]: the workers' waiting per request — in the requests' polls
/// and outside them — ÷ the waiting allowed (or, where more, the share of the round's time
/// the workers waited outside any response ÷ the share allowed), the longest
/// poll's CPU ÷ the budget, and the share of requests whose polls slept ÷
/// [`SLEEPS_AT_MOST`] — what a report reads to say which of them broke a claim.
///
/// Where a poll's time off the CPU is not split into waiting and preemption (off Linux)
/// the waiting is a bound: it counts up to 1, enough to keep a claim from holding, never
/// past it — a claim it alone would take past 1 is no verdict ([`used`]), and one that
/// computes past its budget too broke by computing, which is what its report says (on a
/// busy machine the bound read 8 times the waiting allowed where a 30 ms hash broke the
/// budget by 1.25).
pub(crate) fn parts(allowance: &Allowance, holding: &Holding, alone: Duration) -> (f64, f64, f64) {
    let waiting = waiting_used(allowance, holding, alone);
    (
        if thread_clock::splits_off_cpu() {
            waiting
        } else {
            waiting.min(1.0)
        },
        holding.longest_computing.as_secs_f64() / allowance.budget().as_secs_f64(),
        if holding.local {
            holding.slept_share() / SLEEPS_AT_MOST
        } else {
            0.0
        },
    )
}

/// The workers' waiting per request ÷ the waiting allowed, or, where more, their share of
/// the time waited outside any response ÷ the share allowed: as measured, a bound off Linux.
fn waiting_used(allowance: &Allowance, holding: &Holding, alone: Duration) -> f64 {
    let (per_request, by_time) = waiting_parts(allowance, holding, alone);
    per_request.max(by_time)
}

/// Whether the workers' waiting part of [`parts`] is their share of the time waited outside
/// any response (a background job's, a spawned task's) rather than the waiting per request.
pub(crate) fn waits_by_time(allowance: &Allowance, holding: &Holding, alone: Duration) -> bool {
    let (per_request, by_time) = waiting_parts(allowance, holding, alone);
    by_time > per_request
}

/// The share of the time the workers waited outside every response's polls ÷ `allowed`,
/// the share a load may: what a traffic mix adds to its routes' figures. Where a worker's
/// time off the CPU is not split into waiting and preemption (off Linux) the share is a
/// bound, and past 1 no verdict ([`Error::Unread`]), as a poll's waiting is in [`used`].
pub(crate) fn outside_used(share: f64, allowed: f64) -> Result<f64> {
    let used = share / allowed;
    if used > 1.0 && !thread_clock::splits_off_cpu() {
        return Err(Error::Unread {
            what: format!(
                "outside every response's polls the workers were off the CPU {:.1} % of the time, more than the {:.0} % a wait may take, and {}",
                share * 100.0,
                allowed * 100.0,
                thread_clock::unsplit()
            ),
        });
    }
    Ok(used)
}

/// The two readings of the workers' waiting, each ÷ its allowance: per request (in the
/// requests' polls and outside them), and as a share of the time measured.
fn waiting_parts(allowance: &Allowance, holding: &Holding, alone: Duration) -> (f64, f64) {
    (
        holding.all_waiting().as_secs_f64() / allowance.waiting_allowed(alone).as_secs_f64(),
        holding.outside_share / allowance.waiting,
    )
}

/// The share of one poll that held its worker in a way another request waits behind: its
/// waiting always, and all of its time — computing too — where it held the worker longer
/// than the hold floor ([`Allowance::hold_floor`]) or computed past the budget. Preemption
/// by the machine is never the handler's.
pub(crate) fn holding_share(allowance: &Allowance, poll: &PollTime) -> f64 {
    let held = poll.computing + poll.waiting;
    let counted = if held > allowance.hold_floor() || poll.computing > allowance.budget() {
        held
    } else {
        poll.waiting
    };
    (counted.as_secs_f64() / poll.wall.as_secs_f64().max(f64::MIN_POSITIVE)).min(1.0)
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
    /// Requests in which the worker slept in the kernel inside a poll, however briefly
    /// ([`Split::slept`]); 0 where that is not read.
    pub(crate) slept: usize,
    /// The workers' sleep in the kernel outside every response's polls while the load ran
    /// and until they parked after it, per request: a task the requests spawned, or
    /// another task on the worker, waiting while it held the worker
    /// ([`timeline`](crate::pool::timeline)).
    pub(crate) outside: Duration,
    /// The share of the round's time the workers waited outside every response's polls,
    /// over the whole of it: a background job's as much as the requests' own
    /// ([`WorkerWatch`](super::worker_watch::WorkerWatch)); 0 where not watched.
    pub(crate) outside_share: f64,
    /// Polls during which tokio handed the worker's core to another thread
    /// (`block_in_place`, [`Split::handed_off`]): not holds.
    pub(crate) handed_off: usize,
    /// Whether the service talks to a process on this machine directly
    /// ([`LocalLook`](crate::held::distance::LocalLook)): only then is a poll's sleep in the
    /// kernel, however short, counted against [`SLEEPS_AT_MOST`] — it is most likely a call
    /// to that process, answered in microseconds where production's takes a round trip.
    /// Elsewhere a short sleep is a lock another thread of the process held (the blocking
    /// pool's, a channel's), and only its time counts, as waiting.
    pub(crate) local: bool,
}

impl Holding {
    /// The share of the requests whose polls slept.
    pub(crate) fn slept_share(&self) -> f64 {
        self.slept as f64 / self.requests.max(1) as f64
    }

    /// The workers' waiting per request, in the requests' polls and outside them.
    pub(crate) fn all_waiting(&self) -> Duration {
        self.waiting + self.outside
    }

    /// The figures of a load on a launched service, whose responses are not timed, from its
    /// workers' timeline alone: their waiting while `load` ran, per request (all of it is
    /// outside any timed poll), and the longest stretch of CPU a worker ran while `alone`,
    /// one request, was served — a bound on that request's longest poll (a stretch under
    /// [`LONG`](crate::pool::timeline::LONG) is not kept, and reads as none).
    pub(crate) fn of_timeline(load: &Run, alone: &Run) -> Holding {
        let requests = load.records.len().max(1);
        let waited = waited_outside(load);
        let longest = alone
            .worker_waits
            .iter()
            .map(|s| s.time.computing)
            .max()
            .unwrap_or_default();
        Holding {
            requests,
            outside: waited / requests as u32,
            longest_computing: longest,
            most_computing: longest,
            ..Holding::default()
        }
    }

    /// The figures over `run`'s records, with its workers' waiting outside their polls.
    pub(crate) fn of_run(run: &Run) -> Option<Holding> {
        let mut holding = Holding::of(&run.records)?;
        holding.outside = waited_outside(run) / holding.requests as u32;
        Some(holding)
    }
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
            slept: held.iter().filter(|(_, s)| s.slept > 0).count(),
            outside: Duration::ZERO,
            outside_share: 0.0,
            handed_off: held.iter().map(|(_, s)| s.handed_off as usize).sum(),
            local: false,
        })
    }
}

/// The workers' waiting outside every timed poll while `run` ran and until they parked.
fn waited_outside(run: &Run) -> Duration {
    run.worker_waits.iter().map(|s| s.time.waiting).sum()
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

    /// 5 % of a request may wait; a poll may compute 4 ms.
    fn four_ms_budget() -> Allowance {
        Allowance::default()
            .with_budget(Duration::from_millis(4))
            .unwrap()
    }

    #[test]
    fn a_wait_past_its_allowance_breaks_only_where_off_cpu_time_is_split() {
        let allowance = four_ms_budget();
        let request = Duration::from_millis(20);
        let waited = used(&allowance, &holding(2000, 60), request);
        if thread_clock::splits_off_cpu() {
            assert!((waited.unwrap() - 2.0).abs() < 1e-9);
        } else {
            // Off Linux 2 ms off the CPU may have been preemption: no verdict.
            assert!(matches!(waited, Err(Error::Unread { .. })), "{waited:?}");
        }
        // Computing past the budget is exact everywhere, whatever the time off the CPU.
        let computed = used(&allowance, &holding(2000, 8000), request).unwrap();
        assert!((computed - 2.0).abs() < 1e-9);
        // 8 ms off the CPU (8 × the 1 ms a wait may take) beside a 5 ms poll (1.25 × the
        // budget): off Linux it broke by computing, and the bound counts up to 1 alone.
        let both = holding(8000, 5000);
        let figure = used(&allowance, &both, request).unwrap();
        let (waiting, computing, _) = parts(&allowance, &both, request);
        assert!((computing - 1.25).abs() < 1e-9);
        if thread_clock::splits_off_cpu() {
            assert!((figure - 8.0).abs() < 1e-9 && (waiting - 8.0).abs() < 1e-9);
        } else {
            assert!((figure - 1.25).abs() < 1e-9 && (waiting - 1.0).abs() < 1e-9);
        }
    }

    #[test]
    fn the_workers_share_past_its_allowance_breaks_only_where_off_cpu_time_is_split() {
        // 10 % of the time against 5 %: twice the allowance where it is a wait.
        match outside_used(0.10, 0.05) {
            Ok(used) => {
                assert!(thread_clock::splits_off_cpu());
                assert!((used - 2.0).abs() < 1e-9);
            }
            Err(e) => {
                assert!(!thread_clock::splits_off_cpu());
                assert!(matches!(e, Error::Unread { .. }), "{e}");
            }
        }
        // Under it, a bound holds everywhere.
        assert!((outside_used(0.01, 0.05).unwrap() - 0.2).abs() < 1e-9);
    }

    #[test]
    fn the_allowance_is_the_larger_of_waiting_and_the_longest_poll() {
        let allowance = four_ms_budget();
        let request = Duration::from_millis(20);
        // 2 ms of 20 waited: twice the 5 % allowed (as measured; off Linux a bound, which
        // counts up to 1: `a_wait_past_its_allowance_breaks_only_where_off_cpu_time_is_split`).
        let waiting = waiting_used(&allowance, &holding(2000, 60), request);
        assert!((waiting - 2.0).abs() < 1e-9);
        // 2 ms computed in one poll: half the budget.
        assert!((used(&allowance, &holding(0, 2000), request).unwrap() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn most_requests_sleeping_breaks_however_short_the_sleeps() {
        let allowance = four_ms_budget();
        let request = Duration::from_millis(1);
        // 20 µs of waiting a request (under the 50 µs floor), 60 µs polls: inside both.
        // The sleeps count where the service talks to a process on this machine.
        let slept = |n: usize| Holding {
            requests: 20,
            slept: n,
            local: true,
            ..holding(20, 60)
        };
        assert!(used(&allowance, &slept(2), request).unwrap() < 1.0);
        assert!((used(&allowance, &slept(20), request).unwrap() - 2.0).abs() < 1e-9);
        assert!(used(&allowance, &slept(11), request).unwrap() > 1.0);
    }

    /// Where the service talks to no process on this machine, a short sleep is a lock
    /// another thread of the process held (the blocking pool's, a channel's): only its time
    /// counts, as waiting — a correct offload under saturation sleeps so in most requests.
    #[test]
    fn short_sleeps_count_only_beside_a_local_process() {
        let allowance = four_ms_budget();
        let request = Duration::from_millis(1);
        let all_slept = Holding {
            requests: 20,
            slept: 20,
            ..holding(20, 60)
        };
        assert!(used(&allowance, &all_slept, request).unwrap() < 1.0);
        let local = Holding {
            local: true,
            ..all_slept
        };
        assert!(used(&allowance, &local, request).unwrap() > 1.0);
    }

    #[test]
    fn a_poll_between_the_budgets_is_for_the_build_to_decide() {
        let request = Duration::from_millis(20);
        let ten_ms = holding(0, 10_000);
        let default = Allowance::default();
        let ten = Duration::from_millis(10);
        match default.undecided() {
            // Unoptimised: 10 ms may be a correct handler slowed 2–30×; the line is named.
            Some(_) => {
                let why = this_build_cannot_tell(&default, [ten]).expect("between the budgets");
                assert!(why.contains("opt-level = 1"), "{why}");
                // A round's figure takes the unoptimised budget: it holds, and the rounds'
                // median decides whether the build can tell.
                assert!(used(&default, &ten_ms, request).unwrap() < 1.0);
                // Past 24 ms breaks in any build; so does a wait past its allowance.
                assert_eq!(
                    this_build_cannot_tell(&default, [Duration::from_millis(30)]),
                    None
                );
                assert!(used(&default, &holding(0, 30_000), request).unwrap() > 1.0);
                if thread_clock::splits_off_cpu() {
                    assert!(used(&default, &holding(2000, 10_000), request).unwrap() > 1.0);
                }
            }
            None => assert!(used(&default, &ten_ms, request).unwrap() > 1.0),
        }
        // Under the optimised budget every build can tell.
        assert_eq!(
            this_build_cannot_tell(&default, [Duration::from_millis(2)]),
            None
        );
        // A budget the user set decides in every build.
        assert_eq!(this_build_cannot_tell(&four_ms_budget(), [ten]), None);
        assert!(used(&four_ms_budget(), &ten_ms, request).unwrap() > 1.0);
    }

    /// One round whose polls computed several times longer (the machine's CPU slower for a
    /// moment) among rounds that compute 1 ms leaves the build able to tell; most rounds
    /// between the budgets do not.
    #[test]
    fn the_median_round_decides_whether_the_build_can_tell() {
        let default = Allowance::default();
        if default.undecided().is_none() {
            return;
        }
        let ms = |m: &[u64]| {
            m.iter()
                .map(|&m| Duration::from_millis(m))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            this_build_cannot_tell(&default, ms(&[1, 1, 1, 1, 8, 1, 1, 1, 1])),
            None
        );
        assert_eq!(this_build_cannot_tell(&default, ms(&[1, 8, 1])), None);
        assert!(this_build_cannot_tell(&default, ms(&[8, 9, 1])).is_some());
        assert_eq!(this_build_cannot_tell(&default, ms(&[])), None);
    }

    #[test]
    fn a_poll_past_the_hold_floor_counts_whole_and_a_short_one_only_its_waiting() {
        let allowance = four_ms_budget();
        let floor = allowance.hold_floor().as_micros() as u64;
        let poll = |computing: u64, waiting: u64, preempted: u64| PollTime {
            wall: Duration::from_micros(computing + waiting + preempted),
            computing: Duration::from_micros(computing),
            waiting: Duration::from_micros(waiting),
            preempted: Duration::from_micros(preempted),
            slept: waiting > 0,
        };
        // A fast endpoint's poll: none of its computing counts, however busy the machine.
        assert_eq!(holding_share(&allowance, &poll(200, 0, 800)), 0.0);
        // A long stretch counts whole, under the budget or past it.
        assert_eq!(holding_share(&allowance, &poll(floor + 1, 0, 0)), 1.0);
        assert_eq!(holding_share(&allowance, &poll(5000, 0, 0)), 1.0);
        assert!((holding_share(&allowance, &poll(floor * 2, 0, floor * 2)) - 0.5).abs() < 1e-9);
        // Waiting always counts.
        assert!((holding_share(&allowance, &poll(100, 300, 0)) - 0.75).abs() < 1e-9);
    }
}
