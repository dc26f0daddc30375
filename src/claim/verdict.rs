//! The three-way verdict and the rule that reaches it from per-round figures.

use serde::Serialize;

use super::band::Band;

/// What a claim's measurements say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The median lies in the band and the rounds agree.
    Holds,
    /// The median lies outside the band, the rounds agree, and it misses by more than the
    /// noise floor.
    Broken,
    /// The rounds disagree, or the miss is within the noise: this machine, now, cannot tell.
    Inconclusive,
}

impl Verdict {
    /// Whether the claim holds.
    pub fn holds(&self) -> bool {
        *self == Verdict::Holds
    }
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Holds => "holds",
            Verdict::Broken => "broken",
            Verdict::Inconclusive => "inconclusive",
        })
    }
}

/// The median of `values` (the mean of the middle two for an even count); NaN when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    }
}

/// The A/A noise floor of one side's measurements in round order: the median relative
/// change between consecutive measurements of the same thing. 0 with fewer than two.
pub fn noise_floor(series: &[f64]) -> f64 {
    let changes: Vec<f64> = series
        .windows(2)
        .map(|w| (w[1] / w[0] - 1.0).abs())
        .filter(|c| c.is_finite())
        .collect();
    if changes.is_empty() {
        0.0
    } else {
        median(&changes)
    }
}

/// The outcome of looking at the rounds so far.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Decision {
    /// `Some` when the rounds settle it, `None` when more rounds could.
    pub(crate) verdict: Option<Verdict>,
    /// One sentence a reader can check against the rounds.
    pub(crate) reason: String,
}

/// Decides from per-round figures. Rounds must agree with the median's side of the band:
/// all of them up to `min_rounds`, then at least two thirds. A miss smaller than the
/// noise floor is never called broken: it could be the machine, not the code.
pub(crate) fn decide(values: &[f64], band: &Band, noise: f64, min_rounds: usize) -> Decision {
    let n = values.len();
    let m = median(values);
    let inside = band.contains(m);
    let agreeing = values
        .iter()
        .filter(|&&v| band.contains(v) == inside)
        .count();
    let needed = n.min(min_rounds).max((2 * n).div_ceil(3));
    let side = if inside { "inside" } else { "outside" };
    let tally = format!("{agreeing} of {n} rounds {side}");
    if n == 0 || m.is_nan() {
        return Decision {
            verdict: None,
            reason: "no figures".into(),
        };
    }
    if agreeing < needed {
        return Decision {
            verdict: None,
            reason: format!(
                "the rounds disagree: median {m:.3} is {side} the band {band} but only {tally}"
            ),
        };
    }
    if inside {
        return Decision {
            verdict: Some(Verdict::Holds),
            reason: format!("median {m:.3} is inside the band {band} ({tally})"),
        };
    }
    let miss = band.miss(m);
    if miss <= noise {
        return Decision {
            verdict: None,
            reason: format!(
                "median {m:.3} misses the band {band} by {:.1}%, within the noise floor {:.1}%",
                miss * 100.0,
                noise * 100.0
            ),
        };
    }
    Decision {
        verdict: Some(Verdict::Broken),
        reason: format!(
            "median {m:.3} is outside the band {band} by {:.1}% ({tally}; noise floor {:.1}%)",
            miss * 100.0,
            noise * 100.0
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn unanimous_rounds_inside_hold() {
        let d = decide(&[7.0, 8.0, 9.0], &Band::at_least(6.0), 0.02, 3);
        assert_eq!(d.verdict, Some(Verdict::Holds));
    }

    #[test]
    fn unanimous_clear_miss_is_broken() {
        let d = decide(&[3.0, 3.1, 2.9], &Band::at_least(6.0), 0.02, 3);
        assert_eq!(d.verdict, Some(Verdict::Broken));
        assert!(d.reason.contains("outside"), "{}", d.reason);
    }

    #[test]
    fn a_miss_within_the_noise_is_not_broken() {
        let d = decide(&[5.9, 5.8, 5.95], &Band::at_least(6.0), 0.10, 3);
        assert_eq!(d.verdict, None);
        assert!(d.reason.contains("noise floor"), "{}", d.reason);
    }

    #[test]
    fn split_rounds_ask_for_more() {
        let d = decide(&[7.0, 5.0, 8.0], &Band::at_least(6.0), 0.0, 3);
        assert_eq!(d.verdict, None);
        assert!(d.reason.contains("disagree"), "{}", d.reason);
        // Two more rounds inside: 4 of 5 agree, which is enough.
        let d = decide(&[7.0, 5.0, 8.0, 7.5, 7.2], &Band::at_least(6.0), 0.0, 3);
        assert_eq!(d.verdict, Some(Verdict::Holds));
    }

    #[test]
    fn median_of_even_count_is_the_mean_of_the_middle() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn noise_floor_of_a_steady_series_is_small() {
        assert_eq!(noise_floor(&[1.0]), 0.0);
        let n = noise_floor(&[100.0, 101.0, 99.0, 100.0]);
        assert!(n > 0.009 && n < 0.021, "{n}");
    }

    proptest! {
        /// A verdict is never reached against the median: Holds needs the median inside,
        /// Broken needs it outside by more than the noise.
        #[test]
        fn verdicts_follow_the_median(
            values in proptest::collection::vec(0.01f64..100.0, 1..12),
            lo in 0.01f64..50.0,
            width in 0.0f64..50.0,
            noise in 0.0f64..0.5,
        ) {
            let band = Band::within(lo, lo + width);
            let m = median(&values);
            let d = decide(&values, &band, noise, 3);
            match d.verdict {
                Some(Verdict::Holds) => prop_assert!(band.contains(m)),
                Some(Verdict::Broken) => prop_assert!(!band.contains(m) && band.miss(m) > noise),
                Some(Verdict::Inconclusive) => prop_assert!(false, "decide never says inconclusive"),
                None => {}
            }
        }

        /// When every round is inside the band, the claim holds.
        #[test]
        fn unanimous_inside_always_holds(values in proptest::collection::vec(1.0f64..2.0, 1..12)) {
            let d = decide(&values, &Band::within(1.0, 2.0), 0.3, 3);
            prop_assert_eq!(d.verdict, Some(Verdict::Holds));
        }
    }
}
