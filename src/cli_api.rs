//! The CLI's service commands: `webhooks`, `send`, `send-test`, `inject`, and `emulate`.

use crate::api::model::{InvokeOption, SubmissionEntry, Webhook, WebhookEntry};
use crate::api::{ApiClient, ApiError};
use crate::contract::{Brand, TEST_NUMBER, TriggerScope};
use crate::emulator::{Activity, Credentials, Emulator, EmulatorConfig};
use crate::text::escape_control;
use clap::{Args, Subcommand};
use std::io::{IsTerminal, Write};
use std::net::IpAddr;
use unicode_width::UnicodeWidthStr;

/// The environment variable that carries the API password or token secret.
pub const PASSWORD_ENV: &str = "HOOKSCOPE_API_PASSWORD";

/// The environment variable that names the API's base URL when `--api-url` is not given.
pub const API_URL_ENV: &str = "HOOKSCOPE_API_URL";
/// The environment variable that names the API user when `--user` is not given.
pub const API_USER_ENV: &str = "HOOKSCOPE_API_USER";
/// The emulator's base URL, on its default port.
pub const DEFAULT_API_URL: &str = "http://127.0.0.1:8788/v1";

#[derive(Debug, Clone, Args)]
pub struct ApiArgs {
    /// The API's base URL [default: $HOOKSCOPE_API_URL, else the emulator's,
    /// http://127.0.0.1:8788/v1]
    #[arg(long, value_name = "URL")]
    pub api_url: Option<String>,
    /// Username, or API token id [default: $HOOKSCOPE_API_USER, else demo]. The password or
    /// token secret comes from HOOKSCOPE_API_PASSWORD, or a prompt.
    #[arg(long)]
    pub user: Option<String>,
    /// Print the service's JSON.
    #[arg(long)]
    pub json: bool,
}

/// Where a setting of the command line came from: the flag, its environment variable, or
/// the default. An error in a value says where to change it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Flag,
    Env(&'static str),
    Default,
}

/// `flag`'s value, else `var`'s (an empty or blank one, left in a shell, counts as unset), else
/// `default`; and which it was.
fn flag_env_or(flag: Option<&str>, var: &'static str, default: &str) -> (String, Source) {
    let from_env = std::env::var(var).ok().filter(|v| !v.trim().is_empty());
    match (flag, from_env) {
        (Some(v), _) => (v.to_owned(), Source::Flag),
        (None, Some(v)) => (v, Source::Env(var)),
        (None, None) => (default.to_owned(), Source::Default),
    }
}

impl ApiArgs {
    /// The base URL to call, and where it came from.
    pub fn base_url(&self) -> (String, Source) {
        flag_env_or(self.api_url.as_deref(), API_URL_ENV, DEFAULT_API_URL)
    }

    /// The user to call as, and where it came from.
    pub fn username(&self) -> (String, Source) {
        flag_env_or(self.user.as_deref(), API_USER_ENV, "demo")
    }
}

