//! One side of a claim: a labelled closure that measures a figure each time it is called.

use std::time::Duration;

use serde::Serialize;

use crate::error::Result;

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
    pub(crate) fn show(&self, value: f64) -> String {
        match self {
            Unit::Seconds => format!("{:.1} ms", value * 1e3),
            Unit::PerSecond => format!("{value:.1}/s"),
            Unit::Plain => format!("{value:.3}"),
        }
    }
}

type MeasureFn<'a> = Box<dyn FnMut() -> Result<f64> + 'a>;

/// A labelled measurement: called once per round, it returns one figure.
pub struct Measure<'a> {
    pub(crate) label: String,
    pub(crate) unit: Unit,
    pub(crate) run: MeasureFn<'a>,
}

impl<'a> Measure<'a> {
    /// A measure of a duration, such as the wall time of a run.
    pub fn duration(label: &str, mut f: impl FnMut() -> Result<Duration> + 'a) -> Self {
        Measure {
            label: label.to_string(),
            unit: Unit::Seconds,
            run: Box::new(move || f().map(|d| d.as_secs_f64())),
        }
    }

    /// A measure of a rate per second, such as throughput.
    pub fn rate(label: &str, f: impl FnMut() -> Result<f64> + 'a) -> Self {
        Measure {
            label: label.to_string(),
            unit: Unit::PerSecond,
            run: Box::new(f),
        }
    }

    /// A measure of a plain number.
    pub fn value(label: &str, f: impl FnMut() -> Result<f64> + 'a) -> Self {
        Measure {
            label: label.to_string(),
            unit: Unit::Plain,
            run: Box::new(f),
        }
    }
}

impl std::fmt::Debug for Measure<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Measure")
            .field("label", &self.label)
            .field("unit", &self.unit)
            .finish_non_exhaustive()
    }
}
