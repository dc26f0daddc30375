//! Holds a team accepts, allowed by name — by route, by call, by a function in the held
//! worker's stack — pass and are listed as allowed with what they did; an allow that
//! matched nothing is said; and a watch installed once in a helper (a guard) decides when
//! the test's app is dropped.

use perfshape::{Allow, Checked, PoolSettings, Result, Target, Verdict, Watch};

use crate::common::handlers;
use crate::{client, decided, get};

/// Two requests to the sleep twin (2 ms of `std::thread::sleep` on the worker), watched
/// with `allow`.
async fn the_sleep_twin(allow: Option<Allow>) -> Result<Checked> {
    let target = Target::serve(PoolSettings::workers(1)?, handlers::app())?;
    let mut watch = target.watch()?;
    if let Some(allow) = allow {
        watch = watch.allow(allow);
    }
    let client = client();
    for path in ["/wait?us=2000&ms=5", "/wait?us=2000&ms=5"] {
        get(&client, &target, path).await?;
    }
    watch.nothing_blocked()
}

/// `checked` holds with `GET /wait` allowed by `allow`, listed in the report's lines and in
/// its snapshot's facts.
fn assert_allowed(checked: &Checked, allow: &Allow) {
    let said = format!("{:#}", checked.report());
    assert_eq!(checked.verdict(), Verdict::Holds, "{said}");
    let listed = format!("allowed by {allow}: GET /wait blocked in clock_nanosleep()");
    assert!(said.contains(&listed), "{listed:?} missing from:\n{said}");
    assert!(
        checked
            .report()
            .headline()
            .ends_with("but as allowed: GET /wait"),
        "{}",
        checked.report().headline()
    );
    let fact = &checked.summary().facts["GET /wait"];
    assert!(
        fact.starts_with("2 requests: waits in a call on its worker")
            && fact.ends_with(&format!(", allowed by {allow}")),
        "{fact}"
    );
}

#[tokio::test]
async fn a_route_allowed_by_name_holds_and_is_listed() -> Result {
    let allow = Allow::route("GET /wait");
    let checked = the_sleep_twin(Some(allow.clone())).await?;
    if decided(&checked).is_some() {
        assert_allowed(&checked, &allow);
    }
    Ok(())
}

#[tokio::test]
async fn a_call_allowed_by_name_holds_and_is_listed() -> Result {
    let allow = Allow::call("clock_nanosleep");
    let checked = the_sleep_twin(Some(allow.clone())).await?;
    if decided(&checked).is_some() {
        assert_allowed(&checked, &allow);
    }
    Ok(())
}

/// By the function in the held worker's stack, where stacks are read; elsewhere the allow
/// allows nothing and says why.
#[tokio::test]
async fn a_function_allowed_by_name_holds_where_the_stack_is_read() -> Result {
    let allow = Allow::function("watched::common::handlers::wait");
    let checked = the_sleep_twin(Some(allow.clone())).await?;
    if decided(&checked).is_none() {
        return Ok(());
    }
    if cfg!(any(perfshape_portable, not(target_os = "linux"))) {
        let said = format!("{:#}", checked.report());
        assert_eq!(checked.verdict(), Verdict::Broken, "{said}");
        assert!(said.contains("could not be matched"), "{said}");
        return Ok(());
    }
    assert_allowed(&checked, &allow);
    Ok(())
}

/// An allow whose function no held worker's stack had leaves the hold broken, and says so.
#[tokio::test]
async fn an_allow_that_matched_nothing_is_said() -> Result {
    let checked = the_sleep_twin(Some(Allow::function("shop::config::load"))).await?;
    if decided(&checked).is_none() {
        return Ok(());
    }
    let said = format!("{:#}", checked.report());
    assert_eq!(checked.verdict(), Verdict::Broken, "{said}");
    if cfg!(any(perfshape_portable, not(target_os = "linux"))) {
        assert!(said.contains("could not be matched"), "{said}");
    } else {
        assert!(
            said.contains("allowed function `shop::config::load`: no held worker's stack had it"),
            "{said}"
        );
    }
    Ok(())
}

/// Where the watch's reads are made, that a guard's drop failed the test with the watch's
/// claim, broken.
fn assert_failed_broken(dropped: std::thread::Result<()>) {
    if cfg!(any(perfshape_portable, not(target_os = "linux"))) {
        return;
    }
    let panic = dropped.expect_err("a guard whose route blocked fails the test");
    let said = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(
        said.starts_with("broken: \"no route the test called blocks its worker\""),
        "{said}"
    );
}

/// A watch that decides when its guard is dropped: where a route blocked, dropping it
/// fails the test with the claim named; where none did, or no request reached it, it
/// passes; and a test that decided early leaves the guard nothing to do.
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn a_guard_decides_when_it_is_dropped() -> Result {
    if perfshape::claim::GateMode::from_env()? != perfshape::claim::GateMode::Strict {
        return Ok(());
    }
    let target = Target::serve(PoolSettings::workers(1)?, handlers::app())?;
    let client = client();
    // A route that blocks: the drop panics, naming the watch's claim.
    let guard = target.watch()?.gate_on_drop();
    for _ in 0..2 {
        get(&client, &target, "/wait?us=2000&ms=5").await?;
    }
    let dropped = tokio::task::spawn_blocking(move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(guard)))
    })
    .await
    .expect("the drop ran");
    assert_failed_broken(dropped);
    // Correct routes, and no request at all: the drop passes.
    let guard = target.watch()?.gate_on_drop();
    get(&client, &target, "/wait?us=2000&ms=5&offload=1").await?;
    tokio::task::spawn_blocking(move || drop(guard))
        .await
        .expect("a guard whose routes held passes");
    let guard = target.watch()?.gate_on_drop();
    tokio::task::spawn_blocking(move || drop(guard))
        .await
        .expect("a guard no request reached has nothing to decide");
    // Decided early: the report is the test's, and the drop decides nothing more.
    let guard = target
        .watch()?
        .gate_on_drop()
        .allow(Allow::route("GET /wait"));
    get(&client, &target, "/wait?us=2000&ms=5").await?;
    get(&client, &target, "/wait?us=2000&ms=5").await?;
    let checked = guard.nothing_blocked()?;
    if decided(&checked).is_some() {
        assert_eq!(checked.verdict(), Verdict::Holds, "{:#}", checked.report());
    }
    Ok(())
}

/// A layer's watch, guarded, on a router served on the test's own runtime — the helper
/// that spawns `axum::serve` with `tokio::spawn`: the sleep twin fails when the guard
/// drops at the end of the test.
#[tokio::test]
async fn a_guarded_layer_on_the_tests_own_runtime_decides_at_the_end() -> Result {
    if perfshape::claim::GateMode::from_env()? != perfshape::claim::GateMode::Strict {
        return Ok(());
    }
    let (layer, watch) = Watch::layer();
    let guard = watch.gate_on_drop();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a port");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(async move {
        axum::serve(listener, handlers::app().layer(layer))
            .await
            .expect("served")
    });
    let client = client();
    for _ in 0..2 {
        let answered = client
            .get(format!("http://{address}/wait?us=2000&ms=5"))
            .send()
            .await
            .expect("an answer");
        assert!(answered.status().is_success());
    }
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(guard)));
    assert_failed_broken(dropped);
    Ok(())
}
