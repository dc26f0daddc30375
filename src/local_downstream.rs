//! What this process talks to on this machine: its established TCP connections to a
//! loopback port another process listens on — a database, a cache, another service started
//! for the test. A downstream on the same machine answers in microseconds where
//! production's is a network hop away, and so hides a synchronous call made on a worker
//! (`thread_clock` says how); a claim on a served router names each such connection, so
//! that a test that meets its database directly says so.
//!
//! Linux names them from this process's own sockets, each asked for its ends
//! ([`crate::own_sockets`]), and `/proc` for the process that listens on the remote port.
//! Off Linux none is named.

use std::net::SocketAddr;

/// One connection of this process's to a local process's listening port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LocalDownstream {
    /// The address connected to.
    pub(crate) addr: SocketAddr,
    /// The process listening there (`postgres`), where `/proc` names it.
    pub(crate) process: Option<String>,
}

impl std::fmt::Display for LocalDownstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.process {
            Some(name) => write!(f, "{} ({name})", self.addr),
            None => write!(f, "{}", self.addr),
        }
    }
}

/// This process's connections to other local processes' listeners, one per address, but
/// for those whose local port is in `skip` (a downstream proxy's own connections onward).
pub(crate) fn local_downstreams(skip: &[u16]) -> Vec<LocalDownstream> {
    let mut found: Vec<LocalDownstream> = Vec::new();
    for (_, downstream) in connections(skip) {
        if !found.iter().any(|f| f.addr == downstream.addr) {
            found.push(downstream);
        }
    }
    found.sort_by_key(|f| f.addr);
    found
}

/// The descriptors of this process's connections to other local processes' listeners
/// (all of them: a pool's many to one database), but for those whose local port is in
/// `skip`.
pub(crate) fn local_sockets(skip: &[u16]) -> Vec<i32> {
    connections(skip).into_iter().map(|(fd, _)| fd).collect()
}

/// Each connection of this process's to another local process's listener: its descriptor,
/// and where it goes. A connection whose other end is this process's own (a served
/// router's side of a test client's connection) goes to no other process, and is not looked
/// up: who listens on its ephemeral port is found by scanning every process's descriptors.
#[cfg(linux_reads)]
fn connections(skip: &[u16]) -> Vec<(i32, LocalDownstream)> {
    use crate::service_process::ServiceProcess;
    let sockets = crate::own_sockets::tcp_sockets();
    let listening_here: Vec<u16> = sockets
        .iter()
        .filter(|s| s.listening)
        .map(|s| s.local.port())
        .collect();
    let own_ends: Vec<SocketAddr> = sockets.iter().map(|s| s.local).collect();
    let mut found = Vec::new();
    // The process behind each remote port, looked up once a port.
    let mut processes: std::collections::HashMap<u16, Option<ServiceProcess>> =
        std::collections::HashMap::new();
    for socket in &sockets {
        let Some(remote) = socket.peer else {
            continue;
        };
        if !remote.ip().is_loopback()
            || listening_here.contains(&remote.port())
            || own_ends.contains(&remote)
            || skip.contains(&socket.local.port())
        {
            continue;
        }
        let process = processes
            .entry(remote.port())
            .or_insert_with(|| ServiceProcess::listening_on(remote.port()));
        let Some(process) = process else {
            continue;
        };
        if process.is_this_process() {
            continue;
        }
        found.push((
            socket.fd,
            LocalDownstream {
                addr: remote,
                process: process.name(),
            },
        ));
    }
    found
}

/// Not read off Linux.
#[cfg(not(linux_reads))]
fn connections(_skip: &[u16]) -> Vec<(i32, LocalDownstream)> {
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    #[test]
    fn a_connection_to_a_listener_of_this_process_is_no_downstream() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let _client = TcpStream::connect(addr).unwrap();
        let _server = listener.accept().unwrap();
        assert!(local_downstreams(&[]).iter().all(|d| d.addr != addr));
    }
}