#[derive(Debug, Clone, Subcommand)]
pub enum WebhooksCommand {
    /// List the webhooks.
    List(ApiArgs),
    /// Show one webhook.
    Get {
        /// The webhook's id (`webhooks list` shows it).
        #[arg(value_parser = crate::text::parse_webhook_id, allow_hyphen_values = true)]
        id: u64,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Create a webhook (the service calls the URL with [] first: it must answer 200).
    Create {
        #[command(flatten)]
        entry: EntryArgs,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Change a webhook: the fields given replace the current ones.
    Update {
        /// The webhook's id (`webhooks list` shows it).
        #[arg(value_parser = crate::text::parse_webhook_id, allow_hyphen_values = true)]
        id: u64,
        /// A new name, unique in the account.
        #[arg(long)]
        name: Option<String>,
        /// A new URL for the service to call (http or https); an active webhook's URL gets the
        /// registration check and must answer 200.
        #[arg(long)]
        url: Option<String>,
        /// SENT for status reports, RECEIVED for incoming messages.
        #[arg(long, value_name = "SENT|RECEIVED", value_parser = crate::text::parse_scope)]
        scope: Option<String>,
        /// Where problem reports are e-mailed.
        #[arg(long, value_name = "EMAIL")]
        contact: Option<String>,
        /// ONE: a call per message; MANY: up to 10 messages per call.
        #[arg(long, value_name = "ONE|MANY", value_parser = ["ONE", "MANY"], ignore_case = true)]
        invoke: Option<String>,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Delete a webhook.
    Delete {
        /// The webhook's id (`webhooks list` shows it).
        #[arg(value_parser = crate::text::parse_webhook_id, allow_hyphen_values = true)]
        id: u64,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Turn a webhook on (the URL is checked again).
    Enable {
        /// The webhook's id (`webhooks list` shows it).
        #[arg(value_parser = crate::text::parse_webhook_id, allow_hyphen_values = true)]
        id: u64,
        #[command(flatten)]
        api: ApiArgs,
    },
    /// Turn a webhook off.
    Disable {
        /// The webhook's id (`webhooks list` shows it).
        #[arg(value_parser = crate::text::parse_webhook_id, allow_hyphen_values = true)]
        id: u64,
        #[command(flatten)]
        api: ApiArgs,
    },
}

#[derive(Debug, Clone, Args)]
pub struct EntryArgs {
    /// A name, unique in the account.
    #[arg(long)]
    pub name: String,
    /// The URL the service calls (http or https).
    #[arg(long)]
    pub url: String,
    /// SENT for status reports, RECEIVED for incoming messages.
    #[arg(long, value_name = "SENT|RECEIVED", value_parser = crate::text::parse_scope)]
    pub scope: String,
    /// Where problem reports are e-mailed.
    #[arg(long, value_name = "EMAIL")]
    pub contact: Option<String>,
    /// Up to 10 messages per call instead of one.
    #[arg(long)]
    pub many: bool,
    /// ONE: a call per message; MANY: up to 10 messages per call (as `webhooks update
    /// --invoke`; `--many` is `--invoke MANY`).
    #[arg(long, value_name = "ONE|MANY", value_parser = ["ONE", "MANY"], ignore_case = true, conflicts_with = "many")]
    pub invoke: Option<String>,
    /// Create it turned off (no registration check).
    #[arg(long)]
    pub inactive: bool,
}

#[derive(Debug, Clone, Args)]
pub struct SendArgs {
    /// The recipient's number, e.g. +27001234567.
    #[arg(long)]
    pub to: String,
    /// The text.
    #[arg(long)]
    pub body: String,
    #[command(flatten)]
    pub api: ApiArgs,
}

#[derive(Debug, Clone, Args)]
pub struct SendTestArgs {
    /// The text.
    #[arg(long, default_value = "Hookscope test message")]
    pub body: String,
    #[command(flatten)]
    pub api: ApiArgs,
}

#[derive(Debug, Clone, Args)]
pub struct InjectArgs {
    /// The text of the incoming message.
    #[arg(long)]
    pub body: String,
    /// The handset's number.
    #[arg(long, default_value = "+27007654321")]
    pub from: String,
    /// Your number that receives it.
    #[arg(long, default_value = "+27001234567")]
    pub to: String,
    #[command(flatten)]
    pub api: ApiArgs,
}

/// Which of the emulator's passwords are still the well-known defaults.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultPasswords {
    /// The account's is `demo` (HOOKSCOPE_API_PASSWORD unset or empty).
    pub account: bool,
    /// A read-only principal was asked for and its password is `readonly`
    /// (HOOKSCOPE_API_READONLY_PASSWORD unset or empty).
    pub read_only: bool,
}

/// What `listen` and `emulate` say when their address is not this machine's alone (and, for
/// the emulator, when its API still has a default password).
pub fn exposure_warning(bind: IpAddr, defaults: DefaultPasswords) -> Option<String> {
    (!bind.to_canonical().is_loopback()).then(|| {
        let mut also = String::new();
        if defaults.account {
            also.push_str(", and the password is the demo one (set HOOKSCOPE_API_PASSWORD)");
        }
        if defaults.read_only {
            also.push_str(if defaults.account { "; " } else { ", and " });
            also.push_str(
                "the read-only principal's password is the default one (set HOOKSCOPE_API_READONLY_PASSWORD)",
            );
        }
        format!("warning: {bind} is reachable from other machines, not only this one{also}.")
    })
}

/// The options start an emulator; `emulate inject` talks to one already running, so they are
/// refused beside it (its `--api-url` says where that emulator is), not ignored.
#[derive(Debug, Clone, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct EmulateArgs {
    /// Address to listen on. The default keeps the emulator on this machine; anything else lets
    /// other machines use its API (with the demo password unless HOOKSCOPE_API_PASSWORD is set).
    #[arg(long, default_value = "127.0.0.1", value_name = "IP", value_parser = crate::text::parse_bind)]
    pub bind: IpAddr,
    /// Port; 0 picks a free one.
    #[arg(long, default_value_t = crate::emulator::DEFAULT_PORT, value_parser = crate::text::parse_port, allow_hyphen_values = true)]
    pub port: u16,
    /// The account's username [default: $HOOKSCOPE_API_USER, as the client commands read it,
    /// else demo]; its password comes from HOOKSCOPE_API_PASSWORD (default demo).
    #[arg(long)]
    pub user: Option<String>,
    /// A principal that may read but not change (403); its password comes from
    /// HOOKSCOPE_API_READONLY_PASSWORD (default readonly).
    #[arg(long, value_name = "USER")]
    pub read_only_user: Option<String>,
    /// Emulated time runs this many times faster (60: a minute of schedule per second).
    #[arg(long, default_value_t = 1.0, value_parser = crate::text::parse_speed, allow_hyphen_values = true)]
    pub speed: f64,
    /// Let the emulator call webhook URLs on other hosts than this one.
    #[arg(long)]
    pub allow_remote: bool,
    /// Credits the account starts with.
    #[arg(long, default_value_t = 1000.0, value_parser = crate::text::parse_credits, allow_hyphen_values = true)]
    pub credits: f64,
    /// The word in the header names (X-<WORD>-Event).
    #[arg(long, default_value = "Service", value_parser = crate::text::parse_brand)]
    pub brand: String,
    #[command(subcommand)]
    pub action: Option<EmulateAction>,
}

/// What `emulate` can do besides running an emulator.
#[derive(Debug, Clone, Subcommand)]
pub enum EmulateAction {
    /// Deliver a message from a handset to a running emulator's RECEIVED webhooks (the same as
    /// `hookscope inject`).
    Inject(InjectArgs),
}

#[derive(Debug, thiserror::Error)]
pub enum ApiCliError {
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error(transparent)]
    Emulator(#[from] crate::emulator::EmulatorError),
    #[error("{0}")]
    Input(String),
    #[error("cannot write the output: {0}")]
    Output(#[from] std::io::Error),
    #[error(
        "nothing to change in webhook {0}: give what to change (--name, --url, --scope, --contact, --invoke; --contact \"\" removes the contact)"
    )]
    NothingToChange(u64),
    #[error("{0}")]
    Options(String),
    /// The service answered a send with success and no message: nothing was sent.
    #[error(
        "the service answered the send with success but made no message, so nothing was sent (the service's API answers 201 with the messages it made: check that --api-url is its API, such as http://127.0.0.1:8788/v1 for hookscope emulate)"
    )]
    NoMessage,
    /// A value taken from an environment variable, not from a flag, that cannot be used.
    #[error("{error}; that value came from {var} ({flag} overrides it)")]
    FromEnv {
        var: &'static str,
        flag: &'static str,
        error: ApiError,
    },
}

