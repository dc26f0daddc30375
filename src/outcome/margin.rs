//! How far a claim's median sits from its band's nearest edge, in the machine's own noise:
//! what tells a reviewer which claims could flip on the next run.

use serde::{Deserialize, Serialize};

use super::band::Band;

/// The noise floor a margin divides by at the least (0.1 %): rounds that were identical
/// (a share that came out 1.0 every time) are not infinitely precise.
const MIN_FLOOR: f64 = 1e-3;

/// The distance of a claim's median from the nearest edge of its band, in log space as
/// the decision rule measures it (a factor of 1.2 weighs the same at a band of 2 as at
/// 20), and in noise floors: the median change between consecutive rounds of the
/// noisiest side, as a log step, at least 0.1 %. Positive inside the band, negative
/// outside, so a holding claim and a broken control both want it far from zero.
///
/// ```
/// use perfshape::claim::{Band, Margin};
///
/// // A median of 1.2 against ≥ 1, with rounds 5 % apart: 20 % inside, 3.7 noise floors.
/// let m = Margin::of(&Band::at_least(1.0), 1.2, 0.05).unwrap();
/// assert_eq!(m.to_string(), "20% inside (3.7 floors)");
/// // A median of 10 against ≤ 2: a factor of 5, 400 % outside.
/// let m = Margin::of(&Band::at_most(2.0), 10.0, 0.02).unwrap();
/// assert!(m.distance < 0.0 && m.clears(3.0, 0.15));
/// assert_eq!(m.to_string(), "400% outside (81.3 floors)");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Margin {
    /// The log of the factor between the median and the nearest edge (ln 1.2 for 20 %):
    /// positive inside the band, negative outside.
    pub distance: f64,
    /// `distance` ÷ the noise floor's log step: how many rounds' worth of noise lie
    /// between the median and the edge.
    pub floors: f64,
}

impl Margin {
    /// The margin of `median` against `band` at a relative `noise_floor`; `None` when the
    /// median is not a number or the band has no finite edge.
    pub fn of(band: &Band, median: f64, noise_floor: f64) -> Option<Margin> {
        if !(median.is_finite() && median > 0.0) {
            return None;
        }
        // ln(median ÷ edge) above a lower edge, ln(edge ÷ median) below an upper one: each
        // positive on the band's side of its edge; the nearer edge is the smaller.
        let above_lo = (band.lo > 0.0 && band.lo.is_finite()).then(|| (median / band.lo).ln());
        let below_hi = (band.hi > 0.0 && band.hi.is_finite()).then(|| (band.hi / median).ln());
        let distance = match (above_lo, below_hi) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => return None,
        };
        let floor = if noise_floor.is_finite() {
            noise_floor.max(MIN_FLOOR)
        } else {
            MIN_FLOOR
        };
        let floor = (1.0 + floor).ln();
        Some(Margin {
            distance,
            floors: distance / floor,
        })
    }

    /// The factor between the median and the edge, less one: 0.2 for a median 20 % past
    /// the edge (or the edge 20 % past the median), on either side.
    pub fn relative(&self) -> f64 {
        self.distance.abs().exp() - 1.0
    }

    /// Whether the median is at least `floors` noise floors *and* `relative` (0.15 = 15 %)
    /// from the edge, on either side: a margin a reviewer can rely on.
    pub fn clears(&self, floors: f64, relative: f64) -> bool {
        self.floors.abs() >= floors && self.relative() >= relative
    }
}

impl std::fmt::Display for Margin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let side = if self.distance >= 0.0 {
            "inside"
        } else {
            "outside"
        };
        write!(
            f,
            "{:.0}% {side} ({:.1} floors)",
            self.relative() * 100.0,
            self.floors.abs()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_a_closed_band_the_nearer_edge_counts() {
        let m = Margin::of(&Band::within(0.9, 1.3), 1.2, 0.02).unwrap();
        assert!((m.distance - (1.3f64 / 1.2).ln()).abs() < 1e-9, "{m:?}");
        let m = Margin::of(&Band::within(0.9, 1.3), 0.95, 0.02).unwrap();
        assert!((m.distance - (0.95f64 / 0.9).ln()).abs() < 1e-9, "{m:?}");
    }

    #[test]
    fn outside_is_negative_and_identical_rounds_have_a_least_floor() {
        let m = Margin::of(&Band::at_least(0.9), 0.45, 0.0).unwrap();
        assert!((m.distance + 2f64.ln()).abs() < 1e-9, "{m:?}");
        assert!((m.floors + 2f64.ln() / 1.001f64.ln()).abs() < 1e-6, "{m:?}");
        assert_eq!(m.to_string(), "100% outside (693.5 floors)");
        assert!(!m.clears(3.0, 1.5) && m.clears(3.0, 0.15));
        assert!(Margin::of(&Band::at_least(1.0), f64::NAN, 0.1).is_none());
        let any = Band::within(f64::NEG_INFINITY, f64::INFINITY);
        assert!(Margin::of(&any, 1.0, 0.1).is_none());
    }
}
