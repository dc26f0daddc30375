//! What a timing from outside can tell, and where it has no power.
//!
//! A running service's URL gives one kind of figure: how much longer N concurrent requests
//! take than one alone. That difference also holds the load's own cost — the load client's
//! CPU per request, the kernel's, the framework's — and on a fast endpoint that cost is the
//! size of the handler itself: a 60 µs route and a 40 µs client read alike. A claim decides
//! from outside only where its requests are long against that cost and the machine's CPU
//! was not the fan-out's limit; elsewhere it is inconclusive, and says which.

use std::time::Duration;

use crate::error::Error;
use crate::held::in_ms;
use crate::service_process::ProcessTimes;
use crate::usage::{OWN_SHARE, SATURATED, Usage, WAITING};

/// How many times the load client's own CPU per request one request alone must take for a
/// fan-out to bound a share of it. N concurrent requests on one worker whose handler never
/// holds it read ≈ 1 + N·c ÷ (k·d) of one request d, c the client's CPU per request and k
/// its workers (2): an apparent held share of ≈ c ÷ (k·d). At d = 20 c that is 2.5 %, half
/// the 5 % a claim allows.
pub(crate) const SHORTEST: f64 = 20.0;

/// What one load measured from outside saw of its own limits.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Outside {
    /// The load client's CPU per request (its workers' busy time ÷ requests).
    pub(crate) client_per_request: Option<Duration>,
    /// What the machine and the load client did over the load.
    pub(crate) usage: Option<Usage>,
    /// The service's process over the load, when it runs on this machine, and how long the
    /// load took: its share of the machine and its threads' wait for a CPU.
    pub(crate) service: Option<(ProcessTimes, Duration)>,
}

impl Outside {
    /// `usage` over a load of `n` requests that took `length`, sent by a client of
    /// `client_workers`: the client's CPU per request from its threads' own clocks, or
    /// where those cannot be read from its workers' busy time (which also counts time the
    /// kernel gave their CPU to another process, so it can only overstate).
    pub(crate) fn of(length: Duration, usage: Usage, n: usize, client_workers: usize) -> Outside {
        let busy = usage.client_cpu.unwrap_or_else(|| {
            Duration::from_secs_f64(usage.client * client_workers as f64 * length.as_secs_f64())
        });
        Outside {
            client_per_request: Some(busy / n.max(1) as u32),
            usage: Some(usage),
            service: None,
        }
    }

    /// The same, with what the service's process did over the load.
    pub(crate) fn with_service(mut self, service: Option<(ProcessTimes, Duration)>) -> Outside {
        self.service = service;
        self
    }

    /// Whether the machine's CPU was the load's limit: busy past [`SATURATED`], and the
    /// load's own processes had or wanted it — this one (the load client) or the service's
    /// used a quarter of the machine, or their threads waited for a CPU (as
    /// [`Usage::cpu_pressure`] reads a load whose server runs here). A machine kept busy by
    /// another process's work is not the limit of a load that idles beside it.
    ///
    /// `Some(true)` when other processes' work had a quarter of the machine or more besides
    /// (what the machine did less what this process and the service did): a shared
    /// machine's passing state, measured again. `Some(false)` when the load's own
    /// processes saturated it, or nothing says whose work it was.
    fn cpu_limit(&self, usage: Usage) -> Option<bool> {
        let machine = usage.machine?;
        if machine < SATURATED {
            return None;
        }
        // The CPUs the load could have: a cgroup's quota where one limits this process.
        let cores = usage.capacity().unwrap_or(1.0).max(f64::MIN_POSITIVE);
        let service = self.service.map(|(times, length)| {
            let length = length.as_secs_f64().max(f64::MIN_POSITIVE);
            (
                times.cpu.as_secs_f64() / (length * cores),
                times.queued.as_secs_f64() / length / WAITING,
            )
        });
        let wants = [
            usage.process.map(|p| p / OWN_SHARE),
            usage.waiting.map(|w| w / WAITING),
            service.map(|(share, _)| share / OWN_SHARE),
            service.map(|(_, waiting)| waiting),
        ];
        if wants.iter().all(Option::is_none) {
            // Nothing says whose work it was: a saturated machine is the limit.
            return Some(false);
        }
        if !wants.into_iter().flatten().any(|want| want >= 1.0) {
            return None;
        }
        let others = usage
            .process
            .map(|own| machine - own - service.map_or(0.0, |(share, _)| share));
        Some(others.is_some_and(|others| others >= OWN_SHARE))
    }

