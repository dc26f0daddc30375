//! # perfshape — the performance *shape* of async vs blocking code, as tested facts
//!
//! Five well-known experiments (ASP.NET, C#) showed that async only pays when client and
//! server are both async, that blocking handlers starve a thread pool, that offloading
//! blocking work only moves the cap, that a per-host connection cap turns an async client
//! back into a queue, and that one task per tiny CPU item is far slower than a loop.
//! perfshape reproduces them with tokio, axum and reqwest as **claims**: ratios measured
//! side by side in one run, inside tolerance bands, with a three-way verdict.
//!
//! The vocabulary:
//! - a [`Pool`] is a constrained tokio runtime (workers, blocking cap) on its own threads;
//! - a [`Server`] serves every [`ServerStrategy`] on its pool;
//! - a [`LoadClient`] offers load with a [`ClientStrategy`] from another pool and returns a
//!   [`Run`] (one record per request, `sent == ok + failed`) with a [`Summary`];
//! - a [`Claim`] measures its sides in interleaved rounds and reaches a [`Verdict`];
//!   its [`ShapeSummary`] is what snapshots hold;
//! - a [`Model`] predicts a scenario from first principles (a discrete-event simulation of
//!   workers, blocking threads, connections and client behaviours): claims are
//!   "measured ÷ predicted within a band", via [`Expected::model_wall`];
//! - [`InProcess`] and [`CpuBound`] are the strategies without HTTP (seeds 002 and 003);
//! - an [`Experiment`] is one source experiment loaded from `fixtures/*.toml`, run and
//!   printed by [`experiment_table`] beside the published figures;
//! - [`probe`] finds where a real endpoint's throughput stops growing: "behaves like a
//!   blocking pool of ≈k".
//!
//! Nothing here asserts an absolute time: every timing claim is a ratio measured in one
//! run, and a machine too noisy to tell gets [`Verdict::Inconclusive`], not a false failure.
//!
//! ```no_run
//! use std::time::Duration;
//! use perfshape::{Claim, ClientStrategy, Lifecycle, LoadClient, Measure, Pool, Server, ServerStrategy};
//!
//! let work = Duration::from_millis(20);
//! let server = Server::start(Pool::workers("server", 2)?)?;
//! let client = LoadClient::new(Pool::workers("client", 2)?, Lifecycle::Shared)?;
//! let blocking = server.url(&ServerStrategy::Blocking, work)?;
//! let asynchronous = server.url(&ServerStrategy::Async, work)?;
//!
//! // seed 000: both sides async beats both sides blocking by ~N×.
//! let checked = Claim::ratio(
//!     "sequential over blocking ÷ fan-out over async",
//!     Measure::duration("sequential → blocking", || Ok(client.run(ClientStrategy::Sequential, &blocking, 20)?.wall)),
//!     Measure::duration("fan-out → async", || Ok(client.run(ClientStrategy::FanOut, &asynchronous, 20)?.wall)),
//! )
//! .at_least(6.0)
//! .ideal(20.0)
//! .check()?;
//! checked.gate()?;
//! # Ok::<(), perfshape::Error>(())
//! ```
#![warn(missing_docs)]

mod claim;
mod client;
mod closed_form;
mod error;
mod experiment;
mod fd_limit;
mod inproc;
mod model;
mod pool;
mod probe;
mod run;
mod scenario;
mod server;
mod summary;
mod svg;
mod table;

pub use claim::{
    Band, Checked, Claim, ClaimReport, Expected, GATE_ENV, GateMode, Measure, Round, ShapeSummary,
    Unit, Verdict, artifact_dir, median, noise_floor, shape_lock,
};
pub use client::{
    ClientStrategy, Lifecycle, Limits, LoadClient, MAX_CLIENT_THREADS, MAX_LOOP_TIME, MAX_REQUESTS,
};
pub use closed_form::ideal_wall;
pub use error::{Error, FixtureError, FixtureErrorKind, Result};
pub use experiment::{Experiment, ExperimentRow, Measured, Metric, Workload};
pub use fd_limit::ensure_fd_limit;
pub use inproc::{CpuBound, InProcess, compute_for, compute_iterations};
pub use model::{Model, Offered, Phase, Prediction};
pub use pool::{DEFAULT_MAX_BLOCKING, MAX_BLOCKING, MAX_WORKERS, Pool, PoolSettings};
pub use probe::{ProbeReport, ProbeSettings, ProbeStep, probe};
pub use run::{Connection, FailureKind, Outcome, RequestRecord, Run};
pub use scenario::Scenario;
pub use server::{MAX_WORK, RuntimeFigures, Server, ServerStrategy, WorkReport, app};
pub use summary::{Latency, Summary, count_waves};
pub use svg::experiment_svg;
pub use table::{AGREES, experiment_table, timeline};
