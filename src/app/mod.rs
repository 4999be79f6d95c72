//! The desktop app: an eframe/egui window over the capture engine.
//!
//! `HookscopeApp` holds the engine handles and the channel; [`state::AppState`] holds what is
//! shown. `logic` drains what the background reported (time-capped) and applies it; `ui` only
//! draws and turns clicks into engine commands. Panels live in their own files.

pub mod demo;
pub mod engine;
pub mod files;
pub mod fonts;
mod json_view;
mod pointer;
pub mod run;
pub mod secrets;
pub mod state;
mod ui;

pub use ui::contrast_ratio;

use crate::contract::Brand;
use crate::receiver::ReceiverConfig;
use engine::{Engine, Msg};
use state::{AppState, Listening, Settings};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// The key under which settings are kept in eframe's storage.
pub const SETTINGS_KEY: &str = "hookscope.settings";

/// Most time `logic` spends draining messages in one frame.
/// What a refused rules text's error starts with (not a rules file that could not be read or
/// written: those leave the rules alone too, but were never to be put in force).
pub const REFUSED_RULES: &str = "Not put in force, the rules answering are unchanged: ";

const DRAIN_BUDGET: Duration = Duration::from_millis(4);

/// A screenshot to take once the window has settled, then exit.
#[derive(Debug, Clone)]
pub struct ScreenshotPlan {
    pub path: PathBuf,
    /// Frames to wait before taking it (pages load in the background meanwhile).
    pub after_frames: u32,
}

pub struct HookscopeApp {
    pub state: AppState,
    engine: Engine,
    picker: std::sync::Arc<dyn files::FilePicker>,
    secrets: std::sync::Arc<dyn secrets::SecretStore>,
    rx: Receiver<Msg>,
    screenshot: Option<ScreenshotPlan>,
    frames: u32,
    screenshot_result: std::sync::Arc<std::sync::Mutex<Option<Result<(), String>>>>,
    /// When the store's newest id was last asked for, and whether that answer is still to come.
    polled_at: Option<Instant>,
    polling: bool,
    /// Where the pointer is across a zoom (A+ twice without moving the mouse).
    pointer: pointer::PointerZoom,
}

/// How often the window looks for calls another process (a `listen` on the same data
/// directory) added to the store.
const NEWEST_POLL: std::time::Duration = std::time::Duration::from_secs(2);

impl HookscopeApp {
    /// Build the app. `settings` are the saved ones (or defaults); the receiver starts at once.
    pub fn new(
        ctx: &egui::Context,
        mut engine: Engine,
        rx: Receiver<Msg>,
        settings: Settings,
        data_dir: PathBuf,
    ) -> Self {
        let repaint = ctx.clone();
        engine.set_waker(std::sync::Arc::new(move || repaint.request_repaint()));
        let mut state = AppState::new(settings, data_dir);
        // A 410 cancels the webhook, and against the real service for good: it asks for a
        // confirmation when chosen, and a new session does not answer it unasked.
        if state.settings.answer.outcome() == crate::contract::Outcome::WebhookCancelled {
            state.answer_notice = Some(format!(
                "The last session answered {}, which cancels the webhook; this one answers 200 until you choose it again.",
                state.settings.answer.status
            ));
            state.settings.answer = crate::responder::Answer::default();
            state.form = state::AnswerForm::from_answer(&state.settings.answer);
        }
        if engine.set_answer(state.settings.answer.clone()).is_err() {
            state.settings.answer = crate::responder::Answer::default();
            state.form = state::AnswerForm::from_answer(&state.settings.answer);
        }
        engine
            .responder
            .set_pass_registration_check(state.settings.pass_registration_check);
        apply_look(ctx, &state.settings);
        if (MIN_ZOOM..=MAX_ZOOM).contains(&state.settings.zoom) {
            ctx.set_zoom_factor(state.settings.zoom);
        }
        if !state.settings.rules_json.trim().is_empty() {
            match crate::rules::RuleSet::parse("saved rules", &state.settings.rules_json) {
                Ok(rules) => {
                    state.rules.in_force = rules.rules.len();
                    state.rules.catch_all = catch_all_name(&rules);
                    engine.responder.set_rules(rules);
                }
                Err(e) => state.rules.error = Some(e.to_string()),
            }
        }
        state.rules.text = state.settings.rules_json.clone();
        let mut app = HookscopeApp {
            state,
            engine,
            picker: std::sync::Arc::new(files::NativePicker),
            secrets: std::sync::Arc::new(secrets::OsKeychain),
            rx,
            screenshot: None,
            frames: 0,
            screenshot_result: Default::default(),
            polled_at: None,
            polling: false,
            pointer: pointer::PointerZoom::default(),
        };
        app.start_listening();
        app.refresh_list();
        app.start_emulator();
        app.load_secret();
        app
    }

    /// Whether calls of `webhook_id` come from the built-in emulator (one of its webhooks).
    pub fn from_builtin_emulator(&self, webhook_id: Option<&str>) -> bool {
        // Asked of the emulator itself: its webhooks are its own whether the Service panel
        // shows them (a real service chosen) or they were deleted since.
        let Some(emu) = &self.state.service.emulator else {
            return false;
        };
        webhook_id
            .and_then(|id| id.trim().parse::<u64>().ok())
            .is_some_and(|id| emu.made_webhook(id))
    }

    /// The schedule a delivery is read against: the contract's, shortened by the clock speed
    /// of the built-in emulator when the calls come from one of its webhooks, or else by the
    /// speed chosen for other services (1 for the real one).
    pub fn delivery_schedule(&self, webhook_id: Option<&str>) -> crate::contract::Schedule {
        let s = &self.state.settings;
        crate::deliveries::scaled_schedule(if self.from_builtin_emulator(webhook_id) {
            s.emulator_speed
        } else {
            s.other_speed
        })
    }

