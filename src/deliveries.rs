//! Deliveries: the attempts that carry one delivery id (for one webhook), read against the
//! contract's schedule: the state in plain words, the projected future, and anomalies.

use crate::contract::{Finding, Outcome, Plan, RetryAfter, RetryDates, Schedule, Severity};
use crate::store::{Cancel, Stored};
use crate::text::human_duration;
use chrono::{DateTime, Local, TimeDelta, Utc};
use std::time::Duration;

/// How much earlier than the schedule a retry may come before it is a finding.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(5);

/// How early a retry may come before it counts as too early, for `schedule`: the default
/// tolerance, shortened by a fast clock along with the schedule, but never under half a second
/// (the emulator's timers and the network still take real time).
pub fn tolerance_for(schedule: &Schedule) -> Duration {
    if schedule.speed.is_finite() && schedule.speed > 1.0 {
        DEFAULT_TOLERANCE
            .div_f64(schedule.speed)
            .max(Duration::from_millis(500))
    } else {
        DEFAULT_TOLERANCE
    }
}

/// One observed attempt.
#[derive(Clone, Debug, PartialEq)]
pub struct Observed {
    pub id: i64,
    pub number: Option<u32>,
    pub at: DateTime<Utc>,
    /// Since the attempt before.
    pub gap: Option<Duration>,
    /// The same gap on the clock of the Hookscope emulator that made the call, when it ran
    /// faster than real time: from the times the calls carry, or else from the speed this call
    /// is marked with. `None` on real time (and for calls no emulator marked).
    pub clock_gap: Option<Duration>,
    pub status: u16,
    pub outcome: Outcome,
    /// The Retry-After the answer carried, if the service honours it with that answer.
    pub retry_after: Option<RetryAfter>,
    /// No answer reached the caller in time: the service retries whatever the code.
    pub unanswered: bool,
}

impl Observed {
    /// The gap before this attempt (`None` for the first): in real time, and on the clock of
    /// the emulator that made it when that ran faster, or else on a clock `read_at` times
    /// faster than real time (the speed a reader chose): `1.5 s (1 min 30 s on its clock)`.
    pub fn gap_text(&self, read_at: f64) -> Option<String> {
        let real = crate::text::human_duration(self.gap?);
        Some(match self.clock_gap_at(read_at) {
            Some(c) => format!("{real} ({} on its clock)", crate::text::human_duration(c)),
            None => real,
        })
    }

    /// [`Observed::gap_text`] in few words, for a narrow table: the gap on the clock it is read
    /// on alone (`1 min 30 s`), or in real time where there is no other clock.
    pub fn gap_text_short(&self, read_at: f64) -> Option<String> {
        let gap = self.gap?;
        Some(crate::text::human_duration(
            self.clock_gap_at(read_at).unwrap_or(gap),
        ))
    }

    /// The gap on the emulator's clock that made the call, or else on a clock `read_at` times
    /// faster than real time; `None` on real time.
    fn clock_gap_at(&self, read_at: f64) -> Option<Duration> {
        let gap = self.gap?;
        self.clock_gap
            .or_else(|| (read_at.is_finite() && read_at > 1.0).then(|| gap.mul_f64(read_at)))
    }

    /// The answer, with the Retry-After that moved the next attempt when the service honours
    /// it: `503, Retry-After 2 min`, `503, Retry-After until 23 Nov 14:10:00` (local time).
    pub fn answer_text(&self) -> String {
        match self.retry_after {
            // To the second, as the banner and `schedule` say a wait someone asked for.
            Some(RetryAfter::Wait(w)) => {
                format!(
                    "{}, Retry-After {}",
                    self.status,
                    crate::text::wait_words(w)
                )
            }
            Some(RetryAfter::Until(t)) => format!(
                "{}, Retry-After until {}",
                self.status,
                t.with_timezone(&Local).format("%-d %b %H:%M:%S")
            ),
            None => self.status.to_string(),
        }
    }
}

/// Read the delivery `delivery` of `webhook_id` from `store` and analyse it against `schedule`:
/// the clock its retries to come follow when `clock_known` (the built-in emulator's, at its
/// speed now), or else `schedule` unless the calls name the clock they followed. A message
/// retried on its own after a failed batch starts with the batch call that carried it. `None`
/// when the store has no call of it.
pub fn load(
    store: &crate::store::Store,
    delivery: &str,
    webhook_id: Option<&str>,
    schedule: Schedule,
    clock_known: bool,
) -> Result<Option<Delivery>, crate::store::StoreError> {
    let calls = store.by_delivery(delivery, webhook_id)?;
    // A message retried on its own after a failed batch: the batch call was its first attempt.
    let retried_alone = calls
        .first()
        .and_then(|c| c.inv.attempt)
        .is_some_and(|a| a > 1);
    let calls = match batch_parent(delivery).filter(|_| retried_alone) {
        Some(parent) => with_batch_calls(calls, store.by_delivery(parent, webhook_id)?),
        None => calls,
    };
    // On the clock the calls say they followed, when a Hookscope emulator made them.
    let schedule = if clock_known {
        schedule
    } else {
        schedule_for(&calls, schedule)
    };
    let cancels = match webhook_id {
        Some(w) => store.cancels(w)?,
        None => Vec::new(),
    };
    let tolerance = tolerance_for(&schedule);
    let Some(mut d) = analyze(&calls, &schedule, tolerance, &cancels) else {
        return Ok(None);
    };
    // Named as asked, not after its first call: a message retried on its own starts with the
    // batch call, which carries the batch's delivery id.
    d.delivery = delivery.to_owned();
    // A failed batch is not called again: its messages are, each on its own. Once one of them
    // is seen, the batch reads as split, with where each message stands.
    let batch = calls.last().and_then(|c| c.inv.messages).unwrap_or(0);
    if !retried_alone && batch > 1 && matches!(d.state, State::Retrying { .. }) {
        let mut parts = Vec::new();
        // MANY carries at most 10 messages a call.
        for n in 1..=batch.min(10) {
            let part = format!("{delivery}-{n}");
            let own = store.by_delivery(&part, webhook_id)?;
            let state = if own.is_empty() {
                None
            } else {
                let own = with_batch_calls(own, calls.clone());
                analyze(&own, &schedule, tolerance, &cancels).map(|p| p.state)
            };
            parts.push((part, state));
        }
        if parts.iter().any(|(_, s)| s.is_some()) {
            d.state = State::Split {
                messages: batch,
                parts,
            };
            d.projection = None;
        }
    }
    Ok(Some(d))
}

/// Where a delivery stands.
#[derive(Clone, Debug, PartialEq)]
pub enum State {
    Succeeded {
        /// The number its call carried (`None` when the call named none).
        attempt: Option<u32>,
    },
    FailedPermanently {
        attempt: u32,
    },
    WebhookCancelled {
        attempt: u32,
    },
    /// Its webhook was answered 410 by another delivery's call at `at` while this one was
    /// retrying: the service stops calling the webhook, so no retry of this one comes either.
    StoppedByCancel {
        at: DateTime<Utc>,
    },
    Retrying {
        next_number: u32,
        next_at: DateTime<Utc>,
        retries_left: usize,
        last_retry_at: DateTime<Utc>,
        /// How long after it is due an attempt may come and still be on time as far as this
        /// receiver can tell: a call is stored once it is answered, which took the last call
        /// this long (an answer held by a delay, or a caller that waited for it), plus the
        /// tolerance. Not "overdue" before then.
        grace: Duration,
    },
    Discarded {
        at: DateTime<Utc>,
        /// No retry fits because the last answer's Retry-After reaches past the window (the
        /// schedule alone had retries left).
        by_retry_after: bool,
    },
    /// A failed call of several messages (invokeOption MANY) whose messages are retried one
    /// by one, each as a delivery of its own (`<delivery>-<n>` from the emulator): where each
    /// stands (`None`: not seen yet). The batch itself is not called again.
    Split {
        messages: u32,
        parts: Vec<(String, Option<State>)>,
    },
}

#[derive(Clone, Debug)]
pub struct Delivery {
    pub delivery: String,
    pub webhook_id: Option<String>,
    pub attempts: Vec<Observed>,
    pub state: State,
    /// The retries still to come if every one fails like the last (empty when none will come).
    pub projection: Option<Plan>,
    pub findings: Vec<Finding>,
    /// The end of the retry window by the schedule the delivery was read against.
    pub window_end: DateTime<Utc>,
    /// The clock speed the retries seem to follow, when it is far from the one they were read
    /// at: see [`clock_speed_hint`].
    pub speed_hint: Option<f64>,
    /// The clock speed the calls themselves say they followed (a Hookscope emulator's
    /// [`CLOCK_SPEED_HEADER`](crate::emulator::CLOCK_SPEED_HEADER)): see [`marked_speed`].
    pub marked_speed: Option<f64>,
    /// The speeds the calls were marked with, in the order they came, each with the index of
    /// the first attempt made at it (one entry when the clock never changed; none when no call
    /// was marked): the Timeline names them when the clock changed along the way.
    pub speed_runs: Vec<(f64, usize)>,
    /// How this machine's times map to the emulator's clock, when the calls carry its times
    /// (its speed may have changed along the way): what the timeline is drawn on.
    pub clock: Option<ClockMap>,
}

/// This machine's times mapped to a service clock: through the times on the emulator's clock
/// each attempt was made at (see [`clock_times`]), and at `speed` (the speed now) beyond them.
#[derive(Clone, Debug, PartialEq)]
pub struct ClockMap {
    /// (this machine's time, the emulator's time) of each attempt, oldest first.
    anchors: Vec<(DateTime<Utc>, DateTime<Utc>)>,
    speed: f64,
}

impl ClockMap {
    /// The service-clock seconds from the first attempt to `t` (negative before it): between
    /// two attempts in proportion, past the last one at the speed now.
    pub fn secs_since_first(&self, t: DateTime<Utc>) -> f64 {
        let Some(&(r0, c0)) = self.anchors.first() else {
            return 0.0;
        };
        let clock = |c: DateTime<Utc>| secs_between(c0, c);
        if t <= r0 {
            return secs_between(r0, t) * self.speed;
        }
        for w in self.anchors.windows(2) {
            let ((ra, ca), (rb, cb)) = (w[0], w[1]);
            if t <= rb {
                let span = secs_between(ra, rb);
                return if span > 0.0 {
                    clock(ca) + (clock(cb) - clock(ca)) * secs_between(ra, t) / span
                } else {
                    clock(cb)
                };
            }
        }
        let (rl, cl) = self.anchors[self.anchors.len() - 1];
        clock(cl) + secs_between(rl, t) * self.speed
    }
}

/// The clock speed a Hookscope emulator marked the latest of `calls` with (the speed when that
/// attempt was made, which the retries still to come follow), when one did with a speed from 1
/// (real time) up: a slower clock is read as real time, as [`scaled_schedule`] reads it.
pub fn marked_speed(calls: &[Stored]) -> Option<f64> {
    calls.iter().rev().find_map(speed_mark)
}

/// The clock speed one call is marked with (see [`marked_speed`]).
fn speed_mark(call: &Stored) -> Option<f64> {
    call.inv.marked_clock_speed()
}

/// The times on the emulator's clock when each of `calls` was made
/// ([`CLOCK_TIME_HEADER`](crate::emulator::CLOCK_TIME_HEADER)), when every one carries a time
/// and a speed, and the times do not go back.
fn clock_times(calls: &[Stored]) -> Option<Vec<DateTime<Utc>>> {
    let times = calls
        .iter()
        .map(|c| {
            speed_mark(c)?;
            let t = c.inv.header(crate::emulator::CLOCK_TIME_HEADER)?;
            DateTime::parse_from_rfc3339(t)
                .ok()
                .map(|t| t.with_timezone(&Utc))
        })
        .collect::<Option<Vec<_>>>()?;
    times.windows(2).all(|w| w[0] <= w[1]).then_some(times)
}

/// The schedule to read `calls` against: on the clock they say they followed (see
/// [`marked_speed`]), or else `otherwise` (the speed the reader chose). (Each retry's gap is
/// held to its own call's mark in [`analyze`] whatever the schedule; this one draws the
/// timeline and plans the retries to come.)
pub fn schedule_for(calls: &[Stored], otherwise: Schedule) -> Schedule {
    marked_speed(calls).map_or(otherwise, scaled_schedule)
}

/// Speeds a user is likely to have given `hookscope emulate --speed`: an estimate within a
/// twentieth of one of them is taken to be it.
const COMMON_SPEEDS: [f64; 21] = [
    1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 50.0, 60.0, 100.0, 120.0, 200.0, 300.0, 500.0, 600.0, 1_000.0,
    1_200.0, 3_600.0, 6_000.0, 10_000.0, 36_000.0, 100_000.0,
];

