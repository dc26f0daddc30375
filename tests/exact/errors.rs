//! Bad input gets a typed error naming what is wrong and what is allowed; never a panic.

use std::path::Path;
use std::time::Duration;

use perfshape::experiment::{Experiment, Workload};
use perfshape::{
    Error, PoolSettings, Result, client::ClientStrategy, client::Lifecycle, client::LoadClient,
    pool::Pool, scenario::Scenario, scenario::ServerStrategy,
};

#[test]
fn zero_workers_names_the_field_and_the_range() {
    let err = PoolSettings::new(0, 512).unwrap_err();
    assert_eq!(err.to_string(), "invalid workers: 0 (allowed: 1 to 256)");
    let err = PoolSettings::new(2, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid max_blocking: 0 (allowed: 1 to 4096)"
    );
}

#[test]
fn a_scenario_refuses_zero_requests_and_too_much_work() {
    let err = Scenario::builder().requests(0).build().unwrap_err();
    assert_eq!(err.to_string(), "invalid n: 0 (allowed: 1 to 100000)");
    let err = Scenario::builder()
        .work(Duration::from_secs(61))
        .build()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid work_ms: 61000 ms (allowed: 0 ms to 60000 ms)"
    );
    let err = Scenario::builder()
        .client(ClientStrategy::SyncOverAsync { threads: 0 })
        .build()
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid threads: 0 (allowed: 1 to 1024)");
}

#[test]
fn unknown_strategy_names_list_the_known_ones() {
    let err = "blockin".parse::<ServerStrategy>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown server strategy \"blockin\" (expected one of: blocking, async, offload, mixed, cpu, lock)"
    );
    let err = "fanout".parse::<ClientStrategy>().unwrap_err();
    assert!(matches!(err, Error::Unknown { .. }));
    assert!(
        err.to_string()
            .contains("sequential, fan-out, sync-over-async")
    );
    let err = "factory".parse::<Lifecycle>().unwrap_err();
    assert!(
        err.to_string()
            .contains("shared, per-request, pooled, connection-cap")
    );
}

#[test]
fn a_load_of_zero_requests_is_refused_before_anything_is_sent() -> Result {
    let client = LoadClient::new(Pool::workers("client", 1)?, Lifecycle::Shared)?;
    let err = client
        .run(ClientStrategy::FanOut, "http://127.0.0.1:9/", 0)
        .unwrap_err();
    assert_eq!(err.to_string(), "invalid n: 0 (allowed: 1 to 100000)");
    Ok(())
}

#[test]
fn a_work_time_above_the_cap_is_refused_when_building_the_url() -> Result {
    let server = perfshape::server::Server::start(Pool::workers("server", 1)?)?;
    let err = server
        .url(&ServerStrategy::Async, Duration::from_secs(3600))
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid work_ms: 3600000 ms (allowed: 0 ms to 60000 ms)"
    );
    Ok(())
}

const GOOD: &str = r#"
[experiment]
id = "t"
title = "t"
source = "t"
scale = "t"
published_unit = "s"
baseline = "a"

[[scenario]]
id = "a"
label = "a"
server = "blocking"
client = "fan-out"
workers = 2
n = 4
work_ms = 20
published = 1.0
"#;

fn parse(text: &str) -> String {
    Experiment::parse(Path::new("fixtures/bad.toml"), text)
        .unwrap_err()
        .to_string()
}

#[test]
fn the_good_fixture_text_parses() -> Result {
    let experiment = Experiment::parse(Path::new("fixtures/good.toml"), GOOD)?;
    assert_eq!(experiment.rows.len(), 1);
    let Workload::Http(scenario) = &experiment.rows[0].workload else {
        panic!("a server makes an HTTP row");
    };
    assert_eq!(scenario.n, 4);
    Ok(())
}

#[test]
fn every_shipped_fixture_loads() -> Result {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut loaded = 0;
    for entry in std::fs::read_dir(&dir).expect("fixtures/ exists") {
        let path = entry.expect("readable entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let experiment = Experiment::load(&path)?;
            assert!(!experiment.rows.is_empty(), "{}", path.display());
            loaded += 1;
        }
    }
    assert!(loaded >= 1, "no fixture found in {}", dir.display());
    Ok(())
}

