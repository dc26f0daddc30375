//! One service, two builds: the base (main), whose `/report` awaits 20 ms, and a candidate
//! (a pull request) whose handler also computes for EXTRA_MS more per request — the extra
//! work a regression adds, on the worker, as real code would. `perfshape compare` starts
//! both from commands and decides whether the candidate is slower:
//!
//! ```sh
//! cargo build --release --example two_builds
//! perfshape compare --path /report \
//!     --base-cmd 'target/release/examples/two_builds 0' \
//!     --candidate-cmd 'target/release/examples/two_builds 2'
//! ```
//!
//! `two_builds EXTRA_MS [WORKERS]` listens on 127.0.0.1:$PORT (the port `perfshape compare`
//! gives it) on a pool of WORKERS (default 2) until it is stopped (at most 10 minutes).
//! `scripts/compare-error-rates.py` measures the comparison's error rates on it.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use axum::Router;
use axum::routing::get;
use perfshape::{PoolSettings, runtime::Pool, runtime::Server};

/// What both builds wait for per request.
const WAIT: Duration = Duration::from_millis(20);

/// Computes for `work`: the CPU time a heavier handler spends, never yielding its worker.
fn compute_for(work: Duration) -> u64 {
    let started = Instant::now();
    let mut x = 0u64;
    while started.elapsed() < work {
        for _ in 0..1_000 {
            x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
        }
    }
    x
}

fn main() -> perfshape::Result<()> {
    let arg = |i: usize, what: &str, default: Option<u64>| -> u64 {
        match std::env::args().nth(i) {
            Some(text) => text.parse().unwrap_or_else(|_| {
                eprintln!("two_builds: {what} {text:?} is not a whole number");
                std::process::exit(2)
            }),
            None => default.unwrap_or_else(|| {
                eprintln!("usage: two_builds EXTRA_MS [WORKERS] (listens on 127.0.0.1:$PORT)");
                std::process::exit(2)
            }),
        }
    };
    let extra = Duration::from_millis(arg(1, "EXTRA_MS", None));
    let workers = arg(2, "WORKERS", Some(2)) as usize;
    let port: u16 = match std::env::var("PORT").ok().and_then(|p| p.parse().ok()) {
        Some(port) => port,
        None => {
            eprintln!("two_builds: PORT is not set to a port number");
            std::process::exit(2)
        }
    };
    let router = Router::new().route(
        "/report",
        get(move || async move {
            let computed = compute_for(extra);
            tokio::time::sleep(WAIT).await;
            format!("report {}", computed % 10)
        }),
    );
    let pool = Pool::new("server", PoolSettings::workers(workers)?)?;
    let server = Server::serve_on(pool, router, SocketAddr::from(([127, 0, 0, 1], port)))?;
    println!(
        "two_builds: /report does {} ms more work, on http://{}",
        extra.as_millis(),
        server.addr()
    );
    std::thread::sleep(Duration::from_secs(600));
    Ok(())
}
