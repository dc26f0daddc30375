//! **The watch**: what a served target serves while a test's own requests reach it — no
//! load and no timing ratio, one line at the end of a functional test.
//!
//! ```
//! use axum::{Router, routing::get};
//! use perfshape::{PoolSettings, Target, Verdict};
//!
//! #[tokio::main]
//! async fn main() -> perfshape::Result {
//!     let app = Router::new()
//!         .route("/health", get(|| async { "ok" }))
//!         .route("/report", get(|| async {
//!             std::thread::sleep(std::time::Duration::from_millis(5)); // a sync call on the worker
//!             "report"
//!         }));
//!     let target = Target::serve(PoolSettings::workers(1)?, app)?;
//!     let watch = target.watch()?;
//!     // The test's own requests, sent as it sends them today.
//!     let client = reqwest::Client::new();
//!     for path in ["/health", "/report"] {
//!         let answered = client.get(target.url_of(path)?).send().await.expect("an answer");
//!         assert_eq!(answered.status(), 200);
//!     }
//!     let checked = watch.nothing_blocked()?;
//!     assert_eq!(checked.verdict(), Verdict::Broken);
//!     assert!(checked.report().headline().contains("GET /report"));
//!     Ok(())
//! }
//! ```
//!
//! While a watch is alive, the served router records every response whole (its polls and
//! its body's, each split by the worker thread's clocks into computing, waiting and
//! preempted), the pool's workers are clocked between their parks (what they ran outside
//! any response: a task the requests spawned, a connection's driver, a background job), and
//! the kernel is sampled for the call a worker sleeps in. At its end each route the test
//! called is decided on that evidence alone ([`seen::decide`]): the call the kernel saw, a
//! sleep no brief lock makes, a stretch of CPU past the poll budget. Nothing is timed
//! against anything else, so a watched test needs no test group of its own, no retries,
//! and decides the same beside other tests on a busy machine.

mod guard;
mod layer;
mod seen;
mod source;

pub use self::guard::WatchGuard;
pub use self::layer::{WatchLayer, WatchService};

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use self::seen::{BUSY, Finding, Request, Sampled, decide_on, decide_outside, millis};
use self::source::{Source, Watched, follow_this_process};
use crate::blocked_call::{BlockedCall, Seen};
use crate::claim::{Advice, Band, Checked, ClaimReport, GateMode, Verdict};
use crate::claims::called;
use crate::vocab::Allow;
use crate::vocab::allow::{Allowances, Hold as HeldBy};

/// The held worker's stacks at `place` for an allow by function to match, named only where
/// an allow asks (`wanted`): those sampled computing for a stretch, those of the calls it
/// slept in otherwise.
fn held_stacks(
    calls: &Calls,
    place: &Place,
    finding: &Finding,
    wanted: bool,
) -> std::result::Result<Vec<crate::stack::Frames>, String> {
    if !wanted {
        return Ok(Vec::new());
    }
    called::held_stacks(calls, place, matches!(finding, Finding::Computes { .. }))
}
use crate::claims::distance::LocalLook;
use crate::claims::remedy::{Hold, for_hold};
use crate::error::{Error, Refused, Result};
use crate::pool::sampler::{Calls, Place};
use crate::server::ledger::{self, Ledger};
use crate::target::Target;
use crate::vocab::Allowance;

/// How long the end of a watch waits for responses whose bodies are still being written
/// (a server drops a body a moment after its last byte reaches the client).
const RECORDED_WITHIN: Duration = Duration::from_secs(1);

/// How long the end of a watch waits for the workers to park: the tasks the requests
/// spawned run after their responses, and are the requests' doing as much as their polls.
const SETTLED_WITHIN: Duration = Duration::from_millis(200);

/// The least a watch of a service built on its served pool lasts: long enough to meet a
/// background job its builder spawned that wakes ten times a second, however quick the
/// test's requests (the idle reading the claims take, `claims::worker_watch`).
const JOBS_WITHIN: Duration = Duration::from_millis(100);

