//! Deciding a claim: the report of its verdict — the median, its noise floor and margin,
//! the physical limit, the sentences and the evidence — and publishing it.

use std::time::Instant;

use super::median;
use super::rounds::{physical_limit, side_noise};
use super::{Band, Claim, ClaimReport, Decision, GateMode, Margin, Relation, Round, Verdict};

impl Claim<'_> {
    /// Deciding: the verdict and everything the report says about it — the median, its
    /// noise floor and margin, the physical limit, the sentences and the evidence.
    pub(super) fn decide(
        mut self,
        band: Band,
        gate: GateMode,
        rounds: Vec<Round>,
        decision: Decision,
        started: Instant,
    ) -> ClaimReport {
        let mut report = self.figures(band, gate, rounds, decision, started);
        self.say(&mut report);
        report
    }

    /// The report's figures: the verdict, the median, its noise floor and margin, the
    /// physical limit, the settings and the machine, the facts and the raw figures.
    fn figures(
        &mut self,
        band: Band,
        gate: GateMode,
        rounds: Vec<Round>,
        decision: Decision,
        started: Instant,
    ) -> ClaimReport {
        let units = self
            .relation
            .labels()
            .into_iter()
            .zip(self.relation.measures())
            .map(|(label, s)| (label, s.unit))
            .collect();
        let values: Vec<f64> = rounds.iter().map(|r| r.value).collect();
        let (median, noise_floor) = (median(&values), side_noise(&rounds));
        // A figure that was not a wait (a synthetic series, say) cannot make the limit
        // exceed the time the rounds actually took.
        let limit = match self.elsewhere {
            Some((_, limit)) => Some(limit),
            None => physical_limit(&self.relation.measures(), &rounds)
                .map(|limit| limit.min(started.elapsed())),
        };
        let expected = match &self.relation {
            Relation::Bound(m) => m.expected.clone().map(|e| (e, m.unit)),
            _ => None,
        };
        let mut context = self.relation.context();
        context.extend(std::mem::take(&mut self.context));
        ClaimReport {
            name: std::mem::take(&mut self.name),
            kind: self.relation.kind(),
            relation: self.relation.describe(),
            band,
            ideal: self.ideal.or_else(|| self.relation.ideal()),
            expected,
            verdict: decision.verdict.unwrap_or(Verdict::Inconclusive),
            reason: decision.reason,
            median,
            noise_floor,
            margin: Margin::of(&band, median, noise_floor),
            sides: units,
            rounds,
            context,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            cpu_quota: crate::cpu_quota::CpuQuota::binding().map(|q| q.cpus),
            gate,
            unread: self.unread.take(),
            budget: self.budget,
            out_of_time: self.out_of_time.take(),
            elapsed: self.elsewhere.map_or(started.elapsed(), |(took, _)| took),
            limit,
            explanation: Vec::new(),
            shape: None,
            advice: None,
            evidence: Vec::new(),
            facts: std::mem::take(&mut self.late_facts)
                .into_iter()
                .filter_map(|(key, fact)| fact().map(|value| (key, value)))
                .collect(),
            observed: self
                .observed
                .take()
                .map(|f| f().into_iter().collect())
                .unwrap_or_default(),
            artifact: None,
        }
    }

    /// What the report says of its figures: the sentences, the snapshot's shape, the
    /// cause and what to do, an allowed hold, and the evidence.
    fn say(&mut self, report: &mut ClaimReport) {
        if let Some(explain) = self.explain.take() {
            report.explanation = explain(report);
        }
        if let Some(shape) = self.shape.take() {
            report.shape = shape(report);
        }
        if let Some(advise) = self.advise.take() {
            report.advice = advise(report);
        }
        if let Some(allowed) = self.allowed.take() {
            allow(report, allowed);
        }
        // Rounds the host took, kept among the figures, are what an inconclusive claim
        // cannot see past: the service's own advice would answer a question not settled.
        if report.verdict == Verdict::Inconclusive
            && let Some(host) = self.stolen.advice()
        {
            report.advice = Some(host);
        }
        // An inconclusive claim always says why and what would settle it: where nothing
        // more specific was said, what its rounds did — unless its reason says what cannot
        // be told here and what makes it decisive.
        if report.verdict == Verdict::Inconclusive
            && !self.cannot_tell
            && report.advice.is_none()
            && !report.rounds.is_empty()
        {
            report.advice = Some(unsettled(report));
        }
        report.evidence = self
            .relation
            .sides()
            .into_iter()
            .filter_map(|side| side.evidence.take().and_then(|evidence| evidence()))
            .chain(std::mem::take(&mut self.evidence))
            .collect();
    }
}

/// Publishing: the raw figures to `dir` (as the test `caller` made them), and the report
/// on stderr — its headline (and advice, where a held claim has some: a database met on
/// loopback) when the claim holds, its leading lines when it does not.
pub(super) fn publish(
    mut report: ClaimReport,
    dir: &std::path::Path,
    caller: Option<&str>,
) -> ClaimReport {
    report.write_artifact(dir, caller);
    if report.verdict.holds() && report.advice.is_none() {
        eprintln!("perfshape: {}", report.headline());
    } else {
        eprintln!("perfshape: {report}");
    }
    report
}

/// A broken claim whose hold a team allowed holds: its first line says it was allowed and
/// by what, the hold's words are kept as a fact for its snapshot, and it gives no advice.
/// What the allows could not match is added to its report either way.
fn allow(report: &mut ClaimReport, allowed: super::Allowed<'_>) {
    let (by, unmatched) = allowed(report);
    if let (Verdict::Broken, Some(by)) = (report.verdict, by) {
        report.verdict = Verdict::Holds;
        report.advice = None;
        let found = report
            .finding()
            .unwrap_or(report.reason.as_str())
            .to_string();
        let held = report
            .shape
            .take()
            .unwrap_or_else(|| "held its worker".to_string());
        report
            .facts
            .insert("allowed".to_string(), format!("{held}, allowed by {by}"));
        match report.explanation.first_mut() {
            Some(first) => *first = format!("allowed by {by}: {found}"),
            None => report.explanation.push(format!("allowed by {by}: {found}")),
        }
    }
    report.explanation.extend(unmatched);
}

/// Why the rounds of an inconclusive claim did not settle it, and what would: how many fell
/// on each side of the band, and a longer budget or a quieter machine.
fn unsettled(report: &ClaimReport) -> super::Advice {
    let n = report.rounds.len();
    let inside = report.rounds.iter().filter(|r| r.inside).count();
    super::Advice::new(
        format!(
            "{} of its {n} rounds fell outside the band {} and {inside} inside (median {:.3}): the machine's noise, or a shape that comes and goes, kept them from settling it",
            n - inside,
            report.band,
            report.median
        ),
        crate::outcome::what_settles(report),
    )
}
