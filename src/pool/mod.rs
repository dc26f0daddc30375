//! A constrained tokio runtime: a fixed number of workers and a capped blocking pool.
//!
//! The experiments are about what happens when a handful of threads is all there is, so a
//! [`Pool`] is built explicitly (never `#[tokio::main]`'s defaults) on its own named OS
//! threads. The server and the load generator each get their own, so a server whose
//! workers are all blocked can never stall the client that measures it. Every pool clocks
//! its workers' runs between parks while a claim records ([`timeline`]).

pub(crate) mod sampler;
pub(crate) mod timeline;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use tokio::runtime::{Handle, Runtime};

pub use crate::vocab::{PoolSettings, Scheduler};

use self::timeline::Timeline;
use crate::error::Result;

/// A multi-thread tokio runtime with `workers` worker threads and at most `max_blocking`
/// blocking threads, whose threads are named `<name>-<k>`.
///
/// tokio starts the workers when the runtime is built, so `k < workers` are the workers
/// and later numbers are blocking threads. Dropping a pool shuts it down in the background:
/// a worker stuck in `std::thread::sleep` finishes its sleep on its own, and the drop
/// returns at once instead of waiting for it.
///
/// ```
/// use perfshape::runtime::Pool;
///
/// let pool = Pool::workers("example", 2)?;
/// assert_eq!(pool.settings().workers, 2);
/// assert_eq!(pool.block_on(async { 6 * 7 }), 42);
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Debug)]
pub struct Pool {
    runtime: Option<Runtime>,
    settings: PoolSettings,
    name: String,
    timeline: Arc<Timeline>,
}

impl Pool {
    /// Builds a pool named `name` with the given settings.
    pub fn new(name: &str, settings: PoolSettings) -> Result<Pool> {
        let counter = Arc::new(AtomicUsize::new(0));
        let prefix = name.to_string();
        let timeline = Arc::new(Timeline::default());
        let (started, unparked, parked) = (
            Arc::clone(&timeline),
            Arc::clone(&timeline),
            Arc::clone(&timeline),
        );
        let mut builder = tokio::runtime::Builder::new_multi_thread();
        builder
            .worker_threads(settings.workers)
            .max_blocking_threads(settings.max_blocking)
            .thread_name_fn(move || format!("{prefix}-{}", counter.fetch_add(1, Ordering::Relaxed)))
            .on_thread_start(move || started.started())
            .on_thread_unpark(move || unparked.unparked())
            .on_thread_park(move || parked.parked())
            .enable_all();
        scheduler(&mut builder, settings.scheduler)?;
        let runtime = builder
            .build()
            .map_err(|e| crate::Error::io(format!("starting the {name} runtime"), e))?;
        Ok(Pool {
            runtime: Some(runtime),
            settings,
            name: name.to_string(),
            timeline,
        })
    }

    /// A pool with `workers` workers and tokio's default blocking cap.
    pub fn workers(name: &str, workers: usize) -> Result<Pool> {
        Pool::new(name, PoolSettings::workers(workers)?)
    }

    /// The settings this pool was built with.
    pub fn settings(&self) -> PoolSettings {
        self.settings
    }

    /// The thread-name prefix.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The workers' runs between parks, while a claim records.
    pub(crate) fn timeline(&self) -> &Arc<Timeline> {
        &self.timeline
    }

    /// A handle for spawning onto this pool.
    pub fn handle(&self) -> &Handle {
        self.runtime().handle()
    }

    /// Runs `future` to completion, driving it from the calling thread while everything it
    /// spawns runs on the pool's workers.
    ///
    /// Called from inside another runtime — a `#[tokio::test] async fn`, of either flavour
    /// — it drives the future from a thread of its own instead: tokio refuses to block a
    /// thread that is driving a runtime ("Cannot start a runtime from within a runtime").
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send,
        F::Output: Send,
    {
        if inside_a_runtime() {
            std::thread::scope(|scope| {
                std::thread::Builder::new()
                    .name(format!("{}-block-on", self.name))
                    .spawn_scoped(scope, || self.runtime().block_on(future))
                    .map(|thread| thread.join())
                    .unwrap_or_else(|e| panic!("perfshape: cannot start a thread: {e}"))
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
        } else {
            self.runtime().block_on(future)
        }
    }

    /// What the pool's workers have done so far, from tokio's stable runtime metrics.
    /// Subtract an earlier reading ([`Activity::since`]) for a window.
    pub fn activity(&self) -> Activity {
        let metrics = self.handle().metrics();
        Activity {
            at: Instant::now(),
            workers: (0..metrics.num_workers())
                .map(|w| WorkerActivity {
                    busy: metrics.worker_total_busy_duration(w),
                    parks: metrics.worker_park_count(w),
                })
                .collect(),
            alive_tasks: metrics.num_alive_tasks(),
        }
    }

    /// Reads [`activity`](Self::activity) once every worker is parked (or after `limit`):
    /// tokio publishes a worker's busy time when it parks, so a worker that has just
    /// finished a blocking handler has not counted it yet.
    pub fn settled_activity(&self, limit: Duration) -> Activity {
        let deadline = Instant::now() + limit;
        let metrics = self.handle().metrics();
        // An odd park/unpark count means the worker is parked right now.
        let all_parked =
            || (0..metrics.num_workers()).all(|w| metrics.worker_park_unpark_count(w) % 2 == 1);
        while !all_parked() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_micros(200));
        }
        self.activity()
    }

