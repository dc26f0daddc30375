//! A Run: one record per request of one load, nothing dropped.

use std::collections::{BTreeMap, HashSet};
use std::net::SocketAddr;
use std::time::Duration;

use serde::Serialize;

pub use crate::record::{Connection, FailureKind, Outcome, RequestRecord};

pub use crate::cut_short::CutShort;
use crate::error::{Error, Result};
use crate::summary::Summary;

/// Every request of one load, in index order, with the wall time of the whole load.
///
/// `sent() == ok() + failed()` by construction: each index has exactly one record.
///
/// ```
/// use std::time::Duration;
/// use axum::{Router, routing::get};
/// use perfshape::{client::ClientStrategy, client::Lifecycle, client::LoadClient, runtime::Pool, runtime::Server, load::Summary};
///
/// let server = Server::serve(
///     Pool::workers("server", 1)?,
///     Router::new().route("/ok", get(|| async { "ok" })),
/// )?;
/// let client = LoadClient::new(Pool::workers("client", 1)?, Lifecycle::Shared)?;
/// let run = client.run(ClientStrategy::FanOut, &format!("{}/ok", server.base_url()), 8)?;
/// assert_eq!(run.request, "GET /ok");
/// assert_eq!((run.sent(), run.ok(), run.failed()), (8, 8, 0));
/// let summary: Summary = run.summary(Duration::from_millis(1));
/// assert_eq!(summary.sent, summary.ok + summary.failed);
/// assert!(summary.latency.is_some_and(|l| l.p50 <= l.p99));
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// What was asked for, e.g. `GET /orders` (the URL's path and query).
    pub request: String,
    /// The records, sorted by index, one per planned request.
    pub records: Vec<RequestRecord>,
    /// From the first send to the last completion.
    #[serde(with = "crate::vocab::millis")]
    pub wall: Duration,
    /// The bound that ended the load before it was done, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_short: Option<CutShort>,
    /// The canary sent while the load was in flight, when one was asked for
    /// ([`LoadRequest::with_canary`](crate::client::LoadRequest::with_canary)): not one of
    /// the load's requests, so not in `records` nor in `sent`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub canary: Option<RequestRecord>,
    /// The instant every record's offsets count from, when the load client sent the run
    /// in this process: what places a served router's polls on the run's clock.
    #[serde(skip)]
    pub(crate) origin: Option<std::time::Instant>,
    /// On a router perfshape serves, the runs of its workers outside any response's polls
    /// in which a worker slept in the kernel, from the load's first send until the workers
    /// parked after it: a task the requests spawned, or another task on the worker, that
    /// waited while it held the worker ([`timeline`](crate::pool::timeline)).
    #[serde(skip)]
    pub(crate) worker_waits: Vec<crate::pool::timeline::Segment>,
    /// On a router perfshape serves, what its workers were sampled doing while the run
    /// lasted, by route ([`sampler`](crate::pool::sampler)): the calls they slept in.
    #[serde(skip)]
    pub(crate) calls: crate::pool::sampler::Calls,
}

impl Run {
    /// A run of `request` (`POST /orders`) from its records (in any order) and its wall
    /// time.
    ///
    /// # Panics
    /// When the indices are not exactly `0..records.len()`: a load lost or duplicated a
    /// request, which is a bug in perfshape, never a measurement.
    pub fn new(request: String, mut records: Vec<RequestRecord>, wall: Duration) -> Run {
        records.sort_by_key(|r| r.index);
        assert!(
            records.iter().enumerate().all(|(i, r)| r.index == i),
            "a load must account for every request exactly once"
        );
        Run {
            request,
            records,
            wall,
            cut_short: None,
            canary: None,
            worker_waits: Vec::new(),
            calls: Default::default(),
            origin: None,
        }
    }

    /// Requests planned and accounted for.
    pub fn sent(&self) -> usize {
        self.records.len()
    }

    /// Requests that succeeded.
    pub fn ok(&self) -> usize {
        self.records.iter().filter(|r| r.outcome.is_ok()).count()
    }

    /// Requests that failed, for any reason.
    pub fn failed(&self) -> usize {
        self.sent() - self.ok()
    }

