//! Validation of one invocation against the contract: what it carries (event, delivery,
//! attempt, webhook, messages) and findings, each with a severity and a plain sentence.

use super::{Brand, CONTENT_TYPE_JSON, EventKind, status_id};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, not a breach.
    Info,
    /// Unusual, and likely a problem.
    Warning,
    /// Breaks the contract.
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One thing the invocation does differently from the contract.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub severity: Severity,
    /// A stable identifier, e.g. `missing-header`, for filters and scripts.
    pub code: String,
    /// A plain sentence for a person.
    pub message: String,
}

impl Finding {
    fn new(severity: Severity, code: &str, message: impl Into<String>) -> Self {
        Finding {
            severity,
            code: code.to_owned(),
            message: message.into(),
        }
    }
}

/// What an invocation carries, read as the contract describes it, and what is wrong with it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Validation {
    pub event: Option<EventKind>,
    /// The raw event header value (also when it is not a known event).
    pub event_raw: Option<String>,
    pub delivery: Option<String>,
    pub attempt: Option<u32>,
    pub webhook_id: Option<String>,
    /// Number of elements when the body is a JSON array.
    pub messages: Option<usize>,
    /// POST, JSON content type, the invoker User-Agent and body `[]`, with no delivery header: the
    /// check the service makes before it accepts a URL.
    pub registration_check: bool,
    pub findings: Vec<Finding>,
}

/// A header as received: name and raw value bytes.
pub type HeaderPair<'a> = (&'a str, &'a [u8]);

/// A header sent `count` times: a warning that the first is used (`more` adds to why it matters).
fn repeated_header(name: &str, count: usize, more: &str, findings: &mut Vec<Finding>) {
    if count > 1 {
        findings.push(Finding::new(
            Severity::Warning,
            "repeated-header",
            format!("The {name} header appears {count} times; the first is used{more}."),
        ));
    }
}

fn header_values<'a>(headers: &'a [HeaderPair<'a>], name: &str) -> Vec<&'a [u8]> {
    headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| *v)
        .collect()
}

/// Read one header the contract requires; record a finding when it is missing, repeated or not
/// text. Returns the trimmed text of the first value.
fn required_header(
    headers: &[HeaderPair<'_>],
    name: &str,
    findings: &mut Vec<Finding>,
) -> Option<String> {
    let values = header_values(headers, name);
    let first = match values.first() {
        None => {
            findings.push(Finding::new(
                Severity::Error,
                "missing-header",
                format!("The {name} header is missing."),
            ));
            return None;
        }
        Some(v) => *v,
    };
    repeated_header(name, values.len(), "", findings);
    match std::str::from_utf8(first) {
        Ok(text) if !text.trim().is_empty() => Some(text.trim().to_owned()),
        Ok(_) => {
            findings.push(Finding::new(
                Severity::Error,
                "malformed-header",
                format!("The {name} header is empty."),
            ));
            None
        }
        Err(_) => {
            findings.push(Finding::new(
                Severity::Error,
                "malformed-header",
                format!("The {name} header is not text (it has bytes that are not UTF-8)."),
            ));
            None
        }
    }
}

fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Validate one invocation (method, headers as received, raw body) against the contract.
pub fn validate(
    brand: &Brand,
    method: &str,
    headers: &[HeaderPair<'_>],
    body: &[u8],
) -> Validation {
    let mut v = Validation::default();
    let f = &mut v.findings;

    if method != "POST" {
        f.push(Finding::new(
            Severity::Error,
            "method",
            format!("The service calls webhooks with POST; this call used {method}."),
        ));
    }

    // Headers.
    let event_name = brand.event_header();
    if let Some(raw) = required_header(headers, event_name, f) {
        v.event = EventKind::parse(&raw);
        if v.event.is_none() {
            f.push(Finding::new(
                Severity::Error,
                "unknown-event",
                format!(
                    "The {event_name} header is \"{}\"; the contract knows incoming-message and status-report.",
                    raw.escape_debug()
                ),
            ));
        }
        v.event_raw = Some(raw);
    }
    v.delivery = required_header(headers, brand.delivery_header(), f);
    let attempt_name = brand.attempt_header();
    let attempt_raw = required_header(headers, attempt_name, f);
    // Any of the headers that name a delivery (even empty) makes the call a delivery attempt
    // (perhaps of an empty array, which the contract allows), never the registration check,
    // which names none.
    let names_a_delivery = [
        event_name,
        brand.delivery_header(),
        attempt_name,
        brand.webhook_id_header(),
    ]
    .iter()
    .any(|name| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)));
    if let Some(raw) = attempt_raw {
        // Digits only, without a sign or a leading zero: "+1" and "01" are not how the service
        // writes a number, though a lenient parser would take them.
        let plain =
            !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) && !raw.starts_with('0');
        match raw.parse::<u32>() {
            Ok(n) if plain => {
                v.attempt = Some(n);
                let most = super::max_attempts();
                if n > most {
                    f.push(Finding::new(
                        Severity::Warning,
                        "attempt-beyond-schedule",
                        format!(
                            "The {attempt_name} header is {n}: the contract's schedule makes at most {most} attempts for a delivery (the first call and its retries in the 2-day window)."
                        ),
                    ));
                }
            }
            Err(e) if plain && *e.kind() == std::num::IntErrorKind::PosOverflow => {
                f.push(Finding::new(
                    Severity::Error,
                    "malformed-attempt",
                    format!(
                        "The {attempt_name} header is \"{}\", too large a number to read: the contract's schedule makes at most {} attempts for a delivery.",
                        raw.escape_debug(),
                        super::max_attempts()
                    ),
                ));
            }
            _ => f.push(Finding::new(
                Severity::Error,
                "malformed-attempt",
                format!(
                    "The {attempt_name} header is \"{}\"; it must be a positive whole number written in plain digits (1 for the first call).",
                    raw.escape_debug()
                ),
            )),
        }
    }
    v.webhook_id = required_header(headers, brand.webhook_id_header(), f);

    let content_types = header_values(headers, "content-type");
    repeated_header(
        "Content-Type",
        content_types.len(),
        ", and a reader may take another",
        f,
    );
    let content_type = content_types
        .first()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let json_type = match &content_type {
        None => {
            f.push(Finding::new(
                Severity::Error,
                "content-type",
                "The Content-Type header is missing; the service sends application/json.",
            ));
            false
        }
        Some(ct) if media_type(ct) != CONTENT_TYPE_JSON => {
            f.push(Finding::new(
                Severity::Error,
                "content-type",
                format!(
                    "The Content-Type is \"{}\"; the service sends application/json.",
                    ct.escape_debug()
                ),
            ));
            false
        }
        Some(_) => true,
    };
    let user_agent = header_values(headers, "user-agent")
        .first()
        .map(|b| String::from_utf8_lossy(b).trim().to_owned());
    // Letter case aside: a brand word typed in lower case (`--brand acme`) still knows the
    // service's "Acme Invoker".
    let invoker_agent = user_agent
        .as_deref()
        .is_some_and(|ua| ua.eq_ignore_ascii_case(brand.user_agent()));
    if !invoker_agent {
        f.push(Finding::new(
            Severity::Warning,
            "user-agent",
            match &user_agent {
                None => format!(
                    "There is no User-Agent; the service's invoker sends \"{}\".",
                    brand.user_agent()
                ),
                Some(ua) => {
                    let mut said = format!(
                        "The User-Agent is \"{}\"; the service's invoker sends \"{}\".",
                        ua.escape_debug(),
                        brand.user_agent()
                    );
                    if let Some(other) = Brand::of_user_agent(ua) {
                        let other = Brand::new(other);
                        said.push_str(&format!(
                            " It looks like a service whose brand word is {0}, with headers named {1}: start Hookscope with --brand {0} (or set the brand word in Settings) to read its calls and answer its registration check 200.",
                            other.word(),
                            other.event_header()
                        ));
                    }
                    said
                }
            },
        ));
    }

    // Body.
    let messages = if body.is_empty() {
        f.push(Finding::new(
            Severity::Error,
            "empty-body",
            "The body is empty; it must be a JSON array of messages (an empty array [] is valid).",
        ));
        None
    } else {
        match std::str::from_utf8(body) {
            Err(e) => {
                f.push(Finding::new(
                    Severity::Error,
                    "body-not-utf8",
                    format!(
                        "The body is not UTF-8 text (first bad byte at offset {}), so it cannot be JSON.",
                        e.valid_up_to()
                    ),
                ));
                None
            }
            Ok(text) => check_body(text, v.event, f, FastPath::Try),
        }
    };
    if let Some(n) = messages {
        v.messages = Some(n);
        // An empty array that names a delivery is an (empty) delivery, not the check.
        v.registration_check =
            n == 0 && method == "POST" && json_type && invoker_agent && !names_a_delivery;
    }
    if v.registration_check {
        // The registration check carries no delivery headers: those findings do not apply.
        v.findings.retain(|f| f.code != "missing-header");
        v.findings.push(Finding::new(
            Severity::Info,
            "registration-check",
            "This is the registration check: the service posts [] before it accepts a URL, and needs 200.",
        ));
    }
    v
}

