//! The invocation list: newest first, live, virtualised over store pages, with filters and
//! keyboard navigation (up/down, j/k, Home/End, Enter).

use crate::app::HookscopeApp;
use crate::app::state::PAGE;
use crate::contract::{EventKind, Outcome};
use crate::store::EventFilter;
use egui::{Key, RichText};
use egui_extras::{Column, TableBuilder};

const ROW_HEIGHT: f32 = 20.0;
const HEADER_HEIGHT: f32 = 22.0;
/// The room between two of the list's columns.
const COLUMN_GAP: f32 = 6.0;

fn filter_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    let mut changed = false;
    let events: Vec<EventFilter> = EventKind::ALL
        .iter()
        .map(|e| EventFilter::Event(e.header_value().to_owned()))
        .chain([EventFilter::RegistrationCheck, EventFilter::Other])
        .collect();
    // Each combo as wide as its widest choice, so choosing never moves what follows it.
    let event_width = combo_width(ui, events.iter().map(EventFilter::label));
    let outcome_width = combo_width(ui, Outcome::ALL.into_iter().map(filter_label));
    let [search, event, outcome] = ["Search:", "Event:", "Outcome:"]
        .map(|l| super::widest_text(ui, egui::TextStyle::Body, [l]));
    let spacing = ui.spacing().item_spacing.x;
    // The two filters with their labels, on a line of their own.
    let both = event + outcome + event_width + outcome_width + 3.0 * spacing;
    let filters = search + both + 2.0 * spacing;
    // The search field and both filters on one line where they fit with a field of 120 points;
    // in a narrower list the field has a line of its own and the filters share the next; in a
    // list too narrow for even that (a large zoom, a small window) the filters are behind a
    // Filters button beside the field, so the list keeps two more rows (with a line each they
    // took four rows of a projector's 360 points). Which, depends on the width alone.
    let row = ui.available_width();
    let field = row - filters - 12.0;
    let one_line = field >= 120.0;
    let filters_line = both + 4.0 <= row;
    ui.horizontal_wrapped(|ui| {
        let label = ui.label("Search:");
        let width = if one_line {
            field.min(180.0)
        } else if filters_line {
            // Beside its label (a wrapping row's available width is the whole row's).
            (row - search - spacing - 12.0).clamp(80.0, 240.0)
        } else {
            (row - search - filters_button_width(ui) - 2.0 * spacing - 12.0).clamp(80.0, 240.0)
        };
        let r = ui
            .add(
                egui::TextEdit::singleline(&mut app.state.list.search_text)
                    .hint_text("delivery, path, body text…")
                    .desired_width(width),
            )
            .labelled_by(label.id)
            .on_hover_text("Ctrl+F comes here from anywhere in the window");
        // Ctrl+F (⌘F on a Mac): Tab reaches the field only after both side panels' controls.
        let find = egui::KeyboardShortcut::new(egui::Modifiers::COMMAND, egui::Key::F);
        if ui.input_mut(|i| i.consume_shortcut(&find)) {
            r.request_focus();
        }
        let now = ui.input(|i| i.time);
        if r.changed() {
            app.state.list.search_typed_at = Some(now);
        }
        let entered = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if let Some(at) = app.state.list.search_typed_at {
            let left = SEARCH_PAUSE - (now - at);
            if entered || left <= 0.0 {
                changed = true;
            } else {
                ui.ctx()
                    .request_repaint_after(std::time::Duration::from_secs_f64(left));
            }
        }
        if one_line || filters_line {
            if !one_line {
                ui.end_row();
            }
            let ev = app.state.list.filter.event.clone();
            keep_together(ui, "Event:", event_width);
            let event_label = ui.label("Event:");
            egui::ComboBox::from_id_salt("event_filter")
                .width(event_width)
                .selected_text(ev.as_ref().map_or("all", EventFilter::label))
                .show_ui(ui, |ui| {
                    changed |= event_choices(ui, &mut app.state.list.filter.event, &events);
                })
                .response
                .labelled_by(event_label.id);
            let oc = chosen_outcome(&app.state.list.filter);
            keep_together(ui, "Outcome:", outcome_width);
            let outcome_label = ui.label("Outcome:");
            egui::ComboBox::from_id_salt("outcome_filter")
                .width(outcome_width)
                .selected_text(oc)
                .show_ui(ui, |ui| {
                    changed |= outcome_choices(ui, &mut app.state.list.filter);
                })
                .response
                .labelled_by(outcome_label.id);
            // Two rows whatever is chosen, so nothing jumps under the pointer: what to find,
            // then how to show it.
            ui.end_row();
            changed |= ui
                .checkbox(&mut app.state.list.filter.with_findings, "With findings")
                .on_hover_text(FINDINGS_HOVER)
                .changed();
            ui.separator();
        } else {
            changed |= filters_menu(ui, &mut app.state.list.filter, &events);
            ui.end_row();
        }
        if ui
            .checkbox(&mut app.state.settings.follow, "Follow newest")
            .on_hover_text("Keep the newest calls in sight at the top of the list as they arrive (the call open below stays open). Scrolling the list down, or moving the selection down it, turns this off.")
            .changed()
            && app.state.settings.follow
        {
            changed = true;
        }
        let l = &app.state.list;
        if l.counted {
            ui.label(crate::text::count(l.count, "call", "calls"));
        } else {
            ui.spinner();
            if !l.filter.text.trim().is_empty() {
                ui.weak("Searching…");
            }
        }
        if !app.state.settings.follow && l.newer > 0 {
            let n = l.newer;
            let label = format!("Show {}", crate::text::count(n, "new call", "new calls"));
            // On the row's end, never wrapped to a row of its own: that moved every row of
            // the list down under the pointer as the count reached two digits. Where the
            // words may not fit (up to 999 calls), the count alone.
            let widest = super::widest_text(ui, egui::TextStyle::Button, ["Show 999 new calls"])
                + 2.0 * ui.spacing().button_padding.x
                + ui.spacing().item_spacing.x;
            let button = if widest <= ui.available_size_before_wrap().x {
                ui.button(label)
            } else {
                ui.button(format!("{n} new")).on_hover_text(label)
            };
            if button.clicked() {
                changed = true;
            }
        }
    });
    if changed {
        // Whatever else changed, the text typed so far is searched for now.
        app.state.list.search_typed_at = None;
        app.state.list.filter.text = app.state.list.search_text.clone();
        app.refresh_list();
        // Another list: it starts at its newest call (it had kept the old one's scroll, so
        // its newest matches opened out of sight above).
        app.state.list.scroll_to_top = true;
    }
}