    fn load_delivery(&self, delivery: String, webhook_id: Option<String>) {
        let schedule = self.delivery_schedule(webhook_id.as_deref());
        // The built-in emulator's retries to come follow its speed now, whatever the speed
        // each call was made at.
        let builtin = self.from_builtin_emulator(webhook_id.as_deref());
        self.engine
            .load_delivery(delivery, webhook_id, schedule, builtin);
    }

    /// Use `store` for the keychain (tests pass a stand-in).
    pub fn set_secret_store(&mut self, store: std::sync::Arc<dyn secrets::SecretStore>) {
        self.secrets = store;
    }

    fn secret_account(&self) -> String {
        let s = &self.state.settings;
        secrets::account(&s.api_user, &s.api_base_url)
    }

    /// If the user chose to remember the password, read it from the keychain (off the UI
    /// thread).
    pub fn load_secret(&self) {
        if self.state.settings.api_custom && self.state.settings.api_remember {
            self.engine
                .secret_load(self.secrets.clone(), self.secret_account());
        }
    }

    /// Remember (or forget) the password in the keychain, as the checkbox says.
    pub fn store_secret(&mut self) {
        let account = self.secret_account();
        let remember = self.state.settings.api_remember;
        if remember && self.state.service.password.is_empty() {
            // Nothing to keep yet: the keychain is left as it is (not emptied).
            self.state.service.status = Some(Ok(
                "Type the password: it is kept in the OS keychain at the next Test connection."
                    .to_owned(),
            ));
            return;
        }
        let secret = remember.then(|| self.state.service.password.clone());
        self.engine
            .secret_save(self.secrets.clone(), account, secret);
    }

    /// Start the built-in emulator (any free port) at the saved speed.
    pub fn start_emulator(&mut self) {
        self.state.service.emulator_error = None;
        self.engine.start_emulator(crate::emulator::EmulatorConfig {
            port: 0,
            speed: self.state.settings.emulator_speed,
            brand: Brand::new(&self.state.settings.brand),
            ..crate::emulator::EmulatorConfig::default()
        });
    }

    /// A client for the API the window talks to: the emulator, or the service the user set.
    pub fn api_client(&self) -> Result<crate::api::ApiClient, String> {
        let s = &self.state.settings;
        if s.api_custom {
            if s.api_base_url.trim().len() <= "https://".len() {
                return Err("Enter the service's API base URL (ending in /v1).".into());
            }
            let pw = &self.state.service.password;
            crate::api::ApiClient::new(
                s.api_base_url.trim(),
                s.api_user.trim(),
                (!pw.is_empty()).then(|| pw.clone()),
            )
            .map_err(|e| in_window_words(&e.to_string()))
        } else {
            let emu = self
                .state
                .service
                .emulator
                .as_ref()
                .ok_or("The emulator is not running yet.")?;
            crate::api::ApiClient::new(&emu.base_url(), "demo", Some("demo".into()))
                .map_err(|e| in_window_words(&e.to_string()))
        }
    }

    /// Call the service API; the answer arrives as a message.
    pub fn api(&mut self, op: engine::ApiOp) {
        match self.api_client() {
            Ok(c) => {
                self.state.service.busy += 1;
                self.engine.api(c, op);
            }
            Err(e) => self.state.service.status = Some(Err(e)),
        }
    }

    /// The URL a webhook should have instead of `url`, if it points at a port this receiver
    /// has left (see [`state::moved_receiver_url`]).
    pub fn moved_url(&self, url: &str) -> Option<String> {
        match self.state.listening {
            Listening::On(now) if self.state.settings.public_url.trim().is_empty() => {
                state::moved_receiver_url(url, &self.state.service.receiver_was, now)
            }
            _ => None,
        }
    }

    /// The URL a new webhook should call: the public tunnel URL if set, else the receiver.
    pub fn receiver_url(&self) -> String {
        let public = self.state.settings.public_url.trim();
        if !public.is_empty() {
            return public.to_owned();
        }
        match &self.state.listening {
            Listening::On(addr) => format!("http://{addr}/hook"),
            _ => String::new(),
        }
    }

