//! The claims of a run as one Markdown table: what a CI job summary shows.

use std::fmt::Write as _;

use super::artifacts::plural;
use super::claims::{ClaimRecord, SUMMARY_COLUMNS};
use perfshape::claim::Verdict;

/// One line per claim — verdict, name, median, band, margin, rounds, noise floor, and measured
/// time against the physical limit where it is known — after a count of each verdict.
/// `claims` keep their order ([`read_claims`](super::read_claims) puts broken and
/// inconclusive first).
pub fn claims_markdown(claims: &[ClaimRecord]) -> String {
    let count = |v: Verdict| claims.iter().filter(|c| c.verdict == v).count();
    let (elapsed, limit) = claims
        .iter()
        .filter_map(|c| c.limit.map(|l| (c.elapsed, l)))
        .fold((0.0, 0.0), |(e, l), (ce, cl)| (e + ce, l + cl));
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### perfshape: {} — {} broken, {} inconclusive, {} hold\n",
        plural(claims.len(), "claim"),
        count(Verdict::Broken),
        count(Verdict::Inconclusive),
        count(Verdict::Holds),
    );
    if limit > 0.0 {
        let _ = writeln!(
            out,
            "Measured for {:.1} s against a physical limit of {:.1} s ({:.2}×) where the limit is known.\n",
            elapsed / 1e3,
            limit / 1e3,
            elapsed / limit
        );
    }
    let _ = writeln!(out, "| {} |", SUMMARY_COLUMNS.join(" | "));
    out.push_str("|---|---|---:|---|---:|---:|---:|---:|\n");
    for claim in claims {
        let mark = match claim.verdict {
            Verdict::Holds => "✅ holds",
            Verdict::Broken => "❌ broken",
            Verdict::Inconclusive => "⚠️ inconclusive",
        };
        let _ = writeln!(
            out,
            "| {mark} | {} | {} |",
            cell(&claim.name),
            claim.summary_cells().join(" | ")
        );
    }
    out
}

/// Text made safe for a Markdown table cell.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