/// The event filter's choices (in its combo, or the narrow list's Filters menu): whether one
/// was chosen.
fn event_choices(
    ui: &mut egui::Ui,
    chosen: &mut Option<EventFilter>,
    events: &[EventFilter],
) -> bool {
    let mut changed = ui.selectable_value(chosen, None, "all").changed();
    for kind in events {
        let hover = match kind {
            EventFilter::Event(_) => "Calls that announce this event",
            EventFilter::RegistrationCheck => {
                "The service's check of a URL before it accepts a webhook: a POST of [] with its User-Agent"
            }
            EventFilter::Other => {
                "Calls with no event header that are not registration checks (a browser, a stray curl)"
            }
        };
        changed |= ui
            .selectable_value(chosen, Some(kind.clone()), kind.label())
            .on_hover_text(hover)
            .changed();
    }
    changed
}

/// The outcome filter's choices: whether one was chosen.
/// The outcome filter's choice in words: "all", an outcome's, or "retry (late)".
fn chosen_outcome(filter: &crate::store::Filter) -> &'static str {
    match filter.outcome {
        None => "all",
        Some(Outcome::RetryTemporary) if filter.late => LATE,
        Some(o) => filter_label(o),
    }
}

/// The word of a call no answer reached in time, in the list and its filter.
const LATE: &str = "retry (late)";

fn outcome_choices(ui: &mut egui::Ui, filter: &mut crate::store::Filter) -> bool {
    // The outcome, and whether of its calls those no answer reached in time.
    let mut choice = (
        filter.outcome,
        filter.late && filter.outcome == Some(Outcome::RetryTemporary),
    );
    let chosen = &mut choice;
    let mut changed = ui.selectable_value(chosen, (None, false), "all").changed();
    for o in Outcome::ALL {
        // The filter reads what the rows read: a 503 or 429 whose Retry-After leaves no retry
        // says "discarded", and is listed there, not under its code.
        let hover = if o.honours_retry_after() {
            format!(
                "{}. A call of this code whose Retry-After reaches past the 2-day window is not here: no retry comes, so its row reads discarded, and it is listed under discarded.",
                crate::text::first_upper(o.describe())
            )
        } else if o == Outcome::FailedPermanently {
            format!(
                "{}. Also the 503s and 429s whose Retry-After reaches past the 2-day window: no retry comes for them either (`log` gives them their code's outcome). Not the requests the HTTP layer refused, whose rows read not HTTP: the Event filter's other calls lists them.",
                crate::text::first_upper(o.describe())
            )
        } else if o == Outcome::RetryTemporary {
            format!(
                "{}. Not the calls no answer reached in time: their rows read {LATE}, and {LATE} lists them.",
                crate::text::first_upper(o.describe())
            )
        } else {
            o.describe().to_owned()
        };
        changed |= ui
            .selectable_value(chosen, (Some(o), false), filter_label(o))
            .on_hover_text(hover)
            .changed();
        // The rows that read "retry (late)" have a choice of their own, under that word.
        if o == Outcome::RetryTemporary {
            changed |= ui
                .selectable_value(chosen, (Some(o), true), LATE)
                .on_hover_text(LATE_HOVER)
                .changed();
        }
    }
    (filter.outcome, filter.late) = choice;
    changed
}

/// The title of the narrow list's Filters button with `n` filters in force.
fn filters_title(n: usize) -> String {
    if n == 0 {
        "Filters".to_owned()
    } else {
        format!("Filters ({n})")
    }
}

/// The Filters button's width at its widest title, so that choosing a filter never moves the
/// field beside it.
fn filters_button_width(ui: &egui::Ui) -> f32 {
    super::widest_text(ui, egui::TextStyle::Button, [filters_title(3).as_str()])
        + 2.0 * ui.spacing().button_padding.x
        + ui.spacing().icon_width
        + ui.spacing().icon_spacing
}

/// The narrow list's Filters button: the event and outcome filters side by side and *With
/// findings* under them, in a menu that stays open while they are chosen (a click outside or
/// Escape closes it). Its title counts the filters in force, and it is highlighted while any
/// is. Whether a filter changed.
fn filters_menu(
    ui: &mut egui::Ui,
    filter: &mut crate::store::Filter,
    events: &[EventFilter],
) -> bool {
    let in_force = [
        filter.event.is_some(),
        filter.outcome.is_some(),
        filter.with_findings,
    ];
    let n = in_force.iter().filter(|on| **on).count();
    let mut said: Vec<String> = Vec::new();
    if let Some(e) = &filter.event {
        said.push(format!("Event: {}", e.label()));
    }
    if filter.outcome.is_some() {
        said.push(format!("Outcome: {}", chosen_outcome(filter)));
    }
    if filter.with_findings {
        said.push("With findings".to_owned());
    }
    let hover = if said.is_empty() {
        "Show only the calls of one event, one outcome, or with findings".to_owned()
    } else {
        format!("In force: {}", said.join(", "))
    };
    let button = egui::Button::new(filters_title(n))
        .selected(n > 0)
        .min_size(egui::vec2(filters_button_width(ui), 0.0));
    let mut changed = false;
    let menu = egui::containers::menu::MenuButton::from_button(button)
        .config(
            egui::containers::menu::MenuConfig::new()
                .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside),
        )
        .ui(ui, |ui| {
            ui.horizontal(|ui| {
                ui.vertical(|ui| {
                    ui.strong("Event");
                    changed |= event_choices(ui, &mut filter.event, events);
                });
                ui.separator();
                ui.vertical(|ui| {
                    ui.strong("Outcome");
                    changed |= outcome_choices(ui, filter);
                });
            });
            ui.separator();
            changed |= ui
                .checkbox(&mut filter.with_findings, "With findings")
                .on_hover_text(FINDINGS_HOVER)
                .changed();
        });
    menu.0.on_hover_text(hover);
    changed
}

/// How long typing in the search field pauses before the search starts (seconds).
const SEARCH_PAUSE: f64 = 0.35;

/// Arrow keys, j/k, Home/End and Enter, unless a text field has the keyboard.
fn keyboard(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    // A dialog open over the window (Answer 410?, Delete webhook?) has the keys: Enter there
    // must not open a call behind it.
    let dialog = ui.ctx().memory(|m| m.top_modal_layer().is_some());
    // Nor does the list behind the Service drawer: its selection moved unseen, and the
    // detail below changed under the user reading the drawer.
    if dialog
        || app.state.service_drawer
        || app.state.typing
        || ui.ctx().egui_wants_keyboard_input()
        || app.state.list.count == 0
    {
        return;
    }
    let (down, up, home, end, enter) = ui.input(|i| {
        (
            i.key_pressed(Key::ArrowDown) || i.key_pressed(Key::J),
            i.key_pressed(Key::ArrowUp) || i.key_pressed(Key::K),
            i.key_pressed(Key::Home),
            i.key_pressed(Key::End),
            i.key_pressed(Key::Enter),
        )
    });
    let last = app.state.list.count - 1;
    let current = app.state.list.selected_index();
    let target = if home {
        Some(0)
    } else if end {
        Some(last)
    } else if down {
        Some(current.map_or(0, |c| (c + 1).min(last)))
    } else if up {
        Some(current.map_or(0, |c| c.saturating_sub(1)))
    } else {
        None
    };
    if let Some(t) = target {
        // Not loaded yet (e.g. End on a long list): scroll there, and select it once its page
        // has loaded.
        app.state.list.scroll_to_row = Some(t);
        app.state.list.select_when_loaded = None;
        match app.state.list.row(t).map(|r| r.id) {
            Some(id) => app.select(id),
            None => app.state.list.select_when_loaded = Some(t),
        }
        if t != 0 {
            app.state.settings.follow = false;
        }
    }
    if enter && let Some(id) = app.state.list.selected {
        app.select(id);
        app.state.detail_tab = crate::app::state::DetailTab::Messages;
    }
}

