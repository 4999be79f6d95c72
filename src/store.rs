//! Durable storage of invocations: one SQLite file (rusqlite, bundled), a versioned schema with
//! migrations, a writer thread with group commit, and paged queries.
//!
//! Acknowledged means stored: [`Store::insert`] resolves only after the transaction holding the
//! invocation has committed. Concurrent inserts are gathered into one transaction, so one fsync
//! covers many calls. Queries never load the whole history: pages, counts and single rows.

use crate::contract::{Finding, Outcome, Severity};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// The database file inside the data directory.
pub const DB_FILE: &str = "hookscope.sqlite3";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "{path} is a file, not a directory: give --data-dir a directory (it is created if need be)"
    )]
    NotADirectory { path: PathBuf },
    #[error(
        "{path} is a file, not a directory: give --data-dir the directory that holds {DB_FILE} (the one `hookscope listen` or the window stored into)"
    )]
    NotADirectoryToRead { path: PathBuf },
    #[error(
        "{path} is a directory, where Hookscope keeps its database file: move it out of the way, or give --data-dir another directory"
    )]
    DatabaseIsADirectory { path: PathBuf },
    #[error("cannot create the data directory {path}: {}", create_dir_words(.path, .source))]
    CreateDir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the database {path}: {source}")]
    Open {
        path: PathBuf,
        source: rusqlite::Error,
    },
    #[error(
        "the database {path} has schema version {found}, newer than this Hookscope knows ({known}); use a newer Hookscope or another --data-dir"
    )]
    TooNew {
        path: PathBuf,
        found: i64,
        known: i64,
    },
    #[error(
        "cannot open {dir}: this user may not enter it (permission denied; see who owns it, and its mode), so its calls cannot be read or stored"
    )]
    NoEntry { dir: PathBuf },
    #[error(
        "there is no Hookscope database in {dir}: nothing has been stored there (check --data-dir; `hookscope listen` or the window creates it)"
    )]
    NoDatabase { dir: PathBuf },
    /// A database file with nothing in it of its own and no write-ahead log beside it: a
    /// running store's calls are in its log until they are folded into the file, so a copy of
    /// the file alone holds none of them.
    #[error(
        "{path} holds no calls of its own, and there is no {wal} beside it: a store's newest calls are in that write-ahead log until they are folded into the file (when Hookscope stops, or every thousand pages or so). If this is a copy, copy the {wal} file with it (or copy the whole directory after stopping Hookscope)"
    )]
    WithoutItsLog { path: PathBuf, wal: String },
    #[error(
        "{path} is not a Hookscope database (it holds another program's tables), and is left as it is: give --data-dir a directory of its own"
    )]
    NotHookscope { path: PathBuf },
    #[error(
        "{path} is not a database file (another program's data?), and is left as it is: give --data-dir a directory of its own"
    )]
    NotSqlite { path: PathBuf },
    #[error(
        "cannot use {path}: {what} cannot be written, and SQLite writes beside the database even to read it (the index of its write-ahead log); copy the data directory somewhere writable and give that to --data-dir, or run as its owner"
    )]
    ReadOnly { path: PathBuf, what: String },
    #[error(
        "{path} was written by an older Hookscope (its schema version {found}) and is brought up to date (version {current}) when opened, which writes to it, but this user cannot write it: run Hookscope once as its owner, or copy the data directory somewhere writable and give that to --data-dir"
    )]
    CannotUpgrade {
        path: PathBuf,
        found: i64,
        current: i64,
    },
    /// Opening needs a little room beside the database (its -wal and -shm files), which a full
    /// disk refuses: SQLite says only "disk I/O error".
    #[error(
        "cannot open the database {path}: the disk holding it is full: free some space there (or give --data-dir a directory on another disk)"
    )]
    DiskFullAtOpen { path: PathBuf },
    #[error(
        "cannot open the database {path}: the disk failed to read or write it (SQLite says \"{detail}\": see the system's log)"
    )]
    IoFailureAtOpen { path: PathBuf, detail: String },
    #[error(
        "cannot store calls in {path}: {what} cannot be written by this user (another user's, or its mode forbids it); give --data-dir a directory of your own, or run as its owner"
    )]
    NotWritable { path: PathBuf, what: String },
    /// Not this user's doing, nor its owner's: "run as its owner" would not help.
    #[error(
        "cannot store calls in {path}: it is on a file system mounted read-only, which no user may write whatever the modes say; give --data-dir a directory on a writable disk (log and show read this one in place only while its log files, -wal and -shm, are beside it; else copy it somewhere writable)"
    )]
    ReadOnlyMount { path: PathBuf },
    /// Read by `log` and `show`: on a read-only mount SQLite can read a store whose log files
    /// are beside it, not one closed cleanly (it must make them).
    #[error(
        "cannot read {path} where it is: it is on a file system mounted read-only, and SQLite writes beside the database even to read it (the index of its write-ahead log); copy the data directory somewhere writable and give that to --data-dir"
    )]
    ReadOnlyMountRead { path: PathBuf },
    #[error("database error: {0}")]
    Sql(#[from] rusqlite::Error),
    #[error("a stored record is damaged: {0}")]
    Corrupt(String),
    #[error(
        "the database {path} is damaged ({detail}), and is left as it is: copy its data directory aside, then try `sqlite3 {path} .recover` on the copy to save what it holds; to go on storing calls, give --data-dir a new directory"
    )]
    Damaged { path: PathBuf, detail: String },
    #[error(
        "{} in {path} cannot be read ({detail}): was the database changed by another program or by hand? Copy its data directory aside, and give --data-dir a new directory to go on",
        id.map_or("a record".to_owned(), |id| format!("record {id}"))
    )]
    DamagedRecord {
        path: PathBuf,
        /// The record's id, when the row could say it.
        id: Option<i64>,
        detail: String,
    },
    #[error("the database did not take the call: {0}")]
    Commit(String),
    #[error("the store's writer has stopped; the invocation was not stored")]
    WriterGone,
    #[error("the read was given up: a newer one took its place")]
    Superseded,
}

impl StoreError {
    /// This error as it happened in the store in `dir`: a damaged file, or a record that does
    /// not read as Hookscope wrote it, is named as such, with the file and what to do, instead
    /// of SQLite's bare words ("database disk image is malformed").
    pub fn in_store(self, dir: &Path) -> StoreError {
        let path = db_path(dir);
        match self {
            StoreError::Sql(e) | StoreError::Open { source: e, .. }
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseCorrupt) =>
            {
                StoreError::Damaged {
                    path,
                    detail: e.to_string(),
                }
            }
            StoreError::Sql(e) if damaged_record(&e) => match bad_record(&e) {
                Some(bad) => StoreError::DamagedRecord {
                    path,
                    id: Some(bad.id),
                    detail: bad.what.clone(),
                },
                None => StoreError::DamagedRecord {
                    path,
                    id: None,
                    detail: e.to_string(),
                },
            },
            other => other,
        }
    }
}

/// A row that does not read as Hookscope wrote it: its id, and what is wrong in words.
#[derive(Debug)]
struct BadRecord {
    id: i64,
    what: String,
}

impl std::fmt::Display for BadRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "record {}: {}", self.id, self.what)
    }
}

impl std::error::Error for BadRecord {}

fn bad_record(e: &rusqlite::Error) -> Option<&BadRecord> {
    match e {
        rusqlite::Error::FromSqlConversionFailure(_, _, inner) => inner.downcast_ref::<BadRecord>(),
        _ => None,
    }
}

/// Read a row with `read`; a value in it that is not what Hookscope stores there is named
/// with the row's id and the column, in words.
fn record_row<T>(
    row: &Row<'_>,
    read: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    read(row).map_err(|e| {
        let column = |i: usize| {
            row.as_ref()
                .column_name(i)
                .map_or_else(|_| format!("column {i}"), str::to_owned)
        };
        let what = match &e {
            rusqlite::Error::InvalidColumnType(_, name, ty) => format!(
                "its {name} holds {}, which Hookscope never writes there",
                match ty {
                    rusqlite::types::Type::Null => "nothing (null)",
                    rusqlite::types::Type::Integer => "a number",
                    rusqlite::types::Type::Real => "a fraction",
                    rusqlite::types::Type::Text => "text",
                    rusqlite::types::Type::Blob => "bytes (a blob)",
                }
            ),
            rusqlite::Error::IntegralValueOutOfRange(i, v) => {
                format!(
                    "its {} is {v}, out of the range Hookscope writes",
                    column(*i)
                )
            }
            rusqlite::Error::FromSqlConversionFailure(_, _, inner) => {
                if let Some(j) = inner.downcast_ref::<BadJson>() {
                    format!(
                        "its {} is not the JSON Hookscope writes ({})",
                        j.column, j.error
                    )
                } else if let Some(m) = inner.downcast_ref::<MissingAnswerBody>() {
                    m.to_string()
                } else {
                    format!("a value cannot be read ({inner})")
                }
            }
            _ => return e,
        };
        match row.get::<_, i64>("id") {
            // Carried in the one variant that holds any error (its index and type unused).
            Ok(id) => rusqlite::Error::FromSqlConversionFailure(
                0,
                rusqlite::types::Type::Null,
                Box::new(BadRecord { id, what }),
            ),
            Err(_) => e,
        }
    })
}

/// A record whose answer body, kept once in `answer_bodies`, is no longer there (deleted by
/// hand, or a damaged copy): not an empty answer.
#[derive(Debug)]
struct MissingAnswerBody(i64);

impl std::fmt::Display for MissingAnswerBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "its answer body, kept once as row {} of answer_bodies, is missing",
            self.0
        )
    }
}

impl std::error::Error for MissingAnswerBody {}

/// A JSON column that does not read as the JSON Hookscope writes.
#[derive(Debug)]
struct BadJson {
    column: String,
    error: serde_json::Error,
}

impl std::fmt::Display for BadJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "malformed JSON in {}: {}", self.column, self.error)
    }
}

impl std::error::Error for BadJson {}

/// A value in a row that is not what Hookscope stores there (a column of another type, a number
/// out of range, JSON that is not JSON).
fn damaged_record(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::IntegralValueOutOfRange(..)
            | rusqlite::Error::InvalidColumnType(..)
    ) || e.to_string().contains("malformed JSON")
}

/// Says, while a read runs, that nobody waits for it any more (a newer search replaced it).
pub type Stale = Box<dyn FnMut() -> bool + Send>;

/// How many SQLite instructions run between two looks at a read's [`Stale`].
const STALE_CHECK_OPS: i32 = 1000;

/// One header as received. `value` is the text (lossy when the bytes are not UTF-8, in which
/// case `bytes_hex` keeps the exact bytes).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    pub name: String,
    pub value: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_hex: Option<String>,
}

impl Header {
    pub fn new(name: &str, value: &[u8]) -> Self {
        match std::str::from_utf8(value) {
            Ok(s) => Header {
                name: name.to_owned(),
                value: s.to_owned(),
                bytes_hex: None,
            },
            Err(_) => Header {
                name: name.to_owned(),
                value: String::from_utf8_lossy(value).into_owned(),
                bytes_hex: Some(crate::text::hex(value)),
            },
        }
    }

    /// The exact bytes of the value.
    pub fn bytes(&self) -> Vec<u8> {
        self.bytes_hex
            .as_deref()
            .and_then(crate::text::unhex)
            .unwrap_or_else(|| self.value.as_bytes().to_vec())
    }
}

/// The answer that was sent back.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentAnswer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Shared with the answer it was made from, and with every other call it answered: a
    /// 20 MiB answer held for 40 calls at once is 20 MiB, not 40 copies.
    pub body: bytes::Bytes,
    /// The delay chosen before answering, in milliseconds.
    pub delay_ms: u64,
}

impl SentAnswer {
    /// The Retry-After header it carried, as sent (whatever the code).
    pub fn retry_after(&self) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("retry-after"))
            .map(|(_, v)| v.as_str())
    }
}

/// Everything recorded about one call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    pub received_at: DateTime<Utc>,
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub headers: Vec<Header>,
    /// The body as received (empty when it was over the limit and not kept).
    pub body: Vec<u8>,
    /// Bytes received.
    pub body_size: u64,
    /// The Content-Length the client declared, if any.
    pub declared_size: Option<u64>,
    /// False when the body was over the limit and answered 413.
    pub body_kept: bool,
    pub peer: Option<String>,
    pub event: Option<String>,
    pub delivery: Option<String>,
    pub attempt: Option<u32>,
    pub webhook_id: Option<String>,
    pub messages: Option<u32>,
    pub registration_check: bool,
    pub findings: Vec<Finding>,
    pub answer: SentAnswer,
    /// From arrival to the answer being ready (including the chosen delay), in microseconds.
    pub took_us: u64,
    /// The rule that chose the answer, if one did.
    pub rule: Option<String>,
}

/// The outcome of a call whose caller got no answer in time: the service retries it, or, for a
/// registration check, refuses the URL.
pub fn unanswered_outcome(registration_check: bool) -> Outcome {
    if registration_check {
        Outcome::UrlRefused
    } else {
        Outcome::RetryTemporary
    }
}

/// What the service does about a call it got no answer to in time, as a sentence.
pub fn unanswered_consequence(registration_check: bool) -> &'static str {
    if registration_check {
        "The service takes that as a failed registration check and refuses the URL (nothing is retried)."
    } else {
        "The service counts the call as a failure and retries."
    }
}

/// The finding of a call whose caller hung up before the answer was sent.
pub const CALLER_HUNG_UP: &str = "caller-hung-up";
/// The finding of a request whose head did not arrive whole in time: the receiver closed its
/// connection, and nothing was answered.
pub const HEAD_TIMED_OUT: &str = "head-timed-out";
/// The finding of a request whose body stopped arriving (no byte for the body timeout): the
/// receiver closed its connection, and nothing was answered.
pub const BODY_TIMED_OUT: &str = "body-timed-out";
/// The finding of a request the HTTP layer refused before Hookscope could read it.
pub const NOT_HTTP: &str = "not-http";

/// What the answer to a request the HTTP layer refused means, in place of the States table's
/// reading of its code (a 400 is not "failed permanently, so the message is discarded": the
/// service sends HTTP, so such a request is never one of its deliveries).
pub const NOT_HTTP_MEANING: &str = "answered by the HTTP layer itself, not chosen: the request could not be read as HTTP, which the service never sends, so no retry follows from it";
/// The same for a refused request whose connection ended before the HTTP layer answered it.
pub const NOT_HTTP_UNANSWERED: &str = "not answered: the request could not be read as HTTP, which the service never sends, so no retry follows from it";

/// A call's request as one short phrase: `POST /hook`, or *not HTTP* for bytes that had no
/// request line (a TLS handshake sent to the plain-HTTP port, say).
pub fn request_phrase(method: &str, path: &str) -> String {
    if method.is_empty() {
        "not HTTP".to_owned()
    } else {
        format!("{method} {path}")
    }
}

/// The finding of a call stored just before Hookscope quit at once (a second Ctrl-C), whose
/// answer was never sent.
pub const QUIT_BEFORE_ANSWER: &str = "quit-before-answer";

