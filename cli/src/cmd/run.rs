//! `perfshape run FIXTURE`: one experiment.

use std::path::PathBuf;

use perfshape_experiments::experiment::Experiment;

use super::experiments::reproduce_into;
use crate::Global;
use crate::exit::Exit;

/// Run one fixture: its table, timeline and raw figures.
#[derive(clap::Args)]
pub(crate) struct Args {
    /// The fixture file, e.g. fixtures/seed-000-why-async.toml.
    fixture: PathBuf,
}

impl Args {
    pub(crate) fn run(self, global: &Global) -> perfshape_experiments::Result<Exit> {
        let experiment = Experiment::load(&self.fixture)?;
        reproduce_into(&experiment, global, global.json.as_deref())?;
        Ok(Exit::Holds)
    }
}
