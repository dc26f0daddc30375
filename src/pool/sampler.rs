//! A pool's workers sampled while a claim records: every [`TICK`], what each worker that is
//! not parked is doing — the system call it sleeps in, or running — counted by where it
//! was: in a poll of which route's response, or outside every response.
//!
//! The worker's clocks ([`timeline`](super::timeline)) say *that* it waited; the kernel says
//! *in what* (`blocked_call`): "write() of /tmp/app/audit.log",
//! "read() on its connection to 127.0.0.1:5432 (postgres)". Each worker thread publishes
//! where it is in one atomic word ([`Slot`]): parked, running outside any response, or in a
//! poll of route r, with a count of changes so that a sample taken while the worker moved
//! on is dropped. A sampling thread of its own reads the kernel's word for every worker
//! that is not parked, every [`TICK`]; a wait shorter than the tick is met in proportion to
//! its share of the worker's time (a wait of a tenth of each request, in a tenth of the
//! samples).
//!
//! Cost, measured (`sampler_cost`): the worker pays one atomic store per poll boundary;
//! the sampling thread wakes every [`TICK`] while a worker runs (every [`IDLE_TICK`] while
//! all are parked), ≈25 µs a wake-up on this project's 2-core virtual machine, and reads
//! ≈4–6 µs for each worker that is not parked: ≈6.5 % of one core while one worker runs,
//! ≈1.5 % while it is parked — on its own thread, and only while a claim about a hold runs
//! (nothing is sampled for a timing or a comparison).

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::blocked_call::{self, Reader, Seen, Tid};
use crate::stack::{Capturer, Left, Stack};

/// How often the workers are sampled while any of them runs.
pub(crate) const TICK: Duration = Duration::from_micros(500);

/// How often the sampler looks while every worker is parked: a worker that unparks is met
/// within this, and the sampling thread's own wake-ups (≈25 µs each on this project's
/// machine) cost a quarter of what they would at [`TICK`].
const IDLE_TICK: Duration = Duration::from_millis(2);

/// The longest a sampling thread that starts is waited for, before the caller goes on.
const START_WAIT: Duration = Duration::from_millis(50);

/// The most routes told apart; a request of any later one is counted under the last.
const MAX_ROUTES: usize = 256;

/// The most stacks of a computing worker kept for a place: enough for the commonest frame
/// of a stretch to stand out, few enough to name at a report's cost.
const MAX_RUNNING_STACKS: usize = 64;

/// The code of a parked (or unclocked) worker.
const PARKED: u32 = 0;
/// The code of a worker running outside any response poll.
const OUTSIDE: u32 = 1;
/// Codes from here on are a poll of route `code − IN_ROUTE`.
const IN_ROUTE: u32 = 2;

/// The key a route's samples are counted under: its method and its path without the query
/// (`POST /accounts`), as the served router saw the request.
pub(crate) fn route_key(method: &str, path: &str) -> String {
    format!("{method} {}", path.split('?').next().unwrap_or(path))
}

/// One worker thread: its kernel id and where it is now (count of changes << 32 | code).
#[derive(Debug)]
pub(crate) struct Slot {
    tid: Tid,
    phase: AtomicU64,
}

impl Slot {
    fn set(&self, code: u32) {
        // Only the slot's own thread writes: a load and a store keep the count.
        let changes = (self.phase.load(Ordering::Relaxed) >> 32) + 1;
        self.phase
            .store((changes << 32) | u64::from(code), Ordering::Release);
    }

    /// The worker is parked (or nobody records): not sampled.
    pub(crate) fn parked(&self) {
        self.set(PARKED);
    }

    /// The worker runs outside any response poll.
    pub(crate) fn outside(&self) {
        self.set(OUTSIDE);
    }

    /// The worker polls a response of `route` ([`Sampler::route`]).
    pub(crate) fn in_route(&self, route: u32) {
        self.set(IN_ROUTE + route);
    }
}

