//! The orders example (`examples/orders/`) under the gate, as a team would write it: the
//! report handler must not block its worker, and /health must keep answering while the
//! report runs. Both fixes hold; the blocking ledger client is the negative control, in
//! `tests/controls/`.

use perfshape::{Result, assert_shape};

use crate::common::orders::{Ledger, orders};

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
