//! The service's side of the contract: the message life cycle, the registration check, and the
//! invoker that calls webhooks and retries on the contract's schedule, by the emulator's clock.

use super::{Mail, Shared};
use crate::api::Transport;
use crate::api::model::{InvokeOption, Webhook};
use crate::contract::slowdown::{Gate, RULE as SLOW_RULE, SLOW_FOR};
use crate::contract::{
    ANSWER_TIMEOUT, EventKind, Message, MessageStatus, Outcome, RetryAfter, RetryDates, Schedule,
    Submission, TEST_NUMBER, TriggerScope, outcome_of,
};
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::Duration;

/// Emulated time between a message's status changes.
const STEP: Duration = Duration::from_secs(2);
/// The least real time the invoker waits for an answer, whatever the clock's speed: a commit
/// on a loaded laptop can take a second (1 s made "caller hung up" findings in a demo at 60x
/// while other work ran).
pub const MIN_REAL_ANSWER_WAIT: Duration = Duration::from_secs(2);
/// Real time the invoker waits for more events to batch into one call (invokeOption MANY).
const BATCH_WINDOW: Duration = Duration::from_millis(50);

/// How long a call's caller waits for its answer in real time: the service's 30 s, or, for a
/// call Hookscope's emulator marked with its clock's speed, [`answer_wait_at`] that speed.
pub fn caller_wait(marked_speed: Option<f64>) -> Duration {
    marked_speed.map_or(ANSWER_TIMEOUT, answer_wait_at)
}

/// How long the emulator waits for an answer in real time with its clock at `speed`: the
/// service's 30 s on that clock, and never less than [`MIN_REAL_ANSWER_WAIT`]. A speed that is
/// not a positive number counts as 1.
pub fn answer_wait_at(speed: f64) -> Duration {
    let speed = if speed.is_finite() && speed > 0.0 {
        speed
    } else {
        1.0
    };
    ANSWER_TIMEOUT.div_f64(speed).max(MIN_REAL_ANSWER_WAIT)
}

/// How long a call took on the service's schedule, from the real time `took` it took and the
/// clock speed it was marked with (see [`caller_wait`]): a call its caller gave up on took the
/// service's 30 s, however little real time a fast clock waited for it (2 s at 600x, which that
/// clock counts as 20 minutes); an answered one took its real time. The emulator plans each
/// retry from this, and the receiver's reading of its calls does the same.
pub fn schedule_took(took: Duration, marked_speed: Option<f64>) -> Duration {
    if took >= caller_wait(marked_speed) {
        ANSWER_TIMEOUT
    } else {
        took.min(ANSWER_TIMEOUT)
    }
}

/// How long a call waits for its answer in real time, on the emulator's clock.
fn answer_wait(s: &Shared) -> Duration {
    answer_wait_at(s.clock.speed())
}

/// "no answer within 30 seconds", and what that was in real time on a fast clock.
fn no_answer_within(s: &Shared) -> String {
    let wait = answer_wait(s);
    if wait > s.clock.real(ANSWER_TIMEOUT) {
        format!(
            "no answer within {} (the service's 30 seconds are less on the emulator's {}x clock; it waits at least {} of real time)",
            crate::text::human_duration(wait),
            s.clock.speed(),
            crate::text::human_duration(MIN_REAL_ANSWER_WAIT)
        )
    } else {
        "no answer within 30 seconds".to_owned()
    }
}

