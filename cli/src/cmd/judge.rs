//! `perfshape judge FIXTURE STATS…`: an engine's statistics, decided.

use std::path::PathBuf;

use perfshape_experiments::external::EngineStats;

use super::schedule::{ScheduleArgs, judge};
use crate::exit::Exit;

/// Judge a fixture's claims from an engine's statistics produced elsewhere: Locust's
/// --json-file output or _stats.csv, or k6's end-of-test summary. Give the same
/// schedule flags the engine's script was written with.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The fixture.
    fixture: PathBuf,
    /// The statistics file; several (k6-operator's runners' summaries) are added up.
    #[arg(required = true)]
    stats: Vec<PathBuf>,
    /// Also judge each row against the model (the host was `perfshape serve` on the
    /// fixture's pool).
    #[arg(long)]
    against_model: bool,
    #[command(flatten)]
    schedule: ScheduleArgs,
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let schedule = self.schedule.schedule(&self.fixture)?;
        let stats = EngineStats::read_all(&self.stats)?;
        judge(&schedule, &stats, self.against_model)
    }
}
