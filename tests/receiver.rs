//! The receiver over real HTTP on 127.0.0.1: calls are stored whole and answered as chosen, and
//! bad input is answered and recorded, never lost.

mod common;

use common::*;
use hookscope::contract::Outcome;
use hookscope::responder::Answer;
use hookscope::store::Filter;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn finding_codes(rig: &Rig, id: i64) -> Vec<String> {
    let s = rig.store.get(id).unwrap().unwrap();
    s.inv.findings.iter().map(|f| f.code.clone()).collect()
}

/// The newest stored call, once there is one (for calls whose answer never arrives).
async fn stored_soon(rig: &Rig, what: &str) -> hookscope::store::Stored {
    eventually(Duration::from_secs(20), what, || {
        let id = rig.store.last_id().unwrap()?;
        rig.store.get(id).unwrap()
    })
    .await
}

/// POST `[]` to `/` with no other header.
async fn post_empty_array(rig: &Rig) -> reqwest::Response {
    rig.client
        .post(rig.url("/"))
        .body("[]")
        .send()
        .await
        .unwrap()
}

async fn last(rig: &Rig) -> hookscope::store::Stored {
    let id = rig.store.last_id().unwrap().expect("something stored");
    rig.store.get(id).unwrap().unwrap()
}

#[tokio::test]
async fn a_status_report_is_stored_whole_and_answered_as_chosen() {
    let mut answer = Answer::status(200);
    answer.body = Some("thanks".into());
    let rig = Rig::start(answer).await;
    let body = status_report_body("1001");
    let resp = post(
        &rig.client,
        &rig.url("/hooks/sms?secret=abc"),
        &invoker_headers("status-report", "dlv-1", 1),
        body.clone(),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.text().await.unwrap(), "thanks");

    // Acknowledged means stored: it is there as soon as the answer arrived.
    let s = last(&rig).await;
    assert_eq!(s.inv.method, "POST");
    assert_eq!(s.inv.path, "/hooks/sms");
    assert_eq!(s.inv.query.as_deref(), Some("secret=abc"));
    assert_eq!(s.inv.body, body);
    assert_eq!(s.inv.body_size, body.len() as u64);
    assert_eq!(s.inv.event.as_deref(), Some("status-report"));
    assert_eq!(s.inv.delivery.as_deref(), Some("dlv-1"));
    assert_eq!(s.inv.attempt, Some(1));
    assert_eq!(s.inv.webhook_id.as_deref(), Some("234"));
    assert_eq!(s.inv.messages, Some(1));
    assert_eq!(s.inv.findings, vec![]);
    assert_eq!(s.inv.answer.status, 200);
    assert_eq!(s.inv.answer.body, &b"thanks"[..]);
    assert_eq!(s.inv.outcome(), Outcome::Succeeded);
    assert!(s.inv.peer.as_deref().unwrap().starts_with("127.0.0.1:"));
    let names: Vec<&str> = s.inv.headers.iter().map(|h| h.name.as_str()).collect();
    assert!(names.contains(&"x-service-delivery-attempt"));
    assert!(names.contains(&"user-agent"));
}

#[tokio::test]
async fn an_incoming_message_gets_503_with_retry_after() {
    let rig = Rig::start(Answer::status(503).with_retry_after(120)).await;
    let body = incoming_body("2002");
    let resp = post(
        &rig.client,
        &rig.url("/in"),
        &invoker_headers("incoming-message", "dlv-2", 3),
        body.clone(),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "120");
    let s = last(&rig).await;
    assert_eq!(s.inv.body, body);
    assert_eq!(s.inv.event.as_deref(), Some("incoming-message"));
    assert_eq!(s.inv.attempt, Some(3));
    assert_eq!(s.inv.outcome(), Outcome::RetryUnavailable);
    assert_eq!(
        s.inv.answer.headers,
        vec![("Retry-After".to_owned(), "120".to_owned())]
    );
}

/// A Retry-After date given in an obsolete form (RFC 850, asctime) is sent as HTTP asks a
/// sender to write one, and recorded as sent; it had gone out as typed.
#[tokio::test]
async fn a_retry_after_date_in_an_old_form_is_sent_as_http_writes_dates() {
    for typed in [
        " Sunday, 06-Nov-94 08:49:37 GMT ",
        "Sun Nov  6 08:49:37 1994",
        "Sun, 06 Nov 1994 08:49:37 GMT",
    ] {
        let mut answer = Answer::status(503);
        answer.retry_after = Some(typed.to_owned());
        let rig = Rig::start(answer).await;
        let resp = post(
            &rig.client,
            &rig.url("/old"),
            &invoker_headers("status-report", "dlv-old", 1),
            status_report_body("3001"),
        )
        .send()
        .await
        .unwrap();
        assert_eq!(resp.status(), 503, "{typed:?}");
        assert_eq!(
            resp.headers()["retry-after"],
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "{typed:?}"
        );
        let s = last(&rig).await;
        assert_eq!(
            s.inv.answer.headers,
            vec![(
                "Retry-After".to_owned(),
                "Sun, 06 Nov 1994 08:49:37 GMT".to_owned()
            )],
            "{typed:?}"
        );
    }
}

#[tokio::test]
async fn the_choice_applies_to_the_next_call_at_once() {
    let rig = Rig::start(Answer::status(200)).await;
    let send = || {
        post(
            &rig.client,
            &rig.url("/"),
            &invoker_headers("status-report", "d", 1),
            status_report_body("1"),
        )
        .send()
    };
    assert_eq!(send().await.unwrap().status(), 200);
    rig.responder.set_answer(Answer::status(410)).unwrap();
    assert_eq!(send().await.unwrap().status(), 410);
    assert_eq!(last(&rig).await.inv.outcome(), Outcome::WebhookCancelled);
}

#[tokio::test]
async fn the_registration_check_gets_200_while_503_is_chosen() {
    let rig = Rig::start(Answer::status(503)).await;
    let status = registration_check(&rig.client, &rig.url("/hook")).await;
    assert_eq!(status, 200);
    let s = last(&rig).await;
    assert!(s.inv.registration_check);
    assert_eq!(s.inv.rule.as_deref(), Some("registration check"));
    assert_eq!(s.inv.answer.status, 200);

    // Turned off, the check gets the chosen code.
    rig.responder.set_pass_registration_check(false);
    let status = registration_check(&rig.client, &rig.url("/hook")).await;
    assert_eq!(status, 503);
}

