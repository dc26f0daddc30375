//! The three builds of the same handlers.

use std::fmt;

/// How the handlers reach the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Build {
    /// diesel called on the async worker, one connection behind a std mutex: the bug.
    OnWorker,
    /// The same connection and calls, on tokio's blocking pool (`spawn_blocking`).
    Offloaded,
    /// tokio-postgres behind a deadpool pool: the handler awaits.
    Async,
}

impl Build {
    /// Every build, the bug first.
    pub const ALL: [Build; 3] = [Build::OnWorker, Build::Offloaded, Build::Async];

    /// `on-worker`, `offloaded`, `async`.
    pub fn name(self) -> &'static str {
        match self {
            Build::OnWorker => "on-worker",
            Build::Offloaded => "offloaded",
            Build::Async => "async",
        }
    }
}

impl fmt::Display for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
