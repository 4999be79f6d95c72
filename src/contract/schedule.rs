//! The retry schedule of contract.md's Limits, as a function of time.
//!
//! | Retry | Delay                              |
//! |-------|------------------------------------|
//! | 1st   | 90 seconds after the failure       |
//! | 2nd   | 3 minutes after the 1st            |
//! | 3rd   | 6 minutes after the 2nd            |
//! | 4th   | 12 minutes after the 3rd           |
//! | later | every 15 minutes, for up to 2 days |
//!
//! Where the contract is silent, this is the rule Hookscope assumes (see [`RULE`]):
//! - each delay counts from the failure of the attempt before it;
//! - the 2 days count from the first failure (the failed answer to attempt 1); a retry is planned
//!   only if it falls inside that window, and the message is discarded when the last retry fails;
//! - a `Retry-After` sent with a 503 (or a 429) pushes the retry that follows it to no sooner than
//!   that time: the later of the schedule's delay and Retry-After wins; later retries keep the
//!   schedule's delays, counted from that retry;
//! - 429 is retried on the same schedule; "the service slows down" is about its calls to the
//!   webhook, all messages alike, which a per-message timeline does not show (the rule assumed
//!   is [`super::slowdown`]'s).
//!
//! Time is a parameter: nothing here reads a clock, so a two-day schedule runs in a test at once.

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use std::time::Duration;

/// The first four retry delays.
pub const RETRY_DELAYS: [Duration; 4] = [
    Duration::from_secs(90),
    Duration::from_secs(3 * 60),
    Duration::from_secs(6 * 60),
    Duration::from_secs(12 * 60),
];
/// The delay between later retries.
pub const STEADY_DELAY: Duration = Duration::from_secs(15 * 60);
/// How long retries go on, counted from the first failure.
pub const RETRY_WINDOW: Duration = Duration::from_secs(2 * 24 * 60 * 60);

/// The rule assumed where the contract is silent, in words for the UI and the CLI.
pub const RULE: &str = "Delays count from the failure before each retry. The 2-day window counts \
from the first failure; the message is discarded when the last retry inside it fails. A \
Retry-After on a 503 (or 429) answer delays the next retry to the later of the schedule and \
Retry-After. 429 is retried on the same schedule; its slow-down is of the service's calls to the \
webhook: one at a time, at least 1 s apart, until 5 minutes pass without another 429.";

/// One planned attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The number the service puts in the attempt header: 1 is the first call, 2 the 1st retry.
    pub number: u32,
    /// When it is due.
    pub at: DateTime<Utc>,
    /// The wait since the failure before it (in JSON: `delay_secs`, seconds).
    pub delay: Duration,
}

/// Times in JSON as everywhere else in Hookscope's output: RFC 3339, UTC, microseconds.
fn as_rfc3339_micros<S: serde::Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true))
}

/// In JSON: `number` (the attempt header's), `retry` (1 for the first retry), `at` (RFC 3339,
/// UTC, microseconds, as everywhere in Hookscope's output) and `delay_secs`.
impl Serialize for Attempt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Attempt", 4)?;
        st.serialize_field("number", &self.number)?;
        st.serialize_field("retry", &self.retry())?;
        st.serialize_field(
            "at",
            &self.at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        )?;
        st.serialize_field("delay_secs", &self.delay.as_secs_f64())?;
        st.end()
    }
}

impl Attempt {
    /// Which retry this is (1 for the first retry).
    pub fn retry(&self) -> u32 {
        self.number.saturating_sub(1)
    }
}

/// The future of a failed delivery, assuming every retry fails the same way.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    #[serde(serialize_with = "as_rfc3339_micros")]
    pub first_failure: DateTime<Utc>,
    /// The retries, in order (attempt numbers 2, 3, ...).
    pub retries: Vec<Attempt>,
    /// The end of the retry window.
    #[serde(serialize_with = "as_rfc3339_micros")]
    pub window_end: DateTime<Utc>,
    /// When the message is discarded: the failure of the last retry (or the first failure if
    /// there is no retry).
    #[serde(serialize_with = "as_rfc3339_micros")]
    pub discard_at: DateTime<Utc>,
}

/// The retry schedule. `Schedule::default()` is the contract's.
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub delays: Vec<Duration>,
    pub steady: Duration,
    pub window: Duration,
    /// How many times faster than real time the caller's clock runs: 1 for the real service,
    /// more for the emulator's demo clock. `delays`, `steady` and `window` are already divided
    /// by it; a Retry-After, which the caller reads on its own clock, is divided by it when used.
    pub speed: f64,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule {
            delays: RETRY_DELAYS.to_vec(),
            steady: STEADY_DELAY,
            window: RETRY_WINDOW,
            speed: 1.0,
        }
    }
}

fn delta(d: Duration) -> TimeDelta {
    TimeDelta::from_std(d).unwrap_or(TimeDelta::MAX)
}

/// The most attempts the contract's schedule makes for one delivery: the first call and every
/// retry in the 2-day window (a Retry-After only spaces them further apart).
pub fn max_attempts() -> u32 {
    static MAX: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        let plan = Schedule::default().plan(DateTime::<Utc>::UNIX_EPOCH, None);
        plan.retries.last().map_or(1, |a| a.number)
    })
}

impl Schedule {
    /// The schedule's delay before retry `n` (1-based: 1 is the first retry).
    pub fn delay_before_retry(&self, n: u32) -> Duration {
        let i = n.max(1) as usize - 1;
        self.delays.get(i).copied().unwrap_or(self.steady)
    }

