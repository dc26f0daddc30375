//! What stopped the throughput growing, judged from the machine and the pools at the
//! plateau.

use serde::{Deserialize, Serialize};

use crate::usage::Usage;

/// What stopped the throughput growing, judged from the machine and the pools at the
/// plateau: Little's law turns any queue into "a pool of ≈k", so the probe looks before
/// it says so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// No queue formed up to the highest concurrency tried.
    None,
    /// Requests queued while the machine's CPU and the load client had room: a pool or a
    /// lock in the service (or in front of it).
    Pool,
    /// The machine's CPU was saturated — the service and perfshape's own load client share
    /// it: a figure about the machine, not a pool.
    Cpu,
    /// The load client's workers were saturated while the CPU was not: perfshape was the
    /// limit.
    LoadClient,
    /// The machine's CPU use could not be read (no `/proc/stat`), so the plateau is not
    /// attributed.
    #[default]
    NotAttributed,
}

impl Limit {
    /// Whether the limit is perfshape's or the machine's, so that no claim about the
    /// service may be decided on it.
    pub fn is_perfshapes_own(self) -> bool {
        matches!(self, Limit::Cpu | Limit::LoadClient)
    }

    /// The attribution of a queue (`queued`) from what was saturated where it formed.
    pub(crate) fn of(queued: bool, plateau: Option<Usage>) -> Limit {
        let Some(usage) = plateau.filter(|_| queued) else {
            return if queued {
                Limit::NotAttributed
            } else {
                Limit::None
            };
        };
        if usage.cpu_saturated() {
            Limit::Cpu
        } else if usage.client_saturated() {
            Limit::LoadClient
        } else if usage.machine.is_none() {
            Limit::NotAttributed
        } else {
            Limit::Pool
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn usage(machine: Option<f64>, client: f64) -> Option<Usage> {
        Some(Usage {
            machine,
            cores: machine.map(|_| 2),
            quota: None,
            throttled: None,
            process: None,
            waiting: None,
            client,
            server: None,
            server_queued: None,
            client_cpu: None,
        })
    }

    #[test]
    fn a_queue_is_a_pool_only_while_the_cpu_and_the_client_have_room() {
        assert_eq!(Limit::of(false, usage(Some(0.99), 0.99)), Limit::None);
        assert_eq!(Limit::of(true, usage(Some(0.05), 0.02)), Limit::Pool);
        // A core kept busy by another process still leaves a pool a pool.
        assert_eq!(Limit::of(true, usage(Some(0.55), 0.02)), Limit::Pool);
        assert_eq!(Limit::of(true, usage(Some(0.90), 0.88)), Limit::Cpu);
        assert_eq!(Limit::of(true, usage(Some(0.60), 0.95)), Limit::LoadClient);
        // Without the machine's figure a queue is never called a pool.
        assert_eq!(Limit::of(true, usage(None, 0.1)), Limit::NotAttributed);
        assert_eq!(Limit::of(true, None), Limit::NotAttributed);
        assert!(Limit::Cpu.is_perfshapes_own() && Limit::LoadClient.is_perfshapes_own());
        assert!(!Limit::Pool.is_perfshapes_own() && !Limit::NotAttributed.is_perfshapes_own());
    }
}
