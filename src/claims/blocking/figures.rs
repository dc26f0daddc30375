//! What the claim's rounds saw besides their figures, and their medians: the polls, the
//! requests alone and in a fan-out, the service's CPU, the machine.

use std::time::Duration;

use super::super::holding::{self, Holding};
use super::super::outside::Outside;
use crate::claim::median;
use crate::held::middle;
use crate::held::remedy::Hold;
use crate::vocab::Allowance;

/// What one round saw besides its figure.
#[derive(Clone, Copy, Debug)]
pub(super) struct HeldRound {
    /// One request alone.
    pub(super) alone: Duration,
    /// N concurrent ÷ one alone.
    pub(super) ratio: f64,
    /// The held share the timing from outside estimates, (ratio − 1) ÷ (N/W − 1).
    pub(super) estimate: f64,
    /// How the fan-out's requests held their worker, from their polls (a served router).
    pub(super) polls: Option<Holding>,
    /// The service's CPU per request over the fan-out, when it runs on this machine in a
    /// process of its own (a URL).
    pub(super) service_cpu: Option<Duration>,
    /// The service's threads' time on a run queue per request over the fan-out — runnable,
    /// waiting for a CPU the machine gave to other work — read beside its CPU.
    pub(super) service_queued: Option<Duration>,
    /// What the fan-out saw of its own limits: the load client's CPU, the machine's.
    pub(super) outside: Outside,
}

/// Why this build cannot tell the rounds' polls ([`holding::this_build_cannot_tell`]), where it cannot: the
/// claim's verdict and its advice ask the same.
pub(super) fn this_build_cannot_tell(
    allowance: &Allowance,
    rounds: &[HeldRound],
) -> Option<String> {
    holding::this_build_cannot_tell(
        allowance,
        rounds
            .iter()
            .filter_map(|r| r.polls.map(|h| h.longest_computing)),
    )
}

/// The medians over a claim's rounds, each figure on its own.
#[derive(Clone, Copy, Debug)]
pub(super) struct Figures {
    pub(super) alone: Duration,
    /// The least of the rounds' requests alone.
    pub(super) least_alone: Duration,
    /// The median wall time of the rounds' fan-outs.
    pub(super) fan_out: Duration,
    pub(super) ratio: f64,
    pub(super) estimate: f64,
    pub(super) polls: Option<Holding>,
    pub(super) service_cpu: Option<Duration>,
    pub(super) service_queued: Option<Duration>,
    /// The load client's CPU per request, and the machine over the median round.
    pub(super) outside: Outside,
}

/// The share of the fan-out's time the served workers were held — busy (not parked), less
/// the time the machine kept them on a run queue — from which requests that queued are
/// taken to have queued for the workers, not elsewhere: a request waiting for a database
/// connection, a lock or a pool leaves its worker idle, and a worker held half the time or
/// more while the requests' own polls held it little was running something the claim did
/// not read. A worker runnable while the machine ran other threads (a database on the
/// same machine, its proxy) is not held by the service: the accounts example's async build
/// read 41–60 % busy with 3–12 ms of 30–40 ms on a run queue, 35–45 % held (docs/findings.md).
pub(super) const QUEUE_ON_THE_WORKERS: f64 = 0.5;

/// Where a fan-out's requests queued, beyond what their own polls and the load client's
/// cost explain, while their polls did not wait past the allowance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Queue {
    /// They did not queue, or the timing from outside has no power to say so.
    No,
    /// Behind something that admits few at a time, while the workers were mostly idle.
    Elsewhere,
    /// For the workers, which were busy this share of the time with what the requests'
    /// polls do not explain.
    OnTheWorkers(f64),
}

/// The counts a claim's rounds were sent at: the requests at once, the served pool's
/// workers and the load client's — what N concurrent requests cost the two sides at the
/// least, against which a queue is told.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sizes {
    /// The requests sent at once in a round.
    pub(super) n: usize,
    /// The served pool's workers.
    pub(super) workers: usize,
    /// The load client's workers.
    pub(super) client_workers: usize,
}

impl Figures {
    /// Where the requests queued ([`Queue`]). Told only where the timing from outside has
    /// power, and where the fan-out took well over what the load's own cost explains — each
    /// request's polls on the server's workers and the load client's CPU on its own. The
    /// polls may hold the worker for more than the waiting allowed by computing (a handler
    /// that parses a 20 KiB JSON body, then queues for a database connection): their cost
    /// is in `own_cost`. Not where they waited past the allowance: then the requests waited
    /// on the worker, whatever else they queued for (a std mutex another thread holds). A
    /// launched service's polls are not timed: what they cost is not known, and it is
    /// never told.
    pub(super) fn queue(&self, sizes: Sizes, allowance: Allowance, launched: bool) -> Queue {
        let Sizes {
            n,
            workers,
            client_workers,
        } = sizes;
        let Some(h) = self.polls else {
            return Queue::No;
        };
        let alone = self.alone;
        let own_cost = n as f64
            * (h.held.as_secs_f64() / workers as f64
                + self
                    .outside
                    .client_per_request
                    .map_or(0.0, |c| c.as_secs_f64() / client_workers as f64))
            / alone.as_secs_f64().max(f64::MIN_POSITIVE);
        let queued = !launched
            && self.outside.powerless(alone).is_none()
            && self.estimate > allowance.waiting
            && h.all_waiting() <= allowance.waiting_allowed(alone)
            && self.ratio - 1.0 > 3.0 * own_cost;
        let held = self
            .outside
            .usage
            .and_then(|u| u.server.map(|busy| busy - u.server_queued.unwrap_or(0.0)));
        match held {
            _ if !queued => Queue::No,
            Some(held) if held >= QUEUE_ON_THE_WORKERS => Queue::OnTheWorkers(held),
            _ => Queue::Elsewhere,
        }
    }