    /// The delay before retry `n` after an answer that carried `retry_after`.
    pub fn effective_delay(&self, n: u32, retry_after: Option<Duration>) -> Duration {
        let d = self.delay_before_retry(n);
        let speed = if self.speed.is_finite() && self.speed > 0.0 {
            self.speed
        } else {
            1.0
        };
        // A Retry-After may ask for more than a Duration can hold once divided: it is then
        // simply past any window.
        retry_after.map_or(d, |ra| {
            Duration::try_from_secs_f64(ra.as_secs_f64() / speed)
                .unwrap_or(Duration::MAX)
                .max(d)
        })
    }

    /// The least time from the first failure to attempt `attempt` on this schedule: the sum of
    /// the delays before it (a Retry-After only lengthens them). A delivery first seen at a
    /// later attempt began at least this long before it.
    pub fn least_time_to(&self, attempt: u32) -> Duration {
        // Past the window's attempts the sum is past the window: no need to count further.
        let last = attempt.min(super::max_attempts().saturating_add(1));
        (1..last).map(|n| self.effective_delay(n, None)).sum()
    }

    pub fn window_end(&self, first_failure: DateTime<Utc>) -> DateTime<Utc> {
        first_failure
            .checked_add_signed(delta(self.window))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// When the attempt after `failed_attempt` (which failed at `failed_at`) is due, or `None`
    /// when it would fall outside the window that started at `first_failure`: the message is then
    /// discarded.
    pub fn next_attempt(
        &self,
        first_failure: DateTime<Utc>,
        failed_attempt: u32,
        failed_at: DateTime<Utc>,
        retry_after: Option<Duration>,
    ) -> Option<Attempt> {
        let delay = self.effective_delay(failed_attempt.max(1), retry_after);
        // Beyond the calendar is beyond the window.
        let at = failed_at.checked_add_signed(delta(delay))?;
        (at <= self.window_end(first_failure)).then_some(Attempt {
            number: failed_attempt.max(1) + 1,
            at,
            delay,
        })
    }

    /// Every retry after a first failure at `first_failure`, if each one fails at once with the
    /// same answer (carrying `retry_after` or not). A Retry-After of seconds delays every retry
    /// alike; a date delays them until it has passed, and no further.
    pub fn plan(&self, first_failure: DateTime<Utc>, retry_after: Option<RetryAfter>) -> Plan {
        self.plan_from(first_failure, 1, first_failure, retry_after)
    }

    /// The rest of a plan, from attempt `failed_attempt` that failed at `failed_at`.
    pub fn plan_from(
        &self,
        first_failure: DateTime<Utc>,
        failed_attempt: u32,
        failed_at: DateTime<Utc>,
        retry_after: Option<RetryAfter>,
    ) -> Plan {
        self.plan_from_taking(
            first_failure,
            failed_attempt,
            failed_at,
            retry_after,
            Duration::ZERO,
        )
    }

    /// [`Schedule::plan_from`] with every retry failing `took` after it is made (an answer
    /// held that long, or a time-out: the service's 30 s) rather than at once: each delay then
    /// counts from that failure, so fewer retries fit in the window (189 attempts in all for
    /// a receiver that never answers, where 195 fail at once).
    pub fn plan_from_taking(
        &self,
        first_failure: DateTime<Utc>,
        failed_attempt: u32,
        failed_at: DateTime<Utc>,
        retry_after: Option<RetryAfter>,
        took: Duration,
    ) -> Plan {
        let mut retries: Vec<Attempt> = Vec::new();
        let (mut n, mut at) = (failed_attempt.max(1), failed_at);
        // Bounded: every step moves at least the smallest delay forward in a finite window.
        while let Some(next) =
            self.next_attempt(first_failure, n, at, retry_after.map(|r| r.wait_from(at)))
        {
            retries.push(next);
            n = next.number;
            at = next.at.checked_add_signed(delta(took)).unwrap_or(next.at);
            if (next.delay.is_zero() && took.is_zero()) || retries.len() > 100_000 {
                break;
            }
        }
        Plan {
            first_failure,
            discard_at: retries.last().map_or(failed_at, |_| at),
            window_end: self.window_end(first_failure),
            retries,
        }
    }
}

/// A Retry-After header's value (RFC 9110, 10.2.3): a number of seconds, or an HTTP date.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryAfter {
    /// `delay-seconds`: wait this long after the answer.
    Wait(Duration),
    /// An `HTTP-date`: not before this time. Once it has passed it asks for no wait.
    Until(DateTime<Utc>),
}