#[tokio::test]
async fn the_chosen_delay_is_applied() {
    let mut answer = Answer::status(200);
    answer.delay_ms = 300;
    let rig = Rig::start(answer).await;
    let start = std::time::Instant::now();
    let resp = post_empty_array(&rig).await;
    assert_eq!(resp.status(), 200);
    assert!(start.elapsed() >= Duration::from_millis(300));
    let s = last(&rig).await;
    assert_eq!(s.inv.answer.delay_ms, 300);
    assert!(s.inv.took_us >= 300_000);
}

/// A content type is sent as chosen, with no body too; an empty answer without one gets none
/// (a 204 was sent with text/plain); the record says what the wire carried.
#[tokio::test]
async fn the_content_type_is_sent_with_a_body_or_without() {
    let rig = Rig::start(Answer {
        content_type: Some("application/json".into()),
        ..Answer::status(500)
    })
    .await;
    let resp = post_empty_array(&rig).await;
    assert_eq!(resp.headers()["content-type"], "application/json");
    assert_eq!(resp.bytes().await.unwrap().len(), 0);
    let s = last(&rig).await;
    assert_eq!(
        s.inv.answer.headers,
        vec![("Content-Type".to_owned(), "application/json".to_owned())]
    );
    rig.responder
        .set_answer(Answer {
            body: Some("".into()),
            ..Answer::status(204)
        })
        .unwrap();
    let resp = post_empty_array(&rig).await;
    assert_eq!(resp.status(), 204);
    assert!(resp.headers().get("content-type").is_none());
    let s = last(&rig).await;
    assert!(
        s.inv.answer.headers.is_empty(),
        "{:?}",
        s.inv.answer.headers
    );
}

#[tokio::test]
async fn bad_bodies_are_answered_and_recorded_with_findings() {
    let rig = Rig::start(Answer::status(200)).await;
    let h = invoker_headers("status-report", "bad", 1);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("invalid json", b"[{\"id\":".to_vec(), "body-not-json"),
        ("invalid utf-8", b"[\"\xff\xfe\"]".to_vec(), "body-not-utf8"),
        ("empty body", Vec::new(), "empty-body"),
        ("not an array", b"{\"id\":\"1\"}".to_vec(), "body-not-array"),
    ];
    for (what, body, code) in cases {
        let resp = post(&rig.client, &rig.url("/bad"), &h, body.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200, "{what}");
        let s = last(&rig).await;
        assert_eq!(s.inv.body, body, "{what}: kept byte for byte");
        assert!(
            finding_codes(&rig, s.id).contains(&code.to_owned()),
            "{what}"
        );
    }
    assert_eq!(rig.store.count(&Filter::default()).unwrap(), 4);
}

#[tokio::test]
async fn wrong_content_type_and_get_are_recorded() {
    let rig = Rig::start(Answer::status(200)).await;
    let mut h = invoker_headers("status-report", "ct", 1);
    h.retain(|(n, _)| n != "Content-Type");
    h.push(("Content-Type".into(), "text/plain".into()));
    let resp = post(&rig.client, &rig.url("/"), &h, status_report_body("1"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    let s = last(&rig).await;
    assert!(finding_codes(&rig, s.id).contains(&"content-type".to_owned()));

    let resp = rig.client.get(rig.url("/status?x=1")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    let s = last(&rig).await;
    assert_eq!(s.inv.method, "GET");
    assert_eq!(s.inv.query.as_deref(), Some("x=1"));
    let codes = finding_codes(&rig, s.id);
    assert!(codes.contains(&"method".to_owned()));
    assert!(codes.contains(&"missing-header".to_owned()));
}

#[tokio::test]
async fn head_and_connect_are_recorded_with_the_empty_body_http_sends() {
    let rig = Rig::start(Answer {
        body: Some("hello".into()),
        ..Answer::status(200)
    })
    .await;
    let resp = rig.client.head(rig.url("/h")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    // The Content-Length a GET would get, as HTTP asks of an answer to HEAD (it said 0).
    assert_eq!(
        resp.headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok()),
        Some("5")
    );
    assert!(resp.bytes().await.unwrap().is_empty());
    let s = last(&rig).await;
    assert_eq!(s.inv.method, "HEAD");
    assert!(s.inv.answer.body.is_empty(), "recorded as sent: no body");
    // A 2xx to CONNECT opens a tunnel: no body is sent, and none is recorded.
    let head = raw_call(
        rig.running.addr,
        b"CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n",
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let s = last(&rig).await;
    assert_eq!(s.inv.method, "CONNECT");
    assert!(s.inv.answer.body.is_empty(), "recorded as sent: no body");
    // Nor a type for a body it does not have.
    assert!(
        !s.inv
            .answer
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-type")),
        "{:?}",
        s.inv.answer.headers
    );
    // A GET gets the body, and its record says so.
    let resp = rig.client.get(rig.url("/g")).send().await.unwrap();
    assert_eq!(resp.text().await.unwrap(), "hello");
    let s = last(&rig).await;
    assert_eq!(s.inv.answer.body, &b"hello"[..]);
}

/// Send raw bytes over TCP and return the status line of the answer.
async fn raw_call(addr: std::net::SocketAddr, request: &[u8]) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(request).await.unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 1024];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut chunk))
            .await
            .expect("an answer in time")
            .unwrap();
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.windows(4).any(|w| w == b"\r\n\r\n") {
            break;
        }
    }
    String::from_utf8_lossy(&buf)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Three requests on one connection, sent in one write: the headers of each are recorded as
