//! What the mix claim says once decided: why its rounds cannot tell, what the server
//! received, the cause and what to do for the route that used most of its allowance, and
//! every route's figures.

use std::time::Duration;

use super::super::holding::{self, SLEEPS_AT_MOST};
use super::RouteRound;
use super::rounds::Mixing;
use crate::claim::{Advice, Claim, ClaimReport, Notes, median};
use crate::held::called;
use crate::held::in_ms;
use crate::held::remedy::{self, Hold};
use crate::pool::sampler::{Calls, Place};

/// The claim with what it says once decided, through the context's steps.
pub(super) fn said_of(
    claim: Claim<'static>,
    mixing: Mixing,
    rounds: Notes<RouteRound>,
) -> Claim<'static> {
    let (untold, untold_rounds) = (mixing.clone(), rounds.clone());
    let observed = rounds.clone();
    let (advised, advised_rounds) = (mixing.clone(), rounds.clone());
    claim
        .untold_when(move || untold_rounds.with(|rounds| untold.cannot_tell(rounds)))
        .observed(move || {
            let received =
                observed.with(|r| r.last().map(|r| r.received.clone()).unwrap_or_default());
            received
                .into_iter()
                .map(|(label, count)| (format!("received {label}"), count as f64))
                .collect()
        })
        .advise(move |report: &ClaimReport| {
            advice(
                report,
                &advised_rounds.to_vec(),
                &advised.names,
                Sampled {
                    calls: &advised.sampled.get(),
                    places: &advised.places,
                },
            )
        })
        .explain(move |report: &ClaimReport| {
            route_sentences(report, &rounds.to_vec(), &mixing.names)
        })
}

/// What the workers were sampled in over every round, and each route's place in it.
struct Sampled<'a> {
    calls: &'a Calls,
    places: &'a [Place],
}

impl Mixing {
    /// The first route whose longest poll this build cannot tell from ordinary work, and
    /// why.
    fn cannot_tell(&self, rounds: &[RouteRound]) -> Option<String> {
        let longest = |r: usize| {
            rounds
                .iter()
                .filter_map(move |x| x.held[r].map(|h| h.longest_computing))
        };
        let mut routes = self.mix.routes.iter().zip(&self.names).enumerate();
        routes.find_map(|(r, ((endpoint, _), name))| {
            holding::this_build_cannot_tell(&endpoint.allowance(), longest(r))
                .map(|why| format!("{name}: {why}"))
        })
    }
}

/// The median over the rounds of what `f` reads of each, where any round has it.
fn mid(rounds: &[RouteRound], f: &dyn Fn(&RouteRound) -> Option<f64>) -> Option<f64> {
    let values: Vec<f64> = rounds.iter().filter_map(f).collect();
    (!values.is_empty()).then(|| median(&values))
}

/// The route whose median share of its allowance is the largest: the one the report names.
fn worst_route(rounds: &[RouteRound], routes: usize) -> usize {
    let used = |r: usize| mid(rounds, &|x| x.used[r]).unwrap_or(0.0);
    (0..routes)
        .max_by(|&a, &b| used(a).total_cmp(&used(b)))
        .unwrap_or(0)
}

/// Where the mix broke, the likely cause and what to do for the route that used most of
/// its allowance, by how it held its worker.
fn advice(
    report: &ClaimReport,
    rounds: &[RouteRound],
    names: &[String],
    sampled: Sampled<'_>,
) -> Option<Advice> {
    let Sampled { calls, places } = sampled;
    if report.verdict != crate::claim::Verdict::Broken {
        return None;
    }
    let mid = |f: &dyn Fn(&RouteRound) -> Option<f64>| mid(rounds, f);
    let worst = worst_route(rounds, names.len());
    if outside_leads(rounds) {
        let how = Hold::WaitsInATask;
        return Some(remedy::for_hold(
            "the mix",
            how,
            called::call(calls, &Place::Outside, how),
        ));
    }
    let how = if mid(&|x| x.computing_used[worst]) >= mid(&|x| x.used[worst]) {
        Hold::Computes
    } else {
        Hold::Waits
    };
    Some(remedy::for_hold(
        &names[worst],
        how,
        called::call(calls, &places[worst], how),
    ))
}

/// Whether the workers' waiting outside every route's polls used more of its allowance than
/// any route did, in the median round.
fn outside_leads(rounds: &[RouteRound]) -> bool {
    let outside = mid(rounds, &|x| Some(x.outside_used)).unwrap_or_default();
    outside > 1.0 && outside > mid(rounds, &|x| x.worst().map(|(_, used)| used)).unwrap_or_default()
}

