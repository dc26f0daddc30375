//! Whether a round trip to a process on this machine was made inside a poll: the data
//! segments this process's connections to local processes' listeners sent and received,
//! read around each poll while a watch records.
//!
//! A sync driver's call to a database on loopback can be answered before its worker sleeps:
//! no wait, nothing the sampler meets (the accounts example's diesel build, in some runs
//! every request of a route). What it cannot hide is that its query left on the database's
//! connection, and the answer came back, *inside* the poll — in every request that queries.
//! So each poll reads, for every connection of this process to another local process's
//! listener, the kernel's counts of data segments sent and received (`TCP_INFO`'s
//! `tcpi_data_segs_out` and `tcpi_data_segs_in`: acknowledgements are not counted), before
//! and after.
//!
//! Whose round trip it was is not read: another thread's can fall inside a correct poll,
//! where the poll is kept from its CPU meanwhile — by that very thread (the offloaded
//! build's `spawn_blocking` wakes a thread that takes the worker's CPU, makes the query and
//! hears back, in 5 of 6 requests of a route with the other watched tests beside it), or by
//! the machine, or on another worker. Telling them apart by who ran in the worker's place
//! was tried and measured: this process's other threads used 6–108 µs of CPU inside the
//! diesel build's own round trips and ≈56 µs inside the offloaded build's borrowed ones. So
//! a round trip inside a route's polls says only that the route *may* have made the call:
//! the watch reads it as undecided, and a `Downstream` a round trip away decides it.
//!
//! The connections are the ones open when a watch begins ([`follow`]); one opened later (a
//! pool that connects at its first request) is not read. Cost, measured on this project's
//! machine (release build): 5 ns a reading where the process talks to no local process;
//! otherwise a `getsockopt` a connection, 0.6 µs for one, 9.7 µs for a pool of sixteen —
//! two readings a poll, outside the poll's clocks. Off Linux nothing is read.

use std::sync::RwLock;

/// The descriptors read, set by the last watch that began.
static FOLLOWED: RwLock<Vec<i32>> = RwLock::new(Vec::new());

/// Reads the connections `fds` around each poll from now on (replacing those followed).
pub(crate) fn follow(fds: Vec<i32>) {
    *FOLLOWED.write().unwrap_or_else(|p| p.into_inner()) = fds;
}

/// The followed connections' data segments sent and received, at one instant.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Traffic {
    sent: u64,
    received: u64,
}

impl Traffic {
    /// Now; `None` where no connection is followed.
    pub(crate) fn now() -> Option<Traffic> {
        let (sent, received) = segments()?;
        Some(Traffic { sent, received })
    }

    /// Whether a query left and an answer came back on the followed connections since this
    /// reading.
    pub(crate) fn round_trip_since(&self) -> bool {
        Traffic::now().is_some_and(|now| now.sent > self.sent && now.received > self.received)
    }
}

/// The data segments the followed connections have sent and received so far, each summed;
/// `None` where none is followed.
fn segments() -> Option<(u64, u64)> {
    let followed = FOLLOWED.read().unwrap_or_else(|p| p.into_inner());
    if followed.is_empty() {
        return None;
    }
    Some(followed.iter().fold((0, 0), |(out, into), &fd| {
        let (o, i) = data_segs(fd);
        (out + o, into + i)
    }))
}

/// The data segments socket `fd` has sent and received; none where it is no TCP socket
/// (any more).
#[cfg(linux_reads)]
fn data_segs(fd: i32) -> (u64, u64) {
    // SAFETY: an all-zero `tcp_info` is a valid value of a plain C struct.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` and `len` are valid for writes of `len` bytes; a descriptor that is
    // closed or no TCP socket makes the call fail, and nothing is read.
    let read = unsafe {
        libc::getsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    if read == 0 {
        (
            u64::from(info.tcpi_data_segs_out),
            u64::from(info.tcpi_data_segs_in),
        )
    } else {
        (0, 0)
    }
}

#[cfg(not(linux_reads))]
fn data_segs(_fd: i32) -> (u64, u64) {
    (0, 0)
}

#[cfg(all(test, linux_reads))]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    /// A query and its answer are a round trip; a query alone is not.
    #[test]
    fn a_query_and_its_answer_are_a_round_trip() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        follow(vec![client.as_raw_fd()]);
        let before = Traffic::now().expect("a followed connection");
        client.write_all(b"SELECT 1").unwrap();
        assert!(!before.round_trip_since());
        server.write_all(b"1").unwrap();
        let mut answer = [0u8; 1];
        client.read_exact(&mut answer).unwrap();
        assert!(before.round_trip_since());
        follow(Vec::new());
        assert!(Traffic::now().is_none());
        assert_eq!(data_segs(-1), (0, 0));
    }
}
