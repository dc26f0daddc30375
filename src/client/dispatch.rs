//! How a load's requests are dispatched: which loop sends them (the strategy's, or the
//! connections driver's closed loop where it can send the load), the canary beside them,
//! sync-over-async's blocked threads — and the run they make.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use super::limits::cut_short;
use super::loops::{
    Timing, Users, closed_loop, fan_out, join_canary, open_loop, send_at, sequential, task_failed,
};
use super::{CanaryPlan, ClientStrategy, Driver, Lifecycle, LoadClient, Plan, connections};
use crate::error::{Error, Result, check_range};
use crate::limits::MAX_REQUESTS;
use crate::record::RequestRecord;
use crate::run::Run;

impl LoadClient {
    /// Sends `n` requests of `plan` the way `strategy` says (and the canary's one request
    /// `after` the load started), and waits for all of them.
    pub(crate) fn run_plan(
        &self,
        strategy: ClientStrategy,
        plan: &Plan,
        n: usize,
        canary: Option<CanaryPlan<'_>>,
    ) -> Result<Run> {
        check_range("n", n, 1, MAX_REQUESTS, "")?;
        strategy.validate()?;
        let label = plan.label.clone();
        let plan = Arc::new(plan.clone());
        // The connections driver's threads start before the clock does, not inside the
        // first load's time.
        let shards = match self.driver {
            Driver::Connections => Some(self.shards()?),
            Driver::Reqwest => None,
        };
        let origin = Instant::now();
        let deadline = origin + self.inner.limits.run_deadline;
        // The canary is its own task on the pool: it must not wait behind the load (and
        // cannot ride on sync-over-async's blocked threads).
        let canary = self.spawn_canary(canary, origin, deadline);
        let (records, canary) = match strategy {
            ClientStrategy::SyncOverAsync { threads } => {
                let records = self.sync_over_async(threads, &plan, n, origin, deadline);
                (
                    records,
                    self.pool.block_on(async { join_canary(canary).await }),
                )
            }
            _ => {
                let load = self.spawn_load(strategy, plan, n, Timing { origin, deadline }, shards);
                self.pool.block_on(async {
                    let records = load.await.map_err(task_failed)?;
                    Ok::<_, Error>((records, join_canary(canary).await))
                })?
            }
        };
        let mut run = self.run_of(label, records, strategy, n, origin);
        run.canary = canary;
        Ok(run)
    }

    /// The run `records` make: its wall time, whether the client's limits cut it short,
    /// and each request's connection classified as new or reused.
    fn run_of(
        &self,
        label: String,
        records: Vec<RequestRecord>,
        strategy: ClientStrategy,
        n: usize,
        origin: Instant,
    ) -> Run {
        let wall = records.iter().map(|r| r.end).max().unwrap_or_default();
        let cut_short = cut_short(strategy, n, &records, origin.elapsed(), self.inner.limits);
        let mut run = Run::new(label, records, wall);
        run.cut_short = cut_short;
        if self.inner.lifecycle == Lifecycle::PerRequest {
            // A fresh client per request always opens a fresh connection.
            run.classify_connections(&mut HashSet::new());
        } else {
            let mut seen = self.inner.seen.lock().unwrap_or_else(|p| p.into_inner());
            run.classify_connections(&mut seen);
        }
        run.origin = Some(origin);
        run
    }

    /// The load as a task on the client's pool: the connections driver's closed loop where
    /// it can send it (a fixed request, a shared client, no think time or ramp), else the
    /// strategy's own loop.
    fn spawn_load(
        &self,
        strategy: ClientStrategy,
        plan: Arc<Plan>,
        n: usize,
        at: Timing,
        shards: Option<&super::shards::Shards>,
    ) -> tokio::task::JoinHandle<Vec<RequestRecord>> {
        let inner = Arc::clone(&self.inner);
        let raw = plan
            .fixed()
            .filter(|request| {
                self.driver == Driver::Connections
                    && self.inner.lifecycle == Lifecycle::Shared
                    && connections::suits(request)
            })
            .map(|request| Arc::new(request.clone()));
        match (strategy, raw.zip(shards)) {
            (
                ClientStrategy::ClosedLoop {
                    users,
                    think,
                    ramp,
                    duration,
                },
                Some((request, shards)),
            ) if think.is_zero() && ramp.is_zero() => {
                let timeout = self.inner.limits.request_timeout;
                let next = Arc::new(AtomicUsize::new(0));
                let shards = shards.spread(users, |share| {
                    connections::closed_loop(
                        Arc::clone(&request),
                        Arc::clone(&next),
                        n,
                        share,
                        duration,
                        at,
                        timeout,
                    )
                });
                self.pool.handle().spawn(async move {
                    let mut records = Vec::new();
                    for shard in shards {
                        // A shard that panicked loses its records: Run::new refuses the
                        // gap loudly.
                        records.extend(shard.await.unwrap_or_default());
                    }
                    inner
                        .issued
                        .fetch_add(records.len() as u64, Ordering::Relaxed);
                    records
                })
            }
            _ => self.pool.handle().spawn(async move {
                match strategy {
                    ClientStrategy::FanOut => fan_out(inner, plan, n, at).await,
                    ClientStrategy::ClosedLoop {
                        users,
                        think,
                        ramp,
                        duration,
                    } => {
                        let users = Users {
                            users,
                            think,
                            ramp,
                            duration,
                        };
                        closed_loop(inner, plan, n, users, at).await
                    }
                    ClientStrategy::OpenLoop {
                        rate,
                        max_in_flight,
                    } => open_loop(inner, plan, n, rate, max_in_flight, at).await,
                    _ => sequential(inner, plan, n, at).await,
                }
            }),
        }
    }

    /// The canary as a task of its own on the pool, sent `after` the load's `origin`.
    fn spawn_canary(
        &self,
        canary: Option<CanaryPlan<'_>>,
        origin: Instant,
        deadline: Instant,
    ) -> Option<tokio::task::JoinHandle<RequestRecord>> {
        let CanaryPlan { plan, after } = canary?;
        let plan = Arc::new(plan.clone());
        let inner = Arc::clone(&self.inner);
        Some(self.pool.handle().spawn(async move {
            send_at(origin + after).await;
            inner.send(&plan, 0, origin, after, deadline).await
        }))
    }

    fn sync_over_async(
        &self,
        threads: usize,
        plan: &Plan,
        n: usize,
        origin: Instant,
        deadline: Instant,
    ) -> Vec<RequestRecord> {
        let next = AtomicUsize::new(0);
        let records = Mutex::new(Vec::with_capacity(n));
        let handle = self.pool.handle();
        std::thread::scope(|scope| {
            for _ in 0..threads.min(n) {
                scope.spawn(|| {
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= n {
                            break;
                        }
                        let intended = origin.elapsed();
                        // The `.Result` pattern: this OS thread does nothing until the
                        // response is in.
                        let record = handle
                            .block_on(self.inner.send(plan, index, origin, intended, deadline));
                        records
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(record);
                    }
                });
            }
        });
        records.into_inner().unwrap_or_else(|p| p.into_inner())
    }
}