impl ApiCliError {
    /// The reader of the output went away (`| head`): nothing to report.
    pub fn is_closed_output(&self) -> bool {
        matches!(self, ApiCliError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// The command line asks for nothing that can be done: exit status 2, as clap's refusals.
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            ApiCliError::NothingToChange(_)
                | ApiCliError::Options(_)
                | ApiCliError::FromEnv { .. }
                | ApiCliError::Api(ApiError::BadBase { .. })
                | ApiCliError::Api(ApiError::CredentialsInBase { .. })
                // A --bind address that is not this machine's.
                | ApiCliError::Emulator(crate::emulator::EmulatorError::NotHere { .. })
        )
    }
}

/// A secret from the environment: unset, empty or not Unicode all count as not given (an
/// empty `HOOKSCOPE_API_PASSWORD=` left in a shell is not taken for an empty password).
fn env_secret(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The password: from the environment, else a prompt on a terminal, else none.
fn password() -> Result<Option<String>, ApiCliError> {
    if let Some(p) = env_secret(PASSWORD_ENV) {
        return Ok(Some(p));
    }
    if std::io::stdin().is_terminal() {
        let p = rpassword::prompt_password("API password or token secret: ")
            .map_err(|e| ApiCliError::Input(format!("cannot read the password: {e}")))?;
        return Ok(Some(p));
    }
    Ok(None)
}

fn client(api: &ApiArgs) -> Result<ApiClient, ApiCliError> {
    let (base, base_from) = api.base_url();
    let (user, _) = api.username();
    if user.trim().is_empty() {
        // Only the flag can be blank here: a blank variable counts as unset.
        return Err(ApiCliError::Options(
            "--user cannot be empty: give the username (or API token id) to call the API as, or leave --user out for demo (the emulator's)".to_owned(),
        ));
    }
    ApiClient::new(&base, &user, password()?).map_err(|e| match (e, base_from) {
        (e @ (ApiError::BadBase { .. } | ApiError::CredentialsInBase { .. }), Source::Env(var)) => {
            ApiCliError::FromEnv {
                var,
                flag: "--api-url",
                error: e,
            }
        }
        (e, _) => e.into(),
    })
}

/// JSON as the service sent it, re-indented, every token kept (see [`crate::text::pretty_json`]).
fn print_sent(json: &str) -> Result<(), ApiCliError> {
    print_json_text(crate::text::pretty_json(json).unwrap_or_else(|| json.trim().to_owned()))
}

fn print_json(v: &impl serde::Serialize) -> Result<(), ApiCliError> {
    print_json_text(serde_json::to_string_pretty(v).unwrap_or_default())
}

/// Indented JSON on stdout, made safe for a terminal.
fn print_json_text(pretty: String) -> Result<(), ApiCliError> {
    writeln!(
        std::io::stdout().lock(),
        "{}",
        crate::text::json_for_terminal(pretty)
    )?;
    Ok(())
}

/// The widest a name shows in the table of `webhooks` (the whole of it is in `--json`).
const WIDEST_NAME: usize = 40;

/// `s` with its control characters escaped ([`escape_control`]), cut to `columns` of a
/// terminal with "…" where it was cut: an escape is kept whole or left out, never cut into
/// (`\u{1` would read as other text).
fn fit(s: &str, columns: usize) -> String {
    let escaped = escape_control(s);
    if escaped.width() <= columns {
        return escaped;
    }
    let mut out = String::new();
    let mut used = 0;
    let mut one = [0u8; 4];
    for c in s.chars() {
        let piece = escape_control(c.encode_utf8(&mut one));
        let w = piece.width();
        if used + w + 1 > columns {
            break;
        }
        out.push_str(&piece);
        used += w;
    }
    out.push('…');
    out
}

/// `webhooks list` for people: a header, then one line per webhook, each column as wide as
/// its widest value (ids run to 10 digits), anything from the service escaped.
fn webhook_table(list: &[Webhook]) -> Vec<String> {
    let rows: Vec<[String; 7]> = list
        .iter()
        .map(|w| {
            [
                w.id.to_string(),
                fit(&w.name, WIDEST_NAME),
                w.trigger_scope.as_str().to_owned(),
                if w.active { "active" } else { "inactive" }.to_owned(),
                match w.invoke_option {
                    Some(InvokeOption::One) => "ONE",
                    Some(InvokeOption::Many) => "MANY",
                    // Not in the service's answer: not guessed.
                    None => "?",
                }
                .to_owned(),
                escape_control(&w.url),
                w.contact_email_address
                    .as_deref()
                    .map_or(String::new(), escape_control),
            ]
        })
        .collect();
    let header = ["ID", "NAME", "SCOPE", "STATE", "CALLS", "URL", "CONTACT"].map(str::to_owned);
    // Columns as wide as they show in a terminal: 日本 takes four, not two.
    let mut widths = header.clone().map(|h| h.width());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.width());
        }
    }
    std::iter::once(&header)
        .chain(&rows)
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .zip(widths)
                .enumerate()
                .map(|(i, (cell, w))| {
                    let pad = " ".repeat(w.saturating_sub(cell.width()));
                    if i == 0 {
                        format!("{pad}{cell}")
                    } else {
                        format!("{cell}{pad}")
                    }
                })
                .collect();
            cells.join("  ").trim_end().to_owned()
        })
        .collect()
}

