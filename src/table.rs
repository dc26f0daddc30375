//! The seed-style table: published and measured figures side by side, each normalised to
//! the experiment's baseline row, and whether the measured shape agrees with the model.

use std::fmt::Write as _;

use crate::claim::Band;
use crate::experiment::{Experiment, Measured};

/// measured ÷ model within this band counts as the shape agreeing: the model ignores
/// per-request overhead (so nothing is much faster, 0.9 below) and a 2-core machine adds
/// some (the model-against-reality test gates the same band).
pub const AGREES: Band = Band { lo: 0.9, hi: 1.6 };

/// Renders `experiment`'s table with one measured entry per row (Markdown-compatible).
pub fn experiment_table(experiment: &Experiment, measured: &[Measured]) -> String {
    let base = &experiment.rows[experiment.baseline];
    let base_published = base.published;
    let base_measured = measured[experiment.baseline].summary.wall.as_secs_f64();
    let unit = &experiment.published_unit;
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", experiment.id, experiment.title);
    let _ = writeln!(out, "source: {}", experiment.source);
    let _ = writeln!(
        out,
        "scale: {}; figures ÷ row {:?} ({})",
        experiment.scale, base.id, base.label
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| scenario | N | published | ÷ base | model | ÷ base | measured | ÷ base | measured ÷ model | waves (model) | ok/sent | shape |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    let base_model = measured[experiment.baseline].predicted.wall.as_secs_f64();
    let (mut sent, mut ok) = (0, 0);
    for (row, m) in experiment.rows.iter().zip(measured) {
        let wall = m.summary.wall.as_secs_f64();
        let model = m.predicted.wall.as_secs_f64();
        let vs_model = wall / model.max(f64::MIN_POSITIVE);
        let shape = if m.summary.failed > 0 {
            "failures".to_string()
        } else if AGREES.contains(vs_model) {
            "agrees".to_string()
        } else {
            format!("differs (band {AGREES})")
        };
        sent += m.summary.sent;
        ok += m.summary.ok;
        let _ = writeln!(
            out,
            "| {} | {} | {} {unit} | {:.2} | {:.0} ms | {:.2} | {:.1} ms | {:.2} | {:.2} | {} ({}) | {}/{} | {} |",
            row.label,
            row.scenario.n,
            row.published,
            row.published / base_published,
            model * 1e3,
            model / base_model,
            wall * 1e3,
            wall / base_measured,
            vs_model,
            m.summary.waves,
            m.predicted.waves,
            m.summary.ok,
            m.summary.sent,
            shape,
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "requests: sent {sent} = ok {ok} + failed {}",
        sent - ok
    );
    for row in experiment
        .rows
        .iter()
        .filter(|r| r.published_note.is_some())
    {
        let _ = writeln!(
            out,
            "note {}: published {}",
            row.id,
            row.published_note.as_deref().unwrap_or_default()
        );
    }
    out
}

/// Per-request begin/completed lines, as the seed's client printed them.
pub fn timeline(measured: &Measured) -> String {
    let mut out = String::new();
    for r in &measured.run.records {
        let outcome = match &r.outcome {
            crate::run::Outcome::Ok { status } => format!("{status}"),
            crate::run::Outcome::Failed { kind } => format!("failed: {kind}"),
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
