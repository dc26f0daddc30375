//! An endpoint of a [`Target`], and the ready-made shape claims about it: each a sentence
//! whose expectation comes from the model and whose baseline is measured in the same
//! rounds as the figure it divides.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::claim::{Claim, ClaimReport, Measure, median as middle};
use crate::client::{Plan, Request, Vary};
use crate::compare::Comparison;
use crate::error::{Error, Result, check_range};
use crate::evidence::Evidence;
use crate::limits::MAX_REQUESTS;
use crate::load::{Load, ScenarioInput};
use crate::probe::{ProbeReport, ProbeSettings, probe_plan};
use crate::run::Run;
use crate::target::Target;

use crate::vocab::{ClientStrategy, Held, PoolSettings};

/// Requests of the baseline "one request alone", in a row (their mean): one keeps the
/// baseline cheap for a slow endpoint, and the claim's median over rounds and its noise
/// floor already absorb one slow request.
const ALONE: usize = 1;
/// Concurrent requests per server worker in the blocking claim's fan-out (and at least
/// this many in all): a handler that holds its worker for a share b of a request makes
/// N concurrent requests take 1 + b·(N/W − 1) request times, so at 20 per worker a 10 %
/// hold reads 2.9× where a free handler reads ≈1.1× — a share the claim can bound.
const FAN_OUT_PER_WORKER: usize = 20;
/// A comparison's fan-out ([`Endpoint::faster_than`]): at least this many requests, and
/// at least [`COMPARISON_PER_WORKER`] per server worker, so a handler holding its worker
/// stands out by far.
const COMPARISON_FAN_OUT: usize = 10;
/// See [`COMPARISON_FAN_OUT`].
const COMPARISON_PER_WORKER: usize = 4;
/// The blocking claim's band: the share of each request a handler may hold its worker.
/// 5 % sits halfway (on a log scale) between what a healthy async handler reads on this
/// fan-out (≈1 %) and the 10 % of a 2 ms block in a 20 ms request.
const HELD_SHARE_AT_MOST: f64 = 0.05;
/// A held share is a positive figure: an estimate at or below zero (the fan-out as quick
/// as one request alone) is read as this, "under 0.1 %".
const LEAST_SHARE: f64 = 0.001;

/// A request template on a [`Target`] — method, path and query, headers, body, and
/// optionally a generator that varies it per request — and the ready-made shape claims
/// about it.
///
/// An endpoint owns a clone of its target (a cheap handle), so it is `'static` and
/// `Send`: a helper can return one, and its claims can be awaited in an async test.
///
/// ```
/// use axum::{Json, Router, routing::post};
/// use perfshape::{PoolSettings, Target, Verdict};
///
/// // A handler that waits asynchronously: it gives its worker back while it waits.
/// let router = Router::new().route("/orders", post(|Json(order): Json<serde_json::Value>| async move {
///     tokio::time::sleep(std::time::Duration::from_millis(20)).await;
///     Json(order)
/// }));
/// let target = Target::serve(router, PoolSettings::workers(1)?)?;
/// let order = serde_json::json!({ "item": "tea" });
/// let checked = target
///     .post("/orders")
///     .json(&order)
///     .bearer_auth("secret")
///     .does_not_block_its_worker()
///     .check()?;
/// assert_eq!(checked.verdict(), Verdict::Holds);
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone)]
pub struct Endpoint {
    target: Target,
    request: Request,
    vary: Option<Vary>,
    concurrency: Option<usize>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("target", &self.target.describe())
            .field("request", &self.request.to_string())
            .field("varied", &self.vary.is_some())
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

impl Endpoint {
    /// Adds a header to every request (as reqwest's `RequestBuilder::header`).
    pub fn header<K, V>(self, name: K, value: V) -> Self
    where
        K: TryInto<reqwest::header::HeaderName>,
        K::Error: std::fmt::Display,
        V: TryInto<reqwest::header::HeaderValue>,
        V::Error: std::fmt::Display,
    {
        self.map(|r| r.header(name, value))
    }

    /// `Authorization: Bearer <token>` on every request.
    pub fn bearer_auth(self, token: impl std::fmt::Display) -> Self {
        self.map(|r| r.bearer_auth(token))
    }

