//! When a request is sent again: once, on a new connection, where its connection was reset
//! or closed before any byte of the response came, and sending it twice is safe.
//!
//! A server closes an idle keep-alive connection when it chooses (uvicorn after 5 s, Node's
//! `http` after 5 s, gunicorn after 2 s), and a request written as that close crosses it on
//! the wire meets a reset: the server never read it. Browsers and hyper's own pool send such a
//! request again on a new connection; both of perfshape's clients do, by this one rule. The
//! second try is the request's outcome, counted once and marked
//! ([`RequestRecord::retried`](crate::record::RequestRecord::retried)); a run's summary counts
//! them. A second failure, a reset once part of the response has come, or a method that is
//! not idempotent (a `POST` or `PATCH` the server may have acted on) stays a failure.

use std::error::Error as StdError;
use std::io::ErrorKind;

/// Whether a request with `method` may be sent twice: its method is idempotent (`GET`,
/// `HEAD`, `PUT`, `DELETE`, `OPTIONS`, `TRACE`). Every body perfshape sends is held in
/// memory, so any body can be sent again.
pub(super) fn safe(method: &reqwest::Method) -> bool {
    method.is_idempotent()
}

/// Whether `error` is the connection lost before the response: reset, aborted, a broken
/// pipe while writing, or closed before a response head (hyper's "connection closed before
/// message completed"). A timeout, a refused connect or a malformed response is not.
pub(super) fn connection_lost(error: &(dyn StdError + 'static)) -> bool {
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(io) = error.downcast_ref::<std::io::Error>()
            && lost(io.kind())
        {
            return true;
        }
        if let Some(hyper) = error.downcast_ref::<hyper::Error>()
            && (hyper.is_incomplete_message() || hyper.is_canceled())
        {
            return true;
        }
        cause = error.source();
    }
    false
}

/// The I/O errors of a connection the peer closed or reset.
pub(super) fn lost(kind: ErrorKind) -> bool {
    matches!(
        kind,
        ErrorKind::ConnectionReset
            | ErrorKind::ConnectionAborted
            | ErrorKind::BrokenPipe
            | ErrorKind::UnexpectedEof
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_idempotent_request_is_sent_twice() {
        for method in ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"] {
            assert!(safe(&method.parse().unwrap()), "{method}");
        }
        for method in ["POST", "PATCH"] {
            assert!(!safe(&method.parse().unwrap()), "{method}");
        }
    }

    #[test]
    fn a_reset_is_a_lost_connection_and_a_refusal_is_not() {
        let reset = std::io::Error::from(ErrorKind::ConnectionReset);
        assert!(connection_lost(&reset));
        let refused = std::io::Error::from(ErrorKind::ConnectionRefused);
        assert!(!connection_lost(&refused));
        let timed_out = std::io::Error::from(ErrorKind::TimedOut);
        assert!(!connection_lost(&timed_out));
    }
}