/// Where a sample was taken.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Place {
    /// In a poll of this route's response (its path).
    Route(String),
    /// Outside every response poll: a task the requests spawned, a connection's driver, a
    /// background job.
    Outside,
}

/// The samples taken while a claim recorded, counted by place and what was seen, with the
/// first stack read of each call a worker slept in at each place.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Calls {
    counts: BTreeMap<(Place, Seen), u32>,
    stacks: BTreeMap<(Place, Seen), Stack>,
    running: BTreeMap<Place, Vec<Stack>>,
    /// The longest sleep in a call at each place, as the kernel handed it over at the
    /// switch ([`crate::stack::Leaving`]): however short, every one is met.
    left: BTreeMap<Place, Left>,
}

impl Calls {
    /// The samples taken at `place`, commonest first.
    pub(crate) fn at(&self, place: &Place) -> Vec<(Seen, u32)> {
        let mut found: Vec<(Seen, u32)> = self
            .counts
            .iter()
            .filter(|((p, _), _)| p == place)
            .map(|((_, seen), &n)| (seen.clone(), n))
            .collect();
        found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        found
    }

    /// The commonest call the worker slept in at `place`, with its samples and all the
    /// samples that slept there; `None` where none slept.
    pub(crate) fn commonest_wait(&self, place: &Place) -> Option<(Seen, u32, u32)> {
        let waits: Vec<(Seen, u32)> = self
            .at(place)
            .into_iter()
            .filter(|(seen, _)| *seen != Seen::Running)
            .collect();
        let all = waits.iter().map(|(_, n)| n).sum();
        waits.into_iter().next().map(|(seen, n)| (seen, n, all))
    }

    /// The samples taken since `earlier`, a snapshot of the same recording.
    pub(crate) fn since(&self, earlier: &Calls) -> Calls {
        let mut counts = self.counts.clone();
        for (key, n) in counts.iter_mut() {
            *n = n.saturating_sub(earlier.counts.get(key).copied().unwrap_or(0));
        }
        counts.retain(|_, n| *n > 0);
        let stacks = self
            .stacks
            .iter()
            .filter(|(key, _)| counts.contains_key(key))
            .map(|(key, stack)| (key.clone(), stack.clone()))
            .collect();
        let running = self
            .running
            .iter()
            .map(|(place, stacks)| {
                let before = earlier.running.get(place).map_or(0, Vec::len);
                (
                    place.clone(),
                    stacks.iter().skip(before).cloned().collect::<Vec<_>>(),
                )
            })
            .filter(|(_, stacks)| !stacks.is_empty())
            .collect();
        // The longest so far, where it changed since `earlier`.
        let left = self
            .left
            .iter()
            .filter(|(place, left)| earlier.left.get(place) != Some(left))
            .map(|(place, left)| (place.clone(), left.clone()))
            .collect();
        Calls {
            counts,
            stacks,
            running,
            left,
        }
    }

    /// The longest sleep in a call at `place` the kernel handed over at the switch.
    pub(crate) fn left(&self, place: &Place) -> Option<&Left> {
        self.left.get(place)
    }

    /// Keeps `left` as the sleep of `place`, where it is longer than the one kept.
    pub(crate) fn add_left(&mut self, place: Place, left: &Left) {
        keep_longest(&mut self.left, place, left);
    }

    /// The stacks the kernel sampled of a worker computing at `place`.
    pub(crate) fn computing(&self, place: &Place) -> &[Stack] {
        self.running.get(place).map_or(&[], Vec::as_slice)
    }

    /// Keeps `stacks`, sampled of a worker computing at `place`, beside those kept.
    pub(crate) fn add_computing(&mut self, place: Place, stacks: &[Stack]) {
        let kept = self.running.entry(place).or_default();
        let room = MAX_RUNNING_STACKS.saturating_sub(kept.len());
        kept.extend(stacks.iter().take(room).cloned());
    }

