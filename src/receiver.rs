//! The embedded receiver: a hyper server that accepts every call (any method, path, headers,
//! body), records it whole, and answers as the responder decides. An invocation is committed to
//! the store before its answer leaves.

use crate::contract::{Brand, Finding, Severity, validate};
use crate::responder::{Answer, CallInfo, Responder};
use crate::store::{
    CALLER_HUNG_UP, Header, Invocation, NOT_HTTP, QUIT_BEFORE_ANSWER, SentAnswer, Store, Summary,
};
use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use chrono::{DateTime, Utc};
use http_body_util::BodyExt;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;
use tokio::sync::oneshot::error::TryRecvError;
use tokio::sync::{broadcast, oneshot};

mod tap;

/// The default port of the receiver.
pub const DEFAULT_PORT: u16 = 8787;
/// The default body limit: 32 MiB.
pub const DEFAULT_BODY_LIMIT: u64 = 32 << 20;
/// Bodies larger than this are parsed off the async workers.
const BLOCKING_PARSE_OVER: usize = 256 << 10;
/// When the receiver stops, a body still arriving has this long to arrive, and connections
/// that never finished sending a request are not waited for past it.
pub const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);
/// The longest a stop waits for calls being handled (their answers and commits).
const STOP_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

#[derive(Clone, Debug)]
pub struct ReceiverConfig {
    pub bind: IpAddr,
    pub port: u16,
    /// Bodies up to this many bytes are kept whole; larger ones are answered 413.
    pub body_limit: u64,
    pub brand: Brand,
    /// How long a connection may take to send a request's head, counted from when the
    /// receiver waits for it (an idle kept-alive connection included): past it the connection
    /// is closed, and what arrived of a head is recorded. Without it, a client that sent half
    /// a head, or nothing, held its connection (and a file descriptor) for as long as it liked.
    pub head_timeout: std::time::Duration,
    /// How long a request's body may go without a byte arriving: past it the connection is
    /// closed with no answer, and the call is recorded with what arrived (`body-timed-out`).
    /// Without it, a client that stopped sending in the middle of its body, and kept its
    /// connection open, was never recorded until Hookscope stopped.
    pub body_timeout: std::time::Duration,
}

/// [`ReceiverConfig::head_timeout`]'s default: the service's own wait for an answer.
pub const HEAD_TIMEOUT: std::time::Duration = crate::contract::ANSWER_TIMEOUT;
/// [`ReceiverConfig::body_timeout`]'s default: the service's own wait for an answer.
pub const BODY_TIMEOUT: std::time::Duration = crate::contract::ANSWER_TIMEOUT;

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: DEFAULT_PORT,
            body_limit: DEFAULT_BODY_LIMIT,
            brand: Brand::default(),
            head_timeout: HEAD_TIMEOUT,
            body_timeout: BODY_TIMEOUT,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReceiverError {
    #[error(
        "port {port} on {ip} is already in use (another Hookscope, or another program); choose another with --port, or --port 0 for any free port"
    )]
    PortInUse { ip: IpAddr, port: u16 },
    #[error("{}", not_here(.ip))]
    NotHere { ip: IpAddr },
    #[error("cannot listen on {addr}: {}; check the address given with --bind", crate::text::io_words(.source))]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// What to say of a `--bind` address that is not one of this machine's.
pub fn not_here(ip: &IpAddr) -> String {
    format!(
        "{ip} is not an address of this machine, so nothing can listen on it: give --bind one of its own (127.0.0.1 for this machine only, 0.0.0.0 for every address it has)"
    )
}

impl ReceiverError {
    /// The same, in the window's words (there are no flags there). `still` is where the
    /// receiver that was running keeps listening, if it was kept: the top bar's port controls
    /// are for a receiver that does not listen, so the way out is then Settings.
    pub fn for_window(&self, still: Option<SocketAddr>) -> String {
        match (self, still) {
            (ReceiverError::PortInUse { port, .. }, None) => format!(
                "Port {port} is already in use (another Hookscope, or another program). Choose another port, or any free port."
            ),
            (ReceiverError::PortInUse { port, .. }, Some(still)) => format!(
                "Port {port} is already in use (another Hookscope, or another program). Still listening on http://{still}/: choose another port in Settings."
            ),
            (ReceiverError::NotHere { ip }, still) => format!(
                "{ip} is not an address of this machine. Check the address in Settings.{}",
                still.map_or(String::new(), |s| format!(
                    " Still listening on http://{s}/."
                ))
            ),
            (ReceiverError::Bind { addr, source }, still) => format!(
                "Cannot listen on {addr}: {}. Check the address in Settings.{}",
                crate::text::io_words(source),
                still.map_or(String::new(), |s| format!(
                    " Still listening on http://{s}/."
                ))
            ),
        }
    }
}

/// One recorded call, as published to listeners (the CLI's printer, the UI).
#[derive(Clone, Debug)]
pub struct Recorded {
    pub summary: Summary,
}

/// A call whose answer is held back by a delay: it is stored when it is answered, so until then
/// the window shows it from here (a tester forcing a time-out sees the call arrive at once).
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    /// Tells held calls apart (in the order they came).
    pub key: u64,
    /// When the call arrived (as it is stored).
    pub received_at: DateTime<Utc>,
    pub since: Instant,
    /// How long the answer is held back.
    pub delay: std::time::Duration,
    pub method: String,
    pub path: String,
    pub event: Option<String>,
    pub delivery: Option<String>,
    pub attempt: Option<u32>,
    /// The status code that will be sent.
    pub status: u16,
    /// The rule that chose the answer, as `rule` in the store (`rule 2: slow`).
    pub rule: Option<String>,
    /// The clock speed a Hookscope emulator marked the call with: its caller gives up after
    /// the service's 30 s on that clock.
    pub clock_speed: Option<f64>,
}

impl Held {
    /// The call: `POST /hook · status-report, delivery d-1, attempt 2 (rule 1: slow)`.
    pub fn what(&self) -> String {
        let mut about: Vec<String> = Vec::new();
        if let Some(e) = &self.event {
            about.push(quoted_if_odd(e));
        }
        if let Some(d) = &self.delivery {
            about.push(format!("delivery {}", quoted_if_odd(d)));
        }
        if let Some(a) = self.attempt {
            about.push(format!("attempt {a}"));
        }
        let mut line = format!("{} {}", self.method, self.path);
        if !about.is_empty() {
            line = format!("{line} · {}", about.join(", "));
        }
        if let Some(rule) = &self.rule {
            line = format!("{line} ({rule})");
        }
        line
    }
}

/// A value from a request as [`Held::what`] writes it: as it is, or in quotes (escaped within)
/// when it is empty or holds what the sentence itself is made of (a space, `,`, `:`, `·`, a
/// bracket, a quote; a control character alone is escaped where the line is printed): a delivery `d1, attempt 5: will be answered 500` had read as part of the
/// sentence that announced it.
fn quoted_if_odd(value: &str) -> String {
    let odd = value.is_empty()
        || value
            .chars()
            .any(|c| c.is_whitespace() || ",:·()\"'\\".contains(c));
    if odd {
        format!("{value:?}")
    } else {
        value.to_owned()
    }
}

impl Held {
    /// How long its caller waits for an answer: the service's 30 s, or, when Hookscope's
    /// emulator made the call, 30 s of its clock and never under its least real wait.
    pub fn caller_wait(&self) -> std::time::Duration {
        crate::emulator::caller_wait(self.clock_speed)
    }

    /// What it gets and when, counting down at `now`: `200 in 27 s`, and when the delay is
    /// past its caller's wait, that the caller stops (or stopped) waiting.
    pub fn countdown(&self, now: Instant) -> String {
        let line = self.countdown_short(now);
        match self.wait_note_at(now) {
            Some(note) => format!("{line}; {note}"),
            None => line,
        }
    }

    /// [`Held::countdown`] without its note: `503 in 2 s`.
    pub fn countdown_short(&self, now: Instant) -> String {
        let passed = now.saturating_duration_since(self.since);
        let left = self.delay.saturating_sub(passed);
        format!("{} in {}", self.status, crate::text::countdown(left))
    }

    /// [`Held::countdown`]'s note, when its caller stops (or stopped) waiting before the delay
    /// ends: `the service stops waiting at 30 s …`.
    pub fn wait_note_at(&self, now: Instant) -> Option<String> {
        self.wait_note(now.saturating_duration_since(self.since))
    }

    /// How `listen` announces it as it arrives: `POST /hook · ...: will be answered 200 after
    /// 1.5 s`, with the delay to the millisecond.
    pub fn announce(&self) -> String {
        let delay = crate::responder::delay_words(self.delay.as_millis() as u64);
        let line = format!(
            "{}: will be answered {} after {delay}",
            self.what(),
            self.status
        );
        match self.wait_note(std::time::Duration::ZERO) {
            Some(note) => format!("{line}; {note}"),
            None => line,
        }
    }

