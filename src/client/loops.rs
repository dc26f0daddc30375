//! The strategies' loops on reqwest: sequential, fan-out, a closed loop of users and an
//! open loop at a rate, each returning one record per request it planned; and the timing
//! helpers they share.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;

use super::Plan;
use super::inner::Inner;
use crate::error::Error;
use crate::record::{FailureKind, RequestRecord};

/// The clock of one load: its start, and the deadline after which nothing is sent.
#[derive(Clone, Copy)]
pub(super) struct Timing {
    pub(super) origin: Instant,
    pub(super) deadline: Instant,
}

/// The closed loop's users.
#[derive(Clone, Copy)]
pub(super) struct Users {
    pub(super) users: usize,
    pub(super) think: Duration,
    pub(super) ramp: Duration,
    pub(super) duration: Duration,
}

pub(super) async fn sequential(
    inner: Arc<Inner>,
    plan: Arc<Plan>,
    n: usize,
    at: Timing,
) -> Vec<RequestRecord> {
    let mut records = Vec::with_capacity(n);
    for index in 0..n {
        let intended = at.origin.elapsed();
        records.push(
            inner
                .send(&plan, index, at.origin, intended, at.deadline)
                .await,
        );
    }
    records
}

pub(super) async fn fan_out(
    inner: Arc<Inner>,
    plan: Arc<Plan>,
    n: usize,
    at: Timing,
) -> Vec<RequestRecord> {
    let mut tasks = tokio::task::JoinSet::new();
    for index in 0..n {
        let inner = Arc::clone(&inner);
        let plan = Arc::clone(&plan);
        tasks.spawn(async move {
            let intended = at.origin.elapsed();
            inner
                .send(&plan, index, at.origin, intended, at.deadline)
                .await
        });
    }
    join_all(tasks, Vec::with_capacity(n), n, at).await
}

/// Each user sends, waits for the response, thinks, and sends again; as in the model, a
/// user sends its next request only if that start lies within `duration`.
pub(super) async fn closed_loop(
    inner: Arc<Inner>,
    plan: Arc<Plan>,
    n: usize,
    users: Users,
    at: Timing,
) -> Vec<RequestRecord> {
    let next = Arc::new(AtomicUsize::new(0));
    let mut tasks = tokio::task::JoinSet::new();
    for user in 0..users.users {
        let (inner, plan, next) = (Arc::clone(&inner), Arc::clone(&plan), Arc::clone(&next));
        let first = users.ramp.mul_f64(user as f64 / users.users as f64);
        tasks.spawn(async move {
            tokio::time::sleep_until((at.origin + first).into()).await;
            let mut records = Vec::new();
            while at.origin.elapsed() <= users.duration && Instant::now() < at.deadline {
                let index = next.fetch_add(1, Ordering::Relaxed);
                if index >= n {
                    break;
                }
                let intended = at.origin.elapsed();
                records.push(
                    inner
                        .send(&plan, index, at.origin, intended, at.deadline)
                        .await,
                );
                if at.origin.elapsed() + users.think > users.duration {
                    break;
                }
                // No think time means no wait: a zero sleep still waits for the timer's
                // next tick (up to ~1 ms), which would cap a fast endpoint's throughput.
                if !users.think.is_zero() {
                    tokio::time::sleep(users.think).await;
                }
            }
            records
        });
    }
    gather(tasks).await
}

/// Every user's records, once all have ended.
pub(super) async fn gather(
    mut tasks: tokio::task::JoinSet<Vec<RequestRecord>>,
) -> Vec<RequestRecord> {
    let mut records = Vec::new();
    while let Some(joined) = tasks.join_next().await {
        // A user task that panicked loses its records: Run::new refuses the gap loudly.
        if let Ok(user_records) = joined {
            records.extend(user_records);
        }
    }
    records
}

/// Request i is intended at i / rate. It is sent then if fewer than `max_in_flight` are in
/// flight, and dropped (recorded as such) otherwise: the load never spawns without bound
/// and never waits for a slow server before offering the next request.
pub(super) async fn open_loop(
    inner: Arc<Inner>,
    plan: Arc<Plan>,
    n: usize,
    rate: f64,
    max_in_flight: usize,
    at: Timing,
) -> Vec<RequestRecord> {
    let slots = Arc::new(Semaphore::new(max_in_flight));
    let mut tasks = tokio::task::JoinSet::new();
    let mut records = Vec::with_capacity(n);
    for index in 0..n {
        let intended = Duration::from_secs_f64(index as f64 / rate);
        tokio::time::sleep_until((at.origin + intended).into()).await;
        if Instant::now() >= at.deadline {
            records.push(RequestRecord::failed_at(
                index,
                at.origin.elapsed(),
                FailureKind::Deadline,
            ));
            continue;
        }
        match Arc::clone(&slots).try_acquire_owned() {
            Err(_) => {
                let mut dropped =
                    RequestRecord::failed_at(index, at.origin.elapsed(), FailureKind::Dropped);
                dropped.intended_start = intended;
                records.push(dropped);
            }
            Ok(slot) => {
                let (inner, plan) = (Arc::clone(&inner), Arc::clone(&plan));
                tasks.spawn(async move {
                    let record = inner
                        .send(&plan, index, at.origin, intended, at.deadline)
                        .await;
                    drop(slot);
                    record
                });
            }
        }
    }
    join_all(tasks, records, n, at).await
}

/// Collects the tasks' records into `records`, adding a deadline record for any index of
/// `0..n` that is still missing (a task that panicked), so nothing is ever dropped.
pub(super) async fn join_all(
    mut tasks: tokio::task::JoinSet<RequestRecord>,
    mut records: Vec<RequestRecord>,
    n: usize,
    at: Timing,
) -> Vec<RequestRecord> {
    while let Some(joined) = tasks.join_next().await {
        if let Ok(record) = joined {
            records.push(record);
        }
    }
    let mut done = vec![false; n];
    for record in &records {
        done[record.index] = true;
    }
    let now = at.origin.elapsed();
    records.extend(
        (0..n)
            .filter(|&i| !done[i])
            .map(|i| RequestRecord::failed_at(i, now, FailureKind::Deadline)),
    );
    records
}

pub(super) async fn join_canary(
    canary: Option<tokio::task::JoinHandle<RequestRecord>>,
) -> Option<RequestRecord> {
    match canary {
        Some(handle) => handle.await.ok(),
        None => None,
    }
}

pub(super) fn task_failed(error: tokio::task::JoinError) -> Error {
    Error::io(
        "the load task ended abnormally",
        std::io::Error::other(error.to_string()),
    )
}

/// Waits until `at`, to within microseconds: tokio's timer fires on millisecond ticks, so a
/// canary meant for 0.5 ms into a load would leave at 1 or 2 ms — after a fast slow request
/// it was meant to overlap. The last millisecond is yielded away instead of slept.
pub(super) async fn send_at(at: Instant) {
    if let Some(early) = at.checked_sub(Duration::from_millis(1)) {
        tokio::time::sleep_until(early.into()).await;
    }
    while Instant::now() < at {
        tokio::task::yield_now().await;
    }
}
