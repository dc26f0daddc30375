//! The claims perfshape makes about the five experiments, each with its negative control.
//!
//! Every entry checks one or a few claims (that share their rounds) on perfshape's demo
//! service, written on the same public API a user writes. With [`Setup::Claimed`] the
//! claims run as stated and must hold: `tests/shape/` snapshots them. With
//! [`Setup::Control`] the same claims — same names, same bands, same expectations — run on
//! a deliberately wrong setup (an async wait made blocking, the cap removed, a pool of 4
//! where 1 is claimed) and must come out broken: that is the proof that each claim can
//! fail. `tests/controls/` and `perfshape selftest` run the controls.

pub mod compare;
pub mod endpoints;
pub mod k6;
pub mod locust;
pub mod loops;
mod offered;
pub mod pools;
pub mod scheduler;
pub mod seed000;
pub mod seed001;
pub mod seed002;
pub mod seed003;
pub mod seed004;
pub mod strategies;
pub mod tables;

use std::time::Duration;

use crate::error::{Error, Result};
use perfshape::claim::{Checked, Verdict};
use perfshape::runtime::{PoolSettings, Scheduler};

/// The claims of an entry, each with the name its snapshot goes by.
pub type Shapes = Vec<(String, Checked)>;

/// Whether an entry's claims run as claimed, or as their negative control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setup {
    /// The setup the claims state: they must hold.
    Claimed,
    /// A deliberately wrong setup under the same claims: they must break.
    Control,
}

impl Setup {
    /// `claimed` as claimed, `control` as the control.
    pub fn pick<T>(self, claimed: T, control: T) -> T {
        match self {
            Setup::Claimed => claimed,
            Setup::Control => control,
        }
    }
}

/// One entry of the catalog.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// `module::function`, as the test that runs it is named.
    pub name: &'static str,
    /// The deliberately wrong setup of its control, in words.
    pub control: &'static str,
    /// Checks the entry's claims on a setup.
    pub run: fn(Setup) -> Result<Shapes>,
}

/// Every entry, in the order `perfshape selftest` runs them.
pub fn entries() -> Vec<Entry> {
    [
        seed000::ENTRIES,
        seed001::ENTRIES,
        seed002::ENTRIES,
        seed003::ENTRIES,
        seed004::ENTRIES,
        pools::ENTRIES,
        strategies::ENTRIES,
        loops::ENTRIES,
        endpoints::ENTRIES,
        compare::ENTRIES,
        scheduler::ENTRIES,
        tables::ENTRIES,
        locust::ENTRIES,
        k6::ENTRIES,
    ]
    .concat()
}

/// Fails unless every claim came out broken: what a negative control must show.
///
/// ```no_run
/// use perfshape_experiments::catalog::{Setup, expect_broken, seed000};
///
/// expect_broken(&seed000::c1(Setup::Control)?)?;
/// # Ok::<(), perfshape_experiments::Error>(())
/// ```
pub fn expect_broken(shapes: &Shapes) -> Result<()> {
    let not_broken: Vec<String> = shapes
        .iter()
        .filter(|(_, checked)| checked.verdict() != Verdict::Broken)
        .map(|(name, checked)| {
            format!(
                "{name}: {} where its control must break\n{}",
                checked.verdict(),
                checked.report()
            )
        })
        .collect();
    if not_broken.is_empty() {
        Ok(())
    } else {
        Err(Error::gate(format!(
            "a negative control did not come out broken:\n{}",
            not_broken.join("\n\n")
        )))
    }
}

/// A pool of `workers` with tokio's default blocking cap, on the scheduler under which the
/// model's one-wave fan-outs hold ([`Scheduler::one_wave`]: eager driver hand-off where
/// this build has it; `docs/coscheduling.md`).
fn workers(workers: usize) -> Result<PoolSettings> {
    Ok(PoolSettings::workers(workers)?.with_scheduler(Scheduler::one_wave())?)
}

/// A pool of `workers` and a blocking cap of `max_blocking`, as [`workers`] does.
fn pool(workers: usize, max_blocking: usize) -> Result<PoolSettings> {
    Ok(PoolSettings::new(workers, max_blocking)?.with_scheduler(Scheduler::one_wave())?)
}

/// Milliseconds.
fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// A named claim, for [`Shapes`].
fn shape(name: &str, checked: Checked) -> (String, Checked) {
    (name.to_string(), checked)
}
