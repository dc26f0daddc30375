//! What a broken claim looks like: we claim, wrongly, that a blocking server is flat in N
//! like an async one (fan-out of 20 on 2 workers within 2 work times). The report printed
//! is what a failing shape test shows; the process exits non-zero, as the strict gate does.
//!
//! `cargo run --release --example broken_claim`

use std::time::Duration;

use perfshape::{
    Claim, ClientStrategy, Expected, Lifecycle, LoadClient, Measure, Pool, Server, ServerStrategy,
};

fn main() -> perfshape::Result {
    let work = Duration::from_millis(20);
    let server = Server::start(Pool::workers("server", 2)?)?;
    let client = LoadClient::new(Pool::workers("client", 2)?, Lifecycle::Shared)?;
    let url = server.url(&ServerStrategy::Blocking, work)?;
    let checked = Claim::bound(
        "a blocking server is flat in N (it is not)",
        Measure::duration("fan-out client → blocking server", || {
            Ok(client
                .run(ClientStrategy::FanOut, &url, 20)?
                .require_ok()?
                .wall)
        }),
        Expected::duration(work, "1 × 20 ms"),
    )
    .within(1.0, 2.0)
    .context("n", 20)
    .context("work", "20 ms")
    .context("server pool", server.pool_settings())
    .check()?;
    println!(
        "{}",
        serde_json::to_string_pretty(&checked.summary()).unwrap_or_default()
    );
    checked.gate()
}
