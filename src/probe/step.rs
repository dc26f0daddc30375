//! One step of the probe: c callers in a closed loop for a while, and what their latency
//! says about a pool.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::run::{Outcome, RequestRecord, Run};
use crate::usage::Usage;

/// One step of the probe.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProbeStep {
    /// Callers in the closed loop.
    pub concurrency: usize,
    /// Requests sent, succeeded and failed.
    pub sent: usize,
    /// Requests that succeeded.
    pub ok: usize,
    /// Successful requests per second, over the whole step (its ramp and drain too).
    pub throughput: f64,
    /// Mean latency of the requests sent after the step's first answer: what the callers
    /// wait once a queue, if there is one, has formed (the first wave, sent to an empty
    /// pool, is left out).
    #[serde(with = "crate::vocab::millis")]
    pub mean_latency: Duration,
    /// The pool this step implies: callers × the latency of a request alone ÷ this step's
    /// latency. By Little's law c callers with no think time wait c ÷ k times a request
    /// alone on a pool of k < c, so the figure is k once requests queue, and c while
    /// they do not.
    #[serde(default)]
    pub pool_estimate: f64,
    /// The estimate's relative standard error: from the spread of the means of successive
    /// batches of `concurrency` requests (one per caller, so the batches are close to
    /// independent where single requests of one wave are not), here and in the step alone.
    #[serde(default)]
    pub relative_error: f64,
    /// What the machine and the pools did over the step.
    #[serde(default)]
    pub usage: Usage,
    /// The CPU the service's process used over the step, in CPUs (1.0: one core's worth),
    /// when it runs on this machine in a process of its own and `/proc` names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_cpu: Option<f64>,
    /// The bound that ended the step early, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<crate::cut_short::CutShort>,
}

/// The latency of a step's settled requests: their mean and its relative standard error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Settled {
    /// Mean latency, in seconds.
    pub(crate) mean: f64,
    /// The mean's relative standard error (0 with fewer than two batches).
    pub(crate) relative_error: f64,
}

impl Settled {
    /// The successful requests of `records` sent at or after the first answer, in batches of
    /// `concurrency` by send time. Without any (a step as short as one request), every
    /// successful request. `None` without a successful request.
    pub(crate) fn of(records: &[RequestRecord], concurrency: usize) -> Option<Settled> {
        let latencies = settled_latencies(records)?;
        Some(Settled::from_latencies(&latencies, concurrency))
    }

    /// The mean of `latencies` (in send order) and its error from batches of `batch`.
    pub(crate) fn from_latencies(latencies: &[f64], batch: usize) -> Settled {
        let mean = latencies.iter().sum::<f64>() / latencies.len().max(1) as f64;
        let batches: Vec<f64> = latencies
            .chunks(batch.max(1))
            .filter(|b| b.len() == batch.max(1))
            .map(|b| b.iter().sum::<f64>() / b.len() as f64)
            .collect();
        let relative_error = if batches.len() < 2 || mean <= 0.0 {
            0.0
        } else {
            let n = batches.len() as f64;
            let centre = batches.iter().sum::<f64>() / n;
            let variance = batches.iter().map(|b| (b - centre).powi(2)).sum::<f64>() / (n - 1.0);
            (variance / n).sqrt() / mean
        };
        Settled {
            mean,
            relative_error,
        }
    }
}

/// The latencies, in seconds and in send order, of the successful requests of `records`
/// sent at or after the first answer (without any, a step as short as one request: of
/// every successful request). `None` without a successful request.
pub(crate) fn settled_latencies(records: &[RequestRecord]) -> Option<Vec<f64>> {
    let ok: Vec<&RequestRecord> = records
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Ok { .. }))
        .collect();
    let first_answer = ok.iter().map(|r| r.end).min()?;
    let mut settled: Vec<&RequestRecord> = ok
        .iter()
        .copied()
        .filter(|r| r.start >= first_answer)
        .collect();
    if settled.is_empty() {
        settled = ok;
    }
    settled.sort_by_key(|r| r.start);
    Some(settled.iter().map(|r| r.latency().as_secs_f64()).collect())
}

impl ProbeStep {
    /// The step of `concurrency` callers from its run, against the step alone (`None`: this
    /// is the step alone).
    pub(crate) fn of(
        concurrency: usize,
        run: &Run,
        usage: Usage,
        alone: Option<Settled>,
    ) -> ProbeStep {
        let settled = Settled::of(&run.records, concurrency);
        ProbeStep::settled(concurrency, run, usage, settled, alone)
    }

    /// The step of `concurrency` callers whose settled latency is `settled` (read from
    /// `run`, or from it and more runs alone).
    pub(crate) fn settled(
        concurrency: usize,
        run: &Run,
        usage: Usage,
        settled: Option<Settled>,
        alone: Option<Settled>,
    ) -> ProbeStep {
        let summary = run.summary(Duration::from_millis(1));
        let (pool_estimate, relative_error) = match (settled, alone) {
            (Some(here), Some(alone)) if here.mean > 0.0 => (
                concurrency as f64 * alone.mean / here.mean,
                here.relative_error.hypot(alone.relative_error),
            ),
            // The step alone is the yardstick itself.
            (Some(_), None) => (concurrency as f64, 0.0),
            _ => (0.0, 0.0),
        };
        ProbeStep {
            concurrency,
            sent: summary.sent,
            ok: summary.ok,
            throughput: summary.throughput,
            mean_latency: Duration::from_secs_f64(settled.map_or(0.0, |s| s.mean)),
            pool_estimate,
            relative_error,
            usage,
            service_cpu: None,
            cut_short: run.cut_short,
        }
    }

    /// The latency ratio the sweep reads: a request alone ÷ this step's, 1 while nothing
    /// queues.
    pub(crate) fn ratio(&self) -> f64 {
        if self.concurrency == 0 {
            return 0.0;
        }
        self.pool_estimate / self.concurrency as f64
    }

    /// Whether this step's requests queued, as the sweep judges it.
    pub(crate) fn queued(&self) -> bool {
        super::sweep::Point {
            concurrency: self.concurrency,
            ratio: self.ratio(),
            relative_error: self.relative_error,
        }
        .queued()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_of_one_per_caller_give_the_error_of_the_mean() {
        // Four batches of two whose means are 10, 12, 10, 12 ms: mean 11, the batch means'
        // standard deviation ≈1.155, ÷ √4 → ≈0.577 ms, ÷ 11 → ≈5.2 %.
        let settled =
            Settled::from_latencies(&[0.009, 0.011, 0.012, 0.012, 0.010, 0.010, 0.013, 0.011], 2);
        assert!((settled.mean - 0.011).abs() < 1e-12, "{settled:?}");
        assert!(
            (settled.relative_error - 0.0525).abs() < 0.001,
            "{settled:?}"
        );
        // One batch has no spread to read.
        assert_eq!(
            Settled::from_latencies(&[0.01, 0.02], 2).relative_error,
            0.0
        );
    }
}
