//! `perfshape k6 FIXTURE --host URL`: a fixture's rows on k6, decided.

use std::path::PathBuf;

use perfshape_experiments::external::{Engine, K6Run};

use super::schedule::{ScheduleArgs, announce, judge};
use crate::exit::Exit;

/// Run a fixture's rows on k6 — the script `perfshape export k6` writes, by one k6 process
/// or split between several with --execution-segment as k6-operator splits it, bounded in
/// time — and judge its claims from their summaries, added up.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The fixture, e.g. fixtures/seed-004-jmeter-endpoints.toml.
    fixture: PathBuf,
    /// The service to load, http://host:port (only the host you name).
    #[arg(long)]
    host: String,
    /// k6 processes splitting every scenario between them (1: no split).
    #[arg(long, default_value_t = 1)]
    runners: usize,
    /// Where the script, logs and summaries go.
    #[arg(long, default_value = "target/perfshape/k6")]
    dir: PathBuf,
    /// Also judge each row against the model (the host is `perfshape serve` on the
    /// fixture's pool).
    #[arg(long)]
    against_model: bool,
    #[command(flatten)]
    schedule: ScheduleArgs,
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let schedule = self.schedule.schedule(&self.fixture)?;
        // A schedule k6 would refuse is named before k6 is looked for or the host dialled.
        schedule.check_engine(Engine::K6)?;
        let run = K6Run::new(&self.host, self.runners, &self.dir)?;
        announce(
            "k6",
            &schedule,
            &format!("{} runner(s)", self.runners),
            &self.host,
        );
        let stats = run.run(&schedule)?;
        judge(&schedule, &stats, self.against_model)
    }
}
