//! The bound that ended a load early: what a run records and a summary, a probe step and a
//! report carry. It lives below both `run` and `summary` so that neither reads the other
//! for it (`perfshape::load::CutShort` re-exports it).

use std::time::Duration;

use serde::Serialize;

/// The bound that ended a load before it had offered what it meant to: a closed loop that
/// sent its cap of requests before its time was up, or a run past its deadline. A figure
/// from such a load is of a shorter load than asked for, and says so.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case", tag = "bound")]
pub enum CutShort {
    /// The closed loop's request bound `n` was reached `at` into a loop meant to last
    /// `meant`.
    Requests {
        /// The bound.
        n: usize,
        /// When the last request was sent.
        #[serde(with = "crate::vocab::millis")]
        at: Duration,
        /// How long the loop was meant to offer load.
        #[serde(with = "crate::vocab::millis")]
        meant: Duration,
    },
    /// The run's deadline passed `at` into the load.
    Deadline {
        /// The deadline.
        #[serde(with = "crate::vocab::millis")]
        at: Duration,
    },
}

impl std::fmt::Display for CutShort {
    /// `cut short by its bound of 100000 requests at 1.9 s of 5.0 s`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CutShort::Requests { n, at, meant } => write!(
                f,
                "cut short by its bound of {n} requests at {:.1} s of {:.1} s",
                at.as_secs_f64(),
                meant.as_secs_f64()
            ),
            CutShort::Deadline { at } => write!(
                f,
                "cut short by the run's deadline at {:.1} s",
                at.as_secs_f64()
            ),
        }
    }
}
