//! The endpoint claims a user writes, on the demo service's strategies: each claim holds
//! where the model says it should, and each has a negative control — the same claim on a
//! deliberately wrong handler — that must come out broken, with a report that says why.

use perfshape::ServerStrategy::{self, Async, Blocking, Cpu, Lock, Offload};
use perfshape::{PoolSettings, Result, Target, Verdict, assert_shape};

use crate::ms;

fn one_worker() -> Result<Target> {
    Target::demo(PoolSettings::workers(1)?)
}

/// Handlers that give their worker back while they wait do not block it: 10 concurrent
/// requests on one worker take about one request's time.
#[test]
fn waiting_handlers_do_not_block_their_worker() -> Result {
    let target = one_worker()?;
    for strategy in [Async, Offload] {
        let checked = target
            .demo_endpoint(strategy, ms(20))?
            .does_not_block_its_worker()
            .check()?;
        assert_shape!(format!("{}_does_not_block", strategy.name()), checked);
    }
    Ok(())
}

/// Negative controls: a blocking sleep, a std mutex held across a blocking wait, and
/// heavy CPU each hold the only worker — ≈N× one request, and the verdict says so.
#[test]
fn handlers_that_hold_their_worker_are_caught() -> Result {
    let target = one_worker()?;
    for strategy in [Blocking, Lock, Cpu] {
        let checked = target
            .demo_endpoint(strategy, ms(10))?
            .does_not_block_its_worker()
            .check()?;
        assert_eq!(
            checked.verdict(),
            Verdict::Broken,
            "{strategy}: {}",
            checked.report()
        );
        let headline = checked.report().headline();
        assert!(
            headline.contains("the handler holds its worker"),
            "{headline}"
        );
    }
    Ok(())
}

/// Negative control of *keeps answering*: during a blocking fan-out that fills both
/// workers, /health waits for one (its positive cases are seed 000's C4).
#[test]
fn health_during_blocking_work_is_caught() -> Result {
    let target = Target::demo(PoolSettings::workers(2)?)?;
    let slow = target.demo_endpoint(Blocking, ms(50))?;
    let checked = target
        .endpoint("/health")?
        .keeps_answering_during(&slow)
        .check()?;
    assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    Ok(())
}

/// *Faster than*, both ways: on one worker, an async handler under a fan-out of 10 is at
/// least 3× faster than a blocking one (the model: 10×) — and the reverse claim breaks.
#[test]
fn an_async_handler_is_faster_than_a_blocking_one() -> Result {
    let target = one_worker()?;
    let endpoint = |strategy: ServerStrategy| target.demo_endpoint(strategy, ms(10));
    let (fast, slow) = (endpoint(Async)?, endpoint(Blocking)?);
    let checked = fast.faster_than(&slow).at_least(3.0).check()?;
    assert_shape!(checked);
    let reversed = slow.faster_than(&fast).at_least(3.0).check()?;
    assert_eq!(reversed.verdict(), Verdict::Broken, "{}", reversed.report());
    Ok(())
}

/// Negative controls of *concurrency limit*: a blocking server on 2 workers has a limit
/// (so "none" breaks), and a lock serialises it to ≈1 (so "about 2" breaks). Its positive
/// cases are in `loops.rs`.
#[test]
fn a_wrong_concurrency_limit_is_caught() -> Result {
    let target = Target::demo(PoolSettings::workers(2)?)?;
    for (strategy, claim) in [(Blocking, "none"), (Lock, "about 2")] {
        let limit = target
            .demo_endpoint(strategy, ms(10))?
            .concurrency_limit()
            .up_to(8)
            .step(ms(50));
        let checked = match strategy {
            Blocking => limit.none(),
            _ => limit.about(2.0),
        }
        .check()?;
        assert_eq!(
            checked.verdict(),
            Verdict::Broken,
            "{claim}: {}",
            checked.report()
        );
    }
    Ok(())
}
