//! Figures of a load's records: counts, wall, throughput, latency percentiles and waves.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;
use serde::Serialize;

use crate::record::{Outcome, RequestRecord};

/// How far past its intended start a request may be sent before it counts as late.
const LATE: Duration = Duration::from_millis(1);

/// What a run amounts to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Requests planned and accounted for.
    pub sent: usize,
    /// Requests that succeeded.
    pub ok: usize,
    /// Requests that failed; `sent == ok + failed`.
    pub failed: usize,
    /// Of the sent, those sent a second time on a new connection after their first was
    /// reset or closed before any byte of the response (each still counted once, as ok or
    /// failed by its second try).
    pub retried: usize,
    /// Failures by kind (`timeout`, `status 500`, ...).
    pub failures: BTreeMap<String, usize>,
    /// From the first send to the last completion.
    #[serde(with = "crate::vocab::millis")]
    pub wall: Duration,
    /// Successful requests per second of wall time.
    pub throughput: f64,
    /// Latency of the successful requests, from intended start to end.
    pub latency: Option<Latency>,
    /// Groups of completions separated by more than the wave gap: the staircase of a
    /// blocking server (seed 000), one step per round of its workers.
    pub waves: usize,
    /// Requests sent more than 1 ms after their intended start (an open loop that fell
    /// behind, or a request that queued for a capped connection).
    pub late: usize,
    /// The most requests in flight at once, sent and not yet answered: the concurrency
    /// the server was offered (under a connection cap, at most the cap).
    pub most_in_flight: usize,
    /// The bound that ended the load early, if one did ([`Run::cut_short`](crate::run::Run)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<crate::cut_short::CutShort>,
}

/// Latency figures, from an HDR histogram at microsecond resolution.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Latency {
    /// The fastest request.
    #[serde(with = "crate::vocab::millis")]
    pub min: Duration,
    /// The mean.
    #[serde(with = "crate::vocab::millis")]
    pub mean: Duration,
    /// The median.
    #[serde(with = "crate::vocab::millis")]
    pub p50: Duration,
    /// The 90th percentile.
    #[serde(with = "crate::vocab::millis")]
    pub p90: Duration,
    /// The 99th percentile.
    #[serde(with = "crate::vocab::millis")]
    pub p99: Duration,
    /// The slowest request.
    #[serde(with = "crate::vocab::millis")]
    pub max: Duration,
}

impl Summary {
    /// Summarises the `records` of a load that took `wall`; completions less than
    /// `wave_gap` apart belong to the same wave.
    pub fn of(records: &[RequestRecord], wall: Duration, wave_gap: Duration) -> Summary {
        let mut failures = BTreeMap::new();
        for record in records {
            if let Outcome::Failed { kind } = &record.outcome {
                *failures.entry(kind.to_string()).or_insert(0) += 1;
            }
        }
        let ok: Vec<_> = records.iter().filter(|r| r.outcome.is_ok()).collect();
        let ends: Vec<Duration> = ok.iter().map(|r| r.end).collect();
        let wall_secs = wall.as_secs_f64();
        Summary {
            sent: records.len(),
            ok: ok.len(),
            failed: records.len() - ok.len(),
            retried: records.iter().filter(|r| r.retried).count(),
            failures,
            wall,
            throughput: if wall_secs > 0.0 {
                ok.len() as f64 / wall_secs
            } else {
                0.0
            },
            latency: Latency::of(ok.iter().map(|r| r.latency())),
            waves: count_waves(&ends, wave_gap),
            late: records
                .iter()
                .filter(|r| r.start > r.intended_start + LATE)
                .count(),
            most_in_flight: most_in_flight(records),
            cut_short: None,
        }
    }
}

/// The most of `records` whose [start, end) overlap: a sweep over their starts and ends,
/// an end before a start at the same instant (a connection handed straight on).
fn most_in_flight(records: &[RequestRecord]) -> usize {
    let mut events: Vec<(Duration, i32)> = records
        .iter()
        .flat_map(|r| [(r.start, 1), (r.end, -1)])
        .collect();
    events.sort();
    let (mut now, mut most) = (0_i32, 0_i32);
    for (_, step) in events {
        now += step;
        most = most.max(now);
    }
    most as usize
}

