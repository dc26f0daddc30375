//! seed 002 — AIO vs BIO, in-process — as shape claims.
//!
//! Timing tests: in the nextest `shape` group, never retried (see shape_seed000.rs).

mod common;

use std::time::Duration;

use common::{model_ratio, ms, with_context};
use perfshape::{
    Checked, Claim, ClientStrategy, Expected, InProcess, Measure, Model, Pool, PoolSettings,
    Result, ServerStrategy,
};

/// One in-process strategy, checked twice: its wall against the model (`bound`), and
/// against timer waits of the same load (`at_least` × slower than AIO).
struct Case {
    name: &'static str,
    strategy: InProcess,
    /// The model's handler that holds what the strategy holds.
    like: ServerStrategy,
    settings: PoolSettings,
    n: usize,
    work: Duration,
    work_text: &'static str,
    bound: (f64, f64),
    at_least: f64,
}

impl Case {
    fn check(&self) -> Result<(Checked, Checked)> {
        let pool = Pool::new("inproc", self.settings)?;
        let measured = || self.strategy.run(&pool, self.n, self.work);
        let aio = || InProcess::Aio.run(&pool, self.n, self.work);
        let context = [
            ("n", self.n.to_string()),
            ("work", self.work_text.to_string()),
            ("pool", self.settings.to_string()),
        ];
        let model_of = |server| {
            Model::of(
                server,
                self.settings,
                self.work,
                ClientStrategy::FanOut,
                self.n,
            )
        };
        let model = model_of(self.like);
        let bound = with_context(
            Claim::bound(
                &format!("seed 002 {} ÷ model", self.name),
                Measure::duration(self.name, measured),
                Expected::model_wall(&model)?,
            ),
            &context,
        )
        .within(self.bound.0, self.bound.1)
        .check()?;
        let ratio = with_context(
            Claim::ratio(
                &format!("seed 002 {} ÷ AIO", self.name),
                Measure::duration(self.name, measured),
                Measure::duration("aio", aio),
            ),
            &context,
        )
        .at_least(self.at_least)
        .ideal(model_ratio(&model, &model_of(ServerStrategy::Async))?)
        .check()?;
        Ok((bound, ratio))
    }
}

/// 2,000 blocking waits of 10 ms on a blocking pool capped at 64 take ceil(2000/64) waits
/// (BIO is capped by its pool, like the model's offload); 2,000 timer waits take about
/// one, so AIO is at least 2× faster (the model says 32×; the seed measured 50×).
#[test]
fn bio_is_capped_by_its_pool_and_aio_is_not() -> Result {
    let (bound, ratio) = Case {
        name: "in-process BIO",
        strategy: InProcess::Bio,
        like: ServerStrategy::Offload,
        settings: PoolSettings::new(2, 64)?,
        n: 2_000,
        work: ms(10),
        work_text: "10 ms",
        bound: (0.95, 1.4),
        at_least: 2.0,
    }
    .check()?;
    assert_shape!("bio_is_capped_by_its_pool__bound", bound, bound.summary());
    assert_shape!(
        "bio_is_capped_by_its_pool__aio_faster",
        ratio,
        ratio.summary()
    );
    Ok(())
}

/// An "async" function that blocks inside holds its worker, like the model's blocking
/// handler: 200 such tasks of 1 ms on 2 workers take N × work / W = 100 ms, one at a time
/// per worker, and are at least 5× slower than timer waits (the seed's AIO-that-blocks
/// fell to 95 QPS against BIO's 801).
#[test]
fn blocking_inside_async_runs_one_at_a_time_per_worker() -> Result {
    let (bound, ratio) = Case {
        name: "blocking inside async",
        strategy: InProcess::BlockingInsideAsync,
        like: ServerStrategy::Blocking,
        settings: PoolSettings::new(2, 512)?,
        n: 200,
        work: ms(1),
        work_text: "1 ms (100 ms per worker in all)",
        bound: (1.0, 1.5),
        at_least: 5.0,
    }
    .check()?;
    assert_shape!("blocking_inside_async__bound", bound, bound.summary());
    assert_shape!(
        "blocking_inside_async__slower_than_aio",
        ratio,
        ratio.summary()
    );
    Ok(())
}
