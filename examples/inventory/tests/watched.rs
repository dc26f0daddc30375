//! The inventory's functional requests, watched: the same requests a functional test sends
//! — an item looked up, two pages of the list, three stock movements, the item looked up
//! again to see them — with the test's own reqwest client, each build decided on what the
//! kernel saw its worker do. The build that calls rusqlite on the worker is broken, naming
//! the movement route; every other build holds. No load and no timing: these run in the
//! ordinary test pool. Each route is sent twice or more: on a busy machine a sleep no
//! sample caught decides by the count of requests.

mod common;

use inventory::{Build, TOKEN};
use perfshape::{Result, Verdict};
use serde_json::json;

/// One build under its functional requests; the watch's verdict where it is read here.
async fn watched(build: Build) -> Result<Option<(Verdict, String)>> {
    let served = common::served(build)?;
    let target = &served.target;
    let watch = target.watch()?;
    let client = reqwest::Client::new();
    let before = quantity(&client, target).await?;
    for after in ["sku-0100", "sku-0120"] {
        let page = client
            .get(target.url_of(&format!("/items?after={after}&limit=20"))?)
            .send()
            .await
            .expect("GET /items");
        assert_eq!(page.status(), 200, "{build}");
    }
    for _ in 0..3 {
        let moved = client
            .post(target.url_of("/items/sku-0001/movements")?)
            .bearer_auth(TOKEN)
            .json(&json!({ "delta": 1, "note": "delivery" }))
            .send()
            .await
            .expect("POST /items/sku-0001/movements");
        assert!(moved.status().is_success(), "{build}: {}", moved.status());
    }
    assert_eq!(quantity(&client, target).await?, before + 3, "{build}");
    let checked = watch.nothing_blocked()?;
    if checked.report().unread().is_some() {
        return Ok(None);
    }
    Ok(Some((checked.verdict(), format!("{:#}", checked.report()))))
}

/// The quantity `GET /items/sku-0001` answers.
async fn quantity(client: &reqwest::Client, target: &perfshape::Target) -> Result<i64> {
    let answered = client
        .get(target.url_of("/items/sku-0001")?)
        .send()
        .await
        .expect("GET /items/sku-0001");
    assert_eq!(answered.status(), 200);
    let item: serde_json::Value = answered.json().await.expect("an item as JSON");
    Ok(item["qty"].as_i64().expect("its quantity"))
}

/// The line of `src/queries.rs` whose commit syncs a movement's one-row insert to disk.
fn commit_line() -> usize {
    let source = include_str!("../src/queries.rs");
    let insert = source
        .lines()
        .position(|l| l.contains("INSERT INTO movements (sku, delta, note)"))
        .expect("the movement's insert");
    source
        .lines()
        .enumerate()
        .skip(insert)
        .find(|(_, l)| l.contains("transaction.commit()?;"))
        .map(|(at, _)| at + 1)
        .expect("its commit")
}

/// The movement's one-row insert, committed with rusqlite on the worker — a sync of the
/// write-ahead log, a few tenths of a millisecond — is named by its call and its line.
#[tokio::test]
async fn rusqlite_on_the_worker_is_named() -> Result {
    if let Some((verdict, report)) = watched(Build::OnWorker).await? {
        assert_eq!(verdict, Verdict::Broken, "{report}");
        assert!(
            report
                .lines()
                .next()
                .is_some_and(|first| first.contains("POST /items/{id}/movements")
                    || first.contains("POST /items/sku-0001/movements")),
            "{report}"
        );
        if cfg!(target_arch = "x86_64") {
            assert!(report.contains("sync()"), "the sync: {report}");
            let function = "called from `inventory::queries::record`";
            assert!(report.contains(function), "{function}: {report}");
            // The line, where the example is built with line tables (CI builds the
            // workspace's dependencies, this example among them, without).
            let line_tables = !matches!(
                std::env::var("CARGO_PROFILE_DEV_DEBUG").as_deref(),
                Ok("false" | "0" | "none")
            );
            let line = format!("(src/queries.rs:{})", commit_line());
            assert!(
                !line_tables || report.contains(&line),
                "the line {line}: {report}"
            );
        }
    }
    Ok(())
}

#[tokio::test]
async fn every_other_build_holds() -> Result {
    for build in [Build::SharedConnection, Build::Pool, Build::Sqlx] {
        if let Some((verdict, report)) = watched(build).await? {
            assert_eq!(verdict, Verdict::Holds, "{build}: {report}");
        }
    }
    Ok(())
}
