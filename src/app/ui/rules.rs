//! Answer rules in the window: the rules in force with their use counts, the shipped recipes,
//! and an editor (JSON or TOML) that loads and saves rule files.

use crate::app::HookscopeApp;
use crate::app::state::Replacing;
use crate::rules::RECIPES;
use egui::RichText;

/// The rules' note once every rule has retired.
pub(super) const ALL_RETIRED: &str = "Every rule has retired (each answered as many times as it was given): the fixed choice answers every call again.";

fn recipe_title(file: &str) -> &'static str {
    match file {
        "fail-twice-then-succeed.json" => "Fail the first 2 attempts, then succeed",
        "every-third-503-retry-after.json" => "503 with Retry-After to every\u{a0}third\u{a0}call",
        "time-out-once.json" => "Time out once (answer after 35 s)",
        _ => "Recipe",
    }
}

/// Where a recipe's rules come from, as the note under them says: the recipe's title, not its
/// file's name (no file was loaded, and the editor's File field is empty).
fn recipe_source(file: &str) -> String {
    format!("the recipe \"{}\"", recipe_title(file))
}

/// How the editor's note on the example it opens with begins: a note of the editor's alone,
/// not shown under the rules in force (it had stayed there once the editor was closed).
const EXAMPLE_NOTE: &str = "An example to start from";

