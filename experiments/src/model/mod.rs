//! A model that predicts a scenario's shape from first principles.
//!
//! A small discrete-event simulation. Resources: server workers (W), blocking threads (B),
//! a per-host connection cap on the client, and the lock of the `Lock` strategy. A request
//! is a list of phases: `Worker(d)` holds a worker for d (a blocking or computing handler;
//! `d = 0` is the instant a worker is needed to accept, parse or respond), `Wait(d)` holds
//! nothing (an async wait), `Offload(d)` holds a blocking thread, `Locked(d)` holds a
//! worker and the lock. Queues are first come, first served. The client behaviours are
//! sequential, fan-out, a fixed number of concurrent callers, closed loop (users, think,
//! ramp, duration) and open loop (a constant arrival rate with a cap on requests in flight).
//!
//! Time is integer nanoseconds and ties are broken by event order, so a prediction is a
//! pure function of its inputs.

mod closed_form;
mod sim;

use std::time::Duration;

use serde::Serialize;

pub use crate::vocab::Phase;
pub use closed_form::ideal_wall;

use crate::error::{Error, Result};
use crate::vocab::ServerStrategy;
use perfshape::__support::check_range;
use perfshape::client::ClientStrategy;
use perfshape::load::{Latency, count_waves};
use perfshape::runtime::PoolSettings;

/// How the modelled client offers load.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "load")]
pub enum Offered {
    /// `n` requests, at most `concurrency` in flight; each freed slot sends the next at
    /// once. Sequential is `concurrency = 1`, fan-out is `concurrency = n`.
    Concurrent {
        /// Requests.
        n: usize,
        /// Requests in flight at most.
        concurrency: usize,
    },
    /// `users` callers, each sending, waiting for the response, thinking, and sending
    /// again; user k starts at `ramp × k / users`; nobody starts a request after `duration`.
    ClosedLoop {
        /// Concurrent users.
        users: usize,
        /// Pause between a response and the next request.
        think: Duration,
        /// Time over which the users start.
        ramp: Duration,
        /// Time after which no request is started.
        duration: Duration,
    },
    /// `n` requests intended at a constant `rate` per second; a request whose intended
    /// start finds `max_in_flight` in flight is dropped (counted, never sent).
    OpenLoop {
        /// Intended starts per second.
        rate: f64,
        /// Requests intended.
        n: usize,
        /// Requests in flight at most.
        max_in_flight: usize,
    },
}

impl Offered {
    /// The load a [`ClientStrategy`] offers with `n` requests.
    pub fn from_client(client: ClientStrategy, n: usize) -> Offered {
        match client {
            ClientStrategy::ClosedLoop {
                users,
                think,
                ramp,
                duration,
            } => Offered::ClosedLoop {
                users,
                think,
                ramp,
                duration,
            },
            ClientStrategy::OpenLoop {
                rate,
                max_in_flight,
            } => Offered::OpenLoop {
                rate,
                n,
                max_in_flight,
            },
            _ => Offered::Concurrent {
                n,
                concurrency: client.concurrency(n),
            },
        }
    }
}

