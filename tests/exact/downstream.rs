//! The downstream proxy: what it refuses at once, what it carries, and that it adds at
//! least the latency it states — a lower bound it sleeps for, never a wall time that a slow
//! machine could break.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use perfshape::{Downstream, Error};

/// An echo server on an ephemeral port, for as long as the test runs: each connection
/// gets back what it sends.
fn echo() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut buffer = [0u8; 4096];
                while let Ok(n) = stream.read(&mut buffer) {
                    if n == 0 || stream.write_all(&buffer[..n]).is_err() {
                        break;
                    }
                }
            });
        }
    });
    addr
}

#[test]
fn an_address_nobody_listens_on_is_named_at_once() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let err = Downstream::to(format!("127.0.0.1:{port}"))
        .latency(Duration::from_millis(1))
        .start()
        .unwrap_err();
    assert!(matches!(err, Error::Unreachable { .. }), "{err}");
    let said = err.to_string();
    assert!(
        said.starts_with(&format!(
            "cannot reach the downstream 127.0.0.1:{port} through the proxy: "
        )) && said.contains("refused"),
        "{said}"
    );
}

#[test]
fn a_latency_past_ten_seconds_is_refused_by_name() {
    let err = Downstream::to(echo().to_string())
        .latency(Duration::from_secs(11))
        .start()
        .unwrap_err();
    let said = err.to_string();
    assert!(said.contains("invalid downstream latency: 11s"), "{said}");
    assert!(said.contains("from 0 to 10 s"), "{said}");
}

#[test]
fn it_carries_both_ways_adds_at_least_its_latency_and_counts_what_passed() {
    let latency = Duration::from_millis(20);
    let proxy = Downstream::to(echo().to_string())
        .latency(latency)
        .start()
        .unwrap();
    assert!(proxy.addr().ip().is_loopback());
    let mut stream = TcpStream::connect(proxy.addr()).unwrap();
    stream.set_nodelay(true).unwrap();
    let mut answer = [0u8; 5];
    for _ in 0..3 {
        let sent = Instant::now();
        stream.write_all(b"hello").unwrap();
        stream.read_exact(&mut answer).unwrap();
        // One way up, one way down: the delay line sleeps for each.
        assert!(sent.elapsed() >= 2 * latency, "{:?}", sent.elapsed());
        assert_eq!(&answer, b"hello");
    }
    drop(stream);
    let carried = proxy.stop();
    assert_eq!(carried.connections, 1, "{carried}");
    assert_eq!(
        (carried.bytes_up, carried.bytes_down),
        (15, 15),
        "{carried}"
    );
    assert_eq!((carried.open, carried.refused), (0, 0), "{carried}");
}

#[test]
fn stopping_closes_a_connection_still_open() {
    let proxy = Downstream::to(echo().to_string()).start().unwrap();
    let mut stream = TcpStream::connect(proxy.addr()).unwrap();
    stream.write_all(b"ping").unwrap();
    let mut answer = [0u8; 4];
    stream.read_exact(&mut answer).unwrap();
    let carried = proxy.stop();
    assert_eq!(carried.open, 0, "{carried}");
    // The service's end sees the close.
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(stream.read(&mut answer).unwrap_or(0), 0);
}
