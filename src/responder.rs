//! The answer the receiver gives: the user's current choice, applied to the next call at once.

use crate::contract::{Outcome, outcome_of};
use crate::rules::{CallFacts, RuleSet};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The answer to send: status, optional Retry-After, optional body and content type, and an
/// optional delay before answering.
/// A key it does not know is an error (a misspelt `"retry-after"` in a rule file must not be
/// dropped in silence).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Answer {
    pub status: u16,
    /// The Retry-After header value: seconds or an HTTP date (a rule file may give the seconds
    /// as a number: `"retry_after": 120`).
    #[serde(deserialize_with = "text_or_number")]
    pub retry_after: Option<String>,
    /// Shared, not copied, by every call it answers.
    pub body: Option<std::sync::Arc<str>>,
    /// Content type of the answer, sent with a body or without; `text/plain; charset=utf-8`
    /// when a body is set without one.
    pub content_type: Option<String>,
    /// Wait this long before answering (e.g. past 30 s to make the service time out).
    pub delay_ms: u64,
}

/// A header value given as a string or as a whole number (kept as its digits).
fn text_or_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    text_or_whole_number(
        d,
        "seconds (a whole number such as 120) or an HTTP date in a string",
    )
}

/// A value given as a string or as a whole number (kept as its digits); `expecting` says what
/// else was expected.
pub(crate) fn text_or_whole_number<'de, D: serde::Deserializer<'de>>(
    d: D,
    expecting: &'static str,
) -> Result<Option<String>, D::Error> {
    d.deserialize_option(ScalarText {
        expecting,
        any_scalar: false,
    })
}

/// A value given as text, a number (whole or not, any sign) or true/false, kept as text.
pub(crate) fn scalar_text<'de, D: serde::Deserializer<'de>>(
    d: D,
    expecting: &'static str,
) -> Result<Option<String>, D::Error> {
    d.deserialize_option(ScalarText {
        expecting,
        any_scalar: true,
    })
}

/// Reads a value into its text: a string, a whole number, and with `any_scalar` any number
/// and true/false too. Null (or nothing) is `None`.
struct ScalarText {
    expecting: &'static str,
    any_scalar: bool,
}

impl<'de> serde::de::Visitor<'de> for ScalarText {
    type Value = Option<String>;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str(self.expecting)
    }
    fn visit_none<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
    fn visit_u64<E>(self, n: u64) -> Result<Self::Value, E> {
        Ok(Some(n.to_string()))
    }
    // TOML's integers are signed.
    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Self::Value, E> {
        match u64::try_from(n) {
            Ok(n) => Ok(Some(n.to_string())),
            Err(_) if self.any_scalar => Ok(Some(n.to_string())),
            Err(_) => Err(E::invalid_value(serde::de::Unexpected::Signed(n), &self)),
        }
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        if self.any_scalar {
            Ok(Some(v.to_string()))
        } else {
            Err(E::invalid_type(serde::de::Unexpected::Float(v), &self))
        }
    }
    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Self::Value, E> {
        if self.any_scalar {
            Ok(Some(v.to_string()))
        } else {
            Err(E::invalid_type(serde::de::Unexpected::Bool(v), &self))
        }
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Some(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Some(v))
    }
}

impl Default for Answer {
    fn default() -> Self {
        Answer::status(200)
    }
}

#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("{0} is not a status code an answer can have: use 200-599{why}", why = if (100..200).contains(.0) { " (1xx codes are informational and cannot end an HTTP exchange)" } else { "" })]
    Status(u16),
    // Quoted with their escapes: a CR or LF in a value never reaches the terminal raw.
    #[error("Retry-After {0:?} is not valid: {why}", why = crate::contract::RetryAfter::refusal(.0))]
    RetryAfter(String),
    #[error("the content type {0:?} cannot be sent as a header")]
    ContentType(String),
    #[error("the content type is empty: leave it out (the answer then has none), or give one")]
    EmptyContentType,
    #[error("a {0} answer carries no body in HTTP: leave the body out, or choose 200")]
    BodyNotAllowed(u16),
    #[error(
        "a {0} answer carries no body in HTTP, so no content type: leave the content type out, or choose 200"
    )]
    ContentTypeNotAllowed(u16),
    #[error("the delay of {} is longer than an hour, the most Hookscope holds an answer", exact_delay_words(*.0))]
    Delay(u64),
    // In bytes: rounded, 32 MiB and a byte read "32.0 MiB is longer than 32 MiB".
    #[error(
        "the body of {0} bytes is longer than 32 MiB ({MAX_ANSWER_BODY} bytes), the most an answer takes"
    )]
    BodyTooLarge(usize),
}

