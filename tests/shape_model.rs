//! The model against reality: a few small random scenarios (fixed seed, 8 cases — two per
//! server strategy so every kind of handler is drawn — each at most 0.2 s of predicted
//! wall), each a claim that measured ÷ model lies in [0.9, 1.6]. A failing case shrinks at
//! most 4 steps, so a failure reports fast.
//!
//! The draw gives handlers that hold a worker (blocking, mixed) exactly one worker, and
//! async and offload handlers one or two. With two or more workers, tokio often runs
//! blocking requests that arrive together on the same worker, one after the other, while
//! another worker idles: on this machine a fan-out of 2 over 2 blocking workers was served
//! by one worker in 5 of 8 rounds (the reports' `served_by` shows it), and C2 at W = 4
//! measures 1.22 × the model. A first-principles model does not predict that; the README
//! reports it as a finding, and this test checks the model where it claims to be exact.
//!
//! Timing tests: in the nextest `shape` group, never retried (see shape_seed000.rs).

mod common;

use std::cell::RefCell;
use std::time::Duration;

use common::Rig;
use perfshape::{Claim, ClientStrategy, Expected, Measure, Model, PoolSettings, ServerStrategy};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

#[derive(Clone, Debug)]
struct Case {
    server: ServerStrategy,
    pool: PoolSettings,
    client: ClientStrategy,
    n: usize,
    work: Duration,
}

impl Case {
    fn model(&self) -> Model {
        Model::of(self.server, self.pool, self.work, self.client, self.n)
    }
}

/// Random cases for one server strategy.
fn cases(server: ServerStrategy) -> impl Strategy<Value = Case> {
    let client = prop_oneof![
        1 => Just(ClientStrategy::Sequential),
        2 => Just(ClientStrategy::FanOut),
        2 => (2usize..=4).prop_map(|threads| ClientStrategy::SyncOverAsync { threads }),
    ];
    let holds_worker = matches!(
        server,
        ServerStrategy::Blocking | ServerStrategy::Mixed { .. }
    );
    let max_workers = if holds_worker { 1 } else { 2 };
    (
        Just(server),
        1usize..=max_workers,
        1usize..=4,
        client,
        2usize..=16,
        10u64..=30,
    )
        .prop_map(|(server, workers, max_blocking, client, n, work_ms)| {
            let work = Duration::from_millis(work_ms);
            let server = match server {
                // Half blocking, half waiting.
                ServerStrategy::Mixed { .. } => ServerStrategy::Mixed {
                    block: work / 2,
                    wait: work - work / 2,
                },
                other => other,
            };
            Case {
                server,
                pool: PoolSettings::new(workers, max_blocking).expect("valid pool"),
                client,
                n,
                work,
            }
        })
        .prop_filter("at most 0.2 s of predicted wall per run", |case| {
            case.model()
                .predict()
                .is_ok_and(|p| p.wall <= Duration::from_millis(200))
        })
}

#[test]
fn the_model_predicts_small_random_scenarios() -> perfshape::Result {
    let config = Config {
        cases: 2,
        max_shrink_iters: 4,
        failure_persistence: None,
        ..Config::default()
    };
    let verdicts = RefCell::new(Vec::new());
    let servers = [
        ServerStrategy::Blocking,
        ServerStrategy::Async,
        ServerStrategy::Offload,
        ServerStrategy::Mixed {
            block: Duration::ZERO,
            wait: Duration::ZERO,
        },
    ];
    for (seed, server) in (1u8..).zip(servers) {
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
        let mut runner = TestRunner::new_with_rng(config.clone(), rng);
        let outcome = runner.run(&cases(server), |case| {
            let check = || -> perfshape::Result<perfshape::Checked> {
                let rig = Rig::with_pool(case.pool)?;
                let url = rig.url(case.server, case.work)?;
                let model = case.model();
                Claim::bound(
                    &format!("model vs reality: {}", model.describe()),
                    Measure::duration(&format!("{} → {}", case.client, case.server), || {
                        rig.wall(case.client, &url, case.n)
                    }),
                    Expected::model_wall(&model)?,
                )
                .within(0.9, 1.6)
                .rounds(3, 5)
                .budget(Duration::from_secs(3))
                .context("client", case.client)
                .check()
            };
            let checked = check().map_err(|e| TestCaseError::fail(e.to_string()))?;
            verdicts.borrow_mut().push(format!(
                "{}: {}",
                checked.summary().expected.unwrap_or_default(),
                checked.verdict()
            ));
            checked
                .gate()
                .map_err(|e| TestCaseError::fail(e.to_string()))
        });
        if let Err(failure) = outcome {
            return Err(perfshape::Error::Gate(format!(
                "the model and reality disagree: {failure}"
            )));
        }
    }
    // With a fixed seed the cases, and while they hold the verdicts, are the same every run.
    insta::assert_yaml_snapshot!(verdicts.into_inner());
    Ok(())
}
