//! **Does not block its worker**: the handler never waits while it holds its worker, and
//! never computes past a poll budget in one poll.
//!
//! On a router perfshape serves, every poll of each whole response is timed and split by
//! the worker thread's clocks ([`Holding`]): the claim decides on that, exactly, per
//! request — however short the requests. By URL only a timing from outside is to be had —
//! N concurrent requests against one alone, in the same rounds — and it decides only where
//! it has power ([`Outside`]).

mod figures;
mod sentences;

use std::time::Duration;

use super::called::{self, Sampled};
use super::distance::LocalLook;
use super::fan_out::FanOut;
use super::holding::{self, Holding, LEAST, millis};
use super::outside::Outside;
use super::worker_watch::WorkerWatch;
use crate::claim::{Claim, ClaimReport, Measure};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::evidence::Evidence;
use crate::run::Run;
use crate::vocab::ClientStrategy;
use figures::{Figures, HeldRound};
use sentences::{advice, held_at, sentences, unexplained};

impl Endpoint {
    /// The most CPU one poll of this endpoint's responses may use before
    /// [`does_not_block_its_worker`](Self::does_not_block_its_worker) (and the claims that
    /// judge a hold: [`keeps_answering_during`](Self::keeps_answering_during), a
    /// [`Mix`](crate::Mix)) call the handler a worker held: above 0, at most 60 s.
    ///
    /// Default: 4 ms of CPU in one poll (tokio's own guidance is tens to a hundred µs
    /// between awaits; the gate is for stretches that hold a worker, not for ordinary
    /// work). Where perfshape was built without optimisations — a team's default test
    /// profile builds every dependency so, and the same work then takes 2–30× longer — a
    /// poll past 24 ms breaks and one between 4 and 24 ms is inconclusive, naming the
    /// profile line that makes it decisive. A budget set here decides in any build.
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

    /// Accepts a hold by name, as a watch does ([`Watch::allow`](crate::Watch::allow)): where
    /// [`does_not_block_its_worker`](Self::does_not_block_its_worker) breaks on a hold that
    /// `allow` matches — a function in the held worker's stack, this route, the call — it
    /// holds, its report and snapshot listing the hold as allowed, with what it did. An
    /// allow that matched nothing is said in the report; one by function where the stack
    /// is not read allows nothing, and says why.
    pub fn allow(self, allow: crate::vocab::Allow) -> Self {
        self.add_allow(allow)
    }

