//! **Concurrency limit**: the probe as a claim — where an endpoint's requests begin to
//! queue as callers are added, what it behaves like (a pool of ≈k), and what made the
//! plateau (a pool, or the machine's CPU).
//!
//! The first round sweeps (doubling, then bisecting the knee); each later round measures
//! again only the two steps the figure is read from, the step alone and the sweep's
//! deepest, side by side.

use std::time::Duration;

use super::holding::LEAST;
use crate::claim::{Claim, ClaimReport, Measure, Notes};
use crate::endpoint::Endpoint;
use crate::error::{Error, Refused, Result};
use crate::evidence::Evidence;
use crate::probe::{Limit, ProbeReport, ProbeSettings, ProbeStep, Where, probe_at, probe_plan};

impl Endpoint {
    /// **Concurrency limit**: the probe as a claim — raise a closed loop of callers 1, 2,
    /// 4, … (up to 16 unless [`up_to`](ConcurrencyLimit::up_to) says more) until requests
    /// queue, then narrow the knee between two steps; by Little's law, callers × a request
    /// alone's latency ÷ their own is the pool the endpoint behaves like.
    pub fn concurrency_limit(&self) -> ConcurrencyLimit {
        ConcurrencyLimit {
            endpoint: self.clone(),
            settings: ProbeSettings {
                max_concurrency: 16,
                step: crate::probe::CLAIM_STEP,
                step_chosen: false,
            },
            replay: Vec::new(),
        }
    }

    /// The probe of this endpoint on its target's load client, its usage evidence kept: a
    /// sweep, or with `deepest` the two steps of a sweep's figure again.
    fn probe(
        &self,
        evidence: &Evidence,
        settings: ProbeSettings,
        deepest: Option<&ProbeStep>,
    ) -> Result<ProbeReport> {
        let plan = self.plan()?;
        let at = Where {
            server: self.target().served().map(|s| s.pool()),
            service: self.target().service_process(),
        };
        let client = self.target().client();
        evidence.observe(self.target(), || match deepest {
            Some(deepest) => probe_at(client, at, &plan, settings, deepest),
            None => probe_plan(client, at, &plan, settings),
        })
    }
}

/// A claim's probes: the first round sweeps, and each later one measures the sweep's
/// deepest step again. Owned by the claim's measure; each probe's sentence is noted for
/// the report, the rounds whose probe found no figure too.
#[derive(Default)]
struct Probes {
    deepest: Option<ProbeStep>,
    notes: Notes<Probed>,
}

/// What one round's probe said, for the report.
#[derive(Clone, Debug)]
struct Probed {
    /// The probe's sentence: its steps, its knee, what limited it.
    sentence: String,
    /// The callers at the sweep's deepest step, which every later round measures again.
    deepest: Option<usize>,
}

impl Probes {
    /// This round's probe of `endpoint`, noted.
    fn next(
        &mut self,
        endpoint: &Endpoint,
        evidence: &Evidence,
        settings: ProbeSettings,
    ) -> Result<ProbeReport> {
        let report = endpoint.probe(evidence, settings, self.deepest.as_ref())?;
        if self.deepest.is_none() {
            self.deepest = report.steps.last().cloned();
        }
        self.notes.push(Probed {
            sentence: report.sentence(),
            deepest: self.deepest.as_ref().map(|s| s.concurrency),
        });
        Ok(report)
    }
}

/// `up_to` and `step` as the user gave them, refused by name before any load; with the
/// pool a claim names, `up_to` must reach it.
fn check(settings: ProbeSettings, claimed: Option<f64>) -> Result<()> {
    crate::error::check_range("up_to", settings.max_concurrency, 1, 4096, "")?;
    crate::error::check_range("step", settings.step.as_millis(), 10, 60_000, " ms")?;
    match claimed {
        Some(k) if !(k > 0.0 && k.is_finite()) => {
            Err(Error::invalid("pool claimed", k, "a pool of more than 0"))
        }
        Some(k) if k > settings.max_concurrency as f64 => Err(Error::invalid(
            "up_to",
            settings.max_concurrency,
            format!(
                "at least the pool claimed, {k}: a sweep up to {} callers cannot reach it",
                settings.max_concurrency
            ),
        )),
        _ => Ok(()),
    }
}

