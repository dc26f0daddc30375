//! The project's correct services, watched under their functional tests: every route holds.

use std::time::Duration;

use perfshape::{PoolSettings, Result, Target, assert_shape};
use serde_json::json;

use crate::common::{handlers, kv, orders, signin, worker};
use crate::{assert_holds, client, get};

/// The todo list's CRUD, as its own functional test sends it: the snapshot lists each
/// route with its requests.
#[tokio::test]
async fn the_todo_list_holds() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, crate::common::todos::app())?;
    let watch = target.watch()?;
    let client = client();
    crate::create_todos(&client, &target, &["buy tea", "write docs"]).await?;
    let listed: serde_json::Value = get(&client, &target, "/todos")
        .await?
        .json()
        .await
        .expect("a JSON list");
    let id = listed[0]["id"].as_u64().expect("an id");
    let done = client
        .patch(target.url_of(&format!("/todos/{id}"))?)
        .json(&json!({ "completed": true }))
        .send()
        .await
        .expect("PATCH /todos/{id}");
    assert_eq!(done.status(), 200);
    let gone = client
        .delete(target.url_of(&format!("/todos/{id}"))?)
        .send()
        .await
        .expect("DELETE /todos/{id}");
    assert_eq!(gone.status(), 204);
    let checked = watch.nothing_blocked()?;
    assert_holds(&checked);
    assert_shape!(checked);
    Ok(())
}

/// The key-value store: a write, compressed reads, the admin area behind its token.
#[tokio::test]
async fn the_key_value_store_holds() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, kv::app(10, 4096))?;
    let watch = target.watch()?;
    let client = client();
    let set = client
        .post(target.url_of("/greeting")?)
        .body("hello")
        .send()
        .await
        .expect("POST /greeting");
    assert!(set.status().is_success());
    for key in ["/greeting", "/key-3"] {
        get(&client, &target, key).await?;
    }
    get(&client, &target, "/keys").await?;
    let refused = client
        .delete(target.url_of("/admin/keys")?)
        .send()
        .await
        .expect("DELETE /admin/keys");
    assert_eq!(refused.status(), 401);
    let cleared = client
        .delete(target.url_of("/admin/keys")?)
        .bearer_auth(kv::ADMIN_TOKEN)
        .send()
        .await
        .expect("DELETE /admin/keys");
    assert!(cleared.status().is_success());
    assert_holds(&watch.nothing_blocked()?);
    Ok(())
}

/// Each way a request can use its worker, done right: the blocking part offloaded or
/// awaited, CPU in short stretches between yields, work queued behind one connection.
#[tokio::test]
async fn handlers_done_right_hold() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, handlers::app())?;
    let watch = target.watch()?;
    let client = client();
    for path in crate::HANDLERS_DONE_RIGHT {
        get(&client, &target, path).await?;
    }
    assert_holds(&watch.nothing_blocked()?);
    Ok(())
}

/// The worker app done right: a login whose hash is offloaded, an order whose audit write
/// runs on the blocking pool, a digest in `block_in_place`.
#[tokio::test]
async fn the_worker_app_done_right_holds() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, worker::app())?;
    let watch = target.watch()?.poll_budget(Duration::from_millis(4));
    let client = client();
    for path in ["/login?offload=1", "/order?offload=1"] {
        let answered = client
            .post(target.url_of(path)?)
            .json(&json!({ "user": "ada" }))
            .send()
            .await
            .expect("a POST");
        assert!(answered.status().is_success(), "{path}");
    }
    get(&client, &target, "/digest").await?;
    get(&client, &target, "/health").await?;
    assert_holds(&watch.nothing_blocked()?);
    Ok(())
}

/// Twenty concurrent digests in `block_in_place` on one worker: each hands the worker's
/// core to another thread before it computes, in turn, and none holds the worker.
#[tokio::test]
async fn twenty_concurrent_digests_in_block_in_place_hold() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, worker::app())?;
    let watch = target.watch()?.poll_budget(Duration::from_millis(4));
    let client = client();
    let digests: Vec<_> = (0..20)
        .map(|_| {
            let (client, target) = (client.clone(), target.clone());
            tokio::spawn(async move { get(&client, &target, "/digest").await.map(drop) })
        })
        .collect();
    for digest in digests {
        digest.await.expect("a digest")?;
    }
    assert_holds(&watch.nothing_blocked()?);
    Ok(())
}

/// A service that starts a cache refresher as it is built, reading its source through the
/// blocking pool: the background job on the served workers never waits there.
#[tokio::test]
async fn a_refresher_on_the_blocking_pool_holds() -> Result {
    let target = Target::serve_with(PoolSettings::workers(1)?, || worker::with_refresher(false))?;
    let watch = target.watch()?;
    let client = client();
    for _ in 0..2 {
        get(&client, &target, "/cached").await?;
    }
    assert_holds(&watch.nothing_blocked()?);
    Ok(())
}

/// The sign-in form with its hash verified on the blocking pool: the form, the post that
/// answers 303, the page it redirects to with its session cookie.
#[tokio::test]
async fn a_sign_in_verified_on_the_blocking_pool_holds() -> Result {
    let target = crate::sign_in_app(signin::Verify::Offloaded)?;
    let watch = target.watch()?;
    let client = client();
    get(&client, &target, "/login").await?;
    // Three sign-ins: one request of a route that hands its hash to the blocking pool may
    // sleep a fraction of a millisecond on the pool's own lock, which one more tells from
    // a call (0.19 ms once in 50 runs), and two cannot outvote.
    crate::sign_in(&client, &target).await?;
    crate::sign_in(&client, &target).await?;
    let signed_in = crate::sign_in(&client, &target).await?;
    let cookie = signed_in.headers()["set-cookie"]
        .to_str()
        .expect("a cookie")
        .split(';')
        .next()
        .expect("its value")
        .to_string();
    let home = client
        .get(target.url_of("/")?)
        .header("cookie", cookie)
        .send()
        .await
        .expect("GET /");
    assert_eq!(home.status(), 200);
    assert_holds(&watch.nothing_blocked()?);
    Ok(())
}

/// The journal writing its notes with `tokio::fs`, its cache swapped under a brief lock.
#[tokio::test]
async fn the_journal_with_tokio_fs_holds() -> Result {
    let (_dir, target) = crate::journal()?;
    let watch = target.watch()?;
    let client = client();
    crate::notes(&client, &target, "/note?async=1", 2).await?;
    get(&client, &target, "/cached").await?;
    assert_holds(&watch.nothing_blocked()?);
    Ok(())
}

/// The orders example with its async ledger client: an order, a listing, the report.
#[tokio::test]
async fn the_orders_service_with_an_async_ledger_holds() -> Result {
    let target = orders::orders(orders::Ledger::Async)?;
    let watch = target.watch()?;
    let client = client();
    crate::place_an_order(&client, &target).await?;
    get(&client, &target, "/orders/1").await?;
    get(&client, &target, "/report").await?;
    assert_holds(&watch.nothing_blocked()?);
    Ok(())
}
