//! One self-contained HTML page for a run: every claim with its rounds against its band,
//! the experiments' tables and timelines, the probes' curves. No script, no stylesheet or
//! font fetched: the plots are inline SVG, so the file reads the same from a CI artifact
//! on a machine with no network.

use std::fmt::Write as _;

use pulldown_cmark::{Options, Parser, html::push_html};

use super::artifacts::Artifacts;
use super::claims::{ClaimRecord, SUMMARY_COLUMNS};
use super::margin_plot::margin_plot;
use super::probe_plot::probe_plot;
use super::strip::strip_plot;
use super::svg::escape;
use crate::error::Result;
use perfshape::__support::short;
use perfshape::claim::Verdict;

const STYLE: &str = "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;font-size:13px}\
th{background:#f3f3f3}td.num{text-align:right}section{border-left:6px solid #2e8b57;padding:.2em 1em;margin:1.5em 0}\
section.broken{border-color:#c0392b}section.inconclusive{border-color:#e6a700}\
.verdict{font-weight:bold}.broken .verdict{color:#c0392b}.inconclusive .verdict{color:#b07d00}\
.holds .verdict,td.holds{color:#2e8b57}td.broken{color:#c0392b;font-weight:bold}td.inconclusive{color:#b07d00;font-weight:bold}pre{white-space:pre-wrap;font-size:12px}svg{max-width:100%;height:auto}";

