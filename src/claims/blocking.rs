//! **Does not block its worker**: the handler never waits while it holds its worker, and
//! never computes past a poll budget in one poll.
//!
//! On a router perfshape serves, every poll of each whole response is timed and split by
//! the worker thread's clocks ([`Holding`]): the claim decides on that, exactly, per
//! request — however short the requests. By URL only a timing from outside is to be had —
//! N concurrent requests against one alone, in the same rounds — and it decides only where
//! it has power ([`Outside`]).

use std::time::Duration;

use super::holding::{self, Holding, middle, millis};
use super::outside::Outside;
use crate::claim::{Claim, ClaimReport, Measure, median};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::evidence::Evidence;
use crate::run::Run;
use crate::vocab::Allowance;
use crate::vocab::ClientStrategy;

/// Concurrent requests per server worker in the claim's fan-out (and at least this many in
/// all): enough to contend for a lock the handler takes, and for the timing from outside,
/// where a handler that holds its worker for a share b of a request makes N concurrent
/// requests take 1 + b·(N/W − 1) request times — at 20 per worker a 10 % hold reads 2.9×
/// where a free handler reads ≈1.1×.
const FAN_OUT_PER_WORKER: usize = 20;

/// A figure is positive: a share of nothing reads as this, "under 0.1 %".
pub(crate) const LEAST: f64 = 0.001;

/// What one round saw besides its figure.
#[derive(Clone, Copy, Debug)]
struct HeldRound {
    /// One request alone.
    alone: Duration,
    /// N concurrent ÷ one alone.
    ratio: f64,
    /// The held share the timing from outside estimates, (ratio − 1) ÷ (N/W − 1).
    estimate: f64,
    /// How the fan-out's requests held their worker, from their polls (a served router).
    polls: Option<Holding>,
    /// The service's CPU per request over the fan-out, when it runs on this machine in a
    /// process of its own (a URL).
    service_cpu: Option<Duration>,
    /// What the fan-out saw of its own limits: the load client's CPU, the machine's.
    outside: Outside,
}

impl Endpoint {
    /// The most CPU one poll of this endpoint's responses may use before
    /// [`does_not_block_its_worker`](Self::does_not_block_its_worker) (and the claims that
    /// judge a hold: [`keeps_answering_during`](Self::keeps_answering_during), a
    /// [`Mix`](crate::Mix)) call the handler a worker held: above 0, at most 60 s.
    ///
    /// Default: 4 ms of CPU in one poll (tokio's own guidance is tens to a hundred µs
    /// between awaits; the gate is for stretches that hold a worker, not for ordinary
    /// work), or 24 ms where perfshape was built without optimisations — a team's default
    /// test profile builds every dependency so, and the same work then takes 6–30× longer.
    /// A budget outside the range is named by the claim's `check()`.
    pub fn poll_budget(mut self, budget: Duration) -> Self {
        let allowance = self.allowance().with_budget(budget);
        match self.keep(allowance) {
            Some(allowance) => self.set_allowance(allowance),
            None => self,
        }
    }

    /// The most of each request this endpoint's handler may spend waiting while it holds
    /// its worker: a share in (0, 1] (default 0.05; another is named by the claim's
    /// `check()`).
    pub fn waits_at_most(mut self, share: f64) -> Self {
        let allowance = self.allowance().with_waiting(share);
        match self.keep(allowance) {
            Some(allowance) => self.set_allowance(allowance),
            None => self,
        }
    }

