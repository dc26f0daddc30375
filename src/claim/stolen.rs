//! Rounds the host took: a round measured while the hypervisor took a share of the
//! machine's CPUs ([`StealReading`]) measures the host, not the service, and is measured
//! again, a bounded number of times a claim. A burst that outlasts the bound leaves rounds
//! that were kept although the host took the machine during them; a claim that then ends
//! inconclusive names the host as its cause, not the service.

use std::time::Duration;

use super::Advice;
use crate::usage::StealReading;

/// Rounds measured again at most, in one claim: past that, a round is kept however much
/// the host took during it, and the report says how much. Six ran out in a fresh clone's
/// CI, in a burst that had 39 of 102 claims measure rounds again (20–850 ms taken from
/// each): an A/A compare of 25 ms rounds kept rounds 13–60 % slow and ended inconclusive.
const MOST_MEASURED_AGAIN: usize = 12;

/// The host's steal during a round past which it is measured again: 5 % of the machine's
/// CPU time over the round, and at least one of `/proc/stat`'s 10 ms ticks. A tick may
/// stand for less than 10 ms taken (the counter is truncated to ticks), but in a burst a
/// 25 ms round read one tick and ran 13–60 % slow, and when the host is quiet (0.05 % of
/// the time) a 100 ms round on 2 CPUs sees a tick once in about a hundred: measuring it
/// again costs one round.
const STEAL_SHARE: f64 = 0.05;
const STEAL_LEAST: Duration = Duration::from_millis(10);

/// The rounds of one claim the host took (hypervisor steal): those measured again, and
/// those kept once [`MOST_MEASURED_AGAIN`] had been. A measured side's per-round notes (a
/// claim's sentences) keep a round's note measured again; its figure is not counted.
#[derive(Debug, Default)]
pub(super) struct StolenRounds {
    again: usize,
    kept: usize,
    stolen: Duration,
}

impl StolenRounds {
    /// Whether the round that began at `steal` and took `took` is measured again.
    pub(super) fn measure_again(&mut self, steal: Option<StealReading>, took: Duration) -> bool {
        let (Some(then), Some(now)) = (steal, StealReading::now()) else {
            return false;
        };
        let stolen = now.since(&then);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.taken(stolen, took, cores)
    }

    /// [`Self::measure_again`] on what the counter read.
    fn taken(&mut self, stolen: Duration, took: Duration, cores: usize) -> bool {
        if !disturbed(stolen, took, cores) {
            return false;
        }
        self.stolen += stolen;
        if self.again >= MOST_MEASURED_AGAIN {
            self.kept += 1;
            return false;
        }
        self.again += 1;
        true
    }

    /// The evidence line, once the rounds are over, where some round was measured again.
    pub(super) fn said(&self) -> Option<String> {
        let kept = match self.kept {
            0 => String::new(),
            n => format!(" and {n} more kept past that bound"),
        };
        (self.again > 0).then(|| {
            format!(
                "{} round(s) measured again{kept}: the host took {} ms of the machine's CPU during them (hypervisor steal), so they measured the host, not the service",
                self.again,
                self.stolen.as_millis()
            )
        })
    }

    /// The cause and remedy of a claim that ended inconclusive with rounds the host took
    /// kept among its figures: `None` where every such round was measured again.
    pub(super) fn advice(&self) -> Option<Advice> {
        (self.kept > 0).then(|| {
            Advice::new(
                format!(
                    "the host took the machine (hypervisor steal, {} ms of its CPU in {} rounds): {} rounds were measured again and {} more were kept, so the figures are partly the host's, not the service's",
                    self.stolen.as_millis(),
                    self.again + self.kept,
                    self.again,
                    self.kept
                ),
                "run it again once the host is quiet: steal comes in bursts, and the steal column of /proc/stat shows one while it lasts",
            )
        })
    }
}

/// Whether `stolen` of a round that took `took` on `cores` CPUs is past [`STEAL_SHARE`]
/// and [`STEAL_LEAST`].
fn disturbed(stolen: Duration, took: Duration, cores: usize) -> bool {
    stolen >= STEAL_LEAST && stolen.as_secs_f64() > STEAL_SHARE * took.as_secs_f64() * cores as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_round_is_measured_again_only_for_a_burst_of_steal() {
        // No tick: nothing taken that the counter shows.
        assert!(!disturbed(Duration::ZERO, ms(50), 2));
        // One tick in a 50 ms round on 2 CPUs: 10 % of the machine.
        assert!(disturbed(ms(10), ms(50), 2));
        // Two ticks in a 100 ms round on 2 CPUs: 10 % of the machine.
        assert!(disturbed(ms(20), ms(100), 2));
        // The same two in a 1 s round: 1 %, kept.
        assert!(!disturbed(ms(20), ms(1000), 2));
        // One tick in a 200 ms round: 2.5 %, kept.
        assert!(!disturbed(ms(10), ms(200), 2));
    }

    #[test]
    fn the_evidence_line_counts_the_rounds_measured_again() {
        let mut rounds = StolenRounds::default();
        assert_eq!(rounds.said(), None);
        assert!(rounds.taken(ms(30), ms(100), 2));
        assert!(rounds.taken(ms(30), ms(100), 2));
        let line = rounds.said().expect("said once");
        assert!(
            line.starts_with("2 round(s) measured again: the host took 60 ms"),
            "{line}"
        );
    }

    #[test]
    fn a_burst_past_the_bound_is_named_as_the_cause() {
        let mut rounds = StolenRounds::default();
        assert!(!rounds.taken(ms(10), ms(1000), 2), "a quiet round is kept");
        for _ in 0..MOST_MEASURED_AGAIN {
            assert!(rounds.taken(ms(20), ms(100), 2));
        }
        assert_eq!(
            rounds.advice(),
            None,
            "every round the host took was measured again"
        );
        assert!(!rounds.taken(ms(20), ms(100), 2), "kept past the bound");
        let advice = rounds.advice().expect("a kept round the host took");
        assert!(
            advice.cause.starts_with(
                "the host took the machine (hypervisor steal, 260 ms of its CPU in 13 rounds): 12 rounds were measured again and 1 more were kept"
            ),
            "{}",
            advice.cause
        );
        let line = rounds.said().expect("measured again");
        assert!(
            line.starts_with(
                "12 round(s) measured again and 1 more kept past that bound: the host took 260 ms"
            ),
            "{line}"
        );
    }
}
