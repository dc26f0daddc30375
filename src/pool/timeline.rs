//! A pool's workers, clocked whole: every stretch a worker thread runs between two parks,
//! and the part of it that no timed response poll explains.
//!
//! What hurts a service is what its workers could not do, whichever task held them: the
//! handler's own future, a task it spawned (a fire-and-forget audit write), a connection's
//! driver, a background job. A served router's layer times its responses' own polls
//! (`server::trace`); everything else a worker runs lies between them. tokio's stable
//! `on_thread_unpark` and `on_thread_park` hooks fire on the worker's own thread around each
//! idle gap, so the time from an unpark to the next park is a *stretch* of the worker's run,
//! and the response polls inside it cut it into *segments*: the worker's run outside any
//! response poll. A segment is split by the same clocks as a poll
//! (`thread_clock::ThreadReading`: CPU time, run queue, voluntary
//! switches), and one in which the thread slept in the kernel is kept — a task that waited
//! while it held the worker.
//!
//! Computing outside the response polls is not judged: a stretch of many short polls of
//! other tasks computes as long as one long poll does, and without tokio's unstable task
//! hooks the two cannot be told apart here.
//!
//! **tokio's hand-off.** `block_in_place` on a worker moves the worker's core to another
//! thread (a blocking-pool thread running the worker loop) before the closure runs: the
//! worker is not held, other tasks run on the new thread meanwhile. That thread begins its
//! run busy, without an unpark, so its first hook is a park: the timeline counts such a
//! park as a hand-off ([`Timeline::handoffs`]) — or, where the thread runs a response poll
//! of a task before it parks, that poll — and a response poll during which the count moved
//! handed its core off. The thread that handed its core off may still finish the same
//! task's poll without a core (its response's body written after the handler returned):
//! those polls are told apart by the task's id (`tokio::task::try_id`, stable tokio). (The runtime's start reads the same way for each worker: its
//! first hook is a park too, before any load.) A stretch that spans a hand-off is not read:
//! which thread held the core during it is not known.
//!
//! **Cost**, while a claim records (nothing is read otherwise): one full clock reading at
//! each unpark, park and response poll boundary — ≈1.6 µs each on this project's machine
//! (`thread_clock`'s figures) — and an uncontended lock to keep a segment that slept.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::sampler::{Calls, Sampler, Slot};
use crate::thread_clock::{self, Peers, PollTime, ThreadReading};

/// The most segments kept at once while recording, the oldest dropped first (a bound on
/// memory, never reached by a load of a correct service: only segments that slept are
/// kept).
const MAX_KEPT: usize = 8192;

/// A segment that computed this long is kept even if it never slept: on a service whose
/// responses are not timed (a launched one) the longest stretch of a worker's CPU serving
/// one request bounds its longest poll.
pub(crate) const LONG: Duration = Duration::from_millis(1);

/// One stretch of a worker's run outside any timed response poll, in which its thread
/// slept in the kernel or computed at least [`LONG`]: when it began, on which worker thread,
/// and what it was made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    /// The worker thread, by the number the timeline gave it.
    pub(crate) thread: u64,
    /// When the segment began.
    pub(crate) at: Instant,
    /// Its time, split.
    pub(crate) time: PollTime,
}

impl Segment {
    /// The part of this segment inside `[from, to)`.
    pub(crate) fn overlap(&self, from: Instant, to: Instant) -> Duration {
        let end = self.at + self.time.wall;
        end.min(to).saturating_duration_since(self.at.max(from))
    }

    /// The part of this segment's waiting inside `[from, to)`, taking the wait as spread
    /// evenly over the segment.
    pub(crate) fn waiting_within(&self, from: Instant, to: Instant) -> Duration {
        // A segment's waiting is part of its wall time: one of no time waited none.
        let wall = self.time.wall.as_secs_f64().max(f64::MIN_POSITIVE);
        self.time
            .waiting
            .mul_f64(self.overlap(from, to).as_secs_f64() / wall)
    }
}

/// A pool's workers' runs outside their response polls, while any claim records.
#[derive(Debug, Default)]
pub(crate) struct Timeline {
    recorders: AtomicUsize,
    handoffs: AtomicU64,
    threads: AtomicU64,
    kept: Mutex<VecDeque<Segment>>,
    /// What the workers are blocked in, sampled while a claim that judges a hold runs.
    sampler: Arc<Sampler>,
    samplers: AtomicUsize,
    /// The workers' run-queue times, which tell a sleep on a lock another worker held
    /// while preempted as the machine's ([`thread_clock::join_peers`]).
    peers: Arc<Peers>,
}

