//! What a bound claim's figure is measured against, and how that expectation follows.

use std::time::Duration;

use serde::Serialize;

/// An expected figure, in its measure's unit (seconds for durations), and how it follows
/// from the settings — e.g. `model(fan-out of 20 → blocking, W=2 B=512, 20 ms)`.
///
/// ```
/// use std::time::Duration;
/// use perfshape::claim::Expected;
///
/// let expected = Expected::duration(Duration::from_millis(200), "ceil(20/2) × 20 ms");
/// assert_eq!(expected.value, 0.2);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Expected {
    /// The expected figure, in the measure's unit (seconds for durations).
    pub value: f64,
    /// How it follows from the settings.
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
}
