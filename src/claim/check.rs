//! Checking a claim: its settings refused before anything runs, its rounds measured, and a
//! side that could not give a figure turned into an inconclusive decision.

use std::time::Instant;

use super::decide::publish;
use super::{Band, Checked, Claim, Decision, GateMode, Relation, Round, Verdict};
use super::{artifact_dir, shape_lock};
use crate::error::{Error, Result};

impl Claim<'_> {
    fn validate(&self) -> Result<Band> {
        if let Some(refused) = &self.refused {
            return Err(refused.to_error());
        }
        let band = self.band.ok_or_else(|| {
            Error::invalid(
                "band",
                "none",
                "one of at_least(k), at_most(k), within(lo, hi)",
            )
        })?;
        if !band.is_valid() {
            return Err(Error::invalid("band", band, "lo ≤ hi, neither NaN"));
        }
        crate::error::check_range("min rounds", self.rule.min_rounds, 3, 50, "")?;
        crate::error::check_range(
            "max rounds",
            self.rule.max_rounds,
            self.rule.min_rounds,
            super::MAX_ROUNDS,
            "",
        )?;
        crate::error::check_range("warmup", self.warmup, 0, 10, "")?;
        if let Relation::Ordering(sides) = &self.relation {
            crate::error::check_range("ordering sides", sides.len(), 2, 16, "")?;
        }
        let replaying = self
            .relation
            .measures()
            .iter()
            .filter(|m| m.replays())
            .count();
        if replaying > 0 && replaying < self.relation.measures().len() {
            return Err(Error::invalid(
                "replayed sides",
                format!("{replaying} of {}", self.relation.measures().len()),
                "all sides or none: a replayed figure is only interleaved with the figures it was measured with",
            ));
        }
        if let Relation::Bound(measure) = &self.relation {
            let Some(expected) = &measure.expected else {
                return Err(Error::invalid(
                    "expected",
                    format!("none for {:?}", measure.label),
                    "a bound claim's measure with an expectation (Measure::expecting)",
                ));
            };
            if !(expected.value.is_finite() && expected.value > 0.0) {
                return Err(Error::invalid(
                    "expected",
                    format!("{} ({})", expected.value, expected.how),
                    "a finite figure above 0",
                ));
            }
        }
        Ok(band)
    }

    /// Measures, decides, writes the raw figures to [`artifact_dir`], and prints the
    /// report when the claim does not hold. A measurement error ends the check with it.
    pub fn check(mut self) -> Result<Checked> {
        let band = self.validate()?;
        let gate = match self.gate {
            Some(mode) => mode,
            None => GateMode::from_env()?,
        };
        let _serialised = shape_lock();
        let started = Instant::now();
        let (rounds, decision) = self.measure(&band, started)?;
        let dir = self.artifacts.take().unwrap_or_else(artifact_dir);
        let caller = self
            .caller
            .take()
            .or_else(|| std::thread::current().name().map(str::to_string));
        let report = self.decide(band, gate, rounds, decision, started);
        Ok(Checked::new(publish(report, &dir, caller.as_deref())))
    }

    /// Measuring: the rounds, and the rule's decision on them. A side too slow to measure
    /// ends the rounds with an inconclusive decision, not in the test runner's kill: what
    /// was measured so far, and which side ran out of time.
    pub(super) fn measure(
        &mut self,
        band: &Band,
        started: Instant,
    ) -> Result<(Vec<Round>, Decision)> {
        let mut rounds: Vec<Round> = Vec::new();
        let decision = match self.measure_rounds(band, started, &mut rounds) {
            Ok(decision) if decision.verdict == Some(Verdict::Holds) => {
                match self.untold.take().and_then(|untold| untold()) {
                    Some(what) => {
                        self.cannot_tell = true;
                        Decision {
                            verdict: Some(Verdict::Inconclusive),
                            reason: cannot_tell(rounds.len(), &what),
                        }
                    }
                    None => decision,
                }
            }
            Ok(decision) => decision,
            Err(Error::TooSlow { request, what }) => Decision {
                verdict: Some(Verdict::Inconclusive),
                reason: format!(
                    "a side ran past its time limit after {} rounds: {request} {what}",
                    rounds.len()
                ),
            },
            Err(Error::Limited { what } | Error::MachineBusy { what }) => Decision {
                verdict: Some(Verdict::Inconclusive),
                reason: format!(
                    "after {} rounds, perfshape or the machine was the limit, not the service: {what}",
                    rounds.len()
                ),
            },
            Err(Error::Unread { what }) => {
                let reason = format!(
                    "after {} rounds, it is not measurable here: {what}",
                    rounds.len()
                );
                self.unread = Some(what);
                Decision {
                    verdict: Some(Verdict::Inconclusive),
                    reason,
                }
            }
            Err(Error::CannotTell { what }) => {
                self.cannot_tell = true;
                Decision {
                    verdict: Some(Verdict::Inconclusive),
                    reason: cannot_tell(rounds.len(), &what),
                }
            }
            Err(other) => return Err(other),
        };
        if let Some(line) = self.stolen.evidence() {
            self.evidence.push(line);
        }
        Ok((rounds, decision))
    }
}

/// The reason of a claim that cannot be told here, after `rounds` rounds.
fn cannot_tell(rounds: usize, what: &str) -> String {
    format!("{what} — after {rounds} rounds, it cannot be told from here")
}

#[cfg(test)]
mod tests {
    use super::super::Measure;
    use super::*;

    /// A figure claim on rounds of 0.4 against ≤ 1, kept out of the artifacts' directory.
    fn held(dir: &std::path::Path) -> Claim<'static> {
        Claim::figure("steady", Measure::value("steady", || Ok(0.4)))
            .at_most(1.0)
            .gate_mode(GateMode::Strict)
            .artifacts_in(dir)
    }

    /// Rounds that held are inconclusive where the build cannot tell them, with the reason;
    /// they hold where it can, and rounds that broke stay broken.
    #[test]
    fn the_rounds_that_held_are_untold_where_the_build_cannot_tell() {
        let dir = tempfile::tempdir().unwrap();
        let untold = held(dir.path())
            .untold_when(|| Some("between the budgets".to_string()))
            .check()
            .unwrap();
        assert_eq!(untold.verdict(), Verdict::Inconclusive);
        assert!(untold.report().reason.contains("between the budgets"));
        let told = held(dir.path()).untold_when(|| None).check().unwrap();
        assert_eq!(told.verdict(), Verdict::Holds);
        let broken = Claim::figure("past", Measure::value("past", || Ok(2.0)))
            .at_most(1.0)
            .gate_mode(GateMode::Advisory)
            .artifacts_in(dir.path())
            .untold_when(|| Some("between the budgets".to_string()))
            .check()
            .unwrap();
        assert_eq!(broken.verdict(), Verdict::Broken);
    }
}
