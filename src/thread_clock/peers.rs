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

use std::fs::File;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
}

impl Peers {
    /// Joins the calling thread to the pool, with its `schedstat` file and its figure now.
    pub(crate) fn join(self: &Arc<Self>, file: Option<File>, queued: Duration) -> Arc<Peer> {
        let peer = Arc::new(Peer {
            file,
            published: AtomicU64::new(0),
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

    /// The sum of every member's figure, read afresh from their files: the pool's workers'
    /// time on a run queue so far. `None` where no worker has joined, or none's file reads.
    pub(crate) fn all_now(&self) -> Option<Duration> {
        let read: Vec<Duration> = self.lock().iter().filter_map(|m| m.read()).collect();
        (!read.is_empty()).then(|| read.into_iter().sum())
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

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Peer>>> {
        self.members.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Peer {
    /// The member's run-queue time now, from its file.
    fn read(&self) -> Option<Duration> {
        super::read_queued(self.file.as_ref()?)
    }
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
        let a = peers.join(None, us(100));
        let b = peers.join(None, us(40));
        assert_eq!(peers.publish(&a, us(150)), us(40));
        assert_eq!(peers.publish(&b, us(90)), us(150));
        let c = peers.join(None, us(5));
        assert_eq!(peers.publish(&a, us(150)), us(95));
        drop(b);
        let _d = peers.join(None, us(1));
        assert_eq!(peers.publish(&a, us(150)), us(6));
        // Without files, a fresh read is the published figure.
        assert_eq!(peers.others_now(&a), us(6));
        assert_eq!(peers.others_now(&c), us(151));
    }
}
