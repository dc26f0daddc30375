//! The experiments' error: the gate's, or what only the experiments do — a fixture, a load
//! engine, an engine's statistics, a service started from a command, a plot.

use std::path::PathBuf;

use perfshape::claim::ClaimReport;

/// Everything the experiments can refuse or fail at.
///
/// `Debug` prints the same readable message as `Display` (with its causes), as the gate's
/// [`perfshape::Error`] does: a table's failing row reads as a report in a test's output.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// What the gate refused or failed at: a setting out of range, a load's failed
    /// requests, a claim's gate.
    #[error(transparent)]
    Gate(#[from] perfshape::Error),
    /// A fixture file could not be read or is not a valid experiment.
    #[error(transparent)]
    Fixture(#[from] FixtureError),
    /// A load engine (Locust, k6) could not be started, or ran and failed: which engine,
    /// the command or process, and what it said.
    #[error("{engine}: {what}")]
    Engine {
        /// `locust` or `k6`.
        engine: &'static str,
        /// What went wrong, with the engine's own words where it gave any.
        what: String,
    },
    /// A service a comparison starts from a command could not be started, or did not
    /// listen: which side, the command as run, and what happened (its last output lines).
    #[error("the {name} command `{command}` {what}")]
    Service {
        /// `base` or `candidate`.
        name: String,
        /// The command, its port filled in.
        command: String,
        /// What went wrong.
        what: String,
    },
    /// An engine's statistics lack what a verdict needs — a row, a round, a column — or
    /// hold failed requests: no verdict is taken from partial data.
    #[error("{source_name}: {what}")]
    Statistics {
        /// The statistics file (or the run) they came from.
        source_name: String,
        /// What is missing or wrong.
        what: String,
    },
    /// A plot could not be drawn (a report's figure).
    #[error("drawing {what}: {reason}")]
    Plot {
        /// Which figure.
        what: String,
        /// The plotting library's message.
        reason: String,
    },
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The gate's own Debug names its causes.
            Error::Gate(gate) => write!(f, "{gate:?}"),
            other => perfshape::__support::write_with_causes(f, other),
        }
    }
}

/// A fixture that cannot be loaded: the file, the line, and what is wrong there.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}: {kind}", path.display())]
pub struct FixtureError {
    /// The fixture file.
    pub path: PathBuf,
    /// The 1-based line the problem is on (1 when the file could not be read at all).
    pub line: usize,
    /// What is wrong.
    #[source]
    pub kind: FixtureErrorKind,
}

/// What is wrong in a fixture.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FixtureErrorKind {
    /// The file could not be read.
    #[error("cannot read the fixture: {0}")]
    Read(#[source] std::io::Error),
    /// The TOML is malformed, a field is missing or has the wrong type.
    #[error("{0}")]
    Toml(String),
    /// A field is present but its value is not acceptable.
    #[error("{field}: {source}")]
    Field {
        /// Where the field is, e.g. `scenario[2].n`.
        field: String,
        /// Why it is not acceptable.
        #[source]
        source: Box<Error>,
    },
}

/// `Result` with the experiments' [`Error`]; the default `T = ()` lets tests end in
/// `Ok(())`.
pub type Result<T = (), E = Error> = std::result::Result<T, E>;

impl Error {
    /// The reports of the claims a gate failed on (empty for any other error).
    pub fn reports(&self) -> &[ClaimReport] {
        match self {
            Error::Gate(gate) => gate.reports(),
            _ => &[],
        }
    }

    /// A gate failure that carries no claim report (a table row, a snapshot).
    pub(crate) fn gate(message: impl Into<String>) -> Error {
        Error::Gate(perfshape::Error::gate(message))
    }

    /// A setting outside the range the experiments accept ([`perfshape::Error::Invalid`]).
    pub(crate) fn invalid(
        field: &'static str,
        value: impl ToString,
        allowed: impl ToString,
    ) -> Self {
        Error::Gate(perfshape::Error::Invalid {
            field,
            value: value.to_string(),
            allowed: allowed.to_string(),
        })
    }

    /// A name the experiments do not know ([`perfshape::Error::Unknown`]).
    pub(crate) fn unknown(
        what: &'static str,
        name: impl ToString,
        expected: impl ToString,
    ) -> Self {
        Error::Gate(perfshape::Error::Unknown {
            what,
            name: name.to_string(),
            expected: expected.to_string(),
        })
    }

    /// An operating-system resource that could not be had ([`perfshape::Error::Io`]).
    pub(crate) fn io(what: impl ToString, source: std::io::Error) -> Self {
        Error::Gate(perfshape::Error::Io {
            what: what.to_string(),
            source,
        })
    }
}

/// Where the gate's error is expected — a [`Measure`](perfshape::claim::Measure)'s figure,
/// a claim's check — the experiments' error is the gate's it wraps, or else carried whole.
impl From<Error> for perfshape::Error {
    fn from(error: Error) -> perfshape::Error {
        match error {
            Error::Gate(gate) => gate,
            other => perfshape::Error::Other(Box::new(other)),
        }
    }
}
