//! The seed-style table: published, modelled and measured figures side by side, each
//! normalised to the experiment's baseline row, and whether the measured shape agrees with
//! the model.

use std::fmt::Write as _;

use crate::experiment::{Experiment, Measured, Metric};
use perfshape::claim::Band;

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
        let (row_sent, row_ok) = m.requests().unwrap_or((0, 0));
        let failed = row_sent - row_ok;
        let shape = match slowdown {
            _ if failed > 0 => "failures".to_string(),
            None => "no model".to_string(),
            Some(s) if AGREES.contains(s) => "agrees".to_string(),
            Some(_) => format!("differs (band {AGREES})"),
        };
        sent += row_sent;
        ok += row_ok;
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
    for (row, m) in experiment.rows.iter().zip(measured) {
        if let Some(rounds) = &m.rounds {
            let (lo, hi) = rounds.range();
            let _ = writeln!(
                out,
                "note {}: measured CPU-bound — its {} requests' own handling ({:.1} ms) outlasts \
                 the {:.1} ms the model gives the work, and one such run is as noisy as the \
                 machine's CPU: the median of {} rounds, each after its own calibration \
                 (slowdowns {lo:.2}–{hi:.2}; sent {} = ok {} + failed {})",
                row.id,
                row.workload.size(),
                rounds.stack.as_secs_f64() * 1e3,
                rounds.work.as_secs_f64() * 1e3,
                rounds.slowdowns.len(),
                rounds.sent,
                rounds.ok,
                rounds.sent - rounds.ok,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use super::*;
    use crate::experiment::Rounds;

    const FIXTURE: &str = r#"
[experiment]
id = "aio"
title = "a CPU-bound fan-out"
source = "a test"
scale = "none"
published_unit = "QPS"
metric = "throughput"
baseline = "http-aio"

[[scenario]]
id = "http-aio"
label = "HTTP AIO, N = 1000, 10 ms"
server = "async"
client = "fan-out"
workers = 8
n = 1000
work_ms = 10
published = 2043
"#;

    fn measured(rounds: Option<Rounds>) -> Measured {
        Measured {
            wall: Duration::from_millis(50),
            figure: 20_000.0,
            run: None,
            summary: None,
            predicted: None,
            model_figure: Some(21_000.0),
            model: None,
            overhead: Duration::from_micros(40),
            checksum: None,
            rounds,
        }
    }

    #[test]
    fn a_row_measured_in_rounds_says_so_and_counts_every_rounds_requests() {
        let experiment = Experiment::parse(Path::new("aio.toml"), FIXTURE).unwrap();
        let rounds = Rounds {
            slowdowns: vec![1.05, 0.82, 1.41],
            stack: Duration::from_millis(40),
            work: Duration::from_millis(10),
            sent: 3000,
            ok: 2999,
        };
        let table = experiment_table(&experiment, &[measured(Some(rounds))]);
        assert!(
            table.contains(
                "note http-aio: measured CPU-bound — its 1000 requests' own handling (40.0 ms) \
                 outlasts the 10.0 ms the model gives the work"
            ),
            "{table}"
        );
        assert!(
            table.contains("the median of 3 rounds, each after its own calibration (slowdowns 0.82–1.41; sent 3000 = ok 2999 + failed 1)"),
            "{table}"
        );
        assert!(
            table.contains("HTTP requests: sent 3000 = ok 2999 + failed 1"),
            "{table}"
        );
        assert!(table.contains("| failures |"), "{table}");
    }

    #[test]
    fn a_row_measured_once_has_no_rounds_note() {
        let experiment = Experiment::parse(Path::new("aio.toml"), FIXTURE).unwrap();
        let table = experiment_table(&experiment, &[measured(None)]);
        assert!(!table.contains("rounds"), "{table}");
        assert!(table.contains("| agrees |"), "{table}");
    }
}