/// Whether [`check_body`] may take the fast path (tests and the benchmark turn it off, to compare).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastPath {
    Try,
    Skip,
}

/// Check a body that is UTF-8 text: the number of messages when it is a JSON array, and the
/// findings about it.
///
/// A well-formed body (every message with every field of its type, the common case) is read
/// straight into borrowed fields ([`FastMessage`]), without building a `serde_json::Value` tree
/// and its maps: a few microseconds less on every call. Anything that does not fit (a missing or
/// mistyped field, a key given twice, an element that is not an object, not JSON at all) is read
/// again as a `Value` by the general path, which names each problem. Both paths make the same
/// checks of meaning (dates, `status.id`, the event), with the same functions.
pub fn check_body(
    text: &str,
    event: Option<EventKind>,
    f: &mut Vec<Finding>,
    fast: FastPath,
) -> Option<usize> {
    if fast == FastPath::Try
        && let Ok(messages) = serde_json::from_str::<Vec<FastMessage<'_>>>(text)
    {
        for (i, m) in messages.iter().enumerate() {
            check_date(i, &m.submission.date, f);
            check_status_id(
                i,
                &m.status.id,
                &m.status.kind,
                m.status.subtype.0.as_deref(),
                f,
            );
            check_event(i, &m.kind, event, f);
        }
        return Some(messages.len());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                check_message(i, item, event, f);
            }
            Some(items.len())
        }
        Ok(other) => {
            f.push(Finding::new(
                Severity::Error,
                "body-not-array",
                format!(
                    "The body is a JSON {}; it must be an array of messages.",
                    json_kind(&other)
                ),
            ));
            None
        }
        // Read again for its grammar alone (serde_json skips a value without its depth limit).
        Err(e) => {
            match serde_json::from_str::<serde::de::IgnoredAny>(text) {
                // Well-formed JSON that serde_json will not build (its grammar allows what a
                // reader need not take): said for what it is, not as "not valid JSON".
                Ok(_) => f.push(Finding::new(
                    Severity::Error,
                    "body-json-unreadable",
                    unreadable_json(&e),
                )),
                // What is wrong with its grammar: a deep body cut short is said to end too
                // soon, where it ends, not to pass a "recursion limit" where the reader stopped.
                Err(syntax) => f.push(Finding::new(
                    Severity::Error,
                    "body-not-json",
                    // The reading for a value names the same slip more closely ("trailing
                    // comma" where skipping says "expected value").
                    not_json(
                        if (e.line(), e.column()) == (syntax.line(), syntax.column()) {
                            &e
                        } else {
                            &syntax
                        },
                        text,
                    ),
                )),
            }
            None
        }
    }
}

/// What is wrong with a body that is not JSON, in plain words and where (serde_json's own words
/// for a slip these have none for).
fn not_json(e: &serde_json::Error, text: &str) -> String {
    let slip = crate::text::json_slip(e, text, "it", "its JSON value");
    let reason = slip.reason.unwrap_or(slip.said);
    format!(
        "The body is not valid JSON: {reason} (line {}, column {}).",
        slip.line, slip.column
    )
}

