//! The machine's CPU time, and this process's, read from `/proc` at one instant: two
//! readings make a share of the machine in use, this process's own share, its threads'
//! wait for a CPU and, under a cgroup quota, the quota's use and throttling.

use std::time::Instant;

use super::WAITING;
use crate::cpu_quota::QuotaReading;

/// The machine's CPU time so far, in ticks, from `/proc/stat`: busy (everything but idle
/// and I/O wait), of it the niced processes' that give way to this one (`yielding`), and
/// total, over every core.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuReading {
    busy: u64,
    /// The part of `busy` that niced processes used, where this process runs at a nice of
    /// 0 or less (`yielding`); 0 where it does not.
    niced: u64,
    total: u64,
    cores: usize,
    /// This process's CPU time (user + system), in the same ticks.
    own: Option<u64>,
    /// This process's threads' time on a CPU, summed, in nanoseconds (each thread's
    /// `schedstat`): its own share to the nanosecond, where ticks of 10 ms over a load of
    /// 14 ms read 0 %, 70 % or 100 %.
    ran: Option<u64>,
    /// The time this process's threads have spent runnable but waiting for a CPU, summed,
    /// in nanoseconds (each thread's `schedstat`), and when it was read.
    waited: Option<(u64, Instant)>,
    /// The cgroup quota's counters, where one limits this process.
    quota: Option<QuotaReading>,
}

/// Of the CPU time of processes with a positive nice (`/proc/stat`'s `nice`), what this
/// process may have had: all of it while this process runs at a nice of 0 or less — a
/// task at nice 19 has 1.5 % of the scheduler's weight of one at 0 and gives way to it at
/// once (the type checks a CI job runs beside its tests at nice 19, a desktop's indexer)
/// — and none where this process is niced itself (its own time is in that figure) or its
/// nice is not read. Nice weighs only within one scheduling group (a session's autogroup,
/// a container's cgroup): niced work in another competes at full weight, which
/// [`CpuReading::busy_since`] tells by this process's threads waiting for a CPU.
#[cfg_attr(not(linux_reads), allow(dead_code))]
fn yielding(niced_ticks: u64, own_nice: Option<i64>) -> u64 {
    match own_nice {
        Some(nice) if nice <= 0 => niced_ticks,
        _ => 0,
    }
}

impl CpuReading {
    /// Reads `/proc/stat` now; `None` where it cannot be read (no /proc), and off Linux,
    /// where it is not read (the `platform` module).
    #[cfg(not(linux_reads))]
    pub fn now() -> Option<CpuReading> {
        None
    }

    /// Reads `/proc/stat` now; `None` where it cannot be read (no /proc), and off Linux,
    /// where it is not read (the `platform` module).
    #[cfg(linux_reads)]
    pub fn now() -> Option<CpuReading> {
        use procfs::CurrentSI as _;
        let stats = procfs::KernelStats::current().ok()?;
        let t = stats.total;
        let idle = t.idle + t.iowait.unwrap_or(0);
        let total = t.user
            + t.nice
            + t.system
            + idle
            + t.irq.unwrap_or(0)
            + t.softirq.unwrap_or(0)
            + t.steal.unwrap_or(0);
        let me = procfs::process::Process::myself().ok();
        let stat = me.as_ref().and_then(|me| me.stat().ok());
        let own = stat.as_ref().map(|stat| stat.utime + stat.stime);
        let niced = yielding(t.nice, stat.as_ref().map(|stat| stat.nice));
        let threads = me.as_ref().and_then(|me| me.tasks().ok()).map(|tasks| {
            let (delay, ran) = tasks
                .flatten()
                .filter_map(|task| task.schedstat().ok())
                .fold((0u64, 0u64), |(delay, ran), stat| {
                    (delay + stat.run_delay, ran + stat.sum_exec_runtime)
                });
            (delay, ran, Instant::now())
        });
        let waited = threads.map(|(delay, _, at)| (delay, at));
        let ran = threads.map(|(_, ran, _)| ran);
        Some(CpuReading {
            busy: total - idle,
            niced,
            total,
            cores: stats.cpu_time.len().max(1),
            own,
            ran,
            waited,
            quota: crate::cpu_quota::CpuQuota::binding().and_then(crate::cpu_quota::CpuQuota::read),
        })
    }

