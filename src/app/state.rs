//! The app's model: everything the window shows and the user chose, with no I/O and no egui
//! drawing, so tests can drive it.

use crate::contract::{Outcome, outcome_of};
use crate::responder::Answer;
use crate::store::{Filter, Stored, Summary};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Rows a page of the list holds.
pub const PAGE: u64 = 100;
/// Pages kept in memory at most; the list never holds the whole history.
const MAX_PAGES: usize = 40;

/// What persists across restarts (through eframe's storage).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Settings {
    pub bind: String,
    pub port: u16,
    pub brand: String,
    pub body_limit_mib: u64,
    pub dark: bool,
    pub zoom: f32,
    pub answer: Answer,
    pub pass_registration_check: bool,
    pub follow: bool,
    /// The rules in force, as JSON (empty: none).
    pub rules_json: String,
    /// Talk to a real service at `api_base_url` instead of the built-in emulator.
    pub api_custom: bool,
    pub api_base_url: String,
    pub api_user: String,
    /// Keep the password in the OS keychain (never anywhere else).
    pub api_remember: bool,
    /// The emulator's clock speed.
    pub emulator_speed: f64,
    /// The clock speed deliveries from any other service are read at: 1 for the real service,
    /// N for a `hookscope emulate --speed N` that calls this receiver.
    pub other_speed: f64,
    /// A public URL (a tunnel) in front of the receiver, for webhooks on the real service.
    pub public_url: String,
}

impl Settings {
    /// What is wrong with the receiver's settings, one sentence each (empty when they can be
    /// applied): a bind address that is not an IP address, a brand word a header cannot carry,
    /// a public URL that is not a whole http(s) address.
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if crate::text::parse_bind(&self.bind).is_err() {
            out.push(format!(
                "\"{}\" is not an IP address: use 127.0.0.1 (this machine only) or 0.0.0.0 (the network).",
                self.bind.trim()
            ));
        }
        if let Err(e) = crate::text::parse_brand(&self.brand) {
            out.push(format!("Brand word: {e}."));
        }
        let public = self.public_url.trim();
        if !public.is_empty() {
            let whole = url::Url::parse(public)
                .ok()
                .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some());
            if whole.is_none() {
                out.push(format!(
                    "Public URL \"{public}\" is not a whole address: give it as https://host/path (the tunnel's address), or leave it empty."
                ));
            }
        }
        out
    }

    /// The receiver's own settings (bind address, port, brand word, body limit) differ.
    pub fn receiver_differs(&self, other: &Settings) -> bool {
        self.bind != other.bind
            || self.port != other.port
            || self.brand != other.brand
            || self.body_limit_mib != other.body_limit_mib
    }

    /// The settings in force went from `was` to `now` while this draft was open (the top bar's
    /// Listen, an Apply that took): every field not typed in since follows them.
    pub fn rebase(&mut self, was: &Settings, now: &Settings) {
        if self.bind == was.bind {
            self.bind = now.bind.clone();
        }
        if self.port == was.port {
            self.port = now.port;
        }
        if self.brand == was.brand {
            self.brand = now.brand.clone();
        }
        if self.body_limit_mib == was.body_limit_mib {
            self.body_limit_mib = now.body_limit_mib;
        }
        if self.public_url == was.public_url {
            self.public_url = now.public_url.clone();
        }
    }

    /// Take the receiver's own settings from `from` (the port too, unless `keep_port`).
    pub fn take_receiver(&mut self, from: &Settings, keep_port: bool) {
        self.bind = from.bind.clone();
        self.brand = from.brand.clone();
        self.body_limit_mib = from.body_limit_mib;
        if !keep_port {
            self.port = from.port;
        }
    }

    /// Settings read back from a file written by hand or by an older version: a value that
    /// cannot be used goes back to its default, so the window starts listening anyway. Returns
    /// what was put back, one sentence each.
    pub fn repair(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        let default = Settings::default();
        if crate::text::parse_bind(&self.bind).is_err() {
            out.push(format!(
                "The saved bind address \"{}\" is not an IP address; using {}.",
                self.bind.trim(),
                default.bind
            ));
            self.bind = default.bind;
        }
        if crate::text::parse_brand(&self.brand).is_err() {
            out.push(format!(
                "The saved brand word \"{}\" cannot be used in a header name; using {}.",
                self.brand.trim(),
                default.brand
            ));
            self.brand = default.brand;
        }
        if !(1..=crate::text::MAX_BODY_LIMIT >> 20).contains(&self.body_limit_mib) {
            out.push(format!(
                "The saved body limit of {} MiB cannot be used; using {} MiB.",
                self.body_limit_mib, default.body_limit_mib
            ));
            self.body_limit_mib = default.body_limit_mib;
        }
        if !(self.emulator_speed.is_finite()
            && (1.0..=crate::emulator::MAX_SPEED).contains(&self.emulator_speed))
        {
            out.push(format!(
                "The saved emulator clock speed {} cannot be used; using {}.",
                self.emulator_speed, default.emulator_speed
            ));
            self.emulator_speed = default.emulator_speed;
        }
        if !(self.other_speed.is_finite()
            && (0.01..=crate::emulator::MAX_SPEED).contains(&self.other_speed))
        {
            self.other_speed = default.other_speed;
        }
        if !(crate::app::MIN_ZOOM..=crate::app::MAX_ZOOM).contains(&self.zoom) {
            self.zoom = default.zoom;
        }
        if !self.problems().is_empty() {
            // Only the public URL is left: it is optional.
            out.push(format!(
                "The saved public URL \"{}\" is not a whole address; it was cleared.",
                self.public_url.trim()
            ));
            self.public_url.clear();
        }
        out
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            bind: "127.0.0.1".into(),
            port: crate::receiver::DEFAULT_PORT,
            brand: "Service".into(),
            body_limit_mib: crate::receiver::DEFAULT_BODY_LIMIT >> 20,
            dark: true,
            zoom: 1.0,
            answer: Answer::default(),
            pass_registration_check: true,
            follow: true,
            rules_json: String::new(),
            api_custom: false,
            api_base_url: "https://".into(),
            api_user: String::new(),
            api_remember: false,
            emulator_speed: 60.0,
            other_speed: 1.0,
            public_url: String::new(),
        }
    }
}

/// The receiver as the top bar shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listening {
    Starting,
    On(std::net::SocketAddr),
    Failed(String),
}

