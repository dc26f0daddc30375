//! What sends a load's requests: reqwest, or the connections driver.

/// What sends a load's requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Driver {
    /// reqwest, with the configured [`Lifecycle`](super::Lifecycle): what the seed strategies measure.
    #[default]
    Reqwest,
    /// For a closed loop with no think time or ramp, of one plain-HTTP request with a
    /// shared client: one TCP connection per user, one single-threaded event loop per
    /// client worker (as wrk's threads), the same request bytes written each time and the
    /// response read with httparse — the load driver of `perfshape load` and `perfshape
    /// probe`, whose figures a general-purpose client's cost per request would cap (it
    /// costs what wrk costs, a third of reqwest). Any other load is sent by reqwest.
    Connections,
}
