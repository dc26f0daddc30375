//! One proxied connection: in each direction a reader that stamps each chunk with when it
//! may go on, and a writer that sends it then — a delay line.

use std::io::{Read as _, Write as _};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use super::Shared;
use super::carried::Direction;

/// The most bytes read at once: a chunk is delayed whole.
const CHUNK: usize = 64 * 1024;

/// Forwards `client` ↔ `server` with the shared latency, on four threads of their own;
/// `onward` is the local port of `server`, registered as the proxy's own until it closes.
pub(super) fn connect(
    client: TcpStream,
    server: TcpStream,
    shared: &Arc<Shared>,
    onward: Option<u16>,
) -> std::io::Result<()> {
    let id = shared.next.fetch_add(1, Ordering::Relaxed);
    shared
        .open
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(id, (client.try_clone()?, server.try_clone()?));
    shared.counters.opened();
    let (up, down) = ((client.try_clone()?, server.try_clone()?), (server, client));
    let closing = Arc::new(AtomicUsize::new(2));
    for ((from, to), direction) in [(up, Direction::Up), (down, Direction::Down)] {
        let (shared, closing) = (shared.clone(), closing.clone());
        let (send, receive) = mpsc::channel::<(Instant, Vec<u8>)>();
        let (read_from, latency) = (from, shared.latency);
        std::thread::Builder::new()
            .name("perfshape-downstream-read".into())
            .spawn(move || read(read_from, &send, latency))?;
        std::thread::Builder::new()
            .name("perfshape-downstream-write".into())
            .spawn(move || {
                write(&to, &receive, &shared, direction);
                // The last direction to finish closes the connection.
                if closing.fetch_sub(1, Ordering::SeqCst) == 1 {
                    shared
                        .open
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .remove(&id);
                    super::ONWARD
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .retain(|port| Some(*port) != onward);
                    shared.counters.closed();
                }
            })?;
    }
    Ok(())
}

/// Reads until the end or an error, handing each chunk on with when it may be written; an
/// empty chunk is the end.
fn read(mut from: TcpStream, to: &mpsc::Sender<(Instant, Vec<u8>)>, latency: Duration) {
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let read = from.read(&mut buffer).unwrap_or(0);
        let due = Instant::now() + latency;
        if to.send((due, buffer[..read].to_vec())).is_err() || read == 0 {
            return;
        }
    }
}

/// Writes each chunk once it is due; at the end (or an error either side) shuts the
/// writing half, so the peer sees the close as it would have, late by the latency.
fn write(
    to: &TcpStream,
    chunks: &mpsc::Receiver<(Instant, Vec<u8>)>,
    shared: &Shared,
    direction: Direction,
) {
    let mut to = to;
    for (due, chunk) in chunks {
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
        if chunk.is_empty() || to.write_all(&chunk).is_err() {
            break;
        }
        shared.counters.carried(direction, chunk.len());
    }
    let _ = to.shutdown(Shutdown::Write);
}
