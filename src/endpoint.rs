//! An endpoint of a [`Target`], and the ready-made shape claims about it: each a sentence
//! whose expectation comes from the model and whose baseline is measured in the same
//! rounds as the figure it divides.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

use crate::claim::{Claim, ClaimReport, Measure};
use crate::error::{Result, check_range};
use crate::evidence::Evidence;
use crate::limits::MAX_REQUESTS;
use crate::model::Model;
use crate::pool::Pool;
use crate::probe::{ProbeSettings, probe};
use crate::run::Run;
use crate::target::Target;
use crate::vocab::{ClientStrategy, PoolSettings, ServerStrategy};

/// Requests of the baseline "one request alone", in a row (their mean): one keeps the
/// baseline cheap for a slow endpoint, and the claim's median over rounds and its noise
/// floor already absorb one slow request.
const ALONE: usize = 1;
/// The default fan-out of a claim: enough that a handler holding its worker stands out
/// by far (N× on one worker) while a healthy one costs one request's time.
const DEFAULT_FAN_OUT: usize = 10;

impl Target {
    /// An endpoint of this target: `path` (with its query, if any) must start with `/`.
    ///
    /// Sends one GET at once and fails, before any claim is measured, when the endpoint
    /// does not answer 2xx: `GET /orders answered 500 in 1 of 1 requests`, or the connect
    /// error.
    pub fn endpoint(&self, path: &str) -> Result<Endpoint<'_>> {
        let endpoint = Endpoint::new(self, path)?;
        endpoint.preflight()?;
        Ok(endpoint)
    }

    /// The demo service's endpoint for `strategy` with `work` (`/blocking?ms=20`, …).
    pub fn demo_endpoint(&self, strategy: ServerStrategy, work: Duration) -> Result<Endpoint<'_>> {
        self.endpoint(&strategy.path_and_query(work)?)
    }
}

/// One path (with its query) of a [`Target`], GET.
///
/// ```
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, Verdict};
///
/// // A handler that waits asynchronously: it gives its worker back while it waits.
/// let router = Router::new().route("/report", get(|| async {
///     tokio::time::sleep(std::time::Duration::from_millis(20)).await;
///     "done"
/// }));
/// let target = Target::serve(router, PoolSettings::workers(1)?)?;
/// let checked = target.endpoint("/report")?.does_not_block_its_worker().check()?;
/// assert_eq!(checked.verdict(), Verdict::Holds);
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Endpoint<'t> {
    target: &'t Target,
    path: String,
    concurrency: Option<usize>,
}

impl<'t> Endpoint<'t> {
    pub(crate) fn new(target: &'t Target, path: &str) -> Result<Self> {
        target.url_of(path)?;
        Ok(Endpoint {
            target,
            path: path.to_string(),
            concurrency: None,
        })
    }

    /// One GET, refusing anything but a 2xx: a broken endpoint fails here, with its
    /// status or connect error, before any load is offered.
    pub(crate) fn preflight(&self) -> Result<()> {
        self.run(ClientStrategy::Sequential, 1).map(drop)
    }