    fn api_reply(&mut self, op: engine::ApiOp, r: Result<engine::ApiReply, String>) {
        use engine::{ApiOp, ApiReply};
        self.state.service.busy = self.state.service.busy.saturating_sub(1);
        // Webhooks pointing at a port the receiver has left, with where they should point.
        let moved: Vec<(u64, String)> = self
            .state
            .service
            .webhooks
            .iter()
            .filter_map(|w| self.moved_url(&w.url).map(|to| (w.id, to)))
            .collect();
        let sv = &mut self.state.service;
        match (op, r) {
            (op, Err(e)) => {
                sv.status = Some(Err(e));
                if matches!(op, ApiOp::List | ApiOp::Test) {
                    sv.listed = false;
                }
                // A test is of the connection as it is set now (another password, another
                // service): the webhooks listed by the one before are not its, and their
                // buttons had stayed under "rejected the credentials".
                if matches!(op, ApiOp::Test) {
                    sv.webhooks.clear();
                    sv.unreadable = 0;
                }
            }
            (op, Ok(ApiReply::Webhooks(list))) => {
                if !list.unreadable.is_empty() {
                    // Said whether listed by a test or a refresh: a webhook missing from the
                    // panel with no word of why would look deleted.
                    let connected = if matches!(op, ApiOp::Test) {
                        format!(
                            "Connected: {}, and ",
                            crate::text::count(list.webhooks.len() as u64, "webhook", "webhooks")
                        )
                    } else {
                        "The service listed ".to_owned()
                    };
                    sv.status = Some(Err(format!(
                        "{connected}{} that Hookscope cannot read, not shown here: {}.",
                        crate::text::count(list.unreadable.len() as u64, "webhook", "webhooks"),
                        first_few(&list.unreadable, 3)
                    )));
                } else if matches!(op, ApiOp::Test) {
                    sv.status = Some(Ok(format!(
                        "Connected: {}.",
                        crate::text::count(list.webhooks.len() as u64, "webhook", "webhooks")
                    )));
                }
                sv.webhooks = list.webhooks;
                sv.unreadable = list.unreadable.len();
                sv.listed = true;
            }
            (op, Ok(ApiReply::Webhook(w))) => {
                let verb = match op {
                    ApiOp::Create(_) => "created",
                    ApiOp::SetActive(_, true) => "enabled",
                    ApiOp::SetActive(_, false) => "disabled",
                    _ => "saved",
                };
                sv.status = Some(Ok(format!(
                    "Webhook {} \"{}\" {verb}.",
                    w.id,
                    crate::text::short_name(&w.name, NAME_IN_SENTENCE)
                )));
                sv.form_open = false;
                match sv.webhooks.iter_mut().find(|x| x.id == w.id) {
                    Some(x) => *x = w,
                    None => sv.webhooks.push(w),
                }
            }
            (_, Ok(ApiReply::Deleted(id))) => {
                sv.webhooks.retain(|w| w.id != id);
                sv.status = Some(Ok(format!("Webhook {id} deleted.")));
            }
            (_, Ok(ApiReply::Sent(msgs))) => {
                let id = msgs.first().map_or("?", |m| m.id.as_str());
                let active = sv
                    .webhooks
                    .iter()
                    .filter(|w| w.active && w.trigger_scope == crate::contract::TriggerScope::Sent)
                    .count();
                let left_behind = sv
                    .webhooks
                    .iter()
                    .filter(|w| w.active && w.trigger_scope == crate::contract::TriggerScope::Sent)
                    .filter(|w| moved.iter().any(|(id, _)| *id == w.id))
                    .count();
                // Only a webhook the service calls with status reports can bring them here.
                sv.awaiting_test = active > left_behind || !sv.listed;
                sv.test_reports = None;
                sv.status = Some(if active > 0 && active == left_behind {
                    Err(format!(
                        "Test message {id} accepted, but the SENT webhooks point at a port the receiver has left: its status reports will not arrive here. Point them at the receiver (the button under each one) and send again."
                    ))
                } else if sv.awaiting_test {
                    Ok(format!(
                        "Test message {id} accepted. Its status reports will arrive at the SENT webhooks in a moment."
                    ))
                } else {
                    Err(format!(
                        "Test message {id} accepted, but no webhook is active for SENT messages: its status reports go nowhere. Create a webhook for SENT, or enable one, and send again."
                    ))
                });
            }
        }
    }

    /// Saved settings from eframe's storage, or defaults.
    pub fn load_settings(storage: Option<&dyn eframe::Storage>) -> Settings {
        let mut settings: Settings = storage
            .and_then(|s| eframe::get_value(s, SETTINGS_KEY))
            .unwrap_or_default();
        for repaired in settings.repair() {
            tracing::warn!("{repaired}");
        }
        settings
    }

    /// Use `picker` for file dialogs (tests pass a stand-in).
    pub fn set_picker(&mut self, picker: std::sync::Arc<dyn files::FilePicker>) {
        self.picker = picker;
    }

    /// Apply rules from JSON text: on success they answer the next call and are kept in the
    /// settings; on failure nothing changes and the error (with its line) is shown.
    pub fn apply_rules(&mut self, text: &str, source: &str) -> bool {
        if text.trim().is_empty() {
            self.engine
                .responder
                .set_rules(crate::rules::RuleSet::default());
            self.state.settings.rules_json.clear();
            self.state.rules.text.clear();
            self.state.rules.in_force = 0;
            self.state.rules.catch_all = None;
            self.state.rules.error = None;
            self.state.rules.note =
                Some("Rules cleared: the fixed choice answers every call.".into());
            return true;
        }
        match crate::rules::RuleSet::parse(source, text) {
            Ok(rules) => {
                let n = rules.rules.len();
                self.state.rules.in_force = n;
                self.state.rules.catch_all = catch_all_name(&rules);
                self.engine.responder.set_rules(rules);
                self.state.settings.rules_json = text.to_owned();
                self.state.rules.text = text.to_owned();
                self.state.rules.error = None;
                // When, so that the note stays true once they have answered.
                self.state.rules.note = Some(format!(
                    "{} from {source} in force since {}.",
                    crate::text::count(n as u64, "rule", "rules"),
                    chrono::Local::now().format("%H:%M:%S")
                ));
                true
            }
            Err(e) => {
                // What the rules in force are is said by the panel; a note about an earlier
                // Apply beside this error would read as if this one had worked.
                self.state.rules.note = None;
                // Said to be refused, not in force: read in the panel, with the editor
                // closed, the error alone looked as if the rules answering calls were broken.
                self.state.rules.error = Some(format!("{REFUSED_RULES}{e}"));
                false
            }
        }
    }

    /// Load a rule file (off the UI thread): the path typed in the editor's File field, or one
    /// chosen in a file dialog when `browse` or the field is empty.
    pub fn load_rules_file(&mut self, browse: bool) {
        let path = self.typed_rules_path(browse);
        self.state.rules.note = None;
        self.engine.read_rules(self.picker.clone(), path);
    }

    /// Save the rules (off the UI thread) to the path in the File field, or where a file dialog
    /// says when `browse` or the field is empty.
    pub fn save_rules_file(&mut self, browse: bool) {
        let path = self.typed_rules_path(browse);
        self.state.rules.note = None;
        self.engine
            .write_rules(self.picker.clone(), path, self.state.rules.text.clone());
    }

    fn typed_rules_path(&self, browse: bool) -> Option<std::path::PathBuf> {
        let typed = self.state.rules.path_text.trim();
        (!browse && !typed.is_empty()).then(|| std::path::PathBuf::from(typed))
    }

    pub fn with_screenshot(mut self, plan: ScreenshotPlan) -> Self {
        self.screenshot = Some(plan);
        self
    }

