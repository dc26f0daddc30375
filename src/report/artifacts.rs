//! What a run left in its artifact folder, read back for `perfshape report`: the claims'
//! reports, the experiments' tables and timelines, the probes.

use std::path::{Path, PathBuf};

use super::claims::{ClaimRecord, json_files, read, read_claims};
use crate::error::{Error, Result};
use crate::probe::ProbeReport;

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
pub fn read_artifacts(dir: &Path) -> Result<Artifacts> {
    let claims = read_claims(dir)?;
    let mut probes = Vec::new();
    for path in json_files(dir)? {
        let text = read(&path)?;
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&text) else {
            continue;
        };
        if value.get("steps").is_none() || value.get("pool_estimate").is_none() {
            continue;
        }
        probes.push(serde_json::from_value(value).map_err(|e| Error::Invalid {
            field: "probe report",
            value: path.display().to_string(),
            allowed: format!("a probe's JSON as `perfshape probe` writes it ({e})"),
        })?);
    }
    let mut experiments = Vec::new();
    let mut tables: Vec<(String, PathBuf)> = std::fs::read_dir(dir)
        .map_err(|e| Error::Io {
            what: format!("reading {}", dir.display()),
            source: e,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            Some((name.strip_suffix(TABLE_SUFFIX)?.to_string(), p.clone()))
        })
        .collect();
    tables.sort();
    for (id, path) in tables {
        let svg = dir.join(format!("{id}.svg"));
        experiments.push(ExperimentArtifact {
            id,
            table: read(&path)?,
            timeline: svg.exists().then(|| read(&svg)).transpose()?,
        });
    }
    Ok(Artifacts {
        dir: dir.to_path_buf(),
        claims,
        experiments,
        probes,
    })
}
