//! **Keeps answering**: a cheap endpoint, sent while a slow one fills every worker, is
//! answered about as soon as it would be alone.

use std::time::{Duration, Instant};

use super::called::{self, Sampled};
use super::distance::LocalLook;
use super::holding::LEAST;
use super::holding::{self, Holding, middle, millis};
use super::outside::Outside;
use super::remedy::{self, Hold};
use crate::claim::{Claim, ClaimReport, Measure, Verdict};
use crate::endpoint::{COMPARISON_FAN_OUT, Endpoint};
use crate::error::{Error, Result};
use crate::evidence::Evidence;
use crate::pool::sampler::{Calls, Place};
use crate::run::Run;
use crate::server::Server;
use crate::vocab::Allowance;
use crate::vocab::ClientStrategy;

/// How long a round waits for the slow requests to start on the server before it sends the
/// cheap one anyway: a slow request that has not started by then is not holding a worker.
const STARTED_WITHIN: Duration = Duration::from_secs(1);

/// The most of one slow request the cheap one may wait behind a held worker.
const AT_MOST: f64 = 0.25;

/// The most cheap requests a round sends while the slow ones run: enough to spread over
/// one slow request at [`PROBES_PER_UNIT`], few enough that the load client's own cost
/// stays small beside the slow requests'.
const MAX_PROBES: usize = 24;

/// How many times its own time alone the cheap request's wait must be, besides more than
/// [`AT_MOST`] of one slow request, before a wait no hold explains is named: below it, a
/// busy machine's scheduling and the load client's own work are enough to explain it.
const UNEXPLAINED_TIMES: u32 = 10;

/// How many cheap requests a round spreads over one slow request's time (from the second
/// round on, when the first has measured one): a hold of a sixteenth of a slow request
/// — well under the quarter the claim allows — is met wherever it lies.
const PROBES_PER_UNIT: u32 = 16;

/// What one round saw.
#[derive(Clone, Copy, Debug)]
struct Round {
    /// The cheap request's time from its send to its answer, sent during the slow load.
    wait: Duration,
    /// The cheap request alone, in the same round.
    alone: Duration,
    /// One slow request: the quickest of the load's, one served without queueing.
    unit: Duration,
    /// The most time one slow request held its worker in a way the cheap one waits behind
    /// (a wait in a poll, or a poll past the hold floor) while the cheap request waited,
    /// when their polls were split.
    blocking: Option<Duration>,
    /// How the slow requests held their worker, when their polls were split.
    slow: Option<Holding>,
    /// Cheap requests sent during the slow ones (one from outside).
    probes: usize,
    /// The longest wait beyond its own time of a cheap request that no hold read of the
    /// slow requests during it explains (on a served router; zero from outside, where the
    /// whole wait counts).
    unexplained: Duration,
}

impl Round {
    /// The cheap request's wait beyond its own time alone.
    fn extra(&self) -> Duration {
        self.wait.saturating_sub(self.alone)
    }

    /// The wait the claim counts: on a served router, what the slow requests' blocking
    /// during it explains; from outside, all of it. What it leaves out is not nothing:
    /// [`unexplained`] names it where it is large.
    fn counted(&self) -> Duration {
        match self.blocking {
            Some(blocking) => self.extra().min(blocking),
            None => self.extra(),
        }
    }
}