    /// The same body on every request (bytes or text).
    pub fn body(self, body: impl Into<bytes::Bytes>) -> Self {
        self.map(|r| r.body(body))
    }

    /// The same JSON body on every request, serialised once by serde (a value that cannot
    /// be serialised is named before any load).
    pub fn json<T: serde::Serialize + ?Sized>(self, value: &T) -> Self {
        self.map(|r| r.json(value))
    }

    /// Varies the request per request: `vary(index, template)` returns request `index` of
    /// each load (0, 1, …) — ids, cursors, bodies that differ. It runs on the load
    /// client's workers as each request is sent; one that panics or returns a request that
    /// cannot be built is named with its index, and its request counted as failed.
    ///
    /// ```
    /// use perfshape::{Request, Target};
    /// # let target = Target::serve(axum::Router::new(), perfshape::PoolSettings::workers(1)?)?;
    /// let orders = target.post("/orders").bearer_auth("secret").vary(|i, request: Request| {
    ///     request.json(&serde_json::json!({ "id": i, "item": "tea" }))
    /// });
    /// # let _ = orders;
    /// # Ok::<(), perfshape::Error>(())
    /// ```
    pub fn vary(
        mut self,
        vary: impl Fn(usize, Request) -> Request + Send + Sync + 'static,
    ) -> Self {
        self.vary = Some(Arc::new(vary));
        self
    }

    /// `request` on `target`, sent as it is.
    pub(crate) fn new(target: &Target, request: Request) -> Endpoint {
        Endpoint {
            target: target.clone(),
            request,
            vary: None,
            concurrency: None,
        }
    }

    fn map(mut self, f: impl FnOnce(Request) -> Request) -> Self {
        self.request = f(self.request);
        self
    }

    /// Request `index` of this endpoint's loads: the template, or the generator's.
    pub(crate) fn request_at(&self, index: usize) -> Request {
        match &self.vary {
            Some(vary) => vary(index, self.request.clone()),
            None => self.request.clone(),
        }
    }

    /// What this endpoint's load is made of, checked: refused before anything is sent
    /// when the template (or the generator's first request) cannot be built.
    pub(crate) fn plan(&self) -> Result<Plan> {
        Plan::new(self.target.base(), &self.request, self.vary.clone())
    }

    /// Sends the first request once, refusing anything but a 2xx: a broken endpoint
    /// fails here, with its status or connect error (`POST /orders answered 401 in 1 of 1
    /// requests`), before any load is offered. Every ready-made claim does this first.
    pub fn preflight(&self) -> Result<()> {
        self.run(ClientStrategy::Sequential, 1).map(drop)
    }

    /// The target this endpoint belongs to.
    pub fn target(&self) -> &Target {
        &self.target
    }

    /// The request template.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// The path and query, e.g. `/orders?limit=10`.
    pub fn path(&self) -> &str {
        self.request.path()
    }

    /// How claims name this endpoint: its path for a GET (`/report`), else method and path
    /// (`POST /orders`).
    pub fn name(&self) -> String {
        if self.request.method() == reqwest::Method::GET {
            self.request.path().to_string()
        } else {
            self.request.to_string()
        }
    }

    /// The full URL.
    pub fn url(&self) -> String {
        format!("{}{}", self.target.base(), self.request.path())
    }

    /// The number of concurrent requests a claim fans out to this endpoint (1..=100,000).
    /// Default: 20 per server worker for
    /// [`does_not_block_its_worker`](Self::does_not_block_its_worker), 10 or 4 per worker
    /// for [`faster_than`](Self::faster_than), the server's workers for
    /// [`keeps_answering_during`](Self::keeps_answering_during).
    pub fn concurrency(mut self, n: usize) -> Result<Self> {
        check_range("concurrency", n, 1, MAX_REQUESTS, "")?;
        self.concurrency = Some(n);
        Ok(self)
    }

    /// Sends `n` requests the way `strategy` says and returns the run, refusing one with
    /// failed requests (`GET /orders answered 500 in 3 of 20 requests`).
    pub fn run(&self, strategy: ClientStrategy, n: usize) -> Result<Run> {
        let run = self
            .target
            .client()
            .run_plan(strategy, &self.plan()?, n, None)?;
        run.require_ok()?;
        Ok(run)
    }