    /// **Does not block its worker**: the handler never *waits* while it holds its worker
    /// for more than 5 % of each request ([`waits_at_most`](Self::waits_at_most)), and
    /// never *computes* past the poll budget in one poll ([`poll_budget`](Self::poll_budget)).
    ///
    /// A hold on a worker is harmless while the handler computes in short polls — however
    /// short the request, a 50 µs CRUD handler holds — and a problem when it sleeps inside
    /// a poll (`std::thread::sleep`, `std::fs`, a sync database driver, a contended std
    /// mutex, a blocking DNS lookup) or computes for a long stretch without yielding (20 ms
    /// of hashing). The figure is the larger of the waiting share ÷ its allowance and the
    /// longest poll ÷ the budget: at most 1 holds.
    ///
    /// On a router perfshape serves, each response's polls — its service future's and its
    /// body's — are timed and split by the worker thread's CPU clock and run-queue time
    /// (preemption by a busy machine is neither), and decide. N concurrent requests (20 per
    /// worker) are sent in each round, so a lock they contend for shows. Their time against
    /// one request alone is the evidence from outside: when it says the requests queued and
    /// the polls say the worker was free, the report says they queued behind something
    /// else (a pool of one connection, say).
    ///
    /// By URL the timing from outside decides, (N concurrent ÷ one alone − 1) ÷ (N − 1), as
    /// a held share; where the service runs on this machine its process's CPU splits it
    /// into computing and waiting. It is inconclusive — never held, never broken — where a
    /// request alone is short against the load client's own CPU per request, where the
    /// machine's CPU was the fan-out's limit, or where the hold is all computing (from
    /// outside one long poll and many short ones read the same).
    ///
    /// Seed 000's C3 on your endpoint. Sharpest on a 1-worker pool.
    pub fn does_not_block_its_worker(&self) -> Claim<'static> {
        let workers = self.workers().map_or(1, |p| p.workers);
        let n = self
            .concurrency_set()
            .unwrap_or(FAN_OUT_PER_WORKER * workers)
            .max(2);
        let waves = n.div_ceil(workers) as f64;
        let allowance = self.allowance();
        let polled = self.target().served().is_some() && crate::server::thread_clock::available();
        let client_workers = self.target().client().pool().settings().workers;
        let evidence = Evidence::default();
        let (this, seen) = (self.clone(), evidence.clone());
        let what = format!("{n} concurrent {}", self.name());
        let label = format!("allowance used by {what}");
        let mut count = 0usize;
        let (used, rounds) = Measure::noting(&label, move || {
            // Alternate which goes first, as a claim's sides would be.
            count += 1;
            let service = this.target().service_process();
            let fan_out = || {
                seen.observe(this.target(), || {
                    let before = service.and_then(|s| s.times());
                    let started = std::time::Instant::now();
                    let run = this.run(ClientStrategy::FanOut, n)?;
                    let times = service
                        .and_then(|s| s.times())
                        .zip(before)
                        .map(|(after, before)| (after.since(&before), started.elapsed()));
                    Ok((run, times))
                })
            };
            let (alone, (run, service_times)) = if count % 2 == 1 {
                let alone = this.alone()?.0;
                (alone, fan_out()?)
            } else {
                let fanned = fan_out()?;
                (this.alone()?.0, fanned)
            };
            let ratio = run.wall.as_secs_f64() / alone.as_secs_f64().max(f64::MIN_POSITIVE);
            let round = HeldRound {
                alone,
                ratio,
                estimate: ((ratio - 1.0) / (waves - 1.0)).max(LEAST),
                polls: if polled {
                    Holding::of(&run.records)
                } else {
                    None
                },
                service_cpu: service_times.map(|(times, _)| times.cpu / n as u32),
                outside: seen
                    .last()
                    .map(|(length, usage)| Outside::of(length, usage, n, client_workers))
                    .unwrap_or_default()
                    .with_service(service_times),
            };
            let figure = match round.polls {
                Some(holding) => holding::used(&allowance, &holding, alone),
                None if polled => {
                    return Err(Error::CannotTell {
                        what: format!(
                            "the server recorded none of the {n} responses' polls within a second of their arrival"
                        ),
                    });
                }
                None => outside_figure(&this, &round, &run, n)?,
            };
            Ok((figure.max(LEAST), round))
        });
        let used = used
            .warm_with({
                let this = self.clone();
                move || {
                    this.preflight()?;
                    this.run(ClientStrategy::FanOut, n).map(drop)
                }
            })
            .evidence(move || evidence.describe(&what));
        let decided_on = if polled {
            "the handler's polls, split by the worker's clocks"
        } else if self.target().served().is_some() {
            "a timing from outside (the worker's clocks cannot be read here)"
        } else {
            "a timing from outside"
        };
        Claim::figure(
            &format!("{} does not block its worker", self.name()),
            used,
        )
        .at_most(1.0)
        .ideal(0.0)
        .refusing(self.refused())
        .context("target", self.target().to_string())
        .context("n", n)
        .context("decided on", decided_on)
        .context(
            "allowance used",
            format!(
                "the larger of waiting per request ÷ {:.0} % of one request alone (at least {}) and the longest poll of nine requests in ten ÷ the poll budget",
                allowance.waiting * 100.0,
                millis(crate::vocab::allowance::WAIT_FLOOR)
            ),
        )
        .observed({
            let rounds = rounds.clone();
            move || {
                rounds.with(|rounds| {
                    if rounds.is_empty() {
                        Vec::new()
                    } else {
                        Figures::of(rounds).named()
                    }
                })
            }
        })
        .explain(move |report: &ClaimReport| {
            sentences(report, &rounds.to_vec(), (n, workers, client_workers), allowance)
        })
    }
}