    /// The stack read of a worker asleep in `seen` at `place`, where one was.
    pub(crate) fn stack(&self, place: &Place, seen: &Seen) -> Option<&Stack> {
        self.stacks.get(&(place.clone(), seen.clone()))
    }

    /// Keeps `stack` as the one of `seen` at `place`, unless one is kept.
    pub(crate) fn add_stack(&mut self, place: Place, seen: Seen, stack: &Stack) {
        self.stacks
            .entry((place, seen))
            .or_insert_with(|| stack.clone());
    }

    /// These samples and `other`'s, counted together.
    pub(crate) fn merge(&mut self, other: &Calls) {
        for (key, n) in &other.counts {
            *self.counts.entry(key.clone()).or_default() += n;
        }
        for (key, stack) in &other.stacks {
            self.stacks
                .entry(key.clone())
                .or_insert_with(|| stack.clone());
        }
        for (place, stacks) in &other.running {
            self.add_computing(place.clone(), stacks);
        }
        for (place, left) in &other.left {
            self.add_left(place.clone(), left);
        }
    }

    /// Counts `n` samples of `seen` at `place` in.
    pub(crate) fn add(&mut self, place: Place, seen: Seen, n: u32) {
        *self.counts.entry((place, seen)).or_default() += n;
    }
}

/// The workers' slots, the routes' names and the samples of a pool.
#[derive(Debug, Default)]
pub(crate) struct Sampler {
    slots: Mutex<Vec<Arc<Slot>>>,
    routes: Mutex<Vec<String>>,
    counts: Mutex<BTreeMap<(u32, Seen), u32>>,
    /// The first stack read of each call slept in at each place ([`crate::stack`]).
    stacks: Mutex<BTreeMap<(u32, Seen), Stack>>,
    /// The stacks the kernel sampled of the workers computing, by place (the first
    /// [`MAX_RUNNING_STACKS`] of each).
    running: Mutex<BTreeMap<u32, Vec<Stack>>>,
    /// The longest sleep in a call at each place, handed over at the switch.
    left: Mutex<BTreeMap<u32, Left>>,
    sampling: AtomicBool,
}

impl Sampler {
    /// A slot for the calling thread, where its kernel id is read.
    pub(crate) fn slot(&self) -> Option<Arc<Slot>> {
        let slot = Arc::new(Slot {
            tid: blocked_call::current()?,
            phase: AtomicU64::new(0),
        });
        let mut slots = lock(&self.slots);
        slots.retain(|s| Arc::strong_count(s) > 1);
        slots.push(Arc::clone(&slot));
        Some(slot)
    }

    /// The calling thread's slot in this sampler, made at its first call here: for a
    /// thread that is no pool's worker, polling through a watch layer (a test's own
    /// thread). Kept in the thread for as long as it lives, so that the sampler follows it.
    pub(crate) fn slot_here(self: &Arc<Self>) -> Option<Arc<Slot>> {
        thread_local! {
            static SLOTS: std::cell::RefCell<Vec<(std::sync::Weak<Sampler>, Arc<Slot>)>> =
                const { std::cell::RefCell::new(Vec::new()) };
        }
        SLOTS.with(|slots| {
            let mut slots = slots.borrow_mut();
            slots.retain(|(sampler, _)| sampler.strong_count() > 0);
            if let Some((_, slot)) = slots
                .iter()
                .find(|(sampler, _)| std::ptr::eq(sampler.as_ptr(), Arc::as_ptr(self)))
            {
                return Some(Arc::clone(slot));
            }
            let slot = self.slot()?;
            slots.push((Arc::downgrade(self), Arc::clone(&slot)));
            Some(slot)
        })
    }

    /// The number of route `path`, given at its first request.
    pub(crate) fn route(&self, path: &str) -> u32 {
        let mut routes = lock(&self.routes);
        let at = match routes.iter().position(|r| r == path) {
            Some(at) => at,
            None if routes.len() < MAX_ROUTES => {
                routes.push(path.to_string());
                routes.len() - 1
            }
            None => MAX_ROUTES - 1,
        };
        at as u32
    }

