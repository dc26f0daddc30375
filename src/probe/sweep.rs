//! Which concurrency the probe tries next: doubling until requests queue, then halving the
//! gap between the most callers seen without a queue and the fewest seen with one.
//!
//! Doubling alone finds a pool only on a power of two: a pool of 40 sits between 32
//! callers (no queue yet) and 64 (a queue), and a sweep that never looks between reads the
//! knee as 32 or 64. The queue, not the throughput, tells the steps apart: c callers on a
//! pool of k < c wait c ÷ k times as long as one request alone (Little's law for a closed
//! loop), so a step's latency ratio says at once whether it queued and how much, whatever
//! its throughput's rounding to whole waves.

/// What a step told the sweep: its callers and how much they waited.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Point {
    /// Callers in the closed loop.
    pub(crate) concurrency: usize,
    /// The latency of a request alone ÷ this step's latency: 1 while nothing queues, k ÷ c
    /// on a pool of k.
    pub(crate) ratio: f64,
    /// The ratio's relative standard error: a ratio within three of them of 1 is no queue,
    /// however far below [`QUEUED`].
    pub(crate) relative_error: f64,
}

impl Point {
    /// Whether the step's requests queued: their latency more than [`QUEUED`]'s inverse of
    /// one alone, and further from it than their own noise (three standard errors).
    pub(crate) fn queued(self) -> bool {
        self.ratio < QUEUED.min(1.0 - 3.0 * self.relative_error)
    }

    /// Whether the queue was deep enough that the step's estimate no longer rests on a
    /// few percent of latency: callers at least 1.5 × the pool.
    fn deep(self) -> bool {
        self.ratio <= DEEP
    }
}

/// A step queued when its latency ratio fell below this (and below its own noise): latency
/// up by more than ≈5 % of a request alone — one caller more than a pool of 20 or fewer.
pub(crate) const QUEUED: f64 = 0.95;

/// A queue is deep below this ratio (callers ≥ 1.5 × the pool): the doubling stops there,
/// once the step below queued too.
const DEEP: f64 = 2.0 / 3.0;

/// The knee's resolution: the sweep narrows until the fewest callers seen with a queue and
/// the most seen without one are within a tenth of the former (and at least one apart).
pub(crate) fn resolution(first_queued: usize) -> usize {
    (first_queued / 10).max(1)
}

/// Where requests begin to queue: between `last_free` callers (no queue) and
/// `first_queued` (a queue at this step and every step above it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Knee {
    /// The most callers measured without a queue below the queued steps.
    pub(crate) last_free: usize,
    /// The fewest callers from which every measured step queued.
    pub(crate) first_queued: usize,
}

/// The sweep's state: the points measured so far.
#[derive(Clone, Debug)]
pub(crate) struct Sweep {
    most: usize,
    points: Vec<Point>,
}

impl Sweep {
    /// A sweep up to `most` callers.
    pub(crate) fn new(most: usize) -> Sweep {
        Sweep {
            most,
            points: Vec::new(),
        }
    }

    /// Records a measured step.
    pub(crate) fn record(&mut self, point: Point) {
        self.points.push(point);
        self.points.sort_by_key(|p| p.concurrency);
        self.points.dedup_by_key(|p| p.concurrency);
    }

    /// The next concurrency to measure, or `None` when the sweep is done: doubling from 1
    /// (the last step clamped to `most`) until the highest step's queue is deep and the
    /// step below it queued too (one queued step alone can be a scheduler's accident: two
    /// callers on a 2-worker tokio server often share one worker), then bisecting the
    /// knee to within its [`resolution`].
    pub(crate) fn next(&self) -> Option<usize> {
        let Some(&top) = self.points.last() else {
            return Some(1);
        };
        let below = self.points.len().checked_sub(2).map(|i| self.points[i]);
        let bracketed = top.concurrency >= self.most
            || (top.queued() && top.deep() && below.is_some_and(Point::queued));
        if !bracketed {
            return Some((top.concurrency * 2).min(self.most));
        }
        let knee = self.knee()?;
        (knee.first_queued - knee.last_free > resolution(knee.first_queued))
            .then(|| (knee.last_free + knee.first_queued) / 2)
    }

