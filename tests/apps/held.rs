//! One route for each kind of call that holds a worker, as a team's code makes it — for
//! the reports that name where in the code: a synced file write, a synchronous socket read
//! through a [`Downstream`](perfshape::Downstream), a std mutex another thread holds, rayon
//! awaited by blocking, a spawned task that sleeps — and a long stretch of computing.
//!
//! Each blocking call sits on a line of its own marked `// held: <route>`, so that a test
//! finds the line a report must name ([`line_of`]) however this file is edited.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;

/// What a blocking call waits for: long enough that the sampler (every 0.5 ms) meets the
/// worker asleep in it many times, short enough for a functional test.
const HELD: Duration = Duration::from_millis(4);

/// How long `/mutex`'s other thread keeps the lock: long enough that the worker, woken once
/// that thread has it and kept from its CPU by a busy machine, still finds it taken (a
/// 4 ms hold was outwaited in 3 of 150 runs with a core or both busy).
const MUTEX_HELD: Duration = Duration::from_millis(10);

/// The file this app's source is in, as the reports name it (relative to the crate).
pub const FILE: &str = "tests/apps/held.rs";

#[derive(Clone)]
struct Shared {
    journal: PathBuf,
    /// The audit trail `/line` appends to, opened once as the app is built: the route's
    /// one call that waits for the disk is its sync (an `openat` in each request slept
    /// 0.84 ms once, on a machine busy with the suite's other writes, longer than the sync).
    audit: Arc<std::fs::File>,
    upstream: SocketAddr,
    ledger: Arc<Mutex<u64>>,
    pool: Arc<rayon::ThreadPool>,
}

/// The app: `/fsync`, `/socket`, `/mutex`, `/rayon` and `/spawned`, each holding its
/// worker in one kind of call, `/line`, `/nap` and `/brief-lock` in one shorter than the
/// sampler's tick (a line synced, a 300 µs sleep, a 1 ms lock), `/sort`, which computes a long stretch in one poll,
/// `/stretch`, which computes 10 ms of CPU in one poll in any build, and
/// `/interruptible`, which makes the calls a signal would cut short and counts those that
/// were; `journal` is the file `/fsync` appends to (`/line` appends to one beside it),
/// `upstream` a server `/socket` asks (through a `Downstream`, for instance).
pub fn app(journal: PathBuf, upstream: SocketAddr) -> Router {
    let audit = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(journal.with_extension("audit"))
        .expect("the audit trail opens");
    let shared = Shared {
        journal,
        audit: Arc::new(audit),
        upstream,
        ledger: Arc::new(Mutex::new(0)),
        pool: Arc::new(
            rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .expect("a rayon pool"),
        ),
    };
    Router::new()
        .route("/fsync", get(fsync))
        .route("/socket", get(socket))
        .route("/mutex", get(mutex))
        .route("/rayon", get(parallel))
        .route("/spawned", get(spawned))
        .route("/sort", get(sort))
        .route("/stretch", get(stretch))
        .route("/interruptible", get(interruptible))
        .route("/line", get(line))
        .route("/nap", get(nap))
        .route("/brief-lock", get(brief_lock))
        .with_state(shared)
}

async fn fsync(State(shared): State<Shared>) -> &'static str {
    append(&shared.journal);
    "synced"
}

/// Appends notes to the journal, waiting for the disk after each.
fn append(journal: &PathBuf) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(journal)
        .expect("the journal opens");
    // Megabytes of notes, each synced before the next, as a journal that must not lose one
    // does: milliseconds a request on the worker, asleep while the disk takes them (a sync
    // of a page took ≈0.1 ms here, too short for the sampler to meet when alone, and one of
    // a quarter megabyte too short for its stack to be read while it slept). The notes are
    // made once: made in each request, unoptimised, with both cores busy, one poll computed
    // 27 ms in `vec!` and was named for that.
    static NOTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let page = NOTES.get_or_init(|| vec![b'n'; 1 << 20]);
    for _ in 0..4 {
        file.write_all(page).expect("the notes are written");
        file.sync_data().expect("the note is synced"); // held: /fsync
    }
}

/// One line appended and synced, as an audit trail does: a few tenths of a millisecond
/// asleep while the disk takes it — shorter than the sampler's tick.
async fn line(State(shared): State<Shared>) -> &'static str {
    let mut file = &*shared.audit;
    file.write_all(b"audited\n").expect("the line is written");
    file.sync_all().expect("the line is synced"); // held: /line
    "audited"
}

/// A 300 µs sleep on the worker: shorter than the sampler's tick.
async fn nap() -> &'static str {
    std::thread::sleep(Duration::from_micros(300)); // held: /nap
    "rested"
}

/// A std mutex another thread holds for 1 ms from the moment the worker comes for it, taken
/// on the worker: the holder waits for the worker to arrive, so that a busy machine that
/// wakes the worker late still finds the lock taken (a holder that slept 1 ms from taking
/// it was outwaited once in 20 runs with a core busy, and the route rightly held). Each
/// request's lock is its own: a lock shared by concurrent requests would let one request's
/// holder wait for a worker blocked on another's.
async fn brief_lock() -> String {
    let (locked, has_it) = tokio::sync::oneshot::channel();
    let shared = Arc::new(Mutex::new(0u64));
    let ledger = Arc::clone(&shared);
    let arriving = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let comes = Arc::clone(&arriving);
    std::thread::spawn(move || {
        let mut held = ledger.lock().unwrap_or_else(|p| p.into_inner());
        let _ = locked.send(());
        let began = std::time::Instant::now();
        while !comes.load(std::sync::atomic::Ordering::Acquire)
            && began.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_micros(20));
        }
        std::thread::sleep(Duration::from_millis(1));
        *held += 1;
    });
    let _ = has_it.await;
    arriving.store(true, std::sync::atomic::Ordering::Release);
    let total = *shared.lock().unwrap_or_else(|p| p.into_inner()); // held: /brief-lock
    total.to_string()
}

