//! What the CLI prints and writes for an experiment: the seed-style table beside the
//! published figures, per-request timelines, and an SVG of the waves.

mod svg;
mod table;
mod timeline;

pub use svg::experiment_svg;
pub use table::{AGREES, experiment_table};
pub use timeline::timeline;
