//! What the machine and both pools were doing over a load: the share of the machine's CPU
//! in use (every process's, from `/proc/stat`; where a cgroup quota limits this process,
//! the share of the quota its cgroup used, and how often it was throttled — see
//! [`crate::cpu_quota`]), the load client's workers' busy share, and
//! — for a router perfshape serves — the server's. A figure measured while the machine or
//! the load client was saturated measures perfshape and the machine, not the service; these
//! are what tell it apart.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::client::LoadClient;
use crate::pool::{Activity, Pool, Window};

mod cpu_reading;
mod steal;

pub use cpu_reading::CpuReading;
pub use steal::StealReading;

/// How long a pool may take to park after a load, so that its busy time is counted: tokio
/// publishes a worker's busy time when it parks.
const SETTLE: Duration = Duration::from_millis(50);

/// The share at which the machine's CPU, or the load client's workers, count as saturated.
/// A plateau under a pool or a lock leaves the CPU mostly idle (a blocking pool of 2 at
/// 20 ms: ≈2 % of 2 cores; ≈52 % with a core kept busy by another process). A plateau of
/// a cheap endpoint whose server and load client share 2 cores reads 88–100 %, not 100 %:
/// each request is a ping-pong between the two, and while both wait on the other's wake-up
/// a core idles. 0.75 sits between the two. `/proc/stat` counts in 10 ms ticks: a 100 ms
/// step on 2 cores reads in steps of 5 %.
pub const SATURATED: f64 = 0.75;

/// The share of the machine's CPU this process must use for a saturated machine to count
/// as the limit of a load whose server runs in this process. A machine kept busy by
/// others (the suite's exact tests on the other core) leaves a plateau of a pool or a lock
/// a pool: the load's own threads idle at a few per cent there, where a cheap endpoint
/// served and loaded here uses about half the machine or more. 0.25 is half a core of
/// two.
pub const OWN_SHARE: f64 = 0.25;

/// This process's threads waiting for a CPU, on average, for a saturated machine to count
/// as the limit of a load whose server runs here even when this process's own share is
/// small: a machine kept busy by others starves a cheap endpoint's server and client,
/// whose threads then wait for a CPU (1.4–1.7 of them with every core kept busy by other
/// processes), where a pool's threads sleep in their handlers (0.2–0.3 waiting, as busy).
pub const WAITING: f64 = 0.7;

/// What the machine and the pools did over one load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// The share of the machine's CPU in use, every process's (0 to 1); `None` when
    /// `/proc/stat` could not be read.
    pub machine: Option<f64>,
    /// The machine's cores, when read.
    pub cores: Option<usize>,
    /// The CPUs a cgroup quota allows this process (a container's CPU limit), where one
    /// limits it: then `machine` and `process` are shares of the quota, not of the cores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quota: Option<f64>,
    /// The share of the quota's enforcement periods in which the kernel throttled this
    /// process's cgroup over the load, where a quota limits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttled: Option<f64>,
    /// The share of the machine's CPU this process used (its load client, and the server
    /// when perfshape serves the target), when read.
    #[serde(default)]
    pub process: Option<f64>,
    /// This process's threads waiting for a CPU, on average over the load (their run-queue
    /// delay ÷ the load's length), when read: what a machine kept busy by others costs
    /// the load.
    #[serde(default)]
    pub waiting: Option<f64>,
    /// The load client's workers' busy share (their tokio busy time ÷ workers × the
    /// load's length).
    pub client: f64,
    /// The server's workers' busy share, when perfshape serves the target.
    pub server: Option<f64>,
    /// The part of the server's workers' busy share they spent on a run queue — runnable,
    /// the machine's CPU given to other threads (their `schedstat` run delay ÷ workers × the
    /// load's length), where it is read (Linux): busy time the service did not hold them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_queued: Option<f64>,
    /// The CPU time the load client's threads used over the load (each thread's own
    /// clock, summed), when it could be read: unlike their busy share, it does not count
    /// time the kernel gave their CPU to another process.
    #[serde(default, with = "crate::vocab::millis::opt")]
    pub client_cpu: Option<Duration>,
}

