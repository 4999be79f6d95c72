//! Answer rules and deliveries end to end over real HTTP on 127.0.0.1.

mod common;

use common::*;
use hookscope::contract::Schedule;
use hookscope::deliveries::{DEFAULT_TOLERANCE, State, analyze};
use hookscope::responder::Answer;
use hookscope::rules::RuleSet;
use std::process::Command;

fn recipe(name: &str) -> RuleSet {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets/rules")
        .join(name);
    RuleSet::load(&path).expect("the shipped recipe loads")
}

#[tokio::test]
async fn fail_twice_then_succeed_over_http_reads_succeeded_on_attempt_3() {
    let rig = Rig::start(Answer::status(200)).await;
    rig.responder
        .set_rules(recipe("fail-twice-then-succeed.json"));
    let mut codes = Vec::new();
    for attempt in 1..=3 {
        let resp = post(
            &rig.client,
            &rig.url("/hook"),
            &invoker_headers("status-report", "dlv-rules", attempt),
            status_report_body("1"),
        )
        .send()
        .await
        .unwrap();
        codes.push(resp.status().as_u16());
    }
    assert_eq!(codes, vec![503, 503, 200]);
    let calls = rig.store.by_delivery("dlv-rules", Some("234")).unwrap();
    assert_eq!(calls.len(), 3);
    assert_eq!(
        calls[0].inv.rule.as_deref(),
        Some("rule 1: fail the first 2 attempts"),
        "each call remembers the rule that answered it"
    );
    assert_eq!(calls[2].inv.rule.as_deref(), Some("rule 2: then succeed"));
    // Real calls come seconds apart, not minutes: read against the real schedule they are
    // early retries, which the delivery reports; the state is still read from the answers.
    let d = analyze(&calls, &Schedule::default(), DEFAULT_TOLERANCE, &[]).unwrap();
    assert_eq!(d.state, State::Succeeded { attempt: Some(3) });
    assert_eq!(
        d.state.describe(chrono::Utc::now()),
        "succeeded on attempt 3"
    );
    assert!(d.findings.iter().all(|f| f.code == "retry-too-early"));
    assert_eq!(d.findings.len(), 2);
    // Against a schedule shortened far enough, the same calls keep to it.
    let fast = hookscope::deliveries::scaled_schedule(1e9);
    let d = analyze(&calls, &fast, DEFAULT_TOLERANCE, &[]).unwrap();
    assert!(d.findings.is_empty(), "{:?}", d.findings);
}

#[tokio::test]
async fn anomalies_are_findings_on_the_delivery() {
    let rig = Rig::start(Answer::status(503)).await;
    for attempt in [1, 3] {
        post(
            &rig.client,
            &rig.url("/hook"),
            &invoker_headers("status-report", "dlv-odd", attempt),
            status_report_body("1"),
        )
        .send()
        .await
        .unwrap();
    }
    let calls = rig.store.by_delivery("dlv-odd", None).unwrap();
    let d = analyze(&calls, &Schedule::default(), DEFAULT_TOLERANCE, &[]).unwrap();
    let codes: Vec<&str> = d.findings.iter().map(|f| f.code.as_str()).collect();
    assert!(codes.contains(&"attempt-skipped"), "{codes:?}");
    assert!(codes.contains(&"retry-too-early"), "{codes:?}");
    assert!(matches!(d.state, State::Retrying { next_number: 4, .. }));
}

/// `listen --rules` with `name` holding `text`: what it printed on stderr, once it refused.
/// A "fail once" rule is used up by the call it answers, not by one over the body limit (413
/// whatever is chosen) or one whose client stopped sending its body (no answer reaches it).
#[tokio::test]
async fn a_rule_is_not_used_up_by_calls_it_did_not_answer() {
    let rig = Rig::start_with(Answer::status(200), |c| c.body_limit = 1024).await;
    let once = r#"{"rules": [{"name": "fail once", "answer": {"status": 503}, "times": 1}]}"#;
    rig.responder
        .set_rules(RuleSet::parse("once.json", once).unwrap());
    let send = |body: Vec<u8>, delivery: &'static str| {
        post(
            &rig.client,
            &rig.url("/hook"),
            &invoker_headers("status-report", delivery, 1),
            body,
        )
        .send()
    };
    let big = send(vec![b'a'; 2000], "big").await.unwrap();
    assert_eq!(big.status().as_u16(), 413);
    // A body declared as 1000 bytes, 8 sent, then the connection closed.
    {
        use tokio::io::AsyncWriteExt;
        let mut s = tokio::net::TcpStream::connect(rig.running.addr)
            .await
            .unwrap();
        s.write_all(
            b"POST /hook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{\"id\":1",
        )
        .await
        .unwrap();
        s.shutdown().await.unwrap();
        drop(s);
    }
    // Wait for the cut call to be recorded before the next one, so the order is known.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while rig.store.count(&Default::default()).unwrap() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the cut call was not recorded"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let codes = [
        send(status_report_body("1"), "a")
            .await
            .unwrap()
            .status()
            .as_u16(),
        send(status_report_body("2"), "b")
            .await
            .unwrap()
            .status()
            .as_u16(),
    ];
    assert_eq!(
        codes,
        [503, 200],
        "the rule answered the first whole call, then retired"
    );
    assert_eq!(rig.responder.rules().used(0), 1);
}

fn listen_refuses(dir: &std::path::Path, name: &str, text: &str) -> String {
    let bad = dir.join(name);
    std::fs::write(&bad, text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_hookscope"))
        .args(["listen", "--port", "0", "--rules"])
        .arg(&bad)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "a flag value that cannot be used"
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn listen_rejects_a_bad_rule_file_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let err = listen_refuses(
        dir.path(),
        "bad.json",
        "{\"rules\": [\n  {\"name\": \"x\", \"answer\": {\"status\": \"503\"}}\n]}",
    );
    assert!(err.contains("line 2"), "{err}");
    assert!(err.contains("bad.json"), "{err}");

    // A TOML rule file is read as TOML, its errors with their line too.
    let err = listen_refuses(
        dir.path(),
        "bad.toml",
        "[[rules]]\nname = \"x\"\nanswer = { status = \"503\" }\n",
    );
    assert!(err.contains("bad.toml: line 3"), "{err}");
    assert!(err.contains("expected a whole number"), "{err}");
}
