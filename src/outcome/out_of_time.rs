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
    /// Whether the claim's own load kept the machine busy: nearly all of it in use, and
    /// this process most of that — a service's offloaded work (a hash on the blocking
    /// pool, say) under the claim's fan-out read 95 % busy, this process 95 %. A quieter
    /// machine would not help. (A claim that measures on one thread of two cores reads
    /// ≈50 %: not its load's limit.)
    pub fn own_load(&self) -> bool {
        self.machine_busy
            .zip(self.own)
            .is_some_and(|(busy, own)| busy >= OWN_LOAD_BUSY && own >= OWN_SHARE * busy)
    }
}

/// How busy the machine must be for the claim's own load to be what kept it busy
/// ([`OutOfTime::own_load`]).
const OWN_LOAD_BUSY: f64 = 0.85;

/// The least share of that busy time this process must have had.
const OWN_SHARE: f64 = 0.8;

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
            "; built without optimisations, a hash or a parse takes 2–30× longer than with the README's profile line (`[profile.dev.package.\"*\"] opt-level = 1`)"
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

#[cfg(test)]
mod tests {
    use super::*;

    fn out(busy: f64, own: f64) -> OutOfTime {
        OutOfTime {
            budget: Duration::from_secs(20),
            budget_spent: true,
            machine_busy: Some(busy),
            own: Some(own),
        }
    }

    #[test]
    fn only_a_machine_this_process_kept_busy_is_its_own_load() {
        // A debug build's 400 ms hashes on the blocking pool: 95 % busy, all of it ours.
        assert!(out(0.95, 0.95).own_load());
        // A claim measuring on one of two cores, or beside another build: not its load.
        assert!(!out(0.52, 0.50).own_load());
        assert!(!out(1.0, 0.5).own_load());
        assert!(
            !OutOfTime {
                own: None,
                ..out(0.95, 0.95)
            }
            .own_load()
        );
    }
}