impl Endpoint {
    /// **Keeps answering**: this (cheap) endpoint, sent while `slow` is served to a fan-out
    /// that can fill every worker, waits beyond its own time alone less than a quarter of
    /// one `slow` request — counting, on a router perfshape serves, only the wait that
    /// `slow`'s blocking explains. On an async or offloading server a worker is free and it
    /// answers at once (the model: 0); when `slow` holds its workers it waits for one.
    ///
    /// Seed 000's C4 on your service. `slow` is sent `slow.concurrency` times (default:
    /// the server's workers, which a handler holding its worker fills exactly). The unit is
    /// measured in the same run: the quickest of those `slow` requests, one served without
    /// queueing. This endpoint alone is measured in each round too.
    ///
    /// On a router perfshape serves, this endpoint is sent once the `slow` requests have
    /// started on the server (its layer counts them), then again and again across their
    /// time (up to 24 a round, spread at 16 to one `slow` request), as a request arriving
    /// at a random moment would be — a login that awaits its lookups and then hashes is met
    /// during the hash; the round's figure is the longest wait. Their polls, and the
    /// workers' stretches outside any response (a task `slow` spawned), say what held the
    /// workers: a wait counts only as far as `slow` held its worker *during* it — waiting in
    /// a poll, or in a poll longer than 1 ms, computing or waiting (6 ms where perfshape was
    /// built without optimisations), or past its [poll budget](Endpoint::poll_budget) — so
    /// two fast endpoints never break it, however short their requests, and a report that
    /// computes 10 ms in one poll breaks it in every build. By URL this endpoint is sent a fifth of one `slow` request in, its whole
    /// wait counts, and the claim is inconclusive where a `slow` request is too short for a
    /// timing from outside ([`does_not_block_its_worker`](Endpoint::does_not_block_its_worker)
    /// says where).
    pub fn keeps_answering_during(&self, slow: &Endpoint) -> Claim<'static> {
        let n = slow
            .concurrency_set()
            .unwrap_or_else(|| slow.workers().map_or(COMPARISON_FAN_OUT, |p| p.workers));
        let polled = slow.target().served().is_some() && crate::thread_clock::available();
        // A launched service's workers are clocked, its responses' polls are not.
        let clocked = slow.target().launched().is_some() && crate::thread_clock::available();
        let evidence = Evidence::default();
        let (cheap, busy, seen) = (self.clone(), slow.clone(), evidence.clone());
        // What the slow requests' workers were sampled in, over every round.
        let sampled = Sampled::default();
        let sampling = sampled.clone();
        let look = LocalLook::default();
        let looked = look.clone();
        let mut quickest: Option<Duration> = None;
        let mut sampling_guard = None;
        let (during, rounds) = Measure::noting(
            &format!(
                "{} wait during {n} × {} that its hold explains ÷ one {}",
                self.name(),
                slow.name(),
                slow.name()
            ),
            move || {
                let alone = cheap.alone()?.0;
                let server = busy.target().served().or(busy.target().launched());
                let round = match server {
                    Some(_) if !polled && !clocked => {
                        return Err(Error::Unread {
                            what: crate::thread_clock::unclocked("the handlers'"),
                        });
                    }
                    Some(server) => {
                        // What the workers are blocked in, sampled from the first round to
                        // the claim's end.
                        sampling_guard.get_or_insert_with(|| server.pool().timeline().sample());
                        served_round(
                            &cheap,
                            &busy,
                            server,
                            n,
                            (alone, quickest),
                            (&seen, &sampling),
                        )?
                    }
                    None => {
                        let unit = match quickest {
                            Some(unit) => unit,
                            None => busy.alone()?.0,
                        };
                        outside_round(&cheap, &busy, n, alone, unit, &seen)?
                    }
                };
                quickest = Some(round.unit);
                let figure = (round.counted().as_secs_f64()
                    / round.unit.as_secs_f64().max(f64::MIN_POSITIVE))
                .max(LEAST);
                // Off Linux a poll's time off the CPU is a bound on its wait, not the wait:
                // a figure past the band on it is no verdict.
                if round.blocking.is_some()
                    && figure > AT_MOST
                    && !crate::thread_clock::splits_off_cpu()
                {
                    return Err(Error::Unread {
                        what: format!(
                            "{} waited {} while the slow requests' polls were off the CPU, and {}",
                            cheap.name(),
                            millis(round.counted()),
                            crate::thread_clock::unsplit()
                        ),
                    });
                }
                // A hold met while the service talks to a process on this machine directly
                // says nothing of production's round trips.
                if server.is_some()
                    && let Some(why) = look.hides_a_hold(busy.target(), figure, AT_MOST)
                {
                    return Err(why);
                }
                Ok((figure, round))
            },
        );
        let during = during.warm_with({
            let (cheap, busy) = (self.clone(), slow.clone());
            move || {
                cheap.preflight()?;
                busy.preflight()?;
                busy.run(ClientStrategy::FanOut, n).map(drop)
            }
        });
        let (name, slow_name) = (self.name(), slow.name());
        let what = format!("{n} × {slow_name}");
        let during = during.evidence(move || evidence.describe(&what));
        let (sent, counted) = if polled {
            (
                "across the slow requests' time, once they have started on the server",
                "what the slow requests' waiting, their polls past the hold floor and their workers' waiting outside any response, during it explain",
            )
        } else if clocked {
            (
                "across the slow requests' time, from the first moment",
                "what the workers' waiting and their stretches past the hold floor during it explain (a launched service's responses are not timed)",
            )
        } else {
            (
                "a fifth of one slow request",
                "a timing from outside: the whole wait beyond the request's own",
            )
        };
        let floor = slow.allowance().hold_floor();
        let claim = Claim::figure(
            &format!("{name} keeps answering while {slow_name} runs"),
            during,
        );
        let claim = slow.naming_redirects(self.naming_redirects(claim));
        claim
            .at_most(AT_MOST)
            .refusing(self.refused().or_else(|| slow.refused()))
            .context("target", self.target().to_string())
            .context("n", n)
            .context("sent", sent)
            .context("wait counted", counted)
            .untold_when({
                let (rounds, name, slow_name) = (rounds.clone(), self.name(), slow.name());
                move || rounds.with(|rounds| unexplained(rounds, &name, &slow_name))
            })
            .observed({
                let rounds = rounds.clone();
                move || {
                    rounds.with(|rounds| {
                        let ms = |d: Duration| d.as_secs_f64() * 1e3;
                        let unexplained = middle(rounds.iter().map(|r| r.unexplained));
                        let unit = middle(rounds.iter().map(|r| r.unit));
                        let alone = middle(rounds.iter().map(|r| r.alone));
                        vec![
                            ("unexplained wait ms".to_string(), ms(unexplained)),
                            ("slow request ms".to_string(), ms(unit)),
                            ("cheap alone ms".to_string(), ms(alone)),
                        ]
                    })
                }
            })
            .advise({
                let (rounds, slow_name) = (rounds.clone(), slow_name.clone());
                // A launched service's samples are all outside any response's polls.
                let place = match clocked {
                    true => Place::Outside,
                    false => called::route(slow.request().method().as_str(), slow.path()),
                };
                let target = slow.target().clone();
                let name = name.clone();
                move |report: &ClaimReport| {
                    let rounds = rounds.to_vec();
                    if report.verdict == Verdict::Inconclusive
                        && unexplained(&rounds, &name, &slow_name).is_some()
                    {
                        return Some(unexplained_advice(&name, &slow_name));
                    }
                    let local = polled.then(|| looked.advice(&target)).flatten();
                    advice(report, &rounds, &slow_name, local, (&sampled.get(), &place))
                }
            })
            .explain(move |report: &ClaimReport| {
                sentences(report, &rounds.to_vec(), n, (&name, &slow_name), floor)
            })
            .ready_made()
    }
}

