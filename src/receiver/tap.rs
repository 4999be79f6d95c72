//! The request heads exactly as they arrived on a connection.
//!
//! hyper hands the receiver a `HeaderMap`, which lowercases the names and groups the values
//! of a repeated header together (`A: 1`, `B: 2`, `A: 3` comes out as `a: 1`, `a: 3`,
//! `b: 2`). To record the headers as the caller sent them, in their order and with their
//! spelling, every connection's bytes pass through a [`Tap`] on their way to hyper: it parses
//! each request head with `httparse` (the parser hyper itself uses), skips the body by its
//! framing (`Content-Length` or chunked), and queues the heads in order. hyper serves the
//! requests of one HTTP/1 connection one after another, so the handler of a request takes the
//! head at the front of its connection's queue.
//!
//! The handler checks that the head it takes is the request it is handling (method, target
//! and number of headers); on any doubt (a head the tap could not parse, an upgraded
//! connection, framing it could not follow) the tap stops for that connection and the
//! headers are taken from hyper's map instead: nothing is ever attributed to the wrong call.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

use crate::store::Header;

/// hyper refuses a request with more headers than this (its default), so the tap never needs
/// more room.
const MAX_HEADERS: usize = 100;
/// A head that has not ended after this many bytes is not followed: hyper refuses a head
/// past about 400 KiB (its buffer's limit), so this only bounds what one connection can make
/// the tap hold and parse.
const MAX_HEAD: usize = 512 << 10;

/// One request head as it arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawHead {
    pub method: String,
    pub target: String,
    /// Every header line in order, the name spelt as sent.
    pub headers: Vec<Header>,
}

/// How the body after a head is framed, and how much of it is left to skip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a head.
    Head,
    /// This many bytes of a body with a declared length are still to come.
    Body(u64),
    /// A chunk-size line (the size read so far, and whether its extension has begun).
    ChunkSize { size: u64, digits: u32, ext: bool },
    /// This many bytes of chunk data are still to come.
    ChunkData(u64),
    /// The line end after a chunk's data.
    ChunkEnd,
    /// The trailer section after the last chunk (the length of the current line).
    Trailers(usize),
    /// The tap gave up on this connection.
    Off,
}

/// The parser of one connection's bytes.
#[derive(Debug)]
pub struct Tap {
    state: State,
    /// A head that has begun to arrive.
    partial: Vec<u8>,
    heads: VecDeque<RawHead>,
}

impl Default for Tap {
    fn default() -> Self {
        Tap {
            state: State::Head,
            partial: Vec::new(),
            heads: VecDeque::new(),
        }
    }
}

/// What reading a head found.
enum Parsed {
    Partial,
    Complete(usize, RawHead, State),
    Invalid,
}

fn parse_head(bytes: &[u8]) -> Parsed {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut slots);
    let n = match req.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        Err(_) => return Parsed::Invalid,
    };
    let (Some(method), Some(target)) = (req.method, req.path) else {
        return Parsed::Invalid;
    };
    let mut chunked = None;
    let mut length = None;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            // The last coding decides (hyper refuses a request whose last coding is not
            // chunked, so such a head ends the tap below).
            let last = h.value.rsplit(|b| *b == b',').next().unwrap_or_default();
            chunked = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("content-length") {
            let parsed = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
            match (parsed, length) {
                (None, _) => return Parsed::Invalid,
                (Some(a), Some(b)) if a != b => return Parsed::Invalid,
                (Some(a), _) => length = Some(a),
            }
        }
    }
    let next = match (chunked, length) {
        (Some(true), _) => State::ChunkSize {
            size: 0,
            digits: 0,
            ext: false,
        },
        (Some(false), _) => return Parsed::Invalid,
        (None, Some(n)) if n > 0 => State::Body(n),
        (None, _) => State::Head,
    };
    let head = RawHead {
        method: method.to_owned(),
        target: target.to_owned(),
        headers: req
            .headers
            .iter()
            .map(|h| Header::new(h.name, h.value))
            .collect(),
    };
    Parsed::Complete(n, head, next)
}

/// Pass over up to `left` bytes of body at the start of `input`; what is left to pass over.
fn skip(input: &mut &[u8], left: u64) -> u64 {
    let k = left.min(input.len() as u64);
    *input = &input[k as usize..];
    left - k
}