/// "/export waits ≈2.0 ms of each 20 ms request while holding its worker (10.0 %)", then
/// every route's figures and what the server received.
fn route_sentences(report: &ClaimReport, rounds: &[RouteRound], names: &[String]) -> Vec<String> {
    let mid = |f: &dyn Fn(&RouteRound) -> Option<f64>| mid(rounds, f);
    let routes = names.len();
    let alone = |r: usize| mid(&|x| Some(x.alone[r].as_secs_f64())).unwrap_or_default();
    let waiting = |r: usize| mid(&|x| x.held[r].map(|h| h.waiting.as_secs_f64()));
    let longest = |r: usize| mid(&|x| x.held[r].map(|h| h.longest_computing.as_secs_f64()));
    let secs = Duration::from_secs_f64;
    let mut lines = vec![leading_line(report, rounds, names)];
    let each: Vec<String> = (0..routes)
        .map(|r| match (waiting(r), longest(r)) {
            (Some(w), Some(l)) => format!(
                "{} waits {}, longest poll {} of {} alone",
                names[r],
                in_ms(secs(w)),
                in_ms(secs(l)),
                in_ms(secs(alone(r)))
            ),
            _ => format!("{} not split (no clocks)", names[r]),
        })
        .collect();
    lines.push(format!("route by route: {}", each.join("; ")));
    if let Some(last) = rounds.last() {
        let received: Vec<String> = last
            .received
            .iter()
            .map(|(label, count)| format!("{label} {count}"))
            .collect();
        lines.push(format!(
            "the server received, in the last round: {}",
            received.join(", ")
        ));
    }
    lines
}

/// The line that leads: how the route that used most of its allowance held its worker —
/// or the workers outside every route's polls, where they used more.
fn leading_line(report: &ClaimReport, rounds: &[RouteRound], names: &[String]) -> String {
    let mid = |f: &dyn Fn(&RouteRound) -> Option<f64>| mid(rounds, f);
    let alone = |r: usize| mid(&|x| Some(x.alone[r].as_secs_f64())).unwrap_or_default();
    let used = |r: usize| mid(&|x| x.used[r]);
    let slept = |r: usize| mid(&|x| x.held[r].map(|h| h.slept_share() / SLEEPS_AT_MOST));
    let secs = Duration::from_secs_f64;
    let worst = worst_route(rounds, names.len());
    let w = secs(mid(&|x| x.held[worst].map(|h| h.waiting.as_secs_f64())).unwrap_or_default());
    let l = secs(
        mid(&|x| x.held[worst].map(|h| h.longest_computing.as_secs_f64())).unwrap_or_default(),
    );
    let share = 100.0 * w.as_secs_f64() / alone(worst).max(f64::MIN_POSITIVE);
    if !report.verdict.holds() && outside_leads(rounds) {
        format!(
            "outside every route's polls the workers waited past their allowance ({:.1} × it in the median round): a task the routes spawned, or another task on the worker, slept in the kernel while it held the worker",
            mid(&|x| Some(x.outside_used)).unwrap_or_default()
        )
    } else if report.verdict.holds() {
        format!(
            "{} uses most of its allowance: it waits ≈{} of each {} request while holding its worker ({share:.1} %) and computes at most {} in one poll",
            names[worst],
            in_ms(w),
            in_ms(secs(alone(worst))),
            in_ms(l)
        )
    } else if mid(&|x| x.computing_used[worst]) >= used(worst) {
        format!(
            "{} computes {} in one poll without giving its worker back; it waits ≈{} of each {} request while holding it",
            names[worst],
            in_ms(l),
            in_ms(w),
            in_ms(secs(alone(worst)))
        )
    } else if slept(worst) >= used(worst) && mid(&|x| x.waiting_used[worst]).unwrap_or(0.0) <= 1.0 {
        format!(
            "{}'s polls slept in the kernel in {:.0} % of its requests (at most {:.0} %), waiting ≈{} of each {} request here",
            names[worst],
            slept(worst).unwrap_or_default() * SLEEPS_AT_MOST * 100.0,
            SLEEPS_AT_MOST * 100.0,
            in_ms(w),
            in_ms(secs(alone(worst)))
        )
    } else {
        format!(
            "{} waits ≈{} of each {} request while holding its worker ({share:.1} %)",
            names[worst],
            in_ms(w),
            in_ms(secs(alone(worst)))
        )
    }
}
