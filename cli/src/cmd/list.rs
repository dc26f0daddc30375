//! `perfshape list`: the fixtures and their rows.

use super::experiments::{default_fixtures, load_all};
use crate::Global;
use crate::exit::Exit;

/// List the fixtures and their scenarios.
#[derive(clap::Args)]
pub(crate) struct Args {}

impl Args {
    pub(crate) fn run(self, global: &Global) -> perfshape_experiments::Result<Exit> {
        let dir = global.fixtures.clone().unwrap_or_else(default_fixtures);
        for experiment in load_all(&dir)? {
            println!(
                "{}  {}  ({})",
                experiment.path.display(),
                experiment.title,
                experiment.scale
            );
            for row in &experiment.rows {
                println!("    {:<6} {}", row.id, row.label);
            }
        }
        Ok(Exit::Holds)
    }
}
