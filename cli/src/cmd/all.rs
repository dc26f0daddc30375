//! `perfshape all`: every fixture, the default.

use super::experiments::{default_fixtures, load_all, numbered, reproduce_into};
use crate::Global;
use crate::exit::Exit;

/// Run every fixture, printing each experiment's table and writing its timeline and raw
/// figures (the default, `cargo run --release`).
#[derive(clap::Args)]
pub(crate) struct Args {}

impl Args {
    pub(crate) fn run(self, global: &Global) -> perfshape_experiments::Result<Exit> {
        let dir = global.fixtures.clone().unwrap_or_else(default_fixtures);
        let experiments = load_all(&dir)?;
        for (i, experiment) in experiments.iter().enumerate() {
            let json = global
                .json
                .as_ref()
                .map(|p| numbered(p, i, experiments.len()));
            reproduce_into(experiment, global, json.as_deref())?;
        }
        Ok(Exit::Holds)
    }
}