    /// **Does not block its worker**: the handler never *waits* while it holds its worker
    /// for more than 5 % of each request ([`waits_at_most`](Self::waits_at_most)), and
    /// never *computes* past the poll budget in one poll ([`poll_budget`](Self::poll_budget)).
    ///
    /// A hold on a worker is harmless while the handler computes in short polls — however
    /// short the request, a 50 µs CRUD handler holds — and a problem when it sleeps inside
    /// a poll (`std::thread::sleep`, `std::fs`, a sync database driver, a contended std
    /// mutex, a blocking DNS lookup) or computes for a long stretch without yielding (20 ms
    /// of hashing). The figure is the largest of the waiting share ÷ its allowance, the
    /// longest poll ÷ the budget, and the share of requests whose polls slept in the
    /// kernel at all ÷ half: at most 1 holds. That last one is the mechanism of a wait,
    /// counted however short the wait (Linux): a sync call to a database on this machine
    /// may be answered in microseconds, where production's is a network hop away.
    ///
    /// What the test build can tell: in a build without optimisations (a team's default
    /// test profile) the same code runs 2–30× slower, so with the default budget a longest
    /// poll between 4 ms and 24 ms is inconclusive, naming the profile line that makes it
    /// decisive (`[profile.dev.package."*"] opt-level = 1`); under 4 ms holds and past 24
    /// ms breaks in any build. A served router that talks to a process on this machine
    /// directly (a database on loopback) is named in the report: put it at production's
    /// distance with [`Downstream`](crate::Downstream).
    ///
    /// On a router perfshape serves, each response's polls — its service future's and its
    /// body's — are timed and split by the worker thread's CPU clock and run-queue time
    /// (preemption by a busy machine is neither), and decide; so does what the workers did
    /// outside them: a task the requests spawned that waits on the worker counts in the
    /// waiting per request, and the share of the time the workers waited outside any
    /// response counts against 5 % (a background job; a service built with
    /// [`Target::serve_with`](crate::Target::serve_with) is read with no load first, which
    /// names one). A poll inside which tokio handed the worker's core to another thread
    /// (`block_in_place`) is not a hold. A service started by its own launch function
    /// ([`Target::launch`](crate::Target::launch)) is judged by its workers alone: their
    /// waiting while the requests ran, and their longest stretch of CPU serving one
    /// request. Off Linux the run queue is not read: a poll's time off the CPU is then a
    /// bound on its wait, which can hold the claim but never break it (inconclusive, naming
    /// the read), while computing past the budget breaks it everywhere. N concurrent
    /// requests (20 per worker) are sent in each round, so a lock they contend for shows. Their time against
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
        let allowance = self.allowance();
        let served = self.target().served().is_some();
        let launched = self.target().launched().is_some();
        let polled = served && crate::thread_clock::available();
        let clocked = launched && crate::thread_clock::available();
        // Where the polls (or the workers' timeline) decide, a long route's rounds send
        // fewer requests, sized from its first request alone.
        let size = FanOut::new(self.concurrency_set(), workers, polled || clocked);
        let client_workers = self.target().client().pool().settings().workers;
        let evidence = Evidence::default();
        let (this, seen) = (self.clone(), evidence.clone());
        let (fanned, observed) = (self.clone(), evidence.clone());
        let single = self.clone();
        // The served workers, watched from the first round to the claim's end: with no load
        // first, then round by round.
        let watch = WorkerWatch::default();
        let watched = watch.clone();
        let look = LocalLook::default();
        let looked = look.clone();
        // What the workers were sampled in, over every round's fan-out.
        let sampled = Sampled::default();
        let (sampling, named) = (sampled.clone(), sampled.clone());
        let place = called::route(self.request().method().as_str(), self.path());
        let named_at = place.clone();
        let what = {
            let (size, name) = (size.clone(), self.name());
            move || format!("{} concurrent {name}", size.get())
        };
        let label = format!("allowance used by {} {}", size.named(), self.name());
        let (used, rounds) = Measure::paired(
            &label,
            move || single.alone().map(|(alone, _)| alone),
            {
                let size = size.clone();
                move || {
                    let n = size.get();
                    let service = fanned.target().service_process();
                    observed.observe(fanned.target(), || {
                        let server = fanned.target().served().or(fanned.target().launched());
                        if let Some(server) = server {
                            watch.begin(server);
                        }
                        let before = service.and_then(|s| s.times());
                        let started = std::time::Instant::now();
                        let run = fanned.run(ClientStrategy::FanOut, n)?;
                        sampling.add(&run.calls);
                        let times = service
                            .and_then(|s| s.times())
                            .zip(before)
                            .map(|(after, before)| (after.since(&before), started.elapsed()));
                        // A launched service's responses are not timed: its workers' longest
                        // stretch serving one request bounds its longest poll.
                        let alone = match fanned.target().launched() {
                            Some(_) => Some(fanned.run(ClientStrategy::Sequential, 1)?),
                            None => None,
                        };
                        let share = server.and_then(|server| watch.share(server));
                        Ok((run, (times, share, alone)))
                    })
                }
            },
            move |alone, (run, (service_times, share, alone_run))| {
                let n = run.sent();
                let waves = n.div_ceil(workers) as f64;
                let ratio = run.wall.as_secs_f64() / alone.as_secs_f64().max(f64::MIN_POSITIVE);
                let round = HeldRound {
                    alone,
                    ratio,
                    estimate: ((ratio - 1.0) / (waves - 1.0)).max(LEAST),
                    polls: match (polled, clocked, &alone_run) {
                        (true, _, _) => Holding::of_run(&run),
                        (_, true, Some(alone_run)) => Some(Holding::of_timeline(&run, alone_run)),
                        _ => None,
                    }
                    .map(|h| Holding {
                        outside_share: share.unwrap_or_default(),
                        local: look.talks_locally(),
                        ..h
                    }),
                    service_cpu: service_times.map(|(times, _)| times.cpu / n as u32),
                    service_queued: service_times.map(|(times, _)| times.queued / n as u32),
                    outside: seen
                        .last()
                        .map(|(length, usage)| Outside::of(length, usage, n, client_workers))
                        .unwrap_or_default()
                        .with_service(service_times),
                };
                let figure = match round.polls {
                    Some(holding) => {
                        let figure = holding::used(&allowance, &holding, alone)?;
                        if let Some(why) = look.hides_a_hold(this.target(), figure, 1.0) {
                            return Err(why);
                        }
                        figure
                    }
                    None if (served && !polled) || (launched && !clocked) => {
                        return Err(Error::Unread {
                            what: crate::thread_clock::unclocked("the handler's"),
                        });
                    }
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
            },
        );
        let used = used
            .warm_with({
                let (this, size) = (self.clone(), size.clone());
                move || {
                    // The first request alone (refused at once if it fails) sizes the rounds.
                    size.settle(this.alone()?.0);
                    this.run(ClientStrategy::FanOut, size.get()).map(drop)
                }
            })
            .evidence(move || evidence.describe(&what()));
        // What the claim decides on wherever it is run, so that the snapshot is the same on
        // every platform: where a clock is missing the claim is inconclusive, saying so.
        let decided_on = if served {
            "the handler's polls, split by the worker's clocks"
        } else if launched {
            "the workers' timeline: their waiting while the requests ran, and their longest stretch of CPU serving one request"
        } else {
            "a timing from outside"
        };
        let claim = self.naming_redirects(Claim::figure(
            &format!("{} does not block its worker", self.name()),
            used,
        ));
        // Where the polls (or the workers' timeline) are read, a round far outside is the
        // service's, not the machine's: a lock met in some rounds only breaks the claim.
        let claim = if polled || clocked {
            claim.about_a_hold()
        } else {
            claim
        };
        claim
        .at_most(1.0)
        .ideal(0.0)
        .refusing(self.refused())
        .context("target", self.target().to_string())
        .context("n", size.setting())
        .context("decided on", decided_on)
        .context(
            "allowance used",
            format!(
                "the largest of waiting per request ÷ {:.0} % of one request alone (at least {}), the longest poll of nine requests in ten ÷ the poll budget, and the share of requests whose polls slept in the kernel ÷ {:.0} %",
                allowance.waiting * 100.0,
                millis(crate::vocab::allowance::WAIT_FLOOR),
                holding::SLEEPS_AT_MOST * 100.0
            ),
        )
        .untold_when({
            let (rounds, size) = (rounds.clone(), size.clone());
            move || {
                rounds.with(|rounds| {
                    figures::untold(&allowance, rounds).or_else(|| {
                        let n = size.get();
                        unexplained(rounds, (n, workers, client_workers), allowance, launched)
                    })
                })
            }
        })
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
        .advise({
            let (rounds, size) = (rounds.clone(), size.clone());
            let (look, target) = (looked, self.target().clone());
            move |report: &ClaimReport| {
                let local = (served || launched)
                    .then(|| look.advice(&target))
                    .flatten();
                let n = size.get();
                advice(
                    report,
                    &rounds.to_vec(),
                    (allowance, (n, workers, client_workers), launched),
                    local,
                    (&sampled.get(), &place),
                )
            }
        })
        .allowed_when({
            let (rounds, named, named_at) = (rounds.clone(), named.clone(), named_at.clone());
            let allows = self.allows().to_vec();
            let route = crate::pool::sampler::route_key(self.request().method().as_str(), self.path());
            move |report: &ClaimReport| {
                if allows.is_empty() {
                    return (None, Vec::new());
                }
                let mut allowances = crate::vocab::allow::Allowances::new(allows);
                let calls = named.get();
                let allowed = held_at(report, &rounds.to_vec(), allowance, launched, &named_at)
                    .and_then(|(place, computing)| {
                        let waited = calls.commonest_wait(&place).and_then(|(seen, _, _)| match seen {
                            crate::blocked_call::Seen::Blocked(call) => Some(call),
                            crate::blocked_call::Seen::Running => None,
                        });
                        allowances.matching(&crate::vocab::allow::Hold {
                            route: Some(&route),
                            call: waited.as_ref().filter(|_| !computing),
                            stacks: called::held_stacks(&calls, &place, computing),
                        })
                    });
                (allowed.map(|allow| allow.to_string()), allowances.unmatched())
            }
        })
        .shape({
            let (rounds, named, named_at) = (rounds.clone(), named.clone(), named_at.clone());
            move |report: &ClaimReport| {
                sentences::shape(
                    report,
                    &rounds.to_vec(),
                    allowance,
                    launched,
                    (&named.get(), &named_at),
                )
            }
        })
        .explain(move |report: &ClaimReport| {
            sentences(
                report,
                &rounds.to_vec(),
                (size.get(), workers, client_workers),
                allowance,
                (watched.idle(), launched),
                (&named.get(), &named_at),
            )
        })
        .ready_made()
    }
}

