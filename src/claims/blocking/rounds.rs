//! The rounds of [`does_not_block_its_worker`](crate::Endpoint::does_not_block_its_worker)
//! as named steps of one context: the fan-out and what was read beside it, a round's
//! figure, the warm-up that sizes the rounds, and what the claim says once decided.

use std::time::{Duration, Instant};

use super::super::fan_out::FanOut;
use super::super::holding::{self, Holding, LEAST};
use super::super::outside::Outside;
use super::super::worker_watch::WorkerWatch;
use super::figures::{self, HeldRound, Sizes};
use super::outside_figure;
use super::sentences::{Decided, unexplained};
use crate::claim::ClaimReport;
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::evidence::Evidence;
use crate::held::called::{self, CallsSampled};
use crate::held::distance::LocalLook;
use crate::pool::sampler::Place;
use crate::run::Run;
use crate::service_process::ProcessTimes;
use crate::vocab::{Allowance, ClientStrategy};

/// Everything the claim's rounds share, each a handle the closures of its measure hold a
/// clone of: the endpoint, the pools' sizes, what is read (the polls, a launched service's
/// timeline, or the timing from outside), the fan-out's size, and what the rounds saw
/// beside their figures.
#[derive(Clone)]
pub(super) struct HoldRounds {
    pub(super) endpoint: Endpoint,
    pub(super) workers: usize,
    pub(super) client_workers: usize,
    pub(super) allowance: Allowance,
    /// A router perfshape serves.
    pub(super) served: bool,
    /// A service started by its own launch function.
    pub(super) launched: bool,
    /// A served router whose polls the worker's clocks split.
    pub(super) polled: bool,
    /// A launched service whose workers' timeline is read.
    pub(super) clocked: bool,
    pub(super) size: FanOut,
    /// The machine and the pools around each fan-out.
    pub(super) evidence: Evidence,
    /// The served workers, from the first round to the claim's end.
    pub(super) watch: WorkerWatch,
    pub(super) look: LocalLook,
    /// What the workers were sampled in, over every round's fan-out.
    pub(super) sampled: CallsSampled,
    /// The route's place in the samples.
    pub(super) place: Place,
}

/// What a round read beside its fan-out: the service's process times over it (and the
/// fan-out's wall time), the workers' share outside every response, and — for a launched
/// service, whose responses are not timed — one request alone.
pub(super) struct Beside {
    service: Option<(ProcessTimes, Duration)>,
    share: Option<f64>,
    alone: Option<Run>,
}

impl HoldRounds {
    /// The endpoint's claim's context.
    pub(super) fn of(endpoint: &Endpoint) -> HoldRounds {
        let workers = endpoint.workers().map_or(1, |p| p.workers);
        let served = endpoint.target().served().is_some();
        let launched = endpoint.target().launched().is_some();
        let polled = served && crate::thread_clock::available();
        let clocked = launched && crate::thread_clock::available();
        HoldRounds {
            endpoint: endpoint.clone(),
            workers,
            client_workers: endpoint.target().client().pool().settings().workers,
            allowance: endpoint.allowance(),
            served,
            launched,
            polled,
            clocked,
            // Where the polls (or the workers' timeline) decide, a long route's rounds
            // send fewer requests, sized from its first request alone.
            size: FanOut::new(endpoint.concurrency_set(), workers, polled || clocked),
            evidence: Evidence::default(),
            watch: WorkerWatch::default(),
            look: LocalLook::default(),
            sampled: CallsSampled::default(),
            place: called::route(endpoint.request().method().as_str(), endpoint.path()),
        }
    }

    /// The counts the rounds are sent at, as far as they are sized.
    pub(super) fn sizes(&self) -> Sizes {
        Sizes {
            n: self.size.get(),
            workers: self.workers,
            client_workers: self.client_workers,
        }
    }

    /// One request alone, refused at once if it fails: it sizes the rounds; then one
    /// fan-out, unmeasured.
    pub(super) fn warm(&self) -> Result<()> {
        self.size.settle(self.endpoint.alone()?.0);
        self.endpoint
            .run(ClientStrategy::FanOut, self.size.get())
            .map(drop)
    }

    /// One round's fan-out, with the machine, the pools and the workers read around it.
    pub(super) fn fan_out(&self) -> Result<(Run, Beside)> {
        let target = self.endpoint.target();
        let service = target.service_process();
        self.evidence.observe(target, || {
            let server = target.served().or(target.launched());
            if let Some(server) = server {
                self.watch.begin(server);
            }
            let before = service.and_then(|s| s.times());
            let started = Instant::now();
            let run = self.endpoint.run(ClientStrategy::FanOut, self.size.get())?;
            self.sampled.add(&run.calls);
            let service = service
                .and_then(|s| s.times())
                .zip(before)
                .map(|(after, before)| (after.since(&before), started.elapsed()));
            // A launched service's responses are not timed: its workers' longest stretch
            // serving one request bounds its longest poll.
            let alone = match target.launched() {
                Some(_) => Some(self.endpoint.run(ClientStrategy::Sequential, 1)?),
                None => None,
            };
            let share = server.and_then(|server| self.watch.share(server));
            Ok((
                run,
                Beside {
                    service,
                    share,
                    alone,
                },
            ))
        })
    }

