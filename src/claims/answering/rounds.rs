//! The rounds of [`keeps_answering_during`](crate::Endpoint::keeps_answering_during): on a
//! router perfshape serves, the slow fan-out with the cheap request sent once the slow
//! requests have started on the server (its layer counts them), then again and again across
//! their time — up to 24 a round, spread at 16 to one slow request — as a request arriving
//! at a random moment would be: a login that awaits its lookups and then hashes is met
//! during the hash, and the round's figure is the longest wait. By URL, the cheap request
//! rides the slow fan-out as its canary, a fifth of one slow request in.

use std::time::{Duration, Instant};

use super::super::holding::{self, Holding, LEAST};
use super::super::outside::Outside;
use super::{AT_MOST, MAX_PROBES, PROBES_PER_UNIT, Round, STARTED_WITHIN};
use crate::client::CanaryPlan;
use crate::endpoint::{COMPARISON_FAN_OUT, Endpoint};
use crate::error::{Error, Result};
use crate::evidence::Evidence;
use crate::held::called::CallsSampled;
use crate::held::distance::LocalLook;
use crate::held::in_ms;
use crate::pool::timeline::Sampling;
use crate::run::Run;
use crate::server::Server;
use crate::vocab::{Allowance, ClientStrategy};

/// What the claim's rounds share: the cheap endpoint and the slow one, the slow fan-out's
/// size, what is read (the polls, a launched service's workers, or the timing from
/// outside), and what the rounds saw beside their figures. Its clones share the handles.
#[derive(Clone)]
pub(super) struct Answering {
    pub(super) cheap: Endpoint,
    pub(super) slow: Endpoint,
    /// The slow requests sent at once.
    pub(super) n: usize,
    /// A served router whose polls the worker's clocks split.
    pub(super) polled: bool,
    /// A launched service, whose workers are clocked and whose responses' polls are not.
    pub(super) clocked: bool,
    /// The machine and the pools around each slow fan-out.
    pub(super) evidence: Evidence,
    /// What the slow requests' workers were sampled in, over every round.
    pub(super) sampled: CallsSampled,
    pub(super) look: LocalLook,
    /// The quickest slow request of the last round: the next round's unit, to space its
    /// probes by.
    quickest: Option<Duration>,
    /// What the workers are blocked in, sampled from the first round to the claim's end.
    sampling: Option<std::sync::Arc<Sampling>>,
}

impl Answering {
    /// The claim's context, `cheap` sent while `slow` runs.
    pub(super) fn of(cheap: &Endpoint, slow: &Endpoint) -> Answering {
        Answering {
            n: slow
                .concurrency_set()
                .unwrap_or_else(|| slow.workers().map_or(COMPARISON_FAN_OUT, |p| p.workers)),
            polled: slow.target().served().is_some() && crate::thread_clock::available(),
            clocked: slow.target().launched().is_some() && crate::thread_clock::available(),
            cheap: cheap.clone(),
            slow: slow.clone(),
            evidence: Evidence::default(),
            sampled: CallsSampled::default(),
            look: LocalLook::default(),
            quickest: None,
            sampling: None,
        }
    }

    /// Both endpoints answer, and one slow fan-out, unmeasured.
    pub(super) fn warm(&self) -> Result<()> {
        self.cheap.preflight()?;
        self.slow.preflight()?;
        self.slow.run(ClientStrategy::FanOut, self.n).map(drop)
    }

    /// How the cheap request is sent and which of its wait counts, in the claim's words.
    pub(super) fn read_as(&self) -> (&'static str, &'static str) {
        if self.polled {
            (
                "across the slow requests' time, once they have started on the server",
                "what the slow requests' waiting, their polls past the hold floor and their workers' waiting outside any response, during it explain",
            )
        } else if self.clocked {
            (
                "across the slow requests' time, from the first moment",
                "what the workers' waiting and their stretches past the hold floor during it explain (a launched service's responses are not timed)",
            )
        } else {
            (
                "a fifth of one slow request",
                "a timing from outside: the whole wait beyond the request's own",
            )
        }
    }

