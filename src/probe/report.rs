//! What the probe found: its steps, the knee, the pool estimate and what limited it, in a
//! table and one sentence.

use serde::{Deserialize, Serialize};

use super::limit::Limit;
use super::step::ProbeStep;
use super::sweep::Knee;
use crate::usage::Usage;

/// A service process using this much of a CPU at the plateau is near one core's worth: what
/// one busy thread uses once its blocking and the machine's other work are counted (0.91 for
/// uvicorn's event loop and its GIL-bound threads at 64 callers, measured).
const ONE_CORE: f64 = 0.8;

/// What the probe found. `perfshape probe` writes it as JSON, which `perfshape report`
/// reads back to plot.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeReport {
    /// The URL probed.
    pub url: String,
    /// Every step, by concurrency.
    pub steps: Vec<ProbeStep>,
    /// The most callers measured without a queue below the steps that queued: where
    /// throughput stops growing, when requests queued.
    pub stops_growing_at: Option<usize>,
    /// The fewest callers from which every step measured queued.
    #[serde(default)]
    pub queues_from: Option<usize>,
    /// The pool size the step with the most callers implies: its callers × a request
    /// alone's latency ÷ its own (c while nothing queues: then a lower bound).
    pub pool_estimate: f64,
    /// The estimate's relative standard error (its interval is ± two of them).
    #[serde(default)]
    pub relative_error: f64,
    /// The callers of the step the estimate is read from.
    #[serde(default)]
    pub estimated_at: usize,
    /// Whether that step's requests queued.
    #[serde(default)]
    pub queued: bool,
    /// What stopped the growth.
    #[serde(default)]
    pub limit: Limit,
    /// What the machine and the pools did at the deepest step, when its requests queued.
    #[serde(default)]
    pub plateau: Option<Usage>,
}

impl ProbeReport {
    /// The report of `steps` (in any order) and the sweep's knee, if it found one.
    pub(crate) fn of(url: String, mut steps: Vec<ProbeStep>, knee: Option<Knee>) -> ProbeReport {
        steps.sort_by_key(|s| s.concurrency);
        let deepest = steps.last();
        let queued = deepest.is_some_and(ProbeStep::queued);
        // The plateau is the step the estimate is read from: a claim's later rounds measure
        // that step alone again, so every round reads its usage from the same step (the
        // most over all queued steps made the sweep's round read higher than the rest).
        let plateau = deepest.filter(|_| queued).map(|s| s.usage);
        ProbeReport {
            url,
            stops_growing_at: knee.map(|k| k.last_free),
            queues_from: knee.map(|k| k.first_queued),
            pool_estimate: deepest.map_or(0.0, |s| s.pool_estimate),
            relative_error: deepest.map_or(0.0, |s| s.relative_error),
            estimated_at: deepest.map_or(0, |s| s.concurrency),
            queued,
            limit: Limit::of(queued, plateau),
            plateau,
            steps,
        }
    }

    /// The best throughput of any step.
    pub fn best_throughput(&self) -> f64 {
        self.steps.iter().map(|s| s.throughput).fold(0.0, f64::max)
    }

    /// The estimate's interval, ± two standard errors: `39.2–41.0`.
    fn interval(&self) -> String {
        let (k, e) = (self.pool_estimate, 2.0 * self.relative_error);
        format!("{:.1}–{:.1}", k * (1.0 - e), k * (1.0 + e))
    }

    /// Where the queue begins, in words: `throughput stops growing past 40 callers (they
    /// queue at 44)`, or for a report of two steps `requests queue at 64 callers`.
    fn knee_words(&self) -> String {
        let callers = |c: usize| format!("{c} caller{}", if c == 1 { "" } else { "s" });
        match (self.stops_growing_at, self.queues_from) {
            (Some(free), Some(queued)) => {
                let mut words = format!(
                    "throughput stops growing past {} (they queue at {queued})",
                    callers(free)
                );
                // A queue below the pool's size: the pool is reached unevenly (said of a
                // pool only: a saturated CPU queues requests at any size).
                if self.limit == Limit::Pool && (queued as f64) < 0.9 * self.pool_estimate {
                    words.push_str(&format!(
                        ", before ≈{:.1} are busy: requests reach the pool unevenly or wait in front of it (a tokio server can run two connections on one worker)",
                        self.pool_estimate
                    ));
                }
                words
            }
            _ => format!("requests queue at {}", callers(self.estimated_at)),
        }
    }

    /// The service's process's CPU at the plateau (the deepest step), when it was read:
    /// `; the service's process 0.91 CPUs, near one core: …`.
    fn service_words(&self) -> String {
        match self.steps.last().and_then(|s| s.service_cpu) {
            None => String::new(),
            Some(cpus) if cpus >= ONE_CORE => format!(
                "; the service's process {cpus:.2} CPUs, near one core: one thread's computing (an event loop, an interpreter lock) can be what queues the requests, not a pool"
            ),
            Some(cpus) => format!("; the service's process {cpus:.2} CPUs"),
        }
    }

