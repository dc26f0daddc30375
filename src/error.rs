//! One error type for the whole gate.
//!
//! Every variant names what is wrong and what would be right, so that a user reading the
//! message can fix the input without reading perfshape's source.

/// Everything perfshape can refuse or fail at.
///
/// `Debug` prints the same readable message as `Display` (with its causes), because a test
/// or `main` that returns `Err` shows the error with `Debug`: it must read as a message
/// there, not as an escaped string. A gate's failure on claims is the exception: their
/// reports were printed as the claims were decided, so `Debug` names the claims and points
/// to them, and a failing test shows each report once.
#[derive(thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A setting is outside the range perfshape accepts.
    #[error("invalid {field}: {value} (allowed: {allowed})")]
    Invalid {
        /// The setting, as the user spells it (`workers`, `n`, `work_ms`, ...).
        field: &'static str,
        /// The value that was given.
        value: String,
        /// The allowed range or set, in words.
        allowed: String,
    },
    /// A name (strategy, lifecycle, mode) that perfshape does not know.
    #[error("unknown {what} {name:?} (expected one of: {expected})")]
    Unknown {
        /// What kind of name it was meant to be.
        what: &'static str,
        /// The name that was given.
        name: String,
        /// The names perfshape knows.
        expected: String,
    },
    /// An operating-system resource (thread, socket, runtime, file) could not be had.
    #[error("{what}: {source}")]
    Io {
        /// What perfshape was doing.
        what: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The HTTP client could not be built.
    #[error("building the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// A load had failed requests, so no figure (and no verdict) is taken from it.
    #[error("{request} {what}: no figure is taken from a run with failed requests")]
    Failed {
        /// The request, e.g. `GET /orders`.
        request: String,
        /// What failed, e.g. `answered 500 in 3 of 20 requests`.
        what: String,
    },
    /// A load's requests ran past their time limits (the per-request timeout or the run's
    /// deadline): the side is too slow to measure, which a claim reports as inconclusive
    /// rather than leaving to the test runner's kill.
    #[error("{request} {what}: the side ran past its time limit")]
    TooSlow {
        /// The request, e.g. `GET /orders`.
        request: String,
        /// What ran out, e.g. `timed out in 10 of 10 requests`.
        what: String,
    },
    /// A figure was capped by perfshape itself or by the machine — the load client's
    /// workers or every core saturated — so it measures them, not the service: a claim
    /// reports it as inconclusive, never as a verdict about the service.
    #[error("perfshape or the machine was the limit, not the service: {what}")]
    Limited {
        /// What was saturated, in the probe's words.
        what: String,
    },
    /// A round's load found the machine's CPU saturated by other processes' work (its own
    /// processes used little of it; their threads waited for a CPU): a passing state of a
    /// shared machine, not the load's. A claim measures the round again while its budget
    /// lasts, and only then reports it as [`Error::Limited`].
    #[error("the machine's other work was the limit, not the service: {what}")]
    MachineBusy {
        /// The load, and how busy the machine was.
        what: String,
    },
    /// What the claim asks cannot be told from what is measurable here — a hold that a
    /// service's own CPU explains, timed from outside, could be one long poll or many short
    /// ones: a claim reports it as inconclusive, saying what would tell.
    #[error("it cannot be told from here: {what}")]
    CannotTell {
        /// What was seen, and what would tell.
        what: String,
    },
    /// A figure the claim needs is not read on this platform — the machine's CPU, a worker
    /// thread's run-queue time, a service's process, all read from Linux's `/proc`: a
    /// claim reports it as inconclusive, and its gate neither snapshots nor fails it (the
    /// claim decides where the read is made).
    #[error("not measurable here: {what}")]
    Unread {
        /// The read that is missing, the platform, and where it is made.
        what: String,
    },
    /// A target could not be reached before any load was offered.
    #[error("cannot reach {url}: {reason}")]
    Unreachable {
        /// The URL as given.
        url: String,
        /// The parse error, the lookup error or the connect error.
        reason: String,
    },
    /// The two sides of a comparison answer the same request differently (their status,
    /// or bodies of clearly different lengths): named before any load, as a timing of two
    /// different answers compares nothing.
    #[error("the base ({base}) and the candidate ({candidate}) answer differently: {what}")]
    Differs {
        /// The base's URL.
        base: String,
        /// The candidate's URL.
        candidate: String,
        /// How they differ.
        what: String,
    },
    /// A claim did not hold (or could not be decided) and the gate is strict: the
    /// message is the full report, and the reports are there to read (a test that wants
    /// the verdict or the margin, a harness that collects them).
    #[error("{message}")]
    Gate {
        /// What failed, in full: each report as it prints.
        message: String,
        /// The reports of the claims that failed the gate (none when the gate failed on
        /// something other than a claim, such as a snapshot).
        reports: Vec<crate::outcome::ClaimReport>,
    },
    /// The builder a served service was given
    /// ([`Target::serve_with`](crate::Target::serve_with)) returned an error, panicked or
    /// did not finish in time, or a launch function
    /// ([`Target::launch`](crate::Target::launch)) returned at once: before any load.
    #[error("building the service on its served pool: {what}")]
    Build {
        /// What the builder did: its error, its panic's message, or how long it ran.
        what: String,
    },
    /// An error of code built on perfshape — the experiments' crate, a harness of a
    /// team's — raised where perfshape's error is expected (inside a
    /// [`Measure`](crate::claim::Measure)): its message, and its causes.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
}

