//! The probe: what shape does a real endpoint have?
//!
//! It offers a closed loop of c callers (no think time) at c = 1, 2, 4, … and watches how
//! long they wait. An async endpoint answers c callers as fast as one; a pool of k makes
//! c > k callers wait c ÷ k times as long as one request alone (Little's law), so each
//! step implies a pool: callers × a request alone's latency ÷ the step's. Once a step's
//! requests queue deeply, the sweep bisects between the most callers seen without a queue
//! and the fewest seen with one, so the knee of a pool of 40 is found between 32 and 64,
//! not at either. The estimate is read from the step with the most callers, where the
//! queue is deepest and a few percent of latency matter least.

mod limit;
mod report;
mod step;
mod sweep;

use std::time::Duration;

pub use limit::Limit;
pub use report::ProbeReport;
pub use step::ProbeStep;

use crate::client::{LoadClient, Plan};
use crate::error::{Error, Result, check_range};
use crate::limits::MAX_REQUESTS;
use crate::pool::Pool;
use crate::service_process::ServiceProcess;
use crate::usage::UsageMeter;
use crate::vocab::ClientStrategy;
use step::Settled;
use sweep::{Point, Sweep};

/// How to probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeSettings {
    /// The highest concurrency tried: the steps double from 1 and the last is this one.
    pub max_concurrency: usize,
    /// The least time each step offers load; a step lasts longer when its requests need it
    /// ([`WAVES`] of them back to back, [`ALONE_WAVES`] for the step alone).
    pub step: Duration,
    /// Whether the user chose `step`: a chosen step shorter than one request alone is
    /// refused by name, where a default one is lengthened to that request's time — a
    /// setting nobody gave never refuses the request it measures.
    pub step_chosen: bool,
}

impl Default for ProbeSettings {
    fn default() -> Self {
        ProbeSettings {
            max_concurrency: 64,
            step: Duration::from_millis(500),
            step_chosen: false,
        }
    }
}

/// Requests each caller sends back to back in a step, at the least: the first is left out
/// of the step's latency (it met an empty pool), the rest have formed the queue.
pub const WAVES: u32 = 5;

/// The least time a step of a claim's probe offers load where the claim gives none
/// (`concurrency_limit()`); lengthened to one request alone where that is longer, since
/// nobody chose it ([`ProbeSettings::step_chosen`]). The command's `probe` takes 500 ms.
pub const CLAIM_STEP: Duration = Duration::from_millis(100);

/// Requests the step alone sends at the least: its mean is the yardstick every other step
/// is divided by, so it is measured longer — and again, up to [`ALONE_RUNS`] times in
/// all, while its mean's relative standard error is above [`ALONE_NOISE`].
pub const ALONE_WAVES: u32 = 10;

/// The most runs of the step alone.
pub const ALONE_RUNS: usize = 3;

/// The step alone's relative standard error it is measured down to (if it can be in
/// [`ALONE_RUNS`] runs): 1 %, a fifth of the 5 % by which a step must queue.
pub const ALONE_NOISE: f64 = 0.01;

/// The most one step lasts however slow its requests (a step of a slow pool is cut there,
/// and its figure is read from what answered).
const LONGEST_STEP: Duration = Duration::from_secs(30);

/// No sweep measures more steps than this (doubling to 4096 is 13, the bisection ~10).
const MOST_STEPS: usize = 40;

/// Probes `url` with `client` (any lifecycle; its pool and limits bound every step).
///
/// One request is sent first, and a step in which any request fails ends the probe with an
/// error: a throughput of failures says nothing about the endpoint's shape, and a URL that
/// fails at once must not be sent hundreds of requests.
pub fn probe(client: &LoadClient, url: &str, settings: ProbeSettings) -> Result<ProbeReport> {
    let plan = Plan::get(&crate::client::check_url(url)?);
    let service = ServiceProcess::of_url(url);
    let mut report = probe_plan(
        client,
        Where {
            server: None,
            service,
        },
        &plan,
        settings,
    )?;
    report.url = url.to_string();
    Ok(report)
}

