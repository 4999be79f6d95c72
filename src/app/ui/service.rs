//! The service panel: the API connection (emulator or a real service), the webhooks with their
//! forms, the test message, and the emulator's speed, injection and outbox.

use crate::app::HookscopeApp;
use crate::app::engine::ApiOp;
use crate::contract::{TEST_NUMBER, TriggerScope};
use egui::RichText;

/// The Service panel's content; `drawer` when it lies over the list (a narrow window), with a
/// Close button beside its heading.
pub fn service_ui(ui: &mut egui::Ui, app: &mut HookscopeApp, drawer: bool) {
    let dark = ui.visuals().dark_mode;
    ui.add_space(4.0);
    if drawer {
        ui.horizontal(|ui| {
            ui.heading("Service");
            ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                if ui
                    .button("Close")
                    .on_hover_text("Put the Service panel away (Escape); the top bar's Service button brings it back")
                    .clicked()
                {
                    app.state.show_service = false;
                }
            });
        });
    } else {
        ui.heading("Service");
    }
    // The room for the content and the foot together: what the content may need to keep its
    // place when the foot's words go.
    let room = ui.available_height();
    // What the service last said, at the foot of the panel: shown above the buttons it pushed
    // them down, under the pointer, between two clicks.
    if let Some(st) = &app.state.service.status {
        let (text, color) = match st {
            Ok(t) => (
                t.as_str(),
                super::outcome_color(crate::contract::Outcome::Succeeded, dark),
            ),
            Err(e) => (
                e.as_str(),
                super::outcome_color(crate::contract::Outcome::WebhookCancelled, dark),
            ),
        };
        egui::Panel::bottom("service_status")
            .resizable(false)
            .show(ui, |ui| {
                ui.add_space(4.0);
                let text = RichText::new(crate::text::first_upper(text)).color(color);
                ui.label(super::bidi_safe(ui, text));
            });
    }
    // New words at the foot take room from the panel (egui gives a panel its room over two
    // frames): for a few frames the button clicked for them (Receive, low in a drawer at zoom
    // 2, under seven lines of an error) is kept in sight, once; a scroll of the wheel since
    // the click forgets it.
    // The words going (the click that asks the service clears the old news) as well as
    // coming: the panel, scrolled to its end, grew by the foot's height and the content moved
    // down under the pointer, then stayed there when the news came.
    let sv = &mut app.state.service;
    if sv.status != sv.status_shown {
        sv.status_shown = sv.status.clone();
        if sv.clicked_at.is_some() {
            sv.keep_in_sight = KEEP_IN_SIGHT_FRAMES;
        }
    }
    let keeping = sv.keep_in_sight > 0;
    let keep = match sv.clicked_at {
        Some(y) if keeping => {
            sv.keep_in_sight -= 1;
            if sv.keep_in_sight == 0 && sv.status.is_some() {
                // The news the click asked for has come: later news (a retry counted every
                // second) leaves the panel alone.
                sv.clicked_at = None;
            } else {
                // Those frames now, not whenever the pointer next moves.
                ui.ctx().request_repaint();
            }
            Some(y)
        }
        _ => None,
    };
    // Where it was at the click, as long as the clicked button is in sight there (the foot's
    // room is already taken for this frame); else it is scrolled into sight. The button's own
    // height, not more: with a margin of two lines, *Receive* low in the panel, still whole in
    // sight, was scrolled up 40 points under the pointer as the foot's news grew by a line.
    let button = ui.spacing().interact_size.y;
    let view = ui.available_height();
    let hold = sv
        .held
        .map(|h| h.offset)
        .filter(|off| keep.is_some_and(|y| whole_in_sight(y, button, *off, view)));
    // Its bar's room kept while nothing scrolls: the New webhook form, opening, brought the bar
    // and narrowed the panel, and *New webhook* wrapped onto a row of its own under the pointer.
    let mut scroll = egui::ScrollArea::vertical()
        .id_salt("service_scroll")
        .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible);
    if app.state.first_frame {
        scroll = scroll.vertical_scroll_offset(0.0);
    } else if let Some(off) = hold {
        scroll = scroll.vertical_scroll_offset(off);
    }
    let pad_for = app.state.service.held.map(|h| h.offset);
    let shown = scroll.show(ui, |ui| {
        if let Some(y) = keep.filter(|_| hold.is_none()) {
            let content = ui.max_rect();
            let row = 2.0 * ui.text_style_height(&egui::TextStyle::Body);
            let at = egui::Rect::from_min_size(
                egui::pos2(content.left(), content.top() + y - row / 2.0),
                egui::vec2(1.0, row),
            );
            ui.scroll_to_rect(at, None);
        }
        connection_ui(ui, app);
        ui.separator();
        webhooks_ui(ui, app);
        ui.separator();
        test_message_ui(ui, app);
        if !app.state.settings.api_custom {
            ui.separator();
            emulator_ui(ui, app);
        }
        // Room to stay where the click left it when the foot's words go and the panel grows
        // by their height: there from before they go, since the scroll is held within the
        // content of the frame before.
        // Not scrolled, it cannot be moved; nor padded, which would bring a scroll bar that
        // narrows the content and rewraps it.
        let content = ui.min_rect().height();
        if let Some(off) = pad_for.filter(|off| *off > 0.0) {
            let pad = off + room - content;
            if pad > 0.0 {
                ui.add_space(pad);
            }
        }
        super::follow_keyboard_focus(ui);
        content
    });
    // A click in the panel's content, not on a window or a dialog lying over it.
    let (click, wheel) = ui.input(|i| {
        (
            i.pointer
                .any_click()
                .then(|| i.pointer.interact_pos())
                .flatten(),
            i.raw
                .events
                .iter()
                .any(|e| matches!(e, egui::Event::MouseWheel { .. })),
        )
    });
    let here = |p: egui::Pos2| {
        shown.inner_rect.contains(p) && ui.ctx().layer_id_at(p) == Some(ui.layer_id())
    };
    let offset = shown.state.clamped_offset().y;
    let content = shown.inner;
    let sv = &mut app.state.service;
    if let Some(p) = click.filter(|p| here(*p)) {
        sv.clicked_at = Some(p.y - shown.inner_rect.top() + offset);
        sv.held = Some(crate::app::state::HeldPlace {
            offset,
            room,
            content,
        });
    } else if wheel && ui.ctx().pointer_hover_pos().is_some_and(here) {
        sv.clicked_at = None;
        sv.held = None;
    } else if let Some(h) = sv.held {
        let moved = |a: f32, b: f32| (a - b).abs() > 0.5;
        // Scrolled some other way (its bar dragged, a key); the window resized or zoomed; the
        // content itself changed (a webhook deleted, a form opened): the place is the user's
        // now, and no blank is kept at the panel's end for it.
        if (!keeping && moved(h.offset, offset)) || moved(h.room, room) || moved(h.content, content)
        {
            sv.clicked_at = None;
            sv.held = None;
        }
    }
    delete_modal(ui.ctx(), app);
    remote_modal(ui.ctx(), app);
}