    /// Why a figure taken from outside, of requests that take `request` alone, says
    /// nothing about the service: too short against the client's own cost, or a load whose
    /// limit was the machine's CPU. `None` when it has power.
    pub(crate) fn powerless(&self, request: Duration) -> Option<Powerless> {
        if let Some(client) = self.client_per_request
            && request.as_secs_f64() < SHORTEST * client.as_secs_f64()
        {
            return Some(Powerless::TooShort { request, client });
        }
        match self.usage {
            // Off Linux the machine's CPU is not read: a fan-out it limited would read as
            // the service's hold, so no figure from outside is a verdict there.
            // Read, but no tick of the machine's clock (10 ms) passed over a short load:
            // the next load may see one.
            Some(usage) if usage.machine.is_none() && usage.cores.is_some() => {
                Some(Powerless::NoTick)
            }
            Some(usage) if usage.machine.is_none() => Some(Powerless::CpuUnread),
            Some(usage) => self
                .cpu_limit(usage)
                .map(|others| Powerless::Cpu { usage, others }),
            None => None,
        }
    }
}

/// Why a timing from outside has no power over a load.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Powerless {
    /// One request alone is short against the load client's own CPU per request.
    TooShort {
        /// One request alone.
        request: Duration,
        /// The load client's CPU per request.
        client: Duration,
    },
    /// The machine's CPU was the load's limit; `others` when other processes' work made it
    /// so (the load's own processes used little of it), which passes.
    Cpu {
        /// The machine's and the load's CPU over the load.
        usage: Usage,
        /// Whether other processes' work, not the load's, saturated the machine.
        others: bool,
    },
    /// The machine's CPU is not read on this platform, so whether it was the load's limit
    /// cannot be told.
    CpuUnread,
    /// The machine's CPU is read, but the load was over before its clock ticked.
    NoTick,
}

impl Powerless {
    /// The error a claim ends its rounds with: `what` (which load, and why) as the machine
    /// or perfshape being the limit, or as a read this platform does not make.
    pub(crate) fn error(self, what: String) -> Error {
        match self {
            Powerless::CpuUnread => Error::Unread { what },
            Powerless::Cpu { others: true, .. } | Powerless::NoTick => Error::MachineBusy { what },
            Powerless::TooShort { .. } | Powerless::Cpu { .. } => Error::Limited { what },
        }
    }
}

