//! **Faster than**: one endpoint's fan-out against another's, in the same interleaved
//! rounds (old and new implementations, on one target or two).

use crate::claim::{Claim, Measure};
use crate::endpoint::Endpoint;
use crate::error::Refused;
use crate::evidence::Evidence;
use crate::vocab::ClientStrategy;

impl Endpoint {
    /// **Faster than**: `other`'s fan-out of N ÷ this endpoint's is at least `times`, both
    /// measured in the same interleaved rounds (old vs new implementation, on one target
    /// or two): `faster_than(&old, 3.0)` for "at least 3× faster". `times` is a factor of
    /// at least 1 and at most 1000 (another is named by the claim's `check()`); a
    /// regression gate between two builds, with a tolerance in percent, is
    /// [`compared_with`](Self::compared_with). On two targets the sentence names both
    /// (name them with [`Target::named`](crate::Target::named)).
    pub fn faster_than(&self, other: &Endpoint, times: f64) -> Claim<'static> {
        let n = self.fan_out();
        let (this, that) = if self.target().same_service(other.target()) {
            (self.name(), other.name())
        } else {
            (
                format!("{} on {}", self.name(), self.target()),
                format!("{} on {}", other.name(), other.target()),
            )
        };
        Claim::ratio(
            &format!("{this} is faster than {that}"),
            other.concurrent(n),
            self.concurrent(n),
        )
        .at_least(times)
        .refusing(
            refused(times)
                .or_else(|| self.refused())
                .or_else(|| other.refused()),
        )
        .context("n", n)
        .ready_made()
    }

    /// The wall time of `n` concurrent requests, with what the server pool's workers did
    /// meanwhile as evidence.
    fn concurrent(&self, n: usize) -> Measure<'static> {
        let evidence = Evidence::default();
        let (this, seen) = (self.clone(), evidence.clone());
        let label = format!("{n} concurrent {}", self.name());
        let what = label.clone();
        Measure::duration(&label, move || {
            seen.observe(this.target(), || this.run(ClientStrategy::FanOut, n))
                .map(|run| run.wall)
        })
        .evidence(move || evidence.describe(&what))
    }
}

/// The most a factor may claim: a thousand times faster is already two different programs.
const MOST_TIMES: f64 = 1000.0;

/// `times` refused by name unless it is a factor from 1 to [`MOST_TIMES`].
fn refused(times: f64) -> Option<Refused> {
    (!(1.0..=MOST_TIMES).contains(&times)).then(|| {
        Refused::new(
            "times",
            times,
            "a factor of at least 1 and at most 1000 (3.0 is 3× faster)",
        )
    })
}