/// The virtualised invocation list: a snapshot (`top`), its row count, and the pages loaded.
#[derive(Debug, Default)]
pub struct ListState {
    pub filter: Filter,
    /// Bumped whenever the snapshot or the filter changes; answers for an older one are dropped.
    pub generation: u64,
    pub top: i64,
    pub count: u64,
    pub counted: bool,
    pages: HashMap<u64, Vec<Summary>>,
    pending: HashSet<u64>,
    /// The filter the pages were loaded for.
    pages_filter: Filter,
    /// The previous snapshot's pages and row count, shown (shifted down by the calls that
    /// arrived since) while the new snapshot's load: rows never blank to "…" as calls stream
    /// in. Dropped when the filter changes, where they would show other calls.
    stale: HashMap<u64, Vec<Summary>>,
    stale_count: u64,
    pub selected: Option<i64>,
    /// Calls recorded after the snapshot (shown as "N new" when not following).
    pub newer: u64,
    /// The list should scroll to the top (after a refresh while following).
    pub scroll_to_top: bool,
    /// Its first rows have been shown: until then the list is held at its top, whatever
    /// scroll offset egui kept from the last session (it had opened some 25 rows down, the
    /// newest calls hidden above).
    pub started: bool,
    /// The list should scroll so that this row is visible.
    pub scroll_to_row: Option<u64>,
    /// The layout the list's table was last drawn with (zoom, short titles, width step,
    /// columns shown): a new one is a new table, which starts at its top.
    pub layout: Option<(i32, bool, i32, usize)>,
    /// A row the keyboard moved to before its page was loaded: selected once it is.
    pub select_when_loaded: Option<u64>,
    /// The selected call does not match the filter: the list hides it while its detail stays.
    pub selected_hidden: bool,
    /// What the search field holds: it becomes `filter.text` once typing pauses, so a half-
    /// typed word is never searched for (by a refresh for a new call, or a page loading).
    pub search_text: String,
    /// When the search text was last typed in (egui time), while that search has not started:
    /// it starts once typing pauses (or on Enter), not on every key, since a search reads the
    /// bodies of the whole store.
    pub search_typed_at: Option<f64>,
}

impl ListState {
    /// Forget the snapshot; the caller asks the engine for a new top and count.
    pub fn invalidate(&mut self) -> u64 {
        self.generation += 1;
        let pages = std::mem::take(&mut self.pages);
        if self.pages_filter == self.filter && self.counted {
            // Keep the last whole snapshot (a refresh before the previous one loaded keeps
            // the one before it).
            if !pages.is_empty() {
                self.stale = pages;
                self.stale_count = self.count;
            }
        } else {
            self.stale.clear();
        }
        self.pages_filter = self.filter.clone();
        self.pending.clear();
        self.select_when_loaded = None;
        self.counted = false;
        self.newer = 0;
        self.generation
    }

    pub fn set_count(&mut self, generation: u64, top: i64, count: u64) -> bool {
        if generation != self.generation {
            return false;
        }
        self.top = top;
        self.count = count;
        self.counted = true;
        true
    }

    /// The calls newer than the snapshot, given the newest id known to be stored (ids grow by
    /// one a call and none is deleted): counted from the store, not from events, so calls
    /// another process wrote count too and none counts twice.
    pub fn note_newest(&mut self, newest: i64) {
        if self.counted {
            self.newer = newest.saturating_sub(self.top).max(0) as u64;
        }
    }

    pub fn set_page(&mut self, generation: u64, index: u64, rows: Vec<Summary>) {
        if generation != self.generation {
            return;
        }
        self.pending.remove(&index);
        if self.pages.len() >= MAX_PAGES {
            // Drop the page farthest from this one.
            if let Some(far) = self.pages.keys().copied().max_by_key(|k| k.abs_diff(index)) {
                self.pages.remove(&far);
            }
        }
        self.pages.insert(index, rows);
    }

    /// The row at `i` (0 is the newest), if its page is loaded, or else where the previous
    /// snapshot had it (the calls that arrived since come first).
    pub fn row(&self, i: u64) -> Option<&Summary> {
        fn at(pages: &HashMap<u64, Vec<Summary>>, i: u64) -> Option<&Summary> {
            pages
                .get(&(i / PAGE))
                .and_then(|p| p.get((i % PAGE) as usize))
        }
        at(&self.pages, i).or_else(|| {
            let arrived = if self.counted {
                self.count.checked_sub(self.stale_count)?
            } else {
                0
            };
            at(&self.stale, i.checked_sub(arrived)?)
        })
    }

    /// Pages needed to show rows `range` that are neither loaded nor asked for; they are marked
    /// as asked for.
    pub fn missing_pages(&mut self, range: std::ops::Range<u64>) -> Vec<u64> {
        if !self.counted || range.is_empty() {
            return Vec::new();
        }
        let first = range.start / PAGE;
        let last = (range.end.saturating_sub(1)).min(self.count.saturating_sub(1)) / PAGE;
        let mut out = Vec::new();
        for p in first..=last {
            if !self.pages.contains_key(&p) && self.pending.insert(p) {
                out.push(p);
            }
        }
        out
    }

    /// The index of the selected row among the loaded rows.
    pub fn selected_index(&self) -> Option<u64> {
        let id = self.selected?;
        if self.filter.is_empty() && id <= self.top {
            return Some((self.top - id) as u64);
        }
        self.pages.iter().find_map(|(p, rows)| {
            rows.iter()
                .position(|r| r.id == id)
                .map(|i| p * PAGE + i as u64)
        })
    }

    /// Move the selection to row `i` if it is loaded; returns the id selected.
    pub fn select_index(&mut self, i: u64) -> Option<i64> {
        let id = self.row(i)?.id;
        self.selected = Some(id);
        self.scroll_to_row = Some(i);
        Some(id)
    }

    pub fn loaded_rows(&self) -> usize {
        self.pages.values().map(Vec::len).sum()
    }
}

/// The detail pane's tabs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum DetailTab {
    #[default]
    Messages,
    Json,
    Headers,
    Raw,
    Findings,
    Answer,
    Delivery,
}

impl DetailTab {
    pub const ALL: [DetailTab; 7] = [
        DetailTab::Delivery,
        DetailTab::Messages,
        DetailTab::Json,
        DetailTab::Headers,
        DetailTab::Raw,
        DetailTab::Findings,
        DetailTab::Answer,
    ];

    pub fn label(self) -> &'static str {
        match self {
            DetailTab::Messages => "Messages",
            DetailTab::Json => "JSON",
            DetailTab::Headers => "Headers",
            DetailTab::Raw => "Raw body",
            DetailTab::Findings => "Findings",
            DetailTab::Answer => "Answer sent",
            DetailTab::Delivery => "Timeline",
        }
    }
}

