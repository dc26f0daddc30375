//! The experiments' vocabulary: the server strategies the demo service serves, the
//! in-process strategies, the phases the model simulates a request in, and the JSON body
//! every demo response carries. Plain data; nothing here runs anything.

mod inproc_strategy;
mod phase;
mod server_strategy;
mod work_report;

pub use inproc_strategy::{CpuBound, InProcess};
pub use phase::Phase;
pub use server_strategy::ServerStrategy;
pub use work_report::WorkReport;
