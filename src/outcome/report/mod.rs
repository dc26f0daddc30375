//! What a claim measured and decided: the full report (for people and JSON) and the
//! shape summary (for snapshots).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

use super::advice::Advice;
use super::band::Band;
use super::expected::Expected;
use super::gate_mode::{GATE_ENV, GateMode};
use super::margin::Margin;
use super::unit::Unit;
use super::verdict::{Verdict, median};

/// One round: each side's figure (in side order) and the round's figure.
#[derive(Clone, Debug, Serialize)]
pub struct Round {
    /// Each side's measurement, in the order the sides were given.
    pub figures: Vec<f64>,
    /// The round's figure (ratio, measured ÷ expected, or tightest ordering step).
    pub value: f64,
    /// Whether the figure lies in the band.
    pub inside: bool,
}

/// Everything a claim measured and decided; `Display` is the failure message.
///
/// Read through its accessors: a claim builds it, and a field added to what a claim
/// reports is not a breaking change for code that reads it.
#[derive(Clone, Debug, Serialize)]
#[non_exhaustive]
pub struct ClaimReport {
    /// The claim's name.
    pub(crate) name: String,
    /// `ratio`, `bound`, `figure` or `ordering`.
    pub(crate) kind: &'static str,
    /// What is divided by what, or the order claimed.
    pub(crate) relation: String,
    /// The band the median must lie in.
    pub(crate) band: Band,
    /// The ideal figure, when given.
    pub(crate) ideal: Option<f64>,
    /// For bound claims: the expectation and its unit.
    pub(crate) expected: Option<(Expected, Unit)>,
    /// The verdict.
    pub(crate) verdict: Verdict,
    /// Why, in one sentence.
    pub(crate) reason: String,
    /// The median of the rounds' figures.
    pub(crate) median: f64,
    /// The noisiest side's A/A noise floor (relative).
    pub(crate) noise_floor: f64,
    /// How far the median sits from the band's nearest edge ([`Margin`]).
    pub(crate) margin: Option<Margin>,
    /// Each side's label and unit.
    pub(crate) sides: Vec<(String, Unit)>,
    /// Every round.
    pub(crate) rounds: Vec<Round>,
    /// Settings (pool, N, work) as given by the claim.
    pub(crate) context: BTreeMap<String, String>,
    /// The machine's available parallelism.
    pub(crate) cores: usize,
    /// The CPUs a cgroup quota allows this process (a container's CPU limit), where one
    /// limits it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) cpu_quota: Option<f64>,
    /// Strict or advisory.
    pub(crate) gate: GateMode,
    /// The read this platform does not make (off Linux: the machine's CPU, a worker's
    /// run-queue time), when that is why the claim is inconclusive: its gate neither
    /// snapshots nor fails it, as a test ignored on a platform is not failed there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) unread: Option<String>,
    /// The time budget the rounds were given ([`Claim::budget`](crate::Claim::budget)).
    pub(crate) budget: Duration,
    /// Where the rounds stopped unsettled: the budget spent or the most rounds taken, and
    /// how busy the machine was.
    pub(crate) out_of_time: Option<super::OutOfTime>,
    /// Time spent measuring.
    #[serde(with = "crate::vocab::millis")]
    pub(crate) elapsed: Duration,
    /// The physical limit of the rounds: what each side must wait for, however fast the
    /// machine (its floor, else a duration's quickest round), summed over the rounds.
    /// `None` when a side is neither a duration nor has a floor.
    #[serde(with = "crate::vocab::millis::opt")]
    pub(crate) limit: Option<Duration>,
    /// What the figure means for the code under test
    /// ([`Claim::explain`](crate::Claim::explain)); the first sentence goes in the headline.
    pub(crate) explanation: Vec<String>,
    /// What a claim that does not hold found, in words that change only with the shape —
    /// how the worker was held, the call, the team's function and line — and never with a
    /// run's figures: its snapshot's `observed`. `None` where the verdict and the band say
    /// it all (a claim of your own, an inconclusive one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) shape: Option<String>,
    /// The likely cause and the remedy, where the claim names them
    /// ([`Claim::advise`](crate::Claim::advise)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) advice: Option<Advice>,
    /// What the sides saw besides their figures ([`Measure::evidence`](crate::claim::Measure::evidence)),
    /// then what the caller measured beside the claim ([`Claim::evidence`](crate::Claim::evidence)).
    pub(crate) evidence: Vec<String>,
    /// Deterministic facts added after the rounds ([`Checked::fact`](crate::Checked::fact)).
    pub(crate) facts: BTreeMap<String, String>,
    /// Raw figures the claim observed besides its rounds ([`Claim::observed`](crate::Claim::observed)): in the
    /// JSON artifact, never in a snapshot.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) observed: BTreeMap<String, f64>,
    /// Where the raw figures were written, when they could be.
    pub(crate) artifact: Option<PathBuf>,
}