impl Usage {
    /// Whether the machine's CPU was the limit: saturated, and — when the server runs in
    /// this process — by this process's own work, not by others'.
    pub fn cpu_saturated(&self) -> bool {
        self.cpu_pressure().is_some_and(|p| p >= 1.0)
    }

    /// How near the CPU was to being the limit, 1 at the threshold: the machine's busy
    /// share ÷ [`SATURATED`]; when the server runs in this process, the smaller of that and
    /// how much of the machine this load had or wanted — the larger of this process's
    /// share ÷ [`OWN_SHARE`] and its threads waiting for a CPU ÷ [`WAITING`] (a machine
    /// busy with others' work is not this load's limit unless it starves this load).
    /// `None` without the machine's figure.
    pub fn cpu_pressure(&self) -> Option<f64> {
        let machine = self.machine? / SATURATED;
        let own = self.process.map(|p| p / OWN_SHARE);
        let starved = self.waiting.map(|w| w / WAITING);
        let load = match (own, starved) {
            (Some(own), Some(starved)) => Some(own.max(starved)),
            (own, starved) => own.or(starved),
        };
        Some(match (self.server, load) {
            (Some(_), Some(load)) => machine.min(load),
            _ => machine,
        })
    }

    /// Whether the load client's workers were saturated.
    pub fn client_saturated(&self) -> bool {
        self.client >= SATURATED
    }

    /// The CPUs the load could have: the quota where one limits this process, else the
    /// cores (`None` when neither was read).
    pub fn capacity(&self) -> Option<f64> {
        self.quota.or(self.cores.map(|c| c as f64))
    }

    /// The CPU figure in words: `2 cores 97% busy`, or under a quota `a quota of 1 CPU 98%
    /// used, throttled in 43% of periods`.
    pub fn cpu_words(&self) -> String {
        let Some(machine) = self.machine else {
            return "machine CPU not readable".to_string();
        };
        match self.quota {
            Some(cpus) => {
                let mut words = format!(
                    "a quota of {} {:.0}% used",
                    crate::cpu_quota::cpus_in_words(cpus),
                    machine * 100.0
                );
                if let Some(throttled) = self.throttled {
                    words.push_str(&format!(
                        ", throttled in {:.0}% of periods",
                        throttled * 100.0
                    ));
                }
                words
            }
            None => format!(
                "{} cores {:.0}% busy",
                self.cores.unwrap_or(0),
                machine * 100.0
            ),
        }
    }

    /// The largest of each figure over several loads.
    pub fn most(usages: impl IntoIterator<Item = Usage>) -> Option<Usage> {
        usages.into_iter().reduce(|a, b| Usage {
            machine: a.machine.zip(b.machine).map(|(x, y)| x.max(y)),
            cores: a.cores.or(b.cores),
            quota: a.quota.or(b.quota),
            throttled: match (a.throttled, b.throttled) {
                (Some(x), Some(y)) => Some(x.max(y)),
                (x, y) => x.or(y),
            },
            process: a.process.zip(b.process).map(|(x, y)| x.max(y)),
            waiting: a.waiting.zip(b.waiting).map(|(x, y)| x.max(y)),
            client: a.client.max(b.client),
            server: match (a.server, b.server) {
                (Some(x), Some(y)) => Some(x.max(y)),
                (x, y) => x.or(y),
            },
            // The less of the busy share explained by the machine: the worse case.
            server_queued: match (a.server_queued, b.server_queued) {
                (Some(x), Some(y)) => Some(x.min(y)),
                _ => None,
            },
            client_cpu: match (a.client_cpu, b.client_cpu) {
                (Some(x), Some(y)) => Some(x.max(y)),
                (x, y) => x.or(y),
            },
        })
    }
}