    fn runtime(&self) -> &Runtime {
        self.runtime
            .as_ref()
            .expect("the runtime is only taken out in Drop")
    }
}

/// Whether this thread is inside a tokio runtime's context, where blocking on another
/// runtime panics. A conservative test: a `spawn_blocking` thread has the context too,
/// and would not panic, but costs only a thread hop.
pub(crate) fn inside_a_runtime() -> bool {
    tokio::runtime::Handle::try_current().is_ok()
}

/// Applies `scheduler`'s switch to `builder` (tokio's unstable options, with
/// `--cfg tokio_unstable`; without it only the default is accepted).
fn scheduler(builder: &mut tokio::runtime::Builder, scheduler: Scheduler) -> Result<()> {
    match scheduler.check()? {
        Scheduler::Default => {}
        #[cfg(tokio_unstable)]
        Scheduler::NoLifoSlot => {
            builder.disable_lifo_slot();
        }
        #[cfg(tokio_unstable)]
        Scheduler::EagerDriverHandoff => {
            builder.enable_eager_driver_handoff();
        }
        // Refused by `check` above: only the default is available without the cfg.
        #[cfg(not(tokio_unstable))]
        _ => {}
    }
    let _ = builder;
    Ok(())
}

impl Drop for Pool {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A reading of a pool's workers: cumulative busy time and park counts, and the tasks
/// alive. Two readings make a window ([`Activity::since`]): the runtime evidence of which
/// worker was busy, and for how long, while a claim measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Activity {
    /// When it was read.
    #[serde(skip)]
    pub at: Instant,
    /// Each worker, by index.
    pub workers: Vec<WorkerActivity>,
    /// Tasks alive in the runtime when read.
    pub alive_tasks: usize,
}

/// One worker's cumulative figures (or, after [`Activity::since`], its figures over a
/// window).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct WorkerActivity {
    /// Time spent running tasks (a blocking handler counts: it runs inside a task).
    #[serde(with = "crate::vocab::millis")]
    pub busy: Duration,
    /// Times the worker parked for lack of work.
    pub parks: u64,
}

impl Activity {
    /// The window from `earlier` to this reading: busy time and parks per worker, and the
    /// length of the window.
    pub fn since(&self, earlier: &Activity) -> Window {
        Window {
            length: self.at.saturating_duration_since(earlier.at),
            workers: self
                .workers
                .iter()
                .zip(&earlier.workers)
                .map(|(now, then)| WorkerActivity {
                    busy: now.busy.saturating_sub(then.busy),
                    parks: now.parks.saturating_sub(then.parks),
                })
                .collect(),
            alive_tasks: self.alive_tasks,
        }
    }
}

/// What a pool's workers did over a window: the runtime evidence behind a verdict.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Window {
    /// How long the window lasted.
    #[serde(with = "crate::vocab::millis")]
    pub length: Duration,
    /// Each worker's busy time and parks in the window.
    pub workers: Vec<WorkerActivity>,
    /// Tasks alive at the end of the window.
    pub alive_tasks: usize,
}

impl std::fmt::Display for Window {
    /// `worker 0 busy 201 ms of 203 ms (99%), parked 1×; …; 3 tasks alive`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let length = self.length.as_secs_f64().max(f64::MIN_POSITIVE);
        for (i, w) in self.workers.iter().enumerate() {
            write!(
                f,
                "worker {i} busy {:.0} ms of {:.0} ms ({:.0}%), parked {}×; ",
                w.busy.as_secs_f64() * 1e3,
                length * 1e3,
                100.0 * w.busy.as_secs_f64() / length,
                w.parks
            )?;
        }
        write!(f, "{} tasks alive", self.alive_tasks)
    }
}
