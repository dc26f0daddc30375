//! What the watched requests of one route did with their worker, and the rule that decides
//! on it: on the kernel's evidence per poll — the call the worker was seen asleep in, a
//! sleep no brief lock makes, a stretch of CPU past the budget — never on a ratio of
//! timings, so that a watched test decides the same on a quiet machine and a busy one.

use std::time::Duration;

use crate::blocked_call::{BlockedCall, Seen};
use crate::held::in_ms;
use crate::vocab::Allowance;
use crate::vocab::wire::Split;

/// The waiting inside one request's polls that no brief lock makes: a millisecond asleep in
/// one request is a call. A correct poll's worker sleeps microseconds now and then, and a
/// lock whose holder the machine preempted is counted as preemption where that holder is
/// another worker (`thread_clock::peers`) or the thread that woke the task
/// (`thread_clock::woken`). The runs behind each threshold here: docs/watch-thresholds.md.
pub(crate) const A_CALL: Duration = Duration::from_millis(1);

/// The waiting inside a request's polls below which a sleep is too short to tell from a
/// brief lock, even in every request: the kernel switching the worker out and back, or a
/// lock of tokio's own (the blocking pool's). A sync call to a local process that answers
/// faster is undecided by its round trip instead ([`crate::local_traffic`]).
pub(crate) const TOO_SHORT: Duration = Duration::from_micros(50);

/// The sleep inside one request's polls, under [`A_CALL`] and with no call seen, past which a
/// route sent once cannot tell a call from a lock: a correct handler's rare lock sleeps tens
/// of microseconds, a sync of a small file a few tenths of a millisecond.
pub(crate) const IN_DOUBT: Duration = Duration::from_micros(100);

/// The sleep no sample caught, in a route sent once on a busy machine ([`BUSY`]), under
/// which a lock whose holder the machine preempted explains it and the route holds; past
/// it, the route cannot tell, and one more request tells. Length tells a preempted lock from
/// a short call no further: the count of requests does ([`TO_TELL`]).
pub(crate) const BUSY_SLICE: Duration = Duration::from_micros(1_500);

/// The share of the watch this process's threads spent waiting for a CPU, on average, past
/// which the machine was busy ([`BUSY_SLICE`]): ≈0 on a machine with a core to spare.
pub(crate) const BUSY: f64 = 0.05;

/// The requests whose polls sleep past [`TOO_SHORT`] that tell a call's short sleeps from a
/// lock's, where they are half of a route's requests or more: a correct handler's poll
/// sleeps so in 0–2 % of requests (docs/blocking-power.md), a call in nearly every one;
/// three requests a route ride out a sync call the kernel completes without a sleep.
pub(crate) const TO_TELL: usize = 2;

/// One watched request of a route, as the served router recorded it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WatchedRequest {
    /// Its polls, split by the worker's clocks (`None` where they are not read).
    pub(crate) split: Option<Split>,
    /// The status it answered.
    pub(crate) status: u16,
}

/// What the kernel was seen doing in a place's polls while the watch ran: the commonest
/// call the worker slept in there, with its samples and all the samples that slept.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Sampled {
    /// The commonest call the worker slept in, and in how many samples.
    pub(crate) call: Option<(BlockedCall, u32)>,
    /// The samples that caught the worker asleep there.
    pub(crate) asleep: u32,
    /// The samples that caught the worker running there.
    pub(crate) running: u32,
}

impl Sampled {
    /// Nothing sampled.
    #[cfg(test)]
    pub(crate) const NONE: Sampled = Sampled {
        call: None,
        asleep: 0,
        running: 0,
    };

    /// From the samples at one place, commonest first.
    pub(crate) fn of(samples: &[(Seen, u32)]) -> Sampled {
        let asleep: Vec<(&BlockedCall, u32)> = samples
            .iter()
            .filter_map(|(seen, n)| match seen {
                Seen::Blocked(call) => Some((call, *n)),
                Seen::Running => None,
            })
            .collect();
        Sampled {
            call: asleep.first().map(|(call, n)| ((*call).clone(), *n)),
            asleep: asleep.iter().map(|(_, n)| n).sum(),
            running: samples
                .iter()
                .filter(|(seen, _)| *seen == Seen::Running)
                .map(|(_, n)| n)
                .sum(),
        }
    }