    /// Said when the delay reaches its caller's wait (30 s or more, as `answer-too-late`).
    fn wait_note(&self, passed: std::time::Duration) -> Option<String> {
        let wait = self.caller_wait();
        if self.delay < wait {
            return None;
        }
        let verb = if passed >= wait { "stopped" } else { "stops" };
        let (timeout, at) = (
            crate::contract::ANSWER_TIMEOUT,
            crate::text::human_duration(wait),
        );
        Some(match self.clock_speed {
            Some(speed) if speed > 1.0 => {
                let least = crate::emulator::MIN_REAL_ANSWER_WAIT;
                format!(
                    "the emulator {verb} waiting at {at} (its {} at {speed}x{})",
                    crate::text::human_duration(timeout),
                    if timeout.div_f64(speed) < least {
                        format!(", and never under {}", crate::text::human_duration(least))
                    } else {
                        String::new()
                    }
                )
            }
            _ => format!("the service {verb} waiting at {at}"),
        })
    }

    /// How much of the delay has passed at `now`, from 0 to 1.
    pub fn passed_share(&self, now: Instant) -> f32 {
        if self.delay.is_zero() {
            return 1.0;
        }
        let passed = now.saturating_duration_since(self.since);
        (passed.as_secs_f32() / self.delay.as_secs_f32()).clamp(0.0, 1.0)
    }
}

/// Removes its call from the held ones when the call is answered (or its handler dropped).
struct HeldGuard {
    held: Arc<tokio::sync::watch::Sender<Vec<Held>>>,
    key: u64,
}

impl Drop for HeldGuard {
    fn drop(&mut self) {
        let key = self.key;
        self.held.send_if_modified(|v| {
            let before = v.len();
            v.retain(|h| h.key != key);
            v.len() != before
        });
    }
}

struct Shared {
    store: Store,
    responder: Responder,
    config: ReceiverConfig,
    events: broadcast::Sender<Arc<Recorded>>,
    /// Becomes true when the receiver stops: answers held back by a delay go out at once.
    stopping: tokio::sync::watch::Receiver<bool>,
    /// Calls read and not yet answered.
    in_progress: Arc<AtomicUsize>,
    quit: Arc<Quit>,
    /// Calls whose answer is held back by a delay, for the window.
    held: Arc<tokio::sync::watch::Sender<Vec<Held>>>,
    held_count: std::sync::atomic::AtomicU64,
}

/// A quit at once ([`Quitter::quit_now`]): what the calls still in progress do then.
#[derive(Default)]
struct Quit {
    on: std::sync::atomic::AtomicBool,
    /// A stop has begun (as the `stopping` watch says, read without a lock on the hot path).
    stopping: std::sync::atomic::AtomicBool,
    /// Calls whose handler runs (each call once, however else it is counted).
    calls: Arc<AtomicUsize>,
    /// Calls that will get no answer: they wait for the process to end.
    parked: AtomicUsize,
    /// Calls noted as stored and never answered, and whether each is a registration check.
    noted: std::sync::Mutex<Vec<(i64, bool)>>,
    /// During a stop, calls stored and answered whose answer is still being sent: id -> (when
    /// the call arrived, whether it is a registration check). A quit notes those left.
    unsent: std::sync::Mutex<std::collections::HashMap<i64, (Instant, bool)>>,
}

impl Quit {
    fn noted(&self, id: i64, check: bool) {
        if let Ok(mut ids) = self.noted.lock() {
            ids.push((id, check));
        }
    }
}

/// How long a quit at once waits for the calls in progress to stop where they are.
const QUIT_WAIT: std::time::Duration = std::time::Duration::from_millis(750);
/// How long it then waits for the notes on the calls stored and not answered.
const QUIT_NOTE_WAIT: std::time::Duration = std::time::Duration::from_millis(750);

/// Quits a receiver at once, from anywhere (a second Ctrl-C while [`Running::shutdown`] runs).
#[derive(Clone)]
pub struct Quitter {
    quit: Arc<Quit>,
    in_progress: Arc<AtomicUsize>,
    store: Store,
}

/// What a quit at once did to the calls in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QuitReport {
    /// Calls that got no answer.
    pub unanswered: usize,
    /// Of those, the ones already stored, by id (noted `quit-before-answer`, so the store does
    /// not claim they were answered); the others were not stored.
    pub stored: Vec<i64>,
    /// How many of those stored are registration checks: the service sends no check again (it
    /// refuses the URL), where it retries a delivery.
    pub checks: usize,
}

/// The note on a call stored and never answered because Hookscope quit at once; it replaces
/// an `answered-early` (the answer the stop sent early never went either).
fn quit_finding(after: std::time::Duration, registration_check: bool) -> Finding {
    Finding {
        severity: Severity::Warning,
        code: QUIT_BEFORE_ANSWER.into(),
        message: format!(
            "Hookscope quit at once (a second Ctrl-C) after this call was stored and before its answer was sent, {} in: the caller got no answer. {}",
            crate::text::human_duration(after),
            crate::store::unanswered_consequence(registration_check)
        ),
    }
}

async fn note_quit(store: &Store, quit: &Quit, id: i64, started: Instant, check: bool) {
    let (finding, outcome) = (
        quit_finding(started.elapsed(), check),
        crate::store::unanswered_outcome(check),
    );
    if store
        .note_replacing(id, finding, outcome, Some("answered-early"))
        .await
        .is_ok()
    {
        quit.noted(id, check);
    }
}

impl Quitter {
    /// Calls begun and not yet answered, as [`Running::in_progress`].
    pub fn in_progress(&self) -> usize {
        self.in_progress.load(Ordering::Relaxed)
    }

    /// From now on no call is answered, and none is handed to the store; a call already stored
    /// whose answer has not gone yet is noted as never answered. Waits (at most [`QUIT_WAIT`]
    /// and [`QUIT_NOTE_WAIT`]) for the calls to stop and for those notes, then returns: the
    /// caller ends the process, and the service retries every call that got no answer.
    ///
    /// The quit takes effect when this is called, before the future is awaited.
    pub fn quit_now(&self) -> impl std::future::Future<Output = QuitReport> + use<> {
        self.quit.on.store(true, Ordering::SeqCst);
        let (quit, in_progress, store) = (
            self.quit.clone(),
            self.in_progress.clone(),
            self.store.clone(),
        );
        async move {
            let deadline = Instant::now() + QUIT_WAIT;
            // Settled when every count left is a call waiting for the end (its handler's).
            let settled =
                || in_progress.load(Ordering::SeqCst) <= quit.parked.load(Ordering::SeqCst);
            while !settled() && Instant::now() < deadline {
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
            // Answers still being sent will not go once the process ends.
            let unsent: Vec<(i64, (Instant, bool))> = quit
                .unsent
                .lock()
                .map(|mut m| m.drain().collect())
                .unwrap_or_default();
            let notes: Vec<_> = unsent
                .iter()
                .map(|&(id, (started, check))| {
                    let (store, quit) = (store.clone(), quit.clone());
                    tokio::spawn(async move { note_quit(&store, &quit, id, started, check).await })
                })
                .collect();
            let notes_due = tokio::time::Instant::now() + QUIT_NOTE_WAIT;
            for note in notes {
                let _ = tokio::time::timeout_at(notes_due, note).await;
            }
            let noted = quit.noted.lock().map(|ids| ids.clone()).unwrap_or_default();
            let mut stored: Vec<i64> = noted.iter().map(|(id, _)| *id).collect();
            stored.sort_unstable();
            QuitReport {
                unanswered: quit.calls.load(Ordering::SeqCst) + unsent.len(),
                stored,
                checks: noted.iter().filter(|(_, check)| *check).count(),
            }
        }
    }
}

/// A call that will get no answer, because Hookscope quits at once: it waits for the process
/// to end (the connection then closes without an answer).
async fn park(shared: &Shared) -> Response {
    shared.quit.parked.fetch_add(1, Ordering::SeqCst);
    std::future::pending().await
}

/// During a stop, the answer of stored call `id` is tracked until it has been sent, so that a
/// quit at once notes it if it has not.
fn track_send(
    shared: &Arc<Shared>,
    id: i64,
    started: Instant,
    check: bool,
    r: Response,
) -> Response {
    if let Ok(mut unsent) = shared.quit.unsent.lock() {
        unsent.insert(id, (started, check));
    }
    let (parts, body) = r.into_parts();
    let tracked = Tracked {
        body,
        _sent: Sent {
            quit: shared.quit.clone(),
            id,
        },
    };
    Response::from_parts(parts, Body::new(tracked))
}

/// An answer's body that tells, when the server is done with it, that the answer went.
struct Tracked {
    body: Body,
    _sent: Sent,
}

struct Sent {
    quit: Arc<Quit>,
    id: i64,
}

impl Drop for Sent {
    fn drop(&mut self) {
        if let Ok(mut unsent) = self.quit.unsent.lock() {
            unsent.remove(&self.id);
        }
    }
}

impl axum::body::HttpBody for Tracked {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

fn quitting(shared: &Shared) -> bool {
    shared.quit.on.load(Ordering::SeqCst)
}

/// Counts a call in progress for as long as it lives (a handler dropped because its caller
/// hung up counts down too).
struct InProgress(Arc<AtomicUsize>);

impl InProgress {
    fn new(count: &Arc<AtomicUsize>) -> InProgress {
        count.fetch_add(1, Ordering::Relaxed);
        InProgress(count.clone())
    }
}

impl Drop for InProgress {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A receiver that is listening. Dropping it does not stop it; call [`Running::shutdown`].
pub struct Running {
    pub addr: SocketAddr,
    events: broadcast::Sender<Arc<Recorded>>,
    stop: Option<oneshot::Sender<()>>,
    stopping: tokio::sync::watch::Sender<bool>,
    in_progress: Arc<AtomicUsize>,
    quit: Arc<Quit>,
    store: Store,
    task: tokio::task::JoinHandle<()>,
    held: Arc<tokio::sync::watch::Sender<Vec<Held>>>,
}

impl Running {
    /// The URL a webhook on this machine should point at: bound to every address (0.0.0.0 or
    /// ::), the loopback one, since a URL cannot name "every address".
    pub fn url(&self) -> String {
        url_for(self.addr)
    }

