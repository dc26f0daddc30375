//! HTTP/2 connections as the client's lifecycles say: a shared client multiplexes every
//! call on one connection, a pool of k clients opens k, a client per call opens one per
//! call — counted by the peer address each response reports.

use std::time::Duration;

use ledger::core::Core;
use ledger::messages::Ping;
use ledger::{Build, router};
use perfshape::client::{ClientStrategy, Lifecycle};
use perfshape::load::Connection;
use perfshape::{PoolSettings, Result, Target};
use prost::Message;

/// The connections 20 concurrent health calls opened under `lifecycle`.
fn opened(lifecycle: Lifecycle) -> Result<usize> {
    let core = Core::start(Duration::from_millis(1)).expect("the core starts");
    let target = Target::builder().lifecycle(lifecycle).serve(
        PoolSettings::workers(1)?,
        router(Build::Offloaded, core.addr()),
    )?;
    let run = target
        .grpc("/ledger.Ledger/Health", Ping {}.encode_to_vec())
        .run(ClientStrategy::FanOut, 20)?;
    assert_eq!(run.sent(), run.ok() + run.failed());
    assert_eq!(run.ok(), 20);
    Ok(run
        .records
        .iter()
        .filter(|r| r.connection == Connection::New)
        .count())
}

#[test]
fn a_shared_client_multiplexes_every_call_on_one_connection() -> Result {
    assert_eq!(opened(Lifecycle::Shared)?, 1);
    Ok(())
}

#[test]
fn a_pool_of_clients_opens_a_connection_each() -> Result {
    assert_eq!(opened(Lifecycle::Pooled { clients: 4 })?, 4);
    Ok(())
}

#[test]
fn a_client_per_call_opens_a_connection_per_call() -> Result {
    assert_eq!(opened(Lifecycle::PerRequest)?, 20);
    Ok(())
}
