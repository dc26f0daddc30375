//! The decision rule: when the rounds so far settle a claim, and which way.
//!
//! Order statistics, so that no shape is assumed for the machine's noise:
//!
//! - **Holds** when the middle third of the rounds lies inside the band at 70 % confidence
//!   (90 % past fifteen rounds, so that the looks a time budget allows do not add up to
//!   more holds of a shape met at random in some rounds)
//!   — the `j`-th lowest and `j`-th highest round, where `j` is the largest count with
//!   P(Binomial(n, ⅓) ≥ j) ≥ 0.7, are both inside — *and* at most one round in six misses
//!   the band by more than 3 robust spreads of the rounds (1.4826 × their median absolute
//!   deviation, in log space): rounds that far out, more often than that, are not noise
//!   but a shape that comes and goes. (One in six lets a machine's occasional far-off
//!   round pass once enough rounds outvote it; one in three never does.)
//! - **Broken** when the median's distribution-free confidence interval at ≥ 75 %,
//!   `[x(k), x(n+1−k)]`, lies wholly outside the band.
//! - Otherwise more rounds. The rule looks at the minimum number of rounds (3) and every
//!   second round after it, while the claim's time budget lasts
//!   ([`Claim::budget`](crate::Claim::budget), 20 s by default) and up to [`MAX_ROUNDS`]; a
//!   claim still unsettled there is **Inconclusive**, and says which of the two stopped it
//!   and how busy the machine was. A fixed count of rounds gave up on a busy machine after
//!   a second; a budget keeps measuring while the interval straddles the band.
//!
//! Holds and Broken are symmetric (each needs its interval wholly on its side), every look
//! is counted in the error rates, and a regression in every third round never holds. The
//! rates are computed, not assumed: `tests/exact/rule.rs` runs the rule on synthetic round
//! series by Monte Carlo with a fixed seed (see the README for the figures).
//!
//! **A shape that comes and goes** ([`DecisionRule::intermittent`]). For a timing, a round
//! far outside the band now and then is the machine; for a worker's hold it is the service
//! — a lock another thread holds half the time, met by the rounds that ran then: a worker
//! blocked in a third of the rounds is blocked a third of the time in production, and the
//! quiet rounds must not outvote the ones that met it. A claim about a hold therefore also
//! runs a sequential probability ratio test (Wald's) on the rounds that met it — more than
//! 10 % outside the band ([`MET_MARGIN`]; not spreads of the rounds, which the rounds that
//! met it widen until none is far): a correct service has such a round at most one time in
//! twenty ([`QUIET_RATE`]), a shape that comes and goes at least one in three
//! ([`MET_RATE`]). It is **broken** once the rounds' likelihood ratio for the second passes
//! 19 : 1, and may **hold** only once it passes 19 : 1 for the first — nine quiet rounds,
//! more for each one that met it — so that a third of the rounds meeting the shape is not
//! missed by three quiet ones.

use serde::Serialize;

mod orders;

use orders::orders;

use crate::outcome::Band;
use crate::outcome::Verdict;

/// When a claim's rounds settle it; see the module documentation.
///
/// ```
/// use perfshape::claim::{Band, DecisionRule};
/// use perfshape::Verdict;
///
/// let rule = DecisionRule::default();
/// // Three rounds far inside `≥ 6`: settled at once.
/// assert_eq!(rule.decide(&[18.2, 18.4, 18.1], &Band::at_least(6.0)).verdict, Some(Verdict::Holds));
/// // Three rounds far outside: broken.
/// assert_eq!(rule.decide(&[2.0, 2.1, 1.9], &Band::at_least(6.0)).verdict, Some(Verdict::Broken));
/// // One round in three regressed: not settled (more rounds, then inconclusive).
/// assert_eq!(rule.decide(&[18.2, 2.0, 18.1], &Band::at_least(6.0)).verdict, None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct DecisionRule {
    /// Rounds before the first look (at least 3).
    pub min_rounds: usize,
    /// Rounds at the most (default [`MAX_ROUNDS`]); a claim unsettled there, or at its
    /// time budget, is inconclusive.
    pub max_rounds: usize,
    /// Whether far rounds met in some rounds only are the shape, not the machine: the
    /// sequential test of the module documentation decides beside the quantiles (a
    /// worker's hold; not a timing).
    pub intermittent: bool,
}

