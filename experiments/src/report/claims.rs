//! Claim reports read back from their JSON artifacts, for `perfshape report`.
//!
//! A claim writes its [`ClaimReport`](perfshape::claim::ClaimReport) as JSON when it is
//! decided; this is the same report read back — by another process, perhaps another
//! version, after the run. JSON has no infinity, so an open band edge comes back as
//! `null`, as does the median of a claim that measured no round.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::error::{Error, Result};
use perfshape::__support::short;
use perfshape::claim::{Band, Margin, Verdict, median_interval};

/// One claim as its artifact recorded it.
#[derive(Clone, Debug, Deserialize)]
pub struct ClaimRecord {
    /// The claim's name.
    pub name: String,
    /// `ratio`, `bound`, `figure` or `ordering`.
    pub kind: String,
    /// What is divided by what, or the order claimed.
    pub relation: String,
    /// The band, open edges as `None`.
    pub band: BandRecord,
    /// The ideal figure, when the claim gave one.
    #[serde(default)]
    pub ideal: Option<f64>,
    /// The verdict.
    pub verdict: Verdict,
    /// Why, in one sentence.
    pub reason: String,
    /// The median of the rounds' figures; `None` when no round was measured.
    #[serde(default)]
    pub median: Option<f64>,
    /// The noisiest side's A/A noise floor (relative).
    #[serde(default)]
    pub noise_floor: Option<f64>,
    /// Each side's label and unit.
    #[serde(default)]
    pub sides: Vec<(String, String)>,
    /// Every round.
    #[serde(default)]
    pub rounds: Vec<RoundRecord>,
    /// Milliseconds spent measuring.
    pub elapsed: f64,
    /// The rounds' physical limit in milliseconds, when known.
    #[serde(default)]
    pub limit: Option<f64>,
    /// What the figure means, when the claim says.
    #[serde(default)]
    pub explanation: Vec<String>,
    /// What the sides saw besides their figures.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// Settings as the claim gave them.
    #[serde(default)]
    pub context: BTreeMap<String, String>,
    /// The file it was read from.
    #[serde(skip)]
    pub file: PathBuf,
}

/// A band as JSON holds it: `null` for an open edge.
#[derive(Clone, Copy, Debug, Deserialize)]
pub struct BandRecord {
    /// Lower edge, if any.
    pub lo: Option<f64>,
    /// Upper edge, if any.
    pub hi: Option<f64>,
}

impl BandRecord {
    /// The band, open edges infinite.
    pub fn band(&self) -> Band {
        Band {
            lo: self.lo.unwrap_or(f64::NEG_INFINITY),
            hi: self.hi.unwrap_or(f64::INFINITY),
        }
    }
}

/// One round as JSON holds it.
#[derive(Clone, Debug, Deserialize)]
pub struct RoundRecord {
    /// Each side's figure; `None` where it was not finite.
    pub figures: Vec<Option<f64>>,
    /// The round's figure; `None` where it was not finite.
    pub value: Option<f64>,
    /// Whether the figure lay in the band.
    pub inside: bool,
}

impl ClaimRecord {
    /// The median as a number (NaN when no round was measured).
    pub fn median_or_nan(&self) -> f64 {
        self.median.unwrap_or(f64::NAN)
    }

    /// The rounds' figures, in round order (non-finite ones left out).
    pub fn values(&self) -> Vec<f64> {
        self.rounds.iter().filter_map(|r| r.value).collect()
    }

    /// How far the median sits from the band's nearest edge, in noise floors: computed
    /// here from the median, band and noise floor, so an artifact of any version reads.
    pub fn margin(&self) -> Option<Margin> {
        Margin::of(
            &self.band.band(),
            self.median?,
            self.noise_floor.unwrap_or(0.0),
        )
    }

    /// The median's confidence interval over the rounds, as the rule computes it.
    pub fn interval(&self) -> Option<(f64, f64)> {
        median_interval(&self.values())
    }