impl Invocation {
    /// The value of its first header called `name` (in any case), trimmed.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value.trim())
    }

    /// The clock speed a Hookscope emulator marked the call with
    /// ([`CLOCK_SPEED_HEADER`](crate::emulator::CLOCK_SPEED_HEADER)), when it is one from 1
    /// (real time) up: a slower clock is read as real time.
    pub fn marked_clock_speed(&self) -> Option<f64> {
        self.header(crate::emulator::CLOCK_SPEED_HEADER)?
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && (1.0..=crate::emulator::MAX_SPEED).contains(v))
    }

    /// What the service makes of this call. Its code decides, when the caller got it in time: a
    /// caller that hung up got no answer, and an answer later than the service's 30 s
    /// ([`crate::contract::ANSWER_TIMEOUT`]) is not waited for; both are temporary failures, and
    /// the service retries, whatever code was chosen.
    ///
    /// A registration check is different: the service accepts the URL only if it is answered
    /// 200 in time, and anything else is [`Outcome::UrlRefused`] (nothing is retried).
    pub fn outcome(&self) -> Outcome {
        if self.unanswered().is_some() {
            unanswered_outcome(self.registration_check)
        } else if self.registration_check && self.answer.status != 200 {
            Outcome::UrlRefused
        } else {
            crate::contract::outcome_of(self.answer.status)
        }
    }

    /// What the service makes of the answer, in plain words; a registration check's success
    /// is the URL being accepted, not a delivery.
    pub fn meaning(&self) -> &'static str {
        if self.not_http() {
            return if self.unanswered().is_some() {
                NOT_HTTP_UNANSWERED
            } else {
                NOT_HTTP_MEANING
            };
        }
        match self.outcome() {
            Outcome::Succeeded if self.registration_check => {
                "succeeded: the URL is accepted, and the service can register it"
            }
            // Said of this answer, not of 503s in general ("…when the answer gives one").
            Outcome::RetryUnavailable | Outcome::RetrySlowDown
                if self.discarded_by_retry_after() =>
            {
                "not retried: its Retry-After reaches past the service's 2-day window, so the message is discarded"
            }
            // A date already passed when it was sent asks for no wait.
            Outcome::RetryUnavailable | Outcome::RetrySlowDown
                if self.answer.retry_after().and_then(crate::contract::RetryAfter::parse).is_some_and(
                    |ra| matches!(ra, crate::contract::RetryAfter::Until(at) if at <= self.received_at),
                ) =>
            {
                if self.answer.status == 429 {
                    "retried on the schedule, and the service slows down (its Retry-After date had passed: it asks for no wait)"
                } else {
                    "retried on the schedule (its Retry-After date had passed: it asks for no wait)"
                }
            }
            Outcome::RetryUnavailable if self.answer.retry_after().is_some() => {
                "retried on the schedule, and not before its Retry-After wait"
            }
            Outcome::RetryUnavailable => "retried on the schedule (the answer gave no Retry-After)",
            outcome => outcome.describe(),
        }
    }

    /// A plausible status-report call numbered `i` (every fourth answered 503), for the
    /// benchmarks and tests that fill a store.
    #[doc(hidden)]
    pub fn synthetic(i: u64, body: &[u8]) -> Invocation {
        Invocation {
            received_at: chrono::Utc::now(),
            method: "POST".into(),
            path: "/hook".into(),
            query: None,
            headers: vec![
                Header::new("x-service-event", b"status-report"),
                Header::new("x-service-delivery", format!("d-{i}").as_bytes()),
                Header::new("content-type", b"application/json"),
            ],
            body: body.to_vec(),
            body_size: body.len() as u64,
            declared_size: Some(body.len() as u64),
            body_kept: true,
            peer: Some("127.0.0.1:1".into()),
            event: Some("status-report".into()),
            delivery: Some(format!("d-{i}")),
            attempt: Some((i % 5 + 1) as u32),
            webhook_id: Some("234".into()),
            messages: Some(1),
            registration_check: false,
            findings: vec![],
            answer: SentAnswer {
                status: if i.is_multiple_of(4) { 503 } else { 200 },
                ..SentAnswer::default()
            },
            took_us: 500,
            rule: None,
        }
    }

    /// Why the Retry-After of the answer sent did not set the next retry, if it did not: in
    /// words for beside it (`show`'s answer, the window's Answer sent tab).
    pub fn retry_after_note(&self) -> Option<&'static str> {
        let a = &self.answer;
        let sent = a.retry_after()?;
        Some(
            if !crate::contract::outcome_of(a.status).honours_retry_after() {
                "ignored by the service with this answer: only 503 and 429 count"
            } else if self.unanswered().is_some() {
                "never read: no answer reached the service"
            } else if self.registration_check {
                "no effect: a registration check is not retried"
            } else if (crate::responder::Answer {
                retry_after: Some(sent.to_owned()),
                ..crate::responder::Answer::status(a.status)
            })
            .retry_after_past_window(self.received_at)
            {
                "past the service's 2-day retry window: no retry comes, and the message is discarded"
            } else {
                return None;
            },
        )
    }

    /// Whether the service, reading this call's answer, retries no more and discards the
    /// message: a 503 or 429 whose Retry-After reaches past the 2-day window (its code alone
    /// reads "retry"). As [`Summary::discarded_by_retry_after`].
    pub fn discarded_by_retry_after(&self) -> bool {
        let a = &self.answer;
        retry_after_discards(
            a.status,
            a.retry_after(),
            self.unanswered().is_some() || self.not_http() || self.registration_check,
            self.received_at,
        )
    }

    /// When the answer went, in words for `show` and the Answer sent tab: `sent after 1.5 s (a
    /// chosen delay of 1.5 s)`, or, for one never sent (its caller hung up, or Hookscope quit),
    /// `held 2 s of a chosen delay of 40 s, never sent`.
    pub fn answer_timing(&self) -> String {
        // At least a microsecond: the HTTP layer's own answer is stored with no time (it had
        // read "sent after 0 s" where every other quick answer reads "under 1 ms").
        let took =
            crate::text::human_duration(std::time::Duration::from_micros(self.took_us.max(1)));
        let delay =
            (self.answer.delay_ms > 0).then(|| crate::responder::delay_words(self.answer.delay_ms));
        let never_sent = self.findings.iter().any(|f| {
            [
                CALLER_HUNG_UP,
                QUIT_BEFORE_ANSWER,
                HEAD_TIMED_OUT,
                BODY_TIMED_OUT,
            ]
            .contains(&f.code.as_str())
        });
        match (never_sent, delay) {
            (false, None) => format!("sent after {took}"),
            (false, Some(d)) => format!("sent after {took} (a chosen delay of {d})"),
            (true, None) => format!("never sent (the call ended {took} after it came)"),
            (true, Some(d)) => format!("held {took} of a chosen delay of {d}, never sent"),
        }
    }

    /// The HTTP layer refused the request before Hookscope could read it: no method, headers
    /// or body of its own, only the bytes that arrived.
    pub fn not_http(&self) -> bool {
        self.findings.iter().any(|f| f.code == NOT_HTTP)
    }

    /// Why the chosen answer was no answer for the service, if it was not: the caller never got
    /// it, or got it after the service stops waiting (a caller that waits longer still reads
    /// it, but the service would not).
    pub fn unanswered(&self) -> Option<&'static str> {
        if self.findings.iter().any(|f| f.code == CALLER_HUNG_UP) {
            Some("the caller hung up before it was sent")
        } else if self.findings.iter().any(|f| f.code == HEAD_TIMED_OUT) {
            Some("the receiver closed the connection, the request's head not whole in time")
        } else if self.findings.iter().any(|f| f.code == BODY_TIMED_OUT) {
            Some("the receiver closed the connection, the body not whole in time")
        } else if self.findings.iter().any(|f| f.code == QUIT_BEFORE_ANSWER) {
            Some("Hookscope quit before it was sent")
        } else if u128::from(self.took_us) >= crate::contract::ANSWER_TIMEOUT.as_micros() {
            Some("it came after the service's 30 s, when the service no longer waits for it")
        } else {
            None
        }
    }
}

/// A stored invocation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stored {
    pub id: i64,
    #[serde(flatten)]
    pub inv: Invocation,
}

/// One row of a list: what a page shows, without headers and bodies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub id: i64,
    pub received_at: DateTime<Utc>,
    pub method: String,
    pub path: String,
    /// The query string, without its `?` (`None` without one). Only in a summary made of a
    /// whole record ([`Summary::of`]): a page of the list leaves it out.
    #[serde(default)]
    pub query: Option<String>,
    pub event: Option<String>,
    pub delivery: Option<String>,
    pub attempt: Option<u32>,
    pub webhook_id: Option<String>,
    pub messages: Option<u32>,
    pub answer_status: u16,
    pub outcome: Outcome,
    pub body_size: u64,
    pub findings: u32,
    /// The gravest of its findings (`None` without any).
    #[serde(default)]
    pub worst: Option<Severity>,
    pub registration_check: bool,
    pub rule: Option<String>,
    /// How long the answer took, in microseconds: a call held back by a delay is stored, and
    /// listed, when it is answered, after calls that came later.
    #[serde(default)]
    pub took_us: u64,
    /// A request the HTTP layer refused before Hookscope could read it ([`NOT_HTTP`]): its
    /// answer is the HTTP layer's, not one chosen for the service.
    #[serde(default)]
    pub not_http: bool,
    /// No answer reached the caller in time (the service's 30 s passed, or it hung up first,
    /// or Hookscope quit): the service retries whatever code was chosen.
    #[serde(default)]
    pub unanswered: bool,
    /// The Retry-After the answer gave, with a 503 or a 429 (the codes whose Retry-After the
    /// service reads): one past the 2-day window means no retry ([`Summary::discarded_by_retry_after`]).
    #[serde(default)]
    pub retry_after: Option<String>,
}

impl Summary {
    /// The findings that point at something wrong: all of them but the note every
    /// registration check carries (validation adds it to each one, and nothing else).
    pub fn problems(&self) -> u32 {
        self.findings
            .saturating_sub(u32::from(self.registration_check))
    }

    /// The list row of an invocation stored under `id`.
    pub fn of(id: i64, inv: &Invocation) -> Summary {
        Summary {
            id,
            received_at: inv.received_at,
            method: inv.method.clone(),
            path: inv.path.clone(),
            query: inv.query.clone(),
            event: inv.event.clone(),
            delivery: inv.delivery.clone(),
            attempt: inv.attempt,
            webhook_id: inv.webhook_id.clone(),
            messages: inv.messages,
            answer_status: inv.answer.status,
            outcome: inv.outcome(),
            body_size: inv.body_size,
            findings: inv.findings.len() as u32,
            worst: inv.findings.iter().map(|f| f.severity).max(),
            registration_check: inv.registration_check,
            rule: inv.rule.clone(),
            took_us: inv.took_us,
            not_http: inv.not_http(),
            unanswered: inv.unanswered().is_some(),
            retry_after: inv
                .answer
                .retry_after()
                .filter(|_| matches!(inv.answer.status, 429 | 503))
                .map(str::to_owned),
        }
    }

    /// Whether the service, reading this call's answer, retries no more and discards the
    /// message: a 503 or 429 whose Retry-After reaches past the 2-day window (its code alone
    /// reads "retry").
    pub fn discarded_by_retry_after(&self) -> bool {
        retry_after_discards(
            self.answer_status,
            self.retry_after.as_deref(),
            self.unanswered || self.not_http || self.registration_check,
            self.received_at,
        )
    }

    /// When it was answered (and stored, and listed).
    pub fn answered_at(&self) -> DateTime<Utc> {
        self.received_at + chrono::TimeDelta::microseconds(self.took_us.min(i64::MAX as u64) as i64)
    }
}

/// Calls by what they are, as the list's Event column names them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventFilter {
    /// Calls whose event header has this value, e.g. `status-report` (registration checks
    /// apart, whatever they announce: the list calls them registration checks).
    Event(String),
    /// The service's registration checks (a POST of `[]` with the invoker's User-Agent).
    RegistrationCheck,
    /// Anything else: no event header and not a registration check (a browser, a stray curl).
    Other,
}

impl EventFilter {
    /// The words the list's Event column uses for these calls.
    pub fn label(&self) -> &str {
        match self {
            EventFilter::Event(e) => e,
            EventFilter::RegistrationCheck => "registration check",
            EventFilter::Other => "other calls",
        }
    }
}

/// What a list shows. Empty fields match everything.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Filter {
    pub event: Option<EventFilter>,
    pub outcome: Option<Outcome>,
    /// With `outcome` [`Outcome::RetryTemporary`], which of its calls, as the list's rows read
    /// them: those no answer reached in time, "retry (late)" (`true`), or the others, "retry
    /// (other)" (`false`; the late ones had been listed there too, under another word than
    /// their rows'). Unused with another outcome.
    #[serde(default)]
    pub late: bool,
    /// Free text, matched in path, delivery, webhook id, event and body.
    pub text: String,
    /// Only invocations with findings. The note that marks a registration check is not one:
    /// it says what the call is, not what is wrong with it.
    pub with_findings: bool,
}

impl Filter {
    pub fn is_empty(&self) -> bool {
        self.event.is_none()
            && self.outcome.is_none()
            && self.text.is_empty()
            && !self.with_findings
    }

    fn sql(&self) -> (String, Vec<rusqlite::types::Value>) {
        use rusqlite::types::Value as V;
        let mut clauses: Vec<std::borrow::Cow<str>> = Vec::new();
        let mut args = Vec::new();
        match &self.event {
            None => {}
            Some(EventFilter::Event(e)) => {
                clauses.push("event = ? AND NOT registration_check".into());
                args.push(V::Text(e.clone()));
            }
            Some(EventFilter::RegistrationCheck) => clauses.push("registration_check".into()),
            Some(EventFilter::Other) => {
                clauses.push("event IS NULL AND NOT registration_check".into())
            }
        }
        if let Some(o) = self.outcome {
            // As the rows read: a 503 or 429 whose Retry-After leaves no retry says
            // "discarded", so it is listed under discarded and not under its code.
            clauses.push(format!("{LISTED_OUTCOME} = ?").into());
            // The calls no answer reached in time are marked apart as they are stored.
            let listed = match o {
                Outcome::RetryTemporary if self.late => LATE_OUTCOME,
                o => o.as_str(),
            };
            args.push(V::Text(listed.to_owned()));
        }
        if self.with_findings {
            clauses.push("findings_count > registration_check".into());
        }
        let text = self.text.trim();
        if !text.is_empty() {
            clauses.push(
                // Letters match in either case (ASCII ones: SQLite's lower()).
                "(instr(lower(path), lower(?1x)) > 0 OR instr(lower(ifnull(delivery, '')), lower(?1x)) > 0 \
                 OR instr(lower(ifnull(webhook_id, '')), lower(?1x)) > 0 OR instr(lower(ifnull(event, '')), lower(?1x)) > 0 \
                 OR instr(lower(CAST(body AS TEXT)), lower(?1x)) > 0)"
                    .into(),
            );
            for _ in 0..5 {
                args.push(V::Text(text.to_owned()));
            }
        }
        if clauses.is_empty() {
            (String::new(), args)
        } else {
            let joined = clauses.join(" AND ").replace("?1x", "?");
            (format!("WHERE {joined}"), args)
        }
    }
}

/// How hard a commit insists that the data is on disk.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Durability {
    /// fsync at every commit: survives a power loss. (Default; group commit keeps it cheap.)
    #[default]
    Full,
    /// fsync at checkpoints only: survives the process being killed, not a power loss.
    Normal,
}

// What a row reads from a call's findings and answer, as SQL: written once, for the list's
// rows (`SUMMARY_COLUMNS`) and for the migration that marked the calls stored before
// `listed_as` (`retry_after_discards_sql!`, `not_http_sql!`), which must agree with them.
macro_rules! not_http_sql {
    () => {
        "CASE WHEN findings_count > 0 AND json_valid(findings) THEN EXISTS (SELECT 1 FROM json_each(findings) \
        WHERE type = 'object' AND json_extract(value, '$.code') = 'not-http') ELSE 0 END"
    };
}
macro_rules! unanswered_sql {
    () => {
        "CASE WHEN took_us >= 30000000 THEN 1 WHEN findings_count > 0 AND json_valid(findings) THEN EXISTS (SELECT 1 \
        FROM json_each(findings) WHERE type = 'object' AND json_extract(value, '$.code') \
        IN ('caller-hung-up', 'quit-before-answer', 'head-timed-out', 'body-timed-out')) ELSE 0 END"
    };
}
macro_rules! retry_after_sql {
    () => {
        "CASE WHEN answer_status IN (429, 503) AND instr(lower(answer_headers), 'retry-after') > 0 \
        AND json_valid(answer_headers) THEN (SELECT \
        json_extract(value, '$[1]') FROM json_each(answer_headers) WHERE type = 'array' \
        AND lower(json_extract(value, '$[0]')) = 'retry-after' LIMIT 1) END"
    };
}

/// [`Summary::discarded_by_retry_after`] as a condition on a row, through the SQL function
/// [`RETRY_AFTER_DISCARDS_FN`]: read once, by the migration that made the `listed_as`
/// column; calls stored since are marked as they are stored. The cheap tests first: the
/// findings are read only for the few a Retry-After discards.
macro_rules! retry_after_discards_sql {
    () => {
        concat!(
            "(answer_status IN (429, 503) AND NOT registration_check AND hs_retry_after_discards(answer_status, (",
            retry_after_sql!(),
            "), received_at_us) AND NOT (",
            not_http_sql!(),
            ") AND NOT (",
            unanswered_sql!(),
            "))"
        )
    };
}

/// A call's outcome as the window's list reads it: "discarded" (`failed-permanently`) for a 503
/// or 429 whose Retry-After leaves no retry ([`LISTED_DISCARDED`]), `not-http` for a request
/// the HTTP layer refused ([`LISTED_NOT_HTTP`], under no outcome of the filter: its row reads
/// "not HTTP"), `retry-late` for a temporary failure no answer reached in time
/// ([`LISTED_LATE`], "retry (late)"), its code's reading otherwise (which `log` keeps).
/// Indexed as it is written here, with the id: the Outcome filter reads it in the list's order
/// and counts it from the index alone.
macro_rules! listed_outcome_sql {
    () => {
        "(CASE listed_as WHEN 1 THEN 'failed-permanently' WHEN 2 THEN 'not-http' WHEN 3 THEN 'retry-late' ELSE outcome END)"
    };
}

/// `listed_as` of a 503 or 429 whose Retry-After leaves no retry.
const LISTED_DISCARDED: i64 = 1;
/// `listed_as` of a request the HTTP layer refused.
const LISTED_NOT_HTTP: i64 = 2;
/// `listed_as` of a temporary failure no answer reached in time: "retry (late)".
const LISTED_LATE: i64 = 3;
/// How the list reads a temporary failure no answer reached in time, in the outcome index.
const LATE_OUTCOME: &str = "retry-late";

/// How the list reads `inv` where its code does not say it: its `listed_as`.
fn listed_as(inv: &Invocation) -> i64 {
    if inv.not_http() {
        LISTED_NOT_HTTP
    } else if inv.discarded_by_retry_after() {
        LISTED_DISCARDED
    } else if inv.unanswered().is_some() && inv.outcome() == Outcome::RetryTemporary {
        LISTED_LATE
    } else {
        0
    }
}

const LISTED_OUTCOME: &str = listed_outcome_sql!();

const MIGRATIONS: &[&str] = &[
    // 1: the invocation log.
    "CREATE TABLE invocations (
        id INTEGER PRIMARY KEY,
        received_at_us INTEGER NOT NULL,
        method TEXT NOT NULL,
        path TEXT NOT NULL,
        query TEXT,
        headers TEXT NOT NULL,
        body BLOB NOT NULL,
        body_size INTEGER NOT NULL,
        declared_size INTEGER,
        body_kept INTEGER NOT NULL,
        peer TEXT,
        event TEXT,
        delivery TEXT,
        attempt INTEGER,
        webhook_id TEXT,
        messages INTEGER,
        registration_check INTEGER NOT NULL,
        findings TEXT NOT NULL,
        findings_count INTEGER NOT NULL,
        answer_status INTEGER NOT NULL,
        answer_headers TEXT NOT NULL,
        answer_body BLOB NOT NULL,
        answer_delay_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        took_us INTEGER NOT NULL,
        rule TEXT
    );
    CREATE INDEX invocations_delivery ON invocations(delivery, webhook_id, id);
    CREATE INDEX invocations_event ON invocations(event, id);
    CREATE INDEX invocations_outcome ON invocations(outcome, id);",
    // 2: an answer body of SHARED_ANSWER_MIN bytes or more is kept once, however many calls
    // were answered with it (a pasted page answering a fast emulator's every retry grew the
    // database by its size per call).
    "CREATE TABLE answer_bodies (
        id INTEGER PRIMARY KEY,
        hash INTEGER NOT NULL,
        body BLOB NOT NULL
    );
    CREATE INDEX answer_bodies_hash ON answer_bodies(hash);
    ALTER TABLE invocations ADD COLUMN answer_body_id INTEGER REFERENCES answer_bodies(id);",
    // 3: how the list reads a call where its code does not say it, kept with the call (1: a
    // 503 or 429 whose Retry-After leaves no retry; 2: a request the HTTP layer refused), and
    // the outcome index on the outcome as the list reads it: the Outcome filter had read every
    // 503's answer headers for each count and page.
    concat!(
        "ALTER TABLE invocations ADD COLUMN listed_as INTEGER NOT NULL DEFAULT 0;
    UPDATE invocations SET listed_as = 1 WHERE ",
        retry_after_discards_sql!(),
        ";
    UPDATE invocations SET listed_as = 2 WHERE ",
        not_http_sql!(),
        ";
    DROP INDEX invocations_outcome;
    CREATE INDEX invocations_outcome ON invocations(\
    (CASE listed_as WHEN 1 THEN 'failed-permanently' WHEN 2 THEN 'not-http' ELSE outcome END), id);"
    ),
    // 4: a temporary failure no answer reached in time is listed as "retry (late)" (3), and
    // the outcome index reads it so: the filter's "retry (late)" and "retry (other)" each from
    // the index alone.
    concat!(
        "UPDATE invocations SET listed_as = 3 WHERE listed_as = 0 AND outcome = 'retry-temporary' AND (",
        unanswered_sql!(),
        ");
    DROP INDEX invocations_outcome;
    CREATE INDEX invocations_outcome ON invocations(",
        listed_outcome_sql!(),
        ", id);"
    ),
];