async fn socket(State(shared): State<Shared>) -> String {
    let mut stream = TcpStream::connect(shared.upstream).expect("the upstream answers");
    stream.write_all(b"ping").expect("sent");
    let mut answer = [0u8; 4];
    stream.read_exact(&mut answer).expect("an answer"); // held: /socket
    String::from_utf8_lossy(&answer).into_owned()
}

async fn mutex(State(shared): State<Shared>) -> String {
    let (locked, has_it) = tokio::sync::oneshot::channel();
    let ledger = Arc::clone(&shared.ledger);
    // Another thread takes the ledger's lock and keeps it a while.
    std::thread::spawn(move || {
        let mut held = ledger.lock().unwrap_or_else(|p| p.into_inner());
        let _ = locked.send(());
        std::thread::sleep(MUTEX_HELD);
        *held += 1;
    });
    let _ = has_it.await;
    let total = *shared.ledger.lock().unwrap_or_else(|p| p.into_inner()); // held: /mutex
    total.to_string()
}

async fn parallel(State(shared): State<Shared>) -> String {
    let sum = shared.pool.install(|| checksum(HELD)); // held: /rayon
    sum.to_string()
}

/// A checksum computed for `cpu` of wall time on a rayon thread.
fn checksum(cpu: Duration) -> u64 {
    let began = std::time::Instant::now();
    let mut sum: u64 = 0;
    while began.elapsed() < cpu {
        sum = sum.wrapping_mul(31).wrapping_add(std::hint::black_box(7));
    }
    sum
}

async fn spawned() -> &'static str {
    tokio::spawn(async {
        std::thread::sleep(HELD); // held: /spawned
    });
    "accepted"
}

async fn sort() -> String {
    let mut values: Vec<u64> = (0..200_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .collect();
    values.sort_unstable(); // held: /sort
    values[values.len() / 2].to_string()
}

/// 10 ms of the worker's CPU in one poll, however fast the build: between the optimised
/// poll budget (4 ms) and the unoptimised one (24 ms).
async fn stretch() -> String {
    let cpu = super::handlers::thread_cpu;
    let start = cpu();
    let mut x = 0u64;
    while cpu().saturating_sub(start) < Duration::from_millis(10) {
        // In batches, so that nearly every sample of the stretch is on the marked line.
        let mut n = 0;
        while n < 10_000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1)); // held: /stretch
            n += 1;
        }
    }
    x.to_string()
}

/// The calls a signal cuts short (EINTR) whatever the handler asked: a sleep, a `poll`, an
/// `epoll_wait` and a futex wait with timeouts, and a read on a socket with a receive
/// timeout — each 2 ms on the worker. Answers how many returned EINTR.
async fn interruptible() -> String {
    let mut cut_short = 0;
    let mut count = |returned: libc::c_long| {
        if returned == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            cut_short += 1;
        }
    };
    let two_ms = libc::timespec {
        tv_sec: 0,
        tv_nsec: 2_000_000,
    };
    // SAFETY: each call gets valid arguments of its own, on this thread's stack.
    unsafe {
        count(libc::nanosleep(&two_ms, std::ptr::null_mut()) as libc::c_long);
        count(libc::poll(std::ptr::null_mut(), 0, 2) as libc::c_long);
        let epoll = libc::epoll_create1(libc::EPOLL_CLOEXEC);
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 1];
        count(libc::epoll_wait(epoll, events.as_mut_ptr(), 1, 2) as libc::c_long);
        libc::close(epoll);
        let word: u32 = 0;
        count(libc::syscall(
            libc::SYS_futex,
            &word as *const u32,
            libc::FUTEX_WAIT,
            0u32,
            &two_ms as *const libc::timespec,
        ));
    }
    let (quiet, _other_end) = std::os::unix::net::UnixStream::pair().expect("a socket pair");
    quiet
        .set_read_timeout(Some(Duration::from_millis(2)))
        .expect("a receive timeout");
    let mut byte = [0u8; 1];
    if let Err(error) = (&quiet).read(&mut byte)
        && error.kind() == std::io::ErrorKind::Interrupted
    {
        cut_short += 1;
    }
    cut_short.to_string()
}

/// A server that answers each connection's four bytes with `pong`, `HELD` later, for as
/// long as the test runs.
pub fn upstream() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a local port");
    let addr = listener.local_addr().expect("its address");
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut asked = [0u8; 4];
                if stream.read_exact(&mut asked).is_ok() {
                    std::thread::sleep(HELD);
                    let _ = stream.write_all(b"pong");
                }
            });
        }
    });
    addr
}

/// The line of this file marked `// held: {route}`: where the report on `route` must say
/// the call was made.
pub fn line_of(route: &str) -> usize {
    let marker = format!("// held: {route}");
    include_str!("held.rs")
        .lines()
        .position(|line| line.trim_end().ends_with(&marker))
        .map(|at| at + 1)
        .unwrap_or_else(|| panic!("no line marked `{marker}` in {FILE}"))
}
