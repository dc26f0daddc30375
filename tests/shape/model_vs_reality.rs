//! The model against reality: a few small random scenarios (fixed seed, 8 cases — two per
//! server strategy so every kind of handler is drawn — each at most 0.2 s of predicted
//! wall), each a claim that measured ÷ model lies in [0.9, 1.6]. A failing case shrinks at
//! most 4 steps, so a failure reports fast.
//!
//! The draw gives handlers that hold a worker (blocking, mixed) exactly one worker, and
//! async and offload handlers one or two. With two or more workers, tokio often runs
//! blocking requests that arrive together on the same worker, one after the other, while
//! another worker idles (the README's finding); a first-principles model does not predict
//! that, and this test checks the model where it claims to be exact.

use std::cell::RefCell;
use std::time::Duration;

use perfshape::ClientStrategy::{self, FanOut, Sequential, SyncOverAsync};
use perfshape::ServerStrategy::{self, Async, Blocking, Mixed, Offload};
use perfshape::{Claim, PoolSettings, Scenario};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

use crate::ms;

/// Random scenarios for one server strategy.
fn scenarios(server: ServerStrategy) -> impl Strategy<Value = Scenario> {
    let client: BoxedStrategy<ClientStrategy> = prop_oneof![
        1 => Just(Sequential),
        2 => Just(FanOut),
        2 => (2usize..=4).prop_map(|threads| SyncOverAsync { threads }),
    ]
    .boxed();
    let holds_worker = matches!(server, Blocking | Mixed { .. });
    let max_workers = if holds_worker { 1 } else { 2 };
    (
        1usize..=max_workers,
        1usize..=4,
        client,
        2usize..=16,
        10u64..=30,
    )
        .prop_map(move |(workers, max_blocking, client, n, work_ms)| {
            let work = ms(work_ms);
            let server = match server {
                // Half blocking, half waiting.
                Mixed { .. } => Mixed {
                    block: work / 2,
                    wait: work - work / 2,
                },
                other => other,
            };
            Scenario::builder()
                .server(server)
                .pool(PoolSettings::new(workers, max_blocking).expect("a valid pool"))
                .client(client)
                .requests(n)
                .work(work)
                .build()
                .expect("a valid scenario")
        })
        .prop_filter("at most 0.2 s of predicted wall per run", |scenario| {
            scenario
                .model()
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
    let mixed = Mixed {
        block: Duration::ZERO,
        wait: Duration::ZERO,
    };
    for (seed, server) in (1u8..).zip([Blocking, Async, Offload, mixed]) {
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
        let mut runner = TestRunner::new_with_rng(config.clone(), rng);
        let outcome = runner.run(&scenarios(server), |scenario| {
            let check = || -> perfshape::Result<perfshape::Checked> {
                let target = perfshape::Target::demo(scenario.server_pool)?;
                let load = target.load(scenario.clone())?;
                Claim::bound(&format!("model vs reality: {}", load.label()), load.wall())
                    .within(0.9, 1.6)
                    .rounds(3, 5)
                    .budget(Duration::from_secs(3))
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
