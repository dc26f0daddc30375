//! An SVG timeline of an experiment: one bar per request from send to completion, one
//! panel per HTTP row, so the waves of a blocking server show as a staircase.
//!
//! Hand-written rather than drawn with plotters (which draws the report's other plots): a
//! bar per request is a Gantt chart, which plotters has no series for, and the SVG is
//! fifty lines of rectangles.

use std::fmt::Write as _;

use crate::experiment::{Experiment, Measured};
use perfshape::load::Run;

const WIDTH: f64 = 900.0;
const LEFT: f64 = 10.0;
const PANEL_BARS: f64 = 160.0;
const TITLE: f64 = 18.0;
const AXIS: f64 = 16.0;

/// How a timeline's panels share time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeAxis {
    /// One axis for every panel, as long as the slowest row: a 28 ms wave and a 318 ms
    /// staircase compare at their true scale.
    #[default]
    Shared,
    /// Each panel spans its own row's wall: every row's detail, at the cost of scale.
    PerPanel,
}

/// The SVG document for `experiment`; rows without per-request records (in-process, CPU)
/// are left out.
pub fn experiment_svg(experiment: &Experiment, measured: &[Measured], axis: TimeAxis) -> String {
    let panels: Vec<(&str, &Run)> = experiment
        .rows
        .iter()
        .zip(measured)
        .filter_map(|(row, m)| m.run.as_ref().map(|run| (row.label.as_str(), run)))
        .collect();
    timeline(&experiment.title, &panels, axis)
}

/// The SVG document of `panels` (a label and its run each) under `title`.
fn timeline(title: &str, panels: &[(&str, &Run)], axis: TimeAxis) -> String {
    let longest = panels
        .iter()
        .map(|(_, run)| run.wall.as_secs_f64())
        .fold(0.0, f64::max);
    let panel_height = TITLE + PANEL_BARS + AXIS + 10.0;
    let height = 46.0 + panel_height * panels.len() as f64;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="18" font-size="14">{} — a bar per request, send to completion, by completion (red: failed){}</text>"#,
        escape(title),
        match axis {
            TimeAxis::Shared => "; one time axis",
            TimeAxis::PerPanel => "; each panel its own time axis",
        }
    );
    let _ = writeln!(
        svg,
        r##"<text x="{LEFT}" y="34" fill="#555">x: time since the row's first send (ms) · y: requests, one bar each, in completion order</text>"##
    );
    for (i, (label, run)) in panels.iter().enumerate() {
        let span = match axis {
            TimeAxis::Shared => longest,
            TimeAxis::PerPanel => run.wall.as_secs_f64(),
        };
        panel(&mut svg, 46.0 + panel_height * i as f64, label, run, span);
    }
    svg.push_str("</svg>\n");
    svg
}

/// One row's bars, on an axis of `span` seconds.
fn panel(svg: &mut String, top: f64, label: &str, run: &Run, span: f64) {
    let span = span.max(1e-6);
    let plot = WIDTH - 2.0 * LEFT;
    let x = |secs: f64| LEFT + plot * secs / span;
    let n = run.records.len().max(1) as f64;
    let bar = (PANEL_BARS / n).min(10.0);
    let _ = writeln!(
        svg,
        r#"<text x="{LEFT}" y="{}">{} ({} requests, {:.1} ms)</text>"#,
        top + 12.0,
        escape(label),
        run.records.len(),
        run.wall.as_secs_f64() * 1e3
    );
    let bars_top = top + TITLE;
    // In completion order, so each wave of a blocking server is one step of the staircase.
    let mut records: Vec<_> = run.records.iter().collect();
    records.sort_by_key(|r| (r.end, r.start));
    for (k, r) in records.into_iter().enumerate() {
        let (start, end) = (r.start.as_secs_f64(), r.end.as_secs_f64());
        let colour = if r.outcome.is_ok() {
            "#2e8b57"
        } else {
            "#c0392b"
        };
        let _ = writeln!(
            svg,
            r#"<rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{colour}"/>"#,
            x(start),
            bars_top + bar * k as f64,
            (x(end) - x(start)).max(0.5),
            (bar * 0.8).max(0.5)
        );
    }
    let axis = bars_top + PANEL_BARS + 4.0;
    let _ = writeln!(
        svg,
        r##"<line x1="{LEFT}" y1="{axis}" x2="{}" y2="{axis}" stroke="#444"/>"##,
        LEFT + plot
    );
    for tick in 0..=4 {
        let t = span * f64::from(tick) / 4.0;
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{:.0} ms</text>"#,
            x(t).clamp(LEFT + 15.0, LEFT + plot - 15.0),
            axis + 12.0,
            t * 1e3
        );
    }
}

/// Text made safe inside an SVG or HTML element.
pub(super) fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use perfshape::load::{FailureKind, RequestRecord};

    /// A request answered 200 after 20 ms, sent at 0.
    fn ok_in_20_ms() -> RequestRecord {
        let mut ok = RequestRecord::failed_at(0, Duration::ZERO, FailureKind::Timeout);
        ok.outcome = perfshape::load::Outcome::Ok { status: 200 };
        ok.end = Duration::from_millis(20);
        ok
    }

    #[test]
    fn one_bar_per_request_and_failures_in_red() {
        let ms = Duration::from_millis;
        let ok = ok_in_20_ms();
        let failed = RequestRecord::failed_at(1, ms(5), FailureKind::Timeout);
        let run = Run::new("GET /x".into(), vec![ok, failed], ms(20));
        let mut svg = String::new();
        panel(&mut svg, 0.0, "a <label> & more", &run, 0.020);
        assert_eq!(svg.matches("<rect").count(), 2);
        assert_eq!(svg.matches("#c0392b").count(), 1, "{svg}");
        assert!(
            svg.contains("a &lt;label&gt; &amp; more (2 requests, 20.0 ms)"),
            "{svg}"
        );
    }

    /// A whole timeline is well-formed XML and names its axes.
    #[test]
    fn a_timeline_is_well_formed_and_names_its_axes() {
        let ms = Duration::from_millis;
        let ok = ok_in_20_ms();
        let run = Run::new("GET /x".into(), vec![ok], ms(20));
        let svg = timeline("a <title>", &[("a", &run), ("b", &run)], TimeAxis::Shared);
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{e}:\n{svg}"));
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .collect();
        assert!(
            texts.iter().any(|t| t.starts_with("x: time since")),
            "{texts:?}"
        );
        assert!(texts.iter().any(|t| t.contains("y: requests")), "{texts:?}");
        assert_eq!(texts.iter().filter(|t| t.ends_with(" ms")).count(), 2 * 5);
    }

    /// On a shared axis a row of 20 ms spans a tenth of the width that a row of 200 ms
    /// does; on its own axis, all of it.
    #[test]
    fn a_shared_axis_keeps_the_true_scale() {
        let ms = Duration::from_millis;
        let ok = ok_in_20_ms();
        let run = Run::new("GET /x".into(), vec![ok], ms(20));
        let width = |span: f64| {
            let mut svg = String::new();
            panel(&mut svg, 0.0, "row", &run, span);
            let rect = svg.split("<rect").nth(1).expect("a bar");
            let w = rect
                .split("width=\"")
                .nth(1)
                .and_then(|w| w.split('"').next());
            w.and_then(|w| w.parse::<f64>().ok()).expect("a width")
        };
        let (own, shared) = (width(0.020), width(0.200));
        assert!((own / shared - 10.0).abs() < 0.1, "{own} vs {shared}");
    }
}