pub fn list_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    if let Some(t) = app.state.list.select_when_loaded
        && let Some(id) = app.state.list.row(t).map(|r| r.id)
    {
        app.state.list.select_when_loaded = None;
        app.select(id);
    }
    filter_ui(ui, app);
    keyboard(ui, app);
    ui.separator();
    // Under the list, not over it: calls held back arrive while the user reads and clicks the
    // rows, and a box that appeared above them moved every row down under the pointer.
    let now = std::time::Instant::now();
    if !app.state.held.is_empty() {
        app.state.held_seen_at = Some(now);
    }
    let lingering = app
        .state
        .held_seen_at
        .is_some_and(|at| now.duration_since(at) < HELD_LINGER);
    if lingering {
        let room = ui.available_height();
        egui::Panel::bottom("held_calls")
            .resizable(false)
            .show_separator_line(false)
            .show(ui, |ui| {
                // The tallest it has been since calls began to be held, so that the list does
                // not grow and shrink as they come and go (two held, one, none, two again).
                super::keep_height(ui, HELD_BOX_HEIGHT, true, |ui| {
                    if app.state.held.is_empty() {
                        egui::Frame::group(ui.style())
                            .fill(ui.visuals().faint_bg_color)
                            .show(ui, |ui| {
                                ui.set_width(ui.available_width());
                                ui.weak("No call is waiting for its answer now.");
                            });
                        ui.ctx().request_repaint_after(HELD_LINGER);
                    } else {
                        held_ui(ui, &app.state.held, room);
                    }
                });
            });
    } else {
        // Gone: the next calls held start from their own height.
        ui.data_mut(|d| d.remove_temp::<f32>(egui::Id::unique(HELD_BOX_HEIGHT)));
    }
    let dark = ui.visuals().dark_mode;
    let count = app.state.list.count;
    // Not following, an empty list said "No calls yet" beside "Show 4 new calls": with nothing
    // in sight to keep still, the new calls are shown at once.
    if app.state.list.counted && count == 0 && app.state.list.newer > 0 {
        app.refresh_list();
    }
    if app.state.list.counted && count == 0 {
        ui.add_space(20.0);
        ui.vertical_centered(|ui| {
            if app.state.list.filter.is_empty() && !app.state.held.is_empty() {
                // The calls above are stored when answered.
                ui.weak("Nothing stored yet: a call held back by the delay is listed here once its answer is sent.");
            } else if app.state.list.filter.is_empty() {
                ui.label(RichText::new("No calls yet.").heading());
                if let crate::app::state::Listening::On(addr) = app.state.listening {
                    ui.label(if app.state.show_service {
                        "Point a webhook at the URL above, send a test message from the Service panel, or send a status report by hand:"
                    } else {
                        "Point a webhook at the URL above, or send a status report by hand:"
                    });
                    // A whole status report with the contract's headers: a first call that
                    // keeps to the contract, not one full of findings.
                    let brand = crate::contract::Brand::new(&app.state.settings.brand);
                    super::copy_button(
                        ui,
                        &mut app.state.copied,
                        "Copy a sample call as curl",
                        "A curl command that sends this receiver a status report with the service's headers",
                        || super::detail::sample_curl(&format!("http://{addr}"), &brand),
                    );
                } else {
                    ui.label(
                        "The receiver is not listening yet: choose a port in the bar above, or any free port.",
                    );
                }
            } else {
                ui.label("No call matches the filter.");
                if ui
                    .button("Show every call")
                    .on_hover_text("Clear the search and the filters")
                    .clicked()
                {
                    app.state.list.search_text.clear();
                    app.state.list.search_typed_at = None;
                    app.state.list.filter = Default::default();
                    app.refresh_list();
                }
            }
        });
        return;
    }

    // In a scope of its own: the table draws its column lines down to the bottom of the Ui it
    // is in, and this one holds the box of held calls under the list.
    ui.scope(|ui| {
        // Columns a little closer than egui's 8 points, so that the table's scroll bar, which
        // has room of its own beside the rows, costs the delivery id nothing at 1024 points.
        ui.spacing_mut().item_spacing.x = COLUMN_GAP;
        // The gaps between the columns, and the room the table keeps for its scroll bar.
        let bar = ui.spacing().scroll.allocated_width();
        let shown = shown_columns(ui.available_width() - bar);
        // The gaps between the columns shown, and the room the table keeps for its scroll bar.
        let gaps = COLUMN_GAP * (shown.len() - 1) as f32 + bar;
        let narrowest = shown.iter().map(|&c| COLUMNS[c].2).sum::<f32>() + gaps;
        if ui.available_width() < narrowest {
            // Too narrow even for the columns kept at their narrowest (a very small window with
            // both side panels open): the table scrolls sideways, so no column is out of reach.
            egui::ScrollArea::horizontal()
                .id_salt("list_sideways")
                .show(ui, |ui| {
                    ui.set_width(narrowest);
                    table_ui(ui, app, dark, count, &shown, gaps);
                });
        } else {
            table_ui(ui, app, dark, count, &shown, gaps);
        }
    });
}

/// Where the box of held calls keeps its tallest height (see [`super::keep_height`]).
const HELD_BOX_HEIGHT: &str = "held_box_height";

/// How long the box of held calls stays after the last of them is answered.
const HELD_LINGER: std::time::Duration = std::time::Duration::from_secs(5);

/// How many held calls are named one by one under the list at most; the others are counted.
const HELD_SHOWN: usize = 3;