/// The answer form: what the user is typing, before it is checked and applied.
#[derive(Clone, Debug, PartialEq)]
pub struct AnswerForm {
    pub code: String,
    pub retry_after: String,
    pub body: String,
    pub content_type: String,
    /// Milliseconds (`1500`), or a duration with its unit (`1.5s`, `2m`); empty for none.
    pub delay: String,
    pub error: Option<String>,
    /// What it holds was put in force from the form itself (*Apply custom answer*, Enter): the
    /// user's own answer, kept when a preset is chosen even where it is a preset's too (503
    /// with Retry-After 120 typed by hand had been replaced by the next preset chosen).
    pub applied: bool,
}

impl AnswerForm {
    pub fn from_answer(a: &Answer) -> Self {
        AnswerForm {
            code: a.status.to_string(),
            retry_after: a.retry_after.clone().unwrap_or_default(),
            body: a.body.as_deref().unwrap_or_default().to_owned(),
            content_type: a.content_type.clone().unwrap_or_default(),
            // None is an empty field, its hint saying so: typing into it needs no erasing.
            delay: match a.delay_ms {
                0 => String::new(),
                ms => ms.to_string(),
            },
            error: None,
            applied: false,
        }
    }

    /// Whether the form holds the user's own work, which choosing a preset must not wipe: an
    /// answer no preset gives (a custom one, applied or not), or fields edited since the answer
    /// `in_force` was chosen. Otherwise the form follows the answer chosen, to start from.
    pub fn holds_work(&self, in_force: &Answer) -> bool {
        let shown = AnswerForm::from_answer(in_force);
        let edited = (
            &self.code,
            &self.retry_after,
            &self.body,
            &self.content_type,
            self.delay.trim(),
        ) != (
            &shown.code,
            &shown.retry_after,
            &shown.body,
            &shown.content_type,
            shown.delay.as_str(),
        );
        edited || self.applied || self.answer().is_ok_and(|a| !Preset::gives(&a))
    }

    /// The answer the form describes, or why it cannot be one: a sentence of its own under
    /// the form, so it starts with a capital ("the delay of 2 h is longer than an hour" is
    /// written for `listen`'s "error: " to lead into).
    pub fn answer(&self) -> Result<Answer, String> {
        self.read_answer().map_err(|e| crate::text::first_upper(&e))
    }

    fn read_answer(&self) -> Result<Answer, String> {
        let status: u16 = self.code.trim().parse().map_err(|_| {
            format!(
                "\"{}\" is not a status code: give a number such as 503",
                self.code.trim()
            )
        })?;
        let opt = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
        let delay_ms = parse_delay_ms(&self.delay)?;
        let a = Answer {
            status,
            retry_after: opt(&self.retry_after),
            body: (!self.body.is_empty()).then(|| self.body.as_str().into()),
            content_type: opt(&self.content_type),
            delay_ms,
        };
        a.check().map_err(|e| e.to_string())?;
        Ok(a)
    }
}

/// The answer form's delay: empty for none, milliseconds (`1500`), or a duration with its unit
/// (`1.5s`, `2m`), or why it is none of them.
pub fn parse_delay_ms(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Ok(0);
    }
    let shown = crate::text::escape_control(t);
    let not_a_delay = || {
        format!(
            "\"{shown}\" is not a delay: give milliseconds (1500) or a duration with its unit (1.5s, 2m)"
        )
    };
    let ms = if t.bytes().all(|b| b.is_ascii_digit()) {
        t.parse::<u64>().map_err(|_| {
            format!("\"{shown}\" is too large for a delay: an answer is held an hour at most")
        })?
    } else if t.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && t.bytes().filter(|&b| b == b'.').count() == 1
        && t.bytes().any(|b| b.is_ascii_digit())
    {
        // Without a unit, milliseconds, as the field's name says (`1.5` is not 1.5 s): read as
        // the exact decimal it is, as `--delay` reads it.
        held_to_the_ms(&format!("{t}ms"), &shown)?
    } else if t.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        held_to_the_ms(t, &shown)?
    } else {
        return Err(not_a_delay());
    };
    Ok(ms)
}

/// A delay `typed` (read as `duration`) in whole milliseconds: one finer than that (`0.4ms`,
/// `1.5`, `100us`) is refused with the nearest it can be, as `listen --delay` refuses it (the
/// field had rounded it without a word).
fn held_to_the_ms(duration: &str, shown: &str) -> Result<u64, String> {
    let (d, rounded) = crate::text::parse_duration_rounded(duration).map_err(|e| {
        if e.too_large {
            format!("\"{shown}\" is too large for a delay: an answer is held an hour at most")
        } else {
            format!(
                "\"{shown}\" is not a delay: give milliseconds (1500) or a duration with its unit (1.5s, 2m)"
            )
        }
    })?;
    let ms = u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    if rounded {
        return Err(format!(
            "\"{shown}\" is finer than a delay can be: an answer is held to the millisecond (give {ms})"
        ));
    }
    Ok(ms)
}

/// A ready-made answer, worded by the contract module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    pub code: u16,
    pub retry_after: Option<u64>,
    /// Against the real service this cannot be undone: ask first.
    pub confirm: bool,
}

impl Preset {
    pub const ALL: [Preset; 6] = [
        Preset {
            code: 200,
            retry_after: None,
            confirm: false,
        },
        Preset {
            code: 400,
            retry_after: None,
            confirm: false,
        },
        Preset {
            code: 429,
            retry_after: None,
            confirm: false,
        },
        Preset {
            code: 503,
            retry_after: Some(120),
            confirm: false,
        },
        Preset {
            code: 500,
            retry_after: None,
            confirm: false,
        },
        Preset {
            code: 410,
            retry_after: None,
            confirm: true,
        },
    ];

    pub fn outcome(self) -> Outcome {
        outcome_of(self.code)
    }

    pub fn answer(self) -> Answer {
        Answer {
            retry_after: self.retry_after.map(|s| s.to_string()),
            ..Answer::status(self.code)
        }
    }

    /// Whether a preset gives exactly this answer.
    pub fn gives(answer: &Answer) -> bool {
        Preset::ALL.iter().any(|p| p.answer() == *answer)
    }
}

/// The webhook form (create or edit).
#[derive(Clone, Debug, PartialEq)]
pub struct WebhookForm {
    /// The webhook being edited; `None` creates a new one.
    pub editing: Option<u64>,
    pub name: String,
    pub url: String,
    pub scope: crate::contract::TriggerScope,
    pub contact: String,
    pub many: bool,
    pub active: bool,
}

impl Default for WebhookForm {
    fn default() -> Self {
        WebhookForm {
            editing: None,
            name: String::new(),
            url: String::new(),
            scope: crate::contract::TriggerScope::Sent,
            contact: String::new(),
            many: false,
            active: true,
        }
    }
}