/// they arrived, in their order (a repeated header where it was, not grouped with its first
/// appearance) and spelt as sent, across a chunked body and a body with a length.
#[tokio::test]
async fn headers_are_recorded_in_their_order_and_spelling_across_pipelined_calls() {
    let rig = Rig::start(Answer::status(204)).await;
    let mut s = tokio::net::TcpStream::connect(rig.running.addr)
        .await
        .unwrap();
    let requests = b"POST /one HTTP/1.1\r\nHost: x\r\nX-Trace: 1\r\ncontent-type: application/json\r\nX-TRACE: 2\r\nTransfer-Encoding: chunked\r\n\r\n1;ext=a\r\n[\r\n1\r\n]\r\n0\r\nX-Trailer: t\r\n\r\n\
PUT /two?q=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nx-a: 1\r\nX-B: 2\r\nx-A: 3\r\n\r\n[]\
GET /three HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n";
    s.write_all(requests).await.unwrap();
    let mut got = Vec::new();
    let mut chunk = [0u8; 1024];
    while String::from_utf8_lossy(&got)
        .matches("HTTP/1.1 204")
        .count()
        < 3
    {
        let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut chunk))
            .await
            .expect("three answers in time")
            .unwrap();
        assert!(
            n > 0,
            "the connection closed: {}",
            String::from_utf8_lossy(&got)
        );
        got.extend_from_slice(&chunk[..n]);
    }
    let last = rig.store.last_id().unwrap().unwrap();
    let headers = |id: i64| -> Vec<(String, String)> {
        let s = rig.store.get(id).unwrap().unwrap();
        s.inv
            .headers
            .iter()
            .map(|h| (h.name.clone(), h.value.clone()))
            .collect()
    };
    let pairs = |p: &[(&str, &str)]| -> Vec<(String, String)> {
        p.iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    };
    assert_eq!(
        headers(last - 2),
        pairs(&[
            ("Host", "x"),
            ("X-Trace", "1"),
            ("content-type", "application/json"),
            ("X-TRACE", "2"),
            ("Transfer-Encoding", "chunked"),
        ])
    );
    assert_eq!(rig.store.get(last - 2).unwrap().unwrap().inv.body, b"[]");
    assert_eq!(
        headers(last - 1),
        pairs(&[
            ("Host", "x"),
            ("Content-Length", "2"),
            ("x-a", "1"),
            ("X-B", "2"),
            ("x-A", "3"),
        ])
    );
    assert_eq!(rig.store.get(last - 1).unwrap().unwrap().inv.path, "/two");
    assert_eq!(headers(last), pairs(&[("Host", "x"), ("Accept", "*/*")]));
    assert_eq!(rig.store.get(last).unwrap().unwrap().inv.method, "GET");
}

#[tokio::test]
async fn a_call_with_no_headers_and_odd_bytes_is_recorded() {
    let rig = Rig::start(Answer::status(202)).await;
    let status = raw_call(rig.running.addr, b"POST /naked HTTP/1.1\r\n\r\n").await;
    assert!(status.starts_with("HTTP/1.1 202"), "{status}");
    let s = last(&rig).await;
    assert_eq!(s.inv.path, "/naked");
    assert!(s.inv.headers.is_empty());
    let codes = finding_codes(&rig, s.id);
    assert_eq!(codes.iter().filter(|c| *c == "missing-header").count(), 4);
    assert!(codes.contains(&"content-type".to_owned()));
    assert!(codes.contains(&"empty-body".to_owned()));

    // A header value that is not UTF-8 is kept byte for byte.
    let status = raw_call(
        rig.running.addr,
        b"POST /odd HTTP/1.1\r\nHost: x\r\nX-Service-Delivery: \xff\xfe\r\nContent-Length: 2\r\n\r\n[]",
    )
    .await;
    assert!(status.starts_with("HTTP/1.1 202"), "{status}");
    let s = last(&rig).await;
    let h = s
        .inv
        .headers
        .iter()
        .find(|h| h.name == "X-Service-Delivery")
        .unwrap();
    assert_eq!(h.bytes(), b"\xff\xfe");
    assert!(finding_codes(&rig, s.id).contains(&"malformed-header".to_owned()));
}

