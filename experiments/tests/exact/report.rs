//! `perfshape report`'s pieces on claims decided from synthetic figures (no clock): the
//! Markdown summary and the HTML page hold every claim, broken first; a broken claim's
//! section shows its rounds and band; every SVG is well-formed XML and names its axes.

use perfshape_experiments::Result;
use std::path::Path;
use std::time::Duration;

use perfshape::probe::{ProbeReport, ProbeStep};
use perfshape::{Checked, Claim, Verdict, claim::Measure};
use perfshape_experiments::report::{
    Artifacts, claims_markdown, html_report, margin_plot, probe_plot, read_artifacts, read_claims,
    strip_plot,
};

/// A claim on a side that returns `values` in turn (cycling), decided with no clock.
fn decided(name: &str, values: &'static [f64], lo: f64, hi: f64) -> Result<Checked> {
    let mut i = 0;
    Ok(Claim::bound(
        name,
        Measure::value("figure", move || {
            i += 1;
            Ok(values[(i - 1) % values.len()])
        })
        .expecting(perfshape::claim::Expected::new(1.0, "one")),
    )
    .within(lo, hi)
    .warmup(0)
    .artifacts_in(crate::scratch())
    .check()?)
}

/// Writes each claim's report as its JSON artifact in `dir`, as a run does.
fn write_reports(dir: &Path, claims: &[&Checked]) {
    for (i, checked) in claims.iter().enumerate() {
        let json = serde_json::to_string(checked.report()).expect("a report serialises");
        std::fs::write(dir.join(format!("claim-{i}.json")), json).expect("written");
    }
}

/// Three claims, one of each verdict, written to a fresh folder and read back.
fn a_run() -> Result<(tempfile::TempDir, Artifacts)> {
    let holds = decided("a claim that holds", &[1.0, 1.01, 0.99], 0.9, 1.1)?;
    let broken = decided("a claim that broke", &[2.0, 2.1, 1.9], 0.9, 1.1)?;
    let straddles = decided("a claim that cannot tell", &[0.5, 1.0, 1.5], 0.9, 1.1)?;
    assert_eq!(holds.verdict(), Verdict::Holds);
    assert_eq!(broken.verdict(), Verdict::Broken);
    assert_eq!(straddles.verdict(), Verdict::Inconclusive);
    let dir = tempfile::tempdir().expect("a temporary folder");
    write_reports(dir.path(), &[&holds, &broken, &straddles]);
    // Not a claim: an experiment's raw figures sit beside the claims and are left out.
    std::fs::write(
        dir.path().join("seed-000.json"),
        r#"{"experiment":"seed-000"}"#,
    )
    .expect("written");
    let artifacts = read_artifacts(dir.path())?;
    Ok((dir, artifacts))
}

/// Parses `svg` as XML and returns every text it shows.
fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}:\n{svg}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .map(|n| n.text().unwrap_or_default().trim().to_string())
        .collect()
}

#[test]
fn claims_are_read_back_broken_first() -> Result {
    let (_dir, artifacts) = a_run()?;
    let names: Vec<&str> = artifacts.claims.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "a claim that broke",
            "a claim that cannot tell",
            "a claim that holds"
        ]
    );
    let broken = &artifacts.claims[0];
    assert_eq!(broken.rounds.len(), 3);
    assert_eq!(broken.band.band().to_string(), "[0.9, 1.1]");
    assert_eq!(broken.median, Some(2.0));
    Ok(())
}

#[test]
fn within_a_verdict_the_nearest_edge_comes_first() -> Result {
    let far = decided("far inside", &[1.0, 1.01, 0.99], 0.5, 2.0)?;
    let near = decided("near the edge", &[1.0, 1.01, 0.99], 0.9, 1.1)?;
    let just = decided("just inside", &[1.05, 1.06, 1.04], 0.9, 1.1)?;
    let dir = tempfile::tempdir().expect("a temporary folder");
    write_reports(dir.path(), &[&far, &near, &just]);
    let claims = read_claims(dir.path())?;
    let names: Vec<&str> = claims.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["just inside", "near the edge", "far inside"]);
    let floors: Vec<f64> = claims
        .iter()
        .map(|c| c.margin().expect("a margin").floors)
        .collect();
    assert!(floors.windows(2).all(|w| w[0] <= w[1]), "{floors:?}");
    Ok(())
}