impl RetryAfter {
    /// Parse a header value: delay-seconds (digits only: no sign, no fraction) or an HTTP date
    /// in any of the three forms a recipient must accept (`Sun, 06 Nov 1994 08:49:37 GMT`,
    /// `Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`). Surrounding whitespace is
    /// not part of a field value and is ignored.
    pub fn parse(value: &str) -> Option<RetryAfter> {
        let value = value.trim();
        if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
            // More seconds than fit in a u64 is as good as forever.
            let secs = value.parse::<u64>().unwrap_or(u64::MAX);
            return Some(RetryAfter::Wait(Duration::from_secs(secs)));
        }
        // The RFC 850 form read here, whole: httpdate's fixed pivot at 70 would read a date
        // whose weekday is not ours as the century before's.
        let now = Utc::now();
        if read_rfc850(value, now).is_some() {
            return parse_rfc850(value, now).map(RetryAfter::Until);
        }
        let at = httpdate::parse_http_date(value).ok()?;
        Some(RetryAfter::Until(DateTime::<Utc>::from(at)))
    }

    /// `value` as a Retry-After header is sent: the seconds' digits, or the date in the one
    /// form a sender must write (IMF-fixdate, RFC 9110 5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`).
    /// A date given in one of the obsolete forms a recipient must still read
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`, `Sun Nov  6 08:49:37 1994`) is taken, and sent
    /// rewritten: it had gone out as typed. Surrounding whitespace is left out; a value that is
    /// not a Retry-After is given back as it is (trimmed).
    pub fn sent_form(value: &str) -> std::borrow::Cow<'_, str> {
        let value = value.trim();
        match RetryAfter::parse(value) {
            Some(RetryAfter::Until(at)) => {
                let written = imf_fixdate(at);
                if written == value {
                    value.into()
                } else {
                    written.into()
                }
            }
            _ => value.into(),
        }
    }

    /// What to tell whoever gave `value` as a Retry-After: why it is not one where that is
    /// known, and what to give instead (once: a reason that says what to give is not followed
    /// by the general advice as well).
    pub fn refusal(value: &str) -> String {
        let general = format!(
            "give whole seconds (120) or an HTTP date ({})",
            crate::text::example_http_date()
        );
        match RetryAfter::why_refused(value) {
            Some((why, true)) => why,
            Some((why, false)) => format!("{why}; {general}"),
            None => general,
        }
    }

    /// Why `value` is not a Retry-After, when there is more to say than "give seconds or an
    /// HTTP date": a sign, a fraction, a date whose weekday is not its date's, a date in
    /// another zone than GMT, a leap second. `None` when it parses, or when nothing more
    /// specific is known.
    pub fn why_not(value: &str) -> Option<String> {
        RetryAfter::why_refused(value).map(|(why, _)| why)
    }

    /// [`RetryAfter::why_not`], and whether the reason says what to give instead.
    fn why_refused(value: &str) -> Option<(String, bool)> {
        let v = value.trim();
        if RetryAfter::parse(v).is_some() {
            return None;
        }
        let said = |why: &str| Some((why.to_owned(), true));
        let only = |why: String| Some((why, false));
        if v.is_empty() {
            return only("it is empty".into());
        }
        let number = v.strip_prefix(['-', '+']).unwrap_or(v);
        if number.parse::<f64>().is_ok_and(f64::is_finite)
            && number.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        {
            if v.starts_with('-') {
                return said("a wait cannot be negative: give 0 or more seconds");
            }
            if v.starts_with('+') {
                return said("the seconds take no sign: give the digits alone");
            }
            return only("the seconds must be a whole number (no fraction)".into());
        }
        // The obsolete RFC 850 form, `Sunday, 06-Nov-94 08:49:37 GMT`: its date read, its
        // weekday not the date's.
        if let Some((at, weekday)) = read_rfc850(v, Utc::now()) {
            // The right day, by its short name: this form takes the whole one (it had been
            // told "6 Nov 1994 is a Sunday, not \"Sun\"").
            if at.format("%a").to_string() == weekday {
                return only(format!(
                    "a date with a two-digit year (06-Nov-94) takes the weekday's whole name: \"{}\", not \"{weekday}\"",
                    at.format("%A")
                ));
            }
            return only(format!(
                "{} is a {}, not \"{weekday}\" (the weekday must match the date)",
                at.format("%-d %b %Y"),
                at.format("%A")
            ));
        }
        // The asctime form with a day under 10 after one space (`Sun Nov 6 …`): HTTP writes
        // it after two, or with its 0.
        if let [_, month, day, _, _] = v.split_whitespace().collect::<Vec<_>>().as_slice()
            && MONTHS.contains(month)
            && day.len() == 1
            && day.bytes().all(|b| b.is_ascii_digit())
            && v.contains(&format!("{month} {day} "))
        {
            return only(format!(
                "in this form a day under 10 takes two spaces before it, or a 0: \"{month}  {day}\" or \"{month} 0{day}\""
            ));
        }
        // A day its month does not have (30 Feb), in any of the three forms: it had been told
        // only to give seconds or a date.
        if let Some(why) = no_such_day(v, Utc::now()) {
            return only(why);
        }
        // IMF-fixdate, `Sun, 22 Nov 2026 14:00:00 GMT`: the form everyone writes.
        let (day, rest) = v.split_once(", ")?;
        let (stamp, zone) = rest.rsplit_once(' ')?;
        // Second 60, a leap second, which an HTTP date cannot name (it had been told its
        // letters' case was wrong).
        if stamp.ends_with(":60") {
            return said(
                "second 60 (a leap second) is not a time an HTTP date can name: give second 59, or 00 of the next minute",
            );
        }
        let at = chrono::NaiveDateTime::parse_from_str(stamp, "%d %b %Y %H:%M:%S").ok()?;
        let written = imf_fixdate(at.and_utc());
        // Written as it should be, letter for letter: a date before 1970, which HTTP dates
        // are not read before (it would be a date passed, asking for no wait).
        if v == written {
            return said("an HTTP date before 1970 is not read: give one to come, or seconds");
        }
        // Right but for its letters' case: the names of an HTTP date are case-sensitive.
        if v.eq_ignore_ascii_case(&written) {
            return only(format!(
                "an HTTP date's names are written as \"{written}\" (they are case-sensitive)"
            ));
        }
        if zone != "GMT" {
            return only(format!(
                "an HTTP date is always in GMT and ends with \"GMT\", not \"{zone}\""
            ));
        }
        let weekday = at.format("%a").to_string();
        if day != weekday {
            return only(format!(
                "{} is a {}, not \"{day}\" (the weekday must match the date)",
                at.format("%-d %b %Y"),
                at.format("%A")
            ));
        }
        None
    }

    /// The wait it asks for from `t`.
    pub fn wait_from(self, t: DateTime<Utc>) -> Duration {
        match self {
            RetryAfter::Wait(d) => d,
            RetryAfter::Until(at) => (at - t).to_std().unwrap_or(Duration::ZERO),
        }
    }
}

/// How one delivery's answers' Retry-After read on an emulator's clock (the emulator plans by
/// it, and the window reads the emulator's calls by it).
///
/// The receiver writes a date on this machine's clock, while the delivery runs on the
/// emulator's, which may run faster. A date is read by its distance from when the answer came
/// (a date 10 minutes off holds the retry 10 emulated minutes), and the emulated time it names
/// is remembered: an answer that carries the same date again names the same time, which has
/// then passed, so a plan whose answers all carry one date waits for it once and then follows
/// the schedule, as the service would (read afresh, the date would still be 10 real minutes
/// off after 10 s of a 60x clock, and every retry would wait again). A receiver that writes a
/// new date each time ("10 minutes from now") gets each read afresh, as the service would.
#[derive(Clone, Debug, Default)]
pub struct RetryDates {
    /// The last date seen and the emulated time it was read as.
    last: Option<(DateTime<Utc>, DateTime<Utc>)>,
}

impl RetryDates {
    /// The wait `ra` asks for from an answer that came at `real_now` on this machine's clock
    /// and `emulated_now` on the emulator's.
    pub fn wait(
        &mut self,
        ra: RetryAfter,
        real_now: DateTime<Utc>,
        emulated_now: DateTime<Utc>,
    ) -> Duration {
        let RetryAfter::Until(date) = ra else {
            return ra.wait_from(real_now);
        };
        let at = match self.last {
            Some((seen, at)) if seen == date => at,
            _ => {
                let at = emulated_now
                    .checked_add_signed(
                        chrono::TimeDelta::from_std(ra.wait_from(real_now))
                            .unwrap_or(chrono::TimeDelta::MAX),
                    )
                    .unwrap_or(DateTime::<Utc>::MAX_UTC);
                self.last = Some((date, at));
                at
            }
        };
        (at - emulated_now).to_std().unwrap_or(Duration::ZERO)
    }
}

/// `at` as an HTTP date is written (IMF-fixdate, always GMT): `Sun, 06 Nov 1994 08:49:37 GMT`.
pub fn imf_fixdate(at: DateTime<Utc>) -> String {
    at.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

/// Parse a Retry-After header value: delay-seconds or an HTTP-date (relative to `now`).
/// A date in the past means no wait.
pub fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    RetryAfter::parse(value).map(|r| r.wait_from(now))
}

/// The month names of an HTTP date, January first (they are case-sensitive).
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

/// Why a value shaped as an HTTP date (any of its three forms) names no day: `there is no
/// 30 Feb 2026 (February 2026 has 28 days)`. `None` when its day is one its month has, or
/// when it is not shaped as a date.
fn no_such_day(value: &str, now: DateTime<Utc>) -> Option<String> {
    let words: Vec<&str> = value.split_whitespace().collect();
    let (day, month, year) = match words.as_slice() {
        // `Sun, 30 Feb 2026 14:00:00 GMT`
        [_, day, month, year, _, _] => (*day, *month, digits(year)?),
        // `Sunday, 30-Feb-26 14:00:00 GMT`
        [_, date, _, _] => {
            let mut parts = date.split('-');
            let (day, month, yy) = (parts.next()?, parts.next()?, parts.next()?);
            parts.next().is_none().then_some(())?;
            (day, month, rfc850_year(yy, now)?)
        }
        // `Sun Feb 30 14:00:00 2026`
        [_, month, day, _, year] => (*day, *month, digits(year)?),
        _ => return None,
    };
    if day.is_empty() || !day.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number = u32::try_from(MONTHS.iter().position(|m| *m == month)? + 1).ok()?;
    let first = chrono::NaiveDate::from_ymd_opt(year, number, 1)?;
    let days = first
        .checked_add_months(chrono::Months::new(1))?
        .signed_duration_since(first)
        .num_days();
    let n: i64 = day.parse().ok()?;
    (n == 0 || n > days).then(|| {
        format!(
            "there is no {n} {month} {year} ({} {year} has {days} days)",
            first.format("%B")
        )
    })
}

