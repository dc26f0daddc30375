//! The accounts service's functional test as a team writes it — open an account, list the
//! page, read the account back, ask for one that is not there — watched, on each build,
//! its PostgreSQL on loopback as a test's is. The fixes hold; diesel on the worker never
//! does: broken where the kernel saw the worker in its read of the database's socket, or
//! inconclusive naming the local process where the answer came too fast to be seen.

mod common;

use accounts::{Build, Store};
use perfshape::{Checked, PoolSettings, Result, Target, Verdict};
use serde_json::json;

/// The functional test, on `build` served on one worker against `cluster`: each route
/// called as many times as a watch needs to tell a call on loopback from a lock (three),
/// every answer asserted.
async fn functional_test(build: Build, cluster: &common::Cluster) -> Result<Checked> {
    let store = Store::connect(build, &cluster.url()).unwrap_or_else(|e| panic!("{e}"));
    let target = Target::serve(PoolSettings::workers(1)?, accounts::app(store))?;
    let watch = target.watch()?;
    let client = reqwest::Client::new();
    for n in 0..3 {
        let opened = client
            .post(target.url_of("/accounts")?)
            .json(&json!({ "owner": format!("ada-{n}"), "cents": 1250 }))
            .send()
            .await
            .expect("POST /accounts");
        assert_eq!(opened.status(), 200);
        let account: serde_json::Value = opened.json().await.expect("the account, in JSON");
        let id = account["id"].as_i64().expect("its id");
        let page = client
            .get(target.url_of("/accounts?limit=20")?)
            .send()
            .await
            .expect("GET /accounts");
        assert_eq!(page.status(), 200);
        let shown = client
            .get(target.url_of(&format!("/accounts/{id}"))?)
            .send()
            .await
            .expect("GET /accounts/{id}");
        assert_eq!(shown.status(), 200);
        let missing = client
            .get(target.url_of("/accounts/999999999")?)
            .send()
            .await
            .expect("GET /accounts/999999999");
        assert_eq!(missing.status(), 404);
    }
    watch.nothing_blocked()
}

/// One cluster, seeded, for the three builds.
fn cluster() -> common::Cluster {
    let cluster = common::Cluster::start().unwrap_or_else(|e| panic!("{e}"));
    accounts::seed(&cluster.url()).unwrap_or_else(|e| panic!("{e}"));
    cluster
}

#[tokio::test]
async fn the_fixes_hold() -> Result {
    let cluster = cluster();
    for build in [Build::Offloaded, Build::Async] {
        let checked = functional_test(build, &cluster).await?;
        // Off Linux the watch says what it cannot read: inconclusive, never broken.
        let expected = if cfg!(target_os = "linux") {
            Verdict::Holds
        } else {
            Verdict::Inconclusive
        };
        assert_eq!(
            checked.verdict(),
            expected,
            "{build}: {:#}",
            checked.report()
        );
    }
    Ok(())
}

#[tokio::test]
async fn diesel_on_the_worker_never_holds() -> Result {
    let cluster = cluster();
    let checked = functional_test(Build::OnWorker, &cluster).await?;
    let said = format!("{:#}", checked.report());
    match checked.verdict() {
        Verdict::Broken => {
            assert!(said.contains("GET /accounts"), "{said}");
            // Where a sample caught the worker in its call: the database's socket, and the
            // list's own line, not the create's on the same path.
            let found = checked.report().finding().unwrap_or_default();
            if found.contains("called from") {
                assert!(found.contains("postgres"), "the database's socket: {said}");
                assert!(found.contains("accounts::store::page"), "{said}");
            }
        }
        Verdict::Inconclusive => assert!(said.contains("postgres"), "{said}"),
        Verdict::Holds => panic!("diesel on the worker held: {said}"),
    }
    Ok(())
}