/// A scenario for the model: the server, its pool, the client's connection cap, the load.
///
/// ```
/// use std::time::Duration;
/// use perfshape::{PoolSettings, client::ClientStrategy};
/// use perfshape_experiments::{model::Model, scenario::ServerStrategy};
///
/// let ms = Duration::from_millis;
/// let pool = PoolSettings::workers(2)?;
/// // A fan-out of 20 requests of 20 ms: ceil(20/2) waves on a blocking server, one on async.
/// let blocking = Model::of(ServerStrategy::Blocking, pool, ms(20), ClientStrategy::FanOut, 20);
/// let asynchronous = Model::of(ServerStrategy::Async, pool, ms(20), ClientStrategy::FanOut, 20);
/// assert_eq!(blocking.predict()?.wall, ms(200));
/// assert_eq!(blocking.predict()?.waves, 10);
/// assert_eq!(asynchronous.predict()?.wall, ms(20));
/// # Ok::<(), perfshape_experiments::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// How the handler spends its time.
    pub server: ServerStrategy,
    /// Server workers and blocking-thread cap.
    pub pool: PoolSettings,
    /// Work per request (for `Mixed`, its own split).
    pub work: Duration,
    /// Connections per host the client may open (`None`: unlimited).
    pub connection_cap: Option<usize>,
    /// How load is offered.
    pub offered: Offered,
    /// A `/health` request (a worker for no time) sent this long after the load starts,
    /// outside the connection cap: how responsive is the server under this load?
    pub canary: Option<Duration>,
    /// What one request costs outside its handler — the HTTP stack's CPU on client and
    /// server (and building a client, for a client per request) — served one request at a
    /// time, half before the handler and half after ([`Phase::Stack`]); zero leaves it out. Not a setting but a
    /// measurement: the same load with no work, in the same run
    /// ([`Scenario::measure_calibrated`](crate::scenario::Scenario::measure_calibrated)).
    pub overhead: Duration,
}

/// What the model predicts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Prediction {
    /// Requests intended.
    pub sent: usize,
    /// Requests completed.
    pub completed: usize,
    /// Requests dropped at their intended start (open loop only).
    pub dropped: usize,
    /// From the first intended start to the last completion.
    #[serde(with = "perfshape::__support::millis")]
    pub wall: Duration,
    /// Completions per second of wall.
    pub throughput: f64,
    /// Latency, from intended start to completion, of the completed requests.
    pub latency: Option<Latency>,
    /// Completion waves at half the work time.
    pub waves: usize,
    /// Mean latency in seconds (exact, not from a histogram).
    pub mean_latency: f64,
    /// How long the canary waited, when the model has one.
    #[serde(
        skip_serializing_if = "Option::is_none",
        with = "perfshape::__support::millis::opt"
    )]
    pub canary_latency: Option<Duration>,
    /// Each completed request's (intended start, end), in completion order.
    #[serde(skip)]
    pub timeline: Vec<(Duration, Duration)>,
}

impl Model {
    /// A model of `client` offering `n` requests to `server` on `pool`.
    pub fn of(
        server: ServerStrategy,
        pool: PoolSettings,
        work: Duration,
        client: ClientStrategy,
        n: usize,
    ) -> Model {
        Model {
            server,
            pool,
            work: server.work_time(work),
            connection_cap: None,
            offered: Offered::from_client(client, n),
            canary: None,
            overhead: Duration::ZERO,
        }
    }

    /// The same model with each request holding the HTTP stack for `overhead`, half before
    /// its handler and half after ([`Phase::Stack`]): a fan-out of N async requests then
    /// takes N × overhead / 2 + work + overhead / 2, not the work alone.
    #[must_use]
    pub fn with_overhead(mut self, overhead: Duration) -> Model {
        self.overhead = overhead;
        self
    }

    /// The same model with a `/health` canary sent `after` the load starts.
    #[must_use]
    pub fn with_canary(mut self, after: Duration) -> Model {
        self.canary = Some(after);
        self
    }

    /// The same model with a per-host connection cap.
    #[must_use]
    pub fn with_connection_cap(mut self, cap: usize) -> Model {
        self.connection_cap = Some(cap);
        self
    }

    /// The phases one request goes through on the server.
    pub fn phases(&self) -> Vec<Phase> {
        let handler = self.server.phases(self.work);
        if self.overhead.is_zero() {
            return handler;
        }
        // Half to receive and parse the request, half to answer it and read the answer:
        // a fan-out's answers are turned over while later requests still wait.
        let half = self.overhead / 2;
        let rest = self.overhead - half;
        std::iter::once(Phase::Stack(half))
            .chain(handler)
            .chain(std::iter::once(Phase::Stack(rest)))
            .collect()
    }

