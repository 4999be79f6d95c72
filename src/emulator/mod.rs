//! A local stand-in for the SMS service, faithful to contract.md and service-api.md: the `/v1`
//! Webhooks API and message calls behind HTTP Basic authentication, a message life cycle that
//! fires status reports, an invoker that retries on the contract's schedule, a clock that can run
//! faster than real time, and an outbox for the problem-report e-mails it does not send.
//!
//! Outbound calls go only to loopback addresses unless `allow_remote` is set.

pub mod clock;
mod invoker;
mod routes;

use crate::api::model::Webhook;
use crate::contract::{Brand, Message};
use chrono::{DateTime, Utc};
pub use clock::Clock;
pub use invoker::{MIN_REAL_ANSWER_WAIT, answer_wait_at, caller_wait, schedule_took};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};

/// The emulator's default port (the receiver's is 8787).
pub const DEFAULT_PORT: u16 = 8788;
/// Most messages one POST /v1/messages may carry.
pub const MAX_MESSAGES_PER_REQUEST: usize = 30_000;
/// A header of Hookscope's own on every delivery the emulator makes (not one of the service's):
/// the speed of its clock when the call was made, so a receiver reads the delivery on the clock
/// it followed, whatever the speed is set to later.
pub const CLOCK_SPEED_HEADER: &str = "X-Hookscope-Clock-Speed";
/// Beside it, the time on the emulator's clock the call was made at by its delivery's schedule
/// (RFC 3339): a reader measures the gaps between attempts on that clock, exact whatever its
/// speed did in between. A time-out counts there as the service's 30 s, so on a fast clock this
/// time can fall behind the clock itself (which counts the 2 s of real time a time-out must
/// wait at least as 20 minutes at 600x), and a delivery still ends within its 2 days.
pub const CLOCK_TIME_HEADER: &str = "X-Hookscope-Clock-Time";

/// A principal: a username (or token id) and its password (or secret).
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub user: String,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print a secret.
        write!(f, "Credentials({}, ****)", self.user)
    }
}

#[derive(Clone, Debug)]
pub struct EmulatorConfig {
    pub bind: IpAddr,
    pub port: u16,
    /// The account with full access.
    pub account: Credentials,
    /// A principal that may read but is denied changes (403).
    pub read_only: Option<Credentials>,
    /// Call webhook URLs on other hosts than this one.
    pub allow_remote: bool,
    pub speed: f64,
    pub brand: Brand,
    /// Credits the account starts with; each message costs one per part (the test number
    /// costs nothing).
    pub credits: f64,
}

impl Default for EmulatorConfig {
    fn default() -> Self {
        EmulatorConfig {
            bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: DEFAULT_PORT,
            account: Credentials {
                user: "demo".into(),
                password: "demo".into(),
            },
            read_only: None,
            allow_remote: false,
            speed: 1.0,
            brand: Brand::default(),
            credits: 1000.0,
        }
    }
}

/// A problem report the service would have e-mailed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Mail {
    pub at: DateTime<Utc>,
    pub to: String,
    pub webhook_id: u64,
    /// `message retrying` or `message discarded`.
    pub notice: String,
    pub text: String,
}

/// Something the emulator did, for the app's emulator panel and `emulate`'s output.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Activity {
    /// 1 for the emulator's first line, then one more for each: tells a reader what it has not
    /// seen yet, though only the last [`ACTIVITY_KEPT`] lines are kept.
    pub seq: u64,
    pub at: DateTime<Utc>,
    pub text: String,
}

/// How many activity lines the emulator keeps.
pub const ACTIVITY_KEPT: usize = 500;

#[derive(Debug, Default)]
pub(crate) struct Data {
    pub webhooks: BTreeMap<u64, Webhook>,
    pub next_webhook: u64,
    /// Every webhook id this emulator gave, of webhooks deleted or not: its ids follow the
    /// clock, so the gaps between them may hold another emulator's, running beside it.
    pub given_webhooks: std::collections::BTreeSet<u64>,
    pub messages: BTreeMap<u128, Message>,
    pub next_message: u128,
    pub next_delivery: u64,
    pub credits: f64,
    pub outbox: Vec<Mail>,
    pub last_notice: HashMap<(u64, String), DateTime<Utc>>,
    pub activity: Vec<Activity>,
    /// Activity lines logged so far.
    pub activity_seq: u64,
    /// Events waiting to be batched into one call, per webhook (invokeOption MANY).
    pub batches: HashMap<u64, Vec<Message>>,
    /// The messages each `deduplication-id` made: the same id again sends nothing more.
    pub deduplication: HashMap<String, Vec<u128>>,
}