/// The calls whose answer is held back by a delay: they are stored (and listed) when they are
/// answered, so until then they are named here with the time left, under the list. Each row
/// puts the code and the countdown first (never cut), then the call (cut to fit); the box
/// takes a third of the list's height (`room`) at most. Where even its title and one call
/// would leave the list fewer than [`ROWS_KEPT`] rows (a projector at zoom 2, a small window),
/// it is one line: the next answer's countdown and how many wait, each call on its hover.
fn held_ui(ui: &mut egui::Ui, held: &[crate::receiver::Held], room: f32) {
    let now = std::time::Instant::now();
    let row = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
    let rows = ((room / 3.0 - 2.0 * row) / row).floor();
    let shown = (rows.max(1.0) as usize).min(HELD_SHOWN).min(held.len());
    let frame = egui::Frame::group(ui.style());
    let margins = frame.total_margin().sum().y;
    let lines = 1 + shown + usize::from(held.len() > shown);
    let list_row = ROW_HEIGHT + ui.spacing().item_spacing.y;
    let one_line =
        room - (margins + row * lines as f32) - HEADER_HEIGHT < list_row * ROWS_KEPT as f32;
    let hover = |from: usize| {
        held[from..]
            .iter()
            .take(20)
            .map(|h| format!("{}: {}", h.countdown(now), h.what()))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let explained = "Each is stored and listed above when its answer is sent. The delay is the one chosen in the Answer panel or by a rule.";
    // The time left counts down.
    ui.ctx()
        .request_repaint_after(std::time::Duration::from_millis(250));
    // The bar's empty track in sight on the light theme's pale panels too.
    if !ui.visuals().dark_mode {
        ui.visuals_mut().extreme_bg_color = egui::Color32::from_gray(200);
    }
    if one_line {
        // No frame: a line under the list's rows, the frame's margins are a row's room here.
        ui.separator();
        let waiting = format!("· {}", held_waiting(held.len()));
        held_line(ui, &held[0], now, 32.0, waiting).on_hover_text(format!(
            "{}. {explained}\n\n{}",
            held_title(held.len()),
            hover(0)
        ));
        return;
    }
    frame.fill(ui.visuals().faint_bg_color).show(ui, |ui| {
        ui.set_width(ui.available_width());
        ui.label(RichText::new(held_title(held.len())).strong())
            .on_hover_text(explained);
        for h in &held[..shown] {
            held_line(ui, h, now, 48.0, h.what());
        }
        if held.len() > shown {
            ui.weak(format!("and {} more", held.len() - shown))
                .on_hover_text(hover(shown));
        }
    });
}

/// One held call's line: how much of its delay has passed, the code and the countdown (never
/// cut), then `rest` and, when its caller stops waiting first, that note (cut to fit: the note
/// on a fast emulator's wait, in the part never cut, had run the line past the list's edge).
fn held_line(
    ui: &mut egui::Ui,
    h: &crate::receiver::Held,
    now: std::time::Instant,
    bar: f32,
    rest: String,
) -> egui::Response {
    ui.horizontal(|ui| {
        ui.add(
            egui::ProgressBar::new(h.passed_share(now))
                .desired_width(bar)
                .desired_height(8.0),
        );
        ui.label(RichText::new(h.countdown_short(now)).strong());
        // The call first: cut at the list's edge, the note on its wait had left no room to
        // say which call waits.
        let rest = match h.wait_note_at(now) {
            Some(note) => format!("{rest} · {note}"),
            None => rest,
        };
        ui.add(egui::Label::new(rest).truncate());
    })
    .response
}

/// The fewest whole rows the box of held calls leaves the list before it folds to one line.
const ROWS_KEPT: usize = 3;

/// The one-line box's count: `1 call waiting`, `5 calls waiting`.
fn held_waiting(n: usize) -> String {
    crate::text::count(n as u64, "call waiting", "calls waiting")
}

fn held_title(n: usize) -> String {
    if n == 1 {
        "1 call is waiting for its answer".to_owned()
    } else {
        format!("{n} calls are waiting for their answers")
    }
}

/// The list's table: its columns, the rows in sight, and the pages they need.
fn table_ui(
    ui: &mut egui::Ui,
    app: &mut HookscopeApp,
    dark: bool,
    count: u64,
    shown: &[usize],
    gaps: f32,
) {
    // A click anywhere on a row selects it, so the cells' text must not take the click.
    ui.style_mut().interaction.selectable_labels = false;
    ui.visuals_mut().selection.bg_fill = super::selected_row_fill(dark);
    ui.visuals_mut().widgets.hovered.bg_fill = super::hovered_row_fill(dark);
    let (widths, short) = column_widths(ui.available_width() - gaps, shown);
    // The columns' widths are remembered per zoom and per layout (short titles or not): a
    // zoom or a much narrower list lays them out afresh instead of keeping widths that no
    // longer fit.
    let zoom = (ui.ctx().zoom_factor() * 100.0).round() as i32;
    // Shrunk columns are laid out afresh each 40 points of width, so that a narrower list
    // never keeps widths that overflow it.
    let shrunk_room = if short {
        (ui.available_width() / 40.0) as i32
    } else {
        0
    };
    // A zoom (Ctrl +/-/0) or a resize starts a new table at its top: the selected call is
    // brought back into sight rather than left scrolled away; while following, the newest
    // calls are (the selected one had been, the newest hidden above it).
    let layout = (zoom, short, shrunk_room, shown.len());
    if app
        .state
        .list
        .layout
        .replace(layout)
        .is_some_and(|l| l != layout)
        && app.state.list.scroll_to_row.is_none()
    {
        if app.state.settings.follow {
            app.state.list.scroll_to_top = true;
        } else if let Some(i) = app.state.list.selected_index() {
            app.state.list.scroll_to_row = Some(i);
        }
    }
    // Scrolled down by hand (a wheel, a touchpad) while following: the user reads older calls,
    // and the next call must not take the list back to its top under them. Not for a list
    // with nothing below its end, nor a sideways scroll (Shift): the setting is kept.
    let scrolls = app.state.list.count as f32 * ROW_HEIGHT > ui.available_height() - HEADER_HEIGHT;
    if app.state.settings.follow
        && scrolls
        && ui.rect_contains_pointer(ui.max_rect())
        && ui.input(|i| {
            !i.modifiers.shift
                && (i.smooth_scroll_delta.y < 0.0
                    || i.events.iter().any(|e| {
                        matches!(e, egui::Event::MouseWheel { delta, modifiers, .. }
                            if delta.y < 0.0 && !modifiers.command && !modifiers.ctrl)
                    }))
        })
    {
        app.state.settings.follow = false;
    }
    let mut table = TableBuilder::new(ui)
        .id_salt(("invocations", zoom, short, shrunk_room, shown.len()))
        .striped(true)
        .resizable(true)
        .sense(egui::Sense::click())
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center));
    for &i in shown {
        let least = COLUMNS[i].2;
        table = table.column(match i {
            // The delivery id takes whatever width is left, every frame, so the table fills
            // the list at any window size (its full text is in the tooltip and the detail
            // view). Not resizable: a resizable column keeps the width it was first given.
            DELIVERY => Column::remainder()
                .at_least(least)
                .clip(true)
                .resizable(false),
            _ => Column::initial(widths[i]).at_least(least).clip(true),
        });
    }
    let mut table = table.min_scrolled_height(0.0);
    // Read once a frame, not once a row: which calls are today's.
    let now = chrono::Utc::now();
    if std::mem::take(&mut app.state.list.scroll_to_top) {
        table = table.scroll_to_row(0, Some(egui::Align::TOP));
    }
    // egui keeps scroll offsets across restarts: the list opens at its newest calls, not at an
    // offset kept from a list that has grown since. A scroll asked for (End before the first
    // rows are read) is the user's, and ends the hold: held, End had been undone.
    if !app.state.list.started {
        if app.state.list.scroll_to_row.is_some() {
            app.state.list.started = true;
        } else {
            table = table.vertical_scroll_offset(0.0);
            app.state.list.started = app.state.list.row(0).is_some();
        }
    }
    if let Some(r) = app.state.list.scroll_to_row.take() {
        table = table.scroll_to_row(r as usize, None);
    }
    let mut visible: Option<(u64, u64)> = None;
    let mut clicked: Option<i64> = None;
    let selected = app.state.list.selected;
    table
        .header(HEADER_HEIGHT, |mut h| {
            // The columns left out to fit, named on every title's hover.
            let aside = stepped_aside(shown);
            for &c in shown {
                let (title, short_title, _) = COLUMNS[c];
                h.col(|ui| {
                    let mut hover: Vec<&str> = Vec::new();
                    if short && short_title != title {
                        hover.push(title);
                    }
                    match title {
                        "Findings" => hover.push(FINDINGS_HOVER),
                        "Time" => hover.push(TIME_HOVER),
                        _ => {}
                    }
                    hover.extend(aside.as_deref());
                    let hover = hover.join("\n\n");
                    let header = if short {
                        ui.strong(short_title)
                    } else {
                        ui.strong(title)
                    };
                    if !hover.is_empty() {
                        header.on_hover_text(hover);
                    }
                });
            }
        })
        .body(|body| {
            body.rows(ROW_HEIGHT, count as usize, |mut row| {
                let i = row.index() as u64;
                visible = Some(visible.map_or((i, i), |(a, b)| (a.min(i), b.max(i))));
                let Some(s) = app.state.list.row(i).cloned() else {
                    row.col(|ui| {
                        ui.weak("…");
                    });
                    return;
                };
                row.set_selected(selected == Some(s.id));
                let event_shown = shown.contains(&1);
                for &c in shown {
                    row.col(|ui| cell_ui(ui, c, &s, now, dark, short, event_shown));
                }
                if row.response().clicked() {
                    clicked = Some(s.id);
                }
            });
        });
    if let Some(id) = clicked {
        app.select(id);
    }
    if let Some((a, b)) = visible {
        // Load what is visible plus a page either side, so scrolling rarely shows a gap.
        let from = a.saturating_sub(PAGE);
        let to = (b + PAGE + 1).min(count);
        let filter = app.state.list.filter.clone();
        let (generation, top) = (app.state.list.generation, app.state.list.top);
        for page in app.state.list.missing_pages(from..to) {
            app.engine()
                .load_page(generation, filter.clone(), top, page, PAGE);
        }
    }
}

