//! The app's background side: it owns the receiver, the store and the responder, runs every I/O
//! on the tokio runtime, and reports back through a channel, asking egui for a repaint. The UI
//! never waits on it.

use crate::receiver::{self, Held, ReceiverConfig, Recorded, Running};
use crate::responder::{Answer, AnswerError, Responder};
use crate::store::{Filter, Store, StoreError, Stored, Summary};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use tokio::runtime::Handle;

/// What the background side reports.
#[derive(Debug)]
pub enum Msg {
    /// A read of the list that a newer one replaced was given up: nothing to show.
    Superseded,
    /// The newest id in the store (a `listen` on the same data directory adds calls this
    /// window's receiver never sees).
    Newest(Option<i64>),
    Listening(SocketAddr),
    /// The receiver could not start; `still` is the address it still listens on, if the one
    /// that was running was kept.
    ListenFailed {
        error: String,
        still: Option<SocketAddr>,
    },
    Recorded(Arc<Recorded>),
    /// The calls whose answer is held back by a delay now at the receiver on this address (each
    /// is `Recorded` when answered).
    Held(SocketAddr, Vec<Held>),
    /// A page of the list for the snapshot `top` and filter generation `generation`.
    Page {
        generation: u64,
        index: u64,
        rows: Vec<Summary>,
    },
    Count {
        generation: u64,
        top: i64,
        count: u64,
    },
    /// A call, and its body read as JSON (when it is).
    Detail(Box<Stored>, Option<Box<serde_json::Value>>),
    /// Whether the selected call `id` matches the list's filter of `generation`.
    SelectedShown {
        generation: u64,
        id: i64,
        shown: bool,
    },
    Delivery(Box<crate::deliveries::Delivery>),
    Error(String),
    RulesRead(Result<(std::path::PathBuf, String), String>),
    RulesWritten(Result<std::path::PathBuf, String>),
    /// A dialog was closed without a choice.
    Cancelled,
    EmulatorStarted(crate::emulator::Emulator),
    EmulatorFailed(String),
    /// The remembered password, read from the keychain.
    Secret(Result<Option<String>, String>),
    /// What became of saving or forgetting the password.
    SecretSaved(Result<String, String>),
    /// The answer to a service API call the window made.
    Api(ApiOp, Result<ApiReply, String>),
}

/// A call the window makes to the service's API.
#[derive(Clone, Debug)]
pub enum ApiOp {
    List,
    Test,
    Create(crate::api::model::WebhookEntry),
    Update(u64, crate::api::model::WebhookEntry),
    Delete(u64),
    SetActive(u64, bool),
    SendTest,
}

#[derive(Clone, Debug)]
pub enum ApiReply {
    Webhooks(crate::api::WebhookList),
    Webhook(crate::api::model::Webhook),
    Deleted(u64),
    Sent(Vec<crate::contract::Message>),
}

/// A wake-up for the UI: `egui::Context::request_repaint` in the app, nothing in plain tests.
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// Stops the window's receiver in order: the calls in progress are answered (a delay cut
/// short) and stored before the process ends.
pub struct ReceiverStopper(Arc<tokio::sync::Mutex<Option<Running>>>, Store);

impl ReceiverStopper {
    /// Then the store's log is folded into its file, so the file alone holds every call, and
    /// the store is closed.
    pub async fn stop(self) {
        let running = self.0.lock().await.take();
        if let Some(r) = running {
            r.shutdown().await;
        }
        self.1.fold_before_exit().await;
        // Closed too, once the window's other handles have gone (within a bound): SQLite
        // then removes the -wal and -shm beside the file.
        let store = self.1;
        let _ = tokio::task::spawn_blocking(move || {
            store.close_within(std::time::Duration::from_secs(2))
        })
        .await;
    }
}

/// Handles to the background side; cheap to clone.
#[derive(Clone)]
pub struct Engine {
    rt: Handle,
    pub store: Store,
    pub responder: Responder,
    running: Arc<tokio::sync::Mutex<Option<Running>>>,
    tx: Sender<Msg>,
    wake: Waker,
    /// The newest list generation asked for: reads of the list for an older one are given up
    /// (a search through a large store takes seconds and holds the reader).
    wanted: Arc<std::sync::atomic::AtomicU64>,
}

