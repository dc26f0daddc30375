//! The routes and their handlers, the same in every build.

use axum::extract::{Path, Query, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;

use crate::{ApiError, Delivered, Delivery, Item, Movement, NewItem, Stock, Store};

/// The token the writes require (`Authorization: Bearer …`).
pub const TOKEN: &str = "inventory-secret";

/// The largest page `GET /items` serves.
const MAX_PAGE: u32 = 100;

/// The service: `GET /health`, `GET /items?after=&limit=`, `POST /items`,
/// `GET /items/{sku}`, `POST /items/{sku}/movements` and `POST /deliveries`.
pub fn app(store: Store) -> Router {
    Router::new()
        .route("/health", get(health))
        .route("/items", get(page).post(create))
        .route("/items/{sku}", get(item))
        .route("/items/{sku}/movements", post(record))
        .route("/deliveries", post(deliver))
        .with_state(store)
}

async fn health() -> &'static str {
    "ok"
}

async fn item(State(store): State<Store>, Path(sku): Path<String>) -> Result<Json<Item>, ApiError> {
    match store.item(sku.clone()).await? {
        Some(item) => Ok(Json(item)),
        None => Err(ApiError::NotFound(sku)),
    }
}

/// `GET /items`'s query: the key to start after, and how many.
#[derive(Deserialize)]
struct PageQuery {
    #[serde(default)]
    after: String,
    limit: Option<u32>,
}

async fn page(
    State(store): State<Store>,
    Query(query): Query<PageQuery>,
) -> Result<Json<Vec<Item>>, ApiError> {
    let limit = query.limit.unwrap_or(20);
    if limit == 0 || limit > MAX_PAGE {
        return Err(ApiError::BadRequest(format!(
            "limit {limit} is outside 1..={MAX_PAGE}"
        )));
    }
    Ok(Json(store.page(query.after, limit).await?))
}

async fn create(
    State(store): State<Store>,
    headers: HeaderMap,
    Json(new): Json<NewItem>,
) -> Result<(StatusCode, Json<Item>), ApiError> {
    authorized(&headers)?;
    Ok((StatusCode::CREATED, Json(store.create(new).await?)))
}

async fn record(
    State(store): State<Store>,
    headers: HeaderMap,
    Path(sku): Path<String>,
    Json(movement): Json<Movement>,
) -> Result<(StatusCode, Json<Stock>), ApiError> {
    authorized(&headers)?;
    match store.record(sku.clone(), movement).await? {
        Some(stock) => Ok((StatusCode::CREATED, Json(stock))),
        None => Err(ApiError::NotFound(sku)),
    }
}

async fn deliver(
    State(store): State<Store>,
    headers: HeaderMap,
    Json(delivery): Json<Delivery>,
) -> Result<(StatusCode, Json<Delivered>), ApiError> {
    authorized(&headers)?;
    let lines = store.deliver(delivery).await?;
    Ok((StatusCode::CREATED, Json(Delivered { lines })))
}

/// The writes' bearer token.
fn authorized(headers: &HeaderMap) -> Result<(), ApiError> {
    let expected = format!("Bearer {TOKEN}");
    match headers.get(AUTHORIZATION) {
        Some(value) if value.as_bytes() == expected.as_bytes() => Ok(()),
        _ => Err(ApiError::Unauthorized),
    }
}