#[test]
fn the_margin_plot_has_a_row_per_claim_on_one_axis() -> Result {
    let (_dir, artifacts) = a_run()?;
    let svg = margin_plot(&artifacts.claims)?;
    let texts = svg_texts(&svg);
    for claim in &artifacts.claims {
        assert!(
            texts.contains(&claim.name),
            "{} missing: {texts:?}",
            claim.name
        );
    }
    let doc = roxmltree::Document::parse(&svg).expect("XML");
    let dots = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(dots, artifacts.claims.len(), "one median per claim");
    Ok(())
}

#[test]
fn the_markdown_summary_holds_every_claim_with_its_figures() -> Result {
    let (_dir, artifacts) = a_run()?;
    let md = claims_markdown(&artifacts.claims);
    assert!(
        md.contains("3 claims — 1 broken, 1 inconclusive, 1 hold"),
        "{md}"
    );
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(rows.len(), 4, "a header and one row per claim:\n{md}");
    assert!(rows[1].contains("broken") && rows[1].contains("a claim that broke"));
    assert!(
        rows[1].contains("| 2 | [0.9, 1.1] | 82% outside (8.5 floors) | 3 |"),
        "{}",
        rows[1]
    );
    assert!(rows[3].contains("holds") && rows[3].contains("a claim that holds"));
    Ok(())
}

#[test]
fn the_html_page_holds_every_claim_and_a_broken_claims_rounds() -> Result {
    let (_dir, artifacts) = a_run()?;
    let html = html_report(&artifacts)?;
    for claim in &artifacts.claims {
        assert!(html.contains(&claim.name), "{} missing", claim.name);
    }
    let section = html
        .split("<section")
        .skip(1)
        .find(|s| s.contains("a claim that broke"))
        .expect("the broken claim's section");
    assert!(section.contains("class=\"broken\""), "{section}");
    assert!(section.contains("band [0.9, 1.1]"), "{section}");
    for value in ["2.0000", "2.1000", "1.9000"] {
        assert!(section.contains(value), "round {value} missing: {section}");
    }
    assert_eq!(section.matches("OUTSIDE").count(), 3);
    assert!(section.contains("<svg"), "its strip plot");
    // Self-contained: nothing fetched.
    for fetch in ["<script", "<link", "src=", "@import", "url("] {
        assert!(!html.contains(fetch), "the page fetches something: {fetch}");
    }
    Ok(())
}

#[test]
fn a_strip_plot_is_well_formed_and_names_its_axes() -> Result {
    let (_dir, artifacts) = a_run()?;
    for claim in &artifacts.claims {
        let texts = svg_texts(&strip_plot(claim)?);
        assert!(texts.iter().any(|t| t == "round"), "{texts:?}");
        assert!(texts.iter().any(|t| t.starts_with("bound (")), "{texts:?}");
    }
    Ok(())
}

#[test]
fn a_probe_plot_is_well_formed_names_its_axes_and_marks_the_knee() -> Result {
    let step = |concurrency, throughput, ms| ProbeStep {
        concurrency,
        sent: 10,
        ok: 10,
        throughput,
        mean_latency: Duration::from_millis(ms),
        pool_estimate: concurrency as f64 * 21.0 / ms as f64,
        relative_error: 0.01,
        usage: Default::default(),
        service_cpu: None,
        cut_short: None,
    };
    let report = ProbeReport {
        url: "http://127.0.0.1:8080/blocking?ms=20".into(),
        steps: vec![
            step(1, 48.0, 21),
            step(2, 96.0, 21),
            step(4, 97.0, 41),
            step(8, 96.0, 82),
        ],
        stops_growing_at: Some(2),
        queues_from: Some(4),
        pool_estimate: 2.0,
        relative_error: 0.01,
        estimated_at: 8,
        queued: true,
        limit: perfshape::probe::Limit::Pool,
        plateau: None,
    };
    let texts = svg_texts(&probe_plot(&report)?);
    for axis in ["concurrency", "throughput", "mean latency"] {
        assert!(texts.iter().any(|t| t.contains(axis)), "{axis}: {texts:?}");
    }
    assert!(
        texts
            .iter()
            .any(|t| t.contains("stops growing: a pool of ≈2.0")),
        "{texts:?}"
    );
    Ok(())
}

#[test]
fn a_claim_report_that_cannot_be_read_is_named() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let bad = dir.path().join("broken-claim.json");
    std::fs::write(&bad, r#"{"verdict":"holds","relation":"a ÷ b","name":3}"#).expect("written");
    let error = read_claims(dir.path()).expect_err("a malformed report");
    assert!(error.to_string().contains("broken-claim.json"), "{error}");
}
