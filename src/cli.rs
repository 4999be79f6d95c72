//! The headless commands: the same engine as the window, without one.

use crate::contract::{Brand, RetryAfter, SCHEDULE_RULE, Schedule, outcome_of};
use crate::receiver::{self, ReceiverConfig};
use crate::responder::{Answer, Responder, ResponderConfig};
use crate::store::{Durability, Filter, Store, Stored, Summary, default_data_dir};
use crate::text::{escape_control, human_duration, human_size};
use clap::{Args, Parser, Subcommand};
use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Debug, Parser)]
#[command(
    name = "hookscope",
    version,
    about = "Inspect the SMS service's webhooks: capture every call, choose the answer, see the retries.",
    long_about = "Inspect the SMS service's webhooks: capture every call, choose the answer, see the retries.\n\nWith no command, opens the window with the receiver listening on http://127.0.0.1:8787/."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Open the window, save a PNG of it once it has rendered, and exit.
    #[arg(long, value_name = "FILE.png")]
    pub screenshot: Option<PathBuf>,
    /// Open the window on a temporary store filled with sample calls.
    #[arg(long)]
    pub demo: bool,
    #[command(flatten)]
    pub data: DataDirArg,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the receiver without a window: print one line per call, store every call.
    Listen(ListenArgs),
    /// List stored invocations, newest first.
    Log(LogArgs),
    /// Show one stored invocation in full: headers, body, findings, answer.
    Show(ShowArgs),
    /// Print the retry timeline the service follows after an answer.
    Schedule(ScheduleArgs),
    /// Manage the service's webhooks through its API.
    #[command(subcommand)]
    Webhooks(crate::cli_api::WebhooksCommand),
    /// Send an SMS through the service's API.
    Send(crate::cli_api::SendArgs),
    /// Send a message to the test number 1111111: it fails delivery, costs nothing, and fires the
    /// SENT webhooks.
    SendTest(crate::cli_api::SendTestArgs),
    /// Run the local emulator of the service (Webhooks API, messages, invoker with retries).
    Emulate(crate::cli_api::EmulateArgs),
    /// Make the emulator receive a message from a handset (fires the RECEIVED webhooks).
    Inject(crate::cli_api::InjectArgs),
}

#[derive(Debug, Clone, Args)]
pub struct DataDirArg {
    /// Where the invocation database lives (default: $HOOKSCOPE_DATA_DIR, else the platform
    /// data directory).
    #[arg(long, value_name = "DIR", value_parser = clap::builder::TypedValueParser::try_map(clap::builder::PathBufValueParser::new(), non_blank_dir))]
    pub data_dir: Option<PathBuf>,
}

/// `--data-dir`: a name of spaces alone is refused (it had made a directory called " ",
/// whose name then could not be seen in a message); any other name, UTF-8 or not, is taken.
fn non_blank_dir(dir: PathBuf) -> Result<PathBuf, String> {
    if dir.to_string_lossy().trim().is_empty() {
        return Err(
            "a directory name of spaces alone is not taken: give the directory, or leave --data-dir out for the default".to_owned(),
        );
    }
    Ok(dir)
}

impl Cli {
    /// Whether the API's URL of a client command came from `HOOKSCOPE_API_URL`, not a flag.
    pub fn api_url_from_env(&self) -> bool {
        use crate::cli_api::{Source, WebhooksCommand};
        let api = match &self.command {
            Some(Command::Webhooks(w)) => Some(match w {
                WebhooksCommand::List(a) => a,
                WebhooksCommand::Get { api, .. }
                | WebhooksCommand::Create { api, .. }
                | WebhooksCommand::Update { api, .. }
                | WebhooksCommand::Delete { api, .. }
                | WebhooksCommand::Enable { api, .. }
                | WebhooksCommand::Disable { api, .. } => api,
            }),
            Some(Command::Send(a)) => Some(&a.api),
            Some(Command::SendTest(a)) => Some(&a.api),
            Some(Command::Inject(a)) => Some(&a.api),
            Some(Command::Emulate(e)) => e
                .action
                .as_ref()
                .map(|crate::cli_api::EmulateAction::Inject(a)| &a.api),
            _ => None,
        };
        api.is_some_and(|a| matches!(a.base_url().1, Source::Env(_)))
    }

    /// Whether `--data-dir` was given, before the subcommand or after it.
    pub fn data_dir_given(&self) -> bool {
        let after = match &self.command {
            Some(Command::Listen(a)) => a.data.data_dir.is_some(),
            Some(Command::Log(a)) => a.data.data_dir.is_some(),
            Some(Command::Show(a)) => a.data.data_dir.is_some(),
            _ => false,
        };
        after || self.data.data_dir.is_some()
    }

    /// Options given before the subcommand: `hookscope --data-dir D log` means `hookscope log
    /// --data-dir D` (the subcommand's own option wins). An option that does nothing for the
    /// subcommand is an error, not silently ignored.
    pub fn settle_global_options(&mut self) -> Result<(), String> {
        // A PNG is what is written: a .jpg name would hold PNG data without a word.
        if let Some(shot) = &self.screenshot
            && !shot
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("png"))
        {
            return Err(format!(
                "--screenshot writes a PNG: give a file name ending in .png, not {}",
                shot.display()
            ));
        }
        if self.demo
            && let Some(dir) = &self.data.data_dir
        {
            return Err(format!(
                "--demo opens the window on a temporary store of its own, removed when the window closes, so it does not go with --data-dir: leave out --data-dir for the demo, or leave out --demo to open {}",
                dir.display()
            ));
        }
        let Some(command) = &mut self.command else {
            return Ok(());
        };
        let name = command.name();
        if self.demo || self.screenshot.is_some() {
            let flag = if self.demo { "--demo" } else { "--screenshot" };
            return Err(format!(
                "{flag} is for the window; it does not go with `hookscope {name}`"
            ));
        }
        let Some(dir) = self.data.data_dir.clone() else {
            return Ok(());
        };
        let data = match command {
            Command::Listen(a) => &mut a.data,
            Command::Log(a) => &mut a.data,
            Command::Show(a) => &mut a.data,
            _ => {
                return Err(format!(
                    "--data-dir does not apply to `hookscope {name}` (it keeps no calls)"
                ));
            }
        };
        match &data.data_dir {
            // Two places named, and only one can be read or written: the user says which.
            Some(after) if std::path::absolute(after).ok() != std::path::absolute(&dir).ok() => {
                Err(format!(
                    "--data-dir is given twice, {} before `{name}` and {} after it: give it once",
                    dir.display(),
                    after.display()
                ))
            }
            _ => {
                data.data_dir = Some(dir);
                Ok(())
            }
        }
    }
}

impl Command {
    /// The subcommand as typed.
    fn name(&self) -> &'static str {
        match self {
            Command::Listen(_) => "listen",
            Command::Log(_) => "log",
            Command::Show(_) => "show",
            Command::Schedule(_) => "schedule",
            Command::Webhooks(_) => "webhooks",
            Command::Send(_) => "send",
            Command::SendTest(_) => "send-test",
            Command::Emulate(_) => "emulate",
            Command::Inject(_) => "inject",
        }
    }
}

impl DataDirArg {
    /// The data directory, made absolute (so what is printed can be pasted anywhere).
    pub fn resolve(&self) -> PathBuf {
        let dir = self.data_dir.clone().unwrap_or_else(default_data_dir);
        std::path::absolute(&dir).unwrap_or(dir)
    }
}

#[derive(Debug, Clone, Args)]
pub struct AnswerArgs {
    /// Status code to answer (200-599).
    #[arg(
        long,
        default_value_t = 200,
        value_name = "CODE",
        value_parser = crate::text::parse_answer_code,
        allow_hyphen_values = true
    )]
    pub respond: u16,
    /// Retry-After header to send: seconds, or an HTTP date.
    #[arg(long, value_name = "SECONDS|DATE", value_parser = crate::text::parse_retry_after_value, allow_hyphen_values = true)]
    pub retry_after: Option<String>,
    /// Body of the answer.
    #[arg(long, value_name = "TEXT")]
    pub body: Option<String>,
    /// Body of the answer, read from a file (`-`: standard input), for a body too long to
    /// type or to pass as one argument (Linux takes 128 KiB at most). UTF-8 text, up to 32 MiB.
    #[arg(long, value_name = "PATH", conflicts_with = "body")]
    pub body_file: Option<PathBuf>,
    /// Content type of the answer, with a body or without (a body without one is
    /// text/plain; charset=utf-8).
    #[arg(long, value_name = "TYPE")]
    pub content_type: Option<String>,
    /// Wait before answering, e.g. 500ms, 1.5s, 35s (past 30 s the service counts a timeout).
    #[arg(long, value_parser = parse_delay, value_name = "DURATION", allow_hyphen_values = true)]
    pub delay: Option<std::time::Duration>,
}

/// `--delay`: a duration, held to the millisecond. One finer than that is refused rather than
/// rounded without a word (`0.4ms` had answered at once, the banner saying no delay).
fn parse_delay(s: &str) -> Result<std::time::Duration, String> {
    let (d, rounded) = crate::text::parse_duration_rounded(s).map_err(|e| e.to_string())?;
    // Refused here, so the message names the flag as for every other value it refuses (it
    // had come after the parse, as "the answer cannot be used").
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    if ms > crate::responder::MAX_DELAY_MS {
        return Err(crate::responder::AnswerError::Delay(ms).to_string());
    }
    if rounded {
        return Err(format!(
            "\"{}\" is finer than a delay can be: an answer is held to the millisecond (give {}ms{})",
            escape_control(s.trim()),
            d.as_millis(),
            if d.is_zero() {
                ", or leave --delay out"
            } else {
                ""
            }
        ));
    }
    Ok(d)
}

/// The longest answer body `--body-file` reads.
pub const MAX_BODY_FILE: u64 = crate::responder::MAX_ANSWER_BODY as u64;

impl AnswerArgs {
    /// The answer the flags give, its body read from `--body-file` if one is named.
    pub fn answer(&self) -> Result<Answer, CliError> {
        let body = match &self.body_file {
            Some(path) => Some(read_body_file(path)?),
            None => self.body.clone(),
        };
        Ok(self.answer_with(body))
    }

    fn answer_with(&self, body: Option<String>) -> Answer {
        Answer {
            status: self.respond,
            retry_after: self.retry_after.clone(),
            body: body.map(Into::into),
            content_type: self.content_type.clone(),
            delay_ms: self
                .delay
                .map_or(0, |d| d.as_millis().min(u64::MAX as u128) as u64),
        }
    }
}

/// Read an answer body from `path` (`-`: standard input): UTF-8 text of at most
/// [`MAX_BODY_FILE`] bytes.
fn read_body_file(path: &Path) -> Result<String, CliError> {
    use crate::text::CappedText;
    let shown = || {
        if path.as_os_str() == "-" {
            "- (standard input)".to_owned()
        } else {
            escape_control(&path.display().to_string())
        }
    };
    let fail = |source: std::io::Error| CliError::BodyFile {
        path: shown(),
        source,
    };
    let read = if path.as_os_str() == "-" {
        use std::io::IsTerminal;
        let stdin = std::io::stdin();
        // Typed by hand, it waits for the end of the text: said, not a silent wait.
        if stdin.is_terminal() {
            crate::say!("Reading the answer's body from standard input: end it with Ctrl-D.");
        }
        crate::text::read_text_capped(stdin.lock(), 0, MAX_BODY_FILE)
    } else {
        let file = std::fs::File::open(path).map_err(fail)?;
        // Its size up front: a buffer doubling as it reads held up to twice the file.
        let size = file.metadata().map_or(0, |m| m.len());
        crate::text::read_text_capped(file, size, MAX_BODY_FILE)
    };
    read.map_err(|e| match e {
        CappedText::Io(source) => fail(source),
        CappedText::TooLarge => CliError::BodyFileTooLarge { path: shown() },
        CappedText::NotText { at } => CliError::BodyFileNotText { path: shown(), at },
    })
}

