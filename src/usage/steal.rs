//! Hypervisor steal: the time the host took from this virtual machine's CPUs, summed over
//! them (`/proc/stat`'s `steal`, Linux). A round measured while the host took a share of
//! the machine measures the host, not the service, and is measured again
//! (`claim::stolen`).
//!
//! On this project's machine (a Firecracker VM) steal comes in bursts: quiet, 0.05 % of a
//! 3 ms spin's time on average; in a burst, 2–6 % of all time, single spins losing up to
//! 16 ms (`scripts/steal.py`). A suite run during one burst had five claims inconclusive
//! whose rounds disagreed; the same run minutes later had none. An idle CPU that wakes
//! waits for the host, and that wait is counted too: eight threads sleeping 1 ms in a loop
//! read 36–728 ticks in 10–15 s where the idle machine read 1–37 and both cores spinning
//! 2–19 (`scripts/steal.py --wakeups`), so the claims that sleep and wake most meet the
//! host most.

use std::time::Duration;

/// The steal counter at one instant.
#[derive(Clone, Copy, Debug)]
pub struct StealReading {
    /// Steal so far, summed over the CPUs.
    stolen: Duration,
}

impl StealReading {
    /// The counter now; `None` where it is not read (off Linux, no `/proc`, a kernel that
    /// does not account steal).
    ///
    /// Read on Linux in the portable build too (`PERFSHAPE_PORTABLE=1`, which compiles what
    /// macOS compiles, procfs's reads left out): this is a guard of the measurement against the
    /// machine it runs on, not a read any claim decides on, and CI's portable run shares
    /// the virtual machine the guard was made for.
    #[cfg(target_os = "linux")]
    pub fn now() -> Option<StealReading> {
        let stat = std::fs::read_to_string("/proc/stat").ok()?;
        // `cpu  user nice system idle iowait irq softirq steal …`, in USER_HZ ticks.
        let ticks: u64 = stat
            .lines()
            .next()?
            .split_whitespace()
            .nth(8)?
            .parse()
            .ok()?;
        // SAFETY: `sysconf` only reads a constant of the running system.
        let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) })
            .ok()
            .filter(|&t| t > 0)?;
        Some(StealReading {
            stolen: Duration::from_nanos(ticks.saturating_mul(1_000_000_000) / per_second),
        })
    }

    /// The counter now; off Linux it is not read.
    #[cfg(not(target_os = "linux"))]
    pub fn now() -> Option<StealReading> {
        None
    }

    /// The CPU time the host took since `earlier`, summed over the CPUs.
    pub fn since(&self, earlier: &StealReading) -> Duration {
        self.stolen.saturating_sub(earlier.stolen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_is_read_on_linux_and_never_runs_backwards() {
        let read = StealReading::now();
        assert_eq!(
            read.is_some(),
            cfg!(target_os = "linux"),
            "Linux has /proc/stat"
        );
        let Some(then) = read else {
            return;
        };
        std::thread::sleep(Duration::from_millis(20));
        let now = StealReading::now().expect("read a moment ago");
        assert!(now.stolen >= then.stolen, "{then:?} then {now:?}");
        // Never more than every CPU's whole time in between, with a tick to spare.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
        assert!(now.since(&then) <= Duration::from_millis(20 + 10) * cpus * 10);
    }
}