/// What to do: where the slow requests held every worker, the change that frees one (by
/// how their polls held it, where they were timed); where the claim did not break, `local`
/// — a database met on this machine, and putting it at production's distance.
fn advice(
    report: &ClaimReport,
    rounds: &[Round],
    slow_name: &str,
    local: Option<crate::claim::Advice>,
    (calls, place): (&Calls, &Place),
) -> Option<crate::claim::Advice> {
    match report.verdict {
        Verdict::Broken => {
            let slow: Vec<Holding> = rounds.iter().filter_map(|r| r.slow).collect();
            let how = match slow.get(slow.len() / 2) {
                Some(h) if h.longest_computing > h.all_waiting() => Hold::Computes,
                Some(h) if h.outside > h.waiting => Hold::WaitsInATask,
                Some(_) => Hold::Waits,
                None => {
                    return Some(crate::claim::Advice::new(
                        format!(
                            "{slow_name} holds every worker of the service while it runs; from outside, whether it waits or computes is not seen"
                        ),
                        "serve the router in a test (Target::serve) to see which its polls do, then move that off the worker (tokio::task::spawn_blocking)",
                    ));
                }
            };
            Some(remedy::for_hold(
                slow_name,
                how,
                called::call(calls, place, how),
            ))
        }
        _ => local,
    }
}