/// Why well-formed JSON could not be read, for [`check_body`]: nested past serde_json's 128
/// levels, a number past a 64-bit float's range, or a `\u` escape that names no character (a
/// lone surrogate), which RFC 8259 allows in its grammar and leaves to the reader.
fn unreadable_json(e: &serde_json::Error) -> String {
    let at = format!("line {} column {}", e.line(), e.column());
    let what = e.to_string();
    let why = if what.contains("recursion limit") {
        "it is nested 128 levels deep or more"
    } else if what.contains("number out of range") {
        "a number in it is too large for a 64-bit float (most JSON readers fail on it or make it infinite)"
    } else if what.contains("surrogate") || what.contains("hex escape") {
        "a string in it has a \\u escape that is no character (a lone UTF-16 surrogate, which most JSON readers refuse or replace)"
    } else {
        "serde_json refuses it"
    };
    format!(
        "The body is well-formed JSON, but it cannot be read as data: {why} (at {at}). Its messages are not checked."
    )
}

/// A message object with every field of the contract, each of its type (see [`MESSAGE_FIELDS`]):
/// what the fast path of [`check_body`] accepts. Fields only checked for their type are markers
/// that keep nothing. A field missing, of another type or given twice is an error here, and the
/// general path then describes it.
#[derive(Deserialize)]
struct FastMessage<'a> {
    #[serde(rename = "id")]
    _id: IsStr,
    #[serde(borrow, rename = "type")]
    kind: std::borrow::Cow<'a, str>,
    #[serde(rename = "from")]
    _from: IsStr,
    #[serde(rename = "to")]
    _to: IsStr,
    #[serde(rename = "body")]
    _body: IsStr,
    #[serde(rename = "encoding")]
    _encoding: IsStr,
    #[serde(rename = "protocolId")]
    _protocol_id: IsInt,
    #[serde(rename = "messageClass")]
    _message_class: IsInt,
    #[serde(rename = "numberOfParts")]
    _number_of_parts: OrNull<IsInt>,
    #[serde(rename = "creditCost")]
    _credit_cost: OrNull<IsNum>,
    #[serde(default, rename = "userSuppliedId")]
    _user_supplied_id: Option<IsStr>,
    #[serde(borrow)]
    submission: FastSubmission<'a>,
    #[serde(borrow)]
    status: FastStatus<'a>,
    #[serde(rename = "relatedSentMessageId")]
    _related_sent_message_id: OrNull<IsStr>,
}

#[derive(Deserialize)]
struct FastSubmission<'a> {
    #[serde(rename = "id")]
    _id: IsStr,
    #[serde(borrow)]
    date: std::borrow::Cow<'a, str>,
}

#[derive(Deserialize)]
struct FastStatus<'a> {
    #[serde(borrow)]
    id: std::borrow::Cow<'a, str>,
    #[serde(borrow, rename = "type")]
    kind: std::borrow::Cow<'a, str>,
    subtype: OrNull<String>,
}

/// A field that must be present and may be null (unlike `Option`, which serde lets be absent:
/// a missing field reaches `deserialize_any` as an error, while null is a unit).
struct OrNull<T>(Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OrNull<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::IntoDeserializer;
        use serde::de::value::{BorrowedStrDeserializer, StrDeserializer};
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = OrNull<T>;
            fn expecting(&self, out: &mut std::fmt::Formatter) -> std::fmt::Result {
                out.write_str("a value or null")
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(OrNull(None))
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                v: &'de str,
            ) -> Result<Self::Value, E> {
                T::deserialize(BorrowedStrDeserializer::new(v)).map(|t| OrNull(Some(t)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                T::deserialize(StrDeserializer::new(v)).map(|t| OrNull(Some(t)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|t| OrNull(Some(t)))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|t| OrNull(Some(t)))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
                T::deserialize(v.into_deserializer()).map(|t| OrNull(Some(t)))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Type markers: they accept a JSON value of their kind (as [`Want`] says) and keep nothing.
macro_rules! marker {
    ($name:ident, $expecting:literal, $($method:ident: $ty:ty),+) => {
        struct $name;
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl serde::de::Visitor<'_> for V {
                    type Value = $name;
                    fn expecting(&self, out: &mut std::fmt::Formatter) -> std::fmt::Result {
                        out.write_str($expecting)
                    }
                    $(fn $method<E: serde::de::Error>(self, _: $ty) -> Result<$name, E> {
                        Ok($name)
                    })+
                }
                d.deserialize_any(V)
            }
        }
    };
}
marker!(IsStr, "a string", visit_str: &str);
marker!(IsInt, "an integer", visit_i64: i64, visit_u64: u64);
marker!(IsNum, "a number", visit_i64: i64, visit_u64: u64, visit_f64: f64);

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[derive(Clone, Copy)]
enum Want {
    Str,
    Int,
    Obj,
    StrOrNull,
    IntOrNull,
    NumOrNull,
}

impl Want {
    fn accepts(self, v: &Value) -> bool {
        match self {
            Want::Str => v.is_string(),
            Want::Int => v.is_i64() || v.is_u64(),
            Want::Obj => v.is_object(),
            Want::StrOrNull => v.is_string() || v.is_null(),
            Want::IntOrNull => v.is_i64() || v.is_u64() || v.is_null(),
            Want::NumOrNull => v.is_number() || v.is_null(),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Want::Str => "a string",
            Want::Int => "an integer",
            Want::Obj => "an object",
            Want::StrOrNull => "a string or null",
            Want::IntOrNull => "an integer or null",
            Want::NumOrNull => "a number or null",
        }
    }
}

/// The fields of the message object (contract.md, Resources). `userSuppliedId` may be absent.
const MESSAGE_FIELDS: &[(&str, Want, bool)] = &[
    ("id", Want::Str, true),
    ("type", Want::Str, true),
    ("from", Want::Str, true),
    ("to", Want::Str, true),
    ("body", Want::Str, true),
    ("encoding", Want::Str, true),
    ("protocolId", Want::Int, true),
    ("messageClass", Want::Int, true),
    ("numberOfParts", Want::IntOrNull, true),
    ("creditCost", Want::NumOrNull, true),
    ("userSuppliedId", Want::StrOrNull, false),
    ("submission", Want::Obj, true),
    ("status", Want::Obj, true),
    ("relatedSentMessageId", Want::StrOrNull, true),
];

fn check_fields(
    where_: &str,
    obj: &serde_json::Map<String, Value>,
    fields: &[(&str, Want, bool)],
    f: &mut Vec<Finding>,
) {
    for (name, want, required) in fields {
        match obj.get(*name) {
            None if *required => f.push(Finding::new(
                Severity::Error,
                "missing-field",
                format!("{where_} has no \"{name}\" field."),
            )),
            None => {}
            Some(value) if !want.accepts(value) => f.push(Finding::new(
                Severity::Error,
                "wrong-type",
                format!(
                    "{where_}: \"{name}\" is {}{}; it must be {}.",
                    article(json_kind(value)),
                    json_kind(value),
                    want.name()
                ),
            )),
            Some(_) => {}
        }
    }
}

/// "a string", "an object", "null" (no article: it is a value, not a kind of one).
fn article(kind: &str) -> &'static str {
    if kind == "null" {
        ""
    } else if kind.starts_with(['a', 'o']) {
        "an "
    } else {
        "a "
    }
}

