//! The test helper, as teams write it: `spawn_app()` serves the app for one test and
//! returns its address and a client. The watch is installed here, once: the app holds it,
//! and it decides when the test drops the app.

#[path = "../../examples/orders/service.rs"]
#[allow(dead_code, unreachable_pub)]
mod service;

use perfshape::{PoolSettings, Target, WatchGuard};

pub(crate) use service::TOKEN;

/// The app a test talks to: its address, a client, and the watch that decides at the end.
pub(crate) struct TestApp {
    pub(crate) address: String,
    pub(crate) client: reqwest::Client,
    _watch: WatchGuard,
}

/// The orders service on one worker of its own, at a free port on 127.0.0.1, watched for
/// as long as the test holds it.
pub(crate) async fn spawn_app() -> TestApp {
    let target = Target::serve(PoolSettings::workers(1).unwrap(), service::app(ledger()))
        .expect("the app, served");
    TestApp {
        address: target
            .url_of("/")
            .unwrap()
            .trim_end_matches('/')
            .to_string(),
        client: reqwest::Client::new(),
        _watch: target.watch().expect("a watch").gate_on_drop(),
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
