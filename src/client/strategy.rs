//! How load is offered: the client half of every experiment.

use std::str::FromStr;
use std::time::Duration;

use serde::Serialize;

use crate::error::{Error, Result, check_range};

/// The most OS threads [`ClientStrategy::SyncOverAsync`] may start.
pub const MAX_CLIENT_THREADS: usize = 1024;

/// The longest closed-loop run, think time or ramp perfshape accepts.
pub const MAX_LOOP_TIME: Duration = Duration::from_secs(600);

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
        #[serde(with = "crate::summary::millis")]
        think: Duration,
        /// Time over which the users start.
        #[serde(with = "crate::summary::millis")]
        ramp: Duration,
        /// Time after which no user starts a request.
        #[serde(with = "crate::summary::millis")]
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
                check_range("users", users, 1, 10_000, "")?;
                check_range("think_ms", think.as_millis(), 0, max_ms, " ms")?;
                check_range("ramp_ms", ramp.as_millis(), 0, max_ms, " ms")?;
                check_range("duration_ms", duration.as_millis(), 1, max_ms, " ms")?;
            }
            ClientStrategy::OpenLoop {
                rate,
                max_in_flight,
            } => {
                if !(rate.is_finite() && rate > 0.0 && rate <= 100_000.0) {
                    return Err(Error::invalid(
                        "rate",
                        rate,
                        "above 0 and at most 100000 per second",
                    ));
                }
                check_range("max_in_flight", max_in_flight, 1, 100_000, "")?;
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

/// How the client gets its `reqwest::Client` (seed 001's `HttpClient` lifecycles).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "lifecycle")]
#[non_exhaustive]
pub enum Lifecycle {
    /// One client for every request: connections are kept and reused.
    #[default]
    Shared,
    /// A new client for every request (`new HttpClient()` per call): a new connection each
    /// time, and the cost of building a client.
    PerRequest,
    /// A fixed set of clients used in turn (`IHttpClientFactory`): each keeps its own
    /// connections.
    Pooled {
        /// How many clients.
        clients: usize,
    },
    /// One shared client that may have at most `per_host` requests (so connections) to a
    /// host at once; the rest queue for one (.NET Framework's default of 2 per host).
    ConnectionCap {
        /// Connections per host.
        per_host: usize,
    },
}

impl Lifecycle {
    /// Every lifecycle name, as accepted by [`FromStr`].
    pub const NAMES: &'static str = "shared, per-request, pooled, connection-cap";

    /// Checks the lifecycle's own settings.
    pub fn validate(&self) -> Result<()> {
        match *self {
            Lifecycle::Pooled { clients } => check_range("clients", clients, 1, 1024, "").map(drop),
            Lifecycle::ConnectionCap { per_host } => {
                check_range("per_host", per_host, 1, 100_000, "").map(drop)
            }
            Lifecycle::Shared | Lifecycle::PerRequest => Ok(()),
        }
    }

    /// The per-host connection cap, if the lifecycle has one.
    pub fn connection_cap(&self) -> Option<usize> {
        match *self {
            Lifecycle::ConnectionCap { per_host } => Some(per_host),
            _ => None,
        }
    }
}

impl FromStr for Lifecycle {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        match name {
            "shared" => Ok(Lifecycle::Shared),
            "per-request" => Ok(Lifecycle::PerRequest),
            "pooled" => Ok(Lifecycle::Pooled { clients: 4 }),
            "connection-cap" => Ok(Lifecycle::ConnectionCap { per_host: 2 }),
            _ => Err(Error::Unknown {
                what: "client lifecycle",
                name: name.to_string(),
                expected: Self::NAMES.to_string(),
            }),
        }
    }
}

impl std::fmt::Display for Lifecycle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lifecycle::Shared => f.write_str("shared"),
            Lifecycle::PerRequest => f.write_str("per-request"),
            Lifecycle::Pooled { clients } => write!(f, "pooled({clients} clients)"),
            Lifecycle::ConnectionCap { per_host } => {
                write!(f, "connection-cap({per_host} per host)")
            }
        }
    }
}