/// The clock speed the retries seem to follow, when at least two of them all came more than
/// twice as early, or all more than twice as late, as the schedule read at `schedule.speed`
/// expected: the calls then come from a service on another clock (`hookscope emulate
/// --speed N` read at 1×, say), and every retry would be flagged. The median of expected/gap
/// times the speed read at, snapped to a common speed within 5% or rounded to two figures.
/// `None` when the retries fit the speed read at (or too few came to tell).
pub fn clock_speed_hint(attempts: &[Observed], schedule: &Schedule) -> Option<f64> {
    let mut ratios: Vec<f64> = attempts
        .windows(2)
        .filter(|w| w[0].outcome.is_retry())
        .filter_map(|w| {
            let (prev, cur) = (&w[0], &w[1]);
            let gap = cur.gap?.as_secs_f64();
            let retry_after = prev.retry_after.map(|r| r.wait_from(prev.at));
            let expected = schedule
                .effective_delay(prev.number?, retry_after)
                .as_secs_f64();
            (gap > 0.0 && expected > 0.0).then(|| expected / gap)
        })
        .collect();
    let consistent = ratios.iter().all(|r| *r > 2.0) || ratios.iter().all(|r| *r < 0.5);
    if ratios.len() < 2 || !consistent {
        return None;
    }
    ratios.sort_by(f64::total_cmp);
    let read_at = if schedule.speed.is_finite() && schedule.speed > 0.0 {
        schedule.speed
    } else {
        1.0
    };
    let estimate = ratios[ratios.len() / 2] * read_at;
    if !estimate.is_finite() || estimate <= 0.0 {
        return None;
    }
    let snapped = COMMON_SPEEDS
        .iter()
        .copied()
        .find(|c| (estimate / c - 1.0).abs() <= 0.05)
        .unwrap_or_else(|| {
            let unit = 10f64.powi(estimate.log10().floor() as i32 - 1);
            (estimate / unit).round() * unit
        });
    Some(snapped.max(1.0))
}

/// The Retry-After the service honours from this call's answer (503 and 429 only).
fn retry_after_of(s: &Stored) -> Option<RetryAfter> {
    if !s.inv.outcome().honours_retry_after() {
        return None;
    }
    s.inv.answer.retry_after().and_then(RetryAfter::parse)
}

fn local(t: DateTime<Utc>) -> String {
    t.with_timezone(&Local).format("%H:%M:%S").to_string()
}

/// `t` as a time of day when it falls on `now`'s day, else with its date as well: "next
/// attempt expected at 12:27:00" read at 11:27 as an hour away when it was a day and an hour.
pub fn local_on(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let (t, now) = (t.with_timezone(&Local), now.with_timezone(&Local));
    if t.date_naive() == now.date_naive() {
        t.format("%H:%M:%S").to_string()
    } else {
        t.format("%-d %b %H:%M:%S").to_string()
    }
}

/// `t` to the minute, with its date when it is not on `now`'s day: the window's end is two
/// days off for the service, and within the hour on a fast emulator's clock (whose "until
/// 25 Nov 05:36" read on the 25th named today as if it were another day).
fn local_day(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let (t, now) = (t.with_timezone(&Local), now.with_timezone(&Local));
    if t.date_naive() == now.date_naive() {
        t.format("%H:%M").to_string()
    } else {
        t.format("%-d %b %H:%M").to_string()
    }
}

fn finding(severity: Severity, code: &str, message: String) -> Finding {
    Finding {
        severity,
        code: code.to_owned(),
        message,
    }
}

