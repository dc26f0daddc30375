//! A pool's worker threads, each with its time on a run queue published at every reading
//! of its clocks: what lets one worker's sleep on a lock another worker held be told as the
//! machine's.
//!
//! Two workers contend for locks a correct service never thinks of: the allocator's arena
//! (glibc's `malloc` frees a block under the lock of the arena that gave it, and a
//! connection's buffers move between workers), tokio's timer wheel, a std `RwLock` held for
//! microseconds. When the holder is preempted inside such a section, the waiter sleeps until
//! the holder gets a CPU back: on this project's 2-core machine, traced with `perf`
//! (`sched_switch` and `sched_wakeup`) over 15 claims of a key-value store's `POST`, the
//! eight longest sleeps of its two workers (0.5–1.8 ms) were each woken by the other
//! worker, which had spent 89–99 % of the sleep on a run queue. The waiter's clocks read
//! that as waiting, and a round with a few of them reads past the claim's allowance of
//! 0.05 ms a request (2.7 and 6.1 times it, in 2 of 282 rounds quiet). It is preemption,
//! one thread removed: the run-queue time the other workers were credited during the
//! sleep is counted as preempted, not waiting ([`PollTime`](super::PollTime)).
//!
//! A worker's run-queue time (`schedstat`'s second field) is credited when it gets a CPU
//! back, so the credit a peer received between a reading and the next is run-queue time
//! that ended in between: a holder preempted across the sleep was credited before it woke
//! the sleeper. A peer that is still waiting for a CPU, or that never ran in the stretch,
//! adds nothing. Each peer publishes its figure at every reading of its own clocks (two
//! atomic operations); a reading takes the sum of the others' published figures, and a
//! stretch that slept reads each peer's file afresh at its end — rare, and ≈1 µs a peer.
//! A sum published before the reading lags each peer's true figure by what it was credited
//! since its last reading: the count can only grow by that, never miss a holder's wait.
//!
//! A lock's holder need not be a worker: sqlx's SQLite driver answers on a channel whose
//! lock its own thread takes, and on a machine with both cores busy a worker slept 3.1 ms
//! on that lock in 2 of 2 requests while the driver's thread, holding it, waited for a CPU
//! (the worker's stack: `std::sync::Mutex::lock` under `flume::Shared::recv`). Those
//! threads publish nothing, so the sampler follows them instead ([`Peers::follow`]): the
//! first sample that catches a worker asleep on a lock marks every thread of the process
//! that is runnable then and is no worker (the sampler's own excepted), and each later
//! sample of the same sleep counts, for each marked thread still runnable whose CPU time
//! did not move since the last, the time between the two as that thread's wait for a CPU.
//! The sleep, at its end, counts the most one thread waited so as preemption
//! ([`Peer::others_since`]). The most, not the sum: one holder hands the lock over. Only
//! what the samples saw, not the kernel's run-queue figure: that is credited when a thread
//! gets a CPU back, for all of a wait that may have begun before the worker slept (a std
//! mutex's holder, preempted between handing the worker its signal and its own sleep,
//! was credited 10–16 ms across a 10 ms hold, and the twin held). A thread asleep — the
//! std-mutex twins' holder in its sleep — is not runnable, and a thread the handler waits
//! on while it computes (rayon awaited by blocking) keeps its computing as the worker's
//! wait.

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Tid;

/// The worker threads of one pool, and the sum of their published run-queue times.
#[derive(Debug, Default)]
pub(crate) struct Peers {
    members: Mutex<Vec<Arc<Peer>>>,
    /// The sum of every member's published figure, in nanoseconds (wrapping: members add
    /// the change of their own figure).
    published: AtomicU64,
}

/// One worker thread: its `schedstat` file (readable by the pool's other threads: the path
/// was resolved to this thread when it opened it) and its last published figure.
#[derive(Debug)]
pub(crate) struct Peer {
    file: Option<File>,
    published: AtomicU64,
    /// The thread's kernel id, where it is read: what the sampler marks it by.
    tid: Option<Tid>,
    /// The other threads' run-queue times when a sample caught this worker asleep on a
    /// lock ([`Peers::follow`]).
    mark: Mutex<Option<Mark>>,
}

/// The threads of the process a worker's sleep on a lock is followed by: those runnable
/// when a sample first caught the worker there, and what the samples since saw each wait
/// for a CPU.
#[derive(Debug)]
struct Mark {
    /// The sampler's number for the worker's stretch: one mark a stretch.
    stretch: u64,
    at: Instant,
    followed: Vec<Followed>,
}

/// One thread a mark follows: its CPU time and whether it was runnable at the last sample,
/// and the time the samples saw it wait for a CPU.
#[derive(Debug)]
struct Followed {
    tid: Tid,
    cpu: Duration,
    runnable: bool,
    read_at: Instant,
    waited: Duration,
}

