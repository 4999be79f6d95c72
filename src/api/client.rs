//! A typed reqwest client for the Webhooks API and the message calls.

use super::model::{ErrorBody, SubmissionEntry, Webhook, WebhookEntry};
use crate::contract::Message;
use std::time::Duration;

/// Every way a call can fail, each with a sentence that says what to do.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("no credentials: give a username (--user) and the password in HOOKSCOPE_API_PASSWORD")]
    MissingCredentials,
    /// A username, and no password (an empty HOOKSCOPE_API_PASSWORD counts as none).
    #[error(
        "no password for '{user}': put it in HOOKSCOPE_API_PASSWORD (an empty one counts as unset), or run the command in a terminal to be asked for it"
    )]
    MissingPassword { user: String },
    #[error(
        "the service rejected the credentials for '{user}': check the username and password (or token id and secret)"
    )]
    WrongCredentials { user: String },
    #[error("access denied: '{user}' may not do this{}", detail_suffix(.detail))]
    AccessDenied {
        user: String,
        detail: Option<String>,
    },
    #[error("not found: {detail}")]
    NotFound { detail: String },
    #[error("the service refused the request: {detail}")]
    Validation { detail: String },
    #[error("{}", said("too many messages in one request", "too many messages", .detail))]
    TooManyMessages { detail: String },
    #[error("{}", said("not enough credits", "not enough credits", .detail))]
    NotEnoughCredits { detail: String },
    #[error("{}", said("not enough quota", "not enough quota", .detail))]
    NotEnoughQuota { detail: String },
    /// 429 or 503, with the service's `detail` when its body had one (the API's rule: a
    /// client shows it), and the wait its Retry-After asks for.
    #[error(
        "the service is unavailable right now ({status}){}{}",
        detail_colon(.detail),
        retry_suffix(.retry_after)
    )]
    Unavailable {
        status: u16,
        retry_after: Option<u64>,
        detail: Option<String>,
    },
    #[error("the service failed ({status}): {detail}; try again later")]
    Server { status: u16, detail: String },
    /// A 4xx the contract does not name (409, 418...): the call was refused, and sending it
    /// again as it is will not help.
    #[error("the service refused the call ({status}): {detail}")]
    Refused { status: u16, detail: String },
    #[error(
        "cannot connect to {url}: nothing answers there (is the emulator or the service running, and is --api-url right?)"
    )]
    ConnectionRefused { url: String },
    #[error("{url} did not answer in time; check the network and --api-url")]
    Timeout { url: String },
    #[error("a secure connection to {url} failed: {detail}")]
    Tls { url: String, detail: String },
    #[error(
        "{url} answered {status} with something that is not the service's JSON ({snippet}); is --api-url the API's base, ending in /v1?"
    )]
    NotJson {
        url: String,
        status: u16,
        snippet: String,
    },
    /// JSON, but not in the shape the service's API answers there: a field missing, or a value
    /// (a trigger scope, say) that Hookscope does not know.
    #[error(
        "{url} answered {status} with JSON that Hookscope cannot read as the service's ({detail}); is --api-url the API's base, ending in /v1?"
    )]
    NotReadable {
        url: String,
        status: u16,
        detail: String,
    },
    /// A 3xx: not followed, as a client that followed it would send the credentials to another
    /// address, and show another server's answer as the service's.
    #[error(
        "{url} answered {status}, a redirect to {location}: Hookscope does not follow redirects (the credentials would go with it); if that is the API, give its base, ending in /v1, as --api-url"
    )]
    Redirected {
        url: String,
        status: u16,
        /// Where it pointed (`no address` when it named none).
        location: String,
    },
    #[error("the call to {url} failed: {detail}")]
    Other { url: String, detail: String },
    #[error(
        "the API base URL \"{base}\" is not a whole http(s) address (a scheme, a host, a port up to 65535, no query or #fragment, no space or control character): give it as https://host/v1 (the emulator's is http://127.0.0.1:PORT/v1)"
    )]
    BadBase { base: String },
    #[error(
        "the API base URL \"{base}\" carries a user name or password (user:password@): give the URL without them, the user with --user (or HOOKSCOPE_API_USER) and the password in HOOKSCOPE_API_PASSWORD or at the prompt"
    )]
    CredentialsInBase {
        /// The URL with its user and password taken out, so the error never prints them.
        base: String,
    },
}

/// `what: detail`, or the detail alone when it already says it (the service's "Not enough
/// credits: ..." is not to be printed as "not enough credits: Not enough credits: ...").
fn said(what: &str, key: &str, detail: &str) -> String {
    if detail.to_lowercase().contains(key) {
        detail.to_owned()
    } else {
        format!("{what}: {detail}")
    }
}

fn detail_suffix(d: &Option<String>) -> String {
    d.as_ref().map_or(String::new(), |d| format!(" ({d})"))
}

fn detail_colon(d: &Option<String>) -> String {
    d.as_ref().map_or(String::new(), |d| format!(": {d}"))
}

fn retry_suffix(r: &Option<u64>) -> String {
    match r {
        None => "; try again later".to_owned(),
        // A date already passed.
        Some(0) => "; try again now".to_owned(),
        Some(s) => format!(
            "; try again in {}",
            crate::text::human_duration(Duration::from_secs(*s))
        ),
    }
}

/// The webhooks the service listed: those Hookscope can read, and a sentence for each it cannot
/// (a `triggerScope` or `invokeOption` it does not know, a field missing), so one webhook of a
/// kind newer than Hookscope does not hide all the others.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebhookList {
    pub webhooks: Vec<Webhook>,
    pub unreadable: Vec<String>,
}

