//! Measuring a claim's rounds: warm-up, sides interleaved in alternating order, the rule
//! asked after each round it looks at; and what the rounds say about their own time and
//! noise.

use std::time::{Duration, Instant};

use super::{Band, Claim, Decision, Measure, Round, Unit, Verdict, noise_floor};
use crate::error::{Error, Result};
use crate::outcome::OutOfTime;
use crate::usage::{CpuReading, StealReading};

impl Claim<'_> {
    /// Warms up, then measures rounds into `rounds` until the rule settles the claim or its
    /// time budget runs out (the time of rounds measured again left out) — or, on rounds
    /// quick enough, the most rounds the rule takes.
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
        // How busy the machine is while the rounds run: an unsettled claim says it.
        let machine = CpuReading::now();
        // Rounds measured again because other processes' work saturated the machine.
        let mut busy_again = 0usize;
        loop {
            let (steal, began) = (StealReading::now(), Instant::now());
            let (figures, limited) = self.sides_once(count, rounds.len() % 2 == 1)?;
            if !replayed && self.stolen.measure_again(steal, began.elapsed()) {
                continue;
            }
            match limited {
                // A shared machine's other work passes: the round is measured again while
                // the budget lasts (the claim's own time, as any round's).
                Some(Error::MachineBusy { what }) => {
                    let spent = started.elapsed().saturating_sub(self.stolen.spent());
                    if spent < self.budget {
                        busy_again += 1;
                        continue;
                    }
                    return Err(Error::Limited {
                        what: format!(
                            "{what} (a round measured again {busy_again} times until its {} budget ran out)",
                            seconds(self.budget)
                        ),
                    });
                }
                Some(error) => return Err(error),
                None => {}
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
            if decision.verdict.is_some() {
                return Ok(decision);
            }
            // The rounds measured again are the host's time, not the claim's.
            let spent = started.elapsed().saturating_sub(self.stolen.spent());
            let budget_spent = spent >= self.budget;
            if rounds.len() >= self.rule.max_rounds || budget_spent {
                return Ok(self.unsettled(machine, budget_spent, rounds.len(), decision));
            }
        }
    }

    /// One round's sides, each measured once — in side order, or reversed for an odd
    /// round — and the error that stopped them where the machine was the limit: "the
    /// machine was the limit" (the load client's own CPU per request, the machine's CPU)
    /// read while the host took the machine is the host's reading too, measured again as a
    /// figure would be.
    fn sides_once(&mut self, count: usize, reversed: bool) -> Result<(Vec<f64>, Option<Error>)> {
        let mut order: Vec<usize> = (0..count).collect();
        if reversed {
            order.reverse();
        }
        let mut figures = vec![f64::NAN; count];
        let mut sides = self.relation.sides();
        for i in order {
            match measure(sides[i]) {
                Ok(figure) => figures[i] = figure,
                Err(error @ (Error::Limited { .. } | Error::MachineBusy { .. })) => {
                    return Ok((figures, Some(error)));
                }
                Err(error) => return Err(error),
            }
        }
        Ok((figures, None))
    }

    /// The decision of rounds that did not settle within the budget or the most rounds the
    /// rule takes: inconclusive, saying where they stopped and how busy the machine was
    /// since `machine`.
    fn unsettled(
        &mut self,
        machine: Option<CpuReading>,
        budget_spent: bool,
        rounds: usize,
        decision: Decision,
    ) -> Decision {
        let now = CpuReading::now();
        let busy = |f: fn(&CpuReading, &CpuReading) -> Option<f64>| {
            machine.zip(now).and_then(|(then, now)| f(&now, &then))
        };
        self.out_of_time = Some(OutOfTime {
            budget: self.budget,
            budget_spent,
            machine_busy: busy(CpuReading::busy_since),
            own: busy(CpuReading::own_since),
        });
        let stop = if budget_spent {
            format!(
                "its {} budget ran out after {rounds} rounds",
                seconds(self.budget)
            )
        } else {
            format!("after {rounds} rounds, the most its rule takes")
        };
        Decision {
            verdict: Some(Verdict::Inconclusive),
            reason: format!("{}: {stop}", decision.reason),
        }
    }
}

/// "20 s", "2.5 s".
fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.1} s")
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