/// While alive, the pool's workers are clocked at each unpark, park and response poll;
/// the last one dropped forgets what was kept.
#[derive(Debug)]
pub(crate) struct Recording(Arc<Timeline>);

impl Drop for Recording {
    fn drop(&mut self) {
        if self.0.recorders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.lock().clear();
        }
    }
}

/// While alive, the pool's workers are sampled ([`Timeline::sample`]).
#[derive(Debug)]
pub(crate) struct Sampling(Arc<Timeline>);

impl Drop for Sampling {
    fn drop(&mut self) {
        self.0.samplers.fetch_sub(1, Ordering::AcqRel);
    }
}

/// What the calling worker thread is doing, as its hooks saw it.
enum State {
    /// No hook has fired on this thread: its next park, or its first response poll, is a
    /// core arriving by a hand-off.
    Unseen,
    /// It gave its core away in a poll of this task (`tokio::task::try_id`): it may finish
    /// that task's poll without a core — a response body written after the handler's
    /// `block_in_place` — and a poll of another task, or a park, is a core arriving again.
    HandedOff(Option<tokio::task::Id>),
    /// Parked, or running while nobody recorded.
    Idle,
    /// Running a stretch that is being clocked.
    Running(Open),
}

/// A stretch being clocked: the timeline it belongs to, the reading at its last boundary
/// (its unpark, or the end of the last response poll), and the hand-offs counted when it
/// began.
struct Open {
    timeline: Arc<Timeline>,
    id: u64,
    boundary: ThreadReading,
    handoffs: u64,
}

thread_local! {
    static STATE: RefCell<State> = const { RefCell::new(State::Unseen) };
    /// The timeline of the pool this thread belongs to, worker or blocking thread alike:
    /// a blocking thread may be handed a worker's core, and run response polls.
    static TIMELINE: RefCell<Option<Arc<Timeline>>> = const { RefCell::new(None) };
    /// The number this thread is known by in segments, given at its first clocked stretch.
    static ID: RefCell<Option<u64>> = const { RefCell::new(None) };
    /// Where this thread is, for the sampler: parked, outside any response, in a poll.
    static SLOT: RefCell<Option<Arc<Slot>>> = const { RefCell::new(None) };
}

/// Tells the sampler where the calling thread is now.
fn slot(place: impl FnOnce(&Slot)) {
    SLOT.with(|s| {
        if let Some(slot) = &*s.borrow() {
            place(slot);
        }
    });
}

impl Timeline {
    /// Starts recording, until the returned guard is dropped.
    pub(crate) fn record(self: &Arc<Self>) -> Recording {
        if self.recorders.fetch_add(1, Ordering::AcqRel) == 0 {
            // Workers read no clocks between recordings: their figures are read afresh, so
            // that a sleep early in this one does not count the run queue of the time
            // between as its holder's.
            self.peers.refresh();
        }
        Recording(Arc::clone(self))
    }

    /// Samples what the workers are blocked in while they record, until the returned guard
    /// is dropped: for a claim that judges a hold, whose report names the call. Not for
    /// every load — the sampling thread wakes a thousand times a second, which a claim that
    /// compares two timings should not share its cores with.
    pub(crate) fn sample(self: &Arc<Self>) -> Sampling {
        if self.samplers.fetch_add(1, Ordering::AcqRel) == 0 {
            self.sampler.clear();
            let timeline = Arc::downgrade(self);
            self.sampler.start(move || {
                timeline
                    .upgrade()
                    .is_some_and(|t| t.samplers.load(Ordering::Acquire) > 0)
            });
        }
        Sampling(Arc::clone(self))
    }

    /// What the workers were sampled in since the sampling began.
    pub(crate) fn calls(&self) -> Calls {
        self.sampler.calls()
    }

    /// Whether any claim records now.
    pub(crate) fn recording(&self) -> bool {
        self.recorders.load(Ordering::Acquire) > 0
    }

    /// The hand-offs counted so far: cores that arrived on a thread without an unpark.
    pub(crate) fn handoffs(&self) -> u64 {
        self.handoffs.load(Ordering::Acquire)
    }

    /// The kept segments that end after `from`.
    pub(crate) fn since(&self, from: Instant) -> Vec<Segment> {
        self.lock()
            .iter()
            .filter(|s| s.at + s.time.wall > from)
            .copied()
            .collect()
    }

