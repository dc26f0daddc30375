//! A server that closes a kept-alive connection as the next request arrives: both clients
//! send an idempotent request once more on a new connection and count it; a `POST`, or a
//! connection lost once part of the response came, stays a failure. Every request is
//! accounted for (`sent = ok + failed`) either way.
//!
//! The server here does on purpose what uvicorn, Node and gunicorn do when an idle
//! connection's keep-alive runs out just as the client reuses it: it closes the connection
//! with the request unread, and the kernel answers that request with a reset.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use perfshape::client::Driver;
use perfshape::{
    Result, Target, client::ClientStrategy, client::Lifecycle, client::LoadClient, load::Run,
    load::Summary, runtime::Pool,
};

/// What the server does with the second request on a connection.
#[derive(Clone, Copy)]
enum Second {
    /// Closes the connection with the request unread: the client reads a reset.
    ResetUnread,
    /// As `ResetUnread`, and every request after the server's first is reset wherever it
    /// comes, on a new connection too: a client whose pool has not got the first
    /// connection back when it sends the next opens another (one run in many at the
    /// gate's dependency floors), and that request must meet the reset as well.
    ResetAfterFirst,
    /// Reads it, sends half a response, and closes.
    HalfAnswered,
}

/// The server on 127.0.0.1: each connection's first request answered (kept alive), its
/// second met as `second` says. Accepts for at most 10 s and 64 connections; each
/// connection's reads time out after 5 s.
fn server(second: Second) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a free port");
    let base = format!("http://{}", listener.local_addr().expect("bound"));
    listener.set_nonblocking(true).expect("non-blocking");
    let answered = Arc::new(AtomicBool::new(false));
    std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(10);
        let mut accepted = 0;
        while Instant::now() < until && accepted < 64 {
            match listener.accept() {
                Ok((stream, _)) => {
                    accepted += 1;
                    let answered = Arc::clone(&answered);
                    std::thread::spawn(move || connection(stream, second, &answered));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(2)),
            }
        }
    });
    base
}

fn connection(mut stream: TcpStream, second: Second, answered: &AtomicBool) {
    stream.set_nonblocking(false).expect("blocking");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("a timeout");
    let mut byte = [0u8; 1];
    if matches!(second, Second::ResetAfterFirst)
        && answered.load(Ordering::Acquire)
        && matches!(stream.peek(&mut byte), Ok(1))
    {
        // A later request on a new connection: reset, unread.
        return drop(stream);
    }
    if !read_request(&mut stream) {
        return;
    }
    answered.store(true, Ordering::Release);
    let ok = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
    if stream.write_all(ok).is_err() {
        return;
    }
    // Wait for the next request's first bytes (or the client's close).
    if !matches!(stream.peek(&mut byte), Ok(1)) {
        return;
    }
    match second {
        Second::ResetUnread | Second::ResetAfterFirst => drop(stream),
        Second::HalfAnswered => {
            if read_request(&mut stream) {
                let half = b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nhalf";
                let _ = stream.write_all(half);
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}

/// Reads one request: its head and a `content-length` body. False when the client closed.
fn read_request(stream: &mut TcpStream) -> bool {
    let mut read = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = read.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&read[..end]).to_ascii_lowercase();
            let body: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if read.len() >= end + 4 + body {
                return true;
            }
        }
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => return false,
            Ok(n) => read.extend_from_slice(&chunk[..n]),
        }
    }
}

/// How each driver sends a load one request at a time: reqwest in sequence, the connections
/// driver as one user of a closed loop.
fn one_at_a_time(driver: Driver) -> ClientStrategy {
    match driver {
        Driver::Reqwest => ClientStrategy::Sequential,
        Driver::Connections => ClientStrategy::ClosedLoop {
            users: 1,
            think: Duration::ZERO,
            ramp: Duration::ZERO,
            duration: Duration::from_secs(10),
        },
    }
}

/// Six `GET`s one at a time to a server that meets each connection's second request as
/// `second` says, with `driver`.
fn six_gets(driver: Driver, second: Second) -> Result<(Run, Summary)> {
    let base = server(second);
    let client =
        LoadClient::new(Pool::workers("client", 1)?, Lifecycle::Shared)?.with_driver(driver);
    let run = client.run(one_at_a_time(driver), &format!("{base}/"), 6)?;
    let summary = run.summary(Duration::from_millis(1));
    assert_eq!(
        summary.sent,
        summary.ok + summary.failed,
        "every request is accounted for"
    );
    Ok((run, summary))
}

/// The errors of `run`'s records, for a failed assertion's message.
fn errors(run: &Run) -> Vec<Option<&String>> {
    run.records.iter().map(|r| r.error.as_ref()).collect()
}

#[test]
fn reqwest_sends_a_get_again_on_a_new_connection_after_a_reset() -> Result {
    let (run, summary) = six_gets(Driver::Reqwest, Second::ResetUnread)?;
    assert_eq!((summary.ok, summary.failed), (6, 0), "{:?}", errors(&run));
    // The 2nd, 4th and 6th reused the connection the 1st, 3rd and 5th opened.
    let retried: Vec<usize> = run
        .records
        .iter()
        .filter(|r| r.retried)
        .map(|r| r.index)
        .collect();
    assert_eq!(retried, vec![1, 3, 5]);
    assert_eq!(summary.retried, 3);
    Ok(())
}

#[test]
fn the_connections_driver_sends_a_get_again_on_a_new_connection_after_a_reset() -> Result {
    let (run, summary) = six_gets(Driver::Connections, Second::ResetUnread)?;
    assert_eq!((summary.ok, summary.failed), (6, 0), "{:?}", errors(&run));
    // Each request after the first reused the connection its predecessor's retry opened.
    assert_eq!(summary.retried, 5);
    assert!(!run.records[0].retried);
    Ok(())
}

#[test]
fn a_post_reset_before_its_answer_is_not_sent_twice() -> Result {
    for driver in [Driver::Reqwest, Driver::Connections] {
        let base = server(Second::ResetAfterFirst);
        let target = Target::builder().driver(driver).url(&base)?;
        let error = target
            .post("/orders")
            .json(&serde_json::json!({ "id": 1 }))
            .run(one_at_a_time(driver), 2)
            .expect_err("the second POST met a reset");
        let said = error.to_string();
        assert!(
            said.contains("failed in 1 of 2 requests") && said.contains("reset"),
            "{driver:?}: {said}"
        );
    }
    Ok(())
}

#[test]
fn a_connection_lost_mid_response_is_a_failure_not_a_retry() -> Result {
    for driver in [Driver::Reqwest, Driver::Connections] {
        // The 1st of each pair answered, the 2nd cut off halfway: 3 of 6 failed, none retried.
        let (run, summary) = six_gets(driver, Second::HalfAnswered)?;
        assert_eq!(
            (summary.ok, summary.failed, summary.retried),
            (3, 3, 0),
            "{driver:?}: {:?}",
            errors(&run)
        );
    }
    Ok(())
}
