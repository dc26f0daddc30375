//! The report whole, as `{report:#}` or `PERFSHAPE_REPORT=full` writes it: every meaning,
//! the evidence, each round, the settings and the machine.

use std::fmt::Write as _;

use super::super::gate_mode::GATE_ENV;
use super::ClaimReport;

/// `PERFSHAPE_REPORT=full` prints every claim's full report — every meaning, the evidence,
/// each round, the settings and the machine — where the default leads with what is wrong,
/// its cause, what to do and how sure, and names where the rest is.
pub const REPORT_ENV: &str = "PERFSHAPE_REPORT";

/// Whether [`REPORT_ENV`] asks for the full report.
fn full_asked() -> bool {
    std::env::var(REPORT_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("full"))
}

/// The report as a failure reads: it leads with the verdict and what is wrong, then the
/// likely cause and what to do, how sure it is, and where the rest is (five lines at most).
/// `{report:#}`, or `PERFSHAPE_REPORT=full`, writes all of it.
impl std::fmt::Display for ClaimReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !f.alternate() && !full_asked() {
            return f.write_str(&self.lead());
        }
        let mut s = String::new();
        self.write_found(&mut s);
        self.write_rounds(&mut s);
        self.write_settings(&mut s);
        f.write_str(s.trim_end())
    }
}

impl ClaimReport {
    /// What it found, its cause and remedy, how sure, every meaning, fact and piece of
    /// evidence, the margin and the expectation.
    fn write_found(&self, s: &mut String) {
        let _ = writeln!(s, "{}", self.headline());
        if let Some(detail) = self.detail() {
            let _ = writeln!(s, "  found: {detail}");
        }
        if let Some(advice) = &self.advice {
            let _ = writeln!(s, "  cause: {}", advice.cause);
            let _ = writeln!(s, "  do: {}", advice.action);
        }
        let _ = writeln!(s, "  why: {}", self.sureness());
        for line in self.explanation.iter().skip(1) {
            let _ = writeln!(s, "  meaning: {line}");
        }
        for (key, fact) in &self.facts {
            let _ = writeln!(s, "  fact: {key}: {fact}");
        }
        for line in &self.evidence {
            let _ = writeln!(s, "  evidence: {line}");
        }
        if let Some(margin) = self.margin {
            let _ = writeln!(s, "  margin: {margin} of the band's nearest edge");
        }
        if let Some((e, unit)) = &self.expected {
            let _ = writeln!(s, "  expected: {} = {}", unit.show(e.value), e.how);
        }
    }

    /// Every round: each side's figure and the round's, inside the band or not.
    fn write_rounds(&self, s: &mut String) {
        let order = if self.sides.len() > 1 {
            "sides interleaved, A B then B A; "
        } else {
            ""
        };
        if !self.rounds.is_empty() {
            let _ = writeln!(
                s,
                "  rounds ({order}noise floor = median change between consecutive rounds of a side, {:.1}%):",
                self.noise_floor * 100.0
            );
        }
        for (i, round) in self.rounds.iter().enumerate() {
            let sides = self
                .sides
                .iter()
                .zip(&round.figures)
                .map(|((label, unit), x)| format!("{label} = {}", unit.show(*x)))
                .collect::<Vec<_>>()
                .join(", ");
            let where_ = if round.inside { "inside" } else { "OUTSIDE" };
            if self.kind == "figure" {
                // The side's figure is the claim's figure: say it once.
                let _ = writeln!(s, "    {:>2}: {sides} {where_}", i + 1);
            } else {
                let _ = writeln!(s, "    {:>2}: {sides} → {:.3} {where_}", i + 1, round.value);
            }
        }
    }

    /// The settings, the machine and the build, how long it measured, the gate, and where
    /// the raw figures are.
    fn write_settings(&self, s: &mut String) {
        let context = self
            .context
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(s, "  settings: {context}");
        let measured = if self.kind == "watch" {
            format!("watched for {:.2} s", self.elapsed.as_secs_f64())
        } else {
            format!(
                "measured for {:.2} s of a {:.0} s budget",
                self.elapsed.as_secs_f64(),
                self.budget.as_secs_f64()
            )
        };
        let _ = writeln!(
            s,
            "  machine: {} cores{}; {}; {measured}{}; gate {} ({GATE_ENV})",
            self.cores,
            self.cpu_quota.map_or(String::new(), |cpus| format!(
                ", a CPU quota of {}",
                crate::cpu_quota::cpus_in_words(cpus)
            )),
            crate::build::describe(),
            self.out_of_time
                .and_then(|out| out.machine())
                .map_or(String::new(), |busy| format!(", {busy}")),
            self.gate
        );
        if let Some(path) = &self.artifact {
            let _ = write!(s, "  raw figures: {}", path.display());
        }
    }
}