    /// The workers' time on a run queue so far — runnable, kept from a CPU by the machine —
    /// summed over the workers that have run (`None` where it is not read: off Linux).
    pub(crate) fn workers_queued(&self) -> Option<Duration> {
        self.peers.all_now()
    }

    /// The workers' waiting in `[from, to)`, outside any response poll.
    pub(crate) fn waiting_within(&self, from: Instant, to: Instant) -> Duration {
        self.lock().iter().map(|s| s.waiting_within(from, to)).sum()
    }

    /// `on_thread_start`: the calling thread belongs to this timeline's pool.
    pub(crate) fn started(self: &Arc<Self>) {
        TIMELINE.with(|t| *t.borrow_mut() = Some(Arc::clone(self)));
        SLOT.with(|s| *s.borrow_mut() = self.sampler.slot());
    }

    /// `on_thread_unpark`: a stretch begins on the calling worker thread.
    pub(crate) fn unparked(self: &Arc<Self>) {
        // Only workers park: the threads whose locks a worker's sleep may wait on.
        thread_clock::join_peers(&self.peers);
        let state = if self.recording() {
            match ThreadReading::now() {
                Some(boundary) => State::Running(Open {
                    timeline: Arc::clone(self),
                    id: self.thread_id(),
                    boundary,
                    handoffs: self.handoffs(),
                }),
                None => State::Idle,
            }
        } else {
            State::Idle
        };
        match state {
            State::Running(_) => slot(Slot::outside),
            _ => slot(Slot::parked),
        }
        STATE.with(|s| *s.borrow_mut() = state);
    }

    /// `on_thread_park`: the calling worker thread's stretch ends; the part since its last
    /// boundary is a segment. A park on a thread that never unparked is a core that arrived
    /// by a hand-off.
    pub(crate) fn parked(&self) {
        slot(Slot::parked);
        let was = STATE.with(|s| std::mem::replace(&mut *s.borrow_mut(), State::Idle));
        match was {
            State::Unseen | State::HandedOff(_) => {
                self.handoffs.fetch_add(1, Ordering::AcqRel);
            }
            State::Idle => {}
            State::Running(open) => {
                if let Some(now) = ThreadReading::now() {
                    open.close(&now);
                }
            }
        }
    }

    fn thread_id(&self) -> u64 {
        ID.with(|id| {
            *id.borrow_mut()
                .get_or_insert_with(|| self.threads.fetch_add(1, Ordering::Relaxed))
        })
    }

