//! One side of a claim: a labelled closure that measures a figure each time it is called,
//! with what it is expected to give and the settings it runs with.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::error::Result;
use crate::outcome::{Expected, Unit};

type MeasureFn<'a> = Box<dyn FnMut(Call) -> Result<f64> + Send + 'a>;

/// Why a measure is called: a round's figure, or a warm-up whose figure nobody records —
/// which a measure that notes each round ([`Measure::noting`]) must not note.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Call {
    /// An unrecorded measurement before the first round.
    WarmUp,
    /// A round's figure.
    Round,
}
type WarmFn<'a> = Box<dyn FnMut() -> Result<()> + Send + 'a>;
type EvidenceFn<'a> = Box<dyn FnOnce() -> Option<String> + Send + 'a>;

/// A labelled measurement: called once per round, it returns one figure.
///
/// A measure may carry its [`Expected`] figure (the experiments' loads' measures carry
/// their model's) and its settings as context; a claim takes both from its sides, so a
/// test never restates them.
///
/// ```
/// use std::time::Duration;
/// use perfshape::{claim::Expected, claim::Measure};
///
/// let measure = Measure::duration("a 20 ms sleep", || {
///     std::thread::sleep(Duration::from_millis(20));
///     Ok(Duration::from_millis(20))
/// })
/// .expecting(Expected::duration(Duration::from_millis(20), "the sleep"))
/// .context("work", "20 ms");
/// assert_eq!(measure.label(), "a 20 ms sleep");
/// ```
pub struct Measure<'a> {
    pub(crate) label: String,
    pub(crate) unit: Unit,
    run: MeasureFn<'a>,
    pub(crate) expected: Option<Expected>,
    pub(crate) context: BTreeMap<String, String>,
    warm: Option<WarmFn<'a>>,
    replay: std::collections::VecDeque<f64>,
    pub(crate) evidence: Option<EvidenceFn<'a>>,
    pub(crate) floor: Option<Duration>,
}

impl<'a> Measure<'a> {
    pub(super) fn new(label: &str, unit: Unit, run: MeasureFn<'a>) -> Self {
        Measure {
            label: label.to_string(),
            unit,
            run,
            expected: None,
            context: BTreeMap::new(),
            warm: None,
            replay: std::collections::VecDeque::new(),
            evidence: None,
            floor: None,
        }
    }

    /// The least wall time one measurement can take — a load's predicted wall: what the
    /// claim must wait for however fast the machine, summed into its physical limit.
    /// Without one, a duration's quickest round stands in for it.
    #[must_use]
    pub fn floor(mut self, floor: Duration) -> Self {
        self.floor = Some(floor);
        self
    }

    /// What this measure saw besides its figure, asked once after the rounds — the server
    /// pool's busy workers, say — and printed in the claim's report as evidence (never in
    /// its snapshot).
    #[must_use]
    pub fn evidence(mut self, evidence: impl FnOnce() -> Option<String> + Send + 'a) -> Self {
        self.evidence = Some(Box::new(evidence));
        self
    }

    /// How to warm up what this measure uses (connections, threads) before the first
    /// round, when that is cheaper than a whole unrecorded measurement — a load's
    /// measures open their connections with one concurrent request each.
    #[must_use]
    pub fn warm_with(mut self, warm: impl FnMut() -> Result<()> + Send + 'a) -> Self {
        self.warm = Some(Box::new(warm));
        self
    }

    /// Figures of this very measure taken earlier in this run (another claim's rounds on
    /// the same side, [`Checked::figures`](crate::Checked::figures)), given in order before
    /// any new measurement: a second claim about the same side costs no new rounds unless
    /// it needs more than were taken. Nothing is warmed up for a measure that replays.
    #[must_use]
    pub fn replaying(mut self, figures: impl IntoIterator<Item = f64>) -> Self {
        self.replay.extend(figures);
        self
    }

    /// Whether figures from earlier rounds are waiting to be replayed.
    pub(crate) fn replays(&self) -> bool {
        !self.replay.is_empty()
    }

    /// The next figure: a replayed one while any is left, else a new measurement.
    pub(crate) fn next(&mut self) -> Result<f64> {
        match self.replay.pop_front() {
            Some(figure) => Ok(figure),
            None => (self.run)(Call::Round),
        }
    }

    /// Warms up before the first round: nothing for a measure that replays earlier
    /// rounds, its own warm-up when it has one, else one unrecorded measurement.
    pub(crate) fn warm_up(&mut self) -> Result<()> {
        if self.replays() {
            return Ok(());
        }
        match &mut self.warm {
            Some(warm) => warm(),
            None => (self.run)(Call::WarmUp).map(drop),
        }
    }

    /// A measure of a duration, such as the wall time of a run.
    pub fn duration(label: &str, mut f: impl FnMut() -> Result<Duration> + Send + 'a) -> Self {
        Measure::new(
            label,
            Unit::Seconds,
            Box::new(move |_| f().map(|d| d.as_secs_f64())),
        )
    }

    /// A measure of a rate per second, such as throughput.
    pub fn rate(label: &str, mut f: impl FnMut() -> Result<f64> + Send + 'a) -> Self {
        Measure::new(label, Unit::PerSecond, Box::new(move |_| f()))
    }

    /// A measure of a plain number.
    pub fn value(label: &str, mut f: impl FnMut() -> Result<f64> + Send + 'a) -> Self {
        Measure::new(label, Unit::Plain, Box::new(move |_| f()))
    }

    /// What this measure should give, in its unit: a bound claim divides by it, and a
    /// ratio or ordering of measures that all have one takes its ideal from them.
    #[must_use]
    pub fn expecting(mut self, expected: Expected) -> Self {
        self.expected = Some(expected);
        self
    }

    /// A setting this measure runs with, shown in the claim's report and snapshot when
    /// every side that names the key agrees on it. Only deterministic values belong here.
    #[must_use]
    pub fn context(mut self, key: &str, value: impl ToString) -> Self {
        self.context.insert(key.to_string(), value.to_string());
        self
    }

    /// The label.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The expectation, when it has one.
    pub fn expected(&self) -> Option<&Expected> {
        self.expected.as_ref()
    }

    /// The unit.
    pub fn unit(&self) -> Unit {
        self.unit
    }
}

impl std::fmt::Debug for Measure<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Measure")
            .field("label", &self.label)
            .field("unit", &self.unit)
            .field("expected", &self.expected)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}