/// POST `[]` with the invoker's headers; anything but 200 refuses the URL.
pub async fn registration_check(s: &Shared, url: &str) -> Result<(), String> {
    let target = reqwest::Url::parse(url).map_err(|e| format!("url '{url}' is not valid: {e}"))?;
    super::check_target(&target, s.allow_remote())?;
    let r = s
        .http
        .post(target)
        .header("Content-Type", "application/json")
        .header("User-Agent", s.brand().user_agent())
        // Its clock's speed, as on every call it makes: a receiver that holds its answer
        // then says when this emulator stops waiting (2 s at 60x), not the real service's 30 s.
        .header(super::CLOCK_SPEED_HEADER, s.clock.speed().to_string())
        .body("[]")
        .timeout(answer_wait(s))
        .send()
        .await;
    let why = match r {
        Ok(r) if r.status().as_u16() == 200 => {
            s.log(format!("registration check of {url}: 200"));
            return Ok(());
        }
        Ok(r) => match r.status().canonical_reason() {
            Some(reason) => format!("{} - {reason}", r.status().as_u16()),
            // A code with no standard reason (599, say): the code alone, no dangling dash.
            None => r.status().as_u16().to_string(),
        },
        Err(e) => match Transport::of(url.starts_with("https:"), &e) {
            Transport::Timeout => no_answer_within(s),
            Transport::Refused => "the connection was refused".to_owned(),
            Transport::Tls(why) => format!("the secure connection failed: {why}"),
            Transport::Closed => "the connection was closed without an answer".to_owned(),
            Transport::Other(chain) => chain,
        },
    };
    s.log(format!(
        "registration check of {url}: {why}; the URL is refused"
    ));
    Err(format!("Invoking the Webhook URL caused an error: {why}"))
}

fn new_message(
    s: &Shared,
    kind: &str,
    from: &str,
    to: &str,
    body: &str,
    status: MessageStatus,
) -> Message {
    let mut d = s.data();
    let id = d.next_message;
    d.next_message += 1;
    let m = Message {
        id: id.to_string(),
        kind: kind.to_owned(),
        from: from.to_owned(),
        to: to.to_owned(),
        body: body.to_owned(),
        encoding: "TEXT".into(),
        protocol_id: 0,
        message_class: 2,
        number_of_parts: None,
        credit_cost: None,
        user_supplied_id: None,
        submission: Submission {
            id: format!("{}", id + 7_000_000_000_000_000_000),
            date: now_iso_unlocked(&s.clock),
        },
        status,
        related_sent_message_id: None,
    };
    d.messages.insert(id, m.clone());
    m
}

fn now_iso_unlocked(c: &super::Clock) -> String {
    c.now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn set_status(s: &Shared, id: &str, status: MessageStatus, cost: Option<f64>) -> Option<Message> {
    let key: u128 = id.parse().ok()?;
    let mut d = s.data();
    let m = d.messages.get_mut(&key)?;
    m.status = status;
    m.number_of_parts = Some(i64::from(super::routes::parts(&m.body, &m.encoding)));
    if cost.is_some() {
        m.credit_cost = cost;
    }
    Some(m.clone())
}

/// One message to send, as a submission entry and the call's query give it.
pub struct Outgoing<'a> {
    pub from: &'a str,
    pub to: &'a str,
    pub body: &'a str,
    pub user_supplied_id: Option<String>,
    pub reports: &'a str,
    pub encoding: &'a str,
    /// As submitted (the service's defaults, 2 and 0, when not).
    pub message_class: i64,
    pub protocol_id: i64,
    /// `schedule-date`: not sent before then (on the emulator's clock).
    pub scheduled: Option<chrono::DateTime<chrono::Utc>>,
}

