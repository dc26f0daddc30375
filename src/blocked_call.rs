//! What a thread of this process is blocked in, as the kernel says: the system call, and
//! the socket (with the local process at its other end) or the file it acts on.
//!
//! A report that says a worker *waited* tells a team that something is wrong, not what.
//! The kernel knows what: while a thread sleeps in a system call,
//! `/proc/self/task/TID/syscall` gives the call's number and arguments (the file says
//! `running` for a thread on a CPU or on a run queue — computing, not waiting), and for a
//! call on a file descriptor `/proc/self/fd/N` gives the socket or the file. A socket's
//! other end is found in `/proc/net/tcp{,6}`, and the local process listening there by its
//! port ([`ServiceProcess`](crate::service_process::ServiceProcess)). So a sample names
//! "read() on its connection to 127.0.0.1:5432 (postgres)", "fsync() of /tmp/app/audit.log",
//! "futex(): a lock or a channel another thread holds" or "clock_nanosleep(): a sleep".
//!
//! A thread of the process may always read another's `syscall` file (the same thread
//! group passes the kernel's ptrace-access check); a hardened kernel may refuse it anyway,
//! and then nothing is named. Off Linux, and in the portable build, nothing is read
//! ([`available`] is false): a report then says the call is not read here, never an error
//! and never a verdict.
//!
//! Cost, measured on this project's 2-core machine: one `syscall` read ≈6 µs, a descriptor's
//! link ≈3 µs more; a socket's peer is looked up once per socket (`/proc/net/tcp`, ≈0.1 ms)
//! and kept ([`Reader`]), and the process behind a loopback address once per address (a
//! scan of the processes' descriptors, 14 ms in a test binary with its many threads).

use std::collections::HashMap;
use std::net::SocketAddr;

/// A thread, by the kernel's id for it (Linux's `gettid`).
pub(crate) type Tid = i32;

/// The calling thread's kernel id, where it is read.
#[cfg(linux_reads)]
pub(crate) fn current() -> Option<Tid> {
    // SAFETY: gettid has no preconditions and cannot fail.
    Some(unsafe { libc::gettid() })
}

/// Not read off Linux.
#[cfg(not(linux_reads))]
pub(crate) fn current() -> Option<Tid> {
    None
}

/// Whether what a thread is blocked in can be read here: Linux, with its own threads'
/// `syscall` files readable.
pub(crate) fn available() -> bool {
    use std::sync::OnceLock;
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        cfg!(linux_reads)
            && current().is_some_and(|tid| {
                std::fs::read_to_string(format!("/proc/self/task/{tid}/syscall")).is_ok()
            })
    })
}

/// Why what a thread is blocked in is not read here, or `None` where it is ([`available`]).
pub(crate) fn unread() -> Option<String> {
    if available() {
        None
    } else if cfg!(linux_reads) {
        Some("the kernel refuses this process its threads' /proc/self/task/TID/syscall files (a hardened kernel or container)".to_string())
    } else {
        Some(crate::platform::not_read(
            "what a worker was blocked in",
            "/proc/self/task/TID/syscall",
        ))
    }
}

/// What a sampled thread was doing.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Seen {
    /// On a CPU or waiting for one: computing.
    Running,
    /// Asleep in the kernel.
    Blocked(BlockedCall),
}

/// A call a thread slept in, named for a report.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum BlockedCall {
    /// A call on a socket: the call, and the other end ("its connection to 127.0.0.1:5432
    /// (postgres)", "a socket").
    Socket {
        /// The call's name.
        call: &'static str,
        /// The other end, in words.
        peer: String,
        /// The other end's address, where the socket is a TCP connection.
        remote: Option<SocketAddr>,
    },
    /// A call on a file or another descriptor: the call, and the file's path (or what the
    /// descriptor is: "a pipe").
    File {
        /// The call's name.
        call: &'static str,
        /// The file's path, or the descriptor's kind.
        path: String,
    },
    /// `futex`: a lock, a condition or a channel another thread holds.
    Lock,
    /// `nanosleep`, `clock_nanosleep`: a sleep.
    Sleep,
    /// Another call, by name (or number where it has none here).
    Other(String),
    /// Asleep outside any system call: a page fault being served.
    Fault,
}