#[test]
fn an_unknown_strategy_names_file_line_and_field() {
    let text = GOOD.replace(r#"server = "blocking""#, r#"server = "blockin""#);
    assert_eq!(
        parse(&text),
        "fixtures/bad.toml:13: scenario[0].server: unknown server strategy \"blockin\" (expected one of: blocking, async, offload, mixed, cpu, lock)"
    );
}

#[test]
fn zero_requests_names_the_line_of_n() {
    let text = GOOD.replace("n = 4", "n = 0");
    assert_eq!(
        parse(&text),
        "fixtures/bad.toml:16: scenario[0].n: invalid n: 0 (allowed: 1 to 100000)"
    );
}

#[test]
fn work_above_the_cap_names_the_line_of_work_ms() {
    let text = GOOD.replace("work_ms = 20", "work_ms = 90000");
    assert_eq!(
        parse(&text),
        "fixtures/bad.toml:17: scenario[0].work_ms: invalid work_ms: 90000 ms (allowed: 0 ms to 60000 ms)"
    );
}

#[test]
fn a_missing_field_is_named() {
    let text = GOOD.replace("workers = 2\n", "");
    assert_eq!(
        parse(&text),
        "fixtures/bad.toml:11: scenario[0].workers: invalid workers: missing (allowed: a value, for HTTP scenarios)"
    );
}

#[test]
fn a_closed_loop_without_users_is_named() {
    let text = GOOD.replace(
        r#"client = "fan-out""#,
        "client = \"closed-loop\"\nduration_ms = 100",
    );
    assert_eq!(
        parse(&text),
        "fixtures/bad.toml:11: scenario[0].users: invalid users: missing (allowed: a value, for closed-loop scenarios)"
    );
}

#[test]
fn an_unknown_in_process_strategy_names_its_line() {
    let text = GOOD.replace(r#"server = "blocking""#, r#"inprocess = "nio""#);
    assert_eq!(
        parse(&text),
        "fixtures/bad.toml:13: scenario[0].inprocess: unknown in-process strategy \"nio\" (expected one of: aio, bio, blocking-inside-async)"
    );
}

#[test]
fn a_row_must_say_what_it_runs_exactly_once() {
    let text = GOOD.replace(
        r#"server = "blocking""#,
        "server = \"blocking\"\ncpu = \"rayon\"",
    );
    let message = parse(&text);
    assert!(
        message.contains("exactly one of server (HTTP), inprocess or cpu"),
        "{message}"
    );
}

#[test]
fn a_pooled_lifecycle_needs_its_client_count() {
    let text = GOOD.replace("workers = 2", "workers = 2\nlifecycle = \"pooled\"");
    assert_eq!(
        parse(&text),
        "fixtures/bad.toml:11: scenario[0].clients: invalid clients: missing (allowed: a value, for pooled scenarios)"
    );
}

#[test]
fn an_unknown_field_is_named_with_its_line() {
    let text = GOOD.replace("n = 4", "n = 4\nrequests = 4");
    let message = parse(&text);
    assert!(message.starts_with("fixtures/bad.toml:17:"), "{message}");
    assert!(message.contains("unknown field `requests`"), "{message}");
}

#[test]
fn malformed_toml_names_the_line() {
    let text = GOOD.replace("n = 4", "n = = 4");
    let message = parse(&text);
    assert!(message.starts_with("fixtures/bad.toml:16:"), "{message}");
}

#[test]
fn a_negative_count_is_a_type_error_on_its_line() {
    let text = GOOD.replace("n = 4", "n = -4");
    let message = parse(&text);
    assert!(message.starts_with("fixtures/bad.toml:16:"), "{message}");
}

#[test]
fn an_unknown_baseline_lists_the_scenario_ids() {
    let text = GOOD.replace(r#"baseline = "a""#, r#"baseline = "z""#);
    assert_eq!(
        parse(&text),
        "fixtures/bad.toml:8: experiment.baseline: unknown scenario id \"z\" (expected one of: a)"
    );
}

#[test]
fn a_missing_file_is_a_read_error_naming_it() {
    let err = Experiment::load("fixtures/does-not-exist.toml").unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with("fixtures/does-not-exist.toml:1: cannot read the fixture"),
        "{message}"
    );
}

#[test]
fn a_poll_budget_of_zero_and_a_waiting_share_outside_the_unit_are_refused_by_name() -> Result {
    let target = perfshape::Target::serve(PoolSettings::workers(1)?, axum::Router::new())?;
    // Named where the chain ends: the claim's check(), or the endpoint's first request.
    let err = target
        .get("/orders")
        .poll_budget(Duration::ZERO)
        .does_not_block_its_worker()
        .check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid poll budget: 0ns (allowed: a duration above 0 and at most 60 s (the most CPU one poll may use))"
    );
    for share in [0.0, 1.5, -0.05, f64::NAN] {
        let err = target
            .get("/orders")
            .waits_at_most(share)
            .preflight()
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("invalid waiting share: {share}")),
            "{err}"
        );
        assert!(
            err.to_string()
                .ends_with("(allowed: a share of each request in (0, 1], e.g. 0.05 for 5 %)"),
            "{err}"
        );
    }
    Ok(())
}