    /// A stream of every call recorded from now on.
    pub fn subscribe(&self) -> Events {
        self.events.subscribe()
    }

    /// The calls whose answer is held back by a delay, now and as they change (each is stored
    /// and published through [`Running::subscribe`] when it is answered, then leaves this list).
    pub fn watch_held(&self) -> tokio::sync::watch::Receiver<Vec<Held>> {
        self.held.subscribe()
    }

    /// Calls the receiver has begun to read and not yet answered (held back by a delay, say).
    pub fn in_progress(&self) -> usize {
        self.in_progress.load(Ordering::Relaxed)
    }

    /// A handle that quits at once, usable while [`Running::shutdown`] runs.
    pub fn quitter(&self) -> Quitter {
        Quitter {
            quit: self.quit.clone(),
            in_progress: self.in_progress.clone(),
            store: self.store.clone(),
        }
    }

    /// Stop accepting calls; the calls in progress finish (and are stored) first. An answer
    /// held back by a delay is sent at once, noted on its call (`answered-early`), so stopping
    /// never waits out an hour's delay.
    ///
    /// A body still arriving gets [`STOP_GRACE`], then the call is recorded as cut short and
    /// answered 503 (so the service sends it again). A connection that never finished sending
    /// its request holds nothing to record: it is not waited for past the grace, so a stalled
    /// client cannot keep the receiver from stopping.
    pub async fn shutdown(mut self) {
        let started = Instant::now();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.quit.stopping.store(true, Ordering::SeqCst);
        let _ = self.stopping.send(true);
        let mut served = tokio::select! {
            _ = &mut self.task => true,
            _ = tokio::time::sleep(STOP_GRACE) => false,
        };
        // Then the calls still being handled are waited for (bounded too), and those whose
        // caller hung up while they were being stored (noted and told after their commit).
        while self.in_progress() > 0 && started.elapsed() < STOP_WAIT {
            let tick = tokio::time::sleep(std::time::Duration::from_millis(20));
            if served {
                tick.await;
            } else {
                tokio::select! {
                    _ = &mut self.task => served = true,
                    _ = tick => {}
                }
            }
        }
        if !served {
            self.task.abort();
            let _ = (&mut self.task).await;
        }
    }
}

/// The URL of a server bound to `addr`, as a caller on this machine reaches it (bound to
/// every address, through the loopback one).
pub fn url_for(mut addr: SocketAddr) -> String {
    if addr.ip().is_unspecified() {
        addr.set_ip(match addr {
            SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    format!("http://{addr}/")
}

/// Bind and start the receiver on the current tokio runtime.
pub async fn start(
    config: ReceiverConfig,
    store: Store,
    responder: Responder,
) -> Result<Running, ReceiverError> {
    Ok(bind(config).await?.start(store, responder))
}

/// Bind and start the receiver, with a stream of every call it records from its first (see
/// [`Bound::start_subscribed`]).
pub async fn start_subscribed(
    config: ReceiverConfig,
    store: Store,
    responder: Responder,
) -> Result<(Running, Events), ReceiverError> {
    Ok(bind(config).await?.start_subscribed(store, responder))
}

/// The calls a receiver records, as they are stored ([`Running::subscribe`]).
pub type Events = broadcast::Receiver<Arc<Recorded>>;

/// A receiver's port, bound but not yet answering: a caller can learn that the port is free
/// before it creates anything (the store) that would be left behind if it were not.
pub struct Bound {
    listener: tokio::net::TcpListener,
    local: SocketAddr,
    config: ReceiverConfig,
}

impl Bound {
    /// The address bound (the port chosen, for port 0).
    pub fn addr(&self) -> SocketAddr {
        self.local
    }

    /// Start answering on the bound port, on the current tokio runtime.
    pub fn start(self, store: Store, responder: Responder) -> Running {
        self.start_subscribed(store, responder).0
    }

    /// Start answering, with a stream of the calls it records, subscribed before it reads the
    /// first.
    /// [`Running::subscribe`] after `start` misses a call served in between: one already
    /// waiting in the port's queue (the port is bound, and takes connections, before it is
    /// served) can be answered and stored first, and `listen` had printed no line for it.
    pub fn start_subscribed(self, store: Store, responder: Responder) -> (Running, Events) {
        let Bound {
            listener,
            local,
            config,
        } = self;
        serve(listener, local, config, store, responder)
    }
}

/// Bind the receiver's port (see [`Bound`]).
pub async fn bind(config: ReceiverConfig) -> Result<Bound, ReceiverError> {
    let addr = SocketAddr::new(config.bind, config.port);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::AddrInUse => ReceiverError::PortInUse {
                ip: config.bind,
                port: config.port,
            },
            std::io::ErrorKind::AddrNotAvailable => ReceiverError::NotHere { ip: config.bind },
            _ => ReceiverError::Bind { addr, source },
        })?;
    let local = listener
        .local_addr()
        .map_err(|source| ReceiverError::Bind { addr, source })?;
    Ok(Bound {
        listener,
        local,
        config,
    })
}

fn serve(
    listener: tokio::net::TcpListener,
    local: SocketAddr,
    config: ReceiverConfig,
    store: Store,
    responder: Responder,
) -> (Running, Events) {
    let (events, first) = broadcast::channel(4096);
    let (stopping_tx, stopping) = tokio::sync::watch::channel(false);
    let in_progress = Arc::new(AtomicUsize::new(0));
    let quit = Arc::new(Quit::default());
    let held = Arc::new(tokio::sync::watch::Sender::new(Vec::new()));
    let shared = Arc::new(Shared {
        store: store.clone(),
        responder,
        config,
        events: events.clone(),
        stopping,
        in_progress: in_progress.clone(),
        quit: quit.clone(),
        held: held.clone(),
        held_count: Default::default(),
    });
    // Requests hyper refuses reach no handler: the connections' taps hand them here.
    let (refused_tx, refused_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(record_refused(shared.clone(), refused_rx));
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let task = tokio::spawn(serve_calls(
        tap::TappedListener {
            listener,
            refused: Some(refused_tx),
        },
        shared,
        stop_rx,
    ));
    let running = Running {
        addr: local,
        events,
        stop: Some(stop_tx),
        stopping: stopping_tx,
        in_progress,
        quit,
        store,
        task,
        held,
    };
    (running, first)
}

/// Tell the listeners (the window, `listen`'s printer) of a call stored as `id`, if its row
/// was built (it is only when someone listens).
fn publish(shared: &Shared, summary: Option<Summary>, id: i64) {
    if let Some(summary) = summary {
        let _ = shared.events.send(Arc::new(Recorded {
            summary: Summary { id, ..summary },
        }));
    }
}

/// Records each request hyper refused, as its connection ends, until every connection (and
/// the listener) is gone.
async fn record_refused(
    shared: Arc<Shared>,
    mut refused: tokio::sync::mpsc::UnboundedReceiver<tap::Refused>,
) {
    while let Some(r) = refused.recv().await {
        let inv = refused_invocation(r);
        let summary = (shared.events.receiver_count() > 0).then(|| Summary::of(0, &inv));
        let stored = match shared.store.submit(inv) {
            Ok(committing) => committing.await,
            Err(e) => Err(e),
        };
        match stored {
            Ok(id) => publish(&shared, summary, id),
            Err(e) => tracing::warn!("a request that was not HTTP could not be stored: {e}"),
        }
    }
}

/// The method, path and query of a request line that reads as one (`POST /hook?x=1
/// HTTP/1.1`), or empty ones for bytes that do not.
fn request_line(bytes: &[u8]) -> (String, String, Option<String>) {
    let line = bytes.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    // A line cut where the kept bytes end (a target of megabytes) has no version yet.
    let cut = !bytes.contains(&b'\n');
    let mut parts = line.split(|b| *b == b' ');
    let token = |m: &[u8]| (1..=32).contains(&m.len()) && m.iter().all(u8::is_ascii_graphic);
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(method), Some(target), version, None)
            if token(method)
                && match version {
                    Some(v) => v.starts_with(b"HTTP/"),
                    None => cut && target.starts_with(b"/"),
                } =>
        {
            let target = String::from_utf8_lossy(target);
            let (path, query) = match target.split_once('?') {
                Some((p, q)) => (p.to_owned(), Some(q.to_owned())),
                None => (target.into_owned(), None),
            };
            (String::from_utf8_lossy(method).into_owned(), path, query)
        }
        _ => (String::new(), String::new(), None),
    }
}

/// The record of a request hyper refused before any handler ran: what arrived of it is its
/// body (head included), and a finding says why it could not be read and what was answered.
fn refused_invocation(r: tap::Refused) -> Invocation {
    let (method, path, query) = request_line(&r.bytes);
    let kept = if r.bytes.len() >= tap::KEPT {
        "its first 64 KiB are kept as the body, head included".to_owned()
    } else {
        format!(
            "what arrived ({}) is kept as the body, head included",
            crate::text::count(r.bytes.len() as u64, "byte", "bytes")
        )
    };
    let answered = match r.answered {
        Some(code) => format!(
            "The HTTP layer answered it {code} before Hookscope could choose an answer, and closed the connection"
        ),
        None => "The connection ended before any answer was sent".to_owned(),
    };
    let mut findings = vec![Finding {
        severity: Severity::Error,
        code: NOT_HTTP.into(),
        message: format!(
            "The request could not be read as HTTP: {}. {answered}; {kept}.",
            r.why
        ),
    }];
    if r.timed_out {
        findings.push(Finding {
            severity: Severity::Warning,
            code: crate::store::HEAD_TIMED_OUT.into(),
            // The receiver closed it: the caller did not hang up.
            message: "The receiver closed the connection, the request's head not whole in time: the caller got no answer. No retry follows from it: the service sends HTTP, so this was not one of its calls.".to_owned(),
        });
    } else if r.answered.is_none() {
        findings.push(Finding {
            severity: Severity::Warning,
            code: CALLER_HUNG_UP.into(),
            // Not "the service retries": what cannot be read as HTTP is not one of its calls
            // (the record's answer says no retry follows from it).
            message: "The connection ended before the HTTP layer answered: the caller got no answer. No retry follows from it: the service sends HTTP, so this was not one of its calls.".to_owned(),
        });
    }
    Invocation {
        received_at: r.at,
        method,
        path,
        query,
        headers: Vec::new(),
        body_size: r.bytes.len() as u64,
        body: r.bytes,
        declared_size: None,
        body_kept: true,
        peer: Some(r.peer.to_string()),
        event: None,
        delivery: None,
        attempt: None,
        webhook_id: None,
        messages: None,
        registration_check: false,
        findings,
        answer: SentAnswer {
            status: r.answered.unwrap_or(400),
            headers: Vec::new(),
            body: Default::default(),
            delay_ms: 0,
        },
        took_us: 0,
        rule: None,
    }
}

/// The body as read: kept whole up to the limit, or only counted past it.
struct ReadBody {
    bytes: Vec<u8>,
    received: u64,
    kept: bool,
    /// The client stopped sending before the end (its error).
    broken: Option<String>,
    /// The body's framing (its chunk sizes) could not be read: the caller is still there, and
    /// gets the answer, though the rest of its body is lost.
    malformed: bool,
    /// The receiver was stopped while the body was still arriving (after [`STOP_GRACE`]).
    cut_by_stop: bool,
    /// Past the limit, reading stopped before the end: `received` is a lower bound.
    stopped_counting: bool,
    /// No byte arrived for the body timeout: the receiver stopped waiting (`broken` says so).
    stalled: bool,
}

async fn read_body(
    body: Body,
    limit: u64,
    declared: Option<u64>,
    idle: std::time::Duration,
    mut stopping: tokio::sync::watch::Receiver<bool>,
) -> ReadBody {
    let mut body = body;
    let mut out = ReadBody {
        bytes: Vec::new(),
        received: 0,
        kept: declared.is_none_or(|d| d <= limit),
        broken: None,
        malformed: false,
        cut_by_stop: false,
        stopped_counting: false,
        stalled: false,
    };
    let give_up = async {
        stopped(&mut stopping).await;
        tokio::time::sleep(STOP_GRACE).await;
    };
    tokio::pin!(give_up);
    if out.kept
        && let Some(d) = declared
    {
        // Trust the declared size only so far: a client that declares 32 MiB and sends nothing
        // must not make every connection hold that much.
        out.bytes.reserve((d as usize).min(1 << 20));
    }
    // Past the limit the rest is read and dropped so the client gets its 413, up to a cap.
    let drain_cap = limit.saturating_mul(2).saturating_add(16 << 20);
    loop {
        // The wait for each frame is bounded; its timer is armed only when a frame is not
        // already there (a small body arrives with its head: no timer at all).
        let frame = tokio::select! {
            biased;
            frame = tokio::time::timeout(idle, body.frame()) => frame,
            _ = &mut give_up => {
                out.cut_by_stop = true;
                break;
            }
        };
        let Ok(frame) = frame else {
            out.stalled = true;
            out.broken = Some(format!(
                "no byte of it arrived for {}",
                crate::text::human_duration(idle)
            ));
            break;
        };
        let Some(frame) = frame else { break };
        match frame {
            Ok(frame) => {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                out.received += data.len() as u64;
                if out.kept {
                    if out.received > limit {
                        out.kept = false;
                        out.bytes = Vec::new();
                    } else {
                        out.bytes.extend_from_slice(&data);
                    }
                }
                if out.received > drain_cap {
                    out.stopped_counting = true;
                    break;
                }
            }
            Err(e) => {
                let (said, malformed) = body_error(&e);
                out.broken = Some(said);
                out.malformed = malformed;
                break;
            }
        }
    }
    out
}

/// What a body's error says, at its root ("invalid chunk size line"), and whether it is the
/// body's framing that could not be read (hyper says so with `InvalidData` or `InvalidInput`)
/// rather than the caller going away (`UnexpectedEof`, a reset).
fn body_error(e: &(dyn std::error::Error + 'static)) -> (String, bool) {
    let mut root = e;
    let mut malformed = false;
    loop {
        if let Some(io) = root.downcast_ref::<std::io::Error>() {
            malformed = matches!(
                io.kind(),
                std::io::ErrorKind::InvalidData | std::io::ErrorKind::InvalidInput
            );
        }
        match root.source() {
            Some(next) => root = next,
            None => break,
        }
    }
    (root.to_string(), malformed)
}

/// Accept connections and serve each one's calls until `stop` resolves; then stop accepting,
/// let each connection finish the call it is on, and return once all have closed.
async fn serve_calls(
    mut listener: tap::TappedListener,
    shared: Arc<Shared>,
    mut stop: oneshot::Receiver<()>,
) {
    use axum::serve::Listener;
    // Connections see the stop through `stopping_tx`'s receivers, and hold a `closed_rx` each so
    // the end can wait for them (axum's own serve loop, with the calls' service below).
    let (stopping_tx, _) = tokio::sync::watch::channel(());
    let (closed_tx, closed_rx) = tokio::sync::watch::channel(());
    loop {
        let (io, conn) = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stop => break,
        };
        let calls = Calls {
            shared: shared.clone(),
            conn,
        };
        let mut stopping = stopping_tx.subscribe();
        let closed = closed_rx.clone();
        let head_timeout = shared.config.head_timeout;
        let tap = calls.conn.tap.clone();
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(io);
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(head_timeout)
                .serve_connection(io, calls)
                .with_upgrades();
            let mut conn = std::pin::pin!(conn);
            let mut told = false;
            loop {
                tokio::select! {
                    served = conn.as_mut() => {
                        if let Err(e) = served {
                            // Told before the connection (and its tap) is dropped: what came
                            // of the head is recorded then.
                            if e.is_timeout() {
                                tap::lock(&tap).head_timed_out(head_timeout);
                            }
                            tracing::trace!("a connection ended: {e}");
                        }
                        break;
                    }
                    _ = stopping.changed(), if !told => {
                        told = true;
                        conn.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(closed);
        });
    }
    drop(closed_rx);
    drop(listener);
    // Each connection finishes its call and closes.
    let _ = stopping_tx.send(());
    closed_tx.closed().await;
}

/// The service of one connection's calls. hyper drops a call it has not answered when it reads
/// the end of the connection, which a client that closes its side as soon as its request is
/// sent does at once, sometimes before the call has even started: such a call had been lost (no
/// record, no line). A call dropped by hyper is finished on a task of its own, told its caller
/// is gone: it is stored, with `caller-hung-up`.
#[derive(Clone)]
struct Calls {
    shared: Arc<Shared>,
    conn: tap::Conn,
}

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for Calls {
    type Response = Response;
    type Error = std::convert::Infallible;
    type Future = CallFuture;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> CallFuture {
        let (gone_tx, gone) = oneshot::channel::<()>();
        // Counted from here: a call hyper drops before it first runs is still waited for by
        // a stop.
        let counted = [
            InProgress::new(&self.shared.in_progress),
            InProgress::new(&self.shared.quit.calls),
        ];
        let call = answer_call(
            self.shared.clone(),
            self.conn.clone(),
            req.map(Body::new),
            gone,
            counted,
        );
        CallFuture {
            call: Some(Box::pin(call)),
            gone: Some(gone_tx),
        }
    }
}

/// One call being answered, on its connection's task while hyper keeps it, and on a task of its
/// own once hyper drops it (see [`Calls`]).
struct CallFuture {
    call: Option<std::pin::Pin<Box<dyn std::future::Future<Output = Response> + Send>>>,
    /// Dropped when hyper drops the call: its caller is gone.
    gone: Option<oneshot::Sender<()>>,
}

impl std::future::Future for CallFuture {
    type Output = Result<Response, std::convert::Infallible>;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Self::Output> {
        let Some(call) = self.call.as_mut() else {
            // Polled after it was answered, which hyper does not do.
            return std::task::Poll::Pending;
        };
        let answer = std::task::ready!(call.as_mut().poll(cx));
        self.call = None;
        std::task::Poll::Ready(Ok(answer))
    }
}

impl Drop for CallFuture {
    fn drop(&mut self) {
        drop(self.gone.take());
        // Not answered yet: it goes on where it was (a future boxed in place can move), with
        // its caller gone. With no runtime left, the process is ending; a call that panicked
        // (this drop is then the unwinding's) cannot be resumed.
        if let Some(call) = self.call.take()
            && !std::thread::panicking()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(call);
        }
    }
}

/// Read, check, answer and store one call. `gone` resolves once its caller has hung up.
async fn answer_call(
    shared: Arc<Shared>,
    conn: tap::Conn,
    req: Request,
    gone: oneshot::Receiver<()>,
    _counted: [InProgress; 2],
) -> Response {
    let started = Instant::now();
    let received_at = Utc::now();
    let (parts, body) = req.into_parts();
    let peer = conn.peer;
    // The headers as they arrived (order and spelling), or as hyper read them if the
    // connection's tap lost the thread.
    let raw = tap::lock(&conn.tap).take(parts.method.as_str(), &parts.uri, parts.headers.len());
    let headers: Vec<Header> = match raw {
        Some(raw) => raw.headers,
        None => parts
            .headers
            .iter()
            .map(|(n, v)| Header::new(n.as_str(), v.as_bytes()))
            .collect(),
    };
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let limit = shared.config.body_limit;
    let body = read_body(
        body,
        limit,
        declared,
        shared.config.body_timeout,
        shared.stopping.clone(),
    )
    .await;
    let method = parts.method.as_str().to_owned();

    // Validation parses the body; a large one is parsed off the async workers.
    let brand = &shared.config.brand;
    let (mut validation, bytes) = if body.bytes.len() > BLOCKING_PARSE_OVER {
        let (map, bytes, brand, method) = (
            parts.headers.clone(),
            body.bytes,
            brand.clone(),
            method.clone(),
        );
        let job = move || {
            (
                validate(&brand, &method, &header_pairs(&map), &bytes),
                bytes,
            )
        };
        match tokio::task::spawn_blocking(job).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!("validation failed: {e}");
                return plain(StatusCode::INTERNAL_SERVER_ERROR, "validation failed");
            }
        }
    } else {
        let v = validate(brand, &method, &header_pairs(&parts.headers), &body.bytes);
        (v, body.bytes)
    };

