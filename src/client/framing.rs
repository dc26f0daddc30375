//! Where an HTTP/1.1 response ends (RFC 9112 §6.3), read from bytes as they arrive: the
//! connections driver's response side. The head and chunk sizes are httparse's, the parser
//! hyper itself uses; the body is counted and dropped, never gathered.
//!
//! It exists because hyper's client connection, on a no-op endpoint at concurrency 1,
//! cost ≈15 % of the throughput wrk reaches (its request and response channels, header
//! maps and body channel, per request); the same tokio loop reading with httparse reached
//! 1.06 × wrk. A load needs three things from a response: its status, how many body bytes
//! came, and whether the connection may carry the next request.

/// The most a response head (status line and headers) may take: a bound, so a server
/// sending endless headers is an error rather than a growing buffer.
const MAX_HEAD: usize = 64 * 1024;

/// The most headers (or trailers) a response may have.
const MAX_HEADERS: usize = 64;

/// A whole response, as a load records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Response {
    pub(super) status: u16,
    /// Body bytes, after any chunked framing.
    pub(super) body: usize,
    /// Whether the connection may carry another request (no `Connection: close`, and
    /// HTTP/1.1 or an HTTP/1.0 `keep-alive`; never after a body delimited by the close).
    pub(super) keep_alive: bool,
}

/// Reads one response from the bytes it is fed.
#[derive(Debug)]
pub(super) struct Decoder {
    /// The request was a HEAD: no body follows, whatever the headers say.
    head_request: bool,
    state: State,
    status: u16,
    body: usize,
    keep_alive: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Head,
    /// Body bytes still to come, by `Content-Length`.
    Length(u64),
    ChunkSize,
    /// Bytes still to come of the current chunk.
    ChunkData(u64),
    /// The CRLF that ends a chunk's data.
    ChunkEnd,
    /// After the last chunk: trailers, then an empty line.
    Trailers,
    /// A body with no length: everything until the server closes.
    UntilClose,
    Done,
}

/// What one step of the decoder took of its input, and whether it goes on with the rest
/// (it stops at the end of the response, or where it needs more input).
struct Fed {
    took: usize,
    goes_on: bool,
}

impl Fed {
    /// Took `took` bytes and goes on.
    fn on(took: usize) -> Fed {
        Fed {
            took,
            goes_on: true,
        }
    }

    /// Took `took` bytes and stops.
    fn stop(took: usize) -> Fed {
        Fed {
            took,
            goes_on: false,
        }
    }
}

impl Decoder {
    /// A decoder for the response to a request; `head_request` for a HEAD.
    pub(super) fn new(head_request: bool) -> Decoder {
        Decoder {
            head_request,
            state: State::Head,
            status: 0,
            body: 0,
            keep_alive: true,
        }
    }

    /// The response, once it is complete.
    pub(super) fn response(&self) -> Option<Response> {
        (self.state == State::Done).then_some(Response {
            status: self.status,
            body: self.body,
            keep_alive: self.keep_alive,
        })
    }

    /// Consumes what it can of `input` and returns how many bytes it took; the rest (an
    /// incomplete head, chunk size or trailer) must be fed again with more after it. Stops
    /// at the end of the response.
    pub(super) fn feed(&mut self, input: &[u8]) -> Result<usize, String> {
        let mut at = 0;
        loop {
            let fed = self.step(&input[at..])?;
            at += fed.took;
            if !fed.goes_on {
                return Ok(at);
            }
        }
    }