#[derive(Debug, Clone, Args)]
pub struct ListenArgs {
    /// Address to listen on. The default keeps the receiver on this machine.
    #[arg(long, default_value = "127.0.0.1", value_name = "IP", value_parser = crate::text::parse_bind)]
    pub bind: IpAddr,
    /// Port to listen on; 0 picks a free one (the address chosen is printed).
    #[arg(long, default_value_t = receiver::DEFAULT_PORT, value_parser = crate::text::parse_port, allow_hyphen_values = true)]
    pub port: u16,
    #[command(flatten)]
    pub data: DataDirArg,
    #[command(flatten)]
    pub answer: AnswerArgs,
    /// Largest body kept whole; a larger one is answered 413 (e.g. 32MiB, 100MB).
    #[arg(long, default_value = "32MiB", value_parser = crate::text::parse_body_limit, value_name = "SIZE", allow_hyphen_values = true)]
    pub body_limit: u64,
    /// The word in the header names (X-<WORD>-Event) and the invoker's User-Agent.
    #[arg(long, default_value = "Service", value_name = "WORD", value_parser = crate::text::parse_brand)]
    pub brand: String,
    /// Answer the registration check with the chosen code too, instead of 200.
    #[arg(long)]
    pub no_pass_registration_check: bool,
    /// Commit without fsync: survives the process being killed, not a power loss; faster.
    #[arg(long)]
    pub no_fsync: bool,
    /// Print each call as a JSON line instead of a text line.
    #[arg(long)]
    pub json: bool,
    /// Answer by the rules in this JSON or TOML file first (see assets/rules/); the chosen answer is the
    /// fallback.
    #[arg(long, value_name = "FILE")]
    pub rules: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct LogArgs {
    #[command(flatten)]
    pub data: DataDirArg,
    /// How many invocations to list.
    #[arg(long, default_value_t = 50, value_parser = crate::text::parse_limit, allow_hyphen_values = true)]
    pub limit: u64,
    /// One JSON object per line.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The invocation's id (the first column of `hookscope log`).
    #[arg(allow_hyphen_values = true, value_parser = crate::text::parse_id)]
    pub id: i64,
    #[command(flatten)]
    pub data: DataDirArg,
    /// The whole record as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Clone, Args)]
pub struct ScheduleArgs {
    /// The status code answered to every attempt.
    #[arg(long, default_value_t = 503, value_name = "CODE", value_parser = crate::text::parse_status_code, allow_hyphen_values = true)]
    pub code: u16,
    /// The Retry-After the answer carries: seconds, or an HTTP date (the wait counts from now).
    #[arg(long, value_name = "SECONDS|DATE", value_parser = crate::text::parse_retry_after_value, allow_hyphen_values = true)]
    pub retry_after: Option<String>,
    /// Print the plan as JSON.
    #[arg(long)]
    pub json: bool,
    /// List every retry (by default the steady ones in the middle are given in one line).
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Store(#[from] crate::store::StoreError),
    #[error(transparent)]
    Receiver(#[from] crate::receiver::ReceiverError),
    #[error("the rules cannot be used: {0}")]
    Rules(#[from] crate::rules::RuleError),
    #[error("the answer cannot be used: {0}")]
    Answer(#[from] crate::responder::AnswerError),
    // The path as given, its control characters escaped.
    #[error("cannot read the answer body from --body-file {path}: {}", crate::text::io_words(.source))]
    BodyFile {
        path: String,
        source: std::io::Error,
    },
    #[error(
        "the answer body in --body-file {path} is longer than 32 MiB, the most an answer takes"
    )]
    BodyFileTooLarge { path: String },
    #[error(
        "the answer body in --body-file {path} is not UTF-8 text (byte {at}, counting from 1, is not): an answer's body is text"
    )]
    BodyFileNotText { path: String, at: usize },
    #[error("no invocation with id {id} in {dir}; `hookscope log` lists the ids")]
    NotFound { id: i64, dir: PathBuf },
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
    #[error("cannot encode JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error(
        "{} could not be read (named above); {}",
        crate::text::count(*unreadable as u64, "record", "records"),
        match listed {
            0 => "no other is listed".to_owned(),
            1 => "the other one is listed".to_owned(),
            n => format!("the other {n} are listed"),
        }
    )]
    Unreadable { unreadable: usize, listed: usize },
}

