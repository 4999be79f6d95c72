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
//!
//! A request hyper refuses before any handler runs (a control character in a header, two
//! different `Content-Length`s, a head past hyper's limit, a TLS handshake sent to this plain
//! HTTP port) reaches no handler, so the tap keeps what it read of it and why it could not be
//! read ([`Refused`]). If no handler takes a head after it (hyper refused it too, and answered
//! 400 or 431), it is handed to the receiver when the connection ends, to be recorded.

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
/// hyper reads a request head into a buffer of at most this many bytes (8 KiB and 100 × 4
/// KiB); a head that has not ended by then is refused (431), though a read may take it a little
/// past this before hyper looks.
const HYPER_HEAD: usize = 8192 + 4096 * 100;
/// A head that has not ended after this many bytes is not followed (hyper has refused it by
/// then): the most one connection can make the tap hold and parse.
const MAX_HEAD: usize = 1 << 20;
/// hyper refuses a target longer than this (414).
const HYPER_TARGET: usize = u16::MAX as usize - 1;
/// How much of a refused request is kept for its record.
pub const KEPT: usize = 64 << 10;

/// A request the HTTP layer refused before any handler saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// When the bytes that could not be read arrived.
    pub at: chrono::DateTime<chrono::Utc>,
    pub peer: SocketAddr,
    /// What arrived of it, head included, up to 64 KiB.
    pub bytes: Vec<u8>,
    /// Why it could not be read as HTTP, as a clause ("a header's name has …").
    pub why: String,
    /// The status the HTTP layer answered it with, if it answered before the connection ended.
    pub answered: Option<u16>,
    /// The receiver closed the connection, its head not whole in time: the caller did not
    /// hang up.
    pub timed_out: bool,
}

/// What the tap knows of a refusal while the connection lasts.
#[derive(Debug)]
struct Refusal {
    at: chrono::DateTime<chrono::Utc>,
    bytes: Vec<u8>,
    why: String,
}

/// One request head as it arrived.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawHead {
    pub method: String,
    pub target: String,
    /// Every header line in order, the name spelt as sent.
    pub headers: Vec<Header>,
    /// How many bytes the head took.
    pub size: usize,
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
    /// The tap gave up on this connection (or the connection left HTTP: a tunnel, an upgrade).
    Off,
}

/// The parser of one connection's bytes.
#[derive(Debug)]
pub struct Tap {
    state: State,
    /// A head that has begun to arrive.
    partial: Vec<u8>,
    heads: VecDeque<RawHead>,
    /// A head that could not be read, unless a handler took a request after it.
    refusal: Option<Refusal>,
    /// The start of the last answer head the server wrote since a handler last took a request,
    /// while there is something it may be hyper's answer to (a refusal, a head not yet taken).
    reply: Vec<u8>,
    /// Nothing more is written on the connection: its caller stopped sending in the middle of
    /// a body, and the call is recorded as never answered, which it then is (a caller that only
    /// half-closed its side had read the answer the record said it never got).
    withheld: bool,
    /// The last write left bytes unwritten (the caller's socket was full): an earlier answer
    /// is still going out, so nothing is withheld (it would be cut short).
    backlog: bool,
    /// The HTTP layer closed the connection because a head did not come whole within this
    /// long: what arrived of it is recorded.
    head_timed_out: Option<std::time::Duration>,
}

impl Default for Tap {
    fn default() -> Self {
        Tap {
            state: State::Head,
            partial: Vec::new(),
            heads: VecDeque::new(),
            refusal: None,
            reply: Vec::new(),
            withheld: false,
            backlog: false,
            head_timed_out: None,
        }
    }
}

/// What reading a head found.
enum Parsed {
    Partial,
    Complete(usize, RawHead, State),
    /// Not a head HTTP/1 allows: why, as a clause.
    Invalid(String),
}