    /// One request alone (of a few in a row): its mean time, and how long it held its
    /// worker when the server says.
    pub(crate) fn alone(&self) -> Result<(Duration, Option<Held>)> {
        let run = self.run(ClientStrategy::Sequential, ALONE)?;
        Ok((run.wall / ALONE as u32, median_held(&run)))
    }

    pub(crate) fn workers(&self) -> Option<PoolSettings> {
        self.target.pool_settings()
    }

    /// The fan-out of a comparison: as set, else enough to stand out on the pool.
    fn fan_out(&self) -> usize {
        self.concurrency.unwrap_or_else(|| {
            let workers = self.workers().map_or(1, |p| p.workers);
            COMPARISON_FAN_OUT.max(COMPARISON_PER_WORKER * workers)
        })
    }

    /// This endpoint, claimed to behave like `scenario`'s server strategy with its work
    /// time (say, an async handler of 20 ms): the load goes to this endpoint, and its
    /// measures expect what the model predicts for that strategy.
    pub fn load(&self, scenario: impl Into<ScenarioInput>) -> Result<Load> {
        let scenario = scenario.into().0?;
        Load::new(self.target(), self.plan()?, scenario.clone(), scenario)
    }

    #[doc(hidden)]
    /// Offers `actual`'s load to this endpoint while the measures state `claimed`: a
    /// negative control, as [`Target::load_claiming`] is for the demo service.
    pub fn load_claiming(
        &self,
        actual: impl Into<ScenarioInput>,
        claimed: impl Into<ScenarioInput>,
    ) -> Result<Load> {
        Load::new(
            self.target(),
            self.plan()?,
            actual.into().0?,
            claimed.into().0?,
        )
    }

    /// **Does not block its worker**: the share of each request for which the handler
    /// holds its worker — estimated from N concurrent requests against one alone, in the
    /// same rounds — is at most 5 %.
    ///
    /// The model's arithmetic: on W workers, N concurrent requests whose handler holds its
    /// worker for a share b of its time d take ≈ (N/W)·b·d + (1 − b)·d, so the fan-out ÷
    /// one request alone = 1 + b·(N/W − 1), and b = (ratio − 1) ÷ (N/W − 1). A handler
    /// that gives its worker back while it waits reads ≈1 %; one that blocks 2 ms of a
    /// 20 ms request (`std::fs`, a std mutex, a blocking DNS lookup, serde on a big body)
    /// reads 10 %, and one that blocks throughout reads 100 %. N defaults to 20 per
    /// server worker (on a running service, 20), which makes 10 % stand twice the band
    /// out; the report says the share in milliseconds, and — on a router perfshape serves
    /// — what timing the handler's polls found (exact, per request).
    ///
    /// Seed 000's C3 on your endpoint. Sharpest on a 1-worker pool.
    pub fn does_not_block_its_worker(&self) -> Claim<'static> {
        let workers = self.workers().map_or(1, |p| p.workers);
        let n = self
            .concurrency
            .unwrap_or(FAN_OUT_PER_WORKER * workers)
            .max(2);
        let waves = n.div_ceil(workers) as f64;
        let shares: Arc<Mutex<Vec<HeldRound>>> = Arc::default();
        let evidence = Evidence::default();
        let (this, seen, noted) = (self.clone(), evidence.clone(), Arc::clone(&shares));
        let label = format!("held share of {n} concurrent {}", self.name());
        let what = format!("{n} concurrent {}", self.name());
        let mut rounds = 0usize;
        let held_share = Measure::value(&label, move || {
            // Alternate which goes first, as a claim's sides would be.
            rounds += 1;
            let fan_out = || seen.observe(&this.target, || this.run(ClientStrategy::FanOut, n));
            let ((alone, held), run) = if rounds % 2 == 1 {
                let alone = this.alone()?;
                (alone, fan_out()?)
            } else {
                let run = fan_out()?;
                (this.alone()?, run)
            };
            let ratio = run.wall.as_secs_f64() / alone.as_secs_f64().max(f64::MIN_POSITIVE);
            let share = ((ratio - 1.0) / (waves - 1.0)).max(LEAST_SHARE);
            noted
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(HeldRound {
                    alone,
                    ratio,
                    polls: held.or_else(|| median_held(&run)),
                });
            Ok(share)
        })
        .warm_with({
            let this = self.clone();
            move || {
                this.preflight()?;
                this.run(ClientStrategy::FanOut, n).map(drop)
            }
        })
        .evidence(move || evidence.describe(&what));
        Claim::figure(
            &format!("{} does not block its worker", self.name()),
            held_share,
        )
        .at_most(HELD_SHARE_AT_MOST)
        .ideal(0.0)
        .context("target", self.target.describe())
        .context("n", n)
        .context("held share", "(N concurrent ÷ one alone − 1) ÷ (N/W − 1)")
        .observed({
            let shares = Arc::clone(&shares);
            move || {
                let rounds = shares.lock().unwrap_or_else(|p| p.into_inner()).clone();
                HeldFigures::of(&rounds).named()
            }
        })
        .explain(move |report: &ClaimReport| {
            let rounds = shares.lock().unwrap_or_else(|p| p.into_inner()).clone();
            held_sentences(report, &rounds, n)
        })
    }

