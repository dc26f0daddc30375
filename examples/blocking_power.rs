//! The power of `does_not_block_its_worker()` at its default settings: how often it
//! catches a handler that holds its worker for a share of each 20 ms request, and how
//! often it lets the same share through when the blocking part is offloaded.
//!
//! `cargo run --release --example blocking_power -- [RUNS]` (default 20) serves one
//! router on one worker, whose `/held?block_us=B&offload=0|1` handler blocks B µs
//! (`std::thread::sleep`, or the same sleep under `spawn_blocking`) and then awaits the
//! rest of 20 ms, and checks the ready-made claim RUNS times per row. It prints the
//! Markdown table `docs/blocking-power.md` holds: verdicts per row, the median estimated
//! share and the median share the handler's timed polls found.

use std::time::Duration;

use axum::Router;
use axum::extract::Query;
use axum::routing::get;
use perfshape::claim::GateMode;
use perfshape::{PoolSettings, Result, Target, Verdict};

/// One request's time, blocked and awaited together.
const REQUEST: Duration = Duration::from_millis(20);

#[derive(serde::Deserialize)]
struct Held {
    block_us: u64,
    offload: u8,
}

async fn held(Query(held): Query<Held>) -> &'static str {
    let block = Duration::from_micros(held.block_us);
    if held.offload == 1 {
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(block)).await;
    } else if !block.is_zero() {
        std::thread::sleep(block);
    }
    tokio::time::sleep(REQUEST.saturating_sub(block)).await;
    "done"
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> Result {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("RUNS is a whole number"))
        .unwrap_or(20);
    let target = Target::serve(
        Router::new().route("/held", get(held)),
        PoolSettings::workers(1)?,
    )?;
    println!(
        "| held share | blocking part | broken | holds | inconclusive | median estimate | median polls |"
    );
    println!("|---|---|---|---|---|---|---|");
    for offload in [0, 1] {
        for percent in [0.0, 2.0, 5.0, 10.0, 100.0] {
            if offload == 1 && percent == 0.0 {
                continue;
            }
            let block_us = (REQUEST.as_micros() as f64 * percent / 100.0) as u64;
            let endpoint = target.get(format!("/held?block_us={block_us}&offload={offload}"));
            let (mut broken, mut holds, mut inconclusive) = (0, 0, 0);
            let (mut estimates, mut polls) = (Vec::new(), Vec::new());
            for _ in 0..runs {
                let checked = endpoint
                    .does_not_block_its_worker()
                    .gate_mode(GateMode::Advisory)
                    .artifacts_in(std::env::temp_dir().join("perfshape-blocking-power"))
                    .check()?;
                match checked.verdict() {
                    Verdict::Broken => broken += 1,
                    Verdict::Holds => holds += 1,
                    Verdict::Inconclusive => inconclusive += 1,
                }
                estimates.push(checked.report().median);
                if let Some(share) = checked.report().observed.get("polled share") {
                    polls.push(*share);
                }
            }
            let how = if offload == 1 {
                "spawn_blocking"
            } else {
                "on the worker"
            };
            let polled = if polls.is_empty() {
                "—".to_string()
            } else {
                format!("{:.1} %", 100.0 * median(polls))
            };
            println!(
                "| {percent:.0} % | {how} | {broken} | {holds} | {inconclusive} | {:.1} % | {polled} |",
                100.0 * median(estimates)
            );
        }
    }
    Ok(())
}
