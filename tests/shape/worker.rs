//! What the workers could not do, whichever task held them and whenever: a login that
//! hashes after its lookups, an audit write in a task the handler spawned, and tokio's own
//! hand-off (`block_in_place`) — each beside its twin, decided the right way round.

use std::time::Duration;

use perfshape::{Checked, PoolSettings, Result, Target, Verdict};
use serde_json::json;

use crate::common::{decided, worker};

fn served() -> Result<Target> {
    Target::serve(PoolSettings::workers(1)?, worker::app())
}

fn login(target: &Target, offload: bool) -> perfshape::Endpoint {
    target
        .post(if offload {
            "/login?offload=1"
        } else {
            "/login"
        })
        .json(&json!({ "user": "ada" }))
}

fn order(target: &Target, offload: bool) -> perfshape::Endpoint {
    target.post(if offload {
        "/order?offload=1"
    } else {
        "/order"
    })
}

/// The verdict, where this build reads what the claim needs.
fn verdict(checked: &Checked) -> Option<Verdict> {
    decided(checked)
}

/// `endpoint` (sent `concurrency` at a time where given) checked not to block its worker,
/// and `/health` to keep answering while it runs, each against its expected verdict: the
/// blocking claim, for what its report says.
fn both(
    target: &Target,
    endpoint: &perfshape::Endpoint,
    concurrency: Option<usize>,
    (blocking, answering): (Verdict, Verdict),
) -> Result<Checked> {
    let fanned = match concurrency {
        Some(n) => endpoint.clone().concurrency(n),
        None => endpoint.clone(),
    };
    let checked = fanned.does_not_block_its_worker().check()?;
    expect(&checked, blocking);
    let during = target
        .get("/health")
        .keeps_answering_during(endpoint)
        .check()?;
    expect(&during, answering);
    Ok(checked)
}

/// `checked` came out `expected`, where this build reads what the claim needs; whether it
/// was decided.
fn expect(checked: &Checked, expected: Verdict) -> bool {
    let decided = verdict(checked);
    if let Some(verdict) = decided {
        assert_eq!(verdict, expected, "{}", checked.report());
    }
    decided.is_some()
}

/// The login awaits two lookups, then verifies its hash in one poll: `/health`, sent
/// across the login's time and not only at its start, meets the hash and waits for it.
#[test]
fn health_waits_for_a_hash_verified_after_the_lookups() -> Result {
    let target = served()?;
    let checked = target
        .get("/health")
        .keeps_answering_during(&login(&target, false))
        .check()?;
    if expect(&checked, Verdict::Broken) {
        let report = format!("{:#}", checked.report());
        assert!(report.contains("sent across its time"), "{report}");
    }
    Ok(())
}

#[test]
fn health_keeps_answering_while_the_hash_is_offloaded() -> Result {
    let target = served()?;
    let checked = target
        .get("/health")
        .keeps_answering_during(&login(&target, true))
        .check()?;
    expect(&checked, Verdict::Holds);
    Ok(())
}

/// The order answers at once; the audit task it spawned then writes synchronously on the
/// worker. The response's own polls never wait: the worker does.
#[test]
fn an_audit_write_in_a_spawned_task_blocks_the_worker() -> Result {
    let target = served()?;
    let checked = order(&target, false).does_not_block_its_worker().check()?;
    if expect(&checked, Verdict::Broken) {
        let found = checked.report().finding().unwrap_or_default();
        assert!(found.contains("outside the requests' own polls"), "{found}");
        let outside = checked.report().observed()["worker waiting outside polls ms"];
        assert!(outside > 1.0, "{}", checked.report());
    }
    let answering = target
        .get("/health")
        .keeps_answering_during(&order(&target, false))
        .check()?;
    expect(&answering, Verdict::Broken);
    Ok(())
}

#[test]
fn an_audit_write_spawned_onto_the_blocking_pool_holds() -> Result {
    let target = served()?;
    let verdicts = (Verdict::Holds, Verdict::Holds);
    both(&target, &order(&target, true), None, verdicts).map(drop)
}

