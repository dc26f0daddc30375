//! The watch's report: one verdict over the routes the test called, each listed with its
//! requests, the first broken one leading with the call the kernel saw; what a team
//! allowed listed after what broke, never silent.

use std::collections::BTreeMap;
use std::time::Duration;

use super::route::{BetweenResponses, Decided, rank};
use super::seen::Finding;
use super::source::Source;
use crate::claim::{Advice, Band, ClaimReport, GateMode, Verdict};
use crate::held::called;
use crate::held::in_ms;
use crate::held::remedy::{Hold, for_hold};
use crate::pool::sampler::{Calls, Place};
use crate::vocab::Allowance;

/// What the workers outside every response are called in a report.
const OUTSIDE: &str = "a task outside every response";

/// Everything a watch decided, as its report reads it: the routes (broken first), the time
/// outside every response, what was sampled, and how many responses it read.
pub(super) struct Decisions<'a> {
    pub(super) source: &'a Source,
    pub(super) routes: &'a [Decided],
    pub(super) outside: &'a BetweenResponses,
    pub(super) calls: &'a Calls,
    /// The responses read.
    pub(super) responses: usize,
    /// The responses started and never finished.
    pub(super) unrecorded: usize,
    pub(super) allowance: &'a Allowance,
}

/// What a report says of the holds: what broke (the lead first), what was allowed, and
/// the advice for the first that broke.
#[derive(Default)]
struct Said {
    explanation: Vec<String>,
    allowed: Vec<String>,
    advice: Option<Advice>,
}

