//! Engines that fail end the run with their own last words, never a verdict: a Locust
//! master that exits non-zero or whose workers never connect, a k6 runner that exits
//! non-zero — each named with its command and the last lines of its output.

use perfshape_experiments::Result;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use perfshape::PoolSettings;
use perfshape_experiments::experiment::Experiment;
use perfshape_experiments::external::{K6Run, LocustRun, Schedule};

/// Seed 004 at test scale with loops of `ms`, 3 rounds.
fn seed004(ms: u64) -> Result<Schedule> {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/seed-004-jmeter-endpoints.toml");
    let experiment = Experiment::load(fixture)?
        .at_test_scale()?
        .with_loop_duration(Duration::from_millis(ms))?;
    Schedule::new(&experiment, 3)
}

/// An executable shell script at `path`.
fn script(path: &Path, body: &str) -> PathBuf {
    std::fs::write(path, format!("#!/bin/sh\n{body}")).expect("written");
    Command::new("chmod")
        .arg("+x")
        .arg(path)
        .status()
        .expect("chmod");
    path.to_path_buf()
}

/// A Locust that exits non-zero, and a master whose workers never connect, end the run
/// with the master's own words — never a verdict.
#[test]
fn a_failing_locust_is_named() -> Result {
    let server = perfshape_experiments::demo::target(PoolSettings::workers(1)?)?;
    let host = server.url_of("/")?.trim_end_matches('/').to_string();
    let dir = tempfile::tempdir().expect("a scratch folder");
    let schedule = seed004(600)?;
    let failing = LocustRun::new(&host, 2, dir.path())?.executable("/bin/false");
    let message = failing.run(&schedule).unwrap_err().to_string();
    assert!(
        message.contains("the master exited with exit status: 1"),
        "{message}"
    );

    // Workers that start and exit at once: the master waits 1 s for them, then gives up.
    let real = perfshape_experiments::external::find_locust()?;
    let fake = script(
        &dir.path().join("locust-without-workers.sh"),
        &format!(
            "case \"$*\" in *--worker*) exit 0;; esac\nexec {} \"$@\"\n",
            real.display()
        ),
    );
    let lonely = LocustRun::new(&host, 2, dir.path())?
        .executable(&fake)
        .worker_wait(Duration::from_secs(1));
    let message = lonely.run(&schedule).unwrap_err().to_string();
    assert!(message.contains("locust: the master exited"), "{message}");
    assert!(message.to_lowercase().contains("worker"), "{message}");
    Ok(())
}

/// A k6 runner that exits non-zero (here 104, k6's code for a script it refuses) ends the
/// run with its command and its last lines, whichever runner it is; the other runner is
/// waited for, not left behind.
#[test]
fn a_failing_k6_is_named() -> Result {
    let server = perfshape_experiments::demo::target(PoolSettings::workers(1)?)?;
    let host = server.url_of("/")?.trim_end_matches('/').to_string();
    let dir = tempfile::tempdir().expect("a scratch folder");
    let schedule = seed004(1000)?;
    let refusing = script(
        &dir.path().join("k6-refusing.sh"),
        "case \"$*\" in *1/2:1*) echo 'level=error msg=\"scenario s000 has configuration errors\"'; exit 104;; esac\nexit 0\n",
    );
    let split = K6Run::new(&host, 2, dir.path().join("run"))?.executable(&refusing);
    let message = split.run(&schedule).unwrap_err().to_string();
    assert!(
        message.contains("runner 1 exited with exit status: 104")
            && message.contains("--execution-segment 1/2:1")
            && message.contains("scenario s000 has configuration errors"),
        "{message}"
    );
    // A runner that exits 0 without a summary is named too.
    let silent = K6Run::new(&host, 1, dir.path().join("silent"))?.executable("/bin/true");
    let message = silent.run(&schedule).unwrap_err().to_string();
    assert!(
        message.contains("runner 0 exited without writing") && message.contains("summary-0.json"),
        "{message}"
    );
    Ok(())
}
