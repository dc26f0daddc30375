//! The watch as a tower layer, where a team's functional tests call their router without
//! serving it: `tower::ServiceExt::oneshot` on the test's own runtime (axum's testing
//! example), and axum-test's `TestServer`. The correct handlers hold, their blocking twins
//! are broken from the same requests, the call's line is named, and a layer no request
//! reached is refused by name.

use axum::Router;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use perfshape::{Result, Watch};
use serde_json::json;
use tower::ServiceExt;

use crate::common::{handlers, held, todos};
use crate::{assert_holds, assert_names};

/// `GET path` on `app` with `oneshot`, as axum's testing example calls a router, its
/// answer asserted a success and its body read.
async fn oneshot_get(app: &Router, path: &str) {
    let response = app
        .clone()
        .oneshot(Request::get(path).body(Body::empty()).expect("a request"))
        .await
        .expect("a router answers");
    assert!(
        response.status().is_success(),
        "GET {path}: {}",
        response.status()
    );
    axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .expect("its body");
}

#[tokio::test]
async fn oneshot_handlers_done_right_hold() -> Result {
    handlers_done_right().await
}

/// The same on a multi-thread test runtime: the layered router is polled on the test's
/// own thread, the tasks it spawns on the runtime's workers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oneshot_on_a_multi_thread_runtime_handlers_done_right_hold() -> Result {
    handlers_done_right().await
}

/// Every handler done right, one oneshot request each: the watch holds, and says what a
/// layer cannot see.
async fn handlers_done_right() -> Result {
    let (layer, watch) = Watch::layer();
    let app = handlers::app().layer(layer);
    for path in crate::HANDLERS_DONE_RIGHT {
        oneshot_get(&app, path).await;
    }
    let checked = watch.nothing_blocked()?;
    assert_holds(&checked);
    let said = format!("{:#}", checked.report());
    assert!(
        said.contains("not the tasks its handlers spawned"),
        "{said}"
    );
    Ok(())
}

/// `route` (`GET /wait`) is named after `n` oneshot requests to `path` on `app`.
async fn oneshot_names(app: Router, path: &str, n: usize, route: &str) -> Result {
    let (layer, watch) = Watch::layer();
    let app = app.layer(layer);
    for _ in 0..n {
        oneshot_get(&app, path).await;
    }
    assert_names(&watch.nothing_blocked()?, route);
    Ok(())
}

#[tokio::test]
async fn oneshot_a_sleep_is_named() -> Result {
    oneshot_names(handlers::app(), "/wait?us=2000&ms=5", 2, "GET /wait").await
}

#[tokio::test]
async fn oneshot_a_sync_write_is_named() -> Result {
    oneshot_names(handlers::app(), "/write?ms=2", 3, "GET /write").await
}

#[tokio::test]
async fn oneshot_a_std_mutex_waited_for_is_named() -> Result {
    oneshot_names(handlers::app(), "/locked?ms=10", 3, "GET /locked").await
}

#[tokio::test]
async fn oneshot_a_hash_in_one_poll_is_named() -> Result {
    oneshot_names(handlers::app(), "/hash?kib=20000", 1, "GET /hash").await
}

/// `path` of the held app requested three times through the layer; the report names the
/// call `call` and the line of `held.rs` that made it, from the thread the test polled on.
async fn oneshot_names_the_line(path: &str, call: &str) -> Result {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (layer, watch) = Watch::layer();
    let app = held::app(dir.path().join("journal.log"), held::upstream()).layer(layer);
    for _ in 0..3 {
        oneshot_get(&app, path).await;
    }
    crate::assert_names_the_line(&watch.nothing_blocked()?, path, call, None);
    Ok(())
}

#[tokio::test]
async fn oneshot_a_synced_write_names_its_line() -> Result {
    oneshot_names_the_line("/fsync", "fdatasync()").await
}

#[tokio::test]
async fn oneshot_a_synced_line_names_its_line() -> Result {
    oneshot_names_the_line("/line", "fsync()").await
}

#[tokio::test]
async fn oneshot_a_sleep_shorter_than_the_tick_names_its_line() -> Result {
    oneshot_names_the_line("/nap", "clock_nanosleep()").await
}

#[tokio::test]
async fn oneshot_a_lock_held_a_millisecond_names_its_line() -> Result {
    oneshot_names_the_line("/brief-lock", "futex()").await
}

/// The todo list under axum-test's `TestServer`, its functional test as written for it: a
/// JSON create of two, the list read back.
async fn todos_under_axum_test(app: Router) -> Result<perfshape::Checked> {
    let (layer, watch) = Watch::layer();
    let server = axum_test::TestServer::new(app.layer(layer)).expect("a test server");
    for text in ["buy tea", "water the plants"] {
        let created = server.post("/todos").json(&json!({ "text": text })).await;
        created.assert_status(StatusCode::CREATED);
    }
    let listed = server.get("/todos").await;
    listed.assert_status_ok();
    assert!(
        listed.text().contains("water the plants"),
        "{}",
        listed.text()
    );
    watch.nothing_blocked()
}

#[tokio::test]
async fn axum_test_the_todo_list_holds() -> Result {
    assert_holds(&todos_under_axum_test(todos::app()).await?);
    Ok(())
}

#[tokio::test]
async fn axum_test_a_sync_write_in_the_todo_lists_create_is_named() -> Result {
    let app = todos::app_with(todos::Flaw::SyncWrite(std::time::Duration::from_millis(2)));
    assert_names(&todos_under_axum_test(app).await?, "POST /todos");
    Ok(())
}

/// A watch whose layer no request reached: refused by name, not a hold.
#[tokio::test]
async fn a_layer_no_request_reached_is_refused() {
    let (layer, watch) = Watch::layer();
    let _app = handlers::app().layer(layer);
    let refused = watch
        .nothing_blocked()
        .expect_err("no request reached the layer");
    let said = refused.to_string();
    assert!(
        said.contains("none reached a router under a WatchLayer"),
        "{said}"
    );
    assert!(said.contains("router.layer(layer)"), "{said}");
}