/// What became of a task that did not return — "panicked: no DATABASE_URL", "was
/// cancelled: …" — as a builder's or a launch function's failure is named (a panic carries
/// its message as a `&str` or a `String`).
pub(crate) fn join_failure(joined: tokio::task::JoinError) -> String {
    match joined.try_into_panic() {
        Ok(panic) => panicked(panic),
        Err(joined) => format!("was cancelled: {joined}"),
    }
}

/// "panicked: `<its message>`", for a panic caught as a task's or a thread's.
pub(crate) fn panicked(panic: Box<dyn std::any::Any + Send>) -> String {
    format!(
        "panicked: {}",
        panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic with no message".to_string())
    )
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Gate { reports, .. } if !reports.is_empty() => write_reported(f, reports),
            _ => write_with_causes(f, self),
        }
    }
}

/// A gate's failure where a test or `main` shows it: each claim's report was printed on
/// stderr as the claim was decided, so the failure names the claims and where their reports
/// are rather than print them a second time (`Display` still gives them whole).
fn write_reported(
    f: &mut std::fmt::Formatter<'_>,
    reports: &[crate::outcome::ClaimReport],
) -> std::fmt::Result {
    for (k, report) in reports.iter().enumerate() {
        if k > 0 {
            writeln!(f)?;
        }
        write!(f, "{}: {:?}", report.verdict, report.name)?;
    }
    let whose = if reports.len() == 1 {
        "its report"
    } else {
        "their reports"
    };
    write!(
        f,
        " ({whose} above, from \"perfshape: {}\")",
        reports[0].verdict
    )
}

/// `error`'s message, then each of its causes not already in it on a line of its own
/// (`caused by: …`): how an error reads where a test or `main` shows it with `Debug`.
pub fn write_with_causes(
    f: &mut std::fmt::Formatter<'_>,
    error: &dyn std::error::Error,
) -> std::fmt::Result {
    let message = error.to_string();
    write!(f, "{message}")?;
    let mut source = error.source();
    while let Some(cause) = source {
        // A cause already in the message (a wrapped error's) is not said twice.
        if !message.contains(&cause.to_string()) {
            write!(f, "\n  caused by: {cause}")?;
        }
        source = cause.source();
    }
    Ok(())
}

/// `Result` with perfshape's [`Error`]; the default `T = ()` lets tests end in `Ok(())`.
pub type Result<T = (), E = Error> = std::result::Result<T, E>;

impl Error {
    /// A gate failure that carries no claim report (a table row, a snapshot).
    #[doc(hidden)]
    pub fn gate(message: impl Into<String>) -> Error {
        Error::Gate {
            message: message.into(),
            reports: Vec::new(),
        }
    }

    /// The reports of the claims a gate failed on (empty for any other error).
    pub fn reports(&self) -> &[crate::outcome::ClaimReport] {
        match self {
            Error::Gate { reports, .. } => reports,
            _ => &[],
        }
    }

    /// Shorthand for [`Error::Invalid`].
    pub(crate) fn invalid(
        field: &'static str,
        value: impl ToString,
        allowed: impl ToString,
    ) -> Self {
        Error::Invalid {
            field,
            value: value.to_string(),
            allowed: allowed.to_string(),
        }
    }

    /// Shorthand for [`Error::Io`].
    pub(crate) fn io(what: impl ToString, source: std::io::Error) -> Self {
        Error::Io {
            what: what.to_string(),
            source,
        }
    }
}

/// The first setting a builder chain refused, kept until the chain's end names it.
///
/// perfshape's builders read as reqwest's do: a setter never fails, and what it refuses is
/// returned, named, where the chain ends — `check()` for a claim, the first request for an
/// endpoint, the constructor for a target. A chain holds only its first refusal (a later
/// setter cannot hide it), and holds it cloneably, as an endpoint is cloned into its claims.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Refused {
    field: &'static str,
    value: String,
    allowed: String,
}

impl Refused {
    /// What `error` refused; a setting's check returns [`Error::Invalid`], and any other
    /// error is kept as its message.
    pub(crate) fn of(error: Error) -> Refused {
        match error {
            Error::Invalid {
                field,
                value,
                allowed,
            } => Refused {
                field,
                value,
                allowed,
            },
            other => Refused {
                field: "setting",
                value: other.to_string(),
                allowed: "a setting perfshape accepts".to_string(),
            },
        }
    }

    /// `field` refused at `value`, `allowed` saying what would be accepted.
    pub(crate) fn new(field: &'static str, value: impl ToString, allowed: impl ToString) -> Self {
        Refused::of(Error::invalid(field, value, allowed))
    }

    /// The error the chain's end returns.
    pub(crate) fn to_error(&self) -> Error {
        Error::invalid(self.field, &self.value, &self.allowed)
    }

    /// Keeps the first refusal: `first` if there is one, else what `result` refused.
    pub(crate) fn keep<T>(first: &mut Option<Refused>, result: Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                first.get_or_insert_with(|| Refused::of(error));
                None
            }
        }
    }
}

/// Checks that `value` lies in `lo..=hi`, naming the field when it does not.
pub fn check_range<T>(field: &'static str, value: T, lo: T, hi: T, unit: &str) -> Result<T>
where
    T: PartialOrd + std::fmt::Display + Copy,
{
    if value < lo || value > hi {
        return Err(Error::invalid(
            field,
            format!("{value}{unit}"),
            format!("{lo}{unit} to {hi}{unit}"),
        ));
    }
    Ok(value)
}
