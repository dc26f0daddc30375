//! `perfshape report [DIR]`: a run, for people.

use std::path::{Path, PathBuf};

use perfshape::claim::artifact_dir;

use super::files::write;
use crate::exit::Exit;

/// Summarise a run for people: the claims as a Markdown table (appended to
/// $GITHUB_STEP_SUMMARY when set, printed otherwise) and one self-contained HTML page
/// with every claim's rounds against its band, the experiments' tables and timelines,
/// and the probes' curves. Exits 0 once both are written, whatever the claims' verdicts
/// (the gate is the test run's).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The folder of the run's JSON (default: target/perfshape).
    dir: Option<PathBuf>,
    /// Where to write the HTML (default: report.html in that folder).
    #[arg(long)]
    html: Option<PathBuf>,
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        report(&self.dir.unwrap_or_else(artifact_dir), self.html)?;
        Ok(Exit::Holds)
    }
}

/// The Markdown summary and the HTML page of the run in `dir`.
fn report(dir: &Path, html: Option<PathBuf>) -> perfshape_experiments::Result {
    let started = std::time::Instant::now();
    let artifacts = perfshape_experiments::report::read_artifacts(dir)?;
    if artifacts.claims.is_empty()
        && artifacts.experiments.is_empty()
        && artifacts.probes.is_empty()
    {
        return Err(perfshape::Error::Invalid {
            field: "report folder",
            value: dir.display().to_string(),
            allowed: "a folder a run wrote to: claims' JSON from `cargo nextest run`, experiment \
                      tables from `perfshape run`, probes from `perfshape probe` \
                      ($PERFSHAPE_ARTIFACTS, else target/perfshape)"
                .into(),
        }
        .into());
    }
    let markdown = perfshape_experiments::report::claims_markdown(&artifacts.claims);
    let page = perfshape_experiments::report::html_report(&artifacts)?;
    let html = html.unwrap_or_else(|| dir.join("report.html"));
    write(&html, &page)?;
    let md = dir.join("report.md");
    write(&md, &markdown)?;
    match std::env::var_os("GITHUB_STEP_SUMMARY") {
        Some(summary) => {
            use std::io::Write as _;
            let path = PathBuf::from(summary);
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .and_then(|mut f| f.write_all(markdown.as_bytes()))
                .map_err(|e| perfshape::Error::Io {
                    what: format!("appending to $GITHUB_STEP_SUMMARY ({})", path.display()),
                    source: e,
                })?;
            eprintln!("job summary: appended to {}", path.display());
        }
        None => print!("{markdown}"),
    }
    eprintln!(
        "report: {} and {} ({}; {:.0} ms)",
        html.display(),
        md.display(),
        artifacts.counts(),
        started.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
