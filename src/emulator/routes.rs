//! The emulator's HTTP API: `/v1/webhooks`, `/v1/messages`, and `/v1/emulator/*` controls.

use super::{Credentials, Data, MAX_MESSAGES_PER_REQUEST, Shared, check_target, invoker};
use crate::api::model::{ErrorBody, InvokeOption, Webhook, WebhookEntry};
use crate::contract::{Message, TriggerScope};
use axum::Router;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

type Shr = State<Arc<Shared>>;

/// An API error: the documented body and its status.
pub struct ApiErr(pub ErrorBody);

impl IntoResponse for ApiErr {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut r = (status, axum::Json(self.0)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"emulator\""),
            );
        }
        r
    }
}

fn bad_request(detail: impl Into<String>) -> ApiErr {
    ApiErr(ErrorBody::new("bad-request", "Bad Request", 400, detail))
}

fn not_found(detail: impl Into<String>) -> ApiErr {
    ApiErr(ErrorBody::new("not-found", "Not Found", 404, detail))
}

pub fn router(shared: Arc<Shared>) -> Router {
    let api = Router::new()
        .route("/webhooks", get(list_webhooks).post(create_webhook))
        .route(
            "/webhooks/{id}",
            get(get_webhook).post(update_webhook).delete(delete_webhook),
        )
        .route("/messages", post(send_messages).get(list_messages))
        .route("/messages/{id}", get(get_message))
        .route("/emulator/incoming", post(inject))
        .route("/emulator/outbox", get(outbox))
        .route("/emulator/speed", post(set_speed))
        .layer(axum::extract::DefaultBodyLimit::max(BODY_LIMIT))
        .layer(middleware::from_fn_with_state(shared.clone(), auth));
    Router::new()
        .nest("/v1", api)
        .fallback(|uri: axum::http::Uri| async move {
            not_found(format!(
                "No such path: {}. The API has /v1/webhooks and /v1/messages",
                uri.path()
            ))
        })
        .method_not_allowed_fallback(|method: Method, uri: axum::http::Uri| async move {
            ApiErr(ErrorBody::new(
                "method-not-allowed",
                "Method Not Allowed",
                405,
                format!("{method} is not allowed on {}", uri.path()),
            ))
        })
        .with_state(shared)
}

fn credentials(headers: &HeaderMap) -> Option<Credentials> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let encoded = value
        .strip_prefix("Basic ")
        .or_else(|| value.strip_prefix("basic "))?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    let text = String::from_utf8(decoded).ok()?;
    let (user, password) = text.split_once(':')?;
    Some(Credentials {
        user: user.to_owned(),
        password: password.to_owned(),
    })
}

/// HTTP Basic: none -> 401, wrong -> 401, the read-only principal changing anything -> 403.
async fn auth(State(s): Shr, req: Request, next: Next) -> Response {
    let Some(given) = credentials(req.headers()) else {
        if req.headers().contains_key(header::AUTHORIZATION) {
            // Something was sent, but not Basic credentials that can be read.
            return ApiErr(ErrorBody::new(
                "unauthorized",
                "Unauthorized",
                401,
                "The credentials could not be verified: send HTTP Basic authentication (username and password, or token id and secret).",
            ))
            .into_response();
        }
        return ApiErr(ErrorBody::new(
            "unauthorized",
            "Unauthorized",
            401,
            "No credentials were provided: send HTTP Basic authentication (username and password, or token id and secret).",
        ))
        .into_response();
    };
    if given == s.config.account {
        return next.run(req).await;
    }
    if s.config.read_only.as_ref() == Some(&given) {
        if req.method() == Method::GET {
            return next.run(req).await;
        }
        return ApiErr(ErrorBody::new(
            "forbidden",
            "Forbidden",
            403,
            format!(
                "The principal '{}' is not allowed to change this resource.",
                given.user
            ),
        ))
        .into_response();
    }
    ApiErr(ErrorBody::new(
        "unauthorized",
        "Unauthorized",
        401,
        "The credentials could not be verified.",
    ))
    .into_response()
}

/// A request body, or why it could not be read (too large, cut short).
type Body = Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>;

/// The largest request body the API reads: 30,000 messages in one call fit several times over.
pub const BODY_LIMIT: usize = 16 << 20;

