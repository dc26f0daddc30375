//! A service whose blocking is not where a response's first poll shows it: a login that
//! awaits its lookups and then verifies a hash, an order that sends a fire-and-forget
//! audit write off to a task of its own, a digest computed inside `block_in_place` — each
//! beside its twin (the hash offloaded, the audit write in `spawn_blocking`, the digest
//! inline), as a team writes either.
//!
//! `?offload=1` on `/login` and `/order` is the fix; `/digest?inline=1` is the mistake.
//!
//! And a service that starts a background job as it is built ([`with_refresher`]): a
//! cache refresher that rebuilds the cache every [`REFRESH_EVERY`], reading its source
//! synchronously on the worker, or through the blocking pool.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use tokio::sync::RwLock;

use super::handlers::compute;

/// CPU time one password verification takes here: a memory-hard hash's cost, in one poll.
pub const VERIFY: Duration = Duration::from_millis(12);

/// How long one lookup in the user store takes: a query a network hop away.
pub const LOOKUP: Duration = Duration::from_millis(1);

/// How long the synchronous audit write takes: a small write and its sync to disk.
pub const AUDIT_WRITE: Duration = Duration::from_millis(2);

/// CPU time one digest takes, inside `block_in_place` or inline.
pub const DIGEST: Duration = Duration::from_millis(10);

/// How often the background refresher rebuilds its cache.
pub const REFRESH_EVERY: Duration = Duration::from_millis(20);

/// How long the refresher's synchronous read of its source takes.
pub const REFRESH_READ: Duration = Duration::from_millis(3);

/// `?offload=1` for the fix, `?inline=1` for the digest's mistake.
#[derive(Debug, Default, Deserialize)]
pub struct Switches {
    offload: Option<u8>,
    inline: Option<u8>,
}

/// A login's body.
#[derive(Debug, Deserialize)]
pub struct Login {
    user: String,
}

/// The users (a name to its salt) and the orders taken.
#[derive(Clone, Default)]
struct Store {
    users: Arc<RwLock<HashMap<String, u64>>>,
    orders: Arc<RwLock<u64>>,
}

/// The routes: `POST /login`, `POST /order`, `GET /digest` and `GET /health`.
pub fn app() -> Router {
    let store = Store::default();
    store
        .users
        .try_write()
        .expect("a new store is not locked")
        .insert("ada".into(), 7);
    Router::new()
        .route("/login", post(login))
        .route("/order", post(order))
        .route("/digest", get(digest))
        .route("/health", get(|| async { "ok" }))
        .with_state(store)
}

/// The app, with a cache refresher spawned as it is built — the way a service's `main`
/// starts one, on the runtime that will serve it: every [`REFRESH_EVERY`] it reads its
/// source for [`REFRESH_READ`], synchronously on the worker (`sync_read`), or on the
/// blocking pool. `GET /cached` answers from the cache.
pub async fn with_refresher(sync_read: bool) -> Result<Router, std::convert::Infallible> {
    let cache = Arc::new(RwLock::new(0u64));
    let refreshed = Arc::clone(&cache);
    tokio::spawn(async move {
        let read = || {
            std::thread::sleep(REFRESH_READ);
            1
        };
        loop {
            tokio::time::sleep(REFRESH_EVERY).await;
            let fresh = if sync_read {
                read()
            } else {
                tokio::task::spawn_blocking(read).await.unwrap_or(0)
            };
            *refreshed.write().await += fresh;
        }
    });
    Ok(app().route(
        "/cached",
        get(move || {
            let cache = Arc::clone(&cache);
            async move { cache.read().await.to_string() }
        }),
    ))
}

/// The service as its `main` starts it: [`app`] served on `listener` until `shutdown`
/// resolves — the router private to the crate, as many services keep it.
pub async fn launch(
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, app())
        .with_graceful_shutdown(shutdown)
        .await
}

/// Looks the user up twice (its salt, then its roles), then verifies the password hash:
/// [`VERIFY`] of CPU in the poll after the second lookup, or on the blocking pool.
async fn login(
    State(store): State<Store>,
    Query(switches): Query<Switches>,
    Json(login): Json<Login>,
) -> String {
    tokio::time::sleep(LOOKUP).await;
    let salt = store.users.read().await.get(&login.user).copied();
    tokio::time::sleep(LOOKUP).await;
    let Some(salt) = salt else {
        return "unknown".into();
    };
    let verify = move || {
        compute(VERIFY);
        salt
    };
    let verified = if switches.offload == Some(1) {
        tokio::task::spawn_blocking(verify)
            .await
            .expect("the verification does not panic")
    } else {
        verify()
    };
    format!("welcome {verified}")
}

/// Takes the order and answers at once; an audit task writes it down afterwards,
/// synchronously for [`AUDIT_WRITE`] — on the worker, or (`offload=1`) on the blocking pool.
async fn order(State(store): State<Store>, Query(switches): Query<Switches>) -> String {
    let number = {
        let mut orders = store.orders.write().await;
        *orders += 1;
        *orders
    };
    let offload = switches.offload == Some(1);
    tokio::spawn(async move {
        let write = || std::thread::sleep(AUDIT_WRITE);
        if offload {
            let _ = tokio::task::spawn_blocking(write).await;
        } else {
            write();
        }
    });
    format!("order {number}")
}

/// [`DIGEST`] of CPU inside `tokio::task::block_in_place` (tokio moves the worker's core to
/// another thread first), or (`inline=1`) on the worker.
async fn digest(Query(switches): Query<Switches>) -> &'static str {
    if switches.inline == Some(1) {
        compute(DIGEST);
    } else {
        tokio::task::block_in_place(|| compute(DIGEST));
    }
    "digested"
}