/// Accept a message for sending and play its life cycle: ACCEPTED (or SCHEDULED until its
/// schedule date) -> SENT -> DELIVERED (or FAILED.HANDSET_ERROR for the test number), each
/// change from SENT on a status report.
pub fn submit(s: &Arc<Shared>, sub: Outgoing<'_>) -> Message {
    let Outgoing {
        from,
        to,
        body,
        user_supplied_id,
        reports,
        encoding,
        message_class,
        protocol_id,
        scheduled,
    } = sub;
    // A date already passed (on the emulator's clock) sends at once.
    let scheduled = scheduled.filter(|at| *at > s.clock.now());
    let first = if scheduled.is_some() {
        "SCHEDULED"
    } else {
        "ACCEPTED"
    };
    let mut m = new_message(s, "SENT", from, to, body, MessageStatus::new(first, None));
    m.user_supplied_id = user_supplied_id;
    m.encoding = encoding.to_owned();
    m.message_class = message_class;
    m.protocol_id = protocol_id;
    if let Ok(key) = m.id.parse::<u128>()
        && let Some(stored) = s.data().messages.get_mut(&key)
    {
        stored.user_supplied_id = m.user_supplied_id.clone();
        stored.encoding = m.encoding.clone();
        stored.message_class = message_class;
        stored.protocol_id = protocol_id;
    }
    let test = to.trim_start_matches('+') == TEST_NUMBER;
    match scheduled {
        Some(at) => s.log(format!("message {} to {to} scheduled for {at}", m.id)),
        None => s.log(format!("message {} to {to} accepted", m.id)),
    }
    let (s2, id, reports) = (s.clone(), m.id.clone(), reports.to_owned());
    let cost = if test {
        0.0
    } else {
        f64::from(super::routes::parts(body, encoding))
    };
    s2.rt.clone().spawn(async move {
        if let Some(at) = scheduled {
            s2.clock.sleep_until(at).await;
        }
        let t = s2.clock.now() + chrono::TimeDelta::from_std(STEP).unwrap_or_default();
        s2.clock.sleep_until(t).await;
        if let Some(sent) = set_status(&s2, &id, MessageStatus::new("SENT", None), Some(cost)) {
            s2.log(format!("message {id} is {}", sent.status.id));
            if reports == "ALL" {
                dispatch(&s2, TriggerScope::Sent, sent);
            }
        }
        let t = s2.clock.now() + chrono::TimeDelta::from_std(STEP).unwrap_or_default();
        s2.clock.sleep_until(t).await;
        let final_status = if test {
            MessageStatus::new("FAILED", Some("HANDSET_ERROR"))
        } else {
            MessageStatus::new("DELIVERED", None)
        };
        let failed = test;
        if let Some(done) = set_status(&s2, &id, final_status, None) {
            s2.log(format!("message {id} is {}", done.status.id));
            if reports == "ALL" || (reports == "ERRORS" && failed) {
                dispatch(&s2, TriggerScope::Sent, done);
            }
        }
    });
    m
}

/// A message from a handset arrives.
pub fn receive(s: &Arc<Shared>, from: &str, to: &str, body: &str) -> Message {
    // Received, so delivered to the service: service-api.md's status.type list has no
    // RECEIVED (that is the message's type).
    let status = MessageStatus::new("DELIVERED", None);
    let m = new_message(s, "RECEIVED", from, to, body, status);
    s.log(format!("message {} received from {from}", m.id));
    dispatch(s, TriggerScope::Received, m.clone());
    m
}

/// Send `message` to every active webhook of `scope`.
fn dispatch(s: &Arc<Shared>, scope: TriggerScope, message: Message) {
    let hooks: Vec<Webhook> = s
        .data()
        .webhooks
        .values()
        .filter(|w| w.active && w.trigger_scope == scope)
        .cloned()
        .collect();
    for w in hooks {
        let s2 = s.clone();
        let m = message.clone();
        s.rt.spawn(async move {
            let batch = if w.invoke_option == Some(InvokeOption::Many) {
                collect_batch(&s2, &w, m).await
            } else {
                Some(vec![m])
            };
            if let Some(batch) = batch {
                deliver(s2, w, batch, None).await;
            }
        });
    }
}

/// For invokeOption MANY: the first event of a burst waits briefly and takes up to 10 that are
/// queued for the same webhook; the others find their message already taken.
async fn collect_batch(s: &Arc<Shared>, w: &Webhook, m: Message) -> Option<Vec<Message>> {
    let leader = {
        let mut d = s.data();
        let list = d.batches.entry(w.id).or_default();
        list.push(m);
        list.len() == 1
    };
    if !leader {
        return None;
    }
    tokio::time::sleep(BATCH_WINDOW).await;
    let (batch, rest) = {
        let mut d = s.data();
        let list = d.batches.entry(w.id).or_default();
        let take = list.len().min(10);
        let batch: Vec<Message> = list.drain(..take).collect();
        (batch, std::mem::take(list))
    };
    // Anything past 10 goes out in calls of its own.
    for chunk in rest.chunks(10) {
        let (s2, w2, c) = (s.clone(), w.clone(), chunk.to_vec());
        s.rt.spawn(async move { deliver(s2, w2, c, None).await });
    }
    Some(batch)
}

