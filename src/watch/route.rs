//! Each route a watched test called, decided: its requests gathered under one name
//! (`PATCH /todos/{id}`), what the workers were sampled in during its polls, the rule of
//! `seen`'s rule applied, and — for a route that held its worker — the call, the
//! team's line and the allow that accepts it. The workers' time outside every response is
//! decided beside the routes, the same way.

use std::collections::{BTreeMap, BTreeSet};

use super::seen::{self, Around, Finding, Sampled, WatchedRequest, decide_on, decide_outside};
use crate::blocked_call::{BlockedCall, Seen};
use crate::held::called;
use crate::held::distance::LocalLook;
use crate::pool::sampler::{Calls, Place};
use crate::pool::timeline::Segment;
use crate::server::ledger::Served;
use crate::vocab::Allow;
use crate::vocab::Allowance;
use crate::vocab::allow::{Allowances, Hold as HeldBy};

/// One route the test called: `POST /orders`, its requests, and the paths they had
/// (`/todos/1`, `/todos/2` of `PATCH /todos/{id}`).
#[derive(Debug, Default)]
pub(super) struct Route {
    requests: Vec<WatchedRequest>,
    paths: BTreeSet<String>,
}

/// The responses served, gathered by route (method and path, an id read as `{id}`).
pub(super) fn routes_of(served: &[Served]) -> BTreeMap<String, Route> {
    let mut routes: BTreeMap<String, Route> = BTreeMap::new();
    for response in served {
        let route = routes
            .entry(format!("{} {}", response.method, route_of(&response.path)))
            .or_default();
        route.requests.push(WatchedRequest {
            split: response.held.split,
            status: response.status,
        });
        route.paths.insert(response.path.clone());
    }
    routes
}

/// A route the test called, decided: its name (`POST /orders`), what it was found to do,
/// what was sampled in its polls, its requests and how many of them failed (5xx).
#[derive(Debug)]
pub(super) struct Decided {
    /// The call the kernel saw its worker asleep in, in words, with where in the code.
    pub(super) call: Option<String>,
    /// That call ([`called::held_in`]).
    pub(super) held: Option<BlockedCall>,
    /// Where its worker computed, from the stacks sampled ([`called::computing_at`]).
    pub(super) computing: String,
    pub(super) name: String,
    pub(super) finding: Finding,
    pub(super) sampled: Sampled,
    /// What its polls were sampled in, over all its paths, under its name.
    pub(super) samples: Calls,
    pub(super) requests: usize,
    pub(super) failed: usize,
    /// The allow that accepted its hold, where one did.
    pub(super) allowed: Option<Allow>,
    /// What held its worker in words that do not change from run to run (the call, or
    /// where it computed, and the team's line), for the snapshot; empty where it held.
    pub(super) shape: String,
}

impl Decided {
    /// Broken first, then what cannot tell, then what holds (an allowed hold among them).
    pub(super) fn rank(&self) -> u8 {
        if self.allowed.is_some() {
            2
        } else {
            rank(&self.finding)
        }
    }
}

/// The workers' time outside every response, decided, and the allow that accepted its
/// hold, where one did.
#[derive(Debug)]
pub(super) struct BetweenResponses {
    pub(super) finding: Finding,
    pub(super) allowed: Option<Allow>,
}

impl BetweenResponses {
    /// Whether it broke the watch: held its worker, and no allow accepted it.
    pub(super) fn broken(&self) -> bool {
        rank(&self.finding) == 0 && self.allowed.is_none()
    }
}

/// What every route of one watch is decided against: what the workers were sampled in, the
/// poll budget, what around the service bears on a reading, and the team's allows.
pub(super) struct Judging<'a> {
    pub(super) calls: &'a Calls,
    pub(super) allowance: &'a Allowance,
    /// The machine kept this process's threads from a CPU while the watch ran.
    pub(super) busy: bool,
    /// What the service talks to on this machine, looked at once where a route needs it.
    pub(super) look: LocalLook,
    /// A local process the service talks to is the one it talks to in production.
    pub(super) local_is_production: bool,
    pub(super) allowances: Allowances,
}