impl std::fmt::Display for BlockedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BlockedCall::Socket { call, peer, .. } => write!(f, "{call}() on {peer}"),
            BlockedCall::File { call, path } => write!(f, "{call}() of {path}"),
            BlockedCall::Lock => write!(f, "futex(): a lock or a channel another thread holds"),
            BlockedCall::Sleep => write!(f, "clock_nanosleep(): a sleep"),
            BlockedCall::Other(call) => write!(f, "{call}()"),
            BlockedCall::Fault => write!(f, "a page fault (outside any system call)"),
        }
    }
}

impl BlockedCall {
    /// Call `call` on a descriptor closed before it was named (a call the kernel handed
    /// over at the switch is named when its poll ends): on a socket or a file where only
    /// one of them takes the call, so that its shape is the one a call named in flight has.
    fn closed(call: &'static str) -> BlockedCall {
        if is_a_sockets(call) {
            BlockedCall::Socket {
                call,
                peer: CLOSED_SOCKET.to_string(),
                remote: None,
            }
        } else if is_a_files(call) {
            BlockedCall::File {
                call,
                path: CLOSED_FILE.to_string(),
            }
        } else {
            BlockedCall::Other(call.to_string())
        }
    }

    /// Whether the descriptor named is one the call takes: a socket for a socket's call, a
    /// file of the file system (not a pipe) for a file's, anything for a call both take
    /// (`read`, `write`) — but a file under `/proc`, which this process's own sampler opens
    /// and closes, whose number a closed descriptor's most often is by then.
    fn fits_its_call(&self) -> bool {
        match self {
            BlockedCall::Socket { call, .. } => !is_a_files(call),
            BlockedCall::File { call, path } => {
                !is_a_sockets(call)
                    && !path.starts_with("/proc/")
                    && (!is_a_files(call) || path.starts_with('/'))
            }
            _ => true,
        }
    }

    /// Whether `other` names the same call as this one, which names a descriptor closed
    /// before it was read: `other`, read while it was open, says more.
    pub(crate) fn said_better_by(&self, other: &BlockedCall) -> bool {
        let closed = match self {
            BlockedCall::Socket { peer, .. } => peer == CLOSED_SOCKET,
            BlockedCall::File { path, .. } => path == CLOSED_FILE,
            BlockedCall::Other(_) => true,
            _ => false,
        };
        closed && self != other && self.name() == other.name()
    }

    /// The call's name, where it has one of its own.
    fn name(&self) -> Option<&str> {
        match self {
            BlockedCall::Socket { call, .. } | BlockedCall::File { call, .. } => Some(call),
            BlockedCall::Other(call) => Some(call),
            _ => None,
        }
    }

    /// The call in words that do not change from run to run: the call and what it was on,
    /// without the file's path or the connection's address (a test's scratch folder, an
    /// ephemeral port) — "fdatasync() of a file", "read() on a socket".
    pub(crate) fn shape(&self) -> String {
        match self {
            BlockedCall::Socket { call, .. } => format!("{call}() on a socket"),
            BlockedCall::File { call, .. } => format!("{call}() of a file"),
            other => other.to_string(),
        }
    }
}

impl std::fmt::Display for Seen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Seen::Running => write!(f, "running on the CPU (in no system call)"),
            Seen::Blocked(call) => call.fmt(f),
        }
    }
}

/// Reads what threads are blocked in, keeping what it learnt of each socket's other end.
#[derive(Debug, Default)]
pub(crate) struct Reader {
    peers: HashMap<u64, (String, Option<SocketAddr>)>,
    /// What each loopback address's listener is ("a listener of this process"): found by
    /// a scan of the processes' descriptors (≈10 ms), once an address — a client that
    /// opens a connection a request asks the same listener each time.
    listeners: HashMap<SocketAddr, String>,
}

impl Reader {
    /// What thread `tid` of this process is doing now; `None` where it cannot be read (the
    /// thread has ended, or this platform does not say).
    #[cfg(all(test, linux_reads))]
    pub(crate) fn read(&mut self, tid: Tid) -> Option<Seen> {
        self.read_line(tid).map(|(seen, _)| seen)
    }

    /// What thread `tid` of this process is doing now, and the kernel's line it was read from (its stack
    /// and instruction pointers end it, for [`stack`](crate::stack)).
    pub(crate) fn read_line(&mut self, tid: Tid) -> Option<(Seen, String)> {
        let line = syscall_line(tid)?;
        let raw = parse(&line)?;
        let seen = match raw {
            Raw::Running => Seen::Running,
            Raw::Fault => Seen::Blocked(BlockedCall::Fault),
            Raw::Call(nr, first) => Seen::Blocked(self.name(nr, first)),
        };
        Some((seen, line))
    }