/// Requests that HTTP itself refuses (hyper answers 400 or 431 before any handler runs) are
/// recorded all the same: what arrived as the body, head included, why it could not be read,
/// and hyper's answer. A call on the same receiver afterwards is recorded as usual.
#[tokio::test]
async fn requests_http_refuses_are_recorded_with_what_arrived_and_why() {
    let rig = Rig::start(Answer::status(202)).await;
    let mut many = b"POST /many HTTP/1.1\r\nHost: x\r\n".to_vec();
    for i in 0..101 {
        many.extend_from_slice(format!("X-{i}: v\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    let mut long = b"GET /".to_vec();
    long.extend(std::iter::repeat_n(b'a', 70_000));
    long.extend_from_slice(b" HTTP/1.1\r\nHost: x\r\n\r\n");
    let cases: [(&[u8], &str, &str, &str, &str); 7] = [
        (
            b"POST /esc HTTP/1.1\r\nHost: x\r\nX-Bad\x1b: 1\r\nContent-Length: 2\r\n\r\n[]",
            "400",
            "POST",
            "/esc",
            "a header's name has a character HTTP does not allow",
        ),
        (
            b"POST /two HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
            "400",
            "POST",
            "/two",
            "two different Content-Lengths",
        ),
        (&many, "431", "POST", "/many", "more than 100 headers"),
        // A TLS ClientHello's first bytes: https:// used for this plain-HTTP port.
        (
            b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\x9a\x5c",
            "400",
            "",
            "",
            "a TLS handshake",
        ),
        (
            b"GET /bad version\r\nHost: x\r\n\r\n",
            "400",
            "",
            "",
            "its HTTP version is \"version\", not HTTP/1.1",
        ),
        (
            b"POST /old HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
            "400",
            "POST",
            "/old",
            "HTTP/1.0 and has a Transfer-Encoding",
        ),
        // Its first 64 KiB are kept: the request line is cut, its path too.
        (&long, "414", "GET", "/aaaa", "its target is 68.4 KiB long"),
    ];
    for (bytes, code, method, path, why) in cases {
        let status = raw_call(rig.running.addr, bytes).await;
        assert!(status.starts_with(&format!("HTTP/1.1 {code}")), "{status}");
        let s = eventually(Duration::from_secs(20), why, || {
            let id = rig.store.last_id().unwrap()?;
            rig.store
                .get(id)
                .unwrap()
                .filter(|s| s.inv.not_http() && bytes.starts_with(&s.inv.body))
        })
        .await;
        assert_eq!(s.inv.body.len(), bytes.len().min(64 << 10));
        assert_eq!(s.inv.method, method);
        assert!(s.inv.path.starts_with(path), "{why}: {}", &s.inv.path[..20]);
        assert_eq!(s.inv.answer.status.to_string(), code);
        assert!(s.inv.headers.is_empty());
        assert_eq!(finding_codes(&rig, s.id), ["not-http"], "{why}");
        let said = &s.inv.findings[0].message;
        assert!(said.contains(why), "{said}");
        assert!(said.contains(&format!("answered it {code}")), "{said}");
    }
    // The receiver goes on recording calls as they are.
    let status = raw_call(rig.running.addr, b"POST /fine HTTP/1.1\r\nHost: x\r\n\r\n").await;
    assert!(status.starts_with("HTTP/1.1 202"), "{status}");
    let s = last(&rig).await;
    assert_eq!(s.inv.path, "/fine");
    assert!(!s.inv.not_http());
}

/// A chunked body whose chunk sizes cannot be read: the caller is still there and gets the
/// chosen answer (hyper sends it), so the record says what it got, with what arrived of the
/// body, not that it hung up.
#[tokio::test]
async fn a_body_with_unreadable_chunks_is_answered_and_recorded_as_answered() {
    let rig = Rig::start(Answer::status(202)).await;
    let status = raw_call(
        rig.running.addr,
        b"POST /chunks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\nzz\r\nabc\r\n0\r\n\r\n",
    )
    .await;
    assert!(status.starts_with("HTTP/1.1 202"), "{status}");
    let s = stored_soon(&rig, "the call").await;
    assert_eq!(s.inv.path, "/chunks");
    assert_eq!(s.inv.body, b"[]");
    assert_eq!(s.inv.answer.status, 202);
    assert!(s.inv.unanswered().is_none(), "{:?}", s.inv.findings);
    assert_eq!(s.inv.outcome(), Outcome::Succeeded);
    let said = s
        .inv
        .findings
        .iter()
        .find(|f| f.code == "body-incomplete")
        .expect("body-incomplete");
    assert!(
        said.message
            .contains("chunked framing could not be read after 2 bytes"),
        "{}",
        said.message
    );
}

/// A request whose target is not a path (CONNECT's host:port, a proxy's absolute URL, `*`) is
/// recorded with the target it named.
#[tokio::test]
async fn a_target_that_is_not_a_path_is_recorded_as_sent() {
    let rig = Rig::start(Answer::status(200)).await;
    for (request, method, path) in [
        (
            &b"CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n"[..],
            "CONNECT",
            "example.test:443",
        ),
        (b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", "OPTIONS", "*"),
        (
            b"GET http://example.test/hook?a=1 HTTP/1.1\r\nHost: example.test\r\n\r\n",
            "GET",
            "/hook",
        ),
    ] {
        let status = raw_call(rig.running.addr, request).await;
        // Answered, so stored.
        assert!(status.starts_with("HTTP/1.1 200"), "{method}: {status}");
        let s = last(&rig).await;
        assert_eq!((s.inv.method.as_str(), s.inv.path.as_str()), (method, path));
    }
}

#[tokio::test]
async fn a_body_far_over_the_limit_says_hookscope_stopped_reading_it() {
    // Past twice the limit and 16 MiB more, the receiver stops reading: what it read is not
    // "what arrived" (the client sent it all).
    let rig = Rig::start_with(Answer::status(200), |c| c.body_limit = 1024).await;
    let big = vec![b'x'; 20 << 20];
    // The answer may or may not reach a client still sending: the record is what counts.
    let _ = post(
        &rig.client,
        &rig.url("/far"),
        &invoker_headers("status-report", "far", 1),
        big,
    )
    .send()
    .await;
    let s = last(&rig).await;
    assert!(!s.inv.body_kept);
    assert_eq!(s.inv.declared_size, Some(20 << 20));
    assert!(s.inv.body_size < 20 << 20, "{}", s.inv.body_size);
    let text = s
        .inv
        .findings
        .iter()
        .find(|f| f.code == "body-too-large")
        .map(|f| f.message.clone())
        .expect("a body-too-large finding");
    assert!(
        text.contains("of it was read before Hookscope stopped reading"),
        "{text}"
    );
    assert!(!text.contains("of it arrived"), "{text}");
}

#[tokio::test]
async fn a_40_mib_body_is_answered_413_and_recorded_with_its_size() {
    let rig = Rig::start(Answer::status(200)).await;
    let big = vec![b'x'; 40 << 20];
    let resp = post(
        &rig.client,
        &rig.url("/big"),
        &invoker_headers("status-report", "big", 1),
        big,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 413);
    let s = last(&rig).await;
    assert!(!s.inv.body_kept);
    assert!(s.inv.body.is_empty());
    assert_eq!(s.inv.declared_size, Some(40 << 20));
    assert_eq!(s.inv.body_size, 40 << 20, "received size");
    assert_eq!(s.inv.answer.status, 413);
    let codes = finding_codes(&rig, s.id);
    assert!(codes.contains(&"body-too-large".to_owned()), "{codes:?}");
    assert!(!codes.contains(&"empty-body".to_owned()));
    // Sizes in bytes too: 1.0 KiB over a 1.0 KiB limit would say nothing.
    let too_large = s.inv.findings.iter().find(|f| f.code == "body-too-large");
    let text = &too_large.expect("a body-too-large finding").message;
    assert!(
        text.contains("(41943040 bytes)") && text.contains("(33554432 bytes)"),
        "{text}"
    );

    // The limit is configurable; a body under it is kept whole.
    let rig = Rig::start_with(Answer::status(200), |c| c.body_limit = 64 << 20).await;
    let big = vec![b' '; 40 << 20];
    let resp = post(
        &rig.client,
        &rig.url("/big"),
        &invoker_headers("status-report", "big", 1),
        big,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 200);
    let s = last(&rig).await;
    assert!(s.inv.body_kept);
    assert_eq!(s.inv.body.len(), 40 << 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_concurrent_small_calls_are_all_answered_and_stored() {
    use futures_util::StreamExt;
    let rig = Rig::start(Answer::status(200)).await;
    let n = 10_000usize;
    let url = rig.url("/load");
    let results: Vec<u16> = futures_util::stream::iter(0..n)
        .map(|i| {
            let req = post(
                &rig.client,
                &url,
                &invoker_headers("status-report", &format!("load-{i}"), 1),
                status_report_body(&i.to_string()),
            );
            async move { req.send().await.map(|r| r.status().as_u16()).unwrap_or(0) }
        })
        .buffer_unordered(256)
        .collect()
        .await;
    assert_eq!(results.len(), n);
    assert!(results.iter().all(|s| *s == 200), "every call answered 200");
    assert_eq!(rig.store.count(&Filter::default()).unwrap(), n as u64);
    let f = Filter {
        text: "load-9999".into(),
        ..Filter::default()
    };
    assert_eq!(rig.store.count(&f).unwrap(), 1);
}

#[tokio::test]
async fn listeners_see_each_recorded_call() {
    let rig = Rig::start(Answer::status(200)).await;
    let mut events = rig.running.subscribe();
    post(
        &rig.client,
        &rig.url("/"),
        &invoker_headers("status-report", "ev", 2),
        status_report_body("1"),
    )
    .send()
    .await
    .unwrap();
    let rec = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rec.summary.delivery.as_deref(), Some("ev"));
    assert_eq!(rec.summary.attempt, Some(2));
    assert_eq!(rec.summary.id, rig.store.last_id().unwrap().unwrap());
}

/// The bytes of the invoker's attempt 1 of a status report of message `id`, to `path`, as
/// delivery `delivery`, with `extra` header lines (each ending in CRLF) before its length.
fn raw_status_report(path: &str, delivery: &str, extra: &str, id: &str) -> Vec<u8> {
    let body = status_report_body(id);
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nUser-Agent: Service Invoker\r\nX-Service-Event: status-report\r\nX-Service-Delivery: {delivery}\r\nX-Service-Delivery-Attempt: 1\r\nX-Service-Webhook-Id: 234\r\n{extra}Content-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    request
}

/// A call that reaches the port before it is served (bound, its queue takes connections) is in
/// the stream `start_subscribed` gives. (`listen` had subscribed after starting, and printed no
/// line for a call served in between: a race of a few instructions on a loaded machine, which
/// this test cannot force; it holds the API to its promise, the stream made before serving.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_waiting_before_the_receiver_serves_is_in_its_stream() {
    use hookscope::receiver::{self, ReceiverConfig};
    use hookscope::responder::{Responder, ResponderConfig};
    use hookscope::store::{Durability, Store};
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), Durability::Full).unwrap();
    let responder = Responder::new(ResponderConfig {
        answer: Answer::status(200),
        pass_registration_check: true,
    });
    let bound = receiver::bind(ReceiverConfig {
        bind: std::net::Ipv4Addr::LOCALHOST.into(),
        port: 0,
        ..ReceiverConfig::default()
    })
    .await
    .unwrap();
    // The whole request is sent before the receiver serves: the port's queue took the
    // connection and the socket holds its bytes.
    let request = raw_status_report("/early", "early-1", "Connection: close\r\n", "1");
    let mut s = tokio::net::TcpStream::connect(bound.addr()).await.unwrap();
    s.write_all(&request).await.unwrap();
    let (running, mut events) = bound.start_subscribed(store.clone(), responder);
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert!(answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    let rec = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rec.summary.delivery.as_deref(), Some("early-1"));
    assert_eq!(rec.summary.id, store.last_id().unwrap().unwrap());
    running.shutdown().await;
}

/// The service gives up on a slow answer; the call it made is recorded all the same, as soon as
/// the caller hangs up, with a finding that says so.
#[tokio::test]
async fn a_caller_that_hangs_up_during_the_delay_is_still_recorded() {
    let mut answer = Answer::status(200);
    answer.delay_ms = 60_000;
    let rig = Rig::start(answer).await;
    let body = status_report_body("5");
    let request = raw_status_report("/slow", "gone-1", "", "5");
    let mut s = tokio::net::TcpStream::connect(rig.running.addr)
        .await
        .unwrap();
    s.write_all(&request).await.unwrap();
    drop(s);
    // Well before the minute of delay is over.
    let s = stored_soon(&rig, "the call to be stored").await;
    assert_eq!(s.inv.delivery.as_deref(), Some("gone-1"));
    assert_eq!(s.inv.body, body);
    assert_eq!(s.inv.answer.delay_ms, 60_000);
    assert!(s.inv.took_us < 20_000_000, "took {} µs", s.inv.took_us);
    let hung_up = s.inv.findings.iter().find(|f| f.code == "caller-hung-up");
    let hung_up = hung_up.expect("a caller-hung-up finding");
    assert!(hung_up.message.contains("1 min"), "{}", hung_up.message);
    // No answer reached the caller: whatever code was chosen, the service retries.
    assert_eq!(s.inv.outcome(), Outcome::RetryTemporary);
    let row = rig.store.page(&Filter::default(), 0, 1).unwrap();
    assert_eq!(row[0].outcome, Outcome::RetryTemporary);
}

/// A caller that hangs up while its call is being committed (the answer waits for the commit)
/// got no answer: the call is stored all the same, noted `caller-hung-up`, and the listeners
/// (the window, `listen`'s lines and count) are told of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_hangs_up_while_its_call_is_stored_is_noted_and_listed() {
    let rig = Rig::start(Answer::status(200)).await;
    let mut events = rig.running.subscribe();
    // Another connection holds the database's write lock, so the commit waits.
    let lock = rusqlite::Connection::open(rig.store.db_path()).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let sent = post(
        &impatient,
        &rig.url("/gone"),
        &invoker_headers("status-report", "gone-2", 1),
        status_report_body("6"),
    )
    .send()
    .await;
    assert!(sent.is_err(), "the caller gave up before the answer");
    // The handler is dropped with the connection; a task waits for the commit (one call in
    // progress instead of the handler's two counts).
    eventually(Duration::from_secs(20), "the handler to be dropped", || {
        (rig.running.in_progress() == 1).then_some(())
    })
    .await;
    lock.execute_batch("ROLLBACK").unwrap();

    let rec = tokio::time::timeout(Duration::from_secs(20), events.recv())
        .await
        .expect("the listeners are told")
        .unwrap();
    assert_eq!(rec.summary.delivery.as_deref(), Some("gone-2"));
    assert_eq!(rec.summary.findings, 1);
    assert_eq!(rec.summary.outcome, Outcome::RetryTemporary);
    let s = rig.store.get(rec.summary.id).unwrap().unwrap();
    assert_eq!(s.inv.answer.status, 200, "the answer chosen is kept");
    let hung_up = s.inv.findings.iter().find(|f| f.code == "caller-hung-up");
    let hung_up = hung_up.expect("a caller-hung-up finding");
    assert!(hung_up.message.contains("while the call was being stored"));
    assert_eq!(s.inv.outcome(), Outcome::RetryTemporary);
    let row = rig.store.page(&Filter::default(), 0, 1).unwrap();
    assert_eq!(row[0].outcome, Outcome::RetryTemporary);
    assert_eq!(row[0].findings, 1);
    eventually(Duration::from_secs(20), "nothing left in progress", || {
        (rig.running.in_progress() == 0).then_some(())
    })
    .await;
}

/// Stopping the receiver never waits out a delay: the held-back answer goes out at once, and
/// the call is stored with a note that says so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_answers_a_delayed_call_at_once_and_stores_it() {
    let mut answer = Answer::status(503).with_retry_after(120);
    answer.delay_ms = 3_600_000;
    let rig = Rig::start(answer).await;
    let request = post(
        &rig.client,
        &rig.url("/slow"),
        &invoker_headers("status-report", "held-1", 1),
        status_report_body("5"),
    );
    let call = tokio::spawn(request.send());
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while rig.running.in_progress() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the call never arrived"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Held, it is named to the window (it is stored when answered).
    let mut held = rig.running.watch_held();
    let now = held
        .wait_for(|h| !h.is_empty())
        .await
        .expect("the receiver runs")
        .clone();
    assert_eq!(now.len(), 1);
    assert_eq!(now[0].delivery.as_deref(), Some("held-1"));
    assert_eq!(
        (now[0].method.as_str(), now[0].path.as_str()),
        ("POST", "/slow")
    );
    assert_eq!((now[0].status, now[0].attempt), (503, Some(1)));
    assert_eq!(now[0].delay, Duration::from_secs(3600));
    assert!(store_is_empty(&rig.store));
    let (store, running) = (rig.store.clone(), rig.running);
    tokio::time::timeout(Duration::from_secs(20), running.shutdown())
        .await
        .expect("the receiver stops without waiting out the hour");
    // Answered and stored, it is held no longer.
    assert!(held.borrow().is_empty());
    // The caller got the chosen answer.
    let reply = call.await.unwrap().unwrap();
    assert_eq!(reply.status(), 503);
    assert_eq!(reply.headers()["retry-after"], "120");
    let row = store.page(&Filter::default(), 0, 1).unwrap();
    let s = store.get(row[0].id).unwrap().unwrap();
    assert_eq!(s.inv.delivery.as_deref(), Some("held-1"));
    assert!(s.inv.took_us < 20_000_000, "took {} µs", s.inv.took_us);
    let early = s.inv.findings.iter().find(|f| f.code == "answered-early");
    let early = early.expect("an answered-early finding");
    assert!(early.message.contains("1 h"), "{}", early.message);
    assert_eq!(s.inv.outcome(), Outcome::RetryUnavailable);
}

