//! The three-way verdict, and the median and A/A noise floor of a series of rounds.

use serde::{Deserialize, Serialize};

/// What a claim's measurements say.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// The middle third of the rounds lies inside the band, and no round is far outside.
    Holds,
    /// The median's confidence interval lies wholly outside the band.
    Broken,
    /// Neither, by the last round or the time budget: the rounds disagree, or straddle the
    /// band, or a side ran past its time. This machine, now, cannot tell.
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