/// The longest body an answer takes (a rule's, `--body-file`'s, the window's), in bytes.
pub const MAX_ANSWER_BODY: usize = 32 << 20;

/// A delay in words, exactly: `2 h`, or `3600001 ms` where rounding to the second would say
/// "1 h" (longer than an hour, yet "1 h").
fn exact_delay_words(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        crate::text::exact_duration(std::time::Duration::from_millis(ms))
    } else {
        format!("{ms} ms")
    }
}

impl Answer {
    pub fn status(status: u16) -> Self {
        Answer {
            status,
            retry_after: None,
            body: None,
            content_type: None,
            delay_ms: 0,
        }
    }

    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after = Some(seconds.to_string());
        self
    }

    pub fn delay(&self) -> Duration {
        Duration::from_millis(self.delay_ms)
    }

    /// What the service will do with this answer. An answer held back for the service's whole
    /// wait ([`crate::contract::ANSWER_TIMEOUT`]) or more never reaches it in time: a temporary
    /// failure, whatever its code.
    pub fn outcome(&self) -> Outcome {
        if self.too_late() {
            Outcome::RetryTemporary
        } else {
            outcome_of(self.status)
        }
    }

    /// What the service does with this answer, in words: the outcome, with the wait a
    /// Retry-After it honours asks for, and the time-out an answer held too long becomes.
    pub fn describe(&self) -> String {
        self.describe_at(chrono::Utc::now())
    }

    /// [`Answer::describe`] for an answer given at `now` (a Retry-After date already passed
    /// asks for no wait).
    pub fn describe_at(&self, now: chrono::DateTime<chrono::Utc>) -> String {
        let outcome = self.outcome();
        if self.too_late() {
            return format!(
                "comes after the service stops waiting ({}), so it counts a time-out: {}",
                crate::text::human_duration(crate::contract::ANSWER_TIMEOUT),
                outcome.describe()
            );
        }
        let effect = self.retry_after_effect(now);
        if let Some(RetryAfterEffect::PastWindow(_)) = effect {
            return "not retried: its Retry-After reaches past the service's 2-day window, so the message is discarded after this attempt".to_owned();
        }
        let wait = match (effect, self.retry_after.as_deref()) {
            (None, Some(raw)) => crate::contract::RetryAfter::parse(raw),
            _ => None,
        };
        let never = match (wait, self.retry_after_words()) {
            // "never sooner than 0 s after a failure" says nothing.
            (Some(crate::contract::RetryAfter::Wait(w)), Some(_)) if w.is_zero() => {
                "its Retry-After of 0 s asks for no wait".to_owned()
            }
            (Some(crate::contract::RetryAfter::Wait(_)), Some(words)) => {
                format!("never sooner than {words} after a failure (its Retry-After)")
            }
            (Some(crate::contract::RetryAfter::Until(_)), Some(words)) => {
                format!("never before {words} (its Retry-After)")
            }
            // No wait asked for: a 503's "not before the Retry-After wait when the answer
            // gives one" read as if there were one.
            _ if outcome == Outcome::RetryUnavailable => {
                return "retried on the schedule".to_owned();
            }
            _ => return outcome.describe().to_owned(),
        };
        match outcome {
            Outcome::RetrySlowDown => format!("{}; {never}", outcome.describe()),
            _ => format!("retried on the schedule, and {never}"),
        }
    }

    /// Whether the delay is as long as the service waits for an answer, or longer.
    pub fn too_late(&self) -> bool {
        self.delay() >= crate::contract::ANSWER_TIMEOUT
    }

    /// Why the code does not decide what the service does, when the delay is too long: `None`
    /// for an answer in time.
    pub fn too_late_note(&self) -> Option<String> {
        self.too_late().then(|| {
            format!(
                "The {} delay reaches the service's {} wait: it gives up first and counts a time-out (a temporary failure, retried), whatever the code{}.",
                delay_words(self.delay_ms),
                crate::text::human_duration(crate::contract::ANSWER_TIMEOUT),
                if self.retry_after.is_some() {
                    " and the Retry-After, which it never reads"
                } else {
                    ""
                }
            )
        })
    }

    /// How long after the call came the service sees it fail: when the answer is sent, or when
    /// it stops waiting for it (the delays before a retry count from then).
    pub fn fails_after(&self) -> Duration {
        self.delay().min(crate::contract::ANSWER_TIMEOUT)
    }

    /// Check the answer can be sent; the error says what to change.
    pub fn check(&self) -> Result<(), AnswerError> {
        if !(200..=599).contains(&self.status) {
            return Err(AnswerError::Status(self.status));
        }
        if let Some(ra) = &self.retry_after
            && crate::contract::RetryAfter::parse(ra).is_none()
        {
            return Err(AnswerError::RetryAfter(ra.clone()));
        }
        if let Some(ct) = &self.content_type {
            if ct.trim().is_empty() {
                return Err(AnswerError::EmptyContentType);
            }
            if axum::http::HeaderValue::from_str(ct).is_err() {
                return Err(AnswerError::ContentType(ct.clone()));
            }
        }
        if self.delay_ms > MAX_DELAY_MS {
            return Err(AnswerError::Delay(self.delay_ms));
        }
        if let Some(body) = &self.body
            && body.len() > MAX_ANSWER_BODY
        {
            return Err(AnswerError::BodyTooLarge(body.len()));
        }
        // HTTP sends no body with these: the record would claim one the caller never got.
        if matches!(self.status, 204 | 205 | 304)
            && self.body.as_ref().is_some_and(|b| !b.is_empty())
        {
            return Err(AnswerError::BodyNotAllowed(self.status));
        }
        if matches!(self.status, 204 | 205 | 304) && self.content_type.is_some() {
            return Err(AnswerError::ContentTypeNotAllowed(self.status));
        }
        Ok(())
    }

    /// A Retry-After is set but the service ignores it: with this code (only 503 and 429
    /// count), or because the answer comes after the service stopped waiting for it.
    pub fn retry_after_ignored(&self) -> bool {
        self.retry_after.is_some()
            && (self.too_late() || !outcome_of(self.status).honours_retry_after())
    }

    /// What the service does with a Retry-After in this answer, when it is not simply the wait
    /// it asks for: a sentence.
    pub fn retry_after_note(&self) -> Option<String> {
        self.retry_after_note_at(chrono::Utc::now())
    }

    /// [`Answer::retry_after_note`] for an answer given at `now`: ignored with a code other
    /// than 503 and 429; a date already passed; a wait so long that no retry fits in the 2-day
    /// window, so the message is discarded after the one attempt.
    pub fn retry_after_note_at(&self, now: chrono::DateTime<chrono::Utc>) -> Option<String> {
        Some(match self.retry_after_effect(now)? {
            // Said by the note on the delay (`too_late_note`).
            RetryAfterEffect::TooLate => return None,
            RetryAfterEffect::Ignored => format!(
                "The service ignores Retry-After with {}: it honours it only with 503 and 429.",
                self.status
            ),
            RetryAfterEffect::Passed => {
                "The Retry-After date has already passed: it asks for no wait, so retries follow the schedule.".to_owned()
            }
            RetryAfterEffect::PastWindow(given) => format!(
                "A Retry-After {given} reaches past the service's 2-day retry window: no retry comes, and the message is discarded after its first attempt."
            ),
        })
    }

    /// Whether this answer's Retry-After, given at `now` to a first failure, puts the first
    /// retry past the service's 2-day window: no retry comes.
    pub fn retry_after_past_window(&self, now: chrono::DateTime<chrono::Utc>) -> bool {
        matches!(
            self.retry_after_effect(now),
            Some(RetryAfterEffect::PastWindow(_))
        )
    }

    /// [`Answer::retry_after_note`] in a few words, for a rule's line in a list (a Retry-After
    /// ignored is already marked by [`Answer::summary`]).
    pub fn retry_after_brief(&self) -> Option<&'static str> {
        match self.retry_after_effect(chrono::Utc::now())? {
            RetryAfterEffect::Ignored | RetryAfterEffect::TooLate => None,
            RetryAfterEffect::Passed => Some("the Retry-After date has passed: no effect"),
            RetryAfterEffect::PastWindow(_) => {
                Some("the Retry-After reaches past the 2-day window: no retry, discarded")
            }
        }
    }

    fn retry_after_effect(&self, now: chrono::DateTime<chrono::Utc>) -> Option<RetryAfterEffect> {
        if self.retry_after.is_some() && self.too_late() {
            return Some(RetryAfterEffect::TooLate);
        }
        if self.retry_after_ignored() {
            return Some(RetryAfterEffect::Ignored);
        }
        let raw = self.retry_after.as_deref()?;
        let value = crate::contract::RetryAfter::parse(raw)?;
        if let crate::contract::RetryAfter::Until(at) = value
            && at <= now
        {
            return Some(RetryAfterEffect::Passed);
        }
        // Only whether a first retry fits: the window shows this note every frame.
        let wait = value.wait_from(now);
        let first_retry =
            crate::contract::Schedule::default().next_attempt(now, 1, now, Some(wait));
        first_retry.is_none().then(|| {
            // As given: a date as a date, a number past a year as the number it is (one too
            // large for 64 bits included).
            RetryAfterEffect::PastWindow(match value {
                crate::contract::RetryAfter::Until(at) => {
                    format!("date of {}", crate::contract::imf_fixdate(at))
                }
                crate::contract::RetryAfter::Wait(d) if d > Duration::from_secs(365 * 86_400) => {
                    format!("of {} s (over a year)", raw.trim())
                }
                crate::contract::RetryAfter::Wait(d) => {
                    format!("of {}", crate::text::wait_words(d))
                }
            })
        })
    }

    /// The Retry-After as the preset cards write it: `120 s`, or the date as it is sent (one
    /// given in an obsolete form is sent, and said, as HTTP writes dates).
    pub fn retry_after_words(&self) -> Option<String> {
        let ra = crate::contract::RetryAfter::sent_form(self.retry_after.as_deref()?);
        Some(if ra.bytes().all(|b| b.is_ascii_digit()) {
            format!("{ra} s")
        } else {
            ra.into_owned()
        })
    }

    pub fn summary(&self) -> String {
        let mut s = self.status.to_string();
        // As the preset cards write it: `503 (Retry-After 120 s)`.
        if let Some(value) = self.retry_after_words() {
            let ignored = if self.retry_after_ignored() {
                ", ignored"
            } else {
                ""
            };
            s.push_str(&format!(" (Retry-After {value}{ignored})"));
        }
        if let Some(delay) = self.delay_text() {
            s.push_str(&format!(" after {delay}"));
        }
        s
    }

    /// The delay before answering, in words (`None`: no delay). Not whole seconds: to the
    /// millisecond, so 29.999 s (in time) does not read as the 30 s that is too late.
    pub fn delay_text(&self) -> Option<String> {
        (self.delay_ms > 0).then(|| delay_words(self.delay_ms))
    }
}

