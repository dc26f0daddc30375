//! The thread that woke a task, and its run-queue time since: what lets a worker's sleep on
//! a lock that thread still held be told as the machine's.
//!
//! A library can wake a task while it holds the lock the task takes next: flume (sqlx's
//! SQLite driver's channel) calls the receiver's waker inside `Shared::send`, under the
//! channel's lock. On a busy machine the kernel can preempt the waking thread right there —
//! often for the very worker it woke — and the worker's next poll sleeps on the lock until
//! that thread gets a CPU back, in every request of a route now and then: the watched
//! inventory's sqlx build, 0.45–1.8 ms in one poll, with three spin loops beside it.
//!
//! So while a watch records, each timed poll hands its future a waker that notes, when a
//! thread other than a pool's worker (whose waits [`peers`](super::peers) counts) wakes the
//! task, which thread it was, when, and its clocks then. Where the poll that follows slept,
//! that thread's time on a run queue since (`schedstat`'s second field, credited when it
//! got a CPU back, so a holder preempted across the sleep was credited before it let the
//! sleeper go) — less the time between the waking and the poll, and at most the poll's
//! time that thread did not run — is the part of the sleep it explains
//! ([`Split::held_up`](crate::vocab::wire::Split)). A holder that slept or computed under
//! the lock explains none of that: the twins' 10 ms hold stays a wait. Whether the sleep
//! was on a lock at all is the sampler's to say (`watch::seen`): a call seen counts whole.
//!
//! Which thread holds the lock is not read; the waker is taken for it. A thread that never
//! wakes the task — a pool spinning in `sched_yield` for work, a timer thread — is never
//! credited, however long it waits for a CPU: on a busy machine some thread always does.
//!
//! Cost, only while a watch records, measured on this project's machine (release build,
//! `waking_cost`): 0.03 µs a poll for its waker (one allocation) and the last waking, outside
//! the poll's clocks; 1.0 µs a waking by a thread that is not a worker (a read of its own
//! `schedstat`); 5.1 µs at the end of a poll that slept after such a waking (an open and a
//! read of that thread's file). Off Linux nothing is wrapped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Wake, Waker};
use std::time::{Duration, Instant};

/// How long a waker that runs may keep the lock it woke the task under: its wake — the
/// runtime's unpark, this module's note — inside flume's `Shared::send` while the woken
/// worker, on the other core, polls and sleeps on that lock. The watched inventory's sqlx
/// build slept so 0.06–0.13 ms in two of a route's three requests, in 3 of 160 quiet runs
/// (docs/watch-thresholds.md); a holder that computes or sleeps under the lock for longer
/// stays a wait past this.
const BRIEF_HOLD: Duration = Duration::from_micros(150);

/// Whether a watch began in this process: only then are wakers wrapped.
static WATCHING: AtomicBool = AtomicBool::new(false);

/// A watch began: the wakers of timed polls note who wakes them from now on.
pub(crate) fn watch() {
    WATCHING.store(true, Ordering::Release);
}

/// The last waking of one timed future by a thread that is not a pool's worker.
#[derive(Debug, Default)]
pub(crate) struct Wakings {
    last: Mutex<Option<Woke>>,
}

/// One waking: the thread, when, and its clocks then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Woke {
    tid: i32,
    at: Instant,
    cpu: Duration,
    queued: Duration,
}

/// A task's waker that notes who wakes it before it wakes it.
struct Recorder {
    inner: Waker,
    wakings: Arc<Wakings>,
}

impl Wake for Recorder {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakings.record();
        self.inner.wake_by_ref();
    }
}

impl Wakings {
    /// `waker`, wrapped to note who wakes it, while a watch records where the run queue is
    /// read (Linux); `None` otherwise.
    pub(crate) fn waker(self: &Arc<Self>, waker: &Waker) -> Option<Waker> {
        if !WATCHING.load(Ordering::Acquire) || !cfg!(linux_reads) {
            return None;
        }
        Some(Waker::from(Arc::new(Recorder {
            inner: waker.clone(),
            wakings: Arc::clone(self),
        })))
    }

    /// The last waking since the last call by a thread other than the caller.
    pub(crate) fn take(&self) -> Option<Woke> {
        let woke = self.lock().take()?;
        (Some(woke.tid) != crate::blocked_call::current()).then_some(woke)
    }

