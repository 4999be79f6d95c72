//! The `hookscope` binary as a user runs it: `listen`, `log`, `show`, `schedule`, and durability
//! when the listening process is killed.

mod common;

use common::*;
use hookscope::responder::Answer;
use hookscope::store::{Durability, Filter, Store};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hookscope"))
}

/// `hookscope ARGS --data-dir DIR`, run to its end.
fn run_in(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    bin()
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .unwrap()
}

/// A child process that is killed (SIGKILL) and reaped when dropped, even if a test panics.
struct Killed {
    child: Child,
    /// What it prints on stderr after its address (read on a thread, so it never blocks).
    stderr: mpsc::Receiver<String>,
}

impl Killed {
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Killed {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Read a child's pipe line by line on a thread of its own.
fn lines_of(pipe: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Start `hookscope listen` and wait (with a deadline) for the address it prints; also returns
/// the lines it prints on stdout (one per call).
/// Keep the receiver of its lines while it should run: `listen` stops once the reader of its
/// standard output has gone, as `listen | head -1` needs.
fn spawn_listen(dir: &std::path::Path, extra: &[&str]) -> (Killed, String, mpsc::Receiver<String>) {
    spawn_listen_with(bin(), dir, extra)
}

/// [`spawn_listen`] with options before the subcommand.
fn spawn_listen_with(
    cmd: Command,
    dir: &std::path::Path,
    extra: &[&str],
) -> (Killed, String, mpsc::Receiver<String>) {
    spawn_listen_fed(cmd, dir, extra, None)
}

/// [`spawn_listen_with`], with `stdin` written to its standard input (then closed).
fn spawn_listen_fed(
    mut cmd: Command,
    dir: &std::path::Path,
    extra: &[&str],
    stdin: Option<&[u8]>,
) -> (Killed, String, mpsc::Receiver<String>) {
    if stdin.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let child = cmd
        .args(["listen", "--port", "0", "--data-dir"])
        .arg(dir)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hookscope starts");
    let mut child = child;
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(bytes).expect("stdin takes the bytes");
    }
    let stdout = lines_of(child.stdout.take().expect("stdout"));
    let stderr = lines_of(child.stderr.take().expect("stderr"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let (tx, before) = mpsc::channel();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = stderr
            .recv_timeout(left)
            .expect("listen prints its address in time");
        if let Some(url) = line.strip_prefix("Hookscope is listening on ") {
            let url = url.trim_end_matches('/').to_owned();
            // What it said before its address, then what it says after.
            std::thread::spawn(move || {
                for line in stderr {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            let stderr = before;
            return (Killed { child, stderr }, url, stdout);
        }
        let _ = tx.send(line);
    }
}

/// The next line `listen` prints, within a deadline.
/// A POST of `body` with `headers` to `url`'s /hook, which must be answered `status`, and the
/// line `listen` printed for it.
async fn call_and_line(
    url: &str,
    headers: &[(String, String)],
    body: Vec<u8>,
    status: u16,
    lines: &mpsc::Receiver<String>,
) -> String {
    let resp = post(&http(), &format!("{url}/hook"), headers, body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), status);
    next_line(lines)
}

fn next_line(lines: &mpsc::Receiver<String>) -> String {
    lines
        .recv_timeout(Duration::from_secs(30))
        .expect("listen prints a line for the call in time")
}

#[test]
fn listen_on_a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("new");
    let out = bin()
        .args(["listen", "--port", &port, "--data-dir"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("port {port}")), "{err}");
    assert!(err.contains("--port"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // Nothing is left behind by a start that failed: `log` still says nothing was stored there.
    assert!(!data.exists(), "a failed start created {}", data.display());
}

/// An address that is not this machine's is named as such, not as an OS error number; nothing
/// is sent anywhere (binding fails on this machine).
#[test]
fn an_address_not_on_this_machine_is_named() {
    let dir = tempfile::tempdir().unwrap();
    // TEST-NET-1 (RFC 5737): documentation only, never a machine's own address.
    for args in [&["listen", "--data-dir"][..], &["emulate"]] {
        let mut cmd = bin();
        cmd.args(args);
        if args[0] == "listen" {
            cmd.arg(dir.path().join("d"));
        }
        let out = cmd
            .args(["--bind", "192.0.2.1", "--port", "0"])
            .output()
            .unwrap();
        // A flag value that cannot be used: status 2, as for any other.
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("192.0.2.1 is not an address of this machine")
                && err.contains("--bind")
                && !err.contains("os error"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn listen_refuses_an_answer_http_cannot_send() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &[&str])] = &[
        (&["--respond", "99"], &["200-599", "--respond"]),
        (
            &["--respond", "205", "--body", "x"],
            &["a 205 answer carries no body"],
        ),
        (
            &["--respond", "304", "--body", "x"],
            &["a 304 answer carries no body"],
        ),
        (&["--content-type", ""], &["the content type is empty"]),
        // Quoted with its escapes: the CR and LF never reach the terminal raw.
        (
            &["--content-type", "text/html\r\nX-Evil: 1"],
            &[r#""text/html\r\nX-Evil: 1" cannot be sent"#],
        ),
        (&["--delay", "2h"], &["longer than an hour"]),
    ];
    for (flags, says) in cases {
        let out = bin()
            .args(["listen", "--port", "0"])
            .args(*flags)
            .arg("--data-dir")
            .arg(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        // A usage error, like every other value the command line refuses.
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        for said in *says {
            assert!(err.contains(said), "{flags:?}: {err}");
        }
        assert!(!err.contains('\r'), "{flags:?}: {err:?}");
    }
}

/// Values no command can use are refused before anything starts, each with a sentence that
/// names the flag and says what it takes (negative numbers included).
#[test]
fn bad_flag_values_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["listen", "--port", "-5"], "--port"),
        (&["listen", "--delay", "-1s"], "is not a duration"),
        // Finer than the millisecond an answer is held to: refused, not answered at once.
        (
            &["listen", "--delay", "0.4ms"],
            "\"0.4ms\" is finer than a delay can be: an answer is held to the millisecond (give 0ms, or leave --delay out)",
        ),
        (&["listen", "--delay", "0.0016"], "(give 2ms)"),
        (&["listen", "--brand", "a b"], "cannot be a header word"),
        (&["listen", "--body-limit", "0"], "at least 1KiB"),
        (&["emulate", "--speed", "0"], "is not a clock speed"),
        (
            &["emulate", "--speed", "1e-300"],
            "from 1 (real time) to 1000000",
        ),
        // A slow clock waits past the service's 30 s, which Hookscope would call too late.
        (&["emulate", "--speed", "0.5"], "is slower than real time"),
        (&["show", "abc"], "is not an invocation id"),
        (&["show", "0"], "is not an invocation id"),
        (&["show", "-1"], "is not an invocation id"),
        (&["webhooks", "get", "abc"], "is not a webhook id"),
        (
            &["webhooks", "update", "5"],
            "nothing to change in webhook 5",
        ),
        (&["emulate", "--user", ""], "--user cannot be empty"),
        (
            &["webhooks", "list", "--user", ""],
            "--user cannot be empty",
        ),
        (&["emulate", "--user", "a:b"], "cannot contain a colon"),
        (
            &["emulate", "--read-only-user", " "],
            "--read-only-user cannot be empty",
        ),
        (
            &[
                "webhooks",
                "create",
                "--name",
                "n",
                "--url",
                "http://127.0.0.1:1/h",
                "--scope",
                "sent",
            ],
            "in capitals",
        ),
        (
            &["webhooks", "list", "--api-url", "ftp://127.0.0.1/v1"],
            "is not a whole http(s) address",
        ),
        (
            &[
                "webhooks",
                "list",
                "--api-url",
                "http://me:pw@127.0.0.1:1/v1",
            ],
            "carries a user name or password",
        ),
        (
            &["emulate", "--read-only-user", "demo"],
            "cannot be the account itself",
        ),
        // Options that start an emulator, beside the action that talks to a running one.
        (
            &["emulate", "--port", "33907", "inject", "--body", "hi"],
            "cannot be used with '--port",
        ),
        (&["webhooks", "delete", "-1"], "is not a webhook id"),
        (
            &["emulate", "--credits", "-5"],
            "is not a number of credits",
        ),
        (&["log", "--limit", "0"], "--limit"),
        // Past an hour: named with its flag, as every refused value is.
        (
            &["listen", "--delay", "99999999999999m"],
            "for '--delay <DURATION>': the delay of ",
        ),
        (
            &["listen", "--delay", "1h0m1s"],
            "for '--delay <DURATION>': the delay of 1 h 1 s is longer than an hour",
        ),
        (&["schedule", "--code", "999"], "--code"),
        (
            &["listen", "--retry-after", "+120"],
            "is not a Retry-After value",
        ),
        (&["listen", "--retry-after", "soon"], "or an HTTP date"),
        (
            &["listen", "--rules", "/nonexistent/rules.json"],
            "there is no rule file /nonexistent/rules.json (check the path; Hookscope's own recipes, given by name, are fail-twice-then-succeed,",
        ),
        (
            &["listen", "--rules", "Time-Out-Once"],
            "there is no rule file Time-Out-Once; did you mean Hookscope's own recipe time-out-once? (give --rules time-out-once)",
        ),
        (
            &["listen", "--rules", "/"],
            "/: it is a directory, not a file",
        ),
        // The demo's store is its own: a data directory beside it would be silently unused.
        (
            &["--demo", "--data-dir", "/tmp/hookscope-nowhere"],
            "does not go with --data-dir",
        ),
        (
            &["listen", "--retry-after", "Mon, 22 Nov 2026 14:00:00 GMT"],
            "22 Nov 2026 is a Sunday, not \"Mon\"",
        ),
        (
            &["schedule", "--retry-after", "-1"],
            "is not a Retry-After value",
        ),
    ];
    for (args, says) in cases {
        let mut cmd = bin();
        cmd.args(*args);
        if matches!(args[0], "listen" | "log") {
            cmd.arg("--data-dir").arg(dir.path());
        }
        let out = cmd.output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!err.contains("unexpected argument"), "{args:?}: {err}");
    }
    // A data directory named with spaces alone is refused, not made (`./ `), whatever the
    // command: its name could not be seen in the messages that followed.
    for args in [&["log"][..], &["show", "1"]] {
        let out = bin()
            .args(args)
            .args(["--data-dir", "  "])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("'--data-dir <DIR>'"), "{args:?}: {err}");
        assert!(
            err.contains("a directory name of spaces alone is not taken"),
            "{args:?}: {err}"
        );
    }
    // Nothing was created for the refused commands.
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

/// clap's own refusals quote the value given: control characters and escape sequences in it
/// are shown escaped, as typed, never sent to the terminal raw (a bell, a carriage return that
/// hides the start of the line, a sequence that clears the screen) nor silently dropped (the
/// error would quote a value the user never typed).
#[test]
fn a_refused_value_cannot_drive_the_terminal() {
    let cases: &[(&[&str], &str)] = &[
        (&["listen", "--port", "80\u{1b}[0m80"], "'80\\u{1b}[0m80'"),
        (&["listen", "--port", "9\r\u{7}X"], "'9\\u{d}\\u{7}X'"),
        (
            &["listen", "--port", "9\nok: listening"],
            "'9\\u{a}ok: listening'",
        ),
        (&["lo\u{1b}[2Jg"], "unrecognized subcommand 'lo\\u{1b}[2Jg'"),
        (
            &["log", "--limit", "\u{1b}]0;title\u{7}"],
            "'\\u{1b}]0;title\\u{7}'",
        ),
        (
            &["webhooks", "update", "5", "--invoke", "MANY\u{1b}[m"],
            "'MANY\\u{1b}[m'",
        ),
        // Refused by Hookscope itself, before any command runs.
        (
            &[
                "--data-dir",
                "/tmp/a\u{1b}[2J",
                "log",
                "--data-dir",
                "/tmp/b",
            ],
            "/tmp/a\\u{1b}[2J",
        ),
    ];
    for (args, says) in cases {
        let out = bin().args(*args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.starts_with("error: "), "{args:?}: {err}");
        let raw: Vec<char> = err
            .chars()
            .filter(|c| c.is_control() && *c != '\n')
            .collect();
        assert!(raw.is_empty(), "{args:?} sent {raw:?} raw: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // Help is not an error: it goes to stdout with status 0, as before.
    let out = bin().arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("listen"));
}

/// `listen`'s banner names the data directory escaped, as every other message does.
#[test]
fn listen_names_a_hostile_data_directory_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("esc\u{1b}[31mdir");
    let (child, _url, _stdout) = spawn_listen(&data, &[]);
    let deadline = Instant::now() + Duration::from_secs(30);
    let stored = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = child.stderr.recv_timeout(left).expect("the banner in time");
        if line.starts_with("Calls are stored in ") {
            break line;
        }
    };
    assert!(stored.contains("esc\\u{1b}[31mdir"), "{stored}");
    assert!(!stored.contains('\u{1b}'), "{stored:?}");
}

#[tokio::test]
async fn listen_answers_as_told_and_log_and_show_read_it_back() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, lines) = spawn_listen(
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
    let line = next_line(&lines);
    for part in [
        "POST",
        "/hook",
        "status-report",
        "delivery=cli-1",
        "attempt=1",
        "messages=1",
        "-> 503 retry-unavailable",
        "findings=0",
    ] {
        assert!(line.contains(part), "{part:?} in {line:?}");
    }
    // The registration check still gets 200.
    let status = registration_check(&client, &format!("{url}/hook")).await;
    assert_eq!(status, 200);
    let line = next_line(&lines);
    assert!(line.contains("registration-check"), "{line}");
    assert!(line.contains("-> 200 succeeded"), "{line}");
    // Its own note that it is the registration check is not counted as a problem.
    assert!(line.contains("findings=0"), "{line}");
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

    // --json: bodies as text, headers as name/value objects, the answer in full.
    let out = bin()
        .args(["show", &id, "--json", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let sent = String::from_utf8(status_report_body("77")).unwrap();
    assert_eq!(v["body"], sent.as_str());
    assert!(v["body_hex"].is_null());
    assert_eq!(v["delivery"], "cli-1");
    assert!(
        v["headers"].as_array().is_some_and(|h| h
            .iter()
            .any(|h| h["name"] == "x-service-delivery" && h["value"] == "cli-1")),
        "{v}"
    );
    assert_eq!(v["answer"]["status"], 503);
    assert_eq!(v["answer"]["body"], "busy");
    assert!(
        v["answer"]["headers"].as_array().is_some_and(|h| h
            .iter()
            .any(|h| h["name"] == "Retry-After" && h["value"] == "120")),
        "{v}"
    );

    let out = bin()
        .args(["show", "9999", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no invocation with id 9999"));
}

/// `--rules assets/rules/fail-twice-then-succeed.json`, as the README writes it, works where
/// there is no such file (an installed binary, another directory): the recipe built into
/// Hookscope is used, and `listen` says so. It had failed with "no such file".
#[tokio::test]
async fn a_recipe_named_as_in_the_readme_works_from_any_directory() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = bin();
    cmd.current_dir(dir.path());
    let rules = "assets/rules/fail-twice-then-succeed.json";
    let (mut child, url, lines) = spawn_listen_with(cmd, dir.path(), &["--rules", rules]);
    let said: Vec<String> = child.stderr.try_iter().collect();
    assert!(
        said.iter().any(|l| l
            == "There is no file \"assets/rules/fail-twice-then-succeed.json\": using Hookscope's own recipe fail-twice-then-succeed.json."),
        "{said:?}"
    );
    for (attempt, want) in [(1, 503), (2, 503), (3, 200)] {
        let headers = invoker_headers("status-report", "recipe", attempt);
        call_and_line(&url, &headers, status_report_body("5"), want, &lines).await;
    }
    child.kill();
}

/// `show` reads the call's delivery across its attempts, as the window's Timeline does: its
/// state in words, its attempts with the call shown marked, and what they break of the contract.
#[tokio::test]
async fn show_reads_the_calls_delivery_across_its_attempts() {
    let dir = tempfile::tempdir().unwrap();
    let rules = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/rules/fail-twice-then-succeed.json"
    );
    let (mut child, url, lines) = spawn_listen(dir.path(), &["--rules", rules]);
    for (attempt, want) in [(1, 503), (2, 503), (3, 200)] {
        let headers = invoker_headers("status-report", "cli-d", attempt);
        call_and_line(&url, &headers, status_report_body("78"), want, &lines).await;
    }
    child.kill();
    let show = |json: bool| {
        let mut cmd = bin();
        cmd.args(["show", "3", "--data-dir"]).arg(dir.path());
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = show(false);
    assert!(
        text.contains("\nDelivery cli-d (webhook 234)\n  succeeded on attempt 3\n"),
        "{text}"
    );
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("Attempt"))
        .take(4)
        .collect();
    assert_eq!(rows.len(), 4, "{text}");
    assert!(
        rows[1].starts_with("  1 ")
            && rows[1].contains("503")
            && rows[1].ends_with("retry-unavailable"),
        "{rows:?}"
    );
    assert!(
        rows[3].starts_with("* 3 ") && rows[3].ends_with("succeeded"),
        "{rows:?}"
    );
    // Three calls in a few milliseconds: the retries came sooner than the schedule allows.
    assert!(
        text.contains("the schedule allows it no sooner than 1 min 30 s.  (retry-too-early)"),
        "{text}"
    );
    // The call's own checks point to it.
    assert!(
        text.contains("the checks across its delivery's attempts are under Delivery below"),
        "{text}"
    );

    let v: serde_json::Value = serde_json::from_str(&show(true)).expect("one JSON object");
    assert_eq!(v["delivery"], "cli-d");
    // The rule that answered, as the note says it and by its name alone (for jq).
    assert_eq!(v["rule"], "rule 2: then succeed");
    assert_eq!(v["rule_name"], "then succeed");
    assert_eq!(v["timeline"]["state"], "succeeded on attempt 3");
    // Its stable word, for scripts: the sentence has times in it.
    assert_eq!(v["timeline"]["state_code"], "succeeded");
    let attempts = v["timeline"]["attempts"].as_array().unwrap();
    assert_eq!(
        attempts
            .iter()
            .map(|a| a["answer_status"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [503, 503, 200]
    );
    // Times as everywhere else in the JSON: UTC with a Z.
    assert!(
        attempts
            .iter()
            .all(|a| a["received_at"].as_str().is_some_and(|t| t.ends_with('Z'))),
        "{attempts:?}"
    );
    assert!(
        v["timeline"]["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["code"] == "retry-too-early")
    );
    assert!(v["timeline"]["next_attempt_at"].is_null());

    // The registration check belongs to no delivery: no such section.
    let check = registration_check_and_show(dir.path()).await;
    assert!(!check.contains("\nDelivery"), "{check}");
}

/// A call that comes after the delivery's 2-day retry window is flagged by `show`: here a
/// service's emulator at 600x whose attempt 196 is stamped 2 days and an hour after attempt 1.
#[tokio::test]
async fn show_flags_a_call_after_the_two_day_window() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, lines) = spawn_listen(dir.path(), &["--respond", "503"]);
    let start = chrono::Utc::now();
    for (attempt, on_clock) in [(1, 0), (196, 2 * 86_400 + 3_600)] {
        let mut headers = invoker_headers("status-report", "late-d", attempt);
        headers.push((
            hookscope::emulator::CLOCK_SPEED_HEADER.to_owned(),
            "600".to_owned(),
        ));
        headers.push((
            hookscope::emulator::CLOCK_TIME_HEADER.to_owned(),
            (start + chrono::TimeDelta::seconds(on_clock))
                .to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        ));
        call_and_line(&url, &headers, status_report_body("79"), 503, &lines).await;
    }
    child.kill();
    let out = bin()
        .args(["show", "2", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("Attempt 196 came 1 h after the 2-day retry window ended (2 days from the first failure, on the service's clock): the service should have discarded the message by then.  (call-after-window)"),
        "{text}"
    );
    assert!(
        text.contains("\nDelivery late-d (webhook 234)\n  discarded after the last retry\n"),
        "{text}"
    );
}

/// Record a registration check in `dir` and `show` it.
async fn registration_check_and_show(dir: &std::path::Path) -> String {
    let (mut child, url, lines) = spawn_listen(dir, &[]);
    assert_eq!(
        registration_check(&http(), &format!("{url}/hook")).await,
        200
    );
    next_line(&lines);
    child.kill();
    let out = bin()
        .args(["show", "4", "--data-dir"])
        .arg(dir)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A call whose delivery and event headers carry the bytes of U+009B, the one-byte CSI (HTTP
/// forbids ESC in a header, but allows these).
async fn hostile_call(client: &reqwest::Client, url: &str) -> reqwest::Response {
    let mut h = invoker_headers("status-report", "x", 1);
    h.retain(|(n, _)| n != "X-Service-Delivery" && n != "X-Service-Event");
    let value = |v: &[u8]| reqwest::header::HeaderValue::from_bytes(v).unwrap();
    post(client, url, &h, status_report_body("1"))
        .header("X-Service-Delivery", value(b"evil\xc2\x9bid"))
        .header("X-Service-Event", value(b"status\xc2\x9b2J"))
        .send()
        .await
        .unwrap()
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
    hostile_call(&rig.client, &rig.url("/x")).await;
    let out = bin()
        .args(["log", "--data-dir"])
        .arg(rig.dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains('\u{9b}'), "{text:?}");
    assert!(text.contains("evil\\u{9b}id"), "{text}");
    assert!(text.contains("/%1b%5b2J"), "{text}");
    // The JSON of `log` and `show` too: JSON itself leaves C1 controls raw.
    let newest = rig.store.last_id().unwrap().unwrap().to_string();
    for args in [&["log", "--json"][..], &["show", "--json", &newest]] {
        let out = run_in(rig.dir.path(), args);
        assert!(out.status.success(), "{args:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.contains('\u{9b}'), "{args:?}: {text:?}");
        assert!(text.contains("evil\\u009bid"), "{args:?}: {text}");
        // And it reads back as the stored value.
        let first: serde_json::Value = serde_json::Deserializer::from_str(&text)
            .into_iter()
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(first["delivery"], "evil\u{9b}id", "{args:?}");
    }
}

/// Requests HTTP refused are listed by `log` (`not-http` where the outcome goes, `-` for a
/// method, path and event they do not have) and shown by `show` with their bytes, escaped: an ESC in a
/// refused header never reaches the terminal.
#[tokio::test]
async fn log_and_show_read_back_requests_http_refused() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rig = Rig::start(Answer::status(200)).await;
    for bytes in [
        &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"[..],
        b"POST /esc HTTP/1.1\r\nHost: x\r\nX-Bad\x1b[2J: 1\r\n\r\n",
    ] {
        let mut s = tokio::net::TcpStream::connect(rig.running.addr)
            .await
            .unwrap();
        s.write_all(bytes).await.unwrap();
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).await.unwrap();
        assert!(answer.starts_with(b"HTTP/1.1 400"));
        eventually(
            Duration::from_secs(20),
            "the refused request is stored",
            || {
                let id = rig.store.last_id().unwrap()?;
                rig.store.get(id).unwrap().filter(|s| s.inv.body == bytes)
            },
        )
        .await;
    }
    let run = |args: &[&str]| {
        let out = run_in(rig.dir.path(), args);
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let log = run(&["log"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{log}");
    assert!(lines[0].contains("POST    /esc  -  delivery=-"), "{log}");
    assert!(lines[1].contains("-       -  -  delivery=-"), "{log}");
    // The HTTP layer's 400, not one the States table reads as "failed permanently".
    assert!(
        lines
            .iter()
            .all(|l| l.contains("-> 400 not-http  findings=1")),
        "{log}"
    );
    let json = run(&["log", "--json"]);
    let objects: Vec<serde_json::Value> = json
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    for v in &objects {
        assert_eq!(v["not_http"], true, "{v}");
    }
    // Newest first: the refused header kept its request line, the TLS handshake had none, and
    // its method and path are null as its query is, not empty strings.
    assert_eq!(objects[0]["method"], "POST", "{json}");
    assert_eq!(objects[0]["path"], "/esc", "{json}");
    for field in ["method", "path", "query"] {
        assert_eq!(
            objects[1].get(field),
            Some(&serde_json::Value::Null),
            "{field}: {json}"
        );
    }
    let tls = run(&["show", "1"]);
    assert!(tls.contains("\nnot HTTP\n"), "{tls}");
    assert!(
        tls.contains("none read: the HTTP layer refused the request"),
        "{tls}"
    );
    assert!(tls.contains("00000000  16 03 01 02"), "{tls}");
    assert!(
        tls.contains("400 sent after under 1 ms: answered by the HTTP layer itself, not chosen"),
        "{tls}"
    );
    assert!(!tls.contains("discarded"), "{tls}");
    assert!(tls.contains("it is a TLS handshake"), "{tls}");
    let esc = run(&["show", "2"]);
    assert!(esc.contains("\nPOST /esc\n"), "{esc}");
    assert!(!esc.contains('\u{1b}'), "{esc:?}");
    assert!(esc.contains("X-Bad\\u{1b}[2J: 1"), "{esc}");
}

/// What `listen` prints is safe for a terminal, and its flags reach the receiver: `--bind`, and
/// `--no-pass-registration-check` (the check then gets the chosen failure like any call).
#[tokio::test]
async fn listen_prints_escaped_lines_and_obeys_its_flags() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, lines) = spawn_listen(
        dir.path(),
        &[
            "--bind",
            "127.0.0.1",
            "--no-pass-registration-check",
            "--respond",
            "500",
        ],
    );
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let client = http();
    let resp = hostile_call(&client, &format!("{url}/x")).await;
    assert_eq!(resp.status(), 500);
    let line = next_line(&lines);
    assert!(!line.contains('\u{9b}'), "{line:?}");
    assert!(line.contains("delivery=evil\\u{9b}id"), "{line}");
    assert!(line.contains("status\\u{9b}2J"), "{line}");
    assert!(line.contains("-> 500 retry"), "{line}");

    let status = registration_check(&client, &format!("{url}/hook")).await;
    assert_eq!(status, 500, "the check is not passed");
    let line = next_line(&lines);
    assert!(line.contains("registration-check"), "{line}");
    // Not a retry: the service refuses a URL whose check is not answered 200.
    assert!(line.contains("-> 500 url-refused"), "{line}");
    child.kill();
}

/// `--body-file` answers with a file's text, longer than one argument may be (Linux takes
/// 128 KiB), or with standard input for `-`; a file that cannot be the body is refused before
/// anything starts, with the reason.
#[tokio::test]
async fn listen_answers_with_a_body_read_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let body: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
    assert!(body.len() > 128 << 10);
    let file = dir.path().join("answer.txt");
    std::fs::write(&file, &body).unwrap();
    let store = dir.path().join("store");
    let flags = [
        "--respond",
        "500",
        "--content-type",
        "text/plain",
        "--body-file",
    ];
    let post = async |url: &str| {
        let resp = http()
            .post(format!("{url}/hook"))
            .body("[]")
            .send()
            .await
            .unwrap();
        (resp.status(), resp.text().await.unwrap())
    };
    let (mut child, url, lines) =
        spawn_listen(&store, &[&flags[..], &[file.to_str().unwrap()]].concat());
    assert_eq!(
        post(&url).await,
        (reqwest::StatusCode::INTERNAL_SERVER_ERROR, body)
    );
    next_line(&lines);
    child.kill();

    // Standard input.
    let (mut child, url, _lines) =
        spawn_listen_fed(bin(), &store, &["--body-file", "-"], Some(b"from stdin"));
    assert_eq!(
        post(&url).await,
        (reqwest::StatusCode::OK, "from stdin".to_owned())
    );
    child.kill();

    // Files that cannot be the body: a usage error, said with the reason.
    let missing = dir.path().join("missing.txt");
    let binary = dir.path().join("binary.bin");
    std::fs::write(&binary, b"ok\xff\xfe").unwrap();
    let large = dir.path().join("large.txt");
    std::fs::write(&large, vec![b'a'; (32 << 20) + 1]).unwrap();
    let cases: Vec<(Vec<std::ffi::OsString>, &str)> = vec![
        (
            vec!["--body-file".into(), missing.clone().into()],
            "cannot read the answer body from --body-file",
        ),
        (
            vec!["--body-file".into(), dir.path().into()],
            "it is a directory, not a file",
        ),
        (
            vec!["--body-file".into(), binary.into()],
            "is not UTF-8 text (byte 3, counting from 1, is not)",
        ),
        (
            vec!["--body-file".into(), large.into()],
            "is longer than 32 MiB",
        ),
        (
            vec![
                "--body".into(),
                "x".into(),
                "--body-file".into(),
                missing.into(),
            ],
            "cannot be used with",
        ),
    ];
    for (flags, says) in cases {
        let out = bin()
            .args(["listen", "--port", "0", "--data-dir"])
            .arg(&store)
            .args(&flags)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(says), "{flags:?}: {err}");
    }
}

/// `hookscope` as the user `uid` (through `setpriv`, when the tests run as root: root writes
/// any file), else as this user; None when it cannot be run as another user.
fn hookscope_as(uid: u32) -> Option<Command> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some(bin());
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        eprintln!("skipped: running as root without setpriv to run as another user");
        return None;
    }
    let mut cmd = Command::new("setpriv");
    cmd.args([
        format!("--reuid={uid}"),
        format!("--regid={uid}"),
        "--clear-groups".to_owned(),
    ])
    .arg(env!("CARGO_BIN_EXE_hookscope"));
    Some(cmd)
}

/// Run `listen` on `store` with `cmd` and return its exit status and stderr, within a deadline
/// (a `listen` that starts would run until killed).
fn listen_refused(cmd: Command, store: &std::path::Path) -> (Option<i32>, String) {
    let mut cmd = cmd;
    let mut child = Killed {
        child: cmd
            .args(["listen", "--port", "0", "--data-dir"])
            .arg(store)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        stderr: mpsc::channel().1,
    };
    let stderr = lines_of(child.child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "listen started on {store:?}");
        std::thread::sleep(Duration::from_millis(10));
    };
    (status.code(), stderr.iter().collect::<Vec<_>>().join("\n"))
}

/// `log` on a store with no calls yet prints nothing on stdout, with `--json` or not, and says
/// why on stderr (with `--json` it had said nothing at all).
#[test]
fn log_of_an_empty_store_says_so_on_stderr_only() {
    let dir = tempfile::tempdir().unwrap();
    Store::open(dir.path(), Durability::Normal).unwrap().close();
    for args in [&["log"][..], &["log", "--json"][..]] {
        let out = run_in(dir.path(), args);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {said}");
        assert!(said.contains("No invocations stored"), "{args:?}: {said}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// A store this user may not write (another user's file): `listen` refuses it at start, named,
/// where it used to start and then answer every call 503 ("attempt to write a readonly
/// database"); `log` still reads it.
#[test]
fn listen_refuses_a_store_it_cannot_write_and_log_still_reads_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    Store::open(&store, Durability::Normal).unwrap().close();
    let file = store.join("hookscope.sqlite3");
    let set = |path: &std::path::Path, mode: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    set(dir.path(), 0o755);
    set(&store, 0o777);
    let nobody = 65534;
    let Some(_) = hookscope_as(nobody) else {
        return;
    };
    let as_nobody = || hookscope_as(nobody).unwrap();
    // SAFETY: geteuid has no preconditions.
    set(
        &file,
        if unsafe { libc::geteuid() } == 0 {
            0o644
        } else {
            0o444
        },
    );
    let (code, err) = listen_refused(as_nobody(), &store);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!(
            "cannot store calls in {}: the file cannot be written by this user",
            file.display()
        )),
        "{err}"
    );
    let out = as_nobody()
        .args(["log", "--data-dir"])
        .arg(&store)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{said}");
    // On stderr: `hookscope log | awk '{print $1}'` got the word "No".
    assert!(said.contains("No invocations stored"), "{said}");
    assert!(
        out.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Two users and one store (run as root only): the owner's `listen` after another user's
/// `log` (which leaves the log files beside the database, its own) is refused at start with
/// the file named; a directory the other user may not write, or not enter, is said so to
/// `log`, not with SQLite's words or as "no database".
#[test]
fn a_store_shared_between_users_says_which_part_is_in_the_way() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: needs root to act as two users");
        return;
    }
    let (owner, other) = (65533, 65534);
    let (Some(_), Some(_)) = (hookscope_as(owner), hookscope_as(other)) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let make = |name: &str, mode: u32, chown: bool| {
        let store = dir.path().join(name);
        Store::open(&store, Durability::Normal).unwrap().close();
        std::fs::set_permissions(&store, std::fs::Permissions::from_mode(mode)).unwrap();
        if chown {
            std::os::unix::fs::chown(store.join("hookscope.sqlite3"), Some(owner), Some(owner))
                .unwrap();
        }
        store
    };
    let log_as = |uid: u32, store: &std::path::Path| {
        let out = hookscope_as(uid)
            .unwrap()
            .args(["log", "--data-dir"])
            .arg(store)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // The other user reads the owner's store, in a directory both may write.
    let shared = make("shared", 0o777, true);
    assert_eq!(log_as(other, &shared).0, Some(0));
    let (code, err) = listen_refused(hookscope_as(owner).unwrap(), &shared);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("which another user's reading left behind (it may be removed while no Hookscope uses the store)"),
        "{err}"
    );
    // A directory the other user may read but not write (reading needs to write beside it),
    // and one it may not enter.
    for (name, mode, says) in [
        ("closed", 0o755, "its directory {} cannot be written"),
        (
            "private",
            0o700,
            "cannot open {}: this user may not enter it",
        ),
    ] {
        let store = make(name, mode, false);
        let (code, err) = log_as(other, &store);
        assert_eq!(code, Some(1), "{err}");
        let said = says.replace("{}", &store.display().to_string());
        assert!(err.contains(&said), "{err}");
    }
}

/// A call held back by `--delay` is said on stderr as it arrives (its stdout line comes when it
/// is answered), escaped like every line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_says_at_once_that_a_call_is_held_by_the_delay() {
    let dir = tempfile::tempdir().unwrap();
    let (child, url, lines) = spawn_listen(dir.path(), &["--delay", "1m"]);
    let client = http();
    let target = format!("{url}/x");
    let call = tokio::spawn(async move { hostile_call(&client, &target).await });
    let deadline = Instant::now() + Duration::from_secs(30);
    let held = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = child
            .stderr
            .recv_timeout(left)
            .expect("listen says the call is held in time");
        if line.contains("held:") {
            break line;
        }
    };
    assert!(!held.contains('\u{9b}'), "{held:?}");
    assert!(
        held.contains(
            "held: POST /x · status\\u{9b}2J, delivery evil\\u{9b}id, attempt 1: will be answered 200 after 1 min; the service stops waiting at 30 s; its line follows when it is answered"
        ),
        "{held}"
    );
    assert!(
        lines.try_recv().is_err(),
        "no stdout line before the answer"
    );
    // The caller hangs up: the call is stored and gets its line.
    call.abort();
    let line = next_line(&lines);
    assert!(line.contains("delivery=evil\\u{9b}id"), "{line}");
    // The two lines give the same arrival time.
    let time = |l: &str| l.split_whitespace().next().map(str::to_owned);
    assert_eq!(time(&held), time(&line));
}

/// `listen --json` prints each call as one JSON object per line.
#[tokio::test]
async fn listen_json_prints_one_object_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, lines) = spawn_listen(dir.path(), &["--json", "--respond", "429"]);
    let resp = post(
        &http(),
        &format!("{url}/hook?token=a%20b&x"),
        &invoker_headers("status-report", "json-1", 2),
        status_report_body("5"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 429);
    let line = next_line(&lines);
    let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
    // The query as `log --json` has it, as received.
    assert_eq!(v["query"], "token=a%20b&x", "{v}");
    assert_eq!(v["delivery"], "json-1");
    assert_eq!(v["attempt"], 2);
    assert_eq!(v["event"], "status-report");
    assert_eq!(v["answer_status"], 429);
    assert_eq!(v["outcome"], "retry-slow-down");
    assert_eq!(v["path"], "/hook");
    assert_eq!(v["findings"], 0);
    assert!(v["id"].as_i64().is_some_and(|id| id > 0), "{v}");
    // The same instant format as `log --json`.
    let at = v["received_at"].as_str().unwrap_or_default();
    assert!(
        at.ends_with('Z') && at.len() == "2026-11-21T10:00:00.000000Z".len(),
        "{at}"
    );
    // The registration check's own note is not counted, as on the line.
    assert_eq!(
        registration_check(&http(), &format!("{url}/hook")).await,
        200
    );
    let v: serde_json::Value = serde_json::from_str(&next_line(&lines)).expect("a JSON line");
    child.kill();
    assert_eq!(v["registration_check"], true);
    assert_eq!(v["findings"], 0, "{v}");
    assert_eq!(v.get("query"), Some(&serde_json::Value::Null), "{v}");
}

