//! The same request on two targets — a base (the merge base's build, main) and a
//! candidate (the pull request's) — measured in the same interleaved rounds: a regression
//! gate whose noise is one machine's round-to-round noise within a minute, not the noise
//! between two machines on two days that a stored baseline carries.

mod side;
mod side_load;

use std::time::Duration;

use crate::claim::{Claim, ClaimReport, Unit};
use crate::endpoint::Endpoint;
use crate::error::{Error, Refused, Result};

use side::{PairCheck, first_answer, side};
pub use side_load::{Percentile, SINGLE_IN_A_ROW, SideLoad};

/// The most a tolerance may allow the candidate to be slower: ten times the base.
const MOST_SLOWER: f64 = 10.0;

/// Two bodies "differ" when their lengths differ by more than this share of the longer and
/// by more than [`BODY_SLACK`] bytes: a different page, an error body under a 2xx, an
/// empty answer — not a JSON body whose timestamps have one digit more.
const BODY_SHARE: f64 = 0.25;
/// See [`BODY_SHARE`].
const BODY_SLACK: usize = 8;

impl Endpoint {
    /// **Compared with** `base`: this endpoint is the candidate (the new build), `base`
    /// the same request on the old one; both are measured in the same interleaved rounds,
    /// under a fan-out by default (10, or 4 per server worker), and the [`Comparison`]
    /// makes the claim — [`slower_by_at_most`](Comparison::slower_by_at_most) or
    /// [`faster_by_at_least`](Comparison::faster_by_at_least).
    pub fn compared_with(&self, base: &Endpoint) -> Comparison {
        Comparison::new(self, base, self.fan_out().max(base.fan_out()))
    }
}

/// The same request on two targets — a base and a candidate — compared in the same
/// interleaved rounds: "the candidate is at most 10 % slower than the base", or "at least
/// 20 % faster". Make one with [`Endpoint::compared_with`] on the candidate's endpoint.
///
/// Both sides are measured by the same kind of load client, one after the other in every
/// round (A B, then B A), so whatever the machine does to one round it does to both: the
/// decision's noise is the round-to-round noise of one machine, not the run-to-run noise
/// of a stored baseline. Before any load, each side is sent its first request, and a side
/// that is down, answers neither 2xx nor 3xx, or answers differently from the other (its status, or a
/// body of another length) is named.
///
/// ```
/// use std::time::Duration;
/// use axum::{Router, routing::get};
/// use perfshape::{PoolSettings, Target, Verdict};
///
/// let handler = |ms: u64| get(move || async move {
///     tokio::time::sleep(Duration::from_millis(ms)).await;
///     "report"
/// });
/// let base = Target::serve(PoolSettings::workers(1)?, Router::new().route("/report", handler(30)))?
///     .named("main");
/// let candidate = Target::serve(PoolSettings::workers(1)?, Router::new().route("/report", handler(20)))?
///     .named("pull request");
/// let comparison = candidate.get("/report").compared_with(&base.get("/report")).fan_out(10);
/// let checked = comparison.clone().slower_by_at_most(0.10).check()?;
/// assert_eq!(checked.verdict(), Verdict::Holds);
/// // The same comparison with the sides swapped is a 50 % slowdown: caught.
/// let swapped = comparison.swapped().slower_by_at_most(0.10).check()?;
/// assert_eq!(swapped.verdict(), Verdict::Broken);
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Debug)]
#[must_use]
pub struct Comparison {
    base: Endpoint,
    candidate: Endpoint,
    load: SideLoad,
    bodies_may_differ: bool,
    /// The first setting refused in this chain, named by the claim's `check()`.
    refused: Option<Refused>,
}

impl Comparison {
    /// `candidate` against `base`, under a fan-out (10, or 4 per server worker).
    pub(crate) fn new(candidate: &Endpoint, base: &Endpoint, fan_out: usize) -> Comparison {
        Comparison {
            base: base.clone(),
            candidate: candidate.clone(),
            load: SideLoad::FanOut(fan_out),
            bodies_may_differ: false,
            refused: None,
        }
    }

    /// Compares with each side sent `load`: a fan-out of 1..=100,000, a loop of 1..=10,000
    /// users for 100 ms to 10 minutes (another is named by the claim's `check()`).
    pub fn under(mut self, load: SideLoad) -> Self {
        if let Some(load) = Refused::keep(&mut self.refused, load.validate()) {
            self.load = load;
        }
        self
    }

