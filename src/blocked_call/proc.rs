//! What the kernel says of a thread and its descriptors, read from `/proc` (Linux, behind
//! `linux_reads`): a thread's `syscall` file, what a descriptor is, a socket's ends and the
//! local process listening at its other end; the portable fallbacks beside each, reading
//! nothing.

use std::collections::HashMap;
use std::net::SocketAddr;

use super::Tid;

/// A `syscall` file's content, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Raw {
    /// `running`.
    Running,
    /// `-1 sp pc`: blocked, but in no system call.
    Fault,
    /// A call's number and its first argument.
    Call(i64, u64),
}

/// Parses `/proc/…/syscall`: `running`, `-1 sp pc`, or `nr arg1 … arg6 sp pc` with the
/// arguments in hexadecimal.
pub(super) fn parse(text: &str) -> Option<Raw> {
    let mut words = text.split_whitespace();
    let first = words.next()?;
    if first == "running" {
        return Some(Raw::Running);
    }
    let nr: i64 = first.parse().ok()?;
    if nr < 0 {
        return Some(Raw::Fault);
    }
    let arg = words.next()?;
    let arg = u64::from_str_radix(arg.trim_start_matches("0x"), 16).ok()?;
    Some(Raw::Call(nr, arg))
}

/// What a descriptor is (only read on Linux).
#[cfg_attr(not(linux_reads), allow(dead_code))]
pub(super) enum Target {
    Socket(u64),
    Path(String),
}

/// Thread `tid`'s `syscall` file: `running`, or the call it sleeps in with its arguments,
/// stack pointer and instruction pointer.
#[cfg(linux_reads)]
pub(crate) fn syscall_line(tid: Tid) -> Option<String> {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")).ok()
}

/// Not read off Linux.
#[cfg(not(linux_reads))]
pub(crate) fn syscall_line(_tid: Tid) -> Option<String> {
    None
}

/// The descriptor of the first `pollfd` at `address` in this process's memory.
#[cfg(linux_reads)]
pub(super) fn first_polled(address: u64) -> Option<u64> {
    let mut fd: libc::c_int = -1;
    let local = libc::iovec {
        iov_base: (&raw mut fd).cast(),
        iov_len: std::mem::size_of::<libc::c_int>(),
    };
    let remote = libc::iovec {
        iov_base: address as *mut libc::c_void,
        iov_len: std::mem::size_of::<libc::c_int>(),
    };
    // SAFETY: process_vm_readv copies into `fd` only (one iovec of its size); the remote
    // address is checked by the kernel, which fails the call (EFAULT) where it is not
    // mapped instead of faulting.
    let read = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    (read == std::mem::size_of::<libc::c_int>() as isize && fd >= 0).then_some(fd as u64)
}

#[cfg(not(linux_reads))]
pub(super) fn first_polled(_address: u64) -> Option<u64> {
    None
}

#[cfg(linux_reads)]
pub(super) fn fd_target(fd: u64) -> Option<Target> {
    let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let link = link.to_string_lossy().into_owned();
    Some(match link.strip_prefix("socket:[") {
        Some(rest) => Target::Socket(rest.trim_end_matches(']').parse().ok()?),
        None if link.starts_with("pipe:") => Target::Path("a pipe".into()),
        None if link.starts_with("anon_inode:") => {
            Target::Path(format!("an {}", link.trim_start_matches("anon_inode:")))
        }
        None => Target::Path(link),
    })
}

#[cfg(not(linux_reads))]
pub(super) fn fd_target(_fd: u64) -> Option<Target> {
    None
}

