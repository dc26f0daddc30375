//! What a downstream proxy carried: connections and bytes each way, counted as they pass.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

/// Which way bytes went.
#[derive(Clone, Copy, Debug)]
pub(super) enum Direction {
    /// From the service to the downstream.
    Up,
    /// From the downstream back to the service.
    Down,
}

/// The live counts, shared by a proxy's threads.
#[derive(Debug, Default)]
pub(super) struct Counters {
    connections: AtomicU64,
    open: AtomicUsize,
    refused: AtomicU64,
    up: AtomicU64,
    down: AtomicU64,
}

impl Counters {
    pub(super) fn opened(&self) {
        self.connections.fetch_add(1, Ordering::Relaxed);
        self.open.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn closed(&self) {
        self.open.fetch_sub(1, Ordering::Relaxed);
    }

    pub(super) fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    pub(super) fn refused(&self) {
        self.refused.fetch_add(1, Ordering::Relaxed);
    }

    pub(super) fn carried(&self, direction: Direction, bytes: usize) {
        let counter = match direction {
            Direction::Up => &self.up,
            Direction::Down => &self.down,
        };
        counter.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    pub(super) fn read(&self, proxy: SocketAddr, to: SocketAddr, latency: Duration) -> Carried {
        Carried {
            proxy,
            to,
            latency,
            connections: self.connections.load(Ordering::Relaxed),
            open: self.open.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            bytes_up: self.up.load(Ordering::Relaxed),
            bytes_down: self.down.load(Ordering::Relaxed),
        }
    }
}

/// What a [`Proxy`](super::Proxy) carried so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Carried {
    /// The proxy's own address.
    pub proxy: SocketAddr,
    /// The downstream it forwards to.
    pub to: SocketAddr,
    /// The one-way latency it adds in each direction.
    pub latency: Duration,
    /// Connections forwarded.
    pub connections: u64,
    /// Connections still open.
    pub open: usize,
    /// Connections refused: the downstream refused them, or too many were open.
    pub refused: u64,
    /// Bytes from the service to the downstream.
    pub bytes_up: u64,
    /// Bytes from the downstream back to the service.
    pub bytes_down: u64,
}

impl std::fmt::Display for Carried {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the downstream proxy {} → {} ({} ms each way): {} connections ({} open, {} refused), {} bytes up, {} bytes down",
            self.proxy,
            self.to,
            self.latency.as_secs_f64() * 1e3,
            self.connections,
            self.open,
            self.refused,
            self.bytes_up,
            self.bytes_down
        )
    }
}
