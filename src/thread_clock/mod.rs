//! The calling thread's own clocks, read around each poll of a served response: how much of
//! the poll the thread spent computing, asleep in the kernel (waiting), or runnable but
//! waiting for a CPU (preempted) — waiting = wall − CPU (`CLOCK_THREAD_CPUTIME_ID`) − run
//! queue (`/proc/thread-self/schedstat`), so a busy machine's preemption never reads as the
//! handler waiting. Beside the split, whether the thread slept in the kernel at all
//! ([`PollTime::slept`]: its voluntary switches) — the mechanism of a sync call, whatever
//! its distance. A poll that slept on a lock another worker held while preempted is
//! preemption too ([`peers`]); one that slept on a lock the thread that woke it held is
//! told by the watch ([`woken`]). Off Linux the run queue is not read and
//! [`splits_off_cpu`] is false: a claim that would break on time off the CPU says it cannot
//! tell. Why each read, what hypervisor steal does to the difference, and what a poll's
//! reading costs: docs/thread-clock.md.

mod peers;
pub(crate) mod woken;

use std::cell::RefCell;
use std::fs::File;
use std::sync::Arc;
use std::time::{Duration, Instant};

use peers::Peer;
pub(crate) use peers::Peers;

/// Time off the CPU inside one poll below which it is not split: counted as preempted, not
/// waiting. A sleep this short cannot hold a worker long enough to matter (tokio's own
/// guidance is tens to a hundred microseconds between awaits), and not reading `schedstat`
/// a second time saves a third of the cost of every poll that kept its CPU.
pub(crate) const UNSPLIT: Duration = Duration::from_micros(20);

/// The calling thread's clocks at one instant.
///
/// The wall clock is read on both sides of the run queue's figure: a run that ends at this
/// reading ends before it (`ends_at`), one that begins here begins after it (`at`). Were it
/// read once, the thread preempted between the two reads would have that wait counted in
/// one run's wall time and in no run's run-queue time — read as waiting.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadReading {
    at: Instant,
    ends_at: Instant,
    cpu: Duration,
    /// Time spent runnable on a run queue so far; `None` where the kernel does not say.
    queued: Option<Duration>,
    /// Voluntary context switches so far; `None` where the kernel does not say.
    switches: Option<u64>,
    /// The run-queue time the pool's other workers had published so far ([`peers`]);
    /// `None` where the thread is no pool's worker or the run queue is not read.
    peers: Option<Duration>,
}

/// What one poll's wall time was made of.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct PollTime {
    /// All of it: time the worker could run nothing else.
    pub(crate) wall: Duration,
    /// CPU time the thread used.
    pub(crate) computing: Duration,
    /// Asleep in the kernel while holding the worker.
    pub(crate) waiting: Duration,
    /// Runnable, waiting for the kernel to give the thread a CPU back — or asleep while
    /// the pool's other workers waited for one (a lock's holder preempted, [`peers`]).
    pub(crate) preempted: Duration,
    /// Whether the thread slept in the kernel inside the poll (a voluntary context switch)
    /// and was off its CPU longer than [`UNSPLIT`]; false where that is not read
    /// (`counts_sleeps`).
    pub(crate) slept: bool,
}

#[cfg(linux_reads)]
thread_local! {
    /// `/proc/thread-self/schedstat`, opened once by each thread that reads it (the path
    /// names the thread that opens it). `None` where it cannot be opened.
    static SCHEDSTAT: RefCell<Option<Option<File>>> = const { RefCell::new(None) };
}

thread_local! {
    /// The pool whose workers the calling thread publishes its run-queue time to, and its
    /// place there ([`join_peers`]).
    static PEER: RefCell<Option<(Arc<Peers>, Arc<Peer>)>> = const { RefCell::new(None) };
}

/// The calling thread is one of `peers`' workers from now on: its run-queue time is
/// published at each reading of its clocks, and its sleeps count the others' (a no-op on a
/// thread that joined, or where the run queue is not read).
pub(crate) fn join_peers(peers: &Arc<Peers>) {
    if PEER.with(|p| p.borrow().is_some()) {
        return;
    }
    let Some(queued) = queued() else {
        return;
    };
    let peer = peers.join(own_schedstat(), queued);
    PEER.with(|p| *p.borrow_mut() = Some((Arc::clone(peers), peer)));
}

