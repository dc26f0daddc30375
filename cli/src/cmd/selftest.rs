//! `perfshape selftest`: every claim of the catalog on its negative control.

use perfshape::Verdict;
use perfshape_experiments::catalog::{Setup, entries};

use super::margin;
use crate::exit::Exit;

/// This repository's own proof that its gate can fail: run every claim of perfshape's
/// catalog on its negative control — a deliberately wrong setup — and check that each
/// comes out broken (with --claimed, that each holds as claimed).
#[derive(clap::Args)]
pub(crate) struct Args {
    /// Run the claims as claimed instead (each must hold).
    #[arg(long)]
    claimed: bool,
    /// Only the entries whose name contains this.
    #[arg(long)]
    only: Option<String>,
}

impl Args {
    /// 0 when every claim came out as it must (held, or broken on its control), 2 when one
    /// was inconclusive, 1 when one came out the other way.
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let claimed = self.claimed;
        let setup = if claimed {
            Setup::Claimed
        } else {
            Setup::Control
        };
        let wanted = if claimed {
            Verdict::Holds
        } else {
            Verdict::Broken
        };
        let entries: Vec<_> = entries()
            .into_iter()
            .filter(|e| self.only.as_deref().is_none_or(|o| e.name.contains(o)))
            .collect();
        eprintln!(
            "running {} catalog entries {} …",
            entries.len(),
            if claimed {
                "as claimed"
            } else {
                "on their negative controls"
            }
        );
        println!("| entry | control | claim | verdict | median | band | margin | time |");
        println!("|---|---|---|---|---:|---|---:|---:|");
        let started = std::time::Instant::now();
        let mut wrong = Vec::new();
        let mut exit = Exit::Holds;
        for entry in &entries {
            let control = if claimed { "—" } else { entry.control };
            for (_, checked) in (entry.run)(setup)? {
                let report = checked.report();
                println!(
                    "| {} | {control} | {} | {} | {:.3} | {} | {} | {:.2} s |",
                    entry.name,
                    report.name(),
                    report.verdict(),
                    report.median(),
                    report.band(),
                    margin(report),
                    report.elapsed().as_secs_f64()
                );
                if report.verdict() != wanted {
                    exit = exit.max(match report.verdict() {
                        Verdict::Inconclusive => Exit::Inconclusive,
                        _ => Exit::Broken,
                    });
                    wrong.push(format!(
                        "{}: {} ({})",
                        entry.name,
                        report.name(),
                        report.verdict()
                    ));
                }
            }
        }
        eprintln!("selftest took {:.1} s", started.elapsed().as_secs_f64());
        if !wrong.is_empty() {
            eprintln!(
                "perfshape: {} claim(s) did not come out {wanted}:\n  {}",
                wrong.len(),
                wrong.join("\n  ")
            );
        }
        Ok(exit)
    }
}
