//! What each side of a comparison is sent — one request at a time, a fan-out, a closed
//! loop — and which of its figures is compared (a time, a throughput, a percentile).

use std::fmt;
use std::time::Duration;

use crate::error::{Result, check_range};
use crate::limits::{MAX_LOOP_TIME, MAX_REQUESTS, MAX_USERS};
use crate::run::Run;
use crate::vocab::ClientStrategy;

/// Requests in a row per side and round for [`SideLoad::Single`]: their median latency is
/// the figure, so one request delayed by the scheduler does not make a round.
pub const SINGLE_IN_A_ROW: usize = 5;

/// The least closed loop a comparison runs: at 10 ms of work a user completes ten
/// requests in it, enough for a throughput that is not one request's rounding.
const LEAST_LOOP: Duration = Duration::from_millis(100);

/// A latency percentile of a closed loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Percentile {
    /// The median.
    P50,
    /// The 90th percentile.
    P90,
    /// The 99th percentile.
    P99,
}

impl Percentile {
    pub(super) fn of(self, run: &Run) -> Duration {
        let latency = crate::summary::Latency::of(run.records.iter().map(|r| r.latency()));
        latency.map_or(Duration::ZERO, |l| match self {
            Percentile::P50 => l.p50,
            Percentile::P90 => l.p90,
            Percentile::P99 => l.p99,
        })
    }
}

impl fmt::Display for Percentile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Percentile::P50 => "p50",
            Percentile::P90 => "p90",
            Percentile::P99 => "p99",
        })
    }
}

/// The load each side of a comparison is sent, and which of its figures is compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SideLoad {
    /// One request at a time: the median latency of [`SINGLE_IN_A_ROW`] in a row. What a
    /// handler's own work costs, without queueing.
    Single,
    /// `n` requests at once: the wall time until the last is answered. What a burst
    /// costs, queueing and scheduling included.
    FanOut(usize),
    /// A closed loop of `users`, each sending its next request when the last is answered,
    /// for `duration`: the requests answered per second.
    Throughput {
        /// Concurrent users.
        users: usize,
        /// How long the users send.
        duration: Duration,
    },
    /// The same closed loop: a latency percentile.
    Latency {
        /// Concurrent users.
        users: usize,
        /// How long the users send.
        duration: Duration,
        /// Which percentile.
        percentile: Percentile,
    },
}

impl SideLoad {
    pub(super) fn validate(self) -> Result<SideLoad> {
        match self {
            SideLoad::Single => {}
            SideLoad::FanOut(n) => {
                check_range("fan-out", n, 1, MAX_REQUESTS, " requests")?;
            }
            SideLoad::Throughput { users, duration }
            | SideLoad::Latency {
                users, duration, ..
            } => {
                check_range("users", users, 1, MAX_USERS, "")?;
                check_range(
                    "loop duration",
                    duration.as_millis(),
                    LEAST_LOOP.as_millis(),
                    MAX_LOOP_TIME.as_millis(),
                    " ms",
                )?;
            }
        }
        Ok(self)
    }

    /// The closed loop's strategy, for the loop figures.
    pub(super) fn closed_loop(users: usize, duration: Duration) -> ClientStrategy {
        ClientStrategy::ClosedLoop {
            users,
            think: Duration::ZERO,
            ramp: Duration::ZERO,
            duration,
        }
    }

    /// Whether a larger figure is slower (a time) rather than faster (a throughput).
    pub(super) fn is_time(self) -> bool {
        !matches!(self, SideLoad::Throughput { .. })
    }
}

impl fmt::Display for SideLoad {
    /// `one request at a time`, `fan-out of 20`, `closed loop of 8 users for 500 ms:
    /// throughput`: stable words for reports and snapshots.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SideLoad::Single => write!(
                f,
                "one request at a time (median of {SINGLE_IN_A_ROW} in a row)"
            ),
            SideLoad::FanOut(n) => write!(f, "fan-out of {n}"),
            SideLoad::Throughput { users, duration } => write!(
                f,
                "closed loop of {users} users for {} ms: throughput",
                duration.as_millis()
            ),
            SideLoad::Latency {
                users,
                duration,
                percentile,
            } => write!(
                f,
                "closed loop of {users} users for {} ms: {percentile} latency",
                duration.as_millis()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_out_of_range_are_named() {
        let err = SideLoad::FanOut(0).validate().unwrap_err().to_string();
        assert!(err.starts_with("invalid fan-out: 0"), "{err}");
        let err = SideLoad::Throughput {
            users: 4,
            duration: Duration::from_millis(50),
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(err.starts_with("invalid loop duration: 50"), "{err}");
    }
}
