//! The webhook contract of the SMS service (shared/contract.md) as pure code: no I/O.
//!
//! Everything else in Hookscope asks this module: header names (with the brand word as a
//! parameter), event kinds, the message object, the outcome of a response code, the retry
//! schedule and the findings of a validation. Nothing else re-encodes a rule of the contract.

mod message;
mod outcome;
mod schedule;
pub mod slowdown;
mod validate;

pub use message::{Message, MessageStatus, Submission};
pub use outcome::{Outcome, outcome_of};
pub use schedule::{
    Attempt, Plan, RETRY_DELAYS, RETRY_WINDOW, RULE as SCHEDULE_RULE, RetryAfter, RetryDates,
    STEADY_DELAY, Schedule, imf_fixdate, max_attempts, parse_retry_after,
};
pub use validate::{FastPath, Finding, HeaderPair, Severity, Validation, check_body, validate};

use serde::{Deserialize, Serialize};

/// The word the real service puts in its header names and User-Agent.
///
/// contract.md uses the neutral word `Service`; the real service uses its brand, so the word is a
/// setting. `Brand::default()` is `Service`. The names are built once: the receiver asks for them
/// on every call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub struct Brand {
    word: String,
    event: String,
    delivery: String,
    attempt: String,
    webhook_id: String,
    user_agent: String,
}

impl Default for Brand {
    fn default() -> Self {
        Brand::build("Service")
    }
}

impl From<String> for Brand {
    fn from(word: String) -> Self {
        Brand::new(&word)
    }
}

impl From<Brand> for String {
    fn from(b: Brand) -> Self {
        b.word
    }
}

impl Brand {
    /// Whether `word` can stand in the header names: one token of ASCII letters, digits, `-`
    /// or `_`.
    pub fn is_word(word: &str) -> bool {
        !word.is_empty()
            && word
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    }

    /// A brand word; an empty or non-token word falls back to the default `Service`.
    pub fn new(word: &str) -> Self {
        let word = word.trim();
        if Brand::is_word(word) {
            Brand::build(word)
        } else {
            Brand::default()
        }
    }

    fn build(word: &str) -> Self {
        Brand {
            word: word.to_owned(),
            event: format!("X-{word}-Event"),
            delivery: format!("X-{word}-Delivery"),
            attempt: format!("X-{word}-Delivery-Attempt"),
            webhook_id: format!("X-{word}-Webhook-Id"),
            user_agent: format!("{word} Invoker"),
        }
    }

    pub fn word(&self) -> &str {
        &self.word
    }

    /// `X-<brand>-Event`: incoming-message or status-report.
    pub fn event_header(&self) -> &str {
        &self.event
    }

    /// `X-<brand>-Delivery`: the delivery identifier.
    pub fn delivery_header(&self) -> &str {
        &self.delivery
    }

    /// `X-<brand>-Delivery-Attempt`: attempt number, 1 for the first call.
    pub fn attempt_header(&self) -> &str {
        &self.attempt
    }

    /// `X-<brand>-Webhook-Id`: the webhook that triggered the call.
    pub fn webhook_id_header(&self) -> &str {
        &self.webhook_id
    }

    /// The fixed User-Agent of the service's invoker: `<brand> Invoker`.
    pub fn user_agent(&self) -> &str {
        &self.user_agent
    }

    /// The brand word of an invoker's User-Agent, `Acme` of `Acme Invoker`; `None` for one
    /// that is not an invoker's.
    pub fn of_user_agent(ua: &str) -> Option<&str> {
        let (word, invoker) = ua.trim().rsplit_once(' ')?;
        (invoker.eq_ignore_ascii_case("Invoker") && Brand::is_word(word)).then_some(word)
    }
}

/// The content type of every invocation.
pub const CONTENT_TYPE_JSON: &str = "application/json";

/// The test number: messages to it fail delivery, fire the webhook, and cost nothing.
pub const TEST_NUMBER: &str = "1111111";

/// How long the invoker waits for an answer before it counts the call as a temporary failure.
pub const ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Which messages a webhook receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TriggerScope {
    Sent,
    Received,
}