    let call = CallInfo {
        registration_check: validation.registration_check,
        facts: crate::rules::CallFacts {
            event: validation.event_raw.as_deref(),
            webhook_id: validation.webhook_id.as_deref(),
            path: request_target(&parts.uri),
            attempt: validation.attempt,
            body: &bytes,
        },
    };
    // A body over the limit or cut short is answered below whatever is chosen, and a client
    // that stopped sending its body gets no answer at all: none of them uses up a rule's
    // `times` or takes an `every_nth` turn.
    let mut decision = if !body.kept || body.cut_by_stop || body.broken.is_some() {
        shared.responder.preview(call)
    } else {
        shared.responder.decide(call)
    };
    if !body.kept {
        validation.findings.retain(|f| f.code != "empty-body");
        validation.findings.push(Finding {
            severity: Severity::Error,
            code: "body-too-large".into(),
            message: {
                let fate = if body.stalled {
                    "it was not kept, and the rest stopped arriving, so the receiver closed the connection without the 413"
                } else if body.broken.is_some() {
                    "it was not kept, and the client stopped sending before the 413 could reach it"
                } else {
                    "it was answered 413 and not kept. Raise the limit with --body-limit"
                };
                let limit = exact_size(limit);
                match declared {
                    // Refused on its declared size before it had all arrived.
                    Some(d) if d > body.received => format!(
                        "The body was declared as {}, over the limit of {limit}, and {} of it {}: {fate}.",
                        exact_size(d),
                        if body.received < 1024 {
                            crate::text::count(body.received, "byte", "bytes")
                        } else {
                            exact_size(body.received)
                        },
                        // Hookscope stopped reading, not the client sending.
                        if body.stopped_counting {
                            "was read before Hookscope stopped reading (it reads up to twice the limit and 16 MiB more)"
                        } else {
                            "arrived"
                        }
                    ),
                    _ => format!(
                        "The body is {}{}{}, over the limit of {limit}: {fate}.",
                        if body.stopped_counting { "at least " } else { "" },
                        exact_size(body.received),
                        match declared {
                            None => " (sent in chunks, with no size declared)".to_owned(),
                            Some(d) if d == body.received => String::new(),
                            Some(d) => format!(" (declared {})", exact_size(d)),
                        }
                    ),
                }
            },
        });
        decision.answer = Answer {
            body: Some(format!("Hookscope: the body is over the limit of {limit} bytes\n").into()),
            ..Answer::status(413)
        };
        decision.rule = Some("body over the limit".into());
    }
    if body.cut_by_stop {
        validation.findings.retain(|f| f.code != "empty-body");
        validation.findings.push(Finding {
            severity: Severity::Error,
            code: "body-incomplete".into(),
            message: format!(
                "Hookscope was stopped while the body was still arriving: {} had arrived {} later. It was answered 503, so the service sends it again.",
                crate::text::human_size(body.received),
                crate::text::human_duration(STOP_GRACE)
            ),
        });
        decision.answer = Answer {
            body: Some("Hookscope stopped before the body arrived\n".into()),
            retry_after: Some("60".into()),
            ..Answer::status(503)
        };
        decision.rule = Some("stopped before the body arrived".into());
    }
    // No answer is written to this call (its caller stopped sending mid-body).
    let mut withheld = false;
    if let Some(err) = &body.broken {
        let received = crate::text::count(body.received, "byte", "bytes");
        let of_declared = declared.map_or(String::new(), |d| format!(" of the {d} it declared"));
        // A body that stopped arriving gets no answer: the receiver closes the connection
        // (unless an earlier answer on it is still going out, see below: this one follows it).
        if body.stalled {
            withheld = tap::lock(&conn.tap).withhold();
        }
        let message = if body.stalled {
            format!(
                "The body stopped arriving after {received}{of_declared}: {err}, so the receiver {} (the service stops waiting for an answer after {}).",
                if withheld {
                    "closed the connection"
                } else {
                    "stopped waiting for it, and its answer followed the one still going out on the connection"
                },
                crate::text::human_duration(crate::contract::ANSWER_TIMEOUT)
            )
        } else if body.malformed {
            format!(
                "The body's chunked framing could not be read after {received} (the server said: {err}): the rest of the body is lost. The answer was sent all the same, and the connection closed."
            )
        } else {
            format!(
                "The client stopped sending the body after {received}{of_declared}: the connection ended before the body did (the server said: {err})."
            )
        };
        validation.findings.push(Finding {
            severity: Severity::Error,
            code: "body-incomplete".into(),
            message,
        });
        // Whatever is chosen, no answer reaches a client that is gone (one whose framing
        // broke is still there). None is written either: a client that only half-closed its
        // side could have read it, while the record said it got none. (Unless an earlier
        // answer on the connection is still going out to a slow reader, which is not cut
        // short for it: then this one follows it, as before.)
        if body.stalled {
            // The receiver closes it: the caller did not hang up, and gets no answer.
            if withheld {
                validation.findings.push(Finding {
                    severity: Severity::Warning,
                    code: crate::store::BODY_TIMED_OUT.into(),
                    message: format!(
                        "The receiver closed the connection, the body not whole in time: the caller got no answer. {}",
                        crate::store::unanswered_consequence(validation.registration_check)
                    ),
                });
            }
        } else if !body.malformed {
            withheld = tap::lock(&conn.tap).withhold();
            validation.findings.push(hung_up_finding(
                started.elapsed(),
                "while sending its body",
                validation.registration_check,
            ));
        }
    }

