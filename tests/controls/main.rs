//! The gate's negative controls: the ready-made claims on the blocking twins of services
//! of the kinds teams write (a sync client called on the worker, heavy CPU in one poll)
//! must come out **broken** — the proof that each claim can fail. The experiments' controls
//! are the experiments crate's (`experiments/tests/controls/`).
//!
//! They time real work like `tests/shape/`, so they run in the same one-at-a-time nextest
//! group, in their own profile: `cargo nextest run --profile selftest` (which `.ci/run`
//! runs after the main suite).

#[path = "../common/mod.rs"]
mod common;

use perfshape::{PoolSettings, Result, Target, Verdict};

/// The orders example with its synchronous ledger client called on the worker: both of
/// the team's claims break, and the reports say the handler waits on its worker and /health
/// waited.
#[test]
fn a_blocking_ledger_client_is_caught() -> Result {
    use common::orders::{Ledger, orders};
    let target = orders(Ledger::Blocking)?;
    let report = target.checked_get("/report")?;
    let blocks = report.does_not_block_its_worker().check()?;
    assert_eq!(blocks.verdict(), Verdict::Broken, "{}", blocks.report());
    let said = format!("{:#}", blocks.report());
    assert_names_the_sleep(&said, "waits ≈");
    assert!(said.contains("runtime over the median"), "{said}");
    // Its snapshot says how the worker was held, the call and the line, and no figure: the
    // same run after run while the shape holds.
    let observed = blocks.summary().observed.unwrap_or_default();
    assert!(observed.contains("while holding its worker"), "{observed}");
    assert!(
        !observed.contains(" ms") && !observed.contains('%') && !observed.contains("samples"),
        "{observed}"
    );
    let starved = target
        .checked_get("/health")?
        .keeps_answering_during(&report)
        .check()?;
    assert_eq!(starved.verdict(), Verdict::Broken, "{}", starved.report());
    let said = format!("{:#}", starved.report());
    assert!(said.contains("every worker was held"), "{said}");
    Ok(())
}

/// The orders example's `POST /orders` with the synchronous ledger client on the worker:
/// its handler waits on the worker only for the 2 ms credit check of a 20 ms request, and
/// the claim still breaks, saying how long the handler waited.
#[tokio::test]
async fn a_two_millisecond_credit_check_on_the_worker_is_caught() -> Result {
    use common::orders::{Ledger, TOKEN, orders};
    let target = orders(Ledger::Blocking)?;
    let checked = target
        .post("/orders")
        .json(&serde_json::json!({ "customer": "ada", "cents": 1250 }))
        .bearer_auth(TOKEN)
        .does_not_block_its_worker()
        .await?;
    assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    let said = format!("{:#}", checked.report());
    assert!(said.contains("waits ≈2."), "{said}");
    assert!(said.contains("its polls held the worker"), "{said}");
    // Both ways of reading it find a tenth of the request, not all of it: the polls'
    // waiting, and the timing from outside.
    let observed = &checked.report().observed();
    let waited = observed["waiting ms"] / observed["alone ms"];
    assert!(
        (0.05..0.2).contains(&waited),
        "waited {waited} of each request"
    );
    let estimate = observed["estimated held share"];
    assert!((0.05..0.2).contains(&estimate), "estimated {estimate}");
    Ok(())
}

/// Heavy CPU on the worker, in one poll past the default budget (24 ms where perfshape is
/// built without optimisations, as here), is caught like a blocking sleep: 100 ms of the
/// thread's own CPU time in one poll, which a busy machine stretches but never shortens.
#[test]
fn heavy_cpu_on_the_worker_is_caught() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, common::handlers::app())?;
    let checked = target
        .checked_get("/cpu?us=100000&chunk_us=100000")?
        .concurrency(2)
        .does_not_block_its_worker()
        .check()?;
    assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    assert!(
        checked
            .report()
            .finding()
            .is_some_and(|f| f.contains("in one poll without giving its worker back"))
    );
    Ok(())
}

/// The same traffic mix on the blocking ledger client: the mix claim breaks and names the
/// route that uses most of its allowance — the report's 20 ms wait, ahead of the 2 ms
/// credit check.
#[test]
fn a_traffic_mix_names_the_route_that_blocks() -> Result {
    use common::orders::{Ledger, TOKEN, orders};
    let target = orders(Ledger::Blocking)?;
    let new_order = target
        .post("/orders")
        .json(&serde_json::json!({ "customer": "ada", "cents": 1250 }))
        .bearer_auth(TOKEN);
    let mix = target.mix([
        (target.get("/health"), 4),
        (target.get("/orders/1"), 4),
        (new_order.clone(), 1),
        (target.get("/report"), 1),
    ]);
    let checked = mix.none_blocks_its_worker().check()?;
    assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    let said = format!("{:#}", checked.report());
    assert_names_the_sleep(&said, "/report waits ≈");
    // Without the report, the 2 ms credit check is the route named.
    let mix = target.mix([(target.get("/health"), 8), (new_order, 1)]);
    let checked = mix.none_blocks_its_worker().check()?;
    assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    let said = format!("{:#}", checked.report());
    assert!(said.contains("POST /orders waits ≈2."), "{said}");
    Ok(())
}

/// That a broken claim's report names the orders service's 20 ms blocking sleep where it
/// says `before` ("/report waits ≈20 ms …"): a machine that wakes its threads late stretches
/// a sleep, never shortens it (with one core busy, a whole claim's requests once slept
/// ≈20.6 ms each, and the report rightly said ≈21 ms), so 20 or 21 ms names it.
fn assert_names_the_sleep(said: &str, before: &str) {
    let waited = said
        .split_once(before)
        .and_then(|(_, rest)| rest.split_once(" ms"))
        .and_then(|(figure, _)| figure.parse::<f64>().ok());
    assert!(
        waited.is_some_and(|ms| (20.0..=21.0).contains(&ms)),
        "the report should name a wait of about 20 ms after {before:?}: {said}"
    );
}
