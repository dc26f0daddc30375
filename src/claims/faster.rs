//! **Faster than**: one endpoint's fan-out against another's, in the same interleaved
//! rounds (old and new implementations, on one target or two).

use crate::claim::{Claim, Measure};
use crate::endpoint::Endpoint;
use crate::evidence::Evidence;
use crate::vocab::ClientStrategy;

impl Endpoint {
    /// **Faster than**: `other`'s fan-out of N ÷ this endpoint's, both measured in the
    /// same interleaved rounds (old vs new implementation, on one target or two). Give
    /// the band: `.at_least(3.0)` for "at least 3× faster". On two targets the sentence
    /// names both (name them with [`Target::named`](crate::Target::named)).
    pub fn faster_than(&self, other: &Endpoint) -> Claim<'static> {
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
        .context("n", n)
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
