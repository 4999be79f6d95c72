//! The answer panel: presets worded by the contract module, a custom answer, and the 410
//! confirmation. A choice applies to the next call at once.

use crate::app::HookscopeApp;
use crate::app::state::Preset;
use egui::RichText;

/// The most height the custom answer's Body field takes; a longer body scrolls inside it.
const BODY_FIELD_HEIGHT: f32 = 140.0;

pub fn answer_panel_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    let dark = ui.visuals().dark_mode;
    ui.add_space(4.0);
    ui.heading("Answer");
    ui.label("What the receiver answers to the next call, and what the service will do:");
    if let Some(notice) = &app.state.answer_notice {
        ui.label(RichText::new(notice).color(ui.visuals().warn_fg_color));
    }
    ui.add_space(4.0);
    let current = app.state.settings.answer.clone();
    // A rule that takes every call leaves the chosen answer unused: its card says so rather
    // than look in force.
    let overridden = if app.state.rules.in_force > 0 {
        app.state.rules.catch_all.clone()
    } else {
        None
    };
    // Not animated: a clicked recipe is kept in place by scrolling, within the frame.
    let mut scroll = egui::ScrollArea::vertical()
        .id_salt("answer_scroll")
        .animated(false);
    if app.state.first_frame {
        // egui keeps scroll positions across restarts: the presets start in sight.
        scroll = scroll.vertical_scroll_offset(0.0);
    }
    let held = working_in(ui);
    scroll.show(ui, |ui| {
            // Room kept above the content for a clicked button whose panel could not scroll
            // back by what the content above it lost (see [`keep_in_place`]).
            ui.add_space(app.state.answer_place.room_above);
            for preset in Preset::ALL {
                let outcome = preset.outcome();
                let chosen = current == preset.answer();
                let title = match preset.retry_after {
                    Some(ra) => format!("{} (Retry-After {ra} s)", preset.code),
                    None => preset.code.to_string(),
                };
                // What this preset makes the service do: with its own Retry-After, not the
                // general "when the answer gives one".
                let says = preset.answer().describe();
                let frame = egui::Frame::group(ui.style()).fill(if chosen && overridden.is_none() {
                    ui.visuals().selection.bg_fill.gamma_multiply(0.35)
                } else {
                    egui::Color32::TRANSPARENT
                });
                let card = frame.show(ui, |ui| {
                    ui.set_width(ui.available_width());
                    let clicked = ui.horizontal(|ui| {
                        let button = egui::Button::new(
                            RichText::new(&title)
                                .strong()
                                .color(super::outcome_color(outcome, dark)),
                        )
                        .selected(chosen);
                        let clicked = ui.add(button).on_hover_text(&says).clicked();
                        match (&overridden, chosen) {
                            (_, false) => {}
                            (None, true) => {
                                ui.label("chosen");
                            }
                            (Some(rule), true) => {
                                ui.weak("chosen, unused").on_hover_text(format!(
                                    "The rule \"{rule}\" answers every call while the rules are in force"
                                ));
                            }
                        }
                        clicked
                    })
                    .inner;
                    ui.label(RichText::new(&says).small());
                    clicked
                });
                // The whole card chooses, not only its code: for the pointer. The keyboard has
                // the code's button (the card, focusable too, was a second Tab stop on each
                // card, which showed no focus and chose the next preset on Enter).
                let card_response = ui
                    .interact(
                        card.response.rect,
                        ui.scope_id().with(("preset_card", preset.code)),
                        egui::Sense::CLICK,
                    )
                    .on_hover_cursor(egui::CursorIcon::PointingHand);
                // Kept in place as any clicked button of the panel: above the What-if, it does
                // not move, and the What-if below it then takes its new height at once (held
                // as it was, it left a gap as tall as the timeline it had shown).
                let key = egui::Id::unique(("preset", preset.code));
                keep_in_place(ui, &mut app.state.answer_place, key, &card_response);
                if card.inner || card_response.clicked() {
                    if preset.confirm {
                        app.state.confirm = Some(preset.answer());
                    } else {
                        app.apply_answer(preset.answer());
                        hold_in_place(&mut app.state.answer_place, key, &card_response);
                    }
                }
            }
            ui.add_space(8.0);
            // The built-in emulator's clock, when the window talks to it and it runs fast.
            let emulator = fast_emulator(app);
            // Kept as tall while the user works in the panel: a rule retiring (its line
            // above goes), or the rules cleared, would move the form below under the pointer.
            // Not after a click on a button kept in place: the panel scrolls by what the
            // What-if lost instead, which leaves in sight what the click changed rather than
            // a gap where it was.
            let clicked = app.state.answer_place.anchor.is_some();
            super::keep_height(ui, "what_if_height", held && !clicked, |ui| {
                what_if_ui(ui, &current, &app.state.rules, emulator);
            });
            ui.add_space(8.0);
            ui.separator();
            custom_ui(ui, app, held);
            ui.add_space(8.0);
            ui.separator();
            super::rules::rules_section_ui(ui, app);
            ui.add_space(8.0);
            ui.separator();
            let mut pass = app.state.settings.pass_registration_check;
            if ui
                .checkbox(&mut pass, "Answer the registration check 200")
                .on_hover_text(
                    "The service posts [] before it accepts a URL; with this on, registering a webhook works even while a failure code is chosen",
                )
                .changed()
            {
                app.state.settings.pass_registration_check = pass;
                app.engine().responder.set_pass_registration_check(pass);
            }
            if !pass && current.status != 200 {
                ui.label(
                    RichText::new(format!(
                        "Registering a webhook now fails: the check gets {} too, and the service accepts a URL only if it answers 200.",
                        current.status
                    ))
                    .small()
                    .color(super::outcome_color(crate::contract::Outcome::UrlRefused, dark)),
                );
            }
            hold_height(ui, held);
            // After the height held, not inside it: held room at the panel's foot (a shorter
            // What-if than before) had taken up this room, and a recipe that needed the panel
            // to scroll by it slid down under the pointer.
            ui.add_space(app.state.answer_place.room_below);
            super::follow_keyboard_focus(ui);
        });
    // The room kept for a clicked button goes once the pointer has left the panel (the content
    // may then move: nothing is under the pointer to be hit by mistake).
    let place = &mut app.state.answer_place;
    if (place.room_below > 0.0 || place.room_above > 0.0)
        && place.anchor.is_none()
        && !ui.ui_contains_pointer()
    {
        place.room_below = 0.0;
        place.room_above = 0.0;
    }
}