impl Default for DecisionRule {
    fn default() -> Self {
        DecisionRule {
            min_rounds: 3,
            max_rounds: MAX_ROUNDS,
            intermittent: false,
        }
    }
}

/// The most rounds a claim takes by default: a claim's time budget ends its rounds first
/// unless they are quicker than a fifth of a second; this bounds the looks the error rates
/// are computed over (`tests/exact/rule.rs`) where they are.
pub const MAX_ROUNDS: usize = 99;

impl DecisionRule {
    /// The rule for a claim about a hold: a shape met in some rounds only breaks it
    /// ([`intermittent`](Self::intermittent)), up to [`MAX_ROUNDS`] as the default.
    pub fn for_a_hold() -> Self {
        DecisionRule {
            min_rounds: 3,
            max_rounds: MAX_ROUNDS,
            intermittent: true,
        }
    }
}

/// The share of rounds far outside the band a correct service may have: the sequential
/// test's null hypothesis.
const QUIET_RATE: f64 = 0.05;
/// The share of rounds far outside the band a shape that comes and goes has at least: the
/// sequential test's alternative.
const MET_RATE: f64 = 1.0 / 3.0;
/// How far outside the band a round must be to count as one that met a shape that comes
/// and goes: by more than 10 %.
const MET_MARGIN: f64 = 1.1;
/// The likelihood ratio at which the sequential test decides either way: 19 : 1, Wald's
/// bound for 5 % errors on each side.
const SEQUENTIAL_ODDS: f64 = 19.0;

/// The log-likelihood ratio of `far` far rounds and `quiet` others for [`MET_RATE`]
/// against [`QUIET_RATE`].
fn sequential_evidence(far: usize, quiet: usize) -> f64 {
    far as f64 * (MET_RATE / QUIET_RATE).ln()
        + quiet as f64 * ((1.0 - MET_RATE) / (1.0 - QUIET_RATE)).ln()
}

/// The lower quantile whose confidence bound must lie inside the band for a claim to hold:
/// a third, so that a shape present in a third of the rounds cannot hold.
const HOLD_QUANTILE: f64 = 1.0 / 3.0;
/// The confidence of that bound, up to [`LATE_LOOKS_AFTER`] rounds.
const HOLD_CONFIDENCE: f64 = 0.7;
/// Past this many rounds a hold's bound needs [`LATE_HOLD_CONFIDENCE`]: a budget allows
/// dozens of looks, and each look at 70 % is another chance for a shape met in a third of
/// the rounds at random to look absent (at 70 % to 99 rounds it held 55 % of the time,
/// against 41 % at the fifteen rounds the rule used to stop at; at 90 % 44 %).
const LATE_LOOKS_AFTER: usize = 15;
/// The confidence of a hold's bound past [`LATE_LOOKS_AFTER`] rounds.
const LATE_HOLD_CONFIDENCE: f64 = 0.9;

/// The confidence a hold's bound needs at `n` rounds.
fn hold_confidence(n: usize) -> f64 {
    if n > LATE_LOOKS_AFTER {
        LATE_HOLD_CONFIDENCE
    } else {
        HOLD_CONFIDENCE
    }
}
/// The confidence of the median's interval that must lie outside the band to break.
const BROKEN_CONFIDENCE: f64 = 0.75;
/// How many robust spreads outside the band make a round contrary to a hold.
const FAR: f64 = 3.0;
/// A hold tolerates one contrary round in this many.
const CONTRARY_PER: usize = 6;
/// The smallest robust spread the rule uses (0.1 %), so identical rounds are not
/// infinitely precise.
const MIN_SPREAD: f64 = 1e-3;

/// What the rounds so far say.
#[derive(Clone, Debug, PartialEq)]
pub struct Decision {
    /// `Some` when the rounds settle it, `None` when more rounds could.
    pub verdict: Option<Verdict>,
    /// One sentence a reader can check against the rounds.
    pub reason: String,
}

/// The rounds, numbered from 1, whose figure misses `band` by more than `by` on the log
/// scale.
fn missing_by(values: &[f64], band: &Band, by: f64) -> Vec<usize> {
    values
        .iter()
        .enumerate()
        .filter(|&(_, &v)| log_miss(band, v) > by)
        .map(|(i, _)| i + 1)
        .collect()
}

