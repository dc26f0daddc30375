//! How load is offered: the client half of every experiment.

use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result, check_range};
use crate::limits::{MAX_CLIENT_THREADS, MAX_LOOP_TIME, MAX_RATE, MAX_REQUESTS, MAX_USERS};

/// How a load of N requests is offered.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "client")]
#[non_exhaustive]
pub enum ClientStrategy {
    /// One request at a time, each awaited before the next (seed 000's sync loop).
    Sequential,
    /// All N requests at once on the client pool, then wait for all (`Task.WhenAll`).
    FanOut,
    /// `threads` OS threads, each blocking on one request future at a time: the `.Result`
    /// pattern. Concurrency is capped by the thread count, not by the server.
    SyncOverAsync {
        /// How many OS threads block on requests.
        threads: usize,
    },
    /// JMeter's thread group: `users` callers, user k starting at `ramp × k / users`, each
    /// sending a request, waiting for its response, thinking, and sending again, until
    /// `duration` has passed (or N requests were sent, whichever comes first).
    ClosedLoop {
        /// Concurrent users.
        users: usize,
        /// Pause between a response and the user's next request.
        #[serde(with = "crate::vocab::millis")]
        think: Duration,
        /// Time over which the users start.
        #[serde(with = "crate::vocab::millis")]
        ramp: Duration,
        /// Time after which no user starts a request.
        #[serde(with = "crate::vocab::millis")]
        duration: Duration,
    },
    /// A constant arrival rate: request i is intended at `i / rate`, whatever became of
    /// the others. Latency counts from the intended start (no coordinated omission); a
    /// request whose start finds `max_in_flight` requests in flight is dropped and counted.
    OpenLoop {
        /// Intended starts per second.
        rate: f64,
        /// Requests in flight at most; bounds the tasks the load may spawn.
        max_in_flight: usize,
    },
}

impl ClientStrategy {
    /// Every strategy name, as accepted by [`FromStr`].
    pub const NAMES: &'static str = "sequential, fan-out, sync-over-async, closed-loop, open-loop";

    /// The strategy's name.
    pub fn name(&self) -> &'static str {
        match self {
            ClientStrategy::Sequential => "sequential",
            ClientStrategy::FanOut => "fan-out",
            ClientStrategy::SyncOverAsync { .. } => "sync-over-async",
            ClientStrategy::ClosedLoop { .. } => "closed-loop",
            ClientStrategy::OpenLoop { .. } => "open-loop",
        }
    }

    /// Checks the strategy's own settings.
    pub fn validate(&self) -> Result<()> {
        let max_ms = MAX_LOOP_TIME.as_millis();
        match *self {
            ClientStrategy::SyncOverAsync { threads } => {
                check_range("threads", threads, 1, MAX_CLIENT_THREADS, "")?;
            }
            ClientStrategy::ClosedLoop {
                users,
                think,
                ramp,
                duration,
            } => {
                check_range("users", users, 1, MAX_USERS, "")?;
                check_range("think_ms", think.as_millis(), 0, max_ms, " ms")?;
                check_range("ramp_ms", ramp.as_millis(), 0, max_ms, " ms")?;
                check_range("duration_ms", duration.as_millis(), 1, max_ms, " ms")?;
            }
            ClientStrategy::OpenLoop {
                rate,
                max_in_flight,
            } => {
                if !(rate.is_finite() && rate > 0.0 && rate <= MAX_RATE) {
                    return Err(Error::invalid(
                        "rate",
                        rate,
                        format!("above 0 and at most {MAX_RATE} per second"),
                    ));
                }
                check_range("max_in_flight", max_in_flight, 1, MAX_REQUESTS, "")?;
            }
            ClientStrategy::Sequential | ClientStrategy::FanOut => {}
        }
        Ok(())
    }

    /// How many requests can be in flight at once with `n` requests.
    pub fn concurrency(&self, n: usize) -> usize {
        match self {
            ClientStrategy::Sequential => 1,
            ClientStrategy::FanOut => n,
            ClientStrategy::SyncOverAsync { threads } => (*threads).min(n),
            ClientStrategy::ClosedLoop { users, .. } => (*users).min(n),
            ClientStrategy::OpenLoop { max_in_flight, .. } => (*max_in_flight).min(n),
        }
    }
}

impl std::fmt::Display for ClientStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientStrategy::SyncOverAsync { threads } => {
                write!(f, "sync-over-async({threads} threads)")
            }
            ClientStrategy::ClosedLoop {
                users,
                think,
                ramp,
                duration,
            } => write!(
                f,
                "closed-loop({users} users, think {} ms, ramp {} ms, {} ms)",
                think.as_millis(),
                ramp.as_millis(),
                duration.as_millis()
            ),
            ClientStrategy::OpenLoop {
                rate,
                max_in_flight,
            } => write!(f, "open-loop({rate}/s, at most {max_in_flight} in flight)"),
            other => f.write_str(other.name()),
        }
    }
}

/// Parses a strategy name; `sync-over-async` parses with one thread (seed 000's loop);
/// `closed-loop` and `open-loop` parse with placeholder settings that fixtures and the CLI
/// replace (one user for 1 s; 100/s with 100 in flight).
impl FromStr for ClientStrategy {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        Ok(match name {
            "sequential" => ClientStrategy::Sequential,
            "fan-out" => ClientStrategy::FanOut,
            "sync-over-async" => ClientStrategy::SyncOverAsync { threads: 1 },
            "closed-loop" => ClientStrategy::ClosedLoop {
                users: 1,
                think: Duration::ZERO,
                ramp: Duration::ZERO,
                duration: Duration::from_secs(1),
            },
            "open-loop" => ClientStrategy::OpenLoop {
                rate: 100.0,
                max_in_flight: 100,
            },
            _ => {
                return Err(Error::Unknown {
                    what: "client strategy",
                    name: name.to_string(),
                    expected: Self::NAMES.to_string(),
                });
            }
        })
    }
}