/// A year of digits alone (no sign: `+2026` is not one).
fn digits(year: &str) -> Option<i32> {
    year.bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| year.parse().ok())
        .flatten()
}

/// The year an RFC 850 date's two digits name, seen from `now` (RFC 9110, 5.6.7): in the
/// century of `now`, unless that is more than 50 years ahead, then in the one before.
fn rfc850_year(yy: &str, now: DateTime<Utc>) -> Option<i32> {
    use chrono::Datelike;
    if yy.len() != 2 || !yy.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let this_year = now.year();
    let year = this_year - this_year.rem_euclid(100) + yy.parse::<i32>().ok()?;
    Some(if year > this_year + 50 {
        year - 100
    } else {
        year
    })
}

/// An HTTP date in the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`), its two-digit
/// year read as RFC 9110 (5.6.7) asks: in the century of `now`, unless that is more than 50
/// years ahead, then in the one before (in 2026, `76` is 2076 and `77` 1977; a fixed pivot at
/// 70 had read 2070-2076 as 1970-1976, a date passed). `None` for another form, or a date whose
/// weekday is not its own.
fn parse_rfc850(value: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    let (at, weekday) = read_rfc850(value, now)?;
    (at.format("%A").to_string() == weekday).then(|| at.and_utc())
}

/// The date of a value in the RFC 850 form, whatever its weekday, and that weekday as written;
/// `None` for a value of another form.
fn read_rfc850(value: &str, now: DateTime<Utc>) -> Option<(chrono::NaiveDateTime, &str)> {
    let (weekday, rest) = value.split_once(", ")?;
    let (date, time) = rest.strip_suffix(" GMT")?.split_once(' ')?;
    let mut parts = date.split('-');
    let (day, month, yy) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    // The names are case-sensitive; no leap second (the other forms take none either).
    if !MONTHS.contains(&month) || day.len() != 2 || time.ends_with(":60") {
        return None;
    }
    let year = rfc850_year(yy, now)?;
    let at = chrono::NaiveDateTime::parse_from_str(
        &format!("{day} {month} {year} {time}"),
        "%d %b %Y %H:%M:%S",
    )
    .ok()?;
    Some((at, weekday))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9110's reading of a two-digit year: no more than 50 years ahead of now.
    #[test]
    fn an_rfc_850_date_takes_the_year_no_more_than_50_years_ahead() {
        let now = t0();
        let at = |v: &str| parse_rfc850(v, now).map(|t| t.to_rfc3339());
        assert_eq!(
            at("Sunday, 06-Nov-94 08:49:37 GMT").as_deref(),
            Some("1994-11-06T08:49:37+00:00")
        );
        // 2076 is 50 years after 2026: this century. 2077 would be 51: the last one.
        assert_eq!(
            at("Wednesday, 01-Jan-76 00:00:00 GMT").as_deref(),
            Some("2076-01-01T00:00:00+00:00")
        );
        assert_eq!(
            at("Saturday, 01-Jan-77 00:00:00 GMT").as_deref(),
            Some("1977-01-01T00:00:00+00:00")
        );
        assert_eq!(
            at("Wednesday, 31-Dec-70 00:00:00 GMT").as_deref(),
            Some("2070-12-31T00:00:00+00:00")
        );
        assert_eq!(
            at("Monday, 23-Nov-26 14:00:00 GMT").as_deref(),
            Some("2026-11-23T14:00:00+00:00")
        );
        // A weekday that is not the date's, a name in the wrong case, another form: not this.
        assert_eq!(at("Thursday, 01-Jan-76 00:00:00 GMT"), None);
        assert_eq!(at("wednesday, 01-Jan-76 00:00:00 GMT"), None);
        assert_eq!(at("Wednesday, 01-jan-76 00:00:00 GMT"), None);
        assert_eq!(at("Sun, 06 Nov 1994 08:49:37 GMT"), None);
        assert_eq!(at("Wednesday, 01-Jan-76 23:59:60 GMT"), None);
        // Through the header's own parsing: a date 50 years ahead is past the window, not a
        // date gone by; one whose weekday is the century before's is refused, not read as it
        // (httpdate's pivot at 70 would have).
        assert!(matches!(
            RetryAfter::parse("Wednesday, 01-Jan-76 00:00:00 GMT"),
            Some(RetryAfter::Until(t)) if t.format("%Y").to_string() == "2076"
        ));
        assert_eq!(RetryAfter::parse("Thursday, 01-Jan-76 00:00:00 GMT"), None);
    }

    fn t0() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-16T14:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }
    fn secs(s: u64) -> TimeDelta {
        TimeDelta::seconds(s as i64)
    }

    /// A date is sent in the one form a sender must write, whichever form it was given in;
    /// seconds as their digits; surrounding space left out.
    #[test]
    fn a_retry_after_is_sent_as_http_writes_it() {
        let sent = |v: &str| RetryAfter::sent_form(v).into_owned();
        let imf = "Sun, 06 Nov 1994 08:49:37 GMT";
        assert_eq!(sent(imf), imf);
        assert!(matches!(
            RetryAfter::sent_form(imf),
            std::borrow::Cow::Borrowed(_)
        ));
        assert_eq!(sent("Sunday, 06-Nov-94 08:49:37 GMT"), imf);
        assert_eq!(sent("Sun Nov  6 08:49:37 1994"), imf);
        assert_eq!(sent(" 120 "), "120");
        assert_eq!(sent("0120"), "0120");
        // Not a Retry-After: as it is, for the refusal to quote.
        assert_eq!(sent(" soon "), "soon");
    }

    #[test]
    fn a_refused_retry_after_says_what_is_wrong_with_it() {
        let why = |v: &str| RetryAfter::why_not(v);
        assert_eq!(why("120"), None);
        assert_eq!(why("Sun, 22 Nov 2026 14:00:00 GMT"), None);
        assert_eq!(
            why("Mon, 22 Nov 2026 14:00:00 GMT").as_deref(),
            Some("22 Nov 2026 is a Sunday, not \"Mon\" (the weekday must match the date)")
        );
        assert_eq!(
            why("Sun, 22 Nov 2026 14:00:00 UTC").as_deref(),
            Some("an HTTP date is always in GMT and ends with \"GMT\", not \"UTC\"")
        );
        // The weekday matches: the letters' case is what is wrong.
        assert_eq!(
            why("tue, 24 nov 2026 11:40:00 gmt").as_deref(),
            Some(
                "an HTTP date's names are written as \"Tue, 24 Nov 2026 11:40:00 GMT\" (they are case-sensitive)"
            )
        );
        assert!(why("-5").unwrap().contains("negative"));
        assert!(why("+5").unwrap().contains("no sign"));
        assert!(why("1.5").unwrap().contains("whole number"));
        assert!(why("  ").unwrap().contains("empty"));
        // Nothing more specific to say: the caller's general advice stands alone.
        assert_eq!(why("soon"), None);
        assert_eq!(why("Sun, 32 Jan 2026 14:00"), None);
        // A day its month does not have, in each of the three forms (it had been told only to
        // give seconds or a date); 29 Feb only in a leap year.
        for v in [
            "Thu, 30 Feb 2026 14:00:00 GMT",
            "Thursday, 30-Feb-26 14:00:00 GMT",
            "Thu Feb 30 14:00:00 2026",
        ] {
            assert_eq!(
                why(v).as_deref(),
                Some("there is no 30 Feb 2026 (February 2026 has 28 days)"),
                "{v}"
            );
        }
        assert_eq!(
            why("Sun, 31 Apr 2028 14:00:00 GMT").as_deref(),
            Some("there is no 31 Apr 2028 (April 2028 has 30 days)")
        );
        assert_eq!(
            why("Sun, 00 Dec 2026 14:00:00 GMT").as_deref(),
            Some("there is no 0 Dec 2026 (December 2026 has 31 days)")
        );
        assert!(why("Tue, 29 Feb 2028 14:00:00 GMT").is_none());
        assert_eq!(why("Thu, 30 Feb +2026 14:00:00 GMT"), None);
        assert!(
            why("Wed, 29 Feb 2028 14:00:00 GMT")
                .unwrap()
                .contains("Tuesday")
        );
        // A leap second is named as such, not as a matter of letter case; a date before 1970
        // as what it is, not as a leap second.
        assert_eq!(
            why("Sat, 31 Dec 2016 23:59:60 GMT").as_deref(),
            Some(
                "second 60 (a leap second) is not a time an HTTP date can name: give second 59, or 00 of the next minute"
            )
        );
        assert_eq!(
            why("Wed, 31 Dec 1969 23:59:59 GMT").as_deref(),
            Some("an HTTP date before 1970 is not read: give one to come, or seconds")
        );
        // The RFC 850 form's weekday by its short name; an asctime day after one space.
        assert_eq!(
            why("Sun, 06-Nov-94 08:49:37 GMT").as_deref(),
            Some(
                "a date with a two-digit year (06-Nov-94) takes the weekday's whole name: \"Sunday\", not \"Sun\""
            )
        );
        assert_eq!(
            why("Sun Nov 6 08:49:37 1994").as_deref(),
            Some(
                "in this form a day under 10 takes two spaces before it, or a 0: \"Nov  6\" or \"Nov 06\""
            )
        );
        assert_eq!(why("Sun Nov  6 08:49:37 1994"), None);
        // An RFC 850 date whose weekday is not its date's (in this century's reading).
        assert_eq!(
            why("Thursday, 01-Jan-76 00:00:00 GMT").as_deref(),
            Some("1 Jan 2076 is a Wednesday, not \"Thursday\" (the weekday must match the date)")
        );
        // Words a user typed that look like advice do not stand for it.
        assert!(
            RetryAfter::refusal("x: give, 22 Nov 2026 14:00:00 GMT")
                .contains("give whole seconds (120)")
        );
        // What to give is said once: a reason that says it is not followed by the general
        // advice too, which follows the others.
        assert_eq!(
            RetryAfter::refusal("-5"),
            "a wait cannot be negative: give 0 or more seconds"
        );
        let fraction = RetryAfter::refusal("1.5");
        assert!(
            fraction.starts_with(
                "the seconds must be a whole number (no fraction); give whole seconds (120) or an HTTP date ("
            ),
            "{fraction}"
        );
        assert!(RetryAfter::refusal("soon").starts_with("give whole seconds (120)"));
    }

    // One test per row of contract.md's retry table.

    #[test]
    fn row_1st_retry_90_seconds_after_the_failure() {
        let p = Schedule::default().plan(t0(), None);
        assert_eq!(p.retries[0].number, 2);
        assert_eq!(p.retries[0].retry(), 1);
        assert_eq!(p.retries[0].at, t0() + secs(90));
    }

    #[test]
    fn row_2nd_retry_3_minutes_after_the_1st() {
        let p = Schedule::default().plan(t0(), None);
        assert_eq!(p.retries[1].at - p.retries[0].at, secs(180));
    }

    #[test]
    fn row_3rd_retry_6_minutes_after_the_2nd() {
        let p = Schedule::default().plan(t0(), None);
        assert_eq!(p.retries[2].at - p.retries[1].at, secs(360));
    }

    #[test]
    fn row_4th_retry_12_minutes_after_the_3rd() {
        let p = Schedule::default().plan(t0(), None);
        assert_eq!(p.retries[3].at - p.retries[2].at, secs(720));
    }

    #[test]
    fn row_later_every_15_minutes_for_up_to_2_days() {
        let p = Schedule::default().plan(t0(), None);
        for w in p.retries[3..].windows(2) {
            assert_eq!(w[1].at - w[0].at, secs(900));
        }
        let last = p.retries.last().unwrap();
        assert!(last.at <= t0() + secs(2 * 86_400));
        assert!(last.at + secs(900) > t0() + secs(2 * 86_400));
        // 4 stepped retries (1350 s), then (172800 - 1350) / 900 = 190 more.
        assert_eq!(p.retries.len(), 194);
        assert_eq!(last.number, 195);
        assert_eq!(last.at, t0() + secs(1350 + 190 * 900));
        assert_eq!(max_attempts(), 195);
    }

    #[test]
    fn row_retries_exhausted_discards() {
        let s = Schedule::default();
        let p = s.plan(t0(), None);
        let last = p.retries.last().unwrap();
        assert_eq!(p.discard_at, last.at);
        assert_eq!(s.next_attempt(t0(), last.number, last.at, None), None);
        assert_eq!(p.window_end, t0() + secs(172_800));
    }

    #[test]
    fn retry_after_longer_than_the_schedule_wins() {
        let s = Schedule::default();
        let p = s.plan(t0(), Some(RetryAfter::Wait(Duration::from_secs(300))));
        assert_eq!(p.retries[0].at, t0() + secs(300));
        assert_eq!(p.retries[1].at - p.retries[0].at, secs(300));
        assert_eq!(
            p.retries[2].at - p.retries[1].at,
            secs(360),
            "schedule wins"
        );
    }

    #[test]
    fn retry_after_shorter_than_the_schedule_does_not_hasten() {
        let p = Schedule::default().plan(t0(), Some(RetryAfter::Wait(Duration::from_secs(10))));
        assert_eq!(p.retries[0].at, t0() + secs(90));
    }

    #[test]
    fn retry_after_past_the_window_discards_at_once() {
        let p = Schedule::default().plan(
            t0(),
            Some(RetryAfter::Wait(Duration::from_secs(3 * 86_400))),
        );
        assert!(p.retries.is_empty());
        assert_eq!(p.discard_at, t0());
    }

    #[test]
    fn a_later_attempt_is_at_least_its_delays_after_the_first_failure() {
        let s = Schedule::default();
        assert_eq!(s.least_time_to(1), Duration::ZERO);
        assert_eq!(s.least_time_to(2), Duration::from_secs(90));
        assert_eq!(
            s.least_time_to(5),
            Duration::from_secs(90 + 180 + 360 + 720)
        );
        // Attempt 195 is the last the window holds; any later one is past it.
        let last = s.least_time_to(195);
        assert_eq!(last, Duration::from_secs(47 * 3600 + 52 * 60 + 30));
        assert!(s.least_time_to(196) > s.window);
        assert_eq!(s.least_time_to(u32::MAX), s.least_time_to(196));
        // Planned from there, the last attempt has no retry left, and attempt 65 has 130.
        let t = t0() + TimeDelta::from_std(last).unwrap();
        assert!(s.plan_from(t0(), 195, t, None).retries.is_empty());
        let t65 = t0() + TimeDelta::from_std(s.least_time_to(65)).unwrap();
        assert_eq!(s.plan_from(t0(), 65, t65, None).retries.len(), 130);
    }

    #[test]
    fn retries_that_each_time_out_fit_fewer_in_the_window() {
        // Every attempt fails 30 s after it is made (no answer): each delay counts from then.
        let s = Schedule::default();
        let took = Duration::from_secs(30);
        let p = s.plan_from_taking(t0(), 1, t0(), None, took);
        assert_eq!(p.retries[0].at, t0() + TimeDelta::seconds(90));
        assert_eq!(p.retries[1].at, t0() + TimeDelta::seconds(90 + 30 + 180));
        let last = p.retries.last().unwrap();
        assert_eq!(last.number, 189);
        assert_eq!(
            last.at,
            t0() + TimeDelta::seconds(1350 + 900 * 184 + 30 * 187)
        );
        assert!(last.at <= p.window_end);
        // Discarded when the last one fails.
        assert_eq!(p.discard_at, last.at + TimeDelta::seconds(30));
        // Failing at once, the plain plan.
        assert_eq!(
            s.plan_from_taking(t0(), 1, t0(), None, Duration::ZERO),
            s.plan(t0(), None)
        );
    }

    #[test]
    fn plan_from_a_later_attempt_keeps_the_first_failure_window() {
        let s = Schedule::default();
        let full = s.plan(t0(), None);
        let third = full.retries[1];
        let rest = s.plan_from(t0(), third.number, third.at, None);
        assert_eq!(rest.retries, full.retries[2..].to_vec());
    }

    #[test]
    fn retry_after_parses_seconds_and_dates() {
        let now = t0();
        assert_eq!(
            parse_retry_after("120", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Mon, 16 Nov 2026 14:02:00 GMT", now),
            Some(Duration::from_secs(120))
        );
        assert_eq!(
            parse_retry_after("Mon, 16 Nov 2026 13:00:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-5", now), None);
        // Digits only: no sign, no fraction; whitespace around a field value is not part of it.
        assert_eq!(parse_retry_after("+120", now), None);
        assert_eq!(parse_retry_after("1.5", now), None);
        assert_eq!(parse_retry_after("", now), None);
        assert_eq!(
            parse_retry_after(" 120 ", now),
            Some(Duration::from_secs(120))
        );
        // The two obsolete date forms HTTP recipients must still accept.
        for old_form in ["Monday, 16-Nov-26 14:02:00 GMT", "Mon Nov 16 14:02:00 2026"] {
            assert_eq!(
                parse_retry_after(old_form, now),
                Some(Duration::from_secs(120)),
                "{old_form}"
            );
        }
    }

    #[test]
    fn a_retry_after_too_large_for_any_clock_is_past_the_window_not_a_panic() {
        let s = Schedule::default();
        for value in [
            "9223372036854775807",
            "18446744073709551615",
            "99999999999999999999999",
        ] {
            let ra = RetryAfter::parse(value).expect(value);
            let p = s.plan(t0(), Some(ra));
            assert!(p.retries.is_empty(), "{value}");
            assert_eq!(
                s.next_attempt(t0(), 1, t0(), Some(ra.wait_from(t0()))),
                None
            );
        }
        let slow = Schedule {
            speed: 0.5,
            ..Schedule::default()
        };
        assert_eq!(
            slow.effective_delay(1, Some(Duration::MAX)),
            Duration::MAX,
            "a slow clock stretches it past what a Duration holds"
        );
    }

    #[test]
    fn a_retry_after_date_delays_the_retries_until_it_has_passed() {
        // Every answer carries the same date, 2 hours after the first failure: the first retry
        // waits for it; the date has passed by the next answer, so the schedule resumes.
        let s = Schedule::default();
        let date = RetryAfter::parse("Mon, 16 Nov 2026 16:00:00 GMT").unwrap();
        let p = s.plan(t0(), Some(date));
        assert_eq!(p.retries[0].at, t0() + secs(2 * 3600));
        assert_eq!(p.retries[1].at - p.retries[0].at, secs(180));
        assert_eq!(p.retries[2].at - p.retries[1].at, secs(360));
        // Seconds, by contrast, delay every retry alike.
        let p = s.plan(t0(), Some(RetryAfter::Wait(Duration::from_secs(2 * 3600))));
        assert_eq!(p.retries[1].at - p.retries[0].at, secs(2 * 3600));
    }
}