    /// The wall time of `n` concurrent requests, with what the server pool's workers did
    /// meanwhile as evidence.
    fn concurrent(&self, n: usize) -> Measure<'static> {
        let evidence = Evidence::default();
        let (this, seen) = (self.clone(), evidence.clone());
        let label = format!("{n} concurrent {}", self.name());
        let what = label.clone();
        Measure::duration(&label, move || {
            seen.observe(&this.target, || this.run(ClientStrategy::FanOut, n))
                .map(|run| run.wall)
        })
        .evidence(move || evidence.describe(&what))
    }

    /// **Keeps answering**: this (cheap) endpoint, sent while `slow` is served to a fan-out
    /// that can fill every worker, waits less than a quarter of one `slow` request's time.
    /// On an async or offloading server a worker is free and it answers at once (the
    /// model: 0); when `slow` holds its workers it waits for one (the model: the rest of
    /// the slow work, 0.8 of it).
    ///
    /// Seed 000's C4 on your service. `slow` is sent `slow.concurrency` times (default:
    /// the server's workers, which a handler holding its worker fills exactly), and this
    /// endpoint a fifth of a `slow` request's time later. The unit is measured in the same
    /// run: the quickest of those `slow` requests, one served without queueing.
    pub fn keeps_answering_during(&self, slow: &Endpoint) -> Claim<'static> {
        let n = slow
            .concurrency
            .unwrap_or_else(|| slow.workers().map_or(COMPARISON_FAN_OUT, |p| p.workers));
        let waits: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let evidence = Evidence::default();
        let (cheap, busy, seen) = (self.clone(), slow.clone(), evidence.clone());
        let waited = Arc::clone(&waits);
        let mut quickest: Option<Duration> = None;
        let during = Measure::value(
            &format!(
                "{} wait during {n} × {} ÷ one {}",
                self.name(),
                slow.name(),
                slow.name()
            ),
            move || {
                // A fifth of a slow request in: the slow ones hold what they hold by then.
                let after = match quickest {
                    Some(unit) => unit / 5,
                    None => busy.alone()?.0 / 5,
                };
                let (slow_plan, cheap_plan) = (busy.plan()?, cheap.plan()?);
                let mut run = seen.observe(&busy.target, || {
                    let run = busy.target.client().run_plan(
                        ClientStrategy::FanOut,
                        &slow_plan,
                        n,
                        Some((&cheap_plan, after)),
                    )?;
                    run.require_ok()?;
                    Ok(run)
                })?;
                let record = run.canary.take().expect("a canary was asked for");
                let wait = record.latency();
                // A cheap request that failed gives no figure: say which and why.
                Run::new(cheap_plan.label.clone(), vec![record], wait).require_ok()?;
                let unit = run
                    .records
                    .iter()
                    .map(|r| r.latency())
                    .min()
                    .unwrap_or_default();
                quickest = Some(unit);
                waited.lock().unwrap_or_else(|p| p.into_inner()).push(wait);
                Ok(wait.as_secs_f64() / unit.as_secs_f64().max(f64::MIN_POSITIVE))
            },
        )
        .warm_with({
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
        Claim::figure(
            &format!("{name} keeps answering while {slow_name} runs"),
            during,
        )
        .at_most(0.25)
        .context("target", self.target.describe())
        .context("n", n)
        .context("sent after", "a fifth of one slow request")
        .explain(move |report: &ClaimReport| {
            let mut waits = waits.lock().unwrap_or_else(|p| p.into_inner()).clone();
            waits.sort();
            let wait = waits.get(waits.len() / 2).copied().unwrap_or_default();
            let why = if report.verdict.holds() {
                "a worker was free"
            } else {
                "every worker was held"
            };
            vec![format!(
                "{name} waited {:.1} ms while {n} × {slow_name} ran ({:.2} of one {slow_name}): {why}",
                wait.as_secs_f64() * 1e3,
                report.median
            )]
        })
    }

    /// **Concurrency limit**: the probe as a claim — raise a closed loop of callers 1, 2,
    /// 4, … and see where throughput stops growing; by Little's law the best throughput ×
    /// one request's latency is the pool the endpoint behaves like.
    pub fn concurrency_limit(&self) -> ConcurrencyLimit {
        ConcurrencyLimit {
            endpoint: self.clone(),
            settings: ProbeSettings {
                max_concurrency: 16,
                step: Duration::from_millis(100),
                ..ProbeSettings::default()
            },
        }
    }

    /// **Faster than**: `other`'s fan-out of N ÷ this endpoint's, both measured in the
    /// same interleaved rounds (old vs new implementation, on one target or two). Give
    /// the band: `.at_least(3.0)` for "at least 3× faster". On two targets the sentence
    /// names both (name them with [`Target::named`]).
    pub fn faster_than(&self, other: &Endpoint) -> Claim<'static> {
        let n = self.fan_out();
        let (this, that) = if self.target.same_service(&other.target) {
            (self.name(), other.name())
        } else {
            (
                format!("{} on {}", self.name(), self.target.describe()),
                format!("{} on {}", other.name(), other.target.describe()),
            )
        };
        Claim::ratio(
            &format!("{this} is faster than {that}"),
            other.concurrent(n),
            self.concurrent(n),
        )
        .context("n", n)
    }

    /// The probe of this endpoint on its target's load client, its usage evidence kept.
    fn probe(&self, evidence: &Evidence, settings: ProbeSettings) -> Result<ProbeReport> {
        let plan = self.plan()?;
        let server = self.target.served().map(|s| s.pool());
        evidence.observe(&self.target, || {
            probe_plan(self.target.client(), server, &plan, settings)
        })
    }

    /// **Compared with** `base`: this endpoint is the candidate (the new build), `base`
    /// the same request on the old one; both are measured in the same interleaved rounds,
    /// under a fan-out by default (10, or 4 per server worker), and the [`Comparison`]
    /// makes the claim — [`slower_by_at_most`](Comparison::slower_by_at_most) or
    /// [`faster_by_at_least`](Comparison::faster_by_at_least).
    pub fn compared_with(&self, base: &Endpoint) -> Comparison {
        Comparison::new(self, base, self.fan_out().max(base.fan_out()))
    }
}

