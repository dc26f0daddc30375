//! What a claim on a served router says when the service meets a downstream on this
//! machine directly: a database on loopback answers a synchronous call before the worker
//! is off its CPU long enough to read as a wait, where production's, a network hop away,
//! holds the worker for a round trip. The test, not the service, is then what is wrong: a
//! claim that would hold is inconclusive, naming the process and the
//! [`Downstream`](crate::Downstream) that makes it decisive.

use std::sync::{Arc, OnceLock};

use crate::claim::Advice;
use crate::downstream::onward_ports;
use crate::error::Error;
use crate::local_downstream::{LocalDownstream, local_downstreams};
use crate::target::Target;

/// What to do about a downstream met on this machine.
const DO: &str = "put it at production's distance: perfshape::Downstream::to(addr).latency(Duration::from_millis(1)).start()?, and give the service the proxy's address (or, for a sidecar that is local in production too, Target::local_downstreams_are_production())";

fn cause(found: &[LocalDownstream]) -> String {
    let names: Vec<String> = found.iter().map(ToString::to_string).collect();
    format!(
        "the service talks to {} directly: a downstream on this machine answers in microseconds and hides a synchronous call on the worker, which production's, a network hop away, holds for a round trip",
        names.join(", ")
    )
}

/// A claim's look at the processes its served service talks to on this machine, taken once
/// (at its first round, when a pool's connections are open) and kept.
#[derive(Clone, Debug, Default)]
pub(crate) struct LocalLook(Arc<OnceLock<Vec<LocalDownstream>>>);

impl LocalLook {
    /// Whether the service talks to a process on this machine directly (not through a
    /// `Downstream`): what a poll that slept in the kernel then most likely called.
    pub(crate) fn talks_locally(&self) -> bool {
        !self.found().is_empty()
    }

    /// Why a figure that would hold says nothing of production here: the service talks to
    /// a process on this machine directly, and `target` does not take that as production's.
    /// `None` where it would hold rightly.
    pub(crate) fn hides_a_hold(&self, target: &Target, figure: f64, band: f64) -> Option<Error> {
        if figure > band || target.local_is_production() {
            return None;
        }
        let found = self.found();
        (!found.is_empty()).then(|| Error::CannotTell {
            what: format!(
                "{}, so a hold here says nothing of production; {DO}",
                cause(found)
            ),
        })
    }

    /// "the service talks to 127.0.0.1:5432 (postgres) directly: …" and what to do, from
    /// the same look the claim decided on; `None` where it talks to none (or only through a
    /// `Downstream` proxy), where the platform does not say, or where `target` takes its
    /// local processes as production's.
    pub(crate) fn advice(&self, target: &Target) -> Option<Advice> {
        let found = self.found();
        (!found.is_empty() && !target.local_is_production()).then(|| Advice::new(cause(found), DO))
    }

    /// Why a route inside whose polls a round trip to a local process fell cannot be told
    /// here: the service talks to a process on this machine directly, whose answers come
    /// faster than a wait shows, and what makes it decisive. `None` where it talks to none, or where
    /// `local_is_production` takes its local processes as production's.
    pub(crate) fn too_fast_to_see(&self, local_is_production: bool) -> Option<String> {
        let found = self.found();
        (!found.is_empty() && !local_is_production).then(|| format!("{}; {DO}", cause(found)))
    }

    fn found(&self) -> &[LocalDownstream] {
        self.0.get_or_init(|| local_downstreams(&onward_ports()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found() -> LocalLook {
        let look = LocalLook::default();
        let _ = look.0.set(vec![LocalDownstream {
            addr: "127.0.0.1:5432".parse().unwrap(),
            process: Some("postgres".into()),
        }]);
        look
    }

    /// A figure that would hold, beside a local process, is no verdict: it names the
    /// process and the Downstream line; said to be production's, or past the band, or with
    /// nothing local, it stands.
    #[test]
    fn a_hold_beside_a_local_process_is_no_verdict_unless_it_is_production() {
        let settings = crate::pool::PoolSettings::workers(1).unwrap();
        let target = Target::serve(settings, axum::Router::new()).unwrap();
        let why = found().hides_a_hold(&target, 0.2, 1.0).expect("no verdict");
        assert!(matches!(why, Error::CannotTell { .. }), "{why}");
        let said = why.to_string();
        assert!(
            said.contains("127.0.0.1:5432 (postgres) directly"),
            "{said}"
        );
        assert!(said.contains("Downstream::to("), "{said}");
        assert!(found().hides_a_hold(&target, 1.5, 1.0).is_none());
        let sidecar = target.clone().local_downstreams_are_production();
        assert!(found().hides_a_hold(&sidecar, 0.2, 1.0).is_none());
        let none = LocalLook::default();
        let _ = none.0.set(Vec::new());
        assert!(none.hides_a_hold(&target, 0.2, 1.0).is_none());
        assert!(found().talks_locally() && !none.talks_locally());
        // The advice follows the same look and the same setting.
        assert!(found().advice(&target).is_some());
        assert!(found().advice(&sidecar).is_none());
        assert!(none.advice(&target).is_none());
    }
}