/// A second Ctrl-C quits at once: calls stored but not yet answered get no answer, and are
/// noted so, so the store never claims an answer the caller did not get (it said 200
/// succeeded, and the service's retry then read as a call after success).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quitting_at_once_notes_the_stored_calls_it_never_answered() {
    let mut answer = Answer::status(200);
    answer.delay_ms = 3_600_000;
    let rig = Rig::start(answer).await;
    let impatient = reqwest::Client::builder()
        .timeout(Duration::from_secs(3))
        .build()
        .unwrap();
    let calls: Vec<_> = (0..3)
        .map(|i| {
            let request = post(
                &impatient,
                &rig.url("/held"),
                &invoker_headers("status-report", &format!("quit-{i}"), 1),
                status_report_body("7"),
            );
            tokio::spawn(request.send())
        })
        .collect();
    eventually(
        Duration::from_secs(20),
        "three calls held by the delay",
        || (rig.running.in_progress() == 3).then_some(()),
    )
    .await;
    // The commits will wait: another connection holds the database's write lock.
    let lock = rusqlite::Connection::open(rig.store.db_path()).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    let (store, running) = (rig.store.clone(), rig.running);
    let quitter = running.quitter();
    // The first Ctrl-C: the held calls are answered early, so they go to the store (each then
    // counts twice: its handler, and its commit under way).
    let stopping = tokio::spawn(running.shutdown());
    eventually(
        Duration::from_secs(20),
        "the three calls waiting for their commit",
        || (quitter.in_progress() == 6).then_some(()),
    )
    .await;
    // The second: then the commits go through.
    let quitting = quitter.quit_now();
    lock.execute_batch("ROLLBACK").unwrap();
    let report = tokio::time::timeout(Duration::from_secs(20), quitting)
        .await
        .expect("a quit at once is quick");
    assert_eq!(report.unanswered, 3, "each call counted once");
    assert_eq!(report.stored.len(), 3);
    for call in calls {
        let reply = call.await.unwrap();
        assert!(reply.is_err(), "no answer was sent: {reply:?}");
    }
    let rows = store.page(&Filter::default(), 0, 10).unwrap();
    assert_eq!(rows.len(), 3);
    for row in rows {
        assert_eq!(row.outcome, Outcome::RetryTemporary);
        let s = store.get(row.id).unwrap().unwrap();
        let codes: Vec<_> = s.inv.findings.iter().map(|f| f.code.as_str()).collect();
        // The answer the stop would have sent early never went: that note is taken back.
        assert_eq!(codes, vec!["quit-before-answer"]);
        assert_eq!(row.findings, 1);
        assert_eq!(s.inv.outcome(), Outcome::RetryTemporary);
        assert!(s.inv.unanswered().is_some_and(|w| w.contains("quit")));
    }
    stopping.abort();
}