/// A delay before answering in words, to the millisecond under a minute: `250 ms`, `1.5 s`,
/// `29.999 s`, `30 s`, `2 min`.
pub fn delay_words(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if !ms.is_multiple_of(1000) && ms < 60_000 {
        let fraction = format!("{:03}", ms % 1000);
        format!("{}.{} s", ms / 1000, fraction.trim_end_matches('0'))
    } else {
        crate::text::human_duration(std::time::Duration::from_millis(ms))
    }
}

/// The longest Hookscope holds an answer: an hour, in milliseconds.
pub const MAX_DELAY_MS: u64 = 3_600_000;

/// What the service makes of an answer's Retry-After, when it is not simply the wait it asks for.
enum RetryAfterEffect {
    /// The answer comes after the service stopped waiting: never read.
    TooLate,
    /// Not 503 or 429: ignored.
    Ignored,
    /// A date already passed: no wait.
    Passed,
    /// No retry fits in the 2-day window (the value as given, in words).
    PastWindow(String),
}

/// The name of the rule a decision's `rule` note names (`rule 2: then succeed` ->
/// `then succeed`); `None` for the notes that are not a rule (`registration check`, `body over
/// the limit`...). For scripts: `rule_name` in `log --json` and `show --json`.
pub fn rule_name(rule: &str) -> Option<&str> {
    let rest = rule.strip_prefix("rule ")?;
    let (number, name) = rest.split_once(": ")?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some(name)
}