impl WebhookList {
    /// Each entry of the service's list read on its own.
    pub fn read(entries: &[serde_json::Value]) -> Self {
        Self::read_as_sent(entries, "")
    }

    /// [`WebhookList::read`], with `json`, the text the entries were read from: an entry
    /// Hookscope cannot read is named by its id as spelled there (a parsed 23-digit id reads
    /// `1.2345678901234568e+22`).
    pub fn read_as_sent(entries: &[serde_json::Value], json: &str) -> Self {
        // Each entry's text (none when `json` is not a list: the values as parsed).
        let texts: Vec<&str> = serde_json::from_str::<Vec<&serde_json::value::RawValue>>(json)
            .map(|v| v.into_iter().map(|r| r.get()).collect())
            .unwrap_or_default();
        let mut list = WebhookList::default();
        for (i, entry) in entries.iter().enumerate() {
            list.add(entry, texts.get(i).copied());
        }
        list
    }

    /// The webhooks in `json`, the service's list as text, each entry read on its own: one
    /// holding what serde_json cannot make a value of (an id of `1e400`, past a float's range)
    /// is named among the unreadable, and the others listed. None when `json` is not a list.
    pub fn from_text(json: &str) -> Option<Self> {
        use serde_json::value::RawValue;
        let texts: Vec<&RawValue> = serde_json::from_str(json).ok()?;
        let mut list = WebhookList::default();
        for text in texts.iter().map(|r| r.get()) {
            match serde_json::from_str::<serde_json::Value>(text) {
                Ok(entry) => list.add(&entry, Some(text)),
                Err(_) => list.unreadable.push(unholdable_webhook(text)),
            }
        }
        Some(list)
    }

    /// One entry of the list, as parsed and as spelled in `text`.
    fn add(&mut self, entry: &serde_json::Value, text: Option<&str>) {
        match read_as::<Webhook>(entry, text) {
            Ok(w) => self.webhooks.push(w),
            Err(e) => {
                let id = text.and_then(|t| spelled_at(t, &[Step::Key("id")]));
                self.unreadable
                    .push(unreadable_webhook(entry, id.as_deref(), &e))
            }
        }
    }
}

/// An entry of the list that is JSON serde_json cannot hold as a value (a number past a
/// float's range), named by its id and name as spelled, with the field that cannot be read.
fn unholdable_webhook(text: &str) -> String {
    use serde_json::value::RawValue;
    // The fields one by one (in the order of their names): those that read as values, and the
    // first that does not.
    let Ok(map) = serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(text)
    else {
        return "an entry that is not a webhook (a list or a number that cannot be read)"
            .to_owned();
    };
    let mut readable = serde_json::Map::new();
    let mut why = None;
    for (key, raw) in &map {
        match serde_json::from_str::<serde_json::Value>(raw.get()) {
            Ok(v) => {
                readable.insert(key.clone(), v);
            }
            Err(e) if why.is_none() => {
                let spelled = short(raw.get(), 40);
                why = Some(if e.to_string().starts_with("number out of range") {
                    format!("{key}: the number {spelled} is too large to be read")
                } else {
                    format!("{key}: {spelled} cannot be read")
                });
            }
            Err(_) => {}
        }
    }
    let id = spelled_at(text, &[Step::Key("id")]);
    let entry = serde_json::Value::Object(readable);
    let why = why.unwrap_or_else(|| "it cannot be read".to_owned());
    unreadable_webhook(&entry, id.as_deref(), &why)
}

/// One step into a JSON value: an object's field or a list's item.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The text of the value at `path` in the JSON text `json`, as spelled there.
fn spelled_at(json: &str, path: &[Step<'_>]) -> Option<String> {
    use serde_json::value::RawValue;
    let mut here: &str = json;
    for step in path {
        let next: &RawValue = match step {
            Step::Key(k) => {
                serde_json::from_str::<std::collections::HashMap<String, &RawValue>>(here)
                    .ok()?
                    .remove(*k)?
            }
            Step::Index(i) => serde_json::from_str::<Vec<&RawValue>>(here)
                .ok()?
                .get(*i)
                .copied()?,
        };
        here = next.get();
    }
    Some(here.to_owned())
}

/// serde's message about a number, with the number as the service wrote it rather than as
/// parsed (`1.2345678901234568e22` for `12345678901234567890123`, `100.0` for `1.0e2`); a
/// whole number too large to hold is said to be so.
fn respell_number(said: &str, spelled: &str) -> String {
    let whole = {
        let digits = spelled.strip_prefix('-').unwrap_or(spelled);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    if said.starts_with("invalid type: floating point ") && whole {
        return format!("the number {spelled} is too large to be read as a whole number here");
    }
    if !(said.starts_with("invalid type: floating point ")
        || said.starts_with("invalid value: integer ")
        || said.starts_with("invalid type: integer "))
    {
        return said.to_owned();
    }
    // The number between the first pair of backticks.
    let Some(open) = said.find('`') else {
        return said.to_owned();
    };
    let Some(len) = said[open + 1..].find('`') else {
        return said.to_owned();
    };
    let close = open + 1 + len;
    format!("{}`{spelled}`{}", &said[..open], &said[close + 1..])
}

/// `value` read as `T`; the error names the field it failed at (`triggerScope: unknown variant
/// `MMS`, expected `SENT` or `RECEIVED``), kept short and free of control characters. `text`,
/// the JSON text `value` was read from, if known, gives a number in the error as spelled.
fn read_as<T: serde::de::DeserializeOwned>(
    value: &serde_json::Value,
    text: Option<&str>,
) -> Result<T, String> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let steps: Vec<Step<'_>> = e
            .path()
            .iter()
            .filter_map(|s| match s {
                serde_path_to_error::Segment::Map { key } => Some(Step::Key(key)),
                serde_path_to_error::Segment::Seq { index } => Some(Step::Index(*index)),
                _ => None,
            })
            .collect();
        let said = e.inner().to_string();
        let said = match text.and_then(|t| spelled_at(t, &steps)) {
            Some(spelled) => respell_number(&said, &spelled),
            None => said,
        };
        let inner = plain_serde(&said);
        let said = if path == "." {
            inner
        } else {
            format!("{path}: {inner}")
        };
        short(&said, 160)
    })
}