    /// Call `nr` with first argument `first`, named as a thread's copied stack tells it
    /// after the call returned: its descriptor's file or socket read now, while the thread
    /// may still hold it open, and for a wait on an array of descriptors the first of them
    /// as `polled` reads it off the copy (the array in this process's memory is stale by
    /// now); `None` there leaves the wait named by its call alone.
    #[cfg_attr(not(all(linux_reads, target_arch = "x86_64")), allow(dead_code))]
    pub(crate) fn name_copied(
        &mut self,
        nr: i64,
        first: u64,
        polled: impl FnOnce(u64) -> Option<u64>,
    ) -> BlockedCall {
        let named = self.name_polled(nr, first, polled);
        // The call returned before it was named, and its descriptor may have been closed
        // and its number reused since (by this process's own reads of `/proc`): a socket
        // call named on a file, or a file call on a socket, is the call alone.
        match &named {
            BlockedCall::Socket { call, .. } | BlockedCall::File { call, .. }
                if !named.fits_its_call() =>
            {
                BlockedCall::closed(call)
            }
            _ => named,
        }
    }

    /// Call `nr` with first argument `first`, named: its descriptor's file or socket read
    /// now, while the call's thread sleeps in it.
    fn name(&mut self, nr: i64, first: u64) -> BlockedCall {
        self.name_polled(nr, first, first_polled)
    }

    fn name_polled(
        &mut self,
        nr: i64,
        first: u64,
        polled: impl FnOnce(u64) -> Option<u64>,
    ) -> BlockedCall {
        let Some((call, kind)) = calls::lookup(nr) else {
            return BlockedCall::Other(format!("system call {nr}"));
        };
        match kind {
            calls::Kind::Lock => BlockedCall::Lock,
            calls::Kind::Sleep => BlockedCall::Sleep,
            calls::Kind::Plain => BlockedCall::Other(call.to_string()),
            calls::Kind::Fd => self.on_fd(call, first),
            // A wait on descriptors names the first of them, read from the thread's own
            // array (this process's memory, read as another process's would be: a read
            // that races the call's return fails or reads a stale number, never faults).
            calls::Kind::Poll => match polled(first) {
                Some(fd) => self.on_fd(call, fd),
                None => BlockedCall::Other(call.to_string()),
            },
        }
    }

    fn on_fd(&mut self, call: &'static str, fd: u64) -> BlockedCall {
        match fd_target(fd) {
            Some(Target::Socket(inode)) => {
                let (peer, remote) = match self.peers.get(&inode) {
                    Some(known) => known.clone(),
                    None => {
                        let found = socket_peer(inode, fd, &mut self.listeners);
                        self.peers.insert(inode, found.clone());
                        found
                    }
                };
                BlockedCall::Socket { call, peer, remote }
            }
            Some(Target::Path(path)) => BlockedCall::File { call, path },
            None => BlockedCall::closed(call),
        }
    }
}

/// Whether only a socket takes `call`.
fn is_a_sockets(call: &str) -> bool {
    matches!(
        call,
        "recvfrom" | "sendto" | "recvmsg" | "sendmsg" | "connect" | "accept" | "accept4"
    )
}

/// Whether only a file of the file system takes `call`.
fn is_a_files(call: &str) -> bool {
    matches!(
        call,
        "fsync"
            | "fdatasync"
            | "pread64"
            | "pwrite64"
            | "flock"
            | "ftruncate"
            | "fallocate"
            | "sync_file_range"
            | "copy_file_range"
    )
}

/// What a socket closed before its call was named is called.
const CLOSED_SOCKET: &str = "a socket closed since";
/// What a file closed before its call was named is called.
const CLOSED_FILE: &str = "a file closed since";

/// A `syscall` file's content, parsed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Raw {
    /// `running`.
    Running,
    /// `-1 sp pc`: blocked, but in no system call.
    Fault,
    /// A call's number and its first argument.
    Call(i64, u64),
}