/// What `webhooks list` says of the webhooks it could not read: they are left out of the table,
/// not the reason the table is missing.
fn unreadable_note(unreadable: &[String]) -> String {
    let mut note = format!(
        "warning: the service listed {} that Hookscope cannot read, left out above (`--json` shows them as sent):",
        crate::text::count(unreadable.len() as u64, "webhook", "webhooks")
    );
    for u in unreadable {
        note.push_str("\n  ");
        note.push_str(u);
    }
    note
}

fn scope(s: &str) -> Result<TriggerScope, ApiCliError> {
    TriggerScope::parse(s)
        .ok_or_else(|| ApiCliError::Input(format!("--scope must be SENT or RECEIVED, not '{s}'")))
}

pub async fn webhooks(cmd: WebhooksCommand) -> Result<(), ApiCliError> {
    match cmd {
        WebhooksCommand::List(api) => {
            let c = client(&api)?;
            let answered = c.list_webhooks_answered().await?;
            if api.json {
                return print_sent(&answered.json);
            }
            let crate::api::WebhookList {
                webhooks: list,
                unreadable,
            } = answered.value;
            let mut out = std::io::stdout().lock();
            if list.is_empty() && unreadable.is_empty() {
                writeln!(
                    out,
                    "No webhooks. Create one with `hookscope webhooks create --name NAME --url URL --scope SENT`."
                )?;
            }
            if !list.is_empty() {
                for line in webhook_table(&list) {
                    writeln!(out, "{line}")?;
                }
            }
            if !unreadable.is_empty() {
                crate::say!("{}", unreadable_note(&unreadable));
            }
            Ok(())
        }
        WebhooksCommand::Get { id, api } => {
            show(&api, client(&api)?.get_webhook_answered(id).await?)
        }
        WebhooksCommand::Create { entry, api } => {
            let mut e = WebhookEntry::new(&entry.name, &entry.url, scope(&entry.scope)?);
            e.contact_email_address = entry.contact;
            e.active = entry.inactive.then_some(false);
            e.invoke_option = match entry.invoke.as_deref() {
                Some(i) if i.eq_ignore_ascii_case("ONE") => Some(InvokeOption::One),
                Some(_) => Some(InvokeOption::Many),
                None => entry.many.then_some(InvokeOption::Many),
            };
            warn_if_unreachable(&api, &e.url);
            show(&api, client(&api)?.create_webhook_answered(&e).await?)
        }
        WebhooksCommand::Update {
            id,
            name,
            url,
            scope: sc,
            contact,
            invoke,
            api,
        } => {
            if [&name, &url, &sc, &contact, &invoke]
                .iter()
                .all(|given| given.is_none())
            {
                return Err(ApiCliError::NothingToChange(id));
            }
            let c = client(&api)?;
            let current = c.get_webhook(id).await?;
            let mut e = WebhookEntry::from_webhook(&current);
            if let Some(n) = name {
                e.name = n;
            }
            if let Some(u) = url {
                warn_if_unreachable(&api, &u);
                e.url = u;
            }
            if let Some(s) = sc {
                e.trigger_scope = scope(&s)?.as_str().to_owned();
            }
            if let Some(ct) = contact {
                e.contact_email_address = Some(ct).filter(|c| !c.is_empty());
            }
            if let Some(i) = invoke {
                e.invoke_option = Some(if i.eq_ignore_ascii_case("MANY") {
                    InvokeOption::Many
                } else {
                    InvokeOption::One
                });
            }
            warn_unknown_invoke_option(&e, id);
            show(&api, c.update_webhook_answered(id, &e).await?)
        }
        WebhooksCommand::Delete { id, api } => {
            client(&api)?.delete_webhook(id).await?;
            if api.json {
                return print_json(&serde_json::json!({"deleted": id}));
            }
            writeln!(std::io::stdout(), "Webhook {id} deleted.")?;
            Ok(())
        }
        WebhooksCommand::Enable { id, api } => set_active(&api, id, true).await,
        WebhooksCommand::Disable { id, api } => set_active(&api, id, false).await,
    }
}

