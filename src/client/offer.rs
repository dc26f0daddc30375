//! What [`LoadClient::offer`](super::LoadClient::offer) is asked for: a load — how it is
//! offered, where, how many requests — and optionally a canary.

use std::time::Duration;

use crate::vocab::ClientStrategy;

/// A load to offer to a URL: `n` GET requests the way `strategy` says, and optionally one
/// [`Canary`] sent while they are in flight.
///
/// ```no_run
/// use std::time::Duration;
/// use perfshape::client::LoadRequest;
/// use perfshape::{client::ClientStrategy, client::Lifecycle, client::LoadClient, runtime::Pool};
///
/// let client = LoadClient::new(Pool::workers("client", 2)?, Lifecycle::Shared)?;
/// let request = LoadRequest::new(ClientStrategy::FanOut, "http://127.0.0.1:8080/blocking?ms=50", 2)
///     .with_canary("http://127.0.0.1:8080/health", Duration::from_millis(10));
/// let run = client.offer(request)?;
/// let waited = run.canary.map(|canary| canary.latency());
/// # Ok::<(), perfshape::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadRequest<'a> {
    /// How the load is offered.
    pub strategy: ClientStrategy,
    /// The absolute URL every request of the load goes to.
    pub url: &'a str,
    /// Requests in the load (at most: a closed loop may end on its time first).
    pub n: usize,
    /// One request sent while the load is in flight, if any.
    pub canary: Option<Canary<'a>>,
}

/// One GET to `url`, sent `after` a load started while the load is in flight: how
/// responsive is the server under this load (seed 000's `/health` during a blocking
/// load)? It goes through the load client's own lifecycle, so a connection cap queues it
/// like any other request, and it is not one of the load's requests: the run keeps it
/// apart ([`Run::canary`](crate::run::Run::canary)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Canary<'a> {
    /// The absolute URL.
    pub url: &'a str,
    /// How long after the load's start it is sent.
    pub after: Duration,
}

/// A [`Canary`] of a prepared request: one request of `plan`, sent `after` a load of
/// another plan started, while the load is in flight.
#[derive(Clone, Copy, Debug)]
pub struct CanaryPlan<'a> {
    /// The request.
    pub plan: &'a super::Plan,
    /// How long after the load's start it is sent.
    pub after: Duration,
}

impl<'a> LoadRequest<'a> {
    /// `n` requests to `url`, offered the way `strategy` says.
    pub fn new(strategy: ClientStrategy, url: &'a str, n: usize) -> LoadRequest<'a> {
        LoadRequest {
            strategy,
            url,
            n,
            canary: None,
        }
    }

    /// The same load with a canary to `url`, sent `after` it started.
    pub fn with_canary(self, url: &'a str, after: Duration) -> LoadRequest<'a> {
        LoadRequest {
            canary: Some(Canary { url, after }),
            ..self
        }
    }
}