/// The HTML page for `artifacts`.
pub fn html_report(artifacts: &Artifacts) -> Result<String> {
    let claims = &artifacts.claims;
    let count = |v: Verdict| claims.iter().filter(|c| c.verdict == v).count();
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>perfshape report</title><style>{STYLE}</style></head><body>\n\
         <h1>perfshape report</h1>\n<p>From <code>{}</code>: {} — {} broken, {} \
         inconclusive, {} hold.</p>\n",
        escape(&artifacts.dir.display().to_string()),
        artifacts.counts(),
        count(Verdict::Broken),
        count(Verdict::Inconclusive),
        count(Verdict::Holds),
    );
    if !claims.is_empty() {
        out.push_str("<h2>Claims</h2>\n<table><tr>");
        for column in SUMMARY_COLUMNS {
            let _ = write!(out, "<th>{column}</th>");
        }
        out.push_str("</tr>\n");
        for (i, claim) in claims.iter().enumerate() {
            let _ = write!(
                out,
                "<tr><td class=\"{v}\">{v}</td><td><a href=\"#claim-{i}\">{}</a></td>",
                escape(&claim.name),
                v = claim.verdict,
            );
            for (k, figure) in claim.summary_cells().iter().enumerate() {
                // The band is text; the others are figures, right-aligned.
                let class = if k == 1 { "" } else { " class=\"num\"" };
                let _ = write!(out, "<td{class}>{}</td>", escape(figure));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</table>\n");
        out.push_str(
            "<h3>Margins</h3>\n<p>Each claim's median (dot), its confidence interval (line) \
             and its band (shaded), in the table's order: the nearest edges first.</p>\n",
        );
        out.push_str(svg_body(&margin_plot(claims)?));
        for (i, claim) in claims.iter().enumerate() {
            claim_section(&mut out, i, claim)?;
        }
    }
    if !artifacts.experiments.is_empty() {
        out.push_str("<h2>Experiments</h2>\n");
        for experiment in &artifacts.experiments {
            let _ = writeln!(out, "<h3 id=\"{0}\">{0}</h3>", escape(&experiment.id));
            markdown_html(&mut out, &experiment.table);
            if let Some(svg) = &experiment.timeline {
                out.push_str(svg_body(svg));
            }
        }
    }
    if !artifacts.probes.is_empty() {
        out.push_str("<h2>Probes</h2>\n");
        for probe in &artifacts.probes {
            let _ = writeln!(out, "<h3>{}</h3>", escape(&probe.url));
            out.push_str(svg_body(&probe_plot(probe)?));
            markdown_html(&mut out, &probe.to_string());
        }
    }
    out.push_str("</body></html>\n");
    Ok(out)
}

/// One claim: verdict and reason, what it means, the strip plot, every round, settings.
fn claim_section(out: &mut String, i: usize, claim: &ClaimRecord) -> Result<()> {
    let _ = writeln!(
        out,
        "<section id=\"claim-{i}\" class=\"{v}\"><h3><span class=\"verdict\">{v}</span> — {}</h3>\n<p>{}</p>",
        escape(&claim.name),
        escape(&claim.reason),
        v = claim.verdict,
    );
    for line in &claim.explanation {
        let _ = writeln!(out, "<p>{}</p>", escape(line));
    }
    let _ = writeln!(
        out,
        "<p>{} <b>{}</b>; band {}{}; median {}; margin {}; noise floor {}; measured for {:.2} s{}.</p>",
        escape(&claim.kind),
        escape(&claim.relation),
        escape(&claim.band.band().to_string()),
        claim
            .ideal
            .map(|i| format!(" (ideal {})", short(i)))
            .unwrap_or_default(),
        claim.median.map_or("—".into(), short),
        claim.margin().map_or("—".into(), |m| m.to_string()),
        claim
            .noise_floor
            .map_or("—".into(), |n| format!("{:.1}%", 100.0 * n)),
        claim.elapsed / 1e3,
        claim
            .limit
            .map(|l| format!(" against a physical limit of {:.2} s", l / 1e3))
            .unwrap_or_default(),
    );
    if !claim.rounds.is_empty() {
        out.push_str(svg_body(&strip_plot(claim)?));
        out.push_str("<table><tr><th>round</th>");
        for (label, unit) in &claim.sides {
            let _ = write!(out, "<th>{} ({})</th>", escape(label), escape(unit));
        }
        out.push_str("<th>figure</th><th>in the band</th></tr>\n");
        for (k, round) in claim.rounds.iter().enumerate() {
            let _ = write!(out, "<tr><td class=\"num\">{}</td>", k + 1);
            for figure in &round.figures {
                let _ = write!(
                    out,
                    "<td class=\"num\">{}</td>",
                    figure.map_or("—".into(), |f| format!("{f:.6}"))
                );
            }
            let _ = writeln!(
                out,
                "<td class=\"num\">{}</td><td>{}</td></tr>",
                round.value.map_or("—".into(), |v| format!("{v:.4}")),
                if round.inside { "inside" } else { "OUTSIDE" }
            );
        }
        out.push_str("</table>\n");
    }
    if !claim.context.is_empty() || !claim.evidence.is_empty() {
        out.push_str("<details><summary>settings and evidence</summary><ul>");
        for (key, value) in &claim.context {
            let _ = write!(out, "<li>{}: {}</li>", escape(key), escape(value));
        }
        for line in &claim.evidence {
            let _ = write!(out, "<li>{}</li>", escape(line));
        }
        out.push_str("</ul></details>\n");
    }
    out.push_str("</section>\n");
    Ok(())
}

/// Renders the CLI's Markdown (tables and one fact per line) as HTML. The CLI's lines are
/// meant one per line, as the terminal shows them, so each plain line becomes its own
/// paragraph: Markdown would join them, and a line right after a table would be read as
/// one more row of it.
fn markdown_html(out: &mut String, md: &str) {
    let mut blocks = String::new();
    for line in md.lines() {
        let in_table = line.trim_start().starts_with('|');
        if !in_table && blocks.ends_with("|\n") {
            blocks.push('\n');
        }
        blocks.push_str(line);
        blocks.push_str(if in_table { "\n" } else { "\n\n" });
    }
    push_html(out, Parser::new_ext(&blocks, Options::ENABLE_TABLES));
}

/// An SVG document without its XML declaration, for inlining in HTML.
fn svg_body(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(at) => &svg[at..],
        None => svg,
    }
}

#[cfg(test)]
mod tests {
    use super::markdown_html;

    #[test]
    fn each_line_is_a_paragraph_and_a_table_ends_before_the_next_line() {
        let mut html = String::new();
        markdown_html(
            &mut html,
            "title\nsource\n\n| a | b |\n|---|---|\n| 1 | 2 |\nverdict line\n",
        );
        assert!(html.contains("<p>title</p>\n<p>source</p>"), "{html}");
        assert_eq!(
            html.matches("<tr>").count(),
            2,
            "a header and one row: {html}"
        );
        assert!(html.contains("</table>\n<p>verdict line</p>"), "{html}");
    }
}
