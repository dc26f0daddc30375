//! What the build decides: the blocking claims on handlers whose work is a long stretch of
//! CPU or a short one, in the build they run in — unoptimised (a team's bare test profile),
//! with every dependency optimised (the README's profile line), or in release. A claim must
//! never hold a 10 ms stretch in one poll in any build, and never break a correct handler in
//! any; where the build cannot tell the two apart it is inconclusive and names the line.
//!
//! `cargo run --example build_power -- [RUNS]` checks each row RUNS times (default 20) on a
//! fresh service on one worker and prints a Markdown table; `scripts/build-power.sh` runs it
//! in the three builds, quiet and with one core busy, into docs/production-distance.md.

#[path = "../tests/apps/handlers.rs"]
#[allow(dead_code, unreachable_pub)]
mod handlers;
#[path = "../tests/apps/kv.rs"]
#[allow(dead_code, unreachable_pub)]
mod kv;
#[path = "../tests/apps/todos.rs"]
#[allow(dead_code, unreachable_pub)]
mod todos;

use std::io::Write;

use axum::Router;
use perfshape::claim::GateMode;
use perfshape::{Checked, Claim, Endpoint, PoolSettings, Result, Target, Verdict};
use serde_json::json;

/// One row: what the handler does, what every build should say, its service, and its claim.
struct Row {
    what: &'static str,
    expected: &'static str,
    app: fn() -> Router,
    claim: fn(&Target) -> Claim<'static>,
}

fn endpoint_claim(endpoint: Endpoint) -> Claim<'static> {
    endpoint.does_not_block_its_worker()
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            what: "hashing, 10 ms optimised, in one poll",
            expected: "broken; inconclusive naming the line where unoptimised",
            app: handlers::app,
            claim: |t| endpoint_claim(t.get("/hash?kib=8800")),
        },
        Row {
            what: "a 50 µs request during that hash, 1 worker",
            expected: "broken in every build",
            app: handlers::app,
            claim: |t| {
                t.get("/cpu?us=50")
                    .keeps_answering_during(&t.get("/hash?kib=8800"))
            },
        },
        Row {
            what: "kv: GET /{key}, 64 KiB gzip",
            expected: "holds; never broken",
            app: || kv::app(100, 64 * 1024),
            claim: |t| endpoint_claim(t.get("/key-3").header("accept-encoding", "gzip")),
        },
        Row {
            what: "todos: POST /todos (JSON in and out)",
            expected: "holds",
            app: todos::app,
            claim: |t| endpoint_claim(t.post("/todos").json(&json!({ "text": "buy tea" }))),
        },
        Row {
            what: "todos: GET /todos (100 todos)",
            expected: "holds",
            app: todos::app,
            claim: |t| endpoint_claim(t.get("/todos")),
        },
        Row {
            what: "/todos?limit=10 during POST /todos",
            expected: "holds",
            app: todos::app,
            claim: |t| {
                t.get("/todos?limit=10")
                    .keeps_answering_during(&t.post("/todos").json(&json!({ "text": "tea" })))
            },
        },
    ]
}

/// The median of `values`, or NaN when there are none.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> Result {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("RUNS is a whole number"))
        .unwrap_or(20);
    println!(
        "| handler | expected | broken | holds | inconclusive | of them naming the profile line | median longest poll |"
    );
    println!("|---|---|---|---|---|---|---|");
    let dir = std::env::temp_dir().join("perfshape-build-power");
    for row in rows() {
        let (mut broken, mut holds, mut inconclusive, mut named) = (0, 0, 0, 0);
        let mut polls = Vec::new();
        for _ in 0..runs {
            let target = Target::serve(PoolSettings::workers(1)?, (row.app)())?;
            let checked: Checked = (row.claim)(&target)
                .gate_mode(GateMode::Advisory)
                .artifacts_in(&dir)
                .check()?;
            let report = checked.report();
            match checked.verdict() {
                Verdict::Broken => broken += 1,
                Verdict::Holds => holds += 1,
                Verdict::Inconclusive => {
                    inconclusive += 1;
                    if format!("{report:#}").contains("opt-level = 1") {
                        named += 1;
                    }
                }
            }
            if let Some(p) = report.observed().get("longest poll cpu ms") {
                polls.push(*p);
            }
        }
        let poll = median(polls);
        println!(
            "| {} | {} | {broken} | {holds} | {inconclusive} | {named} | {} |",
            row.what,
            row.expected,
            if poll.is_nan() {
                "—".to_string()
            } else {
                format!("{poll:.2} ms")
            }
        );
        std::io::stdout().flush().ok();
    }
    Ok(())
}