/// What the responder decided for one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub answer: Answer,
    /// The rule that chose it, or a note like `registration check`; `None` for the fixed choice.
    pub rule: Option<String>,
}

/// The responder's settings.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ResponderConfig {
    /// The fixed choice.
    pub answer: Answer,
    /// Answer the registration check 200 even while a failure code is chosen, so that
    /// registering a webhook still works.
    pub pass_registration_check: bool,
}

impl Default for ResponderConfig {
    fn default() -> Self {
        ResponderConfig {
            answer: Answer::default(),
            pass_registration_check: true,
        }
    }
}

/// What the responder knows of a call when it decides.
#[derive(Clone, Copy, Debug)]
pub struct CallInfo<'a> {
    pub registration_check: bool,
    pub facts: CallFacts<'a>,
}

impl<'a> CallInfo<'a> {
    /// A call known only by its path (tests, or calls with nothing else).
    pub fn path(path: &'a str) -> Self {
        CallInfo {
            registration_check: false,
            facts: CallFacts {
                event: None,
                webhook_id: None,
                path,
                attempt: None,
                body: &[],
            },
        }
    }
}

/// The shared, live answer choice. Cheap to clone; a change applies to the next call.
#[derive(Clone, Debug, Default)]
pub struct Responder {
    config: Arc<RwLock<ResponderConfig>>,
    rules: Arc<std::sync::Mutex<RuleSet>>,
}