impl std::fmt::Display for Usage {
    /// `machine 2 cores 97% busy; load client 88% busy; server 64% busy`; under a cgroup
    /// quota `machine a quota of 1 CPU 98% used, throttled in 43% of periods; …`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.machine, self.cores) {
            (Some(_), Some(_)) => write!(f, "machine {}", self.cpu_words())?,
            _ => f.write_str("machine CPU not readable")?,
        }
        if let Some(own) = self.process {
            write!(f, " ({:.0}% by this process", own * 100.0)?;
            if let Some(waiting) = self.waiting {
                write!(f, ", {waiting:.2} of its threads waiting for a CPU")?;
            }
            f.write_str(")")?;
        }
        write!(f, "; load client {:.0}% busy", self.client * 100.0)?;
        if let Some(server) = self.server {
            write!(f, "; server {:.0}% busy", server * 100.0)?;
        }
        Ok(())
    }
}

/// Readings taken before a load, for its [`Usage`] after.
pub(crate) struct UsageMeter<'p> {
    client: &'p LoadClient,
    server: Option<&'p Pool>,
    cpu: Option<CpuReading>,
    client_cpu: Option<Duration>,
    client_then: Activity,
    server_then: Option<Activity>,
    /// The server's workers' run-queue time at the start.
    server_queued_then: Option<Duration>,
}

impl<'p> UsageMeter<'p> {
    /// Starts reading `client`'s and `server`'s workers and the machine's CPU.
    pub(crate) fn start(client: &'p LoadClient, server: Option<&'p Pool>) -> UsageMeter<'p> {
        UsageMeter {
            client_then: client.settled_activity(SETTLE),
            server_then: server.map(|p| p.settled_activity(SETTLE)),
            server_queued_then: server.and_then(|p| p.timeline().workers_queued()),
            cpu: CpuReading::now(),
            client_cpu: threads_cpu(client.pool().name()),
            client,
            server,
        }
    }

    /// The usage since [`start`](Self::start), and the server pool's window (the evidence
    /// of which worker was busy) when there is a server.
    pub(crate) fn finish(self) -> (Usage, Option<Window>) {
        let cpu_now = CpuReading::now();
        let client_cpu = threads_cpu(self.client.pool().name())
            .zip(self.client_cpu)
            .map(|(now, then)| now.saturating_sub(then));
        let client = self
            .client
            .settled_activity(SETTLE)
            .since(&self.client_then);
        let server = self
            .server
            .zip(self.server_then.as_ref())
            .map(|(pool, then)| pool.settled_activity(SETTLE).since(then));
        let usage = Usage {
            machine: cpu_now
                .zip(self.cpu)
                .and_then(|(now, then)| now.busy_since(&then)),
            cores: cpu_now.map(|c| c.cores()),
            quota: cpu_now.and_then(|c| c.quota()),
            throttled: cpu_now
                .zip(self.cpu)
                .and_then(|(now, then)| now.throttled_since(&then)),
            process: cpu_now
                .zip(self.cpu)
                .and_then(|(now, then)| now.own_since(&then)),
            waiting: cpu_now
                .zip(self.cpu)
                .and_then(|(now, then)| now.waiting_since(&then)),
            client: busy_share(&client),
            server: server.as_ref().map(busy_share),
            server_queued: self
                .server
                .and_then(|pool| pool.timeline().workers_queued())
                .zip(self.server_queued_then)
                .zip(server.as_ref())
                .map(|((now, then), window)| share_of(window, now.saturating_sub(then))),
            client_cpu,
        };
        (usage, server)
    }
}