/// Keep `button` where it is on the screen for the next few frames: what it applies changes
/// the What-if above it.
pub(super) fn hold_in_place(
    place: &mut crate::app::state::KeptPlace,
    key: egui::Id,
    button: &egui::Response,
) {
    place.anchor = Some(crate::app::state::Anchor {
        id: key,
        top: button.rect.top(),
        frames: 4,
    });
}

/// Keep `button`, when it is the one held by `key`, where it was on the screen: what it
/// applied changes the What-if text above it, and the next click would land on another
/// button. The panel scrolls by what the button moved (when it can: a panel with no scroll
/// has nothing to give).
pub(super) fn keep_in_place(
    ui: &egui::Ui,
    place: &mut crate::app::state::KeptPlace,
    key: egui::Id,
    button: &egui::Response,
) {
    let Some(a) = place.anchor.as_mut().filter(|a| a.id == key) else {
        return;
    };
    let moved = button.rect.top() - a.top;
    if moved.abs() > 0.5 {
        // Moved down: what is below it got shorter, and at the panel's end there may be
        // nothing left to scroll by. Room below the content gives it (what it moved is at
        // most what is missing; the room goes once the pointer leaves the panel).
        let mut scroll = -moved;
        if moved > 0.0 {
            place.room_below += moved;
        } else {
            // Moved up: what is above it got shorter (a 404's line for a 503's timeline).
            // The panel scrolls back by as much as it is scrolled; near its top, room above
            // the content gives the rest (it goes too once the pointer leaves).
            let scrolled = (ui.clip_rect().top() - ui.min_rect().top()).max(0.0);
            scroll = scrolled.min(-moved);
            place.room_above += -moved - scroll;
        }
        ui.scroll_with_delta_animation(
            egui::vec2(0.0, scroll),
            egui::style::ScrollAnimation::none(),
        );
        ui.ctx().request_discard("a clicked button keeps its place");
    }
    a.frames = a.frames.saturating_sub(1);
    if a.frames == 0 {
        place.anchor = None;
    }
}