/// The size from which an answer body is kept once in `answer_bodies` rather than with each
/// call: small bodies (`{"ok":true}`) are cheaper inline than looked up.
pub const SHARED_ANSWER_MIN: usize = 4096;

/// An invocation's every column, with its answer body if that was kept once
/// (`shared_answer_body`, null otherwise).
const FULL_COLUMNS: &str = "*,
    (SELECT body FROM answer_bodies WHERE answer_bodies.id = invocations.answer_body_id)
        AS shared_answer_body";

/// An invocation's every column but its bodies, which read empty (`body_size` is kept).
const WITHOUT_BODIES: &str = "id, received_at_us, method, path, query, headers, X'' AS body,
    body_size, declared_size, body_kept, peer, event, delivery, attempt, webhook_id, messages,
    registration_check, findings, findings_count, answer_status, answer_headers,
    X'' AS answer_body, answer_delay_ms, outcome, took_us, rule, NULL AS shared_answer_body,
    NULL AS answer_body_id";

/// The id of `body` in `answer_bodies`, added if it is not there yet.
fn shared_answer_body(tx: &rusqlite::Transaction<'_>, body: &[u8]) -> Result<i64, StoreError> {
    use std::hash::{Hash, Hasher};
    // Only to find candidates: equal bodies are compared whole, so a hash that differs
    // between builds costs one more copy, never a wrong body.
    let mut hasher = std::hash::DefaultHasher::new();
    body.hash(&mut hasher);
    let hash = hasher.finish() as i64;
    let found = tx
        .prepare_cached("SELECT id FROM answer_bodies WHERE hash = ?1 AND body = ?2")?
        .query_row(params![hash, body], |r| r.get(0))
        .optional()?;
    if let Some(id) = found {
        return Ok(id);
    }
    tx.prepare_cached("INSERT INTO answer_bodies (hash, body) VALUES (?1, ?2)")?
        .execute(params![hash, body])?;
    Ok(tx.last_insert_rowid())
}

fn schema_version() -> i64 {
    MIGRATIONS.len() as i64
}

/// SQLite's two log files beside the database in `dir` (`-wal`, `-shm`).
fn log_file_paths(dir: &Path) -> [PathBuf; 2] {
    ["-wal", "-shm"].map(|end| dir.join(format!("{DB_FILE}{end}")))
}

/// Whether either of SQLite's log files is beside the database in `dir`.
pub fn log_files_present(dir: &Path) -> bool {
    log_file_paths(dir).iter().any(|p| p.exists())
}

/// Take away the log files that reading the database in `dir` made beside it, once it turned
/// out damaged or no store (it "is left as it is"): only when the log holds nothing, so no call
/// is lost.
/// For a reader that found none there before it opened the store.
pub fn remove_made_log_files(dir: &Path) {
    let [wal, shm] = log_file_paths(dir);
    if std::fs::metadata(&wal).map_or(0, |m| m.len()) == 0 {
        let _ = std::fs::remove_file(&wal);
        let _ = std::fs::remove_file(&shm);
    }
}

fn db_path(dir: &Path) -> PathBuf {
    dir.join(DB_FILE)
}

/// A failure to open the store that SQLite calls a disk I/O error, named for what it is: a
/// full disk when the disk holding `dir` has (almost) no room left (`free`, in bytes), else
/// an I/O failure. Other failures are kept as they are.
fn open_failure(dir: &Path, e: StoreError, free: Option<u64>) -> StoreError {
    let sql = match &e {
        StoreError::Sql(e) | StoreError::Open { source: e, .. } => Some(e),
        _ => None,
    };
    let code = sql.and_then(|e| e.sqlite_error_code());
    // Less than the -shm file and a page of log take.
    const ROOM: u64 = 256 << 10;
    match code {
        Some(rusqlite::ErrorCode::DiskFull) => StoreError::DiskFullAtOpen { path: db_path(dir) },
        Some(rusqlite::ErrorCode::SystemIoFailure) if free.is_some_and(|f| f < ROOM) => {
            StoreError::DiskFullAtOpen { path: db_path(dir) }
        }
        // SQLite's own words and its extended code (which call failed: a read, an fsync...).
        Some(rusqlite::ErrorCode::SystemIoFailure) => StoreError::IoFailureAtOpen {
            path: db_path(dir),
            detail: match sql {
                Some(rusqlite::Error::SqliteFailure(f, _)) => {
                    format!(
                        "{}, extended code {}",
                        sql.map_or_else(String::new, |e| e.to_string()),
                        f.extended_code
                    )
                }
                _ => sql.map_or_else(String::new, |e| e.to_string()),
            },
        },
        _ => e,
    }
}

/// What the system says of the file system that holds `dir`, if it says.
#[cfg(unix)]
fn file_system(dir: &Path) -> Option<libc::statvfs> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: statvfs only fills the struct it is given; zeroed is a valid value of it.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated and outlives the call; `st` is a valid out pointer.
    (unsafe { libc::statvfs(path.as_ptr(), &mut st) } == 0).then_some(st)
}

/// The bytes free to this user on the disk that holds `dir`, where the system says.
fn free_bytes(dir: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        let st = file_system(dir)?;
        #[allow(clippy::unnecessary_cast)] // u32 on some targets, u64 on others
        Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        None
    }
}

/// [`connect_rw`], with a failure that comes of a full disk, or of a read-only file or
/// directory (or mount), named as such. `stores`: for a store that takes calls (`listen`, the
/// window), not one only read (`log`, `show`).
fn connect(dir: &Path, durability: Durability, stores: bool) -> Result<Connection, StoreError> {
    check_entry(dir)?;
    connect_rw(dir, durability)
        .map_err(|e| open_failure(dir, e, free_bytes(dir)))
        .map_err(|e| match read_only_part(dir) {
            Some(what)
                if !matches!(
                    e,
                    StoreError::NotADirectory { .. }
                        | StoreError::CannotUpgrade { .. }
                        | StoreError::DiskFullAtOpen { .. }
                ) =>
            {
                let path = db_path(dir);
                match (on_read_only_mount(dir), stores) {
                    (true, true) => StoreError::ReadOnlyMount { path },
                    (true, false) => StoreError::ReadOnlyMountRead { path },
                    (false, _) => StoreError::ReadOnly { path, what },
                }
            }
            _ => e,
        })
}

/// Which part of the store this user cannot write, if one: its directory (where SQLite makes
/// the log files beside the database, even to read it), the database file, or a log file
/// beside it that another user's reading left behind.
fn read_only_part(dir: &Path) -> Option<String> {
    let file = db_path(dir);
    if dir.is_dir() && tempfile::tempfile_in(dir).is_err() {
        return Some(format!("its directory {}", dir.display()));
    }
    // A file without write permission for anyone, or one another user owns (its mode lets
    // only that user write). Asked, never opened: this process's SQLite connections may have
    // it open, and closing any descriptor of it would drop their locks.
    let denied = |path: &Path| {
        std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) || !may_write(path)
    };
    if denied(&file) {
        return Some("the file".to_owned());
    }
    for suffix in ["-wal", "-shm"] {
        let mut side = file.clone().into_os_string();
        side.push(suffix);
        let side = PathBuf::from(side);
        if side.exists() && denied(&side) {
            return Some(format!(
                "its log file {}, which another user's reading left behind (it may be removed while no Hookscope uses the store),",
                side.display()
            ));
        }
    }
    None
}

/// Whether `dir` is on a file system mounted read-only (false when it cannot be told): no
/// user may write there, so the error must not send the user to the owner or the modes.
#[cfg(unix)]
fn on_read_only_mount(dir: &Path) -> bool {
    file_system(dir).is_some_and(|st| st.f_flag & libc::ST_RDONLY != 0)
}

#[cfg(not(unix))]
fn on_read_only_mount(_dir: &Path) -> bool {
    false
}

/// Whether this user may write `path` (true when it cannot be told), by access(2), which
/// opens nothing.
#[cfg(unix)]
fn may_write(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call; access reads it only.
    let denied = unsafe { libc::access(c.as_ptr(), libc::W_OK) } != 0;
    let kind = std::io::Error::last_os_error().kind();
    !(denied
        && matches!(
            kind,
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
        ))
}

#[cfg(not(unix))]
fn may_write(_path: &Path) -> bool {
    true
}

/// A data directory this user may not enter (another user's, mode 700): said so, not as "no
/// database" or "cannot be written".
fn check_entry(dir: &Path) -> Result<(), StoreError> {
    match std::fs::metadata(db_path(dir)) {
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Err(StoreError::NoEntry {
            dir: dir.to_owned(),
        }),
        _ => Ok(()),
    }
}

/// Why a directory could not be created, in words: for a permission refused, the directory
/// that refused it (the nearest that exists), since the one asked for is not there to look at.
fn create_dir_words(path: &Path, e: &std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::PermissionDenied
        && let Some(parent) = path.ancestors().skip(1).find(|a| a.is_dir())
    {
        return format!(
            "permission denied: this user may not create directories in {} (see who owns it, and its mode)",
            parent.display()
        );
    }
    crate::text::io_words(e)
}

fn connect_rw(dir: &Path, durability: Durability) -> Result<Connection, StoreError> {
    if dir.exists() && !dir.is_dir() {
        return Err(StoreError::NotADirectory {
            path: dir.to_owned(),
        });
    }
    std::fs::create_dir_all(dir).map_err(|source| StoreError::CreateDir {
        path: dir.to_owned(),
        source,
    })?;
    let path = db_path(dir);
    if path.is_dir() {
        return Err(StoreError::DatabaseIsADirectory { path });
    }
    let open_err = |source| StoreError::Open {
        path: path.clone(),
        source,
    };
    let conn = Connection::open(&path).map_err(open_err)?;
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(open_err)?;
    // Before anything is written to it (the journal mode is written in the file).
    schema_found(&conn, &path)?;
    // Another process opening the same new store at the same moment (`listen` and the window
    // started together) may hold the lock the switch to WAL needs, which SQLite reports at
    // once rather than through the busy timeout: tried again for as long as the timeout.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        match conn.pragma_update(None, "journal_mode", "WAL") {
            Ok(()) => break,
            Err(e)
                if matches!(
                    e.sqlite_error_code(),
                    Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
                ) && std::time::Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(e) => return Err(open_err(e)),
        }
    }
    let sync = match durability {
        Durability::Full => "FULL",
        Durability::Normal => "NORMAL",
    };
    conn.pragma_update(None, "synchronous", sync)
        .map_err(open_err)?;
    register_functions(&conn).map_err(open_err)?;
    migrate(&conn, &path)?;
    Ok(conn)
}

/// The schema version of the database at `path`: 0 for an empty one. Another program's
/// database (tables, and no version of ours) and a newer Hookscope's are refused, untouched.
fn schema_found(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    // The version and the tables read in one snapshot: read apart, another process's first
    // migration could commit in between, and its tables look like another program's.
    conn.execute_batch("BEGIN")?;
    let found = schema_in_snapshot(conn, path);
    let _ = conn.execute_batch("COMMIT");
    found
}

fn schema_in_snapshot(conn: &Connection, path: &Path) -> Result<i64, StoreError> {
    let found: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .map_err(|e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => StoreError::NotSqlite {
                path: path.to_owned(),
            },
            _ => e.into(),
        })?;
    if found > schema_version() {
        return Err(StoreError::TooNew {
            path: path.to_owned(),
            found,
            known: schema_version(),
        });
    }
    if found == 0 {
        let tables: i64 = conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
            [],
            |r| r.get(0),
        )?;
        if tables > 0 {
            return Err(StoreError::NotHookscope {
                path: path.to_owned(),
            });
        }
    }
    Ok(found)
}

fn migrate(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let found = schema_found(conn, path)?;
    // A store an older Hookscope wrote, which this user may not write: said so, not as
    // SQLite's "attempt to write a readonly database".
    let cannot_upgrade = |e: rusqlite::Error| match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::ReadOnly) if found > 0 => StoreError::CannotUpgrade {
            path: path.to_owned(),
            found,
            current: schema_version(),
        },
        _ => e.into(),
    };
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = i as i64 + 1;
        // The version read again under the write lock: another process opening the same store
        // may have migrated it since (its CREATE TABLE then failed here with "already
        // exists").
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(cannot_upgrade)?;
        let step = (|| {
            let now: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
            if now < version {
                conn.execute_batch(&format!("{sql}; PRAGMA user_version = {version};"))?;
            }
            conn.execute_batch("COMMIT")
        })();
        if let Err(e) = step {
            let _ = conn.execute_batch("ROLLBACK");
            return Err(cannot_upgrade(e));
        }
    }
    Ok(())
}

type Ack = oneshot::Sender<Result<i64, StoreError>>;

/// What the writer is asked to do, in the order asked.
// Nearly every op is an insert, moved once into the channel: boxing it would cost an
// allocation per call to save space on the rare note.
#[allow(clippy::large_enum_variant)]
enum Op {
    Insert(Invocation),
    /// Add a finding to a stored call and set its outcome (a caller that hung up while its call
    /// was being committed).
    Note {
        id: i64,
        finding: Finding,
        outcome: Outcome,
        /// A finding code the note makes untrue, removed from the call.
        replaces: Option<&'static str>,
    },
    /// Fold the WAL into the database file and trim it, after everything sent before: a
    /// stopped store is then whole in `hookscope.sqlite3` alone (a copy of that one file holds
    /// every call).
    Fold,
}

/// Most invocations one commit gathers.
const MAX_BATCH: usize = 1024;

/// Frames (pages) in the WAL at which the checkpoint thread is asked for a pass (SQLite's own
/// automatic checkpoint uses 1000).
const CHECKPOINT_FRAMES: i64 = 1000;

/// Frames in the WAL at which the writer waits for the checkpoint thread's pass (24 MiB of
/// 4 KiB pages).
const CHECKPOINT_WAIT_FRAMES: i64 = 6000;

/// How far the WAL may grow before a restart trims it back (after a burst).
const WAL_SIZE_LIMIT: i64 = 64 << 20;

/// Checkpoints run on their own thread (and connection), so a commit rarely waits for the WAL to
/// be copied into the database file. `done` tells the writer that one has finished.
fn checkpoint_loop(
    conn: Connection,
    wake: std::sync::mpsc::Receiver<()>,
    done: std::sync::mpsc::SyncSender<()>,
) {
    while wake.recv().is_ok() {
        if let Err(e) = conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE)") {
            tracing::warn!("checkpoint failed (will retry): {e}");
        }
        // One pass at a time is asked for, so there is always room for this one.
        let _ = done.try_send(());
    }
    // The writer is gone: fold the WAL into the database and trim it.
    let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)");
    // Closed before `done` goes (parameters drop in reverse order, `done` first): the writer
    // waits for that to close its own connection last, alone.
    drop(conn);
    drop(done);
}

/// The writer's side of checkpointing.
///
/// A checkpoint on another connection copies the frames that were in the WAL when it began;
/// under steady load the writer appends more meanwhile, so the WAL is never wholly copied and
/// SQLite never starts it over: it would grow without end (and every new frame would cost the
/// file system a fresh block). So once the checkpoint thread has done the bulk, the writer copies
/// the few frames left itself, between two commits; the next commit then restarts the WAL from
/// its beginning, writing over pages the kernel already has.
///
/// And when the checkpoint thread falls behind (starved of CPU by other programs, or by a slow
/// disk), the writer waits for its pass once the WAL holds [`CHECKPOINT_WAIT_FRAMES`]: calls
/// are answered more slowly for a moment, but the WAL stays bounded whatever the machine does.
struct Checkpoints {
    wake: std::sync::mpsc::SyncSender<()>,
    done: std::sync::mpsc::Receiver<()>,
    /// Frames in the WAL after the last commit (from SQLite's WAL hook).
    frames: Arc<std::sync::atomic::AtomicI64>,
    pending: bool,
    /// A checkpoint was just finished: the next commit restarts the WAL.
    restarting: bool,
}

impl Checkpoints {
    fn after_commit(&mut self, conn: &Connection) {
        let frames = self.frames.load(std::sync::atomic::Ordering::Relaxed);
        if std::mem::take(&mut self.restarting) {
            // Ask for the next pass only now: a pass running while a transaction starts the WAL
            // over (it takes the read-mark locks) makes SQLite append instead.
            return;
        }
        if self.pending {
            let finished = if frames >= CHECKPOINT_WAIT_FRAMES {
                tracing::debug!("waiting for the checkpoint thread ({frames} frames in the WAL)");
                // Err: the checkpoint thread is gone; nothing to wait for.
                let _ = self.done.recv();
                true
            } else {
                self.done.try_recv().is_ok()
            };
            if finished {
                self.pending = false;
                self.restarting = true;
                if let Err(e) = conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE)") {
                    tracing::warn!("checkpoint failed (will retry): {e}");
                }
            }
            return;
        }
        if frames >= CHECKPOINT_FRAMES {
            self.pending = self.wake.try_send(()).is_ok();
        }
    }
}

/// With `HOOKSCOPE_STORE_STATS` set, the writer prints to stderr, every [`STATS_EVERY`] rows,
/// what its commits cost: rows per commit, time waiting for the first row of a commit, time
/// inserting and committing (with the fsync), and on Linux its time on a core and waiting for
/// one. The figures in the README's Performance section come from it.
struct WriterStats {
    on: bool,
    commits: u64,
    rows: u64,
    waiting: std::time::Duration,
    writing: std::time::Duration,
    sched: Option<(u64, u64)>,
}

const STATS_EVERY: u64 = 30_000;

