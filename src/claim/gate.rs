//! Reading the gate's mode (strict or advisory) from the environment, and the lock that
//! keeps timing claims from overlapping.

use std::sync::{Mutex, MutexGuard};

use crate::error::{Error, Result};
use crate::outcome::{GATE_ENV, GateMode};

// Reading the mode can fail with perfshape's error, which sits above the mode itself.
impl GateMode {
    /// Reads [`GATE_ENV`]: unset or `strict` is strict, `advisory` is advisory; anything
    /// else is an error rather than a silent default.
    pub fn from_env() -> Result<GateMode> {
        match std::env::var(GATE_ENV) {
            Err(std::env::VarError::NotPresent) => Ok(GateMode::Strict),
            Ok(value) => GateMode::parse(&value),
            Err(std::env::VarError::NotUnicode(value)) => GateMode::parse(&value.to_string_lossy()),
        }
    }

    /// Parses `strict` or `advisory`.
    pub fn parse(value: &str) -> Result<GateMode> {
        match value.trim() {
            "" | "strict" => Ok(GateMode::Strict),
            "advisory" => Ok(GateMode::Advisory),
            other => Err(Error::Unknown {
                what: "PERFSHAPE_GATE mode",
                name: other.to_string(),
                expected: "strict, advisory".into(),
            }),
        }
    }
}

static SHAPE_LOCK: Mutex<()> = Mutex::new(());

/// Holds the process-wide lock under which timing claims measure.
///
/// nextest runs each test in its own process and the `shape` test group runs one at a
/// time; plain `cargo test` runs the tests of a binary on threads, so every claim also
/// takes this lock while it measures: two claims in one process never overlap.
pub fn shape_lock() -> MutexGuard<'static, ()> {
    // A claim that panicked mid-measurement leaves nothing to repair: measurements own
    // their servers and clients.
    SHAPE_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