/// "3, 7, 11".
fn listed(rounds: &[usize]) -> String {
    rounds
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl DecisionRule {
    /// Whether the rule looks at the rounds after the `n`-th: at the minimum, every second
    /// round after it, and at the maximum.
    pub fn looks_at(&self, n: usize) -> bool {
        n >= self.min_rounds && ((n - self.min_rounds) % 2 == 0 || n >= self.max_rounds)
    }

    /// Decides from the round figures so far (at a look).
    pub fn decide(&self, values: &[f64], band: &Band) -> Decision {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return Decision {
                verdict: None,
                reason: "no figures".into(),
            };
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let look = Look::of(values, &sorted, band);
        let verdict = self.verdict(&look);
        Decision {
            verdict,
            reason: self.reason(&look, verdict),
        }
    }

    /// The verdict of one look, or `None` for more rounds: the rule of the module
    /// documentation, on figures [`Look::of`] computed once.
    fn verdict(&self, look: &Look) -> Option<Verdict> {
        let Look {
            band, n, sorted, j, ..
        } = *look;
        let bound = SEQUENTIAL_ODDS.ln();
        if j > 0
            && band.contains(sorted[j - 1])
            && band.contains(sorted[n - j])
            && look.contrary <= n / CONTRARY_PER
            && (!self.intermittent || look.evidence <= -bound)
        {
            return Some(Verdict::Holds);
        }
        if look.hi < band.lo || look.lo > band.hi {
            return Some(Verdict::Broken);
        }
        if self.intermittent && look.evidence >= bound {
            return Some(Verdict::Broken);
        }
        None
    }

    /// The sentence a reader checks `verdict` against the rounds with.
    fn reason(&self, look: &Look, verdict: Option<Verdict>) -> String {
        let Look {
            band,
            values,
            sorted,
            n,
            j,
            lo,
            hi,
            ..
        } = *look;
        let m = middle_of_sorted(sorted);
        let bound = SEQUENTIAL_ODDS.ln();
        let met = missing_by(values, band, MET_MARGIN.ln());
        match verdict {
            Some(Verdict::Holds) => format!(
                "median {m:.3} is inside the band {band}, and so is the middle third of the {n} rounds ({:.3} to {:.3})",
                sorted[j - 1],
                sorted[n - j]
            ),
            // In the figure's own scale, as the band is: no margin in percent beside it.
            Some(_) if hi < band.lo || lo > band.hi => format!(
                "median {m:.3} and its confidence interval [{lo:.3}, {hi:.3}] are outside the band {band} ({n} rounds)"
            ),
            Some(_) => format!(
                "round {} of {n} miss the band {band} by more than {:.0} %: a shape met in some rounds only, {} of {n} — {:.0} times likelier if it comes in one round in three than if it is a correct service's rare far round (one in twenty)",
                listed(&met),
                (MET_MARGIN - 1.0) * 100.0,
                met.len(),
                look.evidence.exp()
            ),
            None if self.intermittent && look.contrary <= n / CONTRARY_PER => format!(
                "the rounds do not settle it yet: median {m:.3}, interval [{lo:.3}, {hi:.3}] against the band {band} ({n} rounds); {} of them more than {:.0} % outside, and a shape met in one round in three is ruled out only by {} quiet rounds",
                met.len(),
                (MET_MARGIN - 1.0) * 100.0,
                (bound / ((1.0 - QUIET_RATE) / (1.0 - MET_RATE)).ln()).ceil()
            ),
            None if look.contrary <= n / CONTRARY_PER => format!(
                "the rounds do not settle it: median {m:.3}, interval [{lo:.3}, {hi:.3}] against the band {band} ({n} rounds)"
            ),
            None => {
                let rounds = listed(&missing_by(values, band, FAR * look.spread));
                format!(
                    "the rounds disagree: round {rounds} of {n} miss the band {band} by more than {FAR} spreads of the rounds, more than one in {CONTRARY_PER}, where the median {m:.3} is inside (a shape that comes and goes)"
                )
            }
        }
    }

    /// Runs the whole procedure on a series of round figures (`next(i)` is round `i`'s):
    /// the verdict and the rounds it took. The suite's Monte Carlo runs the rule this way.
    pub fn run(&self, band: &Band, mut next: impl FnMut(usize) -> f64) -> (Verdict, usize) {
        let mut values = Vec::with_capacity(self.max_rounds);
        // Kept sorted as the rounds come: a look sorts nothing but the deviations.
        let mut sorted: Vec<f64> = Vec::with_capacity(self.max_rounds);
        let mut finite = true;
        for i in 0..self.max_rounds {
            let value = next(i);
            values.push(value);
            sorted.insert(sorted.partition_point(|&v| v < value), value);
            // A round without a figure leaves every later look undecided, as `decide` does.
            finite &= value.is_finite();
            if finite
                && self.looks_at(values.len())
                && let Some(verdict) = self.verdict(&Look::of(&values, &sorted, band))
            {
                return (verdict, values.len());
            }
        }
        (Verdict::Inconclusive, values.len())
    }
}

/// The median's distribution-free confidence interval at ≥ 75 % over `values`,
/// `[x(k), x(n+1−k)]`: the interval a broken verdict needs wholly outside the band, and
/// what a report draws around the median. `None` without a finite value.
///
/// ```
/// use perfshape::claim::median_interval;
///
/// assert_eq!(median_interval(&[1.0, 3.0, 2.0]), Some((1.0, 3.0)));
/// assert_eq!(median_interval(&[5.0, 1.0, 2.0, 4.0, 3.0, 6.0, 7.0, 9.0, 8.0]), Some((3.0, 7.0)));
/// ```
pub fn median_interval(values: &[f64]) -> Option<(f64, f64)> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    Some(interval_of_sorted(&sorted))
}