/// What a cell `ui` calls a registration check: "registration check" where it fits, else
/// "registration" (rather than "registration c…"), and whether it was cut so.
fn registration_words(ui: &egui::Ui) -> (&'static str, bool) {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let whole = "registration check";
    if elide_front(ui, whole, &font, ui.available_width()) == whole {
        (whole, false)
    } else {
        ("registration", true)
    }
}

/// One cell of the list: column `column` (an index into [`COLUMNS`]) of the call `s`.
fn cell_ui(
    ui: &mut egui::Ui,
    column: usize,
    s: &crate::store::Summary,
    now: chrono::DateTime<chrono::Utc>,
    dark: bool,
    short: bool,
    event_shown: bool,
) {
    // What the service makes of the answer: read for the code's and the outcome's cells only
    // (it reads the answer's Retry-After).
    let fate = || Fate::of(s);
    match column {
        0 => {
            let full = |t: chrono::DateTime<chrono::Utc>| {
                t.with_timezone(&chrono::Local)
                    .format("%Y-%m-%d %H:%M:%S%.3f")
                    .to_string()
            };
            let mut time = RichText::new(super::local_time(s.received_at, now)).monospace();
            // Listed when it was answered: a call held back comes after later ones, its
            // arrival time in italics so the order does not look like a mistake.
            let late = listed_late(s);
            if late {
                time = time.italics();
            }
            // One tooltip, ours (egui adds its own to a cut label).
            ui.add(egui::Label::new(time).show_tooltip_when_elided(false))
                .on_hover_text(if late {
                    format!(
                        "Arrived {}; answered {} later, at {}: listed when it was answered, after calls that came meanwhile",
                        full(s.received_at),
                        crate::text::human_duration(std::time::Duration::from_micros(s.took_us)),
                        full(s.answered_at()),
                    )
                } else {
                    full(s.received_at)
                });
        }
        1 => {
            let ev = if s.registration_check {
                // "registration c…" in a narrow list: the word that says it, whole.
                let (word, cut) = registration_words(ui);
                if cut {
                    ui.label(word).on_hover_text("registration check");
                    return;
                }
                word.to_owned()
            } else {
                s.event.clone().unwrap_or_else(|| {
                    crate::text::single_line(&crate::store::request_phrase(&s.method, &s.path))
                        .into_owned()
                })
            };
            // Whole in egui's tooltip when the column cuts it.
            ui.label(ev);
        }
        2 => {
            match s.delivery.as_deref() {
                // Cut at the front: ids of one sender share their start and differ
                // towards the end (the emulator's dlv-2812749301-000003, …-000004).
                Some(delivery) => {
                    // A direction override or a control in it reads as its escape, as in the
                    // Headers tab: hidden, "rtl\u{202e}evil" read "rtlevil", which a search
                    // did not find.
                    let delivery = crate::text::single_line(delivery);
                    let delivery = delivery.as_ref();
                    let font = egui::TextStyle::Monospace.resolve(ui.style());
                    let shown = elide_front(ui, delivery, &font, ui.available_width());
                    let label = ui.label(RichText::new(shown.as_str()).monospace());
                    if shown != delivery {
                        // The whole id for hover and for assistive technology.
                        label.widget_info(|| {
                            egui::WidgetInfo::labeled(egui::Role::Label, true, delivery)
                        });
                        label.on_hover_text(delivery)
                    } else {
                        label
                    }
                }
                // The Event column stepped aside (a narrow list): a registration check, which
                // has no delivery, says what it is here, or its row read "— — 200 succeeded".
                None if s.registration_check && !event_shown => ui
                    .weak(registration_words(ui).0)
                    .on_hover_text(
                        "The registration check the service makes before it accepts a URL: it has no delivery",
                    ),
                // The same dash as the other columns' (a monospace one is shorter).
                None => ui.label("—"),
            };
        }
        3 => {
            ui.label(s.attempt.map_or("—".into(), |a| a.to_string()));
        }
        4 => {
            ui.label(s.messages.map_or("—".into(), |m| m.to_string()));
        }
        5 => {
            ui.label(
                RichText::new(s.answer_status.to_string())
                    .strong()
                    .color(fate().color(dark)),
            );
        }
        6 => {
            let fate = fate();
            // A request the HTTP layer refused: its code is that layer's answer, which the
            // States table does not read (a 400 was "discarded (4xx)").
            let word = if s.not_http { "not HTTP" } else { fate.word() };
            ui.add(
                egui::Label::new(RichText::new(word).color(fate.color(dark)))
                    .show_tooltip_when_elided(false),
            )
            // The outcome's name is in the cell; the hover says what it means.
            .on_hover_text(if s.not_http {
                let mut hover =
                    format!("{} (its Findings say why).", crate::store::NOT_HTTP_MEANING);
                hover[..1].make_ascii_uppercase();
                hover
            } else {
                fate.hover()
            });
        }
        _ => {
            if s.problems() > 0 {
                // The bare number under the short title, or where "N found" would be cut
                // ("18000 f…").
                let found = format!("{} found", s.problems());
                let fits = super::widest_text(ui, egui::TextStyle::Body, [found.as_str()])
                    <= ui.available_width();
                let text = if short || !fits {
                    s.problems().to_string()
                } else {
                    found
                };
                // In the colour of the gravest: red when one breaks the contract.
                let worst = s.worst.unwrap_or(crate::contract::Severity::Warning);
                ui.label(RichText::new(text).color(super::severity_color(worst, dark)))
                    .on_hover_text(format!("The gravest is {}", worst.as_str()));
            } else {
                ui.weak("—");
            }
        }
    }
}
/// What the service does with a call's answer, as the list and the Timeline's table give it
/// in a word, in a colour and on hover.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fate {
    pub outcome: Outcome,
    /// No answer reached the service in time: "retry (late)", whatever code was chosen
    /// ("200 … retry (other)" read as a fault of Hookscope's).
    pub unanswered: bool,
    /// A 503 or 429 whose Retry-After reaches past the 2-day window: no retry comes, the
    /// message is discarded, as the Timeline says ("retry (503)" beside its "discarded" had
    /// said both).
    pub discarded: bool,
    pub registration_check: bool,
}