    /// Where the screenshot went, once it was taken.
    pub fn screenshot_result(
        &self,
    ) -> std::sync::Arc<std::sync::Mutex<Option<Result<(), String>>>> {
        self.screenshot_result.clone()
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    fn receiver_config(&self, s: &Settings) -> Result<ReceiverConfig, String> {
        let bind: IpAddr = crate::text::parse_bind(&s.bind)?;
        Ok(ReceiverConfig {
            bind,
            port: if self.state.any_port_this_session {
                0
            } else {
                s.port
            },
            body_limit: s.body_limit_mib.clamp(1, crate::text::MAX_BODY_LIMIT >> 20) << 20,
            brand: Brand::new(&s.brand),
            ..ReceiverConfig::default()
        })
    }

    /// (Re)start the receiver with the current settings.
    pub fn start_listening(&mut self) {
        self.start_listening_with(self.state.settings.clone());
    }

    /// (Re)start the receiver with the receiver settings of `next`; they become the settings
    /// in force (and saved) only once it listens, so a port that is taken or an address that
    /// cannot be used is never saved for the next start.
    pub fn start_listening_with(&mut self, next: Settings) {
        match self.receiver_config(&next) {
            Ok(mut config) => {
                // Any free port, asked for again by a restart that changes something else (the
                // brand word, the body limit): the port it has is free, and the webhooks point
                // at it. A new one had been taken, and the demo's webhook left behind.
                let keep = match self.state.listening {
                    Listening::On(old)
                        if config.port == 0
                            && next.port == self.state.settings.port
                            && old.ip() == config.bind =>
                    {
                        config.port = old.port();
                        true
                    }
                    _ => false,
                };
                // Webhooks may still point at the port it leaves (the panel says so).
                // (A port kept is taken off again once it listens there; one that could not
                // be had again, and gave way to another, stays on.)
                if let Listening::On(old) = self.state.listening
                    && !self.state.service.receiver_was.contains(&old.port())
                {
                    self.state.service.receiver_was.push(old.port());
                }
                self.state.listening = Listening::Starting;
                self.state.pending_receiver = Some(next);
                self.engine.listen(config, keep);
            }
            // A receiver that works keeps working: the reason is said beside it.
            Err(e) => match self.state.listening {
                Listening::On(addr) => {
                    self.state.listen_notice =
                        Some(format!("{e} Still listening on http://{addr}/."));
                }
                _ => self.state.listening = Listening::Failed(e),
            },
        }
    }

    /// Take a new snapshot of the list (newest first) with the current filter.
    pub fn refresh_list(&mut self) {
        let generation = self.state.list.invalidate();
        self.engine
            .load_top(generation, self.state.list.filter.clone());
        // The detail stays open; whether the list still shows its call is asked for (the
        // note keeps its last state until the answer, so it does not flicker).
        match self.state.list.selected {
            Some(id) if !self.state.list.filter.is_empty() => {
                self.engine
                    .check_selected(generation, self.state.list.filter.clone(), id);
            }
            _ => self.state.list.selected_hidden = false,
        }
    }

    /// Select the call with `id` and load its detail.
    pub fn select(&mut self, id: i64) {
        if self.state.list.selected != Some(id) {
            self.state.list.selected = Some(id);
            // Chosen from the list, so the list shows it.
            self.state.list.selected_hidden = false;
            self.engine.load_detail(id);
        } else if self.state.detail.is_none() {
            // The call already open (Enter on it, which the filter may hide): its note stays.
            self.engine.load_detail(id);
        }
    }

    /// Apply an answer at once; the next call gets it.
    pub fn apply_answer(&mut self, answer: crate::responder::Answer) {
        match self.engine.set_answer(answer.clone()) {
            Ok(()) => {
                // A custom answer typed in the form stays there when a preset is chosen.
                if !self.state.form.holds_work(&self.state.settings.answer) {
                    self.state.form = state::AnswerForm::from_answer(&answer);
                }
                self.state.form.error = None;
                self.state.settings.answer = answer;
                self.state.answer_notice = None;
            }
            Err(e) => self.state.form.error = Some(e.to_string()),
        }
    }

    fn handle(&mut self, msg: Msg) -> bool {
        let mut arrived = false;
        match msg {
            Msg::Superseded => {}
            Msg::Listening(addr) => {
                self.state
                    .service
                    .receiver_was
                    .retain(|p| *p != addr.port());
                if self.state.listening != Listening::On(addr) {
                    // The held calls were the receiver's that is stopping.
                    self.state.held.clear();
                }
                let url_was = self.receiver_url();
                self.state.listening = Listening::On(addr);
                // A New-webhook form opened while no receiver listened (or one on the port
                // left) names the receiver now listening, unless the user typed another URL.
                let url_now = self.receiver_url();
                let form = &mut self.state.service.form;
                if self.state.service.form_open
                    && (form.url.trim().is_empty() || form.url == url_was)
                {
                    form.url = url_now;
                }
                self.state.port_text = addr.port().to_string();
                // What the port field refused is not about a later failure.
                self.state.port_refused = None;
                self.state.listen_notice = None;
                self.state.receiver_tried = None;
                if let Some(next) = self.state.pending_receiver.take() {
                    let session_port = self.state.any_port_this_session;
                    self.state.settings.take_receiver(&next, session_port);
                }
                // The built-in emulator names its headers with the word the receiver reads.
                if let Some(e) = &self.state.service.emulator {
                    e.set_brand(Brand::new(&self.state.settings.brand));
                }
            }
            Msg::ListenFailed { error, still } => {
                let tried = self.state.pending_receiver.take();
                self.state.receiver_tried = tried.clone();
                match still {
                    Some(addr) => {
                        self.state.listening = Listening::On(addr);
                        self.state.port_text = addr.port().to_string();
                        // Said beside the receiver that kept working (the error says where).
                        self.state.listen_notice = Some(error);
                    }
                    None => {
                        // The port field beside the error shows the port it names.
                        if let Some(tried) = tried
                            && !self.state.any_port_this_session
                        {
                            self.state.port_text = tried.port.to_string();
                        }
                        self.state.listening = Listening::Failed(error);
                    }
                }
            }
            Msg::Held(addr, held) => {
                // Only the receiver listening now: one that was replaced answers its held
                // calls early as it stops.
                if self.state.listening == Listening::On(addr) {
                    self.state.held = held;
                }
            }
            Msg::Recorded(rec) => {
                // A new attempt of the delivery on screen (the same delivery id from the same
                // webhook; another webhook's delivery of that id is another delivery): read it
                // again.
                // So is one whose webhook another delivery's call bears on: a 410 to it stops
                // the delivery on screen ("retrying" had stayed until it was chosen again), and
                // a call after a cancel may say it was set up again.
                if let Some(shown) = self.state.delivery.as_ref() {
                    use crate::deliveries::State;
                    let same_webhook = rec.summary.webhook_id.is_some()
                        && rec.summary.webhook_id == shown.webhook_id;
                    // A message of a batch on screen retried on its own is the batch's news
                    // too: the split view had kept "retrying … overdue" for it.
                    let same_delivery = rec.summary.delivery.as_deref().is_some_and(|d| {
                        d == shown.delivery || crate::deliveries::is_part_of(d, &shown.delivery)
                    }) && rec.summary.webhook_id == shown.webhook_id;
                    let bears_on = same_webhook
                        && (rec.summary.outcome == crate::contract::Outcome::WebhookCancelled
                            || matches!(
                                shown.state,
                                State::StoppedByCancel { .. } | State::WebhookCancelled { .. }
                            ));
                    if same_delivery || bears_on {
                        self.load_delivery(shown.delivery.clone(), shown.webhook_id.clone());
                    }
                }
                // The test message's report comes from a SENT webhook of the service, and an
                // incoming message sent with Receive from a RECEIVED one, not from any call that
                // happens to arrive meanwhile.
                let from_webhook = |scope: crate::contract::TriggerScope| {
                    !self.state.service.listed
                        || rec.summary.webhook_id.as_deref().is_some_and(|id| {
                            self.state
                                .service
                                .webhooks
                                .iter()
                                .any(|w| w.trigger_scope == scope && w.id.to_string() == id)
                        })
                };
                let event = rec.summary.event.as_deref();
                let from_sent = from_webhook(crate::contract::TriggerScope::Sent);
                let from_received = from_webhook(crate::contract::TriggerScope::Received);
                let sv = &mut self.state.service;
                // Its later reports (FAILED after SENT) follow the first within a few seconds:
                // the last is the one shown, as the panel says its last status is FAILED.
                let following = sv
                    .test_reports
                    .as_ref()
                    .is_some_and(|r| r.since.elapsed() < state::TEST_REPORTS_WINDOW);
                // A later attempt (answered 503, say) is a retry, never a report of its own: a
                // retry of an earlier test message's report, coming after a new one was sent,
                // had been taken for the new message's report.
                let of_a_report = rec.summary.delivery.is_some()
                    && sv
                        .test_reports
                        .as_ref()
                        .is_some_and(|r| r.calls.iter().any(|(_, d)| *d == rec.summary.delivery));
                let is_retry = rec.summary.attempt.is_some_and(|a| a > 1) || of_a_report;
                let status_report = event == Some("status-report") && from_sent;
                let test_report = status_report && !is_retry && (sv.awaiting_test || following);
                // A retry of one of its reports: counted in the panel's words; the selection
                // stays.
                let retry_of_report = status_report && of_a_report;
                let awaited = if retry_of_report {
                    if let Some(r) = sv.test_reports.as_mut() {
                        r.retries += 1;
                        let was =
                            |t: &str| t == r.said || t.starts_with(&format!("{} Since", r.said));
                        // Only while the panel still says it: other news is not overwritten.
                        if matches!(&sv.status, Some(Ok(t)) if was(t)) {
                            sv.status = Some(Ok(format!(
                                "{} Since then {} of them came (not selected).",
                                r.said,
                                crate::text::count(r.retries, "retry", "retries")
                            )));
                        }
                    }
                    None
                } else if test_report {
                    if sv.awaiting_test || !following {
                        sv.test_reports = Some(state::TestReports {
                            since: std::time::Instant::now(),
                            calls: Vec::new(),
                            retries: 0,
                            said: String::new(),
                        });
                    }
                    sv.awaiting_test = false;
                    let earlier = match sv.test_reports.as_mut() {
                        Some(r) => {
                            let earlier: Vec<i64> = r.calls.iter().map(|(id, _)| *id).collect();
                            r.calls.push((rec.summary.id, rec.summary.delivery.clone()));
                            earlier
                        }
                        None => Vec::new(),
                    };
                    Some(if earlier.is_empty() {
                        "The test message's status report".to_owned()
                    } else {
                        let ids: Vec<String> = earlier.iter().map(i64::to_string).collect();
                        match ids.as_slice() {
                            [one] => format!(
                                "The test message's first status report came in call {one}; its last"
                            ),
                            _ => format!(
                                "The test message's status reports came in calls {}; its last",
                                ids.join(", ")
                            ),
                        }
                    })
                } else if sv.awaiting_incoming && event == Some("incoming-message") && from_received
                {
                    sv.awaiting_incoming = false;
                    Some("The incoming message".to_owned())
                } else {
                    None
                };
                if let Some(what) = awaited {
                    // Show it (a filter may keep it out of the list; its detail says so).
                    let place = if self.state.list.filter.is_empty() {
                        "selected in the list"
                    } else {
                        "selected (the list's filter may hide it)"
                    };
                    let said = format!(
                        "{what} arrived at {}: call {}, {place}.",
                        rec.summary
                            .received_at
                            .with_timezone(&chrono::Local)
                            .format("%H:%M:%S"),
                        rec.summary.id
                    );
                    if let Some(r) = sv.test_reports.as_mut()
                        && test_report
                    {
                        r.said = said.clone();
                        r.retries = 0;
                    }
                    sv.status = Some(Ok(said));
                    self.state.detail = None;
                    self.select(rec.summary.id);
                    // In the list too, even when it does not follow the newest calls.
                    if !self.state.settings.follow {
                        self.refresh_list();
                        self.state.list.scroll_to_top = true;
                    }
                }
                if rec.summary.answer_status == 410 && self.state.service.listed {
                    // The service deactivates a webhook that answers 410: show it.
                    self.api(engine::ApiOp::List);
                }
                self.state.recorded += 1;
                self.state.newest = self.state.newest.max(rec.summary.id);
                self.state.list.note_newest(self.state.newest);
                arrived = true;
            }
            Msg::Newest(id) => {
                self.polling = false;
                if let Some(id) = id
                    && id > self.state.newest
                {
                    // Calls this window's receiver did not take (a `listen` on the same data
                    // directory): new all the same.
                    self.state.newest = id;
                    self.state.list.note_newest(id);
                    arrived = true;
                }
            }
            Msg::Page {
                generation,
                index,
                rows,
            } => self.state.list.set_page(generation, index, rows),
            Msg::Count {
                generation,
                top,
                count,
            } => {
                if self.state.list.set_count(generation, top, count) {
                    // Calls stored after the snapshot was taken, and already known: new.
                    self.state.list.note_newest(self.state.newest);
                    if self.state.settings.follow {
                        self.state.list.scroll_to_top = true;
                    }
                }
            }
            Msg::SelectedShown {
                generation,
                id,
                shown,
            } => {
                if generation == self.state.list.generation && self.state.list.selected == Some(id)
                {
                    self.state.list.selected_hidden = !shown;
                }
            }
            Msg::Detail(stored, json) => {
                if self.state.list.selected == Some(stored.id) {
                    match &stored.inv.delivery {
                        Some(d) => self.load_delivery(d.clone(), stored.inv.webhook_id.clone()),
                        None => self.state.delivery = None,
                    }
                    self.state.detail = Some(std::sync::Arc::from(stored));
                    self.state.detail_json = json.map(std::sync::Arc::from);
                }
            }
            Msg::Delivery(d) => {
                let current = self
                    .state
                    .detail
                    .as_ref()
                    .and_then(|s| s.inv.delivery.as_deref());
                if current == Some(d.delivery.as_str()) {
                    self.state.delivery = Some(d);
                }
            }
            Msg::Error(e) => self.state.error = Some(e),
            Msg::RulesRead(Ok((path, text))) => {
                self.state.rules.path_text = path.display().to_string();
                self.state.rules.file = Some(path.clone());
                self.apply_rules(&text, &path.display().to_string());
                self.state.rules.text = text;
            }
            Msg::RulesRead(Err(e)) | Msg::RulesWritten(Err(e)) => self.state.rules.error = Some(e),
            Msg::RulesWritten(Ok(path)) => {
                // The text saved is rules the file's format takes: an error about it is old.
                self.state.rules.error = None;
                self.state.rules.note = Some(format!("Saved to {}", path.display()));
                self.state.rules.path_text = path.display().to_string();
                self.state.rules.file = Some(path);
            }
            // The dialog was closed without a file, or could not open at all (rfd says the
            // same for both: a desktop without a file-dialog service shows nothing).
            Msg::Cancelled => {
                self.state.rules.note = Some(
                    "No file chosen. If no dialog appeared, type the file's path in the rules editor's File field and press Load or Save.".to_owned(),
                );
            }
            Msg::EmulatorStarted(e) => {
                e.set_brand(Brand::new(&self.state.settings.brand));
                self.state.service.emulator = Some(e);
                if !self.state.settings.api_custom {
                    self.api(engine::ApiOp::List);
                }
            }
            Msg::EmulatorFailed(e) => self.state.service.emulator_error = Some(e),
            Msg::Api(op, r) => self.api_reply(op, r),
            Msg::Secret(Ok(Some(p))) => {
                if self.state.service.password.is_empty() {
                    self.state.service.password = p;
                }
            }
            Msg::Secret(Ok(None)) => {}
            Msg::Secret(Err(e)) => self.state.service.status = Some(Err(e)),
            // The keychain could not keep it: the box says what is true, unticked (and so is
            // what is saved for the next start).
            Msg::SecretSaved(Err(e)) if self.state.settings.api_remember => {
                self.state.settings.api_remember = false;
                self.state.service.status = Some(Err(format!(
                    "{}. The password is not remembered: it stays for this session only.",
                    e.trim_end_matches(['.', ' '])
                )));
            }
            Msg::SecretSaved(r) => {
                self.state.service.status = Some(r);
            }
        }
        arrived
    }

    /// The built-in emulator's webhooks changed by another hand (`hookscope webhooks create`
    /// against it, a script): listed again, as the real service's are on Refresh. They had
    /// stayed out of the panel until Refresh was clicked. In-process, so cheap to look at.
    fn list_emulator_changes(&mut self) {
        let sv = &self.state.service;
        if self.state.settings.api_custom || !sv.listed || sv.busy > 0 {
            return;
        }
        let Some(emu) = &sv.emulator else {
            return;
        };
        let key = |w: &crate::api::model::Webhook| {
            (
                w.id,
                w.name.clone(),
                w.url.clone(),
                w.active,
                w.trigger_scope.as_str(),
            )
        };
        let mut there: Vec<_> = emu.webhooks().iter().map(key).collect();
        let mut shown: Vec<_> = sv.webhooks.iter().map(key).collect();
        there.sort();
        shown.sort();
        if there != shown {
            self.api(engine::ApiOp::List);
        }
    }

    /// Apply what the background reported, for at most [`DRAIN_BUDGET`]. Returns true when
    /// messages are left for the next frame.
    pub fn drain(&mut self) -> bool {
        let start = Instant::now();
        if !self.polling && self.polled_at.is_none_or(|t| t.elapsed() >= NEWEST_POLL) {
            self.polling = true;
            self.polled_at = Some(start);
            self.engine.poll_newest();
            self.list_emulator_changes();
        }
        let mut arrived = false;
        let mut more = false;
        loop {
            if start.elapsed() >= DRAIN_BUDGET {
                more = true;
                break;
            }
            match self.rx.try_recv() {
                Ok(msg) => arrived |= self.handle(msg),
                Err(_) => break,
            }
        }
        if arrived && self.state.settings.follow {
            self.refresh_list();
        }
        more
    }

    fn take_screenshot_when_ready(&mut self, ctx: &egui::Context) {
        let Some(plan) = &self.screenshot else { return };
        self.frames += 1;
        ctx.request_repaint();
        if self.frames != plan.after_frames {
            return;
        }
        let (path, result, ctx2) = (
            plan.path.clone(),
            self.screenshot_result.clone(),
            ctx.clone(),
        );
        ctx.request_screenshot(move |image| {
            let r = ui::save_png(&path, &image);
            if let Ok(mut slot) = result.lock() {
                *slot = Some(r);
            }
            ctx2.send_viewport_cmd(egui::ViewportCommand::Close);
            ctx2.request_repaint();
        });
    }
}

/// The size of secondary text (what each answer does, webhook URLs, notes): egui's 9 points
/// are hard to read on a projector.
pub const SMALL_TEXT: f32 = 10.5;

/// The zoom's range (A+ and A−, Ctrl + and Ctrl −): past 2.0 a 1280 × 800 window had room for
/// no row of the list and cut the detail's tabs.
pub const MIN_ZOOM: f32 = 0.5;
pub const MAX_ZOOM: f32 = 2.0;

/// The least room, in points, the layout is made for: the top bar, the Answer panel beside a
/// list of a few rows, and a detail panel of a few lines. A small window at a large zoom (760
/// pixels at zoom 2, 380 points) had its detail drawn over the list's filters and the title
/// run into the bar's buttons.
pub const LEAST_ROOM: egui::Vec2 = egui::vec2(520.0, 360.0);

/// The largest zoom a window of `window` points at zoom 1 has room for ([`LEAST_ROOM`]), in
/// steps of 0.1 as A+ and Ctrl + take, between 1 and [`MAX_ZOOM`]: a 1280 × 800 laptop
/// window keeps zoom 2, the smallest window (720 × 480) gets 1.3.
pub fn largest_zoom(window: egui::Vec2) -> f32 {
    let fits = (window.x / LEAST_ROOM.x).min(window.y / LEAST_ROOM.y);
    ((fits * 10.0 + 1e-3).floor() / 10.0).clamp(1.0, MAX_ZOOM)
}

/// The most of a webhook's or a rule's name a sentence quotes, in characters.
pub const NAME_IN_SENTENCE: usize = 60;

/// How opaque secondary ("weak") text is in the light theme.
pub const LIGHT_WEAK_ALPHA: f32 = 0.85;

/// The grey of a control's edge in the light theme: about 3.3:1 against its panels.
pub const LIGHT_EDGE_GRAY: u8 = 140;

/// The grey of the dark theme's ordinary text (egui's is 140).
pub const DARK_TEXT_GRAY: u8 = 150;

/// Theme and text sizes from the settings (the zoom is set at start, and then kept by the
/// window's layout to what it has room for).
pub fn apply_look(ctx: &egui::Context, s: &Settings) {
    ctx.all_styles_mut(|style| {
        style.text_styles.insert(
            egui::TextStyle::Small,
            egui::FontId::proportional(SMALL_TEXT),
        );
        // Scroll bars with room of their own, always in sight: egui's float over the content
        // (fields and text ran under them) and show only under the pointer, so nothing told a
        // viewer a panel had more below.
        style.spacing.scroll = egui::style::ScrollStyle {
            dormant_handle_opacity: 0.5,
            dormant_background_opacity: 0.2,
            ..egui::style::ScrollStyle::solid()
        };
    });
    // egui's light theme draws secondary text at about 3:1 against white, too faint to read
    // on a projector or a laptop in daylight; this makes it about 5:1.
    ctx.style_mut_of(egui::Theme::Light, |style| {
        style.visuals.weak_text_alpha = LIGHT_WEAK_ALPHA;
        // Its text fields are white on a panel of 248 grey with no edge (1.06:1), and its check
        // boxes and buttons 230 grey on it: on a projector they could not be seen. An edge at
        // 3:1 against the panel, as WCAG asks of a control's bounds.
        style.visuals.widgets.inactive.bg_stroke =
            egui::Stroke::new(1.0, egui::Color32::from_gray(LIGHT_EDGE_GRAY));
    });
    // egui's dark grey text reads at 4.2:1 on a row under the pointer, which has to stand out
    // from the striped rows; a little lighter, it reads at 4.7:1 there (5.9:1 on the panels).
    ctx.style_mut_of(egui::Theme::Dark, |style| {
        style.visuals.widgets.noninteractive.fg_stroke.color =
            egui::Color32::from_gray(DARK_TEXT_GRAY);
    });
    ctx.set_theme(if s.dark {
        egui::Theme::Dark
    } else {
        egui::Theme::Light
    });
}

/// The name of the rule that answers every call, if one does.
fn catch_all_name(rules: &crate::rules::RuleSet) -> Option<String> {
    rules
        .catch_all()
        .map(|(_, r)| crate::text::short_name(&r.name, NAME_IN_SENTENCE))
}

/// A message written for the command line, in the window's words: its fields and controls,
/// not the flags that set them there.
pub fn in_window_words(text: &str) -> String {
    const WORDS: [(&str, &str); 7] = [
        (
            "put it in HOOKSCOPE_API_PASSWORD (an empty one counts as unset), or run the command in a terminal to be asked for it",
            "type it in the Password field",
        ),
        (
            "give a username (--user) and the password in HOOKSCOPE_API_PASSWORD",
            "type a username and a password",
        ),
        (
            "Raise the limit with --body-limit",
            "Raise the limit with Body limit in Settings",
        ),
        (
            "is --api-url the API's base, ending in /v1?",
            "is the API base URL the service's base, the one that ends in /v1?",
        ),
        ("--api-url", "the API base URL"),
        (
            "(`hookscope emulate --allow-remote`, or *Call other hosts than this machine* in the window's Service panel)",
            "(tick \"Call other hosts than this machine\" under Emulator in the Service panel)",
        ),
        ("--allow-remote", "\"Call other hosts than this machine\""),
    ];
    crate::text::replace_each(text, &WORDS)
}

impl eframe::App for HookscopeApp {
    fn logic(&mut self, ctx: &egui::Context, _frame: &mut eframe::Frame) {
        if self.drain() {
            ctx.request_repaint();
        }
        // Look at the store again in a while, for calls another process adds.
        ctx.request_repaint_after(NEWEST_POLL);
        self.take_screenshot_when_ready(ctx);
    }

    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        ui::app_ui(ui, self);
    }

