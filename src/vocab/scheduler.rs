//! Which of tokio's multi-thread scheduler variants a pool runs.

use serde::Serialize;

use crate::error::{Error, Result};

/// How a pool's workers share newly woken tasks and the I/O driver.
///
/// tokio's default hands a task woken by the I/O driver to the worker that polled the
/// driver; that worker wakes a sibling only when more than one task waits in its queue. A
/// handler that blocks its worker then delays the requests queued behind it even while
/// other workers sit parked (measured in `docs/coscheduling.md`). The two variants below
/// are tokio's own unstable switches, available when perfshape is built with
/// `--cfg tokio_unstable` (this repository's `.cargo/config.toml` sets it).
///
/// ```
/// use perfshape::{PoolSettings, runtime::Scheduler};
///
/// let settings = PoolSettings::workers(2)?;
/// assert_eq!(settings.scheduler, Scheduler::Default);
/// match settings.with_scheduler(Scheduler::EagerDriverHandoff) {
///     Ok(eager) => assert_eq!(eager.to_string(), "W=2 B=512 eager-handoff"),
///     Err(e) => assert!(e.to_string().contains("tokio_unstable"), "{e}"),
/// }
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// tokio's defaults.
    #[default]
    Default,
    /// `Builder::disable_lifo_slot`: a woken task goes to the stealable run queue instead
    /// of the worker's LIFO slot.
    NoLifoSlot,
    /// `Builder::enable_eager_driver_handoff`: a worker that was parked on the I/O or time
    /// driver wakes a sibling as it begins to poll a task, and the sibling takes the driver.
    EagerDriverHandoff,
}

impl Scheduler {
    /// Every variant, default first.
    pub const ALL: [Scheduler; 3] = [
        Scheduler::Default,
        Scheduler::NoLifoSlot,
        Scheduler::EagerDriverHandoff,
    ];

    /// The variant under which a fan-out of W blocking requests on W workers is one wave,
    /// as the model says: eager driver hand-off when this build has it, tokio's default
    /// otherwise. perfshape's experiments and catalog serve the demo service on it.
    pub fn one_wave() -> Scheduler {
        if Scheduler::EagerDriverHandoff.available() {
            Scheduler::EagerDriverHandoff
        } else {
            Scheduler::Default
        }
    }

    /// Whether this build of perfshape can run it: the variants need `--cfg tokio_unstable`.
    pub fn available(self) -> bool {
        self == Scheduler::Default || cfg!(tokio_unstable)
    }

    /// `self`, or an error naming the missing cfg.
    pub(crate) fn check(self) -> Result<Self> {
        if self.available() {
            Ok(self)
        } else {
            Err(Error::invalid(
                "scheduler",
                self,
                "default, unless perfshape is built with RUSTFLAGS=\"--cfg tokio_unstable\" \
                 (tokio's unstable scheduler options)",
            ))
        }
    }

    /// The short name used in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scheduler::Default => "default",
            Scheduler::NoLifoSlot => "no-lifo-slot",
            Scheduler::EagerDriverHandoff => "eager-handoff",
        }
    }
}

impl std::fmt::Display for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