    /// The target this endpoint belongs to.
    pub fn target(&self) -> &'t Target {
        self.target
    }

    /// The path and query, e.g. `/orders?limit=10`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The full URL.
    pub fn url(&self) -> String {
        self.target
            .url_of(&self.path)
            .expect("the path was checked when the endpoint was made")
    }

    /// The number of concurrent requests a claim fans out to this endpoint (1..=100,000).
    /// Default: 10, or 4 per worker on a larger pool; for
    /// [`keeps_answering_during`](Self::keeps_answering_during), the server's workers.
    pub fn concurrency(mut self, n: usize) -> Result<Self> {
        check_range("concurrency", n, 1, MAX_REQUESTS, "")?;
        self.concurrency = Some(n);
        Ok(self)
    }

    /// Sends `n` requests the way `strategy` says and returns the run, refusing one with
    /// failed requests (`GET /orders answered 500 in 3 of 20 requests`).
    pub fn run(&self, strategy: ClientStrategy, n: usize) -> Result<Run> {
        let run = self.target.client().run(strategy, &self.url(), n)?;
        run.require_ok()?;
        Ok(run)
    }

    /// The mean time of one request alone (of a few in a row).
    fn alone(&self) -> Result<Duration> {
        Ok(self.run(ClientStrategy::Sequential, ALONE)?.wall / ALONE as u32)
    }

    fn workers(&self) -> Option<PoolSettings> {
        self.target.pool_settings()
    }

    /// The fan-out of a claim: as set, else enough to stand out on the pool.
    fn fan_out(&self) -> usize {
        self.concurrency.unwrap_or_else(|| {
            let workers = self.workers().map_or(1, |p| p.workers);
            DEFAULT_FAN_OUT.max(4 * workers)
        })
    }

    fn server_pool(&self) -> Option<&'t Pool> {
        self.target.served().map(|s| s.pool())
    }

    /// **Does not block its worker**: N concurrent requests take about one request's time
    /// (at most 2×), as they do for a handler that gives its worker back while it waits;
    /// a handler that holds its worker — `std::thread::sleep`, `std::fs`, a std mutex held
    /// across a wait, a blocking HTTP call, heavy CPU — takes ≈ ceil(N/W)× (the model),
    /// and the verdict says so in words.
    ///
    /// Seed 000's C3 on your endpoint; the baseline, one request alone, is measured in the
    /// same rounds. Sharpest on a 1-worker pool; on W workers the default N is 4 W, so a
    /// handler that holds its worker still takes ≥ 4×.
    pub fn does_not_block_its_worker(&self) -> Claim<'t> {
        let n = self.fan_out();
        let fan_out = self.concurrent(n);
        let this = self.clone();
        let alone = Measure::duration(&format!("{} alone", self.path), move || this.alone());
        let holding = self.workers().map(|pool| holding_ratio(pool, n));
        Claim::ratio(
            &format!("{} does not block its worker", self.path),
            fan_out,
            alone,
        )
        .at_most(2.0)
        .ideal(1.0)
        .context("target", self.target.describe())
        .context("n", n)
        .explain(move |report: &ClaimReport| {
            let verb = if report.verdict.holds() {
                "does not hold"
            } else {
                "holds"
            };
            let model = holding
                .map(|r| format!(" (one that held it would take ≈{r:.0}×, the model's ceil(N/W))"))
                .unwrap_or_default();
            vec![format!(
                "N = {n} concurrent took {:.1}× one request: the handler {verb} its worker{model}",
                report.median
            )]
        })
    }

    /// The wall time of `n` concurrent requests, with what the server pool's workers did
    /// meanwhile as evidence.
    fn concurrent(&self, n: usize) -> Measure<'t> {
        let evidence = Evidence::default();
        let (this, pool, seen) = (self.clone(), self.server_pool(), evidence.clone());
        let label = format!("{n} concurrent {}", self.path);
        let what = label.clone();
        Measure::duration(&label, move || {
            seen.observe(pool, || this.run(ClientStrategy::FanOut, n))
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
    pub fn keeps_answering_during(&self, slow: &Endpoint<'t>) -> Claim<'t> {
        let n = slow
            .concurrency
            .unwrap_or_else(|| slow.workers().map_or(DEFAULT_FAN_OUT, |p| p.workers));
        let quickest: Rc<Cell<Option<Duration>>> = Rc::default();
        let waits: Rc<RefCell<Vec<Duration>>> = Rc::default();
        let evidence = Evidence::default();
        let (cheap, busy, pool) = (self.clone(), slow.clone(), self.server_pool());
        let (last, waited, seen) = (Rc::clone(&quickest), Rc::clone(&waits), evidence.clone());
        let during = Measure::value(
            &format!(
                "{} wait during {n} × {} ÷ one {}",
                self.path, slow.path, slow.path
            ),
            move || {
                // A fifth of a slow request in: the slow ones hold what they hold by then.
                let after = match last.get() {
                    Some(unit) => unit / 5,
                    None => busy.alone()? / 5,
                };
                let mut answered = None;
                let run = seen.observe(pool, || {
                    let (run, probe) = busy.target.client().run_with_probe(
                        ClientStrategy::FanOut,
                        &busy.url(),
                        n,
                        Some((&cheap.url(), after)),
                    )?;
                    run.require_ok()?;
                    answered = probe;
                    Ok(run)
                })?;
                let record = answered.expect("a probe was asked for");
                let wait = record.latency();
                // A cheap request that failed gives no figure: say which and why.
                Run::new(&cheap.url(), vec![record], wait).require_ok()?;
                let unit = run
                    .records
                    .iter()
                    .map(|r| r.latency())
                    .min()
                    .unwrap_or_default();
                last.set(Some(unit));
                waited.borrow_mut().push(wait);
                Ok(wait.as_secs_f64() / unit.as_secs_f64().max(f64::MIN_POSITIVE))
            },
        );
        let (path, slow_path) = (self.path.clone(), slow.path.clone());
        let what = format!("{n} × {slow_path}");
        let during = during.evidence(move || evidence.describe(&what));
        Claim::figure(
            &format!("{} keeps answering while {} runs", self.path, slow.path),
            during,
        )
        .at_most(0.25)
        .context("target", self.target.describe())
        .context("n", n)
        .context("sent after", "a fifth of one slow request")
        .explain(move |report: &ClaimReport| {
            let mut waits = waits.borrow().clone();
            waits.sort();
            let wait = waits.get(waits.len() / 2).copied().unwrap_or_default();
            let why = if report.verdict.holds() {
                "a worker was free"
            } else {
                "every worker was held"
            };
            vec![format!(
                "{path} waited {:.1} ms while {n} × {slow_path} ran ({:.2} of one {slow_path}): {why}",
                wait.as_secs_f64() * 1e3,
                report.median
            )]
        })
    }

    /// **Concurrency limit**: the probe as a claim — raise a closed loop of callers 1, 2,
    /// 4, … and see where throughput stops growing; by Little's law the best throughput ×
    /// one request's latency is the pool the endpoint behaves like.
    pub fn concurrency_limit(&self) -> ConcurrencyLimit<'t> {
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
    /// the band: `.at_least(3.0)` for "at least 3× faster".
    pub fn faster_than(&self, other: &Endpoint<'t>) -> Claim<'t> {
        let n = self.fan_out();
        Claim::ratio(
            &format!("{} is faster than {}", self.path, other.path),
            other.concurrent(n),
            self.concurrent(n),
        )
        .context("n", n)
    }
}

/// The probe as a claim on an endpoint; see [`Endpoint::concurrency_limit`].
#[derive(Clone, Debug)]
#[must_use]
pub struct ConcurrencyLimit<'t> {
    endpoint: Endpoint<'t>,
    settings: ProbeSettings,
}

impl<'t> ConcurrencyLimit<'t> {
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

    /// Behaves like a pool of ≈`k`: the estimate ÷ `k` in [0.8, 1.25].
    pub fn about(self, k: f64) -> Claim<'t> {
        self.claim(&format!("behaves like a pool of ≈{k}"), k)
            .within(0.8, 1.25)
            .ideal(1.0)
    }

    /// Behaves like a pool of at least `k`: the estimate ÷ `k` at least 0.8.
    pub fn at_least(self, k: f64) -> Claim<'t> {
        self.claim(&format!("behaves like a pool of at least {k}"), k)
            .at_least(0.8)
    }

    /// Shows no limit up to the highest concurrency tried: the estimate ÷ that
    /// concurrency at least 0.5 (a pool of c/2 or less would have stopped the growth).
    pub fn none(self) -> Claim<'t> {
        let c = self.settings.max_concurrency;
        self.claim(&format!("has no concurrency limit up to {c}"), c as f64)
            .at_least(0.5)
    }

    fn claim(self, sentence: &str, k: f64) -> Claim<'t> {
        let ConcurrencyLimit { endpoint, settings } = self;
        let stopped: Rc<RefCell<Vec<Option<usize>>>> = Rc::default();
        let (seen, evidence) = (Rc::clone(&stopped), Evidence::default());
        let (url, target, pool) = (endpoint.url(), endpoint.target, endpoint.server_pool());
        let observed = evidence.clone();
        Claim::bound(
            &format!("{} {sentence}", endpoint.path),
            Measure::value("pool estimate", move || {
                let report = observed.observe(pool, || probe(target.client(), &url, settings))?;
                seen.borrow_mut().push(report.stops_growing_at);
                Ok(report.pool_estimate)
            })
            .expecting(crate::claim::Expected::new(k, format!("a pool of {k}")))
            // A probe takes at least three steps: growth, then two stalls.
            .floor(settings.step * 3)
            .evidence(move || evidence.describe("probe")),
        )
        .warmup(0)
        .context("target", target.describe())
        .context(
            "steps",
            format!(
                "concurrency 1, 2, 4, … up to {}, {} ms each",
                settings.max_concurrency,
                settings.step.as_millis()
            ),
        )
        .explain(move |report: &ClaimReport| {
            let stops = stopped
                .borrow()
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

/// The model's fan-out ÷ one request for a handler that holds its worker: ceil(N/W).
fn holding_ratio(pool: PoolSettings, n: usize) -> f64 {
    let work = Duration::from_millis(20);
    let wall = |client, n| {
        Model::of(ServerStrategy::Blocking, pool, work, client, n)
            .predict()
            .map_or(f64::NAN, |p| p.wall.as_secs_f64())
    };
    wall(ClientStrategy::FanOut, n) / wall(ClientStrategy::Sequential, 1)
}