/// A probe's steps, for a claim's context: `concurrency 1, 2, 4, … up to 16, 100 ms each`.
fn steps(settings: ProbeSettings) -> String {
    format!(
        "concurrency 1, 2, 4, … up to {}, {} ms each",
        settings.max_concurrency,
        settings.step.as_millis()
    )
}

/// What one round of the blocking claim saw besides its figure.
#[derive(Clone, Copy, Debug)]
struct HeldRound {
    alone: Duration,
    ratio: f64,
    /// The handler's polls per request (their median), when perfshape serves the target.
    polls: Option<Held>,
}

/// The median request's [`Held`] in `run`, when the server reported it.
fn median_held(run: &Run) -> Option<Held> {
    let mut held: Vec<Held> = run.records.iter().filter_map(|r| r.held).collect();
    held.sort_by_key(|h| h.total);
    held.get(held.len() / 2).copied()
}

/// The medians over a blocking claim's rounds.
struct HeldFigures {
    /// One request alone, in seconds.
    alone: f64,
    /// N concurrent ÷ one alone.
    ratio: f64,
    /// The handler's polls per request, in seconds (total, longest), when timed.
    polls: Option<(f64, f64)>,
}

impl HeldFigures {
    fn of(rounds: &[HeldRound]) -> HeldFigures {
        let polls: Vec<Held> = rounds.iter().filter_map(|r| r.polls).collect();
        HeldFigures {
            alone: middle(
                &rounds
                    .iter()
                    .map(|r| r.alone.as_secs_f64())
                    .collect::<Vec<f64>>(),
            ),
            ratio: middle(&rounds.iter().map(|r| r.ratio).collect::<Vec<f64>>()),
            polls: (!polls.is_empty()).then(|| {
                (
                    middle(
                        &polls
                            .iter()
                            .map(|p| p.total.as_secs_f64())
                            .collect::<Vec<f64>>(),
                    ),
                    middle(
                        &polls
                            .iter()
                            .map(|p| p.longest.as_secs_f64())
                            .collect::<Vec<f64>>(),
                    ),
                )
            }),
        }
    }