impl ClaimReport {
    /// The claim's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// `ratio`, `bound`, `figure` or `ordering`.
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// What is divided by what, or the order claimed.
    pub fn relation(&self) -> &str {
        &self.relation
    }

    /// The band the median must lie in.
    pub fn band(&self) -> &Band {
        &self.band
    }

    /// The ideal figure, when given.
    pub fn ideal(&self) -> Option<f64> {
        self.ideal
    }

    /// For bound claims: the expectation and its unit.
    pub fn expected(&self) -> Option<&(Expected, Unit)> {
        self.expected.as_ref()
    }

    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// Why, in one sentence.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// The median of the rounds' figures.
    pub fn median(&self) -> f64 {
        self.median
    }

    /// The noisiest side's A/A noise floor (relative).
    pub fn noise_floor(&self) -> f64 {
        self.noise_floor
    }

    /// How far the median sits from the band's nearest edge ([`Margin`]).
    pub fn margin(&self) -> Option<Margin> {
        self.margin
    }

    /// Each side's label and unit.
    pub fn sides(&self) -> &[(String, Unit)] {
        &self.sides
    }

    /// Every round.
    pub fn rounds(&self) -> &[Round] {
        &self.rounds
    }

    /// Settings (pool, N, work) as given by the claim.
    pub fn context(&self) -> &BTreeMap<String, String> {
        &self.context
    }

    /// The machine's available parallelism.
    pub fn cores(&self) -> usize {
        self.cores
    }

    /// The CPUs a cgroup quota allows this process (a container's CPU limit), where one
    /// limits it.
    pub fn cpu_quota(&self) -> Option<f64> {
        self.cpu_quota
    }

    /// Strict or advisory.
    pub fn gate(&self) -> GateMode {
        self.gate
    }

    /// The read this platform does not make (off Linux: the machine's CPU, a worker's
    /// run-queue time), when that is why the claim is inconclusive: its gate neither
    /// snapshots nor fails it, as a test ignored on a platform is not failed there.
    pub fn unread(&self) -> Option<&str> {
        self.unread.as_deref()
    }

    /// The time budget the rounds were given ([`Claim::budget`](crate::Claim::budget)).
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// Where the rounds stopped unsettled: the budget spent or the most rounds taken, and
    /// how busy the machine was.
    pub fn out_of_time(&self) -> Option<super::OutOfTime> {
        self.out_of_time
    }

    /// Time spent measuring.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The physical limit of the rounds: what each side must wait for, however fast the
    /// machine (its floor, else a duration's quickest round), summed over the rounds.
    /// `None` when a side is neither a duration nor has a floor.
    pub fn limit(&self) -> Option<Duration> {
        self.limit
    }

    /// What the figure means for the code under test
    /// ([`Claim::explain`](crate::Claim::explain)); the first sentence goes in the headline.
    pub fn explanation(&self) -> &[String] {
        &self.explanation
    }

