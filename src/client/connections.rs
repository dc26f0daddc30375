//! A closed loop on HTTP/1 connections of its own: one TCP connection per user, opened
//! as the user starts; each request the same bytes, written once per request, and each
//! response read by [`framing`](super::framing) — no per-request URL parsing,
//! header-map building, channel, pool lookup or timer of a general-purpose client.
//! What the load driver (`perfshape load`, `perfshape probe`) uses where the client's own
//! cost per request would cap the figure; the seed strategies keep reqwest, whose
//! lifecycles are what they measure.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::framing::{Decoder, Response};
use super::request::Prepared;
use super::retry;
use crate::record::{Connection, FailureKind, Outcome, RequestRecord};

/// Whether `request` can go on a raw connection: plain HTTP (TLS is reqwest's).
pub(super) fn suits(request: &Prepared) -> bool {
    request.url.scheme() == "http" && request.url.host_str().is_some() && !request.grpc
}

/// The closed loop: `users` users, each on its own connection, sending `request` until
/// `duration` has passed, the `n`-th request was taken from `next` (shared by every shard
/// of the load), or `at`'s deadline came; each request bounded by `timeout`. Never fails:
/// a connection that cannot be made fails its user's requests as records.
pub(super) async fn closed_loop(
    request: Arc<Prepared>,
    next: Arc<AtomicUsize>,
    n: usize,
    users: usize,
    duration: Duration,
    at: super::loops::Timing,
    timeout: Duration,
) -> Vec<RequestRecord> {
    let super::loops::Timing { origin, deadline } = at;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..users {
        let (request, next) = (Arc::clone(&request), Arc::clone(&next));
        tasks.spawn(async move {
            let mut records = Vec::new();
            let mut user = User::new(&request, origin, timeout);
            while origin.elapsed() <= duration && Instant::now() < deadline {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= n {
                    break;
                }
                let record = user.send(index).await;
                // A user that cannot connect stops at its first failure: the run names it
                // without sending a flood of failures.
                let unconnected = record.outcome
                    == (Outcome::Failed {
                        kind: FailureKind::Connect,
                    });
                records.push(record);
                if unconnected {
                    break;
                }
            }
            records
        });
    }
    super::loops::gather(tasks).await
}

/// What a user reads a response into: enough for a typical head at once; it grows (up to
/// the head's bound) only for a head that does not fit.
const READ_SIZE: usize = 16 * 1024;

/// One user: its connection (or none, before the first request and after the server
/// closed it), the request's bytes, and its read buffer.
struct User<'r> {
    request: &'r Prepared,
    stream: Option<TcpStream>,
    origin: Instant,
    timeout: Duration,
    /// The whole request (request line, `Host`, the template's headers, the body), built
    /// once: every request writes the same bytes.
    bytes: Vec<u8>,
    /// Bytes read and not yet taken by the response's decoder.
    buffer: Vec<u8>,
    timer: Pin<Box<tokio::time::Sleep>>,
}