/// Parse a JSON body ourselves so every mistake gets the documented error body, a body too
/// large to read included.
fn json_body<T: serde::de::DeserializeOwned>(body: Body) -> Result<T, ApiErr> {
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiErr(ErrorBody::new(
                "payload-too-large",
                "Payload Too Large",
                413,
                format!(
                    "The request body is larger than {} MiB: send the messages in smaller calls.",
                    BODY_LIMIT >> 20
                ),
            ))
        } else {
            bad_request(format!(
                "The request body could not be read: {}",
                rejection.body_text()
            ))
        }
    })?;
    serde_json::from_slice(&body).map_err(|e| bad_request(body_error(&e)))
}

/// Why a request body was not taken, in the API's words rather than the parser's types.
fn body_error(e: &serde_json::Error) -> String {
    use serde_json::error::Category;
    match e.classify() {
        // Well-formed, perhaps, but deeper than the reader goes: not "not JSON".
        Category::Syntax if e.to_string().starts_with("recursion limit exceeded") => format!(
            "The request body is nested 128 levels deep or more (line {}, column {}): no request of this API nests that far.",
            e.line(),
            e.column()
        ),
        Category::Syntax | Category::Eof => format!(
            "The request body is not JSON (line {}, column {}).",
            e.line(),
            e.column()
        ),
        _ => {
            let said = e.to_string();
            let plain = if said.contains("struct WebhookEntry") {
                "it must be a webhook entry: an object with name, url and triggerScope".to_owned()
            } else {
                crate::text::replace_each(&said, &[("expected struct ", "expected ")])
            };
            format!("The request body is not valid: {plain}.")
        }
    }
}

async fn list_webhooks(State(s): Shr) -> axum::Json<Vec<Webhook>> {
    axum::Json(s.data().webhooks.values().cloned().collect())
}

fn parse_id(id: &str) -> Result<u64, ApiErr> {
    id.parse()
        .map_err(|_| not_found(format!("Webhook with id '{id}' does not exist")))
}

async fn get_webhook(State(s): Shr, Path(id): Path<String>) -> Result<axum::Json<Webhook>, ApiErr> {
    let n = parse_id(&id)?;
    s.data()
        .webhooks
        .get(&n)
        .cloned()
        .map(axum::Json)
        .ok_or_else(|| not_found(format!("Webhook with id '{id}' does not exist")))
}

/// Names are unique per account: `name` is free for the webhook `id` (`None`: a new one).
/// Spaces around a name do not make it another one.
/// Asked again, under the same lock as the change, once a registration check is over (two
/// creates with one name may both have passed the first look while their checks ran).
fn name_free(d: &Data, name: &str, id: Option<u64>) -> Result<(), ApiErr> {
    if d.webhooks
        .values()
        .any(|w| w.name.trim() == name.trim() && Some(w.id) != id)
    {
        return Err(bad_request(format!(
            "A webhook named '{name}' already exists; names are unique per account"
        )));
    }
    Ok(())
}

/// Validate an entry into a webhook with `id`; `None` id means create.
fn validate_entry(s: &Shared, entry: &WebhookEntry, id: Option<u64>) -> Result<Webhook, ApiErr> {
    if entry.name.trim().is_empty() {
        return Err(bad_request("name must not be empty"));
    }
    name_free(&s.data(), &entry.name, id)?;
    let scope = TriggerScope::parse(&entry.trigger_scope).ok_or_else(|| {
        bad_request(format!(
            "triggerScope must be SENT or RECEIVED (case-sensitive), not '{}'",
            entry.trigger_scope
        ))
    })?;
    // A URI has neither (RFC 3986); the URL parser would quietly drop or encode them.
    if entry.url.chars().any(char::is_whitespace) {
        return Err(bad_request(format!(
            "url '{}' is not a valid URI: it contains white space",
            entry.url.escape_debug()
        )));
    }
    if entry.url.chars().any(char::is_control) {
        return Err(bad_request(format!(
            "url '{}' is not a valid URI: it contains a control character",
            entry.url.escape_debug()
        )));
    }
    let url = reqwest::Url::parse(&entry.url)
        .map_err(|e| bad_request(format!("url '{}' is not a valid URI: {e}", entry.url)))?;
    check_target(&url, s.allow_remote()).map_err(bad_request)?;
    if let Some(contact) = entry
        .contact_email_address
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty() && !crate::text::is_email(c))
    {
        return Err(bad_request(format!(
            "contactEmailAddress '{contact}' is not an e-mail address"
        )));
    }
    Ok(Webhook {
        id: id.unwrap_or(0),
        name: entry.name.clone(),
        url: entry.url.clone(),
        trigger_scope: scope,
        active: entry.active.unwrap_or(true),
        contact_email_address: entry
            .contact_email_address
            .clone()
            .filter(|e| !e.trim().is_empty()),
        on_web_app: Some(entry.on_web_app.unwrap_or(true)),
        invoke_option: Some(entry.invoke_option.unwrap_or(InvokeOption::One)),
    })
}

