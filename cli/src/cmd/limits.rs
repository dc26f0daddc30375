//! `perfshape limits [DIR]`: a run's time against its physical limit.

use std::path::{Path, PathBuf};

use perfshape::claim::artifact_dir;

use crate::exit::Exit;

/// This repository's own check of the suite's speed: sum what the claims of a run
/// measured against their physical limit — what their rounds had to wait for however
/// fast the machine — from their JSON reports (`.ci/run` prints it).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The folder of the claims' JSON reports (default: target/perfshape).
    dir: Option<PathBuf>,
    /// nextest's JUnit report of the same run, for the suite's test time.
    #[arg(long)]
    junit: Option<PathBuf>,
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        limits(
            &self.dir.unwrap_or_else(artifact_dir),
            self.junit.as_deref(),
        )?;
        Ok(Exit::Holds)
    }
}

/// Reads every claim report under `dir` and prints the claims' measured time against their
/// physical limit, and (from nextest's JUnit report) the suite's test time against it.
fn limits(dir: &Path, junit: Option<&Path>) -> perfshape_experiments::Result {
    let io = |what: String| move |e| perfshape::Error::Io { what, source: e };
    let records = perfshape_experiments::report::read_claims(dir)?;
    let claims = records.len();
    let measured: f64 = records.iter().map(|c| c.elapsed / 1e3).sum();
    let limit: f64 = records.iter().filter_map(|c| c.limit).sum::<f64>() / 1e3;
    let unknown = records.iter().filter(|c| c.limit.is_none()).count();
    println!(
        "{claims} claims measured for {measured:.1} s; their physical limit {limit:.1} s (measured ÷ limit {:.2}){}",
        measured / limit.max(f64::MIN_POSITIVE),
        if unknown > 0 {
            format!("; {unknown} without a known limit")
        } else {
            String::new()
        }
    );
    if let Some(junit) = junit {
        let text =
            std::fs::read_to_string(junit).map_err(io(format!("reading {}", junit.display())))?;
        // The first `time="…"` is the whole run's (the <testsuites> element).
        let time = text
            .split("time=\"")
            .nth(1)
            .and_then(|t| t.split('"').next())
            .and_then(|t| t.parse::<f64>().ok())
            .ok_or_else(|| perfshape::Error::Invalid {
                field: "junit",
                value: junit.display().to_string(),
                allowed: "nextest's JUnit report, with a time attribute".into(),
            })?;
        println!(
            "suite test time {time:.1} s = {:.2} × the claims' physical limit",
            time / limit.max(f64::MIN_POSITIVE)
        );
    }
    Ok(())
}