    /// The call seen, where it is one a handler makes (a file, a socket, a sleep, another
    /// system call) and not a wait a correct poll meets too ([`Sampled::in_a_lock`]).
    pub(crate) fn a_call(&self) -> Option<&BlockedCall> {
        self.call
            .as_ref()
            .map(|(call, _)| call)
            .filter(|call| !matches!(call, BlockedCall::Lock | BlockedCall::Fault))
    }

    /// Whether the commonest wait seen is one a correct poll meets too, judged by its time
    /// and its count of requests rather than by its kind: a lock (`futex`: tokio's, the
    /// allocator's, a channel's) or a page fault, which may wait for the address space's
    /// lock while another thread maps or unmaps memory — stretched by a busy machine that
    /// preempts that thread (docs/watch-thresholds.md).
    pub(crate) fn in_a_lock(&self) -> bool {
        matches!(self.call, Some((BlockedCall::Lock | BlockedCall::Fault, _)))
    }
}

/// What the watch decided of a route (or of the workers outside every response).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Finding {
    /// Its polls never held the worker in a way another request waits behind.
    Holds,
    /// Its polls slept in a call: the kernel saw the call, or the sleep was one no brief
    /// lock makes. How many requests, and the longest wait in one.
    Waits {
        /// Requests whose polls slept past [`TOO_SHORT`].
        requests: usize,
        /// The longest waiting inside one request's polls.
        longest: Duration,
    },
    /// One poll computed past the budget: the longest stretch, and in how many requests.
    Computes {
        /// Requests with a poll past the budget.
        requests: usize,
        /// The longest poll's CPU time.
        longest: Duration,
    },
    /// The requests cannot tell: what was seen, and what would tell.
    CannotTell(String),
    /// What the worker's time off the CPU was is not read on this platform.
    Unread,
}

/// Decides a route from its `requests` and what was sampled in its polls, with the poll
/// budget of `allowance`.
///
/// Broken (in this order): a poll computed past the budget, in one request of ten or more
/// (one odd request among twenty does not make a handler, as the load claims have it: a
/// core `block_in_place` handed on that the machine gave no thread to take it up, and its
/// giver took back); the kernel saw the worker in a call that is not a lock at the route's
/// path, and its requests slept; a request's polls waited [`A_CALL`] or more where the
/// kernel was not seen only in a lock; at least [`TO_TELL`] requests, and half of them or
/// more, slept past [`TOO_SHORT`]. A lock (`futex`) is what a correct handler's brief
/// waits are too, and a busy machine that preempts the lock's holder (a driver's thread)
/// stretches them past a millisecond (docs/watch-thresholds.md): a lock waited for decides only by the count of requests, each
/// request's sleep less what the thread that woke its task spent waiting for a CPU
/// meanwhile ([`Split::held_up`]: flume wakes sqlx's worker under the lock it takes). A single
/// request that slept past [`IN_DOUBT`] and under [`A_CALL`], with nothing seen, cannot tell
/// a call's short sleep from a lock's: it says so, and that one more request tells; one
/// shorter, or one seen in a lock, holds. A poll between the optimised and the unoptimised
/// budget in a build without optimisations cannot tell either, and names the profile line.
#[cfg(test)]
pub(crate) fn decide(
    requests: &[WatchedRequest],
    sampled: &Sampled,
    allowance: &Allowance,
) -> Finding {
    decide_on(requests, sampled, allowance, Around::default())
}