    /// The knee so far: `None` while no step (or not the highest) queued.
    pub(crate) fn knee(&self) -> Option<Knee> {
        let free = self.points.iter().rposition(|p| !p.queued())?;
        let first_queued = self.points.get(free + 1)?.concurrency;
        Some(Knee {
            last_free: self.points[free].concurrency,
            first_queued,
        })
    }

    /// The step the estimate is read from: the most callers, the deepest queue.
    #[cfg(test)]
    pub(crate) fn deepest(&self) -> Option<Point> {
        self.points.last().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::probe::step::Settled;
    use crate::probe::{ALONE_NOISE, ALONE_RUNS, ALONE_WAVES, WAVES};
    use proptest::prelude::RngCore;
    use proptest::test_runner::{RngAlgorithm, TestRng};

    fn point(concurrency: usize, k: f64) -> Point {
        Point {
            concurrency,
            ratio: (k / concurrency as f64).min(1.0),
            relative_error: 0.0,
        }
    }

    /// The concurrencies a noiseless pool of `k` makes the sweep try, up to `most`.
    fn tried(k: f64, most: usize) -> (Vec<usize>, Option<Knee>) {
        let mut sweep = Sweep::new(most);
        let mut tried = Vec::new();
        while let Some(c) = sweep.next() {
            assert!(tried.len() < 30, "the sweep must end: {tried:?}");
            tried.push(c);
            sweep.record(point(c, k));
        }
        (tried, sweep.knee())
    }

    #[test]
    fn a_pool_between_two_doublings_is_bracketed_then_narrowed() {
        let (steps, knee) = tried(40.0, 64);
        assert_eq!(steps, [1, 2, 4, 8, 16, 32, 64, 48, 40, 44]);
        assert_eq!(
            knee,
            Some(Knee {
                last_free: 40,
                first_queued: 44
            })
        );
        let (steps, knee) = tried(3.0, 16);
        assert_eq!(steps, [1, 2, 4, 8, 3]);
        assert_eq!(
            knee,
            Some(Knee {
                last_free: 3,
                first_queued: 4
            })
        );
        // A pool of 10 to one caller's resolution; the doubling stops at the deep queue of
        // 32, short of `most`.
        let (steps, knee) = tried(10.0, 64);
        assert_eq!(steps, [1, 2, 4, 8, 16, 32, 12, 10, 11]);
        assert_eq!(knee.map(|k| k.last_free), Some(10));
    }

    #[test]
    fn no_queue_up_to_the_most_is_no_knee() {
        let (steps, knee) = tried(1000.0, 64);
        assert_eq!(steps, [1, 2, 4, 8, 16, 32, 64]);
        assert_eq!(knee, None);
        // `up_to` that is no power of two is reached itself.
        let (steps, _) = tried(1000.0, 50);
        assert_eq!(steps.last(), Some(&50));
    }

    #[test]
    fn one_queued_step_below_a_free_one_is_not_the_knee() {
        // Two callers sharing one worker of two: the step at 2 reads a queue, 4 does not.
        let mut sweep = Sweep::new(16);
        for (c, ratio) in [(1, 1.0), (2, 0.6), (4, 1.0), (8, 0.6), (16, 0.3)] {
            assert_eq!(sweep.next(), Some(c));
            sweep.record(Point {
                concurrency: c,
                ratio,
                relative_error: 0.01,
            });
        }
        assert_eq!(sweep.next(), Some(6));
        assert_eq!(sweep.knee().map(|k| k.last_free), Some(4));
    }

    /// A closed loop of `c` callers on a FIFO pool of `k`, each request `work` × a jittered
    /// factor plus `overhead` outside the pool, for `length`: the mean latency of the
    /// requests sent after the first answer — what the probe reads from a step.
    fn simulated(c: usize, k: usize, work: f64, jitter: f64, rng: &mut TestRng) -> Vec<f64> {
        let overhead = 0.0002;
        let waves = if c == 1 { ALONE_WAVES } else { WAVES };
        let length = waves as f64 * work * (c as f64 / k as f64).max(1.0);
        let mut uniform = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        // Each caller's next send; each server's next free time.
        let mut sends = vec![0.0_f64; c];
        let mut free = vec![0.0_f64; k];
        let mut requests = Vec::new();
        loop {
            let (caller, &sent) = sends
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .expect("callers");
            if sent >= length {
                break;
            }
            let (server, &at) = free
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.total_cmp(b.1))
                .expect("servers");
            let begins = at.max(sent + overhead / 2.0);
            let ends = begins + work * (1.0 + jitter * (2.0 * uniform() - 1.0));
            free[server] = ends;
            let answered = ends + overhead / 2.0;
            sends[caller] = answered;
            requests.push((sent, answered));
        }
        let first = requests.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
        requests.sort_by(|a, b| a.0.total_cmp(&b.0));
        let steady: Vec<f64> = requests
            .iter()
            .filter(|r| r.0 >= first)
            .map(|r| r.1 - r.0)
            .collect();
        steady
    }

