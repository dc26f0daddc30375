//! The orders service under perfshape's gate: its report handler calls a synchronous
//! ledger client by mistake, and the gate catches it; the two fixes pass.
//!
//! `cargo run --release --example orders` serves each version on one worker, checks the
//! two claims a team would write, and prints the verdicts with their reports. The same
//! claims run in the test suite (`tests/shape/orders.rs`), the blocking version as a
//! negative control that must come out broken.

mod service;

use perfshape::{Checked, PoolSettings, Result, Target};
use service::{Ledger, app};

/// The team's two claims: /report never blocks its worker, and /health keeps answering
/// while /report runs.
fn claims(ledger: Ledger) -> Result<[Checked; 2]> {
    let target = Target::serve(app(ledger), PoolSettings::workers(1)?)?;
    let report = target.endpoint("/report")?;
    let health = target.endpoint("/health")?;
    Ok([
        report.does_not_block_its_worker().check()?,
        health.keeps_answering_during(&report).check()?,
    ])
}

fn main() -> Result {
    for ledger in [Ledger::Blocking, Ledger::Offloaded, Ledger::Async] {
        println!("ledger client: {ledger:?}");
        // Each claim prints its own report on stderr as it is decided (a headline when it
        // holds, everything when it does not); here, one line per claim.
        for checked in claims(ledger)? {
            println!("  {}: {}", checked.report().name, checked.verdict());
        }
    }
    Ok(())
}