/// The concurrency-limit claim refuses a bad `up_to`, an `up_to` below the pool it claims
/// and a step shorter than one request by name, before any load: the router counts what
/// reached it (none, none, and the three requests that measured the step too short).
#[test]
fn a_concurrency_limit_refuses_its_bad_settings_before_any_load() -> Result {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let seen = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&seen);
    let router = axum::Router::new().route(
        "/slow",
        axum::routing::get(move || {
            counted.fetch_add(1, Ordering::SeqCst);
            async {
                tokio::time::sleep(Duration::from_millis(30)).await;
                "slow"
            }
        }),
    );
    let target = perfshape::Target::serve(PoolSettings::workers(1)?, router)?;
    let limit = || target.get("/slow").concurrency_limit();
    let refused = |claim: perfshape::Claim<'static>| match claim.check() {
        Err(error) => error.to_string(),
        Ok(checked) => panic!("a bad setting was measured: {}", checked.report()),
    };
    assert_eq!(
        refused(limit().up_to(0).about(2.0)),
        "invalid up_to: 0 (allowed: 1 to 4096)"
    );
    assert_eq!(
        refused(limit().up_to(16).about(40.0)),
        "invalid up_to: 16 (allowed: at least the pool claimed, 40: a sweep up to 16 callers cannot reach it)"
    );
    assert_eq!(
        seen.load(Ordering::SeqCst),
        0,
        "nothing is sent before the checks"
    );
    let message = refused(limit().step(Duration::from_millis(10)).about(1.0));
    assert!(
        message.starts_with("invalid step: 10 ms (allowed: at least one request's time: ")
            && message.ends_with(" ms, the quickest of 3 GET /slow alone)"),
        "{message}"
    );
    assert_eq!(
        seen.load(Ordering::SeqCst),
        3,
        "three requests, then the refusal"
    );
    Ok(())
}

/// A ready-made claim's band and sentences are its model's: a setter that would replace
/// them silently is refused by name before any load, and the named replacement is shown in
/// the claim's settings (and so in its snapshot) beside the model's band.
#[test]
fn a_ready_made_claim_refuses_a_silent_new_band_and_shows_a_named_one() -> Result {
    let router = axum::Router::new().route("/", axum::routing::get(|| async { "ok" }));
    let target = perfshape::Target::serve(PoolSettings::workers(1)?, router)?;
    let endpoint = target.get("/");
    let refused = match endpoint.does_not_block_its_worker().at_most(50.0).check() {
        Err(error) => error.to_string(),
        Ok(checked) => panic!("a silent band was measured: {}", checked.report()),
    };
    assert!(
        refused.starts_with("invalid setting: at_most (allowed: a ready-made claim's band and sentences are its model's; `band_set_by_test(…)` replaces its band ≤ 1 by name"),
        "{refused}"
    );
    let explained = endpoint
        .does_not_block_its_worker()
        .explain(|_| vec!["fine".into()])
        .check();
    assert!(
        matches!(&explained, Err(e) if e.to_string().starts_with("invalid setting: explain")),
        "{explained:?}"
    );
    let claim = endpoint
        .does_not_block_its_worker()
        .band_set_by_test(perfshape::claim::Band::at_most(2.0));
    let settings = format!("{claim:?}");
    assert!(
        settings.contains("≤ 2, set by the test (the model's: ≤ 1)"),
        "{settings}"
    );
    Ok(())
}