/// Why a request head is not HTTP, in words; `bytes` are what arrived.
fn invalid_why(e: httparse::Error, bytes: &[u8]) -> String {
    if let [0x16, 0x03, ..] = bytes {
        return "it is a TLS handshake: the caller used https:// for this plain http:// receiver (put a tunnel such as cloudflared or ngrok in front of it for an https address)".into();
    }
    match e {
        httparse::Error::HeaderName => "a header's name has a character HTTP does not allow in one",
        httparse::Error::HeaderValue => {
            "a header's value has a control character in it (HTTP allows none but the tab)"
        }
        httparse::Error::NewLine => "a line of its head does not end as HTTP lines end (CR LF)",
        httparse::Error::Token | httparse::Error::Version => return request_line_why(bytes),
        httparse::Error::TooManyHeaders => {
            "it has more than 100 headers, the most the HTTP layer reads"
        }
        httparse::Error::Status => "its head could not be read as HTTP",
    }
    .into()
}

/// Why a request line is not HTTP's, naming the part at fault where one is: a path with a
/// control character had been said to be "not a method, a target and an HTTP version".
fn request_line_why(bytes: &[u8]) -> String {
    const SHAPE: &str =
        "its request line is not a method, a target and an HTTP version, as in POST /hook HTTP/1.1";
    let line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let (Some(first), Some(last)) = (
        line.iter().position(|b| *b == b' '),
        line.iter().rposition(|b| *b == b' '),
    ) else {
        return SHAPE.into();
    };
    if first == last {
        return SHAPE.into();
    }
    let (method, target, version) = (&line[..first], &line[first + 1..last], &line[last + 1..]);
    // What HTTP allows in a method (a token) and in a target (visible ASCII; httparse takes
    // the bytes of UTF-8 too).
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if let Some(b) = method.iter().copied().find(|b| !token(*b)) {
        return format!("its method has a character HTTP does not allow in one (byte 0x{b:02x})");
    }
    if let Some(b) = target.iter().copied().find(|b| *b < 0x21 || *b == 0x7f) {
        return format!(
            "its target has a character HTTP does not allow in one (byte 0x{b:02x}: a space, a control character or DEL), which a path must percent-encode"
        );
    }
    if let Some(b) = target.iter().copied().find(|b| *b >= 0x80) {
        return format!(
            "its target has a byte past ASCII written raw (0x{b:02x}), which a path must percent-encode"
        );
    }
    if !(version.len() == 8 && version.starts_with(b"HTTP/1.")) {
        return format!(
            "its HTTP version is \"{}\", not HTTP/1.1 (or 1.0), which this receiver and the service speak",
            crate::text::escape_control(&crate::text::cut_chars(
                &String::from_utf8_lossy(version),
                200
            ))
        );
    }
    SHAPE.into()
}

