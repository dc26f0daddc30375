//! A table row whose wall is the machine's CPU, measured as the median of rounds.
//!
//! A fan-out whose requests' own client and server handling — its calibrated overhead × N
//! — outlasts the work the model gives the load is CPU-bound on this machine: seed 002's
//! async fan-out of 1000 × 10 ms on 2 cores turns 1000 requests over in 30–60 ms of
//! 1.5–2 busy cores, and the 10 ms wait hides inside it. One such run is as noisy as the
//! machine's CPU (`examples/cpu_bound_fan_out.rs`, 60 pairs): consecutive identical
//! zero-work fan-outs used 70–132 ms of CPU while a fixed spin on both cores took
//! 23–35 ms at the same moments, so one run ÷ its calibration read 0.75–1.50, outside the
//! table's band in 23 % of the pairs. The median of [`ROUNDS`] paired rounds, resampled
//! from those pairs, leaves the band in 0.14 % of 100,000 trials.

use std::time::Duration;

use serde::Serialize;

use crate::error::Result;
use crate::scenario::Scenario;

/// Rounds a CPU-bound row is measured in: odd, so that the median is one round's.
pub const ROUNDS: usize = 11;

/// Whether `scenario`, its per-request overhead calibrated at `overhead`, is bound by the
/// CPU its requests' own handling takes: N × overhead at least the wall its model gives
/// the work alone. Closed and open loops (not calibrated: zero) never are.
pub(super) fn cpu_bound(scenario: &Scenario, overhead: Duration) -> Result<bool> {
    let stack = handling(scenario, overhead);
    Ok(!stack.is_zero() && stack >= scenario.model().predict()?.wall)
}

/// `scenario`'s requests' own handling, its per-request overhead calibrated at `overhead`:
/// N × overhead.
pub(super) fn handling(scenario: &Scenario, overhead: Duration) -> Duration {
    overhead.saturating_mul(u32::try_from(scenario.n).unwrap_or(u32::MAX))
}

/// How a row measured in rounds spread: its table entry is the round of median slowdown.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Rounds {
    /// Each round's slowdown against its model, in the order measured.
    pub slowdowns: Vec<f64>,
    /// The median round's requests' own handling, N × its calibrated overhead.
    #[serde(with = "perfshape::__support::millis")]
    pub stack: Duration,
    /// The wall the model gives the work alone.
    #[serde(with = "perfshape::__support::millis")]
    pub work: Duration,
    /// Requests sent over every round's load (calibration runs not counted: a failure
    /// there stops the row).
    pub sent: usize,
    /// Of those, answered.
    pub ok: usize,
}

impl Rounds {
    /// The smallest and largest round's slowdown.
    pub fn range(&self) -> (f64, f64) {
        self.slowdowns
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &s| {
                (lo.min(s), hi.max(s))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::ServerStrategy;
    use perfshape::client::ClientStrategy;

    fn fan_out(server: ServerStrategy, n: usize, work_ms: u64) -> Scenario {
        Scenario::builder()
            .server(server)
            .client(ClientStrategy::FanOut)
            .workers(8)
            .requests(n)
            .work(Duration::from_millis(work_ms))
            .build()
            .expect("a valid scenario")
    }

    #[test]
    fn an_async_fan_out_whose_handling_outlasts_its_wait_is_cpu_bound() {
        // Seed 002's HTTP AIO row: 1000 × 40 µs of handling against a 10 ms wait.
        let aio = fan_out(ServerStrategy::Async, 1000, 10);
        assert!(cpu_bound(&aio, Duration::from_micros(40)).unwrap());
        // The same at 5 µs a request: 5 ms of handling, under the wait.
        assert!(!cpu_bound(&aio, Duration::from_micros(5)).unwrap());
    }

    #[test]
    fn a_blocking_fan_out_on_eight_workers_is_not() {
        // Seed 002's HTTP BIO row: 125 waves of 10 ms outlast 1000 × 40 µs.
        let bio = fan_out(ServerStrategy::Blocking, 1000, 10);
        assert!(!cpu_bound(&bio, Duration::from_micros(40)).unwrap());
    }

    #[test]
    fn an_uncalibrated_row_never_is() {
        let aio = fan_out(ServerStrategy::Async, 1000, 0);
        assert!(!cpu_bound(&aio, Duration::ZERO).unwrap());
    }

    #[test]
    fn the_range_is_the_rounds_extremes() {
        let rounds = Rounds {
            slowdowns: vec![1.1, 0.95, 1.28, 1.0],
            stack: Duration::from_millis(40),
            work: Duration::from_millis(10),
            sent: 4000,
            ok: 4000,
        };
        assert_eq!(rounds.range(), (0.95, 1.28));
    }
}