/// Parses `/proc/…/syscall`: `running`, `-1 sp pc`, or `nr arg1 … arg6 sp pc` with the
/// arguments in hexadecimal.
fn parse(text: &str) -> Option<Raw> {
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
enum Target {
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
fn first_polled(address: u64) -> Option<u64> {
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
fn first_polled(_address: u64) -> Option<u64> {
    None
}

#[cfg(linux_reads)]
fn fd_target(fd: u64) -> Option<Target> {
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
fn fd_target(_fd: u64) -> Option<Target> {
    None
}

/// The other end of the socket with `inode`, in words: "its connection to 127.0.0.1:5432
/// (postgres)", "a connection to 10.0.0.7:443", or "a socket" where it is no TCP
/// connection `/proc/net` lists.
#[cfg(linux_reads)]
fn socket_peer(
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
enum Ends {
    Connected(SocketAddr),
    Listening(SocketAddr),
    NotTcp,
}

/// The ends of the socket this process holds as `fd`, where it still is the socket with
/// `inode` (read from the descriptor: `getpeername`, `getsockname`, a few microseconds —
/// where `/proc/net/tcp` lists every socket of the machine, thousands in a test run, and
/// takes milliseconds to read). `None` where the descriptor is no longer that socket.
#[cfg(linux_reads)]
fn ends_of(fd: u64, inode: u64) -> Option<Ends> {
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
    let address = |get: unsafe extern "C" fn(
        libc::c_int,
        *mut libc::sockaddr,
        *mut libc::socklen_t,
    ) -> libc::c_int| {
        // SAFETY: an all-zero sockaddr_storage is a valid buffer for any address.
        let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: the buffer and its length are the kernel's to fill.
        let got = unsafe { get(fd, (&raw mut storage).cast(), &mut len) };
        (got == 0).then_some(storage)
    };
    let ends = match address(libc::getpeername) {
        Some(peer) => match socket_address(&peer) {
            Some(remote) => Ends::Connected(remote),
            None => Ends::NotTcp,
        },
        None => match address(libc::getsockname).as_ref().and_then(socket_address) {
            Some(local) => Ends::Listening(local),
            None => Ends::NotTcp,
        },
    };
    // Still the same socket: the answers were of it.
    same().then_some(ends)
}

/// Whether this process holds a socket listening on TCP `port`: each of its descriptors
/// that is a socket asked for its local address and whether it accepts connections.
#[cfg(linux_reads)]
fn listening_here(port: u16) -> bool {
    let Ok(descriptors) = std::fs::read_dir("/proc/self/fd") else {
        return false;
    };
    descriptors.flatten().any(|entry| {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<libc::c_int>().ok())
        else {
            return false;
        };
        let is_socket = std::fs::read_link(entry.path())
            .is_ok_and(|link| link.to_string_lossy().starts_with("socket:["));
        if !is_socket {
            return false;
        }
        let mut accepts: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: an int-sized buffer for SO_ACCEPTCONN, as the option takes.
        let asked = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_ACCEPTCONN,
                (&raw mut accepts).cast(),
                &mut len,
            )
        };
        if asked != 0 || accepts == 0 {
            return false;
        }
        // SAFETY: an all-zero sockaddr_storage is a valid buffer for any address.
        let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
        // SAFETY: the buffer and its length are the kernel's to fill.
        let got = unsafe { libc::getsockname(fd, (&raw mut storage).cast(), &mut len) };
        got == 0 && socket_address(&storage).is_some_and(|local| local.port() == port)
    })
}

/// An IPv4 or IPv6 address from the kernel's buffer; `None` for any other family.
#[cfg(linux_reads)]
fn socket_address(storage: &libc::sockaddr_storage) -> Option<SocketAddr> {
    match libc::c_int::from(storage.ss_family) {
        libc::AF_INET => {
            // SAFETY: the family says the buffer holds a sockaddr_in.
            let v4 =
                unsafe { &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            Some(SocketAddr::from((
                u32::from_be(v4.sin_addr.s_addr).to_be_bytes(),
                u16::from_be(v4.sin_port),
            )))
        }
        libc::AF_INET6 => {
            // SAFETY: the family says the buffer holds a sockaddr_in6.
            let v6 = unsafe {
                &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            let ip = std::net::Ipv6Addr::from(v6.sin6_addr.s6_addr);
            let port = u16::from_be(v6.sin6_port);
            // An IPv4 peer of a dual-stack socket reads as the IPv4 address it is.
            Some(match ip.to_ipv4_mapped() {
                Some(v4) => SocketAddr::from((v4, port)),
                None => SocketAddr::from((ip, port)),
            })
        }
        _ => None,
    }
}

#[cfg(not(linux_reads))]
fn socket_peer(
    _inode: u64,
    _fd: u64,
    _listeners: &mut HashMap<SocketAddr, String>,
) -> (String, Option<SocketAddr>) {
    ("a socket".into(), None)
}

/// The system calls named here, by number on this architecture.
mod calls {
    /// How a call is named (only read on Linux).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[cfg_attr(not(linux_reads), allow(dead_code))]
    pub(super) enum Kind {
        /// Its first argument is a file descriptor, named too.
        Fd,
        /// A wait on a futex.
        Lock,
        /// A sleep.
        Sleep,
        /// Named alone.
        Plain,
        /// A wait on an array of `pollfd`s: its first descriptor is named.
        Poll,
    }

    /// The call with number `nr`, where this architecture's table names it.
    #[cfg(all(linux_reads, any(target_arch = "x86_64", target_arch = "aarch64")))]
    pub(super) fn lookup(nr: i64) -> Option<(&'static str, Kind)> {
        use Kind::*;
        let table: &[(libc::c_long, &'static str, Kind)] = &[
            (libc::SYS_read, "read", Fd),
            (libc::SYS_write, "write", Fd),
            (libc::SYS_pread64, "pread64", Fd),
            (libc::SYS_pwrite64, "pwrite64", Fd),
            (libc::SYS_readv, "readv", Fd),
            (libc::SYS_writev, "writev", Fd),
            (libc::SYS_recvfrom, "recvfrom", Fd),
            (libc::SYS_sendto, "sendto", Fd),
            (libc::SYS_recvmsg, "recvmsg", Fd),
            (libc::SYS_sendmsg, "sendmsg", Fd),
            (libc::SYS_fsync, "fsync", Fd),
            (libc::SYS_fdatasync, "fdatasync", Fd),
            (libc::SYS_connect, "connect", Fd),
            (libc::SYS_accept4, "accept4", Fd),
            (libc::SYS_flock, "flock", Fd),
            (libc::SYS_fcntl, "fcntl", Fd),
            (libc::SYS_ftruncate, "ftruncate", Fd),
            (libc::SYS_fallocate, "fallocate", Fd),
            (libc::SYS_sync_file_range, "sync_file_range", Fd),
            (libc::SYS_copy_file_range, "copy_file_range", Fd),
            (libc::SYS_futex, "futex", Lock),
            (libc::SYS_nanosleep, "nanosleep", Sleep),
            (libc::SYS_clock_nanosleep, "clock_nanosleep", Sleep),
            (libc::SYS_ppoll, "ppoll", Poll),
            (libc::SYS_pselect6, "pselect6", Plain),
            (libc::SYS_epoll_pwait, "epoll_pwait", Plain),
            (libc::SYS_openat, "openat", Plain),
            (libc::SYS_unlinkat, "unlinkat", Plain),
            (libc::SYS_renameat2, "renameat2", Plain),
            (libc::SYS_wait4, "wait4", Plain),
            (libc::SYS_waitid, "waitid", Plain),
            (libc::SYS_getrandom, "getrandom", Plain),
            (libc::SYS_sync, "sync", Plain),
            (libc::SYS_io_uring_enter, "io_uring_enter", Plain),
            #[cfg(target_arch = "x86_64")]
            (libc::SYS_poll, "poll", Poll),
            #[cfg(target_arch = "x86_64")]
            (libc::SYS_select, "select", Plain),
            #[cfg(target_arch = "x86_64")]
            (libc::SYS_epoll_wait, "epoll_wait", Plain),
            #[cfg(target_arch = "x86_64")]
            (libc::SYS_accept, "accept", Fd),
            #[cfg(target_arch = "x86_64")]
            (libc::SYS_open, "open", Plain),
        ];
        // `c_long` is 32 bits on a 32-bit target: converted, not cast.
        #[allow(clippy::useless_conversion)]
        table
            .iter()
            .find(|(n, _, _)| i64::from(*n) == nr)
            .map(|&(_, name, kind)| (name, kind))
    }

    /// No table here: every call is named by its number.
    #[cfg(not(all(linux_reads, any(target_arch = "x86_64", target_arch = "aarch64"))))]
    pub(super) fn lookup(_nr: i64) -> Option<(&'static str, Kind)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syscall_file_parses_as_running_a_fault_or_a_call() {
        assert_eq!(parse("running\n"), Some(Raw::Running));
        assert_eq!(parse("-1 0x7ffd 0x7f00\n"), Some(Raw::Fault));
        assert_eq!(
            parse("202 0x55d0 0x80 0x0 0x0 0x0 0x0 0x7ffd 0x7f00\n"),
            Some(Raw::Call(202, 0x55d0))
        );
        assert_eq!(parse(""), None);
    }

    /// A call named after it returned, on a descriptor whose number was reused since: a
    /// socket's call on a file, and a file's call on `/proc`, are the call alone, in the
    /// shape a call named in flight has; a call both take keeps what the number is now.
    #[cfg(all(linux_reads, target_arch = "x86_64"))]
    #[test]
    fn a_reused_descriptor_is_not_named_for_a_call_it_cannot_take() {
        use std::os::fd::AsRawFd;
        let file = tempfile::tempfile().expect("a file");
        let fd = file.as_raw_fd() as u64;
        let mut reader = Reader::default();
        let recvfrom = reader.name_copied(libc::SYS_recvfrom, fd, |_| None);
        assert_eq!(recvfrom.shape(), "recvfrom() on a socket");
        assert_eq!(recvfrom.to_string(), "recvfrom() on a socket closed since");
        let proc = std::fs::File::open("/proc/self/stat").expect("/proc");
        let fsync = reader.name_copied(libc::SYS_fsync, proc.as_raw_fd() as u64, |_| None);
        assert_eq!(fsync.to_string(), "fsync() of a file closed since");
        let read = reader.name_copied(libc::SYS_read, fd, |_| None);
        assert!(
            matches!(&read, BlockedCall::File { path, .. } if path.starts_with('/')),
            "{read}"
        );
        let read = reader.name_copied(libc::SYS_read, proc.as_raw_fd() as u64, |_| None);
        assert_eq!(read.to_string(), "read()");
    }

    /// What `wait` — run on a thread of its own, on one end of a socket pair — is seen
    /// asleep in, in words, once it is (within 5 s); the other end then wakes it.
    #[cfg(linux_reads)]
    fn seen_asleep_in(
        wait: impl FnOnce(std::os::unix::net::UnixStream) + Send + 'static,
    ) -> String {
        use std::io::Write;
        let (waiting, waking) = std::os::unix::net::UnixStream::pair().unwrap();
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        let blocked = std::thread::spawn(move || {
            tid_tx.send(current().unwrap()).unwrap();
            wait(waiting);
        });
        let tid = tid_rx.recv().unwrap();
        let mut reader = Reader::default();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut seen = reader.read(tid);
        while !matches!(seen, Some(Seen::Blocked(_))) && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(1));
            seen = reader.read(tid);
        }
        (&waking).write_all(&[1]).unwrap();
        blocked.join().unwrap();
        seen.expect("read").to_string()
    }

    /// A thread asleep in a read of a socket is named with its call and the socket.
    #[cfg(linux_reads)]
    #[test]
    fn a_thread_asleep_in_a_read_is_named_with_its_socket() {
        if !available() {
            return;
        }
        let said = seen_asleep_in(|mut socket| {
            use std::io::Read;
            let mut byte = [0u8; 1];
            socket.read_exact(&mut byte).unwrap();
        });
        assert!(
            said.starts_with("read() on ") || said.starts_with("recvfrom() on "),
            "{said}"
        );
        assert!(said.contains("socket"), "{said}");
    }

    /// A thread asleep in poll() (what libpq waits in) is named by the first descriptor it
    /// polls.
    #[cfg(linux_reads)]
    #[test]
    fn a_thread_asleep_in_poll_is_named_by_its_descriptor() {
        if !available() {
            return;
        }
        let said = seen_asleep_in(|socket| {
            use std::os::fd::AsRawFd;
            let mut polled = libc::pollfd {
                fd: socket.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one valid pollfd, waited on for at most 5 s.
            unsafe { libc::poll(&mut polled, 1, 5000) };
        });
        assert!(
            said.starts_with("poll() on a socket") || said.starts_with("ppoll() on a socket"),
            "{said}"
        );
    }
}