pub fn rules_section_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    ui.strong("Rules (first match wins, before the answer above)");
    // The recipes and the editor's buttons first: applying one adds the rules below them,
    // and a button does not move under the pointer (the recipes were pushed down by the
    // rules they made, and the next click landed on another recipe).
    ui.label("Recipes:");
    for (i, (file, text)) in RECIPES.iter().enumerate() {
        let button = ui
            .button(recipe_title(file))
            .on_hover_text(format!("assets/rules/{file}"));
        // Named by its file, not by the button's id: that one counts the widgets above, which
        // the rules a recipe makes change (the What-if), and then named the recipe before it.
        let key = egui::Id::unique(("recipe", *file));
        super::answer::keep_in_place(ui, &mut app.state.answer_place, key, &button);
        if button.clicked() {
            if unapplied_edits(app) {
                app.state.rules.confirm_recipe = Some(Replacing::Recipe(i));
                // Kept in place once the confirmation applies it.
                super::answer::hold_in_place(&mut app.state.answer_place, key, &button);
                app.state.answer_place.pending = app.state.answer_place.anchor.take();
            } else {
                app.apply_rules(text, &recipe_source(file));
                super::answer::hold_in_place(&mut app.state.answer_place, key, &button);
            }
        }
    }
    confirm_recipe_modal(ui.ctx(), app);
    // Wrapped where the panel is narrow (a large zoom), not run past its edge.
    ui.horizontal_wrapped(|ui| {
        if ui.button("Edit rules…").clicked() {
            app.state.rules.open = true;
            if app.state.rules.text.trim().is_empty() {
                // An example to start from, said to be one: it read as the rules just cleared.
                app.state.rules.text = RECIPES[0].1.to_owned();
                app.state.rules.note = Some(format!(
                    "{EXAMPLE_NOTE} (the recipe \"{}\"): it answers nothing until Apply.",
                    recipe_title(RECIPES[0].0)
                ));
            }
        }
        if ui.button("Load rules…").clicked() {
            app.load_rules_file(true);
        }
        // Here, above the rules it clears, and kept (disabled) while there are none: below
        // them, it went with them, and the registration check's box slid up under the
        // pointer.
        let any = !app.engine().responder.rules().rules.is_empty();
        if ui
            .add_enabled(any, egui::Button::new("Clear rules"))
            .on_disabled_hover_text("No rules to clear")
            .clicked()
        {
            if unapplied_edits(app) {
                app.state.rules.confirm_recipe = Some(Replacing::Clear);
            } else {
                app.apply_rules("", "the window");
            }
        }
    });
    ui.add_space(4.0);
    let active = app.engine().responder.rules();
    let emulator = super::answer::fast_emulator(app);
    if active.rules.is_empty() {
        ui.weak("No rules: every call gets the answer chosen above.");
    } else {
        for (i, r) in active.rules.iter().enumerate() {
            let retired = active.retired(i);
            let ignored = if r.answer.too_late() {
                ", never read"
            } else if r.answer.retry_after_ignored() {
                ", ignored with this code"
            } else {
                ""
            };
            // A delay is part of the answer: past the service's wait it is a timeout, whatever
            // the code.
            // One the built-in emulator stops waiting for is a time-out there, retried: its
            // Retry-After is never read (the line had said "no retry, discarded" for one past
            // the window, while the emulator retried).
            let late_here = super::answer::late_for_emulator(&r.answer, emulator).is_some();
            let delay = match r.answer.delay_text() {
                Some(d) if r.answer.too_late() => {
                    format!(" after {d} (past the service's wait: a temporary failure)")
                }
                Some(d) if late_here => {
                    format!(" after {d} (too late for the emulator: a time-out there, retried)")
                }
                Some(d) => format!(" after {d}"),
                None => String::new(),
            };
            let line = |used: u64, retired: bool| {
                let used = match r.times {
                    Some(times) => format!(
                        "{used} of {}",
                        crate::text::count(u64::from(times), "time", "times")
                    ),
                    None => crate::text::count(used, "time", "times"),
                };
                let mut text = format!(
                    "{}. {}: answers {}{}{}, used {}{}",
                    i + 1,
                    crate::text::single_line(&r.name),
                    r.answer.status,
                    delay,
                    r.answer
                        .retry_after_words()
                        .map_or(String::new(), |ra| format!(" (Retry-After {ra}{ignored})")),
                    used,
                    if retired { ", retired" } else { "" }
                );
                // What the service makes of it when it is more than the wait.
                if let Some(brief) = r.answer.retry_after_brief().filter(|_| !late_here) {
                    text += &format!("; {brief}");
                }
                text
            };
            let shown = if retired {
                ui.weak(line(active.used(i), true))
            } else {
                ui.label(line(active.used(i), false))
            };
            // A rule that will retire has the room of its last words from the start: grown
            // by a line as it retired, it moved what is below under the pointer.
            if let Some(times) = r.times.filter(|_| !retired) {
                let last = line(u64::from(times), true);
                let height = text_height(ui, &last, egui::TextStyle::Body);
                if height > shown.rect.height() + 0.5 {
                    ui.add_space(height - shown.rect.height());
                }
            }
        }
    }
    if let Some(note) = app
        .state
        .rules
        .note
        .as_ref()
        .filter(|n| !n.starts_with(EXAMPLE_NOTE))
    {
        let shown = ui.label(RichText::new(note).small());
        // Rules that will all retire have the room of the note that says so from the start:
        // grown by a line as the last retired, it moved the registration check's box under
        // the pointer.
        let all_retire = !active.rules.is_empty()
            && active.rules.iter().all(|r| r.times.is_some())
            && active.in_force() > 0;
        if all_retire {
            let height = text_height(ui, ALL_RETIRED, egui::TextStyle::Small);
            if height > shown.rect.height() + 0.5 {
                ui.add_space(height - shown.rect.height());
            }
        }
    }
    if let Some(e) = &app.state.rules.error {
        ui.colored_label(
            super::outcome_color(
                crate::contract::Outcome::WebhookCancelled,
                ui.visuals().dark_mode,
            ),
            crate::text::first_upper(e),
        );
        // Read once the editor is closed, it is old news: the rules listed above answer.
        if ui
            .small_button("Dismiss")
            .on_hover_text("The rules listed above are the ones in force")
            .clicked()
        {
            app.state.rules.error = None;
        }
    }
}

/// How tall `text` is as a label of `ui` in `style`, wrapped to its width.
fn text_height(ui: &egui::Ui, text: &str, style: egui::TextStyle) -> f32 {
    egui::WidgetText::from(text)
        .into_galley(
            ui,
            Some(egui::TextWrapMode::Wrap),
            ui.available_width(),
            style,
        )
        .size()
        .y
}

/// The editor holds text that is not the rules in force: a recipe would replace it.
fn unapplied_edits(app: &HookscopeApp) -> bool {
    let text = app.state.rules.text.trim();
    // A recipe the editor was opened with is nobody's work.
    !text.is_empty()
        && text != app.state.settings.rules_json.trim()
        && !RECIPES.iter().any(|(_, recipe)| recipe.trim() == text)
}

