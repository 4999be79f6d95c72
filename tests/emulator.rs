//! The emulator and the API client over real HTTP on 127.0.0.1: every call, every error kind,
//! the registration check, the invoker's retries on a fast clock, 410, Retry-After, the end of
//! the retry window and the outbox.

mod common;

use common::*;
use hookscope::api::model::{SubmissionEntry, WebhookEntry};
use hookscope::api::{ApiClient, ApiError};
use hookscope::contract::TriggerScope;
use hookscope::emulator::{Credentials, Emulator, EmulatorConfig};
use hookscope::responder::Answer;
use hookscope::store::{Filter, Stored};
use std::time::Duration;

async fn emulator(speed: f64, tweak: impl FnOnce(&mut EmulatorConfig)) -> Emulator {
    let mut config = EmulatorConfig {
        port: 0,
        speed,
        read_only: Some(Credentials {
            user: "viewer".into(),
            password: "view".into(),
        }),
        ..EmulatorConfig::default()
    };
    tweak(&mut config);
    Emulator::start(config).await.expect("emulator starts")
}

fn client(emu: &Emulator) -> ApiClient {
    ApiClient::new(&emu.base_url(), "demo", Some("demo".into())).unwrap()
}

fn sent_hook(rig: &Rig, name: &str) -> WebhookEntry {
    WebhookEntry::new(name, &rig.url("/hook"), TriggerScope::Sent)
}

fn received_hook(rig: &Rig) -> WebhookEntry {
    WebhookEntry::new("in", &rig.url("/in"), TriggerScope::Received)
}