impl std::fmt::Display for Powerless {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Powerless::TooShort { request, client } => write!(
                f,
                "one request alone takes {}, too short against the load client's own {} of CPU per request (a timing from outside needs requests of {}, {SHORTEST}× that)",
                in_ms(*request),
                in_ms(*client),
                in_ms(client.mul_f64(SHORTEST))
            ),
            Powerless::Cpu { usage, .. } => write!(
                f,
                "the machine's CPU was the limit of the load ({usage}): it measures the CPU, not the service"
            ),
            Powerless::NoTick => f.write_str(
                "the load was over before the machine's CPU clock ticked (10 ms), so whether the CPU limited it is not known",
            ),
            Powerless::CpuUnread => f.write_str(&crate::platform::not_read(
                "the machine's CPU, which tells a fan-out the CPU limited from one the service held,",
                "/proc/stat",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(machine: f64, client: f64) -> Usage {
        Usage {
            machine: Some(machine),
            cores: Some(2),
            client,
            ..Usage::default()
        }
    }

    /// The error a round of 20 requests over `length` ends with, the service's process
    /// having done `service` meanwhile.
    fn ends_with(usage: Usage, service: ProcessTimes, length: Duration) -> Error {
        let outside = Outside::of(length, usage, 20, 2).with_service(Some((service, length)));
        let why = outside
            .powerless(Duration::from_millis(20))
            .expect("the CPU was the limit");
        why.error(why.to_string())
    }

    #[test]
    fn a_machine_busy_with_another_process_is_no_limit_of_a_load_idling_beside_it() {
        let busy = Usage {
            process: Some(0.05),
            waiting: Some(0.1),
            ..usage(0.9, 0.05)
        };
        let idle = ProcessTimes::default();
        let length = Duration::from_millis(100);
        let outside = Outside::of(length, busy, 20, 2).with_service(Some((idle, length)));
        assert!(outside.powerless(Duration::from_millis(20)).is_none());
        // The service wanted the machine: its threads waited for a CPU.
        let starved = ProcessTimes {
            cpu: Duration::from_millis(80),
            queued: Duration::from_millis(90),
        };
        // 0.45 of the machine was other processes' work: measured again, it may free.
        let error = ends_with(busy, starved, length);
        assert!(matches!(error, Error::MachineBusy { .. }), "{error}");
        // The load's own processes saturated it (0.3 + 0.5 of 0.9): measuring again would
        // find the same.
        let own = Usage {
            process: Some(0.3),
            ..busy
        };
        let hungry = ProcessTimes {
            cpu: Duration::from_millis(100),
            queued: Duration::from_millis(90),
        };
        let error = ends_with(own, hungry, length);
        assert!(matches!(error, Error::Limited { .. }), "{error}");
    }

    #[test]
    fn a_machine_other_work_saturates_while_the_service_waits_is_measured_again() {
        let busy = Usage {
            process: Some(0.05),
            waiting: Some(0.1),
            ..usage(0.9, 0.05)
        };
        let length = Duration::from_millis(16);
        // The service computed 1 ms of the 16 and its threads waited 14 ms in all for a CPU
        // that another process's build had.
        let waited = ProcessTimes {
            cpu: Duration::from_millis(1),
            queued: Duration::from_millis(14),
        };
        let error = ends_with(busy, waited, length);
        assert!(matches!(error, Error::MachineBusy { .. }), "{error}");
    }

    #[test]
    fn a_machine_whose_cpu_is_not_read_leaves_a_timing_from_outside_powerless() {
        let unread = Usage {
            machine: None,
            client: 0.05,
            ..Usage::default()
        };
        let outside = Outside::of(Duration::from_millis(100), unread, 20, 2);
        let why = outside
            .powerless(Duration::from_millis(20))
            .expect("no verdict without the machine's CPU");
        assert!(matches!(why, Powerless::CpuUnread), "{why}");
        assert!(matches!(why.error(why.to_string()), Error::Unread { .. }));
        // Read (the cores are known), but no tick passed over a short load: measured again.
        let untimed = Usage {
            cores: Some(2),
            ..unread
        };
        let outside = Outside::of(Duration::from_millis(8), untimed, 20, 2);
        let why = outside
            .powerless(Duration::from_millis(20))
            .expect("not known yet");
        assert!(matches!(why, Powerless::NoTick), "{why}");
        assert!(matches!(
            why.error(why.to_string()),
            Error::MachineBusy { .. }
        ));
    }

    #[test]
    fn a_request_short_against_the_client_is_powerless_and_a_long_one_is_not() {
        // 20 requests in 10 ms on 2 client workers 50 % busy: 0.5 ms of CPU per request.
        let outside = Outside::of(Duration::from_millis(10), usage(0.3, 0.5), 20, 2);
        assert_eq!(outside.client_per_request, Some(Duration::from_micros(500)));
        let short = outside
            .powerless(Duration::from_millis(2))
            .expect("too short");
        assert!(
            short
                .to_string()
                .starts_with("one request alone takes 2.0 ms"),
            "{short}"
        );
        assert!(outside.powerless(Duration::from_millis(20)).is_none());
        let saturated = Outside::of(Duration::from_millis(100), usage(0.9, 0.01), 20, 2);
        let cpu = saturated
            .powerless(Duration::from_millis(20))
            .expect("the CPU");
        assert!(
            cpu.to_string()
                .starts_with("the machine's CPU was the limit"),
            "{cpu}"
        );
    }
}