    /// The step alone as the probe measures it: run again while its mean is noisy.
    fn simulated_alone(k: usize, work: f64, jitter: f64, rng: &mut TestRng) -> Settled {
        let mut latencies = simulated(1, k, work, jitter, rng);
        let mut settled = Settled::from_latencies(&latencies, 1);
        for _ in 1..ALONE_RUNS {
            if settled.relative_error <= ALONE_NOISE {
                break;
            }
            latencies.extend(simulated(1, k, work, jitter, rng));
            settled = Settled::from_latencies(&latencies, 1);
        }
        settled
    }

    /// The sweep and its estimate on simulated pools of every size from 2 to 60, with a
    /// loopback's overhead: with ±5 % jitter on each request every estimate within [0.95,
    /// 1.05] of the pool, with ±20 % within [0.9, 1.1], and every knee within its
    /// resolution of the pool — sizes on and between the doublings alike.
    #[test]
    fn simulated_pools_of_any_size_are_found() {
        let mut rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
        let mut misses = Vec::new();
        for (jitter, within) in [(0.05, 0.05), (0.1, 0.1)] {
            for k in 2..=56 {
                let work = 0.020;
                let alone = simulated_alone(k, work, jitter, &mut rng);
                let mut sweep = Sweep::new(64);
                while let Some(c) = sweep.next() {
                    // The step alone is the yardstick: its own ratio is 1.
                    let here = if c == 1 {
                        alone
                    } else {
                        Settled::from_latencies(&simulated(c, k, work, jitter, &mut rng), c)
                    };
                    sweep.record(Point {
                        concurrency: c,
                        ratio: alone.mean / here.mean,
                        relative_error: if c == 1 {
                            0.0
                        } else {
                            here.relative_error.hypot(alone.relative_error)
                        },
                    });
                }
                let deepest = sweep.deepest().expect("a step");
                let estimate = deepest.concurrency as f64 * deepest.ratio / k as f64;
                let knee = sweep.knee();
                let found = knee.is_some_and(|knee| {
                    knee.last_free.abs_diff(k) <= resolution(knee.first_queued)
                        && knee.first_queued > k.saturating_sub(resolution(knee.first_queued))
                });
                if (estimate - 1.0).abs() > within || !found {
                    misses.push(format!(
                        "±{jitter}: pool of {k} read {estimate:.3} × k at {}, knee {knee:?}",
                        deepest.concurrency
                    ));
                }
            }
        }
        assert!(misses.is_empty(), "{misses:#?}");
    }
}
