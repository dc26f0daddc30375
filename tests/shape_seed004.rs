//! seed 004 — JMeter against four endpoints — as shape claims: a closed loop of users
//! (each sends, waits, thinks, sends again) against blocking, offloaded, async and mixed
//! handlers. Scaled 3 s → 60 ms of work; 12 users on 2 workers (the seed: 300 on 8).
//!
//! Timing tests: in the nextest `shape` group, never retried (see shape_seed000.rs).

mod common;

use std::time::Duration;

use common::{Rig, ms, with_context};
use perfshape::{
    Claim, ClientStrategy, Expected, Measure, Model, PoolSettings, Result, Run, ServerStrategy,
};

const WORK: Duration = Duration::from_millis(60);
const USERS: usize = 12;
const THINK: Duration = Duration::from_millis(2);
/// The most requests one run may send; the run's duration stops it long before.
const MAX_REQUESTS: usize = 10_000;

fn closed_loop() -> ClientStrategy {
    closed_loop_for(ms(200))
}

fn closed_loop_for(duration: Duration) -> ClientStrategy {
    ClientStrategy::ClosedLoop {
        users: USERS,
        think: THINK,
        ramp: Duration::ZERO,
        duration,
    }
}

/// The four endpoints: blocking, offloaded blocking (the blocking pool capped at 3),
/// async, and mixed (20 ms blocking, then 40 ms async).
fn endpoints() -> [(&'static str, ServerStrategy); 4] {
    [
        ("async", ServerStrategy::Async),
        (
            "mixed",
            ServerStrategy::Mixed {
                block: ms(20),
                wait: ms(40),
            },
        ),
        ("offload", ServerStrategy::Offload),
        ("blocking", ServerStrategy::Blocking),
    ]
}

fn pool() -> Result<PoolSettings> {
    PoolSettings::new(2, 3)
}

fn model_of(server: ServerStrategy) -> Result<Model> {
    model_for(server, closed_loop())
}

fn model_for(server: ServerStrategy, client: ClientStrategy) -> Result<Model> {
    Ok(Model::of(server, pool()?, WORK, client, MAX_REQUESTS))
}

fn model(server: ServerStrategy) -> Result<perfshape::Prediction> {
    model_of(server)?.predict()
}

fn run(rig: &Rig, server: ServerStrategy) -> Result<Run> {
    run_with(rig, server, closed_loop())
}

fn run_with(rig: &Rig, server: ServerStrategy, client: ClientStrategy) -> Result<Run> {
    let url = rig.url(server, WORK)?;
    let run = rig.client.run(client, &url, MAX_REQUESTS)?;
    run.require_ok()?;
    Ok(run)
}

fn throughput(run: &Run) -> f64 {
    run.summary(WORK / 2).throughput
}

// No warm-up round for these claims: a 200 ms closed loop pays its one-time costs (12
// connections, ~0.1 ms each) well under 1 % of a run, and a warm-up would add a whole
// round of four endpoints, each draining a queue behind blocked workers.

fn settings() -> Result<[(&'static str, String); 4]> {
    Ok([
        ("users", USERS.to_string()),
        ("think", "2 ms".to_string()),
        (
            "work",
            "60 ms (mixed: 20 ms blocking + 40 ms async)".to_string(),
        ),
        ("server pool", pool()?.to_string()),
    ])
}

/// Throughput orders async > mixed > offload (capped blocking pool) > blocking, as the
/// seed's 93.6 > 70.4 > 26.0 > 18.6 per second. The model's smallest step is 1.5×
/// (offload 3 threads ÷ blocking 2 workers); we demand each step ≥ 1.2×.
#[test]
fn throughput_orders_async_mixed_offload_blocking() -> Result {
    let rig = Rig::with_pool(pool()?)?;
    let rig = &rig;
    let sides = endpoints()
        .into_iter()
        .map(|(name, server)| Measure::rate(name, move || Ok(throughput(&run(rig, server)?))))
        .collect();
    let predicted: Vec<f64> = endpoints()
        .into_iter()
        .map(|(_, server)| model(server).map(|p| p.throughput))
        .collect::<Result<_>>()?;
    let ideal = predicted
        .windows(2)
        .map(|w| w[0] / w[1])
        .fold(f64::INFINITY, f64::min);
    let checked = with_context(
        Claim::ordering("seed 004 closed-loop throughput", sides),
        &settings()?,
    )
    .at_least(1.2)
    .ideal((ideal * 100.0).round() / 100.0)
    .warmup(0)
    .check()?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// Async latency stays at the work time with a tight spread: the mean is within
/// [0.95, 1.3] of what the model predicts (60 ms plus nothing).
#[test]
fn async_latency_stays_at_the_work_time() -> Result {
    let rig = Rig::with_pool(pool()?)?;
    let predicted = model(ServerStrategy::Async)?.mean_latency;
    let checked = with_context(
        Claim::bound(
            "seed 004 async mean latency ÷ model",
            Measure::duration("async mean latency", || {
                let summary = run(&rig, ServerStrategy::Async)?.summary(WORK / 2);
                Ok(summary.latency.map(|l| l.mean).unwrap_or_default())
            }),
            Expected::new(
                predicted,
                format!(
                    "mean latency of {}",
                    model_of(ServerStrategy::Async)?.describe()
                ),
            ),
        ),
        &settings()?,
    )
    .within(0.95, 1.3)
    .warmup(0)
    .check()?;
    assert_shape!(checked, checked.summary());
    Ok(())
}

/// Little's law: throughput × (mean latency + think) = users in the system. Over a
/// 500 ms run the tail (requests still in flight when users stop) lowers it; the model
/// predicts that finite-run figure, and the measurement must lie within [0.9, 1.1] of it.
#[test]
fn a_closed_loop_obeys_littles_law() -> Result {
    let rig = Rig::with_pool(pool()?)?;
    let littles = |throughput: f64, mean: f64| throughput * (mean + THINK.as_secs_f64());
    let server = ServerStrategy::Mixed {
        block: ms(20),
        wait: ms(40),
    };
    // 500 ms, not 200: the run's tail (requests still in flight when users stop) is a
    // discrete edge, and over ~2 cycles per user it swings the figure by ±3 %.
    let client = closed_loop_for(ms(500));
    let predicted = model_for(server, client)?.predict()?;
    let checked = with_context(
        Claim::bound(
            "seed 004 Little's law on the mixed endpoint: throughput × (latency + think) ÷ model",
            Measure::value("users in the system", || {
                let summary = run_with(&rig, server, client)?.summary(WORK / 2);
                let mean = summary
                    .latency
                    .map(|l| l.mean.as_secs_f64())
                    .unwrap_or_default();
                Ok(littles(summary.throughput, mean))
            }),
            Expected::new(
                littles(predicted.throughput, predicted.mean_latency),
                format!("{USERS} users, less the run's tail, as the model counts it"),
            ),
        ),
        &settings()?,
    )
    .within(0.9, 1.1)
    .warmup(0)
    .check()?;
    assert_shape!(checked, checked.summary());
    Ok(())
}
