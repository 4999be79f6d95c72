//! Sample invocations for `--demo` and screenshots: a status report, an incoming message, a
//! delivery failing with retries, a call with findings, and the registration check. Each is
//! validated by the contract module like a real call.

use crate::contract::{Brand, Message, Schedule, validate};
use crate::store::{Header, Invocation, SentAnswer, Store, StoreError};
use chrono::{DateTime, TimeDelta, Utc};

struct Call<'a> {
    at: DateTime<Utc>,
    headers: Vec<(&'a str, String)>,
    body: Vec<u8>,
    status: u16,
    retry_after: Option<&'a str>,
    path: &'a str,
}

fn record(brand: &Brand, c: Call<'_>) -> Invocation {
    let pairs: Vec<(&str, &[u8])> = c.headers.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
    let v = validate(brand, "POST", &pairs, &c.body);
    let rule = v
        .registration_check
        .then(|| "registration check".to_owned());
    Invocation {
        received_at: c.at,
        method: "POST".into(),
        path: c.path.into(),
        query: None,
        headers: c
            .headers
            .iter()
            .map(|(n, v)| Header::new(&n.to_ascii_lowercase(), v.as_bytes()))
            .collect(),
        body_size: c.body.len() as u64,
        declared_size: Some(c.body.len() as u64),
        body: c.body,
        body_kept: true,
        peer: Some("127.0.0.1:50412".into()),
        event: v.event_raw,
        delivery: v.delivery,
        attempt: v.attempt,
        webhook_id: v.webhook_id,
        messages: v.messages.map(|n| n as u32),
        registration_check: v.registration_check,
        findings: v.findings,
        answer: SentAnswer {
            status: c.status,
            headers: c
                .retry_after
                .map(|r| vec![("Retry-After".to_owned(), r.to_owned())])
                .unwrap_or_default(),
            body: bytes::Bytes::new(),
            delay_ms: 0,
        },
        took_us: 850,
        rule,
    }
}

fn invoker(
    brand: &Brand,
    event: &str,
    delivery: &str,
    attempt: u32,
) -> Vec<(&'static str, String)> {
    // Leaked names are avoided by using the default brand's literal names.
    let _ = brand;
    vec![
        ("X-Service-Event", event.to_owned()),
        ("X-Service-Delivery", delivery.to_owned()),
        ("X-Service-Delivery-Attempt", attempt.to_string()),
        ("X-Service-Webhook-Id", SAMPLE_WEBHOOK.to_owned()),
        ("Content-Type", "application/json".to_owned()),
        ("User-Agent", "Service Invoker".to_owned()),
    ]
}

/// The webhook id the sample calls carry: a recorded session's, not one of the emulator's.
pub const SAMPLE_WEBHOOK: &str = "234";

