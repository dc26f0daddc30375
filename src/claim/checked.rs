//! A claim after its rounds: the verdict, the report, the snapshot view, and the gate.

use crate::error::{Error, Result};
use crate::outcome::Verdict;
use crate::outcome::{ClaimReport, ShapeSummary};
use crate::outcome::{GATE_ENV, GateMode};

/// A checked claim: its report, its shape summary, and the gate.
///
/// ```
/// use std::time::Duration;
/// use perfshape::{Claim, claim::Measure, Verdict};
///
/// let checked = Claim::ratio(
///     "slow ÷ fast",
///     Measure::duration("slow", || Ok(Duration::from_millis(40))),
///     Measure::duration("fast", || Ok(Duration::from_millis(10))),
/// )
/// .at_least(3.0)
/// .check()?
/// .fact("both sides measured", true);
/// assert_eq!(checked.verdict(), Verdict::Holds);
/// assert_eq!(checked.summary().facts["both sides measured"], "true");
/// checked.gate()?;
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Debug)]
#[must_use = "a checked claim fails nothing until it is gated: `assert_shape!(checked)` or `checked.gate()?`"]
pub struct Checked {
    report: ClaimReport,
}

impl Checked {
    pub(crate) fn new(report: ClaimReport) -> Self {
        Checked { report }
    }

    /// A report decided elsewhere than in a claim's rounds (a watch's), published as a
    /// claim's is: its figures written to [`artifact_dir`](crate::claim::artifact_dir) under
    /// the name of the test that made it (`caller`, its thread's), and its report printed.
    pub(crate) fn published(report: ClaimReport, caller: Option<&str>) -> Self {
        Checked::new(super::decide::publish(
            report,
            &crate::outcome::artifact_dir(),
            caller,
        ))
    }

    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        self.report.verdict
    }

    /// Everything measured and decided.
    pub fn report(&self) -> &ClaimReport {
        &self.report
    }

    /// Side `side`'s figure in every round, in order (sides count from 0 in the order the
    /// claim was given them): what another claim about the same side can replay
    /// ([`Measure::replaying`](crate::claim::Measure::replaying)).
    pub fn figures(&self, side: usize) -> Vec<f64> {
        self.report
            .rounds
            .iter()
            .filter_map(|r| r.figures.get(side).copied())
            .collect()
    }

    /// Adds a deterministic fact (a wave count the shape fixes, a connection count) to the
    /// report and its snapshot. Only values that do not move while the shape holds belong
    /// here.
    pub fn fact(mut self, key: &str, value: impl ToString) -> Self {
        self.report.facts.insert(key.to_string(), value.to_string());
        self
    }

    /// The deterministic-while-healthy view, for snapshots.
    pub fn summary(&self) -> ShapeSummary {
        self.report.summary()
    }

    /// Whether the `assert_shape!` macro compares this claim's snapshot: always
    /// in strict mode; in advisory mode only while the claim holds, so that a claim that
    /// advisory mode lets pass does not fail on its snapshot instead; never for a claim
    /// this platform cannot measure ([`ClaimReport::unread`]), whose snapshot is the one
    /// the platforms that measure it write.
    pub fn snapshot_due(&self) -> bool {
        self.report.verdict.holds()
            || (self.report.gate == GateMode::Strict && self.report.unread.is_none())
    }

    /// Strict: an error carrying the full report unless the claim holds. A claim that
    /// needs a read this platform does not make (off Linux, [`ClaimReport::unread`]) is
    /// neither: it prints why and passes, as a test ignored on a platform does. Advisory: prints
    /// the report and passes.
    pub fn gate(&self) -> Result<()> {
        if self.report.verdict.holds() {
            return Ok(());
        }
        if let Some(unread) = &self.report.unread {
            // Not measurable on this platform: neither a pass nor a failure, as a test
            // ignored here; the claim decides where the read is made.
            eprintln!(
                "perfshape: not decided here, not failing: {} ({unread})",
                self.report.name
            );
            return Ok(());
        }
        match self.report.gate {
            GateMode::Strict => Err(Error::Gate {
                message: self.report.to_string(),
                reports: vec![self.report.clone()],
            }),
            GateMode::Advisory => {
                eprintln!(
                    "perfshape: advisory mode ({GATE_ENV}=advisory): not failing on {}",
                    self.report.headline()
                );
                Ok(())
            }
        }
    }
}