impl CliError {
    /// The reader of the output went away (`| head`): nothing to report.
    pub fn is_closed_output(&self) -> bool {
        matches!(self, CliError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// The flags given together make an answer HTTP cannot send (`--respond 304 --body x`):
    /// a usage error, exit status 2 like every value the command line refuses on its own.
    /// Flag values that cannot be used, the `--rules` file among them: exit status 2.
    pub fn is_usage(&self) -> bool {
        use crate::receiver::ReceiverError;
        use crate::store::StoreError;
        matches!(
            self,
            CliError::Answer(_)
                | CliError::Rules(_)
                | CliError::BodyFile { .. }
                | CliError::BodyFileTooLarge { .. }
                | CliError::BodyFileNotText { .. }
                // A --bind address that is not this machine's, a --data-dir that is a file: the
                // value itself cannot be used, as the README promises status 2 for.
                | CliError::Receiver(ReceiverError::NotHere { .. })
                | CliError::Store(
                    StoreError::NotADirectory { .. }
                        | StoreError::NotADirectoryToRead { .. }
                        | StoreError::DatabaseIsADirectory { .. }
                        // Another program's data where the database goes: refused, like a file.
                        | StoreError::NotHookscope { .. }
                        | StoreError::NotSqlite { .. }
                )
        ) || matches!(
            self,
            // A --data-dir under a file (`a-file/sub`): a path that cannot be a directory.
            CliError::Store(StoreError::CreateDir { source, .. })
                if source.kind() == std::io::ErrorKind::NotADirectory
        )
    }
}

/// What `listen` says as it stops with `n` calls in progress: a held answer goes at once, but a
/// body still arriving gets [`STOP_GRACE`](crate::receiver::STOP_GRACE) to finish (it had said
/// "answered at once" and then waited 3 s).
fn stopping_message(n: usize) -> String {
    match n {
        0 => "Stopping (Ctrl-C again quits at once).".to_owned(),
        n => format!(
            "Stopping: {} in progress {} answered at once and stored first (a body still arriving gets {} more; Ctrl-C again quits without them).",
            crate::text::count(n as u64, "call", "calls"),
            if n == 1 { "is" } else { "are" },
            crate::text::human_duration(crate::receiver::STOP_GRACE)
        ),
    }
}

/// One line of `listen` for a recorded call, at local time of day. Everything from the request
/// is escaped.
pub fn format_line(s: &Summary) -> String {
    line_at(s, "%H:%M:%S%.3f")
}

/// One line of `log`: as `listen`'s, with the date (a stored history spans days).
pub fn log_line(s: &Summary) -> String {
    line_at(s, "%Y-%m-%d %H:%M:%S%.3f")
}

/// The most of a value taken from the request (a path, an event, a delivery id) a line of
/// `listen` or `log` gives: the rest is counted (`show` has it whole).
const LINE_VALUE_CHARS: usize = 200;

fn line_at(s: &Summary, time_format: &str) -> String {
    // Without spaces: a script splits the line at them.
    // Cut by the characters as printed, escapes included (a thousand U+202E, each written
    // `\u{202e}`, had printed 1,600 characters), and never inside an escape.
    let cut = |v: &str| crate::text::escape_cut_compact(v, LINE_VALUE_CHARS);
    let opt = |v: &Option<String>| cut(v.as_deref().unwrap_or("-"));
    // A request HTTP refused has no event (its headers are not read): `-`, as for one whose
    // request line was read; the outcome's column says `not-http` for both (the event's
    // column had said it for bytes with no request line only, and a script reading it found
    // two shapes).
    let event = if s.registration_check {
        "registration-check".to_owned()
    } else {
        opt(&s.event)
    };
    format!(
        "{}  {:<7} {}  {}  delivery={}  attempt={}  messages={}  -> {} {}  findings={}",
        s.received_at
            .with_timezone(&chrono::Local)
            .format(time_format),
        // Seven wide: every method HTTP names (`OPTIONS`, `CONNECT`) keeps the columns after it
        // in line; a longer one (`PROPFIND`) shifts only its own line.
        if s.method.is_empty() {
            "-".to_owned()
        } else {
            cut(&s.method)
        },
        if s.path.is_empty() {
            "-".to_owned()
        } else {
            cut(&s.path)
        },
        event,
        opt(&s.delivery),
        s.attempt.map_or("-".to_owned(), |a| a.to_string()),
        s.messages.map_or("-".to_owned(), |m| m.to_string()),
        s.answer_status,
        // The HTTP layer's own answer to a request it refused: not one the States table reads.
        if s.not_http {
            "not-http"
        } else {
            s.outcome.as_str()
        },
        // The registration check's own note is not a problem (as in the window's list).
        s.problems()
    )
}

/// The JSON object `listen --json` prints for one call: the fields of the line, named as in
/// `log --json`; `findings` counts problems as the line does (a registration check's own note
/// is not one). A request the HTTP layer refused with no request line to read has `null` for
/// its method and path, as it has no query.
pub fn listen_json(s: &Summary) -> serde_json::Value {
    let unless_empty = |t: &String| (!t.is_empty()).then(|| t.clone());
    serde_json::json!({
        "id": s.id,
        "received_at": s.received_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
        "method": unless_empty(&s.method),
        "path": unless_empty(&s.path),
        "query": s.query,
        "event": s.event,
        "delivery": s.delivery,
        "attempt": s.attempt,
        "webhook_id": s.webhook_id,
        "messages": s.messages,
        "answer_status": s.answer_status,
        "outcome": s.outcome.as_str(),
        "body_size": s.body_size,
        "findings": s.problems(),
        "registration_check": s.registration_check,
        "not_http": s.not_http,
        "rule": s.rule,
        "rule_name": s.rule.as_deref().and_then(crate::responder::rule_name),
    })
}

/// The JSON object `log --json` prints for one invocation.
pub fn log_json(s: &Stored) -> serde_json::Value {
    let inv = &s.inv;
    let mut v = listen_json(&Summary::of(s.id, inv));
    if let Some(o) = v.as_object_mut() {
        // The findings themselves, not how many.
        o.insert("findings".into(), serde_json::json!(inv.findings));
    }
    v
}

/// A body for JSON output: its text when it is UTF-8 (`body`), else its bytes in hex
/// (`body_hex`).
fn body_fields(bytes: &[u8]) -> (Option<String>, Option<String>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (Some(text.to_owned()), None),
        Err(_) => (None, Some(crate::text::hex(bytes))),
    }
}

/// The JSON object `show --json` prints: every field of `log --json`, and the headers, body
/// and answer in full. Bodies are text (or hex when they are not UTF-8), headers are
/// `{name, value}` objects in the order received.
pub fn show_json(s: &Stored) -> serde_json::Value {
    let inv = &s.inv;
    let mut v = log_json(s);
    let (body, body_hex) = body_fields(&inv.body);
    let (answer_body, answer_body_hex) = body_fields(&inv.answer.body);
    let extra = serde_json::json!({
        "peer": inv.peer,
        "headers": inv.headers,
        "body": body,
        "body_hex": body_hex,
        "body_kept": inv.body_kept,
        "declared_size": inv.declared_size,
        "took_us": inv.took_us,
        "answer": {
            "status": inv.answer.status,
            "headers": inv.answer.headers.iter()
                .map(|(name, value)| serde_json::json!({"name": name, "value": value}))
                .collect::<Vec<_>>(),
            "body": answer_body,
            "body_hex": answer_body_hex,
            "delay_ms": inv.answer.delay_ms,
        },
    });
    if let (Some(v), serde_json::Value::Object(extra)) = (v.as_object_mut(), extra) {
        v.extend(extra);
    }
    v
}

/// One rule for the banner: its name, its answer, how often it answers, and what the service
/// makes of an answer that is not simply its code.
/// (`notes`: false for the rule that takes every call, whose answer the lines after the list
/// explain in full.)
fn rule_line(r: &crate::rules::Rule, quoted: &dyn Fn(&str) -> String, notes: bool) -> String {
    let mut answer = r.answer.summary();
    // A note joins the answer's own brackets: `503 (Retry-After 120 s; the service ...)`.
    let mut note = |words: &str| {
        answer = match answer.strip_suffix(')') {
            Some(open) => format!("{open}; {words})"),
            None => format!("{answer} ({words})"),
        };
    };
    if r.answer.too_late() {
        note("past the service's wait: a temporary failure");
    } else if notes {
        if let Some(brief) = r.answer.retry_after_brief() {
            note(brief);
        }
        if r.answer.outcome() == crate::contract::Outcome::RetrySlowDown {
            note("the service slows down: see below");
        }
    }
    let mut t = format!("{}: {answer}", quoted(&r.name));
    if let Some(n) = r.when.every_nth.filter(|&n| n > 1) {
        t += &format!(
            ", every {} call it matches",
            crate::text::ordinal(u64::from(n))
        );
    }
    if let Some(n) = r.times {
        t += &format!(
            ", {}",
            crate::text::count(u64::from(n), "time, then retires", "times, then retires")
        );
    }
    t
}

/// The lines of `listen`'s banner that say how calls will be answered: the rules (first match
/// wins); then the answer that calls reach when no rule takes them, or the rule that takes every
/// call (and the rules it hides); what the service makes of that answer; and what happens to the
/// registration check.
pub fn answer_banner(
    answer: &Answer,
    rules: Option<&crate::rules::RuleSet>,
    pass_registration_check: bool,
) -> Vec<String> {
    let mut lines = Vec::new();
    let quoted = |name: &str| format!("\"{}\"", escape_control(name));
    let mut last = answer;
    let mut lead = "Answering".to_owned();
    match rules {
        Some(rules) if rules.rules.is_empty() => {
            lines.push("Rules: the file has none, so every call gets the answer below.".into());
        }
        Some(rules) => {
            lines.push("Rules, first match wins:".into());
            let catch_all = rules.catch_all().map(|(i, _)| i);
            for (i, r) in rules.rules.iter().enumerate() {
                let notes = catch_all != Some(i);
                lines.push(format!("  {}. {}", i + 1, rule_line(r, &quoted, notes)));
            }
            match rules.catch_all() {
                Some((i, rule)) => {
                    lines.push(format!(
                        "The rule {} matches every call: the answer chosen with --respond is not used.",
                        quoted(&rule.name)
                    ));
                    let hidden: Vec<String> = rules.rules[i + 1..]
                        .iter()
                        .map(|r| quoted(&r.name))
                        .collect();
                    if !hidden.is_empty() {
                        lines.push(format!(
                            "Never used, since that rule comes first: {}.",
                            hidden.join("; ")
                        ));
                    }
                    last = &rule.answer;
                    lead = if i == 0 {
                        "Every call is answered".into()
                    } else {
                        format!("Calls that reach {} are answered", quoted(&rule.name))
                    };
                }
                None => lead = "Calls no rule matches are answered".into(),
            }
        }
        None => {}
    }
    let check = if pass_registration_check && last.delay_ms > 0 {
        // Answered before the delay too, so registering works whatever the delay.
        " (the registration check still gets 200, at once)"
    } else if pass_registration_check {
        " (the registration check still gets 200)"
    } else if last.status != 200 || last.too_late() {
        " (the registration check too: the service will refuse to register this URL)"
    } else {
        ""
    };
    lines.push(format!(
        "{lead} {}: {}{check}",
        last.summary(),
        last.describe()
    ));
    // A 429 in a rule the list notes, or in the answer above: how the service slows down.
    let slows =
        |a: &Answer| a.outcome() == crate::contract::Outcome::RetrySlowDown && !a.too_late();
    let a_rule_slows = rules.is_some_and(|rs| {
        let catch_all = rs.catch_all().map(|(i, _)| i);
        rs.rules
            .iter()
            .enumerate()
            .any(|(i, r)| catch_all != Some(i) && slows(&r.answer))
    });
    if slows(last) || a_rule_slows {
        lines.push(format!(
            "{} (Assumed: the contract does not say how.)",
            crate::contract::slowdown::RULE
        ));
    }
    if last.too_late() {
        lines.push(format!(
            "The service waits {} at most for an answer: held back {}, every call counts as a temporary failure, whatever its code{}.",
            crate::text::human_duration(crate::contract::ANSWER_TIMEOUT),
            crate::text::human_duration(last.delay()),
            if last.retry_after.is_some() {
                " and Retry-After (never read)"
            } else {
                ""
            }
        ));
    } else if let Some(note) = last.retry_after_note() {
        lines.push(note);
    }
    lines
}

pub async fn listen(args: ListenArgs) -> Result<(), CliError> {
    let answer = args.answer.answer()?;
    answer.check()?;
    let rules = match &args.rules {
        Some(path) => {
            let (rules, recipe) = crate::rules::RuleSet::load_or_recipe(path)?;
            if let Some(recipe) = recipe {
                crate::say!(
                    "There is no file {}: using Hookscope's own recipe {recipe}.",
                    crate::text::quoted(&path.display().to_string())
                );
            }
            Some(rules)
        }
        None => None,
    };
    // Ctrl-C and SIGTERM stop in order; registered first, so neither can kill a call midway.
    let mut signals = crate::signals::StopSignals::register();
    let dir = args.data.resolve();
    let durability = if args.no_fsync {
        Durability::Normal
    } else {
        Durability::Full
    };
    let config = ReceiverConfig {
        bind: args.bind,
        port: args.port,
        body_limit: args.body_limit,
        brand: Brand::new(&args.brand),
        ..ReceiverConfig::default()
    };
    // The port first: a port in use must not leave a new, empty database behind.
    let bound = receiver::bind(config).await?;
    let store = Store::open(&dir, durability).map_err(|e| e.in_store(&dir))?;
    // The newest call stored before this run: the printer owes a line only to those after it.
    let stored_before = store.last_id().ok().flatten().unwrap_or(0);
    let responder = Responder::new(ResponderConfig {
        answer: answer.clone(),
        pass_registration_check: !args.no_pass_registration_check,
    });
    let answer_lines = answer_banner(&answer, rules.as_ref(), !args.no_pass_registration_check);
    if let Some(rules) = rules {
        responder.set_rules(rules);
    }
    // Subscribed before the first call is served: one already waiting in the port's queue
    // gets its line too.
    let (running, mut events) = bound.start_subscribed(store.clone(), responder);
    // A call held back by a delay gets its line when it is answered and stored: until then it
    // is said at once on stderr, so a forced time-out does not look like a call that never came.
    let mut held = running.watch_held();
    // Read once at first: a call held before this watch began is said too.
    held.mark_changed();
    tokio::spawn(async move {
        let mut next_key = 0;
        while held.changed().await.is_ok() {
            let new: Vec<_> = held
                .borrow_and_update()
                .iter()
                .filter(|h| h.key >= next_key)
                .cloned()
                .collect();
            for h in new {
                next_key = h.key + 1;
                crate::say!("{}", held_line(&h));
            }
        }
    });
    // The banner is a courtesy: a closed stderr (`2>&1 | head -2`) is no reason not to listen,
    // nor to leave without closing the store (it had ended `listen` at once, -wal and -shm left).
    let banner = || -> std::io::Result<()> {
        let mut err = std::io::stderr().lock();
        if running.addr.ip().is_unspecified() {
            writeln!(
                err,
                "Hookscope is listening on every address of this machine, port {}: {} from here",
                running.addr.port(),
                running.url()
            )?;
        } else {
            writeln!(err, "Hookscope is listening on {}", running.url())?;
        }
        if let Some(warning) = crate::cli_api::exposure_warning(
            running.addr.ip(),
            crate::cli_api::DefaultPasswords::default(),
        ) {
            writeln!(err, "{warning}")?;
        }
        writeln!(
            err,
            "Calls are stored in {}",
            crate::text::escape_control(&store.db_path().display().to_string())
        )?;
        for line in &answer_lines {
            writeln!(err, "{line}")?;
        }
        writeln!(err, "Press Ctrl-C to stop.")?;
        Ok(())
    };
    let _ = banner();
    // Printing runs on its own thread: a slow or blocked terminal never holds up the receiver
    // (past 4096 unprinted calls, lines are skipped and counted; the calls are still stored).
    let json = args.json;
    let printed = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let printed_here = printed.clone();
    // The newest call whose line is out: a correction is printed after it (see below).
    let printed_id = Arc::new(std::sync::atomic::AtomicI64::new(0));
    let printed_id_here = printed_id.clone();
    // Standard output closed by its reader (`listen --json | head -1`, a script waiting for
    // one call): `listen` stops in order, as on a first Ctrl-C, rather than run on unseen.
    // Seen when a line cannot be written, or at once where the system says the pipe's reader
    // has gone (a script's `head -1` ends with the first call, not with the second).
    let stdout_gone = StdoutGone::default();
    stdout_gone.watch();
    let stdout_closed = stdout_gone.clone();
    let printer = std::thread::spawn(move || {
        let mut count: u64 = 0;
        // Once a line could not be written: said once, and the others not tried.
        let mut writing = true;
        loop {
            printed_here.store(count, std::sync::atomic::Ordering::Relaxed);
            match events.blocking_recv() {
                Ok(rec) => {
                    count += 1;
                    let line = if json {
                        crate::text::json_for_terminal(listen_json(&rec.summary).to_string())
                    } else {
                        format_line(&rec.summary)
                    };
                    if writing {
                        let mut out = std::io::stdout().lock();
                        if let Err(e) = writeln!(out, "{line}").and_then(|_| out.flush()) {
                            writing = false;
                            if e.kind() == std::io::ErrorKind::BrokenPipe {
                                stdout_closed.gone();
                            } else {
                                // `> /dev/full`: the calls are still stored; said, not lost
                                // without a word.
                                crate::say!(
                                    "Cannot write to standard output ({}): no more lines are printed; every call is still stored, see `hookscope log`.",
                                    crate::text::io_words(&e)
                                );
                            }
                        }
                    }
                    printed_id_here.fetch_max(rec.summary.id, std::sync::atomic::Ordering::Relaxed);
                }
                Err(tokio::sync::broadcast::error::RecvError::Lagged(n)) => {
                    count += n;
                    crate::say!(
                        "({} not printed: the terminal could not keep up; they are stored, see `hookscope log`)",
                        crate::text::count(n, "call", "calls")
                    );
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return count,
            }
        }
    });
    tokio::select! {
        _ = signals.next() => {}
        _ = stdout_gone.notified() => {}
    }
    crate::say!("{}", stopping_message(running.in_progress()));
    let quitter = running.quitter();
    tokio::select! {
        _ = running.shutdown() => {}
        _ = signals.next_interrupt() => {
            // Not answered, so not acknowledged: the service retries them. Those already
            // stored are noted as never answered, so the store does not claim an answer.
            let report = quitter.quit_now().await;
            crate::say!("{}", quit_message(&report));
            // Every stored call's line out before the process ends (a quick second Ctrl-C had
            // ended it before the printer wrote the lines of calls the first one had answered
            // and stored), and before the corrections that follow them: the printer may be
            // behind (a slow terminal) for a moment.
            let newest = {
                let store = store.clone();
                tokio::task::spawn_blocking(move || store.last_id().ok().flatten())
                    .await
                    .ok()
                    .flatten()
            };
            if let Some(last) = newest
                .max(report.stored.iter().max().copied())
                .filter(|last| *last > stored_before)
            {
                let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
                while printed_id.load(std::sync::atomic::Ordering::Relaxed) < last
                    && std::time::Instant::now() < deadline
                {
                    tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                }
            }
            // Their lines, printed as they were stored, gave the answer chosen for them, which
            // never went: each is printed again as the store has it now ("-> 200 succeeded"
            // had stood on stdout for a call the caller got no answer to).
            let store = store.clone();
            let ids = report.stored.clone();
            let lines = tokio::task::spawn_blocking(move || corrected_lines(&store, &ids, json))
                .await
                .unwrap_or_default();
            let mut out = std::io::stdout().lock();
            for line in lines {
                let _ = writeln!(out, "{line}");
            }
            let _ = out.flush();
            return Ok(());
        }
    }
    // The printer ends when the last listener handle goes; a stalled connection left behind by
    // the stop can hold one, so its count is read as it stands after a moment instead.
    let joined = tokio::task::spawn_blocking(move || printer.join().unwrap_or(0));
    let count = match tokio::time::timeout(std::time::Duration::from_secs(2), joined).await {
        Ok(Ok(count)) => count,
        _ => printed.load(std::sync::atomic::Ordering::Relaxed),
    };
    store.fold_before_exit().await;
    drop(quitter);
    // Closed, when nothing else holds it (a stalled connection may): SQLite then removes the
    // -wal and -shm beside the file, which a process ending with its connections open leaves.
    let closed =
        tokio::task::spawn_blocking(move || store.close_within(std::time::Duration::from_secs(2)));
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), closed).await;
    crate::say!(
        "Stopped. {} recorded in this run.",
        crate::text::count(count, "call", "calls")
    );
    Ok(())
}

