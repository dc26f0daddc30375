//! The four builds of the same handlers.

use std::fmt;
use std::str::FromStr;

/// How the handlers reach the database.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Build {
    /// rusqlite called on the async worker, one connection behind a std mutex: the bug.
    OnWorker,
    /// The same connection and calls, on tokio's blocking pool (`spawn_blocking`).
    SharedConnection,
    /// A deadpool-sqlite pool of rusqlite connections, each call in `interact`.
    Pool,
    /// sqlx's async SQLite driver and its pool.
    Sqlx,
}

impl Build {
    /// Every build, the bug first.
    pub const ALL: [Build; 4] = [
        Build::OnWorker,
        Build::SharedConnection,
        Build::Pool,
        Build::Sqlx,
    ];

    /// The build's name on a command line: `on-worker`, `shared-connection`, `pool`, `sqlx`.
    pub fn name(self) -> &'static str {
        match self {
            Build::OnWorker => "on-worker",
            Build::SharedConnection => "shared-connection",
            Build::Pool => "pool",
            Build::Sqlx => "sqlx",
        }
    }
}

impl fmt::Display for Build {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Build {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        Build::ALL
            .into_iter()
            .find(|build| build.name() == text)
            .ok_or_else(|| {
                let names: Vec<_> = Build::ALL.iter().map(|b| b.name()).collect();
                format!(
                    "unknown build {text:?}: expected one of {}",
                    names.join(", ")
                )
            })
    }
}