/// serde's words for a value of the wrong kind, in a reader's: `invalid type: string "abc",
/// expected u64` -> `the text "abc", where a whole number is expected`.
pub(crate) fn plain_serde(said: &str) -> String {
    // A negative number where none can be: whole, but below zero.
    if said.starts_with("invalid value: integer `-") && said.contains(", expected u") {
        let number = said
            .trim_start_matches("invalid value: integer ")
            .split(", expected")
            .next()
            .unwrap_or_default();
        return format!("the number {number}, where a whole number of 0 or more is expected");
    }
    // As the rule files' reasons are made plain (`rules::plain_reason`).
    const PLAIN: [(&str, &str); 14] = [
        ("invalid type: string ", "the text "),
        ("invalid type: floating point ", "the number "),
        ("invalid type: integer ", "the number "),
        ("invalid value: integer ", "the number "),
        ("invalid type: boolean ", "the value "),
        ("invalid type: null", "null"),
        ("invalid type: map", "an object"),
        ("invalid type: sequence", "a list"),
        (
            ", expected struct Webhook",
            ", where a webhook (an object) is expected",
        ),
        (", expected u64", ", where a whole number is expected"),
        (", expected u32", ", where a whole number is expected"),
        (", expected u16", ", where a whole number is expected"),
        (", expected i64", ", where a whole number is expected"),
        (", expected f64", ", where a number is expected"),
    ];
    crate::text::replace_each(said, &PLAIN)
}

/// `webhook 7 "mms-hook": triggerScope: unknown variant `MMS`, expected `SENT` or
/// `RECEIVED``, control characters escaped and the whole kept to a line.
/// `spelled` is the entry's id as the service wrote it, if known.
fn unreadable_webhook(entry: &serde_json::Value, spelled: Option<&str>, e: &str) -> String {
    // An id the client cannot read (text, a number too large) is still the entry's id.
    let id = match entry.get("id").filter(|v| !v.is_null()) {
        Some(v) => Some(match (v, spelled) {
            (serde_json::Value::String(t), _) => format!("\"{}\"", short(t, 40)),
            (serde_json::Value::Number(_), Some(as_sent)) => short(as_sent, 40),
            (other, _) => short(&other.to_string(), 40),
        }),
        // One that could not be read at all (`1e400`), as sent.
        None => spelled.filter(|s| *s != "null").map(|s| short(s, 40)),
    };
    let name = entry.get("name").and_then(serde_json::Value::as_str);
    let who = match (id, name) {
        (Some(id), Some(name)) => format!("webhook {id} \"{}\"", short(name, 60)),
        (Some(id), None) => format!("webhook {id}"),
        (None, Some(name)) => format!("a webhook without an id, \"{}\"", short(name, 60)),
        (None, None) => "an entry that is not a webhook".to_owned(),
    };
    format!("{who}: {e}")
}

/// At most `max` characters of `s`, control characters escaped.
fn short(s: &str, max: usize) -> String {
    let (head, rest) = crate::text::head_chars(s, max);
    let more = if rest > 0 { "…" } else { "" };
    format!("{}{more}", crate::text::escape_control(head))
}

/// An answer read as `T`, with the JSON the service sent: `--json` prints that, every field as
/// sent (those the client does not know included), not the client's reading of it.
#[derive(Clone, Debug)]
pub struct Answered<T> {
    pub value: T,
    /// The JSON text as the service sent it: every number as spelled (a parsed value turns
    /// 99999999999999999999999 into 1e+23 and 1.0e2 into 100.0).
    pub json: String,
}

/// The client. Cheap to clone. The password never appears in `Debug` output.
#[derive(Clone)]
pub struct ApiClient {
    base: String,
    user: String,
    password: Option<String>,
    http: reqwest::Client,
    timeout: Duration,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("base", &self.base)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "****"))
            .finish()
    }
}