/// Whether the user works in the panel `ui` is: the pointer over it, or typing in one of its
/// fields.
fn working_in(ui: &egui::Ui) -> bool {
    let panel = ui.max_rect();
    let typing = ui
        .ctx()
        .memory(|m| m.focused())
        .and_then(|id| ui.ctx().read_response(id))
        .is_some_and(|r| panel.intersects(r.rect));
    typing || ui.rect_contains_pointer(panel)
}

/// Keep the content of a scroll area at least as tall as it was while `held`: at the end of
/// the panel a shorter content (an error shorter than the preview it replaces) would move
/// everything down under the pointer, and the next click land on another field.
fn hold_height(ui: &mut egui::Ui, held: bool) {
    let key = egui::Id::unique("answer_held_height");
    let height = ui.min_rect().height();
    let kept = ui.data(|d| d.get_temp::<f32>(key)).unwrap_or(0.0);
    if held && kept > height {
        ui.add_space(kept - height);
    }
    let now = if held { kept.max(height) } else { height };
    ui.data_mut(|d| d.insert_temp(key, now));
}

/// The built-in emulator's clock speed, when the window talks to it and it runs fast.
pub(super) fn fast_emulator(app: &HookscopeApp) -> Option<f64> {
    (!app.state.settings.api_custom && app.state.settings.emulator_speed > 1.0)
        .then_some(app.state.settings.emulator_speed)
}

/// How long the built-in emulator, its clock at `speed`, waits for an answer, when `answer`
/// comes too late for it though the real service would wait for it: the emulator waits 30 s
/// of its own clock (at least 2 s of real time), so there each attempt fails as a time-out.
pub(super) fn late_for_emulator(
    answer: &crate::responder::Answer,
    speed: Option<f64>,
) -> Option<std::time::Duration> {
    let wait = crate::emulator::answer_wait_at(speed?);
    (!answer.too_late() && answer.delay() >= wait).then_some(wait)
}

/// What [`late_for_emulator`] means for the user, in a sentence: said by the What-if, the
/// custom form's preview and the top bar's hover alike.
pub(super) fn late_for_emulator_note(
    answer: &crate::responder::Answer,
    speed: Option<f64>,
) -> Option<String> {
    let wait = late_for_emulator(answer, speed)?;
    Some(format!(
        "On the built-in emulator this answer comes too late: its clock runs {:.0}x faster and it stops waiting at {}, so there each attempt fails as a time-out and is retried. The real service waits {}.",
        speed.unwrap_or(1.0),
        crate::text::human_duration(wait),
        crate::text::human_duration(crate::contract::ANSWER_TIMEOUT),
    ))
}