/// What a claim's `check()` refuses before any load: the endpoint's first refused setting,
/// else the probe's settings as [`check`] reads them.
fn refused(endpoint: &Endpoint, settings: ProbeSettings, claimed: Option<f64>) -> Option<Refused> {
    endpoint
        .refused()
        .or_else(|| check(settings, claimed).err().map(Refused::of))
}

/// A probe's steps, for a claim's context: `concurrency 1, 2, 4, … up to 16, then the knee
/// narrowed; 100 ms each at the least`.
fn steps(settings: ProbeSettings) -> String {
    format!(
        "concurrency 1, 2, 4, … up to {}, then the knee narrowed; {} ms each at the least",
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
    /// Another claim's rounds on this probe, judged again before any new one.
    replay: Vec<f64>,
}

impl ConcurrencyLimit {
    /// The highest concurrency tried (default 16; the steps double from 1, and the last is
    /// this one): at least the pool claimed, up to 4096 (another is named by the claim's
    /// `check()`, before any load).
    pub fn up_to(mut self, max_concurrency: usize) -> Self {
        self.settings.max_concurrency = max_concurrency;
        self
    }

    /// The least time each step offers load (default 100 ms, or one request alone where
    /// that is longer; a step lasts longer when its requests need it): 10 ms to 60 s
    /// (another is named by the claim's `check()`), and no shorter than one request alone
    /// (named after that one request, before any load).
    pub fn step(mut self, step: Duration) -> Self {
        self.settings.step = step;
        self.settings.step_chosen = true;
        self
    }

    /// The rounds of another claim of the same kind on this endpoint and settings
    /// ([`Checked::figures`](crate::Checked::figures)): pool estimates, from
    /// [`about`](Self::about), [`of_at_least`](Self::of_at_least) or [`none`](Self::none), for
    /// any of the three; a CPU pressure from [`limited_by_cpu`](Self::limited_by_cpu) or
    /// [`limited_by_a_pool`](Self::limited_by_a_pool) for the same one (where the probe finds
    /// no plateau the two read different figures). This claim judges them first and probes
    /// only for the rounds it needs beyond them: `about(k)` that held, and `about(k/2)` and
    /// `about(2k)` broken on the same sweeps, cost one probe.
    pub fn replaying(mut self, figures: impl IntoIterator<Item = f64>) -> Self {
        self.replay.extend(figures);
        self
    }

    /// **Limited by the machine's CPU**, not by a pool: at the plateau (the sweep's deepest
    /// step, when its requests queued; without a queue, the highest concurrency tried) the machine
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
            .ready_made()
    }

    /// **Limited by a pool** (or a lock), not by the CPU: requests queued while the CPU
    /// pressure at the plateau was under 1 (without a plateau the figure is the
    /// most a pressure can read, 1 ÷ 0.75, a saturated machine: no limit is no pool).
    pub fn limited_by_a_pool(self) -> Claim<'static> {
        let most = 1.0 / crate::usage::SATURATED;
        self.attribution("is limited by a pool, not by the CPU", Some(most))
            .at_most(1.0)
            .ready_made()
    }

    /// The CPU pressure at the probe's plateau; without one, `no_plateau`, or when that is
    /// `None` the pressure at the highest concurrency tried.
    fn attribution(self, sentence: &str, no_plateau: Option<f64>) -> Claim<'static> {
        let ConcurrencyLimit {
            endpoint,
            settings,
            replay,
        } = self;
        let (evidence, this) = (Evidence::default(), endpoint.clone());
        let observed = evidence.clone();
        let mut probes = Probes::default();
        let said = probes.notes.clone();
        Claim::figure(
            &format!("{} {sentence}", endpoint.name()),
            Measure::value("CPU pressure at the plateau", move || {
                let report = probes.next(&this, &observed, settings)?;
                let usage = match (report.queued, no_plateau) {
                    (false, Some(figure)) => return Ok(figure),
                    (false, None) => report.steps.last().map(|s| s.usage),
                    (true, _) => report.plateau,
                };
                match usage.and_then(|u| u.cpu_pressure()) {
                    // A figure is positive: an idle machine reads "under 0.1 %".
                    Some(pressure) => Ok(pressure.max(LEAST)),
                    // Without the machine's figure there is no attribution to claim.
                    None => Err(Error::Unread {
                        what: format!("{} ({})", report.sentence(), machine_unread()),
                    }),
                }
            })
            .replaying(replay)
            .floor(settings.step * 2)
            .evidence(move || evidence.describe("probe")),
        )
        .warmup(0)
        .refusing(refused(&endpoint, settings, None))
        .context("target", endpoint.target().to_string())
        .context("steps", steps(settings))
        .explain(move |_: &ClaimReport| {
            said.with(|probed| probed.iter().take(1).map(|p| p.sentence.clone()).collect())
        })
    }

    /// Behaves like a pool of ≈`k`: the estimate ÷ `k` in [0.8, 1.25].
    pub fn about(self, k: f64) -> Claim<'static> {
        self.claim(&format!("behaves like a pool of ≈{k}"), k)
            .within(0.8, 1.25)
            .ideal(1.0)
            .ready_made()
    }

    /// Behaves like a pool of at least `k`: the estimate ÷ `k` at least 0.8. (Named apart
    /// from [`Claim::at_least`], which sets a band on a claim's figure.)
    pub fn of_at_least(self, k: f64) -> Claim<'static> {
        self.claim(&format!("behaves like a pool of at least {k}"), k)
            .at_least(0.8)
            .ready_made()
    }

    /// Shows no limit up to the highest concurrency tried: the estimate ÷ that
    /// concurrency at least 0.8 (a pool of 0.8 c or fewer would have made its callers wait
    /// 1.25 times as long as one request alone).
    pub fn none(self) -> Claim<'static> {
        let c = self.settings.max_concurrency;
        self.claim(&format!("has no concurrency limit up to {c}"), c as f64)
            .at_least(0.8)
            .ready_made()
    }

    fn claim(self, sentence: &str, k: f64) -> Claim<'static> {
        let ConcurrencyLimit {
            endpoint,
            settings,
            replay,
        } = self;
        let mut probes = Probes::default();
        let (said, evidence) = (probes.notes.clone(), Evidence::default());
        let (observed, this) = (evidence.clone(), endpoint.clone());
        Claim::bound(
            &format!("{} {sentence}", endpoint.name()),
            Measure::value("pool estimate", move || {
                let report = probes.next(&this, &observed, settings)?;
                if report.limit.is_perfshapes_own() {
                    // A plateau of the machine's CPU or of the load client measures
                    // perfshape, not the service: no verdict about a pool is taken from it.
                    return Err(Error::Limited {
                        what: report.sentence(),
                    });
                }
                if report.limit == Limit::NotAttributed {
                    // Nor from one whose CPU was not read: it may have been the CPU's.
                    return Err(Error::Unread {
                        what: format!("{} ({})", report.sentence(), machine_unread()),
                    });
                }
                Ok(report.pool_estimate)
            })
            .expecting(crate::claim::Expected::new(k, format!("a pool of {k}")))
            .replaying(replay)
            // A later round is two steps: the step alone and the deepest.
            .floor(settings.step * 2)
            .evidence(move || evidence.describe("probe")),
        )
        .warmup(0)
        .refusing(refused(&endpoint, settings, Some(k)))
        .context("target", endpoint.target().to_string())
        .context("steps", steps(settings))
        .explain(move |report: &ClaimReport| {
            let probed = said.to_vec();
            let first = probed.first().map(|p| p.sentence.clone()).unwrap_or_default();
            if report.rounds.is_empty() {
                // The probe found its own limit at once: the reason says which.
                return vec![format!("no pool figure: {first}")];
            }
            let at = probed.last().and_then(|p| p.deepest).unwrap_or(0);
            vec![format!(
                "behaves like a pool of ≈{:.1} (median of {} rounds at {at} callers); the sweep: {first}",
                report.median * k,
                report.rounds.len()
            )]
        })
    }
}

/// Where the machine's CPU is read, after the probe's own "could not be read".
fn machine_unread() -> String {
    crate::platform::not_read("it", "/proc/stat")
}