impl WebhookForm {
    /// The entry the form describes, or what is wrong with it.
    pub fn entry(&self) -> Result<crate::api::model::WebhookEntry, String> {
        if self.name.trim().is_empty() {
            return Err("Give the webhook a name.".into());
        }
        let text = self.url.trim();
        if text.is_empty() {
            return Err("Give the URL the service should call (http:// or https://).".into());
        }
        // What the user can act on first: the scheme, then a space (the service refuses one),
        // then what the URL parser found, in words ("invalid international domain name" had
        // been said of "ftp://x y").
        let scheme = text.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
        match scheme.as_deref() {
            None => {
                return Err(
                    "The URL must be a whole address, starting with http:// or https://.".into(),
                );
            }
            Some("http" | "https") => {}
            Some(_) => return Err("The URL must start with http:// or https://.".into()),
        }
        if let Some((at, c)) = text.char_indices().find(|(_, c)| c.is_whitespace()) {
            let what = match c {
                ' ' => "a space".to_owned(),
                '\t' => "a tab".to_owned(),
                '\n' | '\r' => "a line break".to_owned(),
                other => format!("a blank character (U+{:04X})", other as u32),
            };
            return Err(format!(
                "The URL has {what} in it, after \"{}\": take it out, or write it as %20.",
                crate::text::cut_chars(&text[..at], 60)
            ));
        }
        reqwest::Url::parse(text).map_err(|e| match e {
            url::ParseError::EmptyHost => format!(
                "The URL has no host after {}://.",
                scheme.as_deref().unwrap_or("http")
            ),
            url::ParseError::InvalidPort => {
                "The URL's port is not a number up to 65535.".to_owned()
            }
            url::ParseError::IdnaError | url::ParseError::InvalidDomainCharacter => {
                "The URL's host name has a character a host name cannot have.".to_owned()
            }
            url::ParseError::InvalidIpv4Address | url::ParseError::InvalidIpv6Address => {
                "The URL's host is not a valid IP address.".to_owned()
            }
            other => format!("The URL is not valid: {other}."),
        })?;
        let contact = self.contact.trim();
        if !contact.is_empty() && !crate::text::is_email(contact) {
            return Err(format!("\"{contact}\" is not an e-mail address."));
        }
        let mut e =
            crate::api::model::WebhookEntry::new(self.name.trim(), self.url.trim(), self.scope);
        e.contact_email_address = (!contact.is_empty()).then(|| contact.to_owned());
        e.active = Some(self.active);
        e.invoke_option = Some(if self.many {
            crate::api::model::InvokeOption::Many
        } else {
            crate::api::model::InvokeOption::One
        });
        Ok(e)
    }
}

/// The service side: connection, webhooks, emulator.
#[derive(Debug, Default)]
pub struct ServiceState {
    pub emulator: Option<crate::emulator::Emulator>,
    pub emulator_error: Option<String>,
    /// The password or token secret: in memory only, never saved.
    pub password: String,
    pub webhooks: Vec<crate::api::model::Webhook>,
    /// How many webhooks the service last listed that Hookscope cannot read (named in
    /// `status`): with none readable, the panel does not say there are none.
    pub unreadable: usize,
    pub listed: bool,
    /// The last result, in words: Ok for news, Err for a problem.
    pub status: Option<Result<String, String>>,
    pub form: WebhookForm,
    pub form_open: bool,
    /// The form was just opened: brought into sight once (opened by a card's Edit or *Point
    /// it at the receiver*, it had opened below the last card, out of sight).
    pub form_reveal: bool,
    pub confirm_delete: Option<u64>,
    pub busy: u32,
    /// A test message was sent: the next status report is highlighted.
    pub awaiting_test: bool,
    /// The test message's status reports so far and when the first came: those that follow
    /// it within [`TEST_REPORTS_WINDOW`] are its later ones (SENT, then FAILED), and the last
    /// is the one selected.
    pub test_reports: Option<TestReports>,
    /// An incoming message was sent with Receive: the next incoming-message call is selected.
    pub awaiting_incoming: bool,
    pub inject_from: String,
    pub inject_text: String,
    /// Waiting for the user to confirm outbound calls to other hosts.
    pub confirm_remote: bool,
    /// The status the panel's foot showed in the last frame: a new one is news.
    pub status_shown: Option<Result<String, String>>,
    /// Frames left in which the last click's place is kept in sight (news came).
    pub keep_in_sight: u8,
    /// Where in the panel's scrolled content the last click was (points from its top): kept
    /// in sight when a status appears at the foot, which would cover it.
    pub clicked_at: Option<f32>,
    /// Where the panel was at that click: held while the foot's words come and go (the
    /// content padded at its end so that it can be), until the user scrolls, the panel's room
    /// changes or its content does.
    pub held: Option<HeldPlace>,
    /// Ports the receiver listened on earlier in this session: a webhook still pointing at
    /// one of them on this machine reaches nothing now, and the panel says so.
    pub receiver_was: Vec<u16>,
    /// The webhook id the demo's sample calls carry (`--demo`): a recording's, not one of the
    /// emulator's, which the panel says while it lists none ("No webhooks yet" beside a list
    /// of calls from webhook 234 had left a presenter to explain where they came from).
    pub sample_webhook: Option<&'static str>,
}

/// Where a webhook's `url` should point now that the receiver listens at `now`, if it points
/// at this machine on a port the receiver left (one of `was`): the same URL on the new port.
/// A URL at another host, or at a port the receiver never had, is the user's business.
pub fn moved_receiver_url(url: &str, was: &[u16], now: std::net::SocketAddr) -> Option<String> {
    let mut parsed = url::Url::parse(url).ok()?;
    let local = on_this_machine(&parsed, now);
    let port = parsed.port_or_known_default()?;
    if !local || parsed.scheme() != "http" || port == now.port() || !was.contains(&port) {
        return None;
    }
    parsed.set_port(Some(now.port())).ok()?;
    Some(parsed.to_string())
}

/// Whether `url` names this machine: a loopback name or address, or the one the receiver at
/// `now` listens on.
fn on_this_machine(url: &url::Url, now: std::net::SocketAddr) -> bool {
    let Some(host) = url.host() else {
        return false;
    };
    crate::api::reach::reach(&host) == crate::api::reach::Reach::ThisMachine
        || match host {
            url::Host::Ipv4(ip) => std::net::IpAddr::V4(ip) == now.ip(),
            url::Host::Ipv6(ip) => std::net::IpAddr::V6(ip) == now.ip(),
            url::Host::Domain(_) => false,
        }
}