/// For how many frames new words at the panel's foot keep the button clicked for them in
/// sight: egui gives the foot its room over two frames, and a scroll takes one more.
const KEEP_IN_SIGHT_FRAMES: u8 = 4;

/// A form field as wide as the panel leaves it (within reason), so a form never widens the
/// panel and pushes the list's columns off screen.
/// The width of a text field in a two-column grid of `labels` and fields laid out in `ui`: what
/// the widest label leaves of the row, so that the grid never makes the panel wider (a field
/// sized from a grid cell's own room pushed the panel wider each time the form opened).
/// A text field under its label, as wide as the panel: a URL in a grid's second column was cut
/// at "http://127.0.0.1:45049/" in the default panel.
fn field(ui: &mut egui::Ui, label: &str, edit: egui::TextEdit<'_>) -> egui::Response {
    let l = ui.label(label);
    let r = ui
        .add(edit.desired_width(ui.available_width()))
        .labelled_by(l.id);
    ui.add_space(2.0);
    r
}

fn connection_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    let s = &mut app.state.settings;
    let switched = ui
        .horizontal_wrapped(|ui| {
            ui.selectable_value(&mut s.api_custom, false, "Built-in emulator")
                .changed()
                | ui.selectable_value(&mut s.api_custom, true, "A real service")
                    .changed()
        })
        .inner;
    if switched {
        // What was listed came from the other service: never show it as this one's.
        let sv = &mut app.state.service;
        sv.webhooks.clear();
        sv.listed = false;
        sv.status = None;
        sv.awaiting_test = false;
        sv.test_reports = None;
        sv.awaiting_incoming = false;
        if !app.state.settings.api_custom {
            // The emulator needs no credentials: list its webhooks again at once.
            app.api(ApiOp::List);
        }
    }
    let s = &mut app.state.settings;
    if s.api_custom {
        field(
            ui,
            "API base URL",
            egui::TextEdit::singleline(&mut s.api_base_url).hint_text("https://host/v1"),
        );
        field(
            ui,
            "Username",
            egui::TextEdit::singleline(&mut s.api_user).hint_text("user or token id"),
        );
        field(
            ui,
            "Password",
            egui::TextEdit::singleline(&mut app.state.service.password)
                .password(true)
                .hint_text("password or token secret"),
        )
        .on_hover_text(
            "Never written to a file or logged; kept in the OS keychain only if you ask",
        );
        let mut remember = app.state.settings.api_remember;
        if ui
            .checkbox(&mut remember, "Remember in the OS keychain")
            .on_hover_text("Unticking it removes the password from the keychain")
            .changed()
        {
            app.state.settings.api_remember = remember;
            app.store_secret();
        }
    } else {
        match (
            &app.state.service.emulator,
            &app.state.service.emulator_error,
        ) {
            (Some(e), _) => {
                // Whole or cut with "…" (whole on hover): wrapped, a narrow panel broke it
                // after its last slash, and "v1" on a line of its own read as another value.
                ui.add(egui::Label::new(RichText::new(e.base_url()).monospace()).truncate());
                ui.weak("user demo, password demo");
            }
            (None, Some(err)) => {
                ui.label(err.as_str());
                if ui.button("Start the emulator").clicked() {
                    app.start_emulator();
                }
            }
            (None, None) => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Starting the emulator…");
                });
            }
        }
    }
    ui.horizontal_wrapped(|ui| {
        if ui.button("Test connection").clicked() {
            // The last answer is old news while the new test runs (the spinner says it does).
            app.state.service.status = None;
            if app.state.settings.api_custom && app.state.settings.api_remember {
                app.store_secret();
            }
            app.api(ApiOp::Test);
        }
        if app.state.service.busy > 0 {
            ui.spinner();
        }
    });
}

