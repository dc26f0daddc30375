//! Claims: a relation between measured figures, a band, and a three-way verdict.
//!
//! A claim measures its sides in interleaved rounds (A B, B A, A B, …) so that slow drift
//! of the machine affects both sides alike, takes the per-round figure (A ÷ B, measured ÷
//! expected, or the tightest step of an ordering), and lets the [`DecisionRule`] decide —
//! adding rounds, up to a maximum and a time budget, while the rounds do not settle it.

mod check;
mod checked;
mod decide;
mod future;
mod gate;
mod measure;
mod notes;
mod paired;
mod relation;
mod rounds;
mod rule;
mod stolen;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use crate::outcome::Advice;
pub use crate::outcome::Band;
pub use crate::outcome::Expected;
pub use crate::outcome::Margin;
pub use crate::outcome::Unit;
pub use crate::outcome::{ClaimReport, OutOfTime, REPORT_ENV, Round, ShapeSummary, artifact_dir};
pub use crate::outcome::{GATE_ENV, GateMode};
pub use crate::outcome::{Verdict, median, noise_floor};
pub use checked::Checked;
pub use gate::shape_lock;
pub use measure::Measure;
pub use notes::Notes;
pub use rule::{Decision, DecisionRule, MAX_ROUNDS, median_interval};

use crate::error::{Error, Refused};
use relation::Relation;

/// A claim about measured figures, checked in interleaved rounds.
///
/// [`check`](Self::check) measures and decides on the calling thread; in an async test,
/// `claim.await` does the same on tokio's blocking pool (the claim's load runs on pools of
/// its own either way, so the test's runtime is never what is measured, and `check()`
/// called there works too — it only keeps the test's thread until it is done).
///
/// ```
/// use std::time::Duration;
/// use perfshape::{Claim, claim::Measure, Verdict};
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
    rule: DecisionRule,
    warmup: usize,
    budget: Duration,
    gate: Option<GateMode>,
    artifacts: Option<PathBuf>,
    context: BTreeMap<String, String>,
    explain: Option<Explain<'a>>,
    /// A ready-made claim's figure-free words for what it found ([`ClaimReport::shape`]).
    shape: Option<Shape<'a>>,
    /// What a team accepts of a ready-made claim's finding ([`Claim::allowed_when`]).
    allowed: Option<Allowed<'a>>,
    advise: Option<Advise<'a>>,
    observed: Option<Observed<'a>>,
    /// Facts known only once the rounds ran (what a route answered), asked as the claim
    /// decides: deterministic, so they are kept in its snapshot.
    late_facts: Vec<(String, LateFact<'a>)>,
    /// The thread that made the claim's check (a test's thread is named after the test),
    /// which tells apart the artifacts of one claim made in two tests.
    caller: Option<String>,
    elsewhere: Option<(Duration, Duration)>,
    /// Lines of evidence the caller measured beside the claim.
    evidence: Vec<String>,
    /// The first setting the chain that made this claim refused, returned by `check()`.
    refused: Option<Refused>,
    /// The read this platform does not make, where that ended the rounds ([`Error::Unread`]).
    unread: Option<String>,
    /// The rounds the host took from the machine (hypervisor steal) while they ran.
    stolen: stolen::StolenRounds,
    /// Where the rounds stopped unsettled, at the budget or the most rounds.
    out_of_time: Option<crate::outcome::OutOfTime>,
    /// Asked once the rounds held: why this build cannot tell, where it cannot.
    untold: Option<Untold<'a>>,
    /// Whether the claim ended as one this build or machine cannot tell
    /// ([`Error::CannotTell`], or [`Claim::untold_when`]): its reason says why and what
    /// makes it decisive, and no advice on unsettled rounds is added.
    cannot_tell: bool,
    /// A ready-made claim's: its band and sentences come from its model, and a setter that
    /// would replace them is refused ([`Claim::band_set_by_test`] replaces the band by name).
    ready_made: bool,
}

impl std::fmt::Debug for Claim<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Claim")
            .field("name", &self.name)
            .field("band", &self.band)
            .field("context", &self.context)
            .finish_non_exhaustive()
    }
}