    /// One request at a time, each side the median of five in a row.
    pub fn single(self) -> Self {
        self.under(SideLoad::Single)
    }

    /// `n` requests at once, each side its wall time.
    pub fn fan_out(self, n: usize) -> Self {
        self.under(SideLoad::FanOut(n))
    }

    /// A closed loop of `users` for `duration`, each side its throughput (for a latency
    /// percentile, [`under`](Self::under) with [`SideLoad::Latency`]).
    pub fn closed_loop(self, users: usize, duration: Duration) -> Self {
        self.under(SideLoad::Throughput { users, duration })
    }

    /// Accepts two sides whose first answers differ in body length (a page that embeds a
    /// build id, say): by default a comparison refuses them, as two services that answer
    /// differently are rarely the same request.
    pub fn bodies_may_differ(mut self) -> Self {
        self.bodies_may_differ = true;
        self
    }

    /// The same comparison with base and candidate exchanged: a negative control (a
    /// candidate claimed faster must then break).
    pub fn swapped(self) -> Self {
        Comparison {
            base: self.candidate,
            candidate: self.base,
            ..self
        }
    }

    /// The load each side is sent.
    pub fn side_load(&self) -> SideLoad {
        self.load
    }

    /// The base's endpoint.
    pub fn base(&self) -> &Endpoint {
        &self.base
    }

    /// The candidate's endpoint.
    pub fn candidate(&self) -> &Endpoint {
        &self.candidate
    }