/// What the service would do with the current answer, if every attempt got it.
fn what_if_ui(
    ui: &mut egui::Ui,
    answer: &crate::responder::Answer,
    rules: &crate::app::state::RulesEditor,
    emulator_speed: Option<f64>,
) {
    let dark = ui.visuals().dark_mode;
    let outcome = answer.outcome();
    ui.strong("What if every attempt gets this answer");
    // Rules answer first: what follows is only for the calls none of them takes.
    let warn = super::severity_color(crate::contract::Severity::Warning, dark);
    match (&rules.catch_all, rules.in_force) {
        (_, 0) => {}
        (Some(name), _) => {
            // Its projection would describe an answer no call gets: none is drawn.
            ui.label(
                RichText::new(format!(
                    "The rule \"{name}\" answers every call the rules before it do not: this answer is never used while the rules are in force. Each delivery's Timeline shows what the rules did."
                ))
                .color(warn),
            );
            return;
        }
        (None, n) => {
            ui.label(
                RichText::new(if n == 1 {
                    "1 rule in force answers first: this is for the calls it does not match."
                        .to_owned()
                } else {
                    format!(
                        "{n} rules in force answer first: this is for the calls none of them matches."
                    )
                })
                .color(warn),
            );
        }
    }
    if let Some(note) = answer.too_late_note() {
        ui.label(RichText::new(crate::text::glue_units(&note)).color(warn));
    }
    if let Some(note) = late_for_emulator_note(answer, emulator_speed) {
        let note = format!("{note} What follows is what it would do.");
        ui.label(RichText::new(crate::text::glue_units(&note)).color(warn));
    }
    if !outcome.is_retry() {
        ui.label(format!("No retries: {}.", outcome.describe()));
        return;
    }
    let now = chrono::Utc::now();
    let retry_after = answer
        .retry_after
        .as_deref()
        .filter(|_| !answer.retry_after_ignored())
        .and_then(crate::contract::RetryAfter::parse);
    let schedule = crate::contract::Schedule::default();
    // The delays count from the failure: the answer, or the service giving up on it.
    let fails_after = answer.fails_after();
    let failed = now + chrono::TimeDelta::from_std(fails_after).unwrap_or_default();
    // Every attempt answered so fails as late after its call: each delay counts from then.
    let plan = schedule.plan_from_taking(failed, 1, failed, retry_after, fails_after);
    let Some(next) = plan.retries.first() else {
        ui.label("No retry fits in the 2-day window: the message is discarded at once.");
        return;
    };
    // Dated only on another day than today's, as the Timeline's next attempt is; kept on one
    // line (it had broken as "26 / Nov 17:44:15").
    let local = |t: chrono::DateTime<chrono::Utc>| {
        crate::deliveries::local_on(t, now).replace(' ', "\u{a0}")
    };
    // A number kept with its unit too ("2 / min after the failure" at 1024 points).
    let glued = |text: String| crate::text::glue_units(&text);
    ui.label(glued(format!(
        "Next attempt (retry 1) at {}, {} after the failure",
        local(next.at),
        crate::text::human_duration(next.delay)
    )));
    if !fails_after.is_zero() {
        ui.label(glued(format!(
            "(The failure comes {} after the call: {}.)",
            crate::text::human_duration(fails_after),
            if answer.too_late() {
                "when the service stops waiting"
            } else {
                "when the delayed answer is sent"
            }
        )));
    }
    ui.label(format!(
        "{}, {} attempts in all; discarded at {} if the last fails",
        crate::text::count(plan.retries.len() as u64, "retry", "retries"),
        plan.retries.len() + 1,
        local(plan.discard_at)
    ));
    if outcome == crate::contract::Outcome::RetrySlowDown {
        // Every message's calls to the webhook, not only this one's retries (assumed).
        ui.label(format!(
            "{} (Assumed: the contract does not say how.)",
            crate::contract::slowdown::RULE
        ));
    }
    if let Some(speed) = emulator_speed {
        // The times above are the real service's; a demo on the emulator sees them sooner.
        ui.label(
            RichText::new(glued(format!(
                "Those are the real service's times. The built-in emulator's clock runs {speed:.0}x faster: there, retry 1 comes {} after the failure, and the 2 days last {}.",
                crate::text::human_duration_at(next.delay, speed),
                crate::text::human_duration_at(schedule.window, speed),
            )))
            .weak(),
        );
    }
    let mut marks = vec![super::timeline::Mark {
        at: now,
        filled: true,
        color: super::outcome_color(outcome, dark),
        label: if fails_after.is_zero() {
            format!("attempt 1 fails now with {}", answer.status)
        } else {
            format!("attempt 1 now, failing at {}", local(failed))
        },
    }];
    marks.extend(plan.retries.iter().map(|r| super::timeline::Mark {
        at: r.at,
        filled: false,
        color: super::outcome_color(outcome, dark),
        label: format!("attempt {} at {}", r.number, local(r.at)),
    }));
    super::timeline::timeline_ui(
        ui,
        now,
        plan.window_end,
        super::timeline::Scale::Speed(1.0),
        &marks,
        None,
        true,
    );
    ui.label(RichText::new(crate::contract::SCHEDULE_RULE).small().weak());
}