/// A stalled client cannot keep the receiver from stopping: a connection that never finished
/// its request is not waited for past the grace, and a body still arriving is recorded with
/// what came and answered 503 (so the service sends it again). Before, both held `listen`'s
/// Ctrl-C for as long as the client liked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_clients_do_not_hold_up_a_stop() {
    let rig = Rig::start(Answer::status(200)).await;
    let addr = rig.running.addr;
    let mut half_head = tokio::net::TcpStream::connect(addr).await.unwrap();
    half_head
        .write_all(b"POST /never HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let mut half_body = tokio::net::TcpStream::connect(addr).await.unwrap();
    half_body
        .write_all(b"POST /stalled HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{\"id\":\"1\"")
        .await
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while rig.running.in_progress() == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the body never started"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (store, running) = (rig.store.clone(), rig.running);
    tokio::time::timeout(Duration::from_secs(30), running.shutdown())
        .await
        .expect("the receiver stops although two clients stalled");
    // The stalled body got its 503, and was recorded with what had arrived.
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), half_body.read_to_end(&mut reply)).await;
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 503"), "{reply}");
    let rows = store.page(&Filter::default(), 0, 10).unwrap();
    assert_eq!(rows.len(), 1, "only the call with a request is recorded");
    let s = store.get(rows[0].id).unwrap().unwrap();
    assert_eq!(s.inv.path, "/stalled");
    assert_eq!(s.inv.body_size, 10);
    assert_eq!(s.inv.answer.status, 503);
    let cut = s.inv.findings.iter().find(|f| f.code == "body-incomplete");
    let cut = cut.expect("a body-incomplete finding");
    assert!(cut.message.contains("stopped"), "{}", cut.message);
    drop(half_head);
}