    /// One step of the parser over `rest`: by the state it is in.
    fn step(&mut self, rest: &[u8]) -> Result<Fed, String> {
        match self.state {
            State::Done => Ok(Fed::stop(0)),
            State::Head => self.head_step(rest),
            // A body of known length, or one chunk's data: counted as it comes.
            State::Length(remaining) | State::ChunkData(remaining) => {
                let take = rest
                    .len()
                    .min(usize::try_from(remaining).unwrap_or(usize::MAX));
                self.body += take;
                let left = remaining - take as u64;
                self.state = match (self.state, left) {
                    (State::Length(_), 0) => State::Done,
                    (State::Length(_), _) => State::Length(left),
                    (_, 0) => State::ChunkEnd,
                    _ => State::ChunkData(left),
                };
                Ok(Fed {
                    took: take,
                    goes_on: left == 0,
                })
            }
            State::ChunkSize => match httparse::parse_chunk_size(rest) {
                Ok(httparse::Status::Complete((length, 0))) => {
                    self.state = State::Trailers;
                    Ok(Fed::on(length))
                }
                Ok(httparse::Status::Complete((length, size))) => {
                    self.state = State::ChunkData(size);
                    Ok(Fed::on(length))
                }
                Ok(httparse::Status::Partial) if rest.len() > MAX_HEAD => {
                    Err("a chunk size line without an end".to_string())
                }
                Ok(httparse::Status::Partial) => Ok(Fed::stop(0)),
                Err(_) => Err("an invalid chunk size".to_string()),
            },
            State::ChunkEnd => match rest {
                [b'\r', b'\n', ..] => {
                    self.state = State::ChunkSize;
                    Ok(Fed::on(2))
                }
                [] | [b'\r'] => Ok(Fed::stop(0)),
                _ => Err("a chunk not ended by CRLF".to_string()),
            },
            State::Trailers => self.trailers_step(rest),
            State::UntilClose => {
                self.body += rest.len();
                Ok(Fed::stop(rest.len()))
            }
        }
    }

    /// The response head, where `rest` holds all of it.
    fn head_step(&mut self, rest: &[u8]) -> Result<Fed, String> {
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(rest) {
            Ok(httparse::Status::Partial) if rest.len() > MAX_HEAD => {
                Err(format!("the response head exceeds {} KiB", MAX_HEAD / 1024))
            }
            Ok(httparse::Status::Partial) => Ok(Fed::stop(0)),
            Ok(httparse::Status::Complete(length)) => {
                self.head(&response)?;
                Ok(Fed::on(length))
            }
            Err(e) => Err(format!("an invalid response head: {e}")),
        }
    }

    /// The trailers after the last chunk, where `rest` holds all of them.
    fn trailers_step(&mut self, rest: &[u8]) -> Result<Fed, String> {
        let mut trailers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        match httparse::parse_headers(rest, &mut trailers) {
            Ok(httparse::Status::Complete((length, _))) => {
                self.state = State::Done;
                Ok(Fed::on(length))
            }
            Ok(httparse::Status::Partial) if rest.len() > MAX_HEAD => Err(format!(
                "the response trailers exceed {} KiB",
                MAX_HEAD / 1024
            )),
            Ok(httparse::Status::Partial) => Ok(Fed::stop(0)),
            Err(e) => Err(format!("invalid response trailers: {e}")),
        }
    }

    /// The server closed the connection: the end of a body delimited by the close, an
    /// error anywhere else.
    pub(super) fn closed(&mut self) -> Result<(), String> {
        match self.state {
            State::UntilClose => {
                self.state = State::Done;
                Ok(())
            }
            State::Done => Ok(()),
            State::Head if self.status == 0 => {
                Err("the server closed the connection before answering".to_string())
            }
            _ => Err("the server closed the connection in the middle of the response".to_string()),
        }
    }

    /// Takes a parsed head: its status, whether the connection stays open, and how its
    /// body is framed (RFC 9112 §6.3, in that order).
    fn head(&mut self, response: &httparse::Response<'_, '_>) -> Result<(), String> {
        let status = response.code.unwrap_or_default();
        // An interim response (100 Continue, 103 Early Hints) is followed by the real one.
        if (100..200).contains(&status) && status != 101 {
            return Ok(());
        }
        self.status = status;
        let header = |name: &'static str| values(response.headers, name);
        let connection = |token: &str| {
            header("connection").any(|value| {
                value
                    .split(',')
                    .any(|t| t.trim().eq_ignore_ascii_case(token))
            })
        };
        self.keep_alive = if response.version == Some(0) {
            connection("keep-alive")
        } else {
            !connection("close")
        };
        let chunked = header("transfer-encoding").last().is_some_and(|value| {
            value
                .rsplit(',')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"))
        });
        let length = header("content-length").next();
        self.state = if self.head_request || status == 101 || status == 204 || status == 304 {
            State::Done
        } else if chunked {
            State::ChunkSize
        } else if header("transfer-encoding").next().is_some() {
            self.keep_alive = false;
            State::UntilClose
        } else if let Some(length) = length {
            match length.trim().parse::<u64>() {
                Ok(0) => State::Done,
                Ok(n) => State::Length(n),
                Err(_) => return Err(format!("an invalid Content-Length: {length:?}")),
            }
        } else {
            self.keep_alive = false;
            State::UntilClose
        };
        Ok(())
    }
}