fn check_message(i: usize, item: &Value, event: Option<EventKind>, f: &mut Vec<Finding>) {
    let here = message_name(i);
    let Some(obj) = item.as_object() else {
        f.push(Finding::new(
            Severity::Error,
            "element-not-object",
            format!(
                "{here} is a JSON {}, not a message object.",
                json_kind(item)
            ),
        ));
        return;
    };
    check_fields(&here, obj, MESSAGE_FIELDS, f);
    if let Some(sub) = obj.get("submission").and_then(Value::as_object) {
        check_fields(
            &format!("{here} submission"),
            sub,
            &[("id", Want::Str, true), ("date", Want::Str, true)],
            f,
        );
        if let Some(date) = sub.get("date").and_then(Value::as_str) {
            check_date(i, date, f);
        }
    }
    if let Some(status) = obj.get("status").and_then(Value::as_object) {
        check_fields(
            &format!("{here} status"),
            status,
            &[
                ("id", Want::Str, true),
                ("type", Want::Str, true),
                ("subtype", Want::StrOrNull, true),
            ],
            f,
        );
        if let (Some(id), Some(kind)) = (
            status.get("id").and_then(Value::as_str),
            status.get("type").and_then(Value::as_str),
        ) {
            let subtype = status.get("subtype").and_then(Value::as_str);
            check_status_id(i, id, kind, subtype, f);
        }
    }
    if let Some(kind) = obj.get("type").and_then(Value::as_str) {
        check_event(i, kind, event, f);
    }
}

/// "Message 3", for message index 2: how findings name a message.
fn message_name(i: usize) -> String {
    format!("Message {}", i + 1)
}

/// `submission.date` must be an ISO 8601 timestamp in UTC.
fn check_date(i: usize, date: &str, f: &mut Vec<Finding>) {
    match chrono::DateTime::parse_from_rfc3339(date) {
        Err(_) => f.push(Finding::new(
            Severity::Warning,
            "malformed-date",
            format!(
                "{}: submission.date \"{}\" is not an ISO 8601 UTC timestamp.",
                message_name(i),
                date.escape_debug()
            ),
        )),
        Ok(t) if t.offset().local_minus_utc() != 0 => f.push(Finding::new(
            Severity::Warning,
            "malformed-date",
            format!(
                "{}: submission.date \"{}\" is in UTC{}; the contract gives dates in UTC (ending in Z).",
                message_name(i),
                date.escape_debug(),
                t.offset()
            ),
        )),
        Ok(_) => {}
    }
}

/// `status.id` must be `type.subtype` (`DELIVERED.null` when there is no subtype).
fn check_status_id(i: usize, id: &str, kind: &str, subtype: Option<&str>, f: &mut Vec<Finding>) {
    let sub = subtype.unwrap_or("null");
    // The same as comparing with status_id(kind, subtype), without building it for every call.
    let consistent = id
        .strip_prefix(kind)
        .and_then(|rest| rest.strip_prefix('.'))
        == Some(sub);
    if !consistent {
        let expected = status_id(kind, subtype);
        f.push(Finding::new(
            Severity::Error,
            "status-id",
            format!(
                "{}: status.id is \"{}\"; by the contract it is type.subtype, \"{}\".",
                message_name(i),
                id.escape_debug(),
                expected.escape_debug()
            ),
        ));
    }
}