/// The other end of the socket with `inode`, in words: "its connection to 127.0.0.1:5432
/// (postgres)", "a connection to 10.0.0.7:443", or "a socket" where it is no TCP
/// connection `/proc/net` lists.
#[cfg(linux_reads)]
pub(super) fn socket_peer(
    inode: u64,
    fd: u64,
    listeners: &mut HashMap<SocketAddr, String>,
) -> (String, Option<SocketAddr>) {
    let remote = match ends_of(fd, inode) {
        Some(Ends::Connected(remote)) => remote,
        Some(Ends::Listening(local)) => return (format!("its listener on {local}"), None),
        Some(Ends::NotTcp) => return ("a socket (not a TCP connection)".into(), None),
        // The descriptor was closed or reused meanwhile: the kernel's table says.
        None => {
            let mut entries = procfs::net::tcp().unwrap_or_default();
            entries.extend(procfs::net::tcp6().unwrap_or_default());
            let Some(entry) = entries.iter().find(|e| e.inode == inode) else {
                return ("a socket (not a TCP connection)".into(), None);
            };
            if entry.state == procfs::net::TcpState::Listen {
                return (format!("its listener on {}", entry.local_address), None);
            }
            entry.remote_address
        }
    };
    if !remote.ip().is_loopback() {
        return (format!("a connection to {remote}"), Some(remote));
    }
    let said = listeners.entry(remote).or_insert_with(|| {
        // This process first, from its own descriptors (a proxy or a service a test runs
        // here); the machine's table of sockets, which a test run fills with thousands of
        // closed connections, only for another process's.
        if listening_here(remote.port()) {
            return format!("a connection to {remote}, a listener of this process");
        }
        match crate::service_process::ServiceProcess::listening_on(remote.port()) {
            Some(p) if p.is_this_process() => {
                format!("a connection to {remote}, a listener of this process")
            }
            Some(p) => match p.name() {
                Some(name) => format!("a connection to {remote} ({name})"),
                None => format!("a connection to {remote} (another process)"),
            },
            None => format!("a connection to {remote}"),
        }
    });
    (said.clone(), Some(remote))
}

/// A socket's ends, read from its descriptor.
#[cfg(linux_reads)]
pub(super) enum Ends {
    Connected(SocketAddr),
    Listening(SocketAddr),
    NotTcp,
}

/// The ends of the socket this process holds as `fd`, where it still is the socket with
/// `inode` (read from the descriptor: `getpeername`, `getsockname`, a few microseconds —
/// where `/proc/net/tcp` lists every socket of the machine, thousands in a test run, and
/// takes milliseconds to read). `None` where the descriptor is no longer that socket.
#[cfg(linux_reads)]
pub(super) fn ends_of(fd: u64, inode: u64) -> Option<Ends> {
    let fd = libc::c_int::try_from(fd).ok()?;
    let same = || {
        // SAFETY: an all-zero stat is a valid buffer; fstat fills it or fails.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `stat` is a valid, writable buffer of its type.
        (unsafe { libc::fstat(fd, &mut stat) } == 0) && stat.st_ino == inode
    };
    if !same() {
        return None;
    }
    let address = |get| crate::own_sockets::address_of(fd, get);
    let ends = match address(libc::getpeername) {
        Some(peer) => match crate::own_sockets::socket_address(&peer) {
            Some(remote) => Ends::Connected(remote),
            None => Ends::NotTcp,
        },
        None => match address(libc::getsockname)
            .as_ref()
            .and_then(crate::own_sockets::socket_address)
        {
            Some(local) => Ends::Listening(local),
            None => Ends::NotTcp,
        },
    };
    // Still the same socket: the answers were of it.
    same().then_some(ends)
}

/// Whether this process holds a socket listening on TCP `port`.
#[cfg(linux_reads)]
pub(super) fn listening_here(port: u16) -> bool {
    crate::own_sockets::tcp_sockets()
        .iter()
        .any(|socket| socket.listening && socket.local.port() == port)
}

#[cfg(not(linux_reads))]
pub(super) fn socket_peer(
    _inode: u64,
    _fd: u64,
    _listeners: &mut HashMap<SocketAddr, String>,
) -> (String, Option<SocketAddr>) {
    ("a socket".into(), None)
}