impl Peers {
    /// Joins the calling thread to the pool, with its `schedstat` file and its figure now.
    pub(crate) fn join(
        self: &Arc<Self>,
        file: Option<File>,
        queued: Duration,
        tid: Option<Tid>,
    ) -> Arc<Peer> {
        let peer = Arc::new(Peer {
            file,
            published: AtomicU64::new(0),
            tid,
            mark: Mutex::new(None),
        });
        let mut members = self.lock();
        // A thread that ended dropped its own handle: its figure leaves the sum with it.
        members.retain(|m| {
            let alive = Arc::strong_count(m) > 1;
            if !alive {
                self.set(m, 0);
            }
            alive
        });
        members.push(Arc::clone(&peer));
        drop(members);
        self.publish(&peer, queued);
        peer
    }

    /// Publishes `peer`'s figure `queued` and returns the others' published sum.
    pub(crate) fn publish(&self, peer: &Peer, queued: Duration) -> Duration {
        let now = nanos(queued);
        let sum = self.set(peer, now);
        Duration::from_nanos(sum.wrapping_sub(now).min(i64::MAX as u64))
    }

    /// Sets `peer`'s published figure to `now` nanoseconds: the sum after the change.
    fn set(&self, peer: &Peer, now: u64) -> u64 {
        let change = now.wrapping_sub(peer.published.swap(now, Ordering::AcqRel));
        self.published
            .fetch_add(change, Ordering::AcqRel)
            .wrapping_add(change)
    }

    /// Every member's figure read afresh from its file (its published one where the file
    /// cannot be read), and published: a recording begins, and a member that took no
    /// reading since the last one must not count the run queue of the time between.
    pub(crate) fn refresh(&self) {
        for member in self.lock().iter() {
            if let Some(queued) = member.read() {
                self.set(member, nanos(queued));
            }
        }
    }

    /// The sum of every member's figure but `own`'s, read afresh from their files.
    pub(crate) fn others_now(&self, own: &Peer) -> Duration {
        self.lock()
            .iter()
            .filter(|m| !std::ptr::eq(Arc::as_ptr(m), own))
            .map(|m| {
                m.read()
                    .unwrap_or_else(|| Duration::from_nanos(m.published.load(Ordering::Acquire)))
            })
            .sum()
    }

