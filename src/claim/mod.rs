//! Claims: a relation between measured figures, a band, and a three-way verdict.
//!
//! A claim measures its sides in interleaved rounds (A B, B A, A B, …) so that slow drift
//! of the machine affects both sides alike, takes the per-round figure (A ÷ B, measured ÷
//! expected, or the tightest step of an ordering), and decides from the median — adding
//! rounds, up to a budget, while the rounds disagree.

mod band;
mod gate;
mod measure;
mod report;
mod verdict;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

pub use band::Band;
pub use gate::{GATE_ENV, GateMode, shape_lock};
pub use measure::{Measure, Unit};
pub use report::{ClaimReport, Round, ShapeSummary, artifact_dir};
pub use verdict::{Verdict, median, noise_floor};

use crate::error::{Error, Result};
use verdict::{Decision, decide};

/// What a bound claim's figure is measured against, and how that expectation was derived.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Expected {
    /// The expected figure, in the measure's unit (seconds for durations).
    pub value: f64,
    /// How it follows from the settings, e.g. `ceil(20/2) × 20 ms`.
    pub how: String,
}

impl Expected {
    /// An expected figure with its derivation.
    pub fn new(value: f64, how: impl Into<String>) -> Expected {
        Expected {
            value,
            how: how.into(),
        }
    }

    /// An expected duration with its derivation.
    pub fn duration(value: Duration, how: impl Into<String>) -> Expected {
        Expected::new(value.as_secs_f64(), how)
    }

    /// The wall time the [`Model`](crate::Model) predicts, described in stable form.
    pub fn model_wall(model: &crate::Model) -> Result<Expected> {
        let prediction = model.predict()?;
        Ok(Expected::duration(prediction.wall, model.describe()))
    }

    /// How long the model's probe waits (see [`Model::with_probe`](crate::Model::with_probe)).
    pub fn model_probe(model: &crate::Model) -> Result<Expected> {
        let latency = model.predict()?.probe_latency.ok_or_else(|| {
            Error::invalid(
                "model probe",
                "none",
                "a model built with with_probe(after)",
            )
        })?;
        Ok(Expected::duration(
            latency,
            format!(
                "{} probe after {} ms",
                model.describe(),
                model.probe.unwrap_or_default().as_millis()
            ),
        ))
    }
}

enum Relation<'a> {
    /// A ÷ B.
    Ratio(Measure<'a>, Measure<'a>),
    /// measured ÷ expected.
    Bound(Measure<'a>, Expected),
    /// Sides listed in the order claimed, largest first; the figure is the smallest
    /// ratio between neighbours.
    Ordering(Vec<Measure<'a>>),
}

impl<'a> Relation<'a> {
    fn sides(&mut self) -> Vec<&mut Measure<'a>> {
        match self {
            Relation::Ratio(a, b) => vec![a, b],
            Relation::Bound(m, _) => vec![m],
            Relation::Ordering(sides) => sides.iter_mut().collect(),
        }
    }

    fn figure(&self, x: &[f64]) -> f64 {
        match self {
            Relation::Ratio(..) => x[0] / x[1],
            Relation::Bound(_, expected) => x[0] / expected.value,
            Relation::Ordering(_) => x
                .windows(2)
                .map(|w| w[0] / w[1])
                .fold(f64::INFINITY, f64::min),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Relation::Ratio(..) => "ratio",
            Relation::Bound(..) => "bound",
            Relation::Ordering(_) => "ordering",
        }
    }

    fn describe(&self) -> String {
        match self {
            Relation::Ratio(a, b) => format!("{} ÷ {}", a.label, b.label),
            Relation::Bound(m, _) => format!("{} ÷ expected", m.label),
            Relation::Ordering(sides) => sides
                .iter()
                .map(|s| s.label.as_str())
                .collect::<Vec<_>>()
                .join(" > "),
        }
    }
}