#[cfg(test)]
mod retry_dates_tests {
    use super::*;

    fn t(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    /// A 60x clock: 10 real seconds after 14:00:00 real, the emulator is 10 minutes on.
    const REAL_0: &str = "2026-11-23T14:00:00Z";
    const EMU_0: &str = "2026-11-25T08:00:00Z";

    #[test]
    fn a_date_is_read_by_its_distance_from_the_answer() {
        let mut d = RetryDates::default();
        let ra = RetryAfter::Until(t("2026-11-23T14:10:00Z"));
        assert_eq!(d.wait(ra, t(REAL_0), t(EMU_0)), Duration::from_secs(600));
    }

    #[test]
    fn the_same_date_again_has_passed_on_the_emulators_clock() {
        let mut d = RetryDates::default();
        let ra = RetryAfter::Until(t("2026-11-23T14:10:00Z"));
        assert_eq!(d.wait(ra, t(REAL_0), t(EMU_0)), Duration::from_secs(600));
        // The retry came 10 emulated minutes (10 real seconds) later and was answered with the
        // same date: waited for once, it asks for nothing more.
        assert_eq!(
            d.wait(ra, t("2026-11-23T14:00:10Z"), t("2026-11-25T08:10:00Z")),
            Duration::ZERO
        );
        // Answered with it again while it had not yet passed (a retry that came early):
        // only what is left of it.
        let mut d = RetryDates::default();
        d.wait(ra, t(REAL_0), t(EMU_0));
        assert_eq!(
            d.wait(ra, t("2026-11-23T14:00:04Z"), t("2026-11-25T08:04:00Z")),
            Duration::from_secs(360)
        );
    }

    #[test]
    fn a_new_date_each_time_is_read_afresh() {
        let mut d = RetryDates::default();
        let first = RetryAfter::Until(t("2026-11-23T14:10:00Z"));
        assert_eq!(d.wait(first, t(REAL_0), t(EMU_0)), Duration::from_secs(600));
        // "10 minutes from now" again, 10 real seconds later.
        let second = RetryAfter::Until(t("2026-11-23T14:10:10Z"));
        assert_eq!(
            d.wait(second, t("2026-11-23T14:00:10Z"), t("2026-11-25T08:10:00Z")),
            Duration::from_secs(600)
        );
    }

    #[test]
    fn seconds_and_past_dates_are_unchanged() {
        let mut d = RetryDates::default();
        assert_eq!(
            d.wait(
                RetryAfter::Wait(Duration::from_secs(120)),
                t(REAL_0),
                t(EMU_0)
            ),
            Duration::from_secs(120)
        );
        assert_eq!(
            d.wait(
                RetryAfter::Until(t("1994-11-06T08:49:37Z")),
                t(REAL_0),
                t(EMU_0)
            ),
            Duration::ZERO
        );
        // A date too far for the calendar does not overflow.
        assert!(
            d.wait(
                RetryAfter::Until(DateTime::<Utc>::MAX_UTC),
                t(REAL_0),
                t(EMU_0)
            ) > Duration::from_secs(1 << 40)
        );
    }
}
