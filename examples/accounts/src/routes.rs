//! The routes, the same in every build.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;

use crate::store::{Account, NewAccount, Store, StoreError};

/// `?limit=N` on the list.
#[derive(Deserialize)]
struct Page {
    limit: Option<i64>,
}

type Answer<T> = Result<Json<T>, (StatusCode, String)>;

fn failed(e: StoreError) -> (StatusCode, String) {
    (StatusCode::INTERNAL_SERVER_ERROR, e)
}

/// `GET /health`, `GET /accounts?limit=N`, `GET /accounts/{id}`, `POST /accounts`.
pub fn app(store: Store) -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/accounts", get(list).post(create))
        .route("/accounts/{id}", get(show))
        .with_state(store)
}

async fn list(State(store): State<Store>, Query(page): Query<Page>) -> Answer<Vec<Account>> {
    let limit = page.limit.unwrap_or(20).clamp(1, 100);
    store.page(limit).await.map(Json).map_err(failed)
}

async fn show(State(store): State<Store>, Path(id): Path<i64>) -> Answer<Account> {
    match store.one(id).await.map_err(failed)? {
        Some(account) => Ok(Json(account)),
        None => Err((StatusCode::NOT_FOUND, format!("no account {id}"))),
    }
}

async fn create(State(store): State<Store>, Json(new): Json<NewAccount>) -> Answer<Account> {
    store.open(new).await.map(Json).map_err(failed)
}