impl WriterStats {
    fn from_env() -> WriterStats {
        WriterStats::new(std::env::var_os("HOOKSCOPE_STORE_STATS").is_some_and(|v| !v.is_empty()))
    }

    /// Counting from now; nothing is read from `/proc` unless the figures are wanted.
    fn new(on: bool) -> WriterStats {
        WriterStats {
            on,
            commits: 0,
            rows: 0,
            waiting: std::time::Duration::ZERO,
            writing: std::time::Duration::ZERO,
            sched: if on { thread_schedstat() } else { None },
        }
    }

    fn committed(
        &mut self,
        rows: usize,
        waiting: std::time::Duration,
        writing: std::time::Duration,
    ) {
        if !self.on {
            return;
        }
        self.commits += 1;
        self.rows += rows as u64;
        self.waiting += waiting;
        self.writing += writing;
        if self.rows < STATS_EVERY {
            return;
        }
        let n = self.commits as f64;
        let us = |d: std::time::Duration| d.as_secs_f64() * 1e6 / n;
        let sched = match (self.sched, thread_schedstat()) {
            (Some((cpu0, wait0)), Some((cpu1, wait1))) => format!(
                ", on a core {:.0} µs, waiting for a core {:.0} µs",
                cpu1.saturating_sub(cpu0) as f64 / 1e3 / n,
                wait1.saturating_sub(wait0) as f64 / 1e3 / n
            ),
            _ => String::new(),
        };
        crate::say!(
            "store: {} commits, {:.1} rows each; per commit: waiting for a row {:.0} µs, inserting and committing {:.0} µs{sched}",
            self.commits,
            self.rows as f64 / n,
            us(self.waiting),
            us(self.writing),
        );
        *self = WriterStats::new(true);
    }
}

/// This thread's time on a core and waiting for one, in nanoseconds (Linux only).
fn thread_schedstat() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??))
}

fn writer_loop(
    mut conn: Connection,
    mut rx: mpsc::Receiver<(Op, Ack)>,
    mut checkpoints: Checkpoints,
) {
    let mut batch: Vec<(Op, Ack)> = Vec::with_capacity(MAX_BATCH);
    let mut stats = WriterStats::from_env();
    let mut idle_since = std::time::Instant::now();
    // Said once when storing starts to fail, and once when it works again: a full disk logged
    // two lines per call.
    let mut failing = false;
    let path = conn.path().unwrap_or_default().to_owned();
    while let Some(first) = rx.blocking_recv() {
        let started = std::time::Instant::now();
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(next) => batch.push(next),
                Err(_) => break,
            }
        }
        let rows = batch.len();
        let written = write_batch(&mut conn, &batch);
        stats.committed(rows, started - idle_since, started.elapsed());
        if written.is_ok()
            && batch.iter().any(|(op, _)| matches!(op, Op::Fold))
            && let Err(e) = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        {
            tracing::warn!("folding the log into the database failed: {e}");
        }
        match written {
            // Said once a call is stored again, not when only a fold (at a stop) went through:
            // "stored again" had followed a failed fold on a full disk.
            Ok(ids) => {
                if stored_again(&batch, &mut failing) {
                    tracing::warn!("calls are stored again: the store can be written to");
                }
                for ((_, ack), id) in batch.drain(..).zip(ids) {
                    let _ = ack.send(Ok(id));
                }
            }
            Err(e) => {
                let msg = commit_failure(&e, &path);
                if !std::mem::replace(&mut failing, true) {
                    tracing::error!(
                        "calls cannot be stored: {msg}; each is answered 503 (the service retries it) until they can"
                    );
                }
                for (_, ack) in batch.drain(..) {
                    let _ = ack.send(Err(StoreError::Commit(msg.clone())));
                }
            }
        }
        checkpoints.after_commit(&conn);
        idle_since = std::time::Instant::now();
    }
    // The checkpoint thread folds the log and closes its connection first, and this one closes
    // last, alone: SQLite removes the -wal and -shm only when the connection closing is the
    // only one open, and two closing at once each saw the other and left them.
    let Checkpoints { wake, done, .. } = checkpoints;
    drop(wake);
    while done.recv().is_ok() {}
    drop(conn);
}

/// Whether a batch committed after failures (`failing`) stored a call again, which is then
/// news; a batch with no call in it (a fold at a stop) says nothing of that, and leaves
/// `failing` as it was.
fn stored_again(batch: &[(Op, Ack)], failing: &mut bool) -> bool {
    batch.iter().any(|(op, _)| matches!(op, Op::Insert(_))) && std::mem::take(failing)
}

/// Why a commit failed, in words a person can act on: a full disk is named with what to do,
/// not as SQLite's "database or disk is full".
fn commit_failure(e: &StoreError, path: &str) -> String {
    let code = match e {
        StoreError::Sql(e) => e.sqlite_error_code(),
        _ => None,
    };
    match code {
        Some(rusqlite::ErrorCode::DiskFull) => format!(
            "the disk holding {path} is full: free some space there (or give --data-dir a directory on another disk)"
        ),
        Some(rusqlite::ErrorCode::ReadOnly) => format!(
            "{path} can no longer be written (its file system was made read-only, or its mode changed)"
        ),
        Some(rusqlite::ErrorCode::SystemIoFailure) => {
            format!("the disk holding {path} failed to write (an I/O error: see the system's log)")
        }
        _ => e.to_string(),
    }
}

fn write_batch(conn: &mut Connection, batch: &[(Op, Ack)]) -> Result<Vec<i64>, StoreError> {
    // Begun as a writer: a transaction that reads first (a shared answer body looked up) holds
    // a snapshot that another process's commit makes stale, and SQLite then refuses the write
    // at once ("database is locked") rather than waiting out the busy timeout.
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let mut ids = Vec::with_capacity(batch.len());
    {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO invocations (received_at_us, method, path, query, headers, body, body_size,
                declared_size, body_kept, peer, event, delivery, attempt, webhook_id, messages,
                registration_check, findings, findings_count, answer_status, answer_headers,
                answer_body, answer_delay_ms, outcome, took_us, rule, answer_body_id, listed_as)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27)",
        )?;
        for (op, _) in batch {
            let inv = match op {
                Op::Insert(inv) => inv,
                Op::Note {
                    id,
                    finding,
                    outcome,
                    replaces,
                } => {
                    let finding = serde_json::to_string(finding)
                        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
                    // Every SET reads the row as it was: the findings kept, then the note.
                    tx.prepare_cached(
                        "UPDATE invocations SET
                            findings = json_insert((SELECT json_group_array(json(value))
                                FROM json_each(findings)
                                WHERE json_extract(value, '$.code') IS NOT ?4), '$[#]', json(?1)),
                            findings_count = (SELECT count(*) FROM json_each(findings)
                                WHERE json_extract(value, '$.code') IS NOT ?4) + 1,
                            outcome = ?2,
                            -- Every note is of an answer that never went: no Retry-After read,
                            -- and a temporary failure is a late one.
                            listed_as = CASE WHEN listed_as = 2 THEN 2
                                WHEN ?2 = 'retry-temporary' THEN 3 ELSE 0 END
                         WHERE id = ?3",
                    )?
                    .execute(params![
                        finding,
                        outcome.as_str(),
                        id,
                        replaces
                    ])?;
                    ids.push(*id);
                    continue;
                }
                Op::Fold => {
                    ids.push(0);
                    continue;
                }
            };
            let headers = serde_json::to_string(&inv.headers)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let findings = serde_json::to_string(&inv.findings)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let answer_headers = serde_json::to_string(&inv.answer.headers)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let (answer_body, answer_body_id) = if inv.answer.body.len() >= SHARED_ANSWER_MIN {
                (&[][..], Some(shared_answer_body(&tx, &inv.answer.body)?))
            } else {
                (&inv.answer.body[..], None)
            };
            stmt.execute(params![
                inv.received_at.timestamp_micros(),
                inv.method,
                inv.path,
                inv.query,
                headers,
                inv.body,
                inv.body_size as i64,
                inv.declared_size.map(|s| s as i64),
                inv.body_kept,
                inv.peer,
                inv.event,
                inv.delivery,
                inv.attempt,
                inv.webhook_id,
                inv.messages,
                inv.registration_check,
                findings,
                inv.findings.len() as i64,
                inv.answer.status,
                answer_headers,
                answer_body,
                inv.answer.delay_ms as i64,
                inv.outcome().as_str(),
                inv.took_us as i64,
                inv.rule,
                answer_body_id,
                listed_as(inv),
            ])?;
            ids.push(tx.last_insert_rowid());
        }
    }
    tx.commit()?;
    Ok(ids)
}

fn micros_to_time(us: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_micros(us).unwrap_or_default()
}

fn json_col<T: serde::de::DeserializeOwned>(row: &Row<'_>, col: &str) -> rusqlite::Result<T> {
    let text: String = row.get(col)?;
    serde_json::from_str(&text).map_err(|error| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            Box::new(BadJson {
                column: col.to_owned(),
                error,
            }),
        )
    })
}

fn outcome_col(row: &Row<'_>) -> rusqlite::Result<Outcome> {
    // As stored (a call answered too late, or not at all, is a temporary failure whatever its
    // code); from the status if the text is damaged.
    let text: Option<String> = row.get("outcome")?;
    match text.as_deref().and_then(Outcome::parse) {
        Some(outcome) => Ok(outcome),
        None => Ok(crate::contract::outcome_of(row.get("answer_status")?)),
    }
}

const SUMMARY_COLUMNS: &str = concat!(
    "id, received_at_us, method, path, event, delivery, attempt, \
    webhook_id, messages, answer_status, outcome, body_size, findings_count, registration_check, rule, took_us, \
    CASE WHEN findings_count > 0 AND json_valid(findings) THEN (SELECT max(CASE json_extract(value, '$.severity') \
        WHEN 'error' THEN 2 WHEN 'warning' THEN 1 ELSE 0 END) FROM json_each(findings) WHERE type = 'object') END AS worst, ",
    not_http_sql!(),
    " AS not_http, ",
    unanswered_sql!(),
    " AS unanswered, ",
    retry_after_sql!(),
    " AS retry_after, \
    CASE WHEN findings_count = 0 THEN NULL WHEN NOT json_valid(findings) THEN findings \
        WHEN json_type(findings) = 'array' THEN NULL ELSE findings END AS findings"
);

/// The SQL function `retry_after_discards_sql!` calls, registered on every connection: whether
/// a Retry-After (text, or NULL) given with a code at a time (microseconds) leaves no retry,
/// read by the same code as the window's rows.
const RETRY_AFTER_DISCARDS_FN: &str = "hs_retry_after_discards";

fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        RETRY_AFTER_DISCARDS_FN,
        3,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            // Whatever a tampered row holds, an answer: not discarded.
            let status = ctx.get::<Option<i64>>(0).ok().flatten();
            let retry_after = ctx.get::<Option<String>>(1).ok().flatten();
            let at = ctx.get::<Option<i64>>(2).ok().flatten();
            Ok(match (status.and_then(|s| u16::try_from(s).ok()), at) {
                (Some(status), Some(at)) => {
                    retry_after_discards(status, retry_after.as_deref(), false, micros_to_time(at))
                }
                _ => false,
            })
        },
    )
}

fn summary_row(row: &Row<'_>) -> rusqlite::Result<Summary> {
    record_row(row, summary_fields)
}

fn summary_fields(row: &Row<'_>) -> rusqlite::Result<Summary> {
    // The findings as written by hand, when they are not a JSON array (the SQL above reads
    // none of them then: one such record had failed the whole page, `log` listing nothing).
    if let Some(damaged) = row.get::<_, Option<String>>("findings")? {
        let error = match serde_json::from_str::<Vec<Finding>>(&damaged) {
            Err(e) => e,
            Ok(_) => serde_json::from_str::<Vec<Finding>>("{}")
                .err()
                .unwrap_or_else(|| serde::de::Error::custom("not an array")),
        };
        return Err(rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            Box::new(BadJson {
                column: "findings".into(),
                error,
            }),
        ));
    }
    Ok(Summary {
        id: row.get("id")?,
        received_at: micros_to_time(row.get("received_at_us")?),
        method: row.get("method")?,
        path: row.get("path")?,
        // Not read for the list's rows, which never show it (a target's query can be tens
        // of KB); `Summary::of` a whole record has it.
        query: None,
        event: row.get("event")?,
        delivery: row.get("delivery")?,
        attempt: row.get("attempt")?,
        webhook_id: row.get("webhook_id")?,
        messages: row.get("messages")?,
        answer_status: row.get("answer_status")?,
        outcome: outcome_col(row)?,
        body_size: row.get::<_, i64>("body_size")? as u64,
        findings: row.get("findings_count")?,
        worst: row.get::<_, Option<i64>>("worst")?.map(|rank| match rank {
            2 => Severity::Error,
            1 => Severity::Warning,
            _ => Severity::Info,
        }),
        registration_check: row.get("registration_check")?,
        rule: row.get("rule")?,
        took_us: row.get::<_, i64>("took_us")?.max(0) as u64,
        not_http: row.get::<_, Option<bool>>("not_http")?.unwrap_or(false),
        unanswered: row.get::<_, Option<bool>>("unanswered")?.unwrap_or(false),
        // Text as Hookscope writes it; anything else changed by hand is no Retry-After.
        retry_after: match row.get::<_, rusqlite::types::Value>("retry_after")? {
            rusqlite::types::Value::Text(t) => Some(t),
            _ => None,
        },
    })
}

fn stored_row(row: &Row<'_>) -> rusqlite::Result<Stored> {
    record_row(row, stored_fields)
}

fn stored_fields(row: &Row<'_>) -> rusqlite::Result<Stored> {
    Ok(Stored {
        id: row.get("id")?,
        inv: Invocation {
            received_at: micros_to_time(row.get("received_at_us")?),
            method: row.get("method")?,
            path: row.get("path")?,
            query: row.get("query")?,
            headers: json_col(row, "headers")?,
            body: row.get("body")?,
            body_size: row.get::<_, i64>("body_size")? as u64,
            declared_size: row
                .get::<_, Option<i64>>("declared_size")?
                .map(|s| s as u64),
            body_kept: row.get("body_kept")?,
            peer: row.get("peer")?,
            event: row.get("event")?,
            delivery: row.get("delivery")?,
            attempt: row.get("attempt")?,
            webhook_id: row.get("webhook_id")?,
            messages: row.get("messages")?,
            registration_check: row.get("registration_check")?,
            findings: json_col(row, "findings")?,
            answer: SentAnswer {
                status: row.get("answer_status")?,
                headers: json_col(row, "answer_headers")?,
                body: match (
                    row.get::<_, Option<Vec<u8>>>("shared_answer_body")?,
                    row.get::<_, Option<i64>>("answer_body_id")?,
                ) {
                    (Some(shared), _) => bytes::Bytes::from(shared),
                    (None, Some(id)) => {
                        return Err(rusqlite::Error::FromSqlConversionFailure(
                            0,
                            rusqlite::types::Type::Null,
                            Box::new(MissingAnswerBody(id)),
                        ));
                    }
                    (None, None) => bytes::Bytes::from(row.get::<_, Vec<u8>>("answer_body")?),
                },
                delay_ms: row.get::<_, i64>("answer_delay_ms")? as u64,
            },
            took_us: row.get::<_, i64>("took_us")? as u64,
            rule: row.get("rule")?,
        },
    })
}

/// A call answered 410 that cancelled its webhook, and when the webhook was set up again
/// after it (a registration check passed at its URL), if it was.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cancel {
    /// When the call answered 410 arrived.
    pub at: DateTime<Utc>,
    /// When its answer was ready (`at` plus the time it took; the commit and the network come
    /// after): the service cannot stop calling before it reads the 410, so a call that arrives
    /// between `at` and then was already on its way.
    pub answered: DateTime<Utc>,
    /// The call answered 410.
    pub id: i64,
    pub lifted: Option<DateTime<Utc>>,
}

/// The invocation store. Cheap to clone; reads are blocking (call them off the UI thread),
/// inserts are async and resolve once committed.
#[derive(Clone)]
pub struct Store {
    dir: PathBuf,
    // Before the writer: a store dropped closes its reading connection first, so the writer's
    // closes last, alone, and SQLite removes the log files (see `writer_loop`).
    reader: Arc<Mutex<Connection>>,
    writer: Option<mpsc::Sender<(Op, Ack)>>,
    /// The writer's and checkpointer's threads, joined by [`Store::close`].
    threads: Arc<Mutex<Vec<std::thread::JoinHandle<()>>>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("dir", &self.dir).finish()
    }
}

/// A row handed to the writer: resolves with its id once it is committed.
#[must_use = "the row is stored either way; await this to know when, and its id"]
pub struct Committing(oneshot::Receiver<Result<i64, StoreError>>);

impl std::future::Future for Committing {
    type Output = Result<i64, StoreError>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        std::pin::Pin::new(&mut self.0)
            .poll(cx)
            .map(|r| r.unwrap_or(Err(StoreError::WriterGone)))
    }
}

impl Store {
    /// Open (creating and migrating) the store in `dir`, with a writer thread for inserts.
    pub fn open(dir: &Path, durability: Durability) -> Result<Store, StoreError> {
        let mut write_conn = connect(dir, durability, true)?;
        // SQLite opens a file it may not write (another user's, mode 644) read-only without a
        // word, and every call stored later failed ("attempt to write a readonly database"):
        // refused now, named, as is a log file beside it another user's reading left. (Reading
        // such a store is fine: `open_read`.)
        let read_only = write_conn.is_readonly(rusqlite::MAIN_DB).unwrap_or(false);
        if on_read_only_mount(dir) {
            return Err(StoreError::ReadOnlyMount { path: db_path(dir) });
        }
        if let Some(what) = read_only_part(dir).or_else(|| read_only.then(|| "the file".into())) {
            return Err(StoreError::NotWritable {
                path: db_path(dir),
                what,
            });
        }
        write_conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        write_conn.pragma_update(None, "journal_size_limit", WAL_SIZE_LIMIT)?;
        let checkpoint_conn = connect(dir, durability, true)?;
        let reader = connect(dir, durability, true)?;
        let (tx, rx) = mpsc::channel(8 * MAX_BATCH);
        let (wake_tx, wake_rx) = std::sync::mpsc::sync_channel(1);
        let (done_tx, done_rx) = std::sync::mpsc::sync_channel(1);
        let frames = Arc::new(std::sync::atomic::AtomicI64::new(0));
        let seen = frames.clone();
        // After `wal_autocheckpoint`, which would replace it.
        write_conn.wal_hook(Some(move |_: &mut rusqlite::hooks::Wal, pages: i32| {
            seen.store(i64::from(pages), std::sync::atomic::Ordering::Relaxed);
            Ok(())
        }))?;
        let checkpoints = Checkpoints {
            wake: wake_tx,
            done: done_rx,
            frames,
            pending: false,
            restarting: false,
        };
        let thread_err = |source| StoreError::CreateDir {
            path: dir.to_owned(),
            source,
        };
        let checkpointer = std::thread::Builder::new()
            .name("hookscope-store-checkpoint".into())
            .spawn(move || checkpoint_loop(checkpoint_conn, wake_rx, done_tx))
            .map_err(thread_err)?;
        let writer = std::thread::Builder::new()
            .name("hookscope-store-writer".into())
            .spawn(move || writer_loop(write_conn, rx, checkpoints))
            .map_err(thread_err)?;
        Ok(Store {
            dir: dir.to_owned(),
            writer: Some(tx),
            reader: Arc::new(Mutex::new(reader)),
            threads: Arc::new(Mutex::new(vec![writer, checkpointer])),
        })
    }

