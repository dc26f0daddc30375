//! The blocking twins of the correct services, watched under the same functional tests:
//! each is broken, its first line naming the route that blocked.

use std::time::Duration;

use perfshape::{PoolSettings, Result, Target, Verdict};
use serde_json::json;

use crate::common::{handlers, orders, signin, todos, worker};
use crate::{assert_names, client, decided, get};

/// The todo list whose create handler also makes a 2 ms synchronous write on its worker:
/// two created, as a sleep no sample caught on a busy machine decides by their count.
#[tokio::test]
async fn a_sync_write_in_the_todo_lists_create_is_named() -> Result {
    let target = Target::serve(
        PoolSettings::workers(1)?,
        todos::app_with(todos::Flaw::SyncWrite(Duration::from_millis(2))),
    )?;
    let watch = target.watch()?;
    let client = client();
    crate::create_todos(&client, &target, &["buy tea", "water the plants"]).await?;
    get(&client, &target, "/todos").await?;
    let checked = watch.nothing_blocked()?;
    assert_names(&checked, "POST /todos");
    Ok(())
}

/// Functional requests to each handler that blocks its worker: a hash in one poll (one
/// request), a sleep and a sync write (two: on a busy machine a sleep no sample caught
/// decides by the count of requests), and a std mutex an offloaded job holds for 10 ms
/// (three: a lock waited for decides by the count of requests; and with the machine busy
/// the worker, woken once the job has the lock, may wait for a CPU past a short hold and
/// then not wait at all — 3 ms was waited for in 1 of 3 requests once in 150 runs).
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_sleep_on_the_worker_is_named() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, handlers::app())?;
    let watch = target.watch()?;
    let client = client();
    // Decided on another thread than the test's: the figures are still the test's.
    let decided = tokio::spawn(async move {
        for _ in 0..2 {
            get(&client, &target, "/wait?us=2000&ms=5").await?;
        }
        watch.nothing_blocked()
    });
    let checked = decided.await.expect("the watch decided")?;
    assert_names(&checked, "GET /wait");
    let artifact = checked.report().artifact().expect("the figures written");
    let name = artifact.file_name().unwrap().to_string_lossy();
    assert!(
        name.starts_with(
            "twins-a-sleep-on-the-worker-is-named--no-route-the-test-called-blocks-its-worker-"
        ),
        "{name}"
    );
    Ok(())
}

#[tokio::test]
async fn a_sync_write_on_the_worker_is_named() -> Result {
    requests(handlers::app(), "/write?ms=2", 2, "GET /write").await
}

#[tokio::test]
async fn a_std_mutex_waited_for_on_the_worker_is_named() -> Result {
    requests(handlers::app(), "/locked?ms=10", 3, "GET /locked").await
}

#[tokio::test]
async fn a_hash_in_one_poll_is_named() -> Result {
    requests(handlers::app(), "/hash?kib=20000", 1, "GET /hash").await
}

/// `route` (`GET /wait`) is named after `n` requests to `path` on `app`, one after another.
async fn requests(app: axum::Router, path: &str, n: usize, route: &str) -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, app)?;
    let watch = target.watch()?;
    let client = client();
    for _ in 0..n {
        get(&client, &target, path).await?;
    }
    assert_names(&watch.nothing_blocked()?, route);
    Ok(())
}

/// A login that verifies its 12 ms hash in the poll after its lookups, against a 4 ms
/// budget: broken, where the first poll alone would show nothing.
#[tokio::test]
async fn a_hash_after_the_lookups_is_named() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, worker::app())?;
    let watch = target.watch()?.poll_budget(Duration::from_millis(4));
    let client = client();
    let answered = client
        .post(target.url_of("/login")?)
        .json(&json!({ "user": "ada" }))
        .send()
        .await
        .expect("POST /login");
    assert!(answered.status().is_success());
    assert_names(&watch.nothing_blocked()?, "POST /login");
    Ok(())
}

/// The order answers at once; the audit task it spawned then writes synchronously on the
/// worker: the task outside every response is named.
#[tokio::test]
async fn an_audit_write_in_a_spawned_task_is_named() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, worker::app())?;
    let watch = target.watch()?;
    let client = client();
    let answered = client
        .post(target.url_of("/order")?)
        .json(&json!({ "user": "ada" }))
        .send()
        .await
        .expect("POST /order");
    assert!(answered.status().is_success());
    assert_names(&watch.nothing_blocked()?, "outside every response");
    Ok(())
}

