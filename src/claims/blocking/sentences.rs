//! What the claim found, for people: what the handler does with its worker, then what the
//! timing from outside saw.

use std::time::Duration;

use super::super::called;
use super::super::holding::{self, SLEEPS_AT_MOST, millis};
use super::super::remedy::{self, Hold};
use super::figures::{self, Figures, HeldRound, Queue};
use crate::claim::{Advice, ClaimReport, Verdict};
use crate::pool::sampler::{Calls, Place};
use crate::vocab::Allowance;

/// What the claim found, for people: what the handler does with its worker, then what the
/// timing from outside saw.
pub(super) fn sentences(
    report: &ClaimReport,
    rounds: &[HeldRound],
    (n, workers, client_workers): (usize, usize, usize),
    allowance: Allowance,
    (idle, launched): (Option<Duration>, bool),
    (calls, route): (&Calls, &Place),
) -> Vec<String> {
    if rounds.is_empty() {
        return Vec::new();
    }
    let (judged, met) = judged(report, rounds, allowance);
    let figures = Figures::of(&judged);
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
    let outside = if h.outside.is_zero() || launched {
        String::new()
    } else {
        format!(
            ", {} of it outside the requests' own polls — in a task they spawned, or another task on the worker",
            millis(h.outside)
        )
    };
    let by_time = holding::waits_by_time(&allowance, &h, alone);
    let waits = format!(
        "≈{} of each {} request while holding its worker ({:.1} %, at most {allowed:.0} %{floor}){outside}",
        millis(h.all_waiting()),
        millis(alone),
        pct(h.all_waiting())
    );
    let computes = format!("{} (budget {budget})", millis(h.longest_computing));
    let (waiting_used, computing_used, slept_used) = holding::parts(&allowance, &h, alone);
    // A launched service's longest poll is bounded by its workers' longest stretch.
    let longest = if launched {
        "its longest stretch of CPU serving one request"
    } else {
        "its longest poll"
    };
    // What the kernel saw the worker in, for the way it held past its allowance (a launched
    // service's polls are not told apart: all its samples are outside any response).
    let route = if launched { &Place::Outside } else { route };
    let seen = |how: Hold| {
        called::named(Some(calls), route, how)
            .map(|said| format!("; {said}"))
            .unwrap_or_default()
    };
    let queue = figures.queue((n, workers, client_workers), allowance, launched);
    // Polls that held, on workers something else held: what the polls did is said as for
    // a hold, and the queue for the workers after it.
    let on_the_workers =
        matches!(queue, Queue::OnTheWorkers(_)) && report.verdict == Verdict::Inconclusive;
    // An undecided claim whose median round kept within every part of its allowance (its
    // rounds too few, or a build that cannot tell) says what its polls did as a hold does,
    // not as a break.
    let within = waiting_used <= 1.0 && computing_used <= 1.0 && slept_used <= 1.0;
    let undecided_within = report.verdict == Verdict::Inconclusive && within;
    let first = if report.verdict.holds() || on_the_workers || undecided_within {
        if h.all_waiting() < Duration::from_micros(5) {
            format!(
                "never waits while holding its worker (each {} request); {longest} computes {computes}",
                millis(alone)
            )
        } else {
            format!("waits {waits}; {longest} computes {computes}")
        }
    } else if slept_used > 1.0 && waiting_used <= 1.0 && computing_used <= 1.0 {
        // Broken by the sleeps alone: their time here is under what a wait may take.
        format!(
            "its polls slept in the kernel in {:.0} % of its requests (at most {:.0} %), waiting ≈{} a request here, where what it calls answers at once; 1 ms away, as a database across a network is, each such call holds the worker a 2 ms round trip{}",
            h.slept_share() * 100.0,
            SLEEPS_AT_MOST * 100.0,
            millis(h.waiting),
            seen(Hold::Waits)
        )
    } else if waiting_used >= computing_used && by_time {
        format!(
            "its workers waited outside any response {:.1} % of the time measured (at most {allowed:.0} %): a task its requests spawned, or another task on the worker, slept in the kernel while it held the worker; its requests' own polls wait ≈{} of each {} request{}",
            h.outside_share * 100.0,
            millis(h.waiting),
            millis(alone),
            seen(Hold::WaitsInATask)
        )
    } else if waiting_used >= computing_used {
        let how = if h.outside > h.waiting {
            Hold::WaitsInATask
        } else {
            Hold::Waits
        };
        // The call first, where the kernel named it: what held the worker leads the
        // report's first line.
        match (how, called::blocked_in(calls, route)) {
            (Hold::Waits, Some((call, Some((n, all))))) => format!(
                "blocked in {call} (the kernel saw it in {n} of the {all} samples that caught the worker waiting); it waits {waits}"
            ),
            (Hold::Waits, Some((call, None))) => format!(
                "blocked in {call} (the kernel handed over its stack as the worker left its CPU); it waits {waits}"
            ),
            _ => format!("waits {waits}{}", seen(how)),
        }
    } else {
        format!(
            "computes {} in one {} without giving its worker back (budget {budget}); it waits {waits}{}",
            millis(h.longest_computing),
            if launched {
                "stretch serving one request"
            } else {
                "poll"
            },
            seen(Hold::Computes)
        )
    };
    let first = match met {
        Some(met) => format!("{met}: {first}"),
        None => first,
    };
    let detail = if launched {
        format!(
            "a launched service's responses are not timed poll by poll: its workers waited {} per request while the requests ran, and their longest stretch of CPU serving one request alone was {} (a bound on its longest poll; a stretch under {} is not kept)",
            millis(h.outside),
            millis(h.longest_computing),
            millis(crate::pool::timeline::LONG)
        )
    } else {
        format!(
            "its polls held the worker {} of the median request: {} computing, {} preempted by the machine (neither); {} waiting per request on average; the longest poll of any request computed {}",
            millis(h.held),
            millis(h.computing),
            millis(h.preempted),
            millis(h.waiting),
            millis(h.most_computing)
        )
    };
    let mut lines = vec![first, detail];
    if !report.verdict.holds() && crate::blocked_call::available() {
        lines.push(called::tally(calls, route));
        lines.extend(called::stacks(calls, route));
    }
    if let Some(idle) = idle.filter(|_| !h.outside.is_zero() || h.outside_share > 0.0) {
        let over = super::super::worker_watch::IDLE_READING;
        lines.push(if idle.is_zero() {
            format!(
                "with no load for {}, the workers never waited outside a response: the {} per request came with the requests — a task they spawned",
                millis(over),
                millis(h.outside)
            )
        } else {
            format!(
                "with no load for {}, the workers waited {} outside any response ({:.1} % of the time): a background task on the workers blocks them whatever the requests",
                millis(over),
                millis(idle),
                100.0 * idle.as_secs_f64() / over.as_secs_f64()
            )
        });
    }
    if h.handed_off > 0 {
        lines.push(format!(
            "in {} polls tokio handed the worker's core to another thread before the handler blocked (block_in_place): the worker ran other tasks meanwhile, and those polls are not counted as a hold",
            h.handed_off
        ));
    }
    // The requests queued, but not for the worker: behind something that admits few at a
    // time (where they queued for the workers, the claim is inconclusive: `unexplained`).
    if let (Queue::OnTheWorkers(busy), true) = (queue, on_the_workers) {
        lines[0].push_str(&format!(
            "; but its requests queued for a worker that was held {:.0} % of the time by something its polls do not explain",
            busy * 100.0
        ));
    }
    if queue == Queue::Elsewhere {
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

/// The likely cause and what to do: by how the handler held its worker where the claim
/// broke; where it did not, `local` — on a served router, what a database met on this
/// machine hides.
pub(super) fn advice(
    report: &ClaimReport,
    rounds: &[HeldRound],
    (allowance, sizes, launched): (Allowance, (usize, usize, usize), bool),
    local: Option<Advice>,
    (calls, route): (&Calls, &Place),
) -> Option<Advice> {
    if report.verdict == Verdict::Inconclusive && !rounds.is_empty() {
        // Rounds this build cannot tell: the reason names the line that makes it decisive.
        if figures::untold(&allowance, rounds).is_some() {
            return local;
        }
        // Requests that queued for workers busy with what their polls do not explain.
        if unexplained(rounds, sizes, allowance, launched).is_some() {
            return Some(Advice::new(
                "the requests waited for a worker that was running something else than their polls: a request the claim did not name (another client's, or a page a redirect points to), a task or a background job between the timed polls, or the machine's other work",
                "claim each request the route's clients send (does_not_block_its_worker() names what its polls hold), and where the workers run background work, run the claim beside it with the worker's timeline read (Target::serve_with builds it on the served pool)",
            ));
        }
        return local.or_else(|| undecided(report, rounds, allowance, (calls, route)));
    }
    if report.verdict != Verdict::Broken || rounds.is_empty() {
        return local;
    }
    let (judged, _) = judged(report, rounds, allowance);
    let figures = Figures::of(&judged);
    let Some(h) = figures.polls else {
        return Some(Advice::new(
            "the handler holds its worker for much of each request; from outside, a wait and a long computation read alike",
            "serve the router in a test (Target::serve) to see which its polls do, then move that off the worker (tokio::task::spawn_blocking), or check whether its requests queue behind one connection or lock",
        ));
    };
    let how = hold_of(&allowance, &h, figures.alone);
    Some(remedy::for_hold(
        "the handler",
        how,
        called::call(calls, route, how),
    ))
}

/// How a broken claim's handler held its worker, by the part of its allowance it used most:
/// computing in one poll, waiting in a task outside its requests' polls, or waiting in
/// them.
fn hold_of(allowance: &Allowance, h: &holding::Holding, alone: Duration) -> Hold {
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

/// Where a broken claim's hold was sampled and whether it computed: the route's polls, or
/// the workers outside any response for a task's wait (and a launched service's). `None`
/// for a claim that did not break, or was timed from outside.
pub(super) fn held_at(
    report: &ClaimReport,
    rounds: &[HeldRound],
    allowance: Allowance,
    launched: bool,
    route: &Place,
) -> Option<(Place, bool)> {
    if report.verdict != Verdict::Broken || rounds.is_empty() {
        return None;
    }
    let (judged, _) = judged(report, rounds, allowance);
    let figures = Figures::of(&judged);
    let h = figures.polls?;
    let route = if launched { &Place::Outside } else { route };
    Some(match hold_of(&allowance, &h, figures.alone) {
        Hold::Computes => (route.clone(), true),
        Hold::WaitsInATask => (Place::Outside, false),
        Hold::Waits => (route.clone(), false),
    })
}

/// What a broken claim found, in words that change only with the shape (its snapshot's):
/// how the handler held its worker, the call the kernel saw it in or where it computed, and
/// the team's line — never a figure. `None` for a claim that did not break.
pub(super) fn shape(
    report: &ClaimReport,
    rounds: &[HeldRound],
    allowance: Allowance,
    launched: bool,
    (calls, route): (&Calls, &Place),
) -> Option<String> {
    if report.verdict != Verdict::Broken || rounds.is_empty() {
        return None;
    }
    let (judged, _) = judged(report, rounds, allowance);
    let figures = Figures::of(&judged);
    let Some(h) = figures.polls else {
        return Some("holds its worker past its allowance, as timed from outside".to_string());
    };
    // A launched service's samples are all outside any response.
    let route = if launched { &Place::Outside } else { route };
    let (said, place) = match hold_of(&allowance, &h, figures.alone) {
        Hold::Computes => {
            let at = crate::stack::computing_shape(calls.computing(route));
            return Some(match at {
                Some(at) => format!("computes past the poll budget in one poll, {at}"),
                None => "computes past the poll budget in one poll".to_string(),
            });
        }
        Hold::WaitsInATask => (
            "a task on its worker outside its requests' polls waits in a call while it holds the worker",
            &Place::Outside,
        ),
        Hold::Waits => ("waits in a call while holding its worker", route),
    };
    Some(match called::shape_at(calls, place) {
        Some(call) => format!("{said}: {call}"),
        None => said.to_string(),
    })
}

/// Why the rounds of a served claim did not settle it, and what would: which of the three
/// parts — waiting, computing, sleeps — took the rounds past the allowance that were, and
/// the call the kernel saw; or, where none was, that too few rounds were measured to rule
/// out a shape met in one round in three.
fn undecided(
    report: &ClaimReport,
    rounds: &[HeldRound],
    allowance: Allowance,
    (calls, route): (&Calls, &Place),
) -> Option<Advice> {
    let parts: Vec<(f64, f64, f64)> = rounds
        .iter()
        .filter_map(|r| Some(holding::parts(&allowance, &r.polls?, r.alone)))
        .collect();
    if parts.is_empty() {
        return None;
    }
    let past: Vec<&(f64, f64, f64)> = parts
        .iter()
        .filter(|(w, c, s)| w.max(*c).max(*s) > 1.0)
        .collect();
    let longer = crate::outcome::what_settles(report);
    if past.is_empty() {
        return Some(Advice::new(
            format!(
                "none of its {} rounds passed its allowance, but they were too few, or too far apart from each other, to settle it",
                parts.len()
            ),
            longer,
        ));
    }
    let count = |f: &dyn Fn(&&(f64, f64, f64)) -> bool| past.iter().filter(|p| f(p)).count();
    let (waiting, computing, sleeps) = (
        count(&|p| p.0 > 1.0),
        count(&|p| p.1 > 1.0),
        count(&|p| p.2 > 1.0),
    );
    let mut by = Vec::new();
    for (n, what) in [
        (waiting, "waiting"),
        (computing, "computing"),
        (sleeps, "sleeps"),
    ] {
        if n > 0 {
            by.push(format!("{what} in {n}"));
        }
    }
    let how = if computing > waiting.max(sleeps) {
        Hold::Computes
    } else {
        Hold::Waits
    };
    let seen = called::call(calls, route, how)
        .map(|call| format!("; the kernel saw the worker waiting in {call}"))
        .unwrap_or_default();
    Some(Advice::new(
        format!(
            "{} of its {} rounds passed its allowance — by {} — and the others did not{seen}: a shape that comes and goes, or a machine that took those rounds",
            past.len(),
            parts.len(),
            by.join(", ")
        ),
        format!(
            "{longer}; if the handler does it, {}",
            remedy::for_hold("the handler", how, None).action
        ),
    ))
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
        Some(cpu) => {
            let queued = figures
                .service_queued
                .unwrap_or_default()
                .min(held.saturating_sub(cpu));
            let on_queue = if queued.is_zero() {
                String::new()
            } else {
                format!(", ≈{} waiting for a CPU (the machine's other work)", millis(queued))
            };
            format!(
                "; of it the service's own CPU explains ≈{} (computing){on_queue} and ≈{} is waiting",
                millis(cpu.min(held)),
                millis(held.saturating_sub(cpu).saturating_sub(queued))
            )
        }
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

/// The rounds a report describes: all of them, or — where the claim broke on a shape met in
/// some rounds only, its median round inside — the rounds that met it, with the words that
/// say so ("in 5 of its 15 rounds").
fn judged(
    report: &ClaimReport,
    rounds: &[HeldRound],
    allowance: Allowance,
) -> (Vec<HeldRound>, Option<String>) {
    let past = |r: &&HeldRound| {
        r.polls
            .and_then(|h| holding::used(&allowance, &h, r.alone).ok())
            .is_some_and(|used| used > 1.0)
    };
    let met: Vec<HeldRound> = rounds.iter().filter(past).copied().collect();
    if report.verdict == Verdict::Broken && report.median <= 1.0 && !met.is_empty() {
        let said = format!(
            "in {} of its {} rounds (a shape that comes and goes; the figures below are theirs)",
            met.len(),
            rounds.len()
        );
        (met, Some(said))
    } else {
        (rounds.to_vec(), None)
    }
}

/// Why a claim whose polls held cannot say so, where its requests queued for workers that
/// were busy with what their polls do not explain ([`Queue::OnTheWorkers`]): the wait is
/// the worker's, held by something the claim did not read — never "queued elsewhere".
pub(super) fn unexplained(
    rounds: &[HeldRound],
    sizes: (usize, usize, usize),
    allowance: Allowance,
    launched: bool,
) -> Option<String> {
    if rounds.is_empty() {
        return None;
    }
    let figures = Figures::of(rounds);
    let Queue::OnTheWorkers(busy) = figures.queue(sizes, allowance, launched) else {
        return None;
    };
    let h = figures.polls?;
    Some(format!(
        "N = {} concurrent took {:.1}× one request alone while the workers were held {:.0} % of the time (busy, less their time on a run queue), and the requests' polls held their worker {} of each {} request: they queued for a worker that something the claim did not read was holding (a request it did not name, or work between the timed polls)",
        sizes.0,
        figures.ratio,
        busy * 100.0,
        millis(h.held),
        millis(figures.alone)
    ))
}
