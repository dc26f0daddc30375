//! One request, turned into a record whatever happens to it.

use std::time::{Duration, Instant};

use reqwest::header::HeaderMap;

use crate::record::{Connection, FailureKind, Outcome, RequestRecord};
use crate::vocab::RuntimeFigures;
use crate::vocab::wire::{PEER, RUNTIME, SERVED_BY, parse_peer};

/// Sends GET `url` and records it. Never fails: a failure is an outcome.
pub(crate) async fn send(
    client: &reqwest::Client,
    url: &str,
    index: usize,
    origin: Instant,
    intended_start: Duration,
) -> RequestRecord {
    let start = origin.elapsed();
    let response = match client.get(url).send().await {
        Err(error) => Err((classify(&error), error)),
        Ok(response) => {
            let status = response.status();
            let headers = response.headers().clone();
            match response.bytes().await {
                Err(error) if error.is_timeout() => Err((FailureKind::Timeout, error)),
                Err(error) => Err((FailureKind::Body, error)),
                Ok(_) if !status.is_success() => Ok((
                    Outcome::Failed {
                        kind: FailureKind::Status(status.as_u16()),
                    },
                    headers,
                )),
                Ok(_) => Ok((
                    Outcome::Ok {
                        status: status.as_u16(),
                    },
                    headers,
                )),
            }
        }
    };
    // The request ends when its last byte arrives; reading its headers is not its latency.
    let end = origin.elapsed();
    let mut record = RequestRecord::failed_at(index, start, FailureKind::Request);
    record.intended_start = intended_start;
    record.end = end;
    match response {
        Err((kind, error)) => {
            record.outcome = Outcome::Failed { kind };
            record.error = Some(describe(&error));
        }
        Ok((outcome, headers)) => {
            record.outcome = outcome;
            // Not every server is served by perfshape: missing headers are simply unknown.
            record.served_by = header(&headers, SERVED_BY).map(str::to_string);
            record.server_at_start =
                header(&headers, RUNTIME).and_then(|v| v.parse::<RuntimeFigures>().ok());
            record.peer = header(&headers, PEER).and_then(parse_peer);
        }
    }
    record.connection = Connection::Unknown;
    record
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers.get(name).and_then(|v| v.to_str().ok())
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
