//! The exit status of every command: what a CI step reads instead of parsing the output.
//!
//! The same four codes for every command that decides (`compare`, `judge`, `locust`, `k6`, `selftest`), as
//! k6 gives 99 for a failed threshold; a command that decides nothing (`serve`, `report`,
//! `export`, …) exits 0 when it did its work and 3 when it could not.

use std::process::ExitCode;

use perfshape::Verdict;
use perfshape::claim::{ClaimReport, GateMode};

/// The codes as `--help` prints them.
pub(crate) const EXIT_STATUS: &str = "\
Exit status (every command that decides: compare, judge, locust, k6, selftest):
  0  every claim holds (or the gate is advisory: PERFSHAPE_GATE=advisory)
  1  a claim is broken
  2  no claim is broken, but one is inconclusive (the rounds could not tell)
  3  could not run: bad input, a dead host, an engine that failed";

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Exit {
    /// 0: every claim holds, or the command decided nothing and did its work.
    Holds,
    /// 2: no claim is broken, one is inconclusive (strict gate).
    Inconclusive,
    /// 1: a claim is broken (strict gate).
    Broken,
    /// 3: the command could not run.
    CouldNotRun,
}

impl Exit {
    /// The status of decided claims: the worst verdict among those whose gate is strict.
    /// A claim under an advisory gate that does not hold is named on stderr and counts as
    /// holding, as the library's own gate lets it pass.
    pub(crate) fn of<'a>(reports: impl IntoIterator<Item = &'a ClaimReport>) -> Exit {
        reports
            .into_iter()
            .map(|report| match (report.gate(), report.verdict()) {
                (_, Verdict::Holds) => Exit::Holds,
                (GateMode::Advisory, _) => {
                    eprintln!(
                        "perfshape: advisory gate (PERFSHAPE_GATE=advisory): not failing on {}",
                        report.headline()
                    );
                    Exit::Holds
                }
                (GateMode::Strict, verdict) => Exit::of_verdict(verdict),
            })
            .max()
            .unwrap_or(Exit::Holds)
    }

    /// The status a verdict alone gives.
    pub(crate) fn of_verdict(verdict: Verdict) -> Exit {
        match verdict {
            Verdict::Holds => Exit::Holds,
            Verdict::Broken => Exit::Broken,
            Verdict::Inconclusive => Exit::Inconclusive,
        }
    }

    /// The process's exit code.
    pub(crate) fn code(self) -> ExitCode {
        ExitCode::from(match self {
            Exit::Holds => 0,
            Exit::Broken => 1,
            Exit::Inconclusive => 2,
            Exit::CouldNotRun => 3,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_outranks_inconclusive_and_could_not_run_outranks_both() {
        let worst = [Exit::Holds, Exit::Inconclusive, Exit::Broken]
            .into_iter()
            .max();
        assert_eq!(worst, Some(Exit::Broken));
        assert!(Exit::CouldNotRun > Exit::Broken);
        assert_eq!(Exit::of_verdict(Verdict::Inconclusive), Exit::Inconclusive);
    }
}