/// A round on a router perfshape serves: the slow fan-out, and the cheap request sent again
/// and again from the moment the server has started as many slow requests as can hold a
/// worker until the slow ones are all answered — each sent as the last is answered, at most
/// [`MAX_PROBES`], spaced so that they spread over one slow request's time: wherever in a
/// slow request its hold lies (a login that awaits its lookups and then hashes), a probe
/// meets it, as one arriving at a random moment would. The round's figure is the probe
/// that waited longest for a worker the slow requests held.
fn served_round(
    cheap: &Endpoint,
    busy: &Endpoint,
    server: &Server,
    n: usize,
    (alone, unit_hint): (Duration, Option<Duration>),
    (seen, sampled): (&Evidence, &Sampled),
) -> Result<Round> {
    let (slow_plan, cheap_plan) = (busy.plan()?, cheap.plan()?);
    let workers = busy.workers().map_or(1, |p| p.workers);
    let ledger = server.ledger();
    let allowance = busy.allowance();
    let before = ledger.started();
    // A launched service's requests are not counted as they start: the cheap ones go from
    // the first moment, and spread over the slow requests' time all the same.
    let counted = busy.target().served().is_some();
    let spacing = unit_hint.map_or(Duration::ZERO, |unit| unit / PROBES_PER_UNIT);
    let (slow_run, probes) = std::thread::scope(|scope| {
        let slow = scope.spawn(|| {
            seen.observe(busy.target(), || {
                let run = busy
                    .target()
                    .run_plan(ClientStrategy::FanOut, &slow_plan, n, None)?;
                run.require_ok()?;
                Ok(run)
            })
        });
        let deadline = Instant::now() + STARTED_WITHIN;
        let holding = before + n.min(workers) as u64;
        while counted
            && ledger.started() < holding
            && Instant::now() < deadline
            && !slow.is_finished()
        {
            std::thread::sleep(Duration::from_micros(20));
        }
        let mut probes = Vec::new();
        loop {
            let sent = Instant::now();
            let probe = cheap
                .target()
                .run_polls(ClientStrategy::Sequential, &cheap_plan, 1, None);
            let failed = probe.is_err();
            probes.push(probe);
            if failed || slow.is_finished() || probes.len() >= MAX_PROBES {
                break;
            }
            if let Some(pause) = spacing.checked_sub(sent.elapsed()) {
                std::thread::sleep(pause);
            }
        }
        let slow_run = slow
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (slow_run, probes)
    });
    let slow_run = slow_run?;
    sampled.add(&slow_run.calls);
    let probes = probes.into_iter().collect::<Result<Vec<Run>>>()?;
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
        slow: if counted {
            Holding::of_run(&slow_run)
        } else {
            Some(Holding::of_timeline(&slow_run, &slow_run))
        },
        ..round
    })
}

