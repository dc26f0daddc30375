//! The connections driver's threads: one single-threaded tokio runtime per client worker,
//! each driving its own share of the users — wrk's design (a thread, an event loop, its
//! connections), not a work-stealing pool.
//!
//! Measured on a no-op endpoint with 2 client workers: the multi-thread runtime spent
//! ≈20 µs of CPU per request where one runtime per thread spends ≈14 µs. Its workers wake
//! each other and steal users back and forth, and on a machine the server shares that CPU
//! is taken from the server. A user's connection, its timer and its task stay on one
//! thread for the whole load.
//!
//! The threads live as long as the load client, so their run-queue delay stays in the
//! process's threads that [`crate::usage`] reads, and their busy time is tokio's own
//! figure, read the same way as a [`Pool`](crate::pool::Pool)'s workers.

use std::future::Future;

use tokio::runtime::Handle;
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::pool::WorkerActivity;

/// `count` threads named `<name>-shard-<k>`, each running a current-thread runtime until
/// the shards are dropped.
pub(super) struct Shards {
    handles: Vec<Handle>,
    /// Dropping a sender ends its thread's runtime (and any task still on it).
    _stops: Vec<oneshot::Sender<()>>,
}

impl Shards {
    pub(super) fn new(name: &str, count: usize) -> Result<Shards> {
        let mut handles = Vec::with_capacity(count);
        let mut stops = Vec::with_capacity(count);
        for k in 0..count {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| Error::io(format!("starting the {name} shard {k}'s runtime"), e))?;
            handles.push(runtime.handle().clone());
            let (stop, stopped) = oneshot::channel::<()>();
            std::thread::Builder::new()
                .name(format!("{name}-shard-{k}"))
                .spawn(move || {
                    runtime.block_on(async {
                        let _ = stopped.await;
                    });
                })
                .map_err(|e| Error::io(format!("starting the {name} shard {k}'s thread"), e))?;
            stops.push(stop);
        }
        Ok(Shards {
            handles,
            _stops: stops,
        })
    }

    /// Spreads `users` over the shards as evenly as they go (shard k gets users k, k +
    /// count, …) and spawns `load(users_k)` on each shard that has any.
    pub(super) fn spread<F, T>(
        &self,
        users: usize,
        load: impl Fn(usize) -> F,
    ) -> Vec<tokio::task::JoinHandle<T>>
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        let count = self.handles.len();
        self.handles
            .iter()
            .enumerate()
            .map(|(k, handle)| (handle, users / count + usize::from(k < users % count)))
            .filter(|(_, share)| *share > 0)
            .map(|(handle, share)| handle.spawn(load(share)))
            .collect()
    }

    /// Each shard's busy time and parks so far, by index, from tokio's metrics.
    pub(super) fn activity(&self) -> Vec<WorkerActivity> {
        self.handles
            .iter()
            .map(|handle| {
                let metrics = handle.metrics();
                WorkerActivity {
                    busy: metrics.worker_total_busy_duration(0),
                    parks: metrics.worker_park_count(0),
                }
            })
            .collect()
    }

    /// Whether every shard is parked: tokio publishes a thread's busy time when it parks.
    pub(super) fn parked(&self) -> bool {
        self.handles
            .iter()
            .all(|handle| handle.metrics().worker_park_unpark_count(0) % 2 == 1)
    }
}
