//! A load of in-process waits (seed 002): no HTTP, N waits on a pool, with the model of
//! the fan-out that holds what they hold.

use std::time::Duration;

use crate::error::Result;
use crate::model::{Model, Prediction};
use crate::vocab::InProcess;
use perfshape::claim::{Expected, Measure};
use perfshape::client::ClientStrategy;
use perfshape::runtime::Pool;
use perfshape::runtime::PoolSettings;

/// N in-process waits (seed 002) on a pool: the same model as a fan-out of N requests to
/// the server strategy that holds what the waits hold.
///
/// ```
/// use std::time::Duration;
/// use perfshape::{Claim, runtime::Pool};
/// use perfshape_experiments::inproc::InProcess;
/// use perfshape_experiments::load::InProcessLoad;
///
/// let pool = Pool::workers("inproc", 1)?;
/// let aio = InProcessLoad::new(&pool, InProcess::Aio, 100, Duration::from_millis(10))?;
/// assert_eq!(aio.prediction().wall, Duration::from_millis(10));
/// # Ok::<(), perfshape_experiments::Error>(())
/// ```
#[derive(Debug)]
pub struct InProcessLoad<'p> {
    pool: &'p Pool,
    /// What the measures state (and the model predicts).
    strategy: InProcess,
    /// What runs: the strategy itself, except in a negative control.
    runs: InProcess,
    n: usize,
    work: Duration,
    model: Model,
    prediction: Prediction,
}

impl<'p> InProcessLoad<'p> {
    /// `n` waits of `work` with `strategy` on `pool`.
    pub fn new(pool: &'p Pool, strategy: InProcess, n: usize, work: Duration) -> Result<Self> {
        perfshape::__support::check_range("n", n, 1, perfshape::runtime::MAX_REQUESTS, "")?;
        let model = in_process_model(strategy, pool.settings(), n, work);
        let prediction = model.predict()?;
        Ok(InProcessLoad {
            pool,
            strategy,
            runs: strategy,
            n,
            work,
            model,
            prediction,
        })
    }

    /// The same waits with another strategy, on the same pool.
    pub fn with(&self, strategy: InProcess) -> Result<InProcessLoad<'p>> {
        InProcessLoad::new(self.pool, strategy, self.n, self.work)
    }

    /// The same claims on `wrong` waits: a negative control, measured while the measures
    /// still state (and expect) this load's strategy.
    #[must_use]
    pub fn running(mut self, wrong: InProcess) -> Self {
        self.runs = wrong;
        self
    }

    /// What the model predicts.
    pub fn prediction(&self) -> &Prediction {
        &self.prediction
    }

    /// The wall time of all the waits; expects the model's wall.
    pub fn wall(&self) -> Measure<'_> {
        let expected = Expected::duration(self.prediction.wall, self.model.to_string());
        Measure::duration(&format!("in-process {}", self.strategy), move || {
            Ok(self.runs.run(self.pool, self.n, self.work)?)
        })
        .expecting(expected)
        .floor(self.prediction.wall)
        .context("pool", self.pool.settings())
        .context("n", self.n)
        .context("work", format!("{} ms", self.work.as_millis()))
    }
}

/// The model of `n` in-process waits: a fan-out to the server strategy that holds what
/// the waits hold.
pub(crate) fn in_process_model(
    strategy: InProcess,
    pool: PoolSettings,
    n: usize,
    work: Duration,
) -> Model {
    Model::of(strategy.holds_like(), pool, work, ClientStrategy::FanOut, n)
}
