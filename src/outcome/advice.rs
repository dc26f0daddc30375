//! What a report tells its reader to do: the likely cause of what the claim found, in the
//! service team's terms, and the change that fixes it — the two lines a failure leads with
//! after what is wrong.

use serde::Serialize;

/// The likely cause and the remedy a claim names for what it found
/// ([`Claim::advise`](crate::Claim::advise)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Advice {
    /// What in the code most likely does it: "a synchronous call on the worker — a sync
    /// database driver, `std::fs`, a std mutex held while another thread works".
    pub cause: String,
    /// What to change: "run it in `tokio::task::spawn_blocking`, or use an async driver".
    pub action: String,
}

impl Advice {
    /// The likely `cause` and the `action` that fixes it.
    pub fn new(cause: impl Into<String>, action: impl Into<String>) -> Self {
        Advice {
            cause: cause.into(),
            action: action.into(),
        }
    }
}
