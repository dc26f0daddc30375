//! Which load engine a script is written for or a statistics file came from: the name
//! the schedule's checks, the script writers and the statistics readers share, at the
//! bottom of `external/` so that none of them reads another for it.

use serde::Serialize;

/// A distributed load engine perfshape writes for and reads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Engine {
    /// Locust: its `--json-file` output or its `--csv` `_stats.csv`.
    Locust,
    /// k6: its end-of-test summary (`handleSummary` data or `--summary-export`).
    K6,
}

impl Engine {
    /// The engine's name.
    pub fn name(&self) -> &'static str {
        match self {
            Engine::Locust => "locust",
            Engine::K6 => "k6",
        }
    }
}
