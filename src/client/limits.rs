//! The bounds on a load, so that no run can hang, and the one that ended a load early.

use std::time::Duration;

use crate::cut_short::CutShort;
use crate::record::{FailureKind, RequestRecord};
use crate::vocab::ClientStrategy;

/// Bounds on a load, so no run can hang: each request times out, and the run as a whole
/// stops sending (counting what it did not send) at its deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The longest one request may take, connect to last byte.
    pub request_timeout: Duration,
    /// The longest one load may take.
    pub run_deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            request_timeout: Duration::from_secs(30),
            run_deadline: Duration::from_secs(120),
        }
    }
}

/// The bound that ended a load early, if one did: a closed loop whose `n` requests were
/// all sent before its duration was up, or any load past the run's deadline (requests
/// recorded as past it, or a closed loop meant to outlast it that ran into it).
pub(super) fn cut_short(
    strategy: ClientStrategy,
    n: usize,
    records: &[RequestRecord],
    elapsed: Duration,
    limits: Limits,
) -> Option<CutShort> {
    let deadline = records
        .iter()
        .any(|r| {
            r.outcome
                == crate::record::Outcome::Failed {
                    kind: FailureKind::Deadline,
                }
        })
        .then_some(CutShort::Deadline {
            at: limits.run_deadline,
        });
    let ClientStrategy::ClosedLoop { duration, .. } = strategy else {
        return deadline;
    };
    if duration > limits.run_deadline && elapsed >= limits.run_deadline {
        return Some(CutShort::Deadline {
            at: limits.run_deadline,
        });
    }
    let last = records.iter().map(|r| r.start).max().unwrap_or_default();
    if records.len() >= n && last < duration {
        return Some(CutShort::Requests {
            n,
            at: last,
            meant: duration,
        });
    }
    deadline
}
