//! What can go wrong before the service answers: the database's file, its settings, its
//! schema. Each error names the file, and the statement that failed.

use std::path::PathBuf;

/// Opening or preparing the database failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file cannot be opened or created (a missing folder, no permission).
    #[error("cannot open the database {path}: {source}")]
    Open {
        /// The database file.
        path: PathBuf,
        /// rusqlite's error.
        source: rusqlite::Error,
    },
    /// A statement of the settings, the schema or the seed rows failed.
    #[error("the database {path} refused `{statement}`: {source}")]
    Statement {
        /// The database file.
        path: PathBuf,
        /// The statement, as sent.
        statement: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file cannot keep a write-ahead log, which the service's durable writes need.
    #[error("the database {path} is in journal mode {mode:?}, not \"wal\"")]
    JournalMode {
        /// The database file.
        path: PathBuf,
        /// The mode SQLite kept.
        mode: String,
    },
    /// The connection pool could not be built.
    #[error("cannot build a connection pool for {path}: {reason}")]
    Pool {
        /// The database file.
        path: PathBuf,
        /// The pool's error.
        reason: String,
    },
}