/// Shared state of a running emulator.
#[derive(Debug)]
pub(crate) struct Shared {
    pub config: EmulatorConfig,
    pub clock: Clock,
    pub data: Mutex<Data>,
    pub http: reqwest::Client,
    /// Starts as `config.allow_remote`; the app may change it (after asking the user).
    pub remote: std::sync::atomic::AtomicBool,
    /// Starts as `config.brand`; the app changes it with its receiver's, so the built-in
    /// emulator's calls keep naming the headers the receiver reads.
    pub brand: std::sync::RwLock<Brand>,
    /// The calls to each webhook: how many are in flight, and at what pace (see [`Lane`]).
    pub calls: Mutex<std::collections::HashMap<u64, Arc<Lane>>>,
    /// The runtime the emulator was started on: its work is spawned there, so the app may
    /// steer it (inject a message) from the UI thread, which is outside any runtime.
    pub rt: tokio::runtime::Handle,
}

/// The fastest the emulator's clock runs (2 days in 0.17 s).
pub const MAX_SPEED: f64 = 1_000_000.0;

/// A phone number as the emulator takes one: digits, after an optional `+`.
pub fn check_phone_number(n: &str) -> Result<(), String> {
    let digits = n.strip_prefix('+').unwrap_or(n);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("'{n}' is not a phone number"));
    }
    Ok(())
}

/// How many calls the emulator makes at once to one webhook.
pub const CALLS_AT_ONCE: usize = 32;

/// The way to one webhook.
#[derive(Debug)]
pub(crate) struct Lane {
    /// Calls in flight at once, at most [`CALLS_AT_ONCE`]: a burst of messages queues here
    /// instead of opening thousands of connections, a call's 30 s only start once it is sent (a
    /// receiver is never timed out for the emulator's own backlog), and a slow receiver holds up
    /// only its own webhook's calls, never another's schedule.
    pub slots: tokio::sync::Semaphore,
    /// The slow-down after a 429 ([`crate::contract::slowdown`]); held across a call made
    /// while slowed down, so those go one at a time.
    pub pace: tokio::sync::Mutex<crate::contract::slowdown::Pace>,
}

impl Shared {
    pub fn allow_remote(&self) -> bool {
        self.remote.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The way to webhook `id` (see [`Lane`]).
    pub fn lane(&self, id: u64) -> Arc<Lane> {
        self.calls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(id)
            .or_insert_with(|| {
                Arc::new(Lane {
                    slots: tokio::sync::Semaphore::new(CALLS_AT_ONCE),
                    pace: tokio::sync::Mutex::default(),
                })
            })
            .clone()
    }

    /// The brand word its calls carry now.
    pub fn brand(&self) -> Brand {
        self.brand.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn data(&self) -> std::sync::MutexGuard<'_, Data> {
        self.data.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn log(&self, text: String) {
        let at = self.clock.now();
        tracing::info!("{text}");
        let mut d = self.data();
        d.activity_seq += 1;
        let seq = d.activity_seq;
        d.activity.push(Activity { seq, at, text });
        let excess = d.activity.len().saturating_sub(ACTIVITY_KEPT);
        d.activity.drain(..excess);
    }
}

#[derive(Debug, thiserror::Error)]
pub enum EmulatorError {
    #[error(
        "port {port} on {ip} is already in use; choose another with --port, or --port 0 for any free port"
    )]
    PortInUse { ip: IpAddr, port: u16 },
    #[error("{}", crate::receiver::not_here(.ip))]
    NotHere { ip: IpAddr },
    #[error("cannot listen on {addr}: {}", crate::text::io_words(.source))]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot build the HTTP client: {0}")]
    Client(String),
}

/// A running emulator. Its handle lets the app and tests look inside and steer it.
#[derive(Clone)]
pub struct Emulator {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Arc<Mutex<Option<tokio::sync::oneshot::Sender<()>>>>,
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("addr", &self.addr)
            .finish()
    }
}