    /// Forgets the samples: a new recording begins.
    pub(crate) fn clear(&self) {
        lock(&self.counts).clear();
        lock(&self.stacks).clear();
        lock(&self.running).clear();
        lock(&self.left).clear();
    }

    /// Keeps `left`, a sleep in a poll of route `route` ([`Sampler::route`]), where it is
    /// the longest there.
    pub(crate) fn left(&self, route: u32, left: &Left) {
        keep_longest(&mut lock(&self.left), IN_ROUTE + route, left);
    }

    /// The samples so far.
    pub(crate) fn calls(&self) -> Calls {
        let routes = lock(&self.routes).clone();
        let place_of = |code: u32| match code.checked_sub(IN_ROUTE) {
            Some(r) => routes
                .get(r as usize)
                .map(|path| Place::Route(path.clone())),
            None => Some(Place::Outside),
        };
        let mut calls = Calls::default();
        for ((code, seen), &n) in lock(&self.counts).iter() {
            if let Some(place) = place_of(*code) {
                *calls.counts.entry((place, seen.clone())).or_default() += n;
            }
        }
        for ((code, seen), stack) in lock(&self.stacks).iter() {
            if let Some(place) = place_of(*code) {
                calls.stacks.insert((place, seen.clone()), stack.clone());
            }
        }
        for (code, stacks) in lock(&self.running).iter() {
            if let Some(place) = place_of(*code) {
                calls.add_computing(place, stacks);
            }
        }
        for (code, left) in lock(&self.left).iter() {
            if let Some(place) = place_of(*code) {
                calls.add_left(place, left);
            }
        }
        calls
    }

    /// Starts the sampling thread, unless one runs: it samples every [`TICK`] while
    /// `recording` says so, and ends when it no longer does.
    pub(crate) fn start(self: &Arc<Self>, recording: impl Fn() -> bool + Send + 'static) {
        if !blocked_call::available() || self.sampling.swap(true, Ordering::AcqRel) {
            return;
        }
        // The process's modules read, and the kernel asked to sample each worker while it
        // computes, here on the caller's thread, before the first tick: opening a worker's
        // events took 4.5 ms once, longer than a functional test's requests, and a
        // sampler waiting for it met none of them.
        Capturer::prepare();
        let mut reading = Reading::default();
        for slot in lock(&self.slots).iter() {
            reading.capturer.follow(slot.tid, false);
        }
        let sampler = Arc::clone(self);
        let (running, up) = std::sync::mpsc::sync_channel::<()>(1);
        let spawned = std::thread::Builder::new()
            .name("perfshape-sampler".into())
            .spawn(move || {
                let _ = running.send(());
                let mut tick = TICK;
                loop {
                    if !recording() {
                        sampler.sampling.store(false, Ordering::Release);
                        // A recording that began meanwhile, with this thread still
                        // running, started none of its own: carry on for it.
                        if recording() && !sampler.sampling.swap(true, Ordering::AcqRel) {
                            continue;
                        }
                        return;
                    }
                    std::thread::sleep(tick);
                    tick = if sampler.sample(&mut reading) {
                        TICK
                    } else {
                        IDLE_TICK
                    };
                }
            });
        match spawned {
            Ok(thread) => {
                // Real-time before it first runs, and running before the caller goes on: a
                // new thread on a busy machine waited for its first CPU longer than a
                // functional test's requests took (two requests, each spawning a 4 ms
                // sleep, met in no tick, once in 50 runs with both cores busy).
                real_time(&thread);
                let _ = up.recv_timeout(START_WAIT);
            }
            Err(_) => self.sampling.store(false, Ordering::Release),
        }
    }

