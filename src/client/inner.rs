//! What the tasks of a load share: the clients of its lifecycle, its limits, the connection
//! cap, and the one way each request is sent.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use super::http::build_client;
use super::{Lifecycle, Limits, Plan, retry, send};
use crate::record::{FailureKind, RequestRecord};

/// What the tasks of a load share.
pub(super) struct Inner {
    pub(super) lifecycle: Lifecycle,
    pub(super) limits: Limits,
    /// One client (shared, capped), or the pool's clients used in turn.
    pub(super) clients: Vec<reqwest::Client>,
    pub(super) next_client: AtomicUsize,
    /// Requests handed to an HTTP client so far, over every load: what a server should
    /// have received, for checking that each arrived exactly once.
    pub(super) issued: std::sync::atomic::AtomicU64,
    /// Permits for requests in flight to the host, when the lifecycle caps connections.
    pub(super) cap: Option<Arc<Semaphore>>,
    /// Peers seen on earlier responses: tells a reused connection from a new one.
    pub(super) seen: Mutex<HashSet<SocketAddr>>,
}

impl Inner {
    /// Sends one request with a client of the configured lifecycle, bounded by `deadline`.
    /// Under a connection cap it first queues for a permit: that wait counts as latency,
    /// since latency runs from the intended start.
    pub(super) async fn send(
        &self,
        plan: &Plan,
        index: usize,
        origin: Instant,
        intended: Duration,
        deadline: Instant,
    ) -> RequestRecord {
        let request = match plan.prepared(index) {
            Ok(request) => request,
            Err(what) => {
                let mut record =
                    RequestRecord::failed_at(index, origin.elapsed(), FailureKind::Build);
                record.error = Some(what);
                return record;
            }
        };
        let work = async {
            let _permit = match &self.cap {
                Some(cap) => cap.acquire().await.ok(),
                None => None,
            };
            self.issued.fetch_add(1, Ordering::Relaxed);
            let first = match self.lifecycle {
                Lifecycle::PerRequest => match build_client(self.limits, usize::MAX) {
                    Ok(client) => send::send(&client, &request, index, origin, intended).await,
                    Err(_) => {
                        return RequestRecord::failed_at(
                            index,
                            origin.elapsed(),
                            FailureKind::Request,
                        );
                    }
                },
                _ => {
                    let turn = self.next_client.fetch_add(1, Ordering::Relaxed);
                    let client = &self.clients[turn % self.clients.len()];
                    send::send(client, &request, index, origin, intended).await
                }
            };
            if !(first.lost && retry::safe(&request.method)) {
                return first.record;
            }
            // Once more, on a new connection: a client of its own has no pooled one (the
            // others, idle as long, may have been closed with it). From the first try's
            // start, as the user waited.
            let Ok(fresh) = build_client(self.limits, 0) else {
                return first.record;
            };
            let mut second = send::send(&fresh, &request, index, origin, intended)
                .await
                .record;
            second.start = first.record.start;
            second.retried = true;
            second
        };
        match tokio::time::timeout_at(deadline.into(), work).await {
            Ok(record) => record,
            Err(_) => RequestRecord::failed_at(index, origin.elapsed(), FailureKind::Deadline),
        }
    }
}
