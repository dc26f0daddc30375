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
//!
//! The reads of `/proc` are in `proc`, behind `linux_reads`, with their portable
//! fallbacks beside them; the table of calls by number in `calls`.

mod calls;
mod proc;

use std::collections::HashMap;
use std::net::SocketAddr;

pub(crate) use proc::syscall_line;
use proc::{Raw, Target, fd_target, first_polled, parse, socket_peer};

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
