//! Past one machine, without timing: the schedule an engine runs, the scripts written for
//! Locust and k6 (they name every row and stage; that the engines themselves accept them is
//! tested where the engines are, in tests/engines/scripts.rs), the statistics readers on output captured from real Locust
//! and k6 runs (`tests/data/engines/README.md` says how each was made), the judge's
//! verdicts — and its refusals of partial data and of scripts an engine would refuse.

use perfshape_experiments::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

use perfshape::Verdict;
use perfshape::claim::GateMode;
use perfshape_experiments::experiment::Experiment;
use perfshape_experiments::external::{
    EngineLoad, EngineStats, Judge, Judged, LocustRun, Schedule, k6_script, locustfile,
};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/engines")
        .join(name)
}

/// Seed 004 as the Locust test runs it: test scale, 600 ms loops, 3 rounds.
fn seed004() -> Result<Schedule> {
    seed004_looping(600)
}

/// Seed 004 at test scale with loops of `ms`, 3 rounds: 600 as Locust ran it, 1000 as k6
/// (its least).
fn seed004_looping(ms: u64) -> Result<Schedule> {
    let experiment = Experiment::load(fixture("seed-004-jmeter-endpoints.toml"))?
        .at_test_scale()?
        .with_loop_duration(Duration::from_millis(ms))?;
    Schedule::new(&experiment, 3)
}

/// The schedule a captured statistics file was made with: Locust's at 600 ms, k6's at
/// 1000 ms.
fn schedule_of(file: &str) -> Result<Schedule> {
    seed004_looping(if file.starts_with("k6") { 1000 } else { 600 })
}

/// The open-loop rows of `tests/data/engines/open-loop.toml`, 3 rounds.
fn open_loops() -> Result<Schedule> {
    Schedule::new(&Experiment::load(data("open-loop.toml"))?, 3)
}

fn judge(schedule: &Schedule, stats: &EngineStats) -> Result<Vec<Judged>> {
    let dir = tempfile::tempdir().expect("a scratch folder");
    Judge::new()
        .against_model()
        .artifacts_in(dir.path())
        .gate_mode(GateMode::Advisory)
        .judge(schedule, stats)
}

#[test]
fn a_schedule_interleaves_the_rows_in_rounds() -> Result {
    let schedule = seed004()?;
    let names: Vec<String> = schedule
        .stages
        .iter()
        .map(|s| schedule.request_name(s))
        .collect();
    assert_eq!(
        names,
        [
            "blocking@0",
            "offload@0",
            "mixed@0",
            "async@0", // round 0 in order
            "async@1",
            "mixed@1",
            "offload@1",
            "blocking@1", // round 1 reversed
            "blocking@2",
            "offload@2",
            "mixed@2",
            "async@2",
        ]
    );
    for pair in schedule.stages.windows(2) {
        assert_eq!(pair[0].start + pair[0].length, pair[1].start, "stages abut");
    }
    for (index, row) in schedule.rows.iter().enumerate() {
        assert_eq!(
            row.load,
            EngineLoad::ClosedLoop {
                users: 32,
                think: Duration::from_millis(2),
                ramp: Duration::ZERO,
                duration: Duration::from_millis(600),
            }
        );
        // The drain covers a request that starts just before the end: its 60 ms of work
        // × 1.5, and 100 ms.
        assert!(
            schedule.drain(index) >= Duration::from_millis(190),
            "{row:?}"
        );
    }
    assert_eq!(schedule.users(), 128);
    // A slower service: every drain at least 2 s, names and loops unchanged.
    let slow = schedule.clone().with_drain_at_least(Duration::from_secs(2));
    assert_eq!(slow.stages.len(), 12);
    for (stage, before) in slow.stages.iter().zip(&schedule.stages) {
        assert_eq!(slow.request_name(stage), schedule.request_name(before));
        assert_eq!(stage.length, Duration::from_millis(2600));
    }
    Ok(())
}

