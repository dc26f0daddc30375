//! The ledger's core, the store every entry is written to, and the sync client the service
//! calls it with. The core is a TCP server on its own threads that answers each line after
//! its round trip (a store at production's distance, a few milliseconds); the client
//! connects, writes the entry and reads the answer with `std::net` — a sync driver, whose
//! calls block the thread that makes them.

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A running core: its address. Its threads end with the process (a test's).
#[derive(Clone, Copy, Debug)]
pub struct Core {
    addr: SocketAddr,
}

impl Core {
    /// Starts a core on `127.0.0.1` on a free port, answering each entry after `round_trip`.
    pub fn start(round_trip: Duration) -> std::io::Result<Core> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let seq = Arc::new(AtomicU64::new(0));
        std::thread::Builder::new()
            .name("ledger-core".into())
            .spawn(move || {
                for stream in listener.incoming().flatten() {
                    let seq = Arc::clone(&seq);
                    let _ = std::thread::Builder::new()
                        .name("ledger-core-conn".into())
                        .spawn(move || answer(stream, round_trip, &seq));
                }
            })?;
        Ok(Core { addr })
    }

    /// Where the core listens.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Answers each line on `stream` with the next sequence number, after `round_trip`.
fn answer(stream: TcpStream, round_trip: Duration, seq: &AtomicU64) {
    let _ = stream.set_nodelay(true);
    let Ok(mut writer) = stream.try_clone() else {
        return;
    };
    for line in BufReader::new(stream).lines() {
        if line.is_err() {
            return;
        }
        std::thread::sleep(round_trip);
        let next = seq.fetch_add(1, Ordering::Relaxed) + 1;
        if writeln!(writer, "{next}").is_err() {
            return;
        }
    }
}

/// Writes one entry to the core at `addr` and reads its sequence number: a sync client's
/// call, which blocks its thread for the core's round trip.
pub fn append(addr: SocketAddr, account: &str, cents: i64) -> std::io::Result<u64> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_nodelay(true)?;
    writeln!(stream, "{account} {cents}")?;
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line)?;
    line.trim()
        .parse()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{line:?}: {e}")))
}
