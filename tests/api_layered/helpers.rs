//! The test helper that serves the app on the test's own runtime, as many teams' do
//! (`tokio::spawn(axum::serve(listener, app))`): the watch's layer goes on the router, and
//! the app it returns holds the watch, which decides when the test drops it.

#[path = "../../examples/orders/service.rs"]
#[allow(dead_code, unreachable_pub)]
mod service;

use perfshape::{Watch, WatchGuard};

pub(crate) use service::TOKEN;

/// The app a test talks to: its address, a client, and the watch that decides at the end.
pub(crate) struct TestApp {
    pub(crate) address: String,
    pub(crate) client: reqwest::Client,
    _watch: WatchGuard,
}

/// The orders service on the test's runtime, at a free port on 127.0.0.1, its router
/// under the watch's layer for as long as the test holds the app.
pub(crate) async fn spawn_app() -> TestApp {
    let (layer, watch) = Watch::layer();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = format!("http://{}", listener.local_addr().expect("its address"));
    let app = service::app(ledger()).layer(layer);
    tokio::spawn(async move { axum::serve(listener, app).await.expect("served") });
    TestApp {
        address,
        client: reqwest::Client::new(),
        _watch: watch.gate_on_drop(),
    }
}

/// The ledger client the app is built with: the async one, or the blocking twin where
/// `ORDERS_LEDGER=blocking` asks (`twins.rs`).
pub(crate) fn ledger() -> service::Ledger {
    match std::env::var("ORDERS_LEDGER").as_deref() {
        Ok("blocking") => service::Ledger::Blocking,
        _ => service::Ledger::Async,
    }
}