/// `decide`, on a machine `busy` ([`BUSY`]) or not: where it was, a sleep no sample
/// caught decides by the count of requests, as a lock's does, and a route sent once that
/// slept so past [`BUSY_SLICE`] cannot tell. Where the service talks to a
/// process on this machine directly (`local`: why that cannot be told, and what tells), a
/// route that would otherwise hold, inside whose polls a round trip to that process fell in
/// half its requests or more (its one request, where it had one;
/// [`crate::local_traffic`]), cannot tell: a sync call to a process on loopback is answered
/// within microseconds, before its worker sleeps (the accounts example's diesel build, in
/// every request of a route in some runs), and whose round trip it was is not read — a
/// correct handler's poll may span another thread's.
pub(crate) fn decide_on(
    requests: &[WatchedRequest],
    sampled: &Sampled,
    allowance: &Allowance,
    around: Around<'_>,
) -> Finding {
    let splits: Vec<Split> = requests.iter().filter_map(|r| r.split).collect();
    if splits.is_empty() {
        return Finding::Unread;
    }
    let reading = Reading {
        splits: &splits,
        sampled,
        allowance,
        around,
        longest_computing: longest_computing(requests),
    };
    if let Some(computes) = reading.computes() {
        return computes;
    }
    // Where a poll's time off the CPU is not split into waiting and preemption (off Linux),
    // its "waiting" is a bound and its sleeps are not counted: computing is exact everywhere
    // (past the budget, or between the budgets where this build cannot tell), and time off
    // the CPU no verdict.
    if !crate::thread_clock::splits_off_cpu() {
        return if splits.iter().any(|s| s.waiting >= TOO_SHORT) {
            Finding::Unread
        } else {
            undecided_stretch(reading.longest_computing, allowance).unwrap_or(Finding::Holds)
        };
    }
    reading.waits()
}

/// What bears on a route's reading besides its requests and samples.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Around<'a> {
    /// The machine kept this process's threads from a CPU past [`BUSY`] while the watch ran.
    pub(crate) busy: bool,
    /// The service talks to a process on this machine directly: why a round trip to it
    /// cannot be told here, and what tells.
    pub(crate) local: Option<&'a str>,
    /// The kernel handed over the route's longest sleep as the worker left its CPU, and it
    /// was on a lock: a sleep read as a lock's, whether or not a sample met it.
    pub(crate) lock_handed_over: bool,
}

/// One route's requests and samples as [`decide_on`] reads them, step by step.
struct Reading<'a> {
    splits: &'a [Split],
    sampled: &'a Sampled,
    allowance: &'a Allowance,
    around: Around<'a>,
    longest_computing: Duration,
}