    /// What a claim that does not hold found, in words that change only with the shape —
    /// how the worker was held, the call, the team's function and line — and never with a
    /// run's figures: its snapshot's `observed`. `None` where the verdict and the band say
    /// it all (a claim of your own, an inconclusive one).
    pub fn shape(&self) -> Option<&str> {
        self.shape.as_deref()
    }

    /// The likely cause and the remedy, where the claim names them
    /// ([`Claim::advise`](crate::Claim::advise)).
    pub fn advice(&self) -> Option<&Advice> {
        self.advice.as_ref()
    }

    /// What the sides saw besides their figures ([`Measure::evidence`](crate::claim::Measure::evidence)),
    /// then what the caller measured beside the claim ([`Claim::evidence`](crate::Claim::evidence)).
    pub fn evidence(&self) -> &[String] {
        &self.evidence
    }

    /// Deterministic facts added after the rounds ([`Checked::fact`](crate::Checked::fact)).
    pub fn facts(&self) -> &BTreeMap<String, String> {
        &self.facts
    }

    /// Raw figures the claim observed besides its rounds ([`Claim::observed`](crate::Claim::observed)): in the
    /// JSON artifact, never in a snapshot.
    pub fn observed(&self) -> &BTreeMap<String, f64> {
        &self.observed
    }

    /// Where the raw figures were written, when they could be.
    pub fn artifact(&self) -> Option<&std::path::Path> {
        self.artifact.as_deref()
    }
}

impl ClaimReport {
    /// One line of at most 149 characters (160 with the "perfshape: " a report is printed
    /// after): the verdict, the claim and what it
    /// found, to its first clause — "broken: \"POST /orders does not block its worker\" —
    /// waits ≈0.24 ms of each 0.70 ms request while holding its worker". The rest of what it
    /// found is [`ClaimReport::detail`], the line under it. A claim that measured no round
    /// says why instead (perfshape or the machine was the limit, and which). The figure and
    /// the band are on the line that says how sure the verdict is
    /// ([`ClaimReport::sureness`]).
    pub fn headline(&self) -> String {
        let (brief, _) = self.split();
        if brief.is_empty() {
            format!("{}: {:?}", self.verdict, self.name)
        } else {
            format!("{}{brief}", self.prefix())
        }
    }

    /// What the claim found past its headline's first clause — the share against the
    /// allowance, the call the kernel saw — where the headline did not hold all of it.
    pub fn detail(&self) -> Option<String> {
        let (_, rest) = self.split();
        if self.leads_with_why() {
            // The reason's rest, then what the rounds found.
            let said: Vec<String> = [Some(rest), self.finding()]
                .into_iter()
                .flatten()
                .filter(|text| !text.is_empty())
                .map(unwrapped)
                .collect();
            return (!said.is_empty()).then(|| said.join("; "));
        }
        (!rest.is_empty()).then(|| unwrapped(rest))
    }

    /// Whether the headline leads with why the claim cannot tell — an inconclusive claim
    /// measured in rounds, whose first finding says what its rounds did, not why they do
    /// not settle it — rather than with what it found.
    fn leads_with_why(&self) -> bool {
        self.verdict == Verdict::Inconclusive && !self.rounds.is_empty() && self.kind != "watch"
    }

    /// "broken: \"POST /orders does not block its worker\"", and " — " where a finding
    /// follows.
    fn prefix(&self) -> String {
        let dash = if self.leading().is_some() {
            " — "
        } else {
            ""
        };
        format!("{}: {:?}{dash}", self.verdict, self.name)
    }

