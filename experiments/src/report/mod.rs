//! What the command prints and writes: for an experiment, the seed-style table beside the
//! published figures, per-request timelines and an SVG of the waves; for a run, the claims'
//! Markdown summary and one HTML report with every claim's rounds, the experiments and the
//! probes (`perfshape report`).

mod artifacts;
mod claims;
mod html;
mod margin_plot;
mod markdown;
mod probe_plot;
mod strip;
mod svg;
mod table;
mod timeline;

pub use artifacts::{Artifacts, ExperimentArtifact, TABLE_SUFFIX, read_artifacts};
pub use claims::{BandRecord, ClaimRecord, RoundRecord, read_claims};
pub use html::html_report;
pub use margin_plot::margin_plot;
pub use markdown::claims_markdown;
pub use probe_plot::probe_plot;
pub use strip::strip_plot;
pub use svg::{TimeAxis, experiment_svg};
pub use table::{AGREES, experiment_table};
pub use timeline::timeline;
