//! What a claim measured and decided: the report (its accessors here; its first lines in
//! `headline`, the whole in `full`, its JSON file in `artifact`) and the shape summary (for
//! snapshots).

mod artifact;
mod full;
mod headline;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::advice::Advice;
use super::band::Band;
use super::expected::Expected;
use super::gate_mode::GateMode;
use super::margin::Margin;
use super::unit::Unit;
use super::verdict::{Verdict, median};

/// One round: each side's figure (in side order) and the round's figure.
#[derive(Clone, Debug, Serialize)]
pub struct Round {
    /// Each side's measurement, in the order the sides were given.
    pub figures: Vec<f64>,
    /// The round's figure (ratio, measured ÷ expected, or tightest ordering step).
    pub value: f64,
    /// Whether the figure lies in the band.
    pub inside: bool,
}

/// Everything a claim measured and decided; `Display` is the failure message.
///
/// Read through its accessors: a claim builds it, and a field added to what a claim
/// reports is not a breaking change for code that reads it.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ClaimReport {
    /// The claim's name.
    pub(crate) name: String,
    /// `ratio`, `bound`, `figure` or `ordering`.
    pub(crate) kind: &'static str,
    /// What is divided by what, or the order claimed.
    pub(crate) relation: String,
    /// The band the median must lie in.
    pub(crate) band: Band,
    /// The ideal figure, when given.
    pub(crate) ideal: Option<f64>,
    /// For bound claims: the expectation and its unit.
    pub(crate) expected: Option<(Expected, Unit)>,
    /// The verdict.
    pub(crate) verdict: Verdict,
    /// Why, in one sentence.
    pub(crate) reason: String,
    /// The median of the rounds' figures.
    pub(crate) median: f64,
    /// The noisiest side's A/A noise floor (relative).
    pub(crate) noise_floor: f64,
    /// How far the median sits from the band's nearest edge ([`Margin`]).
    pub(crate) margin: Option<Margin>,
    /// Each side's label and unit.
    pub(crate) sides: Vec<(String, Unit)>,
    /// Every round.
    pub(crate) rounds: Vec<Round>,
    /// Settings (pool, N, work) as given by the claim.
    pub(crate) context: BTreeMap<String, String>,
    /// The machine's available parallelism.
    pub(crate) cores: usize,
    /// The CPUs a cgroup quota allows this process (a container's CPU limit), where one
    /// limits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cpu_quota: Option<f64>,
    /// Strict or advisory.
    pub(crate) gate: GateMode,
    /// The read this platform does not make (off Linux: the machine's CPU, a worker's
    /// run-queue time), when that is why the claim is inconclusive: its gate neither
    /// snapshots nor fails it, as a test ignored on a platform is not failed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unread: Option<String>,
    /// The time budget the rounds were given ([`Claim::budget`](crate::Claim::budget)).
    pub(crate) budget: Duration,
    /// Where the rounds stopped unsettled: the budget spent or the most rounds taken, and
    /// how busy the machine was.
    pub(crate) out_of_time: Option<super::OutOfTime>,
    /// Time spent measuring.
    #[serde(with = "crate::vocab::millis")]
    pub(crate) elapsed: Duration,
    /// The physical limit of the rounds: what each side must wait for, however fast the
    /// machine (its floor, else a duration's quickest round), summed over the rounds.
    /// `None` when a side is neither a duration nor has a floor.
    #[serde(with = "crate::vocab::millis::opt")]
    pub(crate) limit: Option<Duration>,
    /// What the figure means for the code under test
    /// ([`Claim::explain`](crate::Claim::explain)); the first sentence goes in the headline.
    pub(crate) explanation: Vec<String>,
    /// What a claim that does not hold found, in words that change only with the shape —
    /// how the worker was held, the call, the team's function and line — and never with a
    /// run's figures: its snapshot's `observed`. `None` where the verdict and the band say
    /// it all (a claim of your own, an inconclusive one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shape: Option<String>,
    /// The likely cause and the remedy, where the claim names them
    /// ([`Claim::advise`](crate::Claim::advise)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) advice: Option<Advice>,
    /// What the sides saw besides their figures ([`Measure::evidence`](crate::claim::Measure::evidence)),
    /// then what the caller measured beside the claim ([`Claim::evidence`](crate::Claim::evidence)).
    pub(crate) evidence: Vec<String>,
    /// Deterministic facts added after the rounds ([`Checked::fact`](crate::Checked::fact)).
    pub(crate) facts: BTreeMap<String, String>,
    /// Raw figures the claim observed besides its rounds ([`Claim::observed`](crate::Claim::observed)): in the
    /// JSON artifact, never in a snapshot.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) observed: BTreeMap<String, f64>,
    /// Where the raw figures were written, when they could be.
    pub(crate) artifact: Option<PathBuf>,
}

impl ClaimReport {
    /// The claim's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ratio`, `bound`, `figure` or `ordering`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// What is divided by what, or the order claimed.
    pub fn relation(&self) -> &str {
        &self.relation
    }

    /// The band the median must lie in.
    pub fn band(&self) -> &Band {
        &self.band
    }

    /// The ideal figure, when given.
    pub fn ideal(&self) -> Option<f64> {
        self.ideal
    }

    /// For bound claims: the expectation and its unit.
    pub fn expected(&self) -> Option<&(Expected, Unit)> {
        self.expected.as_ref()
    }

    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// Why, in one sentence.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The median of the rounds' figures.
    pub fn median(&self) -> f64 {
        self.median
    }

    /// The noisiest side's A/A noise floor (relative).
    pub fn noise_floor(&self) -> f64 {
        self.noise_floor
    }