/// The CPU time so far of this process's threads named `<pool>-…` (a pool's workers, its
/// blocking threads and the connections driver's shards), from each thread's `schedstat`
/// — exact but for the running threads' last tick, which this process's threads reading
/// it are not. `None` where `/proc` cannot be read, and off Linux.
#[cfg(linux_reads)]
fn threads_cpu(pool: &str) -> Option<Duration> {
    let prefix = format!("{pool}-");
    let me = procfs::process::Process::myself().ok()?;
    let nanos: u64 = me
        .tasks()
        .ok()?
        .flatten()
        .filter(|task| task.stat().is_ok_and(|stat| stat.comm.starts_with(&prefix)))
        .filter_map(|task| task.schedstat().ok())
        .map(|stat| stat.sum_exec_runtime)
        .sum();
    Some(Duration::from_nanos(nanos))
}

/// Not read off Linux: the pools' busy shares stand in ([`Usage::client`]).
#[cfg(not(linux_reads))]
fn threads_cpu(_pool: &str) -> Option<Duration> {
    None
}

/// A window's busy time over its workers × its length (0 to 1).
fn busy_share(window: &Window) -> f64 {
    share_of(window, window.workers.iter().map(|w| w.busy).sum())
}

/// `time` over a window's workers × its length (0 to 1).
fn share_of(window: &Window, time: Duration) -> f64 {
    let capacity = window.length.as_secs_f64() * window.workers.len().max(1) as f64;
    (time.as_secs_f64() / capacity.max(f64::MIN_POSITIVE)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_is_read_where_there_is_a_proc_stat() {
        let Some(then) = CpuReading::now() else {
            assert!(!cfg!(linux_reads) || !std::path::Path::new("/proc/stat").exists());
            return;
        };
        // Keep one core busy for 100 ms: at least some ticks must pass, some of them busy.
        let started = std::time::Instant::now();
        let mut x = 0u64;
        while started.elapsed() < Duration::from_millis(100) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let now = CpuReading::now().expect("read once, read again");
        let busy = now.busy_since(&then).expect("ticks passed in 100 ms");
        assert!(busy > 0.0 && busy <= 1.0, "{busy}");
        let own = now.own_since(&then).expect("this process's own time");
        assert!(own > 0.0 && own <= busy + 0.05, "{own} of {busy}");
        assert_eq!(now.cores(), then.cores());
    }

    #[test]
    fn the_most_of_several_loads_takes_each_figure_s_largest() {
        let a = Usage {
            machine: Some(0.5),
            cores: Some(2),
            quota: None,
            throttled: None,
            process: None,
            waiting: None,
            client: 0.9,
            server: None,
            server_queued: None,
            client_cpu: None,
        };
        let b = Usage {
            machine: Some(0.95),
            cores: Some(2),
            quota: None,
            throttled: None,
            process: None,
            waiting: None,
            client: 0.2,
            server: Some(0.4),
            server_queued: None,
            client_cpu: None,
        };
        let most = Usage::most([a, b]).expect("two loads");
        assert_eq!(
            (most.machine, most.client, most.server),
            (Some(0.95), 0.9, Some(0.4))
        );
        assert!(most.cpu_saturated() && most.client_saturated());
        assert_eq!(
            most.to_string(),
            "machine 2 cores 95% busy; load client 90% busy; server 40% busy"
        );
    }

    #[test]
    fn under_a_quota_the_machine_line_gives_the_quota_and_its_throttling() {
        let quota = |cpus: f64, throttled: f64| Usage {
            machine: Some(0.98),
            cores: Some(2),
            quota: Some(cpus),
            throttled: Some(throttled),
            process: None,
            waiting: None,
            client: 0.3,
            server: None,
            server_queued: None,
            client_cpu: None,
        };
        assert_eq!(
            quota(1.0, 0.43).to_string(),
            "machine a quota of 1 CPU 98% used, throttled in 43% of periods; load client 30% busy"
        );
        assert_eq!(
            quota(1.5, 0.0).cpu_words(),
            "a quota of 1.5 CPUs 98% used, throttled in 0% of periods"
        );
        assert_eq!(quota(1.5, 0.0).capacity(), Some(1.5));
        assert!(quota(1.0, 0.43).cpu_saturated());
    }
}