/// The most of a webhook's name the list holds: its line shows what fits, its hover this.
const NAME_ON_HOVER: usize = 2000;

/// The name the New webhook form proposes: `hookscope-N`, N one past the webhooks listed, or
/// the next one no webhook has (after a delete, "hookscope-2" may still be taken, and the
/// service refuses a name twice).
fn free_name(webhooks: &[crate::api::model::Webhook]) -> String {
    (webhooks.len() + 1..)
        .map(|n| format!("hookscope-{n}"))
        .find(|name| webhooks.iter().all(|w| w.name.trim() != name))
        .unwrap_or_default()
}

fn webhooks_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    ui.horizontal_wrapped(|ui| {
        ui.strong("Webhooks");
        if ui.button("Refresh").clicked() {
            app.api(ApiOp::List);
        }
        if ui.button("New webhook").clicked() {
            // What the service said before (an incoming message that went nowhere) is not about
            // the new form.
            app.state.service.status = None;
            app.state.service.form = crate::app::state::WebhookForm {
                name: free_name(&app.state.service.webhooks),
                url: app.receiver_url(),
                ..Default::default()
            };
            app.state.service.form_open = true;
            app.state.service.form_reveal = true;
        }
    });
    if app.state.service.webhooks.is_empty() {
        let sv = &app.state.service;
        ui.weak(match (sv.listed, sv.unreadable) {
            (false, _) => "Not connected yet.".to_owned(),
            (true, 0) => match sv.sample_webhook {
                Some(id) => format!(
                    "No webhooks yet: New webhook creates one that calls this receiver. The sample calls in the list are a recording: their webhook {id} is not one of this emulator's."
                ),
                None => {
                    "No webhooks yet: New webhook creates one that calls this receiver.".to_owned()
                }
            },
            // Not "none": the service listed some, which the foot of the panel names.
            (true, n) => format!(
                "No webhook Hookscope can read: the service listed {n} it cannot read, named at the foot of the panel."
            ),
        });
    }
    let warn = super::severity_color(crate::contract::Severity::Warning, ui.visuals().dark_mode);
    if !app.state.service.listed && !app.state.service.webhooks.is_empty() {
        // A refresh that failed: these are what the service listed before.
        ui.label(
            RichText::new("As listed before the last refresh failed (said below): Refresh once the service answers.")
                .color(warn),
        );
    }
    let mut action: Option<ApiOp> = None;
    let mut edit: Option<crate::api::model::Webhook> = None;
    for w in &app.state.service.webhooks {
        let moved = app.moved_url(&w.url);
        egui::Frame::group(ui.style()).show(ui, |ui| {
            ui.set_width(ui.available_width());
            webhook_heading(ui, w);
            ui.label(RichText::new(&w.url).monospace().small());
            if let Some(to) = &moved {
                ui.label(
                    RichText::new(
                        "Nothing listens there now: the receiver has moved to another port.",
                    )
                    .color(warn),
                );
                if ui
                    .small_button("Point it at the receiver")
                    .on_hover_text(format!("Edit it with the URL {to}, ready to save"))
                    .clicked()
                {
                    let mut w = w.clone();
                    w.url = to.clone();
                    edit = Some(w);
                }
            }
            if let Some(c) = &w.contact_email_address {
                ui.label(RichText::new(format!("problem reports to {c}")).small());
            }
            ui.horizontal_wrapped(|ui| {
                let toggle = if w.active { "Disable" } else { "Enable" };
                // As wide as the wider of the two, so Edit and Delete stay where they are.
                let wide = super::widest_text(ui, egui::TextStyle::Button, ["Disable", "Enable"])
                    + 2.0 * ui.spacing().button_padding.x;
                if ui
                    .add(
                        egui::Button::new(toggle)
                            .small()
                            .min_size(egui::vec2(wide, 0.0)),
                    )
                    .clicked()
                {
                    action = Some(ApiOp::SetActive(w.id, !w.active));
                }
                if ui.small_button("Edit").clicked() {
                    edit = Some(w.clone());
                }
                if ui.small_button("Delete").clicked() {
                    app.state.service.status = None;
                    app.state.service.confirm_delete = Some(w.id);
                }
            });
        });
    }
    if let Some(op) = action {
        app.api(op);
    }
    if let Some(w) = edit {
        app.state.service.form = crate::app::state::WebhookForm {
            editing: Some(w.id),
            name: w.name.clone(),
            url: w.url.clone(),
            scope: w.trigger_scope,
            contact: w.contact_email_address.clone().unwrap_or_default(),
            many: w.invoke_option == Some(crate::api::model::InvokeOption::Many),
            active: w.active,
        };
        app.state.service.form_open = true;
        app.state.service.form_reveal = true;
    }
    if app.state.service.form_open {
        form_ui(ui, app);
    } else {
        // The next form starts without the room a warning took in this one.
        ui.data_mut(|d| {
            for key in [URL_WARNING_HEIGHT, URL_WARNING_HEIGHT_EMULATOR] {
                d.remove_temp::<f32>(egui::Id::unique(key));
            }
        });
    }
}

