//! Per-request lines, as seed 000's client printed them: `begin`, `completed`, who served
//! it and on which connection.

use std::fmt::Write as _;

use crate::experiment::Measured;

/// Per-request begin/completed lines, as the seed's client printed them (HTTP rows).
pub fn timeline(measured: &Measured) -> String {
    let mut out = String::new();
    let Some(run) = &measured.run else {
        return out;
    };
    for r in &run.records {
        let outcome = match &r.outcome {
            perfshape::load::Outcome::Ok { status } => format!("{status}"),
            perfshape::load::Outcome::Failed { kind } => format!("failed: {kind}"),
        };
        let _ = writeln!(
            out,
            "  #{:<4} begin {:>8.1} ms  completed {:>8.1} ms  ({:>7.1} ms)  {}  {}  {:?}",
            r.index,
            r.start.as_secs_f64() * 1e3,
            r.end.as_secs_f64() * 1e3,
            r.latency().as_secs_f64() * 1e3,
            outcome,
            r.served_by.as_deref().unwrap_or("-"),
            r.connection,
        );
    }
    out
}