/// Publishes the calling thread's run-queue time `queued`, where it is a pool's worker:
/// the others' published sum.
fn publish(queued: Option<Duration>) -> Option<Duration> {
    let queued = queued?;
    PEER.with(|p| {
        p.borrow()
            .as_ref()
            .map(|(peers, own)| peers.publish(own, queued))
    })
}

/// The run-queue time of the calling thread's pool's other workers now, read afresh.
fn peers_now() -> Option<Duration> {
    PEER.with(|p| {
        p.borrow()
            .as_ref()
            .map(|(peers, own)| peers.others_now(own))
    })
}

impl ThreadReading {
    /// The calling thread's clocks now, or `None` where its CPU clock cannot be read.
    pub(crate) fn now() -> Option<ThreadReading> {
        let cpu = thread_cpu()?;
        let ends_at = Instant::now();
        let queued = queued();
        let at = Instant::now();
        Some(ThreadReading {
            at,
            ends_at,
            cpu,
            queued,
            switches: voluntary_switches(),
            peers: publish(queued),
        })
    }

    /// The poll that began at `self` and ends now, on the same thread (a unit test's
    /// reading: a served poll reads its end whole, for the timeline). The run queue is
    /// read a second time only where the poll slept long enough to be split.
    #[cfg(test)]
    pub(crate) fn poll(&self) -> PollTime {
        let at = Instant::now();
        let now = ThreadReading {
            at,
            ends_at: at,
            cpu: thread_cpu().unwrap_or(self.cpu),
            queued: None,
            switches: voluntary_switches(),
            peers: None,
        };
        self.split(&now, queued, peers_now)
    }

    /// The run from `self` to `later`, both read on the same thread.
    pub(crate) fn until(&self, later: &ThreadReading) -> PollTime {
        self.split(later, || later.queued, peers_now)
    }

    /// When this reading was taken.
    pub(crate) fn at(&self) -> Instant {
        self.at
    }

    /// The run from `self` to `later`, its run-queue time read by `queued_then` only where
    /// it is needed: the thread slept, and was off its CPU longer than [`UNSPLIT`]; and
    /// the pool's other workers' by `peers_then` only where some of that was a wait.
    fn split(
        &self,
        later: &ThreadReading,
        queued_then: impl FnOnce() -> Option<Duration>,
        peers_then: impl FnOnce() -> Option<Duration>,
    ) -> PollTime {
        let wall = later.ends_at.saturating_duration_since(self.at);
        let computing = later.cpu.saturating_sub(self.cpu).min(wall);
        let off_cpu = wall - computing;
        let switched = match (self.switches, later.switches) {
            (Some(then), Some(now)) => Some(now > then),
            _ => None,
        };
        let slept = switched == Some(true) && off_cpu > UNSPLIT;
        // A thread that made no voluntary switch never slept: its time off the CPU was the
        // run queue's or the hypervisor's, whatever the clocks' difference says.
        if off_cpu <= UNSPLIT || switched == Some(false) {
            return PollTime {
                wall,
                computing,
                waiting: Duration::ZERO,
                preempted: off_cpu,
                slept,
            };
        }
        // Where the run queue is not known, time off the CPU is all the wait it can have
        // been: counted as waiting, and `splits_off_cpu` tells the claims it is a bound.
        let preempted = match (self.queued, queued_then()) {
            (Some(then), Some(now)) => now.saturating_sub(then).min(off_cpu),
            _ => Duration::ZERO,
        };
        // Asleep while the pool's other workers waited for a CPU: a lock's holder
        // preempted, the machine's doing one thread removed ([`peers`]).
        let waited = off_cpu - preempted;
        let held_up = match self.peers {
            Some(then) if !waited.is_zero() => peers_then()
                .map(|now| now.saturating_sub(then).min(waited))
                .unwrap_or_default(),
            _ => Duration::ZERO,
        };
        let preempted = preempted + held_up;
        PollTime {
            wall,
            computing,
            waiting: off_cpu - preempted,
            preempted,
            slept,
        }
    }
}

/// Whether a poll can be timed here: the thread's CPU clock can be read.
pub(crate) fn available() -> bool {
    thread_cpu().is_some()
}

/// Whether a poll's time off the CPU is split into waiting and preemption here (the run
/// queue's figure can be read); where it is not, [`PollTime::waiting`] is a bound.
pub(crate) fn splits_off_cpu() -> bool {
    queued().is_some()
}

/// Whether a poll says if its thread slept inside it ([`PollTime::slept`]): the thread's
/// voluntary context switches can be read.
#[cfg(test)]
pub(crate) fn counts_sleeps() -> bool {
    voluntary_switches().is_some()
}

