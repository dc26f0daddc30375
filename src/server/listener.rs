//! A TCP listener that counts what it accepts and tells handlers who is calling.
//!
//! Seed 001's lesson is about connections (a new client per call opens a new one each
//! time; a per-host cap queues requests), so the server must be able to say how many it
//! accepted, and each response must say which connection carried it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::connect_info::Connected;
use axum::serve::{IncomingStream, Listener};
use tokio::net::{TcpListener, TcpStream};

/// Wraps a [`TcpListener`], counting accepted connections and turning Nagle off on each
/// (a small response held back by Nagle plus a delayed ACK adds ~40 ms, which would
/// drown a 20 ms work time).
pub(crate) struct CountingListener {
    pub(crate) inner: TcpListener,
    pub(crate) accepted: Arc<AtomicU64>,
}

impl Listener for CountingListener {
    type Io = TcpStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (TcpStream, SocketAddr) {
        // axum's own accept retries on transient errors (EMFILE and friends).
        let (stream, peer) = Listener::accept(&mut self.inner).await;
        let _ = stream.set_nodelay(true);
        self.accepted.fetch_add(1, Ordering::Relaxed);
        (stream, peer)
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// The client end of the connection a request arrived on.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Peer(pub(crate) SocketAddr);

impl Connected<IncomingStream<'_, CountingListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, CountingListener>) -> Self {
        Peer(*stream.remote_addr())
    }
}