/// The body of create and update: a webhook entry, which is an object (serde would read a list
/// as the entry's fields in order, and `[1, 2]` was "expected a string").
fn entry_body(body: Body) -> Result<WebhookEntry, ApiErr> {
    let value: Value = json_body(body)?;
    if !value.is_object() {
        let kind = match value {
            Value::Array(_) => "a list",
            Value::String(_) => "a string",
            Value::Number(_) => "a number",
            Value::Bool(_) => "a boolean",
            _ => "null",
        };
        return Err(bad_request(format!(
            "The request body is not valid: it must be a webhook entry: an object with name, url and triggerScope, not {kind}."
        )));
    }
    // The field it failed at named, in a reader's words: `name: the number `5`, where a
    // string is expected`.
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let said = crate::api::plain_serde(&e.inner().to_string());
        let said = crate::text::replace_each(
            &said,
            &[
                (", expected a string", ", where text is expected"),
                (", expected a boolean", ", where true or false is expected"),
            ],
        );
        bad_request(if path == "." {
            format!("The request body is not valid: {said}.")
        } else {
            format!("The request body is not valid: {path}: {said}.")
        })
    })
}

async fn create_webhook(State(s): Shr, body: Body) -> Result<axum::Json<Webhook>, ApiErr> {
    let entry = entry_body(body)?;
    let mut w = validate_entry(&s, &entry, None)?;
    if w.active {
        invoker::registration_check(&s, &w.url)
            .await
            .map_err(bad_request)?;
    }
    {
        let mut d = s.data();
        name_free(&d, &w.name, None)?;
        // Never below the clock's id (see `webhook_id_at`): a run started after this one
        // stops begins past it.
        w.id = d.next_webhook.max(super::webhook_id_at(chrono::Utc::now()));
        d.next_webhook = w.id + 1;
        d.given_webhooks.insert(w.id);
        d.webhooks.insert(w.id, w.clone());
    }
    s.log(format!(
        "webhook {} \"{}\" created for {} ({})",
        w.id,
        w.name,
        w.url,
        w.trigger_scope.as_str()
    ));
    Ok(axum::Json(w))
}

async fn update_webhook(
    State(s): Shr,
    Path(id): Path<String>,
    body: Body,
) -> Result<axum::Json<Webhook>, ApiErr> {
    let n = parse_id(&id)?;
    if !s.data().webhooks.contains_key(&n) {
        return Err(not_found(format!("Webhook with id '{id}' does not exist")));
    }
    let entry = entry_body(body)?;
    let w = validate_entry(&s, &entry, Some(n))?;
    if w.active {
        invoker::registration_check(&s, &w.url)
            .await
            .map_err(bad_request)?;
    }
    {
        // Deleted while its check ran: it stays deleted.
        let mut d = s.data();
        if !d.webhooks.contains_key(&n) {
            return Err(not_found(format!("Webhook with id '{id}' does not exist")));
        }
        name_free(&d, &w.name, Some(n))?;
        d.webhooks.insert(n, w.clone());
    }
    s.log(format!(
        "webhook {n} \"{}\" updated (active: {})",
        w.name, w.active
    ));
    Ok(axum::Json(w))
}

async fn delete_webhook(State(s): Shr, Path(id): Path<String>) -> Result<StatusCode, ApiErr> {
    let n = parse_id(&id)?;
    match s.data().webhooks.remove(&n) {
        Some(_) => {}
        None => return Err(not_found(format!("Webhook with id '{id}' does not exist"))),
    }
    s.log(format!("webhook {n} deleted"));
    Ok(StatusCode::OK)
}