#[test]
fn rows_an_engine_cannot_offer_are_refused_by_name() -> Result {
    let seed001 = Experiment::load(fixture("seed-001-client-lifecycle.toml"))?;
    let message = Schedule::new(&seed001, 3).unwrap_err().to_string();
    assert!(
        message.contains("row \"core-sync-new\": client lifecycle per-request"),
        "{message}"
    );
    assert!(message.contains("connection-cap(2 per host)"), "{message}");
    assert!(message.contains("--rows"), "{message}");
    let seed003 = Experiment::load(fixture("seed-003-cpu-bound.toml"))?;
    let message = Schedule::new(&seed003, 3).unwrap_err().to_string();
    assert!(message.contains("in-process"), "{message}");
    let seed004 = Experiment::load(fixture("seed-004-jmeter-endpoints.toml"))?;
    let message = Schedule::new(&seed004, 2).unwrap_err().to_string();
    assert!(
        message.contains("invalid rounds: 2 (allowed: 3 to 15)"),
        "{message}"
    );
    let message = Schedule::only(&seed004, 3, &["nope".into()])
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("\"nope\"") && message.contains("blocking, offload, mixed, async"),
        "{message}"
    );
    // Seed 000's fan-outs and sequential loads are counted loads.
    let seed000 = Experiment::load(fixture("seed-000-why-async.toml"))?;
    let schedule = Schedule::new(&seed000, 3)?;
    assert!(
        schedule
            .rows
            .iter()
            .any(|r| matches!(r.load, EngineLoad::Count { per_user: 1, .. }))
    );
    Ok(())
}

#[test]
fn the_locustfile_is_python_with_a_class_per_row() -> Result {
    let schedule = seed004()?;
    // Locust itself imports it and lists its classes in tests/engines/scripts.rs.
    let source = locustfile(&schedule)?;
    assert_eq!(source.matches("fixed_count = 32").count(), 4);
    for stage in &schedule.stages {
        let entry = format!("({}, {:.3})", stage.round, stage.start.as_secs_f64());
        assert!(source.contains(&entry), "stage {entry} missing");
    }
    for row in ["blocking", "offload", "mixed", "async"] {
        assert!(source.contains(&format!("\"id\": \"{row}\"")), "{row}");
    }
    Ok(())
}

#[test]
fn the_k6_script_parses_and_names_every_stage() -> Result {
    for (fixture_name, executor) in [
        ("seed-004-jmeter-endpoints.toml", "constant-vus"),
        ("seed-000-why-async.toml", "per-vu-iterations"),
    ] {
        let experiment = Experiment::load(fixture(fixture_name))?;
        let schedule = Schedule::new(&experiment, 3)?;
        // k6 itself compiles both in tests/engines/scripts.rs.
        let script = k6_script(&schedule)?;
        assert!(script.contains(executor), "{fixture_name}: {executor}");
        for stage in &schedule.stages {
            let name = schedule.request_name(stage);
            for metric in ["http_reqs", "http_req_failed", "http_req_duration"] {
                let threshold = format!("\"{metric}{{stage:{name}}}\"");
                assert!(script.contains(&threshold), "{fixture_name}: {threshold}");
            }
            assert!(
                script.contains(&format!("tags: {{ stage: \"{name}\" }}")),
                "{name}"
            );
            assert!(script.contains(&format!("startTime: '{}ms'", stage.start.as_millis())));
        }
        for row in &schedule.rows {
            assert!(
                script.contains(&format!("\"{}\": {{ path: \"{}\"", row.id, row.path)),
                "{}",
                row.id
            );
        }
    }
    Ok(())
}