impl Fate {
    pub fn of(s: &crate::store::Summary) -> Fate {
        Fate {
            outcome: s.outcome,
            unanswered: s.unanswered,
            discarded: s.discarded_by_retry_after(),
            registration_check: s.registration_check,
        }
    }

    /// [`Fate::of`] one call's whole record (the detail's).
    pub fn of_call(inv: &crate::store::Invocation) -> Fate {
        Fate {
            outcome: inv.outcome(),
            unanswered: inv.unanswered().is_some(),
            discarded: inv.discarded_by_retry_after(),
            registration_check: inv.registration_check,
        }
    }

    /// The word: the outcome's short label, but "retry (late)" and "discarded" as above.
    pub fn word(self) -> &'static str {
        if self.discarded {
            "discarded"
        } else if self.unanswered && self.outcome == Outcome::RetryTemporary {
            LATE
        } else {
            list_label(self.outcome)
        }
    }

    /// The colour of what happens: a discarded message's, for a Retry-After past the window.
    pub fn color(self, dark: bool) -> egui::Color32 {
        let shown = if self.discarded {
            Outcome::FailedPermanently
        } else {
            self.outcome
        };
        super::outcome_color(shown, dark)
    }

    /// What the word means, with the name the command line gives the outcome: the window says
    /// "discarded" where `log` prints `failed-permanently`.
    pub fn hover(self) -> String {
        let meaning = if self.discarded {
            DISCARDED_BY_RETRY_AFTER.to_owned()
        } else if self.unanswered && self.outcome == Outcome::RetryTemporary {
            LATE_HOVER.to_owned()
        } else if self.registration_check && self.outcome == Outcome::Succeeded {
            // No webhook is ready yet: its URL is.
            "The registration check passed: the service accepts the URL.".to_owned()
        } else {
            self.outcome.sentence()
        };
        format!(
            "{meaning}\n`log`, `show` and `--json` call it {}.",
            self.outcome.as_str()
        )
    }
}

/// What "discarded" means for a 503 or 429, for its hover.
const DISCARDED_BY_RETRY_AFTER: &str = "Its code asks for a retry, but its Retry-After reaches past the service's 2-day window: no retry comes, and the message is discarded.";

/// What "retry (late)" means, for its hover.
const LATE_HOVER: &str = "No answer reached the service in time (its 30 s passed, or the call was cut off first): it counts the call as a temporary failure and retries it, whatever code was chosen.";

/// An outcome in the list's column (and the Timeline's attempts): the filter's word for it,
/// without the codes where one word is enough, so that none is cut short (what it means is in
/// the tooltip).
pub(super) fn list_label(o: Outcome) -> &'static str {
    match o {
        Outcome::WebhookCancelled => "cancelled",
        Outcome::FailedPermanently => "discarded",
        other => filter_label(other),
    }
}

/// The width of a combo box that shows the widest of `choices` without growing.
/// Start a new row of the wrapped filter bar unless `label` and its combo of `combo` points fit
/// in what is left of this one: the label stayed behind, away from its combo, at zoom 2.
fn keep_together(ui: &mut egui::Ui, label: &str, combo: f32) {
    let label = super::widest_text(ui, egui::TextStyle::Body, [label]);
    let need = label + ui.spacing().item_spacing.x + combo;
    let row_started = ui.cursor().left() <= ui.max_rect().left() + 0.5;
    if !row_started && ui.available_size_before_wrap().x < need {
        ui.end_row();
    }
}

fn combo_width<'a>(ui: &egui::Ui, choices: impl Iterator<Item = &'a str>) -> f32 {
    let widest = super::widest_text(ui, egui::TextStyle::Button, choices);
    let s = ui.spacing();
    widest + s.icon_width + s.item_spacing.x + 2.0 * s.button_padding.x
}

/// What the Time column shows, and the list's order.
const TIME_HOVER: &str = "When the call arrived. The list is in the order the calls were \
     answered and stored: a call whose answer was held back by a delay is listed when it is \
     answered, after calls that came meanwhile, with its time in italics.";

/// Whether a row comes later in the list than its arrival time says: its answer took a second
/// or more, and calls that came meanwhile may be listed before it.
fn listed_late(s: &crate::store::Summary) -> bool {
    s.took_us >= 1_000_000
}