    /// **No regression**: the candidate's figure ÷ the base's (a time; for throughput, the
    /// base's ÷ the candidate's) is at most 1 + `tolerance` — `0.10` for "at most 10 %
    /// slower". The tolerance is above 0 and at most 10 (another is named by the claim's
    /// `check()`).
    pub fn slower_by_at_most(self, tolerance: f64) -> Claim<'static> {
        let refused = (!(tolerance > 0.0 && tolerance <= MOST_SLOWER)).then(|| {
            Refused::new(
                "tolerance",
                tolerance,
                "above 0 and at most 10 (0.10 is 10 %)",
            )
        });
        let name = self.sentence(&format!("at most {} slower than", percent(tolerance)));
        self.claim(&name)
            .at_most(1.0 + tolerance)
            .ideal(1.0)
            .refusing(refused)
            .context("tolerance", format!("{} slower", percent(tolerance)))
            .ready_made()
    }

    /// **An improvement**: the candidate's figure ÷ the base's (a time; for throughput,
    /// the base's ÷ the candidate's) is at most 1 − `share` — `0.20` for "at least 20 %
    /// faster". The share is above 0 and below 1 (another is named by the claim's
    /// `check()`).
    pub fn faster_by_at_least(self, share: f64) -> Claim<'static> {
        let refused = (!(share > 0.0 && share < 1.0))
            .then(|| Refused::new("share", share, "above 0 and below 1 (0.20 is 20 % faster)"));
        let name = self.sentence(&format!("at least {} faster than", percent(share)));
        self.claim(&name)
            .at_most(1.0 - share)
            .refusing(refused)
            .context("tolerance", format!("{} faster", percent(share)))
            .ready_made()
    }

    /// Sends each side its first request and refuses, naming both, a pair that cannot be
    /// compared: a side that is down or answers neither 2xx nor 3xx, two different statuses, bodies of
    /// clearly different lengths (unless [`bodies_may_differ`](Self::bodies_may_differ)),
    /// or two served routers on different pools. Every claim of a comparison does this
    /// before any load.
    pub fn preflight(&self) -> Result<()> {
        if let Some(refused) = self.refused() {
            return Err(refused.to_error());
        }
        if let (Some(base), Some(candidate)) = (self.base.workers(), self.candidate.workers()) {
            if base != candidate {
                return Err(Error::invalid(
                    "pools",
                    format!("base on {base}, candidate on {candidate}"),
                    "the same pool on both sides: a comparison measures the code, not the pool",
                ));
            }
        }
        let (base, candidate) = (
            first_answer("base", &self.base)?,
            first_answer("candidate", &self.candidate)?,
        );
        let differ = |what: String| Error::Differs {
            base: self.base.url(),
            candidate: self.candidate.url(),
            what,
        };
        if base.status != candidate.status {
            return Err(differ(format!(
                "status {} from the base, {} from the candidate",
                base.status, candidate.status
            )));
        }
        let (short, long) = (
            base.bytes.min(candidate.bytes),
            base.bytes.max(candidate.bytes),
        );
        if !self.bodies_may_differ
            && long - short > BODY_SLACK
            && (long - short) as f64 > BODY_SHARE * long as f64
        {
            return Err(differ(format!(
                "a body of {} bytes from the base, {} from the candidate (bodies_may_differ() or \
                 --bodies-may-differ accepts it)",
                base.bytes, candidate.bytes
            )));
        }
        Ok(())
    }

    /// The first setting refused in this chain or in either side's.
    fn refused(&self) -> Option<Refused> {
        self.refused
            .clone()
            .or_else(|| self.candidate.refused())
            .or_else(|| self.base.refused())
    }

    /// "`/report` on pull request (router on W=1 B=512) is {relation} on main (…)", or
    /// with both requests named when they differ.
    fn sentence(&self, relation: &str) -> String {
        let (base, candidate) = self.target_names();
        if self.base.request().to_string() == self.candidate.request().to_string() {
            format!(
                "{} on {candidate} is {relation} on {base}",
                self.candidate.name()
            )
        } else {
            format!(
                "{} on {candidate} is {relation} {} on {base}",
                self.candidate.name(),
                self.base.name()
            )
        }
    }

    /// How reports name the two targets: their descriptions, told apart by "base" and
    /// "candidate" when they read the same.
    fn target_names(&self) -> (String, String) {
        let (base, candidate) = (
            self.base.target().to_string(),
            self.candidate.target().to_string(),
        );
        if base == candidate {
            (format!("base ({base})"), format!("candidate ({candidate})"))
        } else {
            (base, candidate)
        }
    }

    /// The claim, its figure "how much slower the candidate is": candidate ÷ base for a
    /// time, base ÷ candidate for a throughput.
    fn claim(self, name: &str) -> Claim<'static> {
        let load = self.load;
        let (base_name, candidate_name) = self.target_names();
        let refused = self.refused();
        let pair = self.clone();
        let check: PairCheck = Box::new(move || pair.preflight());
        let candidate = side(&self.candidate, load, &candidate_name, Some(check));
        let base = side(&self.base, load, &base_name, None);
        let claim = if load.is_time() {
            Claim::ratio(name, candidate, base)
        } else {
            Claim::ratio(name, base, candidate)
        };
        let budget = match load {
            // Two loops a round, up to 15 rounds, and their warm-ups.
            SideLoad::Throughput { duration, .. } | SideLoad::Latency { duration, .. } => {
                Duration::from_secs(20).max(duration * 40)
            }
            _ => Duration::from_secs(20),
        };
        claim
            .refusing(refused)
            .budget(budget)
            .context("load", load)
            .context("base", &base_name)
            .context("candidate", &candidate_name)
            .explain(move |report: &ClaimReport| explain(report, load))
    }
}

/// "the candidate is 4.2 % slower than the base (median round; fan-out of 20: 21.3 ms
/// against 20.4 ms)".
fn explain(report: &ClaimReport, load: SideLoad) -> Vec<String> {
    let medians = report.side_medians();
    let (candidate, base) = match (load.is_time(), medians.as_slice()) {
        (true, [c, b]) => (*c, *b),
        (false, [b, c]) => (*c, *b),
        _ => return Vec::new(),
    };
    let unit = report
        .sides
        .first()
        .map_or(Unit::Plain, |(_, unit)| unit.to_owned());
    let change = report.median - 1.0;
    let how = if change >= 0.0 { "slower" } else { "faster" };
    vec![format!(
        "the candidate is {:.1} % {how} than the base (median round; {load}: {} against {})",
        change.abs() * 100.0,
        unit.show(candidate),
        unit.show(base)
    )]
}

/// `0.1` as `10 %`, `0.025` as `2.5 %`.
fn percent(share: f64) -> String {
    let value = format!("{:.2}", share * 100.0);
    let value = value.trim_end_matches('0').trim_end_matches('.');
    format!("{value} %")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percents_read_as_written() {
        assert_eq!(percent(0.1), "10 %");
        assert_eq!(percent(0.025), "2.5 %");
        assert_eq!(percent(1.5), "150 %");
    }
}
