//! How load is offered: the client half of every experiment.

use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Result, check_range};

/// The most OS threads [`ClientStrategy::SyncOverAsync`] may start.
pub const MAX_CLIENT_THREADS: usize = 1024;

/// How a load of N requests is offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
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
}

impl ClientStrategy {
    /// Every strategy name, as accepted by [`FromStr`].
    pub const NAMES: &'static str = "sequential, fan-out, sync-over-async";

    /// The strategy's name.
    pub fn name(&self) -> &'static str {
        match self {
            ClientStrategy::Sequential => "sequential",
            ClientStrategy::FanOut => "fan-out",
            ClientStrategy::SyncOverAsync { .. } => "sync-over-async",
        }
    }

    /// Checks the strategy's own settings.
    pub fn validate(&self) -> Result<()> {
        if let ClientStrategy::SyncOverAsync { threads } = self {
            check_range("threads", *threads, 1, MAX_CLIENT_THREADS, "")?;
        }
        Ok(())
    }

    /// How many requests can be in flight at once with `n` requests.
    pub fn concurrency(&self, n: usize) -> usize {
        match self {
            ClientStrategy::Sequential => 1,
            ClientStrategy::FanOut => n,
            ClientStrategy::SyncOverAsync { threads } => (*threads).min(n),
        }
    }
}

impl std::fmt::Display for ClientStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClientStrategy::SyncOverAsync { threads } => {
                write!(f, "sync-over-async({threads} threads)")
            }
            other => f.write_str(other.name()),
        }
    }
}

/// Parses a strategy name; `sync-over-async` parses with one thread (seed 000's loop).
impl FromStr for ClientStrategy {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        Ok(match name {
            "sequential" => ClientStrategy::Sequential,
            "fan-out" => ClientStrategy::FanOut,
            "sync-over-async" => ClientStrategy::SyncOverAsync { threads: 1 },
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
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Lifecycle {
    /// One client for every request: connections are kept and reused.
    #[default]
    Shared,
    /// A new client for every request (`new HttpClient()` per call): a new connection each
    /// time, and the cost of building a client.
    PerRequest,
}

impl Lifecycle {
    /// Every lifecycle name, as accepted by [`FromStr`].
    pub const NAMES: &'static str = "shared, per-request";
}

impl FromStr for Lifecycle {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        match name {
            "shared" => Ok(Lifecycle::Shared),
            "per-request" => Ok(Lifecycle::PerRequest),
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
        f.write_str(match self {
            Lifecycle::Shared => "shared",
            Lifecycle::PerRequest => "per-request",
        })
    }
}