/// The port of `url` when it names this machine but not the receiver listening at `now`
/// (another port, or https, which the receiver does not speak): the registration check goes
/// to whatever listens there, not to the receiver.
pub fn elsewhere_on_this_machine(url: &str, now: std::net::SocketAddr) -> Option<u16> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    let port = parsed.port_or_known_default()?;
    (on_this_machine(&parsed, now) && (port != now.port() || parsed.scheme() != "http"))
        .then_some(port)
}

/// The Service panel's place at a click in it (see [`ServiceState::held`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HeldPlace {
    /// How far it was scrolled.
    pub offset: f32,
    /// The room for its content and its foot together.
    pub room: f32,
    /// The height of its content (without the blank kept at its end).
    pub content: f32,
}

/// What would replace the editor's unapplied changes, waiting for the user to say yes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replacing {
    /// A recipe (index into the recipes).
    Recipe(usize),
    /// *Clear rules*.
    Clear,
}

/// The rules editor.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RulesEditor {
    /// How many rules are in force (shown in the top bar beside the fixed answer).
    pub in_force: usize,
    /// The rule in force that answers every call (no condition, never retiring), if one does:
    /// the rules after it and the fixed answer are then never used.
    pub catch_all: Option<String>,
    pub open: bool,
    pub text: String,
    pub error: Option<String>,
    pub note: Option<String>,
    pub file: Option<std::path::PathBuf>,
    /// A recipe chosen while the editor holds changes not applied: it waits for the user to
    /// say the changes may go (index into the recipes).
    pub confirm_recipe: Option<Replacing>,
    /// The File field of the editor: a path typed by hand (or the last one loaded or saved),
    /// for desktops where no file dialog can open.
    pub path_text: String,
}

/// A button of the Answer panel just clicked, kept where it was on the screen while the
/// text above it (the What-if) changes with what it applied: the next click would land on
/// another button (a recipe, the custom answer's Apply).
#[derive(Debug, Default)]
pub struct KeptPlace {
    pub anchor: Option<Anchor>,
    /// Room kept below the panel's content while the pointer is over it: scrolled to its end,
    /// the panel has nothing more to scroll by when what is below the button gets shorter
    /// (the rules listed below a recipe get fewer), and the button would slide down.
    pub room_below: f32,
    /// Room kept above the panel's content while the pointer is over it: near the panel's top,
    /// there is not enough to scroll back by when what is above the button gets shorter, and
    /// the button would slide up.
    pub room_above: f32,
    /// A recipe clicked over changes not applied: where it was, kept once the confirmation
    /// applies it (the What-if above it grows then, as when no confirmation is asked).
    pub pending: Option<Anchor>,
}

/// How many of a call's findings the Findings tab lays out at a time. Each is a wrapped
/// sentence; 16,000 of them (eight fields missing from each of 2,000 messages) laid out on every
/// frame took half a second a frame.
pub const FINDINGS_PAGE: usize = 200;

/// The test message's status reports, as they come (see [`ServiceState::test_reports`]).
#[derive(Debug, Clone)]
pub struct TestReports {
    pub since: std::time::Instant,
    /// Each report's call and delivery, in the order they came.
    pub calls: Vec<(i64, Option<String>)>,
    /// Later attempts of those deliveries (an answer that asks for a retry): counted, and not
    /// selected, since they are not new reports (each had taken the selection, and the panel
    /// had named them as more reports).
    pub retries: u32,
    /// What the panel said of the reports, before the retries' count.
    pub said: String,
}

/// How long after the test message's first status report the next ones are taken for its own
/// (the emulator sends the final one a moment after SENT).
pub const TEST_REPORTS_WINDOW: std::time::Duration = std::time::Duration::from_secs(10);

/// A button kept in its place on the screen for a few frames after a click.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Anchor {
    pub id: egui::Id,
    pub top: f32,
    /// Frames left to keep it there.
    pub frames: u8,
}

/// Where panels were laid out, in points.
#[derive(Clone, Copy, Debug)]
pub struct LaidOut {
    /// The list's panel, in the middle.
    pub list: egui::Rect,
    /// The detail panel's content, below the list.
    pub detail: egui::Rect,
    /// All of the window under the top bar, whose height grows with the zoom.
    pub below_bar: egui::Rect,
    /// The detail panel whole, its top edge (the line under the list) included.
    pub detail_panel: egui::Rect,
    /// How tall the top bar's notice under its controls is (a port taken), 0 without one.
    pub bar_notice: f32,
}

