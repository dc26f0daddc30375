//! A small orders API, the kind a team would gate: orders in an in-memory store, a health
//! check, and a daily report that asks the ledger service for each customer's balance.
//!
//! The ledger client is where the mistake lives. [`Ledger::Blocking`] is a synchronous
//! client called straight from an async handler — the shape of `reqwest::blocking`, a
//! sync database driver or `std::fs` on a slow disk: for its 20 ms the handler holds the
//! tokio worker it runs on, and nothing else that worker should run can run.
//! [`Ledger::Offloaded`] moves the same synchronous call to tokio's blocking pool with
//! `spawn_blocking`; [`Ledger::Async`] awaits an async client instead. The ledger's 20 ms
//! is simulated with a sleep of the matching kind, so the example needs no other service.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Json, Router};
use serde::{Deserialize, Serialize};

/// How long one call to the ledger service takes.
pub(crate) const LEDGER_LATENCY: Duration = Duration::from_millis(20);

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
        let lookup = move || {
            // The synchronous client's network round trip.
            std::thread::sleep(LEDGER_LATENCY);
            figure
        };
        match self {
            Ledger::Blocking => lookup(),
            Ledger::Offloaded => tokio::task::spawn_blocking(lookup).await.unwrap_or(0),
            Ledger::Async => {
                tokio::time::sleep(LEDGER_LATENCY).await;
                figure
            }
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

async fn create(State(state): State<AppState>, Json(mut order): Json<Order>) -> Json<Order> {
    let mut orders = state.orders.lock().unwrap_or_else(|p| p.into_inner());
    order.id = orders.len() as u64 + 1;
    orders.push(order.clone());
    Json(order)
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