/// The list's count for `filter` under `top`, as the message the window takes.
fn count_msg(
    store: &Store,
    filter: &Filter,
    top: i64,
    generation: u64,
    stale: crate::store::Stale,
) -> Msg {
    match store.count_at_unless(filter, top, Some(stale)) {
        Ok(count) => Msg::Count {
            generation,
            top,
            count,
        },
        Err(StoreError::Superseded) => Msg::Superseded,
        Err(e) => Msg::Error(format!("cannot count the calls: {e}")),
    }
}

impl Engine {
    pub fn new(rt: Handle, store: Store, responder: Responder) -> (Engine, Receiver<Msg>) {
        let (tx, rx) = channel();
        let engine = Engine {
            rt,
            store,
            responder,
            running: Arc::default(),
            tx,
            wake: Arc::new(|| {}),
            wanted: Arc::default(),
        };
        (engine, rx)
    }

    /// Call `wake` whenever a message is sent (the app passes `ctx.request_repaint`).
    pub fn set_waker(&mut self, wake: Waker) {
        self.wake = wake;
    }

    fn send(tx: &Sender<Msg>, wake: &Waker, msg: Msg) {
        if tx.send(msg).is_ok() {
            wake();
        }
    }

    /// What stops the receiver when the window has closed (the engine itself is gone by then).
    pub fn receiver_stopper(&self) -> ReceiverStopper {
        ReceiverStopper(self.running.clone(), self.store.clone())
    }

    /// (Re)start the receiver with `config`; the old one, if any, stops first.
    /// Start the receiver with `config`: on another address, the one running stops once the
    /// new one listens; on the same address it stops first, to free it (calls arriving in
    /// between are refused, as on any restart on a fixed port). With `or_any_port`, a port
    /// that cannot be had is given up for any free one: the port the receiver kept across a
    /// restart that asked for any free port.
    pub fn listen(&self, config: ReceiverConfig, or_any_port: bool) {
        let (running, store, responder) = (
            self.running.clone(),
            self.store.clone(),
            self.responder.clone(),
        );
        let (tx, wake) = (self.tx.clone(), self.wake.clone());
        self.rt.spawn(async move {
            let mut slot = running.lock().await;
            // The same address must be freed first; another one is tried first, so a port that
            // turns out to be taken does not cost the receiver that works.
            let same = slot.as_ref().is_some_and(|old| {
                config.port != 0 && old.addr == SocketAddr::new(config.bind, config.port)
            });
            if same && let Some(old) = slot.take() {
                old.shutdown().await;
            }
            // Subscribed from the first call: a call served before a later subscription is
            // listed only when something else reads the store again.
            let started =
                match receiver::start_subscribed(config.clone(), store.clone(), responder.clone())
                    .await
                {
                    Err(_) if or_any_port && config.port != 0 => {
                        let any = ReceiverConfig { port: 0, ..config };
                        receiver::start_subscribed(any, store, responder).await
                    }
                    started => started,
                };
            match started {
                Ok((r, mut events)) => {
                    // Watched before the old receiver's stop (up to its wait), and read once
                    // at first: a call the new one holds meanwhile is shown at once, not when
                    // the held list next changes.
                    let mut held = r.watch_held();
                    held.mark_changed();
                    if let Some(old) = slot.take() {
                        old.shutdown().await;
                    }
                    let addr = r.addr;
                    Engine::send(&tx, &wake, Msg::Listening(addr));
                    *slot = Some(r);
                    drop(slot);
                    let (events_tx, events_wake) = (tx.clone(), wake.clone());
                    tokio::spawn(async move {
                        let (tx, wake) = (events_tx, events_wake);
                        use tokio::sync::broadcast::error::RecvError;
                        loop {
                            match events.recv().await {
                                Ok(rec) => Engine::send(&tx, &wake, Msg::Recorded(rec)),
                                // Missed events only mean the list refreshes from the store.
                                Err(RecvError::Lagged(_)) => continue,
                                Err(RecvError::Closed) => break,
                            }
                        }
                    });
                    tokio::spawn(async move {
                        // Ends with its receiver; the new one's list starts empty.
                        while held.changed().await.is_ok() {
                            let now = held.borrow_and_update().clone();
                            Engine::send(&tx, &wake, Msg::Held(addr, now));
                        }
                    });
                }
                Err(e) => Engine::send(
                    &tx,
                    &wake,
                    Msg::ListenFailed {
                        error: e.for_window(slot.as_ref().map(|r| r.addr)),
                        still: slot.as_ref().map(|r| r.addr),
                    },
                ),
            }
        });
    }

