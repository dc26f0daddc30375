//! One handler for each way a request can use its worker, for the blocking claims' power
//! table (`docs/blocking-power.md`) and the suite's cases: computing in short polls or in
//! one long one, waiting on the worker (a sleep, a sync write, a std mutex held by an
//! offloaded job), each offloaded or made async, and offloaded work that queues behind one
//! shared resource.
//!
//! Every route takes `?offload=1` to move its blocking part to `spawn_blocking` (or, for
//! waits, to `tokio::time::sleep`): the same work, done right.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use serde::Deserialize;

/// `?us=…&ms=…&kib=…&chunk_us=…&offload=0|1`, each route reading what it needs.
#[derive(Debug, Default, Deserialize)]
pub struct Params {
    /// Microseconds (of CPU, or of a wait).
    pub us: Option<u64>,
    /// Milliseconds (a request's whole time, or a wait).
    pub ms: Option<u64>,
    /// KiB to hash.
    pub kib: Option<u64>,
    /// The longest stretch of CPU between yields, in microseconds.
    pub chunk_us: Option<u64>,
    /// 1: the blocking part offloaded (or awaited), the fix.
    pub offload: Option<u8>,
}

impl Params {
    fn offloaded(&self) -> bool {
        self.offload == Some(1)
    }
}

/// What the handlers share: the lock an offloaded writer holds, and the one connection
/// offloaded queries queue for.
#[derive(Clone, Default)]
struct Shared {
    ledger: Arc<Mutex<u64>>,
    connection: Arc<Mutex<u64>>,
}

/// The routes:
/// - `/cpu?us=N&chunk_us=C` — N µs of CPU in stretches of at most C µs, yielding between;
/// - `/hash?kib=N` — an FNV-1a hash of N KiB in one poll (`offload=1`: on the blocking pool);
/// - `/wait?us=B&ms=T` — a request of T ms whose first B µs block the worker
///   (`std::thread::sleep`; `offload=1`: awaited) and the rest is awaited;
/// - `/write?ms=N` — 60 µs of work and an N ms synchronous write on the worker (`offload=1`:
///   the write on the blocking pool);
/// - `/locked?ms=N` — hands a write to an offloaded job that holds the ledger's std mutex
///   for N ms, then reads the ledger on the worker: the worker waits on the mutex until the
///   write lets go (`offload=1`: the read offloaded too);
/// - `/queued?ms=N` — an offloaded query of N ms on the one shared connection: the
///   requests queue behind it, not behind the worker.
pub fn app() -> Router {
    Router::new()
        .route("/cpu", get(cpu))
        .route("/hash", get(hash))
        .route("/wait", get(wait))
        .route("/write", get(write))
        .route("/locked", get(locked))
        .route("/queued", get(queued))
        .with_state(Shared::default())
}

/// Spins until the calling thread has used `cpu` of CPU time (not wall time: a busy machine
/// that preempts the thread does not shorten the work).
pub fn compute(cpu: Duration) {
    let start = thread_cpu();
    let mut x = 0u64;
    while thread_cpu().saturating_sub(start) < cpu {
        for _ in 0..64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

/// The calling thread's CPU time.
pub fn thread_cpu() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid, writable timespec and a clock id the platform defines.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// FNV-1a over `kib` KiB of bytes: a fixed amount of work, as a checksum or a hash of a
/// payload is (it takes longer in a build without optimisations, as real work does).
pub fn fnv(kib: u64) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for i in 0..kib * 1024 {
        hash ^= std::hint::black_box(i as u8) as u64;
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

async fn cpu(Query(p): Query<Params>) -> String {
    let total = Duration::from_micros(p.us.unwrap_or(50));
    let chunk = Duration::from_micros(p.chunk_us.unwrap_or(50));
    let mut left = total;
    while !left.is_zero() {
        let now = left.min(chunk);
        compute(now);
        left -= now;
        if !left.is_zero() {
            tokio::task::yield_now().await;
        }
    }
    format!("computed {total:?}")
}

async fn hash(Query(p): Query<Params>) -> String {
    let kib = p.kib.unwrap_or(1024);
    let hash = if p.offloaded() {
        tokio::task::spawn_blocking(move || fnv(kib))
            .await
            .unwrap_or(0)
    } else {
        fnv(kib)
    };
    format!("{hash:x}")
}

async fn wait(Query(p): Query<Params>) -> &'static str {
    let block = Duration::from_micros(p.us.unwrap_or(2000));
    let total = Duration::from_millis(p.ms.unwrap_or(20));
    if p.offloaded() {
        tokio::time::sleep(block).await;
    } else {
        std::thread::sleep(block);
    }
    tokio::time::sleep(total.saturating_sub(block)).await;
    "waited"
}

async fn write(Query(p): Query<Params>) -> &'static str {
    let write = Duration::from_millis(p.ms.unwrap_or(2));
    compute(Duration::from_micros(60));
    if p.offloaded() {
        let _ = tokio::task::spawn_blocking(move || std::thread::sleep(write)).await;
    } else {
        // The shape of a sync driver's write: the worker sleeps until the disk answers.
        std::thread::sleep(write);
    }
    "written"
}

async fn locked(State(shared): State<Shared>, Query(p): Query<Params>) -> String {
    let hold = Duration::from_millis(p.ms.unwrap_or(2));
    let ledger = Arc::clone(&shared.ledger);
    let (locked, has_it) = tokio::sync::oneshot::channel();
    // The write, offloaded as it should be (awaited until it has the mutex: the worker is
    // free meanwhile) — holding the mutex for the whole write.
    drop(tokio::task::spawn_blocking(move || {
        let mut entry = ledger.lock().unwrap_or_else(|e| e.into_inner());
        let _ = locked.send(());
        std::thread::sleep(hold);
        *entry += 1;
    }));
    let _ = has_it.await;
    let read = if p.offloaded() {
        let ledger = Arc::clone(&shared.ledger);
        tokio::task::spawn_blocking(move || *ledger.lock().unwrap_or_else(|e| e.into_inner()))
            .await
            .unwrap_or(0)
    } else {
        // The bug: the same std mutex taken on the worker, which sleeps until the
        // offloaded write lets go of it.
        *shared.ledger.lock().unwrap_or_else(|e| e.into_inner())
    };
    format!("{read}")
}

async fn queued(State(shared): State<Shared>, Query(p): Query<Params>) -> String {
    let query = Duration::from_millis(p.ms.unwrap_or(20));
    let connection = Arc::clone(&shared.connection);
    let rows = tokio::task::spawn_blocking(move || {
        // One connection, behind a mutex: each query waits for the one before it — on a
        // thread of the blocking pool, not on the worker.
        let mut rows = connection.lock().unwrap_or_else(|e| e.into_inner());
        std::thread::sleep(query);
        *rows += 1;
        *rows
    })
    .await
    .unwrap_or(0);
    format!("{rows}")
}
