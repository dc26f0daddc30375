//! **Does not block its worker**: the handler never waits while it holds its worker, and
//! never computes past a poll budget in one poll.
//!
//! On a router perfshape serves, every poll of each whole response is timed and split by
//! the worker thread's clocks (`claims::holding`): the claim decides on that, exactly, per
//! request — however short the requests. By URL only a timing from outside is to be had —
//! N concurrent requests against one alone, in the same rounds — and it decides only where
//! it has power (`claims::outside`).

mod advice;
mod figures;
mod rounds;
mod sentences;

use std::time::Duration;

use super::holding::{self, LEAST};
use crate::claim::{Claim, ClaimReport, Measure, Notes};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::held::in_ms;
use crate::run::Run;
use figures::{Figures, HeldRound};
use rounds::HoldRounds;

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
        let hold = HoldRounds::of(self);
        let label = format!("allowance used by {} {}", hold.size.named(), self.name());
        let (alone, fanned, judged) = (self.clone(), hold.clone(), hold.clone());
        let (used, rounds) = Measure::paired(
            &label,
            move || alone.alone().map(|(alone, _)| alone),
            move || fanned.fan_out(),
            move |alone, (run, beside)| judged.round(alone, run, beside),
        );
        let warmed = hold.clone();
        let described = hold.clone();
        let used = used.warm_with(move || warmed.warm()).evidence(move || {
            let what = format!(
                "{} concurrent {}",
                described.size.get(),
                described.endpoint.name()
            );
            described.evidence.describe(&what)
        });
        let claim = self.naming_redirects(Claim::figure(
            &format!("{} does not block its worker", self.name()),
            used,
        ));
        // Where the polls (or the workers' timeline) are read, a round far outside is the
        // service's, not the machine's: a lock met in some rounds only breaks the claim.
        let claim = if hold.polled || hold.clocked {
            claim.about_a_hold()
        } else {
            claim
        };
        let allowance = hold.allowance;
        let claim = claim
            .at_most(1.0)
            .ideal(0.0)
            .refusing(self.refused())
            .context("target", self.target().to_string())
            .context("n", hold.size.setting())
            .context("decided on", hold.decided_on())
            .context(
                "allowance used",
                format!(
                    "the largest of waiting per request ÷ {:.0} % of one request alone (at least {}), the longest poll of nine requests in ten ÷ the poll budget, and the share of requests whose polls slept in the kernel ÷ {:.0} %",
                    allowance.waiting * 100.0,
                    in_ms(crate::vocab::allowance::WAIT_FLOOR),
                    holding::SLEEPS_AT_MOST * 100.0
                ),
            );
        said_of(claim, hold, rounds).ready_made()
    }
}

/// The claim with what it says once decided: why its rounds cannot tell, its raw figures,
/// the cause and what to do, the allow that accepts its hold, its snapshot's shape and its
/// sentences — each read from the rounds and the samples, through the context's steps.
fn said_of(claim: Claim<'static>, hold: HoldRounds, rounds: Notes<HeldRound>) -> Claim<'static> {
    let (untold, untold_rounds) = (hold.clone(), rounds.clone());
    let observed = rounds.clone();
    let (advised, advised_rounds) = (hold.clone(), rounds.clone());
    let (allowed, allowed_rounds) = (hold.clone(), rounds.clone());
    let (shaped, shaped_rounds) = (hold.clone(), rounds.clone());
    claim
        .untold_when(move || untold_rounds.with(|rounds| untold.cannot_tell(rounds)))
        .observed(move || {
            observed.with(|rounds| {
                if rounds.is_empty() {
                    Vec::new()
                } else {
                    Figures::of(rounds).named()
                }
            })
        })
        .advise(move |report: &ClaimReport| {
            let target = advised.endpoint.target();
            let local = (advised.served || advised.launched)
                .then(|| advised.look.advice(target))
                .flatten();
            let (rounds, calls) = (advised_rounds.to_vec(), advised.sampled.get());
            advised.decided(report, &rounds, &calls).advice(local)
        })
        .allowed_when(move |report: &ClaimReport| allowed.allowed(report, &allowed_rounds.to_vec()))
        .shape(move |report: &ClaimReport| {
            let (rounds, calls) = (shaped_rounds.to_vec(), shaped.sampled.get());
            shaped.decided(report, &rounds, &calls).shape()
        })
        .explain(move |report: &ClaimReport| {
            let (rounds, calls) = (rounds.to_vec(), hold.sampled.get());
            hold.decided(report, &rounds, &calls)
                .sentences(hold.watch.idle())
        })
}

/// The figure of a round measured from outside — the estimated held share ÷ the allowed
/// waiting share — or why such a figure says nothing about the service.
fn outside_figure(endpoint: &Endpoint, round: &HeldRound, run: &Run, n: usize) -> Result<f64> {
    let allowance = endpoint.allowance();
    if let Some(why) = round.outside.powerless(round.alone) {
        return Err(why.error(format!(
            "{} ({n} concurrent in {}): {why}; on a router perfshape serves (Target::serve), the handler's polls tell",
            endpoint.name(),
            in_ms(run.wall)
        )));
    }
    match held_beyond_computing(round, allowance.waiting) {
        Ok(figure) => Ok(figure),
        Err((held, cpu, queued)) => Err(Error::CannotTell {
            what: format!(
                "{} holds its worker ≈{} of each {} request, and the service's own CPU explains it ({} per request{}): it computes, and from outside one long poll and many short ones read the same here; keeps_answering_during() with a cheap endpoint tells them apart (a cheap request waits behind one long poll, not between many short ones)",
                endpoint.name(),
                in_ms(held),
                in_ms(round.alone),
                in_ms(cpu),
                if queued.is_zero() {
                    String::new()
                } else {
                    format!(
                        ", and {} waiting for a CPU the machine gave to other work",
                        in_ms(queued)
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
    use super::super::outside::Outside;
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

    /// What a ready-made claim on a µs route costs, measured, not asserted: `cargo test
    /// --release --lib -p perfshape claim_cost -- --ignored --nocapture` prints the median
    /// wall time of ten holds (`does_not_block_its_worker`) and ten keeps-answering claims
    /// on a route that answers at once, served on one worker, each checked whole — its
    /// warm-up, its rounds and its decision.
    #[test]
    #[ignore = "a measurement: run it by name"]
    fn claim_cost() {
        let router = axum::Router::new()
            .route("/ok", axum::routing::get(|| async { "ok" }))
            .route("/health", axum::routing::get(|| async { "up" }));
        let target =
            crate::Target::serve(crate::PoolSettings::workers(1).unwrap(), router).expect("served");
        let dir = std::env::temp_dir().join("perfshape-claim-cost");
        let median = |claim: &dyn Fn() -> crate::Claim<'static>| {
            let mut times: Vec<Duration> = (0..11)
                .map(|_| {
                    let began = std::time::Instant::now();
                    let checked = claim().artifacts_in(&dir).check().expect("checked");
                    assert!(checked.verdict().holds(), "{}", checked.report());
                    began.elapsed()
                })
                .skip(1)
                .collect();
            times.sort();
            times[times.len() / 2]
        };
        let hold = median(&|| target.get("/ok").does_not_block_its_worker());
        let answering = median(&|| {
            target
                .get("/health")
                .keeps_answering_during(&target.get("/ok"))
        });
        eprintln!(
            "a µs route: does not block its worker {hold:?}, keeps answering {answering:?} (medians of 10)"
        );
    }
}