    /// What the headline leads with ([`ClaimReport::leading`]) as the headline takes it,
    /// and the rest: the whole where it fits in `HEADLINE_MAX`; else cut at a clause that
    /// fits — before its first "; " where that fits, or at the longest of its " (", " — ",
    /// ", " and ": " outside a parenthesis and a name in backticks — so that the line
    /// never ends inside a figure, a name or a parenthesis; and where no clause fits (or
    /// the claim's name leaves less than `LEAST_BRIEF`), nothing: the text goes whole to
    /// the line under it.
    fn split(&self) -> (String, &str) {
        let Some(text) = self.leading() else {
            return (String::new(), "");
        };
        let room = HEADLINE_MAX.saturating_sub(self.prefix().chars().count());
        let fits = |text: &str| text.chars().count() <= room;
        if fits(text) {
            return (text.to_string(), "");
        }
        // A claim whose name leaves too little room (a mix names every route) says what it
        // found on the line under it, whole.
        if room < LEAST_BRIEF {
            return (String::new(), text);
        }
        if let Some(at) = text.find("; ")
            && fits(&text[..at])
        {
            return (text[..at].to_string(), text[at + 2..].trim_start());
        }
        match clause_ends(text)
            .filter(|&(at, _)| at >= LEAST_BRIEF / 2 && fits(&text[..at]))
            .last()
        {
            // A parenthesis goes whole to the line under it.
            Some((at, " (")) => (text[..at].to_string(), text[at..].trim_start()),
            Some((at, mark)) => (text[..at].to_string(), text[at + mark.len()..].trim_start()),
            None => (String::new(), text),
        }
    }

    /// What the headline leads with: why the claim cannot tell, where it leads with that
    /// (its decision's reason), else what it found.
    fn leading(&self) -> Option<&str> {
        if self.leads_with_why() {
            Some(self.reason.as_str())
        } else {
            self.finding()
        }
    }

    /// What the claim found, in words: its first sentence of meaning, or why no round was
    /// measured. The headline leads with it, cut to fit ([`ClaimReport::detail`]).
    pub fn finding(&self) -> Option<&str> {
        match self.explanation.first() {
            Some(first) => Some(first.as_str()),
            None if self.rounds.is_empty() => Some(self.reason.as_str()),
            None => None,
        }
    }

    /// How sure the verdict is, in the figure's one scale: what the figure is, then the
    /// rule's reason — "allowance used by 20 concurrent POST /orders (ideal 0): median 4.793
    /// and its confidence interval [2.988, 4.947] are outside the band ≤ 1 (3 rounds)".
    pub fn sureness(&self) -> String {
        // A watch decides on what the kernel saw, in no round: its reason is the figure.
        if self.kind == "watch" {
            return format!("{}: {} (band {})", self.relation, self.reason, self.band);
        }
        if self.rounds.is_empty() {
            return format!(
                "no round measured; the figure would be the {}",
                self.relation
            );
        }
        // Leading with why it cannot tell, the reason is said above: the figure alone.
        let reason = if self.leads_with_why() {
            ""
        } else {
            self.reason.as_str()
        };
        // The rule's reason names the band where it compares with it: said once.
        let band = if reason.contains(&self.band.to_string()) {
            String::new()
        } else {
            format!(", band {}", self.band)
        };
        let reason = if reason.is_empty() {
            String::new()
        } else {
            format!(": {reason}")
        };
        format!(
            "{}{}{reason}{band}",
            self.relation,
            self.ideal
                .map(|i| format!(" (ideal {})", short(i)))
                .unwrap_or_default(),
        )
    }

    /// The report as it leads: what is wrong, the likely cause, what to do, how sure, and
    /// where the rest is — each figure once. What `Display` writes unless
    /// [`REPORT_ENV`]`=full`; `{report:#}` is the full report.
    pub fn lead(&self) -> String {
        let mut s = self.headline();
        if let Some(detail) = self.detail() {
            let _ = write!(s, "\n  found: {detail}");
        }
        if let Some(advice) = &self.advice {
            let _ = write!(s, "\n  cause: {}\n  do: {}", advice.cause, advice.action);
        }
        if !self.verdict.holds() {
            let _ = write!(s, "\n  how sure: {}", self.sureness());
            let full = format!("the full report: {REPORT_ENV}=full");
            match &self.artifact {
                Some(path) => {
                    let _ = write!(s, "\n  more: {full}; every figure: {}", path.display());
                }
                None => {
                    let _ = write!(s, "\n  more: {full}");
                }
            }
        }
        s
    }

