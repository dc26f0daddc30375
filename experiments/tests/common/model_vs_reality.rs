//! The model against reality: a few small random scenarios (fixed seed, 8 cases — two per
//! server strategy so every kind of handler is drawn — each at most 0.15 s of predicted
//! wall), each a claim that measured ÷ model lies in [0.9, 1.3]. The control runs each
//! case with twice the work it claims. Shared by `tests/shape/` and `tests/controls/`.
//!
//! Every strategy is drawn on 1 to 4 workers. The servers run with eager driver hand-off
//! (`Scheduler::one_wave`): under tokio's default, blocking requests that arrive together
//! are sometimes run one after the other on one worker while another sleeps
//! (`docs/coscheduling.md`), which a first-principles model does not predict; that
//! finding has its own claim (`src/catalog/scheduler.rs`).

use perfshape_experiments::load::Loads;
use perfshape_experiments::scenario::Scenario;
use std::time::Duration;

use perfshape::client::ClientStrategy::{self, FanOut, Sequential, SyncOverAsync};
use perfshape::{Checked, Claim, PoolSettings, runtime::Scheduler};
use perfshape_experiments::catalog::Setup;
use perfshape_experiments::scenario::ServerStrategy::{self, Async, Blocking, Mixed, Offload};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// Random scenarios for one server strategy.
fn scenarios(server: ServerStrategy) -> impl Strategy<Value = Scenario> {
    let client: BoxedStrategy<ClientStrategy> = prop_oneof![
        1 => Just(Sequential),
        2 => Just(FanOut),
        2 => (2usize..=4).prop_map(|threads| SyncOverAsync { threads }),
    ]
    .boxed();
    (1usize..=4, 1usize..=4, client, 2usize..=16, 10u64..=30)
        .prop_map(move |(workers, max_blocking, client, n, work_ms)| {
            let work = Duration::from_millis(work_ms);
            Scenario::builder()
                .server(split(server, work))
                .pool(
                    PoolSettings::new(workers, max_blocking)
                        .and_then(|pool| pool.with_scheduler(Scheduler::one_wave()))
                        .expect("a valid pool"),
                )
                .client(client)
                .requests(n)
                .work(work)
                .build()
                .expect("a valid scenario")
        })
        .prop_filter("at most 0.15 s of predicted wall per run", |scenario| {
            scenario
                .model()
                .predict()
                .is_ok_and(|p| p.wall <= Duration::from_millis(150))
        })
}

/// A mixed handler blocks for half its work and waits for the rest.
fn split(server: ServerStrategy, work: Duration) -> ServerStrategy {
    match server {
        Mixed { .. } => Mixed {
            block: work / 2,
            wait: work - work / 2,
        },
        other => other,
    }
}

/// The 8 cases (the same every run: a fixed seed), each checked as a claim.
pub(crate) fn small_random_scenarios(setup: Setup) -> perfshape_experiments::Result<Vec<Checked>> {
    let config = Config {
        cases: 2,
        failure_persistence: None,
        ..Config::default()
    };
    let mixed = Mixed {
        block: Duration::ZERO,
        wait: Duration::ZERO,
    };
    let mut checked = Vec::new();
    for (seed, server) in (1u8..).zip([Blocking, Async, Offload, mixed]) {
        let rng = TestRng::from_seed(RngAlgorithm::ChaCha, &[seed; 32]);
        let mut runner = TestRunner::new_with_rng(config.clone(), rng);
        let strategy = scenarios(server);
        for _ in 0..config.cases {
            let scenario = strategy
                .new_tree(&mut runner)
                .map_err(|e| perfshape::Error::gate(format!("drawing a case: {e}")))?
                .current();
            let target = perfshape_experiments::demo::target(scenario.server_pool)?;
            let doubled = Scenario {
                server: split(scenario.server, scenario.work * 2),
                work: scenario.work * 2,
                ..scenario.clone()
            };
            let load = target.load_claiming(setup.pick(scenario.clone(), doubled), scenario)?;
            checked.push(
                Claim::bound(&format!("model vs reality: {}", load.label()), load.wall())
                    .within(0.9, 1.3)
                    .budget(Duration::from_secs(3))
                    .check()?,
            );
        }
    }
    Ok(checked)
}
