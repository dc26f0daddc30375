//! One request's record: when it was meant to start, when it started and ended, what
//! became of it, and what the server said about serving it.

use std::net::SocketAddr;
use std::time::Duration;

use serde::Serialize;

use crate::vocab::RuntimeFigures;

/// What became of one request.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum Outcome {
    /// A response arrived in full with a 2xx status, or a 3xx: a redirect is the route's
    /// answer, and is not followed ([`Outcome::of_status`]).
    Ok {
        /// The HTTP status.
        status: u16,
    },
    /// Anything else.
    Failed {
        /// Why.
        kind: FailureKind,
    },
}

impl Outcome {
    /// Whether the request counts as ok (2xx or 3xx, body read).
    pub fn is_ok(&self) -> bool {
        matches!(self, Outcome::Ok { .. })
    }

    /// The outcome of a response read in full with `status`: answered for a 2xx, and for a
    /// 3xx too — a redirect is what the route answered (a login's `303 See Other`), and
    /// following it would judge another request (the page it points to) in its name.
    /// Anything else failed, by its status.
    pub fn of_status(status: u16) -> Outcome {
        if (200..400).contains(&status) {
            Outcome::Ok { status }
        } else {
            Outcome::Failed {
                kind: FailureKind::Status(status),
            }
        }
    }

    /// Whether the request was answered with a redirect (a 3xx status, not followed).
    pub fn is_redirect(&self) -> bool {
        matches!(self, Outcome::Ok { status } if (300..400).contains(status))
    }
}

/// Why a request failed; the summary counts failures by kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FailureKind {
    /// A response arrived with a status outside 2xx and 3xx.
    Status(u16),
    /// The request timed out.
    Timeout,
    /// No connection could be made.
    Connect,
    /// The response body could not be read.
    Body,
    /// Any other transport error.
    Request,
    /// The run's deadline passed before the request could be sent or finish; it was
    /// counted, not silently dropped.
    Deadline,
    /// An open loop's intended start found its cap of requests in flight: not sent, counted.
    Dropped,
    /// The request could not be built (its generator panicked or returned a request that
    /// is not valid): not sent, counted, and named in the run's error.
    Build,
    /// A gRPC call answered with a status other than OK (its code; the record's error
    /// has its name and message).
    Grpc(u16),
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FailureKind::Status(code) => write!(f, "status {code}"),
            FailureKind::Timeout => f.write_str("timeout"),
            FailureKind::Connect => f.write_str("connect"),
            FailureKind::Body => f.write_str("body"),
            FailureKind::Request => f.write_str("request"),
            FailureKind::Deadline => f.write_str("deadline"),
            FailureKind::Dropped => f.write_str("dropped"),
            FailureKind::Build => f.write_str("could not be built"),
            FailureKind::Grpc(code) => write!(f, "gRPC status {code}"),
        }
    }
}

/// Whether a request opened a connection or rode on one opened before.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Connection {
    /// The first request seen on its connection.
    New,
    /// A later request on a connection seen before.
    Reused,
    /// Not a perfshape server (or no response): the connection was not reported.
    Unknown,
}

/// One request, start to end. Instants are offsets from the run's start.
#[derive(Clone, Debug, Serialize)]
pub struct RequestRecord {
    /// 0-based position in the load.
    pub index: usize,
    /// When the load meant to send it (equal to `start` for closed strategies).
    #[serde(with = "crate::vocab::millis")]
    pub intended_start: Duration,
    /// When it was sent.
    #[serde(with = "crate::vocab::millis")]
    pub start: Duration,
    /// When its response (or its failure) arrived.
    #[serde(with = "crate::vocab::millis")]
    pub end: Duration,
    /// What became of it.
    #[serde(flatten)]
    pub outcome: Outcome,
    /// The server thread that ran the handler, when the server said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served_by: Option<String>,
    /// New or reused connection, when the server said.
    pub connection: Connection,
    /// The server's runtime figures at handler start, when the server said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_at_start: Option<RuntimeFigures>,
    /// How long the handler held its worker, when the server said (perfshape-served).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held: Option<crate::vocab::Held>,
    /// What the transport said, for a request that failed without a response (the connect
    /// error, say), so a report can quote it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The client end of the connection, when the server said (classifies `connection`).
    #[serde(skip)]
    pub(crate) peer: Option<SocketAddr>,
    /// The number a perfshape-served router gave the request ([`SEQ`](crate::server::SEQ)),
    /// by which a claim finds what the server recorded of the whole response.
    #[serde(skip)]
    pub(crate) seq: Option<u64>,
    /// The method and path the served router received (`GET /health`), when it recorded
    /// the response: what a traffic mix counts per route.
    #[serde(skip)]
    pub(crate) received: Option<String>,
    /// The response's polls that held its worker long enough to matter, on this process's
    /// clock, when a served router recorded them: when, as well as how long, the request
    /// blocked its worker.
    #[serde(skip)]
    pub(crate) spans: Vec<crate::server::ledger::PollSpan>,
    /// The response body's length in bytes, when one was read: what tells two services
    /// that answer the same request differently apart before a comparison
    /// ([`Comparison`](crate::compare::Comparison)).
    #[serde(skip)]
    pub(crate) body_len: Option<usize>,
    /// Sent a second time, on a new connection, after its first connection was reset or
    /// closed before any byte of the response ([`crate::client`]'s retry rule): its
    /// outcome is the second try's, and it is counted once.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub retried: bool,
}

impl RequestRecord {
    /// Time from the intended start to the end: what the user waited.
    pub fn latency(&self) -> Duration {
        self.end.saturating_sub(self.intended_start)
    }

    /// The response body's length in bytes (after any chunked framing), when a response
    /// was read.
    pub fn body_len(&self) -> Option<usize> {
        self.body_len
    }

    /// A request that failed before any response: `kind` says why (the run's deadline
    /// passed, or no client could be built for it). It is counted, never dropped.
    pub fn failed_at(index: usize, at: Duration, kind: FailureKind) -> Self {
        RequestRecord {
            index,
            intended_start: at,
            start: at,
            end: at,
            outcome: Outcome::Failed { kind },
            served_by: None,
            connection: Connection::Unknown,
            server_at_start: None,
            held: None,
            error: None,
            peer: None,
            seq: None,
            received: None,
            spans: Vec::new(),
            body_len: None,
            retried: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{FailureKind, Outcome};

    #[test]
    fn a_redirect_is_an_answer_and_an_error_status_a_failure() {
        assert_eq!(Outcome::of_status(200), Outcome::Ok { status: 200 });
        assert!(!Outcome::of_status(204).is_redirect());
        assert!(Outcome::of_status(303).is_redirect());
        assert!(Outcome::of_status(304).is_ok());
        assert_eq!(
            Outcome::of_status(404),
            Outcome::Failed {
                kind: FailureKind::Status(404)
            }
        );
        assert!(!Outcome::of_status(199).is_ok());
    }
}