/// Raise this process's open-file limit towards `wanted` (past the hard limit only when
/// privileged); children inherit it. Returns the limit now in force.
#[cfg(unix)]
fn raise_open_files_limit(wanted: u64) -> u64 {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return 1024;
        }
        if lim.rlim_cur < wanted {
            let raised = libc::rlimit {
                rlim_cur: wanted,
                rlim_max: lim.rlim_max.max(wanted),
            };
            let capped = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) != 0 {
                libc::setrlimit(libc::RLIMIT_NOFILE, &capped);
            }
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        }
    }
    lim.rlim_cur
}

#[cfg(not(unix))]
fn raise_open_files_limit(wanted: u64) -> u64 {
    wanted
}

/// 10,000 calls in flight at the same moment, each on its own connection, against the
/// `hookscope listen` binary: every one is answered 200 and stored, and `listen` keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_thousand_calls_at_once_are_all_answered_and_stored() {
    // Each side of a connection is a file: one here and one in the child for every call.
    let wanted: u64 = 10_000;
    let limit = raise_open_files_limit(wanted + 1_000);
    let n = wanted.min(limit.saturating_sub(500));
    if n < wanted {
        eprintln!(
            "note: the open-file limit is {limit} (ulimit -n) and cannot be raised: {n} calls at once instead of {wanted}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, _lines) = spawn_listen(dir.path(), &[]);
    // No pooling: every call opens its own connection, all at once.
    hookscope::api::install_tls_provider();
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    let start = Arc::new(tokio::sync::Barrier::new(n as usize));
    let mut tasks = Vec::new();
    for i in 0..n {
        let (client, url, start) = (client.clone(), url.clone(), start.clone());
        tasks.push(tokio::spawn(async move {
            start.wait().await;
            post(
                &client,
                &format!("{url}/at-once"),
                &invoker_headers("status-report", &format!("once-{i}"), 1),
                status_report_body(&i.to_string()),
            )
            .timeout(Duration::from_secs(120))
            .send()
            .await
            .map(|r| r.status().as_u16())
            .map_err(|e| e.to_string())
        }));
    }
    let mut answered = 0u64;
    let mut errors = Vec::new();
    for t in tasks {
        match t.await.unwrap() {
            Ok(200) => answered += 1,
            Ok(other) => errors.push(format!("answered {other}")),
            Err(e) => errors.push(e),
        }
    }
    assert!(
        errors.is_empty(),
        "{} failed, e.g. {:?}",
        errors.len(),
        &errors[..errors.len().min(3)]
    );
    assert_eq!(answered, n);
    let resp = client
        .post(format!("{url}/after"))
        .body("[]")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200, "listen still serves");
    child.kill();
    let store = Store::open_read(dir.path()).unwrap();
    let f = Filter {
        text: "once-".into(),
        ..Filter::default()
    };
    assert_eq!(store.count(&f).unwrap(), n);
}