/// Everything the window shows.
#[derive(Debug)]
pub struct AppState {
    /// A text field had the keyboard when this frame began: its Enter (which also gives the
    /// focus up) is the field's, not the list's "open".
    pub typing: bool,
    /// A text field had the keyboard when the last frame ended. egui takes the focus from a
    /// field on Escape before the frame begins, so this is how an Escape is known to have
    /// been the field's (it leaves the field, and closes nothing).
    pub typed_last_frame: bool,
    /// A text field (a number box being typed in included) had the keyboard when this frame
    /// began, and when the last one ended: an Escape then leaves the field, and closes
    /// nothing. (A button with the keyboard, reached with Tab, does not count: as in a dialog,
    /// Escape then closes the window; it had only taken the keyboard from the button.)
    pub text_focus: bool,
    pub text_focus_last_frame: bool,
    /// A popup (a list filter's menu) was open when this frame began: an Escape closes it, and
    /// nothing else.
    pub popup_at_start: bool,
    /// The Service panel is shown as a drawer over the list in this frame.
    pub drawer_shown: bool,
    /// Where the list and the detail were laid out in the last frame.
    pub laid_out: LaidOut,
    pub settings: Settings,
    pub data_dir: std::path::PathBuf,
    pub listening: Listening,
    pub list: ListState,
    /// The selected call, shared (each frame draws it without copying its body).
    pub detail: Option<std::sync::Arc<Stored>>,
    /// Its body read as JSON, once, off the UI thread (`None`: not JSON).
    pub detail_json: Option<std::sync::Arc<serde_json::Value>>,
    /// The delivery of the selected call, read against the schedule.
    pub delivery: Option<Box<crate::deliveries::Delivery>>,
    pub detail_tab: DetailTab,
    pub form: AnswerForm,
    /// An answer waiting for the user's confirmation (410): a preset's, or a custom one with
    /// its body, content type and delay.
    pub confirm: Option<crate::responder::Answer>,
    /// Why the answer in force is not the one saved by the last session (a 410, which is not
    /// restored without its confirmation), until another answer is chosen.
    pub answer_notice: Option<String>,
    pub show_settings: bool,
    /// The settings Apply was last pressed on in the Settings window, and whether the press
    /// restarted the receiver: while its fields still hold them, the window says what the
    /// press did.
    pub settings_applied: Option<(Settings, bool)>,
    /// The window's first frame is being drawn (until `app_ui` ends it).
    pub first_frame: bool,
    /// The last frame was too narrow for both side panels and the list.
    pub was_narrow: bool,
    /// The Service panel stepped aside for a narrow window (not closed by the user): it comes
    /// back when the window is wide enough again.
    pub service_aside: bool,
    /// The zoom the last frame was drawn at: the one asked for (kept in the settings), or less
    /// when the window has no room for it ([`crate::app::largest_zoom`]).
    pub zoom_shown: f32,
    /// The largest zoom the window had room for in the last frame.
    pub zoom_room: f32,
    /// How wide the top bar's receiver status and its buttons were in the last frame, to lay
    /// it out on one line or two.
    pub top_bar_widths: [f32; 2],
    /// The widest answer the top bar has laid out at its width (the bar's width, the answer's):
    /// once one has taken the bar onto a second line, it keeps the line while the window keeps
    /// its width, so a shorter answer chosen next does not move everything under the bar.
    pub top_bar_answer: (f32, f32),
    /// What the Settings window edits while it is open; nothing takes effect (or is saved)
    /// until its button applies it, and closing the window throws it away.
    pub settings_draft: Option<Settings>,
    /// The settings in force when the draft was last brought up to date with them.
    pub settings_draft_base: Option<Settings>,
    /// Receiver settings being tried: they become the settings in force (and saved) only once
    /// the receiver listens with them.
    pub pending_receiver: Option<Settings>,
    /// The port typed in the top bar after a failure to listen.
    pub port_text: String,
    /// What the top bar's port field held when *Listen* refused it, and why: said in place of
    /// the failure to listen while the field still holds it, and no longer once it is edited.
    pub port_refused: Option<(String, String)>,
    /// *Any free port* was chosen: this session listens on whatever port is free, while the
    /// saved port stays the one chosen (a tunnel set up for it finds it again next time).
    pub any_port_this_session: bool,
    /// A receiver restart that failed while the previous receiver kept listening.
    pub listen_notice: Option<String>,
    /// The settings the last failed start or restart tried: Settings says why it failed only
    /// while its fields still ask for them (an error about port 80 under a port since changed
    /// to 8080 reads as if 8080 were in use).
    pub receiver_tried: Option<Settings>,
    /// The copy button last clicked and when (egui time), so it can say "Copied" for a moment.
    pub copied: Option<(String, f64)>,
    /// The last background error, shown until dismissed.
    pub error: Option<String>,
    /// Calls recorded since the app started.
    pub recorded: u64,
    /// The newest call id known to be in the store (from this window's receiver, or from the
    /// store itself when another process writes to it).
    pub newest: i64,
    /// The calls whose answer the receiver now holds back by a delay (stored when answered).
    pub held: Vec<crate::receiver::Held>,
    /// When a call was last seen held: the box that names them stays a moment after the last
    /// is answered, so that delayed calls coming one after another do not make the list grow
    /// and shrink every two seconds.
    pub held_seen_at: Option<std::time::Instant>,
    pub rules: RulesEditor,
    /// The Answer panel's button just clicked, kept in its place.
    pub answer_place: KeptPlace,
    /// The Service panel lies over the list as a drawer (the window is too narrow for it
    /// beside the list): the list's keys are not the list's while it is there.
    pub service_drawer: bool,
    pub service: ServiceState,
    pub show_service: bool,
}