/// The message's type must be the one its event carries.
fn check_event(i: usize, kind: &str, event: Option<EventKind>, f: &mut Vec<Finding>) {
    if let Some(event) = event
        && kind != event.message_type()
    {
        f.push(Finding::new(
            Severity::Error,
            "event-mismatch",
            format!(
                "{} has type {}, but the event is {event}, which carries {} messages.",
                message_name(i),
                kind.escape_debug(),
                event.message_type()
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::Message;

    fn good_headers(event: &str) -> Vec<(String, Vec<u8>)> {
        vec![
            ("X-Service-Event".into(), event.as_bytes().to_vec()),
            ("X-Service-Delivery".into(), b"d-1".to_vec()),
            ("X-Service-Delivery-Attempt".into(), b"1".to_vec()),
            ("X-Service-Webhook-Id".into(), b"234".to_vec()),
            ("Content-Type".into(), b"application/json".to_vec()),
            ("User-Agent".into(), b"Service Invoker".to_vec()),
        ]
    }

    fn run(method: &str, headers: &[(String, Vec<u8>)], body: &[u8]) -> Validation {
        let pairs: Vec<HeaderPair<'_>> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        validate(&Brand::default(), method, &pairs, body)
    }

    fn without(headers: &[(String, Vec<u8>)], name: &str) -> Vec<(String, Vec<u8>)> {
        headers
            .iter()
            .filter(|(n, _)| !n.eq_ignore_ascii_case(name))
            .cloned()
            .collect()
    }

    fn set(headers: &[(String, Vec<u8>)], name: &str, value: &[u8]) -> Vec<(String, Vec<u8>)> {
        let mut h = without(headers, name);
        h.push((name.to_owned(), value.to_vec()));
        h
    }

    fn codes(v: &Validation) -> Vec<&str> {
        v.findings.iter().map(|f| f.code.as_str()).collect()
    }

    fn report_body() -> Vec<u8> {
        serde_json::to_vec(&[Message::sample_status_report("1")]).unwrap()
    }

    #[test]
    fn a_good_status_report_has_no_findings() {
        let v = run("POST", &good_headers("status-report"), &report_body());
        assert_eq!(v.findings, vec![]);
        assert_eq!(v.event, Some(EventKind::StatusReport));
        assert_eq!(v.delivery.as_deref(), Some("d-1"));
        assert_eq!(v.attempt, Some(1));
        assert_eq!(v.webhook_id.as_deref(), Some("234"));
        assert_eq!(v.messages, Some(1));
        assert!(!v.registration_check);
    }

    #[test]
    fn a_good_incoming_message_has_no_findings() {
        let body = serde_json::to_vec(&[Message::sample_incoming("9")]).unwrap();
        let v = run("POST", &good_headers("incoming-message"), &body);
        assert_eq!(v.findings, vec![]);
        assert_eq!(v.event, Some(EventKind::IncomingMessage));
    }

    #[test]
    fn header_names_are_case_insensitive() {
        let h: Vec<_> = good_headers("status-report")
            .into_iter()
            .map(|(n, v)| (n.to_ascii_lowercase(), v))
            .collect();
        assert_eq!(run("POST", &h, &report_body()).findings, vec![]);
    }

    #[test]
    fn each_missing_header_is_a_finding() {
        for name in [
            "X-Service-Event",
            "X-Service-Delivery",
            "X-Service-Delivery-Attempt",
            "X-Service-Webhook-Id",
        ] {
            let v = run(
                "POST",
                &without(&good_headers("status-report"), name),
                &report_body(),
            );
            assert_eq!(codes(&v), vec!["missing-header"], "{name}");
            assert!(v.findings[0].message.contains(name));
            assert_eq!(v.findings[0].severity, Severity::Error);
        }
    }

    #[test]
    fn no_headers_at_all() {
        let v = run("POST", &[], &report_body());
        let c = codes(&v);
        assert_eq!(c.iter().filter(|c| **c == "missing-header").count(), 4);
        assert!(c.contains(&"content-type"));
        assert!(c.contains(&"user-agent"));
    }

    #[test]
    fn brand_word_changes_the_header_names_looked_for() {
        let pairs: Vec<(String, Vec<u8>)> = good_headers("status-report");
        let p: Vec<HeaderPair<'_>> = pairs
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        let v = validate(&Brand::new("Acme"), "POST", &p, &report_body());
        assert!(codes(&v).contains(&"missing-header"));
        assert!(v.findings[0].message.contains("X-Acme-Event"));
    }

    #[test]
    fn another_brands_invoker_is_named_with_the_flag_that_reads_it() {
        let acme = [
            ("Content-Type", &b"application/json"[..]),
            ("User-Agent", b"Acme Invoker"),
        ];
        let v = validate(&Brand::default(), "POST", &acme, b"[]");
        let ua = v.findings.iter().find(|f| f.code == "user-agent").unwrap();
        assert_eq!(
            ua.message,
            "The User-Agent is \"Acme Invoker\"; the service's invoker sends \"Service Invoker\". It looks like a service whose brand word is Acme, with headers named X-Acme-Event: start Hookscope with --brand Acme (or set the brand word in Settings) to read its calls and answer its registration check 200."
        );
        // Another client's agent is only named, and the right brand in other letters is fine.
        let curl = [("User-Agent", &b"curl/8.5.0"[..])];
        let v = validate(&Brand::default(), "POST", &curl, b"[]");
        let ua = v.findings.iter().find(|f| f.code == "user-agent").unwrap();
        assert!(!ua.message.contains("--brand"), "{}", ua.message);
        let lower = [("User-Agent", &b"acme invoker"[..])];
        let v = validate(&Brand::new("Acme"), "POST", &lower, b"[]");
        assert!(!codes(&v).contains(&"user-agent"));
        assert_eq!(Brand::of_user_agent("My App Invoker"), None);
        assert_eq!(Brand::of_user_agent(" Acme-2 invoker "), Some("Acme-2"));
    }

    #[test]
    fn empty_or_non_utf8_header_is_malformed() {
        let h = set(&good_headers("status-report"), "X-Service-Delivery", b"  ");
        assert_eq!(
            codes(&run("POST", &h, &report_body())),
            vec!["malformed-header"]
        );
        let h = set(
            &good_headers("status-report"),
            "X-Service-Delivery",
            b"\xff\xfe",
        );
        assert_eq!(
            codes(&run("POST", &h, &report_body())),
            vec!["malformed-header"]
        );
    }

    #[test]
    fn repeated_header_is_a_warning() {
        let mut h = good_headers("status-report");
        h.push(("X-Service-Delivery".into(), b"d-2".to_vec()));
        let v = run("POST", &h, &report_body());
        assert_eq!(codes(&v), vec!["repeated-header"]);
        // Two content types: which one a reader takes is anyone's guess.
        let mut h = good_headers("status-report");
        h.push(("Content-Type".into(), b"text/plain".to_vec()));
        let v = run("POST", &h, &report_body());
        assert_eq!(codes(&v), vec!["repeated-header"]);
        assert!(v.findings[0].message.contains("Content-Type"));
        assert_eq!(v.delivery.as_deref(), Some("d-1"));
    }

    #[test]
    fn unknown_event_value() {
        let v = run("POST", &good_headers("message-sent"), &report_body());
        assert_eq!(codes(&v), vec!["unknown-event"]);
        assert_eq!(v.event_raw.as_deref(), Some("message-sent"));
    }

    #[test]
    fn attempt_must_be_a_positive_integer() {
        for bad in [&b"0"[..], b"-1", b"one", b"1.5", b"+1", b"01"] {
            let h = set(
                &good_headers("status-report"),
                "X-Service-Delivery-Attempt",
                bad,
            );
            let v = run("POST", &h, &report_body());
            assert_eq!(codes(&v), vec!["malformed-attempt"], "{bad:?}");
            assert_eq!(v.attempt, None);
        }
        let h = set(
            &good_headers("status-report"),
            "X-Service-Delivery-Attempt",
            b"7",
        );
        assert_eq!(run("POST", &h, &report_body()).attempt, Some(7));
        // Too large for any retry schedule: said so, not "not a positive whole number".
        let h = set(
            &good_headers("status-report"),
            "X-Service-Delivery-Attempt",
            b"99999999999999999999",
        );
        let v = run("POST", &h, &report_body());
        assert_eq!(codes(&v), vec!["malformed-attempt"]);
        assert!(
            v.findings[0].message.contains("at most 195 attempts"),
            "{}",
            v.findings[0].message
        );
    }

    #[test]
    fn an_attempt_past_the_schedules_last_is_a_warning_and_kept() {
        for (n, finding) in [
            (&b"195"[..], None),
            (b"196", Some("attempt-beyond-schedule")),
        ] {
            let h = set(
                &good_headers("status-report"),
                "X-Service-Delivery-Attempt",
                n,
            );
            let v = run("POST", &h, &report_body());
            assert_eq!(codes(&v), finding.into_iter().collect::<Vec<_>>(), "{n:?}");
            assert!(v.attempt.is_some());
        }
        let h = set(
            &good_headers("status-report"),
            "X-Service-Delivery-Attempt",
            b"1000",
        );
        let v = run("POST", &h, &report_body());
        assert_eq!(v.attempt, Some(1000));
        assert_eq!(v.findings[0].severity, Severity::Warning);
        assert!(v.findings[0].message.contains("at most 195 attempts"));
    }

    #[test]
    fn content_type_must_be_json() {
        let h = set(
            &good_headers("status-report"),
            "Content-Type",
            b"text/plain",
        );
        assert_eq!(
            codes(&run("POST", &h, &report_body())),
            vec!["content-type"]
        );
        let h = set(
            &good_headers("status-report"),
            "Content-Type",
            b"Application/JSON; charset=utf-8",
        );
        assert_eq!(codes(&run("POST", &h, &report_body())), Vec::<&str>::new());
        let h = without(&good_headers("status-report"), "Content-Type");
        assert_eq!(
            codes(&run("POST", &h, &report_body())),
            vec!["content-type"]
        );
    }

    #[test]
    fn user_agent_other_than_the_invoker_is_a_warning() {
        let h = set(&good_headers("status-report"), "User-Agent", b"curl/8.0");
        let v = run("POST", &h, &report_body());
        assert_eq!(codes(&v), vec!["user-agent"]);
        assert_eq!(v.findings[0].severity, Severity::Warning);
    }

    #[test]
    fn method_other_than_post() {
        let v = run("GET", &good_headers("status-report"), b"");
        assert!(codes(&v).contains(&"method"));
        assert!(codes(&v).contains(&"empty-body"));
    }

    #[test]
    fn body_problems() {
        let h = good_headers("status-report");
        assert_eq!(codes(&run("POST", &h, b"")), vec!["empty-body"]);
        assert_eq!(
            codes(&run("POST", &h, b"\xff\x00[]")),
            vec!["body-not-utf8"]
        );
        let v = run("POST", &h, b"[{\"id\": ");
        assert_eq!(codes(&v), vec!["body-not-json"]);
        assert!(v.findings[0].message.contains("line 1"));
        // Said once, not twice.
        assert_eq!(
            v.findings[0].message.matches("line 1").count(),
            1,
            "{}",
            v.findings[0].message
        );
        let v = run("POST", &h, b"{\"id\":\"1\"}");
        assert_eq!(codes(&v), vec!["body-not-array"]);
        assert!(v.findings[0].message.contains("object"));
        assert_eq!(codes(&run("POST", &h, b"[1]")), vec!["element-not-object"]);
        // Well-formed, but not readable as data: said for what it is, with where.
        // Nested deep and cut short: what is wrong with it, where (not serde_json's "recursion
        // limit exceeded" at the 128th level, where it stopped reading).
        let cut = "[".repeat(200);
        let v = run("POST", &h, cut.as_bytes());
        assert_eq!(codes(&v), vec!["body-not-json"]);
        assert_eq!(
            v.findings[0].message,
            "The body is not valid JSON: it ends inside a list: a ] is missing (line 1, column 200)."
        );
        let v = run("POST", &h, format!("{cut}x").as_bytes());
        assert!(
            v.findings[0].message.starts_with(
                "The body is not valid JSON: a value was expected here: a number, \"text\" in double quotes"
            ) && v.findings[0].message.ends_with("(line 1, column 201)."),
            "{}",
            v.findings[0].message
        );
        // Each slip in plain words, where it is (not serde_json's "trailing characters",
        // "EOF", "expected ident").
        for (body, says) in [
            (
                "[1] x",
                "there is more after the end of its JSON value (an extra } or ], or a second value?) (line 1, column 5)",
            ),
            (
                "[nul]",
                "a value was expected here: true, false or null (in lower case) (line 1, column 5)",
            ),
            (
                "   ",
                "it ends where a value was expected (line 1, column 3)",
            ),
            (
                "[\"a\u{1b}b\"]",
                "a text holds the control character U+001B as it is: JSON takes it only as an escape, \\u001b (line 1, column 4)",
            ),
            (
                "[\n\"a\nb\"]",
                "a text holds a line break as it is: JSON takes it only as an escape, \\n (line 2, column 3)",
            ),
            (
                "[1,]",
                "a comma before a closing } or ] (JSON allows none there) (line 1, column 4)",
            ),
            (
                "[01]",
                "this is not a number JSON can read (line 1, column 3)",
            ),
        ] {
            let v = run("POST", &h, body.as_bytes());
            assert_eq!(codes(&v), vec!["body-not-json"], "{body:?}");
            assert_eq!(
                v.findings[0].message,
                format!("The body is not valid JSON: {says}."),
                "{body:?}"
            );
        }
        // serde_json reads 127 levels and refuses the 128th.
        let at = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(
            codes(&run("POST", &h, at(127).as_bytes())),
            vec!["element-not-object"]
        );
        assert_eq!(
            codes(&run("POST", &h, at(128).as_bytes())),
            vec!["body-json-unreadable"]
        );
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for (body, why) in [
            (deep.as_str(), "nested 128 levels deep or more"),
            ("[1e99999]", "too large for a 64-bit float"),
            ("[\"\\ud800\"]", "a lone UTF-16 surrogate"),
            ("[\"\\udc00x\"]", "a lone UTF-16 surrogate"),
        ] {
            let v = run("POST", &h, body.as_bytes());
            assert_eq!(codes(&v), vec!["body-json-unreadable"], "{body:.20}");
            let m = &v.findings[0].message;
            assert!(
                m.starts_with("The body is well-formed JSON, but it cannot be read as data: ")
                    && m.contains(why)
                    && m.contains("(at line 1 column "),
                "{m}"
            );
        }
    }

    #[test]
    fn an_empty_array_is_valid() {
        let v = run("POST", &good_headers("status-report"), b"[]");
        assert_eq!(v.findings, vec![]);
        assert_eq!(v.messages, Some(0));
        assert!(!v.registration_check, "it names a delivery");
    }

    #[test]
    fn missing_and_wrongly_typed_fields() {
        let mut m = serde_json::to_value(Message::sample_status_report("1")).unwrap();
        let o = m.as_object_mut().unwrap();
        o.remove("from");
        o.insert("protocolId".into(), Value::String("0".into()));
        o.insert("id".into(), serde_json::json!(12345));
        o.insert("status".into(), Value::Null);
        let body = serde_json::to_vec(&[m]).unwrap();
        let v = run("POST", &good_headers("status-report"), &body);
        let c = codes(&v);
        assert_eq!(c.iter().filter(|c| **c == "missing-field").count(), 1);
        assert_eq!(c.iter().filter(|c| **c == "wrong-type").count(), 3);
        assert!(
            v.findings.iter().any(|f| f
                .message
                .contains("\"status\" is null; it must be an object")),
            "{:?}",
            v.findings
        );
        assert!(v.findings.iter().any(|f| f.message.contains("\"from\"")));
        assert!(
            v.findings
                .iter()
                .any(|f| f.message.contains("\"protocolId\" is a string"))
        );
    }

    #[test]
    fn user_supplied_id_may_be_absent_but_nested_fields_are_checked() {
        let mut m = serde_json::to_value(Message::sample_status_report("1")).unwrap();
        let o = m.as_object_mut().unwrap();
        o.remove("userSuppliedId");
        o.insert("submission".into(), serde_json::json!({"id": "s"}));
        let body = serde_json::to_vec(&[m]).unwrap();
        let v = run("POST", &good_headers("status-report"), &body);
        assert_eq!(codes(&v), vec!["missing-field"]);
        assert!(v.findings[0].message.contains("submission has no \"date\""));
    }

    #[test]
    fn malformed_submission_date_is_a_warning() {
        let mut m = Message::sample_status_report("1");
        m.submission.date = "yesterday".into();
        let body = serde_json::to_vec(&[m]).unwrap();
        let v = run("POST", &good_headers("status-report"), &body);
        assert_eq!(codes(&v), vec!["malformed-date"]);
        // A valid timestamp, but not in UTC.
        let mut m = Message::sample_status_report("1");
        m.submission.date = "2024-01-01T00:00:00+02:00".into();
        let body = serde_json::to_vec(&[m]).unwrap();
        let v = run("POST", &good_headers("status-report"), &body);
        assert_eq!(codes(&v), vec!["malformed-date"]);
        assert!(
            v.findings[0].message.contains("UTC+02:00"),
            "{}",
            v.findings[0].message
        );
        // UTC written as an offset is UTC.
        for utc in [
            "2024-01-01T00:00:00Z",
            "2024-01-01T00:00:00+00:00",
            "2024-01-01T00:00:00.123Z",
        ] {
            let mut m = Message::sample_status_report("1");
            m.submission.date = utc.into();
            let body = serde_json::to_vec(&[m]).unwrap();
            assert!(
                run("POST", &good_headers("status-report"), &body)
                    .findings
                    .is_empty(),
                "{utc}"
            );
        }
    }

    #[test]
    fn event_must_match_the_message_type() {
        let body = serde_json::to_vec(&[Message::sample_incoming("1")]).unwrap();
        let v = run("POST", &good_headers("status-report"), &body);
        assert_eq!(codes(&v), vec!["event-mismatch"]);
        let v = run("POST", &good_headers("incoming-message"), &report_body());
        assert_eq!(codes(&v), vec!["event-mismatch"]);
    }

    #[test]
    fn status_id_must_be_type_dot_subtype() {
        let mut m = Message::sample_status_report("1");
        m.status.id = "DELIVERED".into();
        let body = serde_json::to_vec(&[m]).unwrap();
        let v = run("POST", &good_headers("status-report"), &body);
        assert_eq!(codes(&v), vec!["status-id"]);
        assert!(v.findings[0].message.contains("DELIVERED.null"));
    }

    #[test]
    fn the_registration_check_is_recognised() {
        let h = vec![
            ("Content-Type".to_owned(), b"application/json".to_vec()),
            ("User-Agent".to_owned(), b"Service Invoker".to_vec()),
        ];
        let v = run("POST", &h, b"[]");
        assert!(v.registration_check);
        assert_eq!(codes(&v), vec!["registration-check"]);
        // The User-Agent in another letter case is the invoker's still.
        let v = run("POST", &set(&h, "User-Agent", b"service invoker"), b"[]");
        assert!(v.registration_check);
        assert_eq!(codes(&v), vec!["registration-check"]);
        // Not from the invoker, or not empty: not the check.
        let h2 = set(&h, "User-Agent", b"curl");
        assert!(!run("POST", &h2, b"[]").registration_check);
        assert!(!run("POST", &h, &report_body()).registration_check);
        assert!(!run("PUT", &h, b"[]").registration_check);
        // Naming an event or an attempt without a delivery id: a delivery attempt with a header
        // missing, not the check (whose missing-header findings would be dropped).
        for (name, value) in [
            ("X-Service-Event", &b"status-report"[..]),
            ("X-Service-Event", b""),
            ("X-Service-Delivery-Attempt", b"1"),
            ("X-Service-Webhook-Id", b"234"),
        ] {
            let v = run("POST", &set(&h, name, value), b"[]");
            assert!(!v.registration_check, "{name}");
            assert!(
                codes(&v).contains(&"missing-header"),
                "{name}: {:?}",
                codes(&v)
            );
        }
    }

    /// Bodies the fast path reads and bodies it leaves to the general path: both paths must give
    /// the same count and the same findings, word for word.
    fn body_variants() -> Vec<(&'static str, String, bool)> {
        let good = serde_json::to_value(Message::sample_status_report("1")).unwrap();
        let with = |edit: &dyn Fn(&mut serde_json::Map<String, Value>)| {
            let mut m = good.clone();
            edit(m.as_object_mut().unwrap());
            serde_json::to_string(&[m]).unwrap()
        };
        let set = |k: &'static str, v: Value| {
            with(&move |m| {
                m.insert(k.into(), v.clone());
            })
        };
        let drop = |k: &'static str| {
            with(&move |m| {
                m.remove(k);
            })
        };
        let nested = |o: &'static str, k: &'static str, v: Option<Value>| {
            with(&move |m| {
                let inner = m.get_mut(o).and_then(Value::as_object_mut).unwrap();
                match &v {
                    Some(v) => inner.insert(k.into(), v.clone()),
                    None => inner.remove(k),
                };
            })
        };
        let incoming = serde_json::to_string(&[Message::sample_incoming("2")]).unwrap();
        let good_text = good.to_string();
        vec![
            (
                "a good report",
                serde_json::to_string(&[&good]).unwrap(),
                true,
            ),
            (
                "two good reports",
                format!("[{good_text}, {good_text}]"),
                true,
            ),
            ("an incoming message under status-report", incoming, true),
            ("no messages", "[]".into(), true),
            ("an unknown field", set("extra", Value::from(1)), true),
            (
                "escapes in strings",
                good_text
                    .replace("\"SENT\"", "\"SEN\\u0054\"")
                    .replace("\"DELIVERED\"", "\"DELIVERE\\u0044\""),
                true,
            )
                .map_text(|t| format!("[{t}]")),
            (
                "an escaped subtype",
                nested("status", "id", Some("DELIVERED.EXPIRED".into())),
                true,
            )
                .map_text(|t| t.replace("\"subtype\":null", "\"subtype\":\"\\u0045XPIRED\"")),
            (
                "a null numberOfParts",
                set("numberOfParts", Value::Null),
                true,
            ),
            ("a null creditCost", set("creditCost", Value::Null), true),
            (
                "a whole creditCost",
                set("creditCost", Value::from(2)),
                true,
            ),
            (
                "the largest protocolId",
                set("protocolId", Value::from(u64::MAX)),
                true,
            ),
            (
                "a negative messageClass",
                set("messageClass", Value::from(-1)),
                true,
            ),
            (
                "a null userSuppliedId",
                set("userSuppliedId", Value::Null),
                true,
            ),
            ("no userSuppliedId", drop("userSuppliedId"), true),
            (
                "a date not in UTC",
                nested(
                    "submission",
                    "date",
                    Some("2026-01-01T10:00:00+02:00".into()),
                ),
                true,
            ),
            (
                "a date that is not one",
                nested("submission", "date", Some("yesterday".into())),
                true,
            ),
            (
                "a status id that does not match",
                nested("status", "id", Some("DELIVERED".into())),
                true,
            ),
            (
                "a subtype",
                nested("status", "subtype", Some("EXPIRED".into())),
                true,
            ),
            (
                "a status id with a dot too many",
                nested("status", "id", Some("DELIVERED.null.x".into())),
                true,
            ),
            (
                "a status id without its dot",
                nested("status", "id", Some("DELIVEREDnull".into())),
                true,
            ),
            // Left to the general path:
            (
                "a key given twice",
                format!(
                    "[{}]",
                    good_text.replacen('{', "{\"type\":\"RECEIVED\",", 1)
                ),
                false,
            ),
            (
                "a float protocolId",
                set("protocolId", Value::from(1.5)),
                false,
            ),
            (
                "a protocolId past u64",
                format!(
                    "[{}]",
                    good_text.replace(
                        "\"protocolId\":0",
                        "\"protocolId\":100000000000000000000000"
                    )
                ),
                false,
            ),
            (
                "a string creditCost",
                set("creditCost", "0.05".into()),
                false,
            ),
            (
                "a number for userSuppliedId",
                set("userSuppliedId", Value::from(5)),
                false,
            ),
            ("no numberOfParts", drop("numberOfParts"), false),
            (
                "no relatedSentMessageId",
                drop("relatedSentMessageId"),
                false,
            ),
            ("no submission", drop("submission"), false),
            ("a string submission", set("submission", "x".into()), false),
            ("no subtype", nested("status", "subtype", None), false),
            (
                "a numeric subtype",
                nested("status", "subtype", Some(Value::from(3))),
                false,
            ),
            ("a null type", set("type", Value::Null), false),
            ("an element that is a number", "[1]".into(), false),
            (
                "a good message and a bad one",
                format!("[{good_text}, 7]"),
                false,
            ),
            ("an object", "{}".into(), false),
            ("a string", "\"x\"".into(), false),
            ("cut short", "[{\"id\":".into(), false),
            ("trailing text", "[] x".into(), false),
        ]
    }

    trait MapText {
        fn map_text(self, f: impl Fn(String) -> String) -> Self;
    }
    impl MapText for (&'static str, String, bool) {
        fn map_text(self, f: impl Fn(String) -> String) -> Self {
            (self.0, f(self.1), self.2)
        }
    }

    #[test]
    fn the_fast_path_finds_what_the_general_path_finds() {
        let event = Some(EventKind::StatusReport);
        let variants = body_variants();
        let distinct: std::collections::HashSet<&String> = variants.iter().map(|v| &v.1).collect();
        assert_eq!(distinct.len(), variants.len(), "every variant differs");
        for (what, text, fast) in variants {
            let taken = serde_json::from_str::<Vec<FastMessage<'_>>>(&text).is_ok();
            assert_eq!(taken, fast, "{what}: fast path taken? {text}");
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let na = check_body(&text, event, &mut a, FastPath::Try);
            let nb = check_body(&text, event, &mut b, FastPath::Skip);
            assert_eq!((na, &a), (nb, &b), "{what}: {text}");
        }
    }
}