/// A recipe or *Clear rules* chosen over changes not applied: ask before they are replaced.
fn confirm_recipe_modal(ctx: &egui::Context, app: &mut HookscopeApp) {
    // The rules in force are named only where there are some.
    let in_force = app.state.rules.in_force > 0;
    let (heading, what, yes, text, source) = match app.state.rules.confirm_recipe {
        Some(Replacing::Recipe(i)) => match RECIPES.get(i) {
            Some((file, text)) => (
                format!("Use \"{}\"?", recipe_title(file)),
                if in_force {
                    "The recipe replaces the rules in force and the editor's text"
                } else {
                    "The recipe replaces the editor's text"
                },
                "Use the recipe",
                *text,
                recipe_source(file),
            ),
            None => return,
        },
        Some(Replacing::Clear) => (
            "Clear the rules?".to_owned(),
            "Clearing the rules empties the editor too",
            "Clear the rules",
            "",
            "the window".to_owned(),
        ),
        None => return,
    };
    let modal = egui::Modal::new(egui::Id::unique("confirm_recipe")).show(ctx, |ui| {
        ui.set_max_width(380.0);
        ui.heading(heading);
        ui.label(format!(
            "The rules editor holds changes that were never applied. {what}, and the changes are lost."
        ));
        ui.add_space(8.0);
        ui.horizontal(|ui| {
            if ui.button(yes).clicked() {
                app.state.rules.confirm_recipe = None;
                app.apply_rules(text, &source);
                // The recipe clicked stays where it was as its rules come in.
                app.state.answer_place.anchor = app.state.answer_place.pending.take();
            }
            if ui.button("Keep my changes").clicked() {
                app.state.rules.confirm_recipe = None;
                app.state.rules.open = true;
            }
        });
    });
    if modal.should_close() {
        app.state.rules.confirm_recipe = None;
    }
    if app.state.rules.confirm_recipe.is_none() {
        app.state.answer_place.pending = None;
    }
}

/// The rules editor's window: its own id, not its title's (see where it is shown).
pub fn window_id() -> egui::Id {
    egui::Id::unique("rules_editor_window")
}

pub fn rules_editor_window(ctx: &egui::Context, app: &mut HookscopeApp) {
    let mut open = app.state.rules.open;
    let mut apply = false;
    let (mut load, mut save, mut browse_load, mut browse_save) = (false, false, false, false);
    // In the middle of the window, over the list, kept under the top bar and inside the
    // window however small it is or large the zoom (at 760 points and zoom 1.4 it ran past
    // both edges, its Save as… out of reach).
    let room = super::room_under_bar(ctx, app);
    super::keep_window_in_place(ctx, window_id(), room.center());
    let shown = egui::Window::new("Answer rules")
        // Its own id, not its title's: egui keeps a window's size across restarts, and the
        // 460 points an earlier version opened it at would have stayed.
        .id(window_id())
        .pivot(egui::Align2::CENTER_CENTER)
        .default_pos(room.center())
        .constrain_to(super::room_for_window(ctx, app))
        .open(&mut open)
        // As tall as the room allows, up to 720 points: at 460, with *Fields* open and an
        // error above it, the rules' text had two lines in sight at the default size.
        .default_size([
            560.0_f32.min(room.width() - 24.0),
            720.0_f32.min(room.height() - 60.0),
        ])
        .max_width(room.width() - 16.0)
        .max_height((room.height() - 50.0).max(120.0))
        // The whole of it scrolls where the room is short (zoom 2 on a laptop, the field
        // reference open), so nothing is pushed past the window's edge.
        .vscroll(true)
        .show(ctx, |ui| {
            // The actions first, in sight however short the room. Wrapped onto a second row
            // where the window is narrow, not run past its edge.
            ui.horizontal_wrapped(|ui| {
                apply = ui.button("Apply").clicked();
                ui.separator();
                let l = ui.label("File");
                // The field gives up what the four buttons after it need, down to 80 points:
                // "Save as…" had wrapped alone onto a second row at 1280 × 800.
                let buttons: f32 = ["Load", "Save", "Open…", "Save as…"]
                    .iter()
                    .map(|b| {
                        super::widest_text(ui, egui::TextStyle::Button, [*b])
                            + 2.0 * ui.spacing().button_padding.x
                            + ui.spacing().item_spacing.x
                    })
                    .sum();
                let field = (ui.available_size_before_wrap().x
                    - ui.spacing().item_spacing.x
                    - buttons
                    - 8.0)
                    .clamp(80.0, 220.0);
                ui.add(
                    egui::TextEdit::singleline(&mut app.state.rules.path_text)
                        .hint_text("/path/to/rules.json or .toml")
                        .desired_width(field),
                )
                .labelled_by(l.id);
                let typed = !app.state.rules.path_text.trim().is_empty();
                load = ui
                    .add_enabled(typed, egui::Button::new("Load"))
                    .on_disabled_hover_text("Type a path, or choose a file with Open…")
                    .clicked();
                save = ui
                    .add_enabled(typed, egui::Button::new("Save"))
                    .on_disabled_hover_text("Type a path, or choose one with Save as…")
                    .clicked();
                browse_load = ui.button("Open…").on_hover_text("Choose a file to load").clicked();
                browse_save = ui.button("Save as…").on_hover_text("Choose where to save").clicked();
            });
            if let Some(note) = &app.state.rules.note {
                ui.label(RichText::new(note).small());
            }
            if let Some(e) = &app.state.rules.error {
                ui.colored_label(
                    super::outcome_color(crate::contract::Outcome::WebhookCancelled, ui.visuals().dark_mode),
                    crate::text::first_upper(e),
                );
            }
            ui.separator();
            ui.label(
                "Each rule has a name, the calls it takes (when: every condition given must hold; none takes every call), the answer it gives, and how many times it answers before it retires (times, optional). The first rule that matches answers. JSON or TOML ([[rules]] tables); a file is saved in the format its name ends with (.json or .toml).",
            );
            fields_reference_ui(ui, room.height() * 0.3);
            let label = ui.label("Rules (JSON or TOML)");
            egui::ScrollArea::vertical()
                .id_salt("rules_text_scroll")
                .max_height((room.height() * 0.6).max(120.0))
                .show(ui, |ui| {
                    ui.add(
                        egui::TextEdit::multiline(&mut app.state.rules.text)
                            .code_editor()
                            .desired_rows(18)
                            .desired_width(super::fill_width(ui)),
                    )
                    .labelled_by(label.id);
                });
        });
    // Escape closes it, as Close does (its text stays for the next time it opens).
    if let Some(shown) = &shown
        && super::escape_closes(ctx, app, shown.response.layer_id)
    {
        open = false;
    }
    app.state.rules.open = open;
    if apply {
        let text = app.state.rules.text.clone();
        app.apply_rules(&text, "the editor");
    }
    if load || browse_load {
        app.load_rules_file(browse_load);
    }
    if save || browse_save {
        app.save_rules_file(browse_save);
    }
}

