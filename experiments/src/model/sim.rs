//! The discrete-event engine behind [`Model::predict`](super::Model::predict).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Duration;

use super::{Model, Offered};
use crate::vocab::Phase;

/// What a simulation returns.
pub(super) struct Outcome {
    pub(super) sent: usize,
    pub(super) dropped: usize,
    pub(super) timeline: Vec<(Duration, Duration)>,
    pub(super) canary_latency: Option<Duration>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// The request's current phase is over.
    PhaseDone(usize),
    /// A closed-loop user sends its next request.
    UserSends(usize),
    /// An open-loop arrival is due.
    Arrival(usize),
    /// The canary is sent.
    Probe,
}

struct Request {
    intended: u64,
    phase: usize,
    user: Option<usize>,
    canary: bool,
}

/// The canary: a `/health` request needs a worker for no time.
const PROBE_PHASES: [Phase; 1] = [Phase::Worker(Duration::ZERO)];

struct Sim<'m> {
    model: &'m Model,
    phases: Vec<Phase>,
    now: u64,
    seq: u64,
    events: BinaryHeap<Reverse<(u64, u64, Event)>>,
    requests: Vec<Request>,
    free_workers: usize,
    worker_queue: VecDeque<usize>,
    free_blocking: usize,
    blocking_queue: VecDeque<usize>,
    lock_free: bool,
    lock_queue: VecDeque<usize>,
    free_connections: usize,
    connection_queue: VecDeque<usize>,
    stack_free: bool,
    stack_queue: VecDeque<usize>,
    in_flight: usize,
    next_index: usize,
    dropped: usize,
    timeline: Vec<(Duration, Duration)>,
    canary_latency: Option<Duration>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

pub(super) fn simulate(model: &Model) -> Outcome {
    let mut sim = Sim {
        model,
        phases: model.phases(),
        now: 0,
        seq: 0,
        events: BinaryHeap::new(),
        requests: Vec::new(),
        free_workers: model.pool.workers,
        worker_queue: VecDeque::new(),
        free_blocking: model.pool.max_blocking,
        blocking_queue: VecDeque::new(),
        lock_free: true,
        lock_queue: VecDeque::new(),
        free_connections: model.connection_cap.unwrap_or(usize::MAX),
        connection_queue: VecDeque::new(),
        stack_free: true,
        stack_queue: VecDeque::new(),
        in_flight: 0,
        next_index: 0,
        dropped: 0,
        timeline: Vec::new(),
        canary_latency: None,
    };
    if let Some(after) = model.canary {
        sim.schedule(nanos(after), Event::Probe);
    }
    match model.offered {
        Offered::Concurrent { n, concurrency } => {
            for _ in 0..concurrency.min(n) {
                sim.next_index += 1;
                sim.issue(None);
            }
        }
        Offered::ClosedLoop {
            users,
            ramp,
            duration,
            ..
        } => {
            for user in 0..users {
                let start = nanos(ramp) / users as u64 * user as u64;
                if start <= nanos(duration) {
                    sim.schedule(start, Event::UserSends(user));
                }
            }
        }
        Offered::OpenLoop { rate, n, .. } => {
            for i in 0..n {
                let at = (i as f64 * 1e9 / rate).round() as u64;
                sim.schedule(at, Event::Arrival(i));
            }
        }
    }
    while let Some(Reverse((at, _, event))) = sim.events.pop() {
        sim.now = at;
        match event {
            Event::PhaseDone(r) => sim.phase_done(r),
            Event::UserSends(user) => sim.issue(Some(user)),
            Event::Probe => {
                let r = sim.requests.len();
                sim.requests.push(Request {
                    intended: sim.now,
                    phase: 0,
                    user: None,
                    canary: true,
                });
                sim.enter_phase(r);
            }
            Event::Arrival(_) => {
                let max = match model.offered {
                    Offered::OpenLoop { max_in_flight, .. } => max_in_flight,
                    _ => usize::MAX,
                };
                if sim.in_flight >= max {
                    sim.dropped += 1;
                } else {
                    sim.issue(None);
                }
            }
        }
    }
    let canaries = usize::from(model.canary.is_some());
    Outcome {
        sent: sim.requests.len() - canaries + sim.dropped,
        dropped: sim.dropped,
        timeline: sim.timeline,
        canary_latency: sim.canary_latency,
    }
}

