//! What "the service slows down" after a 429 means, as Hookscope assumes it.
//!
//! contract.md's States table says only that on a 429 a retry is scheduled and "the service
//! slows down"; service-api.md says how is not published and asks the product to state the rule
//! it assumes. The rule taken here (and played by the emulator):
//!
//! - the slow-down is of the service's calls to the webhook that answered 429, all its messages
//!   alike (the message answered 429 is also retried on the schedule, as any temporary failure);
//! - while slowed down, the service makes one call at a time to that webhook, each at least
//!   [`SLOW_GAP`] after the one before was sent;
//! - it goes back to full speed once [`SLOW_FOR`] has passed since the last 429.
//!
//! Time is a parameter, as in the schedule: nothing here reads a clock.

use chrono::{DateTime, TimeDelta, Utc};
use std::time::Duration;

/// While slowed down, the least time from one call to the webhook to the next.
pub const SLOW_GAP: Duration = Duration::from_secs(1);
/// How long after the last 429 the slow-down lasts.
pub const SLOW_FOR: Duration = Duration::from_secs(5 * 60);

/// The rule, in words for the UI and the CLI.
pub const RULE: &str = "After a 429 the service slows down its calls to that webhook: one call \
at a time, at least 1 s apart, until 5 minutes pass without another 429.";

fn delta(d: Duration) -> TimeDelta {
    TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX)
}

/// The pace of the calls to one webhook.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Pace {
    /// Slowed down until then (the last 429 plus [`SLOW_FOR`]).
    slow_until: Option<DateTime<Utc>>,
    /// When the last call made while slowed down was sent.
    last_call: Option<DateTime<Utc>>,
}

/// What a call about to be made to the webhook must do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Full speed: go now, alongside any other calls.
    Free,
    /// The slow-down has just ended (this call is the first at full speed again): go now.
    Ended,
    /// Slowed down: go alone, no sooner than this.
    Alone(DateTime<Utc>),
}

impl Pace {
    /// Whether the calls are slowed down at `now`.
    pub fn is_slow(&self, now: DateTime<Utc>) -> bool {
        self.slow_until.is_some_and(|until| now < until)
    }

    /// A call is about to be made at `now`: may it go, and when.
    pub fn gate(&mut self, now: DateTime<Utc>) -> Gate {
        match self.slow_until {
            None => Gate::Free,
            Some(until) if now >= until => {
                *self = Pace::default();
                Gate::Ended
            }
            Some(_) => Gate::Alone(
                self.last_call
                    .map_or(now, |last| (last + delta(SLOW_GAP)).max(now)),
            ),
        }
    }

    /// A call was sent at `at` while slowed down.
    pub fn called(&mut self, at: DateTime<Utc>) {
        if self.slow_until.is_some() {
            self.last_call = Some(at);
        }
    }

    /// The webhook answered 429 at `at`; true when this starts a slow-down (it was at full
    /// speed), false when it extends one.
    pub fn answered_429(&mut self, at: DateTime<Utc>) -> bool {
        let started = !self.is_slow(at);
        if started {
            // A slow-down that ended unnoticed (no call since) starts afresh.
            self.last_call = None;
        }
        self.slow_until = Some(at + delta(SLOW_FOR));
        started
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(secs: i64) -> DateTime<Utc> {
        DateTime::UNIX_EPOCH + TimeDelta::seconds(1_800_000_000 + secs)
    }

    #[test]
    fn full_speed_until_a_429() {
        let mut p = Pace::default();
        assert!(!p.is_slow(t(0)));
        assert_eq!(p.gate(t(0)), Gate::Free);
        // A call at full speed leaves no mark.
        p.called(t(0));
        assert_eq!(p, Pace::default());
    }

    #[test]
    fn after_a_429_calls_go_one_at_a_time_a_second_apart() {
        let mut p = Pace::default();
        assert!(p.answered_429(t(10)));
        assert!(p.is_slow(t(10)));
        // The first call goes at once, alone; the next no sooner than 1 s after it was sent.
        assert_eq!(p.gate(t(11)), Gate::Alone(t(11)));
        p.called(t(11));
        assert_eq!(p.gate(t(11)), Gate::Alone(t(12)));
        // One that comes late goes when it comes.
        assert_eq!(p.gate(t(20)), Gate::Alone(t(20)));
    }

    #[test]
    fn the_slow_down_lasts_5_minutes_after_the_last_429() {
        let mut p = Pace::default();
        assert!(p.answered_429(t(0)));
        // A second 429 extends it, and is not a new start.
        assert!(!p.answered_429(t(100)));
        assert!(p.is_slow(t(100 + 299)));
        assert!(matches!(p.gate(t(100 + 299)), Gate::Alone(_)));
        assert!(!p.is_slow(t(100 + 300)));
        assert_eq!(p.gate(t(100 + 300)), Gate::Ended);
        // Back to full speed: said once.
        assert_eq!(p.gate(t(100 + 301)), Gate::Free);
    }

    #[test]
    fn a_429_after_the_end_starts_afresh() {
        let mut p = Pace::default();
        p.answered_429(t(0));
        p.gate(t(1));
        p.called(t(1));
        // Ended unnoticed (no call came after 5 min), then another 429: a new start, and its
        // first call does not wait on the old one.
        assert!(p.answered_429(t(1000)));
        assert_eq!(p.gate(t(1000)), Gate::Alone(t(1000)));
    }
}