    /// Measured time ÷ physical limit, when the limit is known.
    pub fn time_over_limit(&self) -> Option<f64> {
        self.limit.filter(|l| *l > 0.0).map(|l| self.elapsed / l)
    }

    /// The summary row's figures as text, in the order of the summary table's columns after the
    /// verdict and the name: median, band, margin, rounds, noise floor, time ÷ limit ("—"
    /// where unknown). One source for the Markdown and the HTML tables.
    pub fn summary_cells(&self) -> [String; 6] {
        [
            self.median.map_or("—".into(), short),
            self.band.band().to_string(),
            self.margin().map_or("—".into(), |m| m.to_string()),
            self.rounds.len().to_string(),
            self.noise_floor
                .map_or("—".into(), |n| format!("{:.1}%", 100.0 * n)),
            self.time_over_limit()
                .map_or("—".into(), |r| format!("{r:.2}")),
        ]
    }

    /// Broken first, then inconclusive, then holds: what a reviewer reads first.
    fn rank(&self) -> u8 {
        match self.verdict {
            Verdict::Broken => 0,
            Verdict::Inconclusive => 1,
            Verdict::Holds => 2,
        }
    }
}

/// Every claim report in `dir` (not recursive), broken first, then inconclusive, then
/// holds, each with the nearest band edge first. Other JSON there (experiments' raw figures, probes) is left out;
/// a claim report that cannot be read is an error naming its file.
pub fn read_claims(dir: &Path) -> Result<Vec<ClaimRecord>> {
    let mut claims = Vec::new();
    for path in files(dir)? {
        if let Some(value) = json(&path)?
            && let Some(claim) = claim_from(value, &path)?
        {
            claims.push(claim);
        }
    }
    sort_claims(&mut claims);
    Ok(claims)
}

/// The claim report `value` read from `path`, or `None` when it is other JSON (a claim
/// report has a verdict and a relation); an error naming the file when it is a claim
/// report that does not read.
pub(crate) fn claim_from(value: serde_json::Value, path: &Path) -> Result<Option<ClaimRecord>> {
    if value.get("verdict").is_none() || value.get("relation").is_none() {
        return Ok(None);
    }
    let mut claim: ClaimRecord = serde_json::from_value(value).map_err(|e| {
        Error::invalid(
            "claim report",
            path.display(),
            format!("a claim's JSON as perfshape writes it ({e})"),
        )
    })?;
    claim.file = path.to_path_buf();
    Ok(Some(claim))
}

/// Broken first, then inconclusive, then holds; within each, the nearest edge first (the
/// smallest margin in noise floors, on either side of the edge), then by name.
pub(crate) fn sort_claims(claims: &mut [ClaimRecord]) {
    let nearness = |c: &ClaimRecord| c.margin().map_or(f64::INFINITY, |m| m.floors.abs());
    claims.sort_by(|a, b| {
        a.rank()
            .cmp(&b.rank())
            .then_with(|| nearness(a).total_cmp(&nearness(b)))
            .then_with(|| a.name.cmp(&b.name))
    });
}

/// The summary table's columns, as [`ClaimRecord::summary_cells`] fills them after the
/// verdict and the claim's name.
pub(super) const SUMMARY_COLUMNS: [&str; 8] = [
    "verdict",
    "claim",
    "median",
    "band",
    "margin",
    "rounds",
    "noise floor",
    "time ÷ limit",
];

/// The files in `dir` (not recursive), by name.
pub(crate) fn files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Error::io(format!("reading {}", dir.display()), e))?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    Ok(paths)
}

/// A `.json` file's value; `None` for any other file, or one that is not JSON (of ours).
pub(crate) fn json(path: &Path) -> Result<Option<serde_json::Value>> {
    if path.extension().is_none_or(|x| x != "json") {
        return Ok(None);
    }
    Ok(serde_json::from_str(&read(path)?).ok())
}

/// A file's text, or an error naming it.
pub(crate) fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(format!("reading {}", path.display()), e))
}