/// [`median_interval`] of values already sorted (at least one).
fn interval_of_sorted(sorted: &[f64]) -> (f64, f64) {
    let n = sorted.len();
    let (_, k) = orders(n);
    (sorted[k - 1], sorted[n - k])
}

/// How far outside the band `x` is, in log space (0 inside): the rule's distances are
/// ratios, so a 10 % miss weighs the same for a band at 2 as for one at 20.
fn log_miss(band: &Band, x: f64) -> f64 {
    if x < band.lo {
        (band.lo / x).ln()
    } else if x > band.hi {
        (x / band.hi).ln()
    } else {
        0.0
    }
}

/// 1.4826 × the median absolute deviation of the rounds' logarithms: their spread, which a
/// few far-out rounds do not inflate (at least [`MIN_SPREAD`]). From the rounds sorted:
/// their logarithms are sorted too, so the deviations from their middle, smallest first,
/// are the rounds below it read downwards merged with those above it read upwards — the
/// median of those without a sort of its own (the Monte Carlo decides millions of looks).
fn robust_spread(sorted: &[f64]) -> f64 {
    let log = |i: usize| sorted[i].max(f64::MIN_POSITIVE).ln();
    let n = sorted.len();
    let center = if n % 2 == 1 {
        log(n / 2)
    } else {
        (log(n / 2 - 1) + log(n / 2)) / 2.0
    };
    let split = (0..n).find(|&i| log(i) >= center).unwrap_or(n);
    let (mut below, mut above) = (split, split);
    let mut next = || {
        let down = (below > 0).then(|| center - log(below - 1));
        let up = (above < n).then(|| log(above) - center);
        match (down, up) {
            (Some(d), Some(u)) if d < u => {
                below -= 1;
                d
            }
            (_, Some(u)) => {
                above += 1;
                u
            }
            (Some(d), None) => {
                below -= 1;
                d
            }
            (None, None) => unreachable!("no more than n deviations are read"),
        }
    };
    for _ in 0..(n - 1) / 2 {
        next();
    }
    let lower = next();
    let mad = if n % 2 == 1 {
        lower
    } else {
        (lower + next()) / 2.0
    };
    (1.4826 * mad).max(MIN_SPREAD)
}