/// A claim about measured figures, checked in interleaved rounds.
///
/// ```
/// use std::time::Duration;
/// use perfshape::{Claim, Measure, Verdict};
///
/// // Arrange: two sides whose ratio is 4 (stand-ins for two timed runs).
/// let slow = Measure::duration("slow", || Ok(Duration::from_millis(40)));
/// let fast = Measure::duration("fast", || Ok(Duration::from_millis(10)));
/// // Act
/// let checked = Claim::ratio("slow ÷ fast", slow, fast).at_least(3.0).check()?;
/// // Assert
/// assert_eq!(checked.verdict(), Verdict::Holds);
/// # Ok::<(), perfshape::Error>(())
/// ```
#[must_use = "a claim does nothing until it is checked"]
pub struct Claim<'a> {
    name: String,
    relation: Relation<'a>,
    band: Option<Band>,
    ideal: Option<f64>,
    min_rounds: usize,
    max_rounds: usize,
    warmup: usize,
    budget: Duration,
    gate: Option<GateMode>,
    context: BTreeMap<String, String>,
}

impl<'a> Claim<'a> {
    fn new(name: &str, relation: Relation<'a>) -> Self {
        Claim {
            name: name.to_string(),
            relation,
            band: None,
            ideal: None,
            min_rounds: 3,
            max_rounds: 9,
            warmup: 1,
            budget: Duration::from_secs(10),
            gate: None,
            context: BTreeMap::new(),
        }
    }

    /// A ÷ B, measured in interleaved rounds.
    pub fn ratio(name: &str, a: Measure<'a>, b: Measure<'a>) -> Self {
        Claim::new(name, Relation::Ratio(a, b))
    }

    /// measured ÷ expected.
    pub fn bound(name: &str, measured: Measure<'a>, expected: Expected) -> Self {
        Claim::new(name, Relation::Bound(measured, expected))
    }

    /// The sides are claimed to be in this order, largest first; the band applies to the
    /// smallest ratio between neighbours (`at_least(1.1)`: each beats the next by 10 %).
    pub fn ordering(name: &str, sides: Vec<Measure<'a>>) -> Self {
        Claim::new(name, Relation::Ordering(sides))
    }

    /// The figure must be at least `k`.
    pub fn at_least(mut self, k: f64) -> Self {
        self.band = Some(Band::at_least(k));
        self
    }

    /// The figure must be at most `k`.
    pub fn at_most(mut self, k: f64) -> Self {
        self.band = Some(Band::at_most(k));
        self
    }

    /// The figure must lie in `[lo, hi]`.
    pub fn within(mut self, lo: f64, hi: f64) -> Self {
        self.band = Some(Band::within(lo, hi));
        self
    }

    /// The figure an ideal machine would give, printed beside the band so a reader sees
    /// how conservative the band is.
    pub fn ideal(mut self, ideal: f64) -> Self {
        self.ideal = Some(ideal);
        self
    }

    /// Rounds: at least `min` (1..=50), at most `max` (min..=50). Default 3 and 9.
    pub fn rounds(mut self, min: usize, max: usize) -> Self {
        self.min_rounds = min;
        self.max_rounds = max;
        self
    }

    /// Unrecorded measurements of each side before the first round (default 1): the first
    /// run pays for connections and thread start-up.
    pub fn warmup(mut self, warmup: usize) -> Self {
        self.warmup = warmup;
        self
    }

    /// The time after which no further round is started (default 10 s).
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Fixes the gate mode for this claim instead of reading [`GATE_ENV`].
    pub fn gate_mode(mut self, mode: GateMode) -> Self {
        self.gate = Some(mode);
        self
    }

    /// A setting to show in the report and the shape summary (pool, N, work time, ...).
    /// Only deterministic values belong here: the summary must be byte-stable.
    pub fn context(mut self, key: &str, value: impl ToString) -> Self {
        self.context.insert(key.to_string(), value.to_string());
        self
    }