impl ApiClient {
    /// `base` is the API's base URL, e.g. `http://127.0.0.1:8788/v1`.
    pub fn new(base: &str, user: &str, password: Option<String>) -> Result<Self, ApiError> {
        // A query or fragment would swallow the paths put after the base. A space or a control
        // character (an ESC pasted with it) is not part of an address: the URL parser drops
        // some and escapes others, and the calls had gone to "/v1%1B[2J/webhooks".
        // (Invisible ones too: a direction override or a zero-width space.)
        let odd_char = |c: char| {
            c.is_whitespace()
                || crate::text::risky(c)
                || matches!(c, '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}')
        };
        let odd = base.trim().chars().any(odd_char);
        let whole = url::Url::parse(base.trim()).ok().filter(|u| {
            !odd && matches!(u.scheme(), "http" | "https")
                && u.host().is_some()
                && u.query().is_none()
                && u.fragment().is_none()
        });
        let Some(mut whole) = whole else {
            // Each such character shown as its code, so it can be seen and cannot act.
            let shown = base.trim().chars().fold(String::new(), |mut out, c| {
                if odd_char(c) && c != ' ' {
                    out.push_str(&format!("\\u{{{:x}}}", c as u32));
                } else {
                    out.push(c);
                }
                out
            });
            return Err(ApiError::BadBase { base: shown });
        };
        // Credentials in the URL would be sent beside --user's (two Authorization headers)
        // and printed in every error that names the URL: refused, and never echoed.
        if !whole.username().is_empty() || whole.password().is_some() {
            let _ = whole.set_username("");
            let _ = whole.set_password(None);
            return Err(ApiError::CredentialsInBase {
                base: whole.to_string(),
            });
        }
        let base = base.trim();
        super::install_tls_provider();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            // A redirect is said as one (see `ApiError::Redirected`), not followed.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| ApiError::Other {
                url: base.to_owned(),
                detail: e.to_string(),
            })?;
        Ok(ApiClient {
            base: base.trim_end_matches('/').to_owned(),
            user: user.to_owned(),
            password,
            http,
            timeout: Duration::from_secs(30),
        })
    }

    /// How long a call may take (30 s by default).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn base(&self) -> &str {
        &self.base
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    async fn send(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<(u16, bytes::Bytes), ApiError> {
        self.send_waiting(req, url, self.timeout).await
    }

    /// How long to wait for a create or update: the service answers it only after its
    /// registration check, which waits up to 30 s for the URL; waiting longer lets the check's
    /// own 400 arrive instead of a timeout of ours.
    fn check_wait(&self) -> Duration {
        self.timeout
            .max(crate::contract::ANSWER_TIMEOUT + Duration::from_secs(15))
    }

    async fn send_waiting(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
        wait: Duration,
    ) -> Result<(u16, bytes::Bytes), ApiError> {
        let req = match (&self.password, self.user.is_empty()) {
            (Some(p), false) => req.basic_auth(&self.user, Some(p)),
            _ => req,
        };
        let resp = req
            .timeout(wait)
            .header("Content-Type", "application/json")
            .send()
            .await
            .map_err(|e| transport_error(url, &e))?;
        let status = resp.status().as_u16();
        let retry_after = resp
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            // Seconds, or an HTTP date as the wait until it (0 once it has passed).
            .and_then(|v| crate::contract::parse_retry_after(v, chrono::Utc::now()))
            .map(|wait| wait.as_secs());
        if (300..400).contains(&status) {
            let location = resp
                .headers()
                .get("location")
                .map(|v| {
                    String::from_utf8_lossy(v.as_bytes())
                        .chars()
                        .take(200)
                        .collect()
                })
                .unwrap_or_else(|| "no address".to_owned());
            return Err(ApiError::Redirected {
                url: url.to_owned(),
                status,
                location,
            });
        }
        let body = resp.bytes().await.map_err(|e| transport_error(url, &e))?;
        if (200..300).contains(&status) {
            return Ok((status, body));
        }
        Err(self.error_of(url, status, retry_after, &body))
    }

    fn error_of(&self, url: &str, status: u16, retry_after: Option<u64>, body: &[u8]) -> ApiError {
        let parsed: Option<ErrorBody> = serde_json::from_slice(body).ok();
        let detail = parsed
            .as_ref()
            .and_then(|b| b.detail.clone().or_else(|| Some(b.title.clone())))
            .unwrap_or_default();
        let fragment = parsed
            .as_ref()
            .map(|b| b.fragment().to_owned())
            .unwrap_or_default();
        // A 5xx page that is not the service's JSON (a proxy's HTML 502, say) is still a server
        // error to retry later, not a sign of a wrong base URL.
        // A proxy's plain "Forbidden" is still a refusal of access, not a wrong base URL.
        if parsed.is_none() && status == 403 {
            return ApiError::AccessDenied {
                user: self.user.clone(),
                detail: Some(snippet(body)),
            };
        }
        // A proxy's or gateway's plain-text refusal ("teapot", "Conflict") is a refusal too, with
        // its words; a page (HTML) or a 404 may be the wrong base URL, and is said so below.
        let plain_text = {
            let text = String::from_utf8_lossy(body);
            let text = text.trim_start();
            !text.is_empty() && !text.starts_with('<')
        };
        if parsed.is_none()
            && plain_text
            && matches!(status, 400..=499)
            && !matches!(status, 401 | 404 | 429)
        {
            return ApiError::Refused {
                status,
                detail: snippet(body),
            };
        }
        if parsed.is_none() && !matches!(status, 401 | 429 | 500..=599) {
            return ApiError::NotJson {
                url: url.to_owned(),
                status,
                snippet: snippet(body),
            };
        }
        // What the service said, or failing that what it sent.
        let or_body = |detail: String| {
            if detail.is_empty() {
                snippet(body)
            } else {
                detail
            }
        };
        match status {
            401 if self.user.is_empty() => ApiError::MissingCredentials,
            401 if self.password.is_none() => ApiError::MissingPassword {
                user: self.user.clone(),
            },
            401 => ApiError::WrongCredentials {
                user: self.user.clone(),
            },
            403 if fragment.contains("credit") => ApiError::NotEnoughCredits { detail },
            403 if fragment.contains("quota") => ApiError::NotEnoughQuota { detail },
            403 => ApiError::AccessDenied {
                user: self.user.clone(),
                detail: (!detail.is_empty()).then_some(detail),
            },
            // The lists are always there: a 404 for one is a base URL that is not the API's.
            404 if url.ends_with("/webhooks") || url.ends_with("/messages") => ApiError::NotFound {
                detail: format!(
                    "{detail} (nothing is at {url}: is --api-url the API's base, ending in /v1?)"
                ),
            },
            // Only Hookscope's emulator takes messages from a handset.
            404 if url.ends_with("/emulator/incoming") => ApiError::NotFound {
                detail: format!(
                    "{detail} (nothing is at {url}: injecting an incoming message works only with Hookscope's emulator, `hookscope emulate`, not with the real service)"
                ),
            },
            404 => ApiError::NotFound { detail },
            400 if fragment.contains("too-many")
                || detail.contains("at most") && detail.contains("messages") =>
            {
                ApiError::TooManyMessages { detail }
            }
            400 | 422 => ApiError::Validation { detail },
            429 | 503 => ApiError::Unavailable {
                status,
                retry_after,
                // Only what the service said: a proxy's page is no detail.
                detail: (!detail.is_empty()).then_some(detail),
            },
            400..=499 => ApiError::Refused {
                status,
                detail: or_body(detail),
            },
            _ => ApiError::Server {
                status,
                detail: or_body(detail),
            },
        }
    }

    async fn json<T: serde::de::DeserializeOwned>(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
    ) -> Result<T, ApiError> {
        self.json_waiting(req, url, self.timeout).await
    }

    async fn json_waiting<T: serde::de::DeserializeOwned>(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
        wait: Duration,
    ) -> Result<T, ApiError> {
        Ok(self.answered(req, url, wait).await?.value)
    }

    /// The answer read as `T`, with the JSON the service sent (every field, as sent).
    async fn answered<T: serde::de::DeserializeOwned>(
        &self,
        req: reqwest::RequestBuilder,
        url: &str,
        wait: Duration,
    ) -> Result<Answered<T>, ApiError> {
        let (status, body) = self.send_waiting(req, url, wait).await?;
        Self::answered_from(status, &body, url)
    }

    /// [`ApiClient::answered`] for an answer already received.
    fn answered_from<T: serde::de::DeserializeOwned>(
        status: u16,
        body: &[u8],
        url: &str,
    ) -> Result<Answered<T>, ApiError> {
        let not_json = || ApiError::NotJson {
            url: url.to_owned(),
            status,
            snippet: snippet(body),
        };
        let json: serde_json::Value = serde_json::from_slice(body).map_err(|_| not_json())?;
        let text = std::str::from_utf8(body).ok();
        let value = read_as::<T>(&json, text).map_err(|detail| ApiError::NotReadable {
            url: url.to_owned(),
            status,
            detail,
        })?;
        // Valid JSON is UTF-8 throughout.
        let json = String::from_utf8_lossy(body).into_owned();
        Ok(Answered { value, json })
    }

    /// The raw JSON of a call, for `--json`.
    pub async fn raw(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<serde_json::Value, ApiError> {
        let url = self.url(path);
        let mut req = self.http.request(method, &url);
        if let Some(b) = body {
            req = req.body(b.to_string());
        }
        let (_, bytes) = self.send(req, &url).await?;
        if bytes.is_empty() {
            return Ok(serde_json::Value::Null);
        }
        serde_json::from_slice(&bytes).map_err(|_| ApiError::NotJson {
            url,
            status: 200,
            snippet: snippet(&bytes),
        })
    }

    /// The webhooks Hookscope can read ([`ApiClient::list_webhooks_answered`] names the others).
    pub async fn list_webhooks(&self) -> Result<Vec<Webhook>, ApiError> {
        Ok(self.list_webhooks_answered().await?.value.webhooks)
    }

    /// [`ApiClient::list_webhooks`], with the service's JSON (for `--json`) and the webhooks in
    /// it Hookscope cannot read. An answer that is not a list at all is an error.
    pub async fn list_webhooks_answered(&self) -> Result<Answered<WebhookList>, ApiError> {
        let url = self.url("/webhooks");
        let (status, body) = self
            .send_waiting(self.http.get(&url), &url, self.timeout)
            .await?;
        // Each entry on its own: one the client cannot hold does not fail the whole list.
        let text = std::str::from_utf8(&body).ok();
        if let Some(list) = text.and_then(WebhookList::from_text) {
            return Ok(Answered {
                value: list,
                json: String::from_utf8_lossy(&body).into_owned(),
            });
        }
        // Not a list: said as for any answer that is not what was asked.
        let answered: Answered<Vec<serde_json::Value>> = Self::answered_from(status, &body, &url)?;
        Ok(Answered {
            value: WebhookList::read_as_sent(&answered.value, &answered.json),
            json: answered.json,
        })
    }

    pub async fn get_webhook(&self, id: u64) -> Result<Webhook, ApiError> {
        Ok(self.get_webhook_answered(id).await?.value)
    }

    /// [`ApiClient::get_webhook`], with the service's JSON.
    pub async fn get_webhook_answered(&self, id: u64) -> Result<Answered<Webhook>, ApiError> {
        let url = self.url(&format!("/webhooks/{id}"));
        let answered: Answered<Webhook> = self
            .answered(self.http.get(&url), &url, self.timeout)
            .await?;
        // Another webhook is not this one's answer: shown, or edited and saved back by
        // `webhooks update`, it would be taken for webhook `id`.
        if answered.value.id != id {
            return Err(ApiError::NotReadable {
                url,
                status: 200,
                detail: format!("it is webhook {}, not {id}", answered.value.id),
            });
        }
        Ok(answered)
    }

    pub async fn create_webhook(&self, entry: &WebhookEntry) -> Result<Webhook, ApiError> {
        Ok(self.create_webhook_answered(entry).await?.value)
    }

    /// [`ApiClient::create_webhook`], with the service's JSON.
    pub async fn create_webhook_answered(
        &self,
        entry: &WebhookEntry,
    ) -> Result<Answered<Webhook>, ApiError> {
        let url = self.url("/webhooks");
        let body = serde_json::to_string(entry).unwrap_or_default();
        self.answered(self.http.post(&url).body(body), &url, self.check_wait())
            .await
    }

    pub async fn update_webhook(&self, id: u64, entry: &WebhookEntry) -> Result<Webhook, ApiError> {
        Ok(self.update_webhook_answered(id, entry).await?.value)
    }

    /// [`ApiClient::update_webhook`], with the service's JSON.
    pub async fn update_webhook_answered(
        &self,
        id: u64,
        entry: &WebhookEntry,
    ) -> Result<Answered<Webhook>, ApiError> {
        let url = self.url(&format!("/webhooks/{id}"));
        let body = serde_json::to_string(entry).unwrap_or_default();
        self.answered(self.http.post(&url).body(body), &url, self.check_wait())
            .await
    }

    /// The service answers 200 with an empty body; anything else in the body but JSON (a
    /// login page, a proxy's HTML) means this was not the service, and nothing was deleted.
    /// Delete webhook `id`. The service answers a delete with an empty 200, which any web
    /// server may give: the webhook is read first, so a URL that is not the service (or an id
    /// it does not have) is an error, not "deleted".
    pub async fn delete_webhook(&self, id: u64) -> Result<(), ApiError> {
        self.get_webhook(id).await?;
        let url = self.url(&format!("/webhooks/{id}"));
        let (status, body) = self.send(self.http.delete(&url), &url).await?;
        let blank = body.iter().all(u8::is_ascii_whitespace);
        if blank || serde_json::from_slice::<serde_json::Value>(&body).is_ok() {
            Ok(())
        } else {
            Err(ApiError::NotJson {
                url,
                status,
                snippet: snippet(&body),
            })
        }
    }

    /// The emulator's handset: an incoming message from `from` to `to`. Its answer is the
    /// message, with its id; anything else was not the emulator.
    pub async fn inject_incoming(
        &self,
        from: &str,
        to: &str,
        body: &str,
    ) -> Result<serde_json::Value, ApiError> {
        let url = self.url("/emulator/incoming");
        let entry = serde_json::json!({"from": from, "to": to, "body": body});
        let (status, bytes) = self
            .send(self.http.post(&url).body(entry.to_string()), &url)
            .await?;
        match serde_json::from_slice::<serde_json::Value>(&bytes) {
            Ok(v) if v.get("id").is_some_and(|i| i.is_string()) => Ok(v),
            _ => Err(ApiError::NotJson {
                url,
                status,
                snippet: snippet(&bytes),
            }),
        }
    }

    /// Turn a webhook on or off (an update with the same fields).
    pub async fn set_active(&self, id: u64, active: bool) -> Result<Webhook, ApiError> {
        let w = self.get_webhook(id).await?;
        let mut entry = WebhookEntry::from_webhook(&w);
        entry.active = Some(active);
        self.update_webhook(id, &entry).await
    }

    pub async fn send_messages(
        &self,
        entries: &[SubmissionEntry],
    ) -> Result<Vec<Message>, ApiError> {
        Ok(self.send_messages_answered(entries).await?.value)
    }

    /// [`ApiClient::send_messages`], with the service's JSON.
    pub async fn send_messages_answered(
        &self,
        entries: &[SubmissionEntry],
    ) -> Result<Answered<Vec<Message>>, ApiError> {
        let url = self.url("/messages");
        let body = serde_json::to_string(entries).unwrap_or_default();
        self.answered(self.http.post(&url).body(body), &url, self.timeout)
            .await
    }

    /// List messages: `filter` is the service's clause text, e.g. `type=SENT&status.type=DELIVERED`.
    pub async fn list_messages(
        &self,
        limit: Option<u32>,
        ascending: bool,
        filter: Option<&str>,
    ) -> Result<Vec<Message>, ApiError> {
        let url = self.url("/messages");
        let mut q: Vec<(&str, String)> = Vec::new();
        if let Some(l) = limit {
            q.push(("limit", l.to_string()));
        }
        if ascending {
            q.push(("sortOrder", "ASCENDING".into()));
        }
        if let Some(f) = filter {
            q.push(("filter", f.to_owned()));
        }
        let full = reqwest::Url::parse_with_params(&url, &q).map_err(|e| ApiError::Other {
            url: url.clone(),
            detail: e.to_string(),
        })?;
        self.json(self.http.get(full), &url).await
    }

    pub async fn get_message(&self, id: &str) -> Result<Message, ApiError> {
        let url = self.url(&format!("/messages/{id}"));
        self.json(self.http.get(&url), &url).await
    }
}

fn snippet(body: &[u8]) -> String {
    let text: String = String::from_utf8_lossy(body).chars().take(80).collect();
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.is_empty() {
        "an empty body".into()
    } else {
        format!("\"{}\"", crate::text::escape_control(&text))
    }
}

fn transport_error(url: &str, e: &reqwest::Error) -> ApiError {
    let url = url.to_owned();
    match Transport::of(url.starts_with("https:"), e) {
        Transport::Timeout => ApiError::Timeout { url },
        Transport::Tls(detail) => ApiError::Tls { url, detail },
        Transport::Refused => ApiError::ConnectionRefused { url },
        Transport::Closed => ApiError::Other {
            detail: if url.starts_with("http:") {
                "the server closed the connection without an answer (if it speaks https, the URL must start with https://)".to_owned()
            } else {
                "the server closed the connection without an answer".to_owned()
            },
            url,
        },
        Transport::Other(detail) => ApiError::Other { url, detail },
    }
}

/// Why a request got no answer, read from reqwest's error and the chain of its sources: the
/// API client and the emulator's invoker say it alike.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    Timeout,
    /// The TCP connection was made; the secure handshake on top of it failed (in words).
    Tls(String),
    /// Nothing accepted the connection.
    Refused,
    /// The server closed the connection without an answer.
    Closed,
    /// Anything else: the whole chain.
    Other(String),
}

