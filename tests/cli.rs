//! The `hookscope` binary as a user runs it: `listen`, `log`, `show`, `schedule`, and durability
//! when the listening process is killed.

mod common;

use common::*;
use hookscope::responder::Answer;
use hookscope::store::{Filter, Store};
use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hookscope"))
}

/// A child process that is killed (SIGKILL) and reaped when dropped, even if a test panics.
struct Killed(Child);

impl Killed {
    fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Start `hookscope listen` and wait (with a deadline) for the address it prints.
fn spawn_listen(dir: &std::path::Path, extra: &[&str]) -> (Killed, String, mpsc::Receiver<String>) {
    let child = bin()
        .args(["listen", "--port", "0", "--data-dir"])
        .arg(dir)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hookscope starts");
    let mut child = Killed(child);
    let stderr = child.0.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .expect("listen prints its address in time");
        if let Some(url) = line.strip_prefix("Hookscope is listening on ") {
            return (child, url.trim_end_matches('/').to_owned(), rx);
        }
    }
}

#[test]
fn listen_on_a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["listen", "--port", &port, "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("port {port}")), "{err}");
    assert!(err.contains("--port"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn listen_refuses_an_answer_http_cannot_send() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["listen", "--port", "0", "--respond", "99", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("200-599"));
}

#[tokio::test]
async fn listen_answers_as_told_and_log_and_show_read_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, _lines) = spawn_listen(
        dir.path(),
        &["--respond", "503", "--retry-after", "120", "--body", "busy"],
    );
    let client = http();
    let resp = post(
        &client,
        &format!("{url}/hook"),
        &invoker_headers("status-report", "cli-1", 1),
        status_report_body("77"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 503);
    assert_eq!(resp.headers()["retry-after"], "120");
    assert_eq!(resp.text().await.unwrap(), "busy");
    // The registration check still gets 200.
    let resp = client
        .post(format!("{url}/hook"))
        .header("Content-Type", "application/json")
        .header("User-Agent", "Service Invoker")
        .body("[]")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    child.kill();

    let out = bin()
        .args(["log", "--json", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    let (check, call) = (&lines[0], &lines[1]);
    for key in [
        "id",
        "received_at",
        "method",
        "path",
        "event",
        "delivery",
        "attempt",
        "webhook_id",
        "answer_status",
        "body_size",
        "findings",
    ] {
        assert!(call.get(key).is_some(), "log --json has {key}");
    }
    assert_eq!(call["delivery"], "cli-1");
    assert_eq!(call["attempt"], 1);
    assert_eq!(call["answer_status"], 503);
    assert_eq!(call["event"], "status-report");
    assert_eq!(check["answer_status"], 200);
    assert_eq!(check["registration_check"], true);

    let out = bin()
        .args(["log", "--limit", "1", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);

    let id = call["id"].as_i64().unwrap().to_string();
    let out = bin()
        .args(["show", &id, "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("x-service-delivery: cli-1"), "{text}");
    assert!(text.contains("\"status\": {"), "pretty body: {text}");
    assert!(
        text.contains("none: the call keeps to the contract"),
        "{text}"
    );
    assert!(text.contains("503"), "{text}");
    assert!(text.contains("Retry-After: 120"), "{text}");

    let out = bin()
        .args(["show", "9999", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no invocation with id 9999"));
}

#[tokio::test]
async fn log_escapes_a_hostile_path() {
    let rig = Rig::start(Answer::status(200)).await;
    rig.client
        .post(rig.url("/%1b%5b2J"))
        .body("[]")
        .send()
        .await
        .unwrap();
    // HTTP forbids ESC in a header, but allows the bytes of U+009B, the one-byte CSI.
    let mut h = invoker_headers("status-report", "x", 1);
    h.retain(|(n, _)| n != "X-Service-Delivery");
    post(&rig.client, &rig.url("/x"), &h, status_report_body("1"))
        .header(
            "X-Service-Delivery",
            reqwest::header::HeaderValue::from_bytes(b"evil\xc2\x9bid").unwrap(),
        )
        .send()
        .await
        .unwrap();
    let out = bin()
        .args(["log", "--data-dir"])
        .arg(rig.dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains('\u{9b}'), "{text:?}");
    assert!(text.contains("evil\\u{9b}id"), "{text}");
    assert!(text.contains("/%1b%5b2J"), "{text}");
}

#[test]
fn schedule_prints_the_projection() {
    let out = bin()
        .args(["schedule", "--code", "503", "--retry-after", "300"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("attempt   2  retry   1"), "{text}");
    assert!(text.contains("(+5 min after the failure before"), "{text}");
    assert!(text.contains("Rule assumed"), "{text}");
}

/// A child `hookscope listen` under load is killed with SIGKILL; after a restart on the same
/// data directory, every call that had been answered is in the store.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answered_call_survives_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, _lines) = spawn_listen(dir.path(), &[]);
    let answered: Arc<Mutex<HashSet<String>>> = Arc::default();
    let client = http();
    let mut tasks = Vec::new();
    for worker in 0..32 {
        let (client, url, answered) = (client.clone(), url.clone(), answered.clone());
        tasks.push(tokio::spawn(async move {
            // Bounded: each worker sends at most 2,000 calls, and stops at the first failure.
            for i in 0..2_000 {
                let delivery = format!("kill-{worker}-{i}");
                let resp = post(
                    &client,
                    &format!("{url}/load"),
                    &invoker_headers("status-report", &delivery, 1),
                    status_report_body("1"),
                )
                .send()
                .await;
                match resp {
                    Ok(r) if r.status() == 200 => {
                        answered.lock().unwrap().insert(delivery);
                    }
                    _ => return,
                }
            }
        }));
    }
    eventually(Duration::from_secs(60), "500 answered calls", || {
        (answered.lock().unwrap().len() >= 500).then_some(())
    })
    .await;
    child.kill(); // SIGKILL on Unix
    for t in tasks {
        let _ = t.await;
    }
    let answered = answered.lock().unwrap().clone();
    assert!(answered.len() >= 500);

    // Restart on the same data directory: it opens and serves.
    let (mut child, url, _lines) = spawn_listen(dir.path(), &[]);
    let resp = client
        .post(format!("{url}/after"))
        .body("[]")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    child.kill();

    let store = Store::open_read(dir.path()).unwrap();
    let total = store.count(&Filter::default()).unwrap();
    assert!(total > answered.len() as u64);
    let mut stored = HashSet::new();
    let mut before = None;
    loop {
        let page = store.page_before(&Filter::default(), before, 1000).unwrap();
        let Some(last) = page.last() else { break };
        before = Some(last.id);
        stored.extend(page.into_iter().filter_map(|s| s.delivery));
    }
    let missing: Vec<_> = answered.difference(&stored).take(5).collect();
    assert!(missing.is_empty(), "answered but not stored: {missing:?}");
}