/// That `listen`'s standard output has lost its reader: said once on stderr, and the stop
/// it asks for taken by whoever waits (a permit is kept for a wait that comes later).
#[derive(Clone, Default)]
struct StdoutGone {
    said: Arc<std::sync::atomic::AtomicBool>,
    notify: Arc<tokio::sync::Notify>,
}

impl StdoutGone {
    fn gone(&self) {
        if !self.said.swap(true, std::sync::atomic::Ordering::SeqCst) {
            crate::say!(
                "Standard output was closed by the program reading it: stopping, as on Ctrl-C (every call is stored, see `hookscope log`)."
            );
            self.notify.notify_one();
        }
    }

    async fn notified(&self) {
        self.notify.notified().await;
    }

    /// Where standard output is a pipe, a thread that waits for the system to say its reader
    /// has gone (Linux and the BSDs flag the write end of a pipe whose reader closed it), so
    /// the stop does not wait for the next call's line to fail. A terminal or a file is left
    /// alone: a line that fails there is said when it fails.
    fn watch(&self) {
        #[cfg(unix)]
        {
            // SAFETY: fstat fills the struct it is given; zeroed is a valid value of it.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: fd 1 is this process's standard output; `st` is a valid out pointer.
            let is_pipe = unsafe { libc::fstat(libc::STDOUT_FILENO, &mut st) } == 0
                && (st.st_mode & libc::S_IFMT) == libc::S_IFIFO;
            if !is_pipe {
                return;
            }
            let me = self.clone();
            let _ = std::thread::Builder::new()
                .name("stdout-watch".into())
                .spawn(move || {
                    loop {
                        let mut fd = libc::pollfd {
                            fd: libc::STDOUT_FILENO,
                            events: 0,
                            revents: 0,
                        };
                        // SAFETY: one valid pollfd, for as long as the call; no timeout.
                        let n = unsafe { libc::poll(&mut fd, 1, -1) };
                        if n > 0 {
                            // Anything else it says (POLLNVAL) ends the watch too: no spin.
                            if fd.revents & (libc::POLLERR | libc::POLLHUP) != 0 {
                                me.gone();
                            }
                            return;
                        }
                        if n < 0
                            && std::io::Error::last_os_error().kind()
                                != std::io::ErrorKind::Interrupted
                        {
                            return;
                        }
                    }
                });
        }
    }
}

/// The stderr line of `listen` for a call whose answer is held back by a delay, as it arrives.
fn held_line(h: &crate::receiver::Held) -> String {
    // Its arrival as the stored line will give it, so the two lines pair up.
    format!(
        "{}  held: {}; its line follows when it is answered",
        h.received_at
            .with_timezone(&chrono::Local)
            .format("%H:%M:%S%.3f"),
        escape_control(&h.announce())
    )
}

/// The lines `listen` prints again, after a second Ctrl-C, for the calls `ids` that were stored
/// and never answered: each as the store has it now (`retry-temporary`), marked as a correction
/// of the line printed when it was stored (` (corrected: never answered, Hookscope quit at
/// once)`; with `--json`, `"corrected": true`). A call that cannot be read is left out: its
/// id is in the quit message.
fn corrected_lines(store: &Store, ids: &[i64], json: bool) -> Vec<String> {
    ids.iter()
        .filter_map(|&id| store.get_without_bodies(id).ok().flatten())
        .map(|s| {
            let summary = Summary::of(s.id, &s.inv);
            if json {
                let mut v = listen_json(&summary);
                if let Some(o) = v.as_object_mut() {
                    o.insert("corrected".into(), serde_json::Value::Bool(true));
                }
                crate::text::json_for_terminal(v.to_string())
            } else {
                format!(
                    "{}  (corrected: never answered, Hookscope quit at once)",
                    format_line(&summary)
                )
            }
        })
        .collect()
}

/// What a second Ctrl-C did, in a sentence.
fn quit_message(r: &crate::receiver::QuitReport) -> String {
    let n = r.unanswered.max(r.stored.len());
    let ids = id_ranges(&r.stored);
    let stored = match r.stored.len() {
        0 => String::new(),
        s if s == n => format!(
            " {} already stored, and marked as never answered ({}): {ids}.",
            if s == 1 { "It was" } else { "They were" },
            crate::store::QUIT_BEFORE_ANSWER
        ),
        s => format!(
            " {s} of them {} already stored, and marked as never answered ({}): {ids}; the others were not stored.",
            if s == 1 { "was" } else { "were" },
            crate::store::QUIT_BEFORE_ANSWER
        ),
    };
    // A registration check is not sent again: the service refuses the URL instead.
    let again = match (r.checks, n) {
        (0, 1) => "so the service sends it again".to_owned(),
        (0, _) => "so the service sends them again".to_owned(),
        (c, _) if c == n => format!(
            "so the service refuses the {} (a registration check is not sent again)",
            if n == 1 { "URL" } else { "URLs" }
        ),
        (c, _) => format!(
            "so the service sends them again, but for {} (a registration check is not sent again: the service refuses its URL)",
            crate::text::count(c as u64, "registration check", "registration checks")
        ),
    };
    match n {
        0 => "Quit at once.".to_owned(),
        n => format!(
            "Quit at once: {} in progress got no answer, {again}.{}{}",
            crate::text::count(n as u64, "call", "calls"),
            match (r.stored.is_empty(), n) {
                (true, 1) => " It was not stored.",
                (true, _) => " They were not stored.",
                _ => "",
            },
            stored
        ),
    }
}

/// Sorted ids as `id 7`, `ids 3-5, 9` (at most 8 runs, then "and N more").
fn id_ranges(ids: &[i64]) -> String {
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for &id in ids {
        match runs.last_mut() {
            Some((_, end)) if id == *end + 1 => *end = id,
            _ => runs.push((id, id)),
        }
    }
    let shown: Vec<String> = runs
        .iter()
        .take(8)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    let more = runs.len().saturating_sub(8);
    format!(
        "{} {}{}",
        if ids.len() == 1 { "id" } else { "ids" },
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more runs")
        } else {
            String::new()
        }
    )
}

/// A store error named with the store it happened in (a damaged file says which, and what to
/// do).
fn in_store(dir: &std::path::Path) -> impl Fn(CliError) -> CliError + '_ {
    move |e| match e {
        CliError::Store(e) => CliError::Store(e.in_store(dir)),
        other => other,
    }
}

/// `read` of the store in `dir`, with its errors named as the store's; a damaged database, or
/// a file that holds no store, is left as it was found, without the log files SQLite made
/// beside it to read it.
fn reading(
    dir: &std::path::Path,
    read: impl FnOnce() -> Result<(), CliError>,
) -> Result<(), CliError> {
    let had_logs = crate::store::log_files_present(dir);
    let read = read().map_err(in_store(dir));
    if let Err(CliError::Store(
        crate::store::StoreError::Damaged { .. }
        | crate::store::StoreError::NoDatabase { .. }
        | crate::store::StoreError::WithoutItsLog { .. },
    )) = &read
        && !had_logs
    {
        crate::store::remove_made_log_files(dir);
    }
    read
}

pub fn log(args: LogArgs) -> Result<(), CliError> {
    let dir = args.data.resolve();
    reading(&dir, || log_in(&dir, &args))
}

fn log_in(dir: &std::path::Path, args: &LogArgs) -> Result<(), CliError> {
    let store = Store::open_read(dir)?;
    let rows = store.page_each(&Filter::default(), 0, args.limit)?;
    let mut out = std::io::stdout().lock();
    if rows.is_empty() {
        // On stderr: a script reading the list's lines (or `--json` objects) gets none, not the
        // words of a sentence; a person running it is told why there are none.
        crate::say!(
            "No invocations stored in {} yet.",
            crate::text::escape_control(&dir.display().to_string())
        );
        return Ok(());
    }
    // A record changed by hand is named on stderr in its place; the others are still listed.
    let (mut unreadable, mut listed) = (0, 0);
    let skip = |e: crate::store::StoreError,
                out: &mut std::io::StdoutLock<'_>,
                unreadable: &mut usize|
     -> Result<(), CliError> {
        match e.in_store(dir) {
            e @ crate::store::StoreError::DamagedRecord { id: Some(_), .. } => {
                *unreadable += 1;
                out.flush()?;
                crate::say!("error: {}", crate::text::escape_control(&e.to_string()));
                Ok(())
            }
            e => Err(e.into()),
        }
    };
    for row in rows {
        let row = match row {
            Ok(row) => row,
            Err(e) => {
                skip(e, &mut out, &mut unreadable)?;
                continue;
            }
        };
        if args.json {
            // `log --json` prints no body: a 500 MiB one is not read.
            let full = match store.get_without_bodies(row.id) {
                Ok(Some(full)) => full,
                Ok(None) => continue,
                Err(e) => {
                    skip(e, &mut out, &mut unreadable)?;
                    continue;
                }
            };
            writeln!(
                out,
                "{}",
                crate::text::json_for_terminal(serde_json::to_string(&log_json(&full))?)
            )?;
        } else {
            writeln!(out, "{:>8}  {}", row.id, log_line(&row))?;
        }
        listed += 1;
    }
    if unreadable > 0 {
        return Err(CliError::Unreadable { unreadable, listed });
    }
    Ok(())
}

pub fn show(args: ShowArgs) -> Result<(), CliError> {
    let dir = args.data.resolve();
    reading(&dir, || show_in(&dir, &args))
}

fn show_in(dir: &std::path::Path, args: &ShowArgs) -> Result<(), CliError> {
    let store = Store::open_read(dir)?;
    let Some(s) = store.get(args.id)? else {
        return Err(CliError::NotFound {
            id: args.id,
            dir: dir.to_path_buf(),
        });
    };
    // The delivery it belongs to, read across its attempts as the window's Timeline reads it.
    let delivery = match (&s.inv.delivery, s.inv.registration_check) {
        (Some(d), false) => Some(
            crate::deliveries::load(
                &store,
                d,
                s.inv.webhook_id.as_deref(),
                Schedule::default(),
                false,
            )
            .map_err(|e| e.to_string()),
        ),
        _ => None,
    };
    let now = chrono::Utc::now();
    let mut out = std::io::stdout().lock();
    if args.json {
        let mut v = show_json(&s);
        if let Some(obj) = v.as_object_mut() {
            // Beside `delivery`, its id (as `log --json` gives it).
            obj.insert(
                "timeline".into(),
                match &delivery {
                    Some(Ok(Some(d))) => delivery_json(d, now),
                    _ => serde_json::Value::Null,
                },
            );
        }
        writeln!(
            out,
            "{}",
            crate::text::json_for_terminal(serde_json::to_string_pretty(&v)?)
        )?;
        return Ok(());
    }
    write!(out, "{}", render_show(&s))?;
    match &delivery {
        Some(Ok(Some(d))) => write!(out, "{}", render_delivery(d, s.id, now))?,
        Some(Err(e)) => writeln!(out, "\nDelivery\n  cannot be read: {e}")?,
        _ => {}
    }
    Ok(())
}

