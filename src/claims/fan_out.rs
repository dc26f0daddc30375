//! How many concurrent requests a blocking claim's round sends: twenty per worker, or, on
//! a route whose one request alone is long, as many as fill a round of its requests' own
//! time — sized once, from the request the claim sends before its rounds.
//!
//! On a router perfshape serves, the polls decide a hold, not the timing from outside: a
//! round needs enough requests to meet a lock the handler takes and to read the longest
//! poll of nine in ten, not twenty per worker. Twenty 400 ms requests (a password hash
//! offloaded to the blocking pool, in a build without optimisations) take 4.6 s a round on
//! two cores, and a hold needs nine quiet rounds: the 20 s budget ran out after five.
//! Four of them take ≈1 s. A route of 50 ms or less keeps the twenty it always had.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::holding::FAN_OUT_PER_WORKER;

/// The requests' own time a round sends at most, where that is fewer than
/// [`FAN_OUT_PER_WORKER`] a worker: 20 requests of 50 ms.
const ROUND_OF_REQUESTS: Duration = Duration::from_secs(1);

/// The fewest requests per worker a round sized to a long route sends: enough that a
/// worker has a queue (the timing from outside sees it) and that the longest poll of nine
/// requests in ten is not one request's alone.
const LEAST_PER_WORKER: usize = 4;

/// A claim's fan-out: fixed where the test set it ([`Endpoint::concurrency`]) or where the
/// timing from outside decides (by URL, where twenty per worker is its power), else
/// settled by the first request alone ([`FanOut::settle`]).
///
/// [`Endpoint::concurrency`]: crate::Endpoint::concurrency
#[derive(Clone, Debug)]
pub(crate) struct FanOut {
    n: Arc<AtomicUsize>,
    default: usize,
    least: usize,
    sized: bool,
}

impl FanOut {
    /// `set`, the test's own, else [`FAN_OUT_PER_WORKER`] per worker (at least 2), sized to
    /// the route where `sized` (the polls decide).
    pub(crate) fn new(set: Option<usize>, workers: usize, sized: bool) -> FanOut {
        let default = set.unwrap_or(FAN_OUT_PER_WORKER * workers).max(2);
        FanOut {
            n: Arc::new(AtomicUsize::new(default)),
            default,
            least: (LEAST_PER_WORKER * workers).min(default),
            sized: sized && set.is_none(),
        }
    }

    /// The requests a round sends.
    pub(crate) fn get(&self) -> usize {
        self.n.load(Ordering::Relaxed)
    }

    /// Sizes the fan-out to `alone`, one request's time alone: as many as fill
    /// [`ROUND_OF_REQUESTS`], between [`LEAST_PER_WORKER`] a worker and the default.
    pub(crate) fn settle(&self, alone: Duration) {
        if !self.sized {
            return;
        }
        let fill = (ROUND_OF_REQUESTS.as_secs_f64() / alone.as_secs_f64().max(f64::MIN_POSITIVE))
            .ceil() as usize;
        self.n
            .store(fill.clamp(self.least, self.default), Ordering::Relaxed);
    }

    /// The setting as a claim states it, the same whatever the route's time turns out to
    /// be — the count where it is fixed, the rule where the route sizes it — so that a
    /// snapshot does not change with a measured time (the count sent is in the report's
    /// evidence and its JSON).
    pub(crate) fn setting(&self) -> String {
        if self.sized {
            format!(
                "{} a worker, fewer where one request alone takes over {} ms: ≈{} s of requests a round, at least {LEAST_PER_WORKER} a worker",
                FAN_OUT_PER_WORKER,
                ROUND_OF_REQUESTS.as_millis() / FAN_OUT_PER_WORKER as u128,
                ROUND_OF_REQUESTS.as_secs()
            )
        } else {
            self.default.to_string()
        }
    }

    /// The fan-out as a measure's label names it: "20 concurrent", or, sized to the route,
    /// "the fan-out of" ([`setting`](Self::setting) says how it is sized).
    pub(crate) fn named(&self) -> String {
        if self.sized {
            "the fan-out of".to_string()
        } else {
            format!("{} concurrent", self.default)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_route_gets_fewer_requests_and_a_short_one_the_default() {
        let fan_out = FanOut::new(None, 1, true);
        fan_out.settle(Duration::from_millis(15));
        assert_eq!(fan_out.get(), 20);
        fan_out.settle(Duration::from_millis(100));
        assert_eq!(fan_out.get(), 10);
        fan_out.settle(Duration::from_millis(400));
        assert_eq!(fan_out.get(), 4);
        // The setting is the rule, whatever the route's time: a snapshot stays put.
        assert!(
            fan_out
                .setting()
                .starts_with("20 a worker, fewer where one request alone takes over 50 ms")
        );
        // Two workers: at least eight.
        let two = FanOut::new(None, 2, true);
        two.settle(Duration::from_millis(400));
        assert_eq!(two.get(), 8);
    }

    #[test]
    fn a_fan_out_the_test_set_or_measured_from_outside_is_kept() {
        let set = FanOut::new(Some(30), 1, true);
        set.settle(Duration::from_millis(400));
        assert_eq!(set.get(), 30);
        assert_eq!(set.setting(), "30");
        assert_eq!(set.named(), "30 concurrent");
        let outside = FanOut::new(None, 1, false);
        outside.settle(Duration::from_millis(400));
        assert_eq!(outside.get(), 20);
    }
}