/// A round measured from outside: the cheap request rides the slow fan-out as its canary,
/// a fifth of one slow request in.
fn outside_round(
    cheap: &Endpoint,
    busy: &Endpoint,
    n: usize,
    alone: Duration,
    unit: Duration,
    seen: &Evidence,
) -> Result<Round> {
    let (slow_plan, cheap_plan) = (busy.plan()?, cheap.plan()?);
    let client_workers = busy.target().client().pool().settings().workers;
    let mut run = seen.observe(busy.target(), || {
        let run = busy.target().run_plan(
            ClientStrategy::FanOut,
            &slow_plan,
            n,
            Some((&cheap_plan, unit / 5)),
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
            busy.name()
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

/// Why the rounds cannot say the cheap request kept answering, where it waited long and
/// nothing perfshape read explains it: in the median round, its longest wait that no hold
/// of the slow requests (their polls, their workers' stretches outside them) accounts for
/// is more than [`AT_MOST`] of one slow request and more than [`UNEXPLAINED_TIMES`] its
/// own time alone. Such a wait is evidence of a hold not read — a request the load did
/// not name, work on the workers between timed polls — or of a machine that kept the
/// worker from running; it is never "no worker was blocked".
fn unexplained(rounds: &[Round], name: &str, slow_name: &str) -> Option<String> {
    let round = {
        let mut sorted = rounds.to_vec();
        sorted.sort_by_key(|r| r.unexplained);
        *sorted.get(sorted.len() / 2)?
    };
    let unit = middle(rounds.iter().map(|r| r.unit));
    let enough = unit.mul_f64(AT_MOST).max(round.alone * UNEXPLAINED_TIMES);
    (round.unexplained > enough).then(|| {
        format!(
            "{name} waited {} beyond its own {} while {slow_name} ran ({:.2} of one {slow_name}), and no hold perfshape read of {slow_name}'s responses or of its workers explains it",
            millis(round.unexplained),
            millis(round.alone),
            round.unexplained.as_secs_f64() / unit.as_secs_f64().max(f64::MIN_POSITIVE)
        )
    })
}

/// The cause and the do line of a wait [`unexplained`] names: a hold perfshape did not
/// read, or the machine.
fn unexplained_advice(name: &str, slow_name: &str) -> crate::claim::Advice {
    crate::claim::Advice::new(
        format!(
            "{name}'s wait is not {slow_name}'s hold as perfshape read it: a request the claim did not name held the worker (another client's, or a page a redirect points to), or the machine kept the worker from running"
        ),
        format!(
            "where the machine was busy, run it where the workers are not preempted (the full report's machine line says how busy it was); else claim {slow_name} with does_not_block_its_worker(), and each request its clients send beside it: that names what held the worker"
        ),
    )
}

/// The median of `counts` (the upper one of an even count), zero when there are none.
fn middle_count(counts: impl Iterator<Item = usize>) -> usize {
    let mut counts: Vec<usize> = counts.collect();
    counts.sort_unstable();
    counts.get(counts.len() / 2).copied().unwrap_or_default()
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

/// "/health waited 16.8 ms while 1 × /report ran (0.80 of one /report, …): every worker
/// was held", then what the slow requests' polls say.
fn sentences(
    report: &ClaimReport,
    rounds: &[Round],
    n: usize,
    (name, slow_name): (&str, &str),
    floor: Duration,
) -> Vec<String> {
    if rounds.is_empty() {
        return Vec::new();
    }
    let mid = |f: &dyn Fn(&Round) -> Duration| middle(rounds.iter().map(f));
    let (wait, alone, unit) = (mid(&|r| r.wait), mid(&|r| r.alone), mid(&|r| r.unit));
    let why = match report.verdict {
        Verdict::Holds => "no worker was blocked",
        Verdict::Broken => "every worker was held",
        Verdict::Inconclusive => "whether a worker was held is not settled",
    };
    let probes = middle_count(rounds.iter().map(|r| r.probes));
    let sent = if probes > 1 {
        format!(", the longest of {probes} sent across its time")
    } else {
        String::new()
    };
    let mut lines = vec![format!(
        "{name} waited {} while {n} × {slow_name} ran ({:.2} of one {slow_name}, counting what its hold explains{sent}; {name} alone takes {}): {why}",
        millis(wait),
        report.median,
        millis(alone)
    )];
    let slow: Vec<Holding> = rounds.iter().filter_map(|r| r.slow).collect();
    if let Some(h) = slow.get(slow.len() / 2) {
        if !h.outside.is_zero() {
            lines.push(format!(
                "its workers waited {} per {slow_name} outside every response's polls: in a task its requests spawned, or another task on the worker",
                millis(h.outside)
            ));
        }
        lines.push(format!(
            "{slow_name} held its worker {} of each {} request: it waited {} of it and computed at most {} in one poll (a poll past {} counts whole); {} of {name}'s wait was {slow_name} holding its worker",
            millis(h.held),
            millis(unit),
            millis(h.waiting),
            millis(h.longest_computing),
            millis(floor),
            millis(mid(&|r| r.counted()))
        ));
    }
    lines
}