/// Turns a finished report into sentences a reader needs: what the figure means for the
/// code under test, and the runtime evidence behind it.
type Explain<'a> = Box<dyn FnOnce(&ClaimReport) -> Vec<String> + Send + 'a>;

/// Says what a finished claim found in words that change only with the shape.
type Shape<'a> = Box<dyn FnOnce(&ClaimReport) -> Option<String> + Send + 'a>;

/// Whether a team allowed what a broken claim found: the allow that matched it, and what
/// each allow that did not could not see.
type Allowed<'a> = Box<dyn FnOnce(&ClaimReport) -> (Option<String>, Vec<String>) + Send + 'a>;

/// Names the likely cause and the remedy of what a finished claim found.
type Advise<'a> = Box<dyn FnOnce(&ClaimReport) -> Option<Advice> + Send + 'a>;

/// Raw figures a claim's sides saw besides their rounds, named, for the JSON artifact.
type Observed<'a> = Box<dyn FnOnce() -> Vec<(String, f64)> + Send + 'a>;

/// A fact the rounds found (`None`: nothing to say), asked once as the claim decides.
type LateFact<'a> = Box<dyn FnOnce() -> Option<String> + Send + 'a>;

/// Why a claim's rounds, which held, cannot tell here — `None` where they can.
type Untold<'a> = Box<dyn FnOnce() -> Option<String> + Send + 'a>;

impl<'a> Claim<'a> {
    fn new(name: &str, relation: Relation<'a>) -> Self {
        Claim {
            name: name.to_string(),
            relation,
            band: None,
            ideal: None,
            rule: DecisionRule::default(),
            warmup: 1,
            budget: Duration::from_secs(20),
            gate: None,
            artifacts: None,
            context: BTreeMap::new(),
            explain: None,
            shape: None,
            allowed: None,
            advise: None,
            observed: None,
            late_facts: Vec::new(),
            caller: None,
            elsewhere: None,
            evidence: Vec::new(),
            refused: None,
            unread: None,
            stolen: stolen::StolenRounds::default(),
            out_of_time: None,
            untold: None,
            cannot_tell: false,
            ready_made: false,
        }
    }

    /// A ÷ B, measured in interleaved rounds.
    pub fn ratio(name: &str, a: Measure<'a>, b: Measure<'a>) -> Self {
        Claim::new(name, Relation::Ratio(a, b))
    }

    /// measured ÷ what the measure expects ([`Measure::expecting`]; the experiments'
    /// loads' measures expect what their model predicts).
    pub fn bound(name: &str, measured: Measure<'a>) -> Self {
        Claim::new(name, Relation::Bound(measured))
    }

    /// The measured figure itself, against the band: for a ratio taken inside one run,
    /// whose two parts cannot be measured apart.
    pub fn figure(name: &str, measured: Measure<'a>) -> Self {
        Claim::new(name, Relation::Figure(measured))
    }

    /// The sides are claimed to be in this order, largest first; the band applies to the
    /// smallest ratio between neighbours (`at_least(1.1)`: each beats the next by 10 %).
    pub fn ordering(name: &str, sides: Vec<Measure<'a>>) -> Self {
        Claim::new(name, Relation::Ordering(sides))
    }

    /// The figure must be at least `k`.
    pub fn at_least(self, k: f64) -> Self {
        self.banded(Band::at_least(k), "at_least")
    }

    /// The figure must be at most `k`.
    pub fn at_most(self, k: f64) -> Self {
        self.banded(Band::at_most(k), "at_most")
    }

    /// The figure must lie in `[lo, hi]`.
    pub fn within(self, lo: f64, hi: f64) -> Self {
        self.banded(Band::within(lo, hi), "within")
    }

    /// Sets the band, unless this is a ready-made claim, whose band is its model's: then
    /// `setter` is refused by name at `check()`.
    fn banded(mut self, band: Band, setter: &'static str) -> Self {
        if self.ready_made {
            return self.refusing_ready_made(setter);
        }
        self.band = Some(band);
        self
    }

