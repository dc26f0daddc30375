//! `perfshape load URL`: a closed loop for a while, and what the client saw.

use std::time::Duration;

use perfshape::client::ClientStrategy;
use perfshape::client::Driver;
use perfshape::runtime::MAX_REQUESTS;

use crate::exit::Exit;

/// Offer a closed loop of users to a URL for a while and print what the client saw
/// (sent = ok + failed, throughput, latency percentiles): a small wrk.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The endpoint, e.g. http://127.0.0.1:8080/health.
    url: String,
    /// Concurrent users, each sending its next request as soon as its response is in.
    #[arg(long, default_value_t = 16)]
    users: usize,
    /// How long to offer load, in seconds.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=600))]
    seconds: u64,
    /// Pause between a response and the user's next request, in milliseconds.
    #[arg(long, default_value_t = 0)]
    think_ms: u64,
    /// Load-generator worker threads.
    #[arg(long, default_value_t = 2)]
    client_workers: usize,
    /// What sends the requests: connections (one HTTP/1 connection per user, the load
    /// driver) or reqwest (the client the seed strategies use).
    #[arg(long, value_enum, default_value_t = DriverArg::Connections)]
    driver: DriverArg,
    /// Instead of a closed loop, send N requests at once (after a warm-up fan-out that
    /// opens their connections) and print the wall time until the last is answered.
    #[arg(long, value_name = "N", conflicts_with_all = ["users", "seconds", "think_ms"])]
    fan_out: Option<usize>,
}

/// [`Driver`], as the command line spells it.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum DriverArg {
    Connections,
    Reqwest,
}

impl From<DriverArg> for Driver {
    fn from(driver: DriverArg) -> Driver {
        match driver {
            DriverArg::Connections => Driver::Connections,
            DriverArg::Reqwest => Driver::Reqwest,
        }
    }
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let Args {
            url,
            users,
            seconds,
            think_ms,
            client_workers,
            driver,
            fan_out,
        } = self;
        let (target, path) = perfshape::Target::builder()
            .client_workers(client_workers)
            .driver(driver.into())
            .split_url(&url)?;
        let endpoint = target.checked_get(&path)?;
        if let Some(n) = fan_out {
            endpoint.run(ClientStrategy::FanOut, n)?;
            let run = target
                .client()
                .run(ClientStrategy::FanOut, &endpoint.url(), n)?;
            let summary = run.summary(Duration::from_millis(1));
            println!(
                "fan-out of {n}: sent {} = ok {} + failed {}{}; wall {:.1} ms",
                summary.sent,
                summary.ok,
                summary.failed,
                retried(&summary),
                summary.wall.as_secs_f64() * 1e3
            );
            return Ok(Exit::Holds);
        }
        let strategy = ClientStrategy::ClosedLoop {
            users,
            think: Duration::from_millis(think_ms),
            ramp: Duration::ZERO,
            duration: Duration::from_secs(seconds),
        };
        // Connections first, then the measured loop.
        endpoint.run(ClientStrategy::FanOut, users)?;
        let run = target
            .client()
            .run(strategy, &endpoint.url(), MAX_REQUESTS)?;
        let summary = run.summary(Duration::from_millis(1));
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!(
            "{} users for {seconds} s: sent {} = ok {} + failed {}{}; {:.1} requests/s",
            users,
            summary.sent,
            summary.ok,
            summary.failed,
            retried(&summary),
            summary.throughput
        );
        if let Some(l) = summary.latency {
            println!(
                "latency: min {:.3} ms, mean {:.3} ms, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
                ms(l.min),
                ms(l.mean),
                ms(l.p50),
                ms(l.p99),
                ms(l.max)
            );
        }
        if let Some(cut_short) = summary.cut_short {
            println!("{cut_short}: a shorter load than asked for");
        }
        Ok(Exit::Holds)
    }
}

/// ` (3 sent again on a new connection)`: requests whose first connection the server closed
/// or reset before answering; nothing when there were none.
fn retried(summary: &perfshape::load::Summary) -> String {
    match summary.retried {
        0 => String::new(),
        n => format!(" ({n} sent again on a new connection)"),
    }
}