/// The sample calls, oldest first, ending about `now`.
pub fn sample_calls(now: DateTime<Utc>) -> Vec<Invocation> {
    let brand = Brand::default();
    let json = |m: &[Message]| serde_json::to_vec(m).unwrap_or_default();
    let t0 = now - TimeDelta::minutes(30);
    let mut calls = vec![
        record(
            &brand,
            Call {
                headers: vec![
                    ("Content-Type", "application/json".into()),
                    ("User-Agent", "Service Invoker".into()),
                ],
                body: b"[]".to_vec(),
                ..Call::default_at(t0)
            },
        ),
        record(
            &brand,
            Call {
                headers: invoker(&brand, "status-report", "dlv-7f3a", 1),
                body: json(&[Message::sample_status_report("1000000000000000101")]),
                ..Call::default_at(t0 + TimeDelta::seconds(40))
            },
        ),
        record(
            &brand,
            Call {
                headers: invoker(&brand, "incoming-message", "dlv-2b88", 1),
                body: json(&[Message::sample_incoming("1000000000000000102")]),
                ..Call::default_at(t0 + TimeDelta::seconds(75))
            },
        ),
    ];
    // A delivery answered 503: the first attempt and four retries on the contract's schedule,
    // the last a minute ago, so the next (15 min after it) is still to come for as long as a
    // demo usually lasts rather than "overdue" a minute in.
    let schedule = Schedule::default();
    let first = now - TimeDelta::minutes(24);
    let plan = schedule.plan(
        first,
        Some(crate::contract::RetryAfter::Wait(
            std::time::Duration::from_secs(120),
        )),
    );
    let mut failing = Message::sample_status_report("1000000000000000103");
    failing.to = crate::contract::TEST_NUMBER.into();
    failing.status = crate::contract::MessageStatus::new("FAILED", Some("HANDSET_ERROR"));
    let times = std::iter::once(first).chain(plan.retries.iter().take(4).map(|a| a.at));
    for (i, at) in times.enumerate() {
        calls.push(record(
            &brand,
            Call {
                headers: invoker(&brand, "status-report", "dlv-91c2", i as u32 + 1),
                body: json(std::slice::from_ref(&failing)),
                status: 503,
                retry_after: Some("120"),
                ..Call::default_at(at)
            },
        ));
    }
    // A call that breaks the contract: no attempt header, and a status.id that is not type.subtype.
    let mut odd = Message::sample_status_report("1000000000000000104");
    odd.status.id = "DELIVERED".into();
    let mut headers = invoker(&brand, "status-report", "dlv-c0de", 1);
    headers.retain(|(n, _)| *n != "X-Service-Delivery-Attempt");
    calls.push(record(
        &brand,
        Call {
            headers,
            body: json(&[odd]),
            ..Call::default_at(now - TimeDelta::seconds(30))
        },
    ));
    calls.sort_by_key(|c| c.received_at);
    calls
}

impl Call<'_> {
    fn default_at(at: DateTime<Utc>) -> Self {
        Call {
            at,
            headers: Vec::new(),
            body: Vec::new(),
            status: 200,
            retry_after: None,
            path: "/hooks/sms",
        }
    }
}

/// Store the sample calls; returns the id of the last failed attempt, the one worth showing.
pub async fn fill(store: &Store) -> Result<Option<i64>, StoreError> {
    let mut show = None;
    for call in sample_calls(Utc::now()) {
        let failed = call.answer.status == 503;
        let id = store.insert(call).await?;
        if failed {
            show = Some(id);
        }
    }
    Ok(show)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_samples_are_what_the_demo_promises() {
        let calls = sample_calls(Utc::now());
        assert!(calls.iter().any(|c| c.registration_check));
        assert!(
            calls
                .iter()
                .any(|c| c.event.as_deref() == Some("incoming-message"))
        );
        let failing: Vec<_> = calls
            .iter()
            .filter(|c| c.delivery.as_deref() == Some("dlv-91c2"))
            .collect();
        assert_eq!(failing.len(), 5);
        assert_eq!(
            failing.iter().map(|c| c.attempt).collect::<Vec<_>>(),
            vec![Some(1), Some(2), Some(3), Some(4), Some(5)]
        );
        // The next retry is 15 min after the last one, which came about a minute ago.
        let last = failing[4].received_at;
        assert!(Utc::now() - last < TimeDelta::minutes(2), "{last}");
        assert_eq!(
            (failing[1].received_at - failing[0].received_at).num_seconds(),
            120,
            "Retry-After 120 wins over the schedule's 90 s"
        );
        let odd = calls
            .iter()
            .find(|c| c.delivery.as_deref() == Some("dlv-c0de"))
            .unwrap();
        let codes: Vec<_> = odd.findings.iter().map(|f| f.code.as_str()).collect();
        assert_eq!(codes, vec!["missing-header", "status-id"]);
        let good = calls
            .iter()
            .find(|c| c.delivery.as_deref() == Some("dlv-7f3a"))
            .unwrap();
        assert!(good.findings.is_empty());
    }
}
