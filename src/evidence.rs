//! Runtime evidence: what the server pool's workers did while a claim measured — which
//! worker was busy and for how long, how often each parked, how many tasks were alive —
//! from tokio's stable metrics, so a "blocks its worker" verdict shows the worker; and
//! on both sides of every load, the machine's CPU and the load client's busy share
//! ([`Usage`]), so a figure capped by perfshape or the machine says so.

use std::time::Instant;

use crate::claim::Notes;
use crate::error::Result;
use crate::pool::Window;
use crate::target::Target;
use crate::usage::{Usage, UsageMeter};

/// What one load saw around it.
#[derive(Clone, Debug)]
struct Seen {
    length: std::time::Duration,
    server: Option<Window>,
    usage: Usage,
}

/// The activity around each load a measure runs; shared between the measure that records
/// it and the report that shows it. A running service's workers are not ours to read: for
/// a URL target only the machine and the load client are.
#[derive(Clone, Debug, Default)]
pub struct Evidence(Notes<Seen>);

impl Evidence {
    /// Runs `load` on `target`, reading the machine, the load client's pool and (when
    /// perfshape serves the target) the server's pool around it.
    pub fn observe<T>(&self, target: &Target, load: impl FnOnce() -> Result<T>) -> Result<T> {
        let meter = UsageMeter::start(target.client(), target.served().map(|s| s.pool()));
        let started = Instant::now();
        let done = load()?;
        let length = started.elapsed();
        let (usage, server) = meter.finish();
        self.0.push(Seen {
            length,
            server,
            usage,
        });
        Ok(done)
    }

    /// The last load observed: how long it took and what the machine and the pools did.
    pub fn last(&self) -> Option<(std::time::Duration, Usage)> {
        self.0.last().map(|s| (s.length, s.usage))
    }

    /// The median load (by length), as a line of a report: `runtime over the median 10
    /// concurrent /report: worker 0 busy 204 ms of 205 ms …; machine 2 cores 40% busy;
    /// load client 12% busy; server 50% busy`.
    pub fn describe(&self, what: &str) -> Option<String> {
        let mut seen = self.0.to_vec();
        seen.sort_by_key(|s| s.length);
        let median = seen.get(seen.len() / 2)?;
        Some(match &median.server {
            Some(window) => format!("runtime over the median {what}: {window}; {}", median.usage),
            None => format!("over the median {what}: {}", median.usage),
        })
    }
}