/// The median of values already sorted (at least one).
fn middle_of_sorted(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The figures one look at the rounds reads, computed once: the verdict needs the counts,
/// the sentence beside it the rounds themselves.
#[derive(Clone, Copy)]
struct Look<'a> {
    band: &'a Band,
    values: &'a [f64],
    sorted: &'a [f64],
    n: usize,
    /// The hold's order statistic ([`orders()`]).
    j: usize,
    /// The median's interval.
    lo: f64,
    hi: f64,
    /// The rounds' robust spread ([`robust_spread`]).
    spread: f64,
    /// Rounds more than [`FAR`] spreads outside the band.
    contrary: usize,
    /// The sequential test's log-likelihood ratio ([`sequential_evidence`]).
    evidence: f64,
}

impl<'a> Look<'a> {
    /// The look at `values` (finite, at least one), `sorted` their copy in order.
    fn of(values: &'a [f64], sorted: &'a [f64], band: &'a Band) -> Look<'a> {
        let n = values.len();
        let spread = robust_spread(sorted);
        let (lo, hi) = interval_of_sorted(sorted);
        let far = |by: f64| values.iter().filter(|&&v| log_miss(band, v) > by).count();
        // The rounds that met a shape that comes and goes: outside the band by more than
        // [`MET_MARGIN`] — not by spreads of the rounds, which the met rounds themselves
        // widen until none is far.
        let met = far(MET_MARGIN.ln());
        Look {
            band,
            values,
            sorted,
            n,
            j: orders(n).0,
            lo,
            hi,
            spread,
            contrary: far(FAR * spread),
            evidence: sequential_evidence(met, n - met),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn looks_come_at_the_minimum_every_second_round_and_the_maximum() {
        let rule = DecisionRule {
            min_rounds: 3,
            max_rounds: 8,
            intermittent: false,
        };
        let looks: Vec<usize> = (1..=8).filter(|&n| rule.looks_at(n)).collect();
        assert_eq!(looks, [3, 5, 7, 8]);
    }

    /// The rule for a hold: nine quiet rounds before a hold, and far rounds met in some
    /// rounds only break it — where the default rule is left undecided by them.
    #[test]
    fn a_hold_needs_nine_quiet_rounds_and_far_rounds_that_come_and_go_break_it() {
        let band = Band::at_most(1.0);
        let hold = DecisionRule::for_a_hold();
        let quiet = [
            0.010, 0.012, 0.011, 0.009, 0.010, 0.013, 0.011, 0.010, 0.012,
        ];
        assert_eq!(hold.decide(&quiet[..7], &band).verdict, None);
        let d = hold.decide(&quiet, &band);
        assert_eq!(d.verdict, Some(Verdict::Holds), "{}", d.reason);
        assert_eq!(
            DecisionRule::default().decide(&quiet[..3], &band).verdict,
            Some(Verdict::Holds)
        );
        // Three far rounds of seven: the median is inside, and the shape comes and goes.
        let met = [0.010, 4.0, 0.012, 3.5, 0.011, 0.013, 5.0];
        let d = hold.decide(&met, &band);
        assert_eq!(d.verdict, Some(Verdict::Broken), "{}", d.reason);
        assert!(d.reason.contains("3 of 7"), "{}", d.reason);
        assert_eq!(DecisionRule::default().decide(&met, &band).verdict, None);
        // Two of five are not yet enough either way.
        assert_eq!(hold.decide(&met[..5], &band).verdict, None);
        // One far round in nine is a correct service's rare one: not broken, not yet held.
        let mut rare = quiet.to_vec();
        rare[4] = 4.0;
        assert_eq!(hold.decide(&rare, &band).verdict, None);
    }

    #[test]
    fn a_far_round_outside_blocks_a_hold_until_six_rounds_outvote_it() {
        let band = Band::at_least(1.0);
        let rule = DecisionRule::default();
        let d = rule.decide(&[1.5, 1.52, 1.49, 1.51, 0.75], &band);
        assert_eq!(d.verdict, None, "{}", d.reason);
        assert!(d.reason.contains("round 5 of 5"), "{}", d.reason);
        let d = rule.decide(&[1.5, 1.52, 1.49, 1.51, 0.75, 1.5, 1.48], &band);
        assert_eq!(d.verdict, Some(Verdict::Holds), "{}", d.reason);
        let d = rule.decide(&[1.5, 1.52, 0.75, 1.51, 0.75, 1.5, 1.48], &band);
        assert_eq!(d.verdict, None, "{}", d.reason);
    }
}