/// `show`'s Delivery section: the state of the delivery `d` in plain words, its attempts (the
/// one shown, `this`, marked), and the findings across them.
pub fn render_delivery(
    d: &crate::deliveries::Delivery,
    this: i64,
    now: chrono::DateTime<chrono::Utc>,
) -> String {
    let e = escape_control;
    let mut t = format!(
        "\nDelivery {}{}\n  {}\n",
        e(&d.delivery),
        d.webhook_id
            .as_deref()
            .map_or(String::new(), |w| format!(" (webhook {})", e(w))),
        d.state.describe(now)
    );
    if d.speed_runs.len() > 1 {
        // Its clock changed along the way: each speed with its attempts, as the window says
        // (the last speed alone had been given for all of them).
        t += &format!(
            "  (its calls came from a Hookscope emulator, made at {}: each gap is read on the clock it passed on)\n",
            d.speed_runs_words()
        );
    } else if let Some(speed) = d.marked_speed.filter(|&v| v != 1.0) {
        t += &format!(
            "  (its calls came from a Hookscope emulator whose clock runs {speed}x: read on that clock)\n"
        );
    }
    let rows: Vec<[String; 5]> = d
        .attempts
        .iter()
        .map(|a| {
            [
                // A dash, as the window's Timeline and the lines of `log` give it.
                a.number.map_or("-".into(), |n| n.to_string()),
                a.at.with_timezone(&chrono::Local)
                    .format("%Y-%m-%d %H:%M:%S%.3f")
                    .to_string(),
                a.gap_text(d.marked_speed.unwrap_or(1.0))
                    .unwrap_or_else(|| "-".into()),
                a.answer_text(),
                // The stable name `log`, `listen` and `--json` print, so one grep finds it
                // in all of them.
                a.outcome.as_str().to_owned(),
            ]
        })
        .collect();
    let head = ["Attempt", "Arrived", "Gap", "Answer", "Outcome"];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].chars().count())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..4).map(width).collect();
    let line = |cells: [&str; 5], mark: &str| {
        let mut l = format!("{mark} ");
        for (i, c) in cells.iter().enumerate().take(4) {
            l += &format!("{c:<w$}  ", w = widths[i]);
        }
        l += cells[4];
        l + "\n"
    };
    t += &line(head, " ");
    for (a, r) in d.attempts.iter().zip(&rows) {
        let mark = if a.id == this { "*" } else { " " };
        t += &line([&r[0], &r[1], &r[2], &r[3], &r[4]], mark);
    }
    t += "  (* the call shown above)\n";
    if d.findings.is_empty() {
        t += "  Across its attempts: nothing against the contract.\n";
    } else {
        t += "  Across its attempts:\n";
        for f in &d.findings {
            t += &finding_line(f);
        }
    }
    t
}

/// A finding as `show` prints it: severity, the sentence (safe for a terminal), the code.
fn finding_line(f: &crate::contract::Finding) -> String {
    format!(
        "  {:<7} {}  ({})\n",
        f.severity.as_str(),
        escape_control(&f.message),
        f.code
    )
}

/// `show --json`'s `timeline`: what `render_delivery` says of the call's delivery, as fields.
fn delivery_json(
    d: &crate::deliveries::Delivery,
    now: chrono::DateTime<chrono::Utc>,
) -> serde_json::Value {
    use crate::deliveries::State;
    // Null once the window is over ("overdue: no retry came"), as when it is not retrying.
    let (next_attempt_at, retries_left) = match d.state.next_retry(now) {
        Some((next_at, left)) => (
            Some(next_at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)),
            Some(left),
        ),
        None => (None, None),
    };
    // A failed batch's messages, each retried as a delivery of its own.
    let split = match &d.state {
        State::Split { parts, .. } => serde_json::json!(
            parts
                .iter()
                .map(|(id, s)| serde_json::json!({
                    "delivery": id,
                    "state": s.as_ref().map(|s| s.describe(now)),
                    "state_code": s.as_ref().map_or("not-seen", |s| s.code(now)),
                }))
                .collect::<Vec<_>>()
        ),
        _ => serde_json::Value::Null,
    };
    serde_json::json!({
        "state": d.state.describe(now),
        "state_code": d.state.code(now),
        "next_attempt_at": next_attempt_at,
        "retries_left": retries_left,
        "split": split,
        "attempts": d.attempts.iter().map(|a| serde_json::json!({
            "id": a.id,
            "attempt": a.number,
            "received_at": a.at.to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            "gap_secs": a.gap.map(|g| g.as_secs_f64()),
            "clock_gap_secs": a.clock_gap.map(|g| g.as_secs_f64()),
            "answer_status": a.status,
            "outcome": a.outcome.as_str(),
        })).collect::<Vec<_>>(),
        "findings": d.findings,
    })
}

/// The text of `show`: every part of the record, safe for a terminal.
pub fn render_show(s: &Stored) -> String {
    let inv = &s.inv;
    let mut t = String::new();
    let e = escape_control;
    t += &format!(
        "Invocation {}  received {}  from {}\n",
        s.id,
        // Local time, as `log` prints it, with the offset that makes it exact.
        inv.received_at
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M:%S%.3f %:z"),
        e(inv.peer.as_deref().unwrap_or("?"))
    );
    t += &format!(
        "{}{}\n",
        e(&crate::store::request_phrase(&inv.method, &inv.path)),
        inv.query
            .as_deref()
            .map_or(String::new(), |q| format!("?{}", e(q)))
    );
    if inv.registration_check {
        t += "This is the registration check the service makes before it accepts a URL.\n";
    }
    t += "\nHeaders\n";
    if inv.not_http() {
        t += "  none read: the HTTP layer refused the request, whose bytes are the body below\n";
    }
    for h in &inv.headers {
        t += &format!("  {}: {}", e(&h.name), e(&h.value));
        if let Some(hex) = &h.bytes_hex {
            t += &format!("  (bytes: {hex})");
        }
        t += "\n";
    }
    t += &format!(
        "\nBody ({})\n",
        match (inv.body_kept, inv.declared_size) {
            (true, _) => human_size(inv.body_size),
            // Refused on the size it declared: only part of it came.
            (false, Some(d)) if d > inv.body_size => format!(
                "declared {}, over the limit, not kept; {} arrived",
                human_size(d),
                human_size(inv.body_size)
            ),
            (false, Some(_)) => format!("{}, over the limit, not kept", human_size(inv.body_size)),
            (false, None) => format!(
                "{}, over the limit, not kept; sent in chunks with no size declared",
                human_size(inv.body_size)
            ),
        }
    );
    if inv.body_kept {
        t += &indent(&body_text(&inv.body));
    } else {
        t += "  (not kept: only its size was recorded)\n";
    }
    t += "\nFindings\n";
    if inv.findings.is_empty() {
        // The checks across a delivery's attempts (timing, order, calls after the end) need
        // them all: `show` adds them in its Delivery section.
        t += if inv.delivery.is_some() && !inv.registration_check {
            "  none: the call keeps to the contract (on its own: the checks across its delivery's attempts are under Delivery below)\n"
        } else {
            "  none: the call keeps to the contract\n"
        };
    }
    for f in &inv.findings {
        t += &finding_line(f);
    }
    let a = &inv.answer;
    t += &format!(
        "\nAnswer\n  {} {}: {}\n",
        a.status,
        inv.answer_timing(),
        inv.meaning()
    );
    if let Some(why) = inv.unanswered()
        && !inv.not_http()
    {
        t += &format!(
            "  no answer for the service: {why}. {}\n",
            crate::store::unanswered_consequence(inv.registration_check)
        );
    }
    if let Some(rule) = &inv.rule {
        t += &format!("  chosen by: {}\n", e(rule));
    }
    // Why a Retry-After here does not set the next retry, if it does not.
    let retry_after_note = inv
        .retry_after_note()
        .map_or(String::new(), |n| format!("  ({n})"));
    for (n, v) in &a.headers {
        let note = if n.eq_ignore_ascii_case("retry-after") {
            retry_after_note.as_str()
        } else {
            ""
        };
        t += &format!("  {}: {}{note}\n", e(n), e(v));
    }
    if let Some(why) = crate::receiver::no_body_sent(&inv.method, a.status) {
        // Not a body lost: none is sent, whatever was chosen.
        t += &format!("  no body: {why}\n");
    }
    if !a.body.is_empty() {
        // Its size first, as the request's body has: a long one is seen for what it is
        // before its text scrolls by.
        t += &format!("  Body ({})\n", human_size(a.body.len() as u64));
        t += &indent(&indent(&body_text(&a.body)));
    }
    t
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("  {l}\n")).collect()
}

/// A body for a terminal: pretty JSON, else text, else a hex dump.
pub fn body_text(body: &[u8]) -> String {
    if body.is_empty() {
        return "(empty)".to_owned();
    }
    match std::str::from_utf8(body) {
        // Re-indented, every token as it came (key order, big numbers).
        Ok(text) => escape_control_keep_newlines(
            &crate::text::pretty_json(text).unwrap_or_else(|| text.to_owned()),
        ),
        // A screenful of hex; the whole body is one flag away.
        Err(_) if body.len() > SHOWN_HEX => format!(
            "{}(the whole body, as hex: `hookscope show ID --json`, field body_hex)",
            hex_dump(body, SHOWN_HEX)
        ),
        Err(_) => hex_dump(body, SHOWN_HEX),
    }
}

/// How much of a body that is not text `show` dumps in hex.
const SHOWN_HEX: usize = 4096;

fn escape_control_keep_newlines(s: &str) -> String {
    s.split('\n')
        .map(escape_control)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Offset, hex and printable columns, 16 bytes a line, up to `max` bytes.
pub fn hex_dump(bytes: &[u8], max: usize) -> String {
    let mut out = String::new();
    for (i, chunk) in bytes[..bytes.len().min(max)].chunks(16).enumerate() {
        out += &hex_line(i * 16, chunk, 16);
        out.push('\n');
    }
    if bytes.len() > max {
        out += &format!("... {} more bytes\n", bytes.len() - max);
    }
    out
}

/// One line of a hex dump of `per_line` bytes a line: the offset, the chunk's bytes (up to
/// `per_line` of them) in hex, and those that are printable, their column where a full line's is.
pub fn hex_line(offset: usize, chunk: &[u8], per_line: usize) -> String {
    let hex: Vec<String> = chunk.iter().map(|b| format!("{b:02x}")).collect();
    let text: String = chunk
        .iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect();
    format!(
        "{offset:08x}  {:<w$} {text}",
        hex.join(" "),
        w = per_line * 3
    )
}

/// What the service plans after answering `code` (with `retry_after`, which it honours only
/// with 503 and 429) to every attempt, the first failing at `now`; `None` when it does not
/// retry.
fn schedule_plan(
    code: u16,
    retry_after: Option<RetryAfter>,
    now: chrono::DateTime<chrono::Utc>,
) -> Option<crate::contract::Plan> {
    let outcome = outcome_of(code);
    let retry_after = retry_after.filter(|_| outcome.honours_retry_after());
    outcome
        .is_retry()
        .then(|| Schedule::default().plan(now, retry_after))
}

/// The wait a Retry-After asks for from `now`, in whole seconds (a date's fraction of a second
/// rounds up, so the service never comes back before it).
pub fn retry_after_seconds(value: RetryAfter, now: chrono::DateTime<chrono::Utc>) -> u64 {
    let d = value.wait_from(now);
    d.as_secs().saturating_add(u64::from(d.subsec_nanos() > 0))
}

pub fn schedule(args: ScheduleArgs) -> Result<(), CliError> {
    let now = chrono::Utc::now();
    // Checked by the parser.
    let retry_after = args.retry_after.as_deref().and_then(RetryAfter::parse);
    let mut out = std::io::stdout().lock();
    if args.json {
        let outcome = outcome_of(args.code);
        let plan = schedule_plan(args.code, retry_after, now);
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "code": args.code,
                "outcome": outcome.as_str(),
                "meaning": outcome.describe(),
                "rule": SCHEDULE_RULE,
                "slow_down": (outcome == crate::contract::Outcome::RetrySlowDown)
                    .then_some(crate::contract::slowdown::RULE),
                "retry_after_seconds": retry_after.map(|r| retry_after_seconds(r, now)),
                "retry_after_honoured": retry_after.map(|_| outcome.honours_retry_after()),
                "retry_after_effect": retry_after.map(|r| retry_after_effect(outcome, r, now)),
                "plan": plan,
            }))?
        )?;
    } else {
        write!(
            out,
            "{}",
            schedule_text_listing(args.code, retry_after, now, args.all)
        )?;
    }
    Ok(())
}