impl Tap {
    /// Follow the next bytes of the connection.
    pub fn feed(&mut self, input: &[u8]) {
        let mut carry: Vec<u8>;
        let mut input = input;
        loop {
            if input.is_empty() {
                return;
            }
            match self.state {
                State::Off => return,
                State::Head => {
                    let parsed = if self.partial.is_empty() {
                        parse_head(input)
                    } else {
                        self.partial.extend_from_slice(input);
                        parse_head(&self.partial)
                    };
                    match parsed {
                        Parsed::Partial => {
                            if self.partial.is_empty() {
                                self.partial.extend_from_slice(input);
                            }
                            if self.partial.len() > MAX_HEAD {
                                self.stop();
                            }
                            return;
                        }
                        Parsed::Invalid => {
                            self.stop();
                            return;
                        }
                        Parsed::Complete(n, head, next) => {
                            self.heads.push_back(head);
                            self.state = next;
                            if self.partial.is_empty() {
                                input = &input[n..];
                            } else {
                                carry = self.partial.split_off(n);
                                self.partial = Vec::new();
                                input = &carry;
                            }
                        }
                    }
                }
                State::Body(left) => {
                    let left = skip(&mut input, left);
                    self.state = if left == 0 {
                        State::Head
                    } else {
                        State::Body(left)
                    };
                }
                State::ChunkData(left) => {
                    let left = skip(&mut input, left);
                    self.state = if left == 0 {
                        State::ChunkEnd
                    } else {
                        State::ChunkData(left)
                    };
                }
                _ => {
                    let (&b, rest) = input.split_first().unwrap_or((&0, &[]));
                    input = rest;
                    self.chunk_byte(b);
                }
            }
        }
    }

    /// One byte of a chunk-size line, a chunk's line end, or the trailers.
    fn chunk_byte(&mut self, b: u8) {
        self.state = match self.state {
            State::ChunkSize { size, digits, ext } => match b {
                b'\n' if digits == 0 => State::Off,
                b'\n' if size == 0 => State::Trailers(0),
                b'\n' => State::ChunkData(size),
                b'\r' => self.state,
                _ if ext => self.state,
                b';' | b' ' | b'\t' => State::ChunkSize {
                    size,
                    digits,
                    ext: true,
                },
                _ => match (b as char).to_digit(16) {
                    Some(d) if digits < 16 => State::ChunkSize {
                        size: size * 16 + u64::from(d),
                        digits: digits + 1,
                        ext,
                    },
                    _ => State::Off,
                },
            },
            State::ChunkEnd => match b {
                b'\n' => State::ChunkSize {
                    size: 0,
                    digits: 0,
                    ext: false,
                },
                b'\r' => State::ChunkEnd,
                _ => State::Off,
            },
            State::Trailers(len) => match b {
                b'\n' if len == 0 => State::Head,
                b'\n' => State::Trailers(0),
                b'\r' => State::Trailers(len),
                _ => State::Trailers(len + 1),
            },
            other => other,
        };
        if self.state == State::Off {
            self.stop();
        }
    }

    fn stop(&mut self) {
        self.state = State::Off;
        self.partial = Vec::new();
        self.heads.clear();
    }

    /// The head of the request `method target` with `count` headers, if it is the one at the
    /// front of the queue. Anything else means the tap lost the thread: it stops.
    pub fn take(&mut self, method: &str, uri: &axum::http::Uri, count: usize) -> Option<RawHead> {
        let head = self.heads.pop_front();
        match head {
            Some(h) if h.method == method && *uri == *h.target && h.headers.len() == count => {
                Some(h)
            }
            _ => {
                self.stop();
                None
            }
        }
    }
}

/// A connection's tap, shared by the connection's reader and its requests' handlers.
pub type SharedTap = Arc<Mutex<Tap>>;

/// Lock a tap, whatever a panicking holder left in it (the tap stops then).
pub fn lock(tap: &SharedTap) -> std::sync::MutexGuard<'_, Tap> {
    tap.lock().unwrap_or_else(|poisoned| {
        let mut t = poisoned.into_inner();
        t.stop();
        t
    })
}

/// A connection whose incoming bytes go through a [`Tap`].
pub struct Tapped {
    io: TcpStream,
    tap: SharedTap,
}

impl AsyncRead for Tapped {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            let new = &buf.filled()[before..];
            if !new.is_empty() {
                lock(&self.tap).feed(new);
            }
        }
        polled
    }
}

impl AsyncWrite for Tapped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// What a handler knows of its connection: the peer, and the connection's tap.
#[derive(Clone, Debug)]
pub struct Conn {
    pub peer: SocketAddr,
    pub tap: SharedTap,
}

/// A TCP listener whose connections are [`Tapped`].
pub struct TappedListener(pub TcpListener);