fn parse_head(bytes: &[u8]) -> Parsed {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut slots);
    let n = match req.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Parsed::Partial,
        // The receiver serves HTTP/1 only, as the service calls: hyper closes the connection.
        Err(_) if bytes.starts_with(b"PRI * HTTP/2.0") => {
            return Parsed::Invalid(
                "it opens with HTTP/2's preface (an HTTP/2 client with prior knowledge): this receiver speaks HTTP/1.1, as the service does".into(),
            );
        }
        Err(e) => return Parsed::Invalid(invalid_why(e, bytes)),
    };
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Parsed::Invalid("its head could not be read as HTTP".into());
    };
    if target.len() > HYPER_TARGET {
        return Parsed::Invalid(format!(
            "its target is {} long, more than the HTTP layer takes (64 KiB)",
            crate::text::human_size(target.len() as u64)
        ));
    }
    let mut chunked = None;
    let mut length = None;
    for h in req.headers.iter() {
        if h.name.eq_ignore_ascii_case("transfer-encoding") {
            if version == 0 {
                return Parsed::Invalid(
                    "it is HTTP/1.0 and has a Transfer-Encoding, which HTTP/1.0 does not have"
                        .into(),
                );
            }
            // The last coding decides (hyper refuses a request whose last coding is not
            // chunked, so such a head ends the tap below).
            let last = h.value.rsplit(|b| *b == b',').next().unwrap_or_default();
            chunked = Some(last.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        } else if h.name.eq_ignore_ascii_case("content-length") {
            let parsed = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok());
            match (parsed, length) {
                (None, _) => {
                    return Parsed::Invalid(
                        "its Content-Length is not a whole number of bytes".into(),
                    );
                }
                (Some(a), Some(b)) if a != b => {
                    return Parsed::Invalid(format!(
                        "it declares two different Content-Lengths ({b} and {a}), so where its body ends cannot be known"
                    ));
                }
                (Some(a), _) => length = Some(a),
            }
        }
    }
    // After a tunnel's opening (CONNECT) or a protocol switch (Upgrade), what follows on the
    // connection is not HTTP.
    let leaves_http = method.eq_ignore_ascii_case("CONNECT")
        || req
            .headers
            .iter()
            .any(|h| h.name.eq_ignore_ascii_case("upgrade"));
    let next = match (chunked, length) {
        _ if leaves_http => State::Off,
        (Some(true), _) => State::ChunkSize {
            size: 0,
            digits: 0,
            ext: false,
        },
        (Some(false), _) => {
            return Parsed::Invalid(
                "its Transfer-Encoding does not end with chunked, so where its body ends cannot be known"
                    .into(),
            );
        }
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
        size: n,
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
                            if self.partial.len() >= MAX_HEAD {
                                let bytes = std::mem::take(&mut self.partial);
                                self.refuse(&bytes, TOO_LARGE.into());
                            }
                            return;
                        }
                        Parsed::Invalid(why) => {
                            let partial = std::mem::take(&mut self.partial);
                            let bytes = if partial.is_empty() { input } else { &partial };
                            self.refuse(bytes, why);
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
        self.refusal = None;
    }

    /// A head that is not HTTP: kept (its first 64 KiB) with why, and the tap stops. The heads
    /// before it are still the requests hyper hands over first.
    fn refuse(&mut self, bytes: &[u8], why: String) {
        self.state = State::Off;
        self.partial = Vec::new();
        self.refusal = Some(Refusal {
            at: chrono::Utc::now(),
            bytes: bytes[..bytes.len().min(KEPT)].to_vec(),
            why,
        });
    }

    /// The head of the request `method target` with `count` headers, if it is the one at the
    /// front of the queue. Anything else means the tap lost the thread: it stops.
    pub fn take(&mut self, method: &str, uri: &axum::http::Uri, count: usize) -> Option<RawHead> {
        self.reply.clear();
        let head = self.heads.pop_front();
        match head {
            Some(h) if h.method == method && *uri == *h.target && h.headers.len() == count => {
                Some(h)
            }
            _ => {
                // A request the tap did not follow reached a handler: whatever it could not
                // read, hyper could, so it is not a refusal.
                self.stop();
                None
            }
        }
    }

    /// Write nothing more on this connection: the answer to its call is withheld, and the
    /// connection closes instead (see [`Tap::withheld`]); unless an earlier answer on it is
    /// still going out (pipelined calls to a slow reader), which is not cut short: false then.
    pub fn withhold(&mut self) -> bool {
        if !self.backlog {
            self.withheld = true;
        }
        self.withheld
    }

    /// Whether the answer may be written: `Err` once it is withheld.
    fn may_write(&self) -> io::Result<()> {
        if self.withheld {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the caller stopped sending in the middle of its body: no answer is written",
            ));
        }
        Ok(())
    }

    /// Bytes the server wrote on the connection: the start of an answer's head, while it may
    /// be hyper's answer to a request no handler took.
    fn wrote(&mut self, bytes: &[u8]) {
        let pending = self.refusal.is_some() || !self.heads.is_empty() || !self.partial.is_empty();
        if pending && bytes.starts_with(b"HTTP/1.") {
            self.reply.clear();
            self.reply.extend_from_slice(&bytes[..bytes.len().min(64)]);
        }
    }

    /// The status of the last answer written, and whether it is one of hyper's own refusals
    /// (which close the connection: `connection: close` right under the status line).
    fn replied(&self) -> (Option<u16>, bool) {
        let head = String::from_utf8_lossy(&self.reply);
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|code| code.parse::<u16>().ok());
        let refusal = status.is_some_and(|s| s >= 400)
            && head
                .split("\r\n")
                .nth(1)
                .is_some_and(|l| l.eq_ignore_ascii_case("connection: close"));
        (status, refusal)
    }

    /// Whether a refused request's bytes may still be unread on the socket (hyper stops
    /// reading at the first byte it cannot take).
    fn wants_rest(&self) -> bool {
        self.refusal.as_ref().is_some_and(|r| r.bytes.len() < KEPT)
            || (self.state == State::Head
                && !self.partial.is_empty()
                && self.partial.len() < HYPER_HEAD)
    }

    /// Bytes left unread on the socket when the connection ended, for a refused request.
    fn rest(&mut self, bytes: &[u8]) {
        if let Some(r) = self.refusal.as_mut() {
            let room = KEPT.saturating_sub(r.bytes.len());
            r.bytes.extend_from_slice(&bytes[..bytes.len().min(room)]);
        } else if self.state == State::Head && !self.partial.is_empty() {
            let room = HYPER_HEAD.saturating_sub(self.partial.len());
            self.partial
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }

    /// The HTTP layer closed the connection because a head had not come whole after `waited`.
    pub fn head_timed_out(&mut self, waited: std::time::Duration) {
        self.head_timed_out = Some(waited);
    }

    /// The request the HTTP layer refused on this connection, if one was and no handler took a
    /// request after it; for the connection's end. It is a head the tap could not read, one it
    /// read but that reached no handler while hyper answered with a refusal of its own (a
    /// target `http` does not take as a URI, say), or a head past hyper's limit.
    fn refused(&mut self, peer: SocketAddr) -> Option<Refused> {
        let (answered, hypers) = self.replied();
        let mut timed_out = false;
        let (at, bytes, why) = if let Some(r) = self.refusal.take() {
            (r.at, r.bytes, r.why)
        } else if let Some(head) = self.heads.front()
            && (hypers || head.size >= HYPER_HEAD)
        {
            let why = if head.size >= HYPER_HEAD || answered == Some(431) {
                TOO_LARGE.to_owned()
            } else if let Err(e) = axum::http::Uri::try_from(head.target.as_str()) {
                format!("its target is not a URI the HTTP layer takes ({e})")
            } else {
                format!(
                    "the HTTP layer refused it ({})",
                    answered.map_or("no answer".into(), |s| s.to_string())
                )
            };
            let mut bytes = head.bytes();
            bytes.truncate(KEPT);
            (chrono::Utc::now(), bytes, why)
        } else if self.state == State::Head
            && !self.partial.is_empty()
            && (answered == Some(431) || self.partial.len() >= HYPER_HEAD)
        {
            let mut bytes = std::mem::take(&mut self.partial);
            bytes.truncate(KEPT);
            (chrono::Utc::now(), bytes, TOO_LARGE.to_owned())
        } else if let Some(waited) = self.head_timed_out
            && self.state == State::Head
            && !self.partial.is_empty()
        {
            let mut bytes = std::mem::take(&mut self.partial);
            bytes.truncate(KEPT);
            timed_out = true;
            let why = format!(
                "its head did not arrive whole within {} (the caller sent part of it and then nothing), so the connection was closed without an answer",
                crate::text::human_duration(waited)
            );
            (chrono::Utc::now(), bytes, why)
        } else {
            return None;
        };
        Some(Refused {
            at,
            peer,
            bytes,
            why,
            answered,
            timed_out,
        })
    }
}