/// The fields a rule can have, one per row, with what each means: the editor's reference.
const RULE_FIELDS: [(&str, &str); 12] = [
    (
        "name",
        "required: the rule's name, given for each call it answers (listen's banner, show, the window)",
    ),
    (
        "when.event",
        "\"status-report\" or \"incoming-message\": the event header",
    ),
    ("when.webhook_id", "the webhook id header"),
    (
        "when.path",
        "the path alone, with its leading / (\"/hook\")",
    ),
    (
        "when.attempt",
        "{\"equals\" | \"at_most\" | \"at_least\": N}: the attempt header",
    ),
    (
        "when.message",
        "{\"field\": \"status.type\", \"equals\": v | \"contains\": text}: any message in the body",
    ),
    (
        "when.every_nth",
        "N: every Nth call that meets the rest and reaches this rule",
    ),
    (
        "answer.status",
        "required: 200-599 (a 1xx is not an answer)",
    ),
    (
        "answer.retry_after",
        "seconds (a number or a string) or an HTTP date",
    ),
    ("answer.body", "the body, with answer.content_type"),
    (
        "answer.delay_ms",
        "wait this long before answering (30 000 or more: the service stops waiting, a temporary failure)",
    ),
    (
        "times",
        "1 or more: the rule retires after that many answers",
    ),
];

/// The reference of the fields, folded: at most `most` points tall, each meaning wrapped to
/// the window's width (a table of them had widened the window past the screen's edges).
fn fields_reference_ui(ui: &mut egui::Ui, most: f32) {
    egui::CollapsingHeader::new("Fields")
        .id_salt("rule_fields")
        .show(ui, |ui| {
            // The rules' text below keeps most of the window.
            egui::ScrollArea::vertical()
                .id_salt("rule_fields_scroll")
                .max_height(most.clamp(80.0, 160.0))
                .show(ui, |ui| {
                    for (field, meaning) in RULE_FIELDS {
                        ui.horizontal_wrapped(|ui| {
                            ui.label(RichText::new(field).monospace());
                            ui.label(RichText::new(meaning).small());
                        });
                    }
                });
        });
}