    /// Each side's median, in side order.
    pub fn side_medians(&self) -> Vec<f64> {
        (0..self.sides.len())
            .map(|i| median(&self.rounds.iter().map(|r| r.figures[i]).collect::<Vec<_>>()))
            .collect()
    }

    /// The deterministic view for snapshots: it holds no measured figure, whatever the
    /// verdict, so it changes only when the shape (or the claim) changes — a broken claim's
    /// snapshot is the same run after run, its figures in the JSON.
    pub fn summary(&self) -> ShapeSummary {
        let observed = (!self.verdict.holds())
            .then(|| self.shape.clone())
            .flatten();
        ShapeSummary {
            claim: self.name.clone(),
            kind: self.kind.to_string(),
            relation: self.relation.clone(),
            band: self.band.to_string(),
            ideal: self.ideal.map(short),
            expected: self
                .expected
                .as_ref()
                .map(|(e, unit)| format!("{} = {}", unit.show(e.value), e.how)),
            context: self.context.clone(),
            verdict: self.verdict,
            facts: self.facts.clone(),
            observed,
        }
    }

    /// Writes the report to `dir` as `<test>--<claim>-<key>.json`: the test that made it
    /// (`caller`, its thread's name, as libtest and nextest name a test's thread; left out
    /// where it is `main`, a tokio worker's or unknown), so that a folder of CI artifacts says which test wrote
    /// which, and a key that hashes the claim's name, its context (the target, named or
    /// described) and the test: two targets with the same path, or one claim made in two
    /// tests, do not overwrite each other. A second report under the same name in one
    /// process gets `-2`, `-3`, … A failure to write is reported on stderr and does not
    /// change the verdict.
    pub(crate) fn write_artifact(&mut self, dir: &std::path::Path, caller: Option<&str>) {
        let mut key = format!("{}\n{}", self.name, caller.unwrap_or_default());
        for (k, v) in &self.context {
            let _ = write!(key, "\n{k}={v}");
        }
        let test = caller
            .filter(|name| *name != "main" && !name.starts_with("tokio-"))
            .map(|name| format!("{}--", slug(name)))
            .unwrap_or_default();
        let mut stem = format!("{test}{}", slug(&self.name));
        // A file's name has 255 bytes at most: the slugs are ASCII, the key 9 and ".json" 5
        // more, and "-2" … room enough.
        stem.truncate(200);
        let stem = format!("{stem}-{:08x}", fnv1a(&key) as u32);
        let path = unclaimed(dir, &stem);
        let written = std::fs::create_dir_all(dir).and_then(|()| {
            let json = serde_json::to_vec_pretty(&*self).map_err(std::io::Error::other)?;
            std::fs::write(&path, json)
        });
        match written {
            Ok(()) => self.artifact = Some(path),
            Err(e) => eprintln!("perfshape: could not write {}: {e}", path.display()),
        }
    }
}

/// `dir/stem.json`, or `dir/stem-2.json`, … when this process has written that one.
fn unclaimed(dir: &std::path::Path, stem: &str) -> PathBuf {
    static WRITTEN: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut written = WRITTEN.lock().unwrap_or_else(|p| p.into_inner());
    let path = (1..)
        .map(|k| match k {
            1 => dir.join(format!("{stem}.json")),
            k => dir.join(format!("{stem}-{k}.json")),
        })
        .find(|path| !written.contains(path))
        .expect("an unbounded range has a free name");
    written.push(path.clone());
    path
}

/// FNV-1a, 64 bits: a hash that is the same on every machine and Rust release (std's
/// hasher is not promised to be), so an artifact's name is stable across runs.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `rest` with the parentheses of a leading parenthetical taken off — "(26.8 %, at most
/// 5 %); the kernel saw …" reads "26.8 %, at most 5 %; the kernel saw …" on a line of its
/// own.
fn unwrapped(rest: &str) -> String {
    let Some(inner) = rest.strip_prefix('(') else {
        return rest.to_string();
    };
    let mut depth = 1;
    for (at, c) in inner.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return format!("{}{}", &inner[..at], &inner[at + 1..]);
                }
            }
            _ => {}
        }
    }
    rest.to_string()
}