/// Each engine's two formats, captured from one run, give the same stages: Locust's
/// `--json-file` and `_stats.csv`, k6's `handleSummary` data and `--summary-export`.
#[test]
fn every_reader_gives_the_same_stages() -> Result {
    for (a, b) in [
        ("locust-seed004.json", "locust-seed004_stats.csv"),
        ("k6-seed004-summary.json", "k6-seed004-summary-export.json"),
    ] {
        let schedule = schedule_of(a)?;
        let reference = EngineStats::read(&data(a))?.for_schedule(&schedule)?;
        assert_eq!(reference.len(), 12);
        let other = EngineStats::read(&data(b))?;
        let stages = other.for_schedule(&schedule)?;
        for (a, b) in reference.iter().zip(&stages) {
            assert_eq!(a.requests, b.requests, "{}", other.source);
            assert_eq!(b.failures, 0);
            assert!(
                (a.mean_latency - b.mean_latency).abs() < 1e-5,
                "{}",
                other.source
            );
            assert!(
                (a.max_latency - b.max_latency).abs() < 1e-3,
                "{}",
                other.source
            );
        }
    }
    Ok(())
}

#[test]
fn the_judge_decides_seed004_from_each_engines_statistics() -> Result {
    for (file, sent) in [
        ("locust-seed004.json", 2217),
        ("locust-seed004_stats.csv", 2217),
        ("k6-seed004-summary.json", 3814),
        ("k6-seed004-summary-export.json", 3814),
    ] {
        let judged = judge(&schedule_of(file)?, &EngineStats::read(&data(file))?)?;
        let names: Vec<&str> = judged.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "ordering",
                "little-blocking",
                "little-offload",
                "little-mixed",
                "little-async",
                "model-blocking",
                "model-offload",
                "model-mixed",
                "model-async",
            ]
        );
        for j in &judged {
            assert_eq!(
                j.checked.verdict(),
                Verdict::Holds,
                "{file}: {}",
                j.checked.report()
            );
        }
        let ordering = judged[0].checked.report();
        assert_eq!(ordering.relation(), "async > mixed > offload > blocking");
        let accounting = format!("sent {sent} = ok {sent} + failed 0 over 12 stages");
        assert!(
            ordering.explanation()[0].contains(&accounting),
            "{:?}",
            ordering.explanation()
        );
    }
    Ok(())
}

/// The negative control of the judge itself: the same statistics with the blocking and
/// async rows' figures swapped, and with half of every closed loop's requests gone.
#[test]
fn the_judge_breaks_on_a_wrong_order_and_on_idle_users() -> Result {
    let mut stats = EngineStats::read(&data("locust-seed004.json"))?;
    for round in 0..3 {
        let a = stats.stages[&format!("async@{round}")];
        let b = stats.stages[&format!("blocking@{round}")];
        stats.stages.insert(format!("async@{round}"), b);
        stats.stages.insert(format!("blocking@{round}"), a);
    }
    let judged = judge(&seed004()?, &stats)?;
    assert_eq!(
        judged[0].checked.verdict(),
        Verdict::Broken,
        "{}",
        judged[0].checked.report()
    );

    let mut idle = EngineStats::read(&data("locust-seed004.json"))?;
    for stage in idle.stages.values_mut() {
        stage.requests /= 2;
    }
    for j in judge(&seed004()?, &idle)?
        .iter()
        .filter(|j| j.name.starts_with("little-"))
    {
        assert_eq!(
            j.checked.verdict(),
            Verdict::Broken,
            "{}",
            j.checked.report()
        );
    }
    Ok(())
}