/// One recipient, in any of the forms the service accepts.
fn recipients(to: &Value) -> Result<Vec<String>, ApiErr> {
    let one = |v: &Value| -> Result<String, ApiErr> {
        match v {
            Value::String(s) => Ok(s.clone()),
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("INTERNATIONAL") | None => o
                    .get("address")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
                    .ok_or_else(|| bad_request("a recipient object needs an address")),
                Some("GROUP") => Err(ApiErr(ErrorBody::new(
                    "no-such-group",
                    "Bad Request",
                    400,
                    format!(
                        "Recipient group '{}' was specified but no such group was found",
                        o.get("name")
                            .or_else(|| o.get("address"))
                            .and_then(Value::as_str)
                            .unwrap_or("?")
                    ),
                ))),
                Some(other) => Err(bad_request(format!("unknown recipient type '{other}'"))),
            },
            _ => Err(bad_request("a recipient is a number string or an object")),
        }
    };
    let list = match to {
        Value::Array(items) => items.iter().map(one).collect::<Result<Vec<_>, _>>()?,
        other => vec![one(other)?],
    };
    for n in &list {
        check_number(n)?;
    }
    if list.is_empty() {
        return Err(bad_request("to must name at least one recipient"));
    }
    Ok(list)
}

fn check_number(n: &str) -> Result<(), ApiErr> {
    super::check_phone_number(n).map_err(bad_request)
}

/// The query parameters of POST /messages (service-api.md).
#[derive(Deserialize)]
struct SendQuery {
    #[serde(rename = "deduplication-id")]
    deduplication_id: Option<String>,
    #[serde(rename = "auto-unicode")]
    _auto_unicode: Option<bool>,
    #[serde(rename = "schedule-date")]
    schedule_date: Option<String>,
    #[serde(rename = "schedule-description")]
    _schedule_description: Option<String>,
}

/// A field that, when given, must be one of `allowed` (null counts as not given).
fn one_of<'a>(e: &'a Value, field: &str, allowed: &[&str]) -> Result<Option<&'a str>, ApiErr> {
    match e.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(v)) if allowed.contains(&v.as_str()) => Ok(Some(v.as_str())),
        Some(other) => Err(bad_request(format!(
            "{field} must be {}, not {other}",
            allowed.join(", ")
        ))),
    }
}

/// A field that, when given, must be a whole number of at least `min`.
/// An optional whole-number field of at least `min`: its value, if given.
fn whole_number(e: &Value, field: &str, min: i64) -> Result<Option<i64>, ApiErr> {
    match e.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(v) if v.as_i64().is_some_and(|n| n >= min) => Ok(v.as_i64()),
        Some(other) => Err(bad_request(format!(
            "{field} must be a whole number of at least {min}, not {other}"
        ))),
    }
}

/// The sender: a number string, or `{type, address}`; the emulator's own number when absent.
fn sender(e: &Value) -> Result<String, ApiErr> {
    match e.get("from") {
        None | Some(Value::Null) => Ok("+27000000000".to_owned()),
        Some(Value::String(f)) => Ok(f.clone()),
        Some(Value::Object(o)) => o
            .get("address")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| {
                bad_request(
                    "from needs an address: {\"type\": \"INTERNATIONAL\", \"address\": \"+27...\"}",
                )
            }),
        Some(other) => Err(bad_request(format!(
            "from is a number string or an object with an address, not {other}"
        ))),
    }
}