impl Emulator {
    /// Start the emulator on the current tokio runtime.
    pub async fn start(config: EmulatorConfig) -> Result<Emulator, EmulatorError> {
        let addr = SocketAddr::new(config.bind, config.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| match source.kind() {
                std::io::ErrorKind::AddrInUse => EmulatorError::PortInUse {
                    ip: config.bind,
                    port: config.port,
                },
                std::io::ErrorKind::AddrNotAvailable => EmulatorError::NotHere { ip: config.bind },
                _ => EmulatorError::Bind { addr, source },
            })?;
        let local = listener
            .local_addr()
            .map_err(|source| EmulatorError::Bind { addr, source })?;
        crate::api::install_tls_provider();
        // Header names go out spelt as contract.md writes them (X-Service-Event, User-Agent),
        // as a real service's do, not lowercased.
        let http = reqwest::Client::builder()
            .http1_title_case_headers()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| EmulatorError::Client(e.to_string()))?;
        let shared = Arc::new(Shared {
            clock: Clock::new(config.speed),
            data: Mutex::new({
                let (next_webhook, next_message) = first_ids(Utc::now());
                Data {
                    next_webhook,
                    next_message,
                    credits: config.credits,
                    ..Data::default()
                }
            }),
            remote: std::sync::atomic::AtomicBool::new(config.allow_remote),
            brand: std::sync::RwLock::new(config.brand.clone()),
            config,
            http,
            calls: Mutex::default(),
            rt: tokio::runtime::Handle::current(),
        });
        let app = routes::router(shared.clone());
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stop_rx.await;
            });
            if let Err(e) = serve.await {
                tracing::error!("the emulator stopped: {e}");
            }
        });
        Ok(Emulator {
            addr: local,
            shared,
            stop: Arc::new(Mutex::new(Some(stop_tx))),
        })
    }

    /// The API's base URL, e.g. `http://127.0.0.1:8788/v1`.
    pub fn base_url(&self) -> String {
        format!("{}v1", crate::receiver::url_for(self.addr))
    }

    pub fn clock(&self) -> &Clock {
        &self.shared.clock
    }

    pub fn set_speed(&self, speed: f64) {
        self.shared.clock.set_speed(speed);
        self.shared.log(format!("clock speed set to {speed}x"));
    }

    /// Name its calls' headers and User-Agent with `brand` from now on.
    pub fn set_brand(&self, brand: Brand) {
        if self.shared.brand() == brand {
            return;
        }
        self.shared
            .log(format!("brand word set to {}", brand.word()));
        *self.shared.brand.write().unwrap_or_else(|p| p.into_inner()) = brand;
    }

    /// Let the emulator call webhook URLs on other hosts (or stop it again).
    pub fn set_allow_remote(&self, on: bool) {
        self.shared
            .remote
            .store(on, std::sync::atomic::Ordering::Relaxed);
        self.shared.log(format!(
            "outbound calls: {}",
            if on { "any host" } else { "this machine only" }
        ));
    }

    pub fn allow_remote(&self) -> bool {
        self.shared.allow_remote()
    }

    pub fn outbox(&self) -> Vec<Mail> {
        self.shared.data().outbox.clone()
    }

    pub fn activity(&self) -> Vec<Activity> {
        self.shared.data().activity.clone()
    }

    pub fn webhooks(&self) -> Vec<Webhook> {
        self.shared.data().webhooks.values().cloned().collect()
    }

    /// Whether webhook `id` is (or was, before it was deleted) one of this emulator's.
    pub fn made_webhook(&self, id: u64) -> bool {
        let d = self.shared.data();
        d.given_webhooks.contains(&id)
    }

    pub fn credits(&self) -> f64 {
        self.shared.data().credits
    }

    /// A message from a handset arrives: it goes to the RECEIVED webhooks.
    pub fn inject_incoming(&self, from: &str, to: &str, body: &str) -> Message {
        invoker::receive(&self.shared, from, to, body)
    }

    pub fn stop(&self) {
        if let Some(tx) = self.stop.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = tx.send(());
        }
    }
}

/// Whether the emulator may call `url`: loopback only, unless remote calls are allowed.
pub fn check_target(url: &reqwest::Url, allow_remote: bool) -> Result<(), String> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the URL must be http or https, not {}",
            url.scheme()
        ));
    }
    let Some(host) = url.host() else {
        return Err("the URL has no host".into());
    };
    if allow_remote {
        return Ok(());
    }
    // 127.0.0.0/8, ::1 (and 127.x.y.z written as ::ffff:127.0.0.1), localhost.
    if crate::api::reach::reach(&host) == crate::api::reach::Reach::ThisMachine {
        Ok(())
    } else {
        Err(format!(
            "the emulator only calls this machine (127.0.0.0/8, ::1, localhost), not {host}; to call other hosts, allow it (`hookscope emulate --allow-remote`, or *Call other hosts than this machine* in the window's Service panel)"
        ))
    }
}