    let answer = decision.answer;
    let mut sent = sent_answer(&answer);
    // A tunnel's opening has no body, so no type for one either.
    if parts.method == axum::http::Method::CONNECT && (200..300).contains(&sent.status) {
        sent.headers
            .retain(|(n, _)| !n.eq_ignore_ascii_case("content-type"));
    }
    // The response keeps the body, so an answer to HEAD says the Content-Length a GET would get
    // (it said 0); the record says what reached the caller, which is no body when HTTP sends
    // none (hyper drops it).
    let mut recorded = sent.clone();
    if !sends_body(&parts.method, sent.status) {
        recorded.body.clear();
    }
    let inv = Invocation {
        received_at,
        method,
        path: request_target(&parts.uri).to_owned(),
        query: parts.uri.query().map(str::to_owned),
        headers,
        body: bytes,
        body_size: body.received,
        declared_size: declared,
        body_kept: body.kept,
        peer: Some(peer.to_string()),
        event: validation.event_raw,
        delivery: validation.delivery,
        attempt: validation.attempt,
        webhook_id: validation.webhook_id,
        messages: validation.messages.map(|n| n.min(u32::MAX as usize) as u32),
        registration_check: validation.registration_check,
        findings: validation.findings,
        answer: recorded,
        took_us: 0,
        rule: decision.rule,
    };
    // A call whose answer is withheld is not held for the delay first: its caller is gone, and
    // the connection had stayed open the whole delay (stored then, "held 2.2 s of a chosen
    // delay of 2 s", and on a stop both hung up and answered early).
    if answer.delay_ms == 0 || withheld {
        return record(&shared, inv, started, &sent, Some(gone)).await;
    }
    // The caller may hang up while the answer is held back (the service gives up after its
    // timeout, and hyper then drops the handler): the call is recorded all the same, with the
    // hang-up noted.
    let delay = answer.delay();
    let mut stopping = shared.stopping.clone();
    let key = shared.held_count.fetch_add(1, Ordering::Relaxed);
    let held = Held {
        key,
        received_at: inv.received_at,
        clock_speed: inv.marked_clock_speed(),
        since: started,
        delay,
        method: inv.method.clone(),
        path: inv.path.clone(),
        event: inv.event.clone(),
        delivery: inv.delivery.clone(),
        attempt: inv.attempt,
        status: answer.status,
        rule: inv.rule.clone(),
    };
    shared.held.send_modify(|v| v.push(held));
    let guard = HeldGuard {
        held: shared.held.clone(),
        key,
    };
    // Listed as held until it is stored and published.
    let _guard = guard;
    let (mut inv, mut gone) = (inv, gone);
    // A caller gone is noted even if the delay ended at the same moment.
    let hung_up = tokio::select! {
        biased;
        _ = &mut gone => {
            let when = format!(
                "before the answer held back by the delay of {} was sent",
                crate::text::human_duration(delay)
            );
            let check = inv.registration_check;
            inv.findings.push(hung_up_finding(started.elapsed(), &when, check));
            true
        }
        _ = tokio::time::sleep(delay) => false,
        _ = stopped(&mut stopping) => {
            inv.findings.push(answered_early_finding(started.elapsed(), delay));
            false
        }
    };
    // A caller that hangs up while the call is then being stored is noted too.
    record(&shared, inv, started, &sent, (!hung_up).then_some(gone)).await
}

/// A size in a person's unit and in bytes: "1.0 KiB (1025 bytes)" is not "1.0 KiB (1024 bytes)".
fn exact_size(n: u64) -> String {
    format!("{} ({n} bytes)", crate::text::human_size(n))
}

/// The finding of a call whose caller hung up `when` (before the delayed answer was sent, or
/// while the call was being stored): it got no answer.
fn hung_up_finding(after: std::time::Duration, when: &str, registration_check: bool) -> Finding {
    Finding {
        severity: Severity::Warning,
        code: CALLER_HUNG_UP.into(),
        message: format!(
            "The caller hung up after {}, {when}: it got no answer. {}",
            crate::text::human_duration(after),
            crate::store::unanswered_consequence(registration_check)
        ),
    }
}

/// Resolves when the receiver is told to stop; never if its [`Running`] was dropped instead
/// (a dropped handle leaves the receiver running).
async fn stopped(stopping: &mut tokio::sync::watch::Receiver<bool>) {
    if stopping.wait_for(|s| *s).await.is_err() {
        std::future::pending::<()>().await;
    }
}

/// The finding of a call whose delayed answer was sent early because the receiver stopped.
fn answered_early_finding(after: std::time::Duration, delay: std::time::Duration) -> Finding {
    Finding {
        // Not the answer as chosen (its timing): counted as a problem, as listen's line says.
        severity: Severity::Warning,
        code: "answered-early".into(),
        message: format!(
            "The receiver was stopped {} into the delay of {}: the answer was sent then, not after the delay.",
            crate::text::human_duration(after),
            crate::text::human_duration(delay)
        ),
    }
}

/// A call handed to the store: once it is committed, the listeners are told (the window,
/// `listen`'s lines and count). If it is dropped first (its caller hung up while it was being
/// stored, see [`record`]), the call is still stored: a task waits for the commit, notes on the
/// call that its caller got no answer, and tells the listeners all the same.
struct AfterCommit {
    committing: Option<crate::store::Committing>,
    summary: Option<Summary>,
    shared: Arc<Shared>,
    started: Instant,
    registration_check: bool,
    /// Until the listeners are told: a stop waits for it.
    _counted: InProgress,
}

impl AfterCommit {
    /// The call's id once it is committed (`None` if it was already awaited).
    async fn stored(&mut self) -> Result<Option<i64>, crate::store::StoreError> {
        let Some(committing) = self.committing.as_mut() else {
            return Ok(None);
        };
        let id = committing.await;
        self.committing = None;
        let id = id?;
        publish(&self.shared, self.summary.take(), id);
        Ok(Some(id))
    }
}

impl Drop for AfterCommit {
    fn drop(&mut self) {
        let Some(committing) = self.committing.take() else {
            return;
        };
        // No runtime left (the process is ending): the row is stored by the writer regardless.
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let after = self.started.elapsed();
        let (shared, mut summary, check) = (
            self.shared.clone(),
            self.summary.take(),
            self.registration_check,
        );
        let counted = InProgress::new(&shared.in_progress);
        rt.spawn(async move {
            let _counted = counted;
            let Ok(id) = committing.await else {
                return;
            };
            let outcome = crate::store::unanswered_outcome(check);
            let when = "while the call was being stored and before the answer was sent";
            let finding = hung_up_finding(after, when, check);
            if let Err(e) = shared.store.note(id, finding, outcome).await {
                tracing::warn!("call {id}: its caller hung up, which could not be noted: {e}");
            } else if let Some(s) = summary.as_mut() {
                s.findings += 1;
                s.outcome = outcome;
            }
            publish(&shared, summary, id);
        });
    }
}

/// Commit the call, then tell the listeners; the answer to send, or 503 if it was not stored.
async fn record(
    shared: &Arc<Shared>,
    mut inv: Invocation,
    started: Instant,
    sent: &SentAnswer,
    caller_gone: Option<oneshot::Receiver<()>>,
) -> Response {
    inv.took_us = started.elapsed().as_micros().min(u64::MAX as u128) as u64;
    // Noted already as never answered: its caller hung up, or its body stopped arriving.
    let never_answered = |inv: &Invocation| {
        inv.findings
            .iter()
            .any(|f| f.code == CALLER_HUNG_UP || f.code == crate::store::BODY_TIMED_OUT)
    };
    // A caller already gone (it closed the connection while its call was read, checked or
    // held) is stored as such; one that goes while the call is stored is noted after. `None`:
    // its hang-up (or that it was never answered) is already noted.
    let mut caller_gone = caller_gone.filter(|_| !never_answered(&inv));
    if let Some(gone) = caller_gone.as_mut()
        && gone.try_recv().is_err_and(|e| e == TryRecvError::Closed)
    {
        let when = "before its answer was ready";
        let check = inv.registration_check;
        inv.findings
            .push(hung_up_finding(started.elapsed(), when, check));
        caller_gone = None;
    }
    // Unanswered for its time alone: a call whose caller hung up, or whose body the receiver
    // stopped waiting for, is said so already (a body timed out had read "the answer took 300 ms:
    // the service waits 30 s at most").
    if inv.unanswered().is_some() && !never_answered(&inv) {
        inv.findings.push(Finding {
            severity: Severity::Warning,
            code: "answer-too-late".into(),
            message: format!(
                "The answer took {}: the service waits {} at most, so {}, whatever the code.",
                crate::text::human_duration(std::time::Duration::from_micros(inv.took_us)),
                crate::text::human_duration(crate::contract::ANSWER_TIMEOUT),
                if inv.registration_check {
                    "it refuses the URL"
                } else {
                    "it counts this call as a temporary failure and retries"
                }
            ),
        });
    }
    if quitting(shared) {
        // Quitting at once: not stored, and no answer (the service sends it again).
        return park(shared).await;
    }
    // The list row is built only when someone listens (the window, `listen`'s printer).
    let summary = (shared.events.receiver_count() > 0).then(|| Summary::of(0, &inv));
    let registration_check = inv.registration_check;
    let committed = shared.store.submit(inv).map(|committing| AfterCommit {
        committing: Some(committing),
        summary,
        shared: shared.clone(),
        started,
        registration_check,
        _counted: InProgress::new(&shared.in_progress),
    });
    let stored = match (committed, caller_gone) {
        (Ok(mut after), None) => after.stored().await,
        (Ok(mut after), Some(mut gone)) => {
            // A caller gone by the time the commit is done got no answer, whichever came
            // first: it is noted (not stored as answered at random).
            let stored = tokio::select! {
                biased;
                _ = &mut gone => None,
                stored = after.stored() => Some(stored),
            };
            match stored {
                Some(stored) => stored,
                // Nobody will read the answer; `after` notes the hang-up once committed.
                None => {
                    drop(after);
                    return plain(StatusCode::SERVICE_UNAVAILABLE, "the caller hung up");
                }
            }
        }
        (Err(e), _) => Err(e),
    };
    match stored {
        // Not answered: noted, so the store does not claim an answer the caller never got.
        Ok(Some(id)) if quitting(shared) => {
            note_quit(&shared.store, &shared.quit, id, started, registration_check).await;
            park(shared).await
        }
        Ok(None) if quitting(shared) => park(shared).await,
        Ok(Some(id)) if shared.quit.stopping.load(Ordering::SeqCst) => {
            track_send(shared, id, started, registration_check, response(sent))
        }
        Ok(_) => response(sent),
        Err(e) => {
            // Not stored means not acknowledged: ask the service to come back. (The store's
            // writer says why, once, not once per call.)
            if matches!(e, crate::store::StoreError::Commit(_)) {
                tracing::debug!("an invocation could not be stored: {e}");
            } else {
                tracing::error!("an invocation could not be stored: {e}");
            }
            let mut r = plain(
                StatusCode::SERVICE_UNAVAILABLE,
                &format!("Hookscope could not store this call: {e}\n"),
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("60"));
            r
        }
    }
}

/// What the request named as its target: the path, or for a target that has none the target
/// itself (CONNECT's `host:port`). A proxy-style absolute URL keeps its path; the host is in
/// the Host header.
fn request_target(uri: &axum::http::Uri) -> &str {
    match (uri.path(), uri.authority()) {
        ("", Some(authority)) => authority.as_str(),
        (path, _) => path,
    }
}

/// Why HTTP sends no body in this answer, whatever was chosen: to HEAD, with a 2xx to CONNECT
/// (which opens a tunnel), with 1xx, 204 or 304, as hyper does. `None`: the body is sent.
pub fn no_body_sent(method: &str, status: u16) -> Option<&'static str> {
    match (method, status) {
        ("HEAD", _) => Some("an answer to HEAD carries no body: HTTP sends its headers only"),
        ("CONNECT", 200..=299) => {
            Some("a 2xx answer to CONNECT opens a tunnel and carries no body")
        }
        (_, 0..=199) => Some("an informational answer carries no body"),
        (_, 204 | 304) => Some("HTTP sends no body with this code"),
        _ => None,
    }
}