/// The delivery a batch retry was split from: a failed call of several messages (invokeOption
/// MANY) is retried message by message (service-api.md), and the emulator names each message's
/// retries `<delivery>-<n>`. `None` for an id not of that form.
pub fn batch_parent(delivery: &str) -> Option<&str> {
    let (parent, n) = delivery.rsplit_once('-')?;
    (!parent.is_empty() && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(parent)
}

/// The calls of a message's own delivery with, before them, the batch calls that carried it
/// first (`parent`: the calls of [`batch_parent`]'s delivery): those that came before the
/// delivery's first call and held several messages. Without them its timeline would start at
/// attempt 2 and report attempt 1 as never received. Unchanged when nothing fits.
pub fn with_batch_calls(calls: Vec<Stored>, parent: Vec<Stored>) -> Vec<Stored> {
    let Some(first) = calls.first() else {
        return calls;
    };
    if first.inv.attempt.is_none_or(|a| a < 2) {
        return calls;
    }
    let mut carried: Vec<Stored> = parent
        .into_iter()
        .filter(|p| p.inv.received_at <= first.inv.received_at && p.inv.messages.unwrap_or(0) > 1)
        .collect();
    carried.extend(calls);
    carried
}

/// A least wait as a finding names it: to the second past 10 s (rounded, "1 d 3 h" for
/// 1 d 2 h 35 min named a time the schedule allows as still too early).
fn least_wait(d: Duration) -> String {
    if d < Duration::from_secs(10) {
        human_duration(d)
    } else {
        crate::text::exact_duration(d)
    }
}

/// The latest a call made before the service read the 410 of `c` can arrive: when the 410 was
/// answered, plus the tolerance for the commit, the network and the service's own timing.
fn known(c: &Cancel, tolerance: Duration) -> DateTime<Utc> {
    c.answered + TimeDelta::from_std(tolerance).unwrap_or(TimeDelta::zero())
}

/// Read the calls of one delivery (oldest first) against `schedule`. `cancels` are the calls
/// that answered the delivery's webhook 410, oldest first: a call after one is flagged, unless
/// the webhook was set up again in between, and a 410 to another delivery while this one was
/// retrying ends it too (the service stops calling the webhook entirely). A retry marked with
/// the clock speed it was made on (see [`marked_speed`]) is held to that clock's schedule: an
/// emulator's speed may change between retries.
pub fn analyze(
    calls: &[Stored],
    schedule: &Schedule,
    tolerance: Duration,
    cancels: &[Cancel],
) -> Option<Delivery> {
    let first = calls.first()?;
    let mut attempts: Vec<Observed> = Vec::with_capacity(calls.len());
    // The clock each call says it was made on (a Hookscope emulator's mark), if any: the gap
    // before it is held to that clock's schedule, whatever `schedule` is.
    let marks: Vec<Option<f64>> = calls.iter().map(speed_mark).collect();
    // Better, the time on its clock each call was made at: the gaps are measured on that clock.
    let clock = clock_times(calls);
    let contract_schedule = Schedule::default();
    let mut findings = Vec::new();
    for s in calls {
        let gap = attempts
            .last()
            .and_then(|p: &Observed| (s.inv.received_at - p.at).to_std().ok());
        attempts.push(Observed {
            id: s.id,
            number: s.inv.attempt,
            at: s.inv.received_at,
            gap,
            clock_gap: None,
            status: s.inv.answer.status,
            outcome: s.inv.outcome(),
            retry_after: retry_after_of(s),
            unanswered: s.inv.unanswered().is_some(),
        });
    }

    // Each gap on the clock the call was made on, when that ran faster than real time: the
    // emulator's own times when the calls carry them (exact, whatever speeds it ran at along
    // the way), or else the gap at the call's own speed.
    for i in 1..attempts.len() {
        if marks[i].is_some_and(|v| v > 1.0) || marks[i - 1].is_some_and(|v| v > 1.0) {
            attempts[i].clock_gap = match &clock {
                Some(c) => (c[i] - c[i - 1]).to_std().ok(),
                None => marks[i]
                    .filter(|&v| v > 1.0)
                    .and_then(|v| attempts[i].gap.map(|g| g.mul_f64(v))),
            };
        }
    }

    // Delays count from the failure: when a call was answered, or when its caller stopped
    // waiting (a receiver that holds its answer 35 s fails when the service gives up, 30 s
    // after the call came, and was read as overdue meanwhile).
    let took_of = |i: usize| {
        calls.get(i).map_or(Duration::ZERO, |s| {
            Duration::from_micros(s.inv.took_us)
                .min(crate::emulator::caller_wait(s.inv.marked_clock_speed()))
        })
    };
    // What a call took on the emulator's clock, as the emulator counts it: a time-out the
    // service's 30 s, an answer its real time.
    let took_on_clock =
        |i: usize| crate::emulator::schedule_took(took_of(i), calls.get(i).and_then(speed_mark));
    let after = |t: DateTime<Utc>, d: Duration| t + TimeDelta::from_std(d).unwrap_or_default();

    // On the emulator's clock, the wait each answer's Retry-After asked for, read as the
    // emulator reads it: a date by its distance from the failure, and the same date again as
    // the time it was first read as (waited for once).
    let clock_waits: Option<Vec<Option<Duration>>> = clock.as_ref().map(|c| {
        let mut dates = RetryDates::default();
        attempts
            .iter()
            .zip(c)
            .enumerate()
            .map(|(i, (a, &t))| {
                a.retry_after
                    .map(|r| dates.wait(r, after(a.at, took_of(i)), after(t, took_on_clock(i))))
            })
            .collect()
    });

    // Attempt numbers: 1, 2, 3... in order. The earliest seen, whenever it arrived: an attempt 1
    // that came after attempt 2 did reach this receiver (it is out of order, below).
    if let Some(n) = attempts.iter().filter_map(|a| a.number).min()
        && n > 1
    {
        findings.push(finding(
            Severity::Info,
            "attempts-not-seen",
            if n == 2 {
                "The earliest attempt seen here is 2: attempt 1 did not reach this receiver."
                    .to_owned()
            } else {
                format!(
                    "The earliest attempt seen here is {n}: attempts 1 to {} did not reach this receiver.",
                    n - 1
                )
            },
        ));
    }
    // How many times each attempt came: a repeat is said once, with its count.
    let mut arrivals: std::collections::BTreeMap<u32, usize> = Default::default();
    for n in attempts.iter().filter_map(|a| a.number) {
        *arrivals.entry(n).or_default() += 1;
    }
    // Each arrival against all those before it (not only the one just before: a call with no
    // attempt number in between, or a late copy of an earlier attempt, hides nothing): an
    // attempt seen before is a repeat; one lower than the highest seen is out of order; one
    // past the highest with none in between ever arriving skipped them.
    let (mut seen, mut repeats_said) = (
        std::collections::BTreeSet::new(),
        std::collections::BTreeSet::new(),
    );
    let mut highest: Option<u32> = None;
    // The arrivals below the highest attempt before them: no retry to time.
    let mut late_arrival = vec![false; attempts.len()];
    for (i, c) in attempts
        .iter()
        .enumerate()
        .filter_map(|(i, a)| a.number.map(|n| (i, n)))
    {
        late_arrival[i] = highest.is_some_and(|h| c < h);
        if !seen.insert(c) {
            if repeats_said.insert(c) {
                let times = arrivals.get(&c).copied().unwrap_or(2);
                findings.push(finding(
                    Severity::Warning,
                    "attempt-repeated",
                    format!(
                        "Attempt {c} arrived {} (the service may deliver a message more than once).",
                        if times == 2 { "twice".to_owned() } else { format!("{times} times") }
                    ),
                ));
            }
        } else if let Some(h) = highest {
            if c < h {
                findings.push(finding(
                    Severity::Warning,
                    "attempt-out-of-order",
                    format!("Attempt {c} arrived after attempt {h}."),
                ));
            } else if c > h + 1 && (h + 1..c).all(|n| !arrivals.contains_key(&n)) {
                // Skipped for good: one that comes later is out of order, said when it does.
                findings.push(finding(
                    Severity::Warning,
                    "attempt-skipped",
                    format!("Attempt {h} was followed by attempt {c}: attempts in between never arrived here."),
                ));
            }
        }
        highest = Some(highest.map_or(c, |h| h.max(c)));
    }
    // The first success or permanent failure, once a call has come after it.
    let mut ended: Option<&Observed> = None;
    let mut after_final = std::collections::BTreeSet::new();
    for (i, w) in attempts.windows(2).enumerate() {
        let (prev, cur) = (&w[0], &w[1]);
        // After a success or a permanent failure the service has no reason to call again: each
        // call after the first such answer is flagged, named by its attempt. The same attempt
        // as that answer's again is a duplicate delivery (flagged above), which service-api.md
        // allows: not a second finding for the one call.
        if ended.is_none()
            && matches!(
                prev.outcome,
                Outcome::Succeeded | Outcome::FailedPermanently
            )
        {
            ended = Some(prev);
        }
        if let Some(f) = ended {
            // Once per attempt: a repeat of one is said as a repeat (above).
            if cur
                .number
                .is_none_or(|n| Some(n) != f.number && after_final.insert(n))
            {
                findings.push(finding(
                    Severity::Error,
                    "call-after-final",
                    format!(
                        "{} came at {} after the delivery had {}{} (answer {}).",
                        cur.number
                            .map_or("A call".to_owned(), |n| format!("Attempt {n}")),
                        local(cur.at),
                        if f.outcome == Outcome::Succeeded {
                            "succeeded"
                        } else {
                            "failed permanently"
                        },
                        f.number
                            .map_or(String::new(), |n| format!(" on attempt {n}")),
                        f.status
                    ),
                ));
            }
        } else if prev.outcome.is_retry()
            && let (Some(p), Some(gap)) = (prev.number, cur.gap)
            // An attempt that comes again is a repeat (flagged above; the service may deliver
            // a message twice), and one that arrives after a higher one is out of order: not a
            // retry to time.
            && cur.number.is_none_or(|n| n > p)
            && !late_arrival[i + 1]
        {
            // On a marked clock: the faster of the two calls' speeds, as the wait may have run
            // at either (a speed changed during it); on the emulator's own times, exactly, with
            // the tolerance its fastest speed makes of timer lag.
            let fastest = marks[i + 1].map(|v| marks[i].map_or(v, |p| p.max(v)));
            let marked = fastest.map(scaled_schedule);
            let (schedule, tolerance) = match &marked {
                Some(m) => (m, tolerance_for(m)),
                None => (schedule, tolerance),
            };
            // The wait counts from the failure: what the call took (up to the service's 30 s)
            // comes first.
            let (schedule, tolerance, gap, wait, took) = match (&clock, &clock_waits, fastest) {
                (Some(c), Some(w), Some(v)) => (
                    &contract_schedule,
                    DEFAULT_TOLERANCE.max(Duration::from_millis(500).mul_f64(v)),
                    (c[i + 1] - c[i]).to_std().unwrap_or_default(),
                    w[i],
                    took_on_clock(i),
                ),
                _ => (
                    schedule,
                    tolerance,
                    gap,
                    prev.retry_after
                        .map(|r| r.wait_from(after(prev.at, took_of(i)))),
                    took_of(i),
                ),
            };
            // Attempts skipped in between were made and failed too, each waited for: a retry
            // after them is due no sooner than all their delays.
            let skipped = (p + 1..cur.number.unwrap_or(p + 1))
                .map(|k| schedule.effective_delay(k, None))
                .sum::<Duration>();
            let expected = took + schedule.effective_delay(p, wait) + skipped;
            if gap + tolerance < expected {
                findings.push(finding(
                    Severity::Error,
                    "retry-too-early",
                    format!(
                        "Attempt {} came {} after attempt {p}; the schedule allows it no sooner than {}{}.",
                        cur.number.map_or("?".to_owned(), |n| n.to_string()),
                        human_duration(gap),
                        least_wait(expected),
                        if took >= Duration::from_secs(1) {
                            format!(
                                " ({} after attempt {p} failed, {} after it came)",
                                least_wait(expected - took),
                                human_duration(took)
                            )
                        } else {
                            String::new()
                        }
                    ),
                ));
            }
        }
    }
    for a in &attempts {
        // The cancel in force when the call came: after the service could have read a 410
        // (a call that arrived while the 410 was being answered, or within the tolerance after,
        // was already on its way) and before the webhook was set up again. A call answered 410
        // itself is checked against the earlier ones: the second 410 a webhook gets means the
        // service went on calling after the first.
        if let Some(c) = cancels.iter().find(|c| {
            c.id != a.id && a.at > known(c, tolerance) && c.lifted.is_none_or(|l| a.at < l)
        }) {
            findings.push(finding(
                Severity::Error,
                "call-after-410",
                format!(
                    "A call came at {} for a webhook that was answered 410 at {} and not set up again since: the service should have stopped calling it.",
                    local(a.at),
                    local(c.at)
                ),
            ));
        }
    }

    // The first final answer decides the delivery: calls after it are anomalies (flagged as
    // call-after-final above), not a new state. Else the furthest attempt the service made
    // does: an attempt 1 that arrives after attempt 2 (out of order, flagged above) had moved
    // the projection back to the retries after attempt 1.
    let final_answer = attempts.iter().position(|a| {
        matches!(
            a.outcome,
            Outcome::Succeeded | Outcome::FailedPermanently | Outcome::WebhookCancelled
        )
    });
    // The last call that counts, in order of arrival: what came after a final answer does not.
    let decided = final_answer.unwrap_or(attempts.len().checked_sub(1)?);
    // By number only where every call has one: a call with none may be the furthest.
    let numbered = attempts.iter().all(|a| a.number.is_some());
    let position = match final_answer {
        None if numbered => attempts
            .iter()
            .enumerate()
            .max_by_key(|(i, a)| (a.number, *i))
            .map_or(decided, |(i, _)| i),
        _ => decided,
    };
    let last = &attempts[position];
    let last_number = last.number.unwrap_or(position as u32 + 1);
    let failing = attempts.iter().position(|a| a.outcome.is_retry());
    // The frame the retries to come are planned in: the emulator's clock when the calls carry
    // its times (its speed may have changed along the way: a plan from this machine's times
    // counted the window at the speed now, and more retries than the schedule has), mapped
    // back to this machine's clock at the speed now; or else this machine's clock.
    let speed_now = if schedule.speed.is_finite() && schedule.speed > 1.0 {
        schedule.speed
    } else {
        1.0
    };
    let took = took_of(position);
    // The first failure seen, moved back by the delays before its attempt when that is not
    // attempt 1: a delivery first seen at attempt 65 (the receiver was down) has the retries
    // its window still holds, not two days more, and a failed attempt 195 has none.
    let first_seen = failing.unwrap_or(position);
    let before_first = |s: &Schedule| {
        attempts[first_seen]
            .number
            .map_or(Duration::ZERO, |n| s.least_time_to(n))
    };
    let back = |t: DateTime<Utc>, by: Duration| {
        t.checked_sub_signed(TimeDelta::from_std(by).unwrap_or(TimeDelta::MAX))
            .unwrap_or(DateTime::<Utc>::MIN_UTC)
    };
    let (plan_schedule, ff, last_at, last_retry_after) = match &clock {
        Some(c) => (
            &contract_schedule,
            back(c[first_seen], before_first(&contract_schedule)),
            c[position] + TimeDelta::from_std(took_on_clock(position)).unwrap_or_default(),
            // A date is the receiver's: the wait it asked for from the answer, as above.
            clock_waits
                .as_ref()
                .and_then(|w| w[position])
                .map(RetryAfter::Wait),
        ),
        None => (
            schedule,
            back(attempts[first_seen].at, before_first(schedule)),
            last.at + TimeDelta::from_std(took).unwrap_or_default(),
            last.retry_after,
        ),
    };
    // A call after the 2-day window: the service should have discarded the message. The window
    // is counted from the latest the first failure can have been (the first failing call seen
    // plus its time, less the least time to its attempt), so no call is flagged that a
    // Retry-After or a slow answer could have put there.
    if let Some(fs) = failing {
        let (frame, took_fs) = match &clock {
            Some(c) => (c.as_slice(), took_on_clock(fs)),
            None => (&[][..], took_of(fs)),
        };
        let at = |i: usize| frame.get(i).copied().unwrap_or(attempts[i].at);
        let end = plan_schedule.window_end(ff + TimeDelta::from_std(took_fs).unwrap_or_default());
        let late: Vec<usize> = (fs + 1..=decided)
            .filter(|&i| {
                let tolerance = match (&clock, marks[i]) {
                    (Some(_), Some(v)) => {
                        DEFAULT_TOLERANCE.max(Duration::from_millis(500).mul_f64(v))
                    }
                    _ => tolerance,
                };
                at(i) > end + TimeDelta::from_std(tolerance).unwrap_or_default()
            })
            .collect();
        if let Some(&i) = late.first() {
            // How far past, on the service's clock (a scaled schedule's real times run at its
            // speed).
            let scale = if clock.is_none() && plan_schedule.speed > 1.0 {
                plan_schedule.speed
            } else {
                1.0
            };
            let past = (at(i) - end).to_std().unwrap_or_default().mul_f64(scale);
            let more = match late.len() - 1 {
                0 => String::new(),
                1 => ", and 1 call after it".to_owned(),
                n => format!(", and {n} calls after it"),
            };
            findings.push(finding(
                Severity::Warning,
                "call-after-window",
                format!(
                    "{} came {} after the 2-day retry window ended (2 days from the first failure{}){more}: the service should have discarded the message by then.",
                    attempts[i]
                        .number
                        .map_or("A call".to_owned(), |n| format!("Attempt {n}")),
                    human_duration(past),
                    if clock.is_some() || scale > 1.0 {
                        ", on the service's clock"
                    } else {
                        ""
                    }
                ),
            ));
        }
    }
    let to_real = |t: DateTime<Utc>| -> DateTime<Utc> {
        if clock.is_none() {
            return t;
        }
        let us = (t - last_at).num_microseconds().unwrap_or(i64::MAX) as f64 / speed_now;
        last.at + TimeDelta::from_std(took).unwrap_or_default() + TimeDelta::microseconds(us as i64)
    };
    // What each retry to come takes before it fails, as the last did: in the plan's frame,
    // and how much more real time than that frame says (an emulator's time-out: 30 s of its
    // clock, but at least 2 s of real time, which at 600x is 20 minutes of it).
    let (took_in_frame, stretch) = match &clock {
        Some(_) => {
            let on_clock = took_on_clock(position);
            (on_clock, took.saturating_sub(on_clock.div_f64(speed_now)))
        }
        None => (took, Duration::ZERO),
    };
    // The first failure itself: the first failing call seen once it was answered (as the
    // window's end above, and as the What-if and `schedule` count it). From the call's arrival,
    // a Retry-After of exactly two days had left no retry here and one everywhere else.
    let first_failed = {
        let took_first = match &clock {
            Some(_) => took_on_clock(first_seen),
            None => took_of(first_seen),
        };
        ff + TimeDelta::from_std(took_first).unwrap_or_default()
    };
    // The retries still to come after the last attempt, if each fails like the last.
    let retry_plan = || {
        let p = plan_schedule.plan_from_taking(
            first_failed,
            last_number,
            last_at,
            last_retry_after,
            took_in_frame,
        );
        // In real time each retry comes later by the stretch of every call before it (the
        // retries are in order: those before `t` are a prefix).
        let stretched = |t: DateTime<Utc>| {
            let calls = p.retries.partition_point(|a| a.at < t) as u32;
            to_real(t) + TimeDelta::from_std(stretch * calls).unwrap_or_default()
        };
        Plan {
            first_failure: to_real(p.first_failure),
            retries: p
                .retries
                .iter()
                .map(|a| crate::contract::Attempt {
                    at: stretched(a.at),
                    ..*a
                })
                .collect(),
            window_end: stretched(p.window_end),
            discard_at: stretched(p.discard_at),
        }
    };
    // Made once, when a state needs it (up to 195 retries; the cancels' check had made it once
    // per cancel).
    let planned = std::cell::OnceCell::new();
    let plan = || planned.get_or_init(retry_plan);
    let (state, projection) = match last.outcome {
        Outcome::Succeeded => (
            State::Succeeded {
                attempt: last.number,
            },
            None,
        ),
        Outcome::FailedPermanently => (
            State::FailedPermanently {
                attempt: last_number,
            },
            None,
        ),
        Outcome::WebhookCancelled => (
            State::WebhookCancelled {
                attempt: last_number,
            },
            None,
        ),
        // Retrying, but the webhook was cancelled meanwhile by a 410 to another delivery, not
        // known to the service before the last call seen (which may have crossed the 410 on
        // the way), and not set up again before this delivery's next retry was due: a retry that
        // falls while the webhook is cancelled is dropped (enabled again in time, the retries go
        // on). An answer that left no retry at all (a Retry-After past the window, or the last
        // retry the window allows) discarded the message itself: nothing was left for the 410
        // to stop ("stopped" had stood over a row the list and the detail call discarded).
        _ if let Some(next) = plan().retries.first()
            && let Some(c) = cancels.iter().find(|c| {
                known(c, tolerance) >= attempts[decided].at
                    && !attempts.iter().any(|a| a.id == c.id)
                    && c.lifted.is_none_or(|lifted| lifted > next.at)
            }) =>
        {
            (State::StoppedByCancel { at: c.at }, None)
        }
        _ => {
            let plan = plan().clone();
            match (plan.retries.first(), plan.retries.last()) {
                (Some(next), Some(end)) => (
                    State::Retrying {
                        next_number: next.number,
                        next_at: next.at,
                        retries_left: plan.retries.len(),
                        last_retry_at: end.at,
                        grace: took + tolerance,
                    },
                    Some(plan),
                ),
                _ => {
                    let by_retry_after = last.retry_after.is_some()
                        && !plan_schedule
                            .plan_from(first_failed, last_number, last_at, None)
                            .retries
                            .is_empty();
                    (
                        State::Discarded {
                            at: last.at,
                            by_retry_after,
                        },
                        None,
                    )
                }
            }
        }
    };
    // Calls that came after a 410 say the service should have stopped; when it went on and
    // the delivery reads as retrying, they say why its retries are still expected (the state
    // had read "retrying, 194 retries left" beside "should have stopped", unexplained).
    if matches!(state, State::Retrying { .. }) {
        for f in findings.iter_mut().filter(|f| f.code == "call-after-410") {
            f.message.push_str(" As it went on calling, this delivery's retries are still expected (the webhook may have been set up again where Hookscope could not see it).");
        }
    }
    let speed_hint = clock_speed_hint(&attempts, schedule);
    // From the first failure as the plan counts it: moved back from a delivery first seen at
    // attempt 65 (the line had stood two days after attempt 65, past the last retry planned),
    // and at the answer's time, as the check of calls after the window counts it.
    let window_end = to_real(plan_schedule.window_end(match (failing, &clock) {
        (Some(fs), Some(_)) => ff + TimeDelta::from_std(took_on_clock(fs)).unwrap_or_default(),
        (Some(fs), None) => ff + TimeDelta::from_std(took_of(fs)).unwrap_or_default(),
        (None, Some(c)) => c[0],
        (None, None) => first.inv.received_at,
    }));
    let mut speed_runs: Vec<(f64, usize)> = Vec::new();
    for (i, m) in marks.iter().enumerate() {
        if let Some(m) = *m
            && speed_runs.last().is_none_or(|(last, _)| *last != m)
        {
            speed_runs.push((m, i));
        }
    }
    Some(Delivery {
        speed_hint,
        marked_speed: marked_speed(calls),
        speed_runs,
        clock: clock.map(|c| ClockMap {
            anchors: attempts.iter().map(|a| a.at).zip(c).collect(),
            speed: speed_now,
        }),
        delivery: first.inv.delivery.clone().unwrap_or_default(),
        webhook_id: first.inv.webhook_id.clone(),
        attempts,
        state,
        projection,
        findings,
        window_end,
    })
}

/// A clock speed as the Timeline and `show` write it: "600x", "1.5x".
pub fn speed_text(speed: f64) -> String {
    if speed >= 10.0 || speed.fract() == 0.0 {
        format!("{speed:.0}x")
    } else {
        format!("{speed:.1}x")
    }
}

impl Delivery {
    /// The speeds the calls were made at, each with its attempts, as the Timeline and `show`
    /// say them: `60x (attempts 1-5), then 6000x (attempt 6)`. By their order among the calls
    /// where one has no attempt number.
    pub fn speed_runs_words(&self) -> String {
        let numbered = self.attempts.iter().all(|a| a.number.is_some());
        let (one, many) = if numbered {
            ("attempt", "attempts")
        } else {
            ("call", "calls")
        };
        let attempt = |i: usize| match self.attempts.get(i).and_then(|a| a.number) {
            Some(n) if numbered => n.to_string(),
            _ => (i + 1).to_string(),
        };
        let runs: Vec<String> = self
            .speed_runs
            .iter()
            .enumerate()
            .map(|(k, &(speed, first))| {
                let last = self
                    .speed_runs
                    .get(k + 1)
                    .map_or(self.attempts.len(), |&(_, next)| next)
                    .saturating_sub(1);
                let which = if last <= first {
                    format!("{one} {}", attempt(first))
                } else {
                    format!("{many} {}-{}", attempt(first), attempt(last))
                };
                format!("{} ({which})", speed_text(speed))
            })
            .collect();
        runs.join(", then ")
    }

    /// The outcome whose colour the delivery's heading takes: where it ended, not only what
    /// its last call was answered.
    pub fn heading_outcome(&self) -> Option<Outcome> {
        match &self.state {
            // Ended by a 410, its own or another delivery's: in a cancelled webhook's colour,
            // even with a call answered 200 after it (it had read green).
            State::StoppedByCancel { .. } | State::WebhookCancelled { .. } => {
                Some(Outcome::WebhookCancelled)
            }
            // Split into its messages: delivered once every one is.
            State::Split { parts, .. } => Some(
                if parts
                    .iter()
                    .all(|(_, s)| matches!(s, Some(State::Succeeded { .. })))
                {
                    Outcome::Succeeded
                } else {
                    Outcome::RetryTemporary
                },
            ),
            // Discarded (after the last retry, or by a Retry-After past the window): in a
            // discarded message's colour, as the list and the table's last row, not a retry's.
            State::Discarded { .. } => Some(Outcome::FailedPermanently),
            _ => self.attempts.last().map(|a| a.outcome),
        }
    }
}

/// Whether a call of `part` is one of the messages of the batch `delivery` retried on its own
/// (`<delivery>-<n>`, n from 1 to 10, as [`load`] reads them).
pub fn is_part_of(part: &str, delivery: &str) -> bool {
    part.strip_prefix(delivery)
        .and_then(|rest| rest.strip_prefix('-'))
        .and_then(|n| {
            n.parse::<u32>()
                .ok()
                .filter(|n| (1..=10).contains(n))
                .map(|_| n)
        })
        .is_some_and(|n| !n.starts_with(['0', '+']))
}

/// The first words of a split batch's state: `split: its 3 messages are retried one by one`.
/// Once every one of them has been delivered: `split: its 3 messages were retried one by one,
/// and each was delivered` (the green heading had gone on saying they "are retried").
pub fn split_heading(messages: u32, parts: &[(String, Option<State>)]) -> String {
    let delivered = parts
        .iter()
        .all(|(_, s)| matches!(s, Some(State::Succeeded { .. })));
    if delivered {
        format!("split: its {messages} messages were retried one by one, and each was delivered")
    } else {
        format!("split: its {messages} messages are retried one by one")
    }
}

/// Where one message of a split batch stands, in a few words (`None`: not seen yet).
pub fn part_state(state: Option<&State>, now: DateTime<Utc>) -> String {
    state.map_or_else(|| "not seen yet".to_owned(), |s| s.short(now))
}

impl State {
    /// Where it stands as a stable word for scripts (`show --json`'s `state_code`), where
    /// [`State::describe`] is a sentence with times in it: `succeeded`, `failed-permanently`,
    /// `webhook-cancelled`, `stopped-by-cancel`, `retrying`, `overdue` (retrying, and not one
    /// of the retries the schedule allows came: its window is over), `discarded`, `split`.
    pub fn code(&self, now: DateTime<Utc>) -> &'static str {
        match self {
            State::Succeeded { .. } => "succeeded",
            State::FailedPermanently { .. } => "failed-permanently",
            State::WebhookCancelled { .. } => "webhook-cancelled",
            State::StoppedByCancel { .. } => "stopped-by-cancel",
            State::Retrying { .. } if self.next_retry(now).is_some() => "retrying",
            State::Retrying { .. } => "overdue",
            State::Discarded { .. } => "discarded",
            State::Split { .. } => "split",
        }
    }

    /// The next attempt and the retries left, while the delivery is retrying at `now`: none
    /// once not one of the retries the schedule allows came (its window is over).
    pub fn next_retry(&self, now: DateTime<Utc>) -> Option<(DateTime<Utc>, usize)> {
        match self {
            State::Retrying {
                next_at,
                retries_left,
                last_retry_at,
                grace,
                ..
            } if late(*last_retry_at, *grace) >= now => Some((*next_at, *retries_left)),
            _ => None,
        }
    }

    /// The state in a few words, for one message of a split batch: `succeeded on attempt 2`,
    /// `retrying, attempt 3 expected at 14:03:02`.
    fn short(&self, now: DateTime<Utc>) -> String {
        match self {
            State::Retrying {
                next_number,
                next_at,
                last_retry_at,
                grace,
                ..
            } if late(*last_retry_at, *grace) >= now => {
                let overdue = if late(*next_at, *grace) < now {
                    ", overdue"
                } else {
                    ""
                };
                format!(
                    "retrying, attempt {next_number} expected at {}{overdue}",
                    local(*next_at)
                )
            }
            other => other.describe(now),
        }
    }

    /// Whether the delivery is still under way: retries to come, or a split batch with a
    /// message not delivered yet.
    pub fn under_way(&self) -> bool {
        match self {
            State::Retrying { .. } => true,
            State::Split { parts, .. } => parts
                .iter()
                .any(|(_, s)| s.as_ref().is_none_or(State::under_way)),
            _ => false,
        }
    }

    /// The state in plain words, relative to `now`.
    pub fn describe(&self, now: DateTime<Utc>) -> String {
        match self {
            State::Succeeded { attempt: Some(n) } => format!("succeeded on attempt {n}"),
            State::Succeeded { attempt: None } => {
                "succeeded (the call had no attempt number that could be read)".to_owned()
            }
            State::FailedPermanently { .. } => "failed permanently: message discarded".to_owned(),
            State::WebhookCancelled { .. } => "webhook cancelled by the 410 answer".to_owned(),
            State::StoppedByCancel { at } => format!(
                "stopped: webhook cancelled by the 410 answer to another delivery at {}",
                local(*at)
            ),
            State::Discarded {
                by_retry_after: true,
                ..
            } => "discarded: the Retry-After of the last answer reaches past the 2-day window, so no retry fits in it".to_owned(),
            State::Discarded { .. } => "discarded after the last retry".to_owned(),
            State::Split { messages, parts } => {
                let each: Vec<String> = parts
                    .iter()
                    .map(|(id, state)| format!("{id} {}", part_state(state.as_ref(), now)))
                    .collect();
                format!("{}: {}", split_heading(*messages, parts), each.join("; "))
            }
            State::Retrying {
                next_at,
                retries_left,
                last_retry_at,
                grace,
                ..
            } => {
                let ago = |at: DateTime<Utc>| {
                    crate::text::elapsed((now - at).to_std().unwrap_or_default())
                };
                if late(*last_retry_at, *grace) < now {
                    // Not one of the retries the schedule allows came: the window is over.
                    return format!(
                        "overdue: no retry came, and the last one the schedule allows was due at {} ({} ago); the service discards the message after it",
                        local_day(*last_retry_at, now),
                        ago(*last_retry_at)
                    );
                }
                let when = if *next_at >= now {
                    format!(
                        "retrying: next attempt expected at {} (in {})",
                        local_on(*next_at, now),
                        crate::text::countdown((*next_at - now).to_std().unwrap_or_default())
                    )
                } else if late(*next_at, *grace) >= now {
                    // Due, and may be on its way: stored once it is answered.
                    format!(
                        "retrying: next attempt expected at {} (due now)",
                        local_on(*next_at, now)
                    )
                } else {
                    format!(
                        "retrying, overdue: next attempt was expected at {} ({} ago)",
                        local_on(*next_at, now),
                        ago(*next_at)
                    )
                };
                format!(
                    "{when}, {retries_left} {} left until {}",
                    if *retries_left == 1 {
                        "retry"
                    } else {
                        "retries"
                    },
                    local_day(*last_retry_at, now)
                )
            }
        }
    }
}