impl AppState {
    pub fn new(settings: Settings, data_dir: std::path::PathBuf) -> Self {
        AppState {
            typing: false,
            typed_last_frame: false,
            popup_at_start: false,
            text_focus: false,
            text_focus_last_frame: false,
            drawer_shown: false,
            laid_out: LaidOut {
                list: egui::Rect::NOTHING,
                detail: egui::Rect::NOTHING,
                below_bar: egui::Rect::NOTHING,
                detail_panel: egui::Rect::NOTHING,
                bar_notice: 0.0,
            },
            form: AnswerForm::from_answer(&settings.answer),
            port_text: settings.port.to_string(),
            port_refused: None,
            any_port_this_session: false,
            listen_notice: None,
            receiver_tried: None,
            copied: None,
            settings,
            data_dir,
            listening: Listening::Starting,
            list: ListState::default(),
            detail: None,
            detail_json: None,
            delivery: None,
            detail_tab: DetailTab::default(),
            confirm: None,
            answer_notice: None,
            show_settings: false,
            settings_applied: None,
            first_frame: true,
            was_narrow: false,
            service_aside: false,
            zoom_shown: 0.0,
            zoom_room: crate::app::MAX_ZOOM,
            top_bar_widths: [0.0; 2],
            top_bar_answer: (0.0, 0.0),
            settings_draft: None,
            settings_draft_base: None,
            pending_receiver: None,
            error: None,
            recorded: 0,
            newest: 0,
            held: Vec::new(),
            held_seen_at: None,
            rules: RulesEditor::default(),
            answer_place: KeptPlace::default(),
            service_drawer: false,
            service: ServiceState {
                inject_from: "+27007654321".into(),
                inject_text: "YES".into(),
                ..ServiceState::default()
            },
            show_service: true,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_webhook_left_behind_by_the_receiver_is_pointed_at_its_new_port() {
        use super::moved_receiver_url as moved;
        let now: std::net::SocketAddr = "127.0.0.1:28787".parse().unwrap();
        let was = [8787];
        assert_eq!(
            moved("http://127.0.0.1:8787/hook?x=1", &was, now).as_deref(),
            Some("http://127.0.0.1:28787/hook?x=1")
        );
        assert_eq!(
            moved("http://localhost:8787/a", &was, now).as_deref(),
            Some("http://localhost:28787/a")
        );
        // Already there, never the receiver's, another host, or not a URL: left alone.
        for url in [
            "http://127.0.0.1:28787/hook",
            "http://127.0.0.1:3000/hook",
            "http://example.com:8787/hook",
            "https://127.0.0.1:8787/hook",
            "not a url",
        ] {
            assert_eq!(moved(url, &was, now), None, "{url}");
        }
    }

    #[test]
    fn a_url_on_this_machine_but_not_at_the_receiver_is_told_apart() {
        use super::elsewhere_on_this_machine as elsewhere;
        let now: std::net::SocketAddr = "127.0.0.1:8787".parse().unwrap();
        assert_eq!(elsewhere("http://127.0.0.1:19398/hook", now), Some(19398));
        assert_eq!(elsewhere("http://localhost/hook", now), Some(80));
        assert_eq!(elsewhere("https://127.0.0.1:8787/hook", now), Some(8787));
        // The receiver's own, another machine (a tunnel), or not a URL: not said.
        for url in [
            "http://127.0.0.1:8787/hook",
            " http://localhost:8787/x ",
            "https://abc.ngrok.app/hook",
            "not a url",
            "",
        ] {
            assert_eq!(elsewhere(url, now), None, "{url}");
        }
    }

    #[test]
    fn a_draft_follows_the_settings_in_force_where_nothing_was_typed() {
        let was = Settings::default();
        let mut draft = Settings {
            brand: "Acme".into(),
            ..was.clone()
        };
        let now = Settings {
            port: 9000,
            brand: "Other".into(),
            ..was.clone()
        };
        draft.rebase(&was, &now);
        assert_eq!(draft.port, 9000, "not typed: follows");
        assert_eq!(draft.brand, "Acme", "typed: kept");
        assert!(!draft.receiver_differs(&Settings {
            brand: "Acme".into(),
            ..now.clone()
        }));
    }

    #[test]
    fn saved_settings_that_cannot_be_used_go_back_to_their_defaults() {
        let mut s = Settings {
            bind: "not-an-ip".into(),
            brand: "Bad Word!".into(),
            public_url: "xyz".into(),
            port: 24567,
            body_limit_mib: 0,
            emulator_speed: -5.0,
            other_speed: f64::NAN,
            zoom: 40.0,
            ..Settings::default()
        };
        let said = s.repair();
        assert_eq!(said.len(), 5, "{said:?}");
        assert!(said[0].contains("\"not-an-ip\" is not an IP address; using 127.0.0.1"));
        assert!(said[1].contains("\"Bad Word!\""));
        assert!(said[2].contains("body limit of 0 MiB"));
        assert!(said[3].contains("clock speed -5 cannot be used; using 60"));
        assert!(said[4].contains("public URL \"xyz\""));
        let d = Settings::default();
        assert_eq!(
            (s.body_limit_mib, s.emulator_speed, s.other_speed, s.zoom),
            (d.body_limit_mib, d.emulator_speed, d.other_speed, d.zoom)
        );
        assert!(s.problems().is_empty());
        assert_eq!(
            (s.bind.as_str(), s.brand.as_str()),
            ("127.0.0.1", "Service")
        );
        assert!(s.public_url.is_empty());
        // What could be used is kept.
        assert_eq!(s.port, 24567);
        let mut fine = Settings::default();
        assert!(fine.repair().is_empty());
        assert_eq!(fine, Settings::default());
    }

    #[test]
    fn settings_problems_name_each_bad_field() {
        assert!(Settings::default().problems().is_empty());
        let s = Settings {
            bind: "999.1.1.1".into(),
            brand: "Bad Word!".into(),
            public_url: "not a url".into(),
            ..Settings::default()
        };
        let p = s.problems();
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].contains("\"999.1.1.1\" is not an IP address"));
        assert!(p[1].starts_with("Brand word:"));
        assert!(p[2].contains("not a whole address"));
        let ok = Settings {
            bind: "0.0.0.0".into(),
            brand: "Acme_2".into(),
            public_url: "https://xyz.trycloudflare.com/hook".into(),
            ..Settings::default()
        };
        assert!(ok.problems().is_empty(), "{:?}", ok.problems());
        // As on the command line, localhost is the loopback address.
        let local = Settings {
            bind: "localhost".into(),
            ..Settings::default()
        };
        assert!(local.problems().is_empty(), "{:?}", local.problems());
        let relative = Settings {
            public_url: "/hook".into(),
            ..Settings::default()
        };
        assert_eq!(relative.problems().len(), 1);
    }

    use super::*;