/// What the Findings column and the *With findings* filter count, and where the rest is.
const FINDINGS_HOVER: &str = "Problems in the call itself: its headers and body against the \
     contract. How a delivery's attempts came in time (too early, after a final answer, after a \
     410) is in the call's Timeline and Findings tabs.";

/// The list's columns: title, a shorter title for a narrow list, and the narrowest width.
const COLUMNS: [(&str, &str, f32); 8] = [
    ("Time", "Time", 66.0),
    ("Event", "Event", 50.0),
    ("Delivery", "Delivery", 60.0),
    ("Attempt", "Try", 32.0),
    ("Messages", "Msgs", 36.0),
    ("Answer", "Code", 36.0),
    ("Outcome", "Outcome", 50.0),
    ("Findings", "Found", 44.0),
];
const DELIVERY: usize = 2;
/// The columns' widths as designed: every column, findings included, fits the list at the
/// default window size with both side panels open, with room left for the delivery id.
const DESIGNED: [f32; 8] = [72.0, 112.0, 0.0, 54.0, 62.0, 50.0, 90.0, 62.0];
/// The columns of numbers (attempt, messages, answer code, findings), the first to shrink.
const NUMBERS: [usize; 4] = [3, 4, 5, 7];
/// What the delivery id keeps at least before the other columns shrink.
const DELIVERY_ROOM: f32 = 80.0;
/// The outcome's widest word in the list ("retry (other)", "URL refused") and a little air.
const OUTCOME_WORDS: f32 = 78.0;

/// What gives way, in order, when the list is narrower than the design: each stage's floor for
/// every column, which the columns shrink towards (in proportion to what each has above it)
/// only when the stages before could not make the room.
/// 1. The numbers, to their narrowest: under their short titles a count or a code still fits.
/// 2. The time and the outcome, to what their words need.
/// 3. The delivery id, to its narrowest: cut at the front, it keeps the end that tells one
///    delivery from the next.
/// 4. Everything, to its narrowest (the event last of all but in proportion: "incoming-m…"
///    and "succee…" are not read, so it comes to that only in a very narrow list).
fn stage_floors() -> [[f32; 8]; 4] {
    let least = COLUMNS.map(|(_, _, least)| least);
    let mut numbers = DESIGNED;
    numbers[DELIVERY] = DELIVERY_ROOM;
    for i in NUMBERS {
        numbers[i] = least[i];
    }
    let mut words = numbers;
    words[0] = least[0];
    words[6] = OUTCOME_WORDS;
    let mut delivery = words;
    delivery[DELIVERY] = least[DELIVERY];
    [numbers, words, delivery, least]
}

/// The columns' starting widths in a list `room` points wide (the gaps between columns taken
/// out), and whether the short titles are needed: as designed when they fit beside a
/// readable delivery id; shrunk stage by stage otherwise ([`stage_floors`]), never below each
/// column's narrowest. The delivery's width is what is left (it is the remainder column).
fn column_widths(room: f32, shown: &[usize]) -> ([f32; 8], bool) {
    // A column stepped aside takes no room at any stage.
    let only_shown = |mut widths: [f32; 8]| {
        for (i, w) in widths.iter_mut().enumerate() {
            if !shown.contains(&i) {
                *w = 0.0;
            }
        }
        widths
    };
    let designed: f32 = only_shown(DESIGNED).iter().sum();
    let short = room - DELIVERY_ROOM < designed;
    let mut wanted = only_shown(DESIGNED);
    wanted[DELIVERY] = DELIVERY_ROOM;
    for floor in stage_floors().map(only_shown) {
        let over = wanted.iter().sum::<f32>() - room;
        if over <= 0.0 {
            break;
        }
        let slack: f32 = wanted
            .iter()
            .zip(floor)
            .map(|(w, f)| (w - f).max(0.0))
            .sum();
        if slack > 0.0 {
            let give = (over / slack).min(1.0);
            for (w, f) in wanted.iter_mut().zip(floor) {
                *w -= (*w - f).max(0.0) * give;
            }
        }
    }
    let mut widths = wanted;
    widths[DELIVERY] = COLUMNS[DELIVERY].2;
    (widths, short)
}

/// The columns that step aside, in order, where the list is too narrow for the others at the
/// widths their words need: the count of messages (nearly always 1), the event (the detail's
/// title names it), then the findings and the attempt. The time, the delivery id, the answer
/// and its outcome are never left out.
const STEP_ASIDE: [usize; 4] = [4, 1, 7, 3];

/// The columns the list shows in `room` points (its scroll bar taken out): every column where
/// they fit with the event, the outcome's words and the delivery id at its narrowest whole
/// ([`stage_floors`]' third stage); otherwise the ones a reader needs least step aside
/// ([`STEP_ASIDE`]). A list that could show every column only cut to its narrowest ("succee…",
/// "incoming-m…") or scrolled sideways, its scroll bar out of sight past the last column.
fn shown_columns(room: f32) -> Vec<usize> {
    let floors = stage_floors()[2];
    let needed = |cols: &[usize]| {
        cols.iter().map(|&c| floors[c]).sum::<f32>() + COLUMN_GAP * (cols.len() - 1) as f32
    };
    super::columns_shown(COLUMNS.len(), &STEP_ASIDE, |cols| needed(cols) <= room)
}

/// What the titles' hover says of the columns stepped aside, if any.
fn stepped_aside(shown: &[usize]) -> Option<String> {
    let aside: Vec<&str> = (0..COLUMNS.len())
        .filter(|c| !shown.contains(c))
        .map(|c| COLUMNS[c].0)
        .collect();
    (!aside.is_empty()).then(|| {
        format!(
            "{} left out to fit the list: widen the window or close a side panel to see them. The call's detail shows them all.",
            aside.join(", ")
        )
    })
}

/// An outcome as the filter offers it: the list's word for it, and the codes that lead to it
/// (three kinds of call are all "retry" in the list).
fn filter_label(o: Outcome) -> &'static str {
    // Short, so the toolbar keeps its line whichever is chosen; each choice's hover says more.
    match o {
        Outcome::Succeeded => "succeeded",
        Outcome::FailedPermanently => "discarded (4xx)",
        Outcome::RetrySlowDown => "retry (429)",
        Outcome::RetryUnavailable => "retry (503)",
        Outcome::WebhookCancelled => "cancelled (410)",
        Outcome::RetryTemporary => "retry (other)",
        Outcome::UrlRefused => "URL refused",
    }
}