impl Responder {
    pub fn new(config: ResponderConfig) -> Self {
        Responder {
            config: Arc::new(RwLock::new(config)),
            rules: Arc::default(),
        }
    }

    pub fn config(&self) -> ResponderConfig {
        self.config
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn set_answer(&self, answer: Answer) -> Result<(), AnswerError> {
        answer.check()?;
        self.config
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .answer = answer;
        Ok(())
    }

    pub fn set_pass_registration_check(&self, on: bool) {
        self.config
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .pass_registration_check = on;
    }

    /// Replace the rules (their counters start again).
    pub fn set_rules(&self, rules: RuleSet) {
        *self.rules.lock().unwrap_or_else(|p| p.into_inner()) = rules;
    }

    /// The rules with their counters as they are now.
    pub fn rules(&self) -> RuleSet {
        self.rules.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many rules still answer calls (retired ones do not).
    pub fn rules_in_force(&self) -> usize {
        self.rules
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .in_force()
    }

    /// The registration check (if passed), else the first matching rule, else the fixed choice.
    pub fn decide(&self, call: CallInfo<'_>) -> Decision {
        self.choose(call, true)
    }

    /// What [`Responder::decide`] would answer, without counting the call against a rule's
    /// `times` or `every_nth`: for a call whose answer is not the rules' to give (a body over
    /// the limit, cut short, or from a client that is gone).
    pub fn preview(&self, call: CallInfo<'_>) -> Decision {
        self.choose(call, false)
    }

    fn choose(&self, call: CallInfo<'_>, count: bool) -> Decision {
        let config = self.config.read().unwrap_or_else(|p| p.into_inner());
        if call.registration_check && config.pass_registration_check {
            return Decision {
                answer: Answer::status(200),
                rule: Some("registration check".into()),
            };
        }
        let mut rules = self.rules.lock().unwrap_or_else(|p| p.into_inner());
        let chosen = if count {
            rules.decide(&call.facts)
        } else {
            rules.preview(&call.facts)
        };
        if let Some((i, answer)) = chosen {
            return Decision {
                answer,
                rule: Some(format!("rule {}: {}", i + 1, rules.rules[i].name)),
            };
        }
        Decision {
            answer: config.answer.clone(),
            rule: None,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_answer_says_what_the_service_does_with_its_retry_after_and_its_delay() {
        use super::Answer;
        let now = chrono::Utc::now();
        let d = |a: Answer| a.describe_at(now);
        assert_eq!(
            d(Answer::status(503).with_retry_after(120)),
            "retried on the schedule, and never sooner than 120 s after a failure (its Retry-After)"
        );
        assert_eq!(
            d(Answer::status(429).with_retry_after(120)),
            "retried on the schedule, and the service slows down; never sooner than 120 s after a failure (its Retry-After)"
        );
        // An hour away (one past the 2-day window is said by its note).
        let date = (now + chrono::TimeDelta::hours(1))
            .format("%a, %d %b %Y %H:%M:%S GMT")
            .to_string();
        let mut dated = Answer::status(503);
        dated.retry_after = Some(date.clone());
        assert_eq!(
            d(dated),
            format!("retried on the schedule, and never before {date} (its Retry-After)")
        );
        // A 503 without one, or of a date passed, or one ignored: the outcome alone (the notes
        // say why).
        for (code, ra, says) in [
            (503, None, "retried on the schedule"),
            (
                503,
                Some("Sun, 06 Nov 1994 08:49:37 GMT"),
                "retried on the schedule",
            ),
            (
                500,
                Some("120"),
                "treated as a temporary problem and retried on the schedule",
            ),
            (
                429,
                None,
                "retried on the schedule, and the service slows down",
            ),
            (
                503,
                Some("0"),
                "retried on the schedule, and its Retry-After of 0 s asks for no wait",
            ),
            (
                429,
                Some("0"),
                "retried on the schedule, and the service slows down; its Retry-After of 0 s asks for no wait",
            ),
            (
                503,
                Some("99999999"),
                "not retried: its Retry-After reaches past the service's 2-day window, so the message is discarded after this attempt",
            ),
        ] {
            let mut a = Answer::status(code);
            a.retry_after = ra.map(str::to_owned);
            assert_eq!(d(a), says, "{code} {ra:?}");
        }
        // Held past the service's wait: a time-out, whatever the code.
        let mut late = Answer::status(200);
        late.delay_ms = 40_000;
        assert_eq!(
            d(late),
            "comes after the service stops waiting (30 s), so it counts a time-out: treated as a temporary problem and retried on the schedule"
        );
    }

    #[test]
    fn an_answer_too_late_says_the_code_does_not_count() {
        let mut a = Answer::status(200);
        a.delay_ms = 40_000;
        assert_eq!(a.outcome(), Outcome::RetryTemporary);
        assert_eq!(
            a.too_late_note().as_deref(),
            Some(
                "The 40 s delay reaches the service's 30 s wait: it gives up first and counts a time-out (a temporary failure, retried), whatever the code."
            )
        );
        a.delay_ms = 29_999;
        assert_eq!(a.too_late_note(), None);
    }

    #[test]
    fn a_rule_note_gives_the_rules_name_alone() {
        assert_eq!(rule_name("rule 2: then succeed"), Some("then succeed"));
        assert_eq!(rule_name("rule 10: a: b"), Some("a: b"));
        assert_eq!(rule_name("registration check"), None);
        assert_eq!(rule_name("body over the limit"), None);
        assert_eq!(rule_name("rule x: y"), None);
    }

    use super::*;

    #[test]
    fn an_answer_held_back_past_the_service_wait_is_a_temporary_failure() {
        let mut a = Answer::status(200);
        a.delay_ms = 29_999;
        assert_eq!(a.outcome(), Outcome::Succeeded);
        a.delay_ms = 30_000;
        assert!(a.too_late());
        assert_eq!(a.outcome(), Outcome::RetryTemporary);
        // The service never reads it: its Retry-After is ignored too, whatever the code.
        let mut b = Answer::status(503).with_retry_after(120);
        b.delay_ms = 31_000;
        assert!(b.retry_after_ignored());
    }

    #[test]
    fn a_code_out_of_range_is_explained_for_what_it_is() {
        let informational = Answer::status(100).check().unwrap_err().to_string();
        assert!(
            informational.contains("1xx codes are informational"),
            "{informational}"
        );
        for code in [0, 99, 600] {
            let e = Answer::status(code).check().unwrap_err().to_string();
            assert!(e.contains("use 200-599") && !e.contains("1xx"), "{e}");
        }
    }

    fn call(check: bool) -> CallInfo<'static> {
        CallInfo {
            registration_check: check,
            ..CallInfo::path("/")
        }
    }

    #[test]
    fn rules_come_before_the_fixed_choice_and_are_named() {
        let r = Responder::default();
        r.set_rules(
            RuleSet::parse(
                "t",
                r#"{"rules":[{"name":"first","when":{"path":"/x"},"answer":{"status":429}}]}"#,
            )
            .unwrap(),
        );
        let d = r.decide(CallInfo::path("/x"));
        assert_eq!(d.answer.status, 429);
        assert_eq!(d.rule.as_deref(), Some("rule 1: first"));
        assert_eq!(r.decide(CallInfo::path("/y")).answer.status, 200);
        assert_eq!(r.rules().used(0), 1);
    }

    #[test]
    fn the_choice_applies_to_the_next_call() {
        let r = Responder::default();
        assert_eq!(r.decide(call(false)).answer.status, 200);
        r.set_answer(Answer::status(503).with_retry_after(120))
            .unwrap();
        let d = r.decide(call(false));
        assert_eq!(d.answer.status, 503);
        assert_eq!(d.answer.retry_after.as_deref(), Some("120"));
        assert_eq!(d.rule, None);
    }

    #[test]
    fn the_registration_check_passes_unless_turned_off() {
        let r = Responder::default();
        r.set_answer(Answer::status(503)).unwrap();
        let d = r.decide(call(true));
        assert_eq!(d.answer.status, 200);
        assert_eq!(d.rule.as_deref(), Some("registration check"));
        r.set_pass_registration_check(false);
        assert_eq!(r.decide(call(true)).answer.status, 503);
    }

    #[test]
    fn bad_answers_are_refused_with_a_reason() {
        let r = Responder::default();
        assert_eq!(
            r.set_answer(Answer::status(100)),
            Err(AnswerError::Status(100))
        );
        assert_eq!(
            r.set_answer(Answer::status(600)),
            Err(AnswerError::Status(600))
        );
        let mut a = Answer::status(503);
        a.retry_after = Some("later".into());
        assert!(r.set_answer(a).unwrap_err().to_string().contains("seconds"));
        let mut a = Answer::status(200);
        a.content_type = Some("text/plain\r\nX: y".into());
        let e = r.set_answer(a).unwrap_err();
        assert!(matches!(e, AnswerError::ContentType(_)));
        assert!(
            e.to_string().contains(r#""text/plain\r\nX: y""#),
            "escaped, not raw: {e}"
        );
        let mut a = Answer::status(200);
        a.content_type = Some(" ".into());
        assert_eq!(r.set_answer(a), Err(AnswerError::EmptyContentType));
        for code in [204, 205, 304] {
            let mut a = Answer::status(code);
            a.body = Some("hello".into());
            assert_eq!(
                r.set_answer(a.clone()),
                Err(AnswerError::BodyNotAllowed(code))
            );
            assert!(
                a.check()
                    .unwrap_err()
                    .to_string()
                    .contains("carries no body")
            );
            a.body = None;
            assert_eq!(a.check(), Ok(()));
            a.content_type = Some("application/json".into());
            assert_eq!(a.check(), Err(AnswerError::ContentTypeNotAllowed(code)));
        }
        assert_eq!(r.decide(call(false)).answer.status, 200, "unchanged");
        // An hour at most, said in time words.
        let mut a = Answer::status(200);
        a.delay_ms = 7_200_000;
        assert_eq!(
            a.check().unwrap_err().to_string(),
            "the delay of 2 h is longer than an hour, the most Hookscope holds an answer"
        );
        // 32 MiB of body at most, as --body-file takes: a rule's body had no limit.
        let mut a = Answer::status(200);
        a.body = Some("x".repeat(MAX_ANSWER_BODY).into());
        assert_eq!(a.check(), Ok(()));
        a.body = Some("x".repeat(MAX_ANSWER_BODY + 1).into());
        assert_eq!(
            a.check(),
            Err(AnswerError::BodyTooLarge(MAX_ANSWER_BODY + 1))
        );
        assert!(
            a.check()
                .unwrap_err()
                .to_string()
                .contains("the body of 33554433 bytes is longer than 32 MiB (33554432 bytes), the most an answer takes"),
        );
    }

    #[test]
    fn summary_reads_well() {
        let mut a = Answer::status(503).with_retry_after(120);
        a.delay_ms = 2000;
        assert_eq!(a.summary(), "503 (Retry-After 120 s) after 2 s");
        let mut in_time = Answer::status(200);
        in_time.delay_ms = 29_999;
        assert_eq!(in_time.summary(), "200 after 29.999 s");
        in_time.delay_ms = 1_500;
        assert_eq!(in_time.summary(), "200 after 1.5 s");
        in_time.delay_ms = 1_050;
        assert_eq!(in_time.summary(), "200 after 1.05 s");
        in_time.delay_ms = 250;
        assert_eq!(in_time.summary(), "200 after 250 ms");
        in_time.delay_ms = 90_500;
        assert_eq!(in_time.summary(), "200 after 1 min 31 s");
        assert_eq!(a.retry_after_note(), None);
        // The service ignores it with 500: said wherever the answer is shown.
        let a = Answer::status(500).with_retry_after(300);
        assert_eq!(a.summary(), "500 (Retry-After 300 s, ignored)");
        assert!(
            a.retry_after_note()
                .is_some_and(|n| n.contains("only with 503 and 429"))
        );
        assert_eq!(Answer::status(500).retry_after_note(), None);
    }

    #[test]
    fn a_retry_after_that_changes_nothing_or_everything_is_said() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-22T10:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let note = |a: Answer| a.retry_after_note_at(now);
        // Within the window: it is simply the wait, nothing to add.
        assert_eq!(note(Answer::status(503).with_retry_after(86_400)), None);
        assert_eq!(note(Answer::status(429).with_retry_after(120)), None);
        // Past the 2 days: no retry at all.
        let far = note(Answer::status(503).with_retry_after(200_000)).unwrap();
        assert!(
            far.contains("past the service's 2-day retry window"),
            "{far}"
        );
        assert!(
            far.contains("2 d 7 h 33 min 20 s"),
            "to the second, as `schedule` says it: {far}"
        );
        // A date: passed, or beyond the window.
        let mut passed = Answer::status(503);
        passed.retry_after = Some("Sun, 22 Nov 2026 09:00:00 GMT".into());
        assert!(note(passed).unwrap().contains("already passed"));
        let mut later = Answer::status(503);
        later.retry_after = Some("Sat, 28 Nov 2026 10:00:00 GMT".into());
        assert!(
            note(later)
                .unwrap()
                .starts_with("A Retry-After date of Sat, 28 Nov 2026 10:00:00 GMT reaches past")
        );
        // A number past a year, and past 64 bits, as given.
        let mut huge = Answer::status(503);
        huge.retry_after = Some("99999999999999999999999999".into());
        assert!(note(huge).unwrap().starts_with(
            "A Retry-After of 99999999999999999999999999 s (over a year) reaches past"
        ),);
        let mut soon = Answer::status(503);
        soon.retry_after = Some("Sun, 22 Nov 2026 11:00:00 GMT".into());
        assert_eq!(note(soon), None);
    }

    /// An answer held past the service's wait is never read: its Retry-After (even one past
    /// the window, which would discard the message) changes nothing, and is marked so.
    #[test]
    fn a_retry_after_held_past_the_wait_is_never_read() {
        let mut a = Answer::status(503).with_retry_after(200_000);
        a.delay_ms = 35_000;
        assert_eq!(a.outcome(), Outcome::RetryTemporary);
        assert!(a.retry_after_ignored());
        assert_eq!(a.retry_after_note(), None);
        assert_eq!(a.retry_after_brief(), None);
        assert!(!a.retry_after_past_window(chrono::Utc::now()));
        assert_eq!(
            a.summary(),
            "503 (Retry-After 200000 s, ignored) after 35 s"
        );
        assert_eq!(
            a.too_late_note().unwrap(),
            "The 35 s delay reaches the service's 30 s wait: it gives up first and counts a time-out (a temporary failure, retried), whatever the code and the Retry-After, which it never reads."
        );
        assert_eq!(a.fails_after(), Duration::from_secs(30));
        a.delay_ms = 8_000;
        assert_eq!(a.fails_after(), Duration::from_secs(8));
        assert!(a.retry_after_past_window(chrono::Utc::now()));
    }
}