/// Send `signal` to `child` and wait (up to 30 s) for it to exit.
#[cfg(unix)]
fn signal_and_wait(
    child: &mut std::process::Child,
    signal: libc::c_int,
) -> std::process::ExitStatus {
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: a signal to our own child, which is alive (not yet reaped).
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "still running 30 s after signal {signal}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `show` of a delivery whose emulator's clock changed along the way names each speed with its
/// attempts, as the window does (it had given the last speed for all of them), and an
/// attempt number that cannot be read is a dash, as in `log`.
#[tokio::test]
async fn show_names_each_clock_speed_a_delivery_was_made_at() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, lines) = spawn_listen(dir.path(), &["--respond", "503"]);
    for (attempt, speed) in [("1", "60"), ("2", "60"), ("3", "100000"), ("x", "100000")] {
        let mut headers = invoker_headers("status-report", "dlv-speeds", 1);
        for (name, value) in &mut headers {
            if name.ends_with("-Attempt") {
                *value = attempt.to_owned();
            }
        }
        headers.push((
            hookscope::emulator::CLOCK_SPEED_HEADER.to_owned(),
            speed.to_owned(),
        ));
        call_and_line(&url, &headers, status_report_body("5"), 503, &lines).await;
    }
    child.kill();
    let out = run_in(dir.path(), &["show", "4"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "(its calls came from a Hookscope emulator, made at 60x (calls 1-2), then 100000x (calls 3-4): each gap is read on the clock it passed on)"
        ),
        "{text}"
    );
    assert!(!text.contains("whose clock runs 100000x"), "{text}");
    // Its table's rows begin with the attempt number; the last (marked as the call shown)
    // has none that reads.
    assert!(text.lines().any(|l| l.starts_with("* -  ")), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("* ?")), "{text}");
}

