//! Past one machine: a fixture's rows offered by a distributed load engine — Locust (a
//! master and any number of workers) or k6 (one process, or split by k6-operator) — and
//! its claims judged from the engine's own statistics.
//!
//! An engine distributes load but cannot say whether a *shape* holds: k6's thresholds
//! compare one metric with an absolute number, Locust has no pass or fail. perfshape lays a
//! fixture's rows out as a [`Schedule`] of interleaved rounds, writes it for the engine
//! ([`locustfile`], [`k6_script`]), runs either itself when asked ([`LocustRun`];
//! [`K6Run`], one k6 process or several splitting the load), reads the engine's statistics
//! ([`EngineStats`]) and decides the claims with the same rule, reports and shape
//! summaries as in-process ([`Judge`]).
//!
//! A test that judges a k6 run of seed 004 (the script was [`k6_script`] of this
//! schedule, its loops at k6's least, 1 s; the summary came back from the load machines):
//!
//! ```
//! use std::path::Path;
//! use std::time::Duration;
//! use perfshape_experiments::experiment::Experiment;
//! use perfshape_experiments::external::{EngineStats, Judge, Schedule};
//!
//! let root = Path::new(env!("CARGO_MANIFEST_DIR"));
//! let experiment = Experiment::load(root.join("../fixtures/seed-004-jmeter-endpoints.toml"))?
//!     .at_test_scale()?
//!     .with_loop_duration(Duration::from_millis(1000))?;
//! let schedule = Schedule::new(&experiment, 3)?;
//! let stats = EngineStats::read(&root.join("tests/data/engines/k6-seed004-summary.json"))?;
//! # let scratch = std::env::temp_dir().join("perfshape-doc-judge");
//! let judged = Judge::new()
//! #   .artifacts_in(&scratch)
//!     .judge(&schedule, &stats)?;
//! assert_eq!(judged[0].checked.report().relation(), "async > mixed > offload > blocking");
//! for claim in &judged {
//!     claim.checked.gate()?; // or perfshape::assert_shape! to snapshot it first
//! }
//! # Ok::<(), perfshape_experiments::Error>(())
//! ```

mod engine;
mod judge;
mod k6;
mod k6_run;
mod locust;
mod locustfile;
mod process;
mod schedule;
mod scheduled_row;
mod service;
mod stats;

pub use engine::Engine;
pub use judge::{Judge, Judged, LITTLE_SLACK, MODEL_BAND, OFFERED, ORDER_STEP};
pub use k6::k6_script;
pub use k6_run::{K6_ENV, K6Run, MAX_RUNNERS, find_k6};
pub use locust::{LOCUST_ENV, LocustRun, MAX_LOCAL_WORKERS, WORKER_WAIT, find_locust};
pub use locustfile::locustfile;
pub use process::{ENGINES_PIP, ENGINES_VENV};
pub use schedule::{K6_MIN_DURATION, LEAD, ROUNDS, Schedule, Stage, scenario_name};
pub use scheduled_row::{EngineLoad, ScheduledRow};
pub use service::{PORT_PLACEHOLDER, StartedService};
pub use stats::{EngineStats, StageStats};

/// A string as a literal in a generated script: JSON's escaping is valid in both Python
/// and JavaScript.
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}