/// `block_in_place` hands the worker's core to another thread before the digest: the
/// worker is not held, and `/health` is answered meanwhile.
#[test]
fn a_digest_in_block_in_place_does_not_hold_the_worker() -> Result {
    let target = served()?;
    let digest = target.get("/digest").poll_budget(Duration::from_millis(4));
    let checked = both(&target, &digest, Some(4), (Verdict::Holds, Verdict::Holds))?;
    if verdict(&checked).is_some() {
        let report = format!("{:#}", checked.report());
        assert!(report.contains("block_in_place"), "{report}");
    }
    Ok(())
}

/// Twenty concurrent digests in `block_in_place` on one worker: each request hands the core
/// on in turn, the next owner busy with the next request before it ever parks — still no
/// hold (the hand-off is read at the new owner's first response poll, not only its park).
#[test]
fn twenty_concurrent_digests_in_block_in_place_do_not_hold_the_worker() -> Result {
    twenty_at_once_hold(&served()?, "/digest")
}

/// `path` on `target`, twenty at a time, does not block its worker.
fn twenty_at_once_hold(target: &Target, path: &str) -> Result {
    let checked = target
        .get(path)
        .concurrency(20)
        .does_not_block_its_worker()
        .check()?;
    expect(&checked, Verdict::Holds);
    Ok(())
}

/// The same with nothing but the hand-off in the handler, as a new user first writes it:
/// `block_in_place(|| hash(10 ms)).to_string()`, twenty at a time on one worker.
#[test]
fn twenty_concurrent_bare_block_in_place_hashes_do_not_hold_the_worker() -> Result {
    use axum::{Router, routing::get};
    let app = Router::new().route(
        "/hash",
        get(|| async {
            tokio::task::block_in_place(|| {
                crate::common::handlers::compute(Duration::from_millis(10));
                10
            })
            .to_string()
        }),
    );
    twenty_at_once_hold(
        &Target::serve(perfshape::PoolSettings::workers(1)?, app)?,
        "/hash",
    )
}

/// Its negative control: the same hash without the hand-off, twenty at a time, computes
/// 10 ms in one poll against a 4 ms budget — broken, exact on every platform.
#[test]
fn twenty_concurrent_bare_hashes_inline_hold_the_worker() -> Result {
    use axum::{Router, routing::get};
    let app = Router::new().route(
        "/hash",
        get(|| async {
            crate::common::handlers::compute(Duration::from_millis(10));
            "10"
        }),
    );
    let target = Target::serve(perfshape::PoolSettings::workers(1)?, app)?;
    let checked = target
        .get("/hash")
        .poll_budget(Duration::from_millis(4))
        .concurrency(20)
        .does_not_block_its_worker()
        .check()?;
    assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    Ok(())
}

#[test]
fn the_same_digest_inline_holds_the_worker() -> Result {
    let target = served()?;
    let digest = target
        .get("/digest?inline=1")
        .poll_budget(Duration::from_millis(4));
    let checked = both(
        &target,
        &digest,
        Some(4),
        (Verdict::Broken, Verdict::Broken),
    )?;
    // Computing past a budget the test set is exact on every platform.
    assert_eq!(checked.verdict(), Verdict::Broken, "{}", checked.report());
    Ok(())
}

/// A cache refresher the service starts as it is built reads its source synchronously on
/// the worker: every route's requests find the worker held now and then, and the reading
/// with no load names a background task.
#[test]
fn a_refresher_reading_on_the_worker_blocks_every_route() -> Result {
    let target = Target::serve_with(PoolSettings::workers(1)?, || worker::with_refresher(true))?;
    let checked = target.get("/cached").does_not_block_its_worker().check()?;
    if expect(&checked, Verdict::Broken) {
        let report = format!("{:#}", checked.report());
        assert!(
            report.contains("a background task on the workers blocks them"),
            "{report}"
        );
    }
    Ok(())
}