    /// The choice applies to the next call at once.
    pub fn set_answer(&self, answer: Answer) -> Result<(), AnswerError> {
        self.responder.set_answer(answer)
    }

    fn blocking(&self, job: impl FnOnce(&Store) -> Msg + Send + 'static) {
        let (store, tx, wake) = (self.store.clone(), self.tx.clone(), self.wake.clone());
        self.rt
            .spawn_blocking(move || Engine::send(&tx, &wake, job(&store)));
    }

    /// Whether a read of the list for `generation` is no longer wanted (a newer one was asked
    /// for), checked while it runs.
    fn stale(&self, generation: u64) -> crate::store::Stale {
        let wanted = self.wanted.clone();
        Box::new(move || wanted.load(std::sync::atomic::Ordering::Relaxed) > generation)
    }

    pub fn load_count(&self, generation: u64, filter: Filter, top: i64) {
        let stale = self.stale(generation);
        self.blocking(move |store| count_msg(store, &filter, top, generation, stale));
    }

    pub fn load_page(&self, generation: u64, filter: Filter, top: i64, index: u64, size: u64) {
        let stale = self.stale(generation);
        self.blocking(move |store| {
            match store.page_at_unless(&filter, top, index * size, size, Some(stale)) {
                Ok(rows) => Msg::Page {
                    generation,
                    index,
                    rows,
                },
                Err(StoreError::Superseded) => Msg::Superseded,
                Err(e) => Msg::Error(format!("cannot read the calls: {e}")),
            }
        });
    }

    /// Whether the selected call `id` matches `filter`; the answer comes as
    /// [`Msg::SelectedShown`].
    pub fn check_selected(&self, generation: u64, filter: Filter, id: i64) {
        self.blocking(move |store| match store.matches(&filter, id) {
            Ok(shown) => Msg::SelectedShown {
                generation,
                id,
                shown,
            },
            Err(e) => Msg::Error(format!("cannot read the store: {e}")),
        });
    }

    /// Ask for the newest id in the store, whoever wrote it.
    pub fn poll_newest(&self) {
        self.blocking(|store| match store.last_id() {
            Ok(id) => Msg::Newest(id),
            Err(_) => Msg::Newest(None),
        });
    }

    /// Ask for the newest id (answered as a count of everything).
    pub fn load_top(&self, generation: u64, filter: Filter) {
        // From now on, reads for older generations are given up.
        self.wanted
            .fetch_max(generation, std::sync::atomic::Ordering::Relaxed);
        let stale = self.stale(generation);
        self.blocking(move |store| match store.last_id() {
            Ok(top) => count_msg(store, &filter, top.unwrap_or(0), generation, stale),
            Err(e) => Msg::Error(format!("cannot read the store: {e}")),
        });
    }

    pub fn load_detail(&self, id: i64) {
        self.blocking(move |store| match store.get(id) {
            Ok(Some(s)) => {
                let json = serde_json::from_slice(&s.inv.body).ok().map(Box::new);
                Msg::Detail(Box::new(s), json)
            }
            Ok(None) => Msg::Error(format!("call {id} is not in the store")),
            Err(e) => Msg::Error(format!("cannot read call {id}: {e}")),
        });
    }

    /// Load and analyse the delivery `delivery` of `webhook_id` against `schedule`: the clock
    /// its retries to come follow when `clock_known` (the built-in emulator's, at its speed
    /// now), or else the reader's choice, which the clock speed the calls carry overrides.
    pub fn load_delivery(
        &self,
        delivery: String,
        webhook_id: Option<String>,
        schedule: crate::contract::Schedule,
        clock_known: bool,
    ) {
        self.blocking(move |store| {
            match crate::deliveries::load(
                store,
                &delivery,
                webhook_id.as_deref(),
                schedule,
                clock_known,
            ) {
                Ok(Some(d)) => Msg::Delivery(Box::new(d)),
                Ok(None) => Msg::Error(format!("delivery {delivery} has no calls")),
                Err(e) => Msg::Error(format!("cannot read delivery {delivery}: {e}")),
            }
        });
    }

