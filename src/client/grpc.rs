//! gRPC unary calls over HTTP/2: the request's framing, and the call's status as the
//! server gives it — in the response's headers when nothing else follows (a
//! "Trailers-Only" response: how tonic answers UNIMPLEMENTED or a handler's error), else in
//! the trailers after the message.
//!
//! Only the status decides whether a call succeeded: a gRPC server answers HTTP 200 to a
//! call that failed, so a load client reading the HTTP status alone would count every
//! failed call as ok.

use bytes::{BufMut, Bytes, BytesMut};
use http_body::Body as _;
use reqwest::header::HeaderMap;

/// The header and trailer that carry a call's status code, and its message.
const STATUS: &str = "grpc-status";
const MESSAGE: &str = "grpc-message";

/// A call's status other than OK, as the server gave it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CallStatus {
    /// The status code (2 UNKNOWN, 12 UNIMPLEMENTED, 14 UNAVAILABLE, …).
    pub(crate) code: u16,
    /// `grpc-message`, percent-decoded, if the server sent one.
    pub(crate) message: Option<String>,
}

impl std::fmt::Display for CallStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(code_name(self.code))?;
        match &self.message {
            Some(message) if !message.is_empty() => write!(f, " ({message})"),
            _ => Ok(()),
        }
    }
}

/// The name gRPC gives status `code`.
pub(crate) fn code_name(code: u16) -> &'static str {
    const NAMES: [&str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];
    NAMES
        .get(usize::from(code))
        .copied()
        .unwrap_or("an unknown gRPC status")
}

/// `message` as one uncompressed gRPC message: a zero flag byte, its length in four
/// big-endian bytes, then the message.
pub(crate) fn framed(message: &[u8]) -> Option<Bytes> {
    let len = u32::try_from(message.len()).ok()?;
    let mut frame = BytesMut::with_capacity(5 + message.len());
    frame.put_u8(0);
    frame.put_u32(len);
    frame.put_slice(message);
    Some(frame.freeze())
}

/// Whether `path` names a method as gRPC does: `/package.Service/Method`.
pub(crate) fn is_method_path(path: &str) -> bool {
    let mut parts = path.split('/');
    matches!(
        (parts.next(), parts.next(), parts.next(), parts.next()),
        (Some(""), Some(service), Some(method), None)
            if !service.is_empty() && !method.is_empty() && !method.contains('?')
    )
}

/// The call's status in `headers` (a Trailers-Only response) or in trailers.
fn status_in(headers: &HeaderMap) -> Option<CallStatus> {
    let code = headers.get(STATUS)?.to_str().ok()?.trim().parse().ok()?;
    let message = headers
        .get(MESSAGE)
        .and_then(|v| v.to_str().ok())
        .map(percent_decoded);
    Some(CallStatus { code, message })
}

/// `grpc-message` is percent-encoded UTF-8.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied(),
            bytes.get(i + 2).copied(),
        ) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What a call's response came to: the body's length, and its status other than OK (a
/// response with no status at all is named as one: the server is not speaking gRPC).
pub(crate) struct Answered {
    pub(crate) body_len: usize,
    pub(crate) failed: Option<CallStatus>,
}

/// Reads `response` to its end — message and trailers — and the call's status.
pub(crate) async fn read(response: reqwest::Response) -> Result<Answered, reqwest::Error> {
    if let Some(status) = status_in(response.headers()) {
        // Trailers-Only: the status came with the headers, and nothing follows.
        let body_len = response.bytes().await?.len();
        return Ok(Answered {
            body_len,
            failed: (status.code != 0).then_some(status),
        });
    }
    let mut body = reqwest::Body::from(response);
    let mut body_len = 0;
    let mut status = None;
    while let Some(frame) =
        std::future::poll_fn(|cx| std::pin::Pin::new(&mut body).poll_frame(cx)).await
    {
        let frame = frame?;
        if let Some(data) = frame.data_ref() {
            body_len += data.len();
        } else if let Some(trailers) = frame.trailers_ref() {
            status = status_in(trailers);
        }
    }
    let failed = match status {
        Some(status) if status.code == 0 => None,
        Some(status) => Some(status),
        None => Some(CallStatus {
            code: 2,
            message: Some("the response carried no grpc-status: not a gRPC server's answer".into()),
        }),
    };
    Ok(Answered { body_len, failed })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_is_framed_with_its_length() {
        let frame = framed(b"abc").expect("short");
        assert_eq!(&frame[..], &[0, 0, 0, 0, 3, b'a', b'b', b'c']);
    }

    #[test]
    fn a_method_path_has_a_service_and_a_method() {
        assert!(is_method_path("/ledger.Ledger/Open"));
        for wrong in [
            "/ledger.Ledger",
            "ledger.Ledger/Open",
            "/a/b/c",
            "//Open",
            "/a/",
            "/a/b?x=1",
        ] {
            assert!(!is_method_path(wrong), "{wrong}");
        }
    }

    #[test]
    fn a_status_is_read_with_its_message_decoded() {
        let mut headers = HeaderMap::new();
        headers.insert(STATUS, "14".parse().expect("value"));
        headers.insert(MESSAGE, "store%20is%20down".parse().expect("value"));
        let status = status_in(&headers).expect("a status");
        assert_eq!(status.to_string(), "UNAVAILABLE (store is down)");
        assert_eq!(code_name(99), "an unknown gRPC status");
    }
}
