//! The orders example (`examples/orders/`) under the gate, as a team would write it: the
//! report handler must not block its worker, and /health must keep answering while the
//! report runs. Its fixes hold; its blocking ledger client is the negative control, and
//! must come out broken with a report that says why.

#[path = "../../examples/orders/service.rs"]
#[allow(dead_code)]
mod service;

use perfshape::{PoolSettings, Result, Target, Verdict, assert_shape};
use service::{Ledger, app};

fn orders(ledger: Ledger) -> Result<Target> {
    Target::serve(app(ledger), PoolSettings::workers(1)?)
}

#[test]
fn the_report_does_not_block_its_worker() -> Result {
    for ledger in [Ledger::Async, Ledger::Offloaded] {
        let target = orders(ledger)?;
        let checked = target
            .endpoint("/report")?
            .does_not_block_its_worker()
            .check()?;
        assert_shape!(
            format!("the_report_does_not_block_its_worker__{ledger:?}"),
            checked
        );
    }
    Ok(())
}

#[test]
fn health_keeps_answering_while_the_report_runs() -> Result {
    let target = orders(Ledger::Async)?;
    let report = target.endpoint("/report")?;
    let checked = target
        .endpoint("/health")?
        .keeps_answering_during(&report)
        .check()?;
    assert_shape!(checked);
    Ok(())
}

/// The negative control: with the synchronous ledger client called on the worker, both
/// claims break, and the reports say the handler holds its worker and /health waited.
#[test]
fn a_blocking_ledger_client_is_caught() -> Result {
    let target = orders(Ledger::Blocking)?;
    let report = target.endpoint("/report")?;
    let blocks = report.does_not_block_its_worker().check()?;
    assert_eq!(blocks.verdict(), Verdict::Broken, "{}", blocks.report());
    let said = blocks.report().to_string();
    assert!(said.contains("the handler holds its worker"), "{said}");
    assert!(said.contains("runtime over the median"), "{said}");
    let observed = blocks.summary().observed.unwrap_or_default();
    assert!(observed.contains("holds its worker"), "{observed}");

    let starved = target
        .endpoint("/health")?
        .keeps_answering_during(&report)
        .check()?;
    assert_eq!(starved.verdict(), Verdict::Broken, "{}", starved.report());
    let said = starved.report().to_string();
    assert!(said.contains("every worker was held"), "{said}");
    Ok(())
}