    /// Ask for a rule file (a file dialog), or take `path` when given, and read it, off the UI
    /// thread.
    pub fn read_rules(&self, picker: Arc<dyn super::files::FilePicker>, path: Option<PathBuf>) {
        self.blocking(move |_| match path.or_else(|| picker.open_rules()) {
            None => Msg::Cancelled,
            Some(path) => Msg::RulesRead(
                crate::rules::read_rule_file(&path)
                    .map(|t| (path.clone(), t))
                    .map_err(|e| e.to_string()),
            ),
        });
    }

    /// Ask where to save `text` (a file dialog), or take `path` when given, and write it, off
    /// the UI thread.
    pub fn write_rules(
        &self,
        picker: Arc<dyn super::files::FilePicker>,
        path: Option<PathBuf>,
        text: String,
    ) {
        self.blocking(move |_| match path.or_else(|| picker.save_rules()) {
            None => Msg::Cancelled,
            Some(path) => Msg::RulesWritten(
                // In the format the file's name asks for (rules.toml or rules.json).
                crate::rules::text_for(&path, &text)
                    .map_err(|e| e.to_string())
                    .and_then(|text| {
                        std::fs::write(&path, text).map_err(|e| {
                            format!(
                                "cannot write {}: {}",
                                path.display(),
                                crate::text::io_words(&e)
                            )
                        })
                    })
                    .map(|_| path.clone()),
            ),
        });
    }

    /// Read a secret from the keychain.
    pub fn secret_load(&self, store: Arc<dyn super::secrets::SecretStore>, account: String) {
        self.blocking(move |_| Msg::Secret(store.load(&account)));
    }

    /// Save `secret` in the keychain, or forget what is there when `None`.
    pub fn secret_save(
        &self,
        store: Arc<dyn super::secrets::SecretStore>,
        account: String,
        secret: Option<String>,
    ) {
        self.blocking(move |_| {
            Msg::SecretSaved(match secret {
                Some(s) => store
                    .save(&account, &s)
                    .map(|_| "The password is kept in the OS keychain.".to_owned()),
                None => store
                    .forget(&account)
                    .map(|_| "The keychain no longer holds the password.".to_owned()),
            })
        });
    }

    /// Start the embedded emulator.
    pub fn start_emulator(&self, config: crate::emulator::EmulatorConfig) {
        let (tx, wake) = (self.tx.clone(), self.wake.clone());
        self.rt.spawn(async move {
            let msg = match crate::emulator::Emulator::start(config).await {
                Ok(e) => Msg::EmulatorStarted(e),
                Err(e) => Msg::EmulatorFailed(e.to_string()),
            };
            Engine::send(&tx, &wake, msg);
        });
    }

    /// Make a service API call; the reply comes back as [`Msg::Api`].
    pub fn api(&self, client: crate::api::ApiClient, op: ApiOp) {
        let (tx, wake) = (self.tx.clone(), self.wake.clone());
        self.rt.spawn(async move {
            let r = match &op {
                ApiOp::List | ApiOp::Test => client
                    .list_webhooks_answered()
                    .await
                    .map(|a| ApiReply::Webhooks(a.value)),
                ApiOp::Create(e) => client.create_webhook(e).await.map(ApiReply::Webhook),
                ApiOp::Update(id, e) => client.update_webhook(*id, e).await.map(ApiReply::Webhook),
                ApiOp::Delete(id) => client
                    .delete_webhook(*id)
                    .await
                    .map(|_| ApiReply::Deleted(*id)),
                ApiOp::SetActive(id, on) => {
                    client.set_active(*id, *on).await.map(ApiReply::Webhook)
                }
                ApiOp::SendTest => client
                    .send_messages(&[crate::api::model::SubmissionEntry::to_number(
                        crate::contract::TEST_NUMBER,
                        "Hookscope test message",
                    )])
                    .await
                    .map(ApiReply::Sent),
            };
            let r = r.map_err(|e| super::in_window_words(&e.to_string()));
            Engine::send(&tx, &wake, Msg::Api(op, r));
        });
    }

    /// Run a future on the runtime (for callers that need one, e.g. the demo filler).
    pub fn spawn<F>(&self, fut: F)
    where
        F: std::future::Future<Output = ()> + Send + 'static,
    {
        self.rt.spawn(fut);
    }
}