    /// The calling thread wakes the task: noted, unless it is a pool's worker.
    fn record(&self) {
        if super::is_pool_worker() {
            return;
        }
        let Some(tid) = crate::blocked_call::current() else {
            return;
        };
        let Some((cpu, queued)) = super::own_figures() else {
            return;
        };
        *self.lock() = Some(Woke {
            tid,
            at: Instant::now(),
            cpu,
            queued,
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Woke>> {
        self.last.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Woke {
    /// Of `waiting`, inside a poll that began at `began` and took `wall`, the part the
    /// waking thread's run-queue time since explains.
    pub(crate) fn held_up(&self, began: Instant, wall: Duration, waiting: Duration) -> Duration {
        super::figures_of(self.tid).map_or(Duration::ZERO, |(cpu, queued)| {
            self.explains(cpu, queued, began.saturating_duration_since(self.at), wall)
                .min(waiting)
        })
    }

    /// The run-queue time from the waking to the thread's `cpu` and `queued` times, less `before` (the time
    /// from the waking to the poll, which may have been spent so), and at most the poll's
    /// `wall` time the thread did not run; and, where the poll began within [`BRIEF_HOLD`]
    /// of the waking, what is left of it: the waker's own wake under its lock, running.
    fn explains(
        &self,
        cpu: Duration,
        queued: Duration,
        before: Duration,
        wall: Duration,
    ) -> Duration {
        let queued = queued.saturating_sub(self.queued).saturating_sub(before);
        let ran = cpu.saturating_sub(self.cpu);
        queued.min(wall.saturating_sub(ran)) + BRIEF_HOLD.saturating_sub(before)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    fn woke(cpu: u64, queued: u64) -> Woke {
        Woke {
            tid: 1,
            at: Instant::now(),
            cpu: us(cpu),
            queued: us(queued),
        }
    }

    /// A holder preempted from its waking until it let the worker go explains the sleep;
    /// one that slept or computed under the lock does not, but for a brief hold's length
    /// after its waking; the time before the poll is not the poll's.
    #[test]
    fn a_waker_preempted_explains_a_sleep_and_one_that_slept_does_not() {
        // Woken, preempted for 1.9 ms, 0.1 ms of it before the poll: 1.8 ms explained, and
        // the 0.05 ms left of a brief hold.
        assert_eq!(
            woke(500, 1_000).explains(us(508), us(2_900), us(100), us(1_850)),
            us(1_850)
        );
        // Preempted 0.3 ms, asleep 10 ms holding the lock, preempted 0.4 ms: 0.68 ms, and
        // 0.13 ms of a brief hold — the 10 ms asleep stays a wait.
        assert_eq!(
            woke(500, 1_000).explains(us(510), us(1_700), us(20), us(10_800)),
            us(810)
        );
        // Computing 4 ms of a 6 ms poll: at most the 2 ms it did not run, and a brief hold.
        assert_eq!(
            woke(500, 1_000).explains(us(4_500), us(9_000), us(0), us(6_000)),
            us(2_150)
        );
        // Running, woken just before the poll: a brief hold, no more.
        assert_eq!(
            woke(500, 1_000).explains(us(600), us(1_000), us(10), us(130)),
            us(140)
        );
    }

    /// What the noting costs, measured, not asserted (a time is no test's verdict):
    /// `cargo test --lib -p perfshape waking_cost -- --ignored --nocapture` prints a poll's
    /// wrapping of its waker and taking of the last waking, a waking by a thread that is no
    /// worker, and the read of the waking thread's figures after a poll that slept.
    #[cfg(linux_reads)]
    #[test]
    #[ignore = "a measurement: run it by name"]
    fn waking_cost() {
        const N: u32 = 200_000;
        watch();
        let wakings = Arc::new(Wakings::default());
        let per = |began: Instant| began.elapsed().as_secs_f64() * 1e6 / f64::from(N);
        let began = Instant::now();
        for _ in 0..N {
            std::hint::black_box(wakings.take());
            std::hint::black_box(wakings.waker(Waker::noop()));
        }
        let poll = per(began);
        let waker = wakings.waker(Waker::noop()).unwrap();
        let began = Instant::now();
        for _ in 0..N {
            waker.wake_by_ref();
        }
        let waking = per(began);
        let woke = wakings.lock().unwrap();
        let began = Instant::now();
        for _ in 0..N / 10 {
            std::hint::black_box(woke.held_up(Instant::now(), us(100), us(100)));
        }
        let read = per(began) * 10.0;
        println!(
            "a poll's waker and last waking: {poll:.2} µs; a waking noted: {waking:.2} µs; the waking thread read after a poll that slept: {read:.2} µs"
        );
    }

    /// While a watch records, a thread that wakes the task is noted; the poll's own thread
    /// is not taken for one.
    #[cfg(linux_reads)]
    #[test]
    fn a_waking_thread_is_noted() {
        watch();
        let wakings = Arc::new(Wakings::default());
        let waker = wakings
            .waker(Waker::noop())
            .expect("wrapped while watching");
        waker.wake_by_ref();
        assert_eq!(wakings.take(), None, "the poll's own thread");
        let other = waker.clone();
        std::thread::spawn(move || other.wake()).join().unwrap();
        let woke = wakings.take().expect("another thread's waking");
        assert_ne!(Some(woke.tid), crate::blocked_call::current());
        assert_eq!(wakings.take(), None, "taken once");
    }
}
