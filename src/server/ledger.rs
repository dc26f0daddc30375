//! What a served router did for each request, whole: the polls of its service future *and*
//! of its response body (where a compression layer or a streamed body computes), recorded
//! when the body has been written, and found again by the number the request was given.
//!
//! A response's headers leave before its body is written, so what the body's polls cost
//! cannot travel in a header; the server runs in the claim's own process, so the claim reads
//! it here instead. Nothing is kept unless a claim is [recording](Ledger::recording): a
//! served router that no claim reads costs no memory and no reading of thread clocks.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::limits::MAX_REQUESTS;
use crate::thread_clock::PollTime;
use crate::vocab::Held;

/// The most responses kept at once while recording: two loads' worth. A claim takes what
/// its load's records name; a recording that nobody takes from stops growing here.
const MAX_KEPT: usize = 2 * MAX_REQUESTS;

/// The least a poll must hold its worker — computing and waiting — to be kept as a span: a
/// shorter one cannot keep another request waiting long enough to matter.
pub(crate) const SPAN_FLOOR: Duration = Duration::from_micros(100);

/// The most spans kept of one response (a streamed body may be polled thousands of times).
pub(crate) const MAX_SPANS: usize = 256;

/// One poll that held its worker at least [`SPAN_FLOOR`]: when it began, and what it was
/// made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PollSpan {
    /// When the poll began.
    pub(crate) at: Instant,
    /// Its time, split.
    pub(crate) time: PollTime,
}

impl PollSpan {
    /// The part of this poll inside `[from, to)`.
    pub(crate) fn overlap(&self, from: Instant, to: Instant) -> Duration {
        let end = self.at + self.time.wall;
        end.min(to).saturating_duration_since(self.at.max(from))
    }
}

/// One response, as the server saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Served {
    /// The request's method.
    pub(crate) method: String,
    /// The request's path (no query), as the server received it.
    pub(crate) path: String,
    /// The status it answered.
    pub(crate) status: u16,
    /// Every poll of the response: its service future's and its body's.
    pub(crate) held: Held,
    /// Its polls that held the worker at least [`SPAN_FLOOR`], at most [`MAX_SPANS`].
    pub(crate) spans: Vec<PollSpan>,
}

/// The numbers requests are given, and while any claim records, what each response did.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    next: AtomicU64,
    recorders: AtomicUsize,
    kept: Mutex<HashMap<u64, Served>>,
    arrived: Condvar,
}

/// While alive, the ledger keeps every response and the server reads its workers' thread
/// clocks in every poll; the last one dropped forgets what was kept.
#[derive(Debug)]
pub(crate) struct Recording(Arc<Ledger>);

impl Drop for Recording {
    fn drop(&mut self) {
        if self.0.recorders.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.0.lock().clear();
        }
    }
}

impl Ledger {
    /// The next request's number.
    pub(crate) fn next_seq(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// How many requests the server has started, ever: each takes its number as its
    /// handler is first polled.
    pub(crate) fn started(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }

    /// Whether any claim is recording now.
    pub(crate) fn recording(&self) -> bool {
        self.recorders.load(Ordering::Acquire) > 0
    }

    /// Starts recording, until the returned guard is dropped.
    pub(crate) fn record(self: &Arc<Self>) -> Recording {
        self.recorders.fetch_add(1, Ordering::AcqRel);
        Recording(Arc::clone(self))
    }

    /// Keeps what response `seq` did, while recording.
    pub(crate) fn keep(&self, seq: u64, served: Served) {
        if !self.recording() {
            return;
        }
        let mut kept = self.lock();
        if kept.len() < MAX_KEPT {
            kept.insert(seq, served);
            self.arrived.notify_all();
        }
    }

    /// Adds the polls of response `seq`'s body to what was kept of it, if it still is (a
    /// watch layer keeps a response when its future is ready, and its body may be read
    /// after the watch decided).
    pub(crate) fn amend(&self, seq: u64, held: &Held, spans: &[PollSpan]) {
        if let Some(served) = self.lock().get_mut(&seq) {
            served.held.merge(held);
            let room = MAX_SPANS.saturating_sub(served.spans.len());
            served.spans.extend(spans.iter().take(room).copied());
        }
    }

    /// What the responses numbered `seqs` did, taken out of the ledger, waiting up to
    /// `patience` for those whose bodies are still being written (a response reaches its
    /// client a moment before the server drops its body). `None` for one never recorded.
    pub(crate) fn take(&self, seqs: &[u64], patience: Duration) -> Vec<Option<Served>> {
        let deadline = Instant::now() + patience;
        let mut kept = self.lock();
        while seqs.iter().any(|seq| !kept.contains_key(seq)) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            kept = self
                .arrived
                .wait_timeout(kept, left)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|p| p.into_inner().0);
        }
        seqs.iter().map(|seq| kept.remove(seq)).collect()
    }

    /// Every response numbered from `first` on that the server has started so far, taken
    /// out of the ledger in order — waiting up to `patience` for those whose bodies are
    /// still being written — and how many of them never were recorded (a connection gone
    /// before its body was written).
    pub(crate) fn take_since(&self, first: u64, patience: Duration) -> (Vec<Served>, usize) {
        let seqs: Vec<u64> = (first..self.started()).collect();
        let taken = self.take(&seqs, patience);
        let missing = taken.iter().filter(|s| s.is_none()).count();
        (taken.into_iter().flatten().collect(), missing)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Served>> {
        self.kept.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(path: &str) -> Served {
        Served {
            method: "GET".into(),
            path: path.into(),
            status: 200,
            held: Held::default(),
            spans: Vec::new(),
        }
    }

    #[test]
    fn only_a_recording_keeps_and_its_end_forgets() {
        let ledger = Arc::new(Ledger::default());
        ledger.keep(0, served("/a"));
        let recording = ledger.record();
        ledger.keep(1, served("/b"));
        ledger.keep(2, served("/c"));
        let taken = ledger.take(&[0, 1], Duration::ZERO);
        assert_eq!(taken, vec![None, Some(served("/b"))]);
        drop(recording);
        let _again = ledger.record();
        assert_eq!(ledger.take(&[2], Duration::ZERO), vec![None]);
    }

    #[test]
    fn a_take_waits_for_a_body_still_being_written() {
        let ledger = Arc::new(Ledger::default());
        let _recording = ledger.record();
        let writer = Arc::clone(&ledger);
        let late = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            writer.keep(7, served("/late"));
        });
        assert_eq!(
            ledger.take(&[7], Duration::from_secs(5)),
            vec![Some(served("/late"))]
        );
        late.join().unwrap();
    }
}