/// `text` as it fits in `width` with `font`: whole, or its end after a "…".
pub(super) fn elide_front(ui: &egui::Ui, text: &str, font: &egui::FontId, width: f32) -> String {
    let fits = |t: &str| {
        ui.painter()
            .layout_no_wrap(t.to_owned(), font.clone(), egui::Color32::WHITE)
            .size()
            .x
            <= width
    };
    if fits(text) {
        return text.to_owned();
    }
    let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    // The longest tail that fits: the first start (from the left) whose "…tail" fits.
    let (mut lo, mut hi) = (1, starts.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        if fits(&format!("…{}", &text[starts[mid]..])) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    match starts.get(lo) {
        Some(&at) => format!("…{}", &text[at..]),
        None => "…".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_id_is_cut_at_its_front() {
        egui::__run_test_ui(|ui| {
            let font = egui::TextStyle::Monospace.resolve(ui.style());
            let id = "dlv-2812749301-000003";
            let whole = ui
                .painter()
                .layout_no_wrap(id.to_owned(), font.clone(), egui::Color32::WHITE)
                .size()
                .x;
            assert_eq!(elide_front(ui, id, &font, whole + 1.0), id);
            // Room for about two thirds: the end stays, where ids differ.
            let cut = elide_front(ui, id, &font, whole * 0.7);
            assert!(cut.starts_with('…') && cut.len() < id.len(), "{cut}");
            assert!(id.ends_with(cut.trim_start_matches('…')), "{cut}");
            assert!(cut.contains("1-000003"), "{cut}");
            assert_eq!(elide_front(ui, id, &font, 1.0), "…");
        });
    }

    const ALL: [usize; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

    fn others(widths: &[f32; 8]) -> f32 {
        widths
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != DELIVERY)
            .map(|(_, w)| w)
            .sum()
    }

    #[test]
    fn columns_keep_their_design_where_it_fits() {
        // The list at the default window size (1400 wide, both side panels open).
        let (widths, short) = column_widths(740.0, &ALL);
        for (i, (w, d)) in widths.iter().zip(DESIGNED).enumerate() {
            if i != DELIVERY {
                assert_eq!(*w, d, "column {i}");
            }
        }
        assert!(!short);
        assert!(740.0 - others(&widths) >= DELIVERY_ROOM);
    }

    #[test]
    fn a_narrow_list_shrinks_its_columns_to_leave_the_delivery_room() {
        // A 1024-point window: the list between the narrower side panels.
        let room = 488.0;
        let (widths, short) = column_widths(room, &ALL);
        assert!(short, "the long titles no longer fit");
        for (w, (title, _, least)) in widths.iter().zip(COLUMNS) {
            assert!(*w >= least, "{title} {w} under {least}");
        }
        assert!(room - others(&widths) >= COLUMNS[DELIVERY].2);
        // The numbers' columns shrink first, then the time and the outcome to their words, so
        // the event keeps its width: it reads "incoming-message" whole, the outcome "URL
        // refused", and the delivery keeps its room.
        for i in NUMBERS {
            assert_eq!(widths[i], COLUMNS[i].2, "{}", COLUMNS[i].0);
        }
        assert_eq!(widths[1], DESIGNED[1], "{widths:?}");
        assert!(widths[6] >= OUTCOME_WORDS, "{widths:?}");
        assert!(room - others(&widths) >= DELIVERY_ROOM - 0.01, "{widths:?}");
        // Narrower still: the delivery id gives way before the event.
        let (narrower, _) = column_widths(room - 15.0, &ALL);
        assert_eq!(narrower[1], DESIGNED[1], "{narrower:?}");
        assert!(
            room - 15.0 - others(&narrower) < DELIVERY_ROOM,
            "{narrower:?}"
        );
        // Much narrower: everything shrinks, the event with the rest.
        let (much, _) = column_widths(room - 60.0, &ALL);
        assert!(much[1] < DESIGNED[1], "{much:?}");
        assert!((room - 60.0 - others(&much) - COLUMNS[DELIVERY].2).abs() < 0.01);
        // A little narrower than the design: only the numbers give way.
        let designed: f32 = DESIGNED.iter().sum();
        let (near, _) = column_widths(designed + DELIVERY_ROOM - 30.0, &ALL);
        for (i, (w, d)) in near.iter().zip(DESIGNED).enumerate() {
            if NUMBERS.contains(&i) {
                assert!(*w < d, "column {i}");
            } else if i != DELIVERY {
                assert_eq!(*w, d, "column {i}");
            }
        }
        // Narrower than the columns' minimums: each keeps its minimum (the table clips).
        let (tiny, _) = column_widths(100.0, &ALL);
        for (w, (_, _, least)) in tiny.iter().zip(COLUMNS) {
            assert_eq!(*w, least);
        }
    }

    /// Every column where the list has room for the words of each; in a narrower list the
    /// message count steps aside first, then the event, the findings and the attempt, and the
    /// rest are laid out in the room the others leave: the outcome's words whole.
    #[test]
    fn columns_step_aside_before_the_words_are_cut() {
        assert_eq!(shown_columns(740.0), ALL);
        // Just room for every column with the event and the outcome whole.
        let whole: f32 = stage_floors()[2].iter().sum::<f32>() + COLUMN_GAP * 7.0;
        assert_eq!(shown_columns(whole), ALL);
        let no_messages = shown_columns(whole - 1.0);
        assert_eq!(no_messages, [0, 1, 2, 3, 5, 6, 7]);
        let mut room = whole - 1.0;
        let mut previous = no_messages.len();
        while room > 100.0 {
            let shown = shown_columns(room);
            assert!(
                shown.len() <= previous,
                "more columns in less room at {room}"
            );
            previous = shown.len();
            for kept in [0, DELIVERY, 5, 6] {
                assert!(
                    shown.contains(&kept),
                    "{} left out at {room}",
                    COLUMNS[kept].0
                );
            }
            let (widths, _) = column_widths(room, &shown);
            for c in 0..COLUMNS.len() {
                if !shown.contains(&c) {
                    assert_eq!(widths[c], 0.0, "{} takes room", COLUMNS[c].0);
                }
            }
            // Where the kept columns fit with their words whole, the outcome keeps them.
            let needed: f32 = shown.iter().map(|&c| stage_floors()[2][c]).sum::<f32>()
                + COLUMN_GAP * (shown.len() - 1) as f32;
            if needed <= room {
                let gaps = COLUMN_GAP * (shown.len() - 1) as f32;
                let (widths, _) = column_widths(room - gaps, &shown);
                assert!(widths[6] >= OUTCOME_WORDS - 0.01, "{widths:?} at {room}");
            }
            room -= 7.0;
        }
        assert_eq!(shown_columns(100.0), [0, DELIVERY, 5, 6]);
        assert!(stepped_aside(&ALL).is_none());
        let note = stepped_aside(&[0, 2, 5, 6]).unwrap_or_default();
        assert!(
            note.starts_with("Event, Attempt, Messages, Findings left out"),
            "{note}"
        );
    }
}
