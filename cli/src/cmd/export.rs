//! `perfshape export k6 FIXTURE`: a fixture's rows as another engine's script.

use std::path::PathBuf;

use clap::Subcommand;

use super::files::write;
use super::schedule::ScheduleArgs;
use crate::exit::Exit;

/// Write a fixture's rows as a script for another engine.
#[derive(clap::Args)]
pub(crate) struct Args {
    #[command(subcommand)]
    engine: Engine,
}

/// The engines `perfshape export` writes for.
#[derive(Subcommand)]
enum Engine {
    /// A k6 script: one scenario per row and round, ready for `k6 run` or k6-operator;
    /// its summary comes back through `perfshape judge`.
    K6 {
        /// The fixture.
        fixture: PathBuf,
        /// Where to write the script (default: print it).
        #[arg(long, short)]
        out: Option<PathBuf>,
        #[command(flatten)]
        schedule: ScheduleArgs,
    },
}

impl Args {
    pub(crate) fn run(self) -> perfshape_experiments::Result<Exit> {
        let Engine::K6 {
            fixture,
            out,
            schedule,
        } = self.engine;
        let script = perfshape_experiments::external::k6_script(&schedule.schedule(&fixture)?)?;
        match out {
            Some(path) => write(&path, &script)?,
            None => print!("{script}"),
        }
        Ok(Exit::Holds)
    }
}
