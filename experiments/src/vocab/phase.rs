//! What one request holds on the server, step by step: the vocabulary in which the model
//! simulates a strategy and in which a strategy says what it does.

use std::time::Duration;

use serde::Serialize;

/// One step of a request on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Holds a worker thread for the duration (blocking or computing; zero to accept,
    /// parse or respond).
    Worker(Duration),
    /// Holds nothing: an async wait.
    Wait(Duration),
    /// Holds a blocking-pool thread (`spawn_blocking`), not a worker.
    Offload(Duration),
    /// Holds a worker, and the lock once it gets it: waiting for the lock blocks the worker.
    Locked(Duration),
    /// Holds the machine's HTTP stack: what sending, parsing and answering one request
    /// costs client and server together, which the model serves one request at a time.
    /// Never part of a strategy: the model adds it when a per-request cost is calibrated
    /// ([`Model::with_overhead`](crate::model::Model::with_overhead)).
    Stack(Duration),
}
