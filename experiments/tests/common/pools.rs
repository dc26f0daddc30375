//! Pools of a chosen size, of the three kinds services have: a tower
//! `ConcurrencyLimitLayer` in front of an async handler, a served router whose handler
//! blocks one of k workers (on tokio's default scheduler and with eager driver hand-off),
//! and a Python service on a k-thread pool (FastAPI's plain `def` endpoints on anyio's
//! limiter, under uvicorn).

use perfshape_experiments::Result;
use std::path::PathBuf;
use std::time::Duration;

use perfshape::{Endpoint, PoolSettings, Target, runtime::Scheduler};
use perfshape_experiments::external::StartedService;

/// What each request does in the Rust kinds: wait 20 ms (async, or blocking its worker).
pub(crate) const WORK_MS: u64 = 20;

/// What each request does in the Python service: sleep 100 ms on its thread. At 20 ms a
/// pool of 12 or 40 asks uvicorn for 600–2000 requests a second, and its process, one
/// event loop and threads under one interpreter lock, runs out of its one core first
/// (0.91 CPUs at 64 callers, measured): the figure is then that core's, not the pool's.
pub(crate) const PYTHON_WORK_MS: u64 = 100;

/// The Python service's sleep where one small pool is claimed rather than a table measured:
/// a pool of five asks uvicorn for 200 requests a second at 25 ms (a fifth of a core, well
/// inside its one), and the probe's 50 ms steps take a quarter of their time at 100 ms
/// (three claims took 42 s).
pub(crate) const PYTHON_SMALL_POOL_WORK_MS: u64 = 25;

/// A kind of pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `ServiceBuilder::new().concurrency_limit(k)` around an async 20 ms wait, on one
    /// worker.
    TowerLimit,
    /// perfshape's demo router on k workers, `/blocking?ms=20` (a `std::thread::sleep`), on
    /// tokio's default scheduler, as a user's target runs: now and then a pool of fewer
    /// than k, because only the worker parked on the I/O driver sees requests arrive and
    /// it runs the one it wakes with (docs/findings.md).
    BlockingWorkers,
    /// The same router on k workers with eager driver hand-off (`Scheduler::one_wave`): a
    /// worker that starts a task hands the driver to a sleeping sibling, so every free
    /// worker sees its request. A pool of k.
    HandoffWorkers,
    /// FastAPI under uvicorn, a `def` endpoint sleeping 100 ms on anyio's k threads.
    PythonThreads,
}

impl Kind {
    /// Every kind, for a table.
    pub(crate) const ALL: [Kind; 4] = [
        Kind::TowerLimit,
        Kind::BlockingWorkers,
        Kind::HandoffWorkers,
        Kind::PythonThreads,
    ];

    /// The kind's name in `PERFSHAPE_POOL_KINDS`: `tower`, `workers`, `handoff`, `python`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::TowerLimit => "tower",
            Kind::BlockingWorkers => "workers",
            Kind::HandoffWorkers => "handoff",
            Kind::PythonThreads => "python",
        }
    }

    /// The kind in a table's words.
    pub(crate) fn words(self) -> &'static str {
        match self {
            Kind::TowerLimit => "tower ConcurrencyLimitLayer",
            Kind::BlockingWorkers => "served router, k blocking workers",
            Kind::HandoffWorkers => "the same, eager driver hand-off",
            Kind::PythonThreads => "FastAPI def on anyio's k threads",
        }
    }
}

/// A pool of `k` of `kind`, and the endpoint that fills it; the Python service's process
/// with it (stopped when dropped).
pub(crate) struct PoolUnderTest {
    /// The endpoint whose requests take the pool.
    pub(crate) endpoint: Endpoint,
    /// The least step of a probe of it: two requests, and at least 50 ms.
    pub(crate) step: Duration,
    /// The service started for it, if it is another process.
    pub(crate) service: Option<StartedService>,
}

impl PoolUnderTest {
    /// Starts a pool of `k` of `kind`, the Python service's requests `PYTHON_WORK_MS` long.
    pub(crate) fn start(kind: Kind, k: usize) -> Result<PoolUnderTest> {
        Self::start_with(kind, k, PYTHON_WORK_MS)
    }

    /// Starts a pool of `k` of `kind`, the Python service's requests `python_ms` long.
    pub(crate) fn start_with(kind: Kind, k: usize, python_ms: u64) -> Result<PoolUnderTest> {
        let (target, service) = match kind {
            Kind::TowerLimit => (super::layers::limited(k)?, None),
            Kind::BlockingWorkers => (
                perfshape_experiments::demo::target(PoolSettings::workers(k)?)?,
                None,
            ),
            Kind::HandoffWorkers => {
                let pool = PoolSettings::workers(k)?.with_scheduler(Scheduler::one_wave())?;
                (perfshape_experiments::demo::target(pool)?, None)
            }
            Kind::PythonThreads => {
                let service = fastapi(Some(k))?;
                (Target::url(&service.url())?, Some(service))
            }
        };
        let path = match kind {
            Kind::TowerLimit => "/report".to_string(),
            Kind::BlockingWorkers | Kind::HandoffWorkers => format!("/blocking?ms={WORK_MS}"),
            Kind::PythonThreads => format!("/sync-def?ms={python_ms}"),
        };
        let work = match kind {
            Kind::PythonThreads => python_ms,
            _ => WORK_MS,
        };
        Ok(PoolUnderTest {
            endpoint: target.get(&path),
            step: Duration::from_millis((2 * work).max(50)),
            service,
        })
    }
}

/// The Python of the tools' virtual environment (`PERFSHAPE_PYTHON`, else
/// target/engines-venv/bin/python, where `.ci/run` installs FastAPI and uvicorn).
pub(crate) fn python() -> PathBuf {
    std::env::var_os("PERFSHAPE_PYTHON").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/engines-venv/bin/python"),
        PathBuf::from,
    )
}

/// FastAPI under uvicorn on a free port, its `def` endpoints on `pool` threads (anyio's
/// default 40 when `None`).
pub(crate) fn fastapi(pool: Option<usize>) -> Result<StartedService> {
    let python = python();
    if !python.exists() {
        return Err(perfshape::Error::Unreachable {
            url: python.display().to_string(),
            reason: "no Python there: `python3 -m venv target/engines-venv && target/engines-venv/bin/pip install fastapi==0.165.0 uvicorn==0.54.0` (what .ci/run does), or set PERFSHAPE_PYTHON".into(),
        }
        .into());
    }
    let app_dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/pools");
    let pool = pool.map_or(String::new(), |k| format!("POOL={k} "));
    let command = format!(
        "{pool}exec {} -m uvicorn fastapi_pool:app --app-dir {app_dir} --host 127.0.0.1 --port {{port}} --log-level warning",
        python.display()
    );
    let log = std::env::temp_dir().join(format!("perfshape-fastapi-{}.log", std::process::id()));
    StartedService::start("pool", &command, None, Duration::from_secs(30), &log)
}
