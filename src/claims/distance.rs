//! What a claim on a served router says when the service meets a downstream on this
//! machine directly: a database on loopback answers a synchronous call before the worker
//! is off its CPU long enough to read as a wait, where production's, a network hop away,
//! holds the worker for a round trip. The test, not the service, is then what is wrong.

use crate::claim::Advice;
use crate::downstream::onward_ports;
use crate::local_downstream::local_downstreams;

/// "the service talks to 127.0.0.1:5432 (postgres) directly: …" and what to do, or `None`
/// where it talks to none (or only through a `Downstream` proxy), or where the platform
/// does not say.
pub(crate) fn local_downstream_advice() -> Option<Advice> {
    let found = local_downstreams(&onward_ports());
    if found.is_empty() {
        return None;
    }
    let names: Vec<String> = found.iter().map(ToString::to_string).collect();
    Some(Advice::new(
        format!(
            "the service talks to {} directly: a downstream on this machine answers in microseconds and hides a synchronous call on the worker, which production's, a network hop away, holds for a round trip",
            names.join(", ")
        ),
        "put it at production's distance: perfshape::Downstream::to(addr).latency(Duration::from_millis(1)).start()?, and give the service the proxy's address",
    ))
}