/// SIGTERM (`kill`, a service manager) and SIGHUP (a closed terminal, a logout) stop `listen`
/// as Ctrl-C does: in order, saying what it recorded, with exit status 0.
#[cfg(unix)]
#[tokio::test]
async fn sigterm_and_sighup_stop_listen_in_order() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        stops_in_order_on(signal, 1).await;
    }
}

/// `listen` answers `calls` calls, is stopped by `signal`, says how many it recorded, and
/// leaves its database file alone: closed, without the -wal and -shm a process ending with
/// its connections open leaves (and two connections closing at once left).
#[cfg(unix)]
async fn stops_in_order_on(signal: libc::c_int, calls: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, lines) = spawn_listen(dir.path(), &[]);
    for i in 0..calls {
        let headers = invoker_headers("status-report", &format!("term-{i}"), 1);
        call_and_line(&url, &headers, status_report_body("5"), 200, &lines).await;
    }
    let status = signal_and_wait(&mut child.child, signal);
    assert!(status.success(), "signal {signal}: {status:?}");
    // Everything it printed, up to the end of the pipe.
    let said: Vec<String> =
        std::iter::from_fn(|| child.stderr.recv_timeout(Duration::from_secs(30)).ok()).collect();
    let stopped = format!(
        "Stopped. {calls} {} recorded in this run.",
        if calls == 1 { "call" } else { "calls" }
    );
    assert!(said.contains(&stopped), "{said:?}");
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [hookscope::store::DB_FILE], "signal {signal}");
}