impl Reading<'_> {
    /// A poll past the budget in one request of ten or more.
    fn computes(&self) -> Option<Finding> {
        let past_budget = self
            .splits
            .iter()
            .filter(|s| s.longest_computing > self.allowance.budget())
            .count();
        (past_budget > 0 && past_budget * 10 >= self.splits.len()).then_some(Finding::Computes {
            requests: past_budget,
            longest: self.longest_computing,
        })
    }

    /// On a busy machine a sleep no sample caught may be a lock whose holder the machine
    /// preempted, for as long as the sampler was kept from its CPU: it decides by the count
    /// of requests, as a lock does.
    fn unseen_on_busy(&self) -> bool {
        self.around.busy && self.sampled.call.is_none()
    }

    /// Whether the route's sleeps are read as a lock's.
    fn in_a_lock(&self) -> bool {
        self.sampled.in_a_lock() || self.around.lock_handed_over || self.unseen_on_busy()
    }

    /// A request's sleep: on a lock, only what the run-queue time of the thread that woke
    /// the task explains not — a holder preempted under the lock it woke the task from
    /// (`thread_clock::woken`); a call seen counts whole.
    fn waited(&self, split: &Split) -> Duration {
        if self.in_a_lock() {
            split.waiting.saturating_sub(split.held_up)
        } else {
            split.waiting
        }
    }

    /// Broken on the sleeps, else what cannot tell, else holds.
    fn waits(&self) -> Finding {
        let slept: Vec<Duration> = self
            .splits
            .iter()
            .filter(|s| s.slept > 0 && self.waited(s) >= TOO_SHORT)
            .map(|s| self.waited(s))
            .collect();
        let longest = slept.iter().copied().max().unwrap_or_default();
        // A call sampled at the route's path counts where its requests slept: another
        // method on the same path (`GET /todos` beside `POST /todos`) is sampled there too.
        if (self.sampled.a_call().is_some() && !slept.is_empty())
            || (longest >= A_CALL && !self.in_a_lock())
            || (slept.len() >= TO_TELL && slept.len() * 2 >= self.splits.len())
        {
            return Finding::Waits {
                requests: slept.len(),
                longest,
            };
        }
        undecided_stretch(self.longest_computing, self.allowance)
            .or_else(|| self.one_request_in_doubt(longest))
            .or_else(|| self.local_round_trip())
            .unwrap_or(Finding::Holds)
    }

    /// A route sent once whose sleep a call and a lock both make: one more request tells.
    fn one_request_in_doubt(&self, longest: Duration) -> Option<Finding> {
        if self.splits.len() >= TO_TELL {
            return None;
        }
        if longest >= IN_DOUBT && !self.in_a_lock() {
            return Some(Finding::CannotTell(format!(
                "its one request slept {} inside its polls and the kernel was not seen in a call: a short call or a brief lock; one more request tells",
                in_ms(longest)
            )));
        }
        (self.unseen_on_busy() && longest >= BUSY_SLICE).then(|| {
            Finding::CannotTell(format!(
                "its one request slept {} inside its polls while the machine kept this process's threads from a CPU, and no sample caught the call: a sync call, or a lock whose holder the machine preempted; one more request tells",
                in_ms(longest)
            ))
        })
    }

    /// A round trip to a local process inside half the route's polls or more, where the
    /// service talks to one directly: too fast to be seen waiting.
    fn local_round_trip(&self) -> Option<Finding> {
        let local = self.around.local?;
        let sent = self.splits.iter().filter(|s| s.to_local > 0).count();
        (sent > 0 && sent * 2 >= self.splits.len()).then(|| {
            Finding::CannotTell(format!(
                "a round trip to a process on this machine fell inside its polls in {sent} of its {} request{} — a call its worker may have made itself, too fast to be seen waiting: {local}",
                self.splits.len(),
                if self.splits.len() == 1 { "" } else { "s" }
            ))
        })
    }
}

/// The longest CPU one poll of `requests` used without giving its worker back.
pub(crate) fn longest_computing(requests: &[WatchedRequest]) -> Duration {
    requests
        .iter()
        .filter_map(|r| r.split)
        .map(|s| s.longest_computing)
        .max()
        .unwrap_or_default()
}

/// A route whose longest poll computed past the optimised budget and within the
/// unoptimised one, in a build without optimisations: it cannot tell, naming the profile
/// line that makes it decisive. `None` where the stretch is under both or the build has
/// one budget.
fn undecided_stretch(longest_computing: Duration, allowance: &Allowance) -> Option<Finding> {
    let (optimised, unoptimised) = allowance.undecided()?;
    (longest_computing > optimised && longest_computing <= unoptimised).then(|| {
        Finding::CannotTell(format!(
            "a poll computed {} without giving its worker back, between {} and {}, where this build cannot tell a long stretch from ordinary work slowed 2–30× by a build without optimisations: `{}` in the workspace's Cargo.toml makes it decisive",
            in_ms(longest_computing),
            in_ms(optimised),
            in_ms(unoptimised),
            crate::vocab::allowance::PROFILE_LINE
        ))
    })
}