impl Transport {
    pub(crate) fn of(https: bool, e: &reqwest::Error) -> Transport {
        let chain = {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(c) = src {
                s.push_str(": ");
                s.push_str(&c.to_string());
                src = c.source();
            }
            s
        };
        let lower = chain.to_ascii_lowercase();
        let refused = lower.contains("connection refused") || lower.contains("tcp connect error");
        let tls_words = [
            "certificate",
            "tls",
            "handshake",
            "corrupt message",
            "alert",
        ];
        if e.is_timeout() {
            Transport::Timeout
        } else if !refused
            && (tls_words.iter().any(|w| lower.contains(w)) || (e.is_connect() && https))
        {
            Transport::Tls(plain_tls(&chain))
        } else if e.is_connect() {
            Transport::Refused
        } else if lower.contains("connection reset") || lower.contains("connection closed before") {
            Transport::Closed
        } else {
            Transport::Other(chain)
        }
    }
}

/// Why a secure connection failed, in words (rustls names its reasons in Rust).
fn plain_tls(chain: &str) -> String {
    const REASONS: [(&str, &str); 6] = [
        (
            "UnknownIssuer",
            "its certificate is not signed by an authority this machine trusts (a self-signed or private certificate)",
        ),
        (
            "CaUsedAsEndEntity",
            "it shows a certificate authority's certificate, not a server's",
        ),
        (
            "NotValidForName",
            "its certificate is for another host name",
        ),
        ("Expired", "its certificate has expired"),
        (
            "InvalidContentType",
            "what answered does not speak TLS (is the URL https:// where the server speaks http://?)",
        ),
        (
            "corrupt message",
            "what answered does not speak TLS (is the URL https:// where the server speaks http://?)",
        ),
    ];
    REASONS
        .iter()
        .find(|(code, _)| chain.contains(code))
        .map_or_else(
            || chain.rsplit(": ").next().unwrap_or(chain).to_owned(),
            |(_, words)| (*words).to_owned(),
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_webhook_hookscope_cannot_read_is_named_and_the_others_kept() {
        let entries: Vec<serde_json::Value> = serde_json::from_str(
            r#"[
              {"id":1,"name":"ok","url":"http://h/1","triggerScope":"SENT","active":true},
              {"id":2,"name":"newer","url":"http://h/2","triggerScope":"MMS","active":true},
              {"id":3,"name":"batch","url":"http://h/3","triggerScope":"RECEIVED","active":true,"invokeOption":"BATCH"},
              {"id":4,"url":"http://h/4","triggerScope":"SENT","active":true},
              {"name":"bell\u0007","triggerScope":"SENT"},
              "not a webhook"
            ]"#,
        )
        .unwrap();
        let list = WebhookList::read(&entries);
        assert_eq!(list.webhooks.len(), 1);
        assert_eq!(list.webhooks[0].id, 1);
        let u = &list.unreadable;
        assert_eq!(u.len(), 5, "{u:?}");
        assert!(
            u[0].starts_with("webhook 2 \"newer\": triggerScope: unknown variant `MMS`"),
            "{}",
            u[0]
        );
        assert!(u[0].contains("`SENT` or `RECEIVED`"), "{}", u[0]);
        assert!(
            u[1].starts_with("webhook 3 \"batch\": invokeOption: unknown variant `BATCH`"),
            "{}",
            u[1]
        );
        assert_eq!(u[2], "webhook 4: missing field `name`");
        assert!(
            u[3].starts_with("a webhook without an id, \"bell\\u{7}\""),
            "{}",
            u[3]
        );
        assert!(
            u[4] == "an entry that is not a webhook: the text \"not a webhook\", where a webhook (an object) is expected",
            "{}",
            u[4]
        );
    }

    /// An id the client cannot read is named as sent, and serde's words for the wrong kind of
    /// value are a reader's (QA saw `invalid type: string "abc", expected u64`, and a 23-digit
    /// id called "a webhook without an id").
    #[test]
    fn an_unreadable_id_is_named_and_said_in_plain_words() {
        let json = r#"[
              {"id":"abc","name":"a","url":"http://h/1","triggerScope":"SENT","active":true},
              {"id":12345678901234567890123,"name":"n","url":"http://h/2","triggerScope":"SENT","active":true},
              {"id":1.0e2,"name":"f","url":"http://h/3","triggerScope":"SENT","active":true},
              {"id":-3,"name":"m","url":"http://h/4","triggerScope":"SENT","active":true}
            ]"#;
        let entries: Vec<serde_json::Value> = serde_json::from_str(json).unwrap();
        let as_parsed = WebhookList::read(&entries).unreadable;
        assert!(
            as_parsed[1].starts_with("webhook 1.2345678901234568e+22 \"n\""),
            "{}",
            as_parsed[1]
        );
        // Named as the service spelled it.
        let u = WebhookList::read_as_sent(&entries, json).unreadable;
        assert_eq!(
            u[2],
            "webhook 1.0e2 \"f\": id: the number `1.0e2`, where a whole number is expected"
        );
        assert_eq!(
            u[3],
            "webhook -3 \"m\": id: the number `-3`, where a whole number of 0 or more is expected"
        );
        assert_eq!(
            u[0],
            "webhook \"abc\" \"a\": id: the text \"abc\", where a whole number is expected"
        );
        assert_eq!(
            u[1],
            "webhook 12345678901234567890123 \"n\": id: the number 12345678901234567890123 is too large to be read as a whole number here"
        );
        assert_eq!(
            plain_serde("invalid type: map, expected a string"),
            "an object, expected a string"
        );
        assert_eq!(plain_serde("missing field `name`"), "missing field `name`");
    }

    /// An entry holding a number past a float's range (`1e400`) is valid JSON serde_json cannot
    /// hold: it is named among the unreadable, and the others are listed (the whole list was
    /// refused as "not JSON").
    #[test]
    fn an_entry_past_a_floats_range_does_not_fail_the_list() {
        let json = r#"[
              {"id":1,"name":"ok","url":"http://h/1","triggerScope":"SENT","active":true},
              {"id":1e400,"name":"huge","url":"http://h/2","triggerScope":"SENT","active":true},
              {"name":"big-name","id":2,"url":"http://h/3","triggerScope":"SENT","active":1e999},
              [1e400],
              {"id":3,"name":"also ok","url":"http://h/4","triggerScope":"RECEIVED","active":false}
            ]"#;
        assert!(serde_json::from_str::<serde_json::Value>(json).is_err());
        let list = WebhookList::from_text(json).expect("a list");
        let ids: Vec<u64> = list.webhooks.iter().map(|w| w.id).collect();
        assert_eq!(ids, vec![1, 3]);
        assert_eq!(
            list.unreadable,
            vec![
                "webhook 1e400 \"huge\": id: the number 1e400 is too large to be read".to_owned(),
                "webhook 2 \"big-name\": active: the number 1e999 is too large to be read"
                    .to_owned(),
                "an entry that is not a webhook (a list or a number that cannot be read)"
                    .to_owned(),
            ]
        );
        // Not a list: none (the caller says what the answer is instead).
        assert!(WebhookList::from_text(r#"{"id":1e400}"#).is_none());
        assert!(WebhookList::from_text("not json").is_none());
    }

    #[test]
    fn an_unreadable_entry_is_said_in_one_short_line() {
        let name = "n".repeat(500);
        let entry = serde_json::json!({"id": 9, "name": name, "triggerScope": "X\nY"});
        let list = WebhookList::read(&[entry]);
        let said = &list.unreadable[0];
        assert!(said.chars().count() < 250, "{said}");
        assert!(said.contains("…"), "{said}");
        assert!(!said.contains('\n'), "{said}");
    }

    #[test]
    fn a_failed_handshake_is_said_in_words() {
        for (chain, says) in [
            (
                "error sending request: invalid peer certificate: UnknownIssuer",
                "not signed by an authority",
            ),
            (
                "invalid peer certificate: Other(OtherError(CaUsedAsEndEntity))",
                "certificate authority's",
            ),
            (
                "received corrupt message of type InvalidContentType",
                "does not speak TLS",
            ),
            ("something new: the reason", "the reason"),
        ] {
            assert!(
                plain_tls(chain).contains(says),
                "{chain}: {}",
                plain_tls(chain)
            );
        }
    }

    #[test]
    fn a_base_url_that_is_not_a_whole_http_address_is_named() {
        for bad in [
            "ftp://127.0.0.1/v1",
            "127.0.0.1:21788/v1",
            "https://",
            "",
            "  ",
            "http://127.0.0.1:8788/v1\u{1b}[2J",
            "http://127.0.0.1:8788/v\t1",
            "http://127.0.0.1:8788/my v1",
            "http://127.0.0.1:8788/v1\u{202e}",
            "http://127.0.0.1:8788/v\u{200b}1",
            "http://127.0.0.1:8788/v\u{a0}1",
        ] {
            let e = ApiClient::new(bad, "u", None).err().map(|e| e.to_string());
            let e = e.unwrap_or_default();
            assert!(e.contains("is not a whole http(s) address"), "{bad}: {e}");
            assert!(!e.contains("builder error"), "{e}");
            // Named with its control and invisible characters escaped: they can be seen, and
            // cannot act on the terminal.
            assert!(
                !e.chars()
                    .any(|c| c.is_control() || matches!(c, '\u{202e}' | '\u{200b}' | '\u{a0}')),
                "{e:?}"
            );
        }
        let c = ApiClient::new(" http://127.0.0.1:8788/v1/ ", "u", None).unwrap();
        assert_eq!(c.base(), "http://127.0.0.1:8788/v1");
        // Credentials in the URL are refused, and the error does not repeat them.
        for with in [
            "http://user:s3cret@127.0.0.1:8788/v1",
            "http://user@127.0.0.1:8788/v1",
            "http://:s3cret@127.0.0.1:8788/v1",
        ] {
            let e = ApiClient::new(with, "u", None).err().map(|e| e.to_string());
            let e = e.unwrap_or_default();
            assert!(e.contains("carries a user name or password"), "{with}: {e}");
            assert!(e.contains("\"http://127.0.0.1:8788/v1\""), "{e}");
            assert!(!e.contains("s3cret") && !e.contains("user@"), "{e}");
        }
    }

    #[test]
    fn an_error_is_not_said_twice() {
        let e = ApiError::NotEnoughCredits {
            detail: "Not enough credits: the messages cost 1, the account has 0".into(),
        };
        assert_eq!(
            e.to_string(),
            "Not enough credits: the messages cost 1, the account has 0"
        );
        let e = ApiError::NotEnoughCredits {
            detail: "balance 0".into(),
        };
        assert_eq!(e.to_string(), "not enough credits: balance 0");
        let e = ApiError::TooManyMessages {
            detail: "The request contained 30001 messages".into(),
        };
        assert_eq!(
            e.to_string(),
            "too many messages in one request: The request contained 30001 messages"
        );
    }
}
