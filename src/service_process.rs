//! A service running on this machine, found by the port it listens on, and its process's
//! CPU time: what lets a claim on a URL split the time a handler held its worker into
//! computing (the service's CPU) and waiting (the rest).
//!
//! Only a process's own CPU says what *it* computed: the machine's busy share counts every
//! other process too, and a CI runner kept busy by another job would make every wait look
//! like computing. Linux names the process through its sockets: the listening socket's
//! inode in `/proc/net/tcp{,6}`, and the process whose file descriptors include it.

use std::time::Duration;

/// A process listening on a local port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ServiceProcess {
    pid: i32,
}

impl ServiceProcess {
    /// Not read off Linux ([`crate::platform`]): a URL's service is then timed from
    /// outside without its process's CPU.
    #[cfg(not(linux_reads))]
    pub(crate) fn listening_on(_port: u16) -> Option<ServiceProcess> {
        None
    }

    /// The process listening on TCP `port` on this machine, when `/proc` names it (it may
    /// belong to another user, or live in another network namespace: then `None`).
    #[cfg(linux_reads)]
    pub(crate) fn listening_on(port: u16) -> Option<ServiceProcess> {
        use procfs::net::TcpState;
        let mut entries = procfs::net::tcp().unwrap_or_default();
        entries.extend(procfs::net::tcp6().unwrap_or_default());
        let inodes: Vec<u64> = entries
            .iter()
            .filter(|e| e.state == TcpState::Listen && e.local_address.port() == port)
            .map(|e| e.inode)
            .collect();
        if inodes.is_empty() {
            return None;
        }
        // This process first: a router served here and measured by its URL is the
        // common case, and the scan of every process is then not needed.
        let me = procfs::process::Process::myself().ok();
        let candidates = me.into_iter().chain(
            procfs::process::all_processes()
                .into_iter()
                .flatten()
                .flatten(),
        );
        for process in candidates {
            let Ok(fds) = process.fd() else { continue };
            let owns = fds.flatten().any(|fd| {
                matches!(fd.target, procfs::process::FDTarget::Socket(inode) if inodes.contains(&inode))
            });
            if owns {
                return Some(ServiceProcess { pid: process.pid });
            }
        }
        None
    }

    /// The service behind `url` when it listens on this machine's loopback in a process
    /// other than this one; `None` for another host, this process, or a process `/proc`
    /// does not name.
    pub(crate) fn of_url(url: &str) -> Option<ServiceProcess> {
        let url = reqwest::Url::parse(url).ok()?;
        let host = url.host_str()?;
        let loopback = host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback());
        let port = url.port_or_known_default()?;
        loopback
            .then(|| ServiceProcess::listening_on(port))
            .flatten()
            .filter(|process| !process.is_this_process())
    }

    /// Whether the service is this very process (a router served here, reached by URL):
    /// its CPU then counts the load client's too.
    pub(crate) fn is_this_process(&self) -> bool {
        i32::try_from(std::process::id()).is_ok_and(|me| me == self.pid)
    }

    /// The process's command name (`postgres`, `redis-server`), where `/proc` says it.
    #[cfg(linux_reads)]
    pub(crate) fn name(&self) -> Option<String> {
        Some(
            procfs::process::Process::new(self.pid)
                .ok()?
                .stat()
                .ok()?
                .comm,
        )
    }

    /// Not read off Linux.
    #[cfg(not(linux_reads))]
    pub(crate) fn times(&self) -> Option<ProcessTimes> {
        None
    }

    /// The process's threads' time so far, summed (their `schedstat`, in nanoseconds):
    /// on a CPU, and runnable on a run queue waiting for one; `None` once it cannot be read
    /// (the process ended).
    #[cfg(linux_reads)]
    pub(crate) fn times(&self) -> Option<ProcessTimes> {
        let process = procfs::process::Process::new(self.pid).ok()?;
        let (cpu, queued) = process
            .tasks()
            .ok()?
            .flatten()
            .filter_map(|task| task.schedstat().ok())
            .fold((0u64, 0u64), |(cpu, queued), s| {
                (cpu + s.sum_exec_runtime, queued + s.run_delay)
            });
        Some(ProcessTimes {
            cpu: Duration::from_nanos(cpu),
            queued: Duration::from_nanos(queued),
        })
    }
}

/// A process's threads' time, summed: on a CPU, and waiting for one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ProcessTimes {
    /// CPU time.
    pub(crate) cpu: Duration,
    /// Time runnable on a run queue, waiting for a CPU.
    pub(crate) queued: Duration,
}

impl ProcessTimes {
    /// The time from `earlier` to `self`.
    pub(crate) fn since(&self, earlier: &ProcessTimes) -> ProcessTimes {
        ProcessTimes {
            cpu: self.cpu.saturating_sub(earlier.cpu),
            queued: self.queued.saturating_sub(earlier.queued),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listener_of_this_process_is_found_and_is_this_process() {
        if !cfg!(linux_reads) {
            assert_eq!(ServiceProcess::listening_on(1), None);
            return;
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let found = ServiceProcess::listening_on(port).expect("our own listener");
        assert!(found.is_this_process());
        assert!(found.times().is_some_and(|t| t.cpu > Duration::ZERO));
        drop(listener);
        assert_eq!(ServiceProcess::listening_on(port), None);
    }
}
