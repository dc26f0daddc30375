//! A report's first lines: the verdict, the claim and what it found, cut at a clause to fit
//! one line; the rest of the finding under it; how sure; and the lead a failure prints.

use std::fmt::Write as _;

use super::super::verdict::Verdict;
use super::ClaimReport;
use super::full::REPORT_ENV;
use super::short;

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
const HEADLINE_MAX: usize = 160 - "perfshape: ".len();
