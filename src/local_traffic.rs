//! Whether a poll made a round trip to a process on this machine: the data segments this
//! process's connections to local processes' listeners had sent and received, read around
//! each poll while a watch records.
//!
//! A sync driver's call to a database on loopback can be answered before its worker leaves
//! its CPU: no sleep, no time off the CPU, nothing a thread's clocks or the sampler see
//! (the accounts example's diesel build, in some runs every request of a route). What it
//! cannot hide is that its query left on the database's connection, and the answer came
//! back, *inside* the poll. A correct handler's poll does neither: it hands its query to a
//! connection's task (tokio-postgres), a pool's thread (`spawn_blocking`), or a driver's own
//! thread (sqlx), and is polled again once the answer is in. Another thread's query may
//! leave while the poll runs (the accounts example's offloaded build: in 6 of 6 requests of
//! a route in one run), but its answer comes after the poll has returned. So each poll
//! reads, for every connection of this process to another local process's listener, the
//! kernel's counts of data segments sent and received (`TCP_INFO`'s `tcpi_data_segs_out`
//! and `tcpi_data_segs_in`: acknowledgements are not counted), before and after; a poll
//! during which both moved made a round trip to a local process — or ran while another
//! thread made a whole one (a pool of more than one worker, whose connection task on
//! another worker sent and heard back meanwhile).
//!
//! The connections are the ones open when a watch begins ([`follow`]); one opened later (a
//! pool that connects at its first request) is not read. Cost: nothing where the process
//! talks to no local process; otherwise one `getsockopt` a connection at each poll boundary
//! (≈1 µs each on this project's machine). Off Linux nothing is read.

use std::sync::RwLock;

/// The descriptors read, set by the last watch that began.
static FOLLOWED: RwLock<Vec<i32>> = RwLock::new(Vec::new());

/// Reads the connections `fds` around each poll from now on (replacing those followed).
pub(crate) fn follow(fds: Vec<i32>) {
    *FOLLOWED.write().unwrap_or_else(|p| p.into_inner()) = fds;
}

/// The data segments the followed connections have sent and received so far, each summed;
/// `None` where none is followed.
pub(crate) fn segments() -> Option<(u64, u64)> {
    let followed = FOLLOWED.read().unwrap_or_else(|p| p.into_inner());
    if followed.is_empty() {
        return None;
    }
    Some(followed.iter().fold((0, 0), |(out, into), &fd| {
        let (o, i) = data_segs(fd);
        (out + o, into + i)
    }))
}

/// Whether a round trip happened between the readings `before` and `after` of
/// [`segments`]: data both sent and received.
pub(crate) fn round_trip(before: Option<(u64, u64)>, after: Option<(u64, u64)>) -> bool {
    before
        .zip(after)
        .is_some_and(|((out, into), (out_now, into_now))| out_now > out && into_now > into)
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
    use std::io::Write;
    use std::net::{TcpListener, TcpStream};
    use std::os::fd::AsRawFd;

    #[test]
    fn a_query_and_its_answer_are_a_round_trip_and_a_query_alone_is_not() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let fd = client.as_raw_fd();
        let before = data_segs(fd);
        client.write_all(b"SELECT 1").unwrap();
        let sent = data_segs(fd);
        assert_eq!(sent.0, before.0 + 1);
        server.write_all(b"1").unwrap();
        let mut answer = [0u8; 1];
        std::io::Read::read_exact(&mut client, &mut answer).unwrap();
        let answered = data_segs(fd);
        assert!(!round_trip(Some(before), Some(sent)));
        assert!(round_trip(Some(before), Some(answered)));
        assert!(!round_trip(None, Some(answered)));
        assert_eq!(data_segs(-1), (0, 0));
    }
}