struct Resume {
    delivery: String,
    attempt: u32,
    first_failure: DateTime<Utc>,
    at: DateTime<Utc>,
    dates: RetryDates,
}

/// Call the webhook with `messages` until the contract says stop. (Boxed: a failed batch
/// spawns one delivery per message.)
fn deliver(
    s: Arc<Shared>,
    w: Webhook,
    messages: Vec<Message>,
    resume: Option<Resume>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    Box::pin(deliver_inner(s, w, messages, resume))
}

async fn deliver_inner(s: Arc<Shared>, w: Webhook, messages: Vec<Message>, resume: Option<Resume>) {
    let event = w.trigger_scope.event();
    let schedule = Schedule::default();
    // When each attempt is due, in emulated time: the delivery's schedule time. The next one
    // is planned from when this one was due plus the time its call took on the schedule (its
    // real time, or 30 s for a time-out), not from the emulated clock after it: on a fast clock
    // a millisecond of timer lag or of answer time would otherwise count as seconds or minutes
    // of schedule, and the 2 s of real time a time-out must wait at least as 20 minutes at
    // 600x, so a delivery would make fewer attempts in its 2 days than the service makes, or
    // run past them. Each call is stamped with this time (its clock-time header), so the
    // receiver reads it on the same schedule. At speed 1 the two are the same.
    let (delivery, mut attempt, mut first_failure, mut due, mut dates) = match resume {
        Some(r) => {
            s.clock.sleep_until(r.at).await;
            (r.delivery, r.attempt, Some(r.first_failure), r.at, r.dates)
        }
        None => {
            let mut d = s.data();
            d.next_delivery += 1;
            // The webhook first and the count last: ids of one webhook share their start and
            // differ at their end, the part a narrow list keeps (it cuts ids at the front).
            let id = format!("dlv-{}-{:06}", w.id, d.next_delivery);
            drop(d);
            (id, 1, None, s.clock.now(), RetryDates::default())
        }
    };
    let lane = s.lane(w.id);
    loop {
        // Its turn at the webhook's pace first: after a 429, alone, and spaced from the call
        // before (held until this call is answered); then a slot among the webhook's calls;
        // then a webhook deleted or deactivated (or cancelled by a 410) while this call waited
        // is not called.
        let mut pace = lane.pace.lock().await;
        let alone = match pace.gate(s.clock.now()) {
            Gate::Free => None,
            Gate::Ended => {
                s.log(format!(
                    "webhook {}: {} min without a 429, back to full speed",
                    w.id,
                    SLOW_FOR.as_secs() / 60
                ));
                None
            }
            Gate::Alone(at) => Some(at),
        };
        let mut pace = match alone {
            Some(at) => {
                s.clock.sleep_until(at).await;
                // Held back by the slow-down: the call goes when the gate opens.
                due = due.max(at);
                Some(pace)
            }
            None => {
                drop(pace);
                None
            }
        };
        // Err only if the semaphore were closed, which it never is.
        let permit = lane.slots.acquire().await.ok();
        let current = s.data().webhooks.get(&w.id).cloned();
        let Some(hook) = current.filter(|h| h.active) else {
            s.log(format!(
                "delivery {delivery}: webhook {} is gone or inactive, stopping",
                w.id
            ));
            return;
        };
        if let Some(p) = pace.as_mut() {
            p.called(due);
        }
        let started = std::time::Instant::now();
        let (status, retry_after, failed_how) =
            call(&s, &hook, event, &delivery, attempt, due, &messages).await;
        let timed_out = failed_how == Some(Unanswered::TimedOut);
        let took = started.elapsed();
        drop(permit);
        let slowed = if status == Some(429) {
            let now = s.clock.now();
            match pace.as_mut() {
                Some(p) => p.answered_429(now),
                None => lane.pace.lock().await.answered_429(now),
            }
        } else {
            false
        };
        drop(pace);
        let outcome = status.map_or(Outcome::RetryTemporary, outcome_of);
        let answered_at = Utc::now();
        // A refused connection is not a time-out: said as what happened.
        let how = failed_how.unwrap_or(Unanswered::Failed);
        let answered = status.map_or(how.words().to_owned(), |c| c.to_string());
        // For the outbox's sentences: "was answered 503", "got no answer in time".
        let was_answered =
            status.map_or(how.sentence().to_owned(), |c| format!("was answered {c}"));
        s.log(format!(
            "delivery {delivery} attempt {attempt} to webhook {}: {answered} ({})",
            hook.id,
            outcome.as_str()
        ));
        if slowed {
            s.log(format!("webhook {} answered 429: {}", hook.id, SLOW_RULE));
        }
        // The failure, in real time: the retry waits its delay after it (below).
        let failed = std::time::Instant::now();
        // And on the schedule: the call's time plus what it took there (a time-out the
        // service's 30 s, however little real time a fast clock waited), never ahead of the
        // clock (a clock slower than real time).
        let took = if timed_out {
            ANSWER_TIMEOUT
        } else {
            took.min(ANSWER_TIMEOUT)
        };
        let now = (due + chrono::TimeDelta::from_std(took).unwrap_or_default()).min(s.clock.now());
        let retry_after = retry_after
            .filter(|_| outcome.honours_retry_after())
            .map(|ra| dates.wait(ra, answered_at, now));
        match outcome {
            Outcome::Succeeded => return,
            Outcome::FailedPermanently => {
                notice(
                    &s,
                    &hook,
                    "message discarded",
                    format!(
                        "Delivery {delivery} to {} {was_answered}: the message was discarded.",
                        hook.url
                    ),
                );
                return;
            }
            Outcome::WebhookCancelled => {
                // Said once: calls to it already in flight answer 410 too.
                let was_active = s
                    .data()
                    .webhooks
                    .get_mut(&hook.id)
                    .is_some_and(|h| std::mem::replace(&mut h.active, false));
                if was_active {
                    s.log(format!("webhook {} deactivated: it answered 410", hook.id));
                }
                return;
            }
            _ => {}
        }
        let ff = *first_failure.get_or_insert(now);
        let Some(next) = schedule.next_attempt(ff, attempt, now, retry_after) else {
            // No retry left in the 2-day window: the last one failed, or a Retry-After asked
            // for a wait beyond its end (which a later attempt may do too: it had read
            // "retries exhausted after 5 attempts" with most of the 2 days left).
            let pushed_out =
                retry_after.is_some() && schedule.next_attempt(ff, attempt, now, None).is_some();
            let (why, logged) = if pushed_out {
                (
                    "was answered with a Retry-After past the 2-day window, so no retry fits"
                        .to_owned(),
                    "its Retry-After reaches past the 2-day window, so no retry fits".to_owned(),
                )
            } else {
                (
                    format!("failed for 2 days ({attempt} attempts)"),
                    format!("retries exhausted after {attempt} attempts"),
                )
            };
            notice(
                &s,
                &hook,
                "message discarded",
                format!(
                    "Delivery {delivery} to {} {why}: the message was discarded.",
                    hook.url
                ),
            );
            s.log(format!("delivery {delivery}: {logged}, discarded"));
            return;
        };
        notice(
            &s,
            &hook,
            "message retrying",
            format!(
                "Delivery {delivery} to {} {was_answered}; it will be retried.",
                hook.url
            ),
        );
        if messages.len() > 1 {
            // A failed call with several messages: each is retried on its own.
            for (i, m) in messages.into_iter().enumerate() {
                let resume = Resume {
                    delivery: format!("{delivery}-{}", i + 1),
                    attempt: next.number,
                    first_failure: ff,
                    at: next.at,
                    dates: dates.clone(),
                };
                let (s2, w2) = (s.clone(), hook.clone());
                s.rt.spawn(async move { deliver(s2, w2, vec![m], Some(resume)).await });
            }
            return;
        }
        s.clock.sleep_until(next.at).await;
        // And never sooner after the failure, in real time, than the delay on the clock now: a
        // call that took longer than the delay (a receiver that never answers makes the
        // emulator wait 2 s, 200 s of a clock at 100x) would otherwise put the plan behind,
        // and the retries after it would go out at once, closer than the schedule allows.
        let delay = (next.at - now).to_std().unwrap_or_default();
        let earliest = failed + s.clock.real(delay);
        if std::time::Instant::now() < earliest {
            tokio::time::sleep_until(earliest.into()).await;
        }
        attempt = next.number;
        due = next.at;
    }
}