/// A client that stops sending before the end of the body it declared is recorded with what
/// arrived and a finding.
#[tokio::test]
async fn a_body_cut_short_is_recorded_with_a_finding() {
    let rig = Rig::start(Answer::status(200)).await;
    let mut s = tokio::net::TcpStream::connect(rig.running.addr)
        .await
        .unwrap();
    s.write_all(b"POST /cut HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{\"id\":")
        .await
        .unwrap();
    // Only its sending side closed: it could still read an answer.
    s.shutdown().await.unwrap();
    let conn = s;
    let s = stored_soon(&rig, "the cut call to be stored").await;
    assert_eq!(s.inv.path, "/cut");
    assert_eq!(s.inv.body_size, 7);
    assert_eq!(s.inv.declared_size, Some(1000));
    let codes = finding_codes(&rig, s.id);
    assert!(codes.contains(&"body-incomplete".to_owned()));
    // The client is taken as gone, so the call is recorded unanswered: the service retries,
    // whatever was chosen.
    assert!(codes.contains(&"caller-hung-up".to_owned()), "{codes:?}");
    assert_eq!(s.inv.outcome(), Outcome::RetryTemporary);
    // And none is written, so the record is true of a client that only half-closed (it had
    // read the 200 the record said it never got).
    assert_eq!(read_to_close(conn).await, b"");
}

/// A client that stops sending in the middle of its body and keeps its connection open is not
/// waited for forever: past the body timeout the connection is closed with nothing written, and
/// the call is recorded with what arrived, as not answered (the service would retry it).
#[tokio::test]
async fn a_body_that_stops_arriving_is_closed_and_recorded() {
    let rig = Rig::start_with(Answer::status(200), |c| {
        c.body_timeout = Duration::from_millis(300)
    })
    .await;
    let mut conn = tokio::net::TcpStream::connect(rig.running.addr)
        .await
        .unwrap();
    conn.write_all(b"POST /stall HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[{\"id\"")
        .await
        .unwrap();
    // Nothing more, and the connection left open: the receiver closes it, writing nothing.
    assert_eq!(read_to_close(conn).await, b"");
    let s = stored_soon(&rig, "the stalled call to be stored").await;
    assert_eq!(s.inv.path, "/stall");
    assert_eq!(s.inv.body_size, 6);
    assert_eq!(s.inv.declared_size, Some(100));
    let incomplete = s.inv.findings.iter().find(|f| f.code == "body-incomplete");
    let incomplete = incomplete
        .expect("a body-incomplete finding")
        .message
        .clone();
    assert!(
        incomplete.starts_with("The body stopped arriving after 6 bytes of the 100 it declared: no byte of it arrived for 300 ms, so the receiver closed the connection"),
        "{incomplete}"
    );
    let codes = finding_codes(&rig, s.id);
    assert!(codes.contains(&"body-timed-out".to_owned()), "{codes:?}");
    // The receiver closed it: the caller did not hang up.
    assert!(!codes.contains(&"caller-hung-up".to_owned()), "{codes:?}");
    // Nor did the answer take too long: there was none.
    assert!(!codes.contains(&"answer-too-late".to_owned()), "{codes:?}");
    assert_eq!(s.inv.outcome(), Outcome::RetryTemporary);
    assert!(
        s.inv.answer_timing().starts_with("never sent"),
        "{}",
        s.inv.answer_timing()
    );
    let row = rig.store.page(&Filter::default(), 0, 1).unwrap();
    assert!(row[0].unanswered, "{:?}", row[0]);
}

/// With a delay chosen, a caller that stopped sending mid-body is not held for it: its call is
/// stored and its connection closed at once, with nothing written (it had been held the whole
/// delay, then stored as "held 2.2 s of a chosen delay of 2 s").
#[tokio::test]
async fn a_body_cut_short_is_not_held_for_the_delay() {
    let rig = Rig::start(Answer {
        delay_ms: 60_000,
        ..Answer::status(503)
    })
    .await;
    let mut conn = tokio::net::TcpStream::connect(rig.running.addr)
        .await
        .unwrap();
    conn.write_all(b"POST /cut HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n[1,2")
        .await
        .unwrap();
    conn.shutdown().await.unwrap();
    // Well within the delay: nothing written, the connection closed.
    assert_eq!(read_to_close(conn).await, b"");
    let s = stored_soon(&rig, "the cut call to be stored").await;
    let codes = finding_codes(&rig, s.id);
    assert!(codes.contains(&"caller-hung-up".to_owned()), "{codes:?}");
    assert_eq!(s.inv.outcome(), Outcome::RetryTemporary);
    assert!(s.inv.took_us < 10_000_000, "held {} us", s.inv.took_us);
}

/// A client that sends a whole request and closes its side at once (a half-close, or a full
/// close) is recorded every time, and the record says what it got: an answer read means no
/// `caller-hung-up`, none read means `caller-hung-up`. A handler dropped by hyper before the call
/// was handed to the store had lost about one such call in five: no record, no line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_request_from_a_client_that_closes_at_once_is_always_recorded() {
    let rig = Rig::start(Answer::status(200)).await;
    const HALF: usize = 300;
    const CLOSED: usize = 150;
    let mut read_answer = std::collections::HashMap::new();
    for k in 0..HALF + CLOSED {
        let mut conn = tokio::net::TcpStream::connect(rig.running.addr)
            .await
            .unwrap();
        let request = format!(
            "POST /h HTTP/1.1\r\nHost: x\r\nX-Service-Delivery: close-{k}\r\nContent-Length: 2\r\n\r\n[]"
        );
        conn.write_all(request.as_bytes()).await.unwrap();
        if k < HALF {
            // Closed at once, or a little later (up to 2.4 ms), about when the answer is
            // ready: a caller gone as its commit completed had been stored as answered.
            if k % 7 > 0 {
                tokio::time::sleep(Duration::from_micros((k % 7) as u64 * 400)).await;
            }
            conn.shutdown().await.unwrap();
            let got = read_to_close(conn).await;
            read_answer.insert(format!("close-{k}"), !got.is_empty());
        } else {
            drop(conn);
        }
    }
    let total = (HALF + CLOSED) as u64;
    let stored_all = eventually_or_not(Duration::from_secs(30), || {
        (rig.store.count(&Filter::default()).unwrap() == total).then_some(())
    })
    .await;
    if stored_all.is_none() {
        let rows = rig.store.page(&Filter::default(), 0, total).unwrap();
        let mut got: Vec<String> = rows.iter().filter_map(|r| r.delivery.clone()).collect();
        got.sort();
        let missing: Vec<String> = (0..total)
            .map(|k| format!("close-{k}"))
            .filter(|d| got.binary_search(d).is_err())
            .collect();
        panic!("{} of {total} stored; missing {missing:?}", rows.len());
    }
    // A hang-up seen while a call was being committed is noted just after its commit: the
    // count can be whole before the last notes are (CI saw one call read as answered).
    eventually(Duration::from_secs(30), "every hang-up to be noted", || {
        (rig.running.in_progress() == 0).then_some(())
    })
    .await;
    let rows = rig.store.page(&Filter::default(), 0, total).unwrap();
    let mut deliveries: Vec<String> = Vec::new();
    for row in &rows {
        let s = rig.store.get(row.id).unwrap().unwrap();
        let delivery = s.inv.delivery.clone().expect("the delivery header is kept");
        let hung_up = s.inv.findings.iter().any(|f| f.code == "caller-hung-up");
        if let Some(&read) = read_answer.get(&delivery) {
            assert_eq!(
                read, !hung_up,
                "{delivery}: read an answer {read}, hung up {hung_up}"
            );
            assert_eq!(
                s.inv.outcome(),
                if read {
                    Outcome::Succeeded
                } else {
                    Outcome::RetryTemporary
                },
                "{delivery}"
            );
        }
        deliveries.push(delivery);
    }
    deliveries.sort();
    deliveries.dedup();
    assert_eq!(deliveries.len() as u64, total, "each call once");
}

