//! What the service does with the status code the subscriber answers (contract.md, States).

use serde::{Deserialize, Serialize};

/// The outcome of one invocation, decided by the subscriber's response code alone (the body is
/// not evaluated).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// 1xx or 2xx: the webhook is ready for more.
    Succeeded,
    /// 4xx other than 410 and 429: that message is discarded, later messages are still delivered.
    FailedPermanently,
    /// 429: a retry is scheduled and the service slows down.
    RetrySlowDown,
    /// 503: a retry is scheduled; the subscriber may send Retry-After.
    RetryUnavailable,
    /// 410: the service stops invoking this webhook entirely.
    WebhookCancelled,
    /// Any other code (3xx, 5xx other than 503, no answer): treated as a temporary problem.
    RetryTemporary,
    /// A registration check answered with anything but 200: the service does not accept the URL,
    /// so the webhook is not created (contract.md, Webhooks: "must answer 200"). Never the
    /// outcome of a code alone ([`outcome_of`]); see [`crate::store::Invocation::outcome`].
    UrlRefused,
}

/// contract.md's States table: response code -> outcome.
pub fn outcome_of(code: u16) -> Outcome {
    match code {
        100..=299 => Outcome::Succeeded,
        410 => Outcome::WebhookCancelled,
        429 => Outcome::RetrySlowDown,
        400..=499 => Outcome::FailedPermanently,
        503 => Outcome::RetryUnavailable,
        _ => Outcome::RetryTemporary,
    }
}

impl Outcome {
    pub const ALL: [Outcome; 7] = [
        Outcome::Succeeded,
        Outcome::FailedPermanently,
        Outcome::RetrySlowDown,
        Outcome::RetryUnavailable,
        Outcome::WebhookCancelled,
        Outcome::RetryTemporary,
        Outcome::UrlRefused,
    ];

    /// Whether the service will call again with the same delivery.
    pub fn is_retry(self) -> bool {
        matches!(
            self,
            Outcome::RetrySlowDown | Outcome::RetryUnavailable | Outcome::RetryTemporary
        )
    }

    /// Whether a Retry-After in the answer can put the retry off: with 503 (contract.md's
    /// States table) and with 429 (a slow-down that names its own pause). With any other code
    /// the service keeps to the plain schedule.
    pub fn honours_retry_after(self) -> bool {
        matches!(self, Outcome::RetryUnavailable | Outcome::RetrySlowDown)
    }

    /// A stable short name (used in the store, `--json` output and filters).
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::FailedPermanently => "failed-permanently",
            Outcome::RetrySlowDown => "retry-slow-down",
            Outcome::RetryUnavailable => "retry-unavailable",
            Outcome::WebhookCancelled => "webhook-cancelled",
            Outcome::RetryTemporary => "retry-temporary",
            Outcome::UrlRefused => "url-refused",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// A short label for a column.
    pub fn label(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::FailedPermanently => "discarded",
            Outcome::RetrySlowDown => "retry, slow down",
            Outcome::RetryUnavailable => "retry",
            Outcome::WebhookCancelled => "webhook cancelled",
            Outcome::RetryTemporary => "retry",
            Outcome::UrlRefused => "URL refused",
        }
    }

    /// What the service will do, in plain words.
    pub fn describe(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded, and the webhook is ready for more",
            Outcome::FailedPermanently => {
                "failed permanently, so the message is discarded (later ones are still delivered)"
            }
            Outcome::RetrySlowDown => "retried on the schedule, and the service slows down",
            Outcome::RetryUnavailable => {
                "retried on the schedule, and not before the Retry-After wait when the answer gives one"
            }
            Outcome::WebhookCancelled => {
                "cancels the webhook, so the service stops calling it entirely"
            }
            Outcome::RetryTemporary => "treated as a temporary problem and retried on the schedule",
            Outcome::UrlRefused => {
                "refuses the URL (a registration check must be answered 200 in time), so the webhook is not created"
            }
        }
    }
}

impl Outcome {
    /// [`Outcome::describe`] as a sentence of its own ("Succeeded, and the webhook is ready for
    /// more."), for a tooltip beside the outcome's name.
    pub fn sentence(self) -> String {
        format!("{}.", crate::text::first_upper(self.describe()))
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // One test per row of contract.md's States table.

    #[test]
    fn row_1xx_or_2xx_succeeds() {
        for code in [100, 101, 199, 200, 201, 202, 204, 299] {
            assert_eq!(outcome_of(code), Outcome::Succeeded, "{code}");
        }
        assert!(!Outcome::Succeeded.is_retry());
    }

    #[test]
    fn row_4xx_other_than_410_and_429_fails_permanently() {
        for code in [
            400, 401, 403, 404, 405, 409, 411, 413, 422, 428, 430, 451, 499,
        ] {
            assert_eq!(outcome_of(code), Outcome::FailedPermanently, "{code}");
        }
        assert!(!Outcome::FailedPermanently.is_retry());
    }

    #[test]
    fn row_429_retries_and_slows_down() {
        assert_eq!(outcome_of(429), Outcome::RetrySlowDown);
        assert!(Outcome::RetrySlowDown.is_retry());
        assert!(Outcome::RetrySlowDown.honours_retry_after());
    }

    #[test]
    fn row_503_retries_with_optional_retry_after() {
        assert_eq!(outcome_of(503), Outcome::RetryUnavailable);
        assert!(Outcome::RetryUnavailable.is_retry());
        assert!(Outcome::RetryUnavailable.honours_retry_after());
    }

    #[test]
    fn row_410_cancels_the_webhook() {
        assert_eq!(outcome_of(410), Outcome::WebhookCancelled);
        assert!(!Outcome::WebhookCancelled.is_retry());
    }

    #[test]
    fn row_any_other_code_is_a_temporary_problem() {
        for code in [300, 301, 302, 304, 399, 500, 501, 502, 504, 599] {
            assert_eq!(outcome_of(code), Outcome::RetryTemporary, "{code}");
        }
        assert!(Outcome::RetryTemporary.is_retry());
        // Retry-After counts only with 503 and 429.
        assert!(!Outcome::RetryTemporary.honours_retry_after());
    }

    #[test]
    fn names_round_trip() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
            assert!(!o.describe().is_empty());
            // It follows "Answering 503: " or "No retries: ", so it has no colon of its own.
            assert!(!o.describe().contains(':'), "{}", o.describe());
            assert!(o.sentence().ends_with('.'), "{}", o.sentence());
        }
        assert_eq!(
            Outcome::Succeeded.sentence(),
            "Succeeded, and the webhook is ready for more."
        );
    }
}
