//! One module per verb, each with its flags (`Args`) and its `run`; and what several
//! share: the experiments' runner, an engine's schedule flags and verdict table, files.

pub(crate) mod all;
pub(crate) mod compare;
pub(crate) mod export;
pub(crate) mod judge;
pub(crate) mod k6;
pub(crate) mod limits;
pub(crate) mod list;
pub(crate) mod load;
pub(crate) mod locust;
pub(crate) mod model;
pub(crate) mod probe;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod selftest;
pub(crate) mod serve;

mod experiments;
mod files;
mod schedule;

/// A claim's margin from its band's nearest edge, for a table cell ("—" without one).
fn margin(report: &perfshape::claim::ClaimReport) -> String {
    report.margin().map_or("—".into(), |m| m.to_string())
}