impl Judging<'_> {
    /// Decides one route from what its polls did and what they were sampled in.
    pub(super) fn route(&mut self, name: &str, route: &Route) -> Decided {
        let place = Place::Route(name.to_string());
        let mut samples = self.samples_of(name, route);
        let sampled = Sampled::of(&samples.at(&place));
        let local = self.local(route);
        let held = match called::held_in(&samples, &place) {
            Some((Seen::Blocked(call), _)) => Some(call),
            _ => None,
        };
        let around = Around {
            busy: self.busy,
            local: local.as_deref(),
            lock_handed_over: samples
                .left(&place)
                .is_some_and(|left| left.call == BlockedCall::Lock),
        };
        let finding = decide_on(&route.requests, &sampled, self.allowance, around);
        // Where in the code, named only for a route that held its worker: naming frames
        // reads the binary's debug information.
        let call = (rank(&finding) == 0)
            .then(|| called::held_words(&samples, &place))
            .flatten();
        let computing = self.computing(name, route, &finding, &mut samples);
        let allowed = (rank(&finding) == 0)
            .then(|| {
                let stacks = self.held_stacks(&samples, &place, &finding);
                self.allowances.matching(&HeldBy {
                    route: Some(name),
                    call: held.as_ref(),
                    stacks,
                })
            })
            .flatten();
        let shape = match finding {
            Finding::Waits { .. } => called::shape_at(&samples, &place),
            Finding::Computes { .. } => crate::stack::computing_shape(samples.computing(&place)),
            _ => None,
        }
        .map(|said| format!(": {said}"))
        .unwrap_or_default();
        Decided {
            shape,
            call,
            held,
            computing,
            name: name.to_string(),
            finding,
            sampled,
            samples,
            requests: route.requests.len(),
            failed: route.requests.iter().filter(|r| r.status >= 500).count(),
            allowed,
        }
    }

    /// What the route's polls were sampled in, over all its paths, under its name; and the
    /// workers' samples outside every response, for its evidence.
    fn samples_of(&self, name: &str, route: &Route) -> Calls {
        let calls = self.calls;
        let mut samples = Calls::default();
        let place = Place::Route(name.to_string());
        for path in &route.paths {
            let from = called::route(method_of(name), path);
            for (seen, n) in calls.at(&from) {
                if let Some(stack) = calls.stack(&from, &seen) {
                    samples.add_stack(place.clone(), seen.clone(), stack);
                }
                samples.add(place.clone(), seen, n);
            }
            if let Some(left) = calls.left(&from) {
                samples.add_left(place.clone(), left);
            }
        }
        for (seen, n) in calls.at(&Place::Outside) {
            if let Some(stack) = calls.stack(&Place::Outside, &seen) {
                samples.add_stack(Place::Outside, seen.clone(), stack);
            }
            samples.add(Place::Outside, seen, n);
        }
        samples
    }

    /// Why a round trip to a local process cannot be told, looked at only for a route that
    /// sent to one inside its polls: reading the process's connections takes milliseconds
    /// in a long test run.
    fn local(&self, route: &Route) -> Option<String> {
        let sent = route
            .requests
            .iter()
            .any(|r| r.split.is_some_and(|s| s.to_local > 0));
        sent.then(|| self.look.too_fast_to_see(self.local_is_production))
            .flatten()
    }

    /// Where the route's worker computed, named only for a route that computed past the
    /// budget, or past the optimised one where this build cannot tell: naming frames reads
    /// the binary's debug information.
    fn computing(
        &self,
        name: &str,
        route: &Route,
        finding: &Finding,
        samples: &mut Calls,
    ) -> String {
        let undecided_stretch = matches!(finding, Finding::CannotTell(_))
            && self
                .allowance
                .undecided()
                .is_some_and(|(optimised, _)| seen::longest_computing(&route.requests) > optimised);
        if !matches!(finding, Finding::Computes { .. }) && !undecided_stretch {
            return String::new();
        }
        let place = Place::Route(name.to_string());
        for path in &route.paths {
            samples.add_computing(
                place.clone(),
                self.calls.computing(&called::route(method_of(name), path)),
            );
        }
        called::computing_at(samples, &place)
    }

    /// The held worker's stacks at `place` for an allow by function to match, read only
    /// where an allow could ask: those sampled computing for a stretch, those of the calls
    /// it slept in otherwise.
    fn held_stacks(
        &self,
        calls: &Calls,
        place: &Place,
        finding: &Finding,
    ) -> Result<Vec<crate::stack::Frames>, String> {
        if self.allowances.is_empty() {
            return Ok(Vec::new());
        }
        called::held_stacks(calls, place, matches!(finding, Finding::Computes { .. }))
    }

    /// Decides the workers' stretches outside every response that slept or waited.
    pub(super) fn outside(&mut self, outside: &[Segment]) -> BetweenResponses {
        let longest = outside
            .iter()
            .map(|s| s.time.waiting)
            .max()
            .unwrap_or_default();
        let sampled = Sampled::of(&self.calls.at(&Place::Outside));
        let finding = decide_outside(longest, outside.len(), &sampled);
        let allowed = (rank(&finding) == 0)
            .then(|| {
                let stacks = self.held_stacks(self.calls, &Place::Outside, &finding);
                self.allowances.matching(&HeldBy {
                    route: None,
                    call: sampled.call.as_ref().map(|(call, _)| call),
                    stacks,
                })
            })
            .flatten();
        BetweenResponses { finding, allowed }
    }
}

/// The route a path is one of: each segment that is an id — all digits, or a UUID — read
/// as `{id}`, so that `PATCH /todos/1` and `PATCH /todos/2` are one route, as the router's
/// own `/todos/{id}` is (a served router is any tower service: its matched path is not
/// seen from outside it).
fn route_of(path: &str) -> String {
    let id = |segment: &str| {
        (!segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()))
            || (segment.len() == 36
                && segment.bytes().filter(|&b| b == b'-').count() == 4
                && segment.bytes().all(|b| b == b'-' || b.is_ascii_hexdigit()))
    };
    path.split('/')
        .map(|segment| if id(segment) { "{id}" } else { segment })
        .collect::<Vec<_>>()
        .join("/")
}

/// The method of a route's name (`POST` of `POST /orders`).
fn method_of(route: &str) -> &str {
    route.split_once(' ').map_or(route, |(method, _)| method)
}

/// Broken findings first, then what cannot tell, then what holds.
pub(super) fn rank(finding: &Finding) -> u8 {
    match finding {
        Finding::Waits { .. } | Finding::Computes { .. } => 0,
        Finding::CannotTell(_) | Finding::Unread => 1,
        Finding::Holds => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_in_a_path_is_one_route() {
        assert_eq!(route_of("/todos/17"), "/todos/{id}");
        assert_eq!(
            route_of("/users/1b4e28ba-2fa1-11d2-883f-0016d3cca427/orders/2"),
            "/users/{id}/orders/{id}"
        );
        assert_eq!(route_of("/items/sku-0042"), "/items/sku-0042");
        assert_eq!(route_of("/"), "/");
        assert_eq!(route_of("/v2/health"), "/v2/health");
    }
}
