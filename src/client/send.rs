//! One request, turned into a record whatever happens to it.

use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;

use super::request::Prepared;
use super::retry;

use crate::record::{Connection, FailureKind, Outcome, RequestRecord};
use crate::vocab::RuntimeFigures;
use crate::vocab::wire::{HELD, Held, PEER, RUNTIME, SEQ, SERVED_BY, parse_peer};

/// One try of a request: its record, and whether its connection was lost before any of
/// the response came ([`retry::connection_lost`]), which may send it again.
pub(crate) struct Try {
    pub(crate) record: RequestRecord,
    pub(crate) lost: bool,
}

/// Sends `request` and records it. Never fails: a failure is an outcome.
pub(crate) async fn send(
    client: &reqwest::Client,
    request: &Prepared,
    index: usize,
    origin: Instant,
    intended_start: Duration,
) -> Try {
    let start = origin.elapsed();
    let mut builder = client
        .request(request.method.clone(), request.url.clone())
        .headers(request.headers.clone());
    if let Some(body) = &request.body {
        builder = builder.body(body.clone());
    }
    let mut lost = false;
    let response = match builder.send().await {
        Err(error) => {
            // No response head came: a lost connection may be tried again.
            lost = retry::connection_lost(&error);
            let mut said = describe(&error);
            if request.grpc && !error.is_connect() && !error.is_timeout() {
                // The connection was made and then failed: what a server that answers
                // HTTP/1 only does to HTTP/2's preface (it answers 400 and closes).
                said.push_str(
                    " — a gRPC call is sent over HTTP/2 (cleartext, prior knowledge), and a \
                     server that answers HTTP/1 only closes the connection at its preface: \
                     is this a gRPC server, and does it speak HTTP/2 without TLS?",
                );
            }
            Err((classify(&error), said))
        }
        Ok(response) => {
            let status = response.status();
            let headers = Served::of(response.headers());
            #[cfg(feature = "grpc")]
            if request.grpc && status.is_success() {
                return finish(
                    grpc_outcome(response, headers).await,
                    start,
                    origin,
                    index,
                    intended_start,
                    lost,
                );
            }
            match response.bytes().await {
                Err(error) if error.is_timeout() => Err((FailureKind::Timeout, describe(&error))),
                Err(error) => Err((FailureKind::Body, describe(&error))),
                Ok(body) => Ok((Outcome::of_status(status.as_u16()), headers, body.len())),
            }
        }
    };
    finish(response, start, origin, index, intended_start, lost)
}

/// What came of one try, and what it is made into.
type Answer = Result<(Outcome, Served, usize), (FailureKind, String)>;

/// A gRPC call's outcome: its status, read from the trailers (or the headers), decides.
#[cfg(feature = "grpc")]
async fn grpc_outcome(response: reqwest::Response, headers: Served) -> Answer {
    let status = response.status().as_u16();
    match super::grpc::read(response).await {
        Err(error) if error.is_timeout() => Err((FailureKind::Timeout, describe(&error))),
        Err(error) => Err((FailureKind::Body, describe(&error))),
        Ok(answered) => match answered.failed {
            None => Ok((Outcome::Ok { status }, headers, answered.body_len)),
            Some(call) => {
                let mut served = headers;
                served.error = Some(call.to_string());
                Ok((
                    Outcome::Failed {
                        kind: FailureKind::Grpc(call.code),
                    },
                    served,
                    answered.body_len,
                ))
            }
        },
    }
}

/// The record of a try that came to `response`.
fn finish(
    response: Answer,
    start: Duration,
    origin: Instant,
    index: usize,
    intended_start: Duration,
    lost: bool,
) -> Try {
    // The request ends when its last byte arrives; reading its headers is not its latency.
    let end = origin.elapsed();
    let mut record = RequestRecord::failed_at(index, start, FailureKind::Request);
    record.intended_start = intended_start;
    record.end = end;
    match response {
        Err((kind, error)) => {
            record.outcome = Outcome::Failed { kind };
            record.error = Some(error);
        }
        Ok((outcome, served, body_len)) => {
            record.outcome = outcome;
            record.body_len = Some(body_len);
            record.served_by = served.by;
            record.server_at_start = served.at_start;
            record.peer = served.peer;
            record.held = served.held;
            record.seq = served.seq;
            record.error = served.error;
        }
    }
    record.connection = Connection::Unknown;
    Try { record, lost }
}

/// What a perfshape-served response's headers say about how it was served; read before
/// the body, so the headers need not be kept. Not every server is served by perfshape:
/// missing headers are simply unknown.
struct Served {
    by: Option<String>,
    at_start: Option<RuntimeFigures>,
    peer: Option<std::net::SocketAddr>,
    held: Option<Held>,
    seq: Option<u64>,
    /// What failed in a response that came (a gRPC call's status and message).
    error: Option<String>,
}

impl Served {
    fn of(headers: &HeaderMap) -> Served {
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        Served {
            by: header(SERVED_BY).map(str::to_string),
            at_start: header(RUNTIME).and_then(|v| v.parse().ok()),
            peer: header(PEER).and_then(parse_peer),
            held: header(HELD).and_then(|v| v.parse().ok()),
            seq: header(SEQ).and_then(|v| v.parse().ok()),
            error: None,
        }
    }
}

/// The error and its causes on one line: reqwest's own message is only the outermost
/// ("error sending request"), the useful part ("Connection refused") is a cause.
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

fn classify(error: &reqwest::Error) -> FailureKind {
    if error.is_timeout() {
        FailureKind::Timeout
    } else if error.is_connect() {
        FailureKind::Connect
    } else if error.is_body() || error.is_decode() {
        FailureKind::Body
    } else {
        FailureKind::Request
    }
}
