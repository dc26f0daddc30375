//! The seed-style table: published, modelled and measured figures side by side, each
//! normalised to the experiment's baseline row, and whether the measured shape agrees with
//! the model.

use std::fmt::Write as _;

use crate::claim::Band;
use crate::experiment::{Experiment, Measured, Metric};

/// How much slower than the model (measured ÷ model wall, or model ÷ measured throughput)
/// counts as the shape agreeing. The model counts the per-request overhead calibrated
/// beside each HTTP row and serves its servers with eager driver hand-off
/// (`docs/coscheduling.md`), so what is left is a 2-core machine's noise: the same band as
/// the model-against-reality claims.
pub const AGREES: Band = Band { lo: 0.9, hi: 1.3 };

fn show(metric: Metric, figure: f64) -> String {
    match metric {
        Metric::Wall => format!("{:.1} ms", figure * 1e3),
        Metric::Throughput => format!("{figure:.1}/s"),
    }
}

/// Renders `experiment`'s table with one measured entry per row (Markdown-compatible).
pub fn experiment_table(experiment: &Experiment, measured: &[Measured]) -> String {
    let metric = experiment.metric;
    let base = &experiment.rows[experiment.baseline];
    let base_measured = measured[experiment.baseline].figure;
    let base_model = measured[experiment.baseline].model_figure;
    let unit = &experiment.published_unit;
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", experiment.id, experiment.title);
    let _ = writeln!(out, "source: {}", experiment.source);
    let what = match metric {
        Metric::Wall => "wall time",
        Metric::Throughput => "throughput",
    };
    let _ = writeln!(
        out,
        "scale: {}; figures are {what}, ÷ base is ÷ row {:?} ({})",
        experiment.scale, base.id, base.label
    );
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "| scenario | N | published | ÷ base | model | ÷ base | measured | ÷ base | slowdown vs model | waves (model) | ok/sent | shape |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
    );
    let (mut sent, mut ok) = (0, 0);
    for (row, m) in experiment.rows.iter().zip(measured) {
        let slowdown = m.slowdown(metric);
        let failed = m.summary.as_ref().map_or(0, |s| s.failed);
        let shape = match slowdown {
            _ if failed > 0 => "failures".to_string(),
            None => "no model".to_string(),
            Some(s) if AGREES.contains(s) => "agrees".to_string(),
            Some(_) => format!("differs (band {AGREES})"),
        };
        if let Some(summary) = &m.summary {
            sent += summary.sent;
            ok += summary.ok;
        }
        let dash = || "—".to_string();
        let waves = match (&m.summary, &m.predicted) {
            (Some(s), Some(p)) => format!("{} ({})", s.waves, p.waves),
            _ => dash(),
        };
        let ok_sent = m
            .summary
            .as_ref()
            .map_or_else(dash, |s| format!("{}/{}", s.ok, s.sent));
        let _ = writeln!(
            out,
            "| {} | {} | {} {unit} | {:.2} | {} | {} | {} | {:.2} | {} | {waves} | {ok_sent} | {shape} |",
            row.label,
            row.workload.size(),
            row.published,
            row.published / base.published,
            m.model_figure.map_or_else(dash, |f| show(metric, f)),
            match (m.model_figure, base_model) {
                (Some(f), Some(b)) => format!("{:.2}", f / b),
                _ => dash(),
            },
            show(metric, m.figure),
            m.figure / base_measured,
            slowdown.map_or_else(dash, |s| format!("{s:.2}")),
        );
    }
    let _ = writeln!(out);
    if sent > 0 {
        let _ = writeln!(
            out,
            "HTTP requests: sent {sent} = ok {ok} + failed {}",
            sent - ok
        );
    }
    let sums: Vec<u64> = measured.iter().filter_map(|m| m.checksum).collect();
    if let Some(first) = sums.first() {
        let agree = if sums.iter().all(|s| s == first) {
            "all equal"
        } else {
            "DIFFER"
        };
        let _ = writeln!(out, "CPU results: {agree} ({first})");
    }
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
