//! One request, turned into a record whatever happens to it.

use std::time::{Duration, Instant};

use crate::run::{Connection, FailureKind, Outcome, RequestRecord};
use crate::server::WorkReport;

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
        Err(error) => Err(failed(classify(&error))),
        Ok(response) => {
            let status = response.status();
            match response.bytes().await {
                Err(error) if error.is_timeout() => Err(failed(FailureKind::Timeout)),
                Err(_) => Err(failed(FailureKind::Body)),
                Ok(_) if !status.is_success() => Err(failed(FailureKind::Status(status.as_u16()))),
                Ok(body) => Ok((status.as_u16(), body)),
            }
        }
    };
    // The request ends when its last byte arrives; reading the report is not its latency.
    let end = origin.elapsed();
    let (outcome, report) = match response {
        Err(outcome) => (outcome, None),
        // Not every server is ours: a body that is not a WorkReport is still ok.
        Ok((status, body)) => (
            Outcome::Ok { status },
            serde_json::from_slice::<WorkReport>(&body).ok(),
        ),
    };
    RequestRecord {
        index,
        intended_start,
        start,
        end,
        outcome,
        served_by: report.as_ref().map(|r| r.served_by.clone()),
        connection: Connection::Unknown,
        server_at_start: report.as_ref().map(|r| r.at_start),
        peer: report.and_then(|r| r.peer),
    }
}

fn failed(kind: FailureKind) -> Outcome {
    Outcome::Failed { kind }
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