impl axum::serve::Listener for TappedListener {
    type Io = Tapped;
    type Addr = Conn;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.0.accept().await {
                Ok((io, peer)) => {
                    let tap = SharedTap::default();
                    let conn = Conn {
                        peer,
                        tap: tap.clone(),
                    };
                    return (Tapped { io, tap }, conn);
                }
                Err(e) => accept_failed(e).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(Conn {
            peer: self.0.local_addr()?,
            tap: SharedTap::default(),
        })
    }
}

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, TappedListener>>
    for Conn
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, TappedListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// What axum does when an accept fails: a connection that went away before it was accepted
/// is skipped; anything else (out of file descriptors) is logged and retried after a pause,
/// so the loop does not spin.
async fn accept_failed(e: io::Error) {
    if matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    ) {
        return;
    }
    tracing::error!("the receiver could not accept a connection: {e}");
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(h: &RawHead) -> Vec<&str> {
        h.headers.iter().map(|h| h.name.as_str()).collect()
    }

    fn uri(s: &str) -> axum::http::Uri {
        s.parse().unwrap()
    }

    const TWO: &[u8] = b"POST /hook?x=1 HTTP/1.1\r\nHost: a\r\nX-A: 1\r\nx-b: 2\r\nX-A: 3\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: a\r\n\r\n";

    #[test]
    fn heads_keep_their_order_and_spelling_in_one_read_or_byte_by_byte() {
        for step in [TWO.len(), 1, 2, 7, 33] {
            let mut tap = Tap::default();
            for piece in TWO.chunks(step) {
                tap.feed(piece);
            }
            let first = tap.take("POST", &uri("/hook?x=1"), 5).unwrap();
            assert_eq!(
                names(&first),
                ["Host", "X-A", "x-b", "X-A", "Content-Length"]
            );
            assert_eq!(first.headers[3].value, "3");
            let second = tap.take("GET", &uri("/"), 1).unwrap();
            assert_eq!(names(&second), ["Host"]);
            assert_eq!(tap.state, State::Head, "step {step}");
        }
    }

    #[test]
    fn a_chunked_body_with_extensions_and_trailers_is_skipped_to_the_next_head() {
        let bytes = b"POST /c HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5;name=v\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nTrailer-One: x\r\n\r\nPUT /next HTTP/1.1\r\nX-Z: 9\r\n\r\n";
        for step in [bytes.len(), 1, 5] {
            let mut tap = Tap::default();
            for piece in bytes.chunks(step) {
                tap.feed(piece);
            }
            assert!(tap.take("POST", &uri("/c"), 1).is_some(), "step {step}");
            let next = tap.take("PUT", &uri("/next"), 1).unwrap();
            assert_eq!(next.headers, [Header::new("X-Z", b"9")]);
        }
    }

    #[test]
    fn a_head_it_cannot_follow_stops_the_tap_and_nothing_is_misattributed() {
        // Conflicting lengths: hyper refuses it; the tap gives up.
        let mut tap = Tap::default();
        tap.feed(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab");
        assert_eq!(tap.state, State::Off);
        tap.feed(b"GET / HTTP/1.1\r\n\r\n");
        assert!(tap.take("GET", &uri("/"), 0).is_none());

        // A head that is not the request being handled ends the tap for the connection.
        let mut tap = Tap::default();
        tap.feed(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\n\r\n");
        assert!(tap.take("GET", &uri("/b"), 0).is_none());
        assert!(tap.take("GET", &uri("/b"), 0).is_none());

        // Not HTTP at all.
        let mut tap = Tap::default();
        tap.feed(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03");
        assert_eq!(tap.state, State::Off);

        // A bad chunk size.
        let mut tap = Tap::default();
        tap.feed(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
        assert_eq!(tap.state, State::Off);
    }

    #[test]
    fn any_bytes_in_any_pieces_never_panic() {
        // A fixed pseudo-random stream (no dependency, same bytes each run), mixed with pieces
        // of real heads so that the chunked and length states are reached too.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let pieces: [&[u8]; 6] = [
            TWO,
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"ffffffffffffffff\r\n",
            b"0\r\n\r\n",
            b"\r\n",
            b"Content-Length: 18446744073709551615\r\n",
        ];
        for _ in 0..2000 {
            let mut tap = Tap::default();
            for _ in 0..(next() % 12) {
                let r = next();
                if r % 3 == 0 {
                    tap.feed(pieces[(r >> 8) as usize % pieces.len()]);
                } else {
                    let bytes: Vec<u8> = (0..(r >> 8) % 64).map(|_| next() as u8).collect();
                    tap.feed(&bytes);
                }
            }
            let _ = tap.take("POST", &uri("/"), 0);
        }
    }

    #[test]
    fn a_head_that_never_ends_is_not_held_past_the_cap() {
        let mut tap = Tap::default();
        tap.feed(b"GET / HTTP/1.1\r\nX-Long: ");
        let filler = vec![b'a'; 64 << 10];
        for _ in 0..20 {
            tap.feed(&filler);
        }
        assert_eq!(tap.state, State::Off);
        assert!(tap.partial.capacity() == 0);
    }
}