/// What a claim says where [`available`] is false: `polls` names whose polls the clock
/// would time ("the handler's", "the routes'").
pub(crate) fn unclocked(polls: &str) -> String {
    crate::platform::not_read(
        &format!("a worker thread's CPU clock, which times {polls} polls,"),
        "clock_gettime(CLOCK_THREAD_CPUTIME_ID), on every Unix",
    )
}

/// What a claim says where [`splits_off_cpu`] is false.
pub(crate) fn unsplit() -> String {
    crate::platform::not_read(
        "a worker thread's time on a run queue, which tells a wait inside a poll from the machine preempting it,",
        "/proc/thread-self/schedstat",
    )
}

/// The calling thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`).
#[cfg(unix)]
fn thread_cpu() -> Option<Duration> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid, writable timespec for the call's duration; the clock id is
    // a constant the platform defines. The call has no other effect.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    (status == 0).then(|| {
        Duration::new(
            u64::try_from(now.tv_sec).unwrap_or(0),
            u32::try_from(now.tv_nsec).unwrap_or(0),
        )
    })
}

#[cfg(not(unix))]
fn thread_cpu() -> Option<Duration> {
    None
}

/// The calling thread's time on a run queue so far, from its `schedstat`.
#[cfg(linux_reads)]
fn queued() -> Option<Duration> {
    own_figures().map(|(_, queued)| queued)
}

/// Not read off Linux.
#[cfg(not(linux_reads))]
fn queued() -> Option<Duration> {
    None
}

/// The calling thread's CPU time and time on a run queue so far, from its `schedstat`.
#[cfg(linux_reads)]
fn own_figures() -> Option<(Duration, Duration)> {
    SCHEDSTAT.with(|cell| {
        let mut cell = cell.borrow_mut();
        let file = cell
            .get_or_insert_with(|| File::open("/proc/thread-self/schedstat").ok())
            .as_ref()?;
        read_figures(file)
    })
}

#[cfg(not(linux_reads))]
fn own_figures() -> Option<(Duration, Duration)> {
    None
}

/// Thread `tid`'s (of this process) CPU time and time on a run queue so far; `None` where
/// it ended.
#[cfg(linux_reads)]
fn figures_of(tid: i32) -> Option<(Duration, Duration)> {
    read_figures(&File::open(format!("/proc/self/task/{tid}/schedstat")).ok()?)
}

#[cfg(not(linux_reads))]
fn figures_of(_tid: i32) -> Option<(Duration, Duration)> {
    None
}

/// Whether the calling thread is a pool's worker ([`join_peers`]).
fn is_pool_worker() -> bool {
    PEER.with(|p| p.borrow().is_some())
}

/// The calling thread's own `schedstat` file, the one [`queued`] keeps, for the pool's
/// other workers to read.
#[cfg(linux_reads)]
fn own_schedstat() -> Option<File> {
    SCHEDSTAT.with(|cell| cell.borrow().as_ref()?.as_ref()?.try_clone().ok())
}

#[cfg(not(linux_reads))]
fn own_schedstat() -> Option<File> {
    None
}

/// The calling thread's voluntary context switches so far (`getrusage(RUSAGE_THREAD)`):
/// each is a sleep in the kernel — a blocking read, a lock, a sleep.
#[cfg(linux_reads)]
fn voluntary_switches() -> Option<u64> {
    // SAFETY: an all-zero `rusage` is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for the call's duration; RUSAGE_THREAD
    // asks for the calling thread's figures. The call has no other effect.
    let status = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    (status == 0).then(|| u64::try_from(usage.ru_nvcsw).unwrap_or(0))
}

/// Not read off Linux (macOS has no per-thread `getrusage`).
#[cfg(not(linux_reads))]
fn voluntary_switches() -> Option<u64> {
    None
}

/// The second of `schedstat`'s three figures (`cpu_ns queued_ns timeslices`), read from
/// the start of the kept file (procfs generates it anew at offset 0).
#[cfg(linux_reads)]
fn read_queued(file: &File) -> Option<Duration> {
    read_figures(file).map(|(_, queued)| queued)
}