/// The values of the headers named `name` (any case), in order.
fn values<'h>(
    headers: &'h [httparse::Header<'h>],
    name: &'static str,
) -> impl Iterator<Item = std::borrow::Cow<'h, str>> {
    headers
        .iter()
        .filter(move |h| h.name.eq_ignore_ascii_case(name))
        .map(|h| String::from_utf8_lossy(h.value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Feeds `bytes` in the pieces `cuts` makes, as reads from a socket would deliver them,
    /// keeping what the decoder left for the next piece, then the close when `close`.
    fn decode(bytes: &[u8], cuts: &[usize], head: bool, close: bool) -> Result<Response, String> {
        let mut decoder = Decoder::new(head);
        let mut pending = Vec::new();
        let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
        cuts.push(bytes.len());
        cuts.sort_unstable();
        let mut from = 0;
        for cut in cuts {
            pending.extend_from_slice(&bytes[from..cut]);
            from = cut;
            let taken = decoder.feed(&pending)?;
            pending.drain(..taken);
            if let Some(response) = decoder.response() {
                return Ok(response);
            }
        }
        if close {
            decoder.closed()?;
        }
        decoder.response().ok_or_else(|| "incomplete".to_string())
    }

    const CHUNKED: &[u8] = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n\
        5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nx-trailer: 1\r\n\r\n";

    #[test]
    fn each_framing_ends_where_the_response_does() {
        let whole = |bytes: &[u8]| decode(bytes, &[], false, false);
        let length = whole(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
        assert_eq!(
            length,
            Ok(Response {
                status: 200,
                body: 2,
                keep_alive: true
            })
        );
        assert_eq!(whole(CHUNKED).map(|r| r.body), Ok(12));
        let interim = whole(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n",
        );
        assert_eq!(interim.map(|r| r.status), Ok(201));
        let no_content = whole(b"HTTP/1.1 204 No Content\r\ncontent-length: 9\r\n\r\n");
        assert_eq!(no_content.map(|r| r.body), Ok(0));
        let head = decode(
            b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n",
            &[],
            true,
            false,
        );
        assert_eq!(head.map(|r| r.body), Ok(0));
        let close = whole(
            b"HTTP/1.1 500 Oops\r\nConnection: keep-alive, Close\r\ncontent-length: 1\r\n\r\nx",
        );
        assert_eq!(close.map(|r| (r.status, r.keep_alive)), Ok((500, false)));
        let old = whole(b"HTTP/1.0 200 OK\r\ncontent-length: 1\r\n\r\nx");
        assert_eq!(old.map(|r| r.keep_alive), Ok(false));
        let until_close = decode(b"HTTP/1.0 200 OK\r\n\r\nsome bytes", &[], false, true);
        assert_eq!(
            until_close,
            Ok(Response {
                status: 200,
                body: 10,
                keep_alive: false
            })
        );
    }

    #[test]
    fn a_broken_response_is_an_error_naming_what_is_wrong() {
        let whole = |bytes: &[u8]| decode(bytes, &[], false, true);
        assert!(
            whole(b"NOT HTTP\r\n\r\n")
                .unwrap_err()
                .contains("invalid response head")
        );
        assert!(
            whole(b"HTTP/1.1 200 OK\r\ncontent-length: two\r\n\r\n")
                .unwrap_err()
                .contains("Content-Length: \"two\"")
        );
        assert!(
            whole(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n")
                .unwrap_err()
                .contains("chunk size")
        );
        assert!(
            whole(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nab")
                .unwrap_err()
                .contains("in the middle of the response")
        );
        assert!(whole(b"").unwrap_err().contains("before answering"));
        let endless = [b"HTTP/1.1 200 OK\r\n".as_slice(), &vec![b'x'; MAX_HEAD + 1]].concat();
        assert!(whole(&endless).unwrap_err().contains("exceeds 64 KiB"));
    }

    proptest! {
        /// However the bytes are cut into reads, the response decodes the same.
        #[test]
        fn any_cut_of_the_bytes_decodes_the_same(cuts in prop::collection::vec(0usize..200, 0..12)) {
            prop_assert_eq!(decode(CHUNKED, &cuts, false, false), decode(CHUNKED, &[], false, false));
            let length = b"HTTP/1.1 200 OK\r\nx-a: b\r\ncontent-length: 11\r\n\r\nhello world";
            prop_assert_eq!(decode(length, &cuts, false, false).map(|r| r.body), Ok(11));
        }
    }
}