    fn validate(&self) -> Result<Band> {
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
        crate::error::check_range("min rounds", self.min_rounds, 1, 50, "")?;
        crate::error::check_range("max rounds", self.max_rounds, self.min_rounds, 50, "")?;
        crate::error::check_range("warmup", self.warmup, 0, 10, "")?;
        if let Relation::Ordering(sides) = &self.relation {
            crate::error::check_range("ordering sides", sides.len(), 2, 16, "")?;
        }
        if let Relation::Bound(_, expected) = &self.relation
            && !(expected.value.is_finite() && expected.value > 0.0)
        {
            return Err(Error::invalid(
                "expected",
                expected.value,
                "a finite figure above 0",
            ));
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
        let kind = self.relation.kind();
        let relation_text = self.relation.describe();
        let count = self.relation.sides().len();
        for _ in 0..self.warmup {
            for side in self.relation.sides() {
                measure(side)?;
            }
        }
        let mut rounds: Vec<Round> = Vec::new();
        let decision = loop {
            let mut order: Vec<usize> = (0..count).collect();
            if rounds.len() % 2 == 1 {
                order.reverse();
            }
            let mut figures = vec![f64::NAN; count];
            let mut sides = self.relation.sides();
            for i in order {
                figures[i] = measure(sides[i])?;
            }
            let value = self.relation.figure(&figures);
            rounds.push(Round {
                figures,
                value,
                inside: band.contains(value),
            });
            if rounds.len() < self.min_rounds {
                continue;
            }
            let values: Vec<f64> = rounds.iter().map(|r| r.value).collect();
            let decision = decide(&values, &band, side_noise(&rounds), self.min_rounds);
            if decision.verdict.is_some() {
                break decision;
            }
            if rounds.len() >= self.max_rounds || started.elapsed() >= self.budget {
                break Decision {
                    verdict: Some(Verdict::Inconclusive),
                    reason: format!("{} after {} rounds", decision.reason, rounds.len()),
                };
            }
        };
        let units = self
            .relation
            .sides()
            .iter()
            .map(|s| (s.label.clone(), s.unit))
            .collect();
        let values: Vec<f64> = rounds.iter().map(|r| r.value).collect();
        let expected = match &self.relation {
            Relation::Bound(m, e) => Some((e.clone(), m.unit)),
            _ => None,
        };
        let mut report = ClaimReport {
            name: self.name,
            kind,
            relation: relation_text,
            band,
            ideal: self.ideal,
            expected,
            verdict: decision.verdict.unwrap_or(Verdict::Inconclusive),
            reason: decision.reason,
            median: median(&values),
            noise_floor: side_noise(&rounds),
            sides: units,
            rounds,
            context: self.context,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            gate,
            elapsed: started.elapsed(),
            artifact: None,
        };
        report.write_artifact();
        if report.verdict.holds() {
            eprintln!("perfshape: {}", report.headline());
        } else {
            eprintln!("perfshape: {report}");
        }
        Ok(Checked { report })
    }
}

fn measure(side: &mut Measure<'_>) -> Result<f64> {
    let value = (side.run)()?;
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

/// The noisiest side's A/A noise floor.
fn side_noise(rounds: &[Round]) -> f64 {
    let count = rounds.first().map_or(0, |r| r.figures.len());
    (0..count)
        .map(|i| noise_floor(&rounds.iter().map(|r| r.figures[i]).collect::<Vec<_>>()))
        .fold(0.0, f64::max)
}

/// A checked claim: its report, its shape summary, and the gate.
#[derive(Debug)]
pub struct Checked {
    report: ClaimReport,
}

impl Checked {
    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        self.report.verdict
    }

    /// Everything measured and decided.
    pub fn report(&self) -> &ClaimReport {
        &self.report
    }

    /// The deterministic-while-healthy view, for snapshots.
    pub fn summary(&self) -> ShapeSummary {
        self.report.summary()
    }

    /// Strict: an error carrying the full report unless the claim holds. Advisory: prints
    /// the report and passes.
    pub fn gate(&self) -> Result<()> {
        if self.report.verdict.holds() {
            return Ok(());
        }
        match self.report.gate {
            GateMode::Strict => Err(Error::Gate(self.report.to_string())),
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