/// The setting a watch names when no request reached what it watched: a test's mistake
/// where the test decides, nothing to decide where a guard does ([`WatchGuard`]).
const NONE_REACHED: &str = "watched requests";

/// A served target watched: every response it serves recorded, its workers clocked and
/// sampled, until [`nothing_blocked`](Self::nothing_blocked) decides what they did. Made by
/// [`Target::watch`].
#[derive(Debug)]
#[must_use = "a watch decides nothing until `nothing_blocked()` is asked"]
pub struct Watch {
    source: Source,
    /// The first request's number the watch reads.
    first: u64,
    /// The poll budget, as set ([`poll_budget`](Self::poll_budget)).
    allowance: Allowance,
    /// The first setting refused, named by [`nothing_blocked`](Self::nothing_blocked).
    refused: Option<Refused>,
    /// The holds the team accepts ([`allow`](Self::allow)).
    allows: Vec<Allow>,
    from: Instant,
    /// This process's threads' CPU readings as the watch began: how long they waited for
    /// a CPU while it ran tells a busy machine ([`seen::BUSY`]).
    cpu: Option<crate::usage::CpuReading>,
    /// The thread that began the watch, by name: the test's, whose name its figures' file
    /// takes, wherever the watch is decided.
    caller: Option<String>,
    _responses: ledger::Recording,
}

impl Target {
    /// Watches what this target serves from now on — the requests a functional test sends
    /// to [`url_of`](Self::url_of) with its own client — until the watch's
    /// [`nothing_blocked`](Watch::nothing_blocked) decides, from what the worker threads
    /// did, whether any route the test called blocked its worker. No load is sent, and
    /// nothing is timed against anything else: a watched test runs in parallel with others.
    ///
    /// Only a router perfshape serves ([`Target::serve`], [`Target::serve_with`]) is seen
    /// from here; a running service's URL, or a launched service's unwrapped responses, is
    /// refused by name.
    pub fn watch(&self) -> Result<Watch> {
        let Some(server) = self.served() else {
            return Err(Error::invalid(
                "watched target",
                self,
                "a router perfshape serves (Target::serve or Target::serve_with): a running service's requests are not seen from this process, nor a launched service's polls",
            ));
        };
        follow_this_process();
        let timeline = server.pool().timeline();
        let (workers, calls) = (timeline.record(), timeline.sample());
        let responses = server.ledger().record();
        Ok(Watch::of(
            Source::Served {
                target: self.clone(),
                _workers: workers,
                _calls: calls,
            },
            server.ledger(),
            responses,
        ))
    }
}

/// One route the test called: `POST /orders`, its requests, and the paths they had
/// (`/todos/1`, `/todos/2` of `PATCH /todos/{id}`).
#[derive(Debug, Default)]
struct Route {
    requests: Vec<Request>,
    paths: std::collections::BTreeSet<String>,
}

/// A route the test called, decided: its name (`POST /orders`), what it was found to do,
/// what was sampled in its polls, its requests and how many of them failed (5xx).
#[derive(Debug)]
struct Decided {
    /// The call the kernel saw its worker asleep in, in words, with where in the code.
    call: Option<String>,
    /// That call ([`called::held_in`]).
    held: Option<BlockedCall>,
    /// Where its worker computed, from the stacks sampled ([`called::computing_at`]).
    computing: String,
    name: String,
    finding: Finding,
    sampled: Sampled,
    /// What its polls were sampled in, over all its paths, under its name.
    at: Calls,
    requests: usize,
    failed: usize,
    /// The allow that accepted its hold, where one did.
    allowed: Option<Allow>,
    /// What held its worker in words that do not change from run to run (the call, or
    /// where it computed, and the team's line), for the snapshot; empty where it held.
    shape: String,
}

impl Decided {
    /// Broken first, then what cannot tell, then what holds (an allowed hold among them).
    fn rank(&self) -> u8 {
        if self.allowed.is_some() {
            2
        } else {
            rank(&self.finding)
        }
    }
}

