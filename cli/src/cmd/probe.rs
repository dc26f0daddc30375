//! `perfshape probe URL`: where a running service's throughput stops growing.

use std::time::Duration;

use perfshape::claim::artifact_dir;

use super::files::{file_name, write};
use crate::exit::Exit;

/// Raise concurrency step by step against a URL and report where throughput stops
/// growing: "behaves like a blocking pool of ≈k".
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The endpoint, e.g. http://127.0.0.1:8080/blocking?ms=20.
    url: String,
    /// The highest concurrency tried (steps double from 1 until requests queue, then the
    /// knee is narrowed between two of them).
    #[arg(long, default_value_t = 64)]
    max_concurrency: usize,
    /// The least time each step offers load, in milliseconds (a step lasts longer when
    /// its requests need it); by default 500, or one request's time where that is longer.
    /// A step given shorter than one request is refused.
    #[arg(long)]
    step_ms: Option<u64>,
    /// Seconds before one request counts as failed.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let Args {
            url,
            max_concurrency,
            step_ms,
            timeout,
        } = self;
        let limits = perfshape::client::Limits {
            request_timeout: Duration::from_secs(timeout),
            run_deadline: Duration::from_secs(timeout + 60),
        };
        // Parse and connect first: a typo or a dead host fails here, before any load.
        let (target, path) = perfshape::Target::builder()
            .limits(limits)
            .driver(perfshape::client::Driver::Connections)
            .split_url(&url)?;
        let endpoint = target.checked_get(&path)?;
        let settings = perfshape::probe::ProbeSettings {
            max_concurrency,
            step: Duration::from_millis(step_ms.unwrap_or(500)),
            step_chosen: step_ms.is_some(),
        };
        let step_ms = settings.step.as_millis();
        eprintln!(
            "probing {url} at concurrency 1, 2, 4, … up to {max_concurrency}, then the knee narrowed ({step_ms} ms each at the least) …"
        );
        let report = perfshape::probe::probe(target.client(), &endpoint.url(), settings)?;
        println!("{report}");
        let path = artifact_dir().join(format!("probe-{}.json", file_name(&url)));
        write(
            &path,
            &serde_json::to_string_pretty(&report).unwrap_or_default(),
        )?;
        eprintln!("raw figures: {}", path.display());
        Ok(Exit::Holds)
    }
}
