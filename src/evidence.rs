//! Runtime evidence: what the server pool's workers did while a claim measured — which
//! worker was busy and for how long, how often each parked, how many tasks were alive —
//! from tokio's stable metrics, so a "blocks its worker" verdict shows the worker.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::error::Result;
use crate::pool::{Pool, Window};

/// How long a pool may take to park after a load, so its busy time is all counted.
const SETTLE: Duration = Duration::from_millis(50);

/// The server pool's activity over each load a measure runs; shared between the measure that records it and the report that shows it.
/// Empty (and
/// silent) when perfshape does not serve the target: a running service's workers are
/// not ours to read.
#[derive(Clone, Debug, Default)]
pub(crate) struct Evidence(Arc<Mutex<Vec<Window>>>);

impl Evidence {
    /// Runs `load`, reading the server pool's activity around it when there is a pool.
    pub(crate) fn observe<T>(
        &self,
        pool: Option<&Pool>,
        load: impl FnOnce() -> Result<T>,
    ) -> Result<T> {
        let before = pool.map(|p| p.settled_activity(SETTLE));
        let done = load()?;
        if let (Some(pool), Some(before)) = (pool, before) {
            let window = pool.settled_activity(SETTLE).since(&before);
            self.0
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(window);
        }
        Ok(done)
    }

    /// The median window (by length), as a line of a report:
    /// `runtime over the median 10 concurrent /report: worker 0 busy 204 ms of 205 ms …`.
    pub(crate) fn describe(&self, what: &str) -> Option<String> {
        let mut windows = self.0.lock().unwrap_or_else(|p| p.into_inner()).clone();
        windows.sort_by_key(|window| window.length);
        let window = windows.get(windows.len() / 2)?;
        Some(format!("runtime over the median {what}: {window}"))
    }
}