fn sends_body(method: &axum::http::Method, status: u16) -> bool {
    no_body_sent(method.as_str(), status).is_none()
}

fn header_pairs(map: &axum::http::HeaderMap) -> Vec<(&str, &[u8])> {
    map.iter()
        .map(|(n, v)| (n.as_str(), v.as_bytes()))
        .collect()
}

/// An answer's text as the bytes of a response, without a copy.
struct SharedText(std::sync::Arc<str>);

impl AsRef<[u8]> for SharedText {
    fn as_ref(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

fn sent_answer(answer: &Answer) -> SentAnswer {
    let mut headers = Vec::new();
    if let Some(ra) = &answer.retry_after {
        // A date in an obsolete form goes out as HTTP asks a sender to write one.
        headers.push((
            "Retry-After".to_owned(),
            crate::contract::RetryAfter::sent_form(ra).into_owned(),
        ));
    }
    let body = answer.body.clone().map_or_else(bytes::Bytes::new, |b| {
        bytes::Bytes::from_owner(SharedText(b))
    });
    // The content type given is sent, with a body or without (an empty JSON answer, say);
    // a body given without one is plain text.
    let ct = match &answer.content_type {
        Some(ct) => Some(ct.clone()),
        None if !body.is_empty() => Some("text/plain; charset=utf-8".to_owned()),
        None => None,
    };
    if let Some(ct) = ct {
        headers.push(("Content-Type".to_owned(), ct));
    }
    SentAnswer {
        status: answer.status,
        headers,
        body,
        delay_ms: answer.delay_ms,
    }
}

fn response(sent: &SentAnswer) -> Response {
    let mut r = Response::new(Body::from(sent.body.clone()));
    *r.status_mut() = StatusCode::from_u16(sent.status).unwrap_or(StatusCode::OK);
    for (name, value) in &sent.headers {
        if let (Ok(n), Ok(v)) = (
            header::HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            r.headers_mut().append(n, v);
        }
    }
    r
}

fn plain(status: StatusCode, text: &str) -> Response {
    let mut r = Response::new(Body::from(text.to_owned()));
    *r.status_mut() = status;
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_request_keeps_its_request_line_when_it_has_one() {
        assert_eq!(
            request_line(b"POST /hook?x=1 HTTP/1.1\r\nX\x1b: 1\r\n\r\n"),
            ("POST".into(), "/hook".into(), Some("x=1".into()))
        );
        assert_eq!(
            request_line(b"GET / HTTP/1.1"),
            ("GET".into(), "/".into(), None)
        );
        // Cut where the kept bytes end, in a target of megabytes.
        assert_eq!(
            request_line(b"GET /aaaaaaaa"),
            ("GET".into(), "/aaaaaaaa".into(), None)
        );
        assert_eq!(request_line(b"GET /aaaa\r\n").0, "");
        // TLS, a line that is not a request line, a method of control characters: none.
        for bytes in [
            &b"\x16\x03\x01\x02\x00"[..],
            b"hello there\r\n",
            b"PO\x01ST / HTTP/1.1\r\n",
            b"",
        ] {
            assert_eq!(request_line(bytes), (String::new(), String::new(), None));
        }
    }

    #[test]
    fn a_refused_request_is_recorded_with_what_arrived_and_what_was_answered() {
        let refused = |bytes: &[u8], answered| tap::Refused {
            at: Utc::now(),
            peer: SocketAddr::from(([127, 0, 0, 1], 5000)),
            bytes: bytes.to_vec(),
            why: "a header's name has a character HTTP does not allow in one".into(),
            answered,
            timed_out: false,
        };
        let bytes = b"POST /hook HTTP/1.1\r\nX\x1b: 1\r\n\r\n";
        let inv = refused_invocation(refused(bytes, Some(400)));
        assert_eq!((inv.method.as_str(), inv.path.as_str()), ("POST", "/hook"));
        assert_eq!(inv.body, bytes);
        assert_eq!(inv.body_size, bytes.len() as u64);
        assert_eq!(inv.answer.status, 400);
        assert!(inv.not_http() && inv.headers.is_empty());
        assert_eq!(inv.findings.len(), 1);
        assert_eq!(
            inv.findings[0].message,
            "The request could not be read as HTTP: a header's name has a character HTTP does not allow in one. The HTTP layer answered it 400 before Hookscope could choose an answer, and closed the connection; what arrived (30 bytes) is kept as the body, head included."
        );
        assert_eq!(inv.outcome(), crate::contract::Outcome::FailedPermanently);
        // Nothing answered: the caller got no answer. Its outcome stays the code's reading,
        // for scripts, but nothing says a retry follows: it was not one of the service's calls
        // (the finding had said "the service retries" beside "no retry follows from it").
        let inv = refused_invocation(refused(bytes, None));
        assert!(inv.unanswered().is_some(), "{:?}", inv.findings);
        assert_eq!(inv.outcome(), crate::contract::Outcome::RetryTemporary);
        assert_eq!(inv.meaning(), crate::store::NOT_HTTP_UNANSWERED);
        for f in &inv.findings {
            assert!(!f.message.contains("retries"), "{}", f.message);
        }
        assert!(inv.findings[1].message.ends_with(
            "No retry follows from it: the service sends HTTP, so this was not one of its calls."
        ));
        // A long one: only its start is kept, and it says so.
        let inv = refused_invocation(refused(&vec![b'a'; 64 << 10], Some(431)));
        assert!(
            inv.findings[0]
                .message
                .contains("its first 64 KiB are kept")
        );
    }

    /// HTTP sends no body to HEAD, with a 2xx to CONNECT, with 1xx, 204 or 304; the record
    /// follows it.
    #[test]
    fn a_body_is_sent_unless_http_sends_none() {
        use axum::http::Method;
        for (method, status, sent) in [
            (Method::POST, 200, true),
            (Method::GET, 503, true),
            (Method::HEAD, 200, false),
            (Method::HEAD, 404, false),
            (Method::CONNECT, 200, false),
            (Method::CONNECT, 299, false),
            (Method::CONNECT, 403, true),
            (Method::POST, 204, false),
            (Method::POST, 304, false),
            (Method::POST, 101, false),
        ] {
            assert_eq!(sends_body(&method, status), sent, "{method} {status}");
        }
        assert_eq!(
            no_body_sent("CONNECT", 200),
            Some("a 2xx answer to CONNECT opens a tunnel and carries no body")
        );
        assert_eq!(no_body_sent("POST", 503), None);
    }

    /// An answer's body is shared by the record of every call it answers and by the response
    /// itself, never copied: a 20 MiB `--body-file` answering 40 calls at once had held two
    /// copies per call (1.7 GB).
    #[tokio::test]
    async fn an_answer_body_is_shared_not_copied_per_call() {
        let text: std::sync::Arc<str> = "x".repeat(1 << 20).into();
        let answer = Answer {
            body: Some(text.clone()),
            ..Answer::status(503)
        };
        let chosen = answer.clone();
        let sent = sent_answer(&chosen);
        assert_eq!(sent.body.as_ptr(), text.as_ptr());
        assert_eq!(sent.body.len(), 1 << 20);
        let recorded = sent.clone();
        assert_eq!(recorded.body.as_ptr(), text.as_ptr());
        let body = axum::body::to_bytes(response(&sent).into_body(), usize::MAX)
            .await
            .unwrap();
        assert_eq!(body.as_ptr(), text.as_ptr());
        // Without a body: none, and no content type.
        let bare = sent_answer(&Answer::status(200));
        assert!(bare.body.is_empty() && bare.headers.is_empty());
    }

    /// An answer the server has not finished sending when the quit comes: its call is noted
    /// (the early answer taken back); one sent in full is left alone.
    #[tokio::test]
    async fn a_quit_notes_the_answers_still_being_sent() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), crate::store::Durability::Normal).unwrap();
        let mut inv = crate::store::Invocation::synthetic(1, b"[]");
        inv.findings = vec![answered_early_finding(
            std::time::Duration::from_secs(1),
            std::time::Duration::from_secs(10),
        )];
        let pending = store.insert(inv.clone()).await.unwrap();
        let sent = store.insert(inv).await.unwrap();
        let quit = Arc::new(Quit::default());
        for id in [pending, sent] {
            quit.unsent
                .lock()
                .unwrap()
                .insert(id, (Instant::now(), false));
        }
        // The server drops a body once it is done with it.
        drop(Sent {
            quit: quit.clone(),
            id: sent,
        });
        let quitter = Quitter {
            quit,
            in_progress: Arc::new(AtomicUsize::new(0)),
            store: store.clone(),
        };
        let report = quitter.quit_now().await;
        assert_eq!(report.stored, vec![pending]);
        assert_eq!(report.unanswered, 1);
        let row = store.get(pending).unwrap().unwrap();
        let codes: Vec<_> = row.inv.findings.iter().map(|f| f.code.as_str()).collect();
        assert_eq!(codes, vec![QUIT_BEFORE_ANSWER]);
        assert_eq!(row.inv.outcome(), crate::contract::Outcome::RetryTemporary);
        let untouched = store.get(sent).unwrap().unwrap();
        assert_eq!(untouched.inv.findings[0].code, "answered-early");
    }

    fn held(delay_s: u64, since_s: u64) -> (Held, std::time::Instant) {
        let since = std::time::Instant::now();
        let h = Held {
            key: 0,
            received_at: Utc::now(),
            since,
            delay: std::time::Duration::from_secs(delay_s),
            method: "POST".into(),
            path: "/hook".into(),
            event: Some("status-report".into()),
            delivery: Some("d-1".into()),
            attempt: Some(2),
            status: 503,
            rule: Some("rule 1: slow".into()),
            clock_speed: None,
        };
        (h, since + std::time::Duration::from_secs(since_s))
    }

    #[test]
    fn a_held_call_says_what_it_is_what_it_gets_and_when() {
        let (h, now) = held(10, 3);
        assert_eq!(
            h.what(),
            "POST /hook · status-report, delivery d-1, attempt 2 (rule 1: slow)"
        );
        assert_eq!(h.countdown(now), "503 in 7 s");
        assert!((h.passed_share(now) - 0.3).abs() < 1e-6);
        assert_eq!(
            h.announce(),
            "POST /hook · status-report, delivery d-1, attempt 2 (rule 1: slow): will be answered 503 after 10 s"
        );
        // A value made of the sentence's own words is quoted, not read as part of it.
        let (mut forged, _) = held(10, 3);
        forged.delivery = Some("d1, attempt 5: will be answered 500".into());
        forged.event = Some("status report".into());
        assert_eq!(
            forged.announce(),
            "POST /hook · \"status report\", delivery \"d1, attempt 5: will be answered 500\", attempt 2 (rule 1: slow): will be answered 503 after 10 s"
        );
        forged.delivery = Some("say \"hi\"\u{1b}[2J".into());
        assert!(
            forged
                .what()
                .contains("delivery \"say \\\"hi\\\"\\u{1b}[2J\""),
            "{}",
            forged.what()
        );
        // From the service's 30 s on (as answer-too-late), the service gives up, then has.
        let (h, now) = held(30, 20);
        assert_eq!(
            h.countdown(now),
            "503 in 10 s; the service stops waiting at 30 s"
        );
        let (h, now) = held(45, 31);
        assert_eq!(
            h.countdown(now),
            "503 in 14 s; the service stopped waiting at 30 s"
        );
        // Just under: on time, and announced to the millisecond.
        let (mut h, _) = held(0, 0);
        h.delay = std::time::Duration::from_millis(29_600);
        assert!(h.announce().ends_with("will be answered 503 after 29.6 s"));
        // An emulator's call gives up after 30 s of its clock, and never under 2 s.
        let (mut h, now) = held(5, 1);
        h.clock_speed = Some(10.0);
        assert_eq!(
            h.countdown(now),
            "503 in 4 s; the emulator stops waiting at 3 s (its 30 s at 10x)"
        );
        let (mut h, now) = held(8, 3);
        h.clock_speed = Some(60.0);
        assert_eq!(
            h.countdown(now),
            "503 in 5 s; the emulator stopped waiting at 2 s (its 30 s at 60x, and never under 2 s)"
        );
        // Within the emulator's wait: nothing to say.
        h.delay = std::time::Duration::from_millis(1500);
        assert_eq!(h.countdown(h.since), "503 in 2 s");
        // The last second (it reads 1 s, never 0 s), and a call that names nothing but its method and path.
        let (mut h, _) = held(2, 0);
        let now = h.since + std::time::Duration::from_millis(1500);
        (h.event, h.delivery, h.attempt, h.rule) = (None, None, None, None);
        assert_eq!(h.what(), "POST /hook");
        assert_eq!(h.countdown(now), "503 in 1 s");
    }

    #[test]
    fn a_receiver_on_every_address_is_reached_through_the_loopback_one() {
        let url = |a: &str| url_for(a.parse().unwrap());
        assert_eq!(url("127.0.0.1:8787"), "http://127.0.0.1:8787/");
        assert_eq!(url("0.0.0.0:8787"), "http://127.0.0.1:8787/");
        assert_eq!(url("[::]:9000"), "http://[::1]:9000/");
        assert_eq!(url("[::1]:9000"), "http://[::1]:9000/");
        assert_eq!(url("192.168.1.5:80"), "http://192.168.1.5:80/");
    }
}
