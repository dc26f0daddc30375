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
//! called is decided on that evidence alone (`seen::decide_on`): the call the kernel saw, a
//! sleep no brief lock makes, a stretch of CPU past the poll budget. Nothing is timed
//! against anything else, so a watched test needs no test group of its own, no retries,
//! and decides the same beside other tests on a busy machine.

mod guard;
mod layer;
mod report;
mod route;
mod seen;
mod source;

pub use self::guard::WatchGuard;
pub use self::layer::{WatchLayer, WatchService};

use std::sync::Arc;
use std::time::{Duration, Instant};

use self::report::Decisions;
use self::route::{Decided, Judging, routes_of};
use self::seen::BUSY;
use self::source::{Source, Watched, follow_this_process};
use crate::claim::{Checked, GateMode};
use crate::error::{Error, Refused, Result};
use crate::held::distance::LocalLook;
use crate::held::in_ms;
use crate::server::ledger::{self, Ledger};
use crate::target::Target;
use crate::vocab::Allow;
use crate::vocab::Allowance;
use crate::vocab::allow::Allowances;

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
        let watched = self.source.watched(self.first, self.from);
        if watched.served.is_empty() {
            return Err(self.none_reached());
        }
        let busy = self.busy();
        let mut judging = Judging {
            calls: &watched.calls,
            allowance: &self.allowance,
            busy: busy.is_some(),
            look: LocalLook::default(),
            local_is_production: self.source.local_is_production(),
            allowances: Allowances::new(self.allows.clone()),
        };
        let mut routes: Vec<Decided> = routes_of(&watched.served)
            .iter()
            .map(|(name, route)| judging.route(name, route))
            .collect();
        routes.sort_by_key(Decided::rank);
        let outside = judging.outside(&watched.outside);
        let Watched {
            served,
            unrecorded,
            calls,
            ..
        } = &watched;
        let decisions = Decisions {
            source: &self.source,
            routes: &routes,
            outside: &outside,
            calls,
            responses: served.len(),
            unrecorded: *unrecorded,
            allowance: &self.allowance,
        };
        let mut report = decisions.report(gate, self.from.elapsed());
        report.explanation.extend(judging.allowances.unmatched());
        if let Some(waiting) = busy {
            report.evidence.push(format!(
                "this process's threads waited for a CPU {:.0} % of the watch on average: a sleep no sample caught is read as a lock whose holder the machine preempted, decided by the count of requests; a route sent once that slept so past {} cannot tell",
                waiting * 100.0,
                in_ms(seen::BUSY_SLICE)
            ));
        }
        Ok(Checked::published(report, self.caller.as_deref()))
    }

    /// The error of a watch no request reached: the test's requests did not reach what it
    /// watched.
    fn none_reached(&self) -> Error {
        Error::invalid(
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
        )
    }

    /// How long this process's threads waited for a CPU while the watch ran, where the
    /// machine kept them waiting past [`BUSY`]: what explains a lone short sleep.
    fn busy(&self) -> Option<f64> {
        self.cpu
            .as_ref()
            .zip(crate::usage::CpuReading::now())
            .and_then(|(then, now)| now.waiting_since(then))
            .filter(|&waiting| waiting >= BUSY)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    /// What a watch adds to a functional test, measured, not asserted: `cargo test --lib -p
    /// perfshape watch_cost -- --ignored --nocapture` prints the median wall time of ten
    /// requests to a µs route on one worker, unwatched, watched without a decision (the
    /// watch begun and dropped), watched and decided, and — where the kernel hands over a
    /// worker's stack at its switches — watched and decided with that hand-over off: 20 of
    /// each, in turn.
    #[test]
    #[ignore = "a measurement: run it by name"]
    fn watch_cost() {
        let runtime = tokio::runtime::Runtime::new().expect("a runtime");
        let router = axum::Router::new().route("/ok", axum::routing::get(|| async { "ok" }));
        let target =
            crate::Target::serve(crate::PoolSettings::workers(1).unwrap(), router).expect("served");
        let client = reqwest::Client::new();
        let url = target.url_of("/ok").unwrap();
        let requests = || {
            runtime.block_on(async {
                for _ in 0..10 {
                    client.get(url.clone()).send().await.expect("an answer");
                }
            })
        };
        let decided = || {
            let watch = target.watch().expect("a watch");
            requests();
            let checked = watch.nothing_blocked().expect("decided");
            assert!(checked.verdict().holds(), "{}", checked.report());
        };
        const WAYS: usize = 4;
        let mut times: [Vec<Duration>; WAYS] = Default::default();
        for i in 0..21 * WAYS {
            let began = Instant::now();
            match i % WAYS {
                0 => requests(),
                1 => drop((target.watch().expect("a watch"), requests())),
                2 => decided(),
                _ => {
                    #[cfg(all(linux_reads, target_arch = "x86_64"))]
                    crate::stack::hand_over(false);
                    decided();
                    #[cfg(all(linux_reads, target_arch = "x86_64"))]
                    crate::stack::hand_over(true);
                }
            }
            // The first of each is the warm-up.
            if i >= WAYS {
                times[i % WAYS].push(began.elapsed());
            }
        }
        let mut median = |k: usize| {
            times[k].sort();
            times[k][times[k].len() / 2]
        };
        eprintln!(
            "ten requests: {:?} unwatched, {:?} watched and dropped, {:?} watched and decided, {:?} so without the hand-over (medians of 20)",
            median(0),
            median(1),
            median(2),
            median(3)
        );
    }
}