/// A webhook's id, name, scope and state. On one line when all of it fits: the scope and the
/// state at the right, the id and the name at the left. In a narrow panel (a large zoom) the
/// name goes on a line of its own under them, cut with "…" only if that line is too short too
/// and shown whole on hover: squeezed in beside the id it had read "h…", and a RECEIVED
/// webhook's "…" was drawn over its scope.
fn webhook_heading(ui: &mut egui::Ui, w: &crate::api::model::Webhook) {
    let (state, color) = if w.active {
        ("active", crate::contract::Outcome::Succeeded)
    } else {
        ("inactive", crate::contract::Outcome::WebhookCancelled)
    };
    let color = super::outcome_color(color, ui.visuals().dark_mode);
    let id = w.id.to_string();
    let scope = w.trigger_scope.as_str();
    let name = crate::text::short_name(&w.name, NAME_ON_HOVER);
    let body = egui::TextStyle::Body;
    let width = |t: &str| super::widest_text(ui, body.clone(), [t]);
    let gap = ui.spacing().item_spacing.x;
    // On one line or two by the room "active" takes, whichever the state: Disable turning it
    // into the wider "inactive" had taken the name to a line of its own, and moved Enable down
    // under the pointer. An inactive webhook's name gives up the difference, cut with "…"
    // (whole on hover) where it has no room to spare.
    let state_room = width("active").max(width("inactive"));
    let wanted = width(&id) + width(&name) + width(scope) + width("active");
    let one_line = wanted + 3.0 * gap <= ui.available_width();
    // Too narrow even for the id beside its scope and state (the drawer at zoom 2, an id of
    // eleven digits): the id on a line of its own, where beside them it ran into the scope
    // ("28302285873RECEIVED").
    let id_apart = width(&id) + width(scope) + state_room + 2.0 * gap + 4.0 > ui.available_width();
    let name_label = |ui: &mut egui::Ui| {
        let text = RichText::new(name.as_str()).strong();
        ui.add(egui::Label::new(super::bidi_safe(ui, text)).truncate());
    };
    if id_apart {
        // The id whole: cut, it would read as another id.
        ui.label(RichText::new(&id).strong());
    }
    let row = egui::vec2(ui.available_width(), ui.spacing().interact_size.y);
    let right_to_left = egui::Layout::right_to_left(egui::Align::Center);
    ui.allocate_ui_with_layout(row, right_to_left, |ui| {
        let state_label = ui.label(RichText::new(state).color(color));
        if !w.active {
            // The API tells no more than `active`: a 410 answer is one way there.
            state_label.on_hover_text(
                "Not called: disabled here or through the API, or cancelled by a 410 answer to one of its calls. Enable sets it up again.",
            );
        }
        ui.label(scope);
        if !id_apart {
            ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                ui.label(RichText::new(&id).strong());
                if one_line {
                    name_label(ui);
                }
            });
        }
    });
    // Beside the id only when the id is on the row (one_line and id_apart, measured with the
    // two states' rooms, can both hold for a one-letter name: it had not been drawn at all).
    if !one_line || id_apart {
        name_label(ui);
    }
}