impl Sim<'_> {
    /// The phase request `r` is in, if it has one left.
    fn phase_of(&self, r: usize) -> Option<Phase> {
        let request = &self.requests[r];
        let phases: &[Phase] = if request.canary {
            &PROBE_PHASES
        } else {
            &self.phases
        };
        phases.get(request.phase).copied()
    }

    fn schedule(&mut self, at: u64, event: Event) {
        self.seq += 1;
        self.events.push(Reverse((at, self.seq, event)));
    }

    /// A request is sent now: it needs a connection first.
    fn issue(&mut self, user: Option<usize>) {
        let r = self.requests.len();
        self.requests.push(Request {
            intended: self.now,
            phase: 0,
            user,
            canary: false,
        });
        self.in_flight += 1;
        if self.free_connections > 0 {
            self.free_connections -= 1;
            self.enter_phase(r);
        } else {
            self.connection_queue.push_back(r);
        }
    }

    fn enter_phase(&mut self, r: usize) {
        let Some(phase) = self.phase_of(r) else {
            self.complete(r);
            return;
        };
        match phase {
            Phase::Worker(d) | Phase::Locked(d) => {
                if self.free_workers > 0 {
                    self.free_workers -= 1;
                    self.got_worker(r, phase, d);
                } else {
                    self.worker_queue.push_back(r);
                }
            }
            Phase::Wait(d) => self.schedule(self.now + nanos(d), Event::PhaseDone(r)),
            Phase::Stack(d) => {
                if self.stack_free {
                    self.stack_free = false;
                    self.schedule(self.now + nanos(d), Event::PhaseDone(r));
                } else {
                    self.stack_queue.push_back(r);
                }
            }
            Phase::Offload(d) => {
                if self.free_blocking > 0 {
                    self.free_blocking -= 1;
                    self.schedule(self.now + nanos(d), Event::PhaseDone(r));
                } else {
                    self.blocking_queue.push_back(r);
                }
            }
        }
    }

    fn got_worker(&mut self, r: usize, phase: Phase, d: Duration) {
        if matches!(phase, Phase::Locked(_)) && !self.lock_free {
            // Waiting for the lock blocks the worker it holds.
            self.lock_queue.push_back(r);
            return;
        }
        if matches!(phase, Phase::Locked(_)) {
            self.lock_free = false;
        }
        self.schedule(self.now + nanos(d), Event::PhaseDone(r));
    }

    fn phase_done(&mut self, r: usize) {
        match self.phase_of(r).expect("a phase that is done exists") {
            Phase::Worker(_) => self.release_worker(),
            Phase::Wait(_) => {}
            Phase::Offload(_) => self.release_blocking(),
            Phase::Stack(_) => self.release_stack(),
            Phase::Locked(_) => {
                match self.lock_queue.pop_front() {
                    Some(next) => {
                        // It already holds a worker; it takes the lock now.
                        let Some(Phase::Locked(d)) = self.phase_of(next) else {
                            unreachable!("only Locked phases wait for the lock")
                        };
                        self.schedule(self.now + nanos(d), Event::PhaseDone(next));
                    }
                    None => self.lock_free = true,
                }
                self.release_worker();
            }
        }
        self.requests[r].phase += 1;
        self.enter_phase(r);
    }

    fn release_worker(&mut self) {
        match self.worker_queue.pop_front() {
            Some(next) => {
                let phase = self.phase_of(next).expect("a queued request has a phase");
                let (Phase::Worker(d) | Phase::Locked(d)) = phase else {
                    unreachable!("only worker phases queue for workers")
                };
                self.got_worker(next, phase, d);
            }
            None => self.free_workers += 1,
        }
    }

    fn release_stack(&mut self) {
        match self.stack_queue.pop_front() {
            Some(next) => {
                let Some(Phase::Stack(d)) = self.phase_of(next) else {
                    unreachable!("only stack phases queue for the stack")
                };
                self.schedule(self.now + nanos(d), Event::PhaseDone(next));
            }
            None => self.stack_free = true,
        }
    }

    fn release_blocking(&mut self) {
        match self.blocking_queue.pop_front() {
            Some(next) => {
                let Some(Phase::Offload(d)) = self.phase_of(next) else {
                    unreachable!("only offload phases queue for blocking threads")
                };
                self.schedule(self.now + nanos(d), Event::PhaseDone(next));
            }
            None => self.free_blocking += 1,
        }
    }

    fn complete(&mut self, r: usize) {
        let request = &self.requests[r];
        if request.canary {
            self.canary_latency = Some(Duration::from_nanos(self.now - request.intended));
            return;
        }
        self.timeline.push((
            Duration::from_nanos(request.intended),
            Duration::from_nanos(self.now),
        ));
        let user = request.user;
        self.in_flight -= 1;
        match self.connection_queue.pop_front() {
            Some(next) => self.enter_phase(next),
            None => self.free_connections = self.free_connections.saturating_add(1),
        }
        match self.model.offered {
            Offered::Concurrent { n, .. } if self.next_index < n => {
                self.next_index += 1;
                self.issue(None);
            }
            Offered::ClosedLoop {
                think, duration, ..
            } => {
                let next = self.now + nanos(think);
                if let Some(user) = user
                    && next <= nanos(duration)
                {
                    self.schedule(next, Event::UserSends(user));
                }
            }
            _ => {}
        }
    }
}
