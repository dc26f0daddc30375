//! What the claim found, for people: what the handler does with its worker, then what the
//! timing from outside saw; and, in words that change only with the shape, what its
//! snapshot holds. The likely cause and what to do are in [`advice`](super::advice).

use std::time::Duration;

use super::super::holding::{self, Holding, SLEEPS_AT_MOST};
use super::figures::{Figures, HeldRound, Queue, Sizes};
use crate::claim::{ClaimReport, Verdict};
use crate::held::called;
use crate::held::in_ms;
use crate::held::remedy::Hold;
use crate::pool::sampler::{Calls, Place};
use crate::vocab::Allowance;

/// A claim decided, as its sentences, its advice and its snapshot's shape read it: its
/// report, its rounds and the counts they were sent at, the allowance, and what the
/// workers were sampled in at the route.
pub(super) struct Decided<'a> {
    pub(super) report: &'a ClaimReport,
    pub(super) rounds: &'a [HeldRound],
    pub(super) sizes: Sizes,
    pub(super) allowance: Allowance,
    /// A launched service: its workers' timeline, not its polls, was read.
    pub(super) launched: bool,
    pub(super) calls: &'a Calls,
    /// The route's place in the samples.
    pub(super) route: &'a Place,
}

impl Decided<'_> {
    /// What the claim found, for people: what the handler does with its worker, then what
    /// the timing from outside saw; `idle`, the workers' waiting with no load, where it
    /// was read.
    pub(super) fn sentences(&self, idle: Option<Duration>) -> Vec<String> {
        if self.rounds.is_empty() {
            return Vec::new();
        }
        let (judged, met) = self.judged();
        let figures = Figures::of(&judged);
        let from_outside = self.timed_outside(&figures);
        let Some(h) = figures.polls else {
            return self.outside_sentences(&figures, from_outside);
        };
        let queue = figures.queue(self.sizes, self.allowance, self.launched);
        // Polls that held, on workers something else held: what the polls did is said as
        // for a hold, and the queue for the workers after it.
        let on_the_workers =
            matches!(queue, Queue::OnTheWorkers(_)) && self.report.verdict == Verdict::Inconclusive;
        let first = self.first(&figures, &h, on_the_workers);
        let first = match met {
            Some(met) => format!("{met}: {first}"),
            None => first,
        };
        let mut lines = vec![first, self.detail(&h)];
        if !self.report.verdict.holds() && crate::blocked_call::available() {
            lines.push(called::tally(self.calls, self.place()));
            lines.extend(called::stacks(self.calls, self.place()));
        }
        lines.extend(idle_line(idle, &h));
        if h.handed_off > 0 {
            lines.push(format!(
                "in {} polls tokio handed the worker's core to another thread before the handler blocked (block_in_place): the worker ran other tasks meanwhile, and those polls are not counted as a hold",
                h.handed_off
            ));
        }
        // The requests queued, but not for the worker: behind something that admits few at
        // a time (where they queued for the workers, the claim is inconclusive:
        // `unexplained`).
        if let (Queue::OnTheWorkers(busy), true) = (queue, on_the_workers) {
            lines[0].push_str(&format!(
                "; but its requests queued for a worker that was held {:.0} % of the time by something its polls do not explain",
                busy * 100.0
            ));
        }
        if queue == Queue::Elsewhere {
            let admits = figures.admits(self.sizes.n);
            lines[0].push_str(&format!(
                "; its requests queued elsewhere, behind something that admits ≈{admits:.1} at a time (concurrency_limit() measures it)"
            ));
            lines.push(format!(
                "{from_outside}: the requests queued, but not for the worker (their polls held it {} of each request) — behind something that admits ≈{admits:.1} at a time (one database connection, a lock, a pool); concurrency_limit() measures it",
                in_ms(h.held)
            ));
        } else {
            lines.push(from_outside);
        }
        lines
    }

    /// What the timing from outside saw, and where it has no power, why.
    fn timed_outside(&self, figures: &Figures) -> String {
        format!(
            "from outside: N = {} concurrent took {:.1}× one request alone, a held share of ≈{:.1} % by the timing estimate{}",
            self.sizes.n,
            figures.ratio,
            figures.estimate * 100.0,
            figures
                .outside
                .powerless(figures.alone)
                .map(|why| format!(
                    ", which measures the load's own cost here, not the handler: {why}"
                ))
                .unwrap_or_default()
        )
    }

    /// What the handler's polls did with the worker, by the part of its allowance it used
    /// most: the report's first line.
    fn first(&self, figures: &Figures, h: &Holding, on_the_workers: bool) -> String {
        let alone = figures.alone;
        let allowance = &self.allowance;
        let budget = allowance.describe_budget();
        let waits = self.waits(h, alone);
        let computes = format!("{} (budget {budget})", in_ms(h.longest_computing));
        let (waiting_used, computing_used, slept_used) = holding::parts(allowance, h, alone);
        // A launched service's longest poll is bounded by its workers' longest stretch.
        let longest = if self.launched {
            "its longest stretch of CPU serving one request"
        } else {
            "its longest poll"
        };
        // An undecided claim whose median round kept within every part of its allowance
        // (its rounds too few, or a build that cannot tell) says what its polls did as a
        // hold does, not as a break.
        let within = waiting_used <= 1.0 && computing_used <= 1.0 && slept_used <= 1.0;
        let verdict = self.report.verdict;
        let undecided_within = verdict == Verdict::Inconclusive && within;
        if verdict.holds() || on_the_workers || undecided_within {
            return if h.all_waiting() < Duration::from_micros(5) {
                format!(
                    "never waits while holding its worker (each {} request); {longest} computes {computes}",
                    in_ms(alone)
                )
            } else {
                format!("waits {waits}; {longest} computes {computes}")
            };
        }
        if slept_used > 1.0 && waiting_used <= 1.0 && computing_used <= 1.0 {
            // Broken by the sleeps alone: their time here is under what a wait may take.
            return format!(
                "its polls slept in the kernel in {:.0} % of its requests (at most {:.0} %), waiting ≈{} a request here, where what it calls answers at once; 1 ms away, as a database across a network is, each such call holds the worker a 2 ms round trip{}",
                h.slept_share() * 100.0,
                SLEEPS_AT_MOST * 100.0,
                in_ms(h.waiting),
                self.seen(Hold::Waits)
            );
        }
        if waiting_used >= computing_used && holding::waits_by_time(allowance, h, alone) {
            return format!(
                "its workers waited outside any response {:.1} % of the time measured (at most {:.0} %): a task its requests spawned, or another task on the worker, slept in the kernel while it held the worker; its requests' own polls wait ≈{} of each {} request{}",
                h.outside_share * 100.0,
                allowance.waiting * 100.0,
                in_ms(h.waiting),
                in_ms(alone),
                self.seen(Hold::WaitsInATask)
            );
        }
        if waiting_used >= computing_used {
            return self.blocked(h, &waits);
        }
        format!(
            "computes {} in one {} without giving its worker back (budget {budget}); it waits {waits}{}",
            in_ms(h.longest_computing),
            if self.launched {
                "stretch serving one request"
            } else {
                "poll"
            },
            self.seen(Hold::Computes)
        )
    }

    /// How long the handler waits while it holds its worker, against its allowance.
    fn waits(&self, h: &Holding, alone: Duration) -> String {
        let allowance = &self.allowance;
        let floor = if allowance.waiting_allowed(alone) > alone.mul_f64(allowance.waiting) {
            format!(", at least {}", in_ms(crate::vocab::allowance::WAIT_FLOOR))
        } else {
            String::new()
        };
        let outside = if h.outside.is_zero() || self.launched {
            String::new()
        } else {
            format!(
                ", {} of it outside the requests' own polls — in a task they spawned, or another task on the worker",
                in_ms(h.outside)
            )
        };
        let pct =
            100.0 * h.all_waiting().as_secs_f64() / alone.as_secs_f64().max(f64::MIN_POSITIVE);
        format!(
            "≈{} of each {} request while holding its worker ({pct:.1} %, at most {:.0} %{floor}){outside}",
            in_ms(h.all_waiting()),
            in_ms(alone),
            allowance.waiting * 100.0,
        )
    }

    /// A wait past the allowance, the call first where the kernel named it: what held the
    /// worker leads the report's first line.
    fn blocked(&self, h: &Holding, waits: &str) -> String {
        let how = if h.outside > h.waiting {
            Hold::WaitsInATask
        } else {
            Hold::Waits
        };
        match (how, called::blocked_in(self.calls, self.place())) {
            (Hold::Waits, Some((call, Some((n, all))))) => format!(
                "blocked in {call} (the kernel saw it in {n} of the {all} samples that caught the worker waiting); it waits {waits}"
            ),
            (Hold::Waits, Some((call, None))) => format!(
                "blocked in {call} (the kernel handed over its stack as the worker left its CPU); it waits {waits}"
            ),
            _ => format!("waits {waits}{}", self.seen(how)),
        }
    }

    /// Where the hold was sampled: the route's polls, or — a launched service's polls are
    /// not told apart — the workers outside any response.
    pub(super) fn place(&self) -> &Place {
        if self.launched {
            &Place::Outside
        } else {
            self.route
        }
    }

    /// What the kernel saw the worker in, for the way it held past its allowance.
    fn seen(&self, how: Hold) -> String {
        called::named(Some(self.calls), self.place(), how)
            .map(|said| format!("; {said}"))
            .unwrap_or_default()
    }

    /// Where the polls' time went, as the median request spent it; a launched service's
    /// workers as its timeline read them.
    fn detail(&self, h: &Holding) -> String {
        if self.launched {
            return format!(
                "a launched service's responses are not timed poll by poll: its workers waited {} per request while the requests ran, and their longest stretch of CPU serving one request alone was {} (a bound on its longest poll; a stretch under {} is not kept)",
                in_ms(h.outside),
                in_ms(h.longest_computing),
                in_ms(crate::pool::timeline::LONG)
            );
        }
        format!(
            "its polls held the worker {} of the median request: {} computing, {} preempted by the machine (neither); {} waiting per request on average; the longest poll of any request computed {}",
            in_ms(h.held),
            in_ms(h.computing),
            in_ms(h.preempted),
            in_ms(h.waiting),
            in_ms(h.most_computing)
        )
    }

    /// What a broken claim found, in words that change only with the shape (its snapshot's):
    /// how the handler held its worker, the call the kernel saw it in or where it computed, and
    /// the team's line — never a figure. `None` for a claim that did not break.
    pub(super) fn shape(&self) -> Option<String> {
        let (report, rounds, allowance, calls) =
            (self.report, self.rounds, self.allowance, self.calls);
        if report.verdict != Verdict::Broken || rounds.is_empty() {
            return None;
        }
        let (judged, _) = self.judged();
        let figures = Figures::of(&judged);
        let Some(h) = figures.polls else {
            return Some("holds its worker past its allowance, as timed from outside".to_string());
        };
        // A launched service's samples are all outside any response.
        let route = self.place();
        let (said, place) = match super::figures::hold_of(&allowance, &h, figures.alone) {
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

    /// The sentences of a claim decided from outside (a URL, or clocks that cannot be read).
    fn outside_sentences(&self, figures: &Figures, from_outside: String) -> Vec<String> {
        let (report, n, allowance) = (self.report, self.sizes.n, self.allowance);
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
                    format!(", ≈{} waiting for a CPU (the machine's other work)", in_ms(queued))
                };
                format!(
                    "; of it the service's own CPU explains ≈{} (computing){on_queue} and ≈{} is waiting",
                    in_ms(cpu.min(held)),
                    in_ms(held.saturating_sub(cpu).saturating_sub(queued))
                )
            }
            None => "; computing and waiting cannot be told apart from here (the service's process cannot be read on this machine)".to_string(),
        };
        let mut lines = vec![format!(
            "{verb}: ≈{} of each {} request ({:.1} %, at most {:.0} % waiting), from N = {n} concurrent taking {:.1}× one request{split}",
            in_ms(held),
            in_ms(alone),
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
    pub(super) fn judged(&self) -> (Vec<HeldRound>, Option<String>) {
        let (report, rounds, allowance) = (self.report, self.rounds, self.allowance);
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
}

/// What the workers did with no load, where they waited outside any response while the
/// requests ran.
fn idle_line(idle: Option<Duration>, h: &Holding) -> Option<String> {
    let idle = idle.filter(|_| !h.outside.is_zero() || h.outside_share > 0.0)?;
    let over = super::super::worker_watch::IDLE_READING;
    Some(if idle.is_zero() {
        format!(
            "with no load for {}, the workers never waited outside a response: the {} per request came with the requests — a task they spawned",
            in_ms(over),
            in_ms(h.outside)
        )
    } else {
        format!(
            "with no load for {}, the workers waited {} outside any response ({:.1} % of the time): a background task on the workers blocks them whatever the requests",
            in_ms(over),
            in_ms(idle),
            100.0 * idle.as_secs_f64() / over.as_secs_f64()
        )
    })
}

/// Why a claim whose polls held cannot say so, where its requests queued for workers that
/// were busy with what their polls do not explain ([`Queue::OnTheWorkers`]): the wait is
/// the worker's, held by something the claim did not read — never "queued elsewhere".
pub(super) fn unexplained(
    rounds: &[HeldRound],
    sizes: Sizes,
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
        sizes.n,
        figures.ratio,
        busy * 100.0,
        in_ms(h.held),
        in_ms(figures.alone)
    ))
}