/// Stopped with Ctrl-C after a few calls, again and again: each time the store is closed, its
/// log files removed (one stop in three had left them).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_leaves_the_database_file_alone() {
    for _ in 0..8 {
        stops_in_order_on(libc::SIGINT, 5).await;
    }
}

/// `hookscope emulate --port 0` with `env`: the process (what it prints on stderr after its
/// address in its `stderr`), and its API's base URL.
fn spawn_emulate(env: &[(&str, &str)]) -> (Killed, String) {
    let mut child = bin()
        .args(["emulate", "--port", "0"])
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("emulate starts");
    // Kept read while it runs: a closed pipe would fail its next line.
    let stderr = lines_of(child.stderr.take().expect("stderr"));
    let emulator = Killed { child, stderr };
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = emulator
            .stderr
            .recv_timeout(left)
            .expect("emulate prints its address");
        if let Some(url) = line.strip_prefix("The service emulator is listening on ") {
            let url = url.trim().to_owned();
            return (emulator, url);
        }
    }
}

/// `emulate` serves the account `HOOKSCOPE_API_USER` names, as the client commands call as
/// it; a blank one counts as unset on both sides (demo); and a URL from `HOOKSCOPE_API_URL`
/// that nothing answers at says where it came from.
#[test]
fn the_emulator_and_its_clients_read_the_same_user() {
    let (emulator, api) = spawn_emulate(&[
        ("HOOKSCOPE_API_USER", "alice"),
        ("HOOKSCOPE_API_PASSWORD", "secret"),
    ]);
    let credentials = loop {
        let line = emulator
            .stderr
            .recv_timeout(Duration::from_secs(30))
            .expect("emulate names its credentials");
        if line.starts_with("Credentials:") {
            break line;
        }
    };
    assert!(
        credentials.starts_with("Credentials: user alice,"),
        "{credentials}"
    );
    let list = |user: &str| {
        let out = bin()
            .args(["webhooks", "list", "--api-url", &api])
            .env("HOOKSCOPE_API_USER", user)
            .env("HOOKSCOPE_API_PASSWORD", "secret")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, err) = list("alice");
    assert!(ok, "{err}");
    let (ok, err) = list("  ");
    assert!(!ok);
    assert!(
        err.contains("the service rejected the credentials for 'demo'"),
        "{err}"
    );
    let out = bin()
        .args(["webhooks", "list"])
        .env("HOOKSCOPE_API_URL", "http://127.0.0.1:1/v1")
        .env("HOOKSCOPE_API_PASSWORD", "demo")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("; the URL came from HOOKSCOPE_API_URL (--api-url overrides it)"),
        "{err}"
    );
}