    /// One round and its figure: the cheap request's counted wait ÷ one slow request.
    pub(super) fn round(&mut self) -> Result<(f64, Round)> {
        let alone = self.cheap.alone()?.0;
        let target = self.slow.target().clone();
        let server = target.served().or(target.launched());
        let round = match server {
            Some(_) if !self.polled && !self.clocked => {
                return Err(Error::Unread {
                    what: crate::thread_clock::unclocked("the handlers'"),
                });
            }
            Some(server) => {
                if self.sampling.is_none() {
                    self.sampling = Some(std::sync::Arc::new(server.pool().timeline().sample()));
                }
                self.served_round(server, alone)?
            }
            None => {
                let unit = match self.quickest {
                    Some(unit) => unit,
                    None => self.slow.alone()?.0,
                };
                self.outside_round(alone, unit)?
            }
        };
        self.quickest = Some(round.unit);
        let figure = (round.counted().as_secs_f64()
            / round.unit.as_secs_f64().max(f64::MIN_POSITIVE))
        .max(LEAST);
        // Off Linux a poll's time off the CPU is a bound on its wait, not the wait: a
        // figure past the band on it is no verdict.
        if round.blocking.is_some() && figure > AT_MOST && !crate::thread_clock::splits_off_cpu() {
            return Err(Error::Unread {
                what: format!(
                    "{} waited {} while the slow requests' polls were off the CPU, and {}",
                    self.cheap.name(),
                    in_ms(round.counted()),
                    crate::thread_clock::unsplit()
                ),
            });
        }
        // A hold met while the service talks to a process on this machine directly says
        // nothing of production's round trips.
        if server.is_some()
            && let Some(why) = self.look.hides_a_hold(&target, figure, AT_MOST)
        {
            return Err(why);
        }
        Ok((figure, round))
    }

    /// A round on a router perfshape serves: the slow fan-out, and the cheap request sent
    /// again and again from the moment the server has started as many slow requests as can
    /// hold a worker until the slow ones are all answered — each sent as the last is
    /// answered, at most [`MAX_PROBES`], spaced so that they spread over one slow request's
    /// time: wherever in a slow request its hold lies (a login that awaits its lookups and
    /// then hashes), a probe meets it, as one arriving at a random moment would. The
    /// round's figure is the probe that waited longest for a worker the slow requests held.
    fn served_round(&self, server: &Server, alone: Duration) -> Result<Round> {
        let (slow_run, probes) = self.slow_with_probes(server)?;
        self.sampled.add(&slow_run.calls);
        let allowance = self.slow.allowance();
        let mut round: Option<Round> = None;
        let mut unexplained = Duration::ZERO;
        for probe in &probes {
            // A cheap request that failed gives no figure: say which and why.
            probe.require_ok()?;
            let record = &probe.records[0];
            let window = probe
                .origin
                .map(|origin| (origin + record.start, origin + record.end));
            let this = Round {
                wait: record.end.saturating_sub(record.start),
                alone,
                unit: quickest_of(&slow_run),
                blocking: Some(window.map_or(Duration::ZERO, |(from, to)| {
                    blocking_during(&slow_run, from, to, &allowance)
                })),
                slow: None,
                probes: probes.len(),
                unexplained: Duration::ZERO,
            };
            unexplained = unexplained.max(this.extra().saturating_sub(this.counted()));
            if round.is_none_or(|r| this.counted() > r.counted()) {
                round = Some(this);
            }
        }
        let round = round.expect("a round sends at least one probe");
        Ok(Round {
            unexplained,
            slow: if self.slow.target().served().is_some() {
                Holding::of_run(&slow_run)
            } else {
                Some(Holding::of_timeline(&slow_run, &slow_run))
            },
            ..round
        })
    }