    /// A ready-made claim refuses `setter`, which would silently replace what its model
    /// says: the band, or the sentences.
    fn refusing_ready_made(self, setter: &'static str) -> Self {
        let refused = Refused::of(Error::invalid(
            "setting",
            setter,
            format!(
                "a ready-made claim's band and sentences are its model's; `band_set_by_test(…)` replaces its band {} by name, and the report shows it",
                self.band.map(|b| b.to_string()).unwrap_or_default()
            ),
        ));
        self.refusing(Some(refused))
    }

    /// Replaces a ready-made claim's band with `band` — a named setting, kept in the
    /// report's settings and its snapshot beside the model's band it replaced, so that
    /// a reviewer sees the test chose it. On a claim of your own, it is the band.
    pub fn band_set_by_test(mut self, band: Band) -> Self {
        if let Some(model) = self.band.filter(|_| self.ready_made) {
            self.context.insert(
                "band".to_string(),
                format!("{band}, set by the test (the model's: {model})"),
            );
        }
        self.band = Some(band);
        self
    }

    /// Marks a claim as ready-made: its band and sentences are its model's from here on.
    /// Decides by the rule for a claim about a hold ([`DecisionRule::for_a_hold`]): a
    /// shape met in some rounds only breaks it.
    pub(crate) fn about_a_hold(mut self) -> Self {
        self.rule = DecisionRule::for_a_hold();
        self
    }

    pub(crate) fn ready_made(mut self) -> Self {
        self.ready_made = true;
        self
    }

    /// The figure an ideal machine would give, printed beside the band so a reader sees
    /// how conservative the band is. A ratio or ordering whose sides all have expectations
    /// takes it from them unless it is given here.
    pub fn ideal(mut self, ideal: f64) -> Self {
        self.ideal = Some(ideal);
        self
    }

    /// Rounds: at least `min` (3..=50), at most `max` (min..=[`MAX_ROUNDS`]). Default 3 and
    /// [`MAX_ROUNDS`], which the [`DecisionRule`]'s error rates are computed for; the time
    /// budget ([`budget`](Self::budget)) usually ends the rounds first.
    pub fn rounds(mut self, min: usize, max: usize) -> Self {
        self.rule.min_rounds = min;
        self.rule.max_rounds = max;
        self
    }

    /// Warm-ups of each side before the first round (default 1): the first run pays for
    /// connections and thread start-up. A warm-up is the side's own
    /// ([`Measure::warm_with`]) or one unrecorded measurement.
    pub fn warmup(mut self, warmup: usize) -> Self {
        self.warmup = warmup;
        self
    }

    /// The time after which no further round is started (default 20 s): rounds go on while
    /// they do not settle the claim and this allows. A claim cut short by it is
    /// inconclusive, never held or broken on fewer rounds than the rule needs, and its
    /// report says the budget ran out and how busy the machine was.
    /// Rounds measured again because the host took the machine during them (hypervisor
    /// steal) are not counted in it: they may add up to 20 s more, and then the report says
    /// the host took the machine.
    pub fn budget(mut self, budget: Duration) -> Self {
        self.budget = budget;
        self
    }

    /// Fixes the gate mode for this claim instead of reading [`GATE_ENV`].
    pub fn gate_mode(mut self, mode: GateMode) -> Self {
        self.gate = Some(mode);
        self
    }

    #[doc(hidden)]
    /// Writes this claim's raw figures to `dir` instead of [`artifact_dir`]. For claims
    /// decided on synthetic figures (a test of a test helper, say), whose reports would
    /// otherwise sit beside the suite's measured claims and show up in `perfshape report`.
    pub fn artifacts_in(mut self, dir: impl Into<PathBuf>) -> Self {
        self.artifacts = Some(dir.into());
        self
    }

    /// A setting to show in the report and the shape summary (pool, N, work time, ...).
    /// Only deterministic values belong here: the summary must be byte-stable.
    pub fn context(mut self, key: &str, value: impl ToString) -> Self {
        self.context.insert(key.to_string(), value.to_string());
        self
    }

