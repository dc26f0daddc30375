//! The table of docs/probe.md: every kind of pool at sizes 3, 5, 6, 10, 12 and 40 (the
//! Python service's requests 100 ms, the others' 20 ms), the
//! claim `about(k)` run `PERFSHAPE_POOL_RUNS` times (default 10) and its controls `about(k/2)`
//! and `about(2k)` `PERFSHAPE_POOL_CONTROL_RUNS` times (default 3), each run's verdict,
//! rounds and sweep written as one JSON line to `PERFSHAPE_POOL_TABLE` (default
//! target/perfshape/pools-table.jsonl). `python3 scripts/pools-table.py` runs it quiet and
//! with one core busy and prints the table.

use perfshape_experiments::Result;
use std::io::Write as _;

use crate::common::pools::{Kind, PoolUnderTest};
use crate::found::about;

/// The sizes of the table: on, near and between the doublings, and anyio's 40.
const SIZES: [usize; 6] = [3, 5, 6, 10, 12, 40];

fn runs(variable: &str, default: usize) -> usize {
    std::env::var(variable)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "the table's runs take minutes: scripts/pools-table.py runs them"]
fn the_table_of_pools() -> Result {
    let (claims, controls) = (
        runs("PERFSHAPE_POOL_RUNS", 10),
        runs("PERFSHAPE_POOL_CONTROL_RUNS", 3),
    );
    let path = std::env::var("PERFSHAPE_POOL_TABLE").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../target/perfshape/pools-table.jsonl"
        )
        .to_string()
    });
    if let Some(dir) = std::path::Path::new(&path).parent() {
        std::fs::create_dir_all(dir).expect("the table's folder");
    }
    let mut out = std::fs::File::create(&path).expect("the table's file");
    // `PERFSHAPE_POOL_KINDS=python` (comma-separated) runs those kinds only.
    let kinds = std::env::var("PERFSHAPE_POOL_KINDS").unwrap_or_default();
    let chosen = |kind: Kind| kinds.is_empty() || kinds.split(',').any(|k| k == kind.name());
    for kind in Kind::ALL.into_iter().filter(|&kind| chosen(kind)) {
        for k in SIZES {
            let pool = PoolUnderTest::start(kind, k)?;
            let plan = std::iter::repeat_n(1.0, claims)
                .chain(std::iter::repeat_n(0.5, controls))
                .chain(std::iter::repeat_n(2.0, controls));
            for factor in plan {
                let checked = about(&pool, k, factor * k as f64).check()?;
                let report = checked.report();
                let line = serde_json::json!({
                    "kind": kind.words(),
                    "k": k,
                    "claimed": factor * k as f64,
                    "verdict": format!("{:?}", checked.verdict()).to_lowercase(),
                    "estimates": report.rounds().iter().map(|r| r.value * factor * k as f64).collect::<Vec<_>>(),
                    "explanation": report.explanation(),
                    "reason": report.reason(),
                    "elapsed_ms": report.elapsed().as_secs_f64() * 1e3,
                });
                writeln!(out, "{line}").expect("a line of the table");
            }
        }
    }
    Ok(())
}
