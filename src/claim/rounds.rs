//! Measuring a claim's rounds: warm-up, sides interleaved in alternating order, the rule
//! asked after each round it looks at; and what the rounds say about their own time and
//! noise.

use std::time::{Duration, Instant};

use super::{Band, Claim, Decision, Measure, Round, Unit, Verdict, noise_floor};
use crate::error::{Error, Result};
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

/// The rounds of one claim measured again because the host took the machine during them
/// (hypervisor steal, [`StealReading`]): what a round measured then says is the host's,
/// not the service's. A measured side's per-round notes (a claim's sentences) keep that
/// round's note; its figure is not counted.
#[derive(Default)]
struct StolenRounds {
    again: usize,
    stolen: Duration,
    said: bool,
}

impl StolenRounds {
    /// Whether the round that began at `steal` and took `took` is measured again.
    fn measure_again(&mut self, steal: Option<StealReading>, took: Duration) -> bool {
        let (Some(then), Some(now)) = (steal, StealReading::now()) else {
            return false;
        };
        let stolen = now.since(&then);
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if !disturbed(stolen, took, cores) || self.again >= MOST_MEASURED_AGAIN {
            return false;
        }
        self.again += 1;
        self.stolen += stolen;
        true
    }

    /// The evidence line, once, when the claim is about to end and some round was
    /// measured again.
    fn said(&mut self, ending: bool) -> Option<String> {
        if !ending || self.said || self.again == 0 {
            return None;
        }
        self.said = true;
        Some(format!(
            "{} round(s) measured again: the host took {} ms of the machine's CPU during them (hypervisor steal), so they measured the host, not the service",
            self.again,
            self.stolen.as_millis()
        ))
    }
}

/// Whether `stolen` of a round that took `took` on `cores` CPUs is past [`STEAL_SHARE`]
/// and [`STEAL_LEAST`].
fn disturbed(stolen: Duration, took: Duration, cores: usize) -> bool {
    stolen >= STEAL_LEAST && stolen.as_secs_f64() > STEAL_SHARE * took.as_secs_f64() * cores as f64
}

impl Claim<'_> {
    /// Warms up, then measures rounds into `rounds` until the rule settles the claim, the
    /// rounds run out or the budget does.
    pub(super) fn measure_rounds(
        &mut self,
        band: &Band,
        started: Instant,
        rounds: &mut Vec<Round>,
    ) -> Result<Decision> {
        let count = self.relation.sides().len();
        for _ in 0..self.warmup {
            for side in self.relation.sides() {
                side.warm_up()?;
            }
        }
        // A replayed side's figures were measured elsewhere (an engine's statistics).
        let replayed = self.relation.measures().iter().any(|m| m.replays());
        let mut again = StolenRounds::default();
        loop {
            let mut order: Vec<usize> = (0..count).collect();
            if rounds.len() % 2 == 1 {
                order.reverse();
            }
            let mut figures = vec![f64::NAN; count];
            let mut sides = self.relation.sides();
            let (steal, began) = (StealReading::now(), Instant::now());
            let mut limited = None;
            for i in order {
                match measure(sides[i]) {
                    Ok(figure) => figures[i] = figure,
                    // "The machine was the limit" (the load client's own CPU per request,
                    // the machine's CPU) read while the host took the machine is the
                    // host's reading too: measured again, as a figure would be.
                    Err(error @ Error::Limited { .. }) => {
                        limited = Some(error);
                        break;
                    }
                    Err(error) => return Err(error),
                }
            }
            if !replayed && again.measure_again(steal, began.elapsed()) {
                continue;
            }
            if let Some(error) = limited {
                return Err(error);
            }
            let value = self.relation.figure(&figures);
            rounds.push(Round {
                figures,
                value,
                inside: band.contains(value),
            });
            if !self.rule.looks_at(rounds.len()) {
                continue;
            }
            let values: Vec<f64> = rounds.iter().map(|r| r.value).collect();
            let decision = self.rule.decide(&values, band);
            if let Some(line) = again.said(
                decision.verdict.is_some()
                    || rounds.len() >= self.rule.max_rounds
                    || started.elapsed() >= self.budget,
            ) {
                self.evidence.push(line);
            }
            if decision.verdict.is_some() {
                return Ok(decision);
            }
            if rounds.len() >= self.rule.max_rounds || started.elapsed() >= self.budget {
                return Ok(Decision {
                    verdict: Some(Verdict::Inconclusive),
                    reason: format!("{} after {} rounds", decision.reason, rounds.len()),
                });
            }
        }
    }
}

fn measure(side: &mut Measure<'_>) -> Result<f64> {
    let value = side.next()?;
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::invalid(
            "measured figure",
            format!("{value} from {:?}", side.label),
            "a finite figure above 0",
        ))
    }
}

/// What the rounds must have waited for, however fast the machine: each side's floor (or,
/// for a duration without one, its quickest round) times the rounds.
pub(super) fn physical_limit(measures: &[&Measure<'_>], rounds: &[Round]) -> Option<Duration> {
    let mut total = 0.0;
    for (i, measure) in measures.iter().enumerate() {
        let floor = match (measure.floor, measure.unit) {
            (Some(floor), _) => floor.as_secs_f64(),
            (None, Unit::Seconds) => rounds
                .iter()
                .filter_map(|r| r.figures.get(i).copied())
                .fold(f64::INFINITY, f64::min),
            (None, _) => return None,
        };
        if floor.is_finite() {
            total += floor * rounds.len() as f64;
        }
    }
    Some(Duration::from_secs_f64(total))
}

/// The noisiest side's A/A noise floor.
pub(super) fn side_noise(rounds: &[Round]) -> f64 {
    let count = rounds.first().map_or(0, |r| r.figures.len());
    (0..count)
        .map(|i| noise_floor(&rounds.iter().map(|r| r.figures[i]).collect::<Vec<_>>()))
        .fold(0.0, f64::max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_is_measured_again_only_for_a_burst_of_steal() {
        let ms = Duration::from_millis;
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
        let mut rounds = StolenRounds::default();
        assert_eq!(rounds.said(true), None);
        rounds.again = 2;
        rounds.stolen = ms(60);
        assert!(rounds.said(false).is_none());
        let line = rounds.said(true).expect("said once");
        assert!(
            line.starts_with("2 round(s) measured again: the host took 60 ms"),
            "{line}"
        );
        assert!(rounds.said(true).is_none());
    }
}
