//! The negative controls of `tests/shape.rs`: the same claims on the sync driver called
//! on the async worker. A durable write waits for the disk's `fsync` on the worker, and so
//! does a lookup that records an audit row — each must come out **broken**, its report
//! saying that the handler waits. They run with the project's other
//! controls (`cargo nextest run --profile selftest`).

mod common;

use inventory::{Build, Store};
use perfshape::{Result, Verdict};

use common::{fsync_evidence, lookup, movement, served, served_with, traffic};

fn broken_waiting(checked: &perfshape::Checked) {
    let report = checked.report();
    assert_eq!(checked.verdict(), Verdict::Broken, "{report}");
    assert!(
        format!("{report:#}").contains("while holding its worker"),
        "{report}"
    );
}

#[test]
fn the_sync_driver_waits_for_the_disk_on_its_worker() -> Result {
    let served = served(Build::OnWorker)?;
    let checked = movement(&served.target)
        .does_not_block_its_worker()
        .evidence(fsync_evidence(&served))
        .check()?;
    broken_waiting(&checked);
    Ok(())
}

/// An audited lookup commits a row of its own on the worker: it waits for the disk too.
#[test]
fn an_audited_lookup_on_the_worker_waits_for_the_disk() -> Result {
    let served = served_with(Build::OnWorker, Store::audited)?;
    let checked = lookup(&served.target)
        .does_not_block_its_worker()
        .evidence(fsync_evidence(&served))
        .check()?;
    broken_waiting(&checked);
    Ok(())
}

/// The mix names the route that blocks: the delivery, not the lookups beside it.
#[test]
fn the_traffic_on_the_sync_driver_names_the_write() -> Result {
    let served = served(Build::OnWorker)?;
    let checked = traffic(&served.target).none_blocks_its_worker().check()?;
    let report = checked.report();
    assert_eq!(checked.verdict(), Verdict::Broken, "{report}");
    // What it found, after the claim's name (which lists every route).
    let sentence = report.finding().expect("a finding");
    assert!(
        sentence.starts_with("POST /items/sku-0001/movements waits"),
        "{report}"
    );
    Ok(())
}