    /// A screenshot shows the window as it is, not as wherever the display's pointer happens
    /// to be (Xvfb puts it in the middle of the screen, over whatever is there): no hover.
    fn raw_input_hook(&mut self, ctx: &egui::Context, raw_input: &mut egui::RawInput) {
        self.pointer
            .restate(ctx.zoom_factor(), &mut raw_input.events);
        if self.screenshot.is_some() {
            raw_input.events.retain(|e| {
                !matches!(
                    e,
                    egui::Event::PointerMoved(_)
                        | egui::Event::PointerButton { .. }
                        | egui::Event::MouseMoved(_)
                )
            });
            raw_input.events.push(egui::Event::PointerGone);
        }
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, SETTINGS_KEY, &self.state.settings);
    }
}

/// The first `n` of `items` joined by "; ", and how many more there are: the foot of the
/// service panel holds a sentence, not a list of fifty.
fn first_few(items: &[String], n: usize) -> String {
    let mut said = items.iter().take(n).cloned().collect::<Vec<_>>().join("; ");
    if items.len() > n {
        said.push_str(&format!(
            "; and {} more (`hookscope webhooks list` names them all)",
            items.len() - n
        ));
    }
    said
}

#[cfg(test)]
mod tests {
    use super::{first_few, in_window_words, largest_zoom};

