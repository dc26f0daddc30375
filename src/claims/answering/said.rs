//! What the claim says once decided: why its rounds cannot tell, its raw figures, the
//! cause and what to do, and its sentences — each a step read from the rounds.

use std::time::Duration;

use super::super::holding::Holding;
use super::rounds::Answering;
use super::{AT_MOST, Round, UNEXPLAINED_TIMES};
use crate::claim::{Advice, Claim, ClaimReport, Notes, Verdict};
use crate::held::called;
use crate::held::remedy::{self, Hold};
use crate::held::{in_ms, middle};
use crate::pool::sampler::Place;

/// The claim with what it says once decided, through the context's steps.
pub(super) fn said_of(
    claim: Claim<'static>,
    answering: Answering,
    rounds: Notes<Round>,
) -> Claim<'static> {
    let (untold, untold_rounds) = (answering.clone(), rounds.clone());
    let observed = rounds.clone();
    let (advised, advised_rounds) = (answering.clone(), rounds.clone());
    claim
        .untold_when(move || {
            untold_rounds
                .with(|rounds| unexplained(rounds, &untold.cheap.name(), &untold.slow.name()))
        })
        .observed(move || observed.with(figures))
        .advise(move |report: &ClaimReport| advised.advice(report, &advised_rounds.to_vec()))
        .explain(move |report: &ClaimReport| answering.sentences(report, &rounds.to_vec()))
}

/// The raw figures of the rounds, each the median round's.
fn figures(rounds: &[Round]) -> Vec<(String, f64)> {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let unexplained = middle(rounds.iter().map(|r| r.unexplained));
    let unit = middle(rounds.iter().map(|r| r.unit));
    let alone = middle(rounds.iter().map(|r| r.alone));
    vec![
        ("unexplained wait ms".to_string(), ms(unexplained)),
        ("slow request ms".to_string(), ms(unit)),
        ("cheap alone ms".to_string(), ms(alone)),
    ]
}

impl Answering {
    /// What to do: where the rounds cannot tell for a wait nothing read explains, that;
    /// where the slow requests held every worker, the change that frees one (by how their
    /// polls held it, where they were timed); where the claim did not break, a database
    /// met on this machine, and putting it at production's distance.
    fn advice(&self, report: &ClaimReport, rounds: &[Round]) -> Option<Advice> {
        let (name, slow_name) = (self.cheap.name(), self.slow.name());
        if report.verdict == Verdict::Inconclusive
            && unexplained(rounds, &name, &slow_name).is_some()
        {
            return Some(unexplained_advice(&name, &slow_name));
        }
        if report.verdict != Verdict::Broken {
            return self
                .polled
                .then(|| self.look.advice(self.slow.target()))
                .flatten();
        }
        let slow: Vec<Holding> = rounds.iter().filter_map(|r| r.slow).collect();
        let how = match slow.get(slow.len() / 2) {
            Some(h) if h.longest_computing > h.all_waiting() => Hold::Computes,
            Some(h) if h.outside > h.waiting => Hold::WaitsInATask,
            Some(_) => Hold::Waits,
            None => {
                return Some(Advice::new(
                    format!(
                        "{slow_name} holds every worker of the service while it runs; from outside, whether it waits or computes is not seen"
                    ),
                    "serve the router in a test (Target::serve) to see which its polls do, then move that off the worker (tokio::task::spawn_blocking)",
                ));
            }
        };
        // A launched service's samples are all outside any response's polls.
        let place = if self.clocked {
            Place::Outside
        } else {
            called::route(self.slow.request().method().as_str(), self.slow.path())
        };
        Some(remedy::for_hold(
            &slow_name,
            how,
            called::call(&self.sampled.get(), &place, how),
        ))
    }

    /// "/health waited 16.8 ms while 1 × /report ran (0.80 of one /report, …): every worker
    /// was held", then what the slow requests' polls say.
    fn sentences(&self, report: &ClaimReport, rounds: &[Round]) -> Vec<String> {
        let (name, slow_name) = (self.cheap.name(), self.slow.name());
        let (n, floor) = (self.n, self.slow.allowance().hold_floor());
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
            in_ms(wait),
            report.median,
            in_ms(alone)
        )];
        let slow: Vec<Holding> = rounds.iter().filter_map(|r| r.slow).collect();
        if let Some(h) = slow.get(slow.len() / 2) {
            if !h.outside.is_zero() {
                lines.push(format!(
                    "its workers waited {} per {slow_name} outside every response's polls: in a task its requests spawned, or another task on the worker",
                    in_ms(h.outside)
                ));
            }
            lines.push(format!(
                "{slow_name} held its worker {} of each {} request: it waited {} of it and computed at most {} in one poll (a poll past {} counts whole); {} of {name}'s wait was {slow_name} holding its worker",
                in_ms(h.held),
                in_ms(unit),
                in_ms(h.waiting),
                in_ms(h.longest_computing),
                in_ms(floor),
                in_ms(mid(&|r| r.counted()))
            ));
        }
        lines
    }
}

/// Why the rounds cannot say the cheap request kept answering, where it waited long and
/// nothing perfshape read explains it: in the median round, its longest wait that no hold
/// of the slow requests (their polls, their workers' stretches outside them) accounts for
/// is more than [`AT_MOST`] of one slow request and more than [`UNEXPLAINED_TIMES`] its
/// own time alone. Such a wait is evidence of a hold not read — a request the load did
/// not name, work on the workers between timed polls — or of a machine that kept the
/// worker from running; it is never "no worker was blocked".
pub(super) fn unexplained(rounds: &[Round], name: &str, slow_name: &str) -> Option<String> {
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
            in_ms(round.unexplained),
            in_ms(round.alone),
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
