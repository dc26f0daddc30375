//! The accounts service under the gate, its database at production's distance (1 ms each
//! way, through `perfshape::Downstream`): the fixes — diesel offloaded to tokio's blocking
//! pool, tokio-postgres behind a deadpool pool — never block their worker; diesel on the
//! worker, the bug, breaks both claims a team writes for it.

mod common;

use accounts::Build;
use perfshape::{Result, Verdict};

use common::{DISTANCE, create, list, served};

#[test]
fn the_fixes_never_block_their_worker_at_production_distance() -> Result {
    for build in [Build::Offloaded, Build::Async] {
        let served = served(build, Some(DISTANCE));
        for endpoint in [list(&served.target), create(&served.target)] {
            let checked = endpoint.does_not_block_its_worker().check()?;
            assert_eq!(checked.verdict(), Verdict::Holds, "{build}: {}", checked.report());
        }
    }
    Ok(())
}

#[test]
fn health_keeps_answering_while_the_async_build_lists() -> Result {
    let served = served(Build::Async, Some(DISTANCE));
    let checked = served
        .target
        .get("/health")
        .keeps_answering_during(&list(&served.target).concurrency(4))
        .check()?;
    assert_eq!(checked.verdict(), Verdict::Holds, "{}", checked.report());
    Ok(())
}

/// The negative control: diesel on the worker holds it for each query's round trip.
#[test]
fn diesel_on_the_worker_blocks_it_at_production_distance() -> Result {
    let served = served(Build::OnWorker, Some(DISTANCE));
    let checked = list(&served.target).does_not_block_its_worker().check()?;
    assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    assert!(checked.report().headline().contains("waits ≈"), "{}", checked.report());
    let checked = served
        .target
        .get("/health")
        .keeps_answering_during(&list(&served.target))
        .check()?;
    assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    Ok(())
}

#[test]
#[ignore]
fn probe_loopback() -> Result {
    for build in Build::ALL {
        let served = served(build, None);
        let checked = list(&served.target).does_not_block_its_worker().check()?;
        let r = checked.report();
        eprintln!("{build}: {:?} slept {:?} waiting {:?} | {}", checked.verdict(), r.observed.get("slept share"), r.observed.get("waiting ms"), r);
    }
    Ok(())
}