    /// Open the store for queries only (no writer thread).
    /// Reading never creates anything: a directory without a database is an error (a mistyped
    /// `--data-dir` must not look like an empty store).
    pub fn open_read(dir: &Path) -> Result<Store, StoreError> {
        // The directory, or the nearest part of its path that exists (`a-file/sub`): a file
        // there means the path cannot be a directory, which is not "nothing stored yet".
        if let Some(file) = dir.ancestors().find(|a| a.exists()).filter(|a| !a.is_dir()) {
            return Err(StoreError::NotADirectoryToRead {
                path: file.to_owned(),
            });
        }
        let path = db_path(dir);
        if path.is_dir() {
            return Err(StoreError::DatabaseIsADirectory { path });
        }
        let no_database = || StoreError::NoDatabase {
            dir: dir.to_owned(),
        };
        check_entry(dir)?;
        if !path.is_file() {
            return Err(no_database());
        }
        // An empty file is not a store either: reading must not make it one.
        let probe = Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|source| StoreError::Open {
                path: path.clone(),
                source,
            })?;
        // Reading writes the index of the log beside the database: a directory this user may
        // not write is named, not SQLite's "attempt to write a readonly database".
        let found = schema_found(&probe, &path)
            .map_err(|e| open_failure(dir, e, free_bytes(dir)))
            .map_err(|e| match read_only_part(dir) {
                Some(_) if matches!(e, StoreError::Sql(_)) && on_read_only_mount(dir) => {
                    StoreError::ReadOnlyMountRead { path: path.clone() }
                }
                Some(what) if matches!(e, StoreError::Sql(_)) => StoreError::ReadOnly {
                    path: path.clone(),
                    what,
                },
                _ => e,
            })?;
        if found == 0 {
            // The log is what would hold the calls: a file that ever was a store, without it,
            // is named for that (a copy of the file alone had read "nothing has been stored").
            let [wal, _] = log_file_paths(dir);
            let was_a_store = std::fs::metadata(&path).is_ok_and(|m| m.len() > 0);
            let log_empty = std::fs::metadata(&wal).map_or(true, |m| m.len() == 0);
            if was_a_store && log_empty {
                return Err(StoreError::WithoutItsLog {
                    path: path.clone(),
                    wal: format!("{DB_FILE}-wal"),
                });
            }
            return Err(no_database());
        }
        drop(probe);
        let reader = connect(dir, Durability::Normal, false)?;
        Ok(Store {
            dir: dir.to_owned(),
            writer: None,
            reader: Arc::new(Mutex::new(reader)),
            threads: Arc::default(),
        })
    }

    /// Close this handle, and when it is the store's last, wait until everything sent to it
    /// is committed and its connections are closed: SQLite then folds its log into the file
    /// and removes the `-wal` and `-shm` beside it. (A handle merely dropped closes the same
    /// way, but on the writer's own thread, a moment later: another process looking at the
    /// directory meanwhile still sees the log files.) Blocks: not for the UI thread.
    pub fn close(self) {
        self.close_within(std::time::Duration::ZERO);
    }

    /// [`Store::close`], waiting up to `wait` for the store's other handles to go first (at a
    /// stop, the receiver's last connections let go of theirs a moment after it has stopped).
    pub fn close_within(self, wait: std::time::Duration) {
        let Store {
            writer,
            reader,
            mut threads,
            ..
        } = self;
        drop(reader);
        drop(writer);
        let deadline = std::time::Instant::now() + wait;
        let threads = loop {
            match Arc::try_unwrap(threads) {
                Ok(threads) => break threads,
                Err(_) if std::time::Instant::now() >= deadline => return,
                Err(shared) => {
                    threads = shared;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
        };
        let threads = threads.into_inner().unwrap_or_else(|e| e.into_inner());
        for thread in threads {
            // A thread that panicked has already let go of its connection.
            let _ = thread.join();
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn db_path(&self) -> PathBuf {
        db_path(&self.dir)
    }

    /// The write-ahead log beside the database file (SQLite's own naming).
    pub fn wal_path(&self) -> PathBuf {
        let mut name = self.db_path().into_os_string();
        name.push("-wal");
        PathBuf::from(name)
    }

    /// Store one invocation; resolves with its id once it is committed.
    pub async fn insert(&self, inv: Invocation) -> Result<i64, StoreError> {
        self.submit(inv)?.await
    }

    /// Hand one invocation to the writer now; the returned future resolves with its id once it
    /// is committed. Dropping the future does not take the row back.
    pub fn submit(&self, inv: Invocation) -> Result<Committing, StoreError> {
        self.send(Op::Insert(inv))
    }

    /// Add `finding` to the stored call `id` and set its outcome to `outcome`; resolves once
    /// that is committed.
    pub async fn note(
        &self,
        id: i64,
        finding: Finding,
        outcome: Outcome,
    ) -> Result<(), StoreError> {
        self.note_replacing(id, finding, outcome, None).await
    }

    /// [`Store::note`], taking away the finding coded `replaces` that the note makes untrue.
    pub async fn note_replacing(
        &self,
        id: i64,
        finding: Finding,
        outcome: Outcome,
        replaces: Option<&'static str>,
    ) -> Result<(), StoreError> {
        self.send(Op::Note {
            id,
            finding,
            outcome,
            replaces,
        })?
        .await
        .map(|_| ())
    }

    /// Fold the write-ahead log into the database file once everything sent before is
    /// committed, so the file alone holds every call (for a stop: a user who copies
    /// `hookscope.sqlite3` without its `-wal` must not lose calls).
    pub async fn fold(&self) -> Result<(), StoreError> {
        self.send(Op::Fold)?.await.map(|_| ())
    }

    /// [`Store::fold`] at a stop: waits up to 10 s (a slow disk), and says on the log when the
    /// fold could not be done (the calls are safe all the same, in the `-wal` beside the file).
    pub async fn fold_before_exit(&self) {
        match tokio::time::timeout(std::time::Duration::from_secs(10), self.fold()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!(
                "the store's log was not folded into {}: {e}; keep the -wal file beside it",
                db_path(&self.dir).display()
            ),
            Err(_) => tracing::warn!(
                "the store's log was not folded into {} within 10 s; keep the -wal file beside it",
                db_path(&self.dir).display()
            ),
        }
    }

    fn send(&self, op: Op) -> Result<Committing, StoreError> {
        let writer = self.writer.as_ref().ok_or(StoreError::WriterGone)?;
        let (ack, done) = oneshot::channel();
        // Handed over before the first await: a caller that stops waiting (the client of the
        // call hung up) cannot take the row back, so an accepted call is always stored.
        match writer.try_send((op, ack)) {
            Ok(()) => {}
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(StoreError::WriterGone),
            Err(mpsc::error::TrySendError::Full(item)) => {
                match tokio::runtime::Handle::try_current() {
                    Ok(rt) => {
                        let writer = writer.clone();
                        rt.spawn(async move { writer.send(item).await });
                    }
                    // Outside a runtime (a plain thread): wait for room here.
                    Err(_) => writer
                        .blocking_send(item)
                        .map_err(|_| StoreError::WriterGone)?,
                }
            }
        }
        Ok(Committing(done))
    }

    fn with_reader<T>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.with_reader_unless(None, f)
    }

    /// Read with the reader connection, giving up with [`StoreError::Superseded`] as soon as
    /// `stale` says nobody waits any more: a search through a large store's bodies takes
    /// seconds, and the window's other reads (a call's detail, the list without the search)
    /// wait for the reader meanwhile.
    fn with_reader_unless<T>(
        &self,
        stale: Option<Stale>,
        f: impl FnOnce(&Connection) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        // A panic while holding the lock cannot leave the connection half-changed: reads only.
        let mut conn = self.reader.lock().unwrap_or_else(|p| p.into_inner());
        let Some(stale) = stale else {
            // None left over from a read that panicked may give this one up.
            conn.progress_handler(0, None::<fn() -> bool>)?;
            return f(&conn);
        };
        conn.progress_handler(STALE_CHECK_OPS, Some(stale))?;
        let out = f(&conn);
        conn.progress_handler(0, None::<fn() -> bool>)?;
        match out {
            Err(StoreError::Sql(e))
                if e.sqlite_error_code() == Some(rusqlite::ErrorCode::OperationInterrupted) =>
            {
                Err(StoreError::Superseded)
            }
            other => other,
        }
    }

    /// How many invocations match.
    pub fn count(&self, filter: &Filter) -> Result<u64, StoreError> {
        self.with_reader(|c| {
            let (clause, args) = filter.sql();
            let n: i64 = c.query_row(
                &format!("SELECT COUNT(*) FROM invocations {clause}"),
                rusqlite::params_from_iter(args),
                |r| r.get(0),
            )?;
            Ok(n as u64)
        })
    }

    /// A page of matching invocations, newest first, skipping `offset` rows.
    pub fn page(
        &self,
        filter: &Filter,
        offset: u64,
        limit: u64,
    ) -> Result<Vec<Summary>, StoreError> {
        self.page_each(filter, offset, limit)?.into_iter().collect()
    }

    /// [`Store::page`] with each row read on its own: a record that cannot be read (changed by
    /// hand) is an error in its place, and the others are still read.
    pub fn page_each(
        &self,
        filter: &Filter,
        offset: u64,
        limit: u64,
    ) -> Result<Vec<Result<Summary, StoreError>>, StoreError> {
        self.with_reader(|c| {
            let (clause, mut args) = filter.sql();
            args.push(rusqlite::types::Value::Integer(limit.min(i64::MAX as u64) as i64));
            args.push(rusqlite::types::Value::Integer(offset.min(i64::MAX as u64) as i64));
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM invocations {clause} ORDER BY id DESC LIMIT ? OFFSET ?"
            ))?;
            let rows = stmt.query_map(rusqlite::params_from_iter(args), summary_row)?;
            let mut out = Vec::new();
            for row in rows {
                match row {
                    Ok(s) => out.push(Ok(s)),
                    // A value out of place in one row: said in its place.
                    Err(e) if bad_record(&e).is_some() => out.push(Err(e.into())),
                    // The file itself, or the read: no more rows can come.
                    Err(e) => return Err(e.into()),
                }
            }
            Ok(out)
        })
    }

    /// A page of matching invocations older than `before_id` (newest first).
    pub fn page_before(
        &self,
        filter: &Filter,
        before_id: Option<i64>,
        limit: u64,
    ) -> Result<Vec<Summary>, StoreError> {
        self.with_reader(|c| {
            let (clause, mut args) = filter.sql();
            let clause = match (clause.is_empty(), before_id) {
                (_, None) => clause,
                (true, Some(_)) => "WHERE id < ?".to_owned(),
                (false, Some(_)) => format!("{clause} AND id < ?"),
            };
            if let Some(id) = before_id {
                args.push(rusqlite::types::Value::Integer(id));
            }
            args.push(rusqlite::types::Value::Integer(
                limit.min(i64::MAX as u64) as i64
            ));
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM invocations {clause} ORDER BY id DESC LIMIT ?"
            ))?;
            let rows = stmt.query_map(rusqlite::params_from_iter(args), summary_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// One invocation in full.
    pub fn get(&self, id: i64) -> Result<Option<Stored>, StoreError> {
        self.with_reader(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {FULL_COLUMNS} FROM invocations WHERE id = ?"
            ))?;
            Ok(stmt.query_row([id], stored_row).optional()?)
        })
    }

    /// [`Store::get`] without reading the bodies (both come back empty; `body_size` is kept):
    /// for `log --json`, which prints neither, over calls that may be hundreds of MiB each.
    pub fn get_without_bodies(&self, id: i64) -> Result<Option<Stored>, StoreError> {
        self.with_reader(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {WITHOUT_BODIES} FROM invocations WHERE id = ?"
            ))?;
            Ok(stmt.query_row([id], stored_row).optional()?)
        })
    }

    /// Every attempt of one delivery, oldest first, without their bodies (as
    /// [`Store::get_without_bodies`]: the analysis reads none, and 195 attempts each answered
    /// with the one shared 2 MB body took 460 MB to read). With `webhook_id`, only that
    /// webhook's.
    pub fn by_delivery(
        &self,
        delivery: &str,
        webhook_id: Option<&str>,
    ) -> Result<Vec<Stored>, StoreError> {
        self.with_reader(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {WITHOUT_BODIES} FROM invocations WHERE delivery = ?1 AND (?2 IS NULL OR webhook_id = ?2) ORDER BY id ASC"
            ))?;
            let rows = stmt.query_map(params![delivery, webhook_id], stored_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// A page of a snapshot: matching invocations with an id no greater than `top`, newest
    /// first, skipping `offset`. A list keeps `top` fixed while it scrolls so rows do not shift
    /// as calls arrive.
    ///
    /// Without a filter this is a key lookup, as fast at row 900,000 as at row 0: ids are dense
    /// (rows are never deleted, and SQLite gives each new row the largest id plus one).
    pub fn page_at(
        &self,
        filter: &Filter,
        top: i64,
        offset: u64,
        limit: u64,
    ) -> Result<Vec<Summary>, StoreError> {
        self.page_at_unless(filter, top, offset, limit, None)
    }

    /// [`Store::page_at`], given up once `stale` says so.
    pub fn page_at_unless(
        &self,
        filter: &Filter,
        top: i64,
        offset: u64,
        limit: u64,
        stale: Option<Stale>,
    ) -> Result<Vec<Summary>, StoreError> {
        if filter.is_empty() {
            let from = top.saturating_sub(offset.min(i64::MAX as u64) as i64);
            return self.page_before(filter, Some(from.saturating_add(1)), limit);
        }
        self.with_reader_unless(stale, |c| {
            let (clause, mut args) = filter.sql();
            args.push(rusqlite::types::Value::Integer(top));
            args.push(rusqlite::types::Value::Integer(limit.min(i64::MAX as u64) as i64));
            args.push(rusqlite::types::Value::Integer(offset.min(i64::MAX as u64) as i64));
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {SUMMARY_COLUMNS} FROM invocations {clause} AND id <= ? ORDER BY id DESC LIMIT ? OFFSET ?"
            ))?;
            let rows = stmt.query_map(rusqlite::params_from_iter(args), summary_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
    }

    /// How many matching invocations have an id no greater than `top`.
    pub fn count_at(&self, filter: &Filter, top: i64) -> Result<u64, StoreError> {
        self.count_at_unless(filter, top, None)
    }

    /// [`Store::count_at`], given up once `stale` says so.
    pub fn count_at_unless(
        &self,
        filter: &Filter,
        top: i64,
        stale: Option<Stale>,
    ) -> Result<u64, StoreError> {
        if filter.is_empty() {
            return Ok(top.max(0) as u64);
        }
        self.with_reader_unless(stale, |c| {
            let (clause, mut args) = filter.sql();
            args.push(rusqlite::types::Value::Integer(top));
            let n: i64 = c.query_row(
                &format!("SELECT COUNT(*) FROM invocations {clause} AND id <= ?"),
                rusqlite::params_from_iter(args),
                |r| r.get(0),
            )?;
            Ok(n as u64)
        })
    }

    /// Whether the invocation `id` matches `filter` (false for an id not stored).
    pub fn matches(&self, filter: &Filter, id: i64) -> Result<bool, StoreError> {
        self.with_reader(|c| {
            let (clause, mut args) = filter.sql();
            args.push(rusqlite::types::Value::Integer(id));
            let joined = if clause.is_empty() { "WHERE" } else { "AND" };
            let n: i64 = c.query_row(
                &format!("SELECT COUNT(*) FROM invocations {clause} {joined} id = ?"),
                rusqlite::params_from_iter(args),
                |r| r.get(0),
            )?;
            Ok(n > 0)
        })
    }

    /// The calls that cancelled `webhook_id`, oldest first, each with when the webhook was set
    /// up again after it, if it was; at most 100 (a webhook is cancelled once, unless it is
    /// enabled again). A 410 the service never got (its caller hung up, or it came after the
    /// 30 s) cancels nothing. Enabling or updating an active webhook makes the service send the
    /// registration check to its URL (service-api.md): the first check answered 200 at the
    /// 410's path after it lifts the cancel (the check carries no webhook id, so the path is
    /// what ties it to the webhook). Read through the outcome and event indexes: a delivery is
    /// opened in the window at any size of store.
    pub fn cancels(&self, webhook_id: &str) -> Result<Vec<Cancel>, StoreError> {
        self.with_reader(|c| {
            let mut stmt = c.prepare_cached(
                &format!("SELECT received_at_us, id, path, took_us FROM invocations WHERE {LISTED_OUTCOME} = ?2 AND webhook_id = ?1 ORDER BY id DESC LIMIT 100"),
            )?;
            let cancelled = Outcome::WebhookCancelled.as_str();
            let rows = stmt.query_map([webhook_id, cancelled], |r| {
                let at_us: i64 = r.get(0)?;
                let took_us: i64 = r.get(3)?;
                Ok((
                    micros_to_time(at_us),
                    micros_to_time(at_us.saturating_add(took_us.max(0))),
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                ))
            })?;
            // The newest 100, oldest first.
            let mut found = rows.collect::<Result<Vec<_>, _>>()?;
            found.reverse();
            let mut check = c.prepare_cached(
                // `+outcome`: through the event index (checks have no event), never the outcome
                // one, which would read every succeeded call after the 410.
                "SELECT received_at_us FROM invocations WHERE event IS NULL AND registration_check AND answer_status = 200 AND +outcome = ?3 AND path = ?1 AND id > ?2 ORDER BY id LIMIT 1",
            )?;
            let passed = Outcome::Succeeded.as_str();
            let mut out = Vec::with_capacity(found.len());
            for (at, answered, id, path) in found {
                let lifted = check
                    .query_row(params![path, id, passed], |r| r.get::<_, i64>(0))
                    .optional()?
                    .map(micros_to_time);
                out.push(Cancel {
                    at,
                    answered,
                    id,
                    lifted,
                });
            }
            Ok(out)
        })
    }

    /// The newest id, if any.
    pub fn last_id(&self) -> Result<Option<i64>, StoreError> {
        self.with_reader(|c| Ok(c.query_row("SELECT MAX(id) FROM invocations", [], |r| r.get(0))?))
    }
}

/// Whether an answer of `status` with `retry_after`, sent at `at` to a call the service reads
/// (`not_read`: it got no answer in time, the HTTP layer refused it, or it is a registration
/// check), leaves no retry: a 503 or 429 whose Retry-After reaches past the 2-day window.
fn retry_after_discards(
    status: u16,
    retry_after: Option<&str>,
    not_read: bool,
    at: DateTime<Utc>,
) -> bool {
    !not_read
        && crate::contract::outcome_of(status).honours_retry_after()
        && retry_after.is_some_and(|ra| {
            crate::responder::Answer {
                retry_after: Some(ra.to_owned()),
                ..crate::responder::Answer::status(status)
            }
            .retry_after_past_window(at)
        })
}

/// The environment variable that names the data directory when `--data-dir` is not given.
pub const DATA_DIR_ENV: &str = "HOOKSCOPE_DATA_DIR";

/// The data directory `HOOKSCOPE_DATA_DIR` names, if it names one: an empty or blank value,
/// left in a shell, counts as unset (as the API's variables do), not as a directory called
/// "  ".
pub fn data_dir_from_env() -> Option<PathBuf> {
    std::env::var_os(DATA_DIR_ENV)
        .filter(|d| !d.to_string_lossy().trim().is_empty())
        .map(PathBuf::from)
}

/// The platform data directory for Hookscope (e.g. `~/.local/share/hookscope`), or
/// `./hookscope-data` where the platform has none.
pub fn default_data_dir() -> PathBuf {
    if let Some(dir) = data_dir_from_env() {
        return dir;
    }
    dirs::data_dir()
        .map(|d| d.join("hookscope"))
        .unwrap_or_else(|| PathBuf::from("hookscope-data"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Severity;

    pub(crate) fn sample(delivery: &str, attempt: u32, status: u16) -> Invocation {
        Invocation {
            received_at: Utc::now(),
            method: "POST".into(),
            path: "/hook".into(),
            query: Some("secret=1".into()),
            headers: vec![
                Header::new("X-Service-Event", b"status-report"),
                Header::new("X-Odd", b"\xff\x01"),
                Header::new("X-Odd", b"second"),
            ],
            body: b"[]".to_vec(),
            body_size: 2,
            declared_size: Some(2),
            body_kept: true,
            peer: Some("127.0.0.1:5000".into()),
            event: Some("status-report".into()),
            delivery: Some(delivery.into()),
            attempt: Some(attempt),
            webhook_id: Some("234".into()),
            messages: Some(0),
            registration_check: false,
            findings: vec![Finding {
                severity: Severity::Warning,
                code: "user-agent".into(),
                message: "x".into(),
            }],
            answer: SentAnswer {
                status,
                headers: vec![("Retry-After".into(), "120".into())],
                body: bytes::Bytes::from_static(b"busy"),
                delay_ms: 5,
            },
            took_us: 1234,
            rule: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_closed_store_has_folded_its_log_and_removed_it() {
        // Another process looking at the directory right after (a reader of another user,
        // which cannot make the log files itself) must find the file alone, holding every
        // call: a store merely dropped closed on its writer's thread a moment later.
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(dir.path(), Durability::Normal).unwrap();
            let kept = store.clone();
            store.insert(sample("d", 1, 200)).await.unwrap();
            store.close();
            // Another handle still holds it open.
            let wal = dir.path().join("hookscope.sqlite3-wal");
            assert!(wal.exists());
            assert_eq!(kept.count(&Filter::default()).unwrap(), 1);
            kept.close();
            for side in ["-wal", "-shm"] {
                let side = dir.path().join(format!("hookscope.sqlite3{side}"));
                assert!(!side.exists(), "{side:?} is left");
            }
            let read = Connection::open_with_flags(
                db_path(dir.path()),
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .unwrap();
            let rows: i64 = read
                .query_row("SELECT count(*) FROM invocations", [], |r| r.get(0))
                .unwrap();
            assert_eq!(rows, 1);
        }
    }

    #[test]
    fn processes_opening_a_new_store_together_all_open_it() {
        // `listen` and the window started on the same new directory at once: each opens it
        // (one failed with "table invocations already exists", or took the other's new
        // tables for another program's).
        for _ in 0..15 {
            let dir = tempfile::tempdir().unwrap();
            let start = Arc::new(std::sync::Barrier::new(4));
            let opened: Vec<Result<(), String>> = (0..4)
                .map(|_| {
                    let (dir, start) = (dir.path().to_owned(), start.clone());
                    std::thread::spawn(move || {
                        start.wait();
                        Store::open(&dir, Durability::Normal)
                            .map(drop)
                            .map_err(|e| e.to_string())
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|t| t.join().unwrap())
                .collect();
            for r in opened {
                assert_eq!(r, Ok(()));
            }
        }
    }

    #[test]
    fn an_answer_not_received_in_time_is_a_temporary_failure_whatever_its_code() {
        let mut inv = sample("d", 1, 200);
        assert_eq!(inv.outcome(), Outcome::Succeeded);
        assert_eq!(inv.unanswered(), None);
        // Held back past the service's 30 s: the service has given up on it.
        inv.took_us = 30_000_000;
        assert_eq!(inv.outcome(), Outcome::RetryTemporary);
        assert!(inv.unanswered().is_some_and(|w| w.contains("30 s")));
        // The caller hung up first (the emulator on a fast clock, a client's own timeout).
        let mut inv = sample("d", 1, 410);
        inv.findings.push(Finding {
            severity: Severity::Warning,
            code: CALLER_HUNG_UP.into(),
            message: "gone".into(),
        });
        assert_eq!(inv.outcome(), Outcome::RetryTemporary);
        assert!(inv.unanswered().is_some_and(|w| w.contains("hung up")));
        assert_eq!(Summary::of(1, &inv).outcome, Outcome::RetryTemporary);
        // Its timing says it was never sent, and how much of the delay passed.
        inv.took_us = 2_000_000;
        inv.answer.delay_ms = 0;
        assert_eq!(
            inv.answer_timing(),
            "never sent (the call ended 2 s after it came)"
        );
        inv.answer.delay_ms = 40_000;
        assert_eq!(
            inv.answer_timing(),
            "held 2 s of a chosen delay of 40 s, never sent"
        );
        // Sent: after how long, and the delay chosen.
        let mut sent = sample("d", 1, 503);
        sent.answer.delay_ms = 0;
        sent.took_us = 300;
        assert_eq!(sent.answer_timing(), "sent after under 1 ms");
        // The HTTP layer's own answer, stored with no time: not "0 s".
        sent.took_us = 0;
        assert_eq!(sent.answer_timing(), "sent after under 1 ms");
        sent.took_us = 1_500_000;
        sent.answer.delay_ms = 1_500;
        assert_eq!(
            sent.answer_timing(),
            "sent after 1.5 s (a chosen delay of 1.5 s)"
        );
    }

    #[test]
    fn a_data_directory_refused_names_the_directory_that_refused_it() {
        let dir = tempfile::tempdir().unwrap();
        let wanted = dir.path().join("a").join("b");
        let denied = std::io::Error::from(std::io::ErrorKind::PermissionDenied);
        let e = StoreError::CreateDir {
            path: wanted.clone(),
            source: denied,
        };
        assert_eq!(
            e.to_string(),
            format!(
                "cannot create the data directory {}: permission denied: this user may not create directories in {} (see who owns it, and its mode)",
                wanted.display(),
                dir.path().display()
            )
        );
    }

    #[test]
    fn a_registration_check_not_answered_200_in_time_refuses_the_url() {
        let mut check = sample("d", 1, 200);
        check.registration_check = true;
        assert_eq!(check.outcome(), Outcome::Succeeded);
        for status in [201, 204, 410, 429, 500, 503] {
            check.answer.status = status;
            assert_eq!(check.outcome(), Outcome::UrlRefused, "{status}");
            assert!(!check.outcome().is_retry(), "{status}");
        }
        check.answer.status = 200;
        check.took_us = 31_000_000;
        assert_eq!(check.outcome(), Outcome::UrlRefused, "answered too late");
        // The same answers to an ordinary call keep the States table's outcomes.
        assert_eq!(sample("d", 1, 503).outcome(), Outcome::RetryUnavailable);
    }

    /// After failed commits, "stored again" is said when a call is: a fold at a stop going
    /// through on a full disk had said it, just after the fold itself failed.
    #[test]
    fn only_a_stored_call_says_the_store_works_again() {
        let ack = || oneshot::channel().0;
        let mut failing = true;
        assert!(!stored_again(&[(Op::Fold, ack())], &mut failing));
        assert!(failing, "still failing");
        let call = Op::Insert(sample("d1", 1, 200));
        assert!(stored_again(
            &[(Op::Fold, ack()), (call, ack())],
            &mut failing
        ));
        assert!(!failing);
        let call = Op::Insert(sample("d1", 2, 200));
        assert!(!stored_again(&[(call, ack())], &mut failing), "no news");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn the_writer_can_read_its_own_scheduling_times() {
        // Both fields parse (a thread that has barely run may show 0 on some kernels).
        assert!(thread_schedstat().is_some(), "/proc/thread-self/schedstat");
    }

    #[tokio::test]
    async fn the_registration_check_note_is_not_a_problem() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let note = Finding {
            severity: Severity::Info,
            code: "registration-check".into(),
            message: "x".into(),
        };
        let mut clean_check = sample("r1", 1, 200);
        clean_check.registration_check = true;
        clean_check.findings = vec![note.clone()];
        let mut odd_check = clean_check.clone();
        odd_check
            .findings
            .push(sample("r2", 1, 200).findings[0].clone());
        let mut clean_call = sample("c1", 1, 200);
        clean_call.findings.clear();
        let clean_check = store.insert(clean_check).await.unwrap();
        let odd_check = store.insert(odd_check).await.unwrap();
        let bad_call = store.insert(sample("b1", 1, 200)).await.unwrap();
        store.insert(clean_call).await.unwrap();

        let rows = store.page(&Filter::default(), 0, 10).unwrap();
        let problems = |id: i64| rows.iter().find(|r| r.id == id).unwrap().problems();
        assert_eq!(problems(clean_check), 0);
        assert_eq!(problems(odd_check), 1);
        assert_eq!(problems(bad_call), 1);

        let with = Filter {
            with_findings: true,
            ..Filter::default()
        };
        let mut ids: Vec<i64> = store
            .page(&with, 0, 10)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        ids.sort();
        assert_eq!(ids, vec![odd_check, bad_call]);
        assert_eq!(store.count(&with).unwrap(), 2);
    }

    #[tokio::test]
    async fn a_row_knows_its_gravest_finding_as_read_and_as_noted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let finding = |severity| Finding {
            severity,
            code: "x".into(),
            message: "x".into(),
        };
        let mut mixed = sample("m", 1, 200);
        mixed.findings = vec![finding(Severity::Warning), finding(Severity::Error)];
        let mut clean = sample("c", 1, 200);
        clean.findings.clear();
        assert_eq!(Summary::of(0, &mixed).worst, Some(Severity::Error));
        assert_eq!(Summary::of(0, &clean).worst, None);
        let mixed = store.insert(mixed).await.unwrap();
        let clean = store.insert(clean).await.unwrap();
        let worst = |id: i64| {
            let rows = store.page(&Filter::default(), 0, 10).unwrap();
            rows.iter().find(|r| r.id == id).unwrap().worst
        };
        assert_eq!(worst(mixed), Some(Severity::Error));
        assert_eq!(worst(clean), None);
        // A note added after the commit (a caller that hung up) counts too.
        store
            .note(clean, finding(Severity::Warning), Outcome::RetryTemporary)
            .await
            .unwrap();
        assert_eq!(worst(clean), Some(Severity::Warning));
    }

    /// Opening a store on a full disk fails where SQLite makes its -shm file, with only "disk
    /// I/O error": named as a full disk when the disk has no room, as an I/O failure when it
    /// has, and other failures are left as they are.
    #[test]
    fn a_store_opened_on_a_full_disk_says_so() {
        let dir = Path::new("/data");
        let io = || {
            StoreError::Sql(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR),
                None,
            ))
        };
        let full = open_failure(dir, io(), Some(0)).to_string();
        assert_eq!(
            full,
            "cannot open the database /data/hookscope.sqlite3: the disk holding it is full: free some space there (or give --data-dir a directory on another disk)"
        );
        let failed = open_failure(dir, io(), Some(10 << 30)).to_string();
        assert!(
            failed.contains("the disk failed to read or write it"),
            "{failed}"
        );
        // SQLite's own words are kept, with the extended code that names the call that failed.
        let fsync = StoreError::Sql(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR_FSYNC),
            Some("disk I/O error".into()),
        ));
        assert_eq!(
            open_failure(dir, fsync, Some(10 << 30)).to_string(),
            "cannot open the database /data/hookscope.sqlite3: the disk failed to read or write it (SQLite says \"disk I/O error, extended code 1034\": see the system's log)"
        );
        assert!(
            open_failure(dir, io(), None)
                .to_string()
                .contains("failed to read or write")
        );
        let said_full = StoreError::Sql(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_FULL),
            None,
        ));
        assert!(matches!(
            open_failure(dir, said_full, None),
            StoreError::DiskFullAtOpen { .. }
        ));
        let other = open_failure(dir, StoreError::NotSqlite { path: dir.into() }, Some(0));
        assert!(matches!(other, StoreError::NotSqlite { .. }));
        // This machine's own disk is read (whatever room it has left).
        #[cfg(unix)]
        assert!(free_bytes(&std::env::temp_dir()).is_some());
    }

    /// A 503's meaning is said of its own answer: with its Retry-After's wait, or without one,
    /// not "when the answer gives one" (which read as if it had).
    #[test]
    fn a_503_means_what_its_own_answer_asks_for() {
        let with = sample("w", 1, 503);
        assert_eq!(
            with.meaning(),
            "retried on the schedule, and not before its Retry-After wait"
        );
        let mut without = sample("n", 1, 503);
        without.answer.headers.clear();
        assert_eq!(
            without.meaning(),
            "retried on the schedule (the answer gave no Retry-After)"
        );
        // One past the 2-day window leaves no retry to wait for.
        let mut past = sample("p", 1, 503);
        past.answer.headers = vec![("Retry-After".into(), "200000".into())];
        assert!(
            past.meaning()
                .starts_with("not retried: its Retry-After reaches past")
        );
        // A date already passed asks for no wait.
        let mut passed = sample("d", 1, 503);
        passed.answer.headers =
            vec![("Retry-After".into(), "Sun, 22 Nov 2020 14:00:00 GMT".into())];
        assert_eq!(
            passed.meaning(),
            "retried on the schedule (its Retry-After date had passed: it asks for no wait)"
        );
        // Other codes keep the States table's words.
        assert_eq!(
            sample("t", 1, 429).meaning(),
            Outcome::RetrySlowDown.describe()
        );
    }

    /// A row knows a request the HTTP layer refused, read from its findings as `Summary::of`
    /// reads it, and its answer's meaning is not the States table's reading of the 400.
    #[tokio::test]
    async fn a_row_knows_a_request_http_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let mut refused = sample("r", 1, 400);
        refused.findings = vec![Finding {
            severity: Severity::Error,
            code: NOT_HTTP.into(),
            message: "x".into(),
        }];
        let plain = sample("p", 1, 400);
        assert!(Summary::of(0, &refused).not_http && !Summary::of(0, &plain).not_http);
        assert_eq!(refused.meaning(), NOT_HTTP_MEANING);
        assert_eq!(plain.meaning(), Outcome::FailedPermanently.describe());
        let refused = store.insert(refused).await.unwrap();
        let plain = store.insert(plain).await.unwrap();
        // Its row reads "not HTTP": the filter's "discarded (4xx)" leaves it out, as every
        // outcome of the filter does (it had been listed among the 400s its code reads as).
        let discarded = Filter {
            outcome: Some(Outcome::FailedPermanently),
            ..Filter::default()
        };
        let ids: Vec<i64> = store
            .page(&discarded, 0, 10)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(ids, [plain]);
        assert_eq!(store.count(&discarded).unwrap(), 1);
        let rows = store.page(&Filter::default(), 0, 10).unwrap();
        let not_http = |id: i64| rows.iter().find(|r| r.id == id).unwrap().not_http;
        assert!(not_http(refused));
        assert!(!not_http(plain));
        // Unanswered (its connection ended first): no retry follows from it either.
        let mut cut = sample("c", 1, 400);
        cut.findings = vec![
            Finding {
                severity: Severity::Error,
                code: NOT_HTTP.into(),
                message: "x".into(),
            },
            Finding {
                severity: Severity::Warning,
                code: CALLER_HUNG_UP.into(),
                message: "x".into(),
            },
        ];
        assert_eq!(cut.meaning(), NOT_HTTP_UNANSWERED);
    }

    /// The outcome filter reads as the rows do: "retry (late)" lists the calls no answer
    /// reached in time (30 s or more, or cut off), "retry (other)" the rest of the temporary
    /// failures; both had been under "retry (other)".
    #[tokio::test]
    async fn the_filter_tells_late_answers_from_other_retries() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let answered = store.insert(sample("a", 1, 500)).await.unwrap();
        let mut slow = sample("s", 1, 200);
        slow.took_us = 31_000_000;
        let slow = store.insert(slow).await.unwrap();
        let mut cut = sample("c", 1, 200);
        cut.findings = vec![Finding {
            severity: Severity::Warning,
            code: CALLER_HUNG_UP.into(),
            message: "x".into(),
        }];
        let cut = store.insert(cut).await.unwrap();
        store.insert(sample("ok", 1, 200)).await.unwrap();
        // Stored answered, then noted as never sent (Hookscope quit first): late too.
        let quit = store.insert(sample("q", 1, 500)).await.unwrap();
        store
            .note(
                quit,
                Finding {
                    severity: Severity::Warning,
                    code: QUIT_BEFORE_ANSWER.into(),
                    message: "x".into(),
                },
                Outcome::RetryTemporary,
            )
            .await
            .unwrap();
        let ids = |late: bool| {
            let f = Filter {
                outcome: Some(Outcome::RetryTemporary),
                late,
                ..Filter::default()
            };
            let ids: Vec<i64> = store
                .page(&f, 0, 10)
                .unwrap()
                .iter()
                .map(|r| r.id)
                .collect();
            assert_eq!(store.count(&f).unwrap(), ids.len() as u64);
            ids
        };
        assert_eq!(ids(true), [quit, cut, slow]);
        assert_eq!(ids(false), [answered]);
        // Each row listed reads as the choice that lists it.
        let rows = store.page(&Filter::default(), 0, 10).unwrap();
        let unanswered = |id: i64| rows.iter().find(|r| r.id == id).unwrap().unanswered;
        assert!(unanswered(cut) && unanswered(slow) && unanswered(quit));
        assert!(!unanswered(answered));
        // `late` means nothing with another outcome.
        let ok = Filter {
            outcome: Some(Outcome::Succeeded),
            late: true,
            ..Filter::default()
        };
        assert_eq!(store.count(&ok).unwrap(), 1);
        // A filter saved before the field existed reads as before, `late` off.
        let old: Filter = serde_json::from_str(
            r#"{"event":null,"outcome":"retry-temporary","text":"","with_findings":false}"#,
        )
        .unwrap();
        assert!(!old.late);
    }

    /// A row knows a 503 or 429 whose Retry-After leaves no retry in the 2-day window, read
    /// from its answer's headers as `Summary::of` and the full record read them.
    #[tokio::test]
    async fn a_row_knows_a_retry_after_past_the_window() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let with = |delivery: &str, status: u16, ra: &str| {
            let mut inv = sample(delivery, 1, status);
            inv.answer.headers = vec![
                ("content-type".into(), "text/plain".into()),
                ("Retry-After".into(), ra.into()),
            ];
            inv
        };
        let mut late = with("late", 503, "200000");
        late.took_us = 31_000_000;
        let mut check = with("check", 503, "200000");
        check.registration_check = true;
        // A date three days after the call, and one an hour after it.
        let mut far_date = with("far-date", 503, "");
        let date = |after: chrono::TimeDelta| {
            (far_date.received_at + after)
                .format("%a, %d %b %Y %H:%M:%S GMT")
                .to_string()
        };
        let (three_days, an_hour) = (
            date(chrono::TimeDelta::days(3)),
            date(chrono::TimeDelta::hours(1)),
        );
        far_date.answer.headers[1].1 = three_days.clone();
        let mut near_date = with("near-date", 429, "");
        near_date.received_at = far_date.received_at;
        near_date.answer.headers[1].1 = an_hour.clone();
        let expected = [
            (with("far", 503, "200000"), Some("200000"), true),
            (far_date, Some(three_days.as_str()), true),
            (near_date, Some(an_hour.as_str()), false),
            (with("slow", 429, "200000"), Some("200000"), true),
            (with("near", 503, "120"), Some("120"), false),
            // A 500's Retry-After is not read; nor one of an answer the service never got,
            // nor a registration check's.
            (with("other", 500, "200000"), None, false),
            (late, Some("200000"), false),
            (check, Some("200000"), false),
            (
                Invocation {
                    answer: SentAnswer {
                        headers: Vec::new(),
                        ..sample("none", 1, 503).answer
                    },
                    ..sample("none", 1, 503)
                },
                None,
                false,
            ),
        ];
        let mut ids = Vec::new();
        for (inv, ra, discarded) in expected {
            let of = Summary::of(0, &inv);
            assert_eq!(of.retry_after.as_deref(), ra, "{:?}", inv.delivery);
            assert_eq!(
                of.discarded_by_retry_after(),
                discarded,
                "{:?}",
                inv.delivery
            );
            assert_eq!(
                inv.discarded_by_retry_after(),
                discarded,
                "{:?}",
                inv.delivery
            );
            ids.push((store.insert(inv).await.unwrap(), ra, discarded));
        }
        let rows = store.page(&Filter::default(), 0, 20).unwrap();
        for (id, ra, discarded) in &ids {
            let row = rows.iter().find(|r| r.id == *id).unwrap();
            assert_eq!(row.retry_after.as_deref(), *ra, "{row:?}");
            assert_eq!(row.discarded_by_retry_after(), *discarded, "{row:?}");
        }
        // The Outcome filter lists each row under the word it reads: "discarded" for a
        // Retry-After past the window, not its code's "retry (503)" or "retry (429)".
        let plain = store.insert(sample("plain-400", 1, 400)).await.unwrap();
        let listed = |o: Outcome| {
            let f = Filter {
                outcome: Some(o),
                ..Filter::default()
            };
            let mut ids: Vec<i64> = store
                .page(&f, 0, 20)
                .unwrap()
                .iter()
                .map(|r| r.id)
                .collect();
            ids.sort();
            assert_eq!(store.count(&f).unwrap(), ids.len() as u64, "{o:?}");
            ids
        };
        let discarded: Vec<i64> = ids.iter().filter(|i| i.2).map(|i| i.0).collect();
        let mut expected = discarded.clone();
        expected.push(plain);
        assert_eq!(listed(Outcome::FailedPermanently), expected);
        for o in [Outcome::RetryUnavailable, Outcome::RetrySlowDown] {
            let under = listed(o);
            assert!(!under.is_empty(), "{o:?}");
            assert!(
                under.iter().all(|id| !discarded.contains(id)),
                "{o:?}: {under:?}"
            );
            for id in under {
                let row = rows.iter().find(|r| r.id == id).unwrap();
                assert_eq!(row.outcome, o);
            }
        }
    }

    /// The Outcome filter reads the outcome index alone: a count touches no row, and a page
    /// is read in the list's order without sorting (reading every 503's answer headers had
    /// taken most of a second for each count and page of a store of a million calls).
    #[test]
    fn the_outcome_filter_reads_its_index_alone() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path(), Durability::Normal).unwrap());
        let c = Connection::open(db_path(dir.path())).unwrap();
        register_functions(&c).unwrap();
        // The literal the index is built on is the outcome's name.
        assert!(LISTED_OUTCOME.contains(&format!("'{}'", Outcome::FailedPermanently.as_str())));
        let late = (Outcome::RetryTemporary, true);
        for (o, late) in Outcome::ALL.map(|o| (o, false)).into_iter().chain([late]) {
            let (clause, args) = Filter {
                outcome: Some(o),
                late,
                ..Filter::default()
            }
            .sql();
            let plan = |sql: &str| -> String {
                let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
                stmt.query_map(rusqlite::params_from_iter(args.clone()), |r| {
                    r.get::<_, String>(3)
                })
                .unwrap()
                .map(|r| r.unwrap())
                .collect::<Vec<_>>()
                .join("; ")
            };
            let count = plan(&format!("SELECT COUNT(*) FROM invocations {clause}"));
            assert!(
                count.contains("USING COVERING INDEX invocations_outcome"),
                "{o:?}: {count}"
            );
            let page = plan(&format!(
                "SELECT id FROM invocations {clause} ORDER BY id DESC LIMIT 10"
            ));
            assert!(page.contains("INDEX invocations_outcome"), "{o:?}: {page}");
            assert!(!page.contains("TEMP B-TREE"), "{o:?}: {page}");
        }
    }

    /// A row knows a call the service got no answer to in time, as `Summary::of` does: past
    /// the 30 s, or cut off first; not one answered in time.
    #[tokio::test]
    async fn a_row_knows_an_answer_that_came_too_late() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let mut late = sample("l", 1, 200);
        late.took_us = 30_000_000;
        let mut cut = sample("c", 1, 200);
        cut.findings.push(Finding {
            severity: Severity::Warning,
            code: CALLER_HUNG_UP.into(),
            message: "x".into(),
        });
        let mut closed = sample("h", 1, 400);
        closed.findings.push(Finding {
            severity: Severity::Warning,
            code: HEAD_TIMED_OUT.into(),
            message: "x".into(),
        });
        let mut stalled = sample("b", 1, 200);
        stalled.findings.push(Finding {
            severity: Severity::Warning,
            code: BODY_TIMED_OUT.into(),
            message: "x".into(),
        });
        let mut in_time = sample("t", 1, 200);
        in_time.took_us = 29_999_999;
        let expected = [
            (late, true),
            (cut, true),
            (closed, true),
            (stalled, true),
            (in_time, false),
        ];
        for (inv, unanswered) in &expected {
            assert_eq!(
                Summary::of(0, inv).unanswered,
                *unanswered,
                "{:?}",
                inv.delivery
            );
        }
        let mut ids = Vec::new();
        for (inv, unanswered) in expected {
            ids.push((store.insert(inv).await.unwrap(), unanswered));
        }
        let rows = store.page(&Filter::default(), 0, 10).unwrap();
        for (id, unanswered) in ids {
            let row = rows.iter().find(|r| r.id == id).unwrap();
            assert_eq!(row.unanswered, unanswered, "{row:?}");
        }
    }

    #[tokio::test]
    async fn insert_then_read_back_whole() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Full).unwrap();
        let inv = sample("d1", 1, 503);
        let id = store.insert(inv.clone()).await.unwrap();
        let got = store.get(id).unwrap().unwrap();
        assert_eq!(got.inv.headers, inv.headers);
        assert_eq!(got.inv.headers[1].bytes(), b"\xff\x01");
        assert_eq!(got.inv.answer, inv.answer);
        assert_eq!(got.inv.findings, inv.findings);
        assert_eq!(
            got.inv.received_at.timestamp_micros(),
            inv.received_at.timestamp_micros()
        );
        assert_eq!(got.inv.outcome(), Outcome::RetryUnavailable);
        assert_eq!(store.get(id + 100).unwrap(), None);
    }

    #[tokio::test]
    async fn a_large_answer_body_is_kept_once_however_many_calls_it_answered() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let page: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut other = page.clone();
        other[199_999] ^= 1;
        let mut ids = Vec::new();
        for (i, body) in [&page, &page, &other, &page].into_iter().enumerate() {
            let mut inv = sample("big", i as u32 + 1, 503);
            inv.answer.body = body.clone().into();
            ids.push(store.insert(inv).await.unwrap());
        }
        // A small body stays with its call.
        let small = store.insert(sample("big", 5, 503)).await.unwrap();
        for (id, body) in ids.iter().zip([&page, &page, &other, &page]) {
            assert_eq!(&store.get(*id).unwrap().unwrap().inv.answer.body, body);
        }
        assert_eq!(
            store.get(small).unwrap().unwrap().inv.answer.body,
            &b"busy"[..]
        );
        // A delivery's attempts are read without their bodies, however many share one.
        let attempts = store.by_delivery("big", None).unwrap();
        assert_eq!(attempts.len(), 5);
        assert!(
            attempts
                .iter()
                .all(|a| a.inv.answer.body.is_empty() && a.inv.body.is_empty())
        );
        assert_eq!(attempts[1].inv.body_size, 2);
        assert!(
            store
                .get_without_bodies(ids[0])
                .unwrap()
                .unwrap()
                .inv
                .answer
                .body
                .is_empty()
        );
        let c = Connection::open(db_path(dir.path())).unwrap();
        let kept: i64 = c
            .query_row("SELECT count(*) FROM answer_bodies", [], |r| r.get(0))
            .unwrap();
        assert_eq!(kept, 2, "the page and the page one byte apart");
        let inline: i64 = c
            .query_row(
                "SELECT sum(length(answer_body)) FROM invocations",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(inline, 4);
        // A shared body gone (deleted by hand) makes its records unreadable, named as such,
        // not answers with an empty body. (The sqlite3 shell does not enforce foreign keys.)
        c.pragma_update(None, "foreign_keys", false).unwrap();
        c.execute("DELETE FROM answer_bodies WHERE id = 2", [])
            .unwrap();
        let e = store
            .get(ids[2])
            .unwrap_err()
            .in_store(dir.path())
            .to_string();
        assert!(
            e.contains(&format!("record {} ", ids[2]))
                && e.contains("its answer body, kept once as row 2 of answer_bodies, is missing"),
            "{e}"
        );
        assert_eq!(&store.get(ids[0]).unwrap().unwrap().inv.answer.body, &page);
    }

    /// Two processes on one store (`listen` and the window) each answering with one large body:
    /// every call is stored. A writer's transaction that began by looking its body up took a
    /// read lock it then could not turn into a write lock while the other wrote ("database is
    /// locked", at once, without the busy timeout), and a quarter of the calls were lost.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_writers_sharing_large_answer_bodies_both_store_every_call() {
        let dir = tempfile::tempdir().unwrap();
        let a = Arc::new(Store::open(dir.path(), Durability::Normal).unwrap());
        let b = Arc::new(Store::open(dir.path(), Durability::Normal).unwrap());
        let mut tasks = Vec::new();
        for (n, store) in [a.clone(), b.clone(), a.clone(), b.clone()]
            .into_iter()
            .enumerate()
        {
            tasks.push(tokio::spawn(async move {
                let mut failed = 0;
                for i in 0..150u32 {
                    let mut inv = sample(&format!("w{n}"), i + 1, 503);
                    inv.answer.body = vec![b'x'; 5000 + n].into();
                    if store.insert(inv).await.is_err() {
                        failed += 1;
                    }
                }
                failed
            }));
        }
        let mut failed = 0;
        for t in tasks {
            failed += t.await.unwrap();
        }
        assert_eq!(failed, 0, "calls not stored");
        assert_eq!(a.count(&Default::default()).unwrap(), 600);
    }

    /// A store of an older schema that cannot be written (another user's) is named as one to
    /// bring up to date, not with SQLite's "attempt to write a readonly database".
    #[test]
    fn an_old_store_that_cannot_be_written_says_it_needs_bringing_up_to_date() {
        let dir = tempfile::tempdir().unwrap();
        let path = db_path(dir.path());
        drop(first_schema_store(&path));
        // Opened read-only, as SQLite opens a file this user may not write.
        let ro =
            Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
        let e = migrate(&ro, &path).unwrap_err();
        assert!(
            matches!(
                e,
                StoreError::CannotUpgrade { found: 1, current, .. } if current == schema_version()
            ),
            "{e:?}"
        );
        let said = e.to_string();
        assert!(
            said.contains("written by an older Hookscope (its schema version 1)")
                && said.contains("run Hookscope once as its owner"),
            "{said}"
        );
        // Untouched: still version 1, and a writer brings it up to date.
        drop(ro);
        drop(Store::open(dir.path(), Durability::Normal).unwrap());
        assert_eq!(user_version(&path), schema_version());
    }

    /// A store as the first schema made it, empty.
    fn first_schema_store(path: &Path) -> Connection {
        let c = Connection::open(path).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c
    }

    fn user_version(path: &Path) -> i64 {
        Connection::open(path)
            .unwrap()
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap()
    }

    #[tokio::test]
    async fn a_store_of_the_first_schema_is_migrated_and_its_calls_read_as_before() {
        let dir = tempfile::tempdir().unwrap();
        {
            let c = first_schema_store(&db_path(dir.path()));
            c.execute(
                "INSERT INTO invocations (received_at_us, method, path, headers, body, body_size,
                    body_kept, registration_check, findings, findings_count, answer_status,
                    answer_headers, answer_body, answer_delay_ms, outcome, took_us)
                 VALUES (1, 'POST', '/old', '[]', X'5B5D', 2, 1, 0, '[]', 0, 503, '[]', ?1, 0,
                    'retry-unavailable', 10)",
                [vec![7u8; 10_000]],
            )
            .unwrap();
            // A request the HTTP layer refused (its 400 is not a discarded message), and a 503
            // whose Retry-After leaves no retry, stored before the stores marked them.
            c.execute(
                "INSERT INTO invocations (received_at_us, method, path, headers, body, body_size,
                    body_kept, registration_check, findings, findings_count, answer_status,
                    answer_headers, answer_body, answer_delay_ms, outcome, took_us)
                 VALUES (3, '', '', '[]', X'16', 1, 1, 0,
                    '[{\"severity\":\"error\",\"code\":\"not-http\",\"message\":\"x\"}]', 1,
                    400, '[]', X'', 0, 'failed-permanently', 0)",
                [],
            )
            .unwrap();
            c.execute(
                "INSERT INTO invocations (received_at_us, method, path, headers, body, body_size,
                    body_kept, registration_check, findings, findings_count, answer_status,
                    answer_headers, answer_body, answer_delay_ms, outcome, took_us)
                 VALUES (2, 'POST', '/far', '[]', X'5B5D', 2, 1, 0, '[]', 0, 503,
                    '[[\"Retry-After\",\"200000\"]]', X'', 0, 'retry-unavailable', 10)",
                [],
            )
            .unwrap();
            // A 200 that came after the service's 30 s, one the caller hung up on, and a 500:
            // the first two read "retry (late)", the last "retry (other)".
            for (at, path, status, findings, took_us) in [
                (4, "/slow", 200, "[]", 40_000_000),
                (
                    5,
                    "/cut",
                    200,
                    "[{\"severity\":\"warning\",\"code\":\"caller-hung-up\",\"message\":\"x\"}]",
                    10,
                ),
                (6, "/500", 500, "[]", 10),
            ] {
                c.execute(
                    "INSERT INTO invocations (received_at_us, method, path, headers, body,
                        body_size, body_kept, registration_check, findings, findings_count,
                        answer_status, answer_headers, answer_body, answer_delay_ms, outcome,
                        took_us)
                     VALUES (?1, 'POST', ?2, '[]', X'5B5D', 2, 1, 0, ?3, json_array_length(?3),
                        ?4, '[]', X'', 0, 'retry-temporary', ?5)",
                    rusqlite::params![at, path, findings, status, took_us],
                )
                .unwrap();
            }
        }
        let read = Store::open_read(dir.path()).unwrap();
        // Read through the migration's marking: listed where its row says it belongs.
        let listed_as = |store: &Store, o: Outcome, late: bool| {
            let f = Filter {
                outcome: Some(o),
                late,
                ..Filter::default()
            };
            let paths: Vec<String> = store
                .page(&f, 0, 10)
                .unwrap()
                .into_iter()
                .map(|s| s.path)
                .collect();
            assert_eq!(store.count(&f).unwrap(), paths.len() as u64);
            paths
        };
        let listed = |store: &Store, o: Outcome| listed_as(store, o, false);
        assert_eq!(listed(&read, Outcome::FailedPermanently), ["/far"]);
        assert_eq!(listed(&read, Outcome::RetryUnavailable), ["/old"]);
        assert_eq!(
            listed_as(&read, Outcome::RetryTemporary, true),
            ["/cut", "/slow"]
        );
        assert_eq!(listed(&read, Outcome::RetryTemporary), ["/500"]);
        let old = read.get(1).unwrap().unwrap();
        assert_eq!(old.inv.path, "/old");
        assert_eq!(old.inv.answer.body, vec![7u8; 10_000]);
        drop(read);
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let mut inv = sample("new", 1, 503);
        inv.answer.body = vec![7u8; 10_000].into();
        let id = store.insert(inv).await.unwrap();
        assert_eq!(
            store.get(id).unwrap().unwrap().inv.answer.body.len(),
            10_000
        );
        assert_eq!(store.get(1).unwrap().unwrap().inv.answer.body.len(), 10_000);
        assert_eq!(user_version(&db_path(dir.path())), schema_version());
    }

    #[tokio::test]
    async fn pages_counts_filters_and_deliveries() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        for i in 0..30u32 {
            let mut inv = sample(
                &format!("d{}", i % 3),
                i / 3 + 1,
                if i % 2 == 0 { 200 } else { 503 },
            );
            if i % 5 == 0 {
                inv.event = Some("incoming-message".into());
            }
            match i {
                // A registration check that also names an event, and a call that names none.
                7 => inv.registration_check = true,
                11 => inv.event = None,
                _ => {}
            }
            store.insert(inv).await.unwrap();
        }
        assert_eq!(store.count(&Filter::default()).unwrap(), 30);
        let page = store.page(&Filter::default(), 0, 10).unwrap();
        assert_eq!(page.len(), 10);
        assert!(page.windows(2).all(|w| w[0].id > w[1].id), "newest first");
        let next = store
            .page_before(&Filter::default(), Some(page[9].id), 10)
            .unwrap();
        assert_eq!(next[0].id, page[9].id - 1);
        assert_eq!(store.page(&Filter::default(), 10, 10).unwrap(), next);

        let f = Filter {
            outcome: Some(Outcome::Succeeded),
            ..Filter::default()
        };
        assert_eq!(store.count(&f).unwrap(), 15);
        let f = Filter {
            event: Some(EventFilter::Event("incoming-message".into())),
            ..Filter::default()
        };
        assert_eq!(store.count(&f).unwrap(), 6);
        // Each call under one kind, as the list's Event column names it.
        for (kind, n) in [
            (EventFilter::Event("status-report".into()), 22),
            (EventFilter::RegistrationCheck, 1),
            (EventFilter::Other, 1),
        ] {
            let f = Filter {
                event: Some(kind.clone()),
                ..Filter::default()
            };
            assert_eq!(store.count(&f).unwrap(), n, "{kind:?}");
        }
        let f = Filter {
            text: "d2".into(),
            ..Filter::default()
        };
        assert_eq!(store.count(&f).unwrap(), 10);
        // Letters match in either case: delivery, event, path.
        for text in ["D2", "Status-Report", "/HOOK"] {
            let f = Filter {
                text: text.into(),
                ..Filter::default()
            };
            assert!(store.count(&f).unwrap() >= 10, "{text}");
        }
        let attempts = store.by_delivery("d1", Some("234")).unwrap();
        assert_eq!(attempts.len(), 10);
        assert!(
            attempts.windows(2).all(|w| w[0].id < w[1].id),
            "oldest first"
        );
        assert_eq!(store.by_delivery("d1", Some("999")).unwrap().len(), 0);
        assert_eq!(store.last_id().unwrap(), Some(30));

        // One call against a filter (the window's note on a selected call the filter hides).
        let incoming = Filter {
            event: Some(EventFilter::Event("incoming-message".into())),
            ..Filter::default()
        };
        assert!(
            store.matches(&incoming, 1).unwrap(),
            "call 1 (i = 0) is an incoming message"
        );
        assert!(!store.matches(&incoming, 2).unwrap());
        assert!(store.matches(&Filter::default(), 2).unwrap());
        assert!(!store.matches(&Filter::default(), 999).unwrap());

        // Snapshots: rows newer than `top` do not shift the pages.
        let all = Filter::default();
        assert_eq!(store.count_at(&all, 20).unwrap(), 20);
        let p = store.page_at(&all, 20, 5, 3).unwrap();
        assert_eq!(p.iter().map(|s| s.id).collect::<Vec<_>>(), vec![15, 14, 13]);
        let ok = Filter {
            outcome: Some(Outcome::Succeeded),
            ..Filter::default()
        };
        assert_eq!(store.count_at(&ok, 20).unwrap(), 10);
        let p = store.page_at(&ok, 20, 1, 2).unwrap();
        assert_eq!(p.iter().map(|s| s.id).collect::<Vec<_>>(), vec![17, 15]);
    }

    /// `n` sample calls answered 200, deliveries `{prefix}0`, `{prefix}1`...
    async fn insert_samples(store: &Store, prefix: &str, n: usize) {
        for i in 0..n {
            store
                .insert(sample(&format!("{prefix}{i}"), 1, 200))
                .await
                .unwrap();
        }
    }

    #[tokio::test]
    async fn a_search_nobody_waits_for_is_given_up_and_the_reader_serves_again() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        insert_samples(&store, "d", 3000).await;
        let search = Filter {
            text: "no such text anywhere".into(),
            ..Filter::default()
        };
        let top = store.last_id().unwrap().unwrap();
        let given_up = store.count_at_unless(&search, top, Some(Box::new(|| true)));
        assert!(
            matches!(given_up, Err(StoreError::Superseded)),
            "{given_up:?}"
        );
        let page = store.page_at_unless(&search, top, 0, 100, Some(Box::new(|| true)));
        assert!(matches!(page, Err(StoreError::Superseded)), "{page:?}");
        // Still wanted: read whole; and the reader works as before for everything else.
        assert_eq!(
            store
                .count_at_unless(&search, top, Some(Box::new(|| false)))
                .unwrap(),
            0
        );
        let found = Filter {
            text: "d2999".into(),
            ..Filter::default()
        };
        assert_eq!(store.count_at(&found, top).unwrap(), 1);
        assert!(store.get(top).unwrap().is_some());
        // The same call without its bodies: everything else as stored.
        let whole = store.get(top).unwrap().unwrap();
        let light = store.get_without_bodies(top).unwrap().unwrap();
        assert!(light.inv.body.is_empty() && light.inv.answer.body.is_empty());
        assert_eq!(light.inv.body_size, whole.inv.body_size);
        assert_eq!(
            (light.inv.delivery, light.inv.findings, light.inv.query),
            (whole.inv.delivery, whole.inv.findings, whole.inv.query)
        );
    }

    /// A full disk, a file system made read-only, an I/O error: each commit failure is said with
    /// what to do (SQLite says "database or disk is full").
    #[test]
    fn a_commit_failure_is_said_with_what_to_do() {
        let sql = |code| {
            StoreError::Sql(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(code),
                None,
            ))
        };
        let path = "/data/hookscope.sqlite3";
        assert_eq!(
            commit_failure(&sql(rusqlite::ffi::SQLITE_FULL), path),
            "the disk holding /data/hookscope.sqlite3 is full: free some space there (or give --data-dir a directory on another disk)"
        );
        assert!(
            commit_failure(&sql(rusqlite::ffi::SQLITE_READONLY), path)
                .contains("can no longer be written")
        );
        assert!(commit_failure(&sql(rusqlite::ffi::SQLITE_IOERR), path).contains("an I/O error"));
        // Anything else as it was.
        let other = sql(rusqlite::ffi::SQLITE_CONSTRAINT);
        assert_eq!(commit_failure(&other, path), other.to_string());
    }

    #[test]
    fn a_read_only_store_is_named_with_what_to_do() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path(), Durability::Normal).unwrap());
        let file = db_path(dir.path());
        let mut perms = std::fs::metadata(&file).unwrap().permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&file, perms.clone()).unwrap();
        // Root writes whatever the permissions say: nothing to see then.
        let writable = std::fs::OpenOptions::new().write(true).open(&file).is_ok();
        if !writable {
            let e = Store::open_read(dir.path()).map(|_| ()).unwrap_err();
            assert!(matches!(e, StoreError::ReadOnly { .. }), "{e}");
            let said = e.to_string();
            assert!(said.contains(&file.display().to_string()), "{said}");
            assert!(said.contains("copy the data directory"), "{said}");
        }
        assert_eq!(read_only_part(dir.path()).as_deref(), Some("the file"));
        #[allow(clippy::permissions_set_readonly_false)]
        perms.set_readonly(false);
        std::fs::set_permissions(&file, perms).unwrap();
        assert_eq!(read_only_part(dir.path()), None);
    }

    #[tokio::test]
    async fn a_folded_store_is_whole_in_its_file_alone() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Full).unwrap();
        insert_samples(&store, "f", 300).await;
        store.fold().await.unwrap();
        // The database file copied without its -wal, as a user backing it up would.
        let copy = tempfile::tempdir().unwrap();
        std::fs::copy(db_path(dir.path()), db_path(copy.path())).unwrap();
        let wal = dir.path().join("hookscope.sqlite3-wal");
        assert_eq!(std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0), 0);
        let alone = Store::open_read(copy.path()).unwrap();
        assert_eq!(alone.count(&Filter::default()).unwrap(), 300);
        // The store goes on after a fold.
        store.insert(sample("after", 1, 200)).await.unwrap();
        assert_eq!(store.count(&Filter::default()).unwrap(), 301);
    }

    #[tokio::test]
    async fn the_410s_of_a_webhook_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let mut ids = Vec::new();
        for (delivery, status) in [("a", 410), ("b", 503), ("c", 410)] {
            ids.push(store.insert(sample(delivery, 1, status)).await.unwrap());
        }
        let mut other = sample("d", 1, 410);
        other.webhook_id = Some("999".into());
        store.insert(other).await.unwrap();
        // A 410 sent after the service's 30 s never reached it: it cancels nothing.
        let mut late = sample("e", 1, 410);
        late.took_us = 31_000_000;
        store.insert(late).await.unwrap();
        let got = store.cancels("234").unwrap();
        assert_eq!(
            got.iter().map(|c| c.id).collect::<Vec<_>>(),
            vec![ids[0], ids[2]]
        );
        assert!(got[0].at <= got[1].at);
        assert!(got.iter().all(|c| c.lifted.is_none()));
        // Answered when the call's answer was ready: its arrival plus what it took (1234 µs).
        assert!(
            got.iter()
                .all(|c| c.answered - c.at == chrono::TimeDelta::microseconds(1234)),
            "{got:?}"
        );
        assert!(store.cancels("1").unwrap().is_empty());

        // The webhook enabled again: the service checks its URL. A check refused, or at
        // another path, lifts nothing; the first passed one at the 410's path does.
        let check = |path: &str, status: u16| {
            let mut c = sample("", 1, status);
            c.event = None;
            c.delivery = None;
            c.attempt = None;
            c.webhook_id = None;
            c.registration_check = true;
            c.path = path.into();
            c
        };
        let first_410_path = sample("a", 1, 410).path;
        store.insert(check(&first_410_path, 403)).await.unwrap();
        store.insert(check("/elsewhere", 200)).await.unwrap();
        let passed = store.insert(check(&first_410_path, 200)).await.unwrap();
        store.insert(check(&first_410_path, 200)).await.unwrap();
        let passed_at = store.get(passed).unwrap().unwrap().inv.received_at;
        let got = store.cancels("234").unwrap();
        assert_eq!(got.len(), 2);
        assert!(got.iter().all(|c| c.lifted == Some(passed_at)), "{got:?}");
    }

    #[tokio::test]
    async fn reopening_keeps_data_and_schema() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path(), Durability::Full).unwrap();
            store.insert(sample("d", 1, 200)).await.unwrap();
        }
        let store = Store::open_read(dir.path()).unwrap();
        assert_eq!(store.count(&Filter::default()).unwrap(), 1);
        assert!(matches!(
            store.insert(sample("d", 2, 200)).await,
            Err(StoreError::WriterGone)
        ));
    }

    /// Under steady load the WAL must start over now and then instead of growing with every
    /// row written (it once reached 440 MB after 150,000 calls).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_wal_stays_bounded_under_steady_load() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let wal = store.wal_path();
        let mut body = b"[".to_vec();
        body.extend(std::iter::repeat_n(b'x', 2000));
        body.push(b']');
        // 40 concurrent writers keep the writer busy: no quiet moment lets a checkpoint catch up
        // by luck. 24,000 rows of ~2.5 KB write some 100 MB of WAL frames in all. A thread
        // spinning meanwhile starves the checkpoint thread of CPU, as another program would
        // (before the writer waited for a pass that fell behind, this failed one run in three).
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let hog = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
                while !stop.load(std::sync::atomic::Ordering::Relaxed)
                    && std::time::Instant::now() < deadline
                {
                    std::hint::spin_loop();
                }
            })
        };
        let mut tasks = Vec::new();
        for t in 0..40u32 {
            let (store, body, wal) = (store.clone(), body.clone(), wal.clone());
            tasks.push(tokio::spawn(async move {
                let mut largest = 0u64;
                for i in 0..600u32 {
                    let mut inv = sample(&format!("d{t}-{i}"), 1, 200);
                    inv.body = body.clone();
                    store.insert(inv).await.unwrap();
                    if i % 50 == 0 {
                        largest = largest.max(std::fs::metadata(&wal).map_or(0, |m| m.len()));
                    }
                }
                largest
            }));
        }
        let mut largest = 0;
        for t in tasks {
            largest = largest.max(t.await.unwrap());
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        hog.join().unwrap();
        assert_eq!(store.count(&Filter::default()).unwrap(), 24_000);
        assert!(
            largest < 40 << 20,
            "the WAL grew to {:.1} MiB",
            largest as f64 / (1 << 20) as f64
        );
    }

    #[test]
    fn reading_a_directory_without_a_database_is_an_error_and_creates_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let typo = dir.path().join("no-such-dir");
        let err = Store::open_read(&typo).unwrap_err();
        assert!(matches!(err, StoreError::NoDatabase { .. }));
        assert!(err.to_string().contains("--data-dir"), "{err}");
        assert!(!typo.exists());
        let err = Store::open_read(dir.path()).unwrap_err();
        assert!(matches!(err, StoreError::NoDatabase { .. }));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        // An empty database file: still nothing stored, and it stays empty.
        let db = dir.path().join(DB_FILE);
        std::fs::write(&db, b"").unwrap();
        let err = Store::open_read(dir.path()).unwrap_err();
        assert!(matches!(err, StoreError::NoDatabase { .. }), "{err}");
        assert_eq!(std::fs::metadata(&db).unwrap().len(), 0);
        // A file where a directory is named: said so.
        let err = Store::open_read(&db).unwrap_err();
        assert!(
            matches!(err, StoreError::NotADirectoryToRead { .. }),
            "{err}"
        );
        // And a path under a file, naming the file.
        let err = Store::open_read(&db.join("sub")).unwrap_err();
        assert!(
            matches!(&err, StoreError::NotADirectoryToRead { path } if *path == db),
            "{err}"
        );
    }

    #[test]
    fn another_programs_database_is_refused_and_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join(DB_FILE);
        {
            let c = Connection::open(&db).unwrap();
            c.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
                .unwrap();
        }
        let before = std::fs::read(&db).unwrap();
        for err in [
            Store::open_read(dir.path()).map(|_| ()).unwrap_err(),
            Store::open(dir.path(), Durability::Normal)
                .map(|_| ())
                .unwrap_err(),
        ] {
            assert!(matches!(err, StoreError::NotHookscope { .. }), "{err}");
            assert!(
                err.to_string().contains("another program's tables"),
                "{err}"
            );
        }
        assert_eq!(std::fs::read(&db).unwrap(), before, "left as it was");
        // Bytes that are no database at all: said so, with the path, and left as they are.
        let noise = vec![0x5a_u8; 4096];
        std::fs::write(&db, &noise).unwrap();
        let _ = std::fs::remove_file(dir.path().join(format!("{DB_FILE}-wal")));
        let _ = std::fs::remove_file(dir.path().join(format!("{DB_FILE}-shm")));
        for err in [
            Store::open_read(dir.path()).map(|_| ()).unwrap_err(),
            Store::open(dir.path(), Durability::Normal)
                .map(|_| ())
                .unwrap_err(),
        ] {
            assert!(matches!(err, StoreError::NotSqlite { .. }), "{err}");
            assert!(err.to_string().contains(DB_FILE), "{err}");
        }
        assert_eq!(std::fs::read(&db).unwrap(), noise);
    }

    #[tokio::test]
    async fn an_insert_whose_caller_stops_waiting_is_still_stored() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Full).unwrap();
        // More rows than the channel holds, each abandoned at its first poll: the ones that
        // found the channel full are handed over by a task of their own.
        let n = 8 * MAX_BATCH + 500;
        for i in 0..n {
            let insert = store.insert(sample(&format!("gone-{i}"), 1, 200));
            let _ = futures_util::FutureExt::now_or_never(insert);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let count = store.count(&Filter::default()).unwrap();
            if count == n as u64 {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "{count} of {n} stored"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    #[test]
    fn a_newer_schema_is_refused_with_a_clear_message() {
        let dir = tempfile::tempdir().unwrap();
        {
            let c = Connection::open(db_path(dir.path())).unwrap();
            c.pragma_update(None, "user_version", 99).unwrap();
        }
        let err = Store::open_read(dir.path()).unwrap_err();
        assert!(matches!(err, StoreError::TooNew { found: 99, .. }));
        assert!(err.to_string().contains("--data-dir"));
    }
}