    /// This run, if every request it sent succeeded; otherwise an error that names the
    /// request and counts the failures by status and kind (`GET /orders answered 500 in 3
    /// of 20 requests (#2, #5, #8)`). A timing figure from a run with failures would
    /// measure the failures. Requests an open loop dropped by design (its cap of requests
    /// in flight was full) were never sent: they are counted, not refused.
    pub fn require_ok(&self) -> Result<&Run> {
        let failing = |r: &&RequestRecord| {
            !matches!(
                r.outcome,
                Outcome::Ok { .. }
                    | Outcome::Failed {
                        kind: FailureKind::Dropped
                    }
            )
        };
        if !self.records.iter().any(|r| failing(&r)) {
            return Ok(self);
        }
        let (statuses, kinds) = self.failures_counted(failing);
        let sent = self.sent();
        let mut parts = Vec::new();
        if !statuses.is_empty() {
            let answered = statuses
                .iter()
                .map(|(code, count)| format!("{code} in {count}"))
                .collect::<Vec<_>>()
                .join(" and ");
            parts.push(format!("answered {answered} of {sent} requests"));
        }
        if !kinds.is_empty() {
            let failed: usize = kinds.values().sum();
            let by_kind = kinds
                .iter()
                .map(|(kind, count)| format!("{kind}: {count}"))
                .collect::<Vec<_>>()
                .join(", ");
            let first = self
                .records
                .iter()
                .find_map(|r| r.error.as_deref())
                .map(|e| format!("; first error: {e}"))
                .unwrap_or_default();
            parts.push(format!(
                "failed in {failed} of {sent} requests ({by_kind}{first})"
            ));
        }
        let which: Vec<String> = self
            .records
            .iter()
            .filter(failing)
            .map(|r| format!("#{}", r.index))
            .collect();
        let shown = which.len().min(8);
        let more = if which.len() > shown { ", …" } else { "" };
        parts.push(format!("failed: {}{more}", which[..shown].join(", ")));
        let too_slow = statuses.is_empty()
            && kinds.keys().all(|k| {
                *k == FailureKind::Timeout.to_string() || *k == FailureKind::Deadline.to_string()
            });
        let (request, what) = (self.request.clone(), parts.join("; "));
        Err(if too_slow {
            Error::TooSlow { request, what }
        } else {
            Error::Failed { request, what }
        })
    }

    /// The failed requests counted by status (a gRPC call's by its status's name and
    /// message) and, where no status came, by kind.
    fn failures_counted(
        &self,
        failing: impl Fn(&&RequestRecord) -> bool,
    ) -> (BTreeMap<String, usize>, BTreeMap<String, usize>) {
        let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        for record in self.records.iter().filter(|r| failing(r)) {
            match &record.outcome {
                Outcome::Failed {
                    kind: FailureKind::Status(code),
                } => *statuses.entry(code.to_string()).or_default() += 1,
                // A gRPC call's status by its name and message (`UNAVAILABLE (store is
                // down) in 3 of 20`): the HTTP status of a failed call is 200.
                Outcome::Failed {
                    kind: FailureKind::Grpc(code),
                } => {
                    let named = record
                        .error
                        .clone()
                        .unwrap_or_else(|| format!("gRPC status {code}"));
                    *statuses.entry(named).or_default() += 1
                }
                Outcome::Failed { kind } => *kinds.entry(kind.to_string()).or_default() += 1,
                Outcome::Ok { .. } => {}
            }
        }
        (statuses, kinds)
    }

    /// Figures of this run; completions closer than `wave_gap` belong to the same wave.
    pub fn summary(&self, wave_gap: Duration) -> Summary {
        Summary {
            cut_short: self.cut_short,
            ..Summary::of(&self.records, self.wall, wave_gap)
        }
    }

    /// Marks each record's connection as new or reused, given the peers seen before this
    /// run; records the new ones in `seen`.
    pub(crate) fn classify_connections(&mut self, seen: &mut HashSet<SocketAddr>) {
        let mut order: Vec<usize> = (0..self.records.len()).collect();
        order.sort_by_key(|&i| self.records[i].start);
        for i in order {
            let record = &mut self.records[i];
            record.connection = match record.peer {
                // No peer reported: what the sender knew (the connections driver knows
                // each request's connection; reqwest leaves it unknown).
                None => record.connection,
                Some(peer) if seen.insert(peer) => Connection::New,
                Some(_) => Connection::Reused,
            };
        }
    }
}