impl<'r> User<'r> {
    fn new(request: &'r Prepared, origin: Instant, timeout: Duration) -> User<'r> {
        User {
            request,
            stream: None,
            origin,
            timeout,
            bytes: request_bytes(request),
            buffer: Vec::with_capacity(READ_SIZE),
            timer: Box::pin(tokio::time::sleep(timeout)),
        }
    }

    async fn send(&mut self, index: usize) -> RequestRecord {
        let start = self.origin.elapsed();
        let mut record = RequestRecord::failed_at(index, start, FailureKind::Request);
        // One timer per user, moved on for each request, instead of one made per request;
        // a retry runs within the same limit.
        let limit = self.origin + start + self.timeout;
        self.timer.as_mut().reset(limit.into());
        let reused = self.stream.is_some();
        let mut answered = self.try_once(&mut record).await;
        if reused
            && matches!(answered, Some(Err(Lost::BeforeResponse(_))))
            && retry::safe(&self.request.method)
        {
            // The server closed the idle connection as the request crossed it: once more,
            // on a new one ([`retry`]).
            record.retried = true;
            answered = self.try_once(&mut record).await;
        }
        record.end = self.origin.elapsed();
        match answered {
            None => {}
            // (`try_once` closed the connection.)
            Some(Err(lost)) => record.error = Some(lost.into_error()),
            Some(Ok(response)) => {
                record.body_len = Some(response.body);
                record.outcome = Outcome::of_status(response.status);
                if !response.keep_alive {
                    self.close();
                }
            }
        }
        record
    }

    /// One try: connects where there is no connection (a connection the server closed —
    /// `Connection: close`, an idle timeout — is opened again, as any HTTP/1 client would),
    /// writes the request and reads its response. `None` when the request's time ran out
    /// or the connect failed (the record says which).
    async fn try_once(&mut self, record: &mut RequestRecord) -> Option<Result<Response, Lost>> {
        record.connection = Connection::Reused;
        if self.stream.is_none() {
            record.connection = Connection::New;
            match connect(&self.request.url, self.timeout).await {
                Ok(stream) => self.stream = Some(stream),
                Err(error) => {
                    record.outcome = Outcome::Failed {
                        kind: FailureKind::Connect,
                    };
                    record.error = Some(error);
                    return None;
                }
            }
        }
        let head_request = self.request.method == reqwest::Method::HEAD;
        let exchange = exchange(
            self.stream.as_mut().expect("connected above"),
            &self.bytes,
            &mut self.buffer,
            head_request,
        );
        let answered = tokio::select! {
            biased;
            answered = exchange => answered,
            () = self.timer.as_mut() => {
                record.outcome = Outcome::Failed {
                    kind: FailureKind::Timeout,
                };
                self.close();
                return None;
            }
        };
        if answered.is_err() {
            self.close();
        }
        Some(answered)
    }

    /// Drops the connection (and anything left of its response): the next request opens
    /// a new one.
    fn close(&mut self) {
        self.stream = None;
        self.buffer.clear();
    }
}

/// Why an exchange ended without a response: the connection was lost (reset, closed,
/// a broken pipe) before any byte of the response came — which [`retry`] may send again —
/// or anything else (part of a response, then a reset; a malformed response).
enum Lost {
    BeforeResponse(String),
    Other(String),
}

impl Lost {
    fn into_error(self) -> String {
        match self {
            Lost::BeforeResponse(error) | Lost::Other(error) => error,
        }
    }
}

/// Writes `bytes` and reads the response to them, its body counted and dropped.
async fn exchange(
    stream: &mut TcpStream,
    bytes: &[u8],
    buffer: &mut Vec<u8>,
    head_request: bool,
) -> Result<Response, Lost> {
    let lost = |doing: &str, e: std::io::Error| {
        let error = format!("{doing}: {e}");
        if retry::lost(e.kind()) {
            Lost::BeforeResponse(error)
        } else {
            Lost::Other(error)
        }
    };
    stream
        .write_all(bytes)
        .await
        .map_err(|e| lost("sending the request", e))?;
    let mut decoder = Decoder::new(head_request);
    buffer.clear();
    let mut answered = false;
    loop {
        if buffer.capacity() == buffer.len() {
            buffer.reserve(READ_SIZE);
        }
        let read =
            stream
                .read_buf(buffer)
                .await
                .map_err(|e| match lost("reading the response", e) {
                    Lost::BeforeResponse(error) if answered => Lost::Other(error),
                    other => other,
                })?;
        if read == 0 {
            // Closed before any byte: the server dropped the idle connection unread.
            decoder.closed().map_err(|error| {
                if answered {
                    Lost::Other(error)
                } else {
                    Lost::BeforeResponse(error)
                }
            })?;
        } else {
            answered = true;
            let taken = decoder.feed(buffer).map_err(Lost::Other)?;
            buffer.drain(..taken);
        }
        if let Some(response) = decoder.response() {
            return Ok(response);
        }
    }
}

/// The request as it goes on the wire: the request line, `Host` (unless the template sets
/// one), the template's headers, `Content-Length` for a body (unless set), and the body.
fn request_bytes(request: &Prepared) -> Vec<u8> {
    let url = &request.url;
    let mut bytes = format!("{} {}", request.method, url.path()).into_bytes();
    if let Some(query) = url.query() {
        bytes.extend_from_slice(format!("?{query}").as_bytes());
    }
    bytes.extend_from_slice(b" HTTP/1.1\r\n");
    let mut header = |name: &[u8], value: &[u8]| {
        bytes.extend_from_slice(name);
        bytes.extend_from_slice(b": ");
        bytes.extend_from_slice(value);
        bytes.extend_from_slice(b"\r\n");
    };
    if !request.headers.contains_key(reqwest::header::HOST) {
        let host = url.host_str().unwrap_or_default();
        let authority = match url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        };
        header(b"host", authority.as_bytes());
    }
    for (name, value) in &request.headers {
        header(name.as_str().as_bytes(), value.as_bytes());
    }
    if let Some(body) = &request.body
        && !request
            .headers
            .contains_key(reqwest::header::CONTENT_LENGTH)
    {
        header(b"content-length", body.len().to_string().as_bytes());
    }
    bytes.extend_from_slice(b"\r\n");
    if let Some(body) = &request.body {
        bytes.extend_from_slice(body);
    }
    bytes
}

/// A connection to `url`'s host, with Nagle's delay off (a request is one write).
async fn connect(url: &reqwest::Url, timeout: Duration) -> Result<TcpStream, String> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    let stream = tokio::time::timeout(timeout, TcpStream::connect((host, port)))
        .await
        .map_err(|_| format!("connecting to {host}:{port}: timed out"))?
        .map_err(|e| format!("connecting to {host}:{port}: {e}"))?;
    let _ = stream.set_nodelay(true);
    Ok(stream)
}