impl Watch {
    fn of(source: Source, ledger: &Ledger, responses: ledger::Recording) -> Watch {
        Watch {
            source,
            first: ledger.started(),
            allowance: Allowance::default(),
            refused: None,
            allows: Vec::new(),
            from: Instant::now(),
            cpu: crate::usage::CpuReading::now(),
            caller: std::thread::current().name().map(str::to_string),
            _responses: responses,
        }
    }

    /// A watch of whatever router its layer is put on, and the layer: for the functional
    /// tests that call a router in their own process without serving it —
    /// `tower::ServiceExt::oneshot`, as axum's testing example does, or axum-test's
    /// `TestServer`. Every response the layered router serves from now on is recorded, its
    /// polls timed on the thread that runs them and that thread sampled for the call it
    /// sleeps in, until [`nothing_blocked`](Self::nothing_blocked) decides.
    ///
    /// It sees less than a served target's watch ([`Target::watch`]): only the layered
    /// responses' own polls — not a task a handler spawned, nor a background job — and it
    /// cannot tell tokio's `block_in_place` hand-off, which reads as holding the thread.
    /// Where a test can reach its router by URL, serve it and watch the target.
    pub fn layer() -> (WatchLayer, Watch) {
        follow_this_process();
        let layered = Arc::new(layer::Layered::default());
        let responses = layered.ledger.record();
        // The calling thread is the one a current-thread test runtime polls on: followed
        // from the start, where a thread first met in a poll is followed a moment later.
        layered.sampler.slot_here();
        layered.sample();
        let watch = Watch::of(
            Source::Layer(Arc::clone(&layered)),
            &layered.ledger,
            responses,
        );
        (WatchLayer::new(layered), watch)
    }

    /// The most CPU one poll may use before the route computes past it (default 4 ms; 24
    /// ms where perfshape is built without optimisations, and a poll between the two is
    /// inconclusive there, naming the profile line): as
    /// [`poll_budget`](crate::Endpoint::poll_budget) is for a claim.
    pub fn poll_budget(mut self, budget: Duration) -> Watch {
        match self.allowance.with_budget(budget) {
            Ok(allowance) => self.allowance = allowance,
            Err(error) => {
                self.refused.get_or_insert_with(|| Refused::of(error));
            }
        }
        self
    }

    /// Accepts a hold by name: a route's hold (or a background task's) that `allow` matches —
    /// a function in the held worker's stack, the route, or the call — does not break the
    /// watch, and the report and its snapshot list it as allowed, with what it did. An
    /// allow that matched nothing is said in the report; one by function where the stack is
    /// not read allows nothing, and says why.
    pub fn allow(mut self, allow: Allow) -> Watch {
        if !self.allows.contains(&allow) {
            self.allows.push(allow);
        }
        self
    }