/// The figure of a round measured from outside — the estimated held share ÷ the allowed
/// waiting share — or why such a figure says nothing about the service.
fn outside_figure(endpoint: &Endpoint, round: &HeldRound, run: &Run, n: usize) -> Result<f64> {
    let allowance = endpoint.allowance();
    if let Some(why) = round.outside.powerless(round.alone) {
        return Err(Error::Limited {
            what: format!(
                "{} ({n} concurrent in {}): {why}; on a router perfshape serves (Target::serve), the handler's polls tell",
                endpoint.name(),
                millis(run.wall)
            ),
        });
    }
    let held = round.alone.mul_f64(round.estimate.min(1.0));
    let Some(cpu) = round.service_cpu else {
        return Ok(round.estimate / allowance.waiting);
    };
    let waiting = held.saturating_sub(cpu);
    let share = |d: Duration| d.as_secs_f64() / round.alone.as_secs_f64().max(f64::MIN_POSITIVE);
    if share(held) > allowance.waiting && share(waiting) <= allowance.waiting {
        return Err(Error::CannotTell {
            what: format!(
                "{} holds its worker ≈{} of each {} request, and the service's own CPU explains it ({} per request): it computes, and from outside one long poll and many short ones read the same; on a router perfshape serves (Target::serve), its polls tell",
                endpoint.name(),
                millis(held),
                millis(round.alone),
                millis(cpu)
            ),
        });
    }
    Ok(share(waiting).max(LEAST) / allowance.waiting)
}

/// The medians over a claim's rounds, each figure on its own.
#[derive(Clone, Copy, Debug)]
struct Figures {
    alone: Duration,
    /// The least of the rounds' requests alone.
    least_alone: Duration,
    /// The median wall time of the rounds' fan-outs.
    fan_out: Duration,
    ratio: f64,
    estimate: f64,
    polls: Option<Holding>,
    service_cpu: Option<Duration>,
    /// The load client's CPU per request, and the machine over the median round.
    outside: Outside,
}

impl Figures {
    /// How many requests at a time a resource the N concurrent queued behind admits: N × one
    /// request's own time ÷ the fan-out's. One request's own time is the least of the
    /// rounds' requests alone, as a wait for a CPU only ever adds to it: on a busy machine a
    /// median of the rounds can read a 10 ms query alone as 25 ms, and "admits ≈2.0" of a
    /// connection that admits one.
    fn admits(&self, n: usize) -> f64 {
        (n as f64 * self.least_alone.as_secs_f64()
            / self.fan_out.as_secs_f64().max(f64::MIN_POSITIVE))
        .clamp(1.0, n as f64)
    }

    fn of(rounds: &[HeldRound]) -> Figures {
        let mid =
            |f: &dyn Fn(&HeldRound) -> f64| median(&rounds.iter().map(f).collect::<Vec<f64>>());
        let polls: Vec<Holding> = rounds.iter().filter_map(|r| r.polls).collect();
        let mid_polls = |f: &dyn Fn(&Holding) -> Duration| middle(polls.iter().map(f));
        let cpus: Vec<Duration> = rounds.iter().filter_map(|r| r.service_cpu).collect();
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
            }),
            service_cpu: (!cpus.is_empty()).then(|| middle(cpus)),
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

    fn named(&self) -> Vec<(String, f64)> {
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
                ("preempted ms".to_string(), ms(h.preempted)),
                ("longest poll cpu ms".to_string(), ms(h.longest_computing)),
                ("most poll cpu ms".to_string(), ms(h.most_computing)),
            ]);
        }
        if let Some(cpu) = self.service_cpu {
            figures.push(("service cpu per request ms".to_string(), ms(cpu)));
        }
        figures
    }
}