    /// What the probe found, in one sentence that names what limits it.
    pub fn sentence(&self) -> String {
        let best = self.best_throughput();
        let (k, c) = (self.pool_estimate, self.estimated_at);
        if !self.queued {
            return format!(
                "throughput still grows at {c} callers, the most tried: no queue up to {c} (async, or a pool of at least {c})",
            );
        }
        let knee = self.knee_words();
        let plateau = self.plateau.unwrap_or_default();
        match self.limit {
            Limit::Pool => format!(
                "{knee}: behaves like a pool of ≈{k:.1} ({}, read at {c} callers; at the plateau: {plateau}{})",
                self.interval(),
                self.service_words()
            ),
            Limit::Cpu => format!(
                "{knee}, {best:.0} requests/s: limited by CPU ({}, the service's and perfshape's own load client's), not by a pool — inconclusive about the service",
                plateau.cpu_words()
            ),
            Limit::LoadClient => format!(
                "{knee}: the load client was the limit at {best:.0} requests/s (its workers {:.0}% busy, {}): inconclusive",
                plateau.client * 100.0,
                // Unread is not idle: a portable build reads no machine CPU.
                plateau
                    .machine
                    .map_or("the machine's CPU not read".to_string(), |m| format!(
                        "the machine {:.0}%",
                        m * 100.0
                    ))
            ),
            Limit::NotAttributed | Limit::None => format!(
                "{knee}, {best:.0} requests/s (≈{k:.1} by Little's law): not attributed — the machine's CPU use could not be read, so a pool cannot be told from a saturated CPU"
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
            "| concurrency | ok/sent | throughput | mean latency | pool estimate | machine CPU | load client busy | server busy |"
        )?;
        writeln!(f, "|---:|---:|---:|---:|---:|---:|---:|---:|")?;
        for s in &self.steps {
            writeln!(
                f,
                "| {} | {}/{} | {:.1}/s | {:.1} ms | {:.1} | {} | {} | {} |",
                s.concurrency,
                s.ok,
                s.sent,
                s.throughput,
                s.mean_latency.as_secs_f64() * 1e3,
                s.pool_estimate,
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::probe::limit::tests::usage;

    fn step(concurrency: usize, k: f64) -> ProbeStep {
        let ratio = (k / concurrency as f64).min(1.0);
        ProbeStep {
            concurrency,
            sent: 100,
            ok: 100,
            throughput: concurrency as f64 * ratio * 50.0,
            mean_latency: Duration::from_secs_f64(0.02 / ratio),
            pool_estimate: concurrency as f64 * ratio,
            relative_error: 0.01,
            usage: usage(Some(0.04), 0.01).unwrap_or_default(),
            service_cpu: None,
            cut_short: None,
        }
    }

    #[test]
    fn each_limit_has_its_sentence() {
        let steps = [1, 2, 4, 8, 16, 32, 64, 48, 40, 44].map(|c| step(c, 40.0));
        let knee = Knee {
            last_free: 40,
            first_queued: 44,
        };
        let mut report = ProbeReport::of("/report".into(), steps.to_vec(), Some(knee));
        assert_eq!(report.steps.first().map(|s| s.concurrency), Some(1));
        assert_eq!((report.estimated_at, report.queued), (64, true));
        assert!(
            report.sentence().starts_with(
                "throughput stops growing past 40 callers (they queue at 44): behaves like a pool of ≈40.0 (39.2–40.8, read at 64 callers"
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
                .contains("the load client was the limit at 2000 requests/s (its workers 90% busy"),
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
        // Two steps, re-measured, have no knee of their own.
        let again = ProbeReport::of("/report".into(), vec![step(1, 40.0), step(64, 40.0)], None);
        assert!(
            again
                .sentence()
                .starts_with("requests queue at 64 callers: behaves like a pool of ≈40.0"),
            "{}",
            again.sentence()
        );
        // A service process near one core at the plateau is said to be, not hidden.
        let mut busy = step(64, 23.0);
        busy.service_cpu = Some(0.91);
        let python = ProbeReport::of("/sync-def".into(), vec![step(1, 23.0), busy], None);
        assert!(
            python.sentence().contains(
                "; the service's process 0.91 CPUs, near one core: one thread's computing"
            ),
            "{}",
            python.sentence()
        );
        let unlimited = ProbeReport::of("/async".into(), vec![step(1, 1e3), step(64, 1e3)], None);
        assert_eq!(unlimited.limit, Limit::None);
        assert_eq!(
            unlimited.sentence(),
            "throughput still grows at 64 callers, the most tried: no queue up to 64 (async, or a pool of at least 64)"
        );
    }
}
