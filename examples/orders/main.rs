//! The orders service under perfshape's gate: its report handler and its `POST /orders`
//! call a synchronous ledger client by mistake — for 20 ms, and for a 2 ms credit check —
//! and the gate catches both; the two fixes pass.
//!
//! `cargo run --release --example orders` serves each version on one worker, checks the
//! three claims a team would write, and prints the verdicts with their reports. The same
//! claims run in the test suite (`tests/shape/orders.rs`), the blocking version as a
//! negative control that must come out broken.

mod service;

use perfshape::{Checked, PoolSettings, Result, Target};
use service::{Ledger, TOKEN, app};

/// The team's three claims: /report never blocks its worker, /health keeps answering
/// while /report runs, and a new order never blocks its worker.
fn claims(ledger: Ledger) -> Result<[Checked; 3]> {
    let target = Target::serve(PoolSettings::workers(1)?, app(ledger))?;
    let report = target.get("/report");
    let health = target.get("/health");
    let order = serde_json::json!({ "customer": "ada", "cents": 1250 });
    let new_order = target.post("/orders").json(&order).bearer_auth(TOKEN);
    Ok([
        report.does_not_block_its_worker().check()?,
        health.keeps_answering_during(&report).check()?,
        new_order.does_not_block_its_worker().check()?,
    ])
}

fn main() -> Result {
    for ledger in [Ledger::Blocking, Ledger::Offloaded, Ledger::Async] {
        println!("ledger client: {ledger:?}");
        // Each claim prints its own report on stderr as it is decided (a headline when it
        // holds, everything when it does not); here, one line per claim.
        for checked in claims(ledger)? {
            println!("  {}: {}", checked.report().name(), checked.verdict());
        }
    }
    Ok(())
}