#[test]
fn a_refresher_reading_through_the_blocking_pool_holds() -> Result {
    let target = Target::serve_with(PoolSettings::workers(1)?, || worker::with_refresher(false))?;
    let checked = target.get("/cached").does_not_block_its_worker().check()?;
    expect(&checked, Verdict::Holds);
    Ok(())
}

/// The same service started by its own launch function, as its `main` starts it: its
/// responses are not timed, its workers are, and the claims decide on them.
fn launched() -> Result<Target> {
    Target::launch(PoolSettings::workers(1)?, worker::launch)
}

#[test]
fn a_launched_service_is_judged_by_its_workers() -> Result {
    let target = launched()?;
    let checked = order(&target, false).does_not_block_its_worker().check()?;
    if expect(&checked, Verdict::Broken) {
        let report = format!("{:#}", checked.report());
        assert!(report.contains("not timed poll by poll"), "{report}");
    }
    let fixed = order(&target, true).does_not_block_its_worker().check()?;
    expect(&fixed, Verdict::Holds);
    let hashing = target
        .get("/health")
        .keeps_answering_during(&login(&target, false))
        .check()?;
    expect(&hashing, Verdict::Broken);
    let offloaded = target
        .get("/health")
        .keeps_answering_during(&login(&target, true))
        .check()?;
    expect(&offloaded, Verdict::Holds);
    Ok(())
}

/// On a launched service a long stretch of CPU shows as the workers' longest stretch
/// serving one request.
#[test]
fn a_launched_service_s_long_stretch_of_cpu_breaks() -> Result {
    let target = launched()?;
    let inline = target
        .get("/digest?inline=1")
        .poll_budget(Duration::from_millis(4))
        .concurrency(4)
        .does_not_block_its_worker()
        .check()?;
    if expect(&inline, Verdict::Broken) {
        let found = inline.report().finding().unwrap_or_default();
        assert!(
            found.contains("computes 10 ms in one stretch serving one request"),
            "{found}"
        );
    }
    Ok(())
}

/// A launch function that fails at once is named before any load.
#[test]
fn a_launch_function_that_fails_at_once_is_named() {
    let err = Target::launch(PoolSettings::workers(1).unwrap(), |_, _| async {
        Err::<(), _>(std::io::Error::other("port 5432 refused"))
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "building the service on its served pool: the launch function returned an error: port 5432 refused"
    );
    let err = Target::launch(PoolSettings::workers(1).unwrap(), |_, _| async {
        Ok::<(), std::io::Error>(())
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .ends_with("the launch function returned before serving a request"),
        "{err}"
    );
    let err = Target::serve_with(PoolSettings::workers(1).unwrap(), || async {
        if true {
            panic!("no DATABASE_URL");
        }
        Ok::<axum::Router, std::io::Error>(axum::Router::new())
    })
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "building the service on its served pool: the builder panicked: no DATABASE_URL"
    );
}

/// In a traffic mix, the audit write a route's task makes on the worker is the workers'
/// waiting outside every route's polls: the mix breaks, and holds with the write offloaded.
#[test]
fn a_mix_counts_what_a_route_s_spawned_task_makes_the_worker_wait() -> Result {
    let target = served()?;
    let mix =
        |offload: bool| target.mix([(order(&target, offload), 1), (target.get("/health"), 1)]);
    let flawed = mix(false).none_blocks_its_worker().check()?;
    if expect(&flawed, Verdict::Broken) {
        let found = flawed.report().finding().unwrap_or_default();
        assert!(found.contains("outside every route's polls"), "{found}");
    }
    expect(&mix(true).none_blocks_its_worker().check()?, Verdict::Holds);
    Ok(())
}

/// The hash offloaded to the blocking pool, 20 at a time on one worker: the offloaded work
/// saturates both cores, and the worker only hands it over — it holds.
#[test]
fn an_offloaded_hash_that_saturates_the_machine_holds() -> Result {
    let target = served()?;
    let checked = login(&target, true).does_not_block_its_worker().check()?;
    expect(&checked, Verdict::Holds);
    Ok(())
}