/// Everything the server writes on `conn` until it closes it (bounded in time).
async fn read_to_close(mut conn: tokio::net::TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), conn.read_to_end(&mut got)).await;
    // A reset is a close too: the server wrote nothing before it.
    assert!(read.is_ok(), "the connection was not closed in time");
    got
}

/// A body declared far over the limit, of which a little arrives before the client goes: the
/// finding says what was declared and what arrived, and that the 413 never reached it.
#[tokio::test]
async fn a_body_declared_over_the_limit_and_cut_short_says_so() {
    let rig = Rig::start_with(Answer::status(200), |c| c.body_limit = 1024).await;
    let mut s = tokio::net::TcpStream::connect(rig.running.addr)
        .await
        .unwrap();
    s.write_all(b"POST /huge HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 999999999999\r\n\r\n[]")
        .await
        .unwrap();
    s.shutdown().await.unwrap();
    let conn = s;
    let s = stored_soon(&rig, "the cut call to be stored").await;
    // No 413 is written after the client stopped sending: it never got one, as the record says.
    assert_eq!(read_to_close(conn).await, b"");
    let large = s.inv.findings.iter().find(|f| f.code == "body-too-large");
    let large = large.expect("a body-too-large finding").message.clone();
    assert!(
        large.starts_with("The body was declared as 931.3 GiB (999999999999 bytes), over the limit of 1.0 KiB (1024 bytes), and 2 bytes of it arrived: it was not kept"),
        "{large}"
    );
    assert!(large.contains("before the 413 could reach it"), "{large}");
    assert_eq!(s.inv.outcome(), Outcome::RetryTemporary);
}

/// Without a Content-Length (chunked), the limit is found while reading: 413, recorded with
/// the size received.
#[tokio::test]
async fn a_chunked_body_over_the_limit_is_answered_413_and_recorded() {
    let rig = Rig::start_with(Answer::status(200), |c| c.body_limit = 1024).await;
    let mut request = b"POST /chunked HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
    for _ in 0..4 {
        request.extend_from_slice(b"400\r\n");
        request.extend_from_slice(&[b'x'; 1024]);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    let status = raw_call(rig.running.addr, &request).await;
    assert!(status.starts_with("HTTP/1.1 413"), "{status}");
    let s = last(&rig).await;
    assert_eq!(s.inv.declared_size, None);
    assert!(!s.inv.body_kept);
    assert!(s.inv.body.is_empty());
    assert_eq!(s.inv.body_size, 4096);
    assert!(finding_codes(&rig, s.id).contains(&"body-too-large".to_owned()));
}

fn store_is_empty(store: &hookscope::store::Store) -> bool {
    store.last_id().unwrap().is_none()
}

/// A connection that sends half a request's head, or nothing, is closed once the head has not
/// come within the head timeout (it had stayed open as long as its client liked, holding a file
/// descriptor); what arrived of a head is recorded, with why it was not read.
#[tokio::test]
async fn a_head_that_never_comes_whole_is_closed_and_recorded() {
    let rig = Rig::start_with(Answer::status(200), |c| {
        c.head_timeout = Duration::from_millis(300)
    })
    .await;
    let mut half = tokio::net::TcpStream::connect(rig.running.addr)
        .await
        .unwrap();
    half.write_all(b"POST /half HTTP/1.1\r\nHost: x\r\nX-Servi")
        .await
        .unwrap();
    let mut nothing = tokio::net::TcpStream::connect(rig.running.addr)
        .await
        .unwrap();
    for (what, s) in [("half a head", &mut half), ("nothing", &mut nothing)] {
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut answer))
            .await
            .unwrap_or_else(|_| panic!("the connection that sent {what} is closed in time"));
        assert!(
            read.is_ok() && answer.is_empty(),
            "{what}: {read:?} {answer:?}"
        );
    }
    let s = stored_soon(&rig, "the half head to be stored").await;
    assert_eq!(
        (s.inv.method.as_str(), s.inv.path.as_str()),
        ("POST", "/half")
    );
    assert_eq!(s.inv.body, b"POST /half HTTP/1.1\r\nHost: x\r\nX-Servi");
    let codes: Vec<&str> = s.inv.findings.iter().map(|f| f.code.as_str()).collect();
    // Not "the caller hung up": the receiver closed it, and answered nothing.
    assert_eq!(
        codes,
        ["not-http", "head-timed-out"],
        "{:?}",
        s.inv.findings
    );
    assert_eq!(
        s.inv.unanswered(),
        Some("the receiver closed the connection, the request's head not whole in time")
    );
    assert_eq!(s.inv.meaning(), hookscope::store::NOT_HTTP_UNANSWERED);
    let row = rig.store.page(&Filter::default(), 0, 1).unwrap();
    assert!(row[0].unanswered && row[0].not_http, "{:?}", row[0]);
    assert!(
        s.inv.findings[0]
            .message
            .contains("its head did not arrive whole within 300 ms"),
        "{}",
        s.inv.findings[0].message
    );
    // The connection that sent nothing leaves no record.
    assert_eq!(rig.store.count(&Filter::default()).unwrap(), 1);
}
