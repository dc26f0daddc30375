//! A closed loop on HTTP/1 connections of its own: one connection per user, opened as the
//! user starts, each request built from parts prepared once — no per-request
//! URL parsing, header-map building, pool lookup or timer of a general-purpose client.
//! What the load driver (`perfshape load`, `perfshape probe`) uses where the client's own
//! cost per request would cap the figure; the seed strategies keep reqwest, whose
//! lifecycles are what they measure.

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use super::request::Prepared;
use crate::record::{Connection, FailureKind, Outcome, RequestRecord};

/// Whether `request` can go on a raw connection: plain HTTP (TLS is reqwest's).
pub(super) fn suits(request: &Prepared) -> bool {
    request.url.scheme() == "http" && request.url.host_str().is_some()
}

/// The closed loop: `users` users, each on its own connection, sending `request` until
/// `duration` has passed, `n` requests were sent, or `deadline` came; each request bounded
/// by `timeout`. Never fails: a connection that cannot be made fails its user's requests
/// as records.
pub(super) async fn closed_loop(
    request: Arc<Prepared>,
    n: usize,
    users: usize,
    duration: Duration,
    origin: Instant,
    deadline: Instant,
    timeout: Duration,
) -> Vec<RequestRecord> {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..users {
        let (request, next) = (Arc::clone(&request), Arc::clone(&next));
        tasks.spawn(async move {
            let mut records = Vec::new();
            let mut user = User::new(&request, origin, timeout).await;
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
    super::gather(tasks).await
}

/// hyper's HTTP/1 connection on a TCP stream, pinned to be driven in place.
type Driven = Pin<Box<http1::Connection<TokioIo<TcpStream>, Full<Bytes>>>>;

/// One HTTP/1 connection: the handle that sends on it, and the connection itself, driven
/// by the user's own task while a request is in flight (a task of its own would add a
/// wake-up between the socket and the user per request); `None` once it has closed.
struct Link {
    sender: http1::SendRequest<Full<Bytes>>,
    connection: Option<Driven>,
}

/// One user: its connection (or why it has none) and what each of its requests is made of.
struct User<'r> {
    request: &'r Prepared,
    /// The connection, `None` before the first request and after the server closed it.
    link: Option<Link>,
    origin: Instant,
    timeout: Duration,
    /// The request's head (method, path and query, `Host` and the template's headers),
    /// built once: each request clones it.
    head: hyper::http::request::Parts,
    timer: std::pin::Pin<Box<tokio::time::Sleep>>,
}

impl<'r> User<'r> {
    async fn new(request: &'r Prepared, origin: Instant, timeout: Duration) -> User<'r> {
        let url = &request.url;
        let authority = match url.port() {
            Some(port) => format!("{}:{port}", url.host_str().unwrap_or_default()),
            None => url.host_str().unwrap_or_default().to_string(),
        };
        let path = match url.query() {
            Some(query) => format!("{}?{query}", url.path()),
            None => url.path().to_string(),
        };
        let mut head = hyper::Request::new(()).into_parts().0;
        head.method = request.method.clone();
        head.uri = path.parse().unwrap_or_default();
        head.headers = request.headers.clone();
        if let Ok(host) = hyper::header::HeaderValue::from_str(&authority) {
            head.headers.insert(hyper::header::HOST, host);
        }
        User {
            request,
            link: None,
            origin,
            timeout,
            head,
            timer: Box::pin(tokio::time::sleep(timeout)),
        }
    }

    async fn send(&mut self, index: usize) -> RequestRecord {
        let start = self.origin.elapsed();
        let mut record = RequestRecord::failed_at(index, start, FailureKind::Request);
        record.connection = Connection::Reused;
        // A connection the server closed (`Connection: close`, an idle timeout) is opened
        // again, as any HTTP/1 client would.
        if self
            .link
            .as_ref()
            .is_none_or(|link| link.connection.is_none() || link.sender.is_closed())
        {
            record.connection = Connection::New;
            match connect(&self.request.url, self.timeout).await {
                Ok(link) => self.link = Some(link),
                Err(error) => {
                    self.link = None;
                    record.end = self.origin.elapsed();
                    record.outcome = Outcome::Failed {
                        kind: FailureKind::Connect,
                    };
                    record.error = Some(error);
                    return record;
                }
            }
        }
        let Some(Link { sender, connection }) = self.link.as_mut() else {
            unreachable!("connected above");
        };
        let body = self.request.body.clone().unwrap_or_default();
        let request = hyper::Request::from_parts(self.head.clone(), Full::new(body));
        let exchange = async {
            let response = sender
                .send_request(request)
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status();
            // Counted frame by frame, never gathered: the body's bytes are not needed.
            let mut body = response.into_body();
            let mut bytes = 0;
            while let Some(frame) = body.frame().await {
                let frame = frame.map_err(|e| e.to_string())?;
                bytes += frame.data_ref().map_or(0, |data| data.len());
            }
            Ok::<_, String>((status, bytes))
        };
        // One timer per user, moved on for each request, instead of one made per request.
        let limit = self.origin + start + self.timeout;
        self.timer.as_mut().reset(limit.into());
        let mut exchange = std::pin::pin!(exchange);
        // The connection ends when the server closes it, often in the same poll that
        // delivers the response: the exchange is awaited to its own end either way.
        let answered = loop {
            tokio::select! {
                biased;
                answered = &mut exchange => break Ok(answered),
                _ = async {
                    match connection.as_mut() {
                        Some(driven) => driven.as_mut().await,
                        None => std::future::pending().await,
                    }
                }, if connection.is_some() => *connection = None,
                () = self.timer.as_mut() => break Err(()),
            }
        };
        record.end = self.origin.elapsed();
        match answered {
            Err(_) => {
                record.outcome = Outcome::Failed {
                    kind: FailureKind::Timeout,
                };
            }
            Ok(Err(error)) => record.error = Some(error),
            Ok(Ok((status, bytes))) => {
                record.body_len = Some(bytes);
                record.outcome = if status.is_success() {
                    Outcome::Ok {
                        status: status.as_u16(),
                    }
                } else {
                    Outcome::Failed {
                        kind: FailureKind::Status(status.as_u16()),
                    }
                };
            }
        }
        record
    }
}

/// A connection to `url`'s host, its HTTP/1 handshake done.
async fn connect(url: &reqwest::Url, timeout: Duration) -> Result<Link, String> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    let stream = tokio::time::timeout(timeout, TcpStream::connect((host, port)))
        .await
        .map_err(|_| format!("connecting to {host}:{port}: timed out"))?
        .map_err(|e| format!("connecting to {host}:{port}: {e}"))?;
    let _ = stream.set_nodelay(true);
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("HTTP/1 handshake with {host}:{port}: {e}"))?;
    Ok(Link {
        sender,
        connection: Some(Box::pin(connection)),
    })
}
