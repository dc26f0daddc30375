//! The likely cause and what to do, for a claim on a hold: by how the handler held its
//! worker where the claim broke; why its rounds did not settle it where it could not tell.

use super::super::holding;
use super::figures::{self, Figures};
use super::sentences::{Decided, unexplained};
use crate::claim::{Advice, Verdict};
use crate::held::called;
use crate::held::remedy::{self, Hold};
use crate::pool::sampler::Place;

impl Decided<'_> {
    /// The likely cause and what to do: by how the handler held its worker where the claim
    /// broke; where it did not, `local` — on a served router, what a database met on this
    /// machine hides.
    pub(super) fn advice(&self, local: Option<Advice>) -> Option<Advice> {
        let (report, rounds, allowance) = (self.report, self.rounds, self.allowance);
        if report.verdict == Verdict::Inconclusive && !rounds.is_empty() {
            // Rounds this build cannot tell: the reason names the line that makes it decisive.
            if figures::this_build_cannot_tell(&allowance, rounds).is_some() {
                return local;
            }
            // Requests that queued for workers busy with what their polls do not explain.
            if unexplained(rounds, self.sizes, allowance, self.launched).is_some() {
                return Some(Advice::new(
                    "the requests waited for a worker that was running something else than their polls: a request the claim did not name (another client's, or a page a redirect points to), a task or a background job between the timed polls, or the machine's other work",
                    "claim each request the route's clients send (does_not_block_its_worker() names what its polls hold), and where the workers run background work, run the claim beside it with the worker's timeline read (Target::serve_with builds it on the served pool)",
                ));
            }
            return local.or_else(|| self.undecided());
        }
        if report.verdict != Verdict::Broken || rounds.is_empty() {
            return local;
        }
        let (judged, _) = self.judged();
        let figures = Figures::of(&judged);
        let Some(h) = figures.polls else {
            return Some(Advice::new(
                "the handler holds its worker for much of each request; from outside, a wait and a long computation read alike",
                "serve the router in a test (Target::serve) to see which its polls do, then move that off the worker (tokio::task::spawn_blocking), or check whether its requests queue behind one connection or lock",
            ));
        };
        let how = super::figures::hold_of(&allowance, &h, figures.alone);
        Some(remedy::for_hold(
            "the handler",
            how,
            called::call(self.calls, self.route, how),
        ))
    }

    /// Where a broken claim's hold was sampled and whether it computed: the route's polls, or
    /// the workers outside any response for a task's wait (and a launched service's). `None`
    /// for a claim that did not break, or was timed from outside.
    pub(super) fn held_at(&self) -> Option<(Place, bool)> {
        let (report, rounds, allowance) = (self.report, self.rounds, self.allowance);
        if report.verdict != Verdict::Broken || rounds.is_empty() {
            return None;
        }
        let (judged, _) = self.judged();
        let figures = Figures::of(&judged);
        let h = figures.polls?;
        let route = self.place();
        Some(
            match super::figures::hold_of(&allowance, &h, figures.alone) {
                Hold::Computes => (route.clone(), true),
                Hold::WaitsInATask => (Place::Outside, false),
                Hold::Waits => (route.clone(), false),
            },
        )
    }

    /// Why the rounds of a served claim did not settle it, and what would: which of the three
    /// parts — waiting, computing, sleeps — took the rounds past the allowance that were, and
    /// the call the kernel saw; or, where none was, that too few rounds were measured to rule
    /// out a shape met in one round in three.
    fn undecided(&self) -> Option<Advice> {
        let (report, rounds, allowance) = (self.report, self.rounds, self.allowance);
        let parts: Vec<(f64, f64, f64)> = rounds
            .iter()
            .filter_map(|r| Some(holding::parts(&allowance, &r.polls?, r.alone)))
            .collect();
        if parts.is_empty() {
            return None;
        }
        let past: Vec<&(f64, f64, f64)> = parts
            .iter()
            .filter(|(w, c, s)| w.max(*c).max(*s) > 1.0)
            .collect();
        let longer = crate::outcome::what_settles(report);
        if past.is_empty() {
            return Some(Advice::new(
                format!(
                    "none of its {} rounds passed its allowance, but they were too few, or too far apart from each other, to settle it",
                    parts.len()
                ),
                longer,
            ));
        }
        let count = |f: &dyn Fn(&&(f64, f64, f64)) -> bool| past.iter().filter(|p| f(p)).count();
        let (waiting, computing, sleeps) = (
            count(&|p| p.0 > 1.0),
            count(&|p| p.1 > 1.0),
            count(&|p| p.2 > 1.0),
        );
        let mut by = Vec::new();
        for (n, what) in [
            (waiting, "waiting"),
            (computing, "computing"),
            (sleeps, "sleeps"),
        ] {
            if n > 0 {
                by.push(format!("{what} in {n}"));
            }
        }
        let how = if computing > waiting.max(sleeps) {
            Hold::Computes
        } else {
            Hold::Waits
        };
        let seen = called::call(self.calls, self.route, how)
            .map(|call| format!("; the kernel saw the worker waiting in {call}"))
            .unwrap_or_default();
        Some(Advice::new(
            format!(
                "{} of its {} rounds passed its allowance — by {} — and the others did not{seen}: a shape that comes and goes, or a machine that took those rounds",
                past.len(),
                parts.len(),
                by.join(", ")
            ),
            format!(
                "{longer}; if the handler does it, {}",
                remedy::for_hold("the handler", how, None).action
            ),
        ))
    }
}
