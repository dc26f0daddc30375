//! The database file: created, set for durable writes, given its schema and seed rows
//! before the service starts, so that a bad path or a schema that fails is an error at
//! once, naming the file and the statement — never a 500 on the first request.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use crate::Error;

/// How many items a new database starts with (`sku-0000` …).
pub const SEEDED_ITEMS: usize = 1000;

/// Every connection's settings: durable commits (each one waits for the disk's `fsync`
/// of the write-ahead log) and a writer that waits up to 5 s for another's lock.
pub(crate) const CONNECTION_SETTINGS: [&str; 2] =
    ["PRAGMA synchronous = FULL", "PRAGMA busy_timeout = 5000"];

/// The schema, one statement at a time so that an error names the one that failed.
const SCHEMA: [&str; 4] = [
    "CREATE TABLE IF NOT EXISTS items (sku TEXT PRIMARY KEY, name TEXT NOT NULL, \
     qty INTEGER NOT NULL CHECK (qty >= 0))",
    "CREATE TABLE IF NOT EXISTS movements (id INTEGER PRIMARY KEY, \
     sku TEXT NOT NULL REFERENCES items (sku), delta INTEGER NOT NULL, note TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS movements_by_sku ON movements (sku)",
    "CREATE TABLE IF NOT EXISTS reads (id INTEGER PRIMARY KEY, sku TEXT NOT NULL)",
];

/// A prepared SQLite database file.
#[derive(Clone, Debug)]
pub struct Database {
    path: PathBuf,
}

impl Database {
    /// Creates (or opens) the file at `path`, in write-ahead-log mode, with the schema and,
    /// when it has no items yet, [`SEEDED_ITEMS`] of them.
    pub fn create(path: impl AsRef<Path>) -> Result<Database, Error> {
        let database = Database {
            path: path.as_ref().to_path_buf(),
        };
        let mut connection = database.connect()?;
        let mode: String = connection
            .query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))
            .map_err(|source| database.refused("PRAGMA journal_mode = WAL", source))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(Error::JournalMode {
                path: database.path.clone(),
                mode,
            });
        }
        for statement in SCHEMA {
            connection
                .execute_batch(statement)
                .map_err(|source| database.refused(statement, source))?;
        }
        database.seed(&mut connection)?;
        Ok(database)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A new rusqlite connection to it, with durable commits (`synchronous = FULL`) and a
    /// 5 s `busy_timeout`.
    pub fn connect(&self) -> Result<Connection, Error> {
        let connection = Connection::open(&self.path).map_err(|source| Error::Open {
            path: self.path.clone(),
            source,
        })?;
        for statement in CONNECTION_SETTINGS {
            connection
                .execute_batch(statement)
                .map_err(|source| self.refused(statement, source))?;
        }
        Ok(connection)
    }

    /// What one durable commit waits for on this file's disk: the median of 200 appends of
    /// 4 KiB, each followed by `fsync`, to a scratch file beside it (removed after). A
    /// claim's report can carry it as evidence.
    pub fn durable_append_time(&self) -> std::io::Result<Duration> {
        let folder = self.path.parent().unwrap_or(Path::new("."));
        let scratch = folder.join(".inventory-fsync-probe");
        let mut file = std::fs::File::create(&scratch)?;
        let block = [7u8; 4096];
        let mut took = Vec::with_capacity(200);
        for _ in 0..200 {
            let start = Instant::now();
            file.write_all(&block)?;
            file.sync_all()?;
            took.push(start.elapsed());
        }
        drop(file);
        std::fs::remove_file(&scratch)?;
        took.sort();
        Ok(took[took.len() / 2])
    }

    /// [`durable_append_time`](Self::durable_append_time) as a line of a claim's evidence
    /// (`Claim::evidence`), so that a report on a write says what the disk took.
    pub fn disk_evidence(&self) -> std::io::Result<String> {
        Ok(format!(
            "this machine's disk: a durable 4 KiB append (write + fsync) takes {:.3} ms (median of 200), which each commit waits for",
            self.durable_append_time()?.as_secs_f64() * 1e3
        ))
    }

    /// Seeds the items of an empty database in one transaction.
    fn seed(&self, connection: &mut Connection) -> Result<(), Error> {
        const COUNT: &str = "SELECT count(*) FROM items";
        const INSERT: &str = "INSERT INTO items (sku, name, qty) VALUES (?1, ?2, ?3)";
        let count: i64 = connection
            .query_row(COUNT, [], |row| row.get(0))
            .map_err(|source| self.refused(COUNT, source))?;
        if count > 0 {
            return Ok(());
        }
        let transaction = connection
            .transaction()
            .map_err(|source| self.refused("BEGIN", source))?;
        {
            let mut insert = transaction
                .prepare(INSERT)
                .map_err(|source| self.refused(INSERT, source))?;
            for i in 0..SEEDED_ITEMS {
                insert
                    .execute((format!("sku-{i:04}"), format!("item {i}"), 100))
                    .map_err(|source| self.refused(INSERT, source))?;
            }
        }
        transaction
            .commit()
            .map_err(|source| self.refused("COMMIT", source))
    }

    /// The error for `statement` failing on this file.
    pub(crate) fn refused(&self, statement: &str, source: rusqlite::Error) -> Error {
        Error::Statement {
            path: self.path.clone(),
            statement: statement.to_string(),
            source,
        }
    }
}