    /// One sample of every worker that is not parked; whether any was not. A worker asleep
    /// in a call at a place where that call's stack is not yet read has it read now, once.
    fn sample(&self, reading: &mut Reading) -> bool {
        let Reading {
            reader,
            capturer,
            phases,
        } = reading;
        let slots = lock(&self.slots).clone();
        let mut active = false;
        for slot in slots {
            let before = slot.phase.load(Ordering::Acquire);
            let code = before as u32;
            // What the kernel sampled of the worker's computing since the last tick is of
            // this place where the worker crossed no boundary meanwhile.
            let computed = capturer.computed(slot.tid);
            let stayed = phases.insert(slot.tid, before) == Some(before);
            if stayed && code != PARKED && !computed.is_empty() {
                let mut running = lock(&self.running);
                let kept = running.entry(code).or_default();
                let room = MAX_RUNNING_STACKS.saturating_sub(kept.len());
                kept.extend(computed.into_iter().take(room));
            }
            if code == PARKED {
                continue;
            }
            active = true;
            capturer.follow(slot.tid, true);
            let Some((seen, line)) = reader.read_line(slot.tid) else {
                continue;
            };
            // The worker moved on while it was read: the sample is of neither place.
            if slot.phase.load(Ordering::Acquire) != before {
                continue;
            }
            let key = (code, seen);
            if matches!(key.1, Seen::Blocked(_)) && !lock(&self.stacks).contains_key(&key) {
                // Read while the worker still sleeps there, at the same place.
                if let Some(stack) = capturer.capture(slot.tid, &line)
                    && slot.phase.load(Ordering::Acquire) == before
                {
                    lock(&self.stacks).insert(key.clone(), stack);
                }
            }
            *lock(&self.counts).entry(key).or_default() += 1;
        }
        active
    }
}

/// What the sampling thread keeps from one tick to the next: the kernel's words for calls
/// and sockets, the stack reader, and each worker's place at the last tick.
#[derive(Debug, Default)]
struct Reading {
    reader: Reader,
    capturer: Capturer,
    phases: std::collections::HashMap<Tid, u64>,
}

/// Puts the sampling `thread` in the real-time class, where the process may
/// (`CAP_SYS_NICE`, as a root CI job has): a sampler that waits for a CPU behind a busy core
/// wakes when the worker's short wait is over, and on a machine with a core busy one claim
/// caught the worker asleep in none of 47 samples where its polls waited a third of their
/// time. It sleeps between samples and works ≈30 µs a tick, so it cannot hold a CPU. Where
/// it may not, it samples at the normal priority, and a short wait is met less often.
#[cfg(linux_reads)]
fn real_time(thread: &std::thread::JoinHandle<()>) {
    use std::os::unix::thread::JoinHandleExt as _;
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: the handle's thread has not been joined, so its pthread_t is valid; a refusal
    // (EPERM) leaves it as it was.
    unsafe { libc::pthread_setschedparam(thread.as_pthread_t(), libc::SCHED_FIFO, &param) };
}

#[cfg(not(linux_reads))]
fn real_time(_thread: &std::thread::JoinHandle<()>) {}