async fn send_messages(
    State(s): Shr,
    q: Result<Query<SendQuery>, axum::extract::rejection::QueryRejection>,
    body: Body,
) -> Result<Response, ApiErr> {
    let Query(q) = q.map_err(query_error)?;
    let scheduled = match &q.schedule_date {
        None => None,
        Some(date) => Some(
            chrono::DateTime::parse_from_rfc3339(date)
                .map(|d| d.with_timezone(&chrono::Utc))
                .map_err(|_| {
                    bad_request(format!(
                        "schedule-date '{date}' is not an ISO 8601 date and time with its time zone (e.g. 2026-11-22T14:00:00Z or 2026-11-22T16:00:00+02:00): without one, the time is ambiguous"
                    ))
                })?,
        ),
    };
    let value: Value = json_body(body)?;
    let entries = match value {
        Value::Array(items) => items,
        obj @ Value::Object(_) => vec![obj],
        _ => {
            return Err(bad_request(
                "the body is one submission entry or an array of them",
            ));
        }
    };
    let mut planned = Vec::new();
    for e in &entries {
        let to = e.get("to").ok_or_else(|| bad_request("to is required"))?;
        let body = e
            .get("body")
            .and_then(Value::as_str)
            .ok_or_else(|| bad_request("body is required and must be text"))?;
        let usid = match e.get("userSuppliedId") {
            None | Some(Value::Null) => None,
            Some(Value::String(u)) => Some(u.as_str()),
            Some(other) => {
                return Err(bad_request(format!(
                    "userSuppliedId must be text of at most 20 characters, not {other}"
                )));
            }
        };
        if usid.is_some_and(|u| u.chars().count() > 20) {
            return Err(bad_request("userSuppliedId is at most 20 characters"));
        }
        let from = sender(e)?;
        one_of(e, "routingGroup", &["ECONOMY", "STANDARD", "PREMIUM"])?;
        let encoding = match e.get("encoding") {
            None | Some(Value::Null) => "TEXT",
            Some(Value::String(enc)) if ENCODINGS.contains(&enc.as_str()) => enc.as_str(),
            Some(other) => {
                return Err(bad_request(format!(
                    "encoding must be TEXT, UNICODE or BINARY, not {other}"
                )));
            }
        };
        // A body that needs more parts than the sender allows is refused, not cut or charged
        // for parts it said it would not pay for (the API does not say what the service does;
        // refusing is the answer that cannot surprise).
        if let Some(most) = whole_number(e, "longMessageMaxParts", 1)?
            && i64::from(parts(body, encoding)) > most
        {
            return Err(bad_request(format!(
                "the body needs {} parts, more than longMessageMaxParts {most}",
                parts(body, encoding)
            )));
        }
        let message_class = whole_number(e, "messageClass", 0)?.unwrap_or(2);
        let protocol_id = whole_number(e, "protocolId", 0)?.unwrap_or(0);
        let reports = one_of(e, "deliveryReports", &["ALL", "ERRORS", "NONE"])?
            .unwrap_or("ALL")
            .to_owned();
        for number in recipients(to)? {
            planned.push((
                from.clone(),
                number,
                body.to_owned(),
                usid.map(str::to_owned),
                reports.clone(),
                encoding,
                message_class,
                protocol_id,
            ));
        }
    }
    if planned.len() > MAX_MESSAGES_PER_REQUEST {
        return Err(ApiErr(ErrorBody::new(
            "too-many-messages",
            "Bad Request",
            400,
            format!(
                "The request contained {} messages; at most {MAX_MESSAGES_PER_REQUEST} are allowed per request",
                planned.len()
            ),
        )));
    }
    let cost: f64 = planned
        .iter()
        .filter(|(_, to, ..)| to.trim_start_matches('+') != crate::contract::TEST_NUMBER)
        .map(|(_, _, body, _, _, encoding, ..)| parts(body, encoding) as f64)
        .sum();
    let dedup = q
        .deduplication_id
        .as_deref()
        .map(str::trim)
        .filter(|id| !id.is_empty());
    {
        let mut d = s.data();
        // Sent before under this deduplication id: the messages it made, nothing sent again
        // and nothing charged.
        if let Some(ids) = dedup.and_then(|id| d.deduplication.get(id)) {
            let earlier: Vec<Message> = ids
                .iter()
                .filter_map(|k| d.messages.get(k).cloned())
                .collect();
            drop(d);
            s.log(format!(
                "deduplication-id {} seen before: {} message(s) not sent again",
                dedup.unwrap_or_default(),
                earlier.len()
            ));
            return Ok((StatusCode::CREATED, axum::Json(earlier)).into_response());
        }
        if cost > d.credits {
            return Err(ApiErr(ErrorBody::new(
                "insufficient-credits",
                "Forbidden",
                403,
                format!(
                    "Not enough credits: the messages cost {cost}, the account has {}",
                    d.credits
                ),
            )));
        }
        d.credits -= cost;
        // Taken now, under the same lock as the check and the charge: a second call with this
        // id arriving meanwhile sends and pays nothing (it gets the messages made so far).
        if let Some(id) = dedup {
            d.deduplication.insert(id.to_owned(), Vec::new());
        }
    }
    let mut out = Vec::new();
    for (from, to, body, usid, reports, encoding, message_class, protocol_id) in planned {
        out.push(invoker::submit(
            &s,
            invoker::Outgoing {
                from: &from,
                to: &to,
                body: &body,
                user_supplied_id: usid,
                reports: &reports,
                encoding,
                message_class,
                protocol_id,
                scheduled,
            },
        ));
    }
    if let Some(id) = dedup {
        let keys = out
            .iter()
            .filter_map(|m| m.id.parse::<u128>().ok())
            .collect();
        s.data().deduplication.insert(id.to_owned(), keys);
    }
    Ok((StatusCode::CREATED, axum::Json(out)).into_response())
}

/// The encodings a submission may name (service-api.md).
const ENCODINGS: [&str; 3] = ["TEXT", "UNICODE", "BINARY"];