    /// A round's figure — the allowance used, from the polls (or the workers' timeline),
    /// else from outside — and the round as its sentences read it.
    pub(super) fn round(
        &self,
        alone: Duration,
        run: Run,
        beside: Beside,
    ) -> Result<(f64, HeldRound)> {
        let n = run.sent();
        let waves = n.div_ceil(self.workers) as f64;
        let ratio = run.wall.as_secs_f64() / alone.as_secs_f64().max(f64::MIN_POSITIVE);
        let service = beside.service;
        let round = HeldRound {
            alone,
            ratio,
            estimate: ((ratio - 1.0) / (waves - 1.0)).max(LEAST),
            polls: self.holding(&run, &beside),
            service_cpu: service.map(|(times, _)| times.cpu / n as u32),
            service_queued: service.map(|(times, _)| times.queued / n as u32),
            outside: self
                .evidence
                .last()
                .map(|(length, usage)| Outside::of(length, usage, n, self.client_workers))
                .unwrap_or_default()
                .with_service(service),
        };
        let figure = match round.polls {
            Some(holding) => {
                let figure = holding::used(&self.allowance, &holding, alone)?;
                if let Some(why) = self.look.hides_a_hold(self.endpoint.target(), figure, 1.0) {
                    return Err(why);
                }
                figure
            }
            None if (self.served && !self.polled) || (self.launched && !self.clocked) => {
                return Err(Error::Unread {
                    what: crate::thread_clock::unclocked("the handler's"),
                });
            }
            None if self.polled => {
                return Err(Error::CannotTell {
                    what: format!(
                        "the server recorded none of the {n} responses' polls within a second of their arrival"
                    ),
                });
            }
            None => outside_figure(&self.endpoint, &round, &run, n)?,
        };
        Ok((figure.max(LEAST), round))
    }

    /// How the fan-out's requests held their worker: from their polls, or a launched
    /// service's workers' timeline against one request alone; `None` from outside.
    fn holding(&self, run: &Run, beside: &Beside) -> Option<Holding> {
        let holding = match (self.polled, self.clocked, &beside.alone) {
            (true, _, _) => Holding::of_run(run),
            (_, true, Some(alone)) => Some(Holding::of_timeline(run, alone)),
            _ => None,
        }?;
        Some(Holding {
            outside_share: beside.share.unwrap_or_default(),
            local: self.look.talks_locally(),
            ..holding
        })
    }

    /// What the claim decides on wherever it is run, so that the snapshot is the same on
    /// every platform: where a clock is missing the claim is inconclusive, saying so.
    pub(super) fn decided_on(&self) -> &'static str {
        if self.served {
            "the handler's polls, split by the worker's clocks"
        } else if self.launched {
            "the workers' timeline: their waiting while the requests ran, and their longest stretch of CPU serving one request"
        } else {
            "a timing from outside"
        }
    }

    /// Why rounds that were measured cannot tell: this build, or requests that queued for
    /// workers busy with what their polls do not explain.
    pub(super) fn cannot_tell(&self, rounds: &[HeldRound]) -> Option<String> {
        figures::this_build_cannot_tell(&self.allowance, rounds)
            .or_else(|| unexplained(rounds, self.sizes(), self.allowance, self.launched))
    }

    /// The claim decided, as its sentences read it.
    pub(super) fn decided<'a>(
        &'a self,
        report: &'a ClaimReport,
        rounds: &'a [HeldRound],
        calls: &'a crate::pool::sampler::Calls,
    ) -> Decided<'a> {
        Decided {
            report,
            rounds,
            sizes: self.sizes(),
            allowance: self.allowance,
            launched: self.launched,
            calls,
            route: &self.place,
        }
    }

    /// The allow that accepts a broken claim's hold, by name, and the allows that matched
    /// nothing.
    pub(super) fn allowed(
        &self,
        report: &ClaimReport,
        rounds: &[HeldRound],
    ) -> (Option<String>, Vec<String>) {
        let allows = self.endpoint.allows().to_vec();
        if allows.is_empty() {
            return (None, Vec::new());
        }
        let route = crate::pool::sampler::route_key(
            self.endpoint.request().method().as_str(),
            self.endpoint.path(),
        );
        let mut allowances = crate::vocab::allow::Allowances::new(allows);
        let calls = self.sampled.get();
        let allowed =
            self.decided(report, rounds, &calls)
                .held_at()
                .and_then(|(place, computing)| {
                    let waited = calls
                        .commonest_wait(&place)
                        .and_then(|(seen, _, _)| match seen {
                            crate::blocked_call::Seen::Blocked(call) => Some(call),
                            crate::blocked_call::Seen::Running => None,
                        });
                    allowances.matching(&crate::vocab::allow::Hold {
                        route: Some(&route),
                        call: waited.as_ref().filter(|_| !computing),
                        stacks: called::held_stacks(&calls, &place, computing),
                    })
                });
        (
            allowed.map(|allow| allow.to_string()),
            allowances.unmatched(),
        )
    }
}
