//! What a claim decided, as data: its band, verdict, margin and expectation, the unit its
//! figures print in, the gate's mode, and the report that holds them all. It sits below
//! the error type (whose gate failure carries the reports) and below `claim`, which decides
//! and re-exports all of it (`perfshape::claim::ClaimReport`, …): nothing here reads
//! either.

mod advice;
mod band;
mod expected;
mod gate_mode;
mod margin;
mod out_of_time;
mod report;
mod unit;
mod verdict;

pub use advice::Advice;
pub use band::Band;
pub use expected::Expected;
pub use gate_mode::{GATE_ENV, GateMode};
pub use margin::Margin;
pub use out_of_time::OutOfTime;
pub(crate) use out_of_time::what_settles;
pub use report::short;
pub use report::{ClaimReport, REPORT_ENV, Round, ShapeSummary, artifact_dir};
pub use unit::Unit;
pub use verdict::{Verdict, median, noise_floor};