/// Whether a button `height` tall, its middle `y` points down the content, is whole in sight
/// in a view `view` tall scrolled `offset` down.
fn whole_in_sight(y: f32, height: f32, offset: f32, view: f32) -> bool {
    y - height / 2.0 >= offset && y + height / 2.0 <= offset + view
}

/// Where the webhook form keeps the room its URL's warning took (with a real service; with
/// the built-in emulator, the second).
const URL_WARNING_HEIGHT: &str = "url_warning_height";
const URL_WARNING_HEIGHT_EMULATOR: &str = "url_warning_height_emulator";

fn form_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    let dark = ui.visuals().dark_mode;
    let shown = egui::Frame::group(ui.style()).show(ui, |ui| {
        let f = &mut app.state.service.form;
        ui.strong(match f.editing {
            Some(id) => format!("Edit webhook {id}"),
            None => "New webhook".to_owned(),
        });
        field(ui, "Name", egui::TextEdit::singleline(&mut f.name));
        field(ui, "URL", egui::TextEdit::singleline(&mut f.url));
        // A real service calls from the internet: the receiver's own 127.0.0.1 (what the form
        // starts with when no Public URL is set) never gets its calls.
        // Its room kept while the form is open: coming and going as the URL is typed, it moved
        // Create up and down.
        let why = app
            .state
            .settings
            .api_custom
            .then(|| crate::api::reach::unreachable_by(&app.state.settings.api_base_url, &f.url))
            .flatten();
        // The receiver moved (Settings) while the form was open: its URL names a port where
        // nothing listens now, and Create had failed on the service's refused connection.
        let url = f.url.clone();
        let moved = app.moved_url(&url);
        let mut take_moved = None;
        // Held per service: the room a real service's warning took is no gap under the
        // built-in emulator's form (switched back, a blank stood between URL and Scope).
        let key = if app.state.settings.api_custom {
            URL_WARNING_HEIGHT
        } else {
            URL_WARNING_HEIGHT_EMULATOR
        };
        super::keep_height(ui, key, true, |ui| {
            let warn = super::severity_color(crate::contract::Severity::Warning, dark);
            if let Some(why) = why {
                ui.colored_label(
                    warn,
                    format!("{why} Settings' Public URL makes new webhooks start with it."),
                );
            }
            if let Some(to) = moved {
                ui.colored_label(
                    warn,
                    "Nothing listens there now: the receiver has moved to another port.",
                );
                if ui
                    .small_button("Use the receiver's URL")
                    .on_hover_text(to.clone())
                    .clicked()
                {
                    take_moved = Some(to);
                }
            }
        });
        let f = &mut app.state.service.form;
        if let Some(to) = take_moved {
            f.url = to;
        }
        ui.label("Scope");
        ui.horizontal_wrapped(|ui| {
            ui.selectable_value(&mut f.scope, TriggerScope::Sent, "SENT (status reports)");
            ui.selectable_value(
                &mut f.scope,
                TriggerScope::Received,
                "RECEIVED (incoming messages)",
            );
        });
        ui.add_space(2.0);
        field(
            ui,
            "Contact e-mail",
            egui::TextEdit::singleline(&mut f.contact).hint_text("for problem reports"),
        );
        ui.checkbox(&mut f.many, "Up to 10 messages per call");
        ui.checkbox(&mut f.active, "Active");
        let entry = f.entry();
        let problem = entry.as_ref().err().cloned();
        // No URL yet because no receiver listens to give one (the field fills in once it
        // does): said as the way on, not in red as if something typed were wrong.
        let waiting = f.url.trim().is_empty()
            && !matches!(app.state.listening, crate::app::state::Listening::On(_));
        let editing = f.editing;
        ui.horizontal_wrapped(|ui| {
            let label = if editing.is_some() { "Save" } else { "Create" };
            if ui
                .add_enabled(entry.is_ok(), egui::Button::new(label))
                .clicked()
                && let Ok(e) = entry
            {
                let op = match editing {
                    Some(id) => ApiOp::Update(id, e),
                    None => ApiOp::Create(e),
                };
                app.api(op);
            }
            if ui.button("Cancel").clicked() {
                app.state.service.form_open = false;
                // What the service said about the abandoned form no longer applies.
                app.state.service.status = None;
            }
        });
        // What the fields need, below the buttons: it comes and goes as they are typed in
        // (an e-mail address half typed), and above them it moved Save under the pointer.
        if waiting {
            ui.weak(
                "The receiver is not listening yet: its URL comes here once it listens (Listen, or Any free port, in the top bar), or type the URL the service should call.",
            );
        } else if let Some(e) = &problem {
            ui.colored_label(
                super::outcome_color(crate::contract::Outcome::WebhookCancelled, dark),
                crate::text::first_upper(e),
            );
        }
        registration_hint(ui, app);
    });
    if std::mem::take(&mut app.state.service.form_reveal) {
        shown.response.scroll_to_me(None);
    }
}

