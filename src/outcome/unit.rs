//! The unit a figure is printed in.

use serde::Serialize;

/// The unit a measure reports in, for printing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unit {
    /// A duration, stored in seconds and printed in milliseconds.
    Seconds,
    /// A rate per second (throughput).
    PerSecond,
    /// A plain number.
    Plain,
}

impl Unit {
    /// `value` as a reader would write it: `20.0 ms`, `93.6/s`, `1.000`.
    pub fn show(&self, value: f64) -> String {
        match self {
            Unit::Seconds => format!("{:.1} ms", value * 1e3),
            Unit::PerSecond => format!("{value:.1}/s"),
            Unit::Plain => format!("{value:.3}"),
        }
    }
}