/// Where the clauses of `text` end, in order: each " (", " — ", ", " and ": " outside a
/// parenthesis and a name in backticks, with the mark found there.
fn clause_ends(text: &str) -> impl Iterator<Item = (usize, &'static str)> + '_ {
    let mut depth = 0i32;
    let mut quoted = false;
    text.char_indices().filter_map(move |(at, c)| {
        match c {
            '(' if !quoted => depth += 1,
            ')' if !quoted => depth -= 1,
            '`' => quoted = !quoted,
            _ => {}
        }
        if depth != 0 || quoted {
            return None;
        }
        [" (", " — ", ", ", ": "]
            .into_iter()
            .find(|mark| text[at..].starts_with(mark))
            .map(|mark| (at, mark))
    })
}

/// The fewest characters of a finding the headline cuts it to: with less room, the finding
/// goes whole to the line under it.
const LEAST_BRIEF: usize = 40;

/// The most characters a report's first line takes, "perfshape: " before it included: a
/// failure is read in the time it takes to read one line (the verdict, the claim, and
/// what held the worker), and the rest under it.
pub(crate) const HEADLINE_MAX: usize = 160 - "perfshape: ".len();

/// `PERFSHAPE_REPORT=full` prints every claim's full report — every meaning, the evidence,
/// each round, the settings and the machine — where the default leads with what is wrong,
/// its cause, what to do and how sure, and names where the rest is.
pub const REPORT_ENV: &str = "PERFSHAPE_REPORT";

/// Whether [`REPORT_ENV`] asks for the full report.
fn full_asked() -> bool {
    std::env::var(REPORT_ENV).is_ok_and(|v| v.eq_ignore_ascii_case("full"))
}

/// The report as a failure reads: it leads with the verdict and what is wrong, then the
/// likely cause and what to do, how sure it is, and where the rest is (five lines at most).
/// `{report:#}`, or `PERFSHAPE_REPORT=full`, writes all of it.
impl std::fmt::Display for ClaimReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !f.alternate() && !full_asked() {
            return f.write_str(&self.lead());
        }
        let mut s = String::new();
        let _ = writeln!(s, "{}", self.headline());
        if let Some(detail) = self.detail() {
            let _ = writeln!(s, "  found: {detail}");
        }
        if let Some(advice) = &self.advice {
            let _ = writeln!(s, "  cause: {}", advice.cause);
            let _ = writeln!(s, "  do: {}", advice.action);
        }
        let _ = writeln!(s, "  why: {}", self.sureness());
        for line in self.explanation.iter().skip(1) {
            let _ = writeln!(s, "  meaning: {line}");
        }
        for (key, fact) in &self.facts {
            let _ = writeln!(s, "  fact: {key}: {fact}");
        }
        for line in &self.evidence {
            let _ = writeln!(s, "  evidence: {line}");
        }
        if let Some(margin) = self.margin {
            let _ = writeln!(s, "  margin: {margin} of the band's nearest edge");
        }
        if let Some((e, unit)) = &self.expected {
            let _ = writeln!(s, "  expected: {} = {}", unit.show(e.value), e.how);
        }
        let order = if self.sides.len() > 1 {
            "sides interleaved, A B then B A; "
        } else {
            ""
        };
        if !self.rounds.is_empty() {
            let _ = writeln!(
                s,
                "  rounds ({order}noise floor = median change between consecutive rounds of a side, {:.1}%):",
                self.noise_floor * 100.0
            );
        }
        for (i, round) in self.rounds.iter().enumerate() {
            let sides = self
                .sides
                .iter()
                .zip(&round.figures)
                .map(|((label, unit), x)| format!("{label} = {}", unit.show(*x)))
                .collect::<Vec<_>>()
                .join(", ");
            let where_ = if round.inside { "inside" } else { "OUTSIDE" };
            if self.kind == "figure" {
                // The side's figure is the claim's figure: say it once.
                let _ = writeln!(s, "    {:>2}: {sides} {where_}", i + 1);
            } else {
                let _ = writeln!(s, "    {:>2}: {sides} → {:.3} {where_}", i + 1, round.value);
            }
        }
        let context = self
            .context
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(s, "  settings: {context}");
        let measured = if self.kind == "watch" {
            format!("watched for {:.2} s", self.elapsed.as_secs_f64())
        } else {
            format!(
                "measured for {:.2} s of a {:.0} s budget",
                self.elapsed.as_secs_f64(),
                self.budget.as_secs_f64()
            )
        };
        let _ = writeln!(
            s,
            "  machine: {} cores{}; {}; {measured}{}; gate {} ({GATE_ENV})",
            self.cores,
            self.cpu_quota.map_or(String::new(), |cpus| format!(
                ", a CPU quota of {}",
                crate::cpu_quota::cpus_in_words(cpus)
            )),
            crate::build::describe(),
            self.out_of_time
                .and_then(|out| out.machine())
                .map_or(String::new(), |busy| format!(", {busy}")),
            self.gate
        );
        if let Some(path) = &self.artifact {
            let _ = write!(s, "  raw figures: {}", path.display());
        }
        f.write_str(s.trim_end())
    }
}

