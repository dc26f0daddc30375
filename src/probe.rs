//! The probe: what shape does a real endpoint have?
//!
//! It offers a closed loop of c callers (no think time) for a fixed time at c = 1, 2, 4, …
//! and watches throughput. An async endpoint's throughput grows with c; a blocking one
//! stops growing at its pool size k, and by Little's law its best throughput is about
//! k ÷ (the latency of one request alone). So the probe reports where throughput stops
//! growing and the k that the best throughput implies.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::client::{LoadClient, Plan};
use crate::error::{Result, check_range};
use crate::limits::MAX_REQUESTS;
use crate::vocab::ClientStrategy;

/// How to probe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeSettings {
    /// The highest concurrency tried (the steps double from 1 up to it).
    pub max_concurrency: usize,
    /// How long each step offers load.
    pub step: Duration,
    /// A step counts as growth when its throughput beats the previous one by this factor
    /// (in percent above 100: 20 means × 1.2).
    pub growth_percent: u32,
}

impl Default for ProbeSettings {
    fn default() -> Self {
        ProbeSettings {
            max_concurrency: 64,
            step: Duration::from_millis(500),
            growth_percent: 20,
        }
    }
}

/// One step of the probe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeStep {
    /// Callers in the closed loop.
    pub concurrency: usize,
    /// Requests sent, succeeded and failed.
    pub sent: usize,
    /// Requests that succeeded.
    pub ok: usize,
    /// Successful requests per second.
    pub throughput: f64,
    /// Mean latency of the successful requests.
    #[serde(with = "crate::vocab::millis")]
    pub mean_latency: Duration,
}

/// What the probe found. `perfshape probe` writes it as JSON, which `perfshape report`
/// reads back to plot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// The URL probed.
    pub url: String,
    /// Every step, in order.
    pub steps: Vec<ProbeStep>,
    /// The concurrency after which throughput stopped growing, if it did.
    pub stops_growing_at: Option<usize>,
    /// The pool size the best throughput implies: best throughput × the latency of one
    /// request alone.
    pub pool_estimate: f64,
}

impl std::fmt::Display for ProbeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "| concurrency | ok/sent | throughput | mean latency |")?;
        writeln!(f, "|---:|---:|---:|---:|")?;
        for s in &self.steps {
            writeln!(
                f,
                "| {} | {}/{} | {:.1}/s | {:.1} ms |",
                s.concurrency,
                s.ok,
                s.sent,
                s.throughput,
                s.mean_latency.as_secs_f64() * 1e3
            )?;
        }
        match self.stops_growing_at {
            Some(c) => write!(
                f,
                "throughput stops growing at concurrency {c}: behaves like a blocking pool of ≈{:.1}",
                self.pool_estimate
            ),
            None => write!(
                f,
                "throughput still grows at concurrency {}: no cap found (async, or a pool larger than that; ≈{:.1} so far)",
                self.steps.last().map_or(0, |s| s.concurrency),
                self.pool_estimate
            ),
        }
    }
}

/// Probes `url` with `client` (any lifecycle; its pool and limits bound every step).
///
/// Steps double the concurrency until two doublings in a row bring no growth (one is not
/// enough: two callers on a 2-worker blocking tokio server often share one worker, so the
/// first doubling can stall before a backlog spreads the work) or `max_concurrency` is
/// reached. One request is sent first, and a step in which any request fails ends the
/// probe with an error: a throughput of failures says nothing about the endpoint's shape,
/// and a URL that fails at once must not be sent hundreds of requests.
pub fn probe(client: &LoadClient, url: &str, settings: ProbeSettings) -> Result<ProbeReport> {
    let plan = Plan::get(&crate::client::check_url(url)?);
    let mut report = probe_plan(client, &plan, settings)?;
    report.url = url.to_string();
    Ok(report)
}

/// [`probe`] of any request (an endpoint's template): its `url` in the report is the
/// request, `POST /orders`.
pub(crate) fn probe_plan(
    client: &LoadClient,
    plan: &Plan,
    settings: ProbeSettings,
) -> Result<ProbeReport> {
    let run = |strategy, n| client.run_plan(strategy, plan, n, None).map(|(run, _)| run);
    check_range("max_concurrency", settings.max_concurrency, 1, 4096, "")?;
    check_range("step_ms", settings.step.as_millis(), 10, 60_000, " ms")?;
    check_range("growth_percent", settings.growth_percent, 1, 1000, " %")?;
    // Two descriptors per connection when the server is in this process, plus slack.
    crate::fd_limit::ensure_fd_limit(2 * settings.max_concurrency as u64 + 256)?;
    run(ClientStrategy::Sequential, 1)?.require_ok()?;
    let growth = 1.0 + f64::from(settings.growth_percent) / 100.0;
    let mut steps: Vec<ProbeStep> = Vec::new();
    let mut concurrency = 1;
    let mut stalls = 0;
    while concurrency <= settings.max_concurrency && stalls < 2 {
        let strategy = ClientStrategy::ClosedLoop {
            users: concurrency,
            think: Duration::ZERO,
            ramp: Duration::ZERO,
            duration: settings.step,
        };
        // No warm-up fan-out first: a step's new connections cost ~0.1 ms each on loopback,
        // under 1 % of a step, where the fan-out cost a wave of the endpoint's own work
        // per `concurrency ÷ pool` (0.5 s of a 1.6 s claim on a pool of 2, measured).
        let step = run(strategy, MAX_REQUESTS)?;
        step.require_ok()?;
        let summary = step.summary(Duration::from_millis(1));
        let best = steps.iter().map(|s| s.throughput).fold(0.0, f64::max);
        stalls = if steps.is_empty() || summary.throughput >= best * growth {
            0
        } else {
            stalls + 1
        };
        steps.push(ProbeStep {
            concurrency,
            sent: summary.sent,
            ok: summary.ok,
            throughput: summary.throughput,
            mean_latency: summary.latency.map(|l| l.mean).unwrap_or_default(),
        });
        concurrency *= 2;
    }
    let best = steps.iter().map(|s| s.throughput).fold(0.0, f64::max);
    // Where it stopped growing: the first step within the growth factor of the best.
    let stops_growing_at = (stalls >= 2)
        .then(|| {
            steps
                .iter()
                .find(|s| s.throughput * growth >= best)
                .map(|s| s.concurrency)
        })
        .flatten();
    let alone = steps.first().map_or(0.0, |s| s.mean_latency.as_secs_f64());
    Ok(ProbeReport {
        url: plan.label.clone(),
        steps,
        stops_growing_at,
        pool_estimate: best * alone,
    })
}