/// Enable or disable: an update with the webhook's own fields.
async fn set_active(api: &ApiArgs, id: u64, active: bool) -> Result<(), ApiCliError> {
    let c = client(api)?;
    let mut e = WebhookEntry::from_webhook(&c.get_webhook(id).await?);
    e.active = Some(active);
    warn_unknown_invoke_option(&e, id);
    show(api, c.update_webhook_answered(id, &e).await?)
}

/// Says, before the service is asked, when the service cannot call `url` (a public API and the
/// receiver's 127.0.0.1): its registration check would fail with an error that does not say why.
fn warn_if_unreachable(api: &ApiArgs, url: &str) {
    if let Some(why) = crate::api::reach::unreachable_by(&api.base_url().0, url) {
        crate::say!("Note: {why}");
    }
}

fn warn_unknown_invoke_option(e: &WebhookEntry, id: u64) {
    if let Some(w) = e.unknown_invoke_option(id) {
        crate::say!("note: {w}.");
    }
}

/// One webhook as the service answered it: its JSON as sent with `--json`, else a table.
fn show(api: &ApiArgs, w: crate::api::Answered<Webhook>) -> Result<(), ApiCliError> {
    if api.json {
        return print_sent(&w.json);
    }
    let mut out = std::io::stdout().lock();
    for line in webhook_table(std::slice::from_ref(&w.value)) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

pub async fn send(args: SendArgs) -> Result<(), ApiCliError> {
    send_to(&args.api, &args.to, &args.body).await.map(|_| ())
}

pub async fn send_test(args: SendTestArgs) -> Result<(), ApiCliError> {
    let warned = send_to(&args.api, TEST_NUMBER, &args.body).await?;
    // Said once it was sent: a refused call is not announced as on its way. Where the note
    // above says no SENT webhook is active, the reports are not promised to one.
    if !args.api.json {
        let reports = if warned {
            ""
        } else {
            "; the SENT webhooks get its status reports"
        };
        crate::say!(
            "Sent to the test number {TEST_NUMBER}: its delivery fails by design and costs nothing{reports}."
        );
    }
    Ok(())
}

/// Sends `body` to `to`, and prints what was sent. Whether it warned that no SENT webhook is
/// active.
async fn send_to(api: &ApiArgs, to: &str, body: &str) -> Result<bool, ApiCliError> {
    let c = client(api)?;
    let answered = c
        .send_messages_answered(&[SubmissionEntry::to_number(to, body)])
        .await?;
    // What it answered is printed all the same with --json; none made is an error (it had
    // said so, then "Sent to the test number", and exited 0).
    if api.json {
        print_sent(&answered.json)?;
    }
    if answered.value.is_empty() {
        return Err(ApiCliError::NoMessage);
    }
    let warned = warn_if_no_webhook(&c, crate::contract::TriggerScope::Sent).await;
    if api.json {
        return Ok(warned);
    }
    let sent = answered.value;
    let mut out = std::io::stdout().lock();
    // What the answer left out shows as ?, not as nothing.
    let or_unknown = |t: &str| {
        if t.is_empty() {
            "?".to_owned()
        } else {
            escape_control(t)
        }
    };
    for m in sent {
        writeln!(
            out,
            "message {} to {} {}",
            or_unknown(&m.id),
            or_unknown(&m.to),
            or_unknown(&m.status.id)
        )?;
    }
    Ok(warned)
}

/// On a clock faster than real time, how to read its deliveries in the window: at 1x every
/// retry looks too early.
fn fast_clock_hint(speed: f64) -> Option<String> {
    (speed > 1.0).then(|| {
        format!(
            "Its retries come {speed}x sooner than the real service's. Each call carries that speed (the X-Hookscope-Clock-Speed header), so the window's Timeline reads its deliveries on its clock. The times in its log below are on its clock too (they run ahead of this machine's), as are the messages' dates."
        )
    })
}

/// Say so (on stderr) when no active webhook has `scope`: what was just sent or injected then
/// reaches no receiver. Nothing is said when the webhooks cannot be listed.
/// Warns, and says so, when the service lists no active webhook for `scope` (a list that
/// cannot be read warns of nothing).
async fn warn_if_no_webhook(
    c: &crate::api::ApiClient,
    scope: crate::contract::TriggerScope,
) -> bool {
    let Ok(hooks) = c.list_webhooks().await else {
        return false;
    };
    let none = !hooks.iter().any(|w| w.active && w.trigger_scope == scope);
    if none {
        crate::say!("{}", no_webhook_warning(scope));
    }
    none
}

fn no_webhook_warning(scope: crate::contract::TriggerScope) -> String {
    let (what, s, later) = match scope {
        crate::contract::TriggerScope::Sent => (
            "its status reports go",
            "SENT",
            "the reports of messages sent after that",
        ),
        crate::contract::TriggerScope::Received => {
            ("it goes", "RECEIVED", "messages received after that")
        }
    };
    format!(
        "Note: no webhook is active for {s} messages, so {what} nowhere. Create one (`hookscope webhooks create --name NAME --url URL --scope {s}`) or make one active: {later} reach it."
    )
}

pub async fn inject(args: InjectArgs) -> Result<(), ApiCliError> {
    let c = client(&args.api)?;
    let v = c.inject_incoming(&args.from, &args.to, &args.body).await?;
    warn_if_no_webhook(&c, crate::contract::TriggerScope::Received).await;
    if args.api.json {
        return print_json(&v);
    }
    writeln!(
        std::io::stdout(),
        "incoming message {} from {} injected",
        v.get("id").and_then(|i| i.as_str()).unwrap_or("?"),
        escape_control(&args.from)
    )?;
    Ok(())
}

/// The activity lines after line `shown`, and how many lines in between are no longer kept.
fn unseen_activity(activity: &[Activity], shown: u64) -> (&[Activity], u64) {
    let start = activity.partition_point(|a| a.seq <= shown);
    let skipped = activity
        .get(start)
        .map_or(0, |a| a.seq.saturating_sub(shown + 1));
    (&activity[start..], skipped)
}

pub async fn emulate(args: EmulateArgs) -> Result<(), ApiCliError> {
    if let Some(EmulateAction::Inject(inject_args)) = args.action {
        return inject(inject_args).await;
    }
    // The same user the client commands call as, from the same variable.
    let (user, user_from) = flag_env_or(args.user.as_deref(), API_USER_ENV, "demo");
    let user_is = match user_from {
        Source::Env(var) => var,
        _ => "--user",
    };
    if user.trim().is_empty() {
        return Err(ApiCliError::Options(
            "--user cannot be empty: the account needs a name (demo by default)".into(),
        ));
    }
    if args
        .read_only_user
        .as_deref()
        .is_some_and(|u| u.trim().is_empty())
    {
        return Err(ApiCliError::Options(
            "--read-only-user cannot be empty: give the read-only principal a name (or leave the flag out for none)".into(),
        ));
    }
    // HTTP Basic splits the credentials at the first colon: such an account could never log in.
    for (flag, name) in [
        (user_is, Some(&user)),
        ("--read-only-user", args.read_only_user.as_ref()),
    ] {
        if name.is_some_and(|u| u.contains(':')) {
            return Err(ApiCliError::Options(format!(
                "{flag} cannot contain a colon: HTTP Basic authentication splits the name from the password at the first one"
            )));
        }
    }
    if args.read_only_user.as_deref() == Some(user.as_str()) {
        return Err(ApiCliError::Options(format!(
            "--read-only-user cannot be the account itself ({user}): give the read-only principal a name of its own"
        )));
    }
    // Ctrl-C, SIGTERM and SIGHUP all stop it the same way; registered before it starts.
    let mut signals = crate::signals::StopSignals::register();
    let given = env_secret(PASSWORD_ENV);
    let default_password = given.is_none();
    let password = given.unwrap_or_else(|| "demo".into());
    let given_read_only = env_secret("HOOKSCOPE_API_READONLY_PASSWORD");
    let defaults = DefaultPasswords {
        account: default_password,
        read_only: args.read_only_user.is_some() && given_read_only.is_none(),
    };
    let read_only = args.read_only_user.as_ref().map(|u| Credentials {
        user: u.clone(),
        password: given_read_only.unwrap_or_else(|| "readonly".into()),
    });
    let emu = Emulator::start(EmulatorConfig {
        bind: args.bind,
        port: args.port,
        account: Credentials {
            user: user.clone(),
            password,
        },
        read_only,
        allow_remote: args.allow_remote,
        speed: args.speed,
        brand: Brand::new(&args.brand),
        credits: args.credits,
    })
    .await?;
    if args.bind.is_unspecified() {
        crate::say!(
            "The service emulator is listening on every address of this machine: {} from here",
            emu.base_url()
        );
    } else {
        crate::say!("The service emulator is listening on {}", emu.base_url());
    }
    if let Some(warning) = exposure_warning(args.bind, defaults) {
        crate::say!("{warning}");
    }
    crate::say!(
        "Credentials: user {}, password {}",
        user,
        if default_password {
            "demo (set HOOKSCOPE_API_PASSWORD to change it)"
        } else {
            "from HOOKSCOPE_API_PASSWORD"
        }
    );
    if let Some(u) = &args.read_only_user {
        crate::say!(
            "Read-only principal: {u}, password {}",
            if defaults.read_only {
                "readonly (set HOOKSCOPE_API_READONLY_PASSWORD to change it)"
            } else {
                "from HOOKSCOPE_API_READONLY_PASSWORD"
            }
        );
    }
    crate::say!(
        "Clock speed {}x. Outbound calls: {}. Press Ctrl-C to stop.",
        args.speed,
        if args.allow_remote {
            "any host"
        } else {
            "this machine only"
        }
    );
    if let Some(hint) = fast_clock_hint(args.speed) {
        crate::say!("{hint}");
    }
    let (mut shown_activity, mut shown_mail) = (0u64, 0usize);
    let stop = signals.next();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => break,
            _ = tokio::time::sleep(std::time::Duration::from_millis(200)) => {}
        }
        let activity = emu.activity();
        let (lines, skipped) = unseen_activity(&activity, shown_activity);
        // A closed stdout (`| head`) must not stop the emulator: write errors are ignored.
        let mut out = std::io::stdout().lock();
        if skipped > 0 {
            let _ = writeln!(
                out,
                "… {skipped} more lines of activity came too fast to show"
            );
        }
        // The activity and the outbox's new mail, in the order they happened (each is in
        // order already; the sort is stable, so lines of the same second keep theirs).
        let mut due: Vec<(chrono::DateTime<chrono::Utc>, String)> = lines
            .iter()
            .map(|a| (a.at, escape_control(&a.text)))
            .collect();
        if let Some(last) = lines.last() {
            shown_activity = last.seq;
        }
        let mail = emu.outbox();
        due.extend(mail[shown_mail.min(mail.len())..].iter().map(|m| {
            (
                m.at,
                format!(
                    "OUTBOX to {}: {}: {}",
                    escape_control(&m.to),
                    m.notice,
                    escape_control(&m.text)
                ),
            )
        }));
        due.sort_by_key(|(at, _)| *at);
        for (at, text) in due {
            let _ = writeln!(out, "{}  {text}", at.format("%Y-%m-%d %H:%M:%S"));
        }
        let _ = out.flush();
        drop(out);
        shown_mail = mail.len();
    }
    emu.stop();
    Ok(())
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_webhook_table_lines_up_whatever_the_widths() {
        let mut w = Webhook {
            id: 176_380_000_001,
            name: "status".into(),
            url: "http://127.0.0.1:8787/hook".into(),
            trigger_scope: crate::contract::TriggerScope::Sent,
            active: true,
            contact_email_address: Some("ops@example.com".into()),
            on_web_app: Some(true),
            invoke_option: Some(InvokeOption::One),
        };
        let mut other = w.clone();
        other.id = 7;
        other.name = "in\u{1b}[2J".into();
        other.url = "https://example.com/a/much/longer/path".into();
        other.active = false;
        other.contact_email_address = None;
        other.invoke_option = Some(InvokeOption::Many);
        let mut unknown = other.clone();
        unknown.invoke_option = None;
        assert!(webhook_table(&[unknown])[1].contains(" ? "), "not guessed");
        w.trigger_scope = crate::contract::TriggerScope::Received;
        let lines = webhook_table(&[w, other]);
        assert_eq!(lines.len(), 3);
        // Every column starts where its title does.
        for title in ["NAME", "SCOPE", "STATE", "CALLS", "URL"] {
            let at = lines[0].find(title).unwrap();
            for line in &lines[1..] {
                let before = line.chars().nth(at - 1);
                assert_eq!(before, Some(' '), "{title} in {line:?}");
                assert_ne!(line.chars().nth(at), Some(' '), "{title} in {line:?}");
            }
        }
        let contact = lines[0].find("CONTACT").unwrap();
        assert_eq!(lines[1].find("ops@example.com"), Some(contact));
        assert!(lines[2].contains("in\\u{1b}[2J"), "escaped: {}", lines[2]);
        assert!(lines[1].trim_start().starts_with("176380000001"));

        // Wide characters take two columns in a terminal, and the columns after them still
        // line up; a very long name is cut, not stretched across every row.
        let mut wide = lines_of_two("日本語の名前");
        let scope = wide[0].find("SCOPE").unwrap();
        let cols = |line: &str, byte: usize| line[..byte].width();
        assert_eq!(
            cols(&wide[1], wide[1].find("SENT").unwrap()),
            cols(&wide[0], scope)
        );
        assert_eq!(
            cols(&wide[2], wide[2].find("SENT").unwrap()),
            cols(&wide[0], scope)
        );
        wide = lines_of_two(&"n".repeat(5000));
        assert!(wide.iter().all(|l| l.width() < 200), "{:?}", wide[2].len());
        assert!(
            wide[2].contains(&format!(" {}… ", "n".repeat(39))),
            "{}",
            wide[2]
        );
    }

    /// The table of two webhooks: "a" and one named `name`.
    fn lines_of_two(name: &str) -> Vec<String> {
        let w = Webhook::sample(1, "a");
        let mut named = w.clone();
        named.name = name.into();
        webhook_table(&[w, named])
    }

    #[test]
    fn fit_cuts_to_columns_with_an_ellipsis() {
        assert_eq!(fit("short", 40), "short");
        assert_eq!(fit("abcdef", 4), "abc…");
        // Two columns a character: 日本 is 4 columns, so 3 leave room for one and the "…".
        assert_eq!(fit("日本語", 4), "日…");
        // Escaped, and cut between escapes, not inside one.
        assert_eq!(fit("a\u{1b}[2J", 40), "a\\u{1b}[2J");
        assert_eq!(fit("ab\u{1b}cdef", 8), "ab…");
        assert_eq!(fit("ab\u{1b}cdef", 9), "ab\\u{1b}…");
    }

    /// service-api.md's Webhook response has no invokeOption: a webhook read without one is
    /// written back without one (the service's default applies, and the CLI says so), never
    /// with a guessed ONE.
    #[test]
    fn an_invoke_option_the_service_did_not_give_is_not_written_back() {
        let documented = r#"{"id":5,"name":"m","url":"http://127.0.0.1/x","triggerScope":"SENT","active":true,"contactEmailAddress":null,"onWebApp":true}"#;
        let w: Webhook = serde_json::from_str(documented).unwrap();
        assert_eq!(w.invoke_option, None);
        let e = WebhookEntry::from_webhook(&w);
        let sent = serde_json::to_value(&e).unwrap();
        assert!(sent.get("invokeOption").is_none(), "{sent}");
        assert!(
            e.unknown_invoke_option(5)
                .is_some_and(|n| n.contains("--invoke MANY"))
        );
        // Given by the service: written back as it was, no note.
        let many: Webhook =
            serde_json::from_str(&documented.replace("}", r#","invokeOption":"MANY"}"#)).unwrap();
        let e = WebhookEntry::from_webhook(&many);
        assert_eq!(e.invoke_option, Some(InvokeOption::Many));
        assert_eq!(e.unknown_invoke_option(5), None);
        // A null onWebApp is not a reason to refuse the whole answer.
        let null: Webhook =
            serde_json::from_str(&documented.replace(r#""onWebApp":true"#, r#""onWebApp":null"#))
                .unwrap();
        assert_eq!(null.on_web_app, None);
    }

    #[test]
    fn a_fast_clock_says_how_to_read_its_deliveries() {
        assert_eq!(fast_clock_hint(1.0), None);
        assert_eq!(fast_clock_hint(0.5), None);
        let hint = fast_clock_hint(600.0).unwrap();
        assert!(
            hint.contains("the window's Timeline reads its deliveries on its clock"),
            "{hint}"
        );
        assert!(
            hint.contains("The times in its log below are on its clock too"),
            "{hint}"
        );
    }

    use super::*;

    #[test]
    fn emulate_warns_when_other_machines_can_reach_it() {
        let any: IpAddr = "0.0.0.0".parse().unwrap();
        let demo = DefaultPasswords {
            account: true,
            read_only: false,
        };
        let w = exposure_warning(any, demo).expect("a warning");
        // Worded as every other warning on stderr.
        assert!(
            w.starts_with("warning: 0.0.0.0 is reachable from other machines"),
            "{w}"
        );
        assert!(w.contains("HOOKSCOPE_API_PASSWORD"), "{w}");
        assert!(!w.contains("READONLY"), "{w}");
        let w = exposure_warning(any, DefaultPasswords::default()).expect("a warning");
        assert!(!w.contains("demo") && !w.contains("default"), "{w}");
        // The read-only principal's default password is as well known as the demo one.
        let both = DefaultPasswords {
            account: true,
            read_only: true,
        };
        let w = exposure_warning(any, both).expect("a warning");
        assert!(
            w.contains("(set HOOKSCOPE_API_PASSWORD); the read-only principal's password is the default one (set HOOKSCOPE_API_READONLY_PASSWORD)."),
            "{w}"
        );
        let ro = DefaultPasswords {
            account: false,
            read_only: true,
        };
        let w = exposure_warning(any, ro).expect("a warning");
        assert!(
            w.contains("this one, and the read-only principal's password"),
            "{w}"
        );
        // The IPv4 loopback written as an IPv6 address is this machine's alone too.
        for local in ["127.0.0.1", "::1", "::ffff:127.0.0.1"] {
            assert_eq!(
                exposure_warning(local.parse().unwrap(), both),
                None,
                "{local}"
            );
        }
        assert!(exposure_warning("::ffff:10.0.0.1".parse().unwrap(), both).is_some());
    }

    fn line(seq: u64) -> Activity {
        Activity {
            seq,
            at: chrono::Utc::now(),
            text: format!("line {seq}"),
        }
    }

    #[test]
    fn activity_printing_goes_on_after_the_kept_lines_roll_over() {
        // The emulator keeps the last lines only: a reader that saw up to 500 of them must
        // still get 501 onwards once the buffer is full and rolling.
        let kept: Vec<Activity> = (301..=800).map(line).collect();
        let (lines, skipped) = unseen_activity(&kept, 500);
        assert_eq!(skipped, 0);
        assert_eq!(lines.first().map(|a| a.seq), Some(501));
        assert_eq!(lines.len(), 300);
        // A reader that fell behind is told how many lines it missed.
        let (lines, skipped) = unseen_activity(&kept, 100);
        assert_eq!(skipped, 200);
        assert_eq!(lines.len(), 500);
        // Nothing new.
        let (lines, skipped) = unseen_activity(&kept, 800);
        assert!(lines.is_empty());
        assert_eq!(skipped, 0);
        assert_eq!(unseen_activity(&[], 0).0.len(), 0);
    }
}