    /// The share of the CPU this process may use that it used since `earlier` (0 to 1):
    /// of every core's time, or of its cgroup's quota where one limits it.
    pub fn own_since(&self, earlier: &CpuReading) -> Option<f64> {
        let total = self.total.checked_sub(earlier.total)?;
        let of_cores = match (self.ran.zip(self.waited), earlier.ran.zip(earlier.waited)) {
            // To the nanosecond: the threads' time on a CPU over the wall time between
            // the readings, of every core (a thread that ended between them is left out,
            // so this can only understate).
            (Some((ran, (_, at))), Some((then_ran, (_, then_at)))) => {
                let length = at.saturating_duration_since(then_at).as_nanos() as f64;
                if length <= 0.0 {
                    return None;
                }
                ran.saturating_sub(then_ran) as f64 / (length * self.cores as f64)
            }
            _ => {
                let own = self.own?.saturating_sub(earlier.own?);
                own as f64 / total.max(1) as f64
            }
        };
        let share = match self.quota {
            Some(q) => of_cores * self.cores as f64 / q.cpus,
            None => of_cores,
        };
        (total > 0).then(|| share.clamp(0.0, 1.0))
    }

    /// The share of the CPU this process may use that was in use since `earlier` (0 to 1):
    /// every core's time, every process's, from `/proc/stat` — or, where a cgroup quota
    /// limits this process, its cgroup's time against the quota (the host's other work is
    /// not what starves a load inside a quota; the quota is). `None` when no tick passed.
    ///
    /// Niced processes' time (`yielding`) is left out while this process's threads had a
    /// CPU whenever they could run (waiting under [`WAITING`] of a thread): then it gave way
    /// to them. Where they waited, or their wait is not read, it counts as busy.
    pub fn busy_since(&self, earlier: &CpuReading) -> Option<f64> {
        if let Some((now, then)) = self.quota.zip(earlier.quota) {
            return now.used_since(&then);
        }
        let total = self.total.checked_sub(earlier.total)?;
        let busy = self.busy.saturating_sub(earlier.busy);
        let gave_way = self.waiting_since(earlier).is_some_and(|w| w < WAITING);
        let busy = if gave_way {
            busy.saturating_sub(self.niced.saturating_sub(earlier.niced))
        } else {
            busy
        };
        (total > 0).then(|| (busy as f64 / total as f64).clamp(0.0, 1.0))
    }

    /// The share of the quota's enforcement periods since `earlier` in which the kernel
    /// throttled this process's cgroup; `None` without a quota or when no period passed.
    pub fn throttled_since(&self, earlier: &CpuReading) -> Option<f64> {
        let (now, then) = self.quota.zip(earlier.quota)?;
        now.throttled_since(&then)
    }

    /// The CPUs the cgroup quota allows this process, where one limits it.
    pub fn quota(&self) -> Option<f64> {
        self.quota.map(|q| q.cpus)
    }

    /// This process's threads waiting for a CPU since `earlier`, on average (their
    /// run-queue delay ÷ the time between the readings): ≈0 while its threads have a CPU
    /// whenever they can run, 1 when one of them was always kept waiting.
    pub fn waiting_since(&self, earlier: &CpuReading) -> Option<f64> {
        let ((now, at), (then, then_at)) = (self.waited?, earlier.waited?);
        let length = at.saturating_duration_since(then_at).as_nanos() as f64;
        (length > 0.0).then(|| now.saturating_sub(then) as f64 / length)
    }

    /// The cores `/proc/stat` lists.
    pub fn cores(&self) -> usize {
        self.cores
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A machine's niced work is free to a process at nice 0 (or less), and busy to one
    /// niced itself, whose own time it holds, or whose nice is not read.
    #[test]
    fn niced_work_is_free_only_to_a_process_it_gives_way_to() {
        assert_eq!(yielding(400, Some(0)), 400);
        assert_eq!(yielding(400, Some(-5)), 400);
        assert_eq!(yielding(400, Some(10)), 0);
        assert_eq!(yielding(400, None), 0);
    }

    /// Over one second of two cores (200 ticks), 180 busy of which 80 niced: 50 % busy
    /// while this process's threads had a CPU whenever they could run, 90 % where they
    /// waited for one (the niced work was in another scheduling group) or their wait is
    /// not read.
    #[test]
    fn niced_work_is_left_out_only_while_this_process_was_not_kept_waiting() {
        let at = Instant::now();
        let reading =
            |ticks: u64, busy: u64, niced: u64, waited: Option<(u64, Instant)>| CpuReading {
                busy,
                niced,
                total: ticks,
                cores: 2,
                own: None,
                ran: None,
                waited,
                quota: None,
            };
        let then = |waited| reading(0, 0, 0, waited);
        let second = at + std::time::Duration::from_secs(1);
        let busy = |waited_ns: Option<u64>| {
            let now = reading(200, 180, 80, waited_ns.map(|ns| (ns, second)));
            let earlier = then(waited_ns.map(|_| (0, at)));
            now.busy_since(&earlier).unwrap()
        };
        assert!((busy(Some(50_000_000)) - 0.5).abs() < 1e-9);
        assert!((busy(Some(1_500_000_000)) - 0.9).abs() < 1e-9);
        assert!((busy(None) - 0.9).abs() < 1e-9);
    }
}