    fn row(id: i64) -> Summary {
        Summary {
            id,
            received_at: chrono::Utc::now(),
            method: "POST".into(),
            path: "/".into(),
            query: None,
            event: None,
            delivery: None,
            attempt: None,
            webhook_id: None,
            messages: None,
            answer_status: 200,
            outcome: Outcome::Succeeded,
            body_size: 0,
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
    fn pages_are_asked_for_once_and_stale_answers_dropped() {
        let mut l = ListState::default();
        let g = l.invalidate();
        assert!(
            l.missing_pages(0..10).is_empty(),
            "nothing before the count"
        );
        assert!(l.set_count(g, 250, 250));
        assert_eq!(l.missing_pages(90..120), vec![0, 1]);
        assert_eq!(l.missing_pages(90..120), Vec::<u64>::new(), "already asked");
        l.set_page(g, 0, (151..=250).rev().map(row).collect());
        assert_eq!(l.row(0).map(|r| r.id), Some(250));
        assert_eq!(l.row(99).map(|r| r.id), Some(151));
        assert_eq!(l.row(100), None);
        let old = g;
        let g2 = l.invalidate();
        l.set_page(old, 1, vec![row(1)]);
        assert_eq!(
            l.loaded_rows(),
            0,
            "an answer for an old snapshot is dropped"
        );
        assert!(!l.set_count(old, 1, 1));
        assert!(l.set_count(g2, 250, 250));
        assert_eq!(l.missing_pages(240..250), vec![2], "clamped to the count");
    }

    /// While calls stream in, the rows already shown stay (one place further down for each new
    /// call) until the new snapshot's pages arrive; another filter shows nothing stale.
    #[test]
    fn rows_stay_in_sight_while_a_new_snapshot_loads() {
        let mut l = ListState::default();
        let g = l.invalidate();
        l.set_count(g, 10, 10);
        l.set_page(g, 0, (1..=10).rev().map(row).collect());
        let g = l.invalidate();
        assert_eq!(l.row(0).map(|r| r.id), Some(10), "before the new count");
        // Two calls arrived: the old newest is now the third row; the two new ones load.
        l.set_count(g, 12, 12);
        assert_eq!(l.row(0), None);
        assert_eq!(l.row(2).map(|r| r.id), Some(10));
        assert_eq!(l.row(11).map(|r| r.id), Some(1));
        l.set_page(g, 0, (1..=12).rev().map(row).collect());
        assert_eq!(l.row(0).map(|r| r.id), Some(12));
        // Another filter: the rows shown were another list's.
        l.filter.text = "x".into();
        l.invalidate();
        assert_eq!(l.row(0), None);
    }

    #[test]
    fn selection_by_id_and_index() {
        let mut l = ListState::default();
        let g = l.invalidate();
        l.set_count(g, 10, 10);
        l.set_page(g, 0, (1..=10).rev().map(row).collect());
        assert_eq!(l.select_index(3), Some(7));
        assert_eq!(l.selected_index(), Some(3));
        assert_eq!(l.select_index(50), None);
    }

    #[test]
    fn the_webhook_form_says_what_a_url_needs_in_plain_words() {
        let form = |url: &str| WebhookForm {
            name: "w".into(),
            url: url.into(),
            ..WebhookForm::default()
        };
        assert_eq!(
            form("  ").entry().unwrap_err(),
            "Give the URL the service should call (http:// or https://)."
        );
        let e = form("example.com/hook").entry().unwrap_err();
        assert_eq!(
            e,
            "The URL must be a whole address, starting with http:// or https://."
        );
        assert!(
            form("ftp://example.com/x")
                .entry()
                .unwrap_err()
                .contains("http://")
        );
        assert!(form("http://127.0.0.1:8787/hook").entry().is_ok());
        // The scheme first, then a space, then the parser's finding in words.
        let said = |url: &str| form(url).entry().unwrap_err();
        assert_eq!(
            said("ftp://x y"),
            "The URL must start with http:// or https://."
        );
        assert_eq!(
            said("http://x y/hook"),
            "The URL has a space in it, after \"http://x\": take it out, or write it as %20."
        );
        assert_eq!(said("http://"), "The URL has no host after http://.");
        assert_eq!(said("HTTPS://"), "The URL has no host after https://.");
        assert_eq!(
            said("http://host:99999/"),
            "The URL's port is not a number up to 65535."
        );
        assert_eq!(
            said("http://exa%mple.com/"),
            "The URL's host name has a character a host name cannot have."
        );
        assert_eq!(
            said("http://[::1/"),
            "The URL's host is not a valid IP address."
        );
        assert!(form("HTTPS://example.com/hook").entry().is_ok());
        assert!(said("http://x\ty/").starts_with("The URL has a tab in it, after \"http://x\""));
        assert!(
            said("http://x\u{a0}y/").starts_with("The URL has a blank character (U+00A0) in it")
        );
    }

    #[test]
    fn the_answer_form_checks_what_is_typed() {
        let mut f = AnswerForm::from_answer(&Answer::status(200));
        f.code = "503".into();
        f.retry_after = "120".into();
        let a = f.answer().unwrap();
        assert_eq!(a.status, 503);
        assert_eq!(a.retry_after.as_deref(), Some("120"));
        f.code = "abc".into();
        assert!(f.answer().unwrap_err().contains("not a status code"));
        f.code = "700".into();
        assert!(f.answer().unwrap_err().contains("200-599"));
    }

    #[test]
    fn the_answer_form_reads_a_delay_or_says_why_it_cannot() {
        use super::parse_delay_ms;
        assert_eq!(parse_delay_ms(""), Ok(0));
        assert_eq!(parse_delay_ms(" 1500 "), Ok(1500));
        assert_eq!(parse_delay_ms("1.5s"), Ok(1500));
        assert_eq!(parse_delay_ms("2m"), Ok(120_000));
        assert_eq!(parse_delay_ms("250ms"), Ok(250));
        // Without a unit, milliseconds; a fraction of one is refused with the nearest it can
        // be, as `--delay` refuses it (it had been rounded without a word), whatever the unit.
        assert_eq!(parse_delay_ms("1500.0"), Ok(1500));
        assert_eq!(parse_delay_ms("5."), Ok(5));
        assert_eq!(parse_delay_ms("2000us"), Ok(2));
        for (fine, nearest) in [("1.5", 2), ("0.4ms", 0), ("100us", 0), ("1.0005s", 1001)] {
            let e = parse_delay_ms(fine).unwrap_err();
            assert_eq!(
                e,
                format!(
                    "\"{fine}\" is finer than a delay can be: an answer is held to the millisecond (give {nearest})"
                )
            );
        }
        assert!(parse_delay_ms(".").is_err());
        assert!(parse_delay_ms("1.2.3").is_err());
        for bad in ["abc", "-5", "5x", "1,5s"] {
            let e = parse_delay_ms(bad).unwrap_err();
            assert!(
                e.contains("is not a delay: give milliseconds (1500)"),
                "{bad}: {e}"
            );
        }
        let e = parse_delay_ms("99999999999999999999999").unwrap_err();
        assert!(e.contains("too large for a delay"), "{e}");
        // Read, then refused by the answer for being over an hour, with the length said.
        let mut f = AnswerForm::from_answer(&Answer::status(200));
        f.delay = "2h".into();
        assert_eq!(
            f.answer().unwrap_err(),
            "The delay of 2 h is longer than an hour, the most Hookscope holds an answer"
        );
        f.delay = "3600001".into();
        assert_eq!(
            f.answer().unwrap_err(),
            "The delay of 3600001 ms is longer than an hour, the most Hookscope holds an answer"
        );
        f.delay = "x\u{1b}".into();
        assert!(
            f.answer()
                .unwrap_err()
                .starts_with("\"x\\u{1b}\" is not a delay")
        );
        // What used to be clamped to two minutes is kept as typed.
        f.delay = "180000".into();
        assert_eq!(f.answer().map(|a| a.delay_ms), Ok(180_000));
    }

    #[test]
    fn the_answer_form_keeps_the_users_work_from_a_preset() {
        let in_force = Answer::status(200);
        // Showing the answer in force: nobody's work, it follows the next choice.
        let f = AnswerForm::from_answer(&in_force);
        assert!(!f.holds_work(&in_force));
        // A preset's answer shown in the form (chosen by its card) is not work either.
        let p503 = Preset::ALL[3].answer();
        assert!(!AnswerForm::from_answer(&p503).holds_work(&p503));
        // Typed and applied from the form, the same answer is the user's: kept.
        let mut typed = AnswerForm::from_answer(&p503);
        typed.applied = true;
        assert!(typed.holds_work(&p503));
        // Fields edited and not applied are.
        let mut edited = f.clone();
        edited.delay = "8000".into();
        assert!(edited.holds_work(&in_force));
        // So is a half-typed code.
        let mut half = f.clone();
        half.code = "5".into();
        assert!(half.holds_work(&in_force));
        // And a custom answer in force, kept once a preset takes over.
        let custom = Answer {
            body: Some("try later".into()),
            ..Answer::status(500)
        };
        assert!(AnswerForm::from_answer(&custom).holds_work(&custom));
        assert!(Preset::gives(&p503) && !Preset::gives(&custom));
    }

    #[test]
    fn presets_say_what_the_contract_says() {
        let p = Preset::ALL.iter().find(|p| p.code == 410).unwrap();
        assert!(p.confirm);
        assert_eq!(p.outcome(), Outcome::WebhookCancelled);
        let p = Preset::ALL.iter().find(|p| p.code == 503).unwrap();
        assert_eq!(p.answer().retry_after.as_deref(), Some("120"));
        assert_eq!(
            Preset::ALL.iter().filter(|p| p.confirm).count(),
            1,
            "only 410 asks"
        );
    }
}
