//! Bad input to the experiments gets a typed error naming what is wrong and what is
//! allowed — a scenario's setting, a strategy's name, a fixture's file, line and field;
//! never a panic.

use std::path::Path;
use std::time::Duration;

use perfshape::client::ClientStrategy;
use perfshape::runtime::Pool;
use perfshape_experiments::experiment::{Experiment, Workload};
use perfshape_experiments::scenario::{Scenario, ServerStrategy};
use perfshape_experiments::{Result, demo};

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
fn an_unknown_server_strategy_lists_the_known_ones() {
    let err = "blockin".parse::<ServerStrategy>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown server strategy \"blockin\" (expected one of: blocking, async, offload, mixed, cpu, lock)"
    );
}

#[test]
fn a_work_time_above_the_cap_is_refused_when_building_the_url() -> Result {
    let server = demo::serve(Pool::workers("server", 1)?)?;
    let err = demo::url(&server, &ServerStrategy::Async, Duration::from_secs(3600)).unwrap_err();
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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
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