    /// Ends the watch and decides: each route the test called (by method and path) holds
    /// unless the kernel saw its worker asleep in a call inside its polls, a request's polls
    /// slept a millisecond or more outside a lock or a page fault (or two requests or more,
    /// and half of them, slept past 50 µs), or a poll computed past the poll budget (4 ms;
    /// 24 ms where perfshape is built without optimisations); and the workers' time outside
    /// every response — a task the requests spawned, a background job — holds unless it
    /// slept in a call the same way. On a machine busy enough to keep this process's
    /// threads from a CPU, a sleep no sample caught decides by the count of requests, as a
    /// lock's does. A single request that cannot tell a call from a brief lock is
    /// inconclusive and says one more tells.
    ///
    /// Every route is listed with its requests in the report and its snapshot (a broken
    /// one with the call the kernel saw, where it was sampled); a failed request (5xx) is
    /// counted and named. A watch that saw no request is refused by name: the test's
    /// requests did not reach [`Target::url_of`].
    pub fn nothing_blocked(self) -> Result<Checked> {
        if let Some(refused) = &self.refused {
            return Err(refused.to_error());
        }
        let gate = GateMode::from_env()?;
        let Watched {
            served,
            unrecorded,
            outside,
            calls,
        } = self.source.watched(self.first, self.from);
        if served.is_empty() {
            return Err(Error::invalid(
                NONE_REACHED,
                format!("none reached {}", self.source.describe()),
                match self.source {
                    Source::Served { .. } => {
                        "at least one request to target.url_of(path) while the watch runs"
                    }
                    Source::Layer(_) => {
                        "at least one request to the router the WatchLayer was put on (router.layer(layer)) while the watch runs"
                    }
                },
            ));
        }
        let mut routes: BTreeMap<String, Route> = BTreeMap::new();
        for response in &served {
            let route = routes
                .entry(format!("{} {}", response.method, route_of(&response.path)))
                .or_default();
            route.requests.push(Request {
                split: response.held.split,
                status: response.status,
            });
            route.paths.insert(response.path.clone());
        }
        let allowance = self.allowance;
        // How long this process's threads waited for a CPU while the watch ran, where the
        // machine kept them waiting past BUSY: what explains a lone short sleep.
        let busy = self
            .cpu
            .as_ref()
            .zip(crate::usage::CpuReading::now())
            .and_then(|(then, now)| now.waiting_since(then))
            .filter(|&waiting| waiting >= BUSY);
        // What the service talks to on this machine, looked at once where a route needs it.
        let look = LocalLook::default();
        let mut allowances = Allowances::new(self.allows.clone());
        let mut decided: Vec<Decided> = routes
            .iter()
            .map(|(name, route)| {
                let mut at = Calls::default();
                let place = Place::Route(name.clone());
                for path in &route.paths {
                    let from = called::route(method_of(name), path);
                    for (seen, n) in calls.at(&from) {
                        if let Some(stack) = calls.stack(&from, &seen) {
                            at.add_stack(place.clone(), seen.clone(), stack);
                        }
                        at.add(place.clone(), seen, n);
                    }
                    if let Some(left) = calls.left(&from) {
                        at.add_left(place.clone(), left);
                    }
                }
                // The workers' samples outside every response, for the route's evidence.
                for (seen, n) in calls.at(&Place::Outside) {
                    if let Some(stack) = calls.stack(&Place::Outside, &seen) {
                        at.add_stack(Place::Outside, seen.clone(), stack);
                    }
                    at.add(Place::Outside, seen, n);
                }
                let sampled = Sampled::of(&at.at(&place));
                // Looked at only for a route that sent to a local process inside its polls:
                // reading the process's connections takes milliseconds in a long test run.
                let sent = route
                    .requests
                    .iter()
                    .any(|r| r.split.is_some_and(|s| s.to_local > 0));
                let local = sent
                    .then(|| look.too_fast_to_see(self.source.local_is_production()))
                    .flatten();
                let finding = decide_on(
                    &route.requests,
                    &sampled,
                    &allowance,
                    (busy.is_some(), local.as_deref()),
                );
                // Where in the code, named only for a route that held its worker: naming
                // frames reads the binary's debug information.
                let call = (rank(&finding) == 0)
                    .then(|| called::held_words(&at, &place))
                    .flatten();
                let held = match called::held_in(&at, &place) {
                    Some((Seen::Blocked(call), _)) => Some(call),
                    _ => None,
                };
                // Named only for a route that computed past the budget, or past the
                // optimised one where this build cannot tell: naming frames reads the
                // binary's debug information.
                let undecided_stretch = matches!(finding, Finding::CannotTell(_))
                    && allowance.undecided().is_some_and(|(optimised, _)| {
                        seen::longest_computing(&route.requests) > optimised
                    });
                let computing = if matches!(finding, Finding::Computes { .. }) || undecided_stretch
                {
                    for path in &route.paths {
                        at.add_computing(
                            place.clone(),
                            calls.computing(&called::route(method_of(name), path)),
                        );
                    }
                    called::computing_at(&at, &place)
                } else {
                    String::new()
                };
                let allowed = (rank(&finding) == 0)
                    .then(|| {
                        allowances.matching(&HeldBy {
                            route: Some(name),
                            call: held.as_ref(),
                            stacks: held_stacks(&at, &place, &finding, !allowances.is_empty()),
                        })
                    })
                    .flatten();
                let shape = match finding {
                    Finding::Waits { .. } => called::shape_at(&at, &place),
                    Finding::Computes { .. } => crate::stack::computing_shape(at.computing(&place)),
                    _ => None,
                }
                .map(|said| format!(": {said}"))
                .unwrap_or_default();
                Decided {
                    shape,
                    call,
                    held,
                    computing,
                    name: name.clone(),
                    finding,
                    sampled,
                    at,
                    requests: route.requests.len(),
                    failed: route.requests.iter().filter(|r| r.status >= 500).count(),
                    allowed,
                }
            })
            .collect();
        let longest_outside = outside
            .iter()
            .map(|s| s.time.waiting)
            .max()
            .unwrap_or_default();
        let sampled_outside = Sampled::of(&calls.at(&Place::Outside));
        let outside_finding = decide_outside(longest_outside, outside.len(), &sampled_outside);
        let outside_allowed = (rank(&outside_finding) == 0)
            .then(|| {
                allowances.matching(&HeldBy {
                    route: None,
                    call: sampled_outside.call.as_ref().map(|(call, _)| call),
                    stacks: held_stacks(
                        &calls,
                        &Place::Outside,
                        &outside_finding,
                        !allowances.is_empty(),
                    ),
                })
            })
            .flatten();
        decided.sort_by_key(Decided::rank);
        let mut report = report(
            &self.source,
            &decided,
            (outside_finding, outside_allowed),
            &calls,
            (served.len(), unrecorded),
            (&allowance, gate),
            self.from.elapsed(),
        );
        report.explanation.extend(allowances.unmatched());
        if let Some(waiting) = busy {
            report.evidence.push(format!(
                "this process's threads waited for a CPU {:.0} % of the watch on average: a sleep no sample caught is read as a lock whose holder the machine preempted, decided by the count of requests; a route sent once that slept so past {} cannot tell",
                waiting * 100.0,
                millis(seen::BUSY_SLICE)
            ));
        }
        Ok(Checked::published(report, self.caller.as_deref()))
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
fn rank(finding: &Finding) -> u8 {
    match finding {
        Finding::Waits { .. } | Finding::Computes { .. } => 0,
        Finding::CannotTell(_) | Finding::Unread => 1,
        Finding::Holds => 2,
    }
}

/// The call the worker slept in, in a report's words.
fn call_of(calls: &Calls, place: &Place) -> Option<String> {
    called::held_words(calls, place)
}

/// The watch's report: one verdict over the routes, each listed with its requests, the
/// first broken one leading with the call the kernel saw.
fn report(
    source: &Source,
    routes: &[Decided],
    (outside, outside_allowed): (Finding, Option<Allow>),
    calls: &Calls,
    (responses, unrecorded): (usize, usize),
    (allowance, gate): (&Allowance, GateMode),
    elapsed: Duration,
) -> ClaimReport {
    let broken_routes = routes.iter().filter(|r| r.rank() == 0).count();
    let outside_broken = rank(&outside) == 0 && outside_allowed.is_none();
    let blocked = broken_routes + usize::from(outside_broken);
    let undecided: Vec<String> = routes
        .iter()
        .filter_map(|route| match &route.finding {
            Finding::CannotTell(why) if route.computing.is_empty() => {
                Some(format!("{}: {why}", route.name))
            }
            // Where the long poll computed, for the team to judge meanwhile, or why that
            // is not read here (already in parentheses).
            Finding::CannotTell(why) if crate::stack::unread_computing().is_some() => {
                Some(format!("{}: {why} {}", route.name, route.computing))
            }
            Finding::CannotTell(why) => Some(format!(
                "{}: {why} (its polls were sampled computing {})",
                route.name, route.computing
            )),
            _ => None,
        })
        .collect();
    // A read this platform does not make is the verdict's only where it left the watch
    // undecided: a poll past the budget is exact everywhere, and breaks it all the same.
    let unread = (blocked == 0
        && (routes.iter().any(|route| route.finding == Finding::Unread)
            || outside == Finding::Unread))
        .then(crate::thread_clock::unsplit);
    let verdict = if blocked > 0 {
        Verdict::Broken
    } else if !undecided.is_empty() || unread.is_some() {
        Verdict::Inconclusive
    } else {
        Verdict::Holds
    };
    let mut explanation = Vec::new();
    // What the team accepted, listed after what broke: what each did, and by which allow.
    let mut allowed = Vec::new();
    let mut advice: Option<Advice> = None;
    for route in routes {
        if let Some((sentence, hold)) = said(route) {
            match &route.allowed {
                Some(allow) => allowed.push(format!("allowed by {allow}: {sentence}")),
                None => {
                    advice.get_or_insert_with(|| for_hold(&route.name, hold, route.call.clone()));
                    explanation.push(sentence);
                }
            }
        }
    }
    // The lead names every route that blocked, the first one whole.
    let others: Vec<&str> = routes
        .iter()
        .filter(|r| r.rank() == 0)
        .skip(1)
        .map(|r| r.name.as_str())
        .chain(outside_broken.then_some("a task outside every response"))
        .collect();
    if let Some(first) = explanation.first_mut()
        && !others.is_empty()
    {
        first.push_str(&format!("; blocked too: {}", others.join(", ")));
    }
    if let Finding::Waits { requests, longest } = outside {
        let sentence = format!(
            "a task on the workers outside every response — one the requests spawned, a connection's driver, a background job — {}; it slept in {requests} stretch{} of the workers' run, {} at the longest",
            match call_of(calls, &Place::Outside) {
                Some(call) => format!("blocked in {call}"),
                None => "waited in a call the kernel was not sampled in".to_string(),
            },
            if requests == 1 { "" } else { "es" },
            millis(longest)
        );
        match &outside_allowed {
            Some(allow) => allowed.push(format!("allowed by {allow}: {sentence}")),
            None => {
                advice.get_or_insert_with(|| {
                    for_hold(
                        "the requests the test sent",
                        Hold::WaitsInATask,
                        call_of(calls, &Place::Outside),
                    )
                });
                explanation.push(sentence);
            }
        }
    }
    explanation.extend(undecided.iter().cloned());
    if explanation.is_empty() && !allowed.is_empty() {
        // Short enough for the line a holding watch prints: what was allowed is never silent.
        let names: Vec<&str> = routes
            .iter()
            .filter(|r| r.allowed.is_some())
            .map(|r| r.name.as_str())
            .chain(
                outside_allowed
                    .is_some()
                    .then_some("a task outside every response"),
            )
            .collect();
        explanation.push(format!(
            "none of its {} routes held its worker but as allowed: {}",
            routes.len(),
            names.join(", ")
        ));
    } else if explanation.is_empty() {
        explanation.push(format!(
            "none of its {} routes waited in a call or computed past {} ms in one poll ({responses} requests)",
            routes.len(),
            allowance.budget().as_millis(),
        ));
    }
    explanation.extend(allowed);
    let mut facts: BTreeMap<String, String> = routes
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
            (
                route.name.clone(),
                format!(
                    "{} request{}{failed}: {}{}{allowed}",
                    route.requests,
                    if route.requests == 1 { "" } else { "s" },
                    verdict_of(&route.finding),
                    route.shape
                ),
            )
        })
        .collect();
    if rank(&outside) == 0 {
        let allowed = outside_allowed
            .as_ref()
            .map(|allow| format!(", allowed by {allow}"))
            .unwrap_or_default();
        let shape = called::shape_at(calls, &Place::Outside)
            .map(|said| format!(": {said}"))
            .unwrap_or_default();
        facts.insert(
            "outside every response".into(),
            format!("{}{shape}{allowed}", verdict_of(&outside)),
        );
    }
    if unrecorded > 0 {
        facts.insert(
            "unrecorded".into(),
            format!("{unrecorded} started, never finished (their connection went away)"),
        );
    }
    let mut evidence = Vec::new();
    if let Source::Layer(_) = source {
        evidence.push("seen through a WatchLayer: every poll of each response, on the thread that ran it; not the tasks its handlers spawned, nor tokio's block_in_place hand-off (a served target's watch, Target::watch, sees both)".to_string());
    }
    for route in routes {
        let place = Place::Route(route.name.clone());
        evidence.push(format!(
            "{}: {}",
            route.name,
            called::tally(&route.at, &place)
        ));
        if rank(&route.finding) == 0 {
            evidence.extend(
                called::stacks(&route.at, &place)
                    .into_iter()
                    .map(|line| format!("{}: {line}", route.name)),
            );
        }
    }
    let reason: String = match verdict {
        Verdict::Holds => format!("none of the {} routes held its worker", routes.len()),
        Verdict::Broken if outside_broken => format!(
            "{broken_routes} of the {} routes, and a task outside every response, held their worker",
            routes.len()
        ),
        Verdict::Broken => format!(
            "{broken_routes} of the {} routes held their worker",
            routes.len()
        ),
        Verdict::Inconclusive => "what the requests did cannot be told here".into(),
    };
    // What broke, by count: each route's hold, its call and line are in its fact.
    let shape = (!verdict.holds()).then(|| reason.clone());
    ClaimReport {
        name: "no route the test called blocks its worker".to_string(),
        kind: "watch",
        relation: "routes whose requests held their worker, by what the kernel saw".into(),
        band: Band::at_most(0.0),
        ideal: None,
        expected: None,
        verdict,
        reason,
        median: blocked as f64,
        noise_floor: 0.0,
        margin: None,
        sides: Vec::new(),
        rounds: Vec::new(),
        context: BTreeMap::from([
            ("target".to_string(), source.describe()),
            ("poll budget".to_string(), allowance.describe_budget()),
        ]),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu_quota: crate::cpu_quota::CpuQuota::binding().map(|q| q.cpus),
        gate,
        unread,
        budget: Duration::ZERO,
        out_of_time: None,
        elapsed,
        limit: None,
        explanation,
        // What broke, by count: each route's hold, its call and line are in its fact.
        shape,
        advice: if verdict == Verdict::Broken {
            advice
        } else {
            None
        },
        evidence,
        facts,
        observed: BTreeMap::from([
            ("requests".to_string(), responses as f64),
            ("routes".to_string(), routes.len() as f64),
        ]),
        artifact: None,
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
fn said(route: &Decided) -> Option<(String, Hold)> {
    let Decided {
        name,
        sampled,
        requests: all,
        ..
    } = route;
    let of = |n: usize| {
        format!(
            "in {n} of its {all} request{}",
            if *all == 1 { "" } else { "s" }
        )
    };
    match &route.finding {
        Finding::Waits { requests, longest } => Some((
            match (route.call.clone(), &sampled.call) {
                (Some(call), Some((seen, n))) if route.held.as_ref() == Some(seen) => format!(
                    "{name} blocked in {call} {}, {} at the longest (the kernel saw its worker there in {n} of the {} samples that caught it asleep)",
                    of(*requests),
                    millis(*longest),
                    sampled.asleep
                ),
                (Some(call), _) => format!(
                    "{name} blocked in {call} {}, {} at the longest (the kernel handed over its stack as the worker left its CPU)",
                    of(*requests),
                    millis(*longest)
                ),
                _ => format!(
                    "{name} waited in a call on its worker {}, {} at the longest (asleep in the kernel inside its polls; no sample caught the call)",
                    of(*requests),
                    millis(*longest)
                ),
            },
            Hold::Waits,
        )),
        Finding::Computes { requests, longest } => Some((
            {
                let said = format!(
                    "{name} computed {} in one poll without giving its worker back {}, {}",
                    millis(*longest),
                    of(*requests),
                    route.computing,
                );
                // Off Linux nothing is sampled: the poll's own CPU clock decided it.
                if crate::blocked_call::available() {
                    format!(
                        "{said} (the kernel saw it running, in no system call, in {} of the {} samples of its polls)",
                        sampled.running,
                        sampled.running + sampled.asleep
                    )
                } else {
                    said
                }
            },
            Hold::Computes,
        )),
        _ => None,
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