impl TriggerScope {
    pub fn as_str(self) -> &'static str {
        match self {
            TriggerScope::Sent => "SENT",
            TriggerScope::Received => "RECEIVED",
        }
    }

    /// Case-sensitive, as the service is.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "SENT" => Some(TriggerScope::Sent),
            "RECEIVED" => Some(TriggerScope::Received),
            _ => None,
        }
    }

    pub fn event(self) -> EventKind {
        match self {
            TriggerScope::Sent => EventKind::StatusReport,
            TriggerScope::Received => EventKind::IncomingMessage,
        }
    }
}

/// The value of the event header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EventKind {
    /// A mobile-originated message was received (webhook scope RECEIVED).
    IncomingMessage,
    /// A status update is available for a sent message (webhook scope SENT).
    StatusReport,
}

impl EventKind {
    pub const ALL: [EventKind; 2] = [EventKind::StatusReport, EventKind::IncomingMessage];

    pub fn header_value(self) -> &'static str {
        match self {
            EventKind::IncomingMessage => "incoming-message",
            EventKind::StatusReport => "status-report",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "incoming-message" => Some(EventKind::IncomingMessage),
            "status-report" => Some(EventKind::StatusReport),
            _ => None,
        }
    }

    pub fn scope(self) -> TriggerScope {
        match self {
            EventKind::IncomingMessage => TriggerScope::Received,
            EventKind::StatusReport => TriggerScope::Sent,
        }
    }

    /// The message `type` this event carries.
    pub fn message_type(self) -> &'static str {
        self.scope().as_str()
    }

    /// Plain words for people who do not read headers.
    pub fn describe(self) -> &'static str {
        match self {
            EventKind::IncomingMessage => "a message was received from a handset",
            EventKind::StatusReport => "a status update for a sent message",
        }
    }
}

impl std::fmt::Display for EventKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.header_value())
    }
}

/// `status.id` is the type and the subtype joined with a dot; a null subtype reads `null`.
pub fn status_id(status_type: &str, subtype: Option<&str>) -> String {
    format!("{}.{}", status_type, subtype.unwrap_or("null"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_carry_the_brand_word() {
        let b = Brand::default();
        assert_eq!(b.event_header(), "X-Service-Event");
        assert_eq!(b.delivery_header(), "X-Service-Delivery");
        assert_eq!(b.attempt_header(), "X-Service-Delivery-Attempt");
        assert_eq!(b.webhook_id_header(), "X-Service-Webhook-Id");
        assert_eq!(b.user_agent(), "Service Invoker");
        let acme = Brand::new("Acme");
        assert_eq!(acme.event_header(), "X-Acme-Event");
        assert_eq!(acme.user_agent(), "Acme Invoker");
    }

    #[test]
    fn a_brand_word_that_cannot_be_a_header_falls_back() {
        assert_eq!(Brand::new(""), Brand::default());
        assert_eq!(Brand::new("a b"), Brand::default());
        assert_eq!(Brand::new("x\r\ny"), Brand::default());
    }

    #[test]
    fn trigger_scope_table() {
        // contract.md, "What the service does", table row by row.
        assert_eq!(TriggerScope::Sent.event(), EventKind::StatusReport);
        assert_eq!(EventKind::StatusReport.header_value(), "status-report");
        assert_eq!(TriggerScope::Received.event(), EventKind::IncomingMessage);
        assert_eq!(
            EventKind::IncomingMessage.header_value(),
            "incoming-message"
        );
        assert_eq!(TriggerScope::parse("sent"), None, "case-sensitive");
        assert_eq!(
            EventKind::parse("status-report"),
            Some(EventKind::StatusReport)
        );
        assert_eq!(EventKind::parse("other"), None);
    }

    #[test]
    fn status_id_joins_type_and_subtype() {
        assert_eq!(status_id("DELIVERED", None), "DELIVERED.null");
        assert_eq!(status_id("FAILED", Some("EXPIRED")), "FAILED.EXPIRED");
    }
}
