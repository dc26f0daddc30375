//! `perfshape`: reproduce the source experiments' tables on this machine, and the tools
//! around the shape gate — serve, probe, load, model, report, and the engines.
//!
//! With no arguments it runs every fixture (`perfshape all`), which is what
//! `cargo run --release` does. Each verb lives in `cmd/<verb>.rs`, with its flags and its
//! doc; this file parses and dispatches.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use exit::{EXIT_STATUS, Exit};
use perfshape_experiments::report::TimeAxis;

mod cmd;
mod exit;

#[derive(Parser)]
#[command(
    version,
    about = "Reproduce the async-vs-blocking experiments as performance shapes",
    after_help = EXIT_STATUS
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    global: Global,
}

/// The options every verb that runs fixtures shares.
#[derive(clap::Args)]
pub(crate) struct Global {
    /// Where the fixtures are (default: ./fixtures, else the crate's own).
    #[arg(long, global = true)]
    pub(crate) fixtures: Option<PathBuf>,
    /// Print every request's begin and completion, as the seed's client did.
    #[arg(long, short, global = true)]
    pub(crate) verbose: bool,
    /// Write raw per-request records and summaries to this JSON file (one per experiment
    /// is always written to $PERFSHAPE_ARTIFACTS, else target/perfshape/).
    #[arg(long, global = true)]
    pub(crate) json: Option<PathBuf>,
    /// How the timelines' panels share time: one axis for all (rows compare at their true
    /// scale), or each its own (every row's detail).
    #[arg(long, global = true, value_enum, default_value_t = Axis::Shared)]
    pub(crate) timeline_axis: Axis,
}

/// [`TimeAxis`], as the command line spells it.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum Axis {
    Shared,
    PerPanel,
}

impl From<Axis> for TimeAxis {
    fn from(axis: Axis) -> TimeAxis {
        match axis {
            Axis::Shared => TimeAxis::Shared,
            Axis::PerPanel => TimeAxis::PerPanel,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    All(cmd::all::Args),
    Run(cmd::run::Args),
    List(cmd::list::Args),
    Model(cmd::model::Args),
    Serve(cmd::serve::Args),
    Probe(cmd::probe::Args),
    Compare(cmd::compare::Args),
    Load(cmd::load::Args),
    Report(cmd::report::Args),
    Locust(cmd::locust::Args),
    K6(cmd::k6::Args),
    Judge(cmd::judge::Args),
    Export(cmd::export::Args),
    Selftest(cmd::selftest::Args),
    Limits(cmd::limits::Args),
}

fn main() -> ExitCode {
    // A reader that stops early (`perfshape load … | head -1`) ends the command quietly, as
    // it does any Unix tool, rather than making the next print panic on a broken pipe.
    // SAFETY: set once, before any thread exists, to the default disposition.
    #[cfg(unix)]
    unsafe {
        let _ = nix::sys::signal::signal(
            nix::sys::signal::Signal::SIGPIPE,
            nix::sys::signal::SigHandler::SigDfl,
        );
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            // --help and --version are not errors. A bad flag is bad input: 3, not clap's
            // own 2, which here means inconclusive.
            return if e.use_stderr() {
                Exit::CouldNotRun.code()
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(cli) {
        Ok(exit) => exit.code(),
        Err(e) => {
            eprintln!("perfshape: error: {e}");
            Exit::CouldNotRun.code()
        }
    }
}

/// Runs the command; what it decided, or why it could not run.
fn run(cli: Cli) -> perfshape_experiments::Result<Exit> {
    let global = &cli.global;
    match cli.command.unwrap_or(Command::All(cmd::all::Args {})) {
        Command::All(args) => args.run(global),
        Command::Run(args) => args.run(global),
        Command::List(args) => args.run(global),
        Command::Model(args) => args.run(),
        Command::Serve(args) => args.run(),
        Command::Probe(args) => args.run(),
        Command::Compare(args) => args.run(),
        Command::Load(args) => args.run(),
        Command::Report(args) => args.run(),
        Command::Locust(args) => args.run(),
        Command::K6(args) => args.run(),
        Command::Judge(args) => args.run(),
        Command::Export(args) => args.run(),
        Command::Selftest(args) => args.run(),
        Command::Limits(args) => args.run(),
    }
}