/// Why a call got no answer.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Unanswered {
    /// The service gave up waiting (its 30 s).
    TimedOut,
    /// No connection could be made (nothing listens there, or the host cannot be reached).
    NoConnection,
    /// The connection ended, or failed otherwise, before an answer came.
    Failed,
}

impl Unanswered {
    fn of(e: &reqwest::Error) -> Unanswered {
        if e.is_timeout() {
            Unanswered::TimedOut
        } else if e.is_connect() {
            Unanswered::NoConnection
        } else {
            Unanswered::Failed
        }
    }

    /// For the log's line: "attempt 2 to webhook 5: could not connect (retry-temporary)".
    fn words(self) -> &'static str {
        match self {
            Unanswered::TimedOut => "no answer in time",
            Unanswered::NoConnection => "could not connect",
            Unanswered::Failed => "no answer: the connection failed",
        }
    }

    /// For the outbox's sentences: "Delivery … to URL got no answer in time".
    fn sentence(self) -> &'static str {
        match self {
            Unanswered::TimedOut => "got no answer in time",
            Unanswered::NoConnection => "could not connect",
            Unanswered::Failed => "got no answer: the connection failed",
        }
    }
}

/// One call (the caller holds one of the webhook's slots), stamped with its time on the
/// delivery's schedule (`at`); the status, the Retry-After, and why there was no answer
/// (a time-out, a connection refused) if there was none.
async fn call(
    s: &Shared,
    w: &Webhook,
    event: EventKind,
    delivery: &str,
    attempt: u32,
    at: DateTime<Utc>,
    messages: &[Message],
) -> (Option<u16>, Option<RetryAfter>, Option<Unanswered>) {
    let b = &s.brand();
    let body = serde_json::to_vec(messages).unwrap_or_else(|_| b"[]".to_vec());
    let r = s
        .http
        .post(&w.url)
        .header(b.event_header(), event.header_value())
        .header(b.delivery_header(), delivery)
        .header(b.attempt_header(), attempt.to_string())
        .header(b.webhook_id_header(), w.id.to_string())
        .header("Content-Type", "application/json")
        .header("User-Agent", b.user_agent())
        .header(super::CLOCK_SPEED_HEADER, s.clock.speed().to_string())
        .header(
            super::CLOCK_TIME_HEADER,
            at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        )
        .body(body)
        // 30 s of emulated time; never less than 2 s of real time, so a fast clock does
        // not fail a receiver that is merely busy (a commit on a loaded laptop can take a few
        // hundred ms: 250 ms made up failures at 600x).
        .timeout(answer_wait(s))
        .send()
        .await;
    match r {
        Ok(r) => {
            let ra = r
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                // A date is the receiver's, on this machine's clock: the delivery reads it on
                // the emulator's (`RetryDates`).
                .and_then(RetryAfter::parse);
            (Some(r.status().as_u16()), ra, None)
        }
        Err(e) => (None, None, Some(Unanswered::of(&e))),
    }
}

/// A problem report: at most one per notice type per webhook per 24 h of emulated time, and only
/// when the webhook has a contact address.
fn notice(s: &Shared, w: &Webhook, kind: &str, text: String) {
    let Some(to) = w.contact_email_address.clone() else {
        return;
    };
    let now = s.clock.now();
    let mut d = s.data();
    let key = (w.id, kind.to_owned());
    if let Some(last) = d.last_notice.get(&key)
        && now - *last < chrono::TimeDelta::hours(24)
    {
        return;
    }
    d.last_notice.insert(key, now);
    d.outbox.push(Mail {
        at: now,
        to,
        webhook_id: w.id,
        notice: kind.to_owned(),
        text,
    });
}
