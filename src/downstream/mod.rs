//! **A downstream at production's distance**: a TCP proxy a test puts between the service
//! and what it calls — its database, a cache, another HTTP service — that forwards every
//! connection to the real address with a stated one-way latency in each direction.
//!
//! A test's database runs on the same machine and answers in tens of microseconds; in
//! production it is a network hop away, 0.3–2 ms. A synchronous driver called on an async
//! worker holds that worker for each query's round trip — a millisecond in production,
//! next to nothing on loopback, where the kernel often runs the database in the worker's
//! place and hands it the answer before it is off its CPU at all. Through this proxy the
//! round trip is what production's is, so the claims see the hold production will see:
//! a sync driver on the worker breaks [`does_not_block_its_worker`], an async driver's
//! pool shows as its concurrency limit.
//!
//! ```no_run
//! use std::time::Duration;
//! use perfshape::Downstream;
//!
//! // The test's PostgreSQL listens on 5432; the service is pointed at the proxy.
//! let database = Downstream::to("127.0.0.1:5432")
//!     .latency(Duration::from_millis(1))
//!     .start()?;
//! let url = format!("postgres://app@{}/app", database.addr());
//! // ... build the service with `url`, serve it, check its claims ...
//! println!("{}", database.carried()); // connections and bytes, each way
//! # Ok::<(), perfshape::Error>(())
//! ```
//!
//! The proxy is a few threads of its own (an accept loop, and per connection a reader and a
//! writer in each direction), so it takes no time from the service's workers or the load
//! client's. Each chunk read is written on after the latency has passed since it was read:
//! a delay line, which keeps the order and lets chunks in flight overlap, as a network
//! does. The delay is slept with the OS's timer (`std::thread::sleep`, ≈0.05–0.1 ms late
//! on Linux; the stated latency is the least it adds). The field's tool for this,
//! Toxiproxy, is a server of its own to install and drive over HTTP; this one lives in the
//! test and stops with it.
//!
//! Bounded: at most [`MAX_CONNECTIONS`] open at once (more are refused and counted), the
//! latency at most [`MAX_LATENCY`]. It binds `127.0.0.1` on an ephemeral port. Dropping
//! the handle closes the listener and every open connection, and says what it carried.
//!
//! [`does_not_block_its_worker`]: crate::Endpoint::does_not_block_its_worker

mod carried;
mod pipe;

use std::collections::HashMap;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

pub use carried::Carried;
use carried::Counters;

use crate::error::{Error, Result};

/// The longest one-way latency a proxy adds: a downstream further than 10 s away is a
/// downstream that is down, which is not what the proxy is for.
pub const MAX_LATENCY: Duration = Duration::from_secs(10);

/// The most connections a proxy holds open at once: a pool of a few dozen is what a
/// service keeps; more is a leak, refused and counted rather than served.
pub const MAX_CONNECTIONS: usize = 256;

/// The local ports of every running proxy's connections onward, to the downstream: a
/// connection of this process's to a local database that is the proxy's own, not the
/// service's (`local_downstream` leaves them out).
static ONWARD: Mutex<Vec<u16>> = Mutex::new(Vec::new());

/// The local ports of the proxies' connections onward, now.
pub(crate) fn onward_ports() -> Vec<u16> {
    ONWARD
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Every running proxy's address, with where it forwards to and the latency it adds: what
/// a report names a connection to the proxy by.
static RUNNING: Mutex<Vec<(SocketAddr, SocketAddr, Duration)>> = Mutex::new(Vec::new());

/// "perfshape's Downstream to 127.0.0.1:5432, 1 ms each way" for a running proxy's address.
pub(crate) fn proxy_at(addr: SocketAddr) -> Option<String> {
    RUNNING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|(at, _, _)| *at == addr)
        .map(|(_, to, latency)| {
            format!(
                "perfshape's Downstream to {to}, {} ms each way",
                latency.as_secs_f64() * 1e3
            )
        })
}

/// How long stopping waits for the open connections' threads to end.
const CLOSE_WITHIN: Duration = Duration::from_secs(1);

/// How long the proxy waits to connect to the downstream, at start and per connection.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A proxy to be started: where it forwards to, and the latency it adds
/// ([`Downstream::to`]).
#[derive(Clone, Debug)]
#[must_use = "a Downstream does nothing until `start()`"]
pub struct Downstream {
    to: String,
    latency: Duration,
}

impl Downstream {
    /// A proxy forwarding to `address` (`host:port`, e.g. `127.0.0.1:5432`), adding no
    /// latency until [`latency`](Self::latency) says how much.
    pub fn to(address: impl Into<String>) -> Downstream {
        Downstream {
            to: address.into(),
            latency: Duration::ZERO,
        }
    }

    /// The one-way latency added in each direction: a round trip through the proxy takes
    /// twice this longer. At most [`MAX_LATENCY`]; more is refused by `start()`.
    pub fn latency(mut self, one_way: Duration) -> Downstream {
        self.latency = one_way;
        self
    }

