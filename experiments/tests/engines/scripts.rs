//! The scripts the export writes, accepted by the engines themselves: Locust imports the
//! locustfile and lists a class per row, and k6 validates a script of every executor. They
//! need the engines, so they live here rather than beside the exact tests of the scripts'
//! text (tests/exact/engines.rs), which a machine with Rust alone runs.

use perfshape_experiments::Result;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use perfshape::client::ClientStrategy;
use perfshape_experiments::experiment::Experiment;
use perfshape_experiments::external::{Schedule, find_k6, find_locust, k6_script, locustfile};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(name)
}

/// Seed 004 at test scale with loops of `ms`, 3 rounds.
fn seed004_looping(ms: u64) -> Result<Schedule> {
    let experiment = Experiment::load(fixture("seed-004-jmeter-endpoints.toml"))?
        .at_test_scale()?
        .with_loop_duration(Duration::from_millis(ms))?;
    Schedule::new(&experiment, 3)
}

/// The open-loop rows of `tests/data/engines/open-loop.toml`, 3 rounds.
fn open_loops() -> Result<Schedule> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engines/open-loop.toml");
    Schedule::new(&Experiment::load(data)?, 3)
}

/// Locust imports the locustfile written for seed 004 (`locust --list` runs the file, so a
/// name error fails here where a syntax check would pass) and lists one user class per row.
#[test]
fn locust_lists_a_class_per_row_of_the_locustfile() -> Result {
    let locust = find_locust()?;
    let schedule = seed004_looping(600)?;
    let dir = tempfile::tempdir().expect("a scratch folder");
    let file = dir.path().join("locustfile.py");
    std::fs::write(&file, locustfile(&schedule)?).expect("written");
    let output = Command::new(&locust)
        .arg("-f")
        .arg(&file)
        .arg("--list")
        .output()
        .expect("Locust runs");
    let listed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "Locust refused the locustfile: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let classes: Vec<&str> = listed
        .lines()
        .map(str::trim)
        .filter(|line| line.starts_with("Row"))
        .collect();
    assert_eq!(classes.len(), schedule.rows.len(), "{listed}");
    Ok(())
}

/// k6 itself accepts every script the export writes, one per executor — `constant-vus`,
/// `ramping-vus`, `per-vu-iterations`, `constant-arrival-rate` — by `k6 inspect
/// --execution-requirements`, which validates the scenarios as `k6 run` does (plain `k6
/// inspect` let a 300 ms scenario through).
#[test]
fn k6_accepts_every_executor_the_export_writes() -> Result {
    let k6 = find_k6()?;
    let mut ramped = Experiment::load(fixture("seed-004-jmeter-endpoints.toml"))?
        .at_test_scale()?
        .with_loop_duration(Duration::from_millis(1000))?;
    for client in ramped.closed_loops_mut() {
        if let ClientStrategy::ClosedLoop { ramp, .. } = client {
            *ramp = Duration::from_millis(300);
        }
    }
    let seed000 = Experiment::load(fixture("seed-000-why-async.toml"))?;
    let dir = tempfile::tempdir().expect("a scratch folder");
    for (name, schedule, executor) in [
        ("constant-vus", seed004_looping(1000)?, "'constant-vus'"),
        ("ramping-vus", Schedule::new(&ramped, 3)?, "'ramping-vus'"),
        (
            "per-vu-iterations",
            Schedule::new(&seed000, 3)?,
            "'per-vu-iterations'",
        ),
        ("arrival", open_loops()?, "'constant-arrival-rate'"),
    ] {
        let script = k6_script(&schedule)?;
        assert!(script.contains(executor), "{name}");
        let file = dir.path().join(format!("{name}.js"));
        std::fs::write(&file, &script).expect("written");
        let output = Command::new(&k6)
            .args(["inspect", "--execution-requirements"])
            .arg(&file)
            .output()
            .expect("k6 runs");
        assert!(
            output.status.success(),
            "{name}: k6 refused the script: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(())
}
