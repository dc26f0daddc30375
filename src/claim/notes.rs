//! What a claim's side notes about each round besides its figure — the polls behind a
//! share, a probe's sweep, the machine meanwhile — for the claim's sentences and its
//! artifact, which are written after the rounds.

use std::sync::{Arc, Mutex, MutexGuard};

use super::measure::{Call, Measure};
use crate::error::Result;
use crate::outcome::Unit;

/// Notes a measure keeps, one per round (or per call), read once the claim has decided:
/// a clone is a handle to the same notes, so the measure that writes them and the
/// [`explain`](super::Claim::explain) or [`observed`](super::Claim::observed) closure that
/// reads them each own one.
///
/// [`Measure::noting`] makes a measure that notes something every round it gives a figure;
/// a measure that must note a round it refuses too (the reason a probe could not tell)
/// pushes to a `Notes` of its own.
///
/// ```
/// use perfshape::{Claim, claim::Measure};
///
/// // A figure per round, and what it was made of.
/// let (measure, notes) = Measure::noting("requests per connection", || {
///     let (requests, connections) = (40.0, 8.0);
///     Ok((requests / connections, format!("{requests} requests on {connections} connections")))
/// });
/// let checked = Claim::figure("connections are reused", measure)
///     .at_least(2.0)
///     .explain(move |_| notes.to_vec().into_iter().take(1).collect())
///     .artifacts_in(std::env::temp_dir().join("perfshape-doc-notes"))
///     .check()?;
/// assert_eq!(checked.report().explanation()[0], "40 requests on 8 connections");
/// # Ok::<(), perfshape::Error>(())
/// ```
pub struct Notes<N>(Arc<Mutex<Vec<N>>>);

impl<N> Clone for Notes<N> {
    fn clone(&self) -> Self {
        Notes(Arc::clone(&self.0))
    }
}

impl<N> Default for Notes<N> {
    fn default() -> Self {
        Notes(Arc::default())
    }
}

impl<N> std::fmt::Debug for Notes<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notes").field("len", &self.len()).finish()
    }
}

impl<N> Notes<N> {
    /// No notes yet.
    pub fn new() -> Self {
        Notes::default()
    }

    /// Adds one note.
    pub fn push(&self, note: N) {
        self.notes().push(note);
    }

    /// How many notes there are.
    pub fn len(&self) -> usize {
        self.notes().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads the notes in the order they were added.
    pub fn with<R>(&self, read: impl FnOnce(&[N]) -> R) -> R {
        read(&self.notes())
    }

    /// A copy of the notes, in order.
    pub fn to_vec(&self) -> Vec<N>
    where
        N: Clone,
    {
        self.notes().clone()
    }

    /// The last note added.
    pub fn last(&self) -> Option<N>
    where
        N: Clone,
    {
        self.notes().last().cloned()
    }

    /// The notes, locked. A note is pushed whole, so a measure that panicked while another
    /// thread held the lock cannot have left half of one: a poisoned lock's notes are
    /// sound, and reading them reports what was measured rather than a second panic.
    fn notes(&self) -> MutexGuard<'_, Vec<N>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<'a> Measure<'a> {
    /// A measure of a plain number, as [`Measure::value`], that notes what each figure was
    /// made of: `f` returns the figure and its note, and the [`Notes`] returned beside the
    /// measure read them once the claim has decided — one per round: a warm-up that
    /// measures (no [`warm_with`](Measure::warm_with)) is not noted.
    pub fn noting<N: Send + 'static>(
        label: &str,
        f: impl FnMut() -> Result<(f64, N)> + Send + 'a,
    ) -> (Measure<'a>, Notes<N>) {
        let notes = Notes::new();
        (noted(label, notes.clone(), f), notes)
    }
}

/// A measure of a plain number whose rounds push their notes to `notes` (its warm-up's
/// figure and note are dropped).
pub(super) fn noted<'a, N: Send + 'static>(
    label: &str,
    notes: Notes<N>,
    mut f: impl FnMut() -> Result<(f64, N)> + Send + 'a,
) -> Measure<'a> {
    Measure::new(
        label,
        Unit::Plain,
        Box::new(move |call| {
            let (figure, note) = f()?;
            if call == Call::Round {
                notes.push(note);
            }
            Ok(figure)
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warm_up_is_measured_but_not_noted() {
        let mut calls = 0;
        let (mut measure, notes) = Measure::noting("calls", move || {
            calls += 1;
            Ok((f64::from(calls), calls))
        });
        measure.warm_up().unwrap();
        assert_eq!(measure.next().unwrap(), 2.0);
        assert_eq!(notes.to_vec(), vec![2]);
    }
}