/// What the receiver answers the registration check the form's Create brings: 200 while
/// *Answer the registration check 200* is on; the answer chosen, a refusal if it is not 200,
/// when it is off (the hint had said 200 whatever was chosen, and Create then failed).
fn registration_hint(ui: &mut egui::Ui, app: &HookscopeApp) {
    const CHECK: &str = "The service calls the URL with [] before it accepts it";
    let settings = &app.state.settings;
    let status = settings.answer.status;
    // A URL on this machine that is not the receiver's: the check goes there, not to it (the
    // hint had promised the receiver's 200, and Create then failed as "connection refused").
    if let crate::app::state::Listening::On(now) = app.state.listening
        && let Some(port) =
            crate::app::state::elsewhere_on_this_machine(&app.state.service.form.url, now)
    {
        // Where it listens as a URL can reach it: 0.0.0.0 is no address to call.
        let base = crate::receiver::url_for(now);
        let base = base.trim_end_matches('/');
        ui.weak(if port == now.port() {
            // Its port, but https: the receiver does not speak TLS.
            format!(
                "{CHECK}; this URL is not http://, which is all the receiver speaks: write it as {base}/…"
            )
        } else {
            format!(
                "{CHECK}; this URL is on this machine but not the receiver's (it listens at {base}), so whatever answers at port {port} must answer it 200."
            )
        });
    } else if settings.pass_registration_check {
        ui.weak(format!("{CHECK}; the receiver answers that 200."));
    } else if app.state.rules.in_force > 0 {
        ui.weak(format!(
            "{CHECK}; with \"Answer the registration check 200\" off, the rules answer it (or the answer chosen), and the service accepts the URL only if the answer is 200."
        ));
    } else if status == 200 {
        ui.weak(format!(
            "{CHECK}; the receiver answers it 200, the answer chosen."
        ));
    } else {
        ui.label(
            RichText::new(format!(
                "{CHECK}; the receiver answers it {status}, the answer chosen (\"Answer the registration check 200\" is off), so the service will refuse the URL."
            ))
            .color(super::outcome_color(
                crate::contract::Outcome::UrlRefused,
                ui.visuals().dark_mode,
            )),
        );
    }
}

fn test_message_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    ui.strong("Test message");
    ui.label(format!(
        "Sends an SMS to the test number {TEST_NUMBER}, which costs nothing. The SMS never reaches a phone, by design (its last status is FAILED), and each status change reaches the SENT webhooks as a status report: those calls to your URL succeed when it answers 200."
    ));
    if ui
        .button(format!("Send a test message to\u{a0}{TEST_NUMBER}"))
        .clicked()
    {
        app.state.service.status = None;
        app.api(ApiOp::SendTest);
    }
}

/// A clock speed typed in the emulator's box: a whole number from 1 (real time) to 1,000,000,
/// its `x` optional (`60`, `60x`, `1 000`). What it refuses is said in place of the line on
/// what the speed means, in no more lines than it: short, and with a long typed value cut
/// (`9999999` had taken a third line, and moved the section below down).
fn parse_clock_speed(text: &str) -> Result<f64, String> {
    const TAKES: &str = "give a whole number, 1 to 1,000,000";
    match super::typed_number(text, &super::SPEED_UNITS) {
        Some(v) if v.fract() == 0.0 && (1.0..=crate::emulator::MAX_SPEED).contains(&v) => Ok(v),
        _ => Err(match text.trim() {
            "" => "Give the clock speed as a whole number, 1 (real time) to 1,000,000".to_owned(),
            typed => {
                let typed = crate::text::single_line(typed);
                let shown = match crate::text::head_chars(&typed, 9) {
                    (whole, 0) => whole.to_owned(),
                    (head, _) => format!("{head}…"),
                };
                format!("\"{shown}\" is not a clock speed: {TAKES}")
            }
        }),
    }
}

