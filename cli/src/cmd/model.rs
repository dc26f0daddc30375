//! `perfshape model`: predictions, running nothing.

use std::path::PathBuf;
use std::time::Duration;

use perfshape::runtime::DEFAULT_MAX_BLOCKING;
use perfshape_experiments::experiment::Experiment;

use crate::exit::Exit;

/// Predict with the model, running nothing: a fixture's scenarios, or the what-if the
/// flags describe (more workers? a bigger blocking pool? a connection cap?).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// A fixture whose scenarios to predict; without it, the flags describe one.
    fixture: Option<PathBuf>,
    #[command(flatten)]
    what_if: WhatIf,
}

/// One scenario described on the command line.
#[derive(clap::Args)]
struct WhatIf {
    /// Server strategy: blocking, async, offload, mixed, cpu, lock.
    #[arg(long, default_value = "blocking")]
    server: String,
    /// Server worker threads.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Server blocking-thread cap.
    #[arg(long, default_value_t = DEFAULT_MAX_BLOCKING)]
    max_blocking: usize,
    /// Client strategy: sequential, fan-out, sync-over-async.
    #[arg(long, default_value = "fan-out")]
    client: String,
    /// Threads for sync-over-async.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Requests.
    #[arg(long, short, default_value_t = 20)]
    n: usize,
    /// Work per request, in milliseconds.
    #[arg(long, default_value_t = 20)]
    work_ms: u64,
    /// For --server mixed: the blocking part, in milliseconds (the rest of the work waits).
    #[arg(long)]
    block_ms: Option<u64>,
    /// Connections per host the client may open.
    #[arg(long)]
    connection_cap: Option<usize>,
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let models: Vec<(String, perfshape_experiments::model::Model)> = match self.fixture {
            Some(path) => Experiment::load(&path)?
                .rows
                .into_iter()
                .filter_map(|row| {
                    let model = row.workload.model()?;
                    Some((format!("{} {}", row.id, row.label), model))
                })
                .collect(),
            None => vec![("what-if".to_string(), self.what_if.model()?)],
        };
        println!("| scenario | model | wall | throughput | waves | p50 | p99 |");
        println!("|---|---|---:|---:|---:|---:|---:|");
        for (name, model) in models {
            let p = model.predict()?;
            let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
            println!(
                "| {name} | {} | {} | {:.1}/s | {} | {} | {} |",
                model,
                ms(p.wall),
                p.throughput,
                p.waves,
                p.latency.map(|l| ms(l.p50)).unwrap_or_default(),
                p.latency.map(|l| ms(l.p99)).unwrap_or_default(),
            );
        }
        Ok(Exit::Holds)
    }
}

impl WhatIf {
    fn model(&self) -> perfshape_experiments::Result<perfshape_experiments::model::Model> {
        let work = Duration::from_millis(self.work_ms);
        let mut server: perfshape_experiments::scenario::ServerStrategy = self.server.parse()?;
        if let perfshape_experiments::scenario::ServerStrategy::Mixed { .. } = server {
            let block = Duration::from_millis(self.block_ms.unwrap_or(self.work_ms / 2));
            server = perfshape_experiments::scenario::ServerStrategy::Mixed {
                block: block.min(work),
                wait: work.saturating_sub(block),
            };
        }
        let mut client: perfshape::client::ClientStrategy = self.client.parse()?;
        if let perfshape::client::ClientStrategy::SyncOverAsync { threads } = &mut client {
            *threads = self.threads;
        }
        // A cap is a client lifecycle; the scenario validates it and gives it to the model.
        let lifecycle = match self.connection_cap {
            Some(per_host) => perfshape::client::Lifecycle::ConnectionCap { per_host },
            None => perfshape::client::Lifecycle::Shared,
        };
        let scenario = perfshape_experiments::scenario::Scenario::builder()
            .server(server)
            .workers(self.workers)
            .max_blocking(self.max_blocking)
            .client(client)
            .lifecycle(lifecycle)
            .requests(self.n)
            .work(work)
            .build()?;
        Ok(scenario.model())
    }
}