    /// For a claim whose rounds were measured elsewhere and are replayed here (an
    /// engine's statistics): the time that measurement took and its physical limit, which
    /// the report then shows instead of the replay's own (nothing) — so that a run's sum
    /// of measured time against limits counts the engine's run once.
    pub(crate) fn measured_elsewhere(mut self, took: Duration, limit: Duration) -> Self {
        self.elsewhere = Some((took, limit));
        self
    }

    /// Sentences that say what the finished claim means, printed under its headline and
    /// kept in its report (never in its snapshot while it holds: they carry figures).
    pub fn explain(mut self, f: impl FnOnce(&ClaimReport) -> Vec<String> + Send + 'a) -> Self {
        if self.ready_made {
            return self.refusing_ready_made("explain");
        }
        self.explain = Some(Box::new(f));
        self
    }

    /// What a ready-made claim found, in words that change only with the shape, for its
    /// snapshot ([`ClaimReport::shape`]).
    pub(crate) fn shape(
        mut self,
        f: impl FnOnce(&ClaimReport) -> Option<String> + Send + 'a,
    ) -> Self {
        self.shape = Some(Box::new(f));
        self
    }

    /// What a team accepts of what the finished claim found: where `f` names the allow that
    /// matched a broken claim's hold, the claim holds, its report and snapshot listing the
    /// hold as allowed, with what it did; the lines `f` gives besides (an allow that
    /// matched nothing, and why) are added to its report whatever the verdict.
    pub(crate) fn allowed_when(
        mut self,
        f: impl FnOnce(&ClaimReport) -> (Option<String>, Vec<String>) + Send + 'a,
    ) -> Self {
        self.allowed = Some(Box::new(f));
        self
    }

    /// The likely cause, in the reader's terms, and what to change, for what the finished
    /// claim found: a failure's report leads with them after what is wrong. `None` where
    /// the verdict needs no advice.
    pub fn advise(mut self, f: impl FnOnce(&ClaimReport) -> Option<Advice> + Send + 'a) -> Self {
        if self.ready_made {
            return self.refusing_ready_made("advise");
        }
        self.advise = Some(Box::new(f));
        self
    }

    /// A line of evidence measured beside the claim — what the disk's `fsync` took on this
    /// machine, a query's time alone — printed in the report under `evidence:` after the
    /// sides' own and kept in its artifact, never in the snapshot (it carries figures).
    /// A reader of a broken claim then sees the cause's own size next to the figure.
    pub fn evidence(mut self, line: impl Into<String>) -> Self {
        self.evidence.push(line.into());
        self
    }

    /// A setting the chain that made this claim refused (an endpoint's concurrency, a
    /// tolerance): `check()` returns it, named, before anything is measured. The first
    /// refusal is kept.
    pub(crate) fn refusing(mut self, refused: Option<Refused>) -> Self {
        if self.refused.is_none() {
            self.refused = refused;
        }
        self
    }

    /// Asked once the rounds decided that the claim holds, of the rounds together: where it
    /// names why this build cannot tell (the median round's longest poll between the
    /// optimised and the unoptimised budget), the claim is inconclusive with that reason. A
    /// side's [`Error::CannotTell`] ends the rounds at the round that met it; this waits
    /// for all of them, so that one round's outlier does not decide.
    pub(crate) fn untold_when(mut self, f: impl FnOnce() -> Option<String> + Send + 'a) -> Self {
        self.untold = Some(Box::new(f));
        self
    }

    /// A deterministic fact under `key` that only the rounds find — the redirect a route
    /// answers with — asked once as the claim decides and kept, where it says something,
    /// in the report's facts and so in its snapshot.
    pub(crate) fn fact_when(
        mut self,
        key: impl Into<String>,
        f: impl FnOnce() -> Option<String> + Send + 'a,
    ) -> Self {
        self.late_facts.push((key.into(), Box::new(f)));
        self
    }

    /// Raw figures the sides saw besides their rounds (the share of each request a
    /// handler's timed polls held, say), asked once after the rounds and kept in the
    /// report's JSON artifact under their names — never in the snapshot.
    pub fn observed(mut self, f: impl FnOnce() -> Vec<(String, f64)> + Send + 'a) -> Self {
        self.observed = Some(Box::new(f));
        self
    }
}