fn emulator_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    ui.strong("Emulator");
    let Some(emu) = app.state.service.emulator.clone() else {
        return;
    };
    let mut speed = app.state.settings.emulator_speed;
    let l = ui.label("Clock speed (× real time)");
    // What its box cannot take is said, not dropped or clamped (0 had become 1, "abc" nothing).
    let refusals = super::Refusals::default();
    // The slider's rail is drawn in the controls' fill: in the light theme, 230 grey on the
    // panel's 248, it could not be seen. Darker here, as the held calls' bars' track is.
    let rail = ui.visuals().widgets.inactive.bg_fill;
    if !ui.visuals().dark_mode {
        ui.visuals_mut().widgets.inactive.bg_fill = egui::Color32::from_gray(200);
    }
    let field = ui
        .add(
            egui::Slider::new(&mut speed, 1.0..=crate::emulator::MAX_SPEED)
                .logarithmic(true)
                .max_decimals(0)
                // A typed speed applies on Enter or leaving the box: typing 600 would otherwise
                // run the clock at 6 and 60 on the way, and read the open delivery again at each.
                .update_while_editing(false)
                .custom_parser(refusals.parser(parse_clock_speed)),
        )
        .labelled_by(l.id)
        .on_hover_text(
            "60: a minute of the retry schedule passes every second; up to 1,000,000, as hookscope emulate --speed",
        );
    ui.visuals_mut().widgets.inactive.bg_fill = rail;
    let shown = app.state.settings.emulator_speed;
    let note = refusals.note(
        ui,
        egui::Id::unique("clock_speed_refused"),
        &field,
        shown,
        &format!("{shown:.0}×"),
    );
    if field.changed() {
        app.state.settings.emulator_speed = speed;
        emu.set_speed(speed);
        // The open delivery's retries to come follow the new speed: read it again.
        if let Some(d) = &app.state.delivery {
            app.load_delivery(d.delivery.clone(), d.webhook_id.clone());
        }
    }
    let after =
        |secs: u64| crate::text::human_duration_at(std::time::Duration::from_secs(secs), speed);
    // What the box refused takes the place of what the speed means, until a click elsewhere:
    // added above it, it had moved the rest of the section down under the pointer.
    let held = note.is_some();
    super::keep_height(ui, "clock_speed_line", held, |ui| match note {
        Some(note) => {
            ui.label(RichText::new(note).color(super::severity_color(
                crate::contract::Severity::Warning,
                ui.visuals().dark_mode,
            )));
        }
        None => {
            ui.label(format!(
                "At {speed:.0}×, the first retry (90 s) comes after {}, and the 2-day window lasts {}.",
                after(90),
                after(172_800)
            ));
        }
    });
    let mut remote = emu.allow_remote();
    if ui
        .checkbox(&mut remote, "Call other hosts than this machine")
        .on_hover_text("Off: the emulator only calls 127.0.0.1, ::1 and localhost")
        .changed()
    {
        if remote {
            app.state.service.confirm_remote = true;
        } else {
            emu.set_allow_remote(false);
        }
    }
    ui.add_space(4.0);
    ui.label("A message from a handset (to the RECEIVED webhooks):");
    ui.horizontal_wrapped(|ui| {
        let l = ui.label("From");
        ui.add(egui::TextEdit::singleline(&mut app.state.service.inject_from).desired_width(110.0))
            .labelled_by(l.id);
    });
    ui.horizontal_wrapped(|ui| {
        let l = ui.label("Text");
        // What the Receive button beside it leaves, so a narrow panel does not widen.
        let width = (ui.available_width() - 72.0).clamp(80.0, 150.0);
        ui.add(egui::TextEdit::singleline(&mut app.state.service.inject_text).desired_width(width))
            .labelled_by(l.id);
        if ui.button("Receive").clicked() {
            let from = app.state.service.inject_from.trim().to_owned();
            if let Err(why) = crate::emulator::check_phone_number(&from) {
                app.state.service.status = Some(Err(format!(
                    "{why}: give the handset's number in From, digits after an optional +."
                )));
                return;
            }
            // Only a webhook the emulator calls with incoming messages can bring it here.
            let active = emu.webhooks().iter().any(|w| {
                w.active && w.trigger_scope == crate::contract::TriggerScope::Received
            });
            let m = emu.inject_incoming(
                &from,
                "+27001234567",
                &app.state.service.inject_text,
            );
            app.state.service.awaiting_incoming = active;
            app.state.service.status = Some(if active {
                Ok(format!(
                    "Incoming message {} received by the emulator: it goes to the RECEIVED webhooks, and its call is selected when it arrives.",
                    m.id
                ))
            } else {
                Err(format!(
                    "Incoming message {} received by the emulator, but no webhook is active for RECEIVED messages: it goes nowhere. Create a webhook for RECEIVED, or enable one, and receive again.",
                    m.id
                ))
            });
        }
    });
    ui.add_space(4.0);
    let outbox = emu.outbox();
    ui.label(format!(
        "Outbox: {} (not sent: e-mail stays here){}",
        crate::text::count(outbox.len() as u64, "problem report", "problem reports"),
        // Ahead of this machine's on a fast clock: said, so a date next week is no surprise.
        if app.state.settings.emulator_speed > 1.0 && !outbox.is_empty() {
            "; dated by the emulator's clock, which runs ahead"
        } else {
            ""
        }
    ));
    for m in outbox.iter().rev().take(8) {
        ui.label(
            RichText::new(format!(
                "{} to {}: {}",
                m.at.with_timezone(&chrono::Local).format("%d %b %H:%M"),
                m.to,
                m.notice
            ))
            .small(),
        )
        .on_hover_text(&m.text);
    }
}

