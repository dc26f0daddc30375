//! What a run left in its artifact folder, read back for `perfshape report`: the claims'
//! reports, the experiments' tables and timelines, the probes.

use std::path::{Path, PathBuf};

use super::claims::{ClaimRecord, claim_from, files, json, read, sort_claims};
use crate::error::{Error, Result};
use perfshape::probe::ProbeReport;

/// Everything a report shows, read from one folder.
#[derive(Clone, Debug, Default)]
pub struct Artifacts {
    /// The folder read.
    pub dir: PathBuf,
    /// Claim reports, broken first.
    pub claims: Vec<ClaimRecord>,
    /// Experiment tables, by id.
    pub experiments: Vec<ExperimentArtifact>,
    /// Probes, by file name.
    pub probes: Vec<ProbeReport>,
}

impl Artifacts {
    /// What was read, counted: "57 claims, 5 experiment tables, 1 probe".
    pub fn counts(&self) -> String {
        format!(
            "{}, {}, {}",
            plural(self.claims.len(), "claim"),
            plural(self.experiments.len(), "experiment table"),
            plural(self.probes.len(), "probe")
        )
    }
}

/// `n` and `noun`, with an s unless there is one.
pub(super) fn plural(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// One experiment as `perfshape run` left it: `<id>.table.md` (its table) and `<id>.svg`
/// (its timeline).
#[derive(Clone, Debug)]
pub struct ExperimentArtifact {
    /// The experiment's id (`seed-000`).
    pub id: String,
    /// Its table and notes, as Markdown.
    pub table: String,
    /// Its timeline, when one was drawn.
    pub timeline: Option<String>,
}

/// How an experiment's table is named in the artifact folder: `<id>.table.md`.
pub const TABLE_SUFFIX: &str = ".table.md";

/// Reads `dir`: every claim report, every experiment table with its timeline, every probe.
/// One listing of the folder, each JSON file read and parsed once.
pub fn read_artifacts(dir: &Path) -> Result<Artifacts> {
    let mut claims = Vec::new();
    let mut probes = Vec::new();
    let mut experiments = Vec::new();
    for path in files(dir)? {
        if let Some(value) = json(&path)? {
            if value.get("steps").is_some() && value.get("pool_estimate").is_some() {
                probes.push(serde_json::from_value(value).map_err(|e| {
                    Error::invalid(
                        "probe report",
                        path.display(),
                        format!("a probe's JSON as `perfshape probe` writes it ({e})"),
                    )
                })?);
            } else if let Some(claim) = claim_from(value, &path)? {
                claims.push(claim);
            }
            continue;
        }
        let Some(id) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(TABLE_SUFFIX))
        else {
            continue;
        };
        let svg = dir.join(format!("{id}.svg"));
        experiments.push(ExperimentArtifact {
            id: id.to_string(),
            table: read(&path)?,
            timeline: svg.exists().then(|| read(&svg)).transpose()?,
        });
    }
    sort_claims(&mut claims);
    Ok(Artifacts {
        dir: dir.to_path_buf(),
        claims,
        experiments,
        probes,
    })
}