/// `at` plus `grace`: when an attempt due at `at` is late.
fn late(at: DateTime<Utc>, grace: Duration) -> DateTime<Utc> {
    at.checked_add_signed(TimeDelta::from_std(grace).unwrap_or(TimeDelta::MAX))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// A shortened schedule for a clock that runs `speed` times faster than real time (the
/// emulator's demo clock): every delay and the window divided by `speed`, and so is a
/// Retry-After (the emulator reads "120" as 120 s of its own clock).
pub fn scaled_schedule(speed: f64) -> Schedule {
    let s = Schedule::default();
    if speed <= 1.0 || !speed.is_finite() {
        return s;
    }
    let scale = |d: Duration| d.div_f64(speed);
    Schedule {
        delays: s.delays.iter().copied().map(scale).collect(),
        steady: scale(s.steady),
        window: scale(s.window),
        speed,
    }
}

/// Seconds from `a` to `b`, for drawing.
pub fn secs_between(a: DateTime<Utc>, b: DateTime<Utc>) -> f64 {
    (b - a).num_milliseconds() as f64 / 1000.0
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_message_of_a_batch_is_named_after_it() {
        for part in ["b-1", "b-7", "b-10"] {
            assert!(super::is_part_of(part, "b"), "{part}");
        }
        for other in [
            "b", "b-0", "b-11", "b-01", "b-+1", "b-x", "bb-1", "b1", "b--1", "c-1",
        ] {
            assert!(!super::is_part_of(other, "b"), "{other}");
        }
        // A batch whose own id ends in a number.
        assert!(super::is_part_of("d-81f2-3", "d-81f2"));
    }

    use super::*;
    use crate::store::{Invocation, SentAnswer};
    use chrono::TimeDelta;

    fn t0() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-16T14:00:00Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn a_gap_on_a_fast_clock_is_given_on_that_clock_too() {
        let gap = |ms: u64, clock_gap: Option<u64>, read_at: f64| {
            Observed {
                id: 2,
                number: Some(2),
                at: t0(),
                gap: Some(Duration::from_millis(ms)),
                clock_gap: clock_gap.map(Duration::from_secs),
                status: 503,
                outcome: Outcome::RetryUnavailable,
                retry_after: None,
                unanswered: false,
            }
            .gap_text(read_at)
            .unwrap()
        };
        assert_eq!(gap(1500, None, 1.0), "1.5 s");
        assert_eq!(gap(1500, None, 60.0), "1.5 s (1 min 30 s on its clock)");
        assert_eq!(gap(200, None, 600.0), "200 ms (2 min on its clock)");
        // The emulator's own reading wins over the speed the reader chose.
        assert_eq!(
            gap(1500, Some(90), 600.0),
            "1.5 s (1 min 30 s on its clock)"
        );
    }

    #[test]
    fn a_retry_after_wait_is_given_to_the_second() {
        let a = Observed {
            id: 1,
            number: Some(1),
            at: t0(),
            gap: None,
            clock_gap: None,
            status: 503,
            outcome: Outcome::RetryUnavailable,
            retry_after: Some(RetryAfter::Wait(Duration::from_secs(200_000))),
            unanswered: false,
        };
        // As the banner and `schedule` say it, not rounded to "2 d 8 h".
        assert_eq!(a.answer_text(), "503, Retry-After 2 d 7 h 33 min 20 s");
    }

    #[test]
    fn gaps_made_before_a_speed_change_keep_the_clock_they_ran_on() {
        // Attempts 1 to 4 at 60x (90 s, 3 min, 6 min apart on its clock: 1.5, 3 and 6 s
        // here), then the speed went up to 600x: the gaps read as they ran, not at 600x.
        let emu = [0, 90, 270, 630];
        let mut calls = paced(503, &[1_500, 3_000, 6_000]);
        for (i, c) in calls.iter_mut().enumerate() {
            emulator_marks(c, "60", emu[i]);
        }
        let d = analyze(&calls, &scaled_schedule(600.0), DEFAULT_TOLERANCE, &[]).unwrap();
        let gaps: Vec<String> = d
            .attempts
            .iter()
            .filter_map(|a| a.gap_text(600.0))
            .collect();
        assert_eq!(
            gaps,
            [
                "1.5 s (1 min 30 s on its clock)",
                "3 s (3 min on its clock)",
                "6 s (6 min on its clock)"
            ]
        );
        // The timeline sits each attempt at its time on that clock, and runs at 600x after the
        // last one.
        let map = d.clock.clone().unwrap();
        let at = |i: usize| map.secs_since_first(calls[i].inv.received_at);
        assert_eq!([at(0), at(1), at(2), at(3)], [0.0, 90.0, 270.0, 630.0]);
        let later = calls[3].inv.received_at + TimeDelta::seconds(1);
        assert_eq!(map.secs_since_first(later), 1230.0);
        // Halfway between two attempts, halfway on the clock.
        let mid = calls[0].inv.received_at + TimeDelta::milliseconds(750);
        assert_eq!(map.secs_since_first(mid), 45.0);
        // Without the emulator's times, each gap at its own call's mark.
        for c in &mut calls {
            c.inv.headers.truncate(1);
        }
        let d = analyze(&calls, &scaled_schedule(600.0), DEFAULT_TOLERANCE, &[]).unwrap();
        assert_eq!(d.clock, None);
        assert_eq!(
            d.attempts[1].gap_text(600.0).unwrap(),
            "1.5 s (1 min 30 s on its clock)"
        );
        // Unmarked calls on real time: the gap alone.
        let d = run(&paced(503, &[90_000]));
        assert_eq!(d.attempts[1].gap_text(1.0).unwrap(), "1 min 30 s");
    }

    /// The next retry and the retries left are there while the delivery is retrying, overdue
    /// included, and gone once the window is over; the words count in whole seconds.
    #[test]
    fn the_next_retry_is_known_until_the_window_is_over() {
        let now = t0();
        let next_at = now + TimeDelta::seconds(180);
        let last = now + TimeDelta::days(2);
        let retrying = State::Retrying {
            next_number: 3,
            next_at,
            retries_left: 190,
            last_retry_at: last,
            grace: Duration::from_secs(5),
        };
        assert_eq!(retrying.next_retry(now), Some((next_at, 190)));
        assert!(retrying.describe(now).contains("(in 3 min)"));
        // Overdue, with retries still allowed.
        let later = next_at + TimeDelta::milliseconds(15_800);
        assert_eq!(retrying.next_retry(later), Some((next_at, 190)));
        assert!(
            retrying.describe(later).contains("(15 s ago)"),
            "{}",
            retrying.describe(later)
        );
        // Past the last retry the window allows (and its grace): none.
        let over = last + TimeDelta::milliseconds(5_822);
        assert_eq!(retrying.next_retry(over), None);
        assert!(
            retrying.describe(over).contains("(5 s ago)"),
            "{}",
            retrying.describe(over)
        );
    }

    #[test]
    fn a_split_batch_says_where_each_message_stands() {
        let now = t0();
        let retrying = State::Retrying {
            next_number: 3,
            next_at: now + TimeDelta::seconds(180),
            retries_left: 190,
            last_retry_at: now + TimeDelta::days(2),
            grace: Duration::from_secs(5),
        };
        let split = State::Split {
            messages: 3,
            parts: vec![
                ("b-1".into(), Some(State::Succeeded { attempt: Some(2) })),
                ("b-2".into(), Some(retrying)),
                ("b-3".into(), None),
            ],
        };
        assert_eq!(
            split.describe(now),
            format!(
                "split: its 3 messages are retried one by one: b-1 succeeded on attempt 2; b-2 retrying, attempt 3 expected at {}; b-3 not seen yet",
                local(now + TimeDelta::seconds(180))
            )
        );
        assert!(split.under_way());
        // Under way while a message is unseen or retrying; not once each has ended, however.
        let ended = State::Split {
            messages: 2,
            parts: vec![
                ("b-1".into(), Some(State::Succeeded { attempt: Some(2) })),
                ("b-2".into(), Some(State::FailedPermanently { attempt: 2 })),
            ],
        };
        assert!(!ended.under_way());
        assert!(
            ended
                .describe(now)
                .ends_with("b-2 failed permanently: message discarded")
        );
        assert!(
            ended
                .describe(now)
                .starts_with("split: its 2 messages are retried")
        );
        // Each delivered: said in the past, not "are retried" under a green heading.
        let delivered = State::Split {
            messages: 2,
            parts: vec![
                ("b-1".into(), Some(State::Succeeded { attempt: Some(2) })),
                ("b-2".into(), Some(State::Succeeded { attempt: Some(3) })),
            ],
        };
        assert_eq!(
            delivered.describe(now),
            "split: its 2 messages were retried one by one, and each was delivered: b-1 succeeded on attempt 2; b-2 succeeded on attempt 3"
        );
    }

    fn call(id: i64, attempt: u32, at_secs: i64, status: u16, retry_after: Option<&str>) -> Stored {
        Stored {
            id,
            inv: Invocation {
                received_at: t0() + TimeDelta::seconds(at_secs),
                method: "POST".into(),
                path: "/".into(),
                query: None,
                headers: vec![],
                body: vec![],
                body_size: 0,
                declared_size: None,
                body_kept: true,
                peer: None,
                event: Some("status-report".into()),
                delivery: Some("d1".into()),
                attempt: Some(attempt),
                webhook_id: Some("234".into()),
                messages: Some(1),
                registration_check: false,
                findings: vec![],
                answer: SentAnswer {
                    status,
                    headers: retry_after
                        .map(|r| vec![("Retry-After".to_owned(), r.to_owned())])
                        .unwrap_or_default(),
                    ..SentAnswer::default()
                },
                took_us: 0,
                rule: None,
            },
        }
    }

    /// That `d` is discarded because its last answer's Retry-After reaches past the window.
    fn assert_discarded_by_retry_after(d: &Delivery) {
        assert!(
            matches!(
                d.state,
                State::Discarded {
                    by_retry_after: true,
                    ..
                }
            ),
            "{:?}",
            d.state
        );
    }

    fn run(calls: &[Stored]) -> Delivery {
        run_with(calls, &[])
    }

    /// [`run`], with the calls that answered the delivery's webhook 410.
    fn run_with(calls: &[Stored], cancels: &[Cancel]) -> Delivery {
        analyze(calls, &Schedule::default(), DEFAULT_TOLERANCE, cancels).unwrap()
    }

    /// The findings of `d` with `code`.
    fn of_code<'a>(d: &'a Delivery, code: &str) -> Vec<&'a Finding> {
        d.findings.iter().filter(|f| f.code == code).collect()
    }

    fn codes(d: &Delivery) -> Vec<&str> {
        d.findings.iter().map(|f| f.code.as_str()).collect()
    }

    /// Calls `gaps_ms` apart, all answered `status`.
    fn paced(status: u16, gaps_ms: &[i64]) -> Vec<Stored> {
        let mut at = 0;
        let mut calls = vec![call(1, 1, 0, status, None)];
        for (i, g) in gaps_ms.iter().enumerate() {
            at += g;
            let mut c = call(i as i64 + 2, i as u32 + 2, 0, status, None);
            c.inv.received_at = t0() + TimeDelta::milliseconds(at);
            calls.push(c);
        }
        calls
    }

    #[test]
    fn retries_on_a_fast_clock_suggest_the_speed_they_follow() {
        // `emulate --speed 600`: 90 s, 3, 6, 12, 15 min in 150, 300, 600, 1200, 1500 ms, each a
        // few ms late (the call's own time), read at 1x.
        let calls = paced(503, &[155, 304, 606, 1203, 1506, 1505]);
        let d = run(&calls);
        assert_eq!(codes(&d).len(), 6, "every retry is too early at 1x");
        assert_eq!(d.speed_hint, Some(600.0));
        // Read at 600x, they fit: no hint, and no finding.
        let fast = analyze(
            &calls,
            &scaled_schedule(600.0),
            tolerance_for(&scaled_schedule(600.0)),
            &[],
        )
        .unwrap();
        assert_eq!(fast.speed_hint, None);
        assert!(fast.findings.is_empty(), "{:?}", fast.findings);
        // Real retries read at 600x came far later than it expects: back to 1x.
        let real = paced(503, &[90_000, 180_000, 360_000]);
        let wrong = analyze(&real, &scaled_schedule(600.0), DEFAULT_TOLERANCE, &[]).unwrap();
        assert_eq!(wrong.speed_hint, Some(1.0));
        // An uncommon speed is rounded to two figures.
        let d = run(&paced(503, &[1_000, 2_000, 4_000, 8_000]));
        assert_eq!(d.speed_hint, Some(90.0));
        let d = run(&paced(503, &[7_000, 14_000, 28_000]));
        assert_eq!(d.speed_hint, Some(13.0));
    }

    #[test]
    fn calls_marked_with_their_clock_speed_are_read_on_that_clock() {
        use crate::store::Header;
        let mark = |calls: &mut [Stored], i: usize, v: &str| {
            calls[i]
                .inv
                .headers
                .push(Header::new("x-hookscope-clock-speed", v.as_bytes()));
        };
        // The 600x retries of the test above, marked by the emulator that made them.
        let mut calls = paced(503, &[155, 304, 606, 1203, 1506, 1505]);
        assert_eq!(marked_speed(&calls), None, "no mark, no speed");
        for i in 0..calls.len() {
            mark(&mut calls, i, "600");
        }
        assert_eq!(marked_speed(&calls), Some(600.0));
        // Read on the clock they name, whatever the reader chose: no finding, nothing to hint.
        let schedule = schedule_for(&calls, Schedule::default());
        assert_eq!(schedule, scaled_schedule(600.0));
        let d = analyze(&calls, &schedule, tolerance_for(&schedule), &[]).unwrap();
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        assert_eq!((d.marked_speed, d.speed_hint), (Some(600.0), None));
        // The speed changed from 600x to 60x after attempt 3: each gap is held to the clock its
        // call was made on, so neither part is "too early", whatever schedule is passed.
        let mut changed = paced(503, &[155, 304, 6_010, 12_010]);
        for (i, v) in ["600", "600", "600", "60", "60"].into_iter().enumerate() {
            mark(&mut changed, i, v);
        }
        let d = run(&changed);
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        // A gap whose calls were made at 600x and 60x is held to the faster: the wait may
        // have run at either. A retry too early for its clock is still one: 6 min at 60x is
        // 6 s, not 1 s.
        let mut early = paced(503, &[155, 3_010, 1_000]);
        for (i, v) in ["600", "600", "60", "60"].into_iter().enumerate() {
            mark(&mut early, i, v);
        }
        let d = analyze(&early, &scaled_schedule(600.0), DEFAULT_TOLERANCE, &[]).unwrap();
        assert_eq!(codes(&d), ["retry-too-early"], "{:?}", d.findings);
        // The latest call's mark wins (the speed its retries follow from now on).
        calls[6].inv.headers = vec![Header::new("X-Hookscope-Clock-Speed", b" 60 ")];
        assert_eq!(marked_speed(&calls), Some(60.0));
        // A mark that is not a speed the emulator runs at is passed over, for an earlier one.
        for bad in ["fast", "NaN", "inf", "0", "0.5", "-60", "2000000"] {
            let mut c = paced(503, &[155]);
            mark(&mut c, 0, "600");
            mark(&mut c, 1, bad);
            assert_eq!(marked_speed(&c), Some(600.0), "{bad}");
            assert_eq!(
                schedule_for(&c[1..], Schedule::default()),
                Schedule::default(),
                "{bad}"
            );
        }
    }

    /// The marks an emulator puts on its call: its clock's speed, and its time (`emu_secs`
    /// after 19:00 of t0's day).
    fn emulator_marks(c: &mut Stored, speed: &str, emu_secs: i64) {
        use crate::store::Header;
        let t = t0() + TimeDelta::hours(5) + TimeDelta::seconds(emu_secs);
        c.inv.headers = vec![
            Header::new("X-Hookscope-Clock-Speed", speed.as_bytes()),
            Header::new(
                "X-Hookscope-Clock-Time",
                t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
                    .as_bytes(),
            ),
        ];
    }

    #[test]
    fn the_same_retry_after_date_is_waited_for_once_on_the_emulators_clock() {
        use crate::store::Header;
        // At 60x, every answer 503 with the same date, 10 minutes after the first answer on
        // this machine's clock: the first retry waits for it (10 min of the emulator's clock,
        // 10 s here), the next ones follow the schedule (3 min, then 6).
        let date = "Mon, 16 Nov 2026 14:10:00 GMT";
        let real = [0, 10, 13];
        let emu = [0, 600, 780];
        let mut calls: Vec<Stored> = (0..3)
            .map(|i| call(i as i64 + 1, i as u32 + 1, real[i], 503, Some(date)))
            .collect();
        for (i, c) in calls.iter_mut().enumerate() {
            emulator_marks(c, "60", emu[i]);
        }
        let d = analyze(&calls, &scaled_schedule(60.0), DEFAULT_TOLERANCE, &[]).unwrap();
        // Read afresh, the date was still 9 min 47 s off at the second answer, and the third
        // call came "too early".
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        // The next retry: 6 min of its clock after the third call, 6 s here.
        let plan = d.projection.clone().unwrap();
        assert_eq!(
            plan.retries[0].at,
            calls[2].inv.received_at + TimeDelta::seconds(6)
        );
        // A retry that did not wait for the date is still too early.
        let t = t0() + TimeDelta::hours(5) + TimeDelta::seconds(300);
        calls[1].inv.headers[1] = Header::new(
            "X-Hookscope-Clock-Time",
            t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
                .as_bytes(),
        );
        calls[1].inv.received_at = t0() + TimeDelta::seconds(5);
        let d = analyze(&calls[..2], &scaled_schedule(60.0), DEFAULT_TOLERANCE, &[]).unwrap();
        assert_eq!(codes(&d), ["retry-too-early"]);
    }

    #[test]
    fn calls_with_the_emulators_times_are_measured_and_planned_on_its_clock() {
        use crate::store::Header;
        // Emulated times: 90 s, 3 min and 6 min apart, the first two at 600x, then the speed
        // went down to 60x halfway through the second wait (90 s at 600x, 90 s at 60x: 0.15 s +
        // 1.5 s of real time).
        let emu = [0, 90, 270, 630];
        let speeds = ["600", "600", "60", "60"];
        let mut calls = paced(503, &[150, 1_650, 6_000]);
        for (i, c) in calls.iter_mut().enumerate() {
            emulator_marks(c, speeds[i], emu[i]);
        }
        // Read at the speed now (60x): no finding, whatever the speeds along the way.
        let d = analyze(&calls, &scaled_schedule(60.0), DEFAULT_TOLERANCE, &[]).unwrap();
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        // Planned on its clock: retry 4 is 12 min after attempt 4 (12 s at 60x), and 195
        // attempts in all, not more.
        let plan = d.projection.clone().unwrap();
        assert_eq!(plan.retries[0].number, 5);
        assert_eq!(
            plan.retries[0].at,
            calls[3].inv.received_at + TimeDelta::seconds(12)
        );
        assert_eq!(plan.retries.last().unwrap().number, 195);
        // The window ends 2 days of its clock after the first failure: 2 days less the 630 s
        // already run, at 60x, from the last attempt.
        assert_eq!(
            d.window_end,
            calls[3].inv.received_at + TimeDelta::milliseconds((172_800 - 630) * 1000 / 60)
        );
        // A retry too early on its clock is one: 6 min due, 5 min came (beyond the 30 s the
        // timers may lag at 60x).
        let t = t0() + TimeDelta::hours(5) + TimeDelta::seconds(570);
        calls[3].inv.headers[1] = Header::new(
            "X-Hookscope-Clock-Time",
            t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
                .as_bytes(),
        );
        let d = analyze(&calls, &scaled_schedule(60.0), DEFAULT_TOLERANCE, &[]).unwrap();
        assert_eq!(codes(&d), ["retry-too-early"]);
        assert!(d.findings[0].message.contains("5 min"), "{:?}", d.findings);
        // One call without a time (or with one that is not): read on this machine's clock.
        calls[2].inv.headers.truncate(1);
        assert_eq!(clock_times(&calls), None);
    }

    #[test]
    fn no_clock_speed_is_suggested_from_too_little_or_mixed_evidence() {
        // One retry is not enough to tell.
        assert_eq!(run(&paced(503, &[150])).speed_hint, None);
        // On time: nothing to suggest.
        assert_eq!(run(&paced(503, &[90_000, 180_000])).speed_hint, None);
        // One early, one on time: a finding, not another clock.
        assert_eq!(run(&paced(503, &[150, 180_000])).speed_hint, None);
        // After a success no retry is expected; those calls say nothing about the clock.
        assert_eq!(run(&paced(200, &[150, 300])).speed_hint, None);
    }

    #[test]
    fn succeeded_on_attempt_3() {
        let d = run(&[
            call(1, 1, 0, 503, None),
            call(2, 2, 90, 503, None),
            call(3, 3, 270, 200, None),
        ]);
        assert_eq!(d.state, State::Succeeded { attempt: Some(3) });
        assert_eq!(d.state.describe(t0()), "succeeded on attempt 3");
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        assert_eq!(d.attempts[1].gap, Some(Duration::from_secs(90)));
        assert!(d.projection.is_none());
    }

    /// The end of the window the Timeline draws is where the plan's window ends: for a
    /// delivery first seen at attempt 65, two days from its first failure moved back by the
    /// delays before attempt 65 (the line had stood two days after attempt 65, past the last
    /// retry planned), and for one seen from attempt 1, two days from it.
    #[test]
    fn the_window_ends_two_days_from_the_first_failure_the_plan_counts() {
        let two_days = TimeDelta::days(2);
        let d = run(&[call(1, 1, 0, 503, None)]);
        assert_eq!(d.window_end, t0() + two_days);
        let d = run(&[call(1, 65, 0, 503, None)]);
        let plan = d.projection.as_ref().expect("retries to come");
        assert_eq!(d.window_end, plan.window_end);
        let back = Schedule::default().least_time_to(65);
        assert_eq!(
            d.window_end,
            t0() - TimeDelta::from_std(back).unwrap() + two_days
        );
        assert!(plan.retries.last().is_some_and(|r| r.at <= d.window_end));
    }

    #[test]
    fn a_success_without_an_attempt_number_does_not_invent_one() {
        let mut c = call(1, 1, 0, 200, None);
        c.inv.attempt = None;
        let d = run(&[c]);
        assert_eq!(d.state, State::Succeeded { attempt: None });
        assert_eq!(
            d.state.describe(t0()),
            "succeeded (the call had no attempt number that could be read)"
        );
    }

    /// Every state has its stable word (`show --json`'s `state_code`).
    #[test]
    fn each_state_has_a_code() {
        let at = t0();
        for (state, code) in [
            (State::Succeeded { attempt: Some(2) }, "succeeded"),
            (
                State::FailedPermanently { attempt: 1 },
                "failed-permanently",
            ),
            (State::WebhookCancelled { attempt: 1 }, "webhook-cancelled"),
            (State::StoppedByCancel { at }, "stopped-by-cancel"),
            (
                State::Discarded {
                    at,
                    by_retry_after: true,
                },
                "discarded",
            ),
            (
                State::Split {
                    messages: 2,
                    parts: Vec::new(),
                },
                "split",
            ),
        ] {
            assert_eq!(state.code(at), code, "{state:?}");
        }
        assert_eq!(
            run(&[call(1, 1, 0, 400, None)]).state.code(at),
            "failed-permanently"
        );
        assert_eq!(run(&[call(1, 1, 0, 503, None)]).state.code(at), "retrying");
    }

    #[test]
    fn failed_permanently_and_cancelled() {
        let d = run(&[call(1, 1, 0, 400, None)]);
        assert_eq!(
            d.state.describe(t0()),
            "failed permanently: message discarded"
        );
        let d = run(&[call(1, 1, 0, 410, None)]);
        assert_eq!(
            d.state.describe(t0()),
            "webhook cancelled by the 410 answer"
        );
        assert_eq!(d.heading_outcome(), Some(Outcome::WebhookCancelled));
        // A call answered 200 after the 410 leaves it cancelled, in the cancelled colour (its
        // heading had taken the last call's green).
        let d = run(&[call(1, 1, 0, 410, None), call(2, 2, 90, 200, None)]);
        assert!(
            matches!(d.state, State::WebhookCancelled { .. }),
            "{:?}",
            d.state
        );
        assert_eq!(d.heading_outcome(), Some(Outcome::WebhookCancelled));
        assert_eq!(
            run(&[call(1, 1, 0, 400, None)]).heading_outcome(),
            Some(Outcome::FailedPermanently)
        );
    }

    /// Delays count from the failure: a call held 35 s (past the service's wait) failed when
    /// the service stopped waiting, 30 s after it came, and its retry is due 90 s after that,
    /// not 90 s after it came (QA read a timed-out call as overdue while the retry was on
    /// time), nor 90 s after the answer no one read. One answered in 8 s failed then.
    #[test]
    fn the_next_attempt_counts_from_when_the_last_call_failed() {
        for (took, failed) in [(35, 30), (8, 8)] {
            let mut held = call(1, 1, 0, 503, None);
            held.inv.took_us = took * 1_000_000;
            let d = run(&[held]);
            let State::Retrying { next_at, grace, .. } = d.state else {
                panic!("{:?}", d.state)
            };
            // The next call may be held as long before it is stored: not overdue till then.
            assert_eq!(
                grace,
                Duration::from_secs(failed as u64) + DEFAULT_TOLERANCE,
                "held {took} s"
            );
            assert_eq!(
                next_at,
                t0() + TimeDelta::seconds(failed + 90),
                "held {took} s"
            );
        }
    }

    /// An early retry is measured from the failure too: a call answered after 31 s failed when
    /// the service stopped waiting, 30 s after it came, so its retry is due 2 min after it came.
    /// One 1 min 40 s after it is 20 s early (it had read as on time), and the finding names the
    /// 2 min the timeline expects (it had said 1 min 30 s).
    #[test]
    fn an_early_retry_counts_from_when_the_call_before_failed() {
        let held = |took_s: u64| {
            let mut c = call(1, 1, 0, 500, None);
            c.inv.took_us = took_s * 1_000_000;
            c
        };
        let d = run(&[held(31), call(2, 2, 100, 500, None)]);
        assert_eq!(codes(&d), ["retry-too-early"], "{:?}", d.findings);
        assert_eq!(
            d.findings[0].message,
            "Attempt 2 came 1 min 40 s after attempt 1; the schedule allows it no sooner than 2 min (1 min 30 s after attempt 1 failed, 30 s after it came)."
        );
        let d = run(&[held(35), call(2, 2, 35, 500, None)]);
        assert!(d.findings[0].message.contains("no sooner than 2 min ("));
        // On time, counted from the failure; and an answer of 8 s fails then.
        assert!(codes(&run(&[held(31), call(2, 2, 120, 500, None)])).is_empty());
        let d = run(&[held(8), call(2, 2, 90, 500, None)]);
        assert!(
            d.findings[0].message.contains(
                "no sooner than 1 min 38 s (1 min 30 s after attempt 1 failed, 8 s after it came)"
            ),
            "{:?}",
            d.findings
        );
        // A Retry-After date is a time, whenever the answer went: due at it (200 s after the
        // call), not 20 s later for the answer's time.
        let date = crate::contract::imf_fixdate(t0() + TimeDelta::seconds(200));
        let mut dated = call(1, 1, 0, 503, Some(&date));
        dated.inv.took_us = 20_000_000;
        assert!(codes(&run(&[dated.clone(), call(2, 2, 196, 503, None)])).is_empty());
        let d = run(&[dated, call(2, 2, 190, 503, None)]);
        assert!(
            d.findings[0]
                .message
                .contains("no sooner than 3 min 20 s ("),
            "{:?}",
            d.findings
        );
    }

    #[test]
    fn a_call_after_the_two_day_window_is_a_finding() {
        // Attempt 1 failed at once; the window ends 2 days later (172,800 s), and the tolerance
        // is 5 s.
        let window = 172_800;
        let last = 1350 + 190 * 900;
        let d = run(&[call(1, 1, 0, 503, None), call(2, 195, last, 503, None)]);
        assert_eq!(codes(&d), ["attempt-skipped"]);
        let d = run(&[
            call(1, 1, 0, 503, None),
            call(2, 196, window + 5, 503, None),
        ]);
        assert!(
            !codes(&d).contains(&"call-after-window"),
            "{:?}",
            d.findings
        );
        let d = run(&[
            call(1, 1, 0, 503, None),
            call(2, 196, window + 41 * 60, 503, None),
            call(3, 197, window + 56 * 60, 200, None),
        ]);
        let after = of_code(&d, "call-after-window");
        assert_eq!(after.len(), 1, "{:?}", d.findings);
        assert_eq!(after[0].severity, Severity::Warning);
        assert_eq!(
            after[0].message,
            "Attempt 196 came 41 min after the 2-day retry window ended (2 days from the first failure), and 1 call after it: the service should have discarded the message by then."
        );
        // The window counts from the failure: an answer held 20 s moves its end 20 s later.
        let mut held = call(1, 1, 0, 503, None);
        held.inv.took_us = 20_000_000;
        let d = run(&[held, call(2, 196, window + 20, 503, None)]);
        assert!(
            !codes(&d).contains(&"call-after-window"),
            "{:?}",
            d.findings
        );
        // First seen at attempt 65: the first failure was at least the delays to it earlier
        // (1350 s + 60 x 900 s), so the window ends that much sooner after it.
        let before = 1350 + 60 * 900;
        let d = run(&[
            call(1, 65, 0, 503, None),
            call(2, 66, window - before + 60, 503, None),
        ]);
        assert!(codes(&d).contains(&"call-after-window"), "{:?}", d.findings);
        let d = run(&[
            call(1, 65, 0, 503, None),
            call(2, 66, window - before - 60, 503, None),
        ]);
        assert!(
            !codes(&d).contains(&"call-after-window"),
            "{:?}",
            d.findings
        );
    }

    #[test]
    fn an_emulators_time_out_counts_as_the_services_30_seconds_on_its_clock() {
        // At 600x a receiver that never answers holds each call the 2 s of real time the
        // emulator waits at least (20 min of its clock); the emulator counts the service's 30 s
        // on its schedule, and stamps its calls so: 90 s after the first failure at 30 s, then
        // 3 min after the second at 150 s.
        let emu = [0, 120, 330];
        let real_ms = [0, 2_150, 4_450];
        let mut calls = paced(503, &[real_ms[1], real_ms[2] - real_ms[1]]);
        for (i, c) in calls.iter_mut().enumerate() {
            emulator_marks(c, "600", emu[i]);
            c.inv.took_us = 2_000_000;
        }
        let d = analyze(&calls, &scaled_schedule(600.0), DEFAULT_TOLERANCE, &[]).unwrap();
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        // The next retry: 6 min after the third call's time-out, on its clock (0.6 s here),
        // after the 2 s of real time the time-out took.
        let plan = d.projection.clone().unwrap();
        assert_eq!(
            plan.retries[0].at,
            calls[2].inv.received_at + TimeDelta::milliseconds(2_600)
        );
        // Each retry to come times out like the last: 12 min after this one's 30 s on its
        // clock, and in real time after the 2 s the time-out takes (1.2 s + 2 s).
        assert_eq!(
            plan.retries[1].at - plan.retries[0].at,
            TimeDelta::milliseconds(3_200)
        );
        // 189 attempts in all, as the emulator makes: each delay counts from a failure 30 s
        // after its call (195 is for failures at once).
        assert_eq!(plan.retries.last().unwrap().number, 189);
        // A call stamped past the window (2 days and 30 s after the first call's time) is
        // flagged, on the service's clock.
        let mut late = calls[2].clone();
        late.id = 4;
        late.inv.attempt = Some(4);
        late.inv.received_at += TimeDelta::seconds(300);
        emulator_marks(&mut late, "600", 172_800 + 30 + 3_600);
        late.inv.took_us = 2_000_000;
        calls.push(late);
        let d = analyze(&calls, &scaled_schedule(600.0), DEFAULT_TOLERANCE, &[]).unwrap();
        assert_eq!(codes(&d), ["call-after-window"]);
        assert!(
            d.findings[0]
                .message
                .starts_with("Attempt 4 came 1 h after the 2-day retry window ended (2 days from the first failure, on the service's clock):"),
            "{:?}",
            d.findings
        );
    }

    #[test]
    fn retrying_projects_the_next_attempt_and_what_is_left() {
        let d = run(&[call(1, 1, 0, 503, None), call(2, 2, 90, 503, None)]);
        let State::Retrying {
            next_number,
            next_at,
            retries_left,
            last_retry_at,
            grace,
        } = d.state.clone()
        else {
            panic!("{:?}", d.state)
        };
        // Answered at once: the tolerance alone.
        assert_eq!(grace, DEFAULT_TOLERANCE);
        assert_eq!(next_number, 3);
        assert_eq!(next_at, t0() + TimeDelta::seconds(90 + 180));
        assert_eq!(retries_left, 193, "194 retries in all, one made");
        assert_eq!(last_retry_at, t0() + TimeDelta::seconds(1350 + 190 * 900));
        let now = t0() + TimeDelta::seconds(100);
        let text = d.state.describe(now);
        assert!(
            text.starts_with("retrying: next attempt expected at "),
            "{text}"
        );
        assert!(
            text.contains("(in 2 min 50 s), 193 retries left until "),
            "{text}"
        );
        // Read the day before, the time carries its date: "at 11:47:30" read at 11:27 the
        // day before would seem twenty minutes away.
        let day_before = d
            .state
            .describe(next_at - TimeDelta::hours(24) - TimeDelta::minutes(20));
        let on = next_at.with_timezone(&Local);
        assert!(
            day_before.starts_with(&format!(
                "retrying: next attempt expected at {} (in 1 d)",
                on.format("%-d %b %H:%M:%S")
            )),
            "{day_before}"
        );
        // The same day, the time alone.
        assert!(
            text.starts_with(&format!(
                "retrying: next attempt expected at {} (in",
                on.format("%H:%M:%S")
            )),
            "{text}"
        );
        // The window's end two days off carries its date; read on its own day (a fast
        // emulator's window ends within the hour), the time alone, as the next attempt's.
        let end = last_retry_at.with_timezone(&Local);
        assert!(
            text.ends_with(&format!(" left until {}", end.format("%-d %b %H:%M"))),
            "{text}"
        );
        let that_day = d.state.describe(last_retry_at - TimeDelta::minutes(1));
        assert!(
            that_day.ends_with(&format!(" left until {}", end.format("%H:%M")))
                && !that_day.contains(&end.format("%-d %b").to_string()),
            "{that_day}"
        );
        // Due a moment ago, within the grace a call takes to be stored: not overdue yet.
        let due = d.state.describe(next_at + TimeDelta::seconds(3));
        assert!(
            due.starts_with("retrying: next attempt expected at ")
                && due.contains("(due now), 193 retries left"),
            "{due}"
        );
        // The next attempt late: said so, with what is left.
        let late = d.state.describe(next_at + TimeDelta::seconds(60));
        assert!(
            late.starts_with("retrying, overdue: next attempt was expected at "),
            "{late}"
        );
        assert!(
            late.contains("(1 min ago), 193 retries left until "),
            "{late}"
        );
        // Past the last retry the schedule allows: no longer "retrying".
        let over = d.state.describe(last_retry_at + TimeDelta::seconds(120));
        assert!(
            over.starts_with(
                "overdue: no retry came, and the last one the schedule allows was due at "
            ),
            "{over}"
        );
        assert!(
            over.contains("(2 min ago); the service discards the message after it"),
            "{over}"
        );
        // The same, as the stable words of `show --json`'s state_code.
        assert_eq!(d.state.code(now), "retrying");
        assert_eq!(d.state.code(next_at + TimeDelta::seconds(60)), "retrying");
        assert_eq!(
            d.state.code(last_retry_at + TimeDelta::seconds(120)),
            "overdue"
        );
        assert_eq!(d.projection.unwrap().retries.len(), 193);
    }

    #[test]
    fn retry_after_moves_the_projection() {
        let d = run(&[call(1, 1, 0, 503, Some("600"))]);
        let State::Retrying { next_at, .. } = d.state else {
            panic!()
        };
        assert_eq!(next_at, t0() + TimeDelta::seconds(600));
        // A 429 with Retry-After is honoured the same way.
        let d = run(&[call(1, 1, 0, 429, Some("300"))]);
        let State::Retrying { next_at, .. } = d.state else {
            panic!()
        };
        assert_eq!(next_at, t0() + TimeDelta::seconds(300));
    }

    /// A delivery first seen part-way (the receiver was down for its first attempts) began
    /// before it: its window holds only the retries left after that attempt, and a failed
    /// attempt 195, seen alone, is the last (QA saw "191 retries left" for two more days).
    #[test]
    fn a_delivery_first_seen_late_has_only_the_retries_its_window_holds() {
        let d = run(&[call(1, 195, 0, 503, None)]);
        assert_eq!(
            d.state,
            State::Discarded {
                at: t0(),
                by_retry_after: false,
            }
        );
        let d = run(&[call(1, 65, 0, 503, None)]);
        let State::Retrying {
            next_number,
            retries_left,
            ..
        } = d.state
        else {
            panic!("{:?}", d.state)
        };
        assert_eq!((next_number, retries_left), (66, 130));
        // Seen from attempt 1 on, the same attempt 195 is the last as before.
        let last = 1350 + 190 * 900;
        let d = run(&[call(1, 1, 0, 503, None), call(2, 195, last, 503, None)]);
        assert!(matches!(d.state, State::Discarded { .. }), "{:?}", d.state);
    }

    /// A Retry-After of exactly the window's two days, on a call that took a moment to answer:
    /// the retry falls at the window's end, counted from the first failure (the answer), so it
    /// comes, as the What-if and `schedule` say; counted from the call's arrival, the Timeline
    /// had said discarded.
    #[test]
    fn a_retry_after_of_exactly_the_window_leaves_one_retry() {
        let mut first = call(1, 1, 0, 503, Some("172800"));
        first.inv.took_us = 250_000;
        let d = run(&[first.clone()]);
        let State::Retrying {
            next_number,
            retries_left,
            next_at,
            ..
        } = d.state
        else {
            panic!("{:?}", d.state)
        };
        assert_eq!((next_number, retries_left), (2, 1));
        assert_eq!(
            next_at,
            t0() + TimeDelta::milliseconds(250) + TimeDelta::seconds(172_800)
        );
        // A second more is past it, on this call's answer as on the What-if's.
        first.inv.answer.headers = vec![("Retry-After".into(), "172801".into())];
        let d = run(&[first]);
        assert_discarded_by_retry_after(&d);
    }

    #[test]
    fn discarded_after_the_window() {
        let last = 1350 + 190 * 900;
        let d = run(&[call(1, 1, 0, 500, None), call(2, 195, last, 500, None)]);
        assert_eq!(
            d.state,
            State::Discarded {
                at: t0() + TimeDelta::seconds(last),
                by_retry_after: false,
            }
        );
        assert_eq!(d.state.describe(t0()), "discarded after the last retry");
        assert_eq!(d.state.code(t0()), "discarded");
        // A Retry-After past the window on the first answer: no retry at all, and said why.
        let d = run(&[call(1, 1, 0, 503, Some("200000"))]);
        assert_discarded_by_retry_after(&d);
        assert_eq!(
            d.state.describe(t0()),
            "discarded: the Retry-After of the last answer reaches past the 2-day window, so no retry fits in it"
        );
    }

    #[test]
    fn skipped_repeated_and_out_of_order_attempts() {
        let d = run(&[call(1, 1, 0, 503, None), call(2, 3, 300, 503, None)]);
        assert_eq!(codes(&d), vec!["attempt-skipped"]);
        let d = run(&[call(1, 1, 0, 503, None), call(2, 1, 300, 503, None)]);
        assert_eq!(codes(&d), vec!["attempt-repeated"]);
        // A repeat a moment later is a repeat only (the service may deliver twice), not also a
        // retry too early.
        let d = run(&[
            call(1, 1, 0, 503, None),
            call(2, 3, 300, 503, None),
            call(3, 3, 300, 503, None),
        ]);
        assert_eq!(codes(&d), vec!["attempt-skipped", "attempt-repeated"]);
        // A retry after a skipped attempt waits for both delays: 90 s + 3 min.
        let d = run(&[call(1, 1, 0, 503, None), call(2, 3, 200, 503, None)]);
        assert_eq!(codes(&d), vec!["attempt-skipped", "retry-too-early"]);
        assert!(
            d.findings[1].message.contains("no sooner than 4 min 30 s"),
            "{}",
            d.findings[1].message
        );
        let d = run(&[call(1, 1, 0, 503, None), call(2, 3, 270, 503, None)]);
        assert_eq!(codes(&d), vec!["attempt-skipped"]);
        let d = run(&[call(1, 2, 0, 503, None)]);
        assert_eq!(codes(&d), vec!["attempts-not-seen"]);
        assert!(
            d.findings[0]
                .message
                .ends_with("attempt 1 did not reach this receiver.")
        );
        let d = run(&[call(1, 4, 0, 503, None)]);
        assert!(d.findings[0].message.contains("attempts 1 to 3 did not"));
        // Attempt 1 arriving after attempt 2 did reach this receiver: out of order only.
        let d = run(&[call(1, 2, 0, 503, None), call(2, 1, 1, 503, None)]);
        assert_eq!(codes(&d), vec!["attempt-out-of-order"]);
        assert_eq!(d.findings[0].message, "Attempt 1 arrived after attempt 2.");
        // The service made attempt 2: the next is attempt 3, counted from attempt 2 (it had
        // been attempt 2 again, 90 s after the late attempt 1, with 194 retries left).
        let State::Retrying {
            next_number,
            next_at,
            retries_left,
            ..
        } = d.state
        else {
            panic!("{:?}", d.state)
        };
        assert_eq!((next_number, retries_left), (3, 193));
        assert_eq!(next_at, t0() + TimeDelta::seconds(180));
        // A late attempt 1 three days on is still a call after the window.
        let d = run(&[call(1, 2, 0, 503, None), call(2, 1, 3 * 86_400, 503, None)]);
        assert!(codes(&d).contains(&"call-after-window"), "{:?}", codes(&d));
        // A call with no attempt number may be the furthest: the last to arrive counts then.
        let mut unnumbered = call(2, 1, 90, 503, None);
        unnumbered.inv.attempt = None;
        let d = run(&[call(1, 1, 0, 503, None), unnumbered]);
        assert!(
            matches!(d.state, State::Retrying { next_at, .. } if next_at == t0() + TimeDelta::seconds(270)),
            "{:?}",
            d.state
        );
        // 3, 1, 2: both late ones said, against the highest seen before them.
        let d = run(&[
            call(1, 3, 0, 503, None),
            call(2, 1, 1, 503, None),
            call(3, 2, 2, 503, None),
        ]);
        let messages: Vec<&str> = d.findings.iter().map(|f| f.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "Attempt 1 arrived after attempt 3.",
                "Attempt 2 arrived after attempt 3."
            ]
        );
        // A late copy of an earlier attempt is a repeat (not out of order), said once with its
        // count, also with a call that names no attempt in between.
        for between in [Some(3), None] {
            let mut calls = vec![
                call(1, 1, 0, 503, None),
                call(2, 2, 90, 503, None),
                call(3, 3, 300, 503, None),
                call(4, 2, 301, 503, None),
            ];
            if between.is_none() {
                calls[2].inv.attempt = None;
            }
            let d = run(&calls);
            assert_eq!(codes(&d), vec!["attempt-repeated"], "{between:?}");
            assert!(d.findings[0].message.starts_with("Attempt 2 arrived twice"));
        }
    }

    #[test]
    fn an_early_retry_is_a_finding_with_tolerance() {
        let d = run(&[call(1, 1, 0, 503, None), call(2, 2, 30, 503, None)]);
        assert_eq!(codes(&d), vec!["retry-too-early"]);
        assert!(d.findings[0].message.contains("no sooner than 1 min 30 s"));
        // A least wait is said to the second, not rounded up past what the schedule allows
        // (a Retry-After of 1 d 2 h 35 min 12 s read "no sooner than 1 d 3 h").
        let d = run(&[call(1, 1, 0, 503, Some("95712")), call(2, 2, 1, 503, None)]);
        assert_eq!(codes(&d), vec!["retry-too-early"]);
        assert!(
            d.findings[0]
                .message
                .ends_with("no sooner than 1 d 2 h 35 min 12 s."),
            "{}",
            d.findings[0].message
        );
        let d = run(&[call(1, 1, 0, 503, None), call(2, 2, 87, 503, None)]);
        assert!(d.findings.is_empty(), "within the 5 s tolerance");
        // Retry-After 300 makes a retry at 120 s early.
        let d = run(&[call(1, 1, 0, 503, Some("300")), call(2, 2, 120, 503, None)]);
        assert_eq!(codes(&d), vec!["retry-too-early"]);
        // With 500 the service ignores Retry-After: a retry at 90 s is on time.
        let d = run(&[call(1, 1, 0, 500, Some("300")), call(2, 2, 90, 500, None)]);
        assert!(d.findings.is_empty(), "{:?}", d.findings);
    }

    #[test]
    fn calls_after_success_or_410() {
        let d = run(&[call(1, 1, 0, 200, None), call(2, 2, 90, 200, None)]);
        assert_eq!(codes(&d), vec!["call-after-final"]);
        // The first final answer decides the delivery; a stray call after it does not.
        assert_eq!(d.state, State::Succeeded { attempt: Some(1) });
        // Every attempt after the success is one, named (a repeat of it is said as a repeat),
        // whatever the call before it was answered.
        let d = run(&[
            call(1, 1, 0, 503, None),
            call(2, 2, 90, 200, None),
            call(3, 3, 100, 503, None),
            call(4, 3, 100, 503, None),
            call(5, 4, 100, 503, None),
        ]);
        let after: Vec<&str> = of_code(&d, "call-after-final")
            .iter()
            .map(|f| f.message.as_str())
            .collect();
        let at = local(t0() + TimeDelta::seconds(100));
        assert_eq!(
            after,
            [
                format!(
                    "Attempt 3 came at {at} after the delivery had succeeded on attempt 2 (answer 200)."
                ),
                format!(
                    "Attempt 4 came at {at} after the delivery had succeeded on attempt 2 (answer 200)."
                ),
            ]
        );
        // The same attempt delivered twice is one finding, a repeat, not also a call after the
        // end.
        let d = run(&[call(1, 1, 0, 200, None), call(2, 1, 5, 200, None)]);
        assert_eq!(codes(&d), vec!["attempt-repeated"]);
        assert_eq!(d.state, State::Succeeded { attempt: Some(1) });
        // Four times: said once, with the count.
        let d = run(&[
            call(1, 1, 0, 200, None),
            call(2, 1, 5, 200, None),
            call(3, 1, 6, 200, None),
            call(4, 1, 7, 200, None),
        ]);
        assert_eq!(codes(&d), vec!["attempt-repeated"]);
        assert!(
            d.findings[0]
                .message
                .starts_with("Attempt 1 arrived 4 times")
        );
        // 1, 3, 2: attempt 2 came, late; not "never arrived".
        let d = run(&[
            call(1, 1, 0, 503, None),
            call(2, 3, 300, 503, None),
            call(3, 2, 301, 503, None),
        ]);
        assert!(!codes(&d).contains(&"attempt-skipped"), "{:?}", d.findings);
        assert!(
            codes(&d).contains(&"attempt-out-of-order"),
            "{:?}",
            d.findings
        );
        let d = run(&[
            call(1, 1, 0, 503, None),
            call(2, 2, 90, 200, None),
            call(3, 3, 300, 503, None),
        ]);
        assert_eq!(d.state, State::Succeeded { attempt: Some(2) });
        assert!(d.projection.is_none());
        let d = run_with(&[call(5, 1, 600, 503, None)], &[cancel(t0(), 1, None)]);
        assert_eq!(codes(&d), vec!["call-after-410"]);
        // Still read as retrying (the service went on calling), and the finding says so: it
        // had stood unexplained beside "194 retries left".
        assert!(matches!(d.state, State::Retrying { .. }), "{:?}", d.state);
        assert!(
            d.findings[0]
                .message
                .ends_with("the service should have stopped calling it. As it went on calling, this delivery's retries are still expected (the webhook may have been set up again where Hookscope could not see it)."),
            "{}",
            d.findings[0].message
        );
        // Set up again (a registration check passed) before the call: nothing wrong.
        let enabled = t0() + TimeDelta::seconds(300);
        let after = |lifted| {
            let d = run_with(
                &[call(5, 1, 600, 503, None), call(6, 2, 690, 503, None)],
                &[cancel(t0(), 1, Some(lifted))],
            );
            codes(&d).into_iter().map(str::to_owned).collect::<Vec<_>>()
        };
        assert!(after(enabled).is_empty());
        // A delivery that ended says nothing of retries.
        let d = run_with(&[call(5, 1, 600, 200, None)], &[cancel(t0(), 1, None)]);
        assert_eq!(codes(&d), vec!["call-after-410"]);
        assert!(
            d.findings[0]
                .message
                .ends_with("should have stopped calling it.")
        );
        // Set up again only between the two attempts: the first was still wrong.
        assert_eq!(
            after(t0() + TimeDelta::seconds(650)),
            vec!["call-after-410"]
        );
        // Cancelled again later: calls after the second 410 are wrong again.
        let d = run_with(
            &[call(5, 1, 600, 503, None), call(6, 2, 690, 503, None)],
            &[
                cancel(t0(), 1, Some(enabled)),
                cancel(t0() + TimeDelta::seconds(620), 3, None),
            ],
        );
        assert_eq!(codes(&d), vec!["call-after-410"]);
    }

    /// A call answered 410 itself, after an earlier 410 to its webhook: the service went on
    /// calling, which the first 410 should have stopped (a QA rule answering 410 to a webhook
    /// found it unflagged). The first 410 alone is not flagged.
    #[test]
    fn a_second_410_is_a_call_after_410() {
        let second = t0() + TimeDelta::seconds(600);
        let d = run_with(
            &[call(5, 1, 600, 410, None)],
            &[cancel(t0(), 1, None), cancel(second, 5, None)],
        );
        assert_eq!(codes(&d), vec!["call-after-410"]);
        let d = run_with(
            &[call(1, 1, 0, 410, None)],
            &[cancel(t0(), 1, None), cancel(second, 5, None)],
        );
        assert!(codes(&d).is_empty(), "{:?}", codes(&d));
    }

    fn cancel(at: DateTime<Utc>, id: i64, lifted: Option<DateTime<Utc>>) -> Cancel {
        Cancel {
            at,
            answered: at + TimeDelta::milliseconds(2),
            id,
            lifted,
        }
    }

    #[test]
    fn a_message_retried_on_its_own_starts_with_the_batch_that_carried_it() {
        assert_eq!(batch_parent("dlv-28-000003-2"), Some("dlv-28-000003"));
        assert_eq!(batch_parent("d1"), None);
        assert_eq!(batch_parent("abc-"), None);
        assert_eq!(batch_parent("-3"), None);
        assert_eq!(batch_parent("dlv-x"), None);
        // The batch (3 messages) failed at 0; this message's own retries are attempts 2 and 3.
        let mut batch = call(1, 1, 0, 503, None);
        batch.inv.messages = Some(3);
        let own = vec![call(7, 2, 90, 503, None), call(9, 3, 270, 200, None)];
        let joined = with_batch_calls(own.clone(), vec![batch.clone()]);
        assert_eq!(
            joined.iter().map(|c| c.id).collect::<Vec<_>>(),
            vec![1, 7, 9]
        );
        let d = run(&joined);
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        assert_eq!(d.state, State::Succeeded { attempt: Some(3) });
        // Without the batch, attempt 1 reads as missing.
        assert_eq!(codes(&run(&own)), vec!["attempts-not-seen"]);
        // A one-message call of the parent, or one after this delivery began, is not its batch.
        let mut single = batch.clone();
        single.inv.messages = Some(1);
        assert_eq!(with_batch_calls(own.clone(), vec![single]).len(), 2);
        let late = call(11, 4, 500, 503, None);
        let mut late = late;
        late.inv.messages = Some(3);
        assert_eq!(with_batch_calls(own.clone(), vec![late]).len(), 2);
        // A delivery that starts at attempt 1 is left alone.
        let fresh = vec![call(7, 1, 90, 503, None)];
        assert_eq!(with_batch_calls(fresh, vec![batch]).len(), 1);
    }

    #[test]
    fn a_410_to_another_delivery_stops_this_one() {
        let retrying = [call(5, 1, 0, 503, None), call(6, 2, 90, 503, None)];
        let analyze_with = |cancels: &[Cancel]| run_with(&retrying, cancels);
        // Call 7 (another delivery) answered 410 after this one's second attempt.
        let at = t0() + TimeDelta::seconds(120);
        let d = analyze_with(&[cancel(at, 7, None)]);
        assert_eq!(d.state, State::StoppedByCancel { at });
        assert!(d.projection.is_none(), "no retry is projected");
        assert!(
            d.state
                .describe(at)
                .starts_with("stopped: webhook cancelled by the 410 answer")
        );
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        // A 410 before this delivery began (the webhook was enabled again since) leaves it be.
        let d = analyze_with(&[cancel(t0() - TimeDelta::seconds(60), 1, None)]);
        assert!(matches!(d.state, State::Retrying { .. }), "{:?}", d.state);
        // Enabled again before the next retry was due (attempt 3, at 90 + 180 s): the retries
        // go on.
        let d = analyze_with(&[cancel(at, 7, Some(at + TimeDelta::seconds(30)))]);
        assert!(matches!(d.state, State::Retrying { .. }), "{:?}", d.state);
        // Enabled again only after it was due: that retry was dropped while the webhook was
        // cancelled, so the delivery stays stopped.
        let d = analyze_with(&[cancel(at, 7, Some(t0() + TimeDelta::seconds(300)))]);
        assert_eq!(d.state, State::StoppedByCancel { at });
        // A late attempt 1 that came after the 410 was known: the service was still calling,
        // so the delivery is not read as stopped (it is flagged as a call after the 410).
        let crossed = [call(5, 2, 0, 503, None), call(6, 1, 200, 503, None)];
        let d = run_with(&crossed, &[cancel(t0() + TimeDelta::seconds(100), 7, None)]);
        assert!(
            !matches!(d.state, State::StoppedByCancel { .. }),
            "{:?}",
            d.state
        );
        // The last retry the window allows failed: discarded, 410 or not.
        let last = 1350 + 190 * 900;
        let done = [call(5, 1, 0, 503, None), call(6, 195, last, 503, None)];
        let d = run_with(&done, &[cancel(t0() + TimeDelta::seconds(last), 7, None)]);
        assert!(matches!(d.state, State::Discarded { .. }), "{:?}", d.state);
        // An answer whose Retry-After reaches past the window discarded the message itself,
        // 410 or not: the heading says so, as the row, the list and the detail do.
        let far = [call(5, 1, 0, 503, Some("200000"))];
        let d = run_with(&far, &[cancel(t0(), 7, None)]);
        assert_discarded_by_retry_after(&d);
        // An attempt after the 410 (the webhook was set up again between): not stopped.
        let later = [
            call(5, 1, 0, 503, None),
            call(6, 2, 90, 503, None),
            call(8, 3, 290, 503, None),
        ];
        let d = run_with(
            &later,
            &[cancel(at, 7, Some(t0() + TimeDelta::seconds(200)))],
        );
        assert!(matches!(d.state, State::Retrying { .. }), "{:?}", d.state);
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        // A delivery that ended before the 410 keeps its own end.
        let done = [call(5, 1, 0, 503, None), call(6, 2, 90, 200, None)];
        let d = run_with(&done, &[cancel(at, 7, None)]);
        assert_eq!(d.state, State::Succeeded { attempt: Some(2) });
    }

    #[test]
    fn a_call_that_crossed_the_410_on_its_way_is_not_after_it() {
        // Call 7 (another delivery) arrived at 89.5 s and was answered 410 after 1.5 s (a slow
        // commit); this delivery's attempt 2 arrived at 90 s, while the 410 was being answered,
        // or 3 s after it, within the tolerance: the service had not read the 410 yet. Its
        // retries stop with the 410 all the same.
        let at = t0() + TimeDelta::milliseconds(89_500);
        let slow = Cancel {
            at,
            answered: at + TimeDelta::milliseconds(1_500),
            id: 7,
            lifted: None,
        };
        for second_at in [90, 94] {
            let crossed = [call(5, 1, 0, 503, None), call(6, 2, second_at, 503, None)];
            let d = run_with(&crossed, std::slice::from_ref(&slow));
            assert!(d.findings.is_empty(), "{second_at} s: {:?}", d.findings);
            assert_eq!(d.state, State::StoppedByCancel { at }, "{second_at} s");
        }
        // Past the answer and the tolerance, the service had read it: that call is flagged, and
        // the delivery (called again, so evidently not stopped) reads as retrying.
        let late = [call(5, 1, 0, 503, None), call(6, 2, 97, 503, None)];
        let d = run_with(&late, &[slow]);
        assert_eq!(codes(&d), vec!["call-after-410"]);
        assert!(matches!(d.state, State::Retrying { .. }), "{:?}", d.state);
    }

    #[test]
    fn a_fast_clock_scales_the_schedule() {
        let s = scaled_schedule(60.0);
        assert_eq!(s.delay_before_retry(1), Duration::from_millis(1500));
        assert_eq!(s.window, Duration::from_secs(2880));
        assert_eq!(scaled_schedule(0.5), Schedule::default());
    }

    #[test]
    fn a_fast_clock_scales_retry_after_too() {
        // The emulator at 60x reads "Retry-After: 120" on its own clock: 2 s of real time.
        let s = scaled_schedule(60.0);
        assert_eq!(
            s.effective_delay(1, Some(Duration::from_secs(120))),
            Duration::from_secs(2)
        );
        let calls = [
            call(1, 1, 0, 503, Some("120")),
            call(2, 2, 3, 503, Some("120")),
        ];
        let d = analyze(&calls, &s, Duration::ZERO, &[]).unwrap();
        assert!(d.findings.is_empty(), "{:?}", d.findings);
        match d.state {
            State::Retrying { next_at, .. } => {
                assert_eq!(
                    next_at,
                    t0() + TimeDelta::seconds(3) + TimeDelta::seconds(3)
                );
            }
            other => panic!("expected a retry, got {other:?}"),
        }
        assert_eq!(tolerance_for(&s), Duration::from_millis(500));
        assert_eq!(tolerance_for(&Schedule::default()), DEFAULT_TOLERANCE);
        let early = [call(1, 1, 0, 503, Some("120")), call(2, 2, 1, 503, None)];
        let d = analyze(&early, &s, tolerance_for(&s), &[]).unwrap();
        assert_eq!(codes(&d), vec!["retry-too-early"]);
        assert!(
            d.findings[0].message.contains("no sooner than 2 s"),
            "{}",
            d.findings[0].message
        );
    }
}