fn remote_modal(ctx: &egui::Context, app: &mut HookscopeApp) {
    if !app.state.service.confirm_remote {
        return;
    }
    let modal = egui::Modal::new(egui::Id::unique("confirm_remote")).show(ctx, |ui| {
        ui.set_max_width(380.0);
        ui.heading("Let the emulator call other hosts?");
        ui.label("Webhooks may then point anywhere, and the emulator will send registration checks and invocations there from this machine.");
        ui.horizontal(|ui| {
            if ui.button("Yes, allow other hosts").clicked() {
                if let Some(e) = &app.state.service.emulator {
                    e.set_allow_remote(true);
                }
                app.state.service.confirm_remote = false;
            }
            if ui.button("No").clicked() {
                app.state.service.confirm_remote = false;
            }
        });
    });
    if modal.should_close() {
        app.state.service.confirm_remote = false;
    }
}

fn delete_modal(ctx: &egui::Context, app: &mut HookscopeApp) {
    let Some(id) = app.state.service.confirm_delete else {
        return;
    };
    let name = app
        .state
        .service
        .webhooks
        .iter()
        .find(|w| w.id == id)
        .map_or(String::new(), |w| {
            crate::text::short_name(&w.name, crate::app::NAME_IN_SENTENCE)
        });
    let modal = egui::Modal::new(egui::Id::unique("confirm_delete")).show(ctx, |ui| {
        ui.heading(format!("Delete webhook {id} \"{name}\"?"));
        ui.label("The service stops calling its URL. This cannot be undone.");
        ui.horizontal(|ui| {
            if ui.button("Yes, delete it").clicked() {
                app.state.service.confirm_delete = None;
                app.api(ApiOp::Delete(id));
            }
            if ui.button("Keep it").clicked() {
                app.state.service.confirm_delete = None;
            }
        });
    });
    if modal.should_close() {
        app.state.service.confirm_delete = None;
    }
}

#[cfg(test)]
mod tests {
    /// After a delete the count of webhooks may name one still there: the next free number.
    #[test]
    fn new_webhook_proposes_a_name_no_webhook_has() {
        let hook = crate::api::model::Webhook::sample;
        assert_eq!(super::free_name(&[]), "hookscope-1");
        // hookscope-1 deleted, hookscope-2 left: not "hookscope-2" again.
        assert_eq!(super::free_name(&[hook(2, "hookscope-2")]), "hookscope-3");
        assert_eq!(
            super::free_name(&[hook(2, "hookscope-2"), hook(3, " hookscope-3 ")]),
            "hookscope-4"
        );
        assert_eq!(super::free_name(&[hook(7, "mine")]), "hookscope-2");
    }

    #[test]
    fn the_clock_speed_box_takes_a_whole_speed_and_says_what_it_refuses() {
        use super::parse_clock_speed;
        for (typed, speed) in [
            ("60", 60.0),
            ("600x", 600.0),
            ("1 000", 1000.0),
            ("1", 1.0),
            ("1000000×", 1e6),
        ] {
            assert_eq!(parse_clock_speed(typed), Ok(speed), "{typed}");
        }
        for typed in ["0", "-5", "abc", "2.5", "2000000", "inf", "999999999"] {
            let e = parse_clock_speed(typed).expect_err(typed);
            assert_eq!(
                e,
                format!("\"{typed}\" is not a clock speed: give a whole number, 1 to 1,000,000")
            );
        }
        // Longer than nine characters: cut, so the note stays as short as the line it replaces.
        assert_eq!(
            parse_clock_speed("99999999999999"),
            Err(
                "\"999999999…\" is not a clock speed: give a whole number, 1 to 1,000,000"
                    .to_owned()
            )
        );
        assert_eq!(
            parse_clock_speed(""),
            Err("Give the clock speed as a whole number, 1 (real time) to 1,000,000".to_owned())
        );
    }

    /// A clicked button is held where it was while it is whole in sight: *Receive*, its lower
    /// edge 5 points above the view's foot (the news below it), is not scrolled (a margin of two lines around the
    /// click had scrolled it 40 points up under the pointer); one the news covers, even by a
    /// point, is brought into sight.
    #[test]
    fn a_button_whole_in_sight_is_held_where_it_is() {
        let (height, view) = (20.0, 600.0);
        assert!(super::whole_in_sight(585.0, height, 0.0, view));
        assert!(!super::whole_in_sight(591.0, height, 0.0, view));
        // Scrolled: the same button 100 points further down the content, the view with it.
        assert!(super::whole_in_sight(685.0, height, 100.0, view));
        // Its upper edge above the view's top is not in sight either.
        assert!(!super::whole_in_sight(105.0, height, 100.0, view));
    }
}