    fn keep(&self, segment: Segment) {
        if !self.recording() {
            return;
        }
        let mut kept = self.lock();
        if kept.len() >= MAX_KEPT {
            kept.pop_front();
        }
        kept.push_back(segment);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Segment>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Open {
    /// Keeps the run from the last boundary to `now` as a segment, if its thread slept in
    /// it or computed at least [`LONG`], and no hand-off happened since the stretch began.
    fn close(&self, now: &ThreadReading) {
        if self.timeline.handoffs() != self.handoffs {
            return;
        }
        let time = self.boundary.until(now);
        if time.waiting > Duration::ZERO || time.computing >= LONG {
            self.timeline.keep(Segment {
                thread: self.id,
                at: self.boundary.at(),
                time,
            });
        }
    }
}

/// What a response poll on the calling thread needs of the timeline: the hand-offs counted
/// when it began, to tell afterwards whether it gave its core away.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PollMark {
    handoffs: Option<u64>,
}

/// The number the calling thread's pool gives route `path` in its samples, where the thread
/// belongs to a pool.
pub(crate) fn route(path: &str) -> Option<u32> {
    TIMELINE.with(|t| t.borrow().as_ref().map(|t| t.sampler.route(path)))
}

/// A sleep the kernel handed over at the switch in a poll of `route` ([`route`]) on the
/// calling thread, kept with the pool's samples where it is the route's longest.
pub(crate) fn left_in(route: u32, left: &crate::stack::Left) {
    TIMELINE.with(|t| {
        if let Some(t) = t.borrow().as_ref() {
            t.sampler.left(route, left);
        }
    });
}

/// Runs `work`, perfshape's own on the calling worker thread (asking the kernel for its
/// events), outside the worker's run: what the worker ran before it is a segment, the next
/// begins after it, and the sampler passes the worker by meanwhile.
pub(crate) fn own_work<R>(work: impl FnOnce() -> R) -> R {
    let running = |each: &mut dyn FnMut(&mut Open)| {
        STATE.with(|s| {
            if let State::Running(open) = &mut *s.borrow_mut() {
                each(open);
            }
        })
    };
    if let Some(before) = ThreadReading::now() {
        running(&mut |open| {
            open.close(&before);
            open.boundary = before;
        });
    }
    // Not sampled meanwhile: the sampler passes a parked worker by.
    let mut outside = false;
    running(&mut |_| outside = true);
    slot(Slot::parked);
    let done = work();
    if outside {
        slot(Slot::outside);
    }
    if let Some(after) = ThreadReading::now() {
        running(&mut |open| open.boundary = after);
    }
    done
}

/// A response poll of `route` ([`route`]) begins on the calling thread, clocked by `start`:
/// the worker's run since the last boundary is a segment.
pub(crate) fn poll_begins(start: &ThreadReading, route: Option<u32>) -> PollMark {
    if let Some(route) = route {
        slot(|s| s.in_route(route));
    }
    STATE.with(|s| {
        let mut state = s.borrow_mut();
        let arrived = match &*state {
            State::Running(open) => {
                open.close(start);
                false
            }
            // A thread that runs a response poll before its first park got its core by a
            // hand-off and runs the worker now: counted here rather than only at its park,
            // which a core kept busy (twenty requests handing it on in turn, the
            // connections' writes between them) may not reach before the poll that handed
            // the core off ends. (Each worker's first hook at the runtime's start is a park.)
            State::Unseen => true,
            // A poll of the task whose poll gave the core away is that poll's own end,
            // coreless (its body written after the handler returned); another task's is a
            // core arriving.
            State::HandedOff(task) => *task != tokio::task::try_id(),
            State::Idle => false,
        };
        if arrived {
            TIMELINE.with(|t| {
                if let Some(timeline) = &*t.borrow() {
                    timeline.handoffs.fetch_add(1, Ordering::AcqRel);
                }
            });
            *state = State::Idle;
        }
    });
    PollMark {
        handoffs: TIMELINE.with(|t| t.borrow().as_ref().map(|t| t.handoffs())),
    }
}

/// The response poll marked `mark` ends on the calling thread, clocked by `end`: the next
/// segment begins here. Whether the poll handed its worker's core to another thread
/// (`block_in_place`) is returned; if it did, this thread no longer runs the worker, and
/// its next park is read as a core arriving again.
///
/// A hand-off is read as the pool's count of them moving during the poll: a poll of
/// another route that blocks its worker inline while this one hands off reads as handed
/// off too — where a service uses `block_in_place` at all.
pub(crate) fn poll_ends(mark: PollMark, end: &ThreadReading) -> bool {
    let handed_off = match (
        mark.handoffs,
        TIMELINE.with(|t| t.borrow().as_ref().map(|t| t.handoffs())),
    ) {
        (Some(before), Some(now)) => now != before,
        _ => false,
    };
    STATE.with(|s| {
        let mut state = s.borrow_mut();
        if handed_off {
            slot(Slot::parked);
            *state = State::HandedOff(tokio::task::try_id());
        } else if let State::Running(open) = &mut *state {
            slot(Slot::outside);
            open.boundary = *end;
        }
    });
    handed_off
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(at: Instant, wall_us: u64, waiting_us: u64) -> Segment {
        Segment {
            thread: 0,
            at,
            time: PollTime {
                wall: Duration::from_micros(wall_us),
                computing: Duration::from_micros(wall_us - waiting_us),
                waiting: Duration::from_micros(waiting_us),
                preempted: Duration::ZERO,
                slept: true,
            },
        }
    }

    #[test]
    fn a_segment_counts_the_part_of_its_wait_inside_a_window() {
        let t = Instant::now();
        let s = segment(t, 1000, 500);
        let us = Duration::from_micros;
        assert_eq!(s.waiting_within(t, t + us(1000)), us(500));
        assert_eq!(s.waiting_within(t + us(500), t + us(2000)), us(250));
        assert_eq!(s.waiting_within(t + us(1000), t + us(2000)), Duration::ZERO);
    }

    #[test]
    fn only_a_recording_keeps_and_its_end_forgets() {
        let timeline = Arc::new(Timeline::default());
        let t = Instant::now();
        let us = Duration::from_micros;
        timeline.keep(segment(t, 100, 50));
        assert!(timeline.since(t).is_empty());
        let recording = timeline.record();
        timeline.keep(segment(t, 100, 50));
        timeline.keep(segment(t + us(1000), 100, 40));
        assert_eq!(timeline.since(t).len(), 2);
        assert_eq!(timeline.since(t + us(500)).len(), 1);
        assert_eq!(timeline.waiting_within(t, t + us(2000)), us(90));
        drop(recording);
        let _again = timeline.record();
        assert!(timeline.since(t).is_empty());
    }

    #[test]
    fn a_full_timeline_drops_its_oldest() {
        let timeline = Arc::new(Timeline::default());
        let _recording = timeline.record();
        let t = Instant::now();
        for i in 0..=MAX_KEPT as u64 {
            timeline.keep(segment(t + Duration::from_micros(i * 200), 100, 50));
        }
        let kept = timeline.since(t);
        assert_eq!(kept.len(), MAX_KEPT);
        assert!(kept[0].at > t, "the oldest went first");
    }

    /// A thread whose first hook is a park got its core without an unpark: a hand-off
    /// (`block_in_place`, or the runtime's start); a poll during which one came gave its
    /// core away, and its thread's next park is read as a core arriving again.
    #[test]
    fn a_park_without_an_unpark_is_a_handoff_and_a_poll_across_one_gave_its_core() {
        let timeline = Arc::new(Timeline::default());
        let _recording = timeline.record();
        let other = Arc::clone(&timeline);
        std::thread::spawn(move || other.parked()).join().unwrap();
        assert_eq!(timeline.handoffs(), 1);
        std::thread::scope(|scope| {
            scope.spawn(|| {
                timeline.started();
                timeline.unparked();
                let Some(start) = ThreadReading::now() else {
                    return;
                };
                let mark = poll_begins(&start, None);
                let helper = Arc::clone(&timeline);
                std::thread::spawn(move || helper.parked()).join().unwrap();
                let end = ThreadReading::now().unwrap();
                assert!(poll_ends(mark, &end));
                timeline.parked();
                assert_eq!(timeline.handoffs(), 3);
            });
        });
    }

    /// A worker that sleeps outside any response poll — a task its requests spawned —
    /// leaves a segment with the sleep as waiting; one that computes briefly leaves none.
    #[test]
    fn a_sleep_between_polls_is_kept_and_a_spin_is_not() {
        if !crate::thread_clock::available() || !crate::thread_clock::splits_off_cpu() {
            return;
        }
        let timeline = Arc::new(Timeline::default());
        let _recording = timeline.record();
        let from = Instant::now();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                timeline.unparked();
                let began = Instant::now();
                while began.elapsed() < Duration::from_micros(300) {
                    std::hint::black_box(began.elapsed());
                }
                let start = ThreadReading::now().unwrap();
                let mark = poll_begins(&start, None);
                assert!(!poll_ends(mark, &ThreadReading::now().unwrap()));
                std::thread::sleep(Duration::from_millis(3));
                timeline.parked();
            });
        });
        let kept = timeline.since(from);
        assert_eq!(kept.len(), 1, "{kept:?}");
        assert!(kept[0].time.waiting >= Duration::from_millis(2), "{kept:?}");
    }

    /// What the timeline adds to a served poll while a claim records, measured, not
    /// asserted (a time is no test's verdict): `cargo test --lib -p perfshape
    /// timeline_cost -- --ignored --nocapture` prints the time of a poll's readings before
    /// (a reading at its start, a lighter one at its end) and now (two full readings and the
    /// segment bookkeeping), and of a park-unpark pair's.
    #[test]
    #[ignore = "a measurement: run it by name"]
    fn timeline_cost() {
        if !crate::thread_clock::available() {
            return;
        }
        const N: u32 = 200_000;
        let timeline = Arc::new(Timeline::default());
        let _recording = timeline.record();
        timeline.started();
        timeline.unparked();
        let began = Instant::now();
        for _ in 0..N {
            let start = ThreadReading::now().unwrap();
            std::hint::black_box(start.poll());
        }
        let before = began.elapsed() / N;
        let began = Instant::now();
        for _ in 0..N {
            let start = ThreadReading::now().unwrap();
            let mark = poll_begins(&start, None);
            let end = ThreadReading::now().unwrap();
            std::hint::black_box(start.until(&end));
            std::hint::black_box(poll_ends(mark, &end));
        }
        let now = began.elapsed() / N;
        let began = Instant::now();
        for _ in 0..N {
            timeline.parked();
            timeline.unparked();
        }
        let stretch = began.elapsed() / N;
        println!(
            "a poll's readings: {:.2} µs before, {:.2} µs now (+{:.2} µs); a park and an unpark: {:.2} µs",
            before.as_secs_f64() * 1e6,
            now.as_secs_f64() * 1e6,
            (now.as_secs_f64() - before.as_secs_f64()) * 1e6,
            stretch.as_secs_f64() * 1e6
        );
    }
}
