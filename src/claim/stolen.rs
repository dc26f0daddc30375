//! Rounds the host took: a round measured while the hypervisor took a share of the
//! machine's CPUs ([`StealReading`]) measures the host, not the service, and is measured
//! again, for a bounded count of rounds and time a claim. A burst that outlasts both leaves
//! rounds that were kept although the host took the machine during them; a claim that then
//! ends inconclusive names the host as its cause, not the service.

use std::time::Duration;

use super::Advice;
use crate::usage::StealReading;

/// Rounds measured again in one claim before [`MOST_TIME_AGAIN`] is what bounds it: enough
/// to ride out a burst of the host's steal that a claim of short rounds meets (what set it:
/// docs/findings.md, "Rounds the host took").
const MOST_MEASURED_AGAIN: usize = 12;

/// Time a claim spends on rounds measured again, past [`MOST_MEASURED_AGAIN`] of them:
/// past both, a round is kept however much the host took during it, and the report says
/// how much. Most bursts of steal end within it (docs/findings.md).
const MOST_TIME_AGAIN: Duration = Duration::from_secs(20);

/// The pause before each round measured again past [`MOST_MEASURED_AGAIN`]: the burst is
/// waited out at a few rounds a second, not with hundreds of short rounds, each of which
/// sends the service its requests.
const PAUSE_AGAIN: Duration = Duration::from_millis(250);

/// The host's steal during a round past which it is measured again: 5 % of the machine's
/// CPU time over the round, and at least one of `/proc/stat`'s 10 ms ticks. A tick may
/// stand for less than 10 ms taken (the counter is truncated to ticks), but in a burst a
/// 25 ms round read one tick and ran 13–60 % slow, and when the host is quiet (0.05 % of
/// the time) a 100 ms round on 2 CPUs sees a tick once in about a hundred: measuring it
/// again costs one round.
const STEAL_SHARE: f64 = 0.05;
const STEAL_LEAST: Duration = Duration::from_millis(10);

/// The rounds of one claim the host took (hypervisor steal): those measured again, and
/// those kept once [`MOST_MEASURED_AGAIN`] and [`MOST_TIME_AGAIN`] had been spent. A
/// measured side's per-round notes (a claim's sentences) keep a round's note measured
/// again; its figure is not counted.
#[derive(Debug, Default)]
pub(super) struct StolenRounds {
    again: usize,
    kept: usize,
    stolen: Duration,
    /// The rounds measured again took this long, with the pauses before them: the time a
    /// claim's budget does not count.
    spent: Duration,
}

impl StolenRounds {
    /// Whether the round that began at `steal` and took `took` is measured again; past
    /// [`MOST_MEASURED_AGAIN`], after a pause of [`PAUSE_AGAIN`].
    pub(super) fn measure_again(&mut self, steal: Option<StealReading>, took: Duration) -> bool {
        let (Some(then), Some(now)) = (steal, StealReading::now()) else {
            return false;
        };
        let stolen = now.since(&then);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        match self.taken(stolen, took, cores) {
            Some(pause) => {
                std::thread::sleep(pause);
                true
            }
            None => false,
        }
    }

    /// [`Self::measure_again`] on what the counter read: the pause before the round is
    /// measured again, or `None` where it is kept.
    fn taken(&mut self, stolen: Duration, took: Duration, cores: usize) -> Option<Duration> {
        if !disturbed(stolen, took, cores) {
            return None;
        }
        self.stolen += stolen;
        if self.again >= MOST_MEASURED_AGAIN && self.spent >= MOST_TIME_AGAIN {
            self.kept += 1;
            return None;
        }
        let pause = if self.again >= MOST_MEASURED_AGAIN {
            PAUSE_AGAIN
        } else {
            Duration::ZERO
        };
        self.again += 1;
        self.spent += took + pause;
        Some(pause)
    }

    /// The time spent on rounds measured again, which a claim's time budget leaves out:
    /// the host's, not the claim's.
    pub(super) fn spent(&self) -> Duration {
        self.spent
    }

    /// The evidence line, once the rounds are over, where some round was measured again.
    pub(super) fn evidence(&self) -> Option<String> {
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
        assert_eq!(rounds.evidence(), None);
        assert_eq!(rounds.taken(ms(30), ms(100), 2), Some(Duration::ZERO));
        assert_eq!(rounds.taken(ms(30), ms(100), 2), Some(Duration::ZERO));
        let line = rounds.evidence().expect("said once");
        assert!(
            line.starts_with("2 round(s) measured again: the host took 60 ms"),
            "{line}"
        );
    }

    #[test]
    fn a_burst_is_waited_out_past_twelve_rounds_then_named_as_the_cause() {
        let mut rounds = StolenRounds::default();
        assert_eq!(
            rounds.taken(ms(10), ms(1000), 2),
            None,
            "a quiet round is kept"
        );
        for _ in 0..MOST_MEASURED_AGAIN {
            assert_eq!(rounds.taken(ms(20), ms(100), 2), Some(Duration::ZERO));
        }
        assert_eq!(rounds.spent(), ms(1200));
        // Past twelve rounds, the burst is waited out a round every pause, up to the time.
        let mut paused = 0;
        while let Some(pause) = rounds.taken(ms(20), ms(100), 2) {
            assert_eq!(pause, PAUSE_AGAIN);
            paused += 1;
        }
        // 1.2 s spent, then 100 ms rounds after 250 ms pauses up to 20 s.
        assert_eq!(
            paused,
            (20_000 - 1_200_usize).div_ceil(350),
            "{:?}",
            rounds.spent()
        );
        assert!(rounds.spent() >= MOST_TIME_AGAIN);
        assert_eq!(rounds.kept, 1, "the round after the time ran out is kept");
        let advice = rounds.advice().expect("a kept round the host took");
        let again = MOST_MEASURED_AGAIN + paused;
        assert!(
            advice.cause.starts_with(&format!(
                "the host took the machine (hypervisor steal, {} ms of its CPU in {} rounds): {again} rounds were measured again and 1 more were kept",
                20 * (again + 1),
                again + 1
            )),
            "{}",
            advice.cause
        );
        let line = rounds.evidence().expect("measured again");
        assert!(
            line.starts_with(&format!(
                "{again} round(s) measured again and 1 more kept past that bound"
            )),
            "{line}"
        );
    }

    #[test]
    fn every_round_the_host_took_is_measured_again_while_none_was_kept() {
        let mut rounds = StolenRounds::default();
        for _ in 0..MOST_MEASURED_AGAIN {
            assert!(rounds.taken(ms(20), ms(100), 2).is_some());
        }
        assert_eq!(rounds.advice(), None);
    }
}