/// The figure of a round measured from outside — the estimated held share ÷ the allowed
/// waiting share — or why such a figure says nothing about the service.
fn outside_figure(endpoint: &Endpoint, round: &HeldRound, run: &Run, n: usize) -> Result<f64> {
    let allowance = endpoint.allowance();
    if let Some(why) = round.outside.powerless(round.alone) {
        return Err(why.error(format!(
            "{} ({n} concurrent in {}): {why}; on a router perfshape serves (Target::serve), the handler's polls tell",
            endpoint.name(),
            millis(run.wall)
        )));
    }
    match held_beyond_computing(round, allowance.waiting) {
        Ok(figure) => Ok(figure),
        Err((held, cpu, queued)) => Err(Error::CannotTell {
            what: format!(
                "{} holds its worker ≈{} of each {} request, and the service's own CPU explains it ({} per request{}): it computes, and from outside one long poll and many short ones read the same here; keeps_answering_during() with a cheap endpoint tells them apart (a cheap request waits behind one long poll, not between many short ones)",
                endpoint.name(),
                millis(held),
                millis(round.alone),
                millis(cpu),
                if queued.is_zero() {
                    String::new()
                } else {
                    format!(
                        ", and {} waiting for a CPU the machine gave to other work",
                        millis(queued)
                    )
                }
            ),
        }),
    }
}

