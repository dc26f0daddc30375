//! Running the experiments' fixtures: what `all` and `run` share.

use std::path::{Path, PathBuf};

use perfshape::claim::artifact_dir;
use perfshape_experiments::experiment::{Experiment, Measured};
use perfshape_experiments::report::{TABLE_SUFFIX, experiment_svg, experiment_table, timeline};

use super::files::write;
use crate::Global;

/// Runs `experiment`, prints its table, and writes its table, timeline and raw figures
/// under the artifact folder (raw figures also to `json`, if given).
pub(super) fn reproduce_into(
    experiment: &Experiment,
    global: &Global,
    json: Option<&Path>,
) -> perfshape_experiments::Result {
    let verbose = global.verbose;
    eprintln!(
        "running {} ({} scenarios) …",
        experiment.id,
        experiment.rows.len()
    );
    let measured = experiment.measure(|row, m| {
        let requests = m
            .summary
            .as_ref()
            .map(|s| format!("  ({}/{} ok)", s.ok, s.sent))
            .unwrap_or_default();
        eprintln!(
            "  {:<6} {:<50} {:>9.1} ms{requests}",
            row.id,
            row.label,
            m.wall.as_secs_f64() * 1e3,
        );
        if verbose {
            eprint!("{}", timeline(m));
        }
    })?;
    let table = experiment_table(experiment, &measured);
    println!("{table}");
    let dir = artifact_dir();
    write(
        &dir.join(format!("{}{TABLE_SUFFIX}", experiment.id)),
        &table,
    )?;
    let svg_path = dir.join(format!("{}.svg", experiment.id));
    let svg = experiment_svg(experiment, &measured, global.timeline_axis.into());
    write(&svg_path, &svg)?;
    eprintln!("timeline: {}", svg_path.display());
    let default_path = artifact_dir().join(format!("{}.json", experiment.id));
    for path in std::iter::once(default_path.as_path()).chain(json) {
        write_json(path, experiment, &measured)?;
        eprintln!("raw figures: {}", path.display());
    }
    Ok(())
}

fn write_json(
    path: &Path,
    experiment: &Experiment,
    measured: &[Measured],
) -> perfshape_experiments::Result {
    let rows: Vec<_> = experiment
        .rows
        .iter()
        .zip(measured)
        .map(|(row, m)| {
            serde_json::json!({
                "id": row.id,
                "label": row.label,
                "published": row.published,
                "wall_ms": m.wall.as_secs_f64() * 1e3,
                "figure": m.figure,
                "model": m.model,
                "model_figure": m.model_figure,
                "predicted": m.predicted,
                "summary": m.summary,
                "checksum": m.checksum,
                "rounds": m.rounds,
                "records": m.run.as_ref().map(|r| &r.records),
            })
        })
        .collect();
    let doc = serde_json::json!({
        "experiment": experiment.id,
        "title": experiment.title,
        "scale": experiment.scale,
        "published_unit": experiment.published_unit,
        "metric": experiment.metric,
        "rows": rows,
    });
    let text = serde_json::to_string_pretty(&doc).map_err(|e| perfshape::Error::Io {
        what: format!("writing {}", path.display()),
        source: std::io::Error::other(e),
    })?;
    write(path, &text)
}

/// `path` for the i-th of `count` experiments: `raw-0.json`, `raw-1.json`, … (itself
/// when there is one).
pub(super) fn numbered(path: &Path, i: usize, count: usize) -> PathBuf {
    if count == 1 {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}-{i}.json"))
}

/// `./fixtures` when there is one, else the repository's, beside this package.
pub(super) fn default_fixtures() -> PathBuf {
    let local = PathBuf::from("fixtures");
    if local.is_dir() {
        local
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures")
    }
}

/// Every `*.toml` fixture in `dir`, in name order.
pub(super) fn load_all(dir: &Path) -> perfshape_experiments::Result<Vec<Experiment>> {
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
        }
        .into());
    }
    paths.iter().map(Experiment::load).collect()
}