fn custom_ui(ui: &mut egui::Ui, app: &mut HookscopeApp, held: bool) {
    let current = &app.state.settings.answer;
    let custom_in_force = !crate::app::state::Preset::gives(current);
    let matches = app.state.form.answer().is_ok_and(|a| a == *current);
    // Like a preset's card: whether this is the answer in force.
    const NOT_IN_FORCE: &str = "not in force: Apply to use it";
    let note = match (matches, custom_in_force) {
        (true, true) if app.state.rules.catch_all.is_some() && app.state.rules.in_force > 0 => {
            Some(RichText::new("chosen, unused").weak())
        }
        (true, true) => Some(RichText::new("chosen")),
        (false, _) => Some(RichText::new(NOT_IN_FORCE).weak()),
        // A preset's answer: its card says it is chosen.
        (true, false) => None,
    };
    // Beside the heading when the longest note fits there; otherwise on a line of its own
    // under it, kept (empty) while there is no note, so the form below does not move down
    // under the pointer as typing brings the note (on one line it widened the panel past
    // the window's edge).
    let heading = RichText::new("Custom answer").strong();
    let beside = super::widest_text(ui, egui::TextStyle::Body, ["Custom answer"])
        + ui.spacing().item_spacing.x
        + super::widest_text(ui, egui::TextStyle::Body, [NOT_IN_FORCE, "chosen, unused"])
        <= ui.available_width();
    if beside {
        ui.horizontal(|ui| {
            ui.label(heading);
            if let Some(note) = note {
                ui.label(note);
            }
        });
    } else {
        ui.label(heading);
        ui.add(egui::Label::new(note.unwrap_or_else(|| RichText::new(" "))).wrap());
    }
    let form = &mut app.state.form;
    let mut edited = false;
    // Enter in a one-line field applies the answer, as in a form, and the field keeps the
    // keyboard: egui lets go of it on Enter, so what was typed next (after a refused code,
    // say) went nowhere, and a second Enter reached the list, which opened the selected call
    // afresh and left the tab being read.
    let mut entered = false;
    let mut entered_in = |r: &egui::Response| {
        if r.lost_focus() && r.ctx.input(|i| i.key_pressed(egui::Key::Enter)) {
            entered = true;
            r.request_focus();
        }
    };
    egui::Grid::new("custom_answer")
        .num_columns(2)
        .spacing([8.0, 6.0])
        .show(ui, |ui| {
            let l = ui.label("Status code");
            let r = ui
                .add(egui::TextEdit::singleline(&mut form.code).desired_width(70.0))
                .labelled_by(l.id);
            edited |= r.changed();
            entered_in(&r);
            ui.end_row();
            let l = ui.label("Retry-After");
            // As wide as the fields below it (an HTTP date scrolls in it), within the panel.
            let r = ui
                .add(
                    egui::TextEdit::singleline(&mut form.retry_after)
                        .hint_text("seconds or a date")
                        .desired_width(150.0),
                )
                .labelled_by(l.id);
            edited |= r.changed();
            entered_in(&r);
            ui.end_row();
            let l = ui.label("Delay (ms)");
            // Text, not a drag value: one quietly clamps or drops what it cannot read, and
            // what cannot be a delay is said in red, as for the other fields.
            let r = ui
                .add(
                    egui::TextEdit::singleline(&mut form.delay)
                        .hint_text("0, or 1.5s")
                        .desired_width(70.0),
                )
                .labelled_by(l.id)
                .on_hover_text(
                    "Milliseconds, or a duration with its unit (1.5s, 2m). Past 30 000 ms the service counts a timeout, a temporary failure",
                );
            edited |= r.changed();
            entered_in(&r);
            ui.end_row();
            let l = ui.label("Content type");
            let r = ui
                .add(
                    egui::TextEdit::singleline(&mut form.content_type)
                        .hint_text("text/plain")
                        .desired_width(150.0),
                )
                .labelled_by(l.id);
            edited |= r.changed();
            entered_in(&r);
            ui.end_row();
            let l = ui.label("Body");
            // A long body scrolls inside its field: grown to its whole text, a pasted page of
            // JSON pushed Apply out of the panel.
            edited |= egui::ScrollArea::vertical()
                .id_salt("custom_body")
                .max_height(BODY_FIELD_HEIGHT)
                .show(ui, |ui| {
                    ui.add(
                        egui::TextEdit::multiline(&mut form.body)
                            .desired_rows(2)
                            .desired_width(150.0),
                    )
                    .labelled_by(l.id)
                    .changed()
                })
                .inner;
            ui.end_row();
        });
    let preview = form.answer();
    // The button before what the answer would do: that text takes one line or three as the
    // fields change, and the button must not move under the pointer.
    let button = ui
        .add_enabled(preview.is_ok(), egui::Button::new("Apply custom answer"))
        .on_hover_text("Or press Enter in one of the fields above");
    // The What-if above changes with the answer applied (a line, or a whole timeline): the
    // form stays under the pointer and the caret.
    let key = egui::Id::unique("apply_custom_answer");
    keep_in_place(ui, &mut app.state.answer_place, key, &button);
    let apply = button.clicked() || entered;
    // As tall while the user works in the panel: a refusal shorter than the preview it
    // replaces (204 typed over a 503's two lines) moved the rules below up under the pointer.
    let emulator = fast_emulator(app);
    super::keep_height(ui, "custom_preview_height", held, |ui| match &preview {
        Ok(a) => {
            // With its delay, and the wait its Retry-After asks for: "200: treated as a
            // temporary problem" read as if the code were the problem, and a 429's preview
            // did not mention its Retry-After.
            let lead = match a.delay_text() {
                Some(delay) => format!("{} after {delay}", a.status),
                None => a.status.to_string(),
            };
            // Too late for the emulator, what the code says is the real service's alone:
            // named so, as the What-if does, under the note on what the emulator does.
            let emulator_note = a
                .too_late_note()
                .is_none()
                .then(|| late_for_emulator_note(a, emulator))
                .flatten();
            let whose = if emulator_note.is_some() {
                " (the real service)"
            } else {
                ""
            };
            ui.label(RichText::new(format!("{lead}{whose}: {}", a.describe())).small());
            let late = a.too_late_note().or(emulator_note);
            if let Some(note) = late {
                ui.label(
                    RichText::new(crate::text::glue_units(&note))
                        .small()
                        .color(ui.visuals().warn_fg_color),
                );
            }
            if let Some(note) = a.retry_after_note() {
                ui.label(RichText::new(note).small());
            }
        }
        Err(e) => {
            let color = super::outcome_color(
                crate::contract::Outcome::WebhookCancelled,
                ui.visuals().dark_mode,
            );
            // It quotes what was typed, which may be Arabic or Hebrew.
            ui.label(super::bidi_safe(ui, RichText::new(e).color(color)));
        }
    });
    let _ = edited;
    if apply && preview.is_ok() {
        hold_in_place(&mut app.state.answer_place, key, &button);
    }
    if apply && let Ok(a) = preview {
        if a.status == 410 {
            // Confirmed as it was written: body, content type and delay included.
            app.state.confirm = Some(a);
        } else {
            app.apply_answer(a);
            app.state.form.applied = app.state.form.error.is_none();
        }
    }
}

/// 410 cancels the webhook for good against the real service: ask first.
pub fn confirm_modal(ctx: &egui::Context, app: &mut HookscopeApp) {
    let Some(answer) = app.state.confirm.clone() else {
        return;
    };
    let modal = egui::Modal::new(egui::Id::unique("confirm_410")).show(ctx, |ui| {
        ui.set_max_width(380.0);
        ui.heading(format!("Answer {}?", answer.summary()));
        ui.label(answer.outcome().sentence());
        ui.label(
            "Against the real service this is permanent: the webhook stops receiving calls until it is set up again.",
        );
        ui.add_space(8.0);
        ui.horizontal(|ui| {
            if ui.button(format!("Yes, answer {}", answer.status)).clicked() {
                app.apply_answer(answer);
                app.state.confirm = None;
            }
            if ui.button("Cancel").clicked() {
                app.state.confirm = None;
            }
        });
    });
    if modal.should_close() {
        app.state.confirm = None;
    }
}
