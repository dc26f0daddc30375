//! Hypervisor steal: the time the host took from this virtual machine's CPUs, summed over
//! them (`/proc/stat`'s `steal`, Linux). A round measured while the host took a share of
//! the machine measures the host, not the service, and is measured again
//! (`claim::rounds`).
//!
//! On this project's machine (a Firecracker VM) steal comes in bursts: quiet, 0.05 % of a
//! 3 ms spin's time on average; in a burst, 2–6 % of all time, single spins losing up to
//! 16 ms (`scripts/steal.py`). A suite run during one burst had five claims inconclusive
//! whose rounds disagreed; the same run minutes later had none.

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
    #[cfg(linux_reads)]
    pub fn now() -> Option<StealReading> {
        use procfs::CurrentSI as _;
        let stats = procfs::KernelStats::current().ok()?;
        let ticks = stats.total.steal?;
        let per_second = procfs::ticks_per_second().max(1);
        Some(StealReading {
            stolen: Duration::from_nanos(ticks.saturating_mul(1_000_000_000) / per_second),
        })
    }

    /// The counter now; off Linux it is not read.
    #[cfg(not(linux_reads))]
    pub fn now() -> Option<StealReading> {
        None
    }

    /// The CPU time the host took since `earlier`, summed over the CPUs.
    pub fn since(&self, earlier: &StealReading) -> Duration {
        self.stolen.saturating_sub(earlier.stolen)
    }
}