/// What the service makes of a Retry-After in an answer with this outcome, in a word for
/// `schedule --json`: `ignored` (not 503 or 429), `passed` (a date already passed: no wait),
/// `past-window` (no retry fits in the 2-day window: the message is discarded), or `honoured`.
fn retry_after_effect(
    outcome: crate::contract::Outcome,
    value: RetryAfter,
    now: chrono::DateTime<chrono::Utc>,
) -> &'static str {
    if !outcome.honours_retry_after() {
        return "ignored";
    }
    if matches!(value, RetryAfter::Until(at) if at <= now) {
        return "passed";
    }
    let first_retry = Schedule::default().next_attempt(now, 1, now, Some(value.wait_from(now)));
    if first_retry.is_none() {
        "past-window"
    } else {
        "honoured"
    }
}

/// What the service makes of a Retry-After in an answer with this outcome, in a line.
fn retry_after_line(
    outcome: crate::contract::Outcome,
    value: RetryAfter,
    now: chrono::DateTime<chrono::Utc>,
) -> String {
    let given = match value {
        RetryAfter::Wait(d) => crate::text::wait_words(d),
        // As an HTTP date is written (always GMT), so it can be given back to --retry-after.
        RetryAfter::Until(at) => crate::contract::imf_fixdate(at),
    };
    let what = if !outcome.honours_retry_after() {
        "ignored: the service honours it only with 503 and 429".to_owned()
    } else if retry_after_effect(outcome, value, now) == "past-window" {
        // As `--json`'s `retry_after_effect` says: the wait outlasts the window.
        "honoured, and it reaches past the service's 2-day retry window: no retry comes".to_owned()
    } else {
        match value {
            RetryAfter::Wait(_) => "honoured: no retry comes sooner after a failure".to_owned(),
            RetryAfter::Until(at) if at > now => format!(
                "honoured: no retry before that date, in {}; once it has passed the schedule resumes",
                human_duration(value.wait_from(now))
            ),
            RetryAfter::Until(_) => "a date already passed: no effect".to_owned(),
        }
    };
    format!("Retry-After: {given} ({what})\n")
}

/// The terminal projection of answering `code` (with `retry_after`) to every attempt, the
/// first failing at `now`, with the steady retries in the middle given in brief.
pub fn schedule_text(
    code: u16,
    retry_after: Option<RetryAfter>,
    now: chrono::DateTime<chrono::Utc>,
) -> String {
    schedule_text_listing(code, retry_after, now, false)
}

/// [`schedule_text`], listing every retry when `all` is set (`schedule --all`).
pub fn schedule_text_listing(
    code: u16,
    retry_after: Option<RetryAfter>,
    now: chrono::DateTime<chrono::Utc>,
    all: bool,
) -> String {
    let outcome = outcome_of(code);
    // A Retry-After that leaves no retry is said on the first line too: "retried on the
    // schedule" had stood above "no retry comes".
    let none_fits = retry_after.is_some()
        && outcome.honours_retry_after()
        && schedule_plan(code, retry_after, now).is_some_and(|p| p.retries.is_empty());
    let mut t = if none_fits {
        format!(
            "Answering {code}: {}; with this Retry-After, though, no retry comes (see below)\n",
            outcome.describe()
        )
    } else {
        format!("Answering {code}: {}\n", outcome.describe())
    };
    if outcome == crate::contract::Outcome::RetrySlowDown {
        t += &format!(
            "{} (Assumed: the contract does not say how.)\n",
            crate::contract::slowdown::RULE
        );
    }
    if let Some(value) = retry_after {
        t += &retry_after_line(outcome, value, now);
    }
    let Some(plan) = schedule_plan(code, retry_after, now) else {
        return t;
    };
    let local = |d: chrono::DateTime<chrono::Utc>| {
        d.with_timezone(&chrono::Local)
            .format("%d %b %H:%M:%S")
            .to_string()
    };
    t += &format!("Attempt 1 fails at {}\n", local(now));
    let n = plan.retries.len();
    // Every stepped retry and the last two; the steady ones between in brief, when there are
    // two or more of them, with the spacing they really have (a Retry-After spaces them out).
    let hidden = if n >= 10 && !all { 6..n - 2 } else { 0..0 };
    for (i, a) in plan.retries.iter().enumerate() {
        if !hidden.contains(&i) {
            t += &format!(
                "  attempt {:>3}  retry {:>3}  at {}  (+{} after the failure before, {} after the first)\n",
                a.number,
                a.retry(),
                local(a.at),
                crate::text::exact_duration(a.delay),
                crate::text::exact_duration((a.at - now).to_std().unwrap_or_default())
            );
        } else if i == hidden.start {
            let delays = plan.retries[hidden.clone()].iter().map(|a| a.delay);
            let (least, most) = (delays.clone().min(), delays.max());
            let spacing = match (least, most) {
                (Some(a), Some(b)) if a == b => {
                    format!("every {}", crate::text::exact_duration(a))
                }
                (Some(a), Some(b)) => format!(
                    "{} to {} apart",
                    crate::text::exact_duration(a),
                    crate::text::exact_duration(b)
                ),
                _ => String::new(),
            };
            t += &format!("  ... {} more retries, {spacing} ...\n", hidden.len());
        }
    }
    t += &if n == 0 {
        format!(
            "No retry: the first would come after the 2-day window, which ends {}. The message is discarded at {}, after this one attempt.\n",
            local(plan.window_end),
            local(plan.discard_at)
        )
    } else {
        format!(
            "{}, {} in all. The message is discarded at {} if the last retry fails; the 2-day window ends {}.\n",
            crate::text::count(n as u64, "retry", "retries"),
            crate::text::count(n as u64 + 1, "attempt", "attempts"),
            local(plan.discard_at),
            local(plan.window_end)
        )
    };
    t += &format!("Rule assumed: {SCHEDULE_RULE}\n");
    t
}

#[cfg(test)]
mod tests {
    #[test]
    fn stopping_says_a_body_still_arriving_gets_its_grace() {
        assert_eq!(
            super::stopping_message(0),
            "Stopping (Ctrl-C again quits at once)."
        );
        assert_eq!(
            super::stopping_message(1),
            "Stopping: 1 call in progress is answered at once and stored first (a body still arriving gets 3 s more; Ctrl-C again quits without them)."
        );
        assert!(
            super::stopping_message(2).starts_with("Stopping: 2 calls in progress are answered")
        );
    }

    #[test]
    fn a_relative_data_dir_is_made_absolute() {
        let d = DataDirArg {
            data_dir: Some("rel/dir".into()),
        };
        let path = d.resolve();
        assert!(path.is_absolute(), "{}", path.display());
        assert!(path.ends_with("rel/dir"));
    }