    #[test]
    fn a_window_gets_the_largest_zoom_it_has_room_for() {
        for (window, zoom) in [
            // A laptop's window keeps the largest zoom, for a demo.
            ([1280.0, 800.0], 2.0),
            ([1280.0, 740.0], 2.0),
            ([1920.0, 1080.0], 2.0),
            // Narrow or short: the zoom its width or height has room for, in A+'s steps.
            ([760.0, 600.0], 1.4),
            ([1280.0, 600.0], 1.6),
            ([1040.0, 720.0], 2.0),
            ([1039.0, 720.0], 1.9),
            // The smallest window the app opens at.
            ([720.0, 480.0], 1.3),
            // Smaller still (a window manager's choice): zoom 1 is left alone.
            ([400.0, 300.0], 1.0),
        ] {
            let got = largest_zoom(egui::vec2(window[0], window[1]));
            assert!((got - zoom).abs() < 1e-4, "{window:?}: {got}, not {zoom}");
        }
    }

    #[test]
    fn the_panel_names_a_few_unreadable_webhooks_and_counts_the_rest() {
        let items: Vec<String> = (1..=5).map(|i| format!("webhook {i}")).collect();
        assert_eq!(first_few(&items[..2], 3), "webhook 1; webhook 2");
        assert_eq!(first_few(&items[..3], 3), "webhook 1; webhook 2; webhook 3");
        assert_eq!(
            first_few(&items, 3),
            "webhook 1; webhook 2; webhook 3; and 2 more (`hookscope webhooks list` names them all)"
        );
    }

