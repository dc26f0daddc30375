//! One fixture row as an engine's users offer it: its load (a closed loop, a count, an
//! arrival rate), the request, and the model's figure and tail for it — or why an engine
//! cannot offer it.

use std::time::Duration;

use serde::Serialize;

use crate::experiment::{Metric, Workload};
use crate::vocab::ServerStrategy;
use perfshape::client::{ClientStrategy, Lifecycle};

/// How one row's load is offered by an engine's users.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum EngineLoad {
    /// `users` users, each sending, waiting for the answer, thinking `think`, and sending
    /// again until `duration` has passed since the stage began; user starts spread over
    /// `ramp`.
    ClosedLoop {
        /// Concurrent users.
        users: usize,
        /// Pause between an answer and the user's next request.
        #[serde(with = "perfshape::__support::millis")]
        think: Duration,
        /// Time over which the users start.
        #[serde(with = "perfshape::__support::millis")]
        ramp: Duration,
        /// Time after which no user starts a request.
        #[serde(with = "perfshape::__support::millis")]
        duration: Duration,
    },
    /// `users` users at once, each sending `per_user` requests one after another: a
    /// fan-out of N is N users of 1, a sequential load of N is 1 user of N.
    Count {
        /// Concurrent users.
        users: usize,
        /// Requests each user sends in turn.
        per_user: usize,
    },
    /// An open loop: `requests` starts at `rate` a second, whatever became of the earlier
    /// ones, at most `max_in_flight` at once; a start that finds them all busy is dropped
    /// and counted (k6's `constant-arrival-rate` and its `dropped_iterations`).
    Arrival {
        /// Intended starts per second.
        rate: f64,
        /// Starts in all.
        requests: usize,
        /// Requests in flight at most: the engine's users for the row.
        max_in_flight: usize,
    },
}

impl EngineLoad {
    /// The users the row needs.
    pub fn users(&self) -> usize {
        match *self {
            EngineLoad::ClosedLoop { users, .. } | EngineLoad::Count { users, .. } => users,
            EngineLoad::Arrival { max_in_flight, .. } => max_in_flight,
        }
    }

    /// The time the row offers load; a counted load offers it all at its start, an
    /// arrival rate over its requests ÷ its rate (to the millisecond, at least one).
    pub fn active(&self) -> Duration {
        match *self {
            EngineLoad::ClosedLoop { duration, .. } => duration,
            EngineLoad::Count { .. } => Duration::ZERO,
            EngineLoad::Arrival { rate, requests, .. } => {
                Duration::from_millis(((requests as f64 / rate) * 1e3).ceil().max(1.0) as u64)
            }
        }
    }
}

/// One row of the schedule.
#[derive(Clone, Debug, Serialize)]
pub struct ScheduledRow {
    /// The fixture's row id.
    pub id: String,
    /// The row's label.
    pub label: String,
    /// The request every user sends, e.g. `/blocking?ms=60`.
    pub path: String,
    /// How the load is offered.
    pub load: EngineLoad,
    /// The published figure, in the experiment's unit.
    pub published: f64,
    /// What the model predicts in the experiment's metric for the fixture's server pool.
    pub model_figure: f64,
    /// A closed loop's cycle as the model has it: its mean latency and the think time.
    #[serde(with = "perfshape::__support::millis")]
    pub model_cycle: Duration,
    /// The server pool the model assumes, e.g. `W=8 B=12`.
    pub pool: String,
    /// The model's time past the load's active part until its last request ends (at
    /// least its slowest request): what the stage must wait for however fast the machine.
    #[serde(with = "perfshape::__support::millis")]
    pub tail: Duration,
}

/// One fixture row as an engine offers it, or why it cannot be.
pub(super) fn scheduled(
    metric: Metric,
    row: &crate::experiment::ExperimentRow,
) -> std::result::Result<ScheduledRow, String> {
    let Workload::Http(scenario) = &row.workload else {
        return Err("runs in-process, not over HTTP".into());
    };
    if scenario.lifecycle != Lifecycle::Shared {
        return Err(format!(
            "client lifecycle {} (an engine's user keeps its connection)",
            scenario.lifecycle
        ));
    }
    if matches!(scenario.server, ServerStrategy::Cpu) {
        return Err("the CPU handler's figure depends on the server's own cores".into());
    }
    let load = match scenario.client {
        ClientStrategy::ClosedLoop {
            users,
            think,
            ramp,
            duration,
        } => EngineLoad::ClosedLoop {
            users,
            think,
            ramp,
            duration,
        },
        ClientStrategy::FanOut => EngineLoad::Count {
            users: scenario.n,
            per_user: 1,
        },
        // One thread blocking on each request in turn is a sequential load to the server.
        ClientStrategy::Sequential | ClientStrategy::SyncOverAsync { threads: 1 } => {
            EngineLoad::Count {
                users: 1,
                per_user: scenario.n,
            }
        }
        ClientStrategy::OpenLoop {
            rate,
            max_in_flight,
        } => EngineLoad::Arrival {
            rate,
            requests: scenario.n,
            max_in_flight,
        },
        other => {
            return Err(format!(
                "client {} is the client's own behaviour, which an engine's users do not reproduce",
                other.name()
            ));
        }
    };
    let prediction = scenario.model().predict().map_err(|e| e.to_string())?;
    // An engine's closed-loop throughput is the requests its users sent ÷ the loop's
    // duration (its statistics have no completion times); the model's is the same count.
    let model_figure = match (metric, load) {
        (Metric::Throughput, EngineLoad::ClosedLoop { duration, .. }) => {
            prediction.sent as f64 / duration.as_secs_f64()
        }
        _ => metric.of(&prediction),
    };
    // The model's tail past the load's active part (the queue draining after a closed
    // loop stops starting requests; a counted load's whole wall) — at least its slowest
    // request, which may start just before the end. (The drain adds room for jitter.)
    let slowest = prediction.latency.map_or(Duration::ZERO, |l| l.max);
    let tail = prediction.wall.saturating_sub(load.active()).max(slowest);
    let path = scenario
        .server
        .path_and_query(scenario.work)
        .map_err(|e| e.to_string())?;
    Ok(ScheduledRow {
        id: row.id.clone(),
        label: row.label.clone(),
        path,
        load,
        published: row.published,
        model_figure,
        model_cycle: match load {
            EngineLoad::ClosedLoop { think, .. } => {
                Duration::from_secs_f64(prediction.mean_latency) + think
            }
            EngineLoad::Count { .. } | EngineLoad::Arrival { .. } => Duration::ZERO,
        },
        // Workers and blocking cap only: the model's figure does not depend on tokio's
        // scheduler, and the service judged may run any.
        pool: format!(
            "W={} B={}",
            scenario.server_pool.workers, scenario.server_pool.max_blocking
        ),
        tail,
    })
}
