//! The inventory service under the gate, as its team would write it: recording a stock
//! movement — a JSON `POST` with a bearer token that commits a transaction durably — never
//! blocks its worker; a lookup of a cached row never does either (it computes, briefly);
//! and no route of the service's traffic does. The three fixed builds hold every claim;
//! the sync driver on the worker is their negative control, in `tests/controls.rs`.

mod common;

use inventory::{Build, Import};
use perfshape::{Result, Verdict, assert_shape};

use common::{delivery_note, fsync_evidence, lookup, movement, page, served};

/// The fixes: offloaded on one shared connection, a deadpool pool, sqlx.
const FIXED: [Build; 3] = [Build::SharedConnection, Build::Pool, Build::Sqlx];

#[tokio::test]
async fn recording_a_movement_never_blocks_its_worker() -> Result {
    for build in FIXED {
        let served = served(build)?;
        let checked = movement(&served.target)
            .does_not_block_its_worker()
            .evidence(fsync_evidence(served.folder.path()))
            .await?;
        assert_shape!(format!("recording_a_movement__{build}"), checked);
    }
    Ok(())
}

/// One shared connection admits one write at a time: the requests queue behind it, off
/// the worker, and the report says so instead of calling it blocking.
#[test]
fn writes_on_one_shared_connection_queue_behind_it_off_the_worker() -> Result {
    let served = served(Build::SharedConnection)?;
    let checked = delivery_note(&served.target)
        .does_not_block_its_worker()
        .check()?;
    let report = checked.report();
    assert_eq!(checked.verdict(), Verdict::Holds, "{report}");
    assert!(report.to_string().contains("at a time"), "{report}");
    Ok(())
}

#[test]
fn looking_up_a_cached_item_never_blocks_its_worker() -> Result {
    for build in Build::ALL {
        let served = served(build)?;
        let checked = lookup(&served.target).does_not_block_its_worker().check()?;
        assert_shape!(format!("looking_up_an_item__{build}"), checked);
    }
    Ok(())
}

/// The nightly import holds the shared connection for each batch: offloaded lookups
/// wait for it on the blocking pool, and the worker stays free.
#[test]
fn an_offloaded_lookup_waits_for_the_import_off_the_worker() -> Result {
    let served = served(Build::SharedConnection)?;
    let import = Import::start(served.shared_connection.clone().expect("one connection"));
    let checked = lookup(&served.target).does_not_block_its_worker().check()?;
    let (batches, held) = import.batches();
    drop(import);
    assert!(batches > 0, "the import committed no batch");
    eprintln!("the import committed {batches} batches, holding the connection {held:?} for each");
    let checked = checked.fact("import", "a batch of 2000 stock counts at a time");
    assert_shape!(checked);
    Ok(())
}

/// The traffic as it comes: mostly lookups and pages, now and then a delivery.
#[test]
fn no_route_of_the_traffic_blocks_its_worker() -> Result {
    for build in FIXED {
        let served = served(build)?;
        let target = &served.target;
        let mix = target.mix([
            (target.get("/health"), 2),
            (lookup(target), 4),
            (page(target), 2),
            (movement(target), 2),
        ]);
        let checked = mix.none_blocks_its_worker().check()?;
        assert_shape!(format!("the_traffic__{build}"), checked);
    }
    Ok(())
}