    /// Checks the setting, connects once to the downstream (so an address nobody listens
    /// on is named now, not after a load), binds `127.0.0.1` on an ephemeral port and
    /// starts forwarding.
    pub fn start(self) -> Result<Proxy> {
        if self.latency > MAX_LATENCY {
            return Err(Error::invalid(
                "downstream latency",
                format!("{:?}", self.latency),
                format!(
                    "a one-way latency from 0 to {} s (production's database is 0.3–2 ms away)",
                    MAX_LATENCY.as_secs()
                ),
            ));
        }
        let unreachable = |reason: String| Error::Unreachable {
            url: format!("the downstream {} through the proxy", self.to),
            reason,
        };
        let to = self
            .to
            .to_socket_addrs()
            .map_err(|e| unreachable(e.to_string()))?
            .next()
            .ok_or_else(|| unreachable("the address resolves to nothing".to_string()))?;
        TcpStream::connect_timeout(&to, CONNECT_TIMEOUT)
            .map_err(|e| unreachable(e.to_string()))?
            .shutdown(Shutdown::Both)
            .ok();
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| Error::io("binding the downstream proxy on 127.0.0.1", e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::io("reading the downstream proxy's address", e))?;
        let shared = Arc::new(Shared {
            to,
            latency: self.latency,
            stopping: AtomicBool::new(false),
            open: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            counters: Counters::default(),
        });
        let accepting = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("perfshape-downstream".into())
                .spawn(move || accept(&listener, &shared))
                .map_err(|e| Error::io("starting the downstream proxy's thread", e))?
        };
        RUNNING
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push((addr, to, self.latency));
        Ok(Proxy {
            addr,
            shared,
            accepting: Some(accepting),
        })
    }
}

/// A running proxy: its address, what it carried so far. Dropping it stops it.
#[derive(Debug)]
pub struct Proxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accepting: Option<JoinHandle<()>>,
}

impl Proxy {
    /// The address to point the service at, in place of the downstream's.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address it forwards to.
    pub fn downstream(&self) -> SocketAddr {
        self.shared.to
    }

    /// The one-way latency it adds in each direction.
    pub fn latency(&self) -> Duration {
        self.shared.latency
    }

    /// What passed through so far: connections, bytes each way, connections refused.
    pub fn carried(&self) -> Carried {
        self.shared
            .counters
            .read(self.addr, self.shared.to, self.shared.latency)
    }

    /// Closes the listener and every open connection, and returns what it carried.
    pub fn stop(mut self) -> Carried {
        self.close()
    }

    fn close(&mut self) -> Carried {
        if let Some(accepting) = self.accepting.take() {
            RUNNING
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|(at, _, _)| *at != self.addr);
            self.shared.stopping.store(true, Ordering::SeqCst);
            // Wakes the accept loop, which sees `stopping` and returns.
            drop(TcpStream::connect_timeout(&self.addr, CONNECT_TIMEOUT));
            let _ = accepting.join();
            for (client, server) in self
                .shared
                .open
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .values()
            {
                let _ = client.shutdown(Shutdown::Both);
                let _ = server.shutdown(Shutdown::Both);
            }
            // The connections' threads see their sockets closed and end; what they carried
            // is counted once they have (bounded: a thread stuck in a write gives up when
            // its socket is shut, well within this).
            let deadline = std::time::Instant::now() + CLOSE_WITHIN;
            while self.shared.counters.open() > 0 && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        self.carried()
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if self.accepting.is_some() {
            let carried = self.close();
            eprintln!("perfshape: closed {carried}");
        }
    }
}

/// What the accept loop and the connections share.
#[derive(Debug)]
struct Shared {
    to: SocketAddr,
    latency: Duration,
    stopping: AtomicBool,
    /// A handle on both sockets of each open connection, by number, to close at stop; a
    /// connection takes its own out when it closes.
    open: Mutex<HashMap<u64, (TcpStream, TcpStream)>>,
    /// The next connection's number.
    next: AtomicU64,
    counters: Counters,
}

/// Accepts until stopped; each connection is forwarded by threads of its own.
fn accept(listener: &TcpListener, shared: &Arc<Shared>) {
    for client in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            return;
        }
        let Ok(client) = client else { continue };
        if shared.counters.open() >= MAX_CONNECTIONS {
            shared.counters.refused();
            let _ = client.shutdown(Shutdown::Both);
            continue;
        }
        let server = match TcpStream::connect_timeout(&shared.to, CONNECT_TIMEOUT) {
            Ok(server) => server,
            Err(_) => {
                shared.counters.refused();
                let _ = client.shutdown(Shutdown::Both);
                continue;
            }
        };
        let onward = server.local_addr().map(|a| a.port()).ok();
        ONWARD
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(onward);
        // A database protocol's small messages must not wait for Nagle's algorithm: the
        // latency is the proxy's to add, exactly.
        let _ = client.set_nodelay(true);
        let _ = server.set_nodelay(true);
        if let Err(e) = pipe::connect(client, server, shared, onward) {
            eprintln!("perfshape: the downstream proxy could not forward a connection: {e}");
        }
    }
}