/// What the probe reads besides its requests: the server's workers when perfshape serves
/// the router, or the service's process when it runs on this machine.
#[derive(Clone, Copy, Default)]
pub(crate) struct Where<'a> {
    /// The served router's pool.
    pub(crate) server: Option<&'a Pool>,
    /// The process of a URL's service on this machine.
    pub(crate) service: Option<ServiceProcess>,
}

/// [`probe`] of any request (an endpoint's template), reading `server`'s workers or the
/// service's process too: its `url` in the report is the request, `POST /orders`.
pub(crate) fn probe_plan(
    client: &LoadClient,
    at: Where<'_>,
    plan: &Plan,
    settings: ProbeSettings,
) -> Result<ProbeReport> {
    let prober = Prober::new(client, at, plan, settings)?;
    let mut sweep = Sweep::new(settings.max_concurrency);
    let mut steps: Vec<ProbeStep> = Vec::new();
    let mut alone = None;
    while let Some(concurrency) = sweep.next() {
        if steps.len() >= MOST_STEPS {
            break;
        }
        let (step, settled) = prober.step(concurrency, &steps, alone)?;
        alone = alone.or(settled);
        sweep.record(Point {
            concurrency,
            ratio: step.ratio(),
            relative_error: step.relative_error,
        });
        steps.push(step);
    }
    Ok(ProbeReport::of(plan.label.clone(), steps, sweep.knee()))
}

/// The probe's figure again, in two steps: the step alone and the callers of `deepest` (a
/// sweep's deepest step, whose latency sets this step's length). What a claim's later
/// rounds measure once its first has swept.
pub(crate) fn probe_at(
    client: &LoadClient,
    at: Where<'_>,
    plan: &Plan,
    settings: ProbeSettings,
    deepest: &ProbeStep,
) -> Result<ProbeReport> {
    let prober = Prober::new(client, at, plan, settings)?;
    let (first, alone) = prober.step(1, &[], None)?;
    let mut steps = vec![first];
    if deepest.concurrency > 1 {
        let (step, _) = prober.step(deepest.concurrency, std::slice::from_ref(deepest), alone)?;
        steps.push(step);
    }
    Ok(ProbeReport::of(plan.label.clone(), steps, None))
}

/// What every step of one probe shares: the client, the request, the settings, and the
/// first request's latency (the length of a step before any has been measured).
struct Prober<'a> {
    client: &'a LoadClient,
    at: Where<'a>,
    plan: &'a Plan,
    settings: ProbeSettings,
    first: Duration,
}