    /// A call whose line said "-> 200 succeeded" as it was stored, then got no answer because
    /// of a second Ctrl-C, is printed again as the store now has it.
    #[tokio::test]
    async fn a_call_left_unanswered_by_a_quit_is_printed_again_corrected() {
        use crate::store::{Durability, Invocation, Store};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path(), Durability::Normal).unwrap();
        let mut inv = Invocation::synthetic(0, b"[]");
        inv.answer.status = 200;
        inv.delivery = Some("d-1".into());
        let id = store.insert(inv).await.unwrap();
        let before = Summary::of(id, &store.get(id).unwrap().unwrap().inv);
        assert!(format_line(&before).contains("-> 200 succeeded"));
        let quit = crate::contract::Finding {
            severity: crate::contract::Severity::Warning,
            code: crate::store::QUIT_BEFORE_ANSWER.into(),
            message: "Hookscope quit at once.".into(),
        };
        store
            .note_replacing(id, quit, crate::store::unanswered_outcome(false), None)
            .await
            .unwrap();
        let text = corrected_lines(&store, &[id, 999], false);
        assert_eq!(text.len(), 1, "an id not stored is left out: {text:?}");
        assert!(
            text[0].contains("delivery=d-1")
                && text[0].contains("-> 200 retry-temporary")
                && text[0].ends_with("  (corrected: never answered, Hookscope quit at once)"),
            "{}",
            text[0]
        );
        let json = corrected_lines(&store, &[id], true);
        let v: serde_json::Value = serde_json::from_str(&json[0]).unwrap();
        assert_eq!(v["id"], id);
        assert_eq!(v["outcome"], "retry-temporary");
        assert_eq!(v["answer_status"], 200);
        assert_eq!(v["corrected"], true);
    }

    #[test]
    fn a_quit_at_once_says_what_became_of_the_calls_in_progress() {
        use crate::receiver::QuitReport;
        let q = |unanswered, stored: &[i64]| {
            quit_message(&QuitReport {
                unanswered,
                stored: stored.to_vec(),
                checks: 0,
            })
        };
        // Registration checks are not sent again: the service refuses their URL.
        let checks = |unanswered, stored: &[i64], checks| {
            quit_message(&QuitReport {
                unanswered,
                stored: stored.to_vec(),
                checks,
            })
        };
        assert!(
            checks(1, &[4], 1).starts_with(
                "Quit at once: 1 call in progress got no answer, so the service refuses the URL (a registration check is not sent again)."
            ),
            "{}",
            checks(1, &[4], 1)
        );
        assert!(
            checks(3, &[4, 5, 6], 1).starts_with(
                "Quit at once: 3 calls in progress got no answer, so the service sends them again, but for 1 registration check (a registration check is not sent again: the service refuses its URL)."
            ),
            "{}",
            checks(3, &[4, 5, 6], 1)
        );
        assert_eq!(q(0, &[]), "Quit at once.");
        assert_eq!(
            q(1, &[]),
            "Quit at once: 1 call in progress got no answer, so the service sends it again. It was not stored."
        );
        assert_eq!(
            q(3, &[4, 5, 6]),
            "Quit at once: 3 calls in progress got no answer, so the service sends them again. They were already stored, and marked as never answered (quit-before-answer): ids 4-6."
        );
        assert!(q(5, &[9, 12]).ends_with(
            "2 of them were already stored, and marked as never answered (quit-before-answer): ids 9, 12; the others were not stored."
        ));
        assert_eq!(id_ranges(&[7]), "id 7");
        let many: Vec<i64> = (0..20).map(|i| i * 2).collect();
        assert_eq!(
            id_ranges(&many),
            "ids 0, 2, 4, 6, 8, 10, 12, 14 and 12 more runs"
        );
    }

    use super::*;
    use crate::contract::Outcome;
    use std::time::Duration;

    fn summary() -> Summary {
        Summary {
            id: 1,
            received_at: chrono::Utc::now(),
            method: "POST".into(),
            path: "/hook\x1b[2J".into(),
            query: None,
            event: Some("status-report".into()),
            delivery: Some("d\r\n1".into()),
            attempt: Some(2),
            webhook_id: Some("234".into()),
            messages: Some(1),
            answer_status: 503,
            outcome: Outcome::RetryUnavailable,
            body_size: 10,
            findings: 0,
            worst: None,
            registration_check: false,
            rule: None,
            took_us: 0,
            not_http: false,
            unanswered: false,
            retry_after: None,
        }
    }

    #[test]
    fn a_listen_line_escapes_what_came_from_the_request() {
        let line = format_line(&summary());
        assert!(!line.contains('\x1b'));
        assert!(!line.contains('\r'));
        assert!(line.contains("/hook\\u{1b}[2J"));
        assert!(line.contains("delivery=d\\u{d}\\u{a}1"));
        assert!(line.contains("attempt=2"));
        assert!(line.contains("-> 503 retry-unavailable"));
        assert!(line.contains("findings=0"));
        // A delivery id or a path of 100,000 characters is cut, with how much is left: whole,
        // it made a line of 100 KB.
        let mut long = summary();
        long.delivery = Some("d".repeat(100_000));
        long.path = format!("/{}", "p".repeat(100_000));
        let line = format_line(&long);
        assert!(line.len() < 1_000, "{} bytes", line.len());
        assert!(
            line.contains(&format!("delivery={}…(+99800)  attempt=2", "d".repeat(200))),
            "{line}"
        );
        assert!(line.contains("…(+99801)  status-report"), "{line}");
        // Counted as printed: escapes and all.
        let mut marks = summary();
        marks.delivery = Some("\u{202e}".repeat(1000));
        let line = format_line(&marks);
        let shown = line
            .split("delivery=")
            .nth(1)
            .and_then(|rest| rest.split("…(+").next())
            .unwrap_or_default();
        assert_eq!(shown.chars().count(), 200, "{line}");
        assert!(!line.contains('\u{202e}'), "{line}");
        assert!(line.contains("-> 503 retry-unavailable"));
        // An escape that does not fit whole is left out whole (a lone `\` had ended the
        // value), and the count is of the characters left out: U+202E and ten b.
        let mut split = summary();
        split.delivery = Some(format!("{}\u{202e}{}", "a".repeat(199), "b".repeat(10)));
        let line = format_line(&split);
        assert!(
            line.contains(&format!("delivery={}…(+11)  attempt", "a".repeat(199))),
            "{line}"
        );
    }

    /// A value with spaces cannot forge the fields after it: a script that reads `attempt=`
    /// or `->` reads the call's own. An empty value still takes its field.
    #[test]
    fn a_listen_line_keeps_its_fields_whatever_the_values_spaces() {
        let fields = |s: &Summary| {
            format_line(s)
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        let plain = fields(&summary());
        let mut forged = summary();
        forged.event = Some("status-report  attempt=9".into());
        forged.delivery = Some("d1  attempt=5  messages=7  -> 200 succeeded".into());
        let line = format_line(&forged);
        let got = fields(&forged);
        assert_eq!(got.len(), plain.len(), "{line}");
        assert_eq!(
            got.iter().filter(|f| f.starts_with("attempt=")).count(),
            1,
            "{line}"
        );
        assert!(
            line.contains("  status-report\\u{20}\\u{20}attempt=9  "),
            "{line}"
        );
        assert!(line.contains("-> 503 retry-unavailable"), "{line}");
        // Other spaces too: a no-break space and an ideographic one.
        forged.delivery = Some("a\u{a0}b\u{3000}c".into());
        assert!(
            format_line(&forged).contains("delivery=a\\u{a0}b\\u{3000}c  attempt=2"),
            "{}",
            format_line(&forged)
        );
        // An empty header is not a missing field.
        let mut empty = summary();
        empty.event = Some(String::new());
        empty.delivery = Some(String::new());
        let line = format_line(&empty);
        assert_eq!(fields(&empty).len(), plain.len(), "{line}");
        assert!(line.contains("  \"\"  delivery=\"\"  attempt=2"), "{line}");
    }

    #[test]
    fn every_method_http_names_keeps_the_columns_in_line() {
        let column = |method: &str| {
            let mut s = summary();
            s.method = method.to_owned();
            let line = format_line(&s);
            line.find(" /hook").unwrap_or_default()
        };
        let post = column("POST");
        for method in ["GET", "OPTIONS", "CONNECT", "DELETE", "PATCH"] {
            assert_eq!(column(method), post, "{method}");
        }
        // Longer ones shift their own line; a method of 10,000 characters is cut as a path is.
        assert!(column("PROPFIND") > post);
        let mut huge = summary();
        huge.method = "M".repeat(10_000);
        assert!(format_line(&huge).contains("…(+9800) /hook"));
    }

    #[test]
    fn log_and_show_give_the_date_and_listen_the_time_of_day() {
        let s = summary();
        let local = s.received_at.with_timezone(&chrono::Local);
        let date = local.format("%Y-%m-%d").to_string();
        let time = local.format("%H:%M:%S%.3f").to_string();
        assert!(format_line(&s).starts_with(&time), "{}", format_line(&s));
        assert!(!format_line(&s).contains(&date));
        assert!(log_line(&s).starts_with(&format!("{date} {time}")));
        assert_eq!(log_line(&s)[date.len() + 1..], format_line(&s));

        let inv = crate::store::Invocation::synthetic(1, b"[]");
        let local = inv.received_at.with_timezone(&chrono::Local);
        let shown = render_show(&Stored { id: 7, inv });
        let when = local.format("%Y-%m-%d %H:%M:%S%.3f %:z").to_string();
        assert!(
            shown.starts_with(&format!("Invocation 7  received {when}  from")),
            "{shown}"
        );
    }

    #[test]
    fn the_banner_says_how_calls_are_answered() {
        use crate::rules::{Rule, RuleSet};
        let a503 = Answer::status(503);
        let lines = answer_banner(&a503, None, true);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].starts_with("Answering 503: retried"), "{lines:?}");
        assert!(lines[0].contains("registration check still gets 200)"));
        // A delay is not the registration check's: it is answered at once, and the banner
        // says so.
        let mut slow = Answer::status(200);
        slow.delay_ms = 5_000;
        let lines = answer_banner(&slow, None, true);
        assert!(
            lines[0].contains("(the registration check still gets 200, at once)"),
            "{lines:?}"
        );

        let lines = answer_banner(&a503, None, false);
        assert!(
            lines[0].contains("refuse to register this URL"),
            "{lines:?}"
        );
        let lines = answer_banner(&Answer::status(200), None, false);
        assert!(!lines[0].contains("registration"), "{lines:?}");
        // With the wait its Retry-After asks for, not "when the answer gives one".
        let lines = answer_banner(&Answer::status(503).with_retry_after(120), None, true);
        assert!(
            lines[0].starts_with(
                "Answering 503 (Retry-After 120 s): retried on the schedule, and never sooner than 120 s after a failure (its Retry-After)"
            ),
            "{lines:?}"
        );
        // A 429 says what slowing down is taken to mean.
        let lines = answer_banner(&Answer::status(429), None, true);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(
            lines[1].starts_with("After a 429 the service slows down"),
            "{lines:?}"
        );

        let rule = |name: &str, when: crate::rules::Condition, times| Rule {
            name: name.into(),
            when,
            answer: Answer::status(503),
            times,
        };
        let first_two = crate::rules::Condition {
            attempt: Some(crate::rules::AttemptCond {
                at_most: Some(2),
                ..Default::default()
            }),
            ..Default::default()
        };
        // Rules that leave some calls to the fixed answer.
        let some = RuleSet::new(vec![
            rule("fail\u{1b}[2J twice", first_two.clone(), None),
            rule("once", Default::default(), Some(1)),
        ]);
        let lines = answer_banner(&Answer::status(200), Some(&some), true);
        assert_eq!(
            lines[..3],
            [
                "Rules, first match wins:",
                "  1. \"fail\\u{1b}[2J twice\": 503",
                "  2. \"once\": 503, 1 time, then retires",
            ]
        );
        assert!(
            lines[3].starts_with("Calls no rule matches are answered 200: succeeded"),
            "{lines:?}"
        );
        // Each rule's answer is said, and what the service makes of it.
        let mut timeout = rule("time out", first_two.clone(), Some(2));
        timeout.answer = Answer {
            delay_ms: 35_000,
            ..Answer::status(200)
        };
        let mut third = rule(
            "third",
            crate::rules::Condition {
                every_nth: Some(3),
                ..Default::default()
            },
            None,
        );
        third.answer = Answer::status(503).with_retry_after(120);
        let lines = answer_banner(
            &Answer::status(200),
            Some(&RuleSet::new(vec![timeout, third])),
            true,
        );
        assert_eq!(
            lines[1..3],
            [
                "  1. \"time out\": 200 after 35 s (past the service's wait: a temporary failure), 2 times, then retires",
                "  2. \"third\": 503 (Retry-After 120 s), every 3rd call it matches",
            ]
        );
        // A rule for some calls whose Retry-After is more than a wait, or whose 429 slows the
        // service down, says so on its line, as the answer for every call would below.
        let with = |name: &str, status, retry_after: &str| {
            let mut r = rule(name, first_two.clone(), None);
            r.answer = Answer {
                retry_after: Some(retry_after.to_owned()),
                ..Answer::status(status)
            };
            r
        };
        let lines = answer_banner(
            &Answer::status(200),
            Some(&RuleSet::new(vec![
                with("too far", 503, "200000"),
                with("passed", 503, "Sun, 06 Nov 1994 08:49:37 GMT"),
                with("ignored", 500, "60"),
                with("slow", 429, "60"),
            ])),
            true,
        );
        assert_eq!(
            lines[1..5],
            [
                "  1. \"too far\": 503 (Retry-After 200000 s; the Retry-After reaches past the 2-day window: no retry, discarded)",
                "  2. \"passed\": 503 (Retry-After Sun, 06 Nov 1994 08:49:37 GMT; the Retry-After date has passed: no effect)",
                "  3. \"ignored\": 500 (Retry-After 60 s, ignored)",
                "  4. \"slow\": 429 (Retry-After 60 s; the service slows down: see below)",
            ]
        );
        assert!(
            lines[5].starts_with("Calls no rule matches are answered 200"),
            "{lines:?}"
        );
        assert!(
            lines[6].starts_with("After a 429 the service slows down"),
            "{lines:?}"
        );
        // A rule that takes every call: the fixed answer is never used, and the rule's own
        // answer is the one described.
        let all = RuleSet::new(vec![
            rule("fail twice", first_two.clone(), None),
            rule("then succeed", Default::default(), None),
            rule("hidden", Default::default(), None),
        ]);
        let lines = answer_banner(&Answer::status(418), Some(&all), true);
        assert!(
            lines[4].starts_with("The rule \"then succeed\" matches every call"),
            "{lines:?}"
        );
        assert_eq!(
            lines[5],
            "Never used, since that rule comes first: \"hidden\"."
        );
        assert!(
            lines[6].starts_with("Calls that reach \"then succeed\" are answered 503: retried"),
            "{lines:?}"
        );
        assert!(!lines.iter().any(|l| l.contains("418")), "{lines:?}");
        // every_nth 1 is every call too; its answer refuses the registration check when the
        // check is not passed, and a delay past 30 s is said to be too late.
        let every = crate::rules::Condition {
            every_nth: Some(1),
            ..Default::default()
        };
        let mut late = rule("late", every, None);
        late.answer = Answer {
            delay_ms: 35_000,
            ..Answer::status(200)
        };
        let lines = answer_banner(&a503, Some(&RuleSet::new(vec![late])), false);
        assert!(
            lines[3].starts_with("Every call is answered 200 after 35 s"),
            "{lines:?}"
        );
        assert!(
            lines[3].contains("refuse to register this URL"),
            "{lines:?}"
        );
        assert!(
            lines[4].contains("every call counts as a temporary failure, whatever its code."),
            "{lines:?}"
        );
        // Held back with a Retry-After: the service never reads it either.
        let mut held = Answer::status(503).with_retry_after(200_000);
        held.delay_ms = 35_000;
        let lines = answer_banner(&held, None, false);
        assert!(
            lines
                .iter()
                .any(|l| l.ends_with("whatever its code and Retry-After (never read)."))
                && !lines.iter().any(|l| l.contains("2-day")),
            "{lines:?}"
        );
        // An empty rule file says so.
        let lines = answer_banner(&a503, Some(&RuleSet::new(vec![])), true);
        assert!(
            lines[0].starts_with("Rules: the file has none"),
            "{lines:?}"
        );
        assert!(lines[1].starts_with("Answering 503"), "{lines:?}");
    }

    #[test]
    fn bodies_print_as_json_text_or_hex() {
        assert!(body_text(b"[{\"a\":1}]").contains("\"a\": 1"));
        assert_eq!(body_text(b"plain"), "plain");
        assert!(body_text(b"\xff\x00").starts_with("00000000  ff 00"));
        let big = body_text(&[0xff; SHOWN_HEX + 10]);
        assert!(big.contains("... 10 more bytes"), "{big}");
        assert!(
            big.ends_with("`hookscope show ID --json`, field body_hex)"),
            "{big}"
        );
        assert_eq!(body_text(b"\x1b[31m"), "\\u{1b}[31m");
    }

    #[test]
    fn schedule_text_for_503_and_400() {
        let now = chrono::Utc::now();
        let t = schedule_text(503, Some(RetryAfter::Wait(Duration::from_secs(300))), now);
        assert!(t.contains("Retry-After: 5 min"));
        assert!(t.contains("194 retries, 195 attempts"));
        // The last retries of the window told apart, to the second.
        let plain = schedule_text(503, None, now);
        assert!(
            plain.contains("1 d 23 h 52 min 30 s after the first)"),
            "{plain}"
        );
        // A mistyped Retry-After is not printed in 10^14 days.
        let huge = schedule_text(
            503,
            Some(RetryAfter::Wait(Duration::from_secs(u64::MAX))),
            now,
        );
        assert!(
            huge.contains("Retry-After: more seconds than can be counted, over a year"),
            "{huge}"
        );
        // Past the window, the line says what --json's retry_after_effect does: no retry.
        assert!(
            huge.contains(
                "(honoured, and it reaches past the service's 2-day retry window: no retry comes)"
            ),
            "{huge}"
        );
        assert!(!huge.contains("the schedule resumes"), "{huge}");
        // Its first line says so too ("retried on the schedule" had stood above it alone); one
        // that leaves a retry does not.
        let first = |t: &str| t.lines().next().unwrap_or_default().to_owned();
        let past = schedule_text(
            503,
            Some(RetryAfter::Wait(Duration::from_secs(172_801))),
            now,
        );
        assert!(
            first(&past).ends_with("with this Retry-After, though, no retry comes (see below)"),
            "{past}"
        );
        let edge = schedule_text(
            503,
            Some(RetryAfter::Wait(Duration::from_secs(172_800))),
            now,
        );
        assert!(!first(&edge).contains("no retry comes"), "{edge}");
        let far_date = "Fri, 31 Dec 9999 23:59:59 GMT";
        let far = schedule_text(503, RetryAfter::parse(far_date), now);
        assert!(far.contains("no retry comes)"), "{far}");
        assert!(!far.contains("the schedule resumes"), "{far}");
        // The delay and the time since the first failure to the same second, on one line.
        let near = schedule_text(
            503,
            Some(RetryAfter::Wait(Duration::from_secs(172_799))),
            now,
        );
        assert!(
            near.contains("(+1 d 23 h 59 min 59 s after the failure before, 1 d 23 h 59 min 59 s after the first)"),
            "{near}"
        );
        let t = schedule_text(400, None, now);
        assert!(t.contains("discarded"));
        assert!(!t.contains("retries"));
    }

    #[test]
    fn the_retries_in_brief_say_their_real_spacing() {
        let now = chrono::Utc::now();
        let wait = |s| Some(RetryAfter::Wait(Duration::from_secs(s)));
        let plain = schedule_text(503, None, now);
        assert!(
            plain.contains("  ... 186 more retries, every 15 min ...\n"),
            "{plain}"
        );
        // A Retry-After of an hour spaces every retry an hour apart.
        let hourly = schedule_text(503, wait(3600), now);
        assert!(
            hourly.contains("  ... 40 more retries, every 1 h ...\n"),
            "{hourly}"
        );
        assert!(!hourly.contains("15 min"), "{hourly}");
        // 16 min 40 s for every retry: no 15 min anywhere either.
        let t = schedule_text(429, wait(1000), now);
        assert!(t.contains("every 16 min 40 s ..."), "{t}");
        // Nine retries are all shown: a brief line would hide only one.
        let few = schedule_text(503, wait(19_200), now);
        assert!(!few.contains("more retries"), "{few}");
        assert!(few.contains("9 retries, 10 attempts"), "{few}");
        // --all lists every one of the 194, in order.
        let all = schedule_text_listing(503, None, now, true);
        assert!(!all.contains("more retries"), "{all}");
        let rows: Vec<&str> = all.lines().filter(|l| l.starts_with("  attempt")).collect();
        assert_eq!(rows.len(), 194);
        assert!(
            rows[100].starts_with("  attempt 102  retry 101  at "),
            "{}",
            rows[100]
        );
    }

    #[test]
    fn show_gives_the_answer_body_its_size_then_its_text() {
        let mut inv = crate::store::Invocation::synthetic(1, b"[]");
        inv.answer.body = bytes::Bytes::from(vec![b'x'; 3000]);
        let t = render_show(&Stored { id: 1, inv });
        let answer = &t[t.find("\nAnswer\n").expect("an Answer section")..];
        let xs = "x".repeat(3000);
        assert!(
            answer.contains(&format!("  Body (2.9 KiB)\n    {xs}\n")),
            "{answer}"
        );
        // No body sent, no body heading.
        let t = render_show(&Stored {
            id: 2,
            inv: crate::store::Invocation::synthetic(2, b"[]"),
        });
        assert!(
            !t[t.find("\nAnswer\n").unwrap_or(0)..].contains("Body ("),
            "{t}"
        );
        assert!(!t.contains("no body:"), "{t}");
        // An answer to HEAD says why it has none, so a chosen body does not look lost.
        let mut head = crate::store::Invocation::synthetic(3, b"");
        head.method = "HEAD".into();
        let t = render_show(&Stored { id: 3, inv: head });
        assert!(
            t.contains(
                "  no body: an answer to HEAD carries no body: HTTP sends its headers only\n"
            ),
            "{t}"
        );
    }

    #[test]
    fn show_says_when_the_service_ignores_the_retry_after_sent() {
        let mut inv = crate::store::Invocation::synthetic(1, b"[]");
        inv.answer.status = 500;
        inv.answer.headers = vec![("Retry-After".into(), "300".into())];
        let t = render_show(&Stored { id: 1, inv });
        assert!(
            t.contains("Retry-After: 300  (ignored by the service"),
            "{t}"
        );
        let mut inv = crate::store::Invocation::synthetic(2, b"[]");
        inv.answer.status = 503;
        inv.answer.headers = vec![("Retry-After".into(), "300".into())];
        let t = render_show(&Stored {
            id: 2,
            inv: inv.clone(),
        });
        assert!(t.contains("Retry-After: 300\n"), "{t}");
        // A 503 whose Retry-After sets nothing says why, not "only 503 and 429 count".
        let mut check = inv.clone();
        check.registration_check = true;
        let t = render_show(&Stored { id: 3, inv: check });
        assert!(
            t.contains("Retry-After: 300  (no effect: a registration check is not retried)"),
            "{t}"
        );
        let mut late = inv.clone();
        late.took_us = 31_000_000;
        let t = render_show(&Stored { id: 4, inv: late });
        assert!(
            t.contains("Retry-After: 300  (never read: no answer reached the service)"),
            "{t}"
        );
        // Past the 2-day window, the answer line is not left saying a retry comes.
        let mut far = inv;
        far.answer.headers = vec![("Retry-After".into(), "200000".into())];
        let t = render_show(&Stored { id: 5, inv: far });
        assert!(
            t.contains("Retry-After: 200000  (past the service's 2-day retry window: no retry comes, and the message is discarded)"),
            "{t}"
        );
    }

    #[test]
    fn show_says_what_of_a_refused_body_was_declared_and_what_came() {
        let body = |declared: Option<u64>, size: u64| {
            let mut inv = crate::store::Invocation::synthetic(1, b"");
            inv.body_kept = false;
            inv.body_size = size;
            inv.declared_size = declared;
            let t = render_show(&Stored { id: 1, inv });
            let mut lines = t.lines().skip_while(|l| !l.starts_with("Body ("));
            let head = lines.next().unwrap_or_default().to_owned();
            // The line under it says the body was not kept, not that it was empty.
            assert_eq!(
                lines.next(),
                Some("  (not kept: only its size was recorded)"),
                "{t}"
            );
            head
        };
        assert_eq!(
            body(Some(10_000), 500),
            "Body (declared 9.8 KiB, over the limit, not kept; 500 B arrived)"
        );
        assert_eq!(
            body(Some(2048), 2048),
            "Body (2.0 KiB, over the limit, not kept)"
        );
        assert!(body(None, 2048).ends_with("sent in chunks with no size declared)"));
    }

    #[test]
    fn schedule_text_ignores_retry_after_with_500() {
        let now = chrono::Utc::now();
        let t = schedule_text(500, Some(RetryAfter::Wait(Duration::from_secs(300))), now);
        assert!(t.contains("Retry-After: 5 min (ignored"), "{t}");
        // The plain schedule: the first retry 90 s after the failure.
        assert!(t.contains("(+1 min 30 s after the failure before"), "{t}");
        let t = schedule_text(429, Some(RetryAfter::Wait(Duration::from_secs(300))), now);
        assert!(t.contains("Retry-After: 5 min (honoured"), "{t}");
        // The slow-down a 429 causes is stated, with the rule assumed.
        assert!(
            t.contains("one call at a time, at least 1 s apart, until 5 minutes pass"),
            "{t}"
        );
        assert!(t.contains("(+5 min after the failure before"), "{t}");
        // Ignored with an answer that is not retried at all, and said so.
        let t = schedule_text(200, Some(RetryAfter::Wait(Duration::from_secs(300))), now);
        assert!(t.contains("Retry-After: 5 min (ignored"), "{t}");
    }

    #[test]
    fn schedule_text_reads_a_retry_after_date_once() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-11-22T10:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let date = RetryAfter::parse("Sun, 22 Nov 2026 12:00:00 GMT").unwrap();
        let t = schedule_text(503, Some(date), now);
        assert!(
            t.contains("Retry-After: Sun, 22 Nov 2026 12:00:00 GMT (honoured: no retry before that date, in 2 h;"),
            "{t}"
        );
        // The first retry waits for the date; the second is back on the schedule (3 min).
        assert!(t.contains("(+2 h after the failure before"), "{t}");
        assert!(t.contains("(+3 min after the failure before"), "{t}");
        let past = RetryAfter::parse("Sun, 22 Nov 2026 09:00:00 GMT").unwrap();
        let t = schedule_text(503, Some(past), now);
        assert!(t.contains("(a date already passed: no effect)"), "{t}");
        assert!(t.contains("(+1 min 30 s after the failure before"), "{t}");
        assert_eq!(retry_after_seconds(date, now), 7200);
        assert_eq!(retry_after_seconds(past, now), 0);
        // --json says the same as the text, in a word.
        use crate::contract::Outcome;
        assert_eq!(
            retry_after_effect(Outcome::RetryUnavailable, date, now),
            "honoured"
        );
        assert_eq!(
            retry_after_effect(Outcome::RetryUnavailable, past, now),
            "passed"
        );
        assert_eq!(
            retry_after_effect(Outcome::RetryTemporary, date, now),
            "ignored"
        );
        let far = RetryAfter::Wait(Duration::from_secs(200_000));
        assert_eq!(
            retry_after_effect(Outcome::RetrySlowDown, far, now),
            "past-window"
        );
    }
}
