//! What every response says about how it was served (seed 000's server printed the same).

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

/// The JSON body of every work response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorkReport {
    /// The strategy that served the request (`blocking`, `async`, ...).
    pub strategy: String,
    /// The name of the thread that ran the handler when it started (`server-0`, ...).
    pub served_by: String,
    /// The client end of the connection: a new port means a new connection. `None` when
    /// the router was called without a socket.
    pub peer: Option<SocketAddr>,
    /// Microseconds from server start to the handler's first line.
    pub begin_us: u64,
    /// Microseconds from server start to the handler's last line.
    pub end_us: u64,
    /// For [`ServerStrategy::Cpu`](crate::ServerStrategy::Cpu): logarithms computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u64>,
    /// The runtime as the handler found it.
    pub at_start: RuntimeFigures,
}

/// Stable tokio runtime metrics, read when a handler starts: the tokio counterpart of the
/// thread-pool figures ASP.NET reported in seed 000.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeFigures {
    /// Worker threads in the runtime.
    pub num_workers: usize,
    /// Tasks alive in the runtime (connections and spawned work).
    pub num_alive_tasks: usize,
    /// Tasks waiting in the global (injection) queue.
    pub global_queue_depth: usize,
}

impl RuntimeFigures {
    /// Reads the figures of the runtime the caller runs on.
    pub(crate) fn now() -> Self {
        let metrics = tokio::runtime::Handle::current().metrics();
        RuntimeFigures {
            num_workers: metrics.num_workers(),
            num_alive_tasks: metrics.num_alive_tasks(),
            global_queue_depth: metrics.global_queue_depth(),
        }
    }
}