    #[test]
    fn messages_for_the_command_line_name_the_window_controls_instead() {
        let refused = crate::api::ApiError::ConnectionRefused {
            url: "http://127.0.0.1:9/v1/webhooks".into(),
        };
        let said = in_window_words(&refused.to_string());
        assert!(said.ends_with("and is the API base URL right?)"), "{said}");
        let not_json = crate::api::ApiError::NotJson {
            url: "u".into(),
            status: 200,
            snippet: "<html>".into(),
        };
        let said = in_window_words(&not_json.to_string());
        assert!(
            said.contains("is the API base URL the service's base, the one that ends in /v1?"),
            "{said}"
        );
        let no_password = crate::api::ApiError::MissingPassword {
            user: "demo".into(),
        };
        assert_eq!(
            in_window_words(&no_password.to_string()),
            "no password for 'demo': type it in the Password field"
        );
        assert_eq!(
            in_window_words(&crate::api::ApiError::MissingCredentials.to_string()),
            "no credentials: type a username and a password"
        );
        let too_large = "The body was 40 MiB, over the limit of 32 MiB: it was answered 413 and not kept. Raise the limit with --body-limit.";
        assert_eq!(
            in_window_words(too_large),
            "The body was 40 MiB, over the limit of 32 MiB: it was answered 413 and not kept. Raise the limit with Body limit in Settings."
        );
        let remote = crate::emulator::check_target(
            &reqwest::Url::parse("https://example.com/hook").unwrap(),
            false,
        )
        .unwrap_err();
        let said = in_window_words(&remote);
        assert!(
            !said.contains('`') && !said.contains('*') && !said.contains("--"),
            "{said}"
        );
        assert!(
            said.contains("\"Call other hosts than this machine\" under Emulator"),
            "{said}"
        );
    }
}
