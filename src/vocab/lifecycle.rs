//! How the load client gets its HTTP clients: seed 001's `HttpClient` lifecycles.

use std::str::FromStr;

use serde::Serialize;

use crate::error::{Error, Result, check_range};
use crate::limits::{MAX_POOLED_CLIENTS, MAX_REQUESTS};

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
            Lifecycle::Pooled { clients } => {
                check_range("clients", clients, 1, MAX_POOLED_CLIENTS, "").map(drop)
            }
            Lifecycle::ConnectionCap { per_host } => {
                check_range("per_host", per_host, 1, MAX_REQUESTS, "").map(drop)
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
