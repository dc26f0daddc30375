//! Strict or advisory: what a claim that does not hold does to its test. (Reading it from
//! the environment is `claim::gate`'s, which may fail with perfshape's error.)

use serde::Serialize;

/// The environment variable that chooses the [`GateMode`].
pub const GATE_ENV: &str = "PERFSHAPE_GATE";

/// What a claim that does not hold does to the test that checks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GateMode {
    /// Broken or inconclusive fails (the default, and what CI should run).
    Strict,
    /// Broken or inconclusive prints the report and passes.
    Advisory,
}

impl std::fmt::Display for GateMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            GateMode::Strict => "strict",
            GateMode::Advisory => "advisory",
        })
    }
}