/// The GSM 03.38 default alphabet: one 7-bit character each.
const GSM7_BASIC: &str = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u{1b}ÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?\
¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà";
/// Its extension table: two 7-bit characters each (an escape, then the character).
const GSM7_EXTENSION: &str = "\u{c}^{}\\[~]|€";

/// Parts of a message as SMS counts them: a `TEXT` body in the GSM 7-bit alphabet takes 160
/// characters in one part and 153 per part when split (an extension character such as `€` or
/// `{` counts twice, and is never split across two parts); a body with any other character, or
/// `UNICODE`, is sent as UCS-2: 70 UTF-16 units, 67 per part (an emoji is two, never split);
/// `BINARY` counts the body's bytes: 140, 134 per part.
pub fn parts(body: &str, encoding: &str) -> u32 {
    // The size of each unit that may not be split, and the room of one part and of each part
    // of a split message.
    let (units, single, split): (Vec<usize>, usize, usize) = if encoding == "BINARY" {
        (vec![1; body.len()], 140, 134)
    } else {
        let gsm: Option<Vec<usize>> = (encoding != "UNICODE")
            .then(|| {
                body.chars()
                    .map(|c| {
                        if GSM7_BASIC.contains(c) {
                            Some(1)
                        } else if GSM7_EXTENSION.contains(c) {
                            Some(2)
                        } else {
                            None
                        }
                    })
                    .collect()
            })
            .flatten();
        match gsm {
            Some(septets) => (septets, 160, 153),
            None => (body.chars().map(char::len_utf16).collect(), 70, 67),
        }
    };
    if units.iter().sum::<usize>() <= single {
        return 1;
    }
    let (mut count, mut room) = (1u32, split);
    for u in units {
        if u > room {
            count += 1;
            room = split;
        }
        room -= u;
    }
    count
}

#[derive(Deserialize)]
struct ListQuery {
    limit: Option<usize>,
    #[serde(rename = "sortOrder")]
    sort_order: Option<String>,
    filter: Option<String>,
}

fn query_error(e: axum::extract::rejection::QueryRejection) -> ApiErr {
    let said = e.body_text();
    let said = said.trim_start_matches("Failed to deserialize query string: ");
    bad_request(format!(
        "The query string is not valid: {}",
        crate::text::replace_each(
            said,
            &[
                (
                    "invalid digit found in string",
                    "not a whole number 0 or more"
                ),
                (
                    "number too large to fit in target type",
                    "too large a number"
                ),
                (
                    "provided string was not `true` or `false`",
                    "it takes true or false"
                ),
            ]
        )
    ))
}

/// One clause of the List Messages filter: `field op value`.
fn clause_matches(m: &Message, clause: &str) -> Result<bool, ApiErr> {
    let ops = ["<=", ">=", "<", ">", "="];
    let (pos, op) = ops
        .iter()
        .filter_map(|op| clause.find(op).map(|p| (p, *op)))
        .min_by_key(|(p, op)| (*p, std::cmp::Reverse(op.len())))
        .ok_or_else(|| bad_request(format!("filter clause '{clause}' has no operator")))?;
    let (field, value) = (clause[..pos].trim(), clause[pos + op.len()..].trim());
    // What each field takes (service-api.md): `id` compares, `submission.date` compares as a
    // time, the others match exactly.
    let ops: &[&str] = match field {
        "id" => &["=", "<", ">"],
        "submission.date" => &["=", "<", "<=", ">", ">="],
        _ => &["="],
    };
    if !ops.contains(&op) {
        return Err(bad_request(format!(
            "filter on '{field}' takes {}, not '{op}'",
            ops.join(" ")
        )));
    }
    // The enumerations of service-api.md, in their letter case: another value matches nothing
    // ever, which is a mistake to say, not an empty list.
    let enumeration: &[&str] = match field {
        "type" => &["SENT", "RECEIVED"],
        "status.type" => &[
            "ACCEPTED",
            "SCHEDULED",
            "SENT",
            "DELIVERED",
            "UNKNOWN",
            "FAILED",
        ],
        _ => &[],
    };
    if !enumeration.is_empty() && !enumeration.contains(&value) {
        return Err(bad_request(format!(
            "filter on '{field}' takes one of {} (case-sensitive), not '{value}'",
            enumeration.join(", ")
        )));
    }
    if field == "id" && (value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit())) {
        return Err(bad_request(format!(
            "filter on 'id' compares with a message id (digits), not '{value}'"
        )));
    }
    if field == "submission.date" {
        let wanted = chrono::DateTime::parse_from_rfc3339(value).map_err(|_| {
            bad_request(format!(
                "filter on 'submission.date' takes an ISO 8601 date and time (e.g. 2026-11-22T14:00:00Z), not '{value}'"
            ))
        })?;
        let ord = chrono::DateTime::parse_from_rfc3339(&m.submission.date)
            .map(|d| d.cmp(&wanted))
            .unwrap_or(std::cmp::Ordering::Less);
        return Ok(compare(op, ord));
    }
    let actual = match field {
        "id" => m.id.clone(),
        "type" => m.kind.clone(),
        "submission.id" => m.submission.id.clone(),
        "status.type" => m.status.kind.clone(),
        "status.id" => m.status.id.clone(),
        "submission.date" => m.submission.date.clone(),
        "userSuppliedId" => m.user_supplied_id.clone().unwrap_or_default(),
        other => return Err(bad_request(format!("cannot filter on '{other}'"))),
    };
    let ord = if field == "id" {
        // Ids are big numbers as text: compare by length, then digits.
        (actual.len(), actual.as_str()).cmp(&(value.len(), value))
    } else {
        actual.as_str().cmp(value)
    };
    Ok(compare(op, ord))
}