/// Keeps `left` under `key` in `kept`, where it is longer than the sleep kept there.
fn keep_longest<K: Ord>(kept: &mut BTreeMap<K, Left>, key: K, left: &Left) {
    match kept.get(&key) {
        Some(longer) if longer.off >= left.off => {}
        _ => {
            kept.insert(key, left.clone());
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::blocked_call::BlockedCall;

    #[test]
    fn the_commonest_wait_of_a_place_leaves_running_out() {
        let mut calls = Calls::default();
        let route = Place::Route("/login".into());
        calls.add(route.clone(), Seen::Running, 40);
        calls.add(route.clone(), Seen::Blocked(BlockedCall::Lock), 3);
        calls.add(route.clone(), Seen::Blocked(BlockedCall::Sleep), 9);
        calls.add(Place::Outside, Seen::Blocked(BlockedCall::Fault), 50);
        assert_eq!(
            calls.commonest_wait(&route),
            Some((Seen::Blocked(BlockedCall::Sleep), 9, 12))
        );
        assert_eq!(calls.at(&route)[0], (Seen::Running, 40));
        assert_eq!(calls.commonest_wait(&Place::Route("/other".into())), None);
    }

    /// A thread in a "poll of a route" that sleeps is sampled there, in its sleep; once it
    /// reads as parked it is no longer sampled.
    #[test]
    fn a_worker_sleeping_in_a_routes_poll_is_sampled_there() {
        if !blocked_call::available() {
            return;
        }
        let sampler = Arc::new(Sampler::default());
        let route = sampler.route("/slow");
        let recording = Arc::new(AtomicBool::new(true));
        let (slot_tx, slot_rx) = std::sync::mpsc::channel();
        let worker = {
            let sampler = Arc::clone(&sampler);
            std::thread::spawn(move || {
                let slot = sampler.slot().unwrap();
                slot.in_route(route);
                slot_tx.send(()).unwrap();
                std::thread::sleep(Duration::from_millis(60));
                slot.parked();
                std::thread::sleep(Duration::from_millis(30));
            })
        };
        slot_rx.recv().unwrap();
        let flag = Arc::clone(&recording);
        sampler.start(move || flag.load(Ordering::Acquire));
        std::thread::sleep(Duration::from_millis(50));
        let calls = sampler.calls();
        worker.join().unwrap();
        recording.store(false, Ordering::Release);
        let (seen, n, _) = calls
            .commonest_wait(&Place::Route("/slow".into()))
            .expect("the sleep sampled");
        assert_eq!(seen, Seen::Blocked(BlockedCall::Sleep), "{calls:?}");
        assert!(n >= 5, "{calls:?}");
        assert!(calls.at(&Place::Outside).is_empty(), "{calls:?}");
    }

    /// What the sampler costs, measured, not asserted (a time is no test's verdict): `cargo
    /// test --release --lib -p perfshape sampler_cost -- --ignored --nocapture` prints one
    /// kernel read of a blocked thread, and the process's CPU per second of sampling with
    /// one worker asleep in a poll (read every tick) and with it parked (woken, not read).
    #[cfg(linux_reads)]
    #[test]
    #[ignore = "a measurement: run it by name"]
    fn sampler_cost() {
        if !blocked_call::available() {
            return;
        }
        fn process_cpu() -> Duration {
            let mut t = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            // SAFETY: a valid timespec to fill.
            unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) };
            Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
        }
        for parked in [false, true] {
            let sampler = Arc::new(Sampler::default());
            let route = sampler.route("/slow");
            let (slot_tx, slot_rx) = std::sync::mpsc::channel();
            let worker = {
                let sampler = Arc::clone(&sampler);
                std::thread::spawn(move || {
                    let slot = sampler.slot().unwrap();
                    if parked {
                        slot.parked();
                    } else {
                        slot.in_route(route);
                    }
                    slot_tx.send(slot.tid).unwrap();
                    std::thread::sleep(Duration::from_millis(1300));
                })
            };
            let tid = slot_rx.recv().unwrap();
            let mut reader = Reader::default();
            let reads = 2000;
            let began = std::time::Instant::now();
            for _ in 0..reads {
                std::hint::black_box(reader.read(tid));
            }
            let per_read = began.elapsed() / reads;
            let recording = Arc::new(AtomicBool::new(true));
            let flag = Arc::clone(&recording);
            let (cpu, wall) = (process_cpu(), std::time::Instant::now());
            sampler.start(move || flag.load(Ordering::Acquire));
            std::thread::sleep(Duration::from_secs(1));
            recording.store(false, Ordering::Release);
            let used = process_cpu().saturating_sub(cpu);
            eprintln!(
                "worker {}: one read {per_read:?}; sampling took {used:?} of CPU in {:?} ({:.2} % of a core)",
                if parked { "parked" } else { "asleep in a poll" },
                wall.elapsed(),
                100.0 * used.as_secs_f64() / wall.elapsed().as_secs_f64()
            );
            worker.join().unwrap();
        }
    }
}