    /// A sample caught the worker `worker` asleep on a lock in its stretch `stretch`. The
    /// first such sample of the stretch marks every thread of the process that is runnable
    /// now (on a CPU or waiting for one) and is no worker, nor in `except` (the sampling
    /// thread); each later one counts, for each marked thread runnable now and at the last
    /// sample whose CPU time has not moved between, the time between as its wait for a CPU.
    /// Called by the sampling thread. Cost, measured in the test build on this project's
    /// machine: 80–180 µs to mark 5–8 threads (a listing of `/proc/self/task` and each
    /// thread's `stat`), then two small reads a marked thread a sample — while a worker
    /// sleeps on a lock, and only then.
    pub(crate) fn follow(&self, worker: Tid, stretch: u64, except: &[Tid]) {
        let members = self.lock().clone();
        let Some(peer) = members.iter().find(|m| m.tid == Some(worker)) else {
            return;
        };
        let now = Instant::now();
        let mut mark = lock(&peer.mark);
        if let Some(mark) = mark.as_mut().filter(|m| m.stretch == stretch) {
            for thread in &mut mark.followed {
                let Some((cpu, runnable)) = super::cpu_of(thread.tid) else {
                    thread.runnable = false;
                    continue;
                };
                if runnable && thread.runnable && cpu == thread.cpu {
                    thread.waited += now.saturating_duration_since(thread.read_at);
                }
                (thread.cpu, thread.runnable, thread.read_at) = (cpu, runnable, now);
            }
            return;
        }
        let workers: Vec<Tid> = members.iter().filter_map(|m| m.tid).collect();
        let followed = super::process_threads()
            .into_iter()
            .filter(|tid| !workers.contains(tid) && !except.contains(tid))
            .filter_map(|tid| {
                let (cpu, runnable) = super::cpu_of(tid)?;
                runnable.then_some(Followed {
                    tid,
                    cpu,
                    runnable,
                    read_at: now,
                    waited: Duration::ZERO,
                })
            })
            .collect();
        *mark = Some(Mark {
            stretch,
            at: now,
            followed,
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Peer>>> {
        lock(&self.members)
    }
}

impl Peer {
    /// The member's run-queue time now, from its file.
    fn read(&self) -> Option<Duration> {
        super::read_queued(self.file.as_ref()?)
    }

    /// The most time one thread a mark followed for this worker ([`Peers::follow`]) was
    /// seen waiting for a CPU, where the mark was made at `since` or later (in the stretch
    /// that began then); the mark is used up. `None` where there is none.
    pub(crate) fn others_since(&self, since: Instant) -> Option<Duration> {
        let mark = lock(&self.mark).take()?;
        (mark.at >= since).then(|| {
            mark.followed
                .iter()
                .map(|thread| thread.waited)
                .max()
                .unwrap_or_default()
        })
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Each member's published figure, summed without the reader's own; a member that
    /// ended leaves the sum.
    #[test]
    fn the_others_sum_leaves_out_the_reader_and_the_ended() {
        let peers = Arc::new(Peers::default());
        let a = peers.join(None, us(100), None);
        let b = peers.join(None, us(40), None);
        assert_eq!(peers.publish(&a, us(150)), us(40));
        assert_eq!(peers.publish(&b, us(90)), us(150));
        let c = peers.join(None, us(5), None);
        assert_eq!(peers.publish(&a, us(150)), us(95));
        drop(b);
        let _d = peers.join(None, us(1), None);
        assert_eq!(peers.publish(&a, us(150)), us(6));
        // Without files, a fresh read is the published figure.
        assert_eq!(peers.others_now(&a), us(6));
        assert_eq!(peers.others_now(&c), us(151));
    }

    /// A mark follows the runnable threads of the process that are no worker, and counts the
    /// time the samples saw one wait for a CPU: two threads pinned to one CPU, spinning 30 ms
    /// together, take turns on it, and the one that is no worker is seen waiting between
    /// samples 0.5 ms apart. A worker's thread, the caller's and a thread asleep at the mark
    /// are left out; one mark a stretch; a mark made before the stretch asked about is none.
    #[cfg(linux_reads)]
    #[test]
    fn a_mark_counts_what_the_samples_saw_a_runnable_thread_wait_for_a_cpu() {
        let Some(own) = super::super::current_tid() else {
            return;
        };
        let peers = Arc::new(Peers::default());
        let (tid_tx, tid_rx) = std::sync::mpsc::channel();
        // The spinners end after the credit is read (a thread that ended has no file to
        // read); the sleeper sleeps until then.
        let done = Arc::new(std::sync::Barrier::new(4));
        let spinners: Vec<_> = (0..2)
            .map(|_| {
                let (tid_tx, done) = (tid_tx.clone(), Arc::clone(&done));
                std::thread::spawn(move || {
                    // SAFETY: a zeroed cpu_set_t is an empty set; CPU 0 is added to it and the
                    // calling thread (pid 0) confined to it.
                    unsafe {
                        let mut set: libc::cpu_set_t = std::mem::zeroed();
                        libc::CPU_SET(0, &mut set);
                        libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set);
                    }
                    tid_tx.send(super::super::current_tid()).unwrap();
                    let began = Instant::now();
                    while began.elapsed() < Duration::from_millis(30) {
                        std::hint::spin_loop();
                    }
                    done.wait();
                })
            })
            .collect();
        let (asleep_tx, asleep_rx) = std::sync::mpsc::channel();
        let sleeper = {
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                asleep_tx.send(super::super::current_tid()).unwrap();
                done.wait();
            })
        };
        let worker_tid = tid_rx.recv().unwrap().unwrap();
        let other = tid_rx.recv().unwrap().unwrap();
        let asleep = asleep_rx.recv().unwrap().unwrap();
        // One spinner is a worker here: its run queue is the workers' sum's, not a mark's.
        let worker = peers.join(None, us(0), Some(worker_tid));
        let stretch_began = Instant::now();
        std::thread::sleep(Duration::from_millis(1));
        peers.follow(worker_tid, 7, &[own]);
        let (marked_at, marked) = {
            let mark = lock(&worker.mark);
            let mark = mark.as_ref().expect("a mark");
            let tids: Vec<Tid> = mark.followed.iter().map(|t| t.tid).collect();
            (mark.at, tids)
        };
        assert!(marked.contains(&other), "the other spinner: {marked:?}");
        for left_out in [worker_tid, own, asleep] {
            assert!(!marked.contains(&left_out), "{left_out}: {marked:?}");
        }
        // Sampled as the sampler does, until the spinners are done (they wait here with the
        // sleeper); the stretch keeps its first mark.
        while let Some((_, true)) = super::super::cpu_of(other) {
            std::thread::sleep(Duration::from_micros(500));
            peers.follow(worker_tid, 7, &[own]);
        }
        assert_eq!(lock(&worker.mark).as_ref().unwrap().at, marked_at);
        let credited = worker.others_since(stretch_began).expect("the mark");
        done.wait();
        for spinner in spinners {
            spinner.join().unwrap();
        }
        sleeper.join().unwrap();
        assert!(credited > Duration::ZERO, "{credited:?}");
        assert!(credited <= stretch_began.elapsed(), "{credited:?}");
        // Used up; and a mark older than the stretch asked about is none.
        assert_eq!(worker.others_since(stretch_began), None);
        peers.follow(worker_tid, 8, &[own]);
        assert_eq!(worker.others_since(Instant::now()), None);
    }
}
