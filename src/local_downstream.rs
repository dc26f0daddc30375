//! What this process talks to on this machine: its established TCP connections to a
//! loopback port another process listens on — a database, a cache, another service started
//! for the test. A downstream on the same machine answers in microseconds where
//! production's is a network hop away, and so hides a synchronous call made on a worker
//! (`thread_clock` says how); a claim on a served router names each such connection, so
//! that a test that meets its database directly says so.
//!
//! Linux names them through `/proc`: this process's socket inodes (its file descriptors),
//! their entries in `/proc/net/tcp{,6}`, and the process that listens on the remote port.
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
/// and where it goes.
#[cfg(linux_reads)]
fn connections(skip: &[u16]) -> Vec<(i32, LocalDownstream)> {
    use crate::service_process::ServiceProcess;
    use procfs::net::TcpState;
    use procfs::process::{FDTarget, Process};
    let Ok(me) = Process::myself() else {
        return Vec::new();
    };
    let Ok(fds) = me.fd() else {
        return Vec::new();
    };
    let mine: std::collections::HashMap<u64, i32> = fds
        .flatten()
        .filter_map(|fd| match fd.target {
            FDTarget::Socket(inode) => Some((inode, fd.fd)),
            _ => None,
        })
        .collect();
    let mut entries = procfs::net::tcp().unwrap_or_default();
    entries.extend(procfs::net::tcp6().unwrap_or_default());
    let listening_here: Vec<u16> = entries
        .iter()
        .filter(|e| e.state == TcpState::Listen && mine.contains_key(&e.inode))
        .map(|e| e.local_address.port())
        .collect();
    // This process's own ends: a connection whose other end is one of them (a served
    // router's side of a test client's connection) goes to no other process, and looking
    // up who listens on its ephemeral port scans every process's descriptors (≈25 ms in a
    // test binary, at the start of each watch).
    let own_ends: std::collections::HashSet<std::net::SocketAddr> = entries
        .iter()
        .filter(|e| mine.contains_key(&e.inode))
        .map(|e| e.local_address)
        .collect();
    let mut found = Vec::new();
    // The process behind each remote port, looked up once a port.
    let mut processes: std::collections::HashMap<u16, Option<ServiceProcess>> =
        std::collections::HashMap::new();
    for entry in &entries {
        let remote = entry.remote_address;
        let Some(&fd) = mine.get(&entry.inode) else {
            continue;
        };
        if entry.state != TcpState::Established
            || !remote.ip().is_loopback()
            || listening_here.contains(&remote.port())
            || own_ends.contains(&remote)
            || skip.contains(&entry.local_address.port())
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
            fd,
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