/// Why a head too long for hyper was refused.
const TOO_LARGE: &str = "its head is larger than the HTTP layer reads (about 400 KiB)";

impl RawHead {
    /// The head as it arrived, near enough: its request line and header lines.
    fn bytes(&self) -> Vec<u8> {
        let mut b = format!("{} {} HTTP/1.1\r\n", self.method, self.target).into_bytes();
        for h in &self.headers {
            b.extend_from_slice(h.name.as_bytes());
            b.extend_from_slice(b": ");
            b.extend_from_slice(&h.bytes());
            b.extend_from_slice(b"\r\n");
        }
        b.extend_from_slice(b"\r\n");
        b
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

/// Where the requests hyper refused are sent, to be recorded.
pub type RefusedSender = tokio::sync::mpsc::UnboundedSender<Refused>;

/// A connection whose incoming bytes go through a [`Tap`].
pub struct Tapped {
    io: TcpStream,
    tap: SharedTap,
    /// [`Tap::backlog`] as last told to the tap (told only when it changes, so a write that
    /// goes out whole takes no second lock).
    backlog: bool,
    peer: SocketAddr,
    refused: Option<RefusedSender>,
}

impl Drop for Tapped {
    /// The connection has ended: a request hyper refused on it is handed over.
    fn drop(&mut self) {
        let Some(tx) = &self.refused else {
            return;
        };
        let mut tap = lock(&self.tap);
        // hyper stops reading at the first byte it cannot take (its first read may be as short
        // as HTTP/2's 24-byte preface): the rest of what the caller sent is still unread on the
        // socket, kept too, up to the cap.
        let mut buf = [0u8; 8192];
        while tap.wants_rest() {
            match self.io.try_read(&mut buf) {
                Ok(n) if n > 0 => tap.rest(&buf[..n]),
                _ => break,
            }
        }
        if let Some(r) = tap.refused(self.peer) {
            let _ = tx.send(r);
        }
    }
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

impl Tapped {
    /// Whether a write of `len` bytes left some unwritten, told to the tap when that changes.
    fn note_backlog(&mut self, written: &Poll<io::Result<usize>>, len: usize) {
        let backlog = match written {
            Poll::Pending => true,
            Poll::Ready(Ok(n)) => *n < len,
            Poll::Ready(Err(_)) => self.backlog,
        };
        if backlog != self.backlog {
            self.backlog = backlog;
            lock(&self.tap).backlog = backlog;
        }
    }
}

impl AsyncWrite for Tapped {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        {
            let mut tap = lock(&self.tap);
            if let Err(e) = tap.may_write() {
                return Poll::Ready(Err(e));
            }
            tap.wrote(buf);
        }
        let written = Pin::new(&mut self.io).poll_write(cx, buf);
        self.note_backlog(&written, buf.len());
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        {
            let mut tap = lock(&self.tap);
            if let Err(e) = tap.may_write() {
                return Poll::Ready(Err(e));
            }
            if let Some(first) = bufs.iter().find(|b| !b.is_empty()) {
                tap.wrote(first);
            }
        }
        let written = Pin::new(&mut self.io).poll_write_vectored(cx, bufs);
        self.note_backlog(&written, bufs.iter().map(|b| b.len()).sum());
        written
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

/// A TCP listener whose connections are [`Tapped`], and where the requests hyper refuses on
/// them go.
pub struct TappedListener {
    pub listener: TcpListener,
    pub refused: Option<RefusedSender>,
}

impl axum::serve::Listener for TappedListener {
    type Io = Tapped;
    type Addr = Conn;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            match self.listener.accept().await {
                Ok((io, peer)) => {
                    let tap = SharedTap::default();
                    let conn = Conn {
                        peer,
                        tap: tap.clone(),
                    };
                    let refused = self.refused.clone();
                    return (
                        Tapped {
                            io,
                            tap,
                            backlog: false,
                            peer,
                            refused,
                        },
                        conn,
                    );
                }
                Err(e) => accept_failed(e).await,
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(Conn {
            peer: self.listener.local_addr()?,
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

    /// A call whose caller stopped mid-body has no answer written, unless an earlier answer
    /// on the connection is still going out: that one is not cut short for it.
    #[test]
    fn an_answer_is_withheld_only_once_the_earlier_ones_are_out() {
        let mut tap = Tap::default();
        assert!(tap.may_write().is_ok());
        tap.backlog = true;
        assert!(!tap.withhold(), "an answer still going out");
        assert!(tap.may_write().is_ok());
        tap.backlog = false;
        assert!(tap.withhold());
        assert!(tap.may_write().is_err());
    }

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

    fn peer() -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], 5000))
    }

    /// What a connection that ends after `bytes` hands over, hyper having answered `reply`.
    fn refused_after(bytes: &[u8], reply: &[u8]) -> Option<Refused> {
        let mut tap = Tap::default();
        tap.feed(bytes);
        tap.wrote(reply);
        tap.refused(peer())
    }

    #[test]
    fn a_head_http_refuses_is_kept_with_why_and_the_answer_hyper_gave() {
        let bad = 400;
        for (bytes, why) in [
            (
                &b"POST /h HTTP/1.1\r\nHost: a\r\nX-Bad\x1b: 1\r\n\r\n"[..],
                "a header's name has a character HTTP does not allow",
            ),
            (
                b"POST /h HTTP/1.1\r\nHost: a\r\nX-A: a\x1bb\r\n\r\n",
                "a header's value has a control character",
            ),
            (
                b"POST /h HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
                "two different Content-Lengths (1 and 2)",
            ),
            (
                b"POST /h HTTP/1.1\r\nContent-Length: ten\r\n\r\n",
                "Content-Length is not a whole number",
            ),
            (
                b"POST /h HTTP/1.1\r\nTransfer-Encoding: chunked, gzip\r\n\r\n",
                "Transfer-Encoding does not end with chunked",
            ),
            (
                b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
                "a TLS handshake: the caller used https://",
            ),
            (
                b"POST /h\r\n\r\n",
                "not a method, a target and an HTTP version",
            ),
            (
                b"POST /h\x7fx HTTP/1.1\r\n\r\n",
                "its target has a character HTTP does not allow in one (byte 0x7f",
            ),
            (
                b"POST /a b HTTP/1.1\r\n\r\n",
                "its target has a character HTTP does not allow in one (byte 0x20",
            ),
            (
                b"PO(ST /h HTTP/1.1\r\n\r\n",
                "its method has a character HTTP does not allow in one (byte 0x28)",
            ),
            (
                b"POST /h HTTP/9.9\r\n\r\n",
                "its HTTP version is \"HTTP/9.9\", not HTTP/1.1",
            ),
            (
                b"POST /a\xffb HTTP/1.1\r\n\r\n",
                "its target has a byte past ASCII written raw (0xff)",
            ),
            (
                b"POST /h HTTP/1.\r\n\r\n",
                "its HTTP version is \"HTTP/1.\", not HTTP/1.1",
            ),
        ] {
            let r = refused_after(bytes, b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n")
                .unwrap_or_else(|| panic!("{:?} not kept", String::from_utf8_lossy(bytes)));
            assert!(r.why.contains(why), "{} for {bytes:?}", r.why);
            assert_eq!(r.bytes, bytes);
            assert_eq!(r.answered, Some(bad));
            assert_eq!(r.peer, peer());
        }
        // The connection ended before hyper answered.
        let r = refused_after(b"GET / HTTP/1.1\r\nX\x01: y\r\n\r\n", b"").unwrap();
        assert_eq!(r.answered, None);
        // More than 100 headers (hyper answers 431).
        let mut many = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..101 {
            many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
        }
        many.extend_from_slice(b"\r\n");
        let r = refused_after(&many, b"HTTP/1.1 431 Request Header Fields Too Large\r\n").unwrap();
        assert!(r.why.contains("more than 100 headers"), "{}", r.why);
        assert_eq!(r.answered, Some(431));
    }

    #[test]
    fn heads_hyper_refuses_for_its_own_rules_are_kept_too() {
        // A target past hyper's 64 KiB (414), and HTTP/1.0 with a Transfer-Encoding (400).
        let mut long = b"GET /".to_vec();
        long.extend(std::iter::repeat_n(b'a', 70_000));
        long.extend_from_slice(b" HTTP/1.1\r\nHost: a\r\n\r\n");
        let r =
            refused_after(&long, b"HTTP/1.1 414 URI Too Long\r\nconnection: close\r\n").unwrap();
        assert!(r.why.contains("its target is 68.4 KiB long"), "{}", r.why);
        assert_eq!(r.bytes.len(), KEPT);
        assert_eq!(r.answered, Some(414));
        let old = b"POST /x HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
        let r = refused_after(old, b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\n").unwrap();
        assert!(
            r.why.contains("HTTP/1.0 and has a Transfer-Encoding"),
            "{}",
            r.why
        );

        // A head the tap read but no handler took, hyper having answered with a refusal of its
        // own (its `connection: close`): kept as it was read.
        let head = b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n";
        let r = refused_after(
            head,
            b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n",
        )
        .expect("refused by hyper");
        assert_eq!(r.bytes, head);
        assert_eq!(r.why, "the HTTP layer refused it (400)");
        // Not when the answer is one a handler chose for an earlier request, nor with none.
        assert!(refused_after(head, b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n").is_none());
        assert!(refused_after(head, b"").is_none());
        // A whole head past hyper's limit that got no answer (its caller half-closed).
        let mut big = b"POST /big HTTP/1.1\r\n".to_vec();
        for i in 0..58 {
            big.extend_from_slice(format!("X-{i}: {}\r\n", "a".repeat(8000)).as_bytes());
        }
        big.extend_from_slice(b"\r\n");
        let r = refused_after(&big, b"").expect("too large");
        assert_eq!(r.why, TOO_LARGE);
        assert_eq!(r.answered, None);
        assert!(r.bytes.starts_with(b"POST /big HTTP/1.1\r\nX-0: aaa"));
        // A head cut short by hyper's 431, before it ended.
        let r = refused_after(
            &big[..200_000],
            b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n",
        )
        .expect("too large");
        assert_eq!((r.why.as_str(), r.answered), (TOO_LARGE, Some(431)));
        // A head cut short by its caller, with no answer: nothing to record.
        assert!(refused_after(&big[..200_000], b"").is_none());
    }

    #[test]
    fn a_head_past_what_hyper_reads_is_refused_and_its_start_kept() {
        let mut tap = Tap::default();
        tap.feed(b"GET / HTTP/1.1\r\nX-Long: ");
        let filler = vec![b'a'; 64 << 10];
        for _ in 0..7 {
            tap.feed(&filler);
        }
        let r = tap.refused(peer()).expect("refused");
        assert!(
            r.why.contains("larger than the HTTP layer reads"),
            "{}",
            r.why
        );
        assert_eq!(r.bytes.len(), KEPT);
        assert!(r.bytes.starts_with(b"GET / HTTP/1.1\r\nX-Long: aaa"));
    }

    #[test]
    fn what_hyper_serves_after_all_is_not_a_refusal_and_http2_is() {
        // HTTP/2's preface: the receiver speaks HTTP/1.1 only, and hyper closes the connection.
        let r = refused_after(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00", b"").unwrap();
        assert!(r.why.contains("HTTP/2's preface"), "{}", r.why);
        assert_eq!(r.answered, None);
        // A tunnel (CONNECT) or a protocol switch (Upgrade): what follows is not HTTP.
        for opening in [
            &b"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"[..],
            b"GET /ws HTTP/1.1\r\nHost: a\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        ] {
            let mut tap = Tap::default();
            tap.feed(opening);
            tap.feed(b"\x16\x03\x01 tunnelled bytes");
            assert_eq!(tap.heads.len(), 1);
            assert!(tap.refused(peer()).is_none());
        }
        // A head the tap could not read but hyper handed to a handler all the same.
        let mut tap = Tap::default();
        tap.feed(b"GET /a HTTP/1.1\r\nX\x01: y\r\n\r\n");
        assert!(tap.take("GET", &uri("/a"), 1).is_none());
        assert!(tap.refused(peer()).is_none());
        // The requests before a refused one are still handed over, and it is still kept.
        let mut tap = Tap::default();
        tap.feed(b"GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nX\x01: y\r\n\r\n");
        assert!(tap.take("GET", &uri("/a"), 0).is_some());
        tap.wrote(b"HTTP/1.1 200 OK\r\n");
        tap.wrote(b"HTTP/1.1 400 Bad Request\r\n");
        let r = tap.refused(peer()).expect("the second request is refused");
        assert!(r.bytes.starts_with(b"GET /b"));
        assert_eq!(r.answered, Some(400));
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
        assert!(tap.refusal.as_ref().is_some_and(|r| r.bytes.len() == KEPT));
    }
}