/// `webhooks create` and `webhooks update` against `hookscope emulate`, as a script would
/// run them: `--invoke` switches a webhook between ONE and MANY after it was created; and
/// `emulate inject` delivers a handset's message to the running emulator.
#[test]
fn webhooks_update_changes_the_invoke_option_and_emulate_injects() {
    // Left empty in a shell: not an empty password, the default one (the calls below log in
    // with "demo").
    let (mut emulator, api) = spawn_emulate(&[("HOOKSCOPE_API_PASSWORD", "")]);
    // The JSON it prints, and what it says on stderr.
    let run_said = |args: &[&str]| {
        let out = bin()
            .args(args)
            .args(["--api-url", &api, "--user", "demo", "--json"])
            .env("HOOKSCOPE_API_PASSWORD", "demo")
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{args:?}: {said}");
        (
            serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap(),
            said,
        )
    };
    let run = |args: &[&str]| run_said(args).0;
    let created = run(&[
        "webhooks",
        "create",
        "--name",
        "w",
        "--url",
        "http://127.0.0.1:9/h",
        "--scope",
        "SENT",
        "--inactive",
    ]);
    assert_eq!(created["invokeOption"], "ONE");
    let id = created["id"].to_string();
    let updated = run(&["webhooks", "update", &id, "--invoke", "many"]);
    assert_eq!(updated["invokeOption"], "MANY");
    assert_eq!(updated["name"], "w", "the rest is kept");
    // `--invoke` on create too, as on update (one call, one registration check).
    let many = run(&[
        "webhooks",
        "create",
        "--name",
        "w2",
        "--url",
        "http://127.0.0.1:9/h2",
        "--scope",
        "SENT",
        "--inactive",
        "--invoke",
        "MANY",
    ]);
    assert_eq!(many["invokeOption"], "MANY");
    // A username and an empty password, with no terminal to ask in: the password is missing,
    // not "credentials" as if the username were too.
    let out = bin()
        .args(["webhooks", "list", "--api-url", &api, "--user", "demo"])
        .env("HOOKSCOPE_API_PASSWORD", "")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("no password for 'demo'"), "{err}");
    // The list for people: a header over its columns, the way calls are made among them.
    let out = bin()
        .args(["webhooks", "list", "--api-url", &api, "--user", "demo"])
        .env("HOOKSCOPE_API_PASSWORD", "demo")
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&out.stdout).into_owned();
    let lines: Vec<&str> = listed.lines().collect();
    assert!(lines[0].trim_start().starts_with("ID  NAME"), "{listed}");
    assert!(lines[0].contains("CALLS"), "{listed}");
    assert!(
        lines[1].contains(" inactive  MANY   http://127.0.0.1:9/h"),
        "{listed}"
    );
    let back = run(&["webhooks", "update", &id, "--invoke", "ONE"]);
    assert_eq!(back["invokeOption"], "ONE");
    // `emulate inject` (as `inject`) hands a running emulator a message from a handset.
    for command in [&["emulate", "inject"][..], &["inject"]] {
        let (injected, said) =
            run_said(&[command, &["--body", "hello", "--from", "+27009"]].concat());
        assert_eq!(injected["type"], "RECEIVED", "{command:?}: {injected}");
        assert_eq!(injected["body"], "hello");
        assert_eq!(injected["from"], "+27009");
        // The only webhook is for SENT messages, and inactive: this message reaches no one.
        assert!(
            said.contains("no webhook is active for RECEIVED messages, so it goes nowhere"),
            "{said}"
        );
    }
    let (_, said) = run_said(&["send-test", "--body", "x"]);
    assert!(
        said.contains("no webhook is active for SENT messages, so its status reports go nowhere"),
        "{said}"
    );
    // Without --json it says it was sent, and does not then promise the reports to the SENT
    // webhooks the note has just said there are none of.
    let out = bin()
        .args(["send-test", "--body", "x", "--api-url", &api])
        .env("HOOKSCOPE_API_PASSWORD", "demo")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(
            "Sent to the test number 1111111: its delivery fails by design and costs nothing."
        ),
        "{said}"
    );
    assert!(!said.contains("the SENT webhooks get"), "{said}");
    // The URL and the user from the environment; an empty HOOKSCOPE_API_USER left in a shell
    // counts as unset (demo), as an empty password does.
    let out = bin()
        .args(["webhooks", "list"])
        .env("HOOKSCOPE_API_URL", &api)
        .env("HOOKSCOPE_API_USER", "")
        .env("HOOKSCOPE_API_PASSWORD", "demo")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("ID  NAME"));
    // A handset's number is checked as a send's recipient is.
    let out = bin()
        .args(["inject", "--body", "x", "--from", "abc", "--api-url", &api])
        .env("HOOKSCOPE_API_PASSWORD", "demo")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'abc' is not a phone number"), "{err}");
    // Anything else is refused by name.
    let out = bin()
        .args([
            "webhooks",
            "update",
            &id,
            "--invoke",
            "some",
            "--api-url",
            &api,
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--invoke"));
    // SIGTERM stops the emulator as Ctrl-C does: in order, exit status 0.
    #[cfg(unix)]
    {
        let status = signal_and_wait(&mut emulator.child, libc::SIGTERM);
        assert!(status.success(), "{status:?}");
    }
}

#[test]
fn a_screenshot_is_a_png_and_a_data_dir_is_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["--screenshot"])
        .arg(dir.path().join("shot.jpg"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--screenshot writes a PNG"), "{err}");
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let err = listen_refuses(&file);
    assert!(err.contains("is a file, not a directory"), "{err}");
    // Under a file: no directory can be made there either.
    let err = listen_refuses(&file.join("sub"));
    assert!(err.contains("cannot create the data directory"), "{err}");
}

/// A value taken from the environment, not from a flag, is named as such where it cannot be
/// used (the errors told the user to fix a flag they never gave); an empty one left in a
/// shell counts as unset; a flag given overrides it, and the error is the flag's.
#[test]
fn a_value_from_the_environment_is_named_in_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let said = |cmd: &mut Command| {
        let out = cmd.stdin(Stdio::null()).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = said(
        bin()
            .args(["webhooks", "list"])
            .env("HOOKSCOPE_API_URL", "garbage"),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("\"garbage\" is not a whole http(s) address"),
        "{err}"
    );
    assert!(
        err.contains("that value came from HOOKSCOPE_API_URL (--api-url overrides it)"),
        "{err}"
    );
    let (code, err) = said(
        bin()
            .args(["webhooks", "list", "--api-url", "garbage"])
            .env("HOOKSCOPE_API_URL", "http://127.0.0.1:1/v1"),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(!err.contains("HOOKSCOPE_API_URL"), "{err}");
    // Empty: the emulator's default URL, not a refusal of "".
    let (_, err) = said(
        bin()
            .args(["webhooks", "list"])
            .env("HOOKSCOPE_API_URL", "")
            .env("HOOKSCOPE_API_PASSWORD", "demo"),
    );
    assert!(!err.contains("not a whole http(s) address"), "{err}");
    for command in [&["log"][..], &["show", "1"], &["listen", "--port", "0"]] {
        let (code, err) = said(bin().args(command).env("HOOKSCOPE_DATA_DIR", &file));
        assert_eq!(code, Some(2), "{command:?}: {err}");
        assert!(
            err.contains("is a file, not a directory"),
            "{command:?}: {err}"
        );
        assert!(
            err.contains("that directory came from HOOKSCOPE_DATA_DIR (--data-dir overrides it)"),
            "{command:?}: {err}"
        );
        let (_, err) = said(
            bin()
                .args(command)
                .arg("--data-dir")
                .arg(&file)
                .env("HOOKSCOPE_DATA_DIR", dir.path()),
        );
        assert!(!err.contains("HOOKSCOPE_DATA_DIR"), "{command:?}: {err}");
    }
    // Blank, left in a shell: unset, as the API's variables are (it had been taken for a
    // directory named "  "), so the platform's directory is used.
    let home = dir.path().join("home");
    let (_, err) = said(
        bin()
            .arg("log")
            .env("HOOKSCOPE_DATA_DIR", "  ")
            .env("HOME", &home)
            .env("XDG_DATA_HOME", home.join("data")),
    );
    assert!(
        err.contains(&home.join("data").join("hookscope").display().to_string()),
        "{err}"
    );
    assert!(!err.contains("HOOKSCOPE_DATA_DIR"), "{err}");
}

/// `listen --data-dir DIR`, which must refuse DIR with exit status 2: what it says.
fn listen_refuses(data_dir: &std::path::Path) -> String {
    let out = bin()
        .args(["listen", "--port", "0", "--data-dir"])
        .arg(data_dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{err}");
    err
}

#[test]
fn log_on_a_mistyped_data_dir_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    // What `log` and `show 1` print to stderr, read from `data_dir`; both must fail.
    let refused = |data_dir: &std::path::Path| {
        [&["log"][..], &["show", "1"][..]].map(|args| {
            let out = bin()
                .args(args)
                .arg("--data-dir")
                .arg(data_dir)
                .output()
                .unwrap();
            assert!(!out.status.success());
            let err = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(err.contains("--data-dir"), "{err}");
            assert!(!err.contains("panicked"), "{err}");
            err
        })
    };
    // A directory where the database file goes is named as such, by `listen` too.
    let odd = dir.path().join("odd");
    std::fs::create_dir_all(odd.join("hookscope.sqlite3")).unwrap();
    for err in refused(&odd) {
        assert!(err.contains("hookscope.sqlite3 is a directory"), "{err}");
    }
    let err = listen_refuses(&odd);
    assert!(err.contains("hookscope.sqlite3 is a directory"), "{err}");
    let typo = dir.path().join("hookscop");
    for err in refused(&typo) {
        assert!(err.contains("no Hookscope database"), "{err}");
    }
    assert!(!typo.exists());
    // Reading never creates anything, so its hint for a file does not say it would.
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    for err in refused(&file) {
        assert!(err.contains("is a file, not a directory"), "{err}");
        assert!(!err.contains("created"), "{err}");
    }
    // A path under that file: the file is named, and the value refused (status 2) as
    // `listen` refuses it.
    for args in [&["log"][..], &["show", "1"][..]] {
        let out = bin()
            .args(args)
            .arg("--data-dir")
            .arg(file.join("sub"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("a-file is a file, not a directory"), "{err}");
    }
}

#[test]
fn a_data_dir_holding_another_programs_data_is_refused_as_a_wrong_value() {
    let dir = tempfile::tempdir().unwrap();
    let foreign = dir.path().join("foreign");
    std::fs::create_dir(&foreign).unwrap();
    let db = rusqlite::Connection::open(foreign.join("hookscope.sqlite3")).unwrap();
    db.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');")
        .unwrap();
    drop(db);
    let noise = dir.path().join("noise");
    std::fs::create_dir(&noise).unwrap();
    std::fs::write(noise.join("hookscope.sqlite3"), [0x5a_u8; 8192]).unwrap();
    for (data_dir, says) in [
        (&foreign, "is not a Hookscope database"),
        (&noise, "is not a database file"),
    ] {
        for args in [
            &["log"][..],
            &["show", "1"][..],
            &["listen", "--port", "0"][..],
        ] {
            let out = bin()
                .args(args)
                .arg("--data-dir")
                .arg(data_dir)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(says) && err.contains("--data-dir"), "{err}");
        }
    }
    // Left as they were.
    let db = rusqlite::Connection::open(foreign.join("hookscope.sqlite3")).unwrap();
    let tables: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1);
    assert_eq!(
        std::fs::read(noise.join("hookscope.sqlite3")).unwrap(),
        vec![0x5a_u8; 8192]
    );
}

/// A damaged database, or a record changed by hand, is named as such with the file and what to
/// do, not in SQLite's bare words ("database disk image is malformed").
#[test]
fn a_damaged_store_is_named_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let fill = |at: &std::path::Path| {
        let store = Store::open(at, Durability::Normal).unwrap();
        let rt = tokio::runtime::Runtime::new().unwrap();
        for i in 0..300 {
            let body = format!("[{}]", "1,".repeat(400) + "1");
            rt.block_on(store.insert(hookscope::store::Invocation::synthetic(i, body.as_bytes())))
                .unwrap();
        }
        // Everything in the database file itself, none of it left in the write-ahead log.
        store.close();
        assert!(
            !at.join(format!("{}-wal", hookscope::store::DB_FILE))
                .exists()
        );
    };
    let err_of = |at: &std::path::Path, args: &[&str]| {
        let out = bin().args(args).arg("--data-dir").arg(at).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!err.contains("panicked"), "{err}");
        err
    };
    // Cut short, as a full disk or a copy stopped half way leaves it.
    let cut = dir.path().join("cut");
    fill(&cut);
    let db = cut.join(hookscope::store::DB_FILE);
    std::fs::OpenOptions::new()
        .write(true)
        .open(&db)
        .unwrap()
        .set_len(5000)
        .unwrap();
    for args in [&["log"][..], &["show", "1"][..]] {
        let err = err_of(&cut, args);
        assert!(err.contains("is damaged"), "{err}");
        assert!(err.contains(&db.display().to_string()), "{err}");
        assert!(err.contains(".recover"), "{err}");
        // Left as it is, as the message says: the log files SQLite made beside it to read it
        // are taken away again (they had been left there).
        let beside: Vec<String> = std::fs::read_dir(&cut)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(beside, [hookscope::store::DB_FILE], "{args:?}");
    }
    // A record changed by hand, among the newest that `log` lists: a code no HTTP answer has.
    let edited = dir.path().join("edited");
    fill(&edited);
    let conn = rusqlite::Connection::open(edited.join(hookscope::store::DB_FILE)).unwrap();
    conn.execute(
        "UPDATE invocations SET answer_status = 70000 WHERE id = 298",
        [],
    )
    .unwrap();
    drop(conn);
    let err = err_of(&edited, &["log"]);
    assert!(err.contains("record 298 in"), "{err}");
    assert!(
        err.contains("its answer_status is 70000, out of the range Hookscope writes"),
        "{err}"
    );
    assert!(err.contains("by hand"), "{err}");
    assert!(!err.contains("at index"), "{err}");
    // `log --limit 5` (with `--json` or not) on the edited store.
    let log_five = |json: bool| {
        let mut cmd = bin();
        cmd.args(["log", "--limit", "5"])
            .arg("--data-dir")
            .arg(&edited);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    // The other records are still listed, the damaged one named in its place.
    for json in [false, true] {
        let out = log_five(json);
        assert_eq!(out.status.code(), Some(1));
        let listed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(listed.lines().count(), 4, "{listed}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("record 298 in"), "{err}");
        assert!(
            err.contains("1 record could not be read (named above); the other 4 are listed"),
            "{err}"
        );
    }
    // JSON that is not JSON, named with its column.
    let conn = rusqlite::Connection::open(edited.join(hookscope::store::DB_FILE)).unwrap();
    conn.execute("UPDATE invocations SET findings = 'x' WHERE id = 297", [])
        .unwrap();
    drop(conn);
    let err = err_of(&edited, &["show", "297"]);
    assert!(
        err.contains("record 297 in")
            && err.contains("its findings is not the JSON Hookscope writes"),
        "{err}"
    );
    // `log` still lists the others around it, naming it in its place: the findings the list
    // reads in SQL (the worst one, a refused request, an unanswered call) had failed the whole
    // page, so `log` printed nothing at all. With findings counted, and with a JSON value that
    // is not a list of them.
    for findings in ["x", "{\"a\": 1}", "[1, \"two\"]"] {
        let conn = rusqlite::Connection::open(edited.join(hookscope::store::DB_FILE)).unwrap();
        conn.execute(
            "UPDATE invocations SET findings = ?1, findings_count = 2 WHERE id = 297",
            [findings],
        )
        .unwrap();
        drop(conn);
        for json in [false, true] {
            let out = log_five(json);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{err}");
            let listed = String::from_utf8_lossy(&out.stdout);
            let expected = if findings.starts_with('[') && !json {
                4
            } else {
                3
            };
            assert_eq!(
                listed.lines().count(),
                expected,
                "{findings}: {listed}{err}"
            );
            assert!(err.contains("record 298 in"), "{err}");
            if expected == 3 {
                assert!(
                    err.contains("record 297 in")
                        && err.contains("its findings is not the JSON Hookscope writes"),
                    "{findings}: {err}"
                );
                assert!(
                    err.contains(
                        "2 records could not be read (named above); the other 3 are listed"
                    ),
                    "{err}"
                );
            }
        }
    }
    // Only a damaged record within the limit: nothing else is said to be listed.
    let conn = rusqlite::Connection::open(edited.join(hookscope::store::DB_FILE)).unwrap();
    conn.execute(
        "UPDATE invocations SET answer_status = 70000 WHERE id = (SELECT MAX(id) FROM invocations)",
        [],
    )
    .unwrap();
    drop(conn);
    for json in [false, true] {
        let mut cmd = bin();
        cmd.args(["log", "--limit", "1"])
            .arg("--data-dir")
            .arg(&edited);
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(out.stdout.is_empty());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("1 record could not be read (named above); no other is listed"),
            "{err}"
        );
    }
}

