//! A claim whose rounds ran out of their time budget before they settled it: what the
//! report says about it, and what would settle it.

use std::time::Duration;

use serde::Serialize;

/// Why the rounds of an unsettled claim stopped: its time budget spent, or the most
/// rounds a claim takes ([`crate::claim::MAX_ROUNDS`]) measured. With how busy the machine
/// was while they ran, since a machine busy with other work is the usual reason a claim
/// that settles in a second on a quiet one does not.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct OutOfTime {
    /// The time budget the claim was given ([`crate::Claim::budget`]).
    pub budget: Duration,
    /// Whether the budget ended the rounds (`false`: the most rounds a claim takes did).
    pub budget_spent: bool,
    /// The share of the machine's CPU in use while the rounds ran (0 to 1; of a cgroup's
    /// quota where one limits this process), where it could be read.
    pub machine_busy: Option<f64>,
    /// This process's own share of it, where it could be read.
    pub own: Option<f64>,
}

impl OutOfTime {
    /// "the machine's CPU 97 % busy while it measured (this process 45 %)", where read.
    pub fn machine(&self) -> Option<String> {
        let busy = self.machine_busy?;
        Some(match self.own {
            Some(own) => format!(
                "the machine's CPU {:.0} % busy while it measured (this process {:.0} %, other processes {:.0} %)",
                busy * 100.0,
                own * 100.0,
                ((busy - own).max(0.0)) * 100.0
            ),
            None => format!(
                "the machine's CPU {:.0} % busy while it measured",
                busy * 100.0
            ),
        })
    }
}

impl OutOfTime {
    /// Whether the claim's own load kept the machine busy: half of it or more in use, and
    /// this process at least half of that — a service's offloaded work (a hash on the
    /// blocking pool, say) under the claim's fan-out. A quieter machine would not help.
    pub fn own_load(&self) -> bool {
        self.machine_busy
            .zip(self.own)
            .is_some_and(|(busy, own)| busy >= OWN_LOAD_BUSY && own >= 0.5 * busy)
    }
}

/// How busy the machine must be for the claim's own load to be what kept it busy
/// ([`OutOfTime::own_load`]).
const OWN_LOAD_BUSY: f64 = 0.5;

/// What would settle a claim whose rounds stopped unsettled, as a report's do line: a
/// longer budget where the budget ended them (three times it, at least a minute), a
/// quieter machine either way — with the time it measured and how busy the machine was —
/// or, where the claim's own load kept the machine busy, fewer requests at a time (and, in
/// a build without optimisations, optimised dependencies).
pub(crate) fn what_settles(report: &super::ClaimReport) -> String {
    let measured = report.elapsed.as_secs_f64();
    let busy = report
        .out_of_time
        .and_then(|out| out.machine())
        .map_or(String::new(), |busy| format!("; {busy}"));
    if let Some(out) = report.out_of_time.filter(OutOfTime::own_load) {
        let optimised = if crate::build::unoptimised() {
            "; built without optimisations, a hash or a parse takes 2–30× longer than with the README's profile line (`[profile.dev.package.\"*\"] opt-level = 3`)"
        } else {
            ""
        };
        let longer = (out.budget.as_secs() * 3).max(60);
        return format!(
            "its own load kept the machine busy, not other work: send fewer at a time — .concurrency(k) on the endpoint — or give it a longer budget, .budget(Duration::from_secs({longer})) (it measured {measured:.1} s of its {:.0} s{busy}){optimised}",
            report.budget.as_secs_f64()
        );
    }
    match report.out_of_time {
        Some(out) if !out.budget_spent => format!(
            "run it on a quieter machine: the most rounds its rule takes ({}) did not settle it, in {measured:.1} s{busy}",
            report.rounds.len()
        ),
        _ => {
            let longer = (report.budget.as_secs() * 3).max(60);
            format!(
                "give it a longer budget — .budget(Duration::from_secs({longer})) on the claim (it measured {measured:.1} s of its {:.0} s{busy}) — or run it on a quieter machine",
                report.budget.as_secs_f64()
            )
        }
    }
}
