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
    /// The same for gRPC calls, speaking HTTP/2: built by the first call.
    pub(super) http2_clients: std::sync::OnceLock<Vec<reqwest::Client>>,
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
            let http2 = request.grpc;
            let first = match self.lifecycle {
                Lifecycle::PerRequest => match build_client(self.limits, usize::MAX, http2) {
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
                    let clients = match self.clients(http2) {
                        Ok(clients) => clients,
                        Err(_) => {
                            return RequestRecord::failed_at(
                                index,
                                origin.elapsed(),
                                FailureKind::Request,
                            );
                        }
                    };
                    let turn = self.next_client.fetch_add(1, Ordering::Relaxed);
                    let client = &clients[turn % clients.len()];
                    send::send(client, &request, index, origin, intended).await
                }
            };
            if !(first.lost && retry::safe(&request.method)) {
                return first.record;
            }
            // Once more, on a new connection: a client of its own has no pooled one (the
            // others, idle as long, may have been closed with it). From the first try's
            // start, as the user waited.
            let Ok(fresh) = build_client(self.limits, 0, http2) else {
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

    /// The lifecycle's clients: HTTP/1's, or (for gRPC calls) as many speaking HTTP/2.
    fn clients(&self, http2: bool) -> crate::error::Result<&[reqwest::Client]> {
        if !http2 {
            return Ok(&self.clients);
        }
        if let Some(clients) = self.http2_clients.get() {
            return Ok(clients);
        }
        let built = (0..self.clients.len())
            .map(|_| build_client(self.limits, idle_per_host(self.lifecycle), true))
            .collect::<crate::error::Result<Vec<_>>>()?;
        Ok(self.http2_clients.get_or_init(|| built))
    }
}

/// What each client of `lifecycle` keeps idle per host: a connection cap's, else any.
pub(super) fn idle_per_host(lifecycle: Lifecycle) -> usize {
    lifecycle.connection_cap().unwrap_or(usize::MAX)
}
