//! The machine's CPU time, and this process's, read from `/proc` at one instant: two
//! readings make a share of the machine in use, this process's own share, its threads'
//! wait for a CPU and, under a cgroup quota, the quota's use and throttling.

use std::time::Instant;

use crate::cpu_quota::QuotaReading;

/// The machine's CPU time so far, in ticks, from `/proc/stat`: busy (everything but idle
/// and I/O wait) and total, over every core.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuReading {
    busy: u64,
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
        let own = me
            .as_ref()
            .and_then(|me| me.stat().ok())
            .map(|stat| stat.utime + stat.stime);
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
    pub fn busy_since(&self, earlier: &CpuReading) -> Option<f64> {
        if let Some((now, then)) = self.quota.zip(earlier.quota) {
            return now.used_since(&then);
        }
        let total = self.total.checked_sub(earlier.total)?;
        let busy = self.busy.saturating_sub(earlier.busy);
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