impl<'a> Prober<'a> {
    /// Checks the settings, then sends one request: a bad URL, a dead host, a failing
    /// endpoint or a step shorter than the request is refused here, before any load.
    fn new(
        client: &'a LoadClient,
        at: Where<'a>,
        plan: &'a Plan,
        settings: ProbeSettings,
    ) -> Result<Prober<'a>> {
        check_range("max_concurrency", settings.max_concurrency, 1, 4096, "")?;
        check_range("step_ms", settings.step.as_millis(), 10, 60_000, " ms")?;
        // Two descriptors per connection when the server is in this process, plus slack.
        crate::fd_limit::ensure_fd_limit(2 * settings.max_concurrency as u64 + 256)?;
        let alone = || -> Result<Duration> {
            let run = client.run_plan(ClientStrategy::Sequential, plan, 1, None)?;
            run.require_ok()?;
            Ok(run.records.first().map(|r| r.latency()).unwrap_or_default())
        };
        let mut first = alone()?;
        let mut settings = settings;
        if settings.step < first && !settings.step_chosen {
            settings.step = first;
        }
        // A step chosen shorter than one request is refused on the quickest of three: a
        // first request pays for its connection, and one request on a busy machine can
        // take twice its time (a Python service's 25 ms took 65 ms beside another build).
        let mut tries = 1;
        while settings.step < first && tries < 3 {
            first = first.min(alone()?);
            tries += 1;
        }
        if settings.step < first {
            return Err(Error::invalid(
                "step",
                format!("{} ms", settings.step.as_millis()),
                format!(
                    "at least one request's time: {:.1} ms, the quickest of {tries} {} alone",
                    first.as_secs_f64() * 1e3,
                    plan.label
                ),
            ));
        }
        Ok(Prober {
            client,
            at,
            plan,
            settings,
            first,
        })
    }

    /// One step of `concurrency` callers, long enough for its waves by the latency the
    /// steps so far predict; with the step alone's settled latency when this is it.
    fn step(
        &self,
        concurrency: usize,
        steps: &[ProbeStep],
        alone: Option<Settled>,
    ) -> Result<(ProbeStep, Option<Settled>)> {
        let waves = if concurrency == 1 { ALONE_WAVES } else { WAVES };
        let length = (predicted_latency(steps, concurrency).unwrap_or(self.first) * waves)
            .max(self.settings.step)
            .min(LONGEST_STEP.max(self.settings.step));
        let strategy = ClientStrategy::ClosedLoop {
            users: concurrency,
            think: Duration::ZERO,
            ramp: Duration::ZERO,
            duration: length,
        };
        // No warm-up fan-out first: a step's new connections cost ~0.1 ms each on loopback,
        // under 1 % of a step, where the fan-out cost a wave of the endpoint's own work
        // per `concurrency ÷ pool`.
        let meter = UsageMeter::start(self.client, self.at.server);
        let before = self.at.service.and_then(|s| s.times());
        let run = self.load(strategy, concurrency)?;
        let after = self.at.service.and_then(|s| s.times());
        let (usage, _) = meter.finish();
        // The service's CPU over the step, in CPUs: what tells a pool of threads from one
        // thread's worth of computing (an event loop, an interpreter lock).
        let service_cpu = before.zip(after).and_then(|(before, after)| {
            let wall = run.wall.as_secs_f64();
            (wall > 0.0).then(|| after.since(&before).cpu.as_secs_f64() / wall)
        });
        if concurrency > 1 {
            let mut step = ProbeStep::of(concurrency, &run, usage, alone);
            step.service_cpu = service_cpu;
            return Ok((step, None));
        }
        let mut latencies = step::settled_latencies(&run.records).unwrap_or_default();
        let mut settled = Settled::from_latencies(&latencies, 1);
        for _ in 1..ALONE_RUNS {
            if settled.relative_error <= ALONE_NOISE {
                break;
            }
            let more = self.load(strategy, 1)?;
            latencies.extend(step::settled_latencies(&more.records).unwrap_or_default());
            settled = Settled::from_latencies(&latencies, 1);
        }
        let settled = (!latencies.is_empty()).then_some(settled);
        Ok((ProbeStep::settled(1, &run, usage, settled, None), settled))
    }

    /// One closed loop of the step, every request answered or the step refused.
    fn load(&self, strategy: ClientStrategy, concurrency: usize) -> Result<crate::run::Run> {
        let run = self
            .client
            .run_plan(strategy, self.plan, MAX_REQUESTS, None)?;
        run.require_ok()
            .map_err(|e| at_concurrency(e, concurrency))?;
        Ok(run)
    }
}

/// The latency `concurrency` callers can be expected to see: that of the nearest step
/// measured with as many callers or more (more callers never wait less), else the most
/// measured below scaled by the callers added (as if each of them queued: a pool of one).
fn predicted_latency(steps: &[ProbeStep], concurrency: usize) -> Option<Duration> {
    let above = steps
        .iter()
        .filter(|s| s.concurrency >= concurrency)
        .min_by_key(|s| s.concurrency);
    if let Some(step) = above {
        return Some(step.mean_latency);
    }
    steps.iter().max_by_key(|s| s.concurrency).map(|s| {
        s.mean_latency
            .mul_f64(concurrency as f64 / s.concurrency as f64)
    })
}

/// A step's failed requests, named with the step's concurrency.
fn at_concurrency(error: Error, concurrency: usize) -> Error {
    match error {
        Error::Failed { request, what } => Error::Failed {
            request,
            what: format!("at concurrency {concurrency}: {what}"),
        },
        Error::TooSlow { request, what } => Error::TooSlow {
            request,
            what: format!("at concurrency {concurrency}: {what}"),
        },
        other => other,
    }
}