/// What the claim found, for people: what the handler does with its worker, then what the
/// timing from outside saw.
fn sentences(
    report: &ClaimReport,
    rounds: &[HeldRound],
    (n, workers, client_workers): (usize, usize, usize),
    allowance: Allowance,
) -> Vec<String> {
    if rounds.is_empty() {
        return Vec::new();
    }
    let figures = Figures::of(rounds);
    let alone = figures.alone;
    let pct = |d: Duration| 100.0 * d.as_secs_f64() / alone.as_secs_f64().max(f64::MIN_POSITIVE);
    let allowed = allowance.waiting * 100.0;
    let powerless = figures.outside.powerless(alone);
    let from_outside = format!(
        "from outside: N = {n} concurrent took {:.1}× one request alone, a held share of ≈{:.1} % by the timing estimate{}",
        figures.ratio,
        figures.estimate * 100.0,
        powerless
            .map(|why| format!(", which measures the load's own cost here, not the handler: {why}"))
            .unwrap_or_default()
    );
    let Some(h) = figures.polls else {
        return outside_sentences(report, &figures, n, allowance, from_outside);
    };
    let budget = allowance.describe_budget();
    let floor = if allowance.waiting_allowed(alone) > alone.mul_f64(allowance.waiting) {
        format!(", at least {}", millis(crate::vocab::allowance::WAIT_FLOOR))
    } else {
        String::new()
    };
    let waits = format!(
        "≈{} of each {} request while holding its worker ({:.1} %, at most {allowed:.0} %{floor})",
        millis(h.waiting),
        millis(alone),
        pct(h.waiting)
    );
    let computes = format!("{} (budget {budget})", millis(h.longest_computing));
    let waiting_used = h.waiting.as_secs_f64() / allowance.waiting_allowed(alone).as_secs_f64();
    let computing_used = h.longest_computing.as_secs_f64() / allowance.budget().as_secs_f64();
    let first = if report.verdict.holds() {
        if h.waiting < Duration::from_micros(5) {
            format!(
                "never waits while holding its worker (each {} request); its longest poll computes {computes}",
                millis(alone)
            )
        } else {
            format!("waits {waits}; its longest poll computes {computes}")
        }
    } else if waiting_used >= computing_used {
        format!(
            "waits {waits} — a sleep, sync I/O or a lock on the worker; its longest poll computes {computes}"
        )
    } else {
        format!(
            "computes {} in one poll without giving its worker back (budget {budget}); it waits {waits}",
            millis(h.longest_computing)
        )
    };
    let mut lines = vec![
        first,
        format!(
            "its polls held the worker {} of the median request: {} computing, {} preempted by the machine (neither); {} waiting per request on average; the longest poll of any request computed {}",
            millis(h.held),
            millis(h.computing),
            millis(h.preempted),
            millis(h.waiting),
            millis(h.most_computing)
        ),
    ];
    // The requests queued, but not for the worker: behind something that admits few at a
    // time. Told only where the timing from outside has power, and where the fan-out took
    // well over what the load's own cost explains — each request's polls on the server's
    // workers and the load client's CPU on its own. The polls may hold the worker for more
    // than the waiting allowed by computing (a handler that parses a 20 KiB JSON body, then
    // queues for a database connection): their cost is in `own_cost`. Not where they
    // waited past the allowance: then the requests waited on the worker, whatever else
    // they queued for (a std mutex another thread holds).
    let own_cost = n as f64
        * (h.held.as_secs_f64() / workers as f64
            + figures
                .outside
                .client_per_request
                .map_or(0.0, |c| c.as_secs_f64() / client_workers as f64))
        / alone.as_secs_f64().max(f64::MIN_POSITIVE);
    let queued = powerless.is_none()
        && figures.estimate > allowance.waiting
        && h.waiting <= allowance.waiting_allowed(alone)
        && figures.ratio - 1.0 > 3.0 * own_cost;
    if queued {
        let admits = figures.admits(n);
        lines[0].push_str(&format!(
            "; its requests queued elsewhere, behind something that admits ≈{admits:.1} at a time (concurrency_limit() measures it)"
        ));
        lines.push(format!(
            "{from_outside}: the requests queued, but not for the worker (their polls held it {} of each request) — behind something that admits ≈{admits:.1} at a time (one database connection, a lock, a pool); concurrency_limit() measures it",
            millis(h.held)
        ));
    } else {
        lines.push(from_outside);
    }
    lines
}

/// The sentences of a claim decided from outside (a URL, or clocks that cannot be read).
fn outside_sentences(
    report: &ClaimReport,
    figures: &Figures,
    n: usize,
    allowance: Allowance,
    from_outside: String,
) -> Vec<String> {
    let alone = figures.alone;
    let held = alone.mul_f64(figures.estimate.min(1.0));
    let verb = if report.verdict.holds() {
        "gives its worker back"
    } else {
        "holds its worker"
    };
    let split = match figures.service_cpu {
        Some(cpu) => format!(
            "; of it the service's own CPU explains ≈{} (computing) and ≈{} is waiting",
            millis(cpu.min(held)),
            millis(held.saturating_sub(cpu))
        ),
        None => "; computing and waiting cannot be told apart from here (the service's process cannot be read on this machine)".to_string(),
    };
    let mut lines = vec![format!(
        "{verb}: ≈{} of each {} request ({:.1} %, at most {:.0} % waiting), from N = {n} concurrent taking {:.1}× one request{split}",
        millis(held),
        millis(alone),
        figures.estimate * 100.0,
        allowance.waiting * 100.0,
        figures.ratio
    )];
    if !report.verdict.holds() && figures.ratio > 1.0 {
        lines.push(format!(
            "or its requests queue behind a resource that admits ≈{:.1} at a time (one database connection, a lock): from outside the two read the same; keeps_answering_during() with a free endpoint tells them apart",
            figures.admits(n)
        ));
    }
    lines.push(from_outside);
    lines
}
