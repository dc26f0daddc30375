//! The tolerance band a claim's figure must fall in.

use serde::Serialize;

/// An interval `[lo, hi]` (either end may be open-ended) that a claim's figure must lie in.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Band {
    /// Lower bound, inclusive (`0` or below when there is none).
    pub lo: f64,
    /// Upper bound, inclusive (`f64::INFINITY` when there is none).
    pub hi: f64,
}

impl Band {
    /// At least `k`.
    pub fn at_least(k: f64) -> Band {
        Band {
            lo: k,
            hi: f64::INFINITY,
        }
    }

    /// At most `k`.
    pub fn at_most(k: f64) -> Band {
        Band {
            lo: f64::NEG_INFINITY,
            hi: k,
        }
    }

    /// Between `lo` and `hi`, both inclusive.
    pub fn within(lo: f64, hi: f64) -> Band {
        Band { lo, hi }
    }

    /// Whether `x` lies in the band.
    pub fn contains(&self, x: f64) -> bool {
        x >= self.lo && x <= self.hi
    }

    /// How far outside the band `x` is, relative to the edge it misses (0 when inside).
    pub fn miss(&self, x: f64) -> f64 {
        if x < self.lo {
            (self.lo - x) / self.lo.abs().max(f64::MIN_POSITIVE)
        } else if x > self.hi {
            (x - self.hi) / self.hi.abs().max(f64::MIN_POSITIVE)
        } else {
            0.0
        }
    }

    pub(crate) fn is_valid(&self) -> bool {
        !self.lo.is_nan() && !self.hi.is_nan() && self.lo <= self.hi
    }
}

impl std::fmt::Display for Band {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.lo.is_finite(), self.hi.is_finite()) {
            (true, false) => write!(f, "≥ {}", self.lo),
            (false, true) => write!(f, "≤ {}", self.hi),
            (true, true) => write!(f, "[{}, {}]", self.lo, self.hi),
            (false, false) => f.write_str("any"),
        }
    }
}
