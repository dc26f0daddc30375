//! A key-value store kept in memory: values up to 5 MiB posted under a key, read back
//! gzip-compressed when the client accepts it, listed, and an admin area behind a bearer
//! token (the shape of axum's own `key-value-store` example, written here). Its handlers
//! compute under a std `RwLock` and never wait; the compression runs as the response body
//! is written.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::handler::Handler;
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// The token the admin routes require (`Authorization: Bearer …`).
pub const ADMIN_TOKEN: &str = "secret-token";

/// The largest value the store takes.
pub const MAX_VALUE: usize = 5 * 1024 * 1024;

type Shared = Arc<RwLock<HashMap<String, Bytes>>>;

/// The service, with `seed` values of `size` bytes under the keys `key-0`, `key-1`, …
pub fn app(seed: usize, size: usize) -> Router {
    let db: Shared = Arc::default();
    {
        let mut map = db.write().unwrap();
        for i in 0..seed {
            map.insert(format!("key-{i}"), Bytes::from(value(i, size)));
        }
    }
    Router::new()
        .route(
            "/{key}",
            // Compression on reads only; writes take a body of up to 5 MiB.
            get(kv_get.layer(CompressionLayer::new())).post(kv_set.layer((
                DefaultBodyLimit::disable(),
                RequestBodyLimitLayer::new(MAX_VALUE),
            ))),
        )
        .route("/keys", get(list_keys))
        .nest("/admin", admin_routes())
        .layer(TraceLayer::new_for_http())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(10),
        ))
        .with_state(db)
}

/// A value that compresses as text does (about 3:1), different for each `seed`.
pub fn value(seed: usize, size: usize) -> Vec<u8> {
    let words = [
        "order", "ledger", "tea", "customer", "balance", "report", "42", "\n",
    ];
    let mut out = Vec::with_capacity(size + 16);
    let mut state = (seed as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    while out.len() < size {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        out.extend_from_slice(words[(state % words.len() as u64) as usize].as_bytes());
        out.push(b' ');
    }
    out.truncate(size);
    out
}

async fn kv_get(Path(key): Path<String>, State(db): State<Shared>) -> Result<Bytes, StatusCode> {
    let db = db.read().unwrap();
    db.get(&key).cloned().ok_or(StatusCode::NOT_FOUND)
}

async fn kv_set(Path(key): Path<String>, State(db): State<Shared>, bytes: Bytes) {
    db.write().unwrap().insert(key, bytes);
}

async fn list_keys(State(db): State<Shared>) -> String {
    let db = db.read().unwrap();
    let mut keys: Vec<&str> = db.keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys.join("\n")
}

fn admin_routes() -> Router<Shared> {
    async fn delete_all_keys(State(db): State<Shared>) {
        db.write().unwrap().clear();
    }

    async fn remove_key(Path(key): Path<String>, State(db): State<Shared>) {
        db.write().unwrap().remove(&key);
    }

    Router::new()
        .route("/keys", delete(delete_all_keys))
        .route("/key/{key}", delete(remove_key))
        .layer(middleware::from_fn(require_bearer))
}

/// `Authorization: Bearer <ADMIN_TOKEN>` or 401.
async fn require_bearer(request: Request, next: Next) -> Response {
    let authorised = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|token| token == ADMIN_TOKEN);
    if authorised {
        next.run(request).await
    } else {
        (StatusCode::UNAUTHORIZED, "a bearer token is required").into_response()
    }
}
