//! The experiments' negative controls: every claim of the catalog, run on a deliberately wrong setup
//! (an async wait made blocking, the cap removed, offloaded work run inline, a pool of 4
//! where 1 is claimed, …), must come out **broken** — the proof that each claim can fail.
//!
//! They time real work like `tests/shape/`, so they run in the same one-at-a-time nextest
//! group, in their own profile: `cargo nextest run --profile selftest` (which `.ci/run`
//! runs after the main suite). `perfshape selftest` runs the catalog's controls from the
//! command line. The gate's own controls, on services of the kinds teams write, are the
//! root crate's `tests/controls/`.

#[path = "../common/mod.rs"]
mod common;

use perfshape::client::ClientStrategy::{FanOut, Sequential, SyncOverAsync};
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Control;
use perfshape_experiments::catalog::{self, expect_broken};

/// One test per catalog entry: its claims on its control's setup must all break.
macro_rules! controls {
    ($($module:ident :: $entry:ident),* $(,)?) => {$(
        #[test]
        fn $entry() -> Result {
            expect_broken(&catalog::$module::$entry(Control)?)
        }
    )*};
}

controls! {
    seed000::c1,
    seed000::c2_one_and_two_workers,
    seed000::c2_two_and_four_workers,
    seed000::c3,
    seed000::c4_starved,
    seed000::c4_free_during_async,
    seed000::c4_free_during_offload,
    seed000::c5,
    seed001::ordering_with_a_shared_client,
    seed001::ordering_with_a_client_per_request,
    seed001::ordering_with_pooled_clients,
    seed001::a_cap_of_two_connections,
    seed002::bio_is_capped_by_its_pool,
    seed002::aio_is_one_wait,
    seed002::blocking_inside_async,
    seed003::one_task_per_item_is_far_slower_than_a_loop,
    seed004::throughput_orders_the_endpoints,
    seed004::async_latency_stays_at_the_work_time,
    seed004::a_closed_loop_obeys_littles_law,
    pools::an_async_server_does_not_care_about_its_workers,
    pools::offload_is_capped_by_the_blocking_pool,
    pools::offload_with_the_default_cap_is_flat,
    strategies::mixed_cpu_and_lock_match_the_model,
    strategies::tails_match_the_model,
    strategies::a_ramp_spreads_the_users,
    strategies::an_in_flight_cap_bounds_the_queue,
    loops::an_open_loop_sees_the_queue,
    loops::the_probe_finds_the_pool,
    loops::the_probe_says_what_limits_it,
    endpoints::waiting_handlers_do_not_block_their_worker,
    endpoints::an_async_handler_is_faster_than_a_blocking_one,
    compare::the_same_build_is_no_regression,
    compare::a_faster_build_is_claimed_faster,
    scheduler::eager_handoff_serves_a_later_request_at_once,
    tables::an_http_aio_fan_out_hides_its_wait,
}

/// The entries whose control is asserted beside their claims, on the claims' own run: in
/// tests/engines/, where a run of its own would cost 16–35 s of Locust or k6 for each, and
/// the tables' in tests/tables/, where it would run every table again (13 s). Each with the
/// file and the test that asserts it (k6's two entries share one run, and one test).
const BESIDE_THEIR_CLAIMS: &[(&str, &str, &str)] = &[
    (
        "tables::every_row_agrees_with_the_model",
        include_str!("../tables/main.rs"),
        "every_row_agrees_with_the_model",
    ),
    (
        "locust::seed004_from_a_distributed_run",
        include_str!("../engines/locust.rs"),
        "seed004_from_a_distributed_run",
    ),
    (
        "k6::seed004_from_k6",
        include_str!("../engines/k6.rs"),
        "seed004_from_k6_and_split_between_two_runners",
    ),
    (
        "k6::seed004_split_between_two_runners",
        include_str!("../engines/k6.rs"),
        "seed004_from_k6_and_split_between_two_runners",
    ),
];

/// Every catalog entry has a test above (so `perfshape selftest` and this binary agree),
/// or its control is asserted beside its claims (tests/engines/, tests/tables/).
#[test]
fn every_catalog_entry_has_a_control_here() {
    let here = include_str!("main.rs");
    for entry in catalog::entries() {
        let beside = BESIDE_THEIR_CLAIMS
            .iter()
            .find(|(name, _, _)| *name == entry.name);
        match beside {
            Some((name, file, test)) => {
                assert!(
                    file.contains(&format!("#[test]\nfn {test}() -> Result {{"))
                        && file.contains("expect_broken(&control)?;"),
                    "{name}'s control is not asserted beside its claims"
                );
            }
            None => assert!(
                here.contains(&format!("    {},\n", entry.name)),
                "{} has no control test",
                entry.name
            ),
        }
    }
}

/// The wiremock claims with the wrong client: sequential where fan-out is claimed, and
/// the other way round, and sequential where 4 threads are.
#[test]
fn wiremock_with_the_wrong_client() -> Result {
    use common::wiremock::matches_the_model;
    expect_broken(&matches_the_model(
        Control,
        FanOut,
        Sequential,
        20,
        (1.0, 2.0),
    )?)?;
    expect_broken(&matches_the_model(
        Control,
        Sequential,
        FanOut,
        10,
        (0.95, 1.5),
    )?)?;
    let threads = SyncOverAsync { threads: 4 };
    expect_broken(&matches_the_model(
        Control,
        threads,
        Sequential,
        12,
        (0.95, 1.5),
    )?)
}

/// The model against reality, each case run with twice the work it claims.
#[test]
fn the_model_with_twice_the_work() -> Result {
    let checked = common::model_vs_reality::small_random_scenarios(Control)?;
    let shapes: catalog::Shapes = checked
        .into_iter()
        .map(|c| (c.report().name().to_string(), c))
        .collect();
    expect_broken(&shapes)
}
