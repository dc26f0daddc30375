//! `perfshape`: reproduce the source experiments' tables on this machine.
//!
//! With no arguments it runs every fixture (`perfshape all`), which is what
//! `cargo run --release` does.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use perfshape::{Experiment, Measured, artifact_dir, experiment_table, timeline};

#[derive(Parser)]
#[command(
    version,
    about = "Reproduce the async-vs-blocking experiments as performance shapes"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Where the fixtures are (default: ./fixtures, else the crate's own).
    #[arg(long, global = true)]
    fixtures: Option<PathBuf>,
    /// Print every request's begin and completion, as the seed's client did.
    #[arg(long, short, global = true)]
    verbose: bool,
    /// Write raw per-request records and summaries to this JSON file (one per experiment
    /// is always written under target/perfshape/).
    #[arg(long, global = true)]
    json: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Run every fixture (the default).
    All,
    /// Run one fixture.
    Run {
        /// The fixture file, e.g. fixtures/seed-000-why-async.toml.
        fixture: PathBuf,
    },
    /// List the fixtures and their scenarios.
    List,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfshape: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> perfshape::Result {
    let dir = cli.fixtures.clone().unwrap_or_else(default_fixtures);
    match cli.command.unwrap_or(Command::All) {
        Command::List => {
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
            Ok(())
        }
        Command::Run { fixture } => {
            let experiment = Experiment::load(&fixture)?;
            reproduce(&experiment, cli.verbose, cli.json.as_deref())
        }
        Command::All => {
            let experiments = load_all(&dir)?;
            for (i, experiment) in experiments.iter().enumerate() {
                let json = cli.json.as_ref().map(|p| numbered(p, i, experiments.len()));
                reproduce(experiment, cli.verbose, json.as_deref())?;
            }
            Ok(())
        }
    }
}

fn reproduce(experiment: &Experiment, verbose: bool, json: Option<&Path>) -> perfshape::Result {
    eprintln!(
        "running {} ({} scenarios) …",
        experiment.id,
        experiment.rows.len()
    );
    let measured = experiment.measure(|row, m| {
        eprintln!(
            "  {:<6} {:<45} {:>8.1} ms  ({}/{} ok)",
            row.id,
            row.label,
            m.summary.wall.as_secs_f64() * 1e3,
            m.summary.ok,
            m.summary.sent
        );
        if verbose {
            eprint!("{}", timeline(m));
        }
    })?;
    println!("{}", experiment_table(experiment, &measured));
    let default_path = artifact_dir().join(format!("{}.json", experiment.id));
    for path in std::iter::once(default_path.as_path()).chain(json) {
        write_json(path, experiment, &measured)?;
        eprintln!("raw figures: {}", path.display());
    }
    Ok(())
}

fn write_json(path: &Path, experiment: &Experiment, measured: &[Measured]) -> perfshape::Result {
    let rows: Vec<_> = experiment
        .rows
        .iter()
        .zip(measured)
        .map(|(row, m)| {
            serde_json::json!({
                "id": row.id,
                "label": row.label,
                "published": row.published,
                "ideal_ms": m.ideal.as_secs_f64() * 1e3,
                "ideal_how": m.ideal_how,
                "summary": m.summary,
                "records": m.run.records,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "experiment": experiment.id,
        "title": experiment.title,
        "scale": experiment.scale,
        "published_unit": experiment.published_unit,
        "rows": rows,
    });
    let io = |e| perfshape::Error::Io {
        what: format!("writing {}", path.display()),
        source: e,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    let text = serde_json::to_string_pretty(&doc).map_err(|e| io(std::io::Error::other(e)))?;
    std::fs::write(path, text).map_err(io)
}

fn numbered(path: &Path, i: usize, count: usize) -> PathBuf {
    if count == 1 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}-{i}.json"))
}

fn default_fixtures() -> PathBuf {
    let local = PathBuf::from("fixtures");
    if local.is_dir() {
        local
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
    }
}

fn load_all(dir: &Path) -> perfshape::Result<Vec<Experiment>> {
    let entries = std::fs::read_dir(dir).map_err(|e| perfshape::Error::Io {
        what: format!("reading the fixtures folder {}", dir.display()),
        source: e,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        return Err(perfshape::Error::Invalid {
            field: "fixtures folder",
            value: dir.display().to_string(),
            allowed: "a folder with at least one *.toml fixture".into(),
        });
    }
    paths.iter().map(Experiment::load).collect()
}