impl Decisions<'_> {
    /// The report, under the gate's mode, after `elapsed` of watching.
    pub(super) fn report(&self, gate: GateMode, elapsed: Duration) -> ClaimReport {
        let broken_routes = self.routes.iter().filter(|r| r.rank() == 0).count();
        let blocked = broken_routes + usize::from(self.outside.broken());
        let undecided = self.undecided();
        // A read this platform does not make is the verdict's only where it left the watch
        // undecided: a poll past the budget is exact everywhere, and breaks it all the same.
        let unread = (blocked == 0
            && (self.routes.iter().any(|r| r.finding == Finding::Unread)
                || self.outside.finding == Finding::Unread))
            .then(crate::thread_clock::unsplit);
        let verdict = if blocked > 0 {
            Verdict::Broken
        } else if !undecided.is_empty() || unread.is_some() {
            Verdict::Inconclusive
        } else {
            Verdict::Holds
        };
        let said = self.what_it_says(undecided);
        let reason = self.reason(verdict, broken_routes);
        ClaimReport {
            name: "no route the test called blocks its worker".to_string(),
            kind: "watch",
            relation: "routes whose requests held their worker, by what the kernel saw".into(),
            band: Band::at_most(0.0),
            ideal: None,
            expected: None,
            verdict,
            // What broke, by count: each route's hold, its call and line are in its fact.
            shape: (!verdict.holds()).then(|| reason.clone()),
            reason,
            median: blocked as f64,
            noise_floor: 0.0,
            margin: None,
            sides: Vec::new(),
            rounds: Vec::new(),
            context: BTreeMap::from([
                ("target".to_string(), self.source.describe()),
                ("poll budget".to_string(), self.allowance.describe_budget()),
            ]),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_quota: crate::cpu_quota::CpuQuota::binding().map(|q| q.cpus),
            gate,
            unread,
            budget: Duration::ZERO,
            out_of_time: None,
            elapsed,
            limit: None,
            explanation: said.explanation,
            advice: said.advice.filter(|_| verdict == Verdict::Broken),
            evidence: self.evidence(),
            facts: self.facts(),
            observed: BTreeMap::from([
                ("requests".to_string(), self.responses as f64),
                ("routes".to_string(), self.routes.len() as f64),
            ]),
            artifact: None,
        }
    }

    /// Each route that cannot tell, with why — and where its long poll computed, for the
    /// team to judge meanwhile, or why that is not read here (already in parentheses).
    fn undecided(&self) -> Vec<String> {
        self.routes
            .iter()
            .filter_map(|route| match &route.finding {
                Finding::CannotTell(why) if route.computing.is_empty() => {
                    Some(format!("{}: {why}", route.name))
                }
                Finding::CannotTell(why) if crate::stack::unread_computing().is_some() => {
                    Some(format!("{}: {why} {}", route.name, route.computing))
                }
                Finding::CannotTell(why) => Some(format!(
                    "{}: {why} (its polls were sampled computing {})",
                    route.name, route.computing
                )),
                _ => None,
            })
            .collect()
    }

    /// What the report says: what broke, the lead naming every route that blocked, the
    /// first whole; then what cannot tell; then, where nothing broke, why it holds; then
    /// what the team allowed, with what each did and by which allow.
    fn what_it_says(&self, undecided: Vec<String>) -> Said {
        let mut said = Said::default();
        for route in self.routes {
            if let Some((sentence, hold)) = held(route) {
                match &route.allowed {
                    Some(allow) => said.allowed.push(format!("allowed by {allow}: {sentence}")),
                    None => {
                        said.advice
                            .get_or_insert_with(|| for_hold(&route.name, hold, route.call.clone()));
                        said.explanation.push(sentence);
                    }
                }
            }
        }
        let others: Vec<&str> = self
            .routes
            .iter()
            .filter(|r| r.rank() == 0)
            .skip(1)
            .map(|r| r.name.as_str())
            .chain(self.outside.broken().then_some(OUTSIDE))
            .collect();
        if let Some(first) = said.explanation.first_mut()
            && !others.is_empty()
        {
            first.push_str(&format!("; blocked too: {}", others.join(", ")));
        }
        self.said_outside(&mut said);
        said.explanation.extend(undecided);
        if said.explanation.is_empty() {
            said.explanation
                .push(self.nothing_held(!said.allowed.is_empty()));
        }
        said.explanation.append(&mut said.allowed);
        said
    }

    /// What the workers did outside every response, where they slept in a call there.
    fn said_outside(&self, said: &mut Said) {
        let Finding::Waits { requests, longest } = self.outside.finding else {
            return;
        };
        let call = called::held_words(self.calls, &Place::Outside);
        let sentence = format!(
            "a task on the workers outside every response — one the requests spawned, a connection's driver, a background job — {}; it slept in {requests} stretch{} of the workers' run, {} at the longest",
            match &call {
                Some(call) => format!("blocked in {call}"),
                None => "waited in a call the kernel was not sampled in".to_string(),
            },
            if requests == 1 { "" } else { "es" },
            in_ms(longest)
        );
        match &self.outside.allowed {
            Some(allow) => said.allowed.push(format!("allowed by {allow}: {sentence}")),
            None => {
                said.advice.get_or_insert_with(|| {
                    for_hold("the requests the test sent", Hold::WaitsInATask, call)
                });
                said.explanation.push(sentence);
            }
        }
    }

    /// The lead of a watch where no route held its worker: short enough for the line a
    /// holding watch prints, and what was allowed is never silent.
    fn nothing_held(&self, any_allowed: bool) -> String {
        if any_allowed {
            let names: Vec<&str> = self
                .routes
                .iter()
                .filter(|r| r.allowed.is_some())
                .map(|r| r.name.as_str())
                .chain(self.outside.allowed.is_some().then_some(OUTSIDE))
                .collect();
            return format!(
                "none of its {} routes held its worker but as allowed: {}",
                self.routes.len(),
                names.join(", ")
            );
        }
        format!(
            "none of its {} routes waited in a call or computed past {} ms in one poll ({} requests)",
            self.routes.len(),
            self.allowance.budget().as_millis(),
            self.responses,
        )
    }

    /// A line a route, its requests and what it did, for the snapshot; and one for the
    /// time outside every response where it held its worker, and the unrecorded.
    fn facts(&self) -> BTreeMap<String, String> {
        let mut facts: BTreeMap<String, String> = self
            .routes
            .iter()
            .map(|route| {
                let failed = if route.failed > 0 {
                    format!(", {} failed (5xx)", route.failed)
                } else {
                    String::new()
                };
                let allowed = route
                    .allowed
                    .as_ref()
                    .map(|allow| format!(", allowed by {allow}"))
                    .unwrap_or_default();
                let fact = format!(
                    "{} request{}{failed}: {}{}{allowed}",
                    route.requests,
                    if route.requests == 1 { "" } else { "s" },
                    verdict_of(&route.finding),
                    route.shape
                );
                (route.name.clone(), fact)
            })
            .collect();
        if rank(&self.outside.finding) == 0 {
            let allowed = self
                .outside
                .allowed
                .as_ref()
                .map(|allow| format!(", allowed by {allow}"))
                .unwrap_or_default();
            let shape = called::shape_at(self.calls, &Place::Outside)
                .map(|said| format!(": {said}"))
                .unwrap_or_default();
            facts.insert(
                "outside every response".into(),
                format!("{}{shape}{allowed}", verdict_of(&self.outside.finding)),
            );
        }
        if self.unrecorded > 0 {
            facts.insert(
                "unrecorded".into(),
                format!(
                    "{} started, never finished (their connection went away)",
                    self.unrecorded
                ),
            );
        }
        facts
    }

    /// What each route was sampled in, and the stacks of those that held their worker.
    fn evidence(&self) -> Vec<String> {
        let mut evidence = Vec::new();
        if let Source::Layer(_) = self.source {
            evidence.push("seen through a WatchLayer: every poll of each response, on the thread that ran it; not the tasks its handlers spawned, nor tokio's block_in_place hand-off (a served target's watch, Target::watch, sees both)".to_string());
        }
        for route in self.routes {
            let place = Place::Route(route.name.clone());
            evidence.push(format!(
                "{}: {}",
                route.name,
                called::tally(&route.samples, &place)
            ));
            if rank(&route.finding) == 0 {
                evidence.extend(
                    called::stacks(&route.samples, &place)
                        .into_iter()
                        .map(|line| format!("{}: {line}", route.name)),
                );
            }
        }
        evidence
    }

    /// The verdict's reason, by count of routes.
    fn reason(&self, verdict: Verdict, broken_routes: usize) -> String {
        let routes = self.routes.len();
        match verdict {
            Verdict::Holds => format!("none of the {routes} routes held its worker"),
            Verdict::Broken if self.outside.broken() => format!(
                "{broken_routes} of the {routes} routes, and a task outside every response, held their worker"
            ),
            Verdict::Broken => format!("{broken_routes} of the {routes} routes held their worker"),
            Verdict::Inconclusive => "what the requests did cannot be told here".into(),
        }
    }
}