    fn named(&self) -> Vec<(String, f64)> {
        let mut figures = vec![
            ("alone ms".to_string(), self.alone * 1e3),
            ("fan-out ÷ alone".to_string(), self.ratio),
        ];
        if let Some((total, longest)) = self.polls {
            figures.push(("polled share".to_string(), total / self.alone));
            figures.push(("longest poll ms".to_string(), longest * 1e3));
        }
        figures
    }
}

/// "holds its worker ≈2.0 ms of each 20 ms request (10 %)", from the estimate, and what
/// the handler's timed polls say when there are any.
fn held_sentences(report: &ClaimReport, rounds: &[HeldRound], n: usize) -> Vec<String> {
    let HeldFigures {
        alone,
        ratio,
        polls,
    } = HeldFigures::of(rounds);
    let share = report.median;
    let verb = if report.verdict.holds() {
        "gives its worker back"
    } else {
        "holds its worker"
    };
    let mut lines = vec![format!(
        "{verb}: ≈{:.1} ms of each {:.0} ms request ({:.1} %), from N = {n} concurrent taking {ratio:.1}× one request",
        share * alone * 1e3,
        alone * 1e3,
        share * 100.0
    )];
    if let Some((total, longest)) = polls {
        lines.push(format!(
            "the handler's polls, timed: {:.2} ms of each request ({:.1} %), the longest {:.2} ms",
            total * 1e3,
            100.0 * total / alone,
            longest * 1e3
        ));
    }
    lines
}

/// The probe as a claim on an endpoint; see [`Endpoint::concurrency_limit`].
#[derive(Clone, Debug)]
#[must_use]
pub struct ConcurrencyLimit {
    endpoint: Endpoint,
    settings: ProbeSettings,
}

impl ConcurrencyLimit {
    /// The highest concurrency tried (default 16; the steps double from 1).
    pub fn up_to(mut self, max_concurrency: usize) -> Self {
        self.settings.max_concurrency = max_concurrency;
        self
    }

    /// How long each step offers load (default 100 ms).
    pub fn step(mut self, step: Duration) -> Self {
        self.settings.step = step;
        self
    }