/// `--data-dir` before the subcommand is the subcommand's (it used to be read by the window
/// only, so `log` read, and `listen` wrote, the platform store); where it means nothing, and
/// for `--demo` with a subcommand, the user is told.
#[test]
fn options_before_the_subcommand_are_used_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("hookscop");
    let out = bin()
        .arg("--data-dir")
        .arg(&typo)
        .arg("log")
        .env_remove("HOOKSCOPE_DATA_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(&typo.display().to_string()), "{err}");
    // Given on both sides of the subcommand, to two places: refused, and nothing created
    // (it used to take the subcommand's own without a word).
    let other = dir.path().join("other");
    let out = bin()
        .arg("--data-dir")
        .arg(&typo)
        .args(["listen", "--port", "0", "--data-dir"])
        .arg(&other)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--data-dir is given twice"), "{err}");
    assert!(!typo.exists() && !other.exists());
    // The same place twice is no conflict.
    let (mut child, _url, _lines) = {
        let mut cmd = bin();
        cmd.arg("--data-dir").arg(dir.path());
        spawn_listen_with(cmd, dir.path(), &[])
    };
    child.kill();
    assert!(dir.path().join(hookscope::store::DB_FILE).exists());
    for (args, says) in [
        (
            &["--data-dir", "x", "schedule"][..],
            "--data-dir does not apply",
        ),
        // After the subcommand, in the same words (it was clap's "unexpected argument").
        (
            &["emulate", "--port", "0", "--data-dir", "x"][..],
            "--data-dir does not apply to `hookscope emulate` (it keeps no calls)",
        ),
        (
            &["webhooks", "list", "--data-dir=x"][..],
            "--data-dir does not apply to `hookscope webhooks`",
        ),
        (&["--demo", "log"][..], "--demo is for the window"),
    ] {
        let out = bin().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// `hookscope log --json | head -1`: the reader leaving early is not an error.
#[tokio::test]
async fn log_into_a_pipe_closed_early_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        // Far more than a pipe holds, so the writer meets the closed end.
        let inserts: Vec<_> = (0..2000)
            .map(|i| store.insert(hookscope::store::Invocation::synthetic(i, &[b'x'; 200])))
            .collect();
        for r in futures_util::future::join_all(inserts).await {
            r.unwrap();
        }
    }
    let mut child = bin()
        .args(["log", "--json", "--limit", "2000", "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut first = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut first)
        .unwrap();
    if !first.starts_with('{') {
        // What `log` said instead (a store it could not read, say).
        let out = child.wait_with_output().unwrap();
        panic!(
            "{first:?}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The reader is gone (stdout dropped above).
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?} {err}", out.status);
    assert!(err.is_empty(), "{err}");
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
    // A Retry-After past the 2-day window leaves no retry, and says so.
    let out = bin()
        .args(["schedule", "--code", "503", "--retry-after", "200000"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("No retry: the first would come after the 2-day window"),
        "{text}"
    );
    assert!(!text.contains("0 retries"), "{text}");
    // --all lists the steady retries the default gives in one line.
    let out = bin()
        .args(["schedule", "--code", "503", "--all"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("more retries"), "{text}");
    assert!(text.contains("attempt 100  retry  99  at "), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("  attempt")).count(),
        194
    );

    // --json: delays in seconds; a 500's Retry-After is not honoured.
    let out = bin()
        .args([
            "schedule",
            "--code",
            "500",
            "--retry-after",
            "300",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["outcome"], "retry-temporary");
    assert_eq!(v["plan"]["retries"][0]["number"], 2);
    assert_eq!(v["plan"]["retries"][0]["retry"], 1);
    assert_eq!(v["plan"]["retries"][0]["delay_secs"], 90.0);
    assert_eq!(v["plan"]["retries"][1]["delay_secs"], 180.0);
    assert_eq!(v["retry_after_seconds"], 300);

    // An HTTP date, as the header may carry it: the wait counts from now.
    let in_10_min = (chrono::Utc::now() + chrono::TimeDelta::minutes(10))
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    let out = bin()
        .args(["schedule", "--retry-after", &in_10_min, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let wait = v["retry_after_seconds"].as_u64().expect("seconds");
    assert!((590..=600).contains(&wait), "{v}");
    // The first retry waits for the date itself (to the instant: seconds round up).
    let first = v["plan"]["retries"][0]["delay_secs"]
        .as_f64()
        .expect("a delay");
    assert!(
        first <= wait as f64 && first > wait as f64 - 1.0,
        "{first} {wait}"
    );
    // The date has passed by the next failure: back on the schedule (3 min).
    assert_eq!(v["plan"]["retries"][1]["delay_secs"], 180.0);
    assert_eq!(v["retry_after_honoured"], true);
    // Times as in every JSON output: UTC, microseconds.
    let at = v["plan"]["retries"][0]["at"].as_str().expect("a time");
    assert!(
        at.ends_with('Z') && at.len() == "2026-11-21T10:00:00.000000Z".len(),
        "{at}"
    );

    // Neither seconds nor a date: refused, saying what to give.
    let out = bin()
        .args(["schedule", "--retry-after", "tomorrow"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("whole seconds (120) or an HTTP date"), "{err}");
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

/// What a service (or a proxy in front of it) says is quoted in errors and output, never
/// written raw to the terminal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_a_service_says_cannot_drive_the_terminal() {
    let rig = Rig::start(Answer {
        body: Some(
            r#"{"type":"https://x/#bad-request","title":"Bad Request","status":400,"detail":"bad \u001b[31mred\u001b]0;title\u0007 \u202e"}"#
                .into(),
        ),
        content_type: Some("application/json".into()),
        ..Answer::status(400)
    })
    .await;
    let api = rig.url("/v1");
    let out = tokio::task::spawn_blocking(move || {
        bin()
            .args(["webhooks", "list", "--api-url", &api, "--user", "demo"])
            .env("HOOKSCOPE_API_PASSWORD", "demo")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("bad \\u{1b}[31mred"), "{err}");
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{7}') && !err.contains('\u{202e}'),
        "{err}"
    );
}

/// `hookscope webhooks list` (with `extra` flags) against `listen` at `url` playing a service.
fn webhooks_list(url: &str, extra: &[&str]) -> std::process::Output {
    bin()
        .args(["webhooks", "list"])
        .args(extra)
        .arg("--api-url")
        .arg(format!("{url}/v1"))
        .env("HOOKSCOPE_API_PASSWORD", "demo")
        .output()
        .unwrap()
}

/// A webhook of a kind newer than Hookscope (a trigger scope it does not know) is left out of
/// the table with a warning that names it; the others are listed and the command succeeds.
#[test]
fn a_webhook_hookscope_cannot_read_is_named_and_the_rest_listed() {
    let dir = tempfile::tempdir().unwrap();
    let service = r#"[{"id":5,"name":"kept","url":"http://127.0.0.1:1/h","triggerScope":"SENT","active":true},{"id":6,"name":"new\u001b[2J","url":"http://127.0.0.1:1/m","triggerScope":"MMS","active":true}]"#;
    let (_listen, url, _lines) = spawn_listen(
        dir.path(),
        &["--body", service, "--content-type", "application/json"],
    );
    let out = webhooks_list(&url, &[]);
    let (table, err) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{err}");
    assert!(table.contains("kept"), "{table}");
    assert!(!table.contains("No webhooks"), "{table}");
    assert!(!table.contains("new"), "{table}");
    assert!(
        err.contains("warning: the service listed 1 webhook that Hookscope cannot read"),
        "{err}"
    );
    assert!(
        err.contains("webhook 6 \"new\\u{1b}[2J\": triggerScope: unknown variant `MMS`"),
        "{err}"
    );
    assert!(!err.contains('\u{1b}'), "{err}");
}

/// `--json` prints the service's JSON as it came, fields the client does not know included
/// (here `hookscope listen` plays a service whose webhooks carry one more field).
#[test]
fn json_output_is_the_services_own() {
    let dir = tempfile::tempdir().unwrap();
    // Numbers as spelled, too: a parsed value would print 1e+23 and 100.0.
    let service = r#"[{"id":5,"name":"m","url":"http://127.0.0.1:1/h","triggerScope":"SENT","active":true,"contactEmailAddress":null,"onWebApp":true,"secretHeader":"kept","n":1.0e2},{"id":99999999999999999999999,"name":"big"}]"#;
    let (_listen, url, _lines) = spawn_listen(
        dir.path(),
        &["--body", service, "--content-type", "application/json"],
    );
    let out = webhooks_list(&url, &["--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let printed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sent: serde_json::Value = serde_json::from_str(service).unwrap();
    assert_eq!(printed, sent, "as the service sent it");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(r#""n": 1.0e2"#), "{text}");
    assert!(text.contains(r#""id": 99999999999999999999999"#), "{text}");
    // Without --json, the table (the invoke option the service did not give is not guessed).
    let out = webhooks_list(&url, &[]);
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains(" ? "), "{table}");
}

/// A second Ctrl-C right after the first: the calls the first one answered at once and stored
/// each get their line on stdout before the process ends (a quick second one had ended it
/// before the printer wrote them: 0 of 40 lines in one run).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quick_second_ctrl_c_still_prints_every_stored_call() {
    // A race by its nature: run a few times (each a fraction of a second).
    for _ in 0..6 {
        quick_second_ctrl_c().await;
    }
}

#[cfg(unix)]
async fn quick_second_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, lines) = spawn_listen(dir.path(), &["--delay", "1h"]);
    let client = http();
    let calls: Vec<_> = (0..10)
        .map(|i| {
            let req = post(
                &client,
                &format!("{url}/hook"),
                &invoker_headers("status-report", &format!("quick-{i}"), 1),
                status_report_body("5"),
            );
            tokio::spawn(async move { req.send().await.map(|r| r.status().as_u16()) })
        })
        .collect();
    // All ten held (a few: the tests beside this one may hold the machine's connections).
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut held = 0;
    while held < 10 {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = child
            .stderr
            .recv_timeout(left)
            .expect("the calls are held in time");
        held += usize::from(line.contains("held:"));
    }
    let pid = libc::pid_t::try_from(child.child.id()).unwrap();
    // SAFETY: signals to our own child, which is alive.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = child
            .stderr
            .recv_timeout(left)
            .expect("listen says it is stopping");
        if line.starts_with("Stopping") {
            break;
        }
    }
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.child.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "listen ends after the second Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    for c in calls {
        let _ = c.await;
    }
    // Every call stored has its line: the last line of each says what the store says.
    // Up to the end of the pipe.
    let printed: Vec<String> =
        std::iter::from_fn(|| lines.recv_timeout(Duration::from_secs(30)).ok()).collect();
    let store = Store::open_read(dir.path()).unwrap();
    let stored = store.page(&Filter::default(), 0, 100).unwrap();
    // (None stored when the second came before the first's commits: nothing is owed then.)
    for row in &stored {
        let delivery = row.delivery.clone().unwrap();
        let last = printed
            .iter()
            .rev()
            .find(|l| l.contains(&format!("delivery={delivery} ")))
            .unwrap_or_else(|| panic!("no line for stored {delivery}: {printed:#?}"));
        assert!(
            last.contains(&format!("-> 200 {}", row.outcome.as_str())),
            "{last} but stored {}",
            row.outcome.as_str()
        );
    }
}

/// `listen --json | head -1`: once the program reading its standard output has gone, `listen`
/// stops in order, as on Ctrl-C, every call stored and said so on stderr. It had run on,
/// printing nothing and saying nothing, so a script waiting for one call never ended.
#[cfg(unix)]
#[tokio::test]
async fn listen_stops_in_order_when_its_stdout_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Killed {
        child: bin()
            .args([
                "listen",
                "--json",
                "--port",
                &port.to_string(),
                "--data-dir",
            ])
            .arg(dir.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
        stderr: mpsc::channel().1,
    };
    child.stderr = lines_of(child.child.stderr.take().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "listen listens in time");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let url = format!("http://127.0.0.1:{port}/hook");
    let send = |delivery: &str| {
        post(
            &http(),
            &url,
            &invoker_headers("status-report", delivery, 1),
            status_report_body("5"),
        )
        .send()
    };
    assert_eq!(send("pipe-1").await.unwrap().status(), 200);
    // `head -1`: one line read, then gone (on a thread: a line that never comes fails the
    // test in time rather than block it). The call came as soon as the port took connections,
    // perhaps before `listen` served it: its line is printed all the same.
    let out = child.child.stdout.take().unwrap();
    let (first_tx, first_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = BufReader::new(out);
        let mut first = String::new();
        let _ = first_tx.send(out.read_line(&mut first).map(|_| first));
        // Gone: no other call needs to come for `listen` to see it (a script's `head -1` had
        // waited for a second call).
    });
    let first = first_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("listen prints the call's line in time")
        .unwrap();
    assert!(first.contains("\"delivery\":\"pipe-1\""), "{first}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "listen still runs 30 s after its stdout was closed"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(status.code(), Some(0), "{status:?}");
    let said: Vec<String> =
        std::iter::from_fn(|| child.stderr.recv_timeout(Duration::from_secs(30)).ok()).collect();
    assert!(
        said.iter().any(
            |l| l.starts_with("Standard output was closed by the program reading it: stopping")
        ),
        "{said:?}"
    );
    assert!(
        said.contains(&"Stopped. 1 call recorded in this run.".to_owned()),
        "{said:?}"
    );
    let log = run_in(dir.path(), &["log"]);
    assert_eq!(String::from_utf8_lossy(&log.stdout).lines().count(), 1);
}

/// With its stderr closed (`listen 2>&1 | head -2` once head has its lines), `listen` still
/// stops in order on Ctrl-C: exit status 0, the database's -wal and -shm removed. Writing
/// "Stopping…" to the closed pipe had panicked (exit status 101) and left them behind.
#[cfg(unix)]
#[test]
fn listen_stops_in_order_with_its_stderr_closed() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = bin()
        .args(["listen", "--port", &port.to_string(), "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Listening, then its stderr's reader gone.
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "listen listens in time");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(child.stderr.take());
    let status = signal_and_wait(&mut child, libc::SIGINT);
    assert_eq!(status.code(), Some(0), "{status:?}");
    let mut left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, [hookscope::store::DB_FILE]);
}

/// A store on a read-only mount: `listen` says the file system is read-only, not that this
/// user lacks the rights ("another user's, or its mode forbids it … run as its owner", which
/// root was told); `log` says it cannot read a store closed cleanly there (SQLite must make its
/// log files beside it), and reads one whose log files are there. Checked in a mount namespace
/// of its own, where one can be made (root, as in CI); elsewhere there is nothing to mount
/// read-only.
#[test]
fn a_store_on_a_read_only_mount_is_named_as_such() {
    let can_mount = Command::new("unshare")
        .args(["-m", "mount", "--bind", "/tmp", "/tmp"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !can_mount {
        eprintln!("skipped: no mount namespace to be had here, so nothing to mount read-only");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    drop(Store::open(dir.path(), Durability::Normal).unwrap());
    let on_read_only = |args: &str| {
        Command::new("unshare")
            .args(["-m", "sh", "-c"])
            .arg(format!(
                "mount --bind -o ro \"$0\" \"$0\" && exec timeout 20 \"$1\" {args} --data-dir \"$0\""
            ))
            .arg(dir.path())
            .arg(env!("CARGO_BIN_EXE_hookscope"))
            .output()
            .unwrap()
    };
    // (Bounded: a listen that served on the mount would be ended at 20 s, status 124.)
    let out = on_read_only("listen --port 0");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("it is on a file system mounted read-only"),
        "{said}"
    );
    assert!(!said.contains("run as its owner"), "{said}");
    let out = on_read_only("log");
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("where it is: it is on a file system mounted read-only")
            && said.contains("copy the data directory somewhere writable")
            && !said.contains("run as its owner"),
        "{said}"
    );
    // With its log files beside it (a store left open by a listen that is still running, or
    // was killed), it is read where it is.
    let open = Store::open(dir.path(), Durability::Normal).unwrap();
    let out = on_read_only("log");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    drop(open);
}

/// `send-test` against something that answers a send with success and no message (a receiver
/// answering `[]`, say, given as the API): an error that says nothing was sent and where to
/// look, not "Sent to the test number" and exit 0. With `--json` the answer is printed as it
/// came, and the exit is the same.
#[tokio::test]
async fn a_send_the_service_made_no_message_of_is_an_error() {
    let mut answer = Answer::status(200);
    answer.body = Some("[]".into());
    answer.content_type = Some("application/json".into());
    let rig = Rig::start(answer).await;
    let api = rig.url("/v1");
    for json in [false, true] {
        let mut args = vec!["send-test".to_owned(), "--api-url".to_owned(), api.clone()];
        if json {
            args.push("--json".to_owned());
        }
        let out = tokio::task::spawn_blocking(move || {
            bin()
                .args(&args)
                .env("HOOKSCOPE_API_PASSWORD", "demo")
                .output()
                .unwrap()
        })
        .await
        .unwrap();
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{said}");
        assert!(
            said.contains("made no message, so nothing was sent"),
            "{said}"
        );
        assert!(!said.contains("Sent to the test number"), "{said}");
        let printed = String::from_utf8_lossy(&out.stdout);
        assert_eq!(printed.trim(), if json { "[]" } else { "" }, "{printed}");
    }
}

/// The database file copied alone while Hookscope runs holds none of its calls (they are in
/// its write-ahead log until folded in): `log` and `show` say so, and what to copy, rather
/// than "nothing has been stored there", and leave the copy as they found it (no -wal or -shm
/// made beside it).
#[tokio::test]
async fn a_database_file_copied_without_its_log_is_named_so() {
    let rig = Rig::start(Answer::status(200)).await;
    let resp = post(
        &rig.client,
        &rig.url("/hook"),
        &invoker_headers("status-report", "copied-1", 1),
        status_report_body("1"),
    )
    .send()
    .await
    .unwrap();
    assert_eq!(resp.status(), 200);
    let copy = tempfile::tempdir().unwrap();
    let file = copy.path().join(hookscope::store::DB_FILE);
    std::fs::copy(rig.dir.path().join(hookscope::store::DB_FILE), &file).unwrap();
    for args in [&["log"][..], &["show", "1"]] {
        let out = run_in(copy.path(), args);
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {said}");
        assert!(
            said.contains(
                "holds no calls of its own, and there is no hookscope.sqlite3-wal beside it"
            ) && said.contains("copy the hookscope.sqlite3-wal file with it"),
            "{args:?}: {said}"
        );
        assert!(!said.contains("nothing has been stored"), "{said}");
        let mut left: Vec<String> = std::fs::read_dir(copy.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [hookscope::store::DB_FILE], "{args:?}");
    }
    // With its log copied beside it, the call is there.
    std::fs::copy(
        rig.dir
            .path()
            .join(format!("{}-wal", hookscope::store::DB_FILE)),
        copy.path()
            .join(format!("{}-wal", hookscope::store::DB_FILE)),
    )
    .unwrap();
    let out = run_in(copy.path(), &["log"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("copied-1"));
}