/// A round's figure from outside where it has power: the held share ÷ the waiting `allowed`,
/// where the service's CPU is read the share its CPU does not explain. `Err((held, cpu,
/// queued))` where the hold passes the allowance and the service's own CPU explains it:
/// what it does not explain is less the time its threads were runnable but waiting for a
/// CPU the machine gave to other work — a busy machine's, never the service's (20 ms of
/// computing read as 43 ms alone and "≈21 ms waiting" with another build and the suite's
/// other tests on the cores).
fn held_beyond_computing(
    round: &HeldRound,
    allowed: f64,
) -> std::result::Result<f64, (Duration, Duration, Duration)> {
    let held = round.alone.mul_f64(round.estimate.min(1.0));
    let Some(cpu) = round.service_cpu else {
        return Ok(round.estimate / allowed);
    };
    let queued = round.service_queued.unwrap_or_default();
    let waiting = held.saturating_sub(cpu).saturating_sub(queued);
    let share = |d: Duration| d.as_secs_f64() / round.alone.as_secs_f64().max(f64::MIN_POSITIVE);
    if share(held) > allowed && share(waiting) <= allowed {
        return Err((held, cpu, queued));
    }
    Ok(share(waiting).max(LEAST) / allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A round from outside: one request alone `alone_ms`, the held share `estimate`, the
    /// service's CPU and run-queue time per request.
    fn round(alone_ms: u64, estimate: f64, cpu_ms: u64, queued_ms: u64) -> HeldRound {
        HeldRound {
            alone: Duration::from_millis(alone_ms),
            ratio: 1.0,
            estimate,
            polls: None,
            service_cpu: Some(Duration::from_millis(cpu_ms)),
            service_queued: Some(Duration::from_millis(queued_ms)),
            outside: Outside::default(),
        }
    }

    /// The rule that time a service's threads spent on a run queue is the machine's, not a
    /// wait of the service's: 20 ms of computing that read 43 ms alone on a busy machine,
    /// 21 ms of it waiting for a CPU, computes (no verdict from outside); the same 21 ms
    /// off the CPU with no run-queue time is a wait, and breaks the 5 % allowance.
    #[test]
    fn time_on_a_run_queue_is_the_machines_not_a_wait() {
        let busy = round(43, 0.976, 21, 21);
        let Err((held, cpu, queued)) = held_beyond_computing(&busy, 0.05) else {
            panic!("a computing service on a busy machine read as waiting");
        };
        assert_eq!(
            (cpu, queued),
            (Duration::from_millis(21), Duration::from_millis(21))
        );
        assert!(held > Duration::from_millis(41), "{held:?}");
        let waits = round(43, 0.976, 21, 0);
        let figure = held_beyond_computing(&waits, 0.05).expect("a figure");
        assert!(figure > 9.0, "{figure}");
        // Where the service's process is not read, the held share is the figure.
        let unread = HeldRound {
            service_cpu: None,
            service_queued: None,
            ..round(43, 0.5, 0, 0)
        };
        let figure = held_beyond_computing(&unread, 0.05).expect("a figure");
        assert!((figure - 10.0).abs() < 1e-9, "{figure}");
    }
}