    /// **Limited by the machine's CPU**, not by a pool: at the plateau (the steps where
    /// throughput stopped growing; without one, the highest concurrency tried) the machine
    /// was busy past 0.75 — and, when perfshape serves the target, this load had or wanted
    /// it (this process used a quarter of it, or its threads waited for a CPU), so the CPU
    /// is the load's limit, not merely busy with another process's work. The
    /// figure is that CPU pressure, 1 at the thresholds
    /// ([`Usage::cpu_pressure`](crate::usage::Usage::cpu_pressure)). What a cheap endpoint
    /// on a small machine reads: its server and perfshape's load client share the cores.
    /// (Without a plateau too: a machine whose other work comes and goes can make the
    /// throughput of a saturated CPU look as if it still grew.)
    pub fn limited_by_cpu(self) -> Claim<'static> {
        self.attribution("is limited by the machine's CPU", None)
            .at_least(1.0)
    }

    /// **Limited by a pool** (or a lock), not by the CPU: throughput stopped growing while
    /// the CPU pressure at the plateau was under 1 (without a plateau the figure is the
    /// most a pressure can read, 1 ÷ 0.75, a saturated machine: no limit is no pool).
    pub fn limited_by_a_pool(self) -> Claim<'static> {
        let most = 1.0 / crate::usage::SATURATED;
        self.attribution("is limited by a pool, not by the CPU", Some(most))
            .at_most(1.0)
    }

    /// The CPU pressure at the probe's plateau; without one, `no_plateau`, or when that is
    /// `None` the pressure at the highest concurrency tried.
    fn attribution(self, sentence: &str, no_plateau: Option<f64>) -> Claim<'static> {
        let ConcurrencyLimit { endpoint, settings } = self;
        let (evidence, this) = (Evidence::default(), endpoint.clone());
        let observed = evidence.clone();
        let sentences: Arc<Mutex<Vec<String>>> = Arc::default();
        let said = Arc::clone(&sentences);
        Claim::figure(
            &format!("{} {sentence}", endpoint.name()),
            Measure::value("CPU pressure at the plateau", move || {
                let report = this.probe(&observed, settings)?;
                said.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(report.sentence());
                let usage = match (report.stops_growing_at, no_plateau) {
                    (None, Some(figure)) => return Ok(figure),
                    (None, None) => report.steps.last().map(|s| s.usage),
                    (Some(_), _) => report.plateau,
                };
                match usage.and_then(|u| u.cpu_pressure()) {
                    // A figure is positive: an idle machine reads "under 0.1 %".
                    Some(pressure) => Ok(pressure.max(LEAST_SHARE)),
                    // Without the machine's figure there is no attribution to claim.
                    None => Err(Error::Limited {
                        what: report.sentence(),
                    }),
                }
            })
            .floor(settings.step * 3)
            .evidence(move || evidence.describe("probe")),
        )
        .warmup(0)
        .context("target", endpoint.target.describe())
        .context("steps", steps(settings))
        .explain(move |_: &ClaimReport| {
            let mut sentences = sentences.lock().unwrap_or_else(|p| p.into_inner()).clone();
            sentences.truncate(1);
            sentences
        })
    }

    /// Behaves like a pool of ≈`k`: the estimate ÷ `k` in [0.8, 1.25].
    pub fn about(self, k: f64) -> Claim<'static> {
        self.claim(&format!("behaves like a pool of ≈{k}"), k)
            .within(0.8, 1.25)
            .ideal(1.0)
    }

    /// Behaves like a pool of at least `k`: the estimate ÷ `k` at least 0.8.
    pub fn at_least(self, k: f64) -> Claim<'static> {
        self.claim(&format!("behaves like a pool of at least {k}"), k)
            .at_least(0.8)
    }

    /// Shows no limit up to the highest concurrency tried: the estimate ÷ that
    /// concurrency at least 0.5 (a pool of c/2 or less would have stopped the growth).
    pub fn none(self) -> Claim<'static> {
        let c = self.settings.max_concurrency;
        self.claim(&format!("has no concurrency limit up to {c}"), c as f64)
            .at_least(0.5)
    }

    fn claim(self, sentence: &str, k: f64) -> Claim<'static> {
        let ConcurrencyLimit { endpoint, settings } = self;
        let stopped: Arc<Mutex<Vec<Option<usize>>>> = Arc::default();
        let (seen, evidence) = (Arc::clone(&stopped), Evidence::default());
        let (observed, this) = (evidence.clone(), endpoint.clone());
        Claim::bound(
            &format!("{} {sentence}", endpoint.name()),
            Measure::value("pool estimate", move || {
                let report = this.probe(&observed, settings)?;
                seen.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(report.stops_growing_at);
                if report.limit.is_perfshapes_own() {
                    // A plateau of the machine's CPU or of the load client measures
                    // perfshape, not the service: no verdict about a pool is taken from it.
                    return Err(Error::Limited {
                        what: report.sentence(),
                    });
                }
                Ok(report.pool_estimate)
            })
            .expecting(crate::claim::Expected::new(k, format!("a pool of {k}")))
            // A probe takes at least three steps: growth, then two stalls.
            .floor(settings.step * 3)
            .evidence(move || evidence.describe("probe")),
        )
        .warmup(0)
        .context("target", endpoint.target.describe())
        .context("steps", steps(settings))
        .explain(move |report: &ClaimReport| {
            let stops = stopped
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .map(|s| s.map_or("still growing".to_string(), |c| format!("stops at {c}")))
                .collect::<Vec<_>>()
                .join(", ");
            vec![format!(
                "behaves like a pool of ≈{:.1} (throughput per round: {stops})",
                report.median * k
            )]
        })
    }
}