impl Latency {
    /// Latency figures of `latencies`, or `None` when there are none.
    pub fn of(latencies: impl IntoIterator<Item = Duration>) -> Option<Latency> {
        // 1 µs to 1 hour at 3 significant digits: ample for any bounded run.
        let mut histogram = Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3)
            .expect("static bounds are valid");
        for latency in latencies {
            let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
            histogram.saturating_record(micros.max(1));
        }
        if histogram.is_empty() {
            return None;
        }
        let at = |q: f64| Duration::from_micros(histogram.value_at_quantile(q));
        Some(Latency {
            min: Duration::from_micros(histogram.min()),
            mean: Duration::from_secs_f64(histogram.mean() / 1e6),
            p50: at(0.5),
            p90: at(0.9),
            p99: at(0.99),
            max: Duration::from_micros(histogram.max()),
        })
    }
}

/// Counts groups of completion instants: a new group starts wherever two consecutive
/// completions (in time order) are more than `gap` apart.
pub fn count_waves(ends: &[Duration], gap: Duration) -> usize {
    let mut sorted = ends.to_vec();
    sorted.sort();
    match sorted.first() {
        None => 0,
        Some(_) => 1 + sorted.windows(2).filter(|w| w[1] - w[0] > gap).count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn a_staircase_of_ten_steps_is_ten_waves() {
        // Blocking fan-out, N = 20 on W = 2: pairs finish 20 ms apart.
        let ends: Vec<_> = (0..20)
            .map(|i| ms(20 * (i / 2 + 1)) + Duration::from_micros(i * 37))
            .collect();
        assert_eq!(count_waves(&ends, ms(10)), 10);
    }

    #[test]
    fn no_completions_is_no_wave() {
        assert_eq!(count_waves(&[], ms(10)), 0);
    }

    /// Requests `(start, end)` in milliseconds.
    fn records(spans: &[(u64, u64)]) -> Vec<RequestRecord> {
        spans
            .iter()
            .enumerate()
            .map(|(i, &(start, end))| {
                let mut record =
                    RequestRecord::failed_at(i, ms(end), crate::record::FailureKind::Request);
                record.start = ms(start);
                record
            })
            .collect()
    }

    #[test]
    fn in_flight_counts_overlaps_and_hands_a_connection_straight_on() {
        // Two lanes of 20 ms, each request starting as the one before it ends: 2.
        let lanes = records(&[(0, 20), (0, 20), (20, 40), (20, 40), (40, 60)]);
        assert_eq!(most_in_flight(&lanes), 2);
        // A fan-out of 3 and a late one: 3.
        assert_eq!(
            most_in_flight(&records(&[(0, 20), (1, 21), (2, 22), (30, 50)])),
            3
        );
        assert_eq!(most_in_flight(&[]), 0);
    }

    proptest! {
        /// Waves never exceed completions, and a gap larger than the whole span is one wave.
        #[test]
        fn waves_are_between_one_and_n(ends in proptest::collection::vec(0u64..10_000, 1..200)) {
            let ends: Vec<_> = ends.into_iter().map(Duration::from_micros).collect();
            let waves = count_waves(&ends, ms(1));
            prop_assert!(waves >= 1 && waves <= ends.len());
            prop_assert_eq!(count_waves(&ends, ms(11)), 1);
        }

        /// Percentiles are ordered and lie within the observed range (to HDR precision).
        #[test]
        fn percentiles_are_ordered(lat in proptest::collection::vec(1u64..5_000_000, 1..300)) {
            let l = Latency::of(lat.iter().map(|&u| Duration::from_micros(u))).unwrap();
            prop_assert!(l.min <= l.p50 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.max);
            let lo = Duration::from_micros(*lat.iter().min().unwrap());
            let hi = Duration::from_micros(*lat.iter().max().unwrap());
            // 3 significant digits: within 0.1 % of the true extremes.
            prop_assert!(l.min.as_secs_f64() >= lo.as_secs_f64() * 0.999);
            prop_assert!(l.max.as_secs_f64() <= hi.as_secs_f64() * 1.001);
        }
    }
}