    /// How many requests at a time a resource the N concurrent queued behind admits: N × one
    /// request's own time ÷ the fan-out's. One request's own time is the least of the
    /// rounds' requests alone, as a wait for a CPU only ever adds to it: on a busy machine a
    /// median of the rounds can read a 10 ms query alone as 25 ms, and "admits ≈2.0" of a
    /// connection that admits one.
    pub(super) fn admits(&self, n: usize) -> f64 {
        (n as f64 * self.least_alone.as_secs_f64()
            / self.fan_out.as_secs_f64().max(f64::MIN_POSITIVE))
        .clamp(1.0, n as f64)
    }

    pub(super) fn of(rounds: &[HeldRound]) -> Figures {
        let mid =
            |f: &dyn Fn(&HeldRound) -> f64| median(&rounds.iter().map(f).collect::<Vec<f64>>());
        let polls: Vec<Holding> = rounds.iter().filter_map(|r| r.polls).collect();
        let mid_polls = |f: &dyn Fn(&Holding) -> Duration| middle(polls.iter().map(f));
        let cpus: Vec<Duration> = rounds.iter().filter_map(|r| r.service_cpu).collect();
        let queued: Vec<Duration> = rounds.iter().filter_map(|r| r.service_queued).collect();
        Figures {
            alone: middle(rounds.iter().map(|r| r.alone)),
            least_alone: rounds.iter().map(|r| r.alone).min().unwrap_or_default(),
            fan_out: middle(rounds.iter().map(|r| r.alone.mul_f64(r.ratio))),
            ratio: mid(&|r| r.ratio),
            estimate: mid(&|r| r.estimate),
            polls: (!polls.is_empty()).then(|| Holding {
                requests: polls.iter().map(|h| h.requests).sum(),
                held: mid_polls(&|h| h.held),
                computing: mid_polls(&|h| h.computing),
                waiting: mid_polls(&|h| h.waiting),
                preempted: mid_polls(&|h| h.preempted),
                longest_computing: mid_polls(&|h| h.longest_computing),
                most_computing: polls
                    .iter()
                    .map(|h| h.most_computing)
                    .max()
                    .unwrap_or_default(),
                slept: polls.iter().map(|h| h.slept).sum(),
                outside: mid_polls(&|h| h.outside),
                outside_share: median(&polls.iter().map(|h| h.outside_share).collect::<Vec<f64>>()),
                handed_off: polls.iter().map(|h| h.handed_off).sum(),
                local: polls.iter().any(|h| h.local),
            }),
            service_cpu: (!cpus.is_empty()).then(|| middle(cpus)),
            service_queued: (!queued.is_empty()).then(|| middle(queued)),
            outside: Outside {
                client_per_request: Some(middle(
                    rounds.iter().filter_map(|r| r.outside.client_per_request),
                ))
                .filter(|c| !c.is_zero()),
                usage: rounds[rounds.len() / 2].outside.usage,
                service: rounds[rounds.len() / 2].outside.service,
            },
        }
    }

    pub(super) fn named(&self) -> Vec<(String, f64)> {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let mut figures = vec![
            ("alone ms".to_string(), ms(self.alone)),
            ("fan-out ÷ alone".to_string(), self.ratio),
            ("estimated held share".to_string(), self.estimate),
        ];
        if let Some(h) = self.polls {
            figures.extend([
                ("held ms".to_string(), ms(h.held)),
                ("computing ms".to_string(), ms(h.computing)),
                ("waiting ms".to_string(), ms(h.waiting)),
                ("worker waiting outside polls ms".to_string(), ms(h.outside)),
                (
                    "worker waiting outside polls share".to_string(),
                    h.outside_share,
                ),
                ("preempted ms".to_string(), ms(h.preempted)),
                ("longest poll cpu ms".to_string(), ms(h.longest_computing)),
                ("most poll cpu ms".to_string(), ms(h.most_computing)),
                ("slept share".to_string(), h.slept_share()),
            ]);
        }
        if let Some(cpu) = self.service_cpu {
            figures.push(("service cpu per request ms".to_string(), ms(cpu)));
        }
        figures
    }
}

/// How a broken claim's handler held its worker, by the part of its allowance it used most:
/// computing in one poll, waiting in a task outside its requests' polls, or waiting in
/// them.
pub(super) fn hold_of(allowance: &Allowance, h: &holding::Holding, alone: Duration) -> Hold {
    let (waiting_used, computing_used, slept_used) = holding::parts(allowance, h, alone);
    if computing_used > waiting_used.max(slept_used) {
        Hold::Computes
    } else if waiting_used >= slept_used
        && (h.outside > h.waiting || holding::waits_by_time(allowance, h, alone))
    {
        Hold::WaitsInATask
    } else {
        Hold::Waits
    }
}
