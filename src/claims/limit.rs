//! **Concurrency limit**: the probe as a claim — where an endpoint's throughput stops
//! growing as callers are added, what it behaves like (a pool of ≈k), and what made the
//! plateau (a pool, or the machine's CPU).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::blocking::LEAST;
use crate::claim::{Claim, ClaimReport, Measure};
use crate::endpoint::Endpoint;
use crate::error::{Error, Result};
use crate::evidence::Evidence;
use crate::probe::{ProbeReport, ProbeSettings, probe_plan};

impl Endpoint {
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

    /// The probe of this endpoint on its target's load client, its usage evidence kept.
    fn probe(&self, evidence: &Evidence, settings: ProbeSettings) -> Result<ProbeReport> {
        let plan = self.plan()?;
        let server = self.target().served().map(|s| s.pool());
        evidence.observe(self.target(), || {
            probe_plan(self.target().client(), server, &plan, settings)
        })
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
                    Some(pressure) => Ok(pressure.max(LEAST)),
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
        .context("target", endpoint.target().to_string())
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
        .context("target", endpoint.target().to_string())
        .context("steps", steps(settings))
        .explain(move |report: &ClaimReport| {
            let stopped = stopped.lock().unwrap_or_else(|p| p.into_inner());
            let stops = stopped
                .iter()
                .map(|s| s.map_or("still growing".to_string(), |c| format!("stops at {c}")))
                .collect::<Vec<_>>()
                .join(", ");
            if report.rounds.is_empty() {
                // The probe found its own limit at once: the reason says which.
                return vec![format!("no pool figure: the probe's plateau was perfshape's or the machine's (throughput: {stops})")];
            }
            vec![format!(
                "behaves like a pool of ≈{:.1} (throughput per round: {stops})",
                report.median * k
            )]
        })
    }
}