/// The digest computed inline instead of in `block_in_place`.
#[tokio::test]
async fn a_digest_inline_is_named() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, worker::app())?;
    let watch = target.watch()?.poll_budget(Duration::from_millis(4));
    get(&client(), &target, "/digest?inline=1").await?;
    assert_names(&watch.nothing_blocked()?, "GET /digest");
    Ok(())
}

/// A cache refresher started as the service is built, reading its source synchronously
/// on the worker every 20 ms: the background job is named, whatever the requests.
#[tokio::test]
async fn a_refresher_that_reads_on_the_worker_is_named() -> Result {
    let target = Target::serve_with(PoolSettings::workers(1)?, || worker::with_refresher(true))?;
    let watch = target.watch()?;
    get(&client(), &target, "/cached").await?;
    assert_names(&watch.nothing_blocked()?, "outside every response");
    Ok(())
}

/// The sign-in form with its 30 ms hash verified inline.
#[tokio::test]
async fn a_sign_in_verified_inline_is_named() -> Result {
    let target = crate::sign_in_app(signin::Verify::Inline)?;
    let watch = target.watch()?;
    crate::sign_in(&client(), &target).await?;
    assert_names(&watch.nothing_blocked()?, "POST /login");
    Ok(())
}

/// The journal syncing each note to disk on its worker: `fdatasync()` named.
#[tokio::test]
async fn a_journal_synced_on_the_worker_is_named() -> Result {
    let (_dir, target) = crate::journal()?;
    let watch = target.watch()?;
    // Three notes: a sync of a small file sleeps a fraction of a millisecond, where one
    // request cannot tell a call from a brief lock unless the kernel is seen in it, and now
    // and then the kernel completes it without a sleep at all.
    crate::notes(&client(), &target, "/note", 3).await?;
    let checked = watch.nothing_blocked()?;
    assert_names(&checked, "POST /note");
    Ok(())
}

/// The orders example with its synchronous ledger client on the worker: the report's
/// 20 ms call and the order's 2 ms credit check.
#[tokio::test]
async fn the_orders_service_with_a_sync_ledger_is_named() -> Result {
    let target = orders::orders(orders::Ledger::Blocking)?;
    let watch = target.watch()?;
    let client = client();
    crate::place_an_order(&client, &target).await?;
    get(&client, &target, "/report").await?;
    let checked = watch.nothing_blocked()?;
    assert_names(&checked, "/");
    let said = format!("{:#}", checked.report());
    assert!(
        said.contains("GET /report") && said.contains("POST /orders"),
        "{said}"
    );
    Ok(())
}

/// A broken watch's snapshot holds its shape alone — the routes, how each held its worker,
/// the call and the line — so the same twin watched three times gives the same snapshot,
/// byte for byte, its figures in the JSON.
#[tokio::test]
async fn a_broken_watchs_snapshot_is_the_same_run_after_run() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, handlers::app())?;
    let client = client();
    let mut snapshots = Vec::new();
    let mut found = String::new();
    for _ in 0..3 {
        let watch = target.watch()?;
        for _ in 0..2 {
            get(&client, &target, "/wait?us=5000&ms=6").await?;
        }
        let checked = watch.nothing_blocked()?;
        if decided(&checked).is_none() {
            return Ok(());
        }
        assert_eq!(checked.verdict(), Verdict::Broken, "{:#}", checked.report());
        let summary = checked.summary();
        found = format!("{:?} {:?}", summary.observed, summary.facts);
        snapshots.push(serde_json::to_string_pretty(&summary).expect("a summary"));
    }
    assert_eq!(snapshots[0], snapshots[1]);
    assert_eq!(snapshots[0], snapshots[2]);
    if !cfg!(any(perfshape_portable, not(target_os = "linux"))) {
        // The call and the line are in it; no figure is.
        assert!(
            snapshots[0].contains("clock_nanosleep(): a sleep, called from"),
            "{}",
            snapshots[0]
        );
    }
    assert!(
        !found.contains(" ms") && !found.contains("samples"),
        "{found}"
    );
    Ok(())
}