fn compare(op: &str, ord: std::cmp::Ordering) -> bool {
    match op {
        "=" => ord.is_eq(),
        "<" => ord.is_lt(),
        ">" => ord.is_gt(),
        "<=" => ord.is_le(),
        _ => ord.is_ge(),
    }
}

async fn list_messages(
    State(s): Shr,
    q: Result<Query<ListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<axum::Json<Vec<Message>>, ApiErr> {
    let Query(q) = q.map_err(query_error)?;
    let clauses: Vec<String> = q
        .filter
        .as_deref()
        .map(|f| {
            f.split('&')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let ascending = match q.sort_order.as_deref() {
        None | Some("DESCENDING") => false,
        Some("ASCENDING") => true,
        Some(other) => {
            return Err(bad_request(format!(
                "sortOrder must be ASCENDING or DESCENDING, not '{other}'"
            )));
        }
    };
    let limit = q.limit.unwrap_or(1000);
    let d = s.data();
    let mut out = Vec::new();
    let iter: Box<dyn Iterator<Item = &Message>> = if ascending {
        Box::new(d.messages.values())
    } else {
        Box::new(d.messages.values().rev())
    };
    for m in iter {
        if out.len() >= limit {
            break;
        }
        let mut keep = true;
        for c in &clauses {
            keep &= clause_matches(m, c)?;
        }
        if keep {
            out.push(m.clone());
        }
    }
    Ok(axum::Json(out))
}

async fn get_message(State(s): Shr, Path(id): Path<String>) -> Result<axum::Json<Message>, ApiErr> {
    let key: Option<u128> = id.parse().ok();
    key.and_then(|k| s.data().messages.get(&k).cloned())
        .map(axum::Json)
        .ok_or_else(|| not_found(format!("Message with id '{id}' does not exist")))
}

#[derive(Deserialize)]
struct Inject {
    from: Option<String>,
    to: Option<String>,
    body: String,
}

async fn inject(State(s): Shr, body: Body) -> Result<(StatusCode, axum::Json<Message>), ApiErr> {
    let i: Inject = json_body(body)?;
    // A handset's number to your number, checked as a send's recipients are.
    let from = i.from.as_deref().unwrap_or("+27007654321");
    let to = i.to.as_deref().unwrap_or("+27001234567");
    check_number(from)?;
    check_number(to)?;
    let m = invoker::receive(&s, from, to, &i.body);
    Ok((StatusCode::CREATED, axum::Json(m)))
}

async fn outbox(State(s): Shr) -> axum::Json<Vec<super::Mail>> {
    axum::Json(s.data().outbox.clone())
}

#[derive(Deserialize)]
struct Speed {
    speed: f64,
}

async fn set_speed(State(s): Shr, body: Body) -> Result<StatusCode, ApiErr> {
    let sp: Speed = json_body(body)?;
    if !(sp.speed.is_finite() && sp.speed > 0.0) {
        return Err(bad_request("speed must be a positive number"));
    }
    s.clock.set_speed(sp.speed);
    Ok(StatusCode::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_body_that_cannot_be_read_is_said_in_words() {
        let said = |body: &str| {
            let e = serde_json::from_str::<serde_json::Value>(body).unwrap_err();
            body_error(&e)
        };
        assert_eq!(
            said("[1,"),
            "The request body is not JSON (line 1, column 3)."
        );
        // Well formed, only deeper than serde_json reads.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let s = said(&deep);
        assert!(
            s.starts_with("The request body is nested 128 levels deep or more (line 1, column 1"),
            "{s}"
        );
    }

    #[test]
    fn a_query_that_cannot_be_read_is_said_in_words() {
        let detail = |q: &str| {
            let uri: axum::http::Uri = format!("/v1/messages?{q}").parse().unwrap();
            let Err(e) = Query::<ListQuery>::try_from_uri(&uri) else {
                panic!("{q} was read")
            };
            query_error(e).0.detail.unwrap_or_default()
        };
        assert_eq!(
            detail("limit=99999999999999999999"),
            "The query string is not valid: limit: too large a number"
        );
        assert_eq!(
            detail("limit=-1"),
            "The query string is not valid: limit: not a whole number 0 or more"
        );
    }

    #[test]
    fn parts_of_a_message() {
        let text = |b: &str| parts(b, "TEXT");
        assert_eq!(text(""), 1);
        assert_eq!(text("hi"), 1);
        assert_eq!(text(&"x".repeat(160)), 1);
        assert_eq!(text(&"x".repeat(161)), 2);
        assert_eq!(text(&"x".repeat(306)), 2);
        assert_eq!(text(&"x".repeat(307)), 3);
        // The whole GSM alphabet is one septet a character; its extension two.
        assert_eq!(GSM7_BASIC.chars().count(), 128);
        assert_eq!(text(&"é".repeat(160)), 1);
        assert_eq!(text(&"€".repeat(80)), 1);
        assert_eq!(text(&"€".repeat(81)), 2);
        // 152 septets, then a two-septet character that does not fit in the first part.
        assert_eq!(text(&format!("{}{}", "x".repeat(152), "€".repeat(5))), 2);
        assert_eq!(text(&format!("{}€{}", "x".repeat(152), "x".repeat(153))), 3);
        // One character outside the alphabet makes the message UCS-2.
        assert_eq!(text(&"x".repeat(70)), 1);
        assert_eq!(text(&format!("{}ç", "x".repeat(69))), 1);
        assert_eq!(text(&format!("{}ç", "x".repeat(70))), 2);
        assert_eq!(text(&"ç".repeat(134)), 2);
        assert_eq!(text(&"ç".repeat(135)), 3);
        // An emoji is two UTF-16 units, never split.
        assert_eq!(text(&"😀".repeat(35)), 1);
        assert_eq!(text(&"😀".repeat(36)), 2);
        // 134 units would fill two parts exactly, but the emoji at 67-68 moves to the second.
        assert_eq!(text(&format!("{}😀{}", "x".repeat(66), "x".repeat(66))), 3);
        // UNICODE asked for: UCS-2 whatever the characters.
        assert_eq!(parts(&"x".repeat(70), "UNICODE"), 1);
        assert_eq!(parts(&"x".repeat(71), "UNICODE"), 2);
        // BINARY: bytes.
        assert_eq!(parts(&"x".repeat(140), "BINARY"), 1);
        assert_eq!(parts(&"x".repeat(141), "BINARY"), 2);
        assert_eq!(parts(&"x".repeat(269), "BINARY"), 3);
    }

    #[test]
    fn recipients_in_every_form() {
        let r = |v: Value| recipients(&v).map_err(|e| e.0.detail.unwrap_or_default());
        assert_eq!(r(serde_json::json!("+2700")), Ok(vec!["+2700".to_owned()]));
        assert_eq!(r(serde_json::json!(["1", "2"])).unwrap().len(), 2);
        assert_eq!(
            r(serde_json::json!([{"type": "INTERNATIONAL", "address": "+27001234567"}])),
            Ok(vec!["+27001234567".to_owned()])
        );
        assert!(
            r(serde_json::json!([{"type": "GROUP", "name": "staff"}]))
                .unwrap_err()
                .contains("no such group")
        );
        assert!(r(serde_json::json!("abc")).is_err());
        assert!(r(serde_json::json!("++1")).is_err(), "one plus at most");
        // A group given by its address is named by it.
        assert!(
            r(serde_json::json!([{"type": "GROUP", "address": "staff"}]))
                .unwrap_err()
                .contains("'staff'")
        );
    }
}