#[test]
fn partial_statistics_are_refused_by_name() -> Result {
    let schedule = seed004()?;
    // A stage missing.
    let mut stats = EngineStats::read(&data("locust-seed004.json"))?;
    stats.stages.remove("mixed@1");
    let message = stats.for_schedule(&schedule).unwrap_err().to_string();
    assert!(
        message.contains("no requests for 1 of 12 stages: mixed@1"),
        "{message}"
    );
    // Failed requests.
    let mut stats = EngineStats::read(&data("locust-seed004.json"))?;
    stats.stages.get_mut("offload@2").expect("a stage").failures = 3;
    let message = stats.for_schedule(&schedule).unwrap_err().to_string();
    assert!(
        message.contains("offload@2: 3 of 140 failed (ok 137)"),
        "{message}"
    );
    // A CSV without a column.
    let dir = tempfile::tempdir().expect("a scratch folder");
    let csv = std::fs::read_to_string(data("locust-seed004_stats.csv")).expect("read");
    let cut = dir.path().join("cut_stats.csv");
    std::fs::write(&cut, csv.replace("Failure Count", "Failures")).expect("written");
    let message = EngineStats::read(&cut).unwrap_err().to_string();
    assert!(message.contains("no column \"Failure Count\""), "{message}");
    assert!(message.contains("cut_stats.csv"), "{message}");
    // A k6 summary whose stage lacks its duration submetric.
    let k6 = std::fs::read_to_string(data("k6-seed004-summary.json")).expect("read");
    let mut json: serde_json::Value = serde_json::from_str(&k6).expect("JSON");
    json["metrics"]
        .as_object_mut()
        .expect("metrics")
        .remove("http_req_duration{stage:async@2}");
    let broken = dir.path().join("summary.json");
    std::fs::write(&broken, json.to_string()).expect("written");
    let message = EngineStats::read(&broken).unwrap_err().to_string();
    assert!(
        message.contains("no metric \"http_req_duration{stage:async@2}\""),
        "{message}"
    );
    Ok(())
}

#[test]
fn a_dead_host_is_refused_before_locust_starts() {
    // A port nobody listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let dir = tempfile::tempdir().expect("a scratch folder");
    let started = std::time::Instant::now();
    let error = LocustRun::new(&format!("http://127.0.0.1:{port}"), 2, dir.path()).unwrap_err();
    assert!(
        matches!(error, Error::Gate(perfshape::Error::Unreachable { .. })),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&format!("127.0.0.1:{port}")) && message.contains("connect"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    let message = LocustRun::new("http://127.0.0.1:1/orders", 2, dir.path())
        .unwrap_err()
        .to_string();
    assert!(message.contains("no path"), "{message}");
}

/// k6-operator's runners each write a summary of their share: the judge adds them up.
/// Two runners' summaries, captured from one run split with `--execution-segment`: every
/// stage's requests are the two shares' sum, its mean their weighted mean, its slowest the
/// slower; the sum keeps 32 users in the system and either share alone does not (16); a
/// Locust file cannot be added to k6's.
#[test]
fn the_summaries_of_several_runners_add_up() -> Result {
    let runners = [
        data("k6-seed004-runner-0.json"),
        data("k6-seed004-runner-1.json"),
    ];
    let schedule = seed004_looping(1000)?;
    let added = EngineStats::read_all(&runners)?;
    let parts: Vec<Vec<_>> = runners
        .iter()
        .map(|r| EngineStats::read(r)?.for_schedule(&schedule))
        .collect::<Result<_>>()?;
    for (i, sum) in added.for_schedule(&schedule)?.iter().enumerate() {
        let (a, b) = (parts[0][i], parts[1][i]);
        assert!(
            a.requests > 0 && b.requests > 0,
            "both runners offered stage {i}"
        );
        assert_eq!(sum.requests, a.requests + b.requests);
        let weighted = (a.mean_latency * a.requests as f64 + b.mean_latency * b.requests as f64)
            / sum.requests as f64;
        assert!((sum.mean_latency - weighted).abs() < 1e-9);
        assert_eq!(sum.max_latency, a.max_latency.max(b.max_latency));
    }
    let little = |stats: &EngineStats| -> Result<Vec<Verdict>> {
        Ok(judge(&schedule, stats)?
            .iter()
            .filter(|j| j.name.starts_with("little-"))
            .map(|j| j.checked.verdict())
            .collect())
    };
    assert_eq!(little(&added)?, [Verdict::Holds; 4]);
    assert_eq!(
        little(&EngineStats::read(&runners[0])?)?,
        [Verdict::Broken; 4]
    );
    let message = EngineStats::read_all(&[runners[0].clone(), data("locust-seed004.json")])
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("locust statistics cannot be added to")
            && message.contains("k6-seed004-runner-0.json's k6"),
        "{message}"
    );
    Ok(())
}