/// Decides the workers' time outside every response's polls — a task the requests spawned,
/// a connection's driver, a background job — from the longest wait of one stretch there
/// and what was sampled there: broken where the kernel saw a call that is not a lock or a
/// page fault ([`Sampled::a_call`]), or a stretch waited [`A_CALL`] or more — where what was
/// seen there is a lock or a page fault, in [`TO_TELL`] stretches or more.
pub(crate) fn decide_outside(longest: Duration, stretches: usize, sampled: &Sampled) -> Finding {
    // Off Linux a stretch's time off the CPU may be the machine's preemption: no verdict.
    if !crate::thread_clock::splits_off_cpu() {
        return if longest >= A_CALL {
            Finding::Unread
        } else {
            Finding::Holds
        };
    }
    // A page fault or a lock decides by its count of stretches, as inside a poll: the
    // address space's lock, its holder preempted, held a worker 1.4 ms once outside every
    // response (the accounts' offloaded build, 1 of 50 runs with both cores busy).
    let counted = sampled.in_a_lock() && stretches >= TO_TELL;
    if sampled.a_call().is_some() || (longest >= A_CALL && (!sampled.in_a_lock() || counted)) {
        Finding::Waits {
            requests: stretches,
            longest,
        }
    } else {
        Finding::Holds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(waiting_us: u64, slept: u32, computing_us: u64) -> WatchedRequest {
        WatchedRequest {
            split: Some(Split {
                computing: Duration::from_micros(computing_us),
                waiting: Duration::from_micros(waiting_us),
                preempted: Duration::ZERO,
                longest_computing: Duration::from_micros(computing_us),
                slept,
                to_local: 0,
                handed_off: 0,
                held_up: Duration::ZERO,
            }),
            status: 200,
        }
    }

    /// A request whose worker slept `waiting_us` in one sleep, `held_up_us` of it while a
    /// thread it was woken by waited for a CPU (or held what it woke it under).
    fn held_up(waiting_us: u64, held_up_us: u64) -> WatchedRequest {
        WatchedRequest {
            split: Some(Split {
                held_up: Duration::from_micros(held_up_us),
                ..request(waiting_us, 1, 60).split.unwrap()
            }),
            status: 200,
        }
    }

    fn budget(ms: u64) -> Allowance {
        Allowance::default()
            .with_budget(Duration::from_millis(ms))
            .unwrap()
    }

    fn seen(call: BlockedCall, n: u32) -> Sampled {
        Sampled::of(&[(Seen::Blocked(call), n)])
    }

    #[test]
    fn a_correct_handler_holds_with_its_brief_locks() {
        if !crate::thread_clock::splits_off_cpu() {
            return; // off Linux: `time_off_the_cpu_unsplit_decides_only_computing`
        }
        let never = [request(0, 0, 60), request(0, 0, 80)];
        assert_eq!(decide(&never, &Sampled::NONE, &budget(4)), Finding::Holds);
        // One request of three slept briefly on a lock; the lock was even sampled.
        let a_lock = [request(0, 0, 60), request(150, 1, 60), request(0, 0, 70)];
        assert_eq!(
            decide(&a_lock, &seen(BlockedCall::Lock, 1), &budget(4)),
            Finding::Holds
        );
        // A switch out and back at once, in every request, is no call.
        let instant = [request(5, 1, 60), request(8, 1, 60)];
        assert_eq!(decide(&instant, &Sampled::NONE, &budget(4)), Finding::Holds);
    }

    #[test]
    fn a_call_seen_or_a_millisecond_asleep_breaks_from_one_request() {
        if !crate::thread_clock::splits_off_cpu() {
            return; // off Linux: `time_off_the_cpu_unsplit_decides_only_computing`
        }
        let file = BlockedCall::File {
            call: "fdatasync",
            path: "/tmp/audit.log".into(),
        };
        let short = [request(120, 1, 60)];
        assert!(matches!(
            decide(&short, &seen(file.clone(), 1), &budget(4)),
            Finding::Waits { requests: 1, .. }
        ));
        // The same call sampled at the path, where this route's requests never slept: the
        // other method's call.
        let other = [request(0, 0, 60)];
        assert_eq!(decide(&other, &seen(file, 4), &budget(4)), Finding::Holds);
        let long = [request(20_000, 1, 60)];
        assert!(matches!(
            decide(&long, &Sampled::NONE, &budget(4)),
            Finding::Waits { requests: 1, longest } if longest == Duration::from_millis(20)
        ));
        // A lock waited for decides by the count of requests: one request's millisecond
        // may be its holder preempted by a busy machine; two of two are a std mutex
        // another thread holds.
        assert_eq!(
            decide(
                &[request(1_100, 1, 60)],
                &seen(BlockedCall::Lock, 1),
                &budget(4)
            ),
            Finding::Holds
        );
        assert!(matches!(
            decide(
                &[request(3_000, 1, 60), request(2_500, 1, 60)],
                &seen(BlockedCall::Lock, 4),
                &budget(4)
            ),
            Finding::Waits { requests: 2, .. }
        ));
    }

    #[test]
    fn short_sleeps_need_two_requests_to_tell() {
        if !crate::thread_clock::splits_off_cpu() {
            return; // off Linux: `time_off_the_cpu_unsplit_decides_only_computing`
        }
        let one = [request(120, 1, 60)];
        assert!(matches!(
            decide(&one, &Sampled::NONE, &budget(4)),
            Finding::CannotTell(why) if why.contains("one more request tells")
        ));
        // A lock's tens of microseconds, in a route sent once: no doubt.
        assert_eq!(
            decide(&[request(30, 1, 60)], &Sampled::NONE, &budget(4)),
            Finding::Holds
        );
        let both = [request(120, 1, 60), request(90, 1, 60)];
        assert!(matches!(
            decide(&both, &Sampled::NONE, &budget(4)),
            Finding::Waits { requests: 2, .. }
        ));
        // Two of three: a call the kernel once completed without a sleep.
        let most = [request(120, 1, 60), request(0, 0, 60), request(90, 1, 60)];
        assert!(matches!(
            decide(&most, &Sampled::NONE, &budget(4)),
            Finding::Waits { requests: 2, .. }
        ));
        // One of two, or two of five: a lock now and then.
        let one = [request(120, 1, 60), request(0, 0, 60)];
        assert_eq!(decide(&one, &Sampled::NONE, &budget(4)), Finding::Holds);
        let two = [
            request(120, 1, 60),
            request(0, 0, 60),
            request(90, 1, 60),
            request(0, 0, 60),
            request(0, 0, 60),
        ];
        assert_eq!(decide(&two, &Sampled::NONE, &budget(4)), Finding::Holds);
    }

    /// Computing is exact everywhere: this holds off Linux too.
    #[test]
    fn a_poll_past_the_budget_breaks_and_one_between_the_budgets_names_the_build() {
        assert!(matches!(
            decide(&[request(0, 0, 9_000)], &Sampled::NONE, &budget(4)),
            Finding::Computes { requests: 1, .. }
        ));
        // One odd request among twenty is not the handler; two are.
        let mut twenty = vec![request(0, 0, 60); 19];
        twenty.push(request(0, 0, 9_000));
        assert_eq!(decide(&twenty, &Sampled::NONE, &budget(4)), Finding::Holds);
        twenty[0] = request(0, 0, 9_000);
        assert!(matches!(
            decide(&twenty, &Sampled::NONE, &budget(4)),
            Finding::Computes { requests: 2, .. }
        ));
        let default = Allowance::default();
        let ten = [request(0, 0, 10_000)];
        match default.undecided() {
            Some(_) => assert!(matches!(
                decide(&ten, &Sampled::NONE, &default),
                Finding::CannotTell(why) if why.contains("opt-level = 1")
            )),
            None => assert!(matches!(
                decide(&ten, &Sampled::NONE, &default),
                Finding::Computes { .. }
            )),
        }
    }

    #[test]
    fn a_busy_machine_makes_a_sleep_no_sample_caught_decide_by_its_count() {
        if !crate::thread_clock::splits_off_cpu() {
            return; // off Linux: `time_off_the_cpu_unsplit_decides_only_computing`
        }
        let busy = |requests: &[WatchedRequest], sampled: &Sampled| {
            decide_on(
                requests,
                sampled,
                &budget(4),
                Around {
                    busy: true,
                    ..Around::default()
                },
            )
        };
        let lone = [request(1_100, 1, 60)];
        assert!(matches!(
            decide_on(&lone, &Sampled::NONE, &budget(4), Around::default()),
            Finding::Waits { .. }
        ));
        assert_eq!(busy(&lone, &Sampled::NONE), Finding::Holds);
        // Past the slice, one request cannot tell a sync call from a preempted holder, and
        // says that one more tells; two of two are the call.
        assert!(matches!(
            busy(&[request(2_000, 1, 60)], &Sampled::NONE),
            Finding::CannotTell(why) if why.contains("one more request tells")
        ));
        assert!(matches!(
            busy(
                &[request(2_000, 1, 60), request(2_100, 1, 60)],
                &Sampled::NONE
            ),
            Finding::Waits { requests: 2, .. }
        ));
        // One request of three, however long: the holder preempted once.
        assert_eq!(
            busy(
                &[request(0, 0, 60), request(1_600, 1, 60), request(0, 0, 60)],
                &Sampled::NONE
            ),
            Finding::Holds
        );
        // On a quiet machine the sampler was not kept from its CPU: a millisecond is a call.
        assert!(matches!(
            decide_on(
                &[request(0, 0, 60), request(1_600, 1, 60)],
                &Sampled::NONE,
                &budget(4),
                Around::default()
            ),
            Finding::Waits { requests: 1, .. }
        ));
        // A call the kernel was seen in is no busy machine's.
        let sleep = Sampled::of(&[(Seen::Blocked(BlockedCall::Sleep), 1)]);
        assert!(matches!(busy(&lone, &sleep), Finding::Waits { .. }));
    }

    /// A sleep on a lock counts what another thread's wait for a CPU does not explain (its
    /// holder preempted); a call seen counts whole.
    #[test]
    fn a_lock_whose_holder_waited_for_a_cpu_holds() {
        if !crate::thread_clock::splits_off_cpu() {
            return;
        }
        let lock = seen(BlockedCall::Lock, 10);
        let preempted = [held_up(1_900, 1_880), held_up(1_700, 1_690)];
        assert_eq!(decide(&preempted, &lock, &budget(4)), Finding::Holds);
        // The holder slept or computed under the lock for most of the worker's sleep.
        let holding = [held_up(10_400, 400), held_up(10_300, 300)];
        assert!(matches!(
            decide(&holding, &lock, &budget(4)),
            Finding::Waits { requests: 2, .. }
        ));
        let file = BlockedCall::File {
            call: "fdatasync",
            path: "/tmp/journal".into(),
        };
        assert!(matches!(
            decide(&preempted, &seen(file, 2), &budget(4)),
            Finding::Waits { requests: 2, .. }
        ));
    }

    /// A lock the kernel handed over at the switch, no sample having met it, is read as a
    /// lock: what its waker's brief hold explains is not counted (flume's send, waking the
    /// worker under the channel's lock), and the same sleeps unexplained, or on a call, wait.
    #[test]
    fn a_lock_handed_over_is_read_as_a_lock() {
        if !crate::thread_clock::splits_off_cpu() {
            return;
        }
        let handed_over = Around {
            lock_handed_over: true,
            ..Around::default()
        };
        let woken_under_it = [held_up(130, 140), held_up(90, 150), held_up(10, 0)];
        assert_eq!(
            decide_on(&woken_under_it, &Sampled::NONE, &budget(4), handed_over),
            Finding::Holds
        );
        // The same sleeps with nothing handed over are read whole: two of three wait.
        assert!(matches!(
            decide(&woken_under_it, &Sampled::NONE, &budget(4)),
            Finding::Waits { requests: 2, .. }
        ));
        // A holder that kept the lock a millisecond past its waking waits, handed over or not.
        let held = [held_up(1_100, 150), held_up(1_000, 140), held_up(10, 0)];
        assert!(matches!(
            decide_on(&held, &Sampled::NONE, &budget(4), handed_over),
            Finding::Waits { requests: 2, .. }
        ));
    }

    /// A route during whose polls a round trip to a process on this machine was made, in half
    /// its requests or more, cannot tell, naming it; beside none, or in fewer than half, it
    /// holds.
    #[test]
    fn a_query_sent_to_a_local_process_inside_the_polls_cannot_tell() {
        if !crate::thread_clock::splits_off_cpu() {
            return;
        }
        let round_trips = |n: u32| WatchedRequest {
            split: Some(Split {
                to_local: n,
                ..request(0, 0, 40).split.unwrap()
            }),
            status: 200,
        };
        let local = Some("the service talks to 127.0.0.1:5432 (postgres) directly");
        let three = [round_trips(1), round_trips(2), round_trips(0)];
        match decide_on(
            &three,
            &Sampled::NONE,
            &budget(4),
            Around {
                local,
                ..Around::default()
            },
        ) {
            Finding::CannotTell(why) => {
                assert!(why.contains("inside its polls in 2 of its 3"), "{why}");
                assert!(why.contains("(postgres)"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            decide_on(
                &[round_trips(1)],
                &Sampled::NONE,
                &budget(4),
                Around {
                    local,
                    ..Around::default()
                }
            ),
            Finding::CannotTell(_)
        ));
        let none = [round_trips(0), round_trips(0), round_trips(1)];
        assert_eq!(
            decide_on(
                &none,
                &Sampled::NONE,
                &budget(4),
                Around {
                    local,
                    ..Around::default()
                }
            ),
            Finding::Holds
        );
        assert_eq!(
            decide_on(&three, &Sampled::NONE, &budget(4), Around::default()),
            Finding::Holds
        );
    }

    /// Off Linux a poll's time off the CPU may be the machine's: it decides nothing, and a
    /// poll past the budget, exact everywhere, still breaks.
    #[test]
    fn time_off_the_cpu_unsplit_decides_only_computing() {
        assert!(matches!(
            decide(&[request(0, 0, 9_000)], &Sampled::NONE, &budget(4)),
            Finding::Computes { requests: 1, .. }
        ));
        if crate::thread_clock::splits_off_cpu() {
            return;
        }
        assert_eq!(
            decide(&[request(3_000, 0, 60)], &Sampled::NONE, &budget(4)),
            Finding::Unread
        );
        assert_eq!(
            decide(&[request(5, 0, 60)], &Sampled::NONE, &budget(4)),
            Finding::Holds
        );
        assert_eq!(
            decide_outside(Duration::from_millis(5), 1, &Sampled::NONE),
            Finding::Unread
        );
    }

    #[test]
    fn unread_clocks_decide_nothing() {
        let unsplit = WatchedRequest {
            split: None,
            status: 200,
        };
        assert_eq!(
            decide(&[unsplit], &Sampled::NONE, &budget(4)),
            Finding::Unread
        );
    }

    #[test]
    fn outside_the_responses_a_call_or_a_millisecond_breaks_and_a_lock_by_its_count() {
        if !crate::thread_clock::splits_off_cpu() {
            return; // off Linux: `time_off_the_cpu_unsplit_decides_only_computing`
        }
        assert_eq!(
            decide_outside(Duration::from_micros(300), 2, &Sampled::NONE),
            Finding::Holds
        );
        assert!(matches!(
            decide_outside(Duration::from_millis(5), 1, &Sampled::NONE),
            Finding::Waits { .. }
        ));
        assert!(matches!(
            decide_outside(Duration::ZERO, 0, &seen(BlockedCall::Sleep, 3)),
            Finding::Waits { .. }
        ));
        // A page fault or a lock is judged by its time and its count of stretches.
        let fault = seen(BlockedCall::Fault, 1);
        assert_eq!(
            decide_outside(Duration::from_micros(170), 1, &fault),
            Finding::Holds
        );
        assert_eq!(
            decide_outside(Duration::from_micros(1_400), 1, &fault),
            Finding::Holds
        );
        assert!(matches!(
            decide_outside(Duration::from_millis(3), 2, &fault),
            Finding::Waits { requests: 2, .. }
        ));
        assert!(matches!(
            decide_outside(Duration::from_millis(10), 2, &seen(BlockedCall::Lock, 40)),
            Finding::Waits { .. }
        ));
        assert_eq!(
            decide(&[request(1_100, 1, 60)], &fault, &budget(4)),
            Finding::Holds
        );
    }
}
