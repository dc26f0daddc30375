//! The JSON body of every work response of the demo service.

use serde::{Deserialize, Serialize};

/// The JSON body of every work response of perfshape's demo strategies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkReport {
    /// The strategy that served the request (`blocking`, `async`, ...).
    pub strategy: String,
    /// Microseconds from server start to the handler's first line.
    pub begin_us: u64,
    /// Microseconds from server start to the handler's last line.
    pub end_us: u64,
    /// For the CPU strategy: logarithms computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
}