    /// How far the median sits from the band's nearest edge ([`Margin`]).
    pub fn margin(&self) -> Option<Margin> {
        self.margin
    }

    /// Each side's label and unit.
    pub fn sides(&self) -> &[(String, Unit)] {
        &self.sides
    }

    /// Every round.
    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    /// Settings (pool, N, work) as given by the claim.
    pub fn context(&self) -> &BTreeMap<String, String> {
        &self.context
    }

    /// The machine's available parallelism.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// The CPUs a cgroup quota allows this process (a container's CPU limit), where one
    /// limits it.
    pub fn cpu_quota(&self) -> Option<f64> {
        self.cpu_quota
    }

    /// Strict or advisory.
    pub fn gate(&self) -> GateMode {
        self.gate
    }

    /// The read this platform does not make (off Linux: the machine's CPU, a worker's
    /// run-queue time), when that is why the claim is inconclusive: its gate neither
    /// snapshots nor fails it, as a test ignored on a platform is not failed there.
    pub fn unread(&self) -> Option<&str> {
        self.unread.as_deref()
    }

    /// The time budget the rounds were given ([`Claim::budget`](crate::Claim::budget)).
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Where the rounds stopped unsettled: the budget spent or the most rounds taken, and
    /// how busy the machine was.
    pub fn out_of_time(&self) -> Option<super::OutOfTime> {
        self.out_of_time
    }

    /// Time spent measuring.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The physical limit of the rounds: what each side must wait for, however fast the
    /// machine (its floor, else a duration's quickest round), summed over the rounds.
    /// `None` when a side is neither a duration nor has a floor.
    pub fn limit(&self) -> Option<Duration> {
        self.limit
    }

    /// What the figure means for the code under test
    /// ([`Claim::explain`](crate::Claim::explain)); the first sentence goes in the headline.
    pub fn explanation(&self) -> &[String] {
        &self.explanation
    }

    /// What a claim that does not hold found, in words that change only with the shape —
    /// how the worker was held, the call, the team's function and line — and never with a
    /// run's figures: its snapshot's `observed`. `None` where the verdict and the band say
    /// it all (a claim of your own, an inconclusive one).
    pub fn shape(&self) -> Option<&str> {
        self.shape.as_deref()
    }

    /// The likely cause and the remedy, where the claim names them
    /// ([`Claim::advise`](crate::Claim::advise)).
    pub fn advice(&self) -> Option<&Advice> {
        self.advice.as_ref()
    }

    /// What the sides saw besides their figures ([`Measure::evidence`](crate::claim::Measure::evidence)),
    /// then what the caller measured beside the claim ([`Claim::evidence`](crate::Claim::evidence)).
    pub fn evidence(&self) -> &[String] {
        &self.evidence
    }

    /// Deterministic facts added after the rounds ([`Checked::fact`](crate::Checked::fact)).
    pub fn facts(&self) -> &BTreeMap<String, String> {
        &self.facts
    }

    /// Raw figures the claim observed besides its rounds ([`Claim::observed`](crate::Claim::observed)): in the
    /// JSON artifact, never in a snapshot.
    pub fn observed(&self) -> &BTreeMap<String, f64> {
        &self.observed
    }

    /// Where the raw figures were written, when they could be.
    pub fn artifact(&self) -> Option<&std::path::Path> {
        self.artifact.as_deref()
    }
}

impl ClaimReport {
    /// Each side's median, in side order.
    pub fn side_medians(&self) -> Vec<f64> {
        (0..self.sides.len())
            .map(|i| median(&self.rounds.iter().map(|r| r.figures[i]).collect::<Vec<_>>()))
            .collect()
    }

    /// The deterministic view for snapshots: it holds no measured figure, whatever the
    /// verdict, so it changes only when the shape (or the claim) changes — a broken claim's
    /// snapshot is the same run after run, its figures in the JSON.
    pub fn summary(&self) -> ShapeSummary {
        let observed = (!self.verdict.holds())
            .then(|| self.shape.clone())
            .flatten();
        ShapeSummary {
            claim: self.name.clone(),
            kind: self.kind.to_string(),
            relation: self.relation.clone(),
            band: self.band.to_string(),
            ideal: self.ideal.map(short),
            expected: self
                .expected
                .as_ref()
                .map(|(e, unit)| format!("{} = {}", unit.show(e.value), e.how)),
            context: self.context.clone(),
            verdict: self.verdict,
            facts: self.facts.clone(),
            observed,
        }
    }
}

/// A claim as a snapshot sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeSummary {
    /// The claim's name.
    pub claim: String,
    /// `ratio`, `bound`, `figure` or `ordering`.
    pub kind: String,
    /// What is divided by what, or the order claimed.
    pub relation: String,
    /// The band, e.g. `≥ 6` or `[0.95, 1.5]`.
    pub band: String,
    /// The ideal figure, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal: Option<String>,
    /// The expectation of a bound claim and its derivation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The settings.
    pub context: BTreeMap<String, String>,
    /// The verdict.
    pub verdict: Verdict,
    /// Further deterministic facts a test adds (wave counts, connection counts).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<String, String>,
    /// What the claim found, in words that change only with the shape
    /// ([`ClaimReport::shape`]) — present only when the claim does not hold, so that a
    /// snapshot diff of a regression shows what is wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
}

/// A figure to four significant digits, so an ideal computed from a model prints the same
/// on every machine and a snapshot never holds a float's last bits.
pub fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return x.to_string();
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits);
    ((x * scale).round() / scale).to_string()
}

pub use artifact::artifact_dir;
pub use full::REPORT_ENV;
