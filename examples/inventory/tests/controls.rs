//! The negative controls of `tests/shape.rs`: the same claims on the sync driver called
//! on the async worker. A durable write waits for the disk's `fsync` on the worker, and a
//! lookup waits on the worker for the mutex the nightly import holds — each must come out
//! **broken**, its report saying that the handler waits. They run with the project's other
//! controls (`cargo nextest run --profile selftest`).

mod common;

use inventory::{Build, Import};
use perfshape::{Result, Verdict};

use common::{fsync_evidence, lookup, movement, page, served};

fn broken_waiting(checked: &perfshape::Checked) {
    let report = checked.report();
    assert_eq!(checked.verdict(), Verdict::Broken, "{report}");
    assert!(
        report.to_string().contains("while holding its worker"),
        "{report}"
    );
}

#[test]
fn the_sync_driver_waits_for_the_disk_on_its_worker() -> Result {
    let served = served(Build::OnWorker)?;
    let checked = movement(&served.target)
        .does_not_block_its_worker()
        .evidence(fsync_evidence(served.folder.path()))
        .check()?;
    broken_waiting(&checked);
    Ok(())
}

#[test]
fn a_lookup_on_the_worker_waits_for_the_import_s_lock() -> Result {
    let served = served(Build::OnWorker)?;
    let import = Import::start(served.shared_connection.clone().expect("one connection"));
    let checked = lookup(&served.target).does_not_block_its_worker().check()?;
    let (batches, held) = import.batches();
    drop(import);
    assert!(batches > 0, "the import committed no batch");
    eprintln!("the import committed {batches} batches, holding the connection {held:?} for each");
    broken_waiting(&checked);
    Ok(())
}

/// The mix names the route that blocks: the delivery, not the lookups beside it.
#[test]
fn the_traffic_on_the_sync_driver_names_the_write() -> Result {
    let served = served(Build::OnWorker)?;
    let target = &served.target;
    let mix = target.mix([
        (target.get("/health"), 2),
        (lookup(target), 4),
        (page(target), 2),
        (movement(target), 2),
    ]);
    let checked = mix.none_blocks_its_worker().check()?;
    let report = checked.report();
    assert_eq!(checked.verdict(), Verdict::Broken, "{report}");
    // The headline's sentence, after the claim's name (which lists every route).
    let headline = report.headline();
    let (_, sentence) = headline
        .split_once(" — ")
        .expect("a headline with a sentence");
    assert!(
        sentence.starts_with("POST /items/sku-0001/movements waits"),
        "{report}"
    );
    Ok(())
}