    /// Checks the inputs a simulation needs (the sizes it would allocate and loop over).
    pub fn validate(&self) -> Result<()> {
        check_range(
            "connection_cap",
            self.connection_cap.unwrap_or(1),
            1,
            1_000_000,
            "",
        )?;
        match self.offered {
            Offered::Concurrent { n, concurrency } => {
                check_range("n", n, 1, 10_000_000, "")?;
                check_range("concurrency", concurrency, 1, 10_000_000, "")?;
            }
            Offered::ClosedLoop {
                users,
                think,
                duration,
                ..
            } => {
                check_range("users", users, 1, 100_000, "")?;
                // Each user makes at most duration / (think + work) + 1 requests.
                let cycle = (think + self.work).max(Duration::from_micros(1));
                let per_user = duration.as_nanos() / cycle.as_nanos() + 1;
                check_range(
                    "requests in the closed loop",
                    per_user * users as u128,
                    1,
                    10_000_000,
                    "",
                )?;
            }
            Offered::OpenLoop {
                rate,
                n,
                max_in_flight,
            } => {
                if !(rate.is_finite() && rate > 0.0 && rate <= 1e9) {
                    return Err(Error::invalid(
                        "rate",
                        rate,
                        "above 0 and at most 1e9 per second",
                    ));
                }
                check_range("n", n, 1, 10_000_000, "")?;
                check_range("max_in_flight", max_in_flight, 1, 10_000_000, "")?;
            }
        }
        Ok(())
    }

    /// Runs the simulation.
    pub fn predict(&self) -> Result<Prediction> {
        self.validate()?;
        let outcome = sim::simulate(self);
        let latencies = outcome.timeline.iter().map(|(start, end)| *end - *start);
        let ends: Vec<Duration> = outcome.timeline.iter().map(|(_, end)| *end).collect();
        let wall = ends.iter().copied().max().unwrap_or_default();
        let completed = outcome.timeline.len();
        let mean_latency = if completed == 0 {
            0.0
        } else {
            outcome
                .timeline
                .iter()
                .map(|(s, e)| (*e - *s).as_secs_f64())
                .sum::<f64>()
                / completed as f64
        };
        Ok(Prediction {
            sent: outcome.sent,
            completed,
            dropped: outcome.dropped,
            wall,
            throughput: if wall.is_zero() {
                0.0
            } else {
                completed as f64 / wall.as_secs_f64()
            },
            latency: Latency::of(latencies),
            waves: count_waves(&ends, self.work / 2),
            mean_latency,
            canary_latency: outcome.canary_latency,
            timeline: outcome.timeline,
        })
    }
}

impl std::fmt::Display for Model {
    /// A short, stable description for reports: `model(fan-out of 20 → blocking, W=2
    /// B=512, 20 ms)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let load = match self.offered {
            Offered::Concurrent { n, concurrency: 1 } => format!("sequential {n}"),
            Offered::Concurrent { n, concurrency } if concurrency >= n => format!("fan-out of {n}"),
            Offered::Concurrent { n, concurrency } => format!("{n} by {concurrency} callers"),
            Offered::ClosedLoop { users, think, .. } => {
                format!(
                    "closed loop of {users} users, think {} ms",
                    think.as_millis()
                )
            }
            Offered::OpenLoop { rate, n, .. } => format!("open loop of {n} at {rate}/s"),
        };
        let cap = self
            .connection_cap
            .map(|c| format!(", {c} connections per host"))
            .unwrap_or_default();
        let cpu = if self.overhead.is_zero() {
            String::new()
        } else {
            format!(
                " + {} µs per request outside the handler",
                self.overhead.as_micros()
            )
        };
        write!(
            f,
            "model({load} → {}, {}{cap}, {} ms{cpu})",
            self.server,
            self.pool,
            self.work.as_millis()
        )
    }
}