/// A claim as a snapshot sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ShapeSummary {
    /// The claim's name.
    pub claim: String,
    /// `ratio`, `bound`, `figure` or `ordering`.
    pub kind: String,
    /// What is divided by what, or the order claimed.
    pub relation: String,
    /// The band, e.g. `≥ 6` or `[0.95, 1.5]`.
    pub band: String,
    /// The ideal figure, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ideal: Option<String>,
    /// The expectation of a bound claim and its derivation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<String>,
    /// The settings.
    pub context: BTreeMap<String, String>,
    /// The verdict.
    pub verdict: Verdict,
    /// Further deterministic facts a test adds (wave counts, connection counts).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub facts: BTreeMap<String, String>,
    /// What the claim found, in words that change only with the shape
    /// ([`ClaimReport::shape`]) — present only when the claim does not hold, so that a
    /// snapshot diff of a regression shows what is wrong.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed: Option<String>,
}

/// A figure to four significant digits, so an ideal computed from a model prints the same
/// on every machine and a snapshot never holds a float's last bits.
pub fn short(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return x.to_string();
    }
    let digits = 3 - x.abs().log10().floor() as i32;
    let scale = 10f64.powi(digits);
    ((x * scale).round() / scale).to_string()
}

/// Where raw figures go: `$PERFSHAPE_ARTIFACTS`, else `<target dir>/perfshape`, where the
/// target dir is `$CARGO_TARGET_DIR` or the `target` folder the running binary lives in.
///
/// A relative `$PERFSHAPE_ARTIFACTS` is taken from the folder that holds that `target`
/// folder — the workspace's root — not from the test's working directory: cargo and
/// nextest run each package's tests in the package's own folder, and a workspace whose
/// members all write to `target/perfshape/suite` means the one under its root.
pub fn artifact_dir() -> PathBuf {
    let binary_target = || {
        std::env::current_exe().ok().and_then(|exe| {
            exe.ancestors()
                .find(|a| a.file_name().is_some_and(|n| n == "target"))
                .map(PathBuf::from)
        })
    };
    if let Some(dir) = std::env::var_os("PERFSHAPE_ARTIFACTS") {
        let dir = PathBuf::from(dir);
        let root = binary_target().and_then(|t| t.parent().map(PathBuf::from));
        return match root {
            Some(root) if dir.is_relative() => root.join(dir),
            _ => dir,
        };
    }
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir).join("perfshape");
    }
    binary_target()
        .map(|t| t.join("perfshape"))
        .unwrap_or_else(|| PathBuf::from("target").join("perfshape"))
}

fn slug(name: &str) -> String {
    let mut slug = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    slug.trim_matches('-').to_string()
}
