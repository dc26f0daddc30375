//! A served pool's workers watched for the whole of a claim: what share of the time they
//! slept in the kernel outside every response's polls, with no load and round by round.
//!
//! A task the requests spawned runs after their responses, and a background job (a cache
//! refresher, a pool's maintenance) runs whether or not any request is in flight: what they
//! take from the workers is time, not a request's share. So where the service was built on
//! its served pool ([`Target::serve_with`](crate::Target::serve_with): what its builder
//! spawned runs there), the watch first reads the workers with no load from perfshape for
//! [`IDLE_READING`] — a background job that wakes a few times a second shows there; then,
//! for every served router, it covers every moment of the claim, round after round: each
//! round's share is the workers' waiting from the end of the last round's window to the end
//! of its own, over that time. A fan-out of fast requests lasts a few milliseconds, and a job
//! that wakes every 20 ms meets only some rounds' windows; the idle reading meets it in
//! every claim.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::pool::timeline::{Recording, Sampling};
use crate::server::Server;

/// How long the workers are read with no load as a claim's watch begins: long enough to
/// meet a background job that wakes ten times a second, short beside a claim.
pub(crate) const IDLE_READING: Duration = Duration::from_millis(100);

/// The workers' timeline recorded from a claim's first round to its end (the watch's drop).
#[derive(Clone, Debug, Default)]
pub(crate) struct WorkerWatch {
    watching: Arc<Mutex<Option<Watching>>>,
}

#[derive(Debug)]
struct Watching {
    _recording: Recording,
    /// What the workers are blocked in is sampled for as long.
    _sampling: Sampling,
    /// Where the next round's window begins.
    from: Instant,
    /// The workers' waiting over [`IDLE_READING`] with no load, where it was read.
    idle: Option<Duration>,
}

impl WorkerWatch {
    /// Starts watching `server`'s workers, if not yet: where the service was built on its
    /// pool, reads them with no load for [`IDLE_READING`] first (100 ms a claim: not spent
    /// where no builder could have left a task there); the first round's window begins
    /// then.
    pub(crate) fn begin(&self, server: &Server) {
        let mut watching = self.lock();
        if watching.is_none() {
            let timeline = server.pool().timeline();
            let recording = timeline.record();
            let sampling = timeline.sample();
            let idle = server.runs_its_own_tasks().then(|| {
                let from = Instant::now();
                std::thread::sleep(IDLE_READING);
                timeline.waiting_within(from, Instant::now())
            });
            *watching = Some(Watching {
                _recording: recording,
                _sampling: sampling,
                from: Instant::now(),
                idle,
            });
        }
    }

    /// The share of the time since the last window ended that `server`'s workers waited
    /// outside any response — or, where more, the share they waited with no load — and the
    /// next window begins now. `None` before [`begin`](Self::begin).
    pub(crate) fn share(&self, server: &Server) -> Option<f64> {
        let mut watching = self.lock();
        let watching = watching.as_mut()?;
        let now = Instant::now();
        let waited = server.pool().timeline().waiting_within(watching.from, now);
        let length = now
            .saturating_duration_since(watching.from)
            .max(Duration::from_micros(1));
        watching.from = now;
        let idle = watching.idle.unwrap_or_default();
        Some((waited.as_secs_f64() / length.as_secs_f64()).max(idle_share(idle)))
    }

    /// The workers' waiting over [`IDLE_READING`] with no load, once the watch has begun
    /// and where it was read.
    pub(crate) fn idle(&self) -> Option<Duration> {
        self.lock().as_ref().and_then(|w| w.idle)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Watching>> {
        self.watching.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The share of [`IDLE_READING`] that `idle` is.
fn idle_share(idle: Duration) -> f64 {
    idle.as_secs_f64() / IDLE_READING.as_secs_f64()
}
