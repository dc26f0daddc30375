//! Where a watch reads what was served: a target perfshape serves, whose pool's workers are
//! clocked whole, or a router under a [`WatchLayer`](super::WatchLayer), whose responses'
//! polls are all that is seen.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::layer;
use super::{JOBS_WITHIN, RECORDED_WITHIN, SETTLED_WITHIN};
use crate::pool::sampler::Calls;
use crate::pool::timeline;
use crate::server::ledger;
use crate::target::Target;

/// What a watch reads its requests from.
#[derive(Debug)]
pub(super) enum Source {
    /// A target perfshape serves: its responses, and its pool's workers whole.
    Served {
        target: Target,
        _workers: timeline::Recording,
        _calls: timeline::Sampling,
    },
    /// A router under a [`WatchLayer`](super::WatchLayer): its responses' polls, on whatever thread ran them.
    Layer(Arc<layer::Layered>),
}

/// What a watch's source recorded, read at its end.
pub(super) struct Watched {
    /// Every response started since the watch began.
    pub(super) served: Vec<ledger::Served>,
    /// The responses started and never finished.
    pub(super) unrecorded: usize,
    /// The workers' stretches outside every response that slept or waited.
    pub(super) outside: Vec<timeline::Segment>,
    /// What the threads were sampled in.
    pub(super) calls: Calls,
}

impl Source {
    /// What was seen of the requests numbered from `first` on, and of the workers since
    /// `from`.
    pub(super) fn watched(&self, first: u64, from: Instant) -> Watched {
        match self {
            Source::Served { target, .. } => {
                let server = target.served().expect("a served target's watch");
                if server.runs_its_own_tasks() {
                    std::thread::sleep(JOBS_WITHIN.saturating_sub(from.elapsed()));
                }
                let (served, unrecorded) = server.ledger().take_since(first, RECORDED_WITHIN);
                server.pool().settled_activity(SETTLED_WITHIN);
                let timeline = server.pool().timeline();
                let outside = timeline
                    .since(from)
                    .into_iter()
                    .filter(|s| s.time.slept || s.time.waiting > Duration::ZERO)
                    .collect();
                Watched {
                    served,
                    unrecorded,
                    outside,
                    calls: timeline.calls(),
                }
            }
            Source::Layer(layered) => {
                // Each response was kept when its future was ready: the test awaited them
                // all before it asked, and nothing is still being written.
                let (served, unrecorded) = layered.ledger.take_since(first, Duration::ZERO);
                Watched {
                    served,
                    unrecorded,
                    outside: Vec::new(),
                    calls: layered.sampler.calls(),
                }
            }
        }
    }

    /// Whether the target takes the processes it talks to on this machine as production's
    /// ([`Target::local_downstreams_are_production`]); a layered router has no target to
    /// say so.
    pub(super) fn local_is_production(&self) -> bool {
        match self {
            Source::Served { target, .. } => target.local_is_production(),
            Source::Layer(_) => false,
        }
    }

    /// What was watched, in a report's words.
    pub(super) fn describe(&self) -> String {
        match self {
            Source::Served { target, .. } => target.to_string(),
            Source::Layer(_) => "a router under a WatchLayer".to_string(),
        }
    }
}

/// Reads this process's connections to other local processes around each poll from now on
/// ([`crate::local_traffic`]): where a query left inside a poll — where none is open,
/// nothing is read; and, for each timed poll, which thread woke its task
/// ([`crate::thread_clock::woken`]): a lock's holder preempted.
pub(super) fn follow_this_process() {
    crate::thread_clock::woken::watch();
    crate::local_traffic::follow(crate::local_downstream::local_sockets(
        &crate::downstream::onward_ports(),
    ));
}
