//! The test docs/production-distance.md shows, verbatim from its first `use` to the end of
//! its function (a test of the main suite checks that they agree): the accounts service's
//! async build, its PostgreSQL put at production's distance. `test_database` stands for a team's own
//! fixture: here a throwaway cluster, seeded.

mod common;

use std::time::Duration;

use perfshape::{Downstream, PoolSettings, Target, assert_shape};
use serde_json::json;

#[tokio::test]
async fn opening_an_account_never_blocks_its_worker() -> perfshape::Result {
    // The test's PostgreSQL answers in microseconds; production's is 1 ms away.
    let database = test_database();
    let proxy = Downstream::to(database.addr())
        .latency(Duration::from_millis(1))
        .start()?;
    let url = format!("postgres://accounts@{}/postgres", proxy.addr());
    // Built on the served pool: the connection's driver task runs where production runs it.
    let target = Target::serve_with(PoolSettings::workers(1)?, move || async move {
        let store = accounts::Store::connect(accounts::Build::Async, &url)?;
        store.page(1).await?;
        Ok::<_, accounts::StoreError>(accounts::app(store))
    })?;
    let open = target
        .post("/accounts")
        .json(&json!({ "owner": "ada", "cents": 1250 }))
        .bearer_auth("test-token");
    assert_shape!(open.does_not_block_its_worker().await?);
    let health = target.get("/health");
    assert_shape!(health.keeps_answering_during(&open).await?);
    Ok(())
}

/// A throwaway PostgreSQL cluster with the service's schema, stopped when dropped.
fn test_database() -> common::Cluster {
    let cluster = common::Cluster::start().unwrap_or_else(|e| panic!("{e}"));
    accounts::seed(&cluster.url()).unwrap_or_else(|e| panic!("{e}"));
    cluster
}
