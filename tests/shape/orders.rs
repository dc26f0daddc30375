//! The orders example (`examples/orders/`) under the gate, as a team would write it: the
//! report handler must not block its worker, /health must keep answering while the report
//! runs, and a new order — `POST /orders` with a JSON body and a bearer token, whose
//! handler waits 2 ms for the ledger's credit check — must not block its worker either.
//! Both fixes hold; the blocking ledger client is the negative control, in
//! `tests/controls/`.
//!
//! The tests are written in each way a team writes them: a plain `#[test]`, and
//! `#[tokio::test]` in both flavours (`claim.await` on the current-thread runtime,
//! `check()` on the multi-thread one).

use perfshape::{Result, assert_shape};
use serde_json::json;

use crate::common::orders::{Ledger, TOKEN, orders};

#[test]
fn the_report_does_not_block_its_worker() -> Result {
    for ledger in [Ledger::Async, Ledger::Offloaded] {
        let target = orders(ledger)?;
        let checked = target
            .checked_get("/report")?
            .does_not_block_its_worker()
            .check()?;
        assert_shape!(
            format!("the_report_does_not_block_its_worker__{ledger:?}"),
            checked
        );
    }
    Ok(())
}

#[tokio::test]
async fn a_new_order_does_not_block_its_worker() -> Result {
    for ledger in [Ledger::Async, Ledger::Offloaded] {
        let target = orders(ledger)?;
        let checked = target
            .post("/orders")
            .json(&json!({ "customer": "ada", "cents": 1250 }))
            .bearer_auth(TOKEN)
            .does_not_block_its_worker()
            .await?;
        assert_shape!(
            format!("a_new_order_does_not_block_its_worker__{ledger:?}"),
            checked
        );
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_keeps_answering_while_the_report_runs() -> Result {
    let target = orders(Ledger::Async)?;
    let report = target.get("/report");
    let checked = target
        .get("/health")
        .keeps_answering_during(&report)
        .check()?;
    assert_shape!(checked);
    Ok(())
}

/// The service's traffic as it comes: mostly /health and order lookups, some new orders,
/// now and then a report — and no route's handler holds its worker.
#[test]
fn no_route_of_the_traffic_mix_blocks_its_worker() -> Result {
    let target = orders(Ledger::Async)?;
    let mix = target.mix([
        (target.get("/health"), 4),
        (target.get("/orders/1"), 4),
        (new_order(&target), 1),
        (target.get("/report"), 1),
    ]);
    let checked = mix.none_blocks_its_worker().check()?;
    assert_shape!(checked);
    Ok(())
}

/// `POST /orders` with a JSON body and the token the service wants.
fn new_order(target: &perfshape::Target) -> perfshape::Endpoint {
    target
        .post("/orders")
        .json(&json!({ "customer": "ada", "cents": 1250 }))
        .bearer_auth(TOKEN)
}
