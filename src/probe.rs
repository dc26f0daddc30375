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
use crate::error::{Error, Result, check_range};
use crate::limits::MAX_REQUESTS;
use crate::pool::Pool;
use crate::usage::{Usage, UsageMeter};
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
    /// What the machine and the pools did over the step.
    #[serde(default)]
    pub usage: Usage,
    /// The bound that ended the step early, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<crate::cut_short::CutShort>,
}

/// What stopped the throughput growing, judged from the machine and the pools at the
/// plateau: Little's law turns any plateau into "a pool of ≈k", so the probe looks before
/// it says so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// Throughput still grew at the highest concurrency tried.
    None,
    /// Flat while the machine's CPU and the load client had room: a pool or a lock in the
    /// service (or in front of it).
    Pool,
    /// The machine's CPU was saturated — the service and perfshape's own load client share
    /// it: a figure about the machine, not a pool.
    Cpu,
    /// The load client's workers were saturated while the CPU was not: perfshape was the
    /// limit.
    LoadClient,
    /// The machine's CPU use could not be read (no `/proc/stat`), so the plateau is not
    /// attributed.
    #[default]
    NotAttributed,
}

impl Limit {
    /// Whether the limit is perfshape's or the machine's, so that no claim about the
    /// service may be decided on it.
    pub fn is_perfshapes_own(self) -> bool {
        matches!(self, Limit::Cpu | Limit::LoadClient)
    }

    /// The plateau's attribution from what was saturated there.
    fn of(stops_growing_at: Option<usize>, plateau: Option<Usage>) -> Limit {
        let Some(usage) = plateau.filter(|_| stops_growing_at.is_some()) else {
            return if stops_growing_at.is_some() {
                Limit::NotAttributed
            } else {
                Limit::None
            };
        };
        if usage.cpu_saturated() {
            Limit::Cpu
        } else if usage.client_saturated() {
            Limit::LoadClient
        } else if usage.machine.is_none() {
            Limit::NotAttributed
        } else {
            Limit::Pool
        }
    }
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
    /// What stopped the growth.
    #[serde(default)]
    pub limit: Limit,
    /// The most of each usage figure over the plateau's steps (the step where growth
    /// stopped and after), when growth stopped.
    #[serde(default)]
    pub plateau: Option<Usage>,
}

impl ProbeReport {
    /// The best throughput of any step.
    pub fn best_throughput(&self) -> f64 {
        self.steps.iter().map(|s| s.throughput).fold(0.0, f64::max)
    }

    /// What the probe found, in one sentence that names what limits it.
    pub fn sentence(&self) -> String {
        let best = self.best_throughput();
        let k = self.pool_estimate;
        let Some(c) = self.stops_growing_at else {
            return format!(
                "throughput still grows at concurrency {}: no cap found (async, or a pool larger than that; ≈{k:.1} so far)",
                self.steps.last().map_or(0, |s| s.concurrency),
            );
        };
        let plateau = self.plateau.unwrap_or_default();
        match self.limit {
            Limit::Pool => format!(
                "throughput stops growing at concurrency {c}: behaves like a pool of ≈{k:.1} (at the plateau: {plateau})"
            ),
            Limit::Cpu => format!(
                "throughput stops growing at concurrency {c}, {best:.0} requests/s: limited by CPU ({}, the service's and perfshape's own load client's), not by a pool — inconclusive about the service",
                plateau.cpu_words()
            ),
            Limit::LoadClient => format!(
                "throughput stops growing at concurrency {c}: the load client was the limit at {best:.0} requests/s (its workers {:.0}% busy, the machine {:.0}%): inconclusive",
                plateau.client * 100.0,
                plateau.machine.unwrap_or(0.0) * 100.0
            ),
            Limit::NotAttributed | Limit::None => format!(
                "throughput stops growing at concurrency {c}, {best:.0} requests/s (≈{k:.1} by Little's law): not attributed — the machine's CPU use could not be read, so a pool cannot be told from a saturated CPU"
            ),
        }
    }
}

impl std::fmt::Display for ProbeReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let percent =
            |x: Option<f64>| x.map_or("—".to_string(), |x| format!("{:.0}%", x * 100.0));
        writeln!(
            f,
            "| concurrency | ok/sent | throughput | mean latency | machine CPU | load client busy | server busy |"
        )?;
        writeln!(f, "|---:|---:|---:|---:|---:|---:|---:|")?;
        for s in &self.steps {
            writeln!(
                f,
                "| {} | {}/{} | {:.1}/s | {:.1} ms | {} | {} | {} |",
                s.concurrency,
                s.ok,
                s.sent,
                s.throughput,
                s.mean_latency.as_secs_f64() * 1e3,
                percent(s.usage.machine),
                percent(Some(s.usage.client)),
                percent(s.usage.server)
            )?;
        }
        for s in &self.steps {
            if let Some(cut_short) = s.cut_short {
                writeln!(f, "concurrency {}: {cut_short}", s.concurrency)?;
            }
        }
        f.write_str(&self.sentence())
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
    let mut report = probe_plan(client, None, &plan, settings)?;
    report.url = url.to_string();
    Ok(report)
}

