//! The inventory's functional requests, watched: the same requests a functional test sends
//! — an item looked up, a page of the list, three stock movements — with the test's own
//! reqwest client, each build decided on what the kernel saw its worker do. The build that
//! calls rusqlite on the worker is broken, naming the movement route; every other build
//! holds. No load and no timing: these run in the ordinary test pool.

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
    let item = client
        .get(target.url_of("/items/sku-0042")?)
        .send()
        .await
        .expect("GET /items/sku-0042");
    assert_eq!(item.status(), 200, "{build}");
    let page = client
        .get(target.url_of("/items?after=sku-0100&limit=20")?)
        .send()
        .await
        .expect("GET /items");
    assert_eq!(page.status(), 200, "{build}");
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
    let checked = watch.nothing_blocked()?;
    if checked.report().unread.is_some() {
        return Ok(None);
    }
    Ok(Some((checked.verdict(), format!("{:#}", checked.report()))))
}

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