/// What a route's finding reads as, in its snapshot line.
fn verdict_of(finding: &Finding) -> &'static str {
    match finding {
        Finding::Holds => "holds",
        Finding::Waits { .. } => "waits in a call on its worker",
        Finding::Computes { .. } => "computes past the poll budget in one poll",
        Finding::CannotTell(_) => "cannot tell",
        Finding::Unread => "not read here",
    }
}

/// The sentence a report leads with for a route that held its worker, and how: `None`
/// for one that did not.
fn held(route: &Decided) -> Option<(String, Hold)> {
    let name = &route.name;
    let all = route.requests;
    let in_requests = |n: usize| {
        format!(
            "in {n} of its {all} request{}",
            if all == 1 { "" } else { "s" }
        )
    };
    match &route.finding {
        Finding::Waits { requests, longest } => {
            let sampled = &route.sampled;
            let sentence = match (route.call.clone(), &sampled.call) {
                (Some(call), Some((seen, n))) if route.held.as_ref() == Some(seen) => format!(
                    "{name} blocked in {call} {}, {} at the longest (the kernel saw its worker there in {n} of the {} samples that caught it asleep)",
                    in_requests(*requests),
                    in_ms(*longest),
                    sampled.asleep
                ),
                (Some(call), _) => format!(
                    "{name} blocked in {call} {}, {} at the longest (the kernel handed over its stack as the worker left its CPU)",
                    in_requests(*requests),
                    in_ms(*longest)
                ),
                _ => format!(
                    "{name} waited in a call on its worker {}, {} at the longest (asleep in the kernel inside its polls; no sample caught the call)",
                    in_requests(*requests),
                    in_ms(*longest)
                ),
            };
            Some((sentence, Hold::Waits))
        }
        Finding::Computes { requests, longest } => {
            let said = format!(
                "{name} computed {} in one poll without giving its worker back {}, {}",
                in_ms(*longest),
                in_requests(*requests),
                route.computing,
            );
            // Off Linux nothing is sampled: the poll's own CPU clock decided it.
            let sentence = if crate::blocked_call::available() {
                format!(
                    "{said} (the kernel saw it running, in no system call, in {} of the {} samples of its polls)",
                    route.sampled.running,
                    route.sampled.running + route.sampled.asleep
                )
            } else {
                said
            };
            Some((sentence, Hold::Computes))
        }
        _ => None,
    }
}