/// A `schedstat` file's first two figures: CPU time, and time on a run queue.
#[cfg(linux_reads)]
fn read_figures(file: &File) -> Option<(Duration, Duration)> {
    use std::os::unix::fs::FileExt as _;
    let mut buffer = [0u8; 96];
    let read = file.read_at(&mut buffer, 0).ok()?;
    let text = std::str::from_utf8(&buffer[..read]).ok()?;
    let mut figures = text.split_whitespace();
    let cpu: u64 = figures.next()?.parse().ok()?;
    let queued: u64 = figures.next()?.parse().ok()?;
    Some((Duration::from_nanos(cpu), Duration::from_nanos(queued)))
}

/// Not read off Linux.
#[cfg(not(linux_reads))]
fn read_queued(_file: &File) -> Option<Duration> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleep_is_waiting_and_a_spin_is_computing() {
        if !available() {
            return;
        }
        // Linux reads the run queue; the portable build must not.
        assert_eq!(splits_off_cpu(), cfg!(linux_reads));
        let start = ThreadReading::now().expect("the clocks were available");
        std::thread::sleep(Duration::from_millis(3));
        let slept = start.poll();
        assert!(slept.waiting >= Duration::from_millis(2), "{slept:?}");
        assert!(slept.computing < Duration::from_millis(1), "{slept:?}");
        // A sleep is a voluntary switch, wherever those are counted.
        assert_eq!(slept.slept, counts_sleeps(), "{slept:?}");

        if !splits_off_cpu() {
            return;
        }
        // However busy the machine, a spin's wall time is CPU or preemption, never a wait.
        // Where sleeps are counted, a spin that made no voluntary switch reads no waiting
        // even when the host stole time from it (the module's note), so each of them must
        // read clean.
        if counts_sleeps() {
            for _ in 0..3 {
                let start = ThreadReading::now().expect("the clocks were available");
                let began = Instant::now();
                while began.elapsed() < Duration::from_millis(3) {
                    std::hint::black_box(began.elapsed());
                }
                let spun = start.poll();
                assert!(spun.slept || spun.waiting.is_zero(), "{spun:?}");
            }
        }
        // Without the switches, steal reads as waiting: it struck 0.4 % of 3 ms spins with a
        // core busy, so one spin in three attempts must read clean (steal alone fails that
        // about once in 10⁷).
        let spins: Vec<PollTime> = (0..3)
            .map(|_| {
                let start = ThreadReading::now().expect("the clocks were available");
                let began = Instant::now();
                while began.elapsed() < Duration::from_millis(3) {
                    std::hint::black_box(began.elapsed());
                }
                start.poll()
            })
            .collect();
        assert!(
            spins
                .iter()
                .any(|spun| spun.waiting < Duration::from_millis(1)
                    && !spun.slept
                    && spun.computing + spun.preempted >= Duration::from_millis(3)),
            "{spins:?}"
        );
    }

    /// A voluntary switch with the poll barely off its CPU — a lock another thread hands
    /// over in microseconds — is no sleep; past [`UNSPLIT`] it is.
    #[test]
    fn a_switch_counts_as_a_sleep_only_past_the_unsplit_floor() {
        if !counts_sleeps() {
            return;
        }
        let start = ThreadReading::now().expect("the clocks were available");
        std::thread::sleep(Duration::from_millis(1));
        let slept = start.poll();
        assert!(slept.slept, "{slept:?}");
        // As if the thread had switched just now: its count then one lower than now (the
        // sleep above made it at least one).
        let now = ThreadReading::now().expect("the clocks were available");
        let earlier = ThreadReading {
            switches: now.switches.map(|n| n - 1),
            ..now
        };
        let brief = earlier.poll();
        if brief.wall - brief.computing <= UNSPLIT {
            assert!(!brief.slept, "{brief:?}");
        }
    }

    /// A reading at `micros` (its run-queue figure read `skew_us` later), with its CPU, run
    /// queue, voluntary switches and the pool's other workers' published run-queue time.
    fn synthetic(
        micros: u64,
        skew_us: u64,
        cpu_us: u64,
        queued_us: u64,
        switches: u64,
        peers_us: Option<u64>,
    ) -> ThreadReading {
        let origin = *ORIGIN.get_or_init(Instant::now);
        ThreadReading {
            ends_at: origin + Duration::from_micros(micros),
            at: origin + Duration::from_micros(micros + skew_us),
            cpu: Duration::from_micros(cpu_us),
            queued: Some(Duration::from_micros(queued_us)),
            switches: Some(switches),
            peers: peers_us.map(Duration::from_micros),
        }
    }

    static ORIGIN: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

    /// The rule that a sleep while the pool's other workers waited for a CPU is preemption:
    /// 2 ms asleep (a voluntary switch, nothing on this thread's run queue) while another
    /// worker was credited 1.9 ms on a run queue — the holder of the lock this one slept on,
    /// preempted — waits 0.1 ms; the others' credit never counts past the sleep, and a
    /// thread in no pool counts none.
    #[test]
    fn a_sleep_while_the_other_workers_waited_for_a_cpu_is_preemption() {
        let us = Duration::from_micros;
        let start = synthetic(0, 0, 0, 0, 3, Some(500));
        let end = synthetic(2500, 0, 500, 0, 4, None);
        let held = start.split(&end, || end.queued, || Some(us(2400)));
        assert_eq!(
            (held.waiting, held.preempted),
            (us(100), us(1900)),
            "{held:?}"
        );
        assert!(held.slept, "{held:?}");
        // Credited more than the sleep: the sleep, no more.
        let longer = start.split(&end, || end.queued, || Some(us(9000)));
        assert_eq!(
            (longer.waiting, longer.preempted),
            (us(0), us(2000)),
            "{longer:?}"
        );
        // The others idle: the whole sleep waited.
        let idle = start.split(&end, || end.queued, || Some(us(500)));
        assert_eq!(idle.waiting, us(2000), "{idle:?}");
        // No pool: nothing is read of others.
        let alone = synthetic(0, 0, 0, 0, 3, None);
        let solo = alone.split(
            &end,
            || end.queued,
            || panic!("read for a thread in no pool"),
        );
        assert_eq!(solo.waiting, us(2000), "{solo:?}");
    }

    /// The rule that a run begins after its first reading's run-queue figure: a thread
    /// preempted 300 µs between that reading's wall clock and its run-queue read had the
    /// wait credited before the run began, so the run (1 ms of CPU, then a voluntary
    /// switch but no time off the CPU) waited nothing.
    #[test]
    fn a_preemption_inside_a_reading_is_no_wait() {
        let start = synthetic(0, 300, 0, 300, 3, None);
        let end = synthetic(1300, 0, 1000, 300, 4, None);
        let run = start.until(&end);
        assert_eq!(run.wall, Duration::from_micros(1000), "{run:?}");
        assert_eq!(run.waiting, Duration::ZERO, "{run:?}");
    }

    /// The rule that a poll whose thread made no voluntary switch did not wait, on synthetic
    /// readings (hypervisor steal, which only a virtual machine under load shows, is what it
    /// guards against): 3 ms off the CPU without a switch is preempted, never waiting,
    /// whatever the run queue says; the same with a switch is split by the run queue.
    #[test]
    fn time_off_the_cpu_without_a_voluntary_switch_is_never_waiting() {
        let at = Instant::now();
        let reading = |micros: u64, cpu_us: u64, queued_us: u64, switches: u64| ThreadReading {
            at: at + Duration::from_micros(micros),
            ends_at: at + Duration::from_micros(micros),
            cpu: Duration::from_micros(cpu_us),
            queued: Some(Duration::from_micros(queued_us)),
            switches: Some(switches),
            peers: None,
        };
        // 4 ms of wall, 1 ms of CPU, nothing on the run queue: 3 ms the clocks cannot place.
        let start = reading(0, 0, 0, 7);
        let stolen = start.until(&reading(4000, 1000, 0, 7));
        assert_eq!(stolen.waiting, Duration::ZERO, "{stolen:?}");
        assert_eq!(stolen.preempted, Duration::from_micros(3000), "{stolen:?}");
        assert!(!stolen.slept, "{stolen:?}");
        // The same with a voluntary switch: a sleep, split by the run queue (1 ms of it).
        let slept = start.until(&reading(4000, 1000, 1000, 8));
        assert_eq!(slept.waiting, Duration::from_micros(2000), "{slept:?}");
        assert_eq!(slept.preempted, Duration::from_micros(1000), "{slept:?}");
        assert!(slept.slept, "{slept:?}");
        // Where the switches are not read (off Linux), the time off the CPU is all the wait
        // it can have been: a bound, which the claims know to be one (`splits_off_cpu`).
        let unread = ThreadReading {
            switches: None,
            queued: None,
            ..start
        };
        let bound = unread.until(&ThreadReading {
            switches: None,
            queued: None,
            ..reading(4000, 1000, 0, 0)
        });
        assert_eq!(bound.waiting, Duration::from_micros(3000), "{bound:?}");
    }
}