    /// The slow fan-out, and the cheap requests sent across it once the slow ones have
    /// started on the server (a launched service's are not counted as they start: from
    /// the first moment).
    fn slow_with_probes(&self, server: &Server) -> Result<(Run, Vec<Run>)> {
        let (slow, cheap) = (&self.slow, &self.cheap);
        let (slow_plan, cheap_plan) = (slow.plan()?, cheap.plan()?);
        let workers = slow.workers().map_or(1, |p| p.workers);
        let ledger = server.ledger();
        let before = ledger.started();
        let counted = slow.target().served().is_some();
        let spacing = self
            .quickest
            .map_or(Duration::ZERO, |unit| unit / PROBES_PER_UNIT);
        let (slow_run, probes) = std::thread::scope(|scope| {
            let running = scope.spawn(|| {
                self.evidence.observe(slow.target(), || {
                    let run =
                        slow.target()
                            .run_plan(ClientStrategy::FanOut, &slow_plan, self.n, None)?;
                    run.require_ok()?;
                    Ok(run)
                })
            });
            let deadline = Instant::now() + STARTED_WITHIN;
            let holding = before + self.n.min(workers) as u64;
            while counted
                && ledger.started() < holding
                && Instant::now() < deadline
                && !running.is_finished()
            {
                std::thread::sleep(Duration::from_micros(20));
            }
            let mut probes = Vec::new();
            loop {
                let sent = Instant::now();
                let probe =
                    cheap
                        .target()
                        .run_polls(ClientStrategy::Sequential, &cheap_plan, 1, None);
                let failed = probe.is_err();
                probes.push(probe);
                if failed || running.is_finished() || probes.len() >= MAX_PROBES {
                    break;
                }
                if let Some(pause) = spacing.checked_sub(sent.elapsed()) {
                    std::thread::sleep(pause);
                }
            }
            let slow_run = running
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (slow_run, probes)
        });
        Ok((slow_run?, probes.into_iter().collect::<Result<Vec<Run>>>()?))
    }

    /// A round measured from outside: the cheap request rides the slow fan-out as its
    /// canary, a fifth of one slow request in.
    fn outside_round(&self, alone: Duration, unit: Duration) -> Result<Round> {
        let (slow, n, seen) = (&self.slow, self.n, &self.evidence);
        let (slow_plan, cheap_plan) = (slow.plan()?, self.cheap.plan()?);
        let client_workers = slow.target().client().pool().settings().workers;
        let mut run = seen.observe(slow.target(), || {
            let run = slow.target().run_plan(
                ClientStrategy::FanOut,
                &slow_plan,
                n,
                Some(CanaryPlan {
                    plan: &cheap_plan,
                    after: unit / 5,
                }),
            )?;
            run.require_ok()?;
            Ok(run)
        })?;
        let record = run.canary.take().expect("a canary was asked for");
        // From its send: the load client's own lateness is not the service's.
        let wait = record.end.saturating_sub(record.start);
        // A cheap request that failed gives no figure: say which and why.
        Run::new(cheap_plan.label.clone(), vec![record], wait).require_ok()?;
        let unit = quickest_of(&run);
        let outside = seen
            .last()
            .map(|(length, usage)| Outside::of(length, usage, n + 1, client_workers))
            .unwrap_or_default();
        if let Some(why) = outside.powerless(unit) {
            return Err(why.error(format!(
                "{} of {n}: {why}; on a router perfshape serves (Target::serve), the handlers' polls tell",
                slow.name()
            )));
        }
        Ok(Round {
            wait,
            alone,
            unit,
            blocking: None,
            slow: None,
            probes: 1,
            unexplained: Duration::ZERO,
        })
    }
}

/// The quickest request of `run`: one served without queueing.
fn quickest_of(run: &Run) -> Duration {
    run.records
        .iter()
        .map(|r| r.latency())
        .min()
        .unwrap_or_default()
}

/// The most time one slow request of `run` blocked its worker between `from` and `to`: its
/// polls that waited, or held it past the hold floor, in the part that falls inside that
/// window — on the one clock the served router and the load client share in this process —
/// or, whichever is more, the most one worker held itself outside every response's polls in
/// that window, by the same measure (a task the slow requests spawned, or another task on
/// the worker; on a launched service, whose responses are not timed, all of it). A wait
/// the slow requests' blocking cannot have caused (one after they finished, say) is not
/// theirs.
fn blocking_during(run: &Run, from: Instant, to: Instant, allowance: &Allowance) -> Duration {
    let polls = run
        .records
        .iter()
        .map(|record| {
            record
                .spans
                .iter()
                .map(|span| {
                    span.overlap(from, to)
                        .mul_f64(holding::holding_share(allowance, &span.time))
                })
                .sum::<Duration>()
        })
        .max()
        .unwrap_or_default();
    let mut threads: Vec<(u64, Duration)> = Vec::new();
    for segment in &run.worker_waits {
        let held = segment
            .overlap(from, to)
            .mul_f64(holding::holding_share(allowance, &segment.time));
        match threads
            .iter_mut()
            .find(|(thread, _)| *thread == segment.thread)
        {
            Some((_, sum)) => *sum += held,
            None => threads.push((segment.thread, held)),
        }
    }
    let outside = threads
        .into_iter()
        .map(|(_, d)| d)
        .max()
        .unwrap_or_default();
    polls.max(outside)
}
