//! The system calls named here, by number on this architecture.

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
