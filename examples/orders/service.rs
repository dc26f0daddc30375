//! A small orders API, the kind a team would gate: orders in a store, a health check, a
//! `POST /orders` that takes a JSON order with a bearer token, and a daily report that
//! asks the ledger service for each customer's balance.
//!
//! The ledger client is where the mistake lives. [`Ledger::Blocking`] is a synchronous
//! client called straight from an async handler — the shape of `reqwest::blocking`, a
//! sync database driver or `std::fs` on a slow disk: while it waits the handler holds the
//! tokio worker it runs on, and nothing else that worker should run can run. The report
//! waits 20 ms for the ledger; a new order waits only 2 ms for the ledger's credit check
//! before its 18 ms store write — the blocking that hides in a tenth of a request.
//! [`Ledger::Offloaded`] moves the same synchronous calls to tokio's blocking pool with
//! `spawn_blocking`; [`Ledger::Async`] awaits an async client instead. The ledger's and
//! the store's latencies are simulated with sleeps of the matching kind, so the example
//! needs no other service.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

/// How long the ledger service takes to answer the report's batch lookup.
pub(crate) const LEDGER_LATENCY: Duration = Duration::from_millis(20);
/// How long the ledger's credit check of one new order takes.
pub(crate) const CREDIT_CHECK: Duration = Duration::from_millis(2);
/// How long the store takes to write a new order (an async database write).
pub(crate) const STORE_WRITE: Duration = Duration::from_millis(18);
/// The token `POST /orders` requires (`Authorization: Bearer …`).
pub(crate) const TOKEN: &str = "orders-secret";

/// How the report handler calls the ledger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ledger {
    /// A synchronous client, called on the async worker: the bug.
    Blocking,
    /// The same synchronous client, on tokio's blocking pool (`spawn_blocking`): a fix.
    Offloaded,
    /// An async client, awaited: the other fix.
    Async,
}

impl Ledger {
    /// The balance the ledger holds for `customer` (a stand-in figure; the call's latency
    /// is the point).
    async fn balance(self, customer: String) -> i64 {
        let figure = customer.len() as i64 * 100;
        self.call(LEDGER_LATENCY).await;
        figure
    }

    /// Whether the ledger lets `customer` spend `cents` (always, here: the 2 ms is the
    /// point).
    async fn credit_check(self, customer: &str, cents: i64) -> bool {
        self.call(CREDIT_CHECK).await;
        !customer.is_empty() && cents >= 0
    }

    /// One round trip to the ledger, taking `latency`, made by this kind of client.
    async fn call(self, latency: Duration) {
        // The synchronous client's network round trip.
        let round_trip = move || std::thread::sleep(latency);
        match self {
            Ledger::Blocking => round_trip(),
            Ledger::Offloaded => {
                let _ = tokio::task::spawn_blocking(round_trip).await;
            }
            Ledger::Async => tokio::time::sleep(latency).await,
        }
    }
}

/// An order as the API takes and returns it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Order {
    /// The store's id.
    #[serde(default)]
    pub(crate) id: u64,
    /// Who ordered.
    pub(crate) customer: String,
    /// The total, in cents.
    pub(crate) cents: i64,
}

/// The report: totals per customer, with the ledger's balance.
#[derive(Debug, Serialize)]
struct Report {
    orders: usize,
    by_customer: BTreeMap<String, (i64, i64)>,
}

#[derive(Clone)]
struct AppState {
    orders: Arc<Mutex<Vec<Order>>>,
    ledger: Ledger,
}

/// The service's router, with a few orders in the store and the given ledger client.
pub(crate) fn app(ledger: Ledger) -> Router {
    let orders = vec![
        Order {
            id: 1,
            customer: "ada".into(),
            cents: 1_250,
        },
        Order {
            id: 2,
            customer: "grace".into(),
            cents: 4_000,
        },
        Order {
            id: 3,
            customer: "ada".into(),
            cents: 720,
        },
    ];
    let state = AppState {
        orders: Arc::new(Mutex::new(orders)),
        ledger,
    };
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/orders", get(list).post(create))
        .route("/orders/{id}", get(one))
        .route("/report", get(report))
        .with_state(state)
}

async fn list(State(state): State<AppState>) -> Json<Vec<Order>> {
    // The std mutex is held only to copy, never across an await: that is fine.
    Json(state.orders.lock().map(|o| o.clone()).unwrap_or_default())
}

async fn one(
    State(state): State<AppState>,
    Path(id): Path<u64>,
) -> Result<Json<Order>, StatusCode> {
    let orders = state
        .orders
        .lock()
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    orders
        .iter()
        .find(|o| o.id == id)
        .cloned()
        .map(Json)
        .ok_or(StatusCode::NOT_FOUND)
}

/// `POST /orders` with `Authorization: Bearer <TOKEN>` and a JSON order: the ledger's
/// credit check (2 ms), then the store's write (18 ms, async).
async fn create(
    State(state): State<AppState>,
    headers: HeaderMap,
    Json(mut order): Json<Order>,
) -> Result<Json<Order>, StatusCode> {
    let authorised = headers
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == format!("Bearer {TOKEN}"));
    if !authorised {
        return Err(StatusCode::UNAUTHORIZED);
    }
    if !state
        .ledger
        .credit_check(&order.customer, order.cents)
        .await
    {
        return Err(StatusCode::PAYMENT_REQUIRED);
    }
    // The store's write; the std mutex below is held only to copy, never across an await.
    tokio::time::sleep(STORE_WRITE).await;
    let mut orders = state.orders.lock().unwrap_or_else(|p| p.into_inner());
    order.id = orders.len() as u64 + 1;
    orders.push(order.clone());
    Ok(Json(order))
}

async fn report(State(state): State<AppState>) -> Json<Report> {
    let orders = state.orders.lock().map(|o| o.clone()).unwrap_or_default();
    let mut by_customer: BTreeMap<String, (i64, i64)> = BTreeMap::new();
    for order in &orders {
        by_customer.entry(order.customer.clone()).or_default().0 += order.cents;
    }
    // One ledger call for the whole report (a batch lookup), 20 ms.
    let balance = state.ledger.balance("all customers".into()).await;
    for totals in by_customer.values_mut() {
        totals.1 = balance;
    }
    Json(Report {
        orders: orders.len(),
        by_customer,
    })
}