/// An open loop is k6's `constant-arrival-rate`, exactly its planned starts at its rate;
/// k6 tags its dropped starts with the scenario alone, and the reader puts them back on
/// their stages. From a captured run (100/s, at most 8 in flight, to 20 ms endpoints on one
/// worker): the async row sent every start, the blocking row's 8 users were busy and k6
/// dropped about half — "offered" holds for the one and breaks for the other.
#[test]
fn an_open_loop_is_an_arrival_rate_and_its_dropped_starts_are_counted() -> Result {
    let schedule = open_loops()?;
    assert_eq!(
        schedule.rows[0].load,
        EngineLoad::Arrival {
            rate: 100.0,
            requests: 150,
            max_in_flight: 8
        }
    );
    let script = k6_script(&schedule)?;
    assert!(script.contains(
        "executor: 'constant-arrival-rate', rate: 150, timeUnit: '1500ms', duration: \
         '1495.000ms', preAllocatedVUs: 8, maxVUs: 8"
    ));
    assert!(script.contains("\"dropped_iterations{scenario:s001}\": [\"count>=0\"]"));

    let stats = EngineStats::read(&data("k6-open-loop-summary.json"))?;
    let stages = stats.for_schedule(&schedule)?;
    for (stage, figures) in schedule.stages.iter().zip(&stages) {
        assert_eq!(figures.requests + figures.dropped, 150, "{stage:?}");
        match schedule.rows[stage.row].id.as_str() {
            "async" => assert_eq!(figures.dropped, 0),
            _ => assert!(figures.dropped > 50, "{figures:?}"),
        }
    }
    let judged = judge(&schedule, &stats)?;
    let verdicts: Vec<(&str, Verdict)> = judged
        .iter()
        .map(|j| (j.name.as_str(), j.checked.verdict()))
        .collect();
    assert_eq!(
        verdicts[..3],
        [
            ("ordering", Verdict::Holds),
            ("offered-async", Verdict::Holds),
            ("offered-blocking", Verdict::Broken),
        ]
    );
    let offered = judged[2].checked.report();
    assert!(
        offered.explanation()[0].contains("starts dropped (no user free)"),
        "{:?}",
        offered.explanation()
    );

    // A summary without the dropped starts of an open loop's stage is refused by name.
    let text = std::fs::read_to_string(data("k6-open-loop-summary.json")).expect("read");
    let mut json: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    json["metrics"]
        .as_object_mut()
        .expect("metrics")
        .remove("dropped_iterations{scenario:s002}");
    let dir = tempfile::tempdir().expect("a scratch folder");
    let cut = dir.path().join("summary.json");
    std::fs::write(&cut, json.to_string()).expect("written");
    let message = EngineStats::read(&cut)?
        .for_schedule(&schedule)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("blocking@1 (an open loop: no dropped_iterations{scenario:s002})"),
        "{message}"
    );
    Ok(())
}

/// What an engine would refuse never reaches it: an open loop for Locust, a closed loop
/// under k6's least duration (k6 1.1 exits 104: "the duration must be at least 1s"), each
/// named with what to change.
#[test]
fn a_script_an_engine_would_refuse_is_refused_here_by_name() -> Result {
    let message = locustfile(&open_loops()?).unwrap_err().to_string();
    assert!(
        message.contains("row \"async\" is an open loop")
            && message.contains("row \"blocking\" is an open loop")
            && message.contains("perfshape export k6"),
        "{message}"
    );
    let message = k6_script(&seed004()?).unwrap_err().to_string();
    assert!(
        message.contains("row \"blocking\" is a closed loop of 600 ms")
            && message.contains("at least 1000 ms")
            && message.contains("--loop-ms"),
        "{message}"
    );
    let mut short = Experiment::load(data("open-loop.toml"))?;
    for row in &mut short.rows {
        if let perfshape_experiments::experiment::Workload::Http(scenario) = &mut row.workload {
            scenario.n = 50;
        }
    }
    let message = k6_script(&Schedule::new(&short, 3)?)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("50 requests at 100/s, 500 ms") && message.contains("raise the row's n"),
        "{message}"
    );
    Ok(())
}