/// [`probe`] of any request (an endpoint's template), reading `server`'s workers too when
/// perfshape serves it: its `url` in the report is the request, `POST /orders`.
pub(crate) fn probe_plan(
    client: &LoadClient,
    server: Option<&Pool>,
    plan: &Plan,
    settings: ProbeSettings,
) -> Result<ProbeReport> {
    let run = |strategy, n| client.run_plan(strategy, plan, n, None);
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
        let meter = UsageMeter::start(client, server);
        let step = run(strategy, MAX_REQUESTS)?;
        let (usage, _) = meter.finish();
        step.require_ok()
            .map_err(|e| at_concurrency(e, concurrency))?;
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
            usage,
            cut_short: step.cut_short,
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
    let plateau = stops_growing_at
        .and_then(|c| Usage::most(steps.iter().filter(|s| s.concurrency >= c).map(|s| s.usage)));
    Ok(ProbeReport {
        url: plan.label.clone(),
        steps,
        stops_growing_at,
        pool_estimate: best * alone,
        limit: Limit::of(stops_growing_at, plateau),
        plateau,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(machine: Option<f64>, client: f64) -> Option<Usage> {
        Some(Usage {
            machine,
            cores: machine.map(|_| 2),
            quota: None,
            throttled: None,
            process: None,
            waiting: None,
            client,
            server: None,
            client_cpu: None,
        })
    }

    #[test]
    fn a_plateau_is_a_pool_only_while_the_cpu_and_the_client_have_room() {
        assert_eq!(Limit::of(None, usage(Some(0.99), 0.99)), Limit::None);
        assert_eq!(Limit::of(Some(2), usage(Some(0.05), 0.02)), Limit::Pool);
        // A core kept busy by another process still leaves a pool a pool.
        assert_eq!(Limit::of(Some(2), usage(Some(0.55), 0.02)), Limit::Pool);
        assert_eq!(Limit::of(Some(4), usage(Some(0.90), 0.88)), Limit::Cpu);
        assert_eq!(
            Limit::of(Some(4), usage(Some(0.60), 0.95)),
            Limit::LoadClient
        );
        // Without the machine's figure a plateau is never called a pool.
        assert_eq!(Limit::of(Some(2), usage(None, 0.1)), Limit::NotAttributed);
        assert_eq!(Limit::of(Some(2), None), Limit::NotAttributed);
        assert!(Limit::Cpu.is_perfshapes_own() && Limit::LoadClient.is_perfshapes_own());
        assert!(!Limit::Pool.is_perfshapes_own() && !Limit::NotAttributed.is_perfshapes_own());
    }

    #[test]
    fn each_limit_has_its_sentence() {
        let step = |concurrency, throughput| ProbeStep {
            concurrency,
            sent: 100,
            ok: 100,
            throughput,
            mean_latency: Duration::from_millis(20),
            usage: Usage::default(),
            cut_short: None,
        };
        let mut report = ProbeReport {
            url: "/health".into(),
            steps: vec![
                step(1, 50.0),
                step(2, 100.0),
                step(4, 101.0),
                step(8, 100.0),
            ],
            stops_growing_at: Some(2),
            pool_estimate: 2.0,
            limit: Limit::Pool,
            plateau: usage(Some(0.04), 0.01),
        };
        assert!(
            report.sentence().starts_with(
                "throughput stops growing at concurrency 2: behaves like a pool of ≈2.0"
            ),
            "{}",
            report.sentence()
        );
        report.limit = Limit::Cpu;
        report.plateau = usage(Some(0.93), 0.9);
        assert!(
            report
                .sentence()
                .contains("limited by CPU (2 cores 93% busy")
                && !report.sentence().contains("behaves like a pool"),
            "{}",
            report.sentence()
        );
        report.limit = Limit::LoadClient;
        assert!(
            report
                .sentence()
                .contains("the load client was the limit at 101 requests/s (its workers 90% busy"),
            "{}",
            report.sentence()
        );
        report.limit = Limit::NotAttributed;
        assert!(
            report.sentence().contains("not attributed")
                && !report.sentence().contains("behaves like a pool"),
            "{}",
            report.sentence()
        );
    }
}