/// Poll until the emulator reports webhook `id` inactive (a 410 cancels it).
async fn until_inactive(c: &ApiClient, id: u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while c.get_webhook(id).await.unwrap().active {
        assert!(std::time::Instant::now() < deadline, "still active");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The List Messages path with `filter`, URL-encoded.
fn filtered(filter: &str) -> String {
    let encoded: String = url::form_urlencoded::byte_serialize(filter.as_bytes()).collect();
    format!("/messages?filter={encoded}")
}

/// The calls of delivery-carrying invocations (not the registration check), oldest first.
fn deliveries(rig: &Rig) -> Vec<Stored> {
    let mut all: Vec<Stored> = rig
        .store
        .page(&Filter::default(), 0, 10_000)
        .unwrap()
        .into_iter()
        .filter(|s| s.delivery.is_some())
        .filter_map(|s| rig.store.get(s.id).unwrap())
        .collect();
    all.reverse();
    all
}

/// The newest call the receiver stored.
fn newest(rig: &Rig) -> Stored {
    rig.store
        .get(rig.store.last_id().unwrap().unwrap())
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn every_webhook_call_round_trips() {
    let rig = Rig::start(Answer::status(200)).await;
    let emu = emulator(1.0, |_| {}).await;
    let c = client(&emu);
    assert!(c.list_webhooks().await.unwrap().is_empty());
    let mut entry = sent_hook(&rig, "status");
    entry.contact_email_address = Some("ops@example.com".into());
    let w = c.create_webhook(&entry).await.unwrap();
    assert_eq!(w.name, "status");
    assert!(w.active, "active by default");
    assert_eq!(w.on_web_app, Some(true), "onWebApp by default");
    assert_eq!(w.contact_email_address.as_deref(), Some("ops@example.com"));
    // The registration check reached the receiver and was marked.
    let check = newest(&rig);
    assert!(check.inv.registration_check);
    assert_eq!(c.get_webhook(w.id).await.unwrap(), w);
    // A contact that is not an e-mail address is refused, as the window refuses it.
    let mut bad = WebhookEntry::from_webhook(&w);
    bad.contact_email_address = Some("notanemail".into());
    assert!(matches!(
        c.update_webhook(w.id, &bad).await,
        Err(ApiError::Validation { detail }) if detail.contains("'notanemail' is not an e-mail address")
    ));
    let mut changed = WebhookEntry::from_webhook(&w);
    changed.name = "renamed".into();
    assert_eq!(
        c.update_webhook(w.id, &changed).await.unwrap().name,
        "renamed"
    );
    assert!(!c.set_active(w.id, false).await.unwrap().active);
    assert!(c.set_active(w.id, true).await.unwrap().active);
    assert_eq!(c.list_webhooks().await.unwrap().len(), 1);
    c.delete_webhook(w.id).await.unwrap();
    assert!(matches!(
        c.get_webhook(w.id).await,
        Err(ApiError::NotFound { .. })
    ));
    assert!(matches!(
        c.delete_webhook(w.id).await,
        Err(ApiError::NotFound { .. })
    ));
}

#[tokio::test]
async fn webhook_validation_is_the_services() {
    let rig = Rig::start(Answer::status(200)).await;
    let emu = emulator(1.0, |_| {}).await;
    let c = client(&emu);
    let one = c.create_webhook(&sent_hook(&rig, "one")).await.unwrap();
    let dup = c.create_webhook(&sent_hook(&rig, "one")).await.unwrap_err();
    assert!(
        matches!(&dup, ApiError::Validation { detail } if detail.contains("already exists")),
        "{dup}"
    );
    // Spaces around a name do not make it another (a blank one is refused as empty).
    let spaced = c
        .create_webhook(&sent_hook(&rig, " one "))
        .await
        .unwrap_err();
    assert!(spaced.to_string().contains("already exists"), "{spaced}");
    let mut lower = sent_hook(&rig, "two");
    lower.trigger_scope = "sent".into();
    let e = c.create_webhook(&lower).await.unwrap_err();
    assert!(e.to_string().contains("case-sensitive"), "{e}");
    let mut ftp = sent_hook(&rig, "three");
    ftp.url = "ftp://127.0.0.1/x".into();
    assert!(matches!(
        c.create_webhook(&ftp).await,
        Err(ApiError::Validation { .. })
    ));
    // Another host: refused before any call is made.
    let mut remote = sent_hook(&rig, "four");
    remote.url = "http://192.0.2.10/hook".into();
    let e = c.create_webhook(&remote).await.unwrap_err();
    assert!(e.to_string().contains("--allow-remote"), "{e}");
    // White space is no part of a URI: refused, not stored as given.
    let mut spaced = sent_hook(&rig, "five");
    spaced.url = format!("  {}  ", spaced.url);
    let e = c.create_webhook(&spaced).await.unwrap_err();
    assert!(e.to_string().contains("white space"), "{e}");
    // Nor is a control character (the URL parser would quietly percent-encode it).
    let mut escaped = sent_hook(&rig, "six");
    escaped.url = format!("{}\u{1b}[31m", escaped.url);
    let e = c.create_webhook(&escaped).await.unwrap_err();
    assert!(e.to_string().contains("a control character"), "{e}");
    // A body or query it cannot take is said in the API's words, not the parser's types.
    for (method, path, body, says) in [
        (
            reqwest::Method::POST,
            "/webhooks",
            Some(serde_json::json!([])),
            "a webhook entry: an object with name, url and triggerScope",
        ),
        (
            reqwest::Method::POST,
            "/webhooks",
            Some(serde_json::json!([1, 2])),
            "an object with name, url and triggerScope, not a list",
        ),
        (
            reqwest::Method::POST,
            &format!("/webhooks/{}", one.id),
            Some(serde_json::json!("x")),
            "an object with name, url and triggerScope, not a string",
        ),
        (
            reqwest::Method::POST,
            "/webhooks",
            Some(serde_json::json!({"name": 5, "url": "http://h", "triggerScope": "SENT"})),
            "The request body is not valid: name: the number `5`, where text is expected.",
        ),
        (
            reqwest::Method::POST,
            "/webhooks",
            Some(
                serde_json::json!({"name": "n", "url": "http://h", "triggerScope": "SENT", "active": "yes"}),
            ),
            "The request body is not valid: active: the text \"yes\", where true or false is expected.",
        ),
        (
            reqwest::Method::POST,
            "/webhooks",
            Some(serde_json::json!({})),
            "The request body is not valid: missing field `name`.",
        ),
        (
            reqwest::Method::GET,
            "/messages?limit=-1",
            None,
            "not a whole number",
        ),
    ] {
        let e = c.raw(method, path, body).await.unwrap_err();
        assert!(
            matches!(&e, ApiError::Validation { detail } if detail.contains(says) && !detail.contains("struct")),
            "{e}"
        );
    }
}

#[tokio::test]
async fn the_registration_check_must_get_200() {
    let rig = Rig::start(Answer::status(403)).await;
    rig.responder.set_pass_registration_check(false);
    let emu = emulator(1.0, |_| {}).await;
    let c = client(&emu);
    let e = c
        .create_webhook(&sent_hook(&rig, "refused"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::Validation { detail } if detail == "Invoking the Webhook URL caused an error: 403 - Forbidden"),
        "{e}"
    );
    assert!(
        c.list_webhooks().await.unwrap().is_empty(),
        "nothing created"
    );
    // The emulator's activity says so, as it says when a check passes.
    assert!(
        emu.activity()
            .iter()
            .any(|a| a.text.ends_with("403 - Forbidden; the URL is refused")),
        "{:?}",
        emu.activity()
    );
    // Inactive: no check, created.
    let mut off = sent_hook(&rig, "off");
    off.active = Some(false);
    assert!(!c.create_webhook(&off).await.unwrap().active);
    // Nothing listening: refused with a reason.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let mut gone = sent_hook(&rig, "gone");
    gone.url = format!("http://127.0.0.1:{port}/hook");
    let e = c.create_webhook(&gone).await.unwrap_err();
    assert!(
        e.to_string()
            .contains("Invoking the Webhook URL caused an error: the connection was refused"),
        "{e}"
    );
    // https:// to a server that speaks http: the connection was made, the handshake failed.
    let mut plain = sent_hook(&rig, "plain");
    plain.url = rig.url("/hook").replace("http://", "https://");
    let e = c.create_webhook(&plain).await.unwrap_err();
    assert!(
        e.to_string().contains("the secure connection failed")
            && e.to_string().contains("does not speak TLS"),
        "{e}"
    );
    // A code with no standard reason phrase is given alone, with no dangling " - ".
    rig.responder.set_answer(Answer::status(599)).unwrap();
    let e = c
        .create_webhook(&sent_hook(&rig, "odd-code"))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .ends_with("Invoking the Webhook URL caused an error: 599"),
        "{e}"
    );
}

/// Changes that overlap while a registration check runs: names stay unique, and a webhook
/// deleted during an update's check stays deleted.
#[tokio::test]
async fn changes_during_a_registration_check_keep_the_rules() {
    let rig = Rig::start(Answer {
        delay_ms: 400,
        ..Answer::status(200)
    })
    .await;
    rig.responder.set_pass_registration_check(false);
    let emu = emulator(1.0, |_| {}).await;
    let c = client(&emu);
    let creates = (0..3).map(|_| {
        let c = c.clone();
        let entry = sent_hook(&rig, "race");
        async move { c.create_webhook(&entry).await }
    });
    let results = futures_util::future::join_all(creates).await;
    assert_eq!(
        results.iter().filter(|r| r.is_ok()).count(),
        1,
        "{results:?}"
    );
    for e in results.iter().filter_map(|r| r.as_ref().err()) {
        assert!(e.to_string().contains("already exists"), "{e}");
    }
    assert_eq!(c.list_webhooks().await.unwrap().len(), 1);

    // An update whose check is held (by a listener of this test's own) while the webhook is
    // deleted.
    let held = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut off = sent_hook(&rig, "doomed");
    off.url = format!("http://{}/hook", held.local_addr().unwrap());
    off.active = Some(false);
    let w = c.create_webhook(&off).await.unwrap();
    let mut on = WebhookEntry::from_webhook(&w);
    on.active = Some(true);
    let update = {
        let c = c.clone();
        tokio::spawn(async move { c.update_webhook(w.id, &on).await })
    };
    let (mut check, _) = tokio::time::timeout(Duration::from_secs(10), held.accept())
        .await
        .expect("the update's check arrives")
        .unwrap();
    c.delete_webhook(w.id).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut request = [0u8; 1024];
    let _ = check.read(&mut request).await.unwrap();
    check
        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
        .await
        .unwrap();
    let e = update.await.unwrap().unwrap_err();
    assert!(matches!(e, ApiError::NotFound { .. }), "{e}");
    assert!(matches!(
        c.get_webhook(w.id).await,
        Err(ApiError::NotFound { .. })
    ));
}

/// A service that answers a webhook's GET with another webhook: an error naming both, not
/// that webhook shown (or edited and saved back) as the one asked for.
#[tokio::test]
async fn a_webhook_answered_for_another_id_is_refused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    tokio::spawn(async move {
        if let Ok((mut conn, _)) = listener.accept().await {
            let mut request = [0u8; 2048];
            let _ = conn.read(&mut request).await;
            let body = r#"{"id":6,"name":"other","url":"http://127.0.0.1:9/h","triggerScope":"SENT","active":true}"#;
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = conn.write_all(head.as_bytes()).await;
            let _ = conn.write_all(body.as_bytes()).await;
        }
    });
    let c = ApiClient::new(&base, "demo", Some("demo".into())).unwrap();
    let e = c
        .get_webhook(5)
        .await
        .expect_err("webhook 6 is not webhook 5");
    assert!(matches!(e, ApiError::NotReadable { .. }), "{e:?}");
    assert!(e.to_string().contains("it is webhook 6, not 5"), "{e}");
}

/// A base URL that redirects: said as a redirect, with where it points, and not followed (a
/// redirect followed had sent the call elsewhere, and shown another server's empty list as the
/// service's, or blamed the first server for the second's silence).
#[tokio::test]
async fn a_redirect_is_said_and_not_followed() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let elsewhere = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    elsewhere.set_nonblocking(true).unwrap();
    let target = format!("http://{}/v1/webhooks", elsewhere.local_addr().unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let location = target.clone();
    tokio::spawn(async move {
        if let Ok((mut conn, _)) = listener.accept().await {
            let mut request = [0u8; 2048];
            let _ = conn.read(&mut request).await;
            let head = format!(
                "HTTP/1.1 302 Found\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
            let _ = conn.write_all(head.as_bytes()).await;
        }
    });
    let c = ApiClient::new(&base, "demo", Some("demo".into())).unwrap();
    let e = c.list_webhooks().await.expect_err("a redirect is no list");
    assert!(
        matches!(&e, ApiError::Redirected { status: 302, location, .. } if *location == target),
        "{e:?}"
    );
    assert!(
        e.to_string().contains(&format!(
            "answered 302, a redirect to {target}: Hookscope does not follow redirects"
        )),
        "{e}"
    );
    // Nothing went to the address it named.
    assert!(
        matches!(elsewhere.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the redirect was followed"
    );
}

/// A URL on this machine that answers the registration check 200, then accepts every call and
/// never answers it (bounded: 200 connections), with a count of the calls accepted.
async fn hung_url() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::Ordering;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = calls.clone();
    tokio::spawn(async move {
        if let Ok((mut check, _)) = listener.accept().await {
            let mut request = [0u8; 2048];
            let _ = check.read(&mut request).await;
            let _ = check
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
        }
        let mut held = Vec::new();
        while held.len() < 200 {
            match listener.accept().await {
                Ok((conn, _)) => {
                    counted.fetch_add(1, Ordering::SeqCst);
                    held.push(conn);
                }
                Err(_) => break,
            }
        }
    });
    (url, calls)
}

/// A receiver that never answers holds up only its own webhook's calls: another webhook gets
/// every status report at once, not after the hung calls' 30 s.
#[tokio::test]
async fn a_hung_receiver_holds_up_only_its_own_webhook() {
    let rig = Rig::start(Answer::status(200)).await;
    let emu = emulator(1.0, |_| {}).await;
    let c = client(&emu);
    let mut hung_hook = sent_hook(&rig, "hung");
    hung_hook.url = hung_url().await.0;
    c.create_webhook(&hung_hook).await.unwrap();
    c.create_webhook(&sent_hook(&rig, "healthy")).await.unwrap();
    // 20 messages to the test number: two reports each (SENT, then FAILED) to every webhook,
    // more than the calls one webhook may have in flight.
    let many: Vec<SubmissionEntry> = (0..20)
        .map(|i| SubmissionEntry::to_number("1111111", &format!("m{i}")))
        .collect();
    c.send_messages(&many).await.unwrap();
    // The healthy webhook's 40 arrive on the message steps (seconds), well before the hung
    // calls' 30 s would free a shared slot.
    let got = calls(&rig, 40, 15).await;
    assert_eq!(got.len(), 40);
}

/// Calls that waited for one of a webhook's slots are not made once it is deleted: a deleted
/// (or deactivated, or 410-cancelled) webhook gets no more calls.
#[tokio::test]
async fn a_deleted_webhook_gets_none_of_its_waiting_calls() {
    use std::sync::atomic::Ordering;
    let rig = Rig::start(Answer::status(200)).await;
    // 30x: a call that gets no answer gives up after two seconds of real time.
    let emu = emulator(30.0, |_| {}).await;
    let c = client(&emu);
    let mut hook = sent_hook(&rig, "doomed");
    let (url, calls) = hung_url().await;
    hook.url = url;
    let w = c.create_webhook(&hook).await.unwrap();
    let many: Vec<SubmissionEntry> = (0..40)
        .map(|i| SubmissionEntry::to_number("1111111", &format!("m{i}")))
        .collect();
    c.send_messages(&many).await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while calls.load(Ordering::SeqCst) < 32 {
        assert!(
            std::time::Instant::now() < deadline,
            "the first calls never came"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    c.delete_webhook(w.id).await.unwrap();
    // Every delivery that waited for a slot gets it, sees the webhook gone, and stops.
    let stopped = |emu: &Emulator| {
        emu.activity()
            .iter()
            .filter(|a| a.text.contains("is gone or inactive, stopping"))
            .count()
    };
    while stopped(&emu) < 40 {
        assert!(
            std::time::Instant::now() < deadline,
            "only {} deliveries stopped",
            stopped(&emu)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 32, "no call after the delete");
}

/// A create is answered only after the service's registration check, which may take its
/// whole wait: the client waits for it even when its own calls are given less time, so the
/// check's answer (here a pass) arrives instead of a timeout of ours.
#[tokio::test]
async fn a_create_waits_for_the_registration_check() {
    let rig = Rig::start(Answer {
        delay_ms: 1_000,
        ..Answer::status(200)
    })
    .await;
    rig.responder.set_pass_registration_check(false);
    let emu = emulator(1.0, |_| {}).await;
    let c = client(&emu).with_timeout(Duration::from_millis(300));
    let w = c
        .create_webhook(&sent_hook(&rig, "slow-check"))
        .await
        .unwrap();
    assert!(w.active);
    // Other calls keep the time they were given.
    rig.responder
        .set_answer(Answer {
            delay_ms: 1_000,
            ..Answer::status(200)
        })
        .unwrap();
    let receiver_as_api = ApiClient::new(&rig.url("/v1"), "demo", Some("demo".into()))
        .unwrap()
        .with_timeout(Duration::from_millis(300));
    assert!(matches!(
        receiver_as_api.list_webhooks().await,
        Err(ApiError::Timeout { .. })
    ));
}

#[tokio::test]
async fn messages_send_list_filter_and_get() {
    let emu = emulator(1000.0, |_| {}).await;
    let c = client(&emu);
    let sent = c
        .send_messages(&[SubmissionEntry::to_number("+27001234567", "hello")])
        .await
        .unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].status.id, "ACCEPTED.null");
    assert_eq!(sent[0].number_of_parts, None);
    assert!(sent[0].id.len() >= 19, "ids beyond 2^53 stay strings");
    // Plain-string recipients and an array of entries are accepted too.
    let raw = c
        .raw(
            reqwest::Method::POST,
            "/messages",
            Some(serde_json::json!([{"to": "+27001", "body": "a"}, {"to": ["+27002", "+27003"], "body": "b", "userSuppliedId": "u-1"}])),
        )
        .await
        .unwrap();
    assert_eq!(raw.as_array().unwrap().len(), 3);
    // The submission's own fields are the message's; those it cannot take are refused.
    let post = |entry: serde_json::Value| {
        let c = c.clone();
        async move { c.raw(reqwest::Method::POST, "/messages", Some(entry)).await }
    };
    let classed =
        post(serde_json::json!({"to": "+27001", "body": "x", "messageClass": 1, "protocolId": 64}))
            .await
            .unwrap();
    assert_eq!(
        (
            classed[0]["messageClass"].as_i64(),
            classed[0]["protocolId"].as_i64()
        ),
        (Some(1), Some(64))
    );
    for (entry, says) in [
        (
            serde_json::json!({"to": "+27001", "body": "x", "userSuppliedId": 123}),
            "userSuppliedId must be text",
        ),
        (
            serde_json::json!({"to": "+27001", "body": "a".repeat(400), "longMessageMaxParts": 1}),
            "more than longMessageMaxParts 1",
        ),
        // 100 characters are one GSM part, but a `ç` makes the message UCS-2: two parts.
        (
            serde_json::json!({"to": "+27001", "body": format!("{}ç", "a".repeat(99)), "longMessageMaxParts": 1}),
            "needs 2 parts",
        ),
    ] {
        let e = post(entry).await.unwrap_err();
        assert!(
            matches!(&e, ApiError::Validation { detail } if detail.contains(says)),
            "{e}"
        );
    }
    let got = c.get_message(&sent[0].id).await.unwrap();
    assert_eq!(got.body, "hello");
    assert!(matches!(
        c.get_message("42").await,
        Err(ApiError::NotFound { .. })
    ));
    let newest = c.list_messages(Some(2), false, None).await.unwrap();
    assert_eq!(newest.len(), 2);
    assert!(newest[0].id > newest[1].id, "newest first by default");
    let oldest = c.list_messages(Some(1), true, None).await.unwrap();
    assert_eq!(oldest[0].id, sent[0].id);
    let by_usid = c
        .list_messages(None, false, Some("userSuppliedId=u-1"))
        .await
        .unwrap();
    assert_eq!(by_usid.len(), 2);
    let after = c
        .list_messages(None, true, Some(&format!("id>{}", sent[0].id)))
        .await
        .unwrap();
    assert_eq!(after.len(), 4, "the three above and the classed one");
    // The life cycle moves on by the fast clock: ACCEPTED -> SENT -> DELIVERED.
    let id = sent[0].id.clone();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let m = c.get_message(&id).await.unwrap();
        if m.status.id == "DELIVERED.null" {
            assert_eq!(m.number_of_parts, Some(1));
            assert_eq!(m.credit_cost, Some(1.0));
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still {}",
            m.status.id
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let delivered = c
        .list_messages(None, false, Some("status.type=DELIVERED&type=SENT"))
        .await
        .unwrap();
    assert!(delivered.iter().any(|m| m.id == id));
    // The enumerations are case-sensitive: another spelling is a mistake said, not [].
    let e = c
        .list_messages(None, false, Some("status.type=delivered"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::Validation { detail } if detail.contains("case-sensitive")),
        "{e}"
    );
}

#[tokio::test]
async fn every_error_kind_maps_to_a_message() {
    let emu = emulator(1.0, |c| c.credits = 2.0).await;
    let base = emu.base_url();
    let none = ApiClient::new(&base, "demo", None).unwrap();
    assert!(matches!(
        none.list_webhooks().await,
        Err(ApiError::MissingPassword { user }) if user == "demo"
    ));
    let nobody = ApiClient::new(&base, "", None).unwrap();
    assert!(matches!(
        nobody.list_webhooks().await,
        Err(ApiError::MissingCredentials)
    ));
    let wrong = ApiClient::new(&base, "demo", Some("nope".into())).unwrap();
    let e = wrong.list_webhooks().await.unwrap_err();
    assert!(matches!(e, ApiError::WrongCredentials { .. }));
    assert!(e.to_string().contains("check the username and password"));
    let viewer = ApiClient::new(&base, "viewer", Some("view".into())).unwrap();
    assert!(
        viewer.list_webhooks().await.is_ok(),
        "the read-only principal may read"
    );
    let e = viewer
        .send_messages(&[SubmissionEntry::to_number("1", "x")])
        .await
        .unwrap_err();
    assert!(matches!(e, ApiError::AccessDenied { .. }), "{e}");
    let c = client(&emu);
    let many: Vec<SubmissionEntry> = (0..30_001)
        .map(|_| SubmissionEntry::to_number("+1", "x"))
        .collect();
    let e = c.send_messages(&many).await.unwrap_err();
    assert!(matches!(e, ApiError::TooManyMessages { .. }), "{e}");
    let e = c
        .send_messages(&[
            SubmissionEntry::to_number("+1", "a"),
            SubmissionEntry::to_number("+2", "b"),
            SubmissionEntry::to_number("+3", "c"),
        ])
        .await
        .unwrap_err();
    assert!(matches!(e, ApiError::NotEnoughCredits { .. }), "{e}");
    // The test number costs nothing, so it goes through with no credits to spare.
    assert!(
        c.send_messages(&[SubmissionEntry::to_number("1111111", "t")])
            .await
            .is_ok()
    );
    let e = c
        .raw(
            reqwest::Method::POST,
            "/messages",
            Some(serde_json::json!({"to": [{"type": "GROUP", "name": "staff"}], "body": "x"})),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&e, ApiError::Validation { detail } if detail.contains("no such group")),
        "{e}"
    );

    // Answers the emulator never gives, from a stand-in server.
    let rig = Rig::start(Answer::status(200)).await;
    let api_at = |rig: &Rig| ApiClient::new(&rig.url("/v1"), "demo", Some("demo".into())).unwrap();
    rig.responder
        .set_answer(Answer::status(503).with_retry_after(120))
        .unwrap();
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert!(
        matches!(
            e,
            ApiError::Unavailable {
                status: 503,
                retry_after: Some(120),
                detail: None,
            }
        ),
        "{e}"
    );
    assert!(e.to_string().ends_with("; try again in 2 min"), "{e}");
    // What the service says of it is shown (the API's rule for every error body).
    rig.responder
        .set_answer(Answer {
            body: Some(
                r#"{"type":"https://docs/json/v1/errors/#unavailable","title":"Service Unavailable","status":503,"detail":"planned maintenance until 15:00"}"#
                    .into(),
            ),
            content_type: Some("application/problem+json".into()),
            ..Answer::status(503).with_retry_after(120)
        })
        .unwrap();
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "the service is unavailable right now (503): planned maintenance until 15:00; try again in 2 min"
    );
    rig.responder
        .set_answer(Answer {
            body: Some(r#"{"type":"https://docs/json/v1/errors/#too-many-requests","title":"Too Many Requests","status":429,"detail":"rate limit: 10 requests per second"}"#.into()),
            content_type: Some("application/json".into()),
            ..Answer::status(429)
        })
        .unwrap();
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert!(
        e.to_string()
            .ends_with("(429): rate limit: 10 requests per second; try again later"),
        "{e}"
    );
    // A Retry-After date is the wait until it.
    let in_an_hour = (chrono::Utc::now() + chrono::TimeDelta::seconds(3620))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    rig.responder
        .set_answer(Answer {
            retry_after: Some(in_an_hour),
            ..Answer::status(503)
        })
        .unwrap();
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert!(
        matches!(e, ApiError::Unavailable { status: 503, retry_after: Some(s), .. } if (3500..=3660).contains(&s)),
        "{e}"
    );
    assert!(e.to_string().ends_with("; try again in 1 h"), "{e}");
    rig.responder.set_answer(Answer::status(429)).unwrap();
    assert!(matches!(
        api_at(&rig).list_webhooks().await,
        Err(ApiError::Unavailable { status: 429, .. })
    ));
    let json_error = |status: u16, kind: &str| Answer {
        body: Some(
            format!(
                "{{\"type\":\"x#{kind}\",\"title\":\"T\",\"status\":{status},\"detail\":\"d\"}}"
            )
            .into(),
        ),
        content_type: Some("application/json".into()),
        ..Answer::status(status)
    };
    // A 200 with a JSON body, as the service answers a list or a get.
    let json_ok = |body: &str| Answer {
        body: Some(body.into()),
        content_type: Some("application/json".into()),
        ..Answer::status(200)
    };
    // What a proxy or a gateway sends instead of the service's JSON.
    let page = |status: u16, content_type: &str, body: &str| Answer {
        body: Some(body.into()),
        content_type: Some(content_type.into()),
        ..Answer::status(status)
    };
    rig.responder
        .set_answer(json_error(500, "server-error"))
        .unwrap();
    assert!(matches!(
        api_at(&rig).list_webhooks().await,
        Err(ApiError::Server { status: 500, .. })
    ));
    // The emulator without its /v1: the list is not there, so the base URL is named.
    let no_v1 = ApiClient::new(base.trim_end_matches("/v1"), "demo", Some("demo".into())).unwrap();
    let e = no_v1.list_webhooks().await.unwrap_err();
    assert!(matches!(e, ApiError::NotFound { .. }), "{e}");
    assert!(e.to_string().contains("is --api-url the API's base"), "{e}");
    // A query would swallow the paths put after the base: refused before any call.
    assert!(matches!(
        ApiClient::new(&format!("{base}?x=1"), "demo", None),
        Err(ApiError::BadBase { .. })
    ));
    // A proxy's plain-text 403 is a refusal of access, not a wrong base URL.
    rig.responder
        .set_answer(page(403, "text/plain", "Forbidden"))
        .unwrap();
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert!(matches!(e, ApiError::AccessDenied { .. }), "{e}");
    // So is another plain-text 4xx: the words it came with, not "is --api-url right?".
    rig.responder
        .set_answer(page(418, "text/plain", "teapot"))
        .unwrap();
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert!(matches!(e, ApiError::Refused { status: 418, .. }), "{e}");
    assert!(
        e.to_string().contains("teapot") && !e.to_string().contains("--api-url"),
        "{e}"
    );
    // A 4xx the contract does not name is a refusal, not a failure to wait out.
    rig.responder
        .set_answer(json_error(409, "conflict"))
        .unwrap();
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert!(matches!(e, ApiError::Refused { status: 409, .. }), "{e}");
    assert!(!e.to_string().contains("try again later"), "{e}");
    rig.responder
        .set_answer(json_error(403, "insufficient-quota"))
        .unwrap();
    assert!(matches!(
        api_at(&rig).list_webhooks().await,
        Err(ApiError::NotEnoughQuota { .. })
    ));
    rig.responder
        .set_answer(page(200, "text/html", "<html><body>Login</body></html>"))
        .unwrap();
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert!(matches!(e, ApiError::NotJson { .. }), "{e}");
    assert!(e.to_string().contains("<html>"), "{e}");
    // A login page is no "deleted", and an empty 200 no injected message, nor a deleted
    // webhook: the service answers a delete so, but any server may; the webhook is read first.
    let e = api_at(&rig).delete_webhook(5).await.unwrap_err();
    assert!(matches!(e, ApiError::NotJson { .. }), "{e}");
    rig.responder.set_answer(Answer::status(200)).unwrap();
    let e = api_at(&rig)
        .inject_incoming("+27001", "+27002", "hi")
        .await
        .unwrap_err();
    assert!(matches!(e, ApiError::NotJson { .. }), "{e}");
    let e = api_at(&rig).delete_webhook(5).await.unwrap_err();
    assert!(matches!(e, ApiError::NotJson { .. }), "{e}");
    let methods = rig
        .store
        .page(&Filter::default(), 0, 100)
        .unwrap()
        .into_iter()
        .map(|s| s.method)
        .collect::<Vec<_>>();
    assert!(
        !methods.iter().any(|m| m == "DELETE"),
        "nothing is deleted on a server that is not the service: {methods:?}"
    );
    // The real service has no way in for a handset's message: a 404 there says inject is the
    // emulator's.
    rig.responder
        .set_answer(json_error(404, "not-found"))
        .unwrap();
    let e = api_at(&rig)
        .inject_incoming("+27001", "+27002", "hi")
        .await
        .unwrap_err();
    assert!(
        matches!(e, ApiError::NotFound { .. })
            && e.to_string()
                .contains("works only with Hookscope's emulator"),
        "{e}"
    );
    // JSON, but a webhook of a scope Hookscope does not know: a list keeps the others and names
    // it; a get says which value it could not read, not that the JSON is not JSON.
    // The service's list answered with `first` before a readable webhook 8.
    let listed_with = async |first: &str| {
        let body = format!(
            r#"[{first}, {{"id":8,"name":"sms","url":"http://h/8","triggerScope":"SENT","active":false}}]"#
        );
        rig.responder.set_answer(json_ok(&body)).unwrap();
        let listed = api_at(&rig).list_webhooks_answered().await.unwrap();
        let ids: Vec<u64> = listed.value.webhooks.iter().map(|w| w.id).collect();
        assert_eq!(ids, vec![8]);
        listed
    };
    let listed = listed_with(
        r#"{"id":7,"name":"mms","url":"http://h/7","triggerScope":"MMS","active":true}"#,
    )
    .await;
    assert_eq!(listed.value.unreadable.len(), 1);
    assert!(
        listed.value.unreadable[0]
            .starts_with("webhook 7 \"mms\": triggerScope: unknown variant `MMS`"),
        "{:?}",
        listed.value.unreadable
    );
    let sent: serde_json::Value = serde_json::from_str(&listed.json).unwrap();
    assert_eq!(sent.as_array().map(Vec::len), Some(2), "as sent");
    // An id past a float's range is JSON no value holds: that entry is named, the list kept.
    let listed = listed_with(
        r#"{"id":1e400,"name":"huge","url":"http://h/7","triggerScope":"SENT","active":true}"#,
    )
    .await;
    assert_eq!(
        listed.value.unreadable,
        vec!["webhook 1e400 \"huge\": id: the number 1e400 is too large to be read".to_owned()]
    );
    assert!(listed.json.contains("1e400"), "as sent: {}", listed.json);
    rig.responder
        .set_answer(json_ok(
            r#"{"id":7,"name":"mms","url":"http://h/7","triggerScope":"MMS","active":true}"#,
        ))
        .unwrap();
    let e = api_at(&rig).get_webhook(7).await.unwrap_err();
    assert!(
        matches!(&e, ApiError::NotReadable { status: 200, detail, .. } if detail.starts_with("triggerScope: unknown variant `MMS`")),
        "{e}"
    );
    // A list that is no list at all is still an error, not an empty list.
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert!(matches!(&e, ApiError::NotReadable { .. }), "{e}");
    // A proxy's HTML error page for a 5xx is a server error to retry, not a wrong base URL.
    rig.responder
        .set_answer(page(
            502,
            "text/html",
            "<html><body>502 Bad Gateway</body></html>",
        ))
        .unwrap();
    let e = api_at(&rig).list_webhooks().await.unwrap_err();
    assert!(matches!(e, ApiError::Server { status: 502, .. }), "{e}");
    assert!(
        e.to_string().contains("502 Bad Gateway") && e.to_string().contains("try again later"),
        "{e}"
    );
    // TLS to a plain-HTTP server fails the handshake.
    let tls = ApiClient::new(
        &format!("https://{}/v1", rig.running.addr),
        "demo",
        Some("x".into()),
    )
    .unwrap();
    let e = tls.list_webhooks().await.unwrap_err();
    assert!(matches!(e, ApiError::Tls { .. }), "{e:?}");
    assert!(
        e.to_string().contains("does not speak TLS"),
        "in words: {e}"
    );
    // Nothing listening.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let gone = ApiClient::new(
        &format!("http://127.0.0.1:{port}/v1"),
        "demo",
        Some("x".into()),
    )
    .unwrap();
    let e = gone.list_webhooks().await.unwrap_err();
    assert!(matches!(e, ApiError::ConnectionRefused { .. }), "{e}");
    // No answer in time.
    rig.responder
        .set_answer(Answer {
            delay_ms: 3_000,
            ..Answer::status(200)
        })
        .unwrap();
    let slow = api_at(&rig).with_timeout(Duration::from_millis(300));
    assert!(matches!(
        slow.list_webhooks().await,
        Err(ApiError::Timeout { .. })
    ));
}

/// Poll until the receiver has `n` delivery calls.
async fn calls(rig: &Rig, n: usize, secs: u64) -> Vec<Stored> {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    loop {
        let got = deliveries(rig);
        if got.len() >= n {
            return got;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "only {} of {n} calls arrived",
            got.len()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn gap_secs(a: &Stored, b: &Stored) -> f64 {
    (b.inv.received_at - a.inv.received_at)
        .num_microseconds()
        .unwrap_or(0) as f64
        / 1e6
}

/// On a fast clock the service's 30 s are a fraction of a second, but the emulator waits two
/// seconds of real time at least: a receiver that takes 300 ms (a busy laptop's commit, say)
/// is answered in time, not made a failure (at 600x the wait was 250 ms, and such calls were
/// recorded as hung up and retried).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fast_clock_waits_a_real_second_for_an_answer() {
    let rig = Rig::start(Answer {
        delay_ms: 300,
        ..Answer::status(200)
    })
    .await;
    let emu = emulator(600.0, |_| {}).await;
    let c = client(&emu);
    c.create_webhook(&sent_hook(&rig, "slow-answers"))
        .await
        .unwrap();
    // Its registration check carries its clock's speed, as its deliveries do: a receiver
    // holding its answer says this emulator stops waiting at 2 s, not the service's 30 s.
    let check = newest(&rig);
    assert!(check.inv.registration_check);
    assert_eq!(check.inv.marked_clock_speed(), Some(600.0));
    c.send_messages(&[SubmissionEntry::to_number("1111111", "slow")])
        .await
        .unwrap();
    // Its status reports (SENT, then the failure): each answered after 300 ms.
    let got = calls(&rig, 2, 60).await;
    // Its log tells each change of its status, SENT included.
    let said: Vec<String> = emu.activity().into_iter().map(|a| a.text).collect();
    for status in ["accepted", "is SENT.null", "is FAILED.HANDSET_ERROR"] {
        assert!(
            said.iter().any(|t| t.ends_with(status)),
            "{status}: {said:?}"
        );
    }
    for s in &got {
        let codes: Vec<_> = s.inv.findings.iter().map(|f| f.code.as_str()).collect();
        assert!(!codes.contains(&"caller-hung-up"), "{codes:?}");
        assert_eq!(s.inv.attempt, Some(1));
        assert_eq!(s.inv.outcome(), hookscope::contract::Outcome::Succeeded);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn end_to_end_503_is_retried_on_the_schedule_of_the_fast_clock() {
    let speed = 200.0;
    let rig = Rig::start(Answer::status(503)).await;
    let emu = emulator(speed, |_| {}).await;
    let c = client(&emu);
    // The registration check still succeeds while 503 is chosen.
    let w = c.create_webhook(&sent_hook(&rig, "e2e")).await.unwrap();
    c.send_messages(&[SubmissionEntry::to_number("1111111", "test")])
        .await
        .unwrap();
    let got = calls(&rig, 3, 30).await;
    // The first status change (SENT) is a delivery of its own: follow it.
    let d = got[0].inv.delivery.clone().unwrap();
    let same: Vec<&Stored> = got
        .iter()
        .filter(|s| s.inv.delivery.as_deref() == Some(&d))
        .collect();
    let same = if same.len() >= 3 {
        same
    } else {
        let more = calls(&rig, 5, 30).await;
        let d2 = d.clone();
        let v: Vec<Stored> = more
            .into_iter()
            .filter(|s| s.inv.delivery.as_deref() == Some(&d2))
            .collect();
        assert!(v.len() >= 3, "three attempts of {d}");
        return check_spacing(&v.iter().collect::<Vec<_>>(), speed, &w.id.to_string());
    };
    check_spacing(&same, speed, &w.id.to_string());
}

fn check_spacing(same: &[&Stored], speed: f64, webhook: &str) {
    let attempts: Vec<Option<u32>> = same.iter().take(3).map(|s| s.inv.attempt).collect();
    assert_eq!(attempts, vec![Some(1), Some(2), Some(3)]);
    for s in same.iter().take(3) {
        assert_eq!(s.inv.webhook_id.as_deref(), Some(webhook));
        assert_eq!(s.inv.event.as_deref(), Some("status-report"));
        assert!(s.inv.findings.is_empty(), "{:?}", s.inv.findings);
        // The invoker's header names arrive spelt as contract.md writes them.
        let names: Vec<&str> = s.inv.headers.iter().map(|h| h.name.as_str()).collect();
        for name in [
            "X-Service-Event",
            "X-Service-Delivery",
            "X-Service-Delivery-Attempt",
            "X-Service-Webhook-Id",
            "Content-Type",
            "User-Agent",
        ] {
            assert!(names.contains(&name), "{name} in {names:?}");
        }
    }
    let (g1, g2) = (gap_secs(same[0], same[1]), gap_secs(same[1], same[2]));
    let (e1, e2) = (90.0 / speed, 180.0 / speed);
    assert!(g1 >= e1 * 0.9 && g1 < e1 * 3.0 + 0.3, "gap 1 {g1} vs {e1}");
    assert!(g2 >= e2 * 0.9 && g2 < e2 * 3.0 + 0.3, "gap 2 {g2} vs {e2}");
    let three: Vec<Stored> = same.iter().take(3).map(|s| (*s).clone()).collect();
    assert_reads_clean(&three, speed);
}

/// A receiver answering `answer`, and an emulator at `speed` with a RECEIVED webhook on it.
async fn hooked(answer: Answer, speed: f64) -> (Rig, Emulator) {
    let rig = Rig::start(answer).await;
    let emu = emulator(speed, |_| {}).await;
    client(&emu)
        .create_webhook(&received_hook(&rig))
        .await
        .unwrap();
    (rig, emu)
}

/// The first two attempts of an incoming message the receiver answers with `answer`, the
/// emulator's clock at `speed`.
async fn two_attempts(answer: Answer, speed: f64) -> Vec<Stored> {
    let (rig, emu) = hooked(answer, speed).await;
    emu.inject_incoming("+27007654321", "+27001234567", "hi");
    calls(&rig, 2, 30).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_injected_from_a_thread_outside_the_runtime_is_delivered() {
    // The window's Receive button calls the emulator from the UI thread, outside any runtime.
    let rig = Rig::start(Answer::status(200)).await;
    let emu = emulator(60.0, |_| {}).await;
    client(&emu)
        .create_webhook(&received_hook(&rig))
        .await
        .unwrap();
    let handle = emu.clone();
    let injected = std::thread::spawn(move || handle.inject_incoming("+1", "+2", "from the UI"))
        .join()
        .expect("injecting from a plain thread does not panic");
    let got = calls(&rig, 1, 30).await;
    assert_eq!(got[0].inv.event.as_deref(), Some("incoming-message"));
    assert!(String::from_utf8_lossy(&got[0].inv.body).contains(&injected.id));
    // A status from service-api.md's list: received, so delivered (RECEIVED is its type).
    assert_eq!(injected.kind, "RECEIVED");
    assert_eq!(injected.status.id, "DELIVERED.null");
    assert!(got[0].inv.findings.is_empty(), "{:?}", got[0].inv.findings);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_delays_the_retry() {
    let speed = 1000.0;
    let got = two_attempts(Answer::status(503).with_retry_after(600), speed).await;
    assert_eq!(got[0].inv.event.as_deref(), Some("incoming-message"));
    let g = gap_secs(&got[0], &got[1]);
    assert!(
        g >= 0.6 * 0.9,
        "Retry-After 600 s at 1000x is 0.6 s; the gap was {g}"
    );
    // The window reads the delivery against the emulator's clock, Retry-After included: the
    // retry the emulator made on time is not "too early".
    assert_reads_clean(&got[..2], speed);
}

/// A Retry-After date is the receiver's, on this machine's clock: its distance from the answer
/// is a wait on the emulator's clock, as delay-seconds are (read against the emulator's own
/// clock, which runs ahead, a date 10 minutes off had already passed and was ignored), and the
/// same date in the next answer has passed (it was waited for again on every retry).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_date_delays_the_retry_on_a_fast_clock() {
    let speed = 300.0;
    let date = (chrono::Utc::now() + chrono::TimeDelta::seconds(600))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let (rig, emu) = hooked(
        Answer {
            retry_after: Some(date),
            ..Answer::status(503)
        },
        speed,
    )
    .await;
    // Once the emulator's clock has run 5 minutes ahead of this machine's (a second here), the
    // date is 5 minutes off on its clock, and still 10 on the receiver's.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while emu.clock().now() < chrono::Utc::now() + chrono::TimeDelta::seconds(300) {
        assert!(std::time::Instant::now() < deadline, "the clock runs fast");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    emu.inject_incoming("+27007654321", "+27001234567", "hi");
    let got = calls(&rig, 3, 30).await;
    let g = gap_secs(&got[0], &got[1]);
    assert!(
        g >= 1.9,
        "a date about 10 min off at 300x is a wait of about 2 s (read on the emulator's clock, 1 s); the gap was {g}"
    );
    // The second answer carries the same date: waited for once, it has passed on the
    // emulator's clock, and the next retry follows the schedule (3 min, 0.6 s at 300x), not
    // the date's distance again (still almost 10 minutes on this machine's clock: 2 s).
    let g2 = gap_secs(&got[1], &got[2]);
    assert!(
        (0.5..1.5).contains(&g2),
        "after the date, the schedule's 3 min (0.6 s at 300x); the gap was {g2}"
    );
    assert_reads_clean(&got[..3], speed);
}

/// A receiver that never answers in time makes the emulator wait 2 s of real time a call, more
/// than the first retries' delays at 120x (0.75 s, 1.5 s, 3 s): each retry still waits its
/// delay after the call that failed (the plan fell behind, and retries went out at once, 2 s
/// apart where 3 s were due), and the schedule counts each time-out as the service's 30 s (the
/// calls ran past the 2-day window on the emulator's clock).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_that_never_answers_gets_each_retry_its_delay_after_the_failure() {
    let speed = 120.0;
    // The registration check is answered at once (it is not delayed while it passes).
    let (rig, emu) = hooked(
        Answer {
            delay_ms: 10_000,
            ..Answer::status(200)
        },
        speed,
    )
    .await;
    emu.inject_incoming("+1", "+2", "never answered");
    let got = calls(&rig, 4, 60).await;
    let wait = hookscope::emulator::MIN_REAL_ANSWER_WAIT.as_secs_f64();
    for (i, delay) in [90.0, 180.0, 360.0].into_iter().enumerate() {
        let g = gap_secs(&got[i], &got[i + 1]);
        assert!(
            g >= wait + delay / speed - 0.1,
            "retry {} came {g} s after attempt {}; due {} s after its failure at {wait} s",
            i + 1,
            i + 1,
            delay / speed
        );
        // On the service's schedule, each time-out took its 30 s, not the 240 s of the
        // emulator's clock that the 2 s of real time make at 120x: the calls are stamped 30 s
        // plus the delay apart, and 195 attempts still fit in the 2 days.
        let on_clock = sent_at(&got[i + 1]) - sent_at(&got[i]);
        assert_eq!(
            on_clock,
            chrono::TimeDelta::seconds(30 + delay as i64),
            "retry {} on the emulator's clock",
            i + 1
        );
    }
    assert_reads_clean(&got[..4], speed);
}

/// An emulator at `speed` with a RECEIVED webhook on `rig` whose problem reports go to
/// ops@example.com (its outbox).
async fn reporting_to_ops(rig: &Rig, speed: f64) -> Emulator {
    let emu = emulator(speed, |_| {}).await;
    let mut entry = received_hook(rig);
    entry.contact_email_address = Some("ops@example.com".into());
    client(&emu).create_webhook(&entry).await.unwrap();
    emu
}

/// Wait, at most `secs`, for a `notice` ("message retrying") in the emulator's outbox.
async fn until_notice(emu: &Emulator, notice: &str, secs: u64) {
    let deadline = std::time::Instant::now() + Duration::from_secs(secs);
    while !emu.outbox().iter().any(|m| m.notice == notice) {
        assert!(
            std::time::Instant::now() < deadline,
            "no {notice} notice yet"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A call to a URL where nothing listens any more is said as what happened, "could not
/// connect", in the activity and the outbox; it had read "no answer" and "got no answer in
/// time", as if the receiver had been too slow.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_connection_is_not_called_a_time_out() {
    let rig = Rig::start(Answer::status(200)).await;
    let emu = reporting_to_ops(&rig, 60.0).await;
    // Nothing listens at its URL from now on.
    let Rig { running, .. } = rig;
    running.shutdown().await;
    emu.inject_incoming("+1", "+2", "x");
    until_notice(&emu, "message retrying", 30).await;
    let said: Vec<String> = emu.activity().into_iter().map(|a| a.text).collect();
    assert!(
        said.iter().any(|t| t.contains("attempt 1 to webhook")
            && t.ends_with(": could not connect (retry-temporary)")),
        "{said:?}"
    );
    let mail = emu.outbox();
    let mail = mail
        .iter()
        .find(|m| m.notice == "message retrying")
        .unwrap();
    assert!(
        mail.text
            .contains(" could not connect; it will be retried."),
        "{}",
        mail.text
    );
    assert!(!mail.text.contains("in time"), "{}", mail.text);
}

/// A Retry-After past the 2-day window on a later attempt discards the message for that
/// reason, said as such; it had read "retries exhausted after 2 attempts" with almost all of
/// the 2 days left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_after_past_the_window_on_a_retry_is_named() {
    let rig = Rig::start(Answer::status(200)).await;
    let rules = hookscope::rules::RuleSet::parse(
        "r.json",
        r#"{"rules": [
            {"name": "first", "when": {"attempt": {"at_most": 1}}, "answer": {"status": 500}},
            {"name": "then", "answer": {"status": 503, "retry_after": "99999999999999999999"}}
        ]}"#,
    )
    .unwrap();
    let emu = reporting_to_ops(&rig, 3600.0).await;
    rig.responder.set_rules(rules);
    emu.inject_incoming("+1", "+2", "x");
    until_notice(&emu, "message discarded", 30).await;
    let said: Vec<String> = emu.activity().into_iter().map(|a| a.text).collect();
    assert!(
        said.iter().any(|t| t.ends_with(
            ": its Retry-After reaches past the 2-day window, so no retry fits, discarded"
        )),
        "{said:?}"
    );
    assert!(!said.iter().any(|t| t.contains("exhausted")), "{said:?}");
    let mail = emu.outbox();
    let mail = mail
        .iter()
        .find(|m| m.notice == "message discarded")
        .unwrap();
    assert!(
        mail.text.contains(" was answered with a Retry-After past the 2-day window, so no retry fits: the message was discarded."),
        "{}",
        mail.text
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_with_500_is_ignored() {
    // Retry-After counts only with 503 and 429: a 500 is retried on the plain schedule.
    let speed = 100.0;
    let got = two_attempts(Answer::status(500).with_retry_after(600), speed).await;
    let g = gap_secs(&got[0], &got[1]);
    assert!(
        (0.9 * 0.9..4.0).contains(&g),
        "90 s at 100x is 0.9 s (Retry-After 600 would make it 6 s); the gap was {g}"
    );
    assert_reads_clean(&got[..2], speed);
}

/// The window's reading of these attempts of one delivery finds no fault with the emulator's
/// timing: read on the clock speed the calls carry (the reader's own choice is 1x), which is
/// the emulator's.
/// The time on the emulator's clock when it sent the call (its clock-time header).
fn sent_at(s: &Stored) -> chrono::DateTime<chrono::FixedOffset> {
    let value = s
        .inv
        .headers
        .iter()
        .find(|h| {
            h.name
                .eq_ignore_ascii_case(hookscope::emulator::CLOCK_TIME_HEADER)
        })
        .map(|h| h.value.clone())
        .unwrap_or_default();
    chrono::DateTime::parse_from_rfc3339(&value).expect("the clock-time header")
}

/// After a 429 the service slows down its calls to the webhook (contract.md; the rule assumed
/// is `contract::slowdown`'s): the next messages go one call at a time, at least 1 s apart on
/// the service's clock, where at full speed they would all go at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_429_the_calls_to_the_webhook_go_one_at_a_time_a_second_apart() {
    let speed = 20.0;
    let (rig, emu) = hooked(
        Answer {
            delay_ms: 30,
            ..Answer::status(429)
        },
        speed,
    )
    .await;
    emu.inject_incoming("+27007654321", "+27001234567", "first");
    calls(&rig, 1, 30).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !emu.activity().iter().any(|a| {
        a.text
            .contains("answered 429: After a 429 the service slows down")
    }) {
        assert!(std::time::Instant::now() < deadline, "no slow-down logged");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    for i in 0..4 {
        emu.inject_incoming("+27007654321", "+27001234567", &format!("next {i}"));
    }
    let got = calls(&rig, 5, 30).await;
    let mut next: Vec<Stored> = got
        .into_iter()
        .filter(|s| {
            s.inv.attempt == Some(1) && String::from_utf8_lossy(&s.inv.body).contains("next ")
        })
        .collect();
    assert_eq!(next.len(), 4);
    next.sort_by_key(sent_at);
    for pair in next.windows(2) {
        let gap = sent_at(&pair[1]) - sent_at(&pair[0]);
        assert!(
            gap >= chrono::TimeDelta::seconds(1),
            "{gap} between calls on the service's clock"
        );
        // One at a time: each sent after the one before was answered (its 30 ms included).
        let answered =
            pair[0].inv.received_at + chrono::TimeDelta::microseconds(pair[0].inv.took_us as i64);
        assert!(
            pair[1].inv.received_at >= answered - chrono::TimeDelta::milliseconds(1),
            "overlapping calls: {} before {answered}",
            pair[1].inv.received_at
        );
    }
}

fn assert_reads_clean(attempts: &[Stored], speed: f64) {
    assert_eq!(hookscope::deliveries::marked_speed(attempts), Some(speed));
    // And the time on its clock, which the reading measures the gaps on.
    for a in attempts {
        sent_at(a);
    }
    let schedule =
        hookscope::deliveries::schedule_for(attempts, hookscope::contract::Schedule::default());
    let d = hookscope::deliveries::analyze(
        attempts,
        &schedule,
        hookscope::deliveries::tolerance_for(&schedule),
        &[],
    )
    .expect("a delivery");
    assert!(d.findings.is_empty(), "{:?}", d.findings);
}

/// A script that restarts the emulator at once (within the same second) gets webhook and
/// delivery ids of its own: the ids had counted on from the second, so both runs' first
/// messages went out as the same delivery's attempt 1, merged in the store ("attempt 1
/// arrived twice"). (Two runs that straddle a second's turn passed before too: the unit test
/// `ids_never_repeat_from_one_run_to_the_next` holds the ids apart at any two start times.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_emulator_restarted_at_once_gives_new_ids() {
    let rig = Rig::start(Answer::status(200)).await;
    let mut seen = Vec::new();
    for run in 1..=2 {
        let emu = emulator(1000.0, |_| {}).await;
        let w = client(&emu)
            .create_webhook(&received_hook(&rig))
            .await
            .unwrap();
        emu.inject_incoming("+1", "+2", &format!("run {run}"));
        let delivery = eventually(Duration::from_secs(20), "the call arrives", || {
            deliveries(&rig)
                .get(run - 1)
                .and_then(|s| s.inv.delivery.clone())
        })
        .await;
        emu.stop();
        seen.push((w.id, delivery));
    }
    assert_ne!(seen[0].0, seen[1].0, "webhook ids {seen:?}");
    assert_ne!(seen[0].1, seen[1].1, "delivery ids {seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_410_deactivates_the_webhook() {
    let rig = Rig::start(Answer::status(410)).await;
    let emu = emulator(1000.0, |_| {}).await;
    let c = client(&emu);
    let w = c.create_webhook(&received_hook(&rig)).await.unwrap();
    emu.inject_incoming("+1", "+2", "bye");
    until_inactive(&c, w.id).await;
    // No more calls to it.
    emu.inject_incoming("+1", "+2", "again");
    tokio::task::yield_now().await;
    assert_eq!(deliveries(&rig).len(), 1);
}

/// Calls already in flight when a webhook is cancelled answer 410 too: the activity says it was
/// deactivated once, not once a call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_cancelled_by_calls_in_flight_is_said_deactivated_once() {
    // Held 3 s: all three calls are made well before the first answer (the webhook is inactive
    // after it, so a call not yet made would never come). At real time, so the emulator waits
    // its 30 s for the answers.
    let rig = Rig::start(Answer {
        delay_ms: 3000,
        ..Answer::status(410)
    })
    .await;
    let emu = emulator(1.0, |_| {}).await;
    let c = client(&emu);
    let w = c.create_webhook(&received_hook(&rig)).await.unwrap();
    for text in ["one", "two", "three"] {
        emu.inject_incoming("+1", "+2", text);
    }
    // All three were on their way before the first 410 came back.
    calls(&rig, 3, 20).await;
    until_inactive(&c, w.id).await;
    let said = |emu: &Emulator, what: &str| {
        emu.activity()
            .iter()
            .filter(|a| a.text.contains(what))
            .count()
    };
    // Each answer is logged as it is read, just before what it means for the webhook.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while said(&emu, ": 410 (") < 3 || said(&emu, "deactivated") == 0 {
        assert!(std::time::Instant::now() < deadline, "{:?}", emu.activity());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(said(&emu, "deactivated"), 1, "{:?}", emu.activity());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_410_to_one_delivery_stops_the_others_of_its_webhook() {
    use hookscope::deliveries::State;
    // Two incoming messages, two deliveries, both answered 503 at first; the retry of the one
    // that says "cancel" is answered 410.
    let rig = Rig::start(Answer::status(503)).await;
    let rules = r#"{"rules": [{"name": "cancel", "answer": {"status": 410},
        "when": {"attempt": {"at_least": 2}, "message": {"field": "body", "equals": "cancel"}}}]}"#;
    rig.responder
        .set_rules(hookscope::rules::RuleSet::parse("test", rules).unwrap());
    let speed = 200.0;
    let emu = emulator(speed, |_| {}).await;
    let c = client(&emu);
    let w = c.create_webhook(&received_hook(&rig)).await.unwrap();
    emu.inject_incoming("+1", "+2", "cancel");
    calls(&rig, 1, 20).await;
    emu.inject_incoming("+1", "+2", "keep");
    until_inactive(&c, w.id).await;
    let webhook = w.id.to_string();
    let cancels = rig.store.cancels(&webhook).unwrap();
    assert_eq!(cancels.len(), 1, "one call was answered 410");
    let schedule = hookscope::deliveries::scaled_schedule(speed);
    let mut states = Vec::new();
    let mut ids: Vec<String> = deliveries(&rig)
        .into_iter()
        .filter_map(|s| s.inv.delivery)
        .collect();
    ids.sort();
    ids.dedup();
    for id in ids {
        let attempts = rig.store.by_delivery(&id, Some(&webhook)).unwrap();
        let d = hookscope::deliveries::analyze(
            &attempts,
            &schedule,
            hookscope::deliveries::tolerance_for(&schedule),
            &cancels,
        )
        .unwrap();
        states.push(d.state.describe(chrono::Utc::now()));
        match d.state {
            State::WebhookCancelled { .. } | State::StoppedByCancel { .. } => {}
            other => panic!("delivery {id} still reads {other:?}"),
        }
    }
    states.sort();
    assert_eq!(states.len(), 2, "{states:?}");
    assert!(
        states[0].starts_with("stopped: webhook cancelled by the 410 answer to another delivery")
    );
    assert_eq!(states[1], "webhook cancelled by the 410 answer");

    // Enabled again: the service checks the URL, and its calls are expected once more.
    c.set_active(w.id, true).await.unwrap();
    let before = deliveries(&rig).len();
    emu.inject_incoming("+1", "+2", "after");
    calls(&rig, before + 1, 20).await;
    let fresh = deliveries(&rig)
        .into_iter()
        .find(|s| String::from_utf8_lossy(&s.inv.body).contains("\"after\""))
        .expect("the new message's call");
    let delivery = fresh.inv.delivery.clone().expect("a delivery id");
    let cancels = rig.store.cancels(&webhook).unwrap();
    assert!(
        cancels[0].lifted.is_some(),
        "the registration check lifted the cancel: {cancels:?}"
    );
    let d = hookscope::deliveries::analyze(
        &rig.store.by_delivery(&delivery, Some(&webhook)).unwrap(),
        &schedule,
        hookscope::deliveries::tolerance_for(&schedule),
        &cancels,
    )
    .unwrap();
    assert!(d.findings.is_empty(), "{:?}", d.findings);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_end_with_the_window_and_the_outbox_dedups() {
    // 2 days in about 1.7 s.
    let rig = Rig::start(Answer::status(500)).await;
    let emu = reporting_to_ops(&rig, 100_000.0).await;
    emu.inject_incoming("+1", "+2", "x");
    until_notice(&emu, "message discarded", 60).await;
    let got = deliveries(&rig);
    // At this speed a millisecond of real time is 100 s of schedule, yet every attempt of the
    // plan is made: 1 + 4 stepped retries + 190 every 15 min (the next is planned from when the
    // last was due, not from a clock that timer lag pushed on).
    assert_eq!(got.len(), 195, "{} calls", got.len());
    assert_eq!(got.last().unwrap().inv.attempt, Some(got.len() as u32));
    let outbox = emu.outbox();
    let first = outbox
        .iter()
        .find(|m| m.notice == "message retrying")
        .unwrap()
        .at;
    let discarded = outbox
        .iter()
        .find(|m| m.notice == "message discarded")
        .unwrap()
        .at;
    let lasted = discarded - first;
    // Not discarded before the window ends. (No upper bound: each retry is planned from when
    // the one before was due plus the real time its call took, and at 100,000x a loaded
    // machine's milliseconds are hours of this clock; that all 195 attempts of the 2 days were
    // made, and no more, is asserted above.)
    assert!(
        lasted > chrono::TimeDelta::hours(47) + chrono::TimeDelta::minutes(30),
        "retries lasted {lasted} of emulated time: the 2-day window"
    );
    // One retrying notice per 24 h of emulated time: at least two over the 2 days, never two
    // within 24 h, and no more than the span allows. (Not exactly two: the span is 2 days plus
    // whatever timer lag a loaded machine adds at this speed, and 66 h once made three.)
    let retrying: Vec<_> = outbox
        .iter()
        .filter(|m| m.notice == "message retrying")
        .map(|m| m.at)
        .collect();
    assert!(
        retrying.len() >= 2,
        "{retrying:?}: one per 24 h over 2 days"
    );
    for pair in retrying.windows(2) {
        assert!(
            pair[1] - pair[0] >= chrono::TimeDelta::hours(24),
            "two retrying notices within 24 h: {retrying:?}"
        );
    }
    let most = 1 + lasted.num_hours() / 24;
    assert!(
        retrying.len() as i64 <= most,
        "{} retrying notices over {lasted}",
        retrying.len()
    );
    assert!(outbox.iter().all(|m| m.to == "ops@example.com"));
}

/// A RECEIVED webhook on the receiver with invokeOption MANY, and three messages for it.
async fn three_messages_to_a_many_hook(rig: &Rig, emu: &Emulator) {
    let mut entry = received_hook(rig);
    entry.invoke_option = Some(hookscope::api::model::InvokeOption::Many);
    client(emu).create_webhook(&entry).await.unwrap();
    for i in 0..3 {
        emu.inject_incoming("+1", "+2", &format!("m{i}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_contact_address_means_no_mail_and_many_batches() {
    let rig = Rig::start(Answer::status(200)).await;
    let emu = emulator(1000.0, |_| {}).await;
    three_messages_to_a_many_hook(&rig, &emu).await;
    let got = calls(&rig, 1, 20).await;
    assert_eq!(got[0].inv.messages, Some(3), "three messages in one call");
    assert!(emu.outbox().is_empty());
}

/// A failed call of several messages (MANY) is retried message by message (service-api.md):
/// each message as a delivery of its own, `<delivery>-<n>`, from attempt 2; read with the batch
/// call before it, each is one clean delivery.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_batch_is_retried_message_by_message() {
    let rig = Rig::start(Answer::status(200)).await;
    let rules = r#"{"rules": [{"name": "fail once", "when": {"attempt": {"at_most": 1}},
        "answer": {"status": 503}}]}"#;
    rig.responder
        .set_rules(hookscope::rules::RuleSet::parse("test", rules).unwrap());
    let speed = 1000.0;
    let emu = emulator(speed, |_| {}).await;
    three_messages_to_a_many_hook(&rig, &emu).await;
    let got = calls(&rig, 4, 20).await;
    let batch = &got[0];
    assert_eq!(
        (batch.inv.answer.status, batch.inv.messages),
        (503, Some(3))
    );
    let parent = batch.inv.delivery.clone().unwrap();
    let mut retries: Vec<&Stored> = got[1..4].iter().collect();
    retries.sort_by_key(|s| s.inv.delivery.clone());
    for (i, r) in retries.iter().enumerate() {
        assert_eq!(r.inv.delivery, Some(format!("{parent}-{}", i + 1)));
        assert_eq!((r.inv.attempt, r.inv.messages), (Some(2), Some(1)));
        let own = rig
            .store
            .by_delivery(
                r.inv.delivery.as_deref().unwrap(),
                r.inv.webhook_id.as_deref(),
            )
            .unwrap();
        let parent_calls = rig
            .store
            .by_delivery(&parent, r.inv.webhook_id.as_deref())
            .unwrap();
        let joined = hookscope::deliveries::with_batch_calls(own, parent_calls);
        assert_eq!(joined.len(), 2, "the batch call, then its own retry");
        assert_reads_clean(&joined, speed);
        // Read whole, it is the message's own delivery (the window shows it only if it is
        // named so), starting with the batch call.
        let d = hookscope::deliveries::load(
            &rig.store,
            r.inv.delivery.as_deref().unwrap(),
            r.inv.webhook_id.as_deref(),
            hookscope::deliveries::scaled_schedule(speed),
            true,
        )
        .unwrap()
        .expect("the message's delivery");
        assert_eq!(Some(&d.delivery), r.inv.delivery.as_ref());
        assert_eq!(d.attempts.len(), 2);
        assert_eq!(d.attempts[0].id, batch.id);
    }
    // The batch's own delivery no longer reads "retrying": it says its messages were retried
    // one by one, and where each stands.
    let d = hookscope::deliveries::load(
        &rig.store,
        &parent,
        batch.inv.webhook_id.as_deref(),
        hookscope::deliveries::scaled_schedule(speed),
        true,
    )
    .unwrap()
    .expect("the batch's delivery");
    assert!(!d.state.under_way(), "{:?}", d.state);
    assert!(d.projection.is_none());
    let text = d.state.describe(chrono::Utc::now());
    assert_eq!(
        text,
        format!(
            "split: its 3 messages were retried one by one, and each was delivered: {parent}-1 succeeded on attempt 2; {parent}-2 succeeded on attempt 2; {parent}-3 succeeded on attempt 2"
        )
    );
}

/// A burst of messages queues in the emulator instead of opening a connection per call at once:
/// every call is answered 200 in time, so none is retried (on a fast clock the 30 s are only
/// a few seconds of real time, and an unqueued burst timed calls out while they waited to be sent).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_is_not_timed_out_by_the_emulators_own_backlog() {
    let rig = Rig::start(Answer::status(200)).await;
    let emu = emulator(600.0, |_| {}).await;
    let c = client(&emu);
    c.create_webhook(&sent_hook(&rig, "burst")).await.unwrap();
    let mut entry = SubmissionEntry::to_number("1111111", "burst");
    entry.to = vec![entry.to[0].clone(); 1000];
    let sent = c.send_messages(&[entry]).await.unwrap();
    assert_eq!(sent.len(), 1000);
    // Each message's status reports (two each), then whatever the emulator still sends.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let n = rig.store.count(&Filter::default()).unwrap();
        if n >= 2000 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "only {n} calls arrived"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Let the emulator finish what it has queued (its activity settles), then look.
    let settle = std::time::Instant::now() + Duration::from_secs(60);
    let mut last = 0;
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let n = rig.store.count(&Filter::default()).unwrap();
        if n == last || std::time::Instant::now() > settle {
            break;
        }
        last = n;
    }
    let all = rig.store.page(&Filter::default(), 0, 100_000).unwrap();
    let retried: Vec<_> = all
        .iter()
        .filter(|s| s.attempt.is_some_and(|a| a > 1))
        .map(|s| (s.delivery.clone(), s.attempt))
        .collect();
    assert!(
        retried.is_empty(),
        "{} of {} calls were retries, though every call was answered 200: {:?}",
        retried.len(),
        all.len(),
        &retried[..retried.len().min(5)]
    );
}

/// Every error the emulator's API gives has the documented body, whatever the mistake: a
/// method a path does not take, a malformed query, an encoding service-api.md does not list.
#[tokio::test]
async fn errors_of_any_kind_have_the_documented_body() {
    let emu = emulator(1.0, |c| c.credits = 5.0).await;
    let base = emu.base_url();
    let http = reqwest::Client::new();
    let call = |method: reqwest::Method, path: &str| {
        http.request(method, format!("{base}{path}"))
            .basic_auth("demo", Some("demo"))
    };
    let get_json = |path: &str| {
        let request = call(reqwest::Method::GET, path);
        async move {
            let r = request.send().await.unwrap();
            r.json::<serde_json::Value>().await.unwrap()
        }
    };
    let check = |status: u16, v: &serde_json::Value| {
        assert_eq!(v["status"], status, "{v}");
        for field in ["type", "title", "detail"] {
            assert!(v[field].as_str().is_some_and(|t| !t.is_empty()), "{v}");
        }
    };
    let r = call(reqwest::Method::PUT, "/webhooks/1")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);
    check(405, &r.json().await.unwrap());
    let r = call(reqwest::Method::GET, "/messages?limit=abc")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let v: serde_json::Value = r.json().await.unwrap();
    check(400, &v);
    assert!(
        v["detail"].as_str().unwrap_or_default().contains("limit"),
        "{v}"
    );
    // A listed encoding is kept (an unlisted one is refused below, with the other fields), and
    // a refused submission makes no message.
    let r = call(reqwest::Method::POST, "/messages")
        .json(&serde_json::json!({"to": "+27001234567", "body": "x", "encoding": "UNICODE"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let sent: serde_json::Value = r.json().await.unwrap();
    assert_eq!(sent[0]["encoding"], "UNICODE", "{sent}");
    let listed: serde_json::Value = get_json("/messages").await;
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["encoding"], "UNICODE");

    // Credentials that cannot be read are not "no credentials".
    let r = http
        .get(format!("{base}/webhooks"))
        .header("Authorization", "Basic !!!")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let v: serde_json::Value = r.json().await.unwrap();
    check(401, &v);
    assert!(
        v["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("could not be verified"),
        "{v}"
    );

    // A large call is read whole (30,000 messages: more than the 5 credits), and one past the
    // API's limit is refused with the documented body too.
    let many: Vec<serde_json::Value> = (0..30_000)
        .map(|i| serde_json::json!({"to": format!("+2700{i:07}"), "body": "bulk message text"}))
        .collect();
    let r = call(reqwest::Method::POST, "/messages")
        .json(&many)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    let v: serde_json::Value = r.json().await.unwrap();
    check(403, &v);
    assert!(
        v["type"]
            .as_str()
            .unwrap_or_default()
            .ends_with("#insufficient-credits"),
        "{v}"
    );
    let r = call(reqwest::Method::POST, "/messages")
        .header("Content-Type", "application/json")
        .body(vec![b' '; 17 << 20])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 413);
    let v: serde_json::Value = r.json().await.unwrap();
    check(413, &v);
    assert!(
        v["detail"].as_str().unwrap_or_default().contains("16 MiB"),
        "{v}"
    );

    // A path the API does not have is named in the 404.
    let r = call(reqwest::Method::GET, "/nope").send().await.unwrap();
    assert_eq!(r.status(), 404);
    let v: serde_json::Value = r.json().await.unwrap();
    check(404, &v);
    assert!(
        v["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("/v1/nope"),
        "{v}"
    );

    // Each documented field is checked: a value it does not take is a 400 that names it, and
    // nothing is sent.
    let bad_entries = [
        (serde_json::json!({"encoding": "FOO"}), "encoding"),
        (serde_json::json!({"routingGroup": "CHEAP"}), "routingGroup"),
        (
            serde_json::json!({"deliveryReports": "SOME"}),
            "deliveryReports",
        ),
        (serde_json::json!({"messageClass": "abc"}), "messageClass"),
        (
            serde_json::json!({"longMessageMaxParts": -3}),
            "longMessageMaxParts",
        ),
        (serde_json::json!({"protocolId": 1.5}), "protocolId"),
        (
            serde_json::json!({"from": {"type": "INTERNATIONAL"}}),
            "from",
        ),
        (serde_json::json!({"from": 27}), "from"),
    ];
    for (extra, field) in bad_entries {
        let mut entry = serde_json::json!({"to": "+27001234567", "body": "x"});
        if let (Some(e), Some(x)) = (entry.as_object_mut(), extra.as_object()) {
            e.extend(x.clone());
        }
        let r = call(reqwest::Method::POST, "/messages")
            .json(&entry)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{entry}");
        let v: serde_json::Value = r.json().await.unwrap();
        check(400, &v);
        assert!(
            v["detail"].as_str().unwrap_or_default().contains(field),
            "{v}"
        );
    }
    let r = call(reqwest::Method::POST, "/messages?schedule-date=notadate")
        .json(&serde_json::json!({"to": "+27001234567", "body": "x"}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    check(400, &r.json().await.unwrap());
    // The documented values pass.
    let r = call(
        reqwest::Method::POST,
        "/messages?schedule-date=2026-11-22T14:00:00Z&auto-unicode=true",
    )
    .json(
        &serde_json::json!({"to": "+27001234567", "body": "x", "routingGroup": "PREMIUM",
            "deliveryReports": "NONE", "messageClass": 1, "longMessageMaxParts": 2, "protocolId": 0,
            "from": {"type": "INTERNATIONAL", "address": "+27009"}}),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 201);
    let listed: serde_json::Value = get_json("/messages").await;
    assert_eq!(
        listed.as_array().map(Vec::len),
        Some(2),
        "only the valid ones were sent"
    );

    // Filter values each field cannot take are refused, not read as "nothing matches".
    for filter in [
        "id>abc",
        "id<=5",
        "submission.date>yesterday",
        "type<SENT",
        "status.type>=A",
    ] {
        let r = call(reqwest::Method::GET, &filtered(filter))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 400, "{filter}");
        check(400, &r.json().await.unwrap());
    }
    // Dates compare as times: both messages were submitted after 2020.
    let r: serde_json::Value =
        get_json(&filtered("submission.date>=2020-01-01T00:00:00+02:00")).await;
    assert_eq!(r.as_array().map(Vec::len), Some(2), "{r}");
}

/// POST /v1/messages with `query`, as the demo account: the status and the JSON answer.
async fn send_raw(
    emu: &Emulator,
    query: &str,
    body: serde_json::Value,
) -> (u16, serde_json::Value) {
    let r = reqwest::Client::new()
        .post(format!("{}/messages{query}", emu.base_url()))
        .basic_auth("demo", Some("demo"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scheduled_message_waits_for_its_date_and_a_deduplication_id_sends_once() {
    let emu = emulator(3600.0, |c| c.credits = 10.0).await;
    let entry = serde_json::json!({"to": "+27001234567", "body": "now"});
    let (status, sent) = send_raw(&emu, "", entry).await;
    assert_eq!(status, 201);
    // Two hours on the emulator's clock from now: two seconds of real time at 3600x (its
    // life cycle's 2 s steps take half a millisecond).
    let now = chrono::DateTime::parse_from_rfc3339(sent[0]["submission"]["date"].as_str().unwrap())
        .unwrap();
    let at = (now + chrono::TimeDelta::hours(2)).to_rfc3339();
    let query = format!("?schedule-date={}", at.replace('+', "%2B"));
    let later = serde_json::json!({"to": "+27001234567", "body": "later"});
    let (status, scheduled) = send_raw(&emu, &query, later).await;
    assert_eq!(status, 201, "{scheduled}");
    assert_eq!(scheduled[0]["status"]["type"], "SCHEDULED", "{scheduled}");
    let id = scheduled[0]["id"].as_str().unwrap().to_owned();
    let c = client(&emu);
    // Still waiting for its date a moment later (sent at once, it would be DELIVERED by now).
    let sent_at_once = std::time::Instant::now();
    loop {
        let m = c.get_message(&id).await.unwrap();
        assert_eq!(m.status.kind, "SCHEDULED", "before its date");
        if sent_at_once.elapsed() > Duration::from_millis(100) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let m = c.get_message(&id).await.unwrap();
        if m.status.kind == "DELIVERED" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still {} after its date",
            m.status.id
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // The same deduplication id again: the messages it made, nothing more sent or charged.
    let twice = serde_json::json!({"to": ["+27001111111", "+27002222222"], "body": "once"});
    let (status, first) = send_raw(&emu, "?deduplication-id=abc", twice.clone()).await;
    assert_eq!(status, 201);
    let credits = emu.credits();
    let (status, again) = send_raw(&emu, "?deduplication-id=abc", twice.clone()).await;
    assert_eq!(status, 201);
    let ids = |v: &serde_json::Value| {
        v.as_array()
            .unwrap()
            .iter()
            .map(|m| m["id"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&again), ids(&first));
    assert_eq!(emu.credits(), credits);
    // Another id sends them again.
    let (_, other) = send_raw(&emu, "?deduplication-id=xyz", twice).await;
    assert_ne!(ids(&other), ids(&first));
    assert!(emu.credits() < credits);
}

/// Waits until the clock's millisecond has moved on (the emulator's ids follow it).
async fn next_millisecond() {
    let start = chrono::Utc::now().timestamp_millis();
    eventually(Duration::from_secs(5), "the next millisecond", || {
        (chrono::Utc::now().timestamp_millis() > start).then_some(())
    })
    .await;
}

#[tokio::test]
async fn the_emulator_knows_its_webhooks_after_they_are_deleted() {
    let rig = Rig::start(Answer::status(200)).await;
    let emu = emulator(60.0, |_| {}).await;
    let c = client(&emu);
    let w = c.create_webhook(&sent_hook(&rig, "mine")).await.unwrap();
    assert!(emu.made_webhook(w.id));
    c.delete_webhook(w.id).await.unwrap();
    assert!(emu.made_webhook(w.id), "still its own once deleted");
    assert!(!emu.made_webhook(w.id + 1), "not made yet");
    assert!(!emu.made_webhook(234));
    // Another emulator beside it gives ids from the same clock, between this one's: they are
    // not this one's (the window would read their deliveries at the wrong clock speed).
    next_millisecond().await;
    let other = emulator(60.0, |_| {}).await;
    let theirs = client(&other)
        .create_webhook(&sent_hook(&rig, "theirs"))
        .await
        .unwrap();
    next_millisecond().await;
    let w2 = c
        .create_webhook(&sent_hook(&rig, "mine again"))
        .await
        .unwrap();
    assert!(
        w.id < theirs.id && theirs.id < w2.id,
        "{} {} {}",
        w.id,
        theirs.id,
        w2.id
    );
    assert!(emu.made_webhook(w2.id));
    assert!(!emu.made_webhook(theirs.id), "the other emulator's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_speed_change_mid_delivery_leaves_the_earlier_gaps_on_their_clock() {
    // Three failed attempts at 60x (90 s and 3 min apart on its clock), then the speed goes up
    // to 600x and the receiver answers 200: the gaps already made stay 90 s and 3 min, not the
    // 15 and 30 min that 600 times their real length would read as.
    let (rig, emu) = hooked(Answer::status(503), 60.0).await;
    emu.inject_incoming("+27007654321", "+27001234567", "hi");
    calls(&rig, 3, 30).await;
    rig.responder.set_answer(Answer::status(200)).unwrap();
    emu.set_speed(600.0);
    let got = calls(&rig, 4, 30).await;
    assert_eq!(
        hookscope::deliveries::marked_speed(&got[3..]),
        Some(600.0),
        "the last attempt was made at the new speed"
    );
    let schedule =
        hookscope::deliveries::schedule_for(&got, hookscope::contract::Schedule::default());
    let d = hookscope::deliveries::analyze(
        &got,
        &schedule,
        hookscope::deliveries::tolerance_for(&schedule),
        &[],
    )
    .expect("a delivery");
    let clock_gaps: Vec<f64> = d.attempts[1..3]
        .iter()
        .map(|a| a.clock_gap.expect("a gap on its clock").as_secs_f64())
        .collect();
    assert!(
        (90.0..100.0).contains(&clock_gaps[0]) && (180.0..190.0).contains(&clock_gaps[1]),
        "{clock_gaps:?}"
    );
    let text = d.attempts[1].gap_text(600.0).unwrap();
    assert!(text.contains("(1 min 3"), "{text}");
    // The timeline sits attempt 2 about 90 s of its clock after attempt 1.
    let map = d.clock.clone().expect("the emulator's times");
    let at = map.secs_since_first(d.attempts[1].at);
    assert!((90.0..100.0).contains(&at), "{at}");
}