/// The first webhook id and message id of an emulator started at `now`. They count on from the
/// start time rather than from 1, so ids never repeat from one run to the next: a store keeps
/// the calls of earlier runs, and a delivery is known by its id and its webhook's (a second
/// "webhook 1" would merge its deliveries with the first's, and inherit its 410). Webhook ids:
/// [`webhook_id_at`]; message ids: 19 digits, as the service's, from the milliseconds.
pub(crate) fn first_ids(now: DateTime<Utc>) -> (u64, u128) {
    let millis = u128::from(webhook_id_at(now) - 1);
    (
        webhook_id_at(now),
        1_000_000_000_000_000_000 + millis * 1000,
    )
}

/// The least id a webhook created at `now` takes: the milliseconds since 2026 (11 digits), so
/// a run started later begins past every id an earlier run gave, a restart within the same
/// second included (seconds times 100, as they were, gave a run restarted by a script the same
/// ids again); each webhook also takes one more than the last, so the ids run ahead of the
/// clock only while webhooks are created faster than one a millisecond.
pub(crate) fn webhook_id_at(now: DateTime<Utc>) -> u64 {
    const SINCE: i64 = 1_767_225_600; // 2026-01-01T00:00:00Z
    (now.timestamp_millis() - SINCE * 1000).max(0) as u64 + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> reqwest::Url {
        reqwest::Url::parse(s).unwrap()
    }

    #[test]
    fn the_answer_wait_is_30_s_of_the_clock_and_2_s_at_least() {
        let s = std::time::Duration::from_secs;
        assert_eq!(answer_wait_at(1.0), s(30));
        assert_eq!(answer_wait_at(10.0), s(3));
        assert_eq!(answer_wait_at(60.0), s(2));
        assert_eq!(answer_wait_at(MAX_SPEED), s(2));
        // A slow clock waits longer; what is not a speed counts as 1.
        assert_eq!(answer_wait_at(0.5), s(60));
        assert_eq!(answer_wait_at(f64::NAN), s(30));
        assert_eq!(answer_wait_at(0.0), s(30));
    }

    #[test]
    fn ids_never_repeat_from_one_run_to_the_next() {
        let start = DateTime::parse_from_rfc3339("2026-11-22T01:20:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let (w1, m1) = first_ids(start);
        // A restart a second later, after the first run created 99 webhooks and a thousand
        // messages a millisecond.
        let (w2, m2) = first_ids(start + chrono::TimeDelta::seconds(1));
        assert!(w1 + 99 < w2, "{w1} {w2}");
        assert!(m1 + 1000 * 999 < m2);
        // A restart within the same second, 5 ms later, after the first run created 3
        // webhooks (seconds times 100 gave both runs the same first id).
        let (w3, _) = first_ids(start + chrono::TimeDelta::milliseconds(5));
        assert!(w1 + 3 < w3, "{w1} {w3}");
        // A webhook created later takes an id at least its time's.
        let later = start + chrono::TimeDelta::milliseconds(40);
        assert_eq!(webhook_id_at(later), w1 + 40);
        assert_eq!(w1.to_string().len(), 11, "{w1}");
        assert_eq!(
            m1.to_string().len(),
            19,
            "a message id has 19 digits as the service's"
        );
        assert_eq!(m2.to_string().len(), 19);
        // Before 2026 (a clock set wrong) ids still start from 1.
        let (w0, _) = first_ids(DateTime::UNIX_EPOCH);
        assert_eq!(w0, 1);
    }

    #[test]
    fn only_this_machine_unless_allowed() {
        for ok in [
            "http://127.0.0.1:9/h",
            "http://localhost/h",
            "https://[::1]:8/x",
            "http://127.8.9.1/",
            "http://[::ffff:127.0.0.1]:8787/h",
            "http://0.0.0.0:8787/h",
        ] {
            assert_eq!(check_target(&url(ok), false), Ok(()), "{ok}");
        }
        for remote in [
            "http://192.0.2.1/h",
            "http://10.0.0.1/h",
            "https://example.com/h",
            "http://[::ffff:192.0.2.1]/h",
            "http://[2001:db8::1]/h",
        ] {
            let e = check_target(&url(remote), false).unwrap_err();
            assert!(e.contains("--allow-remote"), "{e}");
            assert_eq!(check_target(&url(remote), true), Ok(()));
        }
        assert!(check_target(&url("ftp://127.0.0.1/"), true).is_err());
    }
}
