//! One figure made of two measurements taken in the same round, in alternating order — the
//! interleaving a claim gives its sides, for a figure that needs more of each side than a
//! number (a fan-out's polls and a request alone's time).

use super::measure::Measure;
use super::notes::{Notes, noted};
use crate::error::Result;

impl<'a> Measure<'a> {
    /// A measure of a plain number made of two measurements of the same round: `first`
    /// then `second` in the first round, `second` then `first` in the next, and so on (A B,
    /// B A, …, as a claim interleaves its sides, so that drift of the machine falls on both
    /// alike); `figure` makes the round's figure, and a note of what it was made of, from
    /// both. The [`Notes`] returned beside the measure read the notes once the claim has
    /// decided.
    ///
    /// For a figure that a ratio of two numbers cannot give: a handler's waiting inside the
    /// polls of a fan-out, as a share of one request alone's time; or N concurrent requests
    /// against one alone, mapped to the share of each request that held its worker.
    ///
    /// ```
    /// use std::time::Duration;
    /// use perfshape::{Claim, claim::Measure, Verdict};
    ///
    /// // Stand-ins for timed runs: one request alone, and 20 concurrent on 1 worker.
    /// let n = 20.0;
    /// let (share, notes) = Measure::paired(
    ///     "held share of 20 concurrent",
    ///     || Ok(Duration::from_millis(20)),
    ///     || Ok(Duration::from_millis(21)),
    ///     move |alone, fan_out| {
    ///         let ratio = fan_out.as_secs_f64() / alone.as_secs_f64();
    ///         // N requests that each hold their worker a share b take 1 + b·(N − 1).
    ///         let held = ((ratio - 1.0) / (n - 1.0)).max(0.001);
    ///         Ok((held, format!("{ratio:.2}× one alone")))
    ///     },
    /// );
    /// let checked = Claim::figure("the handler does not hold its worker", share)
    ///     .at_most(0.05)
    ///     .artifacts_in(std::env::temp_dir().join("perfshape-doc-paired"))
    ///     .check()?;
    /// assert_eq!(checked.verdict(), Verdict::Holds);
    /// assert_eq!(notes.last().as_deref(), Some("1.05× one alone"));
    /// # Ok::<(), perfshape::Error>(())
    /// ```
    pub fn paired<A, B, N: Send + 'static>(
        label: &str,
        mut first: impl FnMut() -> Result<A> + Send + 'a,
        mut second: impl FnMut() -> Result<B> + Send + 'a,
        mut figure: impl FnMut(A, B) -> Result<(f64, N)> + Send + 'a,
    ) -> (Measure<'a>, Notes<N>) {
        let notes = Notes::new();
        // The rounds so far are the notes so far (a warm-up notes nothing): even, A B; odd, B A.
        let done = notes.clone();
        let measure = noted(label, notes.clone(), move || {
            let (a, b) = if done.len() % 2 == 0 {
                let a = first()?;
                (a, second()?)
            } else {
                let b = second()?;
                (first()?, b)
            };
            figure(a, b)
        });
        (measure, notes)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// A B, B A, … from the first round on: a warm-up (measured, not noted) shifts neither
    /// the order nor the notes.
    #[test]
    fn the_order_alternates_round_by_round() {
        let order = Arc::new(Mutex::new(String::new()));
        let (a, b) = (Arc::clone(&order), Arc::clone(&order));
        let (mut measure, notes) = Measure::paired(
            "a and b",
            move || {
                a.lock().unwrap().push('A');
                Ok(2.0)
            },
            move || {
                b.lock().unwrap().push('B');
                Ok(4.0)
            },
            |a: f64, b: f64| Ok((b / a, a + b)),
        );
        measure.warm_up().unwrap();
        assert_eq!(*order.lock().unwrap(), "AB");
        assert!(notes.is_empty());
        for _ in 0..4 {
            assert_eq!(measure.next().unwrap(), 2.0);
        }
        assert_eq!(*order.lock().unwrap(), "ABABBAABBA");
        assert_eq!(notes.to_vec(), vec![6.0; 4]);
    }

    #[test]
    fn a_side_that_fails_fails_the_round_and_notes_nothing() {
        let (mut measure, notes) = Measure::paired(
            "a and a failing b",
            || Ok(1.0),
            || Err::<f64, _>(crate::Error::CannotTell { what: "b".into() }),
            |a: f64, b: f64| Ok((a + b, ())),
        );
        assert!(measure.next().is_err());
        assert!(notes.is_empty());
    }
}
