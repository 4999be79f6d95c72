//! The top bar: where the receiver listens (with a copy button), its state, and the answer
//! currently chosen, always visible.

use crate::app::HookscopeApp;
use crate::app::state::Listening;
use egui::RichText;

/// How the top bar is laid out, from what its parts measured in the last frame: all on one
/// line when the window is wide; the answer on a second line when it does not fit beside the
/// rest; the receiver's address there too when even it does not (a narrow window, or a large
/// zoom). The buttons always end the first line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TopBarLayout {
    #[default]
    OneLine,
    AnswerBelow,
    TwoLines,
}

impl TopBarLayout {
    /// The layout for a bar `full` points wide whose receiver status, buttons and answer
    /// measure `status`, `buttons` and `answer`.
    pub fn choose(full: f32, status: f32, buttons: f32, answer: f32) -> TopBarLayout {
        // The gaps between the groups, and a separator.
        const GAP: f32 = 24.0;
        if status + buttons + answer + 2.0 * GAP <= full {
            TopBarLayout::OneLine
        } else if status + buttons + GAP <= full {
            TopBarLayout::AnswerBelow
        } else {
            TopBarLayout::TwoLines
        }
    }
}

pub fn top_bar_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    let dark = ui.visuals().dark_mode;
    let top = ui.cursor().top();
    // Room for a zoom button clicked last to stay under the pointer (see [`anchor_room`]).
    let room = anchor_room(ui, top);
    ui.add_space(4.0 + room.y);
    let (text, hover, outcome) = answer_text(app);
    // In the colour of what the service will do with the fixed answer, unless a rule takes
    // every call (the fixed answer is then never sent).
    let color = match app.state.rules.catch_all {
        Some(_) => ui.visuals().strong_text_color(),
        None => super::outcome_color(outcome, dark),
    };
    // A number keeps its unit, and Retry-After its value, where the answer wraps (read out,
    // and found, with its plain spaces).
    let answer = RichText::new(crate::text::glue_units(&text))
        .strong()
        .color(color);
    let answer_label = |ui: &mut egui::Ui, answer: RichText, hover: String| {
        let label = ui.label(answer);
        label.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, &text));
        label.on_hover_text(hover);
    };
    let full = ui.available_width();
    // The room the answer is laid out for: the widest yet at this width of the bar. At
    // 1024 x 768 an answer with a delay took the bar onto two lines and the next one back onto
    // one, and everything under the bar moved 23 points up under the pointer.
    let answer_width = super::widest_text(ui, egui::TextStyle::Body, [text.as_str()]);
    let answer_width = match app.state.top_bar_answer {
        (was_full, widest) if (was_full - full).abs() < 0.5 => answer_width.max(widest),
        _ => answer_width,
    };
    app.state.top_bar_answer = (full, answer_width);
    let [status_was, buttons_was] = app.state.top_bar_widths;
    let layout = TopBarLayout::choose(full, status_was, buttons_was, answer_width);
    let mut measured = [status_was, buttons_was];
    // The first line always ends with the buttons, so that A+ stays where it was clicked when a
    // zoom moves the receiver's address (and the answer) to the second line.
    let mut status_on_line_two = 0.0;
    ui.horizontal(|ui| {
        let title = ui.horizontal(title_ui).response.rect.width();
        if layout == TopBarLayout::TwoLines {
            // Measured where it is drawn, below; the title's share is counted here.
            measured[0] = title + ui.spacing().item_spacing.x;
        } else {
            measured[0] = title
                + ui.spacing().item_spacing.x
                + ui.horizontal(|ui| status_ui(ui, app, dark))
                    .response
                    .rect
                    .width();
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            // At the bar's right end, in the room they took in the last frame, but laid out
            // left to right: Tab goes from Service to A+ as they read (laid out from the
            // right, it went A+, A−, the theme, Settings, Service). Measured afresh: the frame
            // is laid out again when that room changes (a theme's name, the first frame).
            let size = egui::vec2(buttons_was + room.x, ui.spacing().interact_size.y);
            let buttons = ui.allocate_ui_with_layout(
                size,
                egui::Layout::left_to_right(egui::Align::Center),
                |ui| {
                    let middle = buttons_ui(ui, app, room.x);
                    (middle, ui.min_rect().width())
                },
            );
            let (middle, width) = buttons.inner;
            measured[1] = width - room.x;
            if (measured[1] - buttons_was).abs() > 0.5 {
                ui.ctx()
                    .request_discard("the top bar's buttons changed width");
            }
            let centre = middle - top - room.y;
            ui.data_mut(|d| d.insert_temp(buttons_centre_key(), centre));
            if layout == TopBarLayout::OneLine {
                ui.separator();
                answer_label(ui, answer.clone(), hover.clone());
            }
        });
    });
    if layout != TopBarLayout::OneLine {
        ui.horizontal_wrapped(|ui| {
            if layout == TopBarLayout::TwoLines {
                status_on_line_two = ui
                    .horizontal(|ui| status_ui(ui, app, dark))
                    .response
                    .rect
                    .width();
                // Where it does not fit beside the address, on a row of its own (wrapped after
                // it, it broke mid-phrase), and then without the separator, which had been left
                // at the row's end. (The room left on the row: a wrapping layout's available
                // width is the whole row's.)
                let separator = ui.spacing().item_spacing.x * 2.0 + 6.0;
                if ui.max_rect().right() - ui.cursor().min.x < separator + answer_width {
                    ui.end_row();
                } else {
                    ui.separator();
                }
            }
            answer_label(ui, answer, hover);
        });
    }
    measured[0] += status_on_line_two;
    app.state.top_bar_widths = measured;
    // Measured afresh (a new URL, a zoom, the first frame): lay the bar out again before this
    // frame is shown if it now belongs on another number of lines.
    if TopBarLayout::choose(full, measured[0], measured[1], answer_width) != layout {
        ui.ctx().request_discard("the top bar's layout changed");
    }
    // Why the receiver is not listening (or why a restart failed), on its own line, wrapped:
    // the bar's controls stay where they are.
    let problem = match (&app.state.listening, &app.state.port_refused) {
        // What the port field refused, while it holds what was refused; why the receiver
        // does not listen again once the field is edited.
        (Listening::Failed(_), Some((typed, why))) if *typed == app.state.port_text => {
            Some(why.clone())
        }
        (Listening::Failed(why), _) => Some(why.clone()),
        _ => app.state.listen_notice.clone(),
    };
    let above_notice = ui.cursor().top();
    if let Some(why) = problem {
        let color = super::outcome_color(crate::contract::Outcome::WebhookCancelled, dark);
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(why).color(color));
            if app.state.listen_notice.is_some()
                && matches!(app.state.listening, Listening::On(_))
                && ui.small_button("Dismiss").clicked()
            {
                app.state.listen_notice = None;
            }
        });
    }
    app.state.laid_out.bar_notice = ui.cursor().top() - above_notice;
    ui.add_space(2.0);
}

/// The receiver's state: a dot and a word in the colour of `like`.
fn badge(
    ui: &mut egui::Ui,
    like: crate::contract::Outcome,
    text: &str,
    dark: bool,
) -> egui::Response {
    let color = super::outcome_color(like, dark);
    super::dot(ui, color);
    ui.label(RichText::new(text).color(color))
}

/// The application's name, first on the bar.
fn title_ui(ui: &mut egui::Ui) {
    ui.heading(RichText::new("Hookscope").strong());
    ui.separator();
}

/// Where the receiver listens (with a copy button), or why it does not.
fn status_ui(ui: &mut egui::Ui, app: &mut HookscopeApp, dark: bool) {
    match app.state.listening.clone() {
        Listening::Starting => {
            ui.spinner();
            ui.label("Starting the receiver…");
        }
        Listening::On(addr) => {
            let url = format!("http://{addr}/");
            badge(ui, crate::contract::Outcome::Succeeded, "Listening", dark)
                .on_hover_text("Every call to this address is recorded and answered as chosen");
            ui.label(RichText::new(&url).monospace().strong());
            super::copy_button(
                ui,
                &mut app.state.copied,
                "Copy URL",
                "Copy the receiver's URL to point a webhook at it",
                || url,
            );
        }
        Listening::Failed(_) => {
            badge(
                ui,
                crate::contract::Outcome::WebhookCancelled,
                "Not listening",
                dark,
            );
            let label = ui.label("Port:");
            let field = ui
                .add(egui::TextEdit::singleline(&mut app.state.port_text).desired_width(60.0))
                .labelled_by(label.id);
            // Enter in the field listens, as *Listen* does (and as Enter applies the custom
            // answer).
            let entered = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Listen").clicked() || entered {
                match app.state.port_text.trim().parse::<u16>() {
                    Ok(p) => {
                        app.state.any_port_this_session = false;
                        app.state.port_refused = None;
                        let next = crate::app::state::Settings {
                            port: p,
                            ..app.state.settings.clone()
                        };
                        app.start_listening_with(next);
                    }
                    Err(_) => {
                        let typed = app.state.port_text.clone();
                        let why = format!(
                            "\"{}\" is not a port: give a number from 0 to 65535",
                            typed.trim()
                        );
                        app.state.port_refused = Some((typed, why));
                        // The field keeps the keyboard, to type the port again.
                        if entered {
                            field.request_focus();
                        }
                    }
                }
            }
            if ui
                .button("Any free port")
                .on_hover_text("For this session; the next start tries the port in Settings again")
                .clicked()
            {
                app.state.any_port_this_session = true;
                app.state.port_refused = None;
                app.start_listening();
            }
        }
    }
}

/// The zoom button clicked last, and where on the screen (in pixels, which a zoom does not
/// change), while the pointer stays there.
#[derive(Clone, Copy, Debug)]
struct ZoomAnchor {
    larger: bool,
    at: egui::Pos2,
}

fn zoom_anchor_key() -> egui::Id {
    egui::Id::unique("zoom_anchor")
}

/// How far the pointer may move from a zoom button's click before the button goes back to its
/// place, in pixels.
const ANCHOR_SLACK: f32 = 4.0;

/// Where the middle of the bar's buttons was below its top in the last frame, in points (which
/// a zoom does not change).
fn buttons_centre_key() -> egui::Id {
    egui::Id::unique("zoom_buttons_centre")
}

/// The room to leave right of A+ (`x`) and above the bar whose top is at `top` (`y`) so that
/// the zoom button clicked last is still under the pointer at this zoom: a smaller zoom
/// shrinks the bar towards the window's top right corner, away from the pointer, which stays.
fn anchor_room(ui: &egui::Ui, top: f32) -> egui::Vec2 {
    let key = zoom_anchor_key();
    let ppp = ui.ctx().pixels_per_point();
    let anchor = ui.data(|d| d.get_temp::<ZoomAnchor>(key));
    let pointer = ui.ctx().pointer_latest_pos();
    let Some((anchor, pointer)) = anchor
        .zip(pointer)
        .filter(|(a, p)| (p.to_vec2() * ppp - a.at.to_vec2()).length() <= ANCHOR_SLACK)
    else {
        ui.data_mut(|d| d.remove::<ZoomAnchor>(key));
        return egui::Vec2::ZERO;
    };
    let width = |text: &str| {
        super::widest_text(ui, egui::TextStyle::Button, [text])
            + 2.0 * ui.spacing().button_padding.x
    };
    let plus = width("A+");
    let centre = if anchor.larger {
        plus / 2.0
    } else {
        plus + ui.spacing().item_spacing.x + width("A−") / 2.0
    };
    let x = (ui.max_rect().right() - centre - pointer.x).clamp(0.0, 200.0);
    let y = ui
        .data(|d| d.get_temp::<f32>(buttons_centre_key()))
        .map_or(0.0, |middle| (pointer.y - top - middle).clamp(0.0, 200.0));
    egui::vec2(x, y)
}

/// The bar's buttons, from the left, with `room` left right of them (see [`anchor_room`]);
/// where their middle is, from the top of the screen.
fn buttons_ui(ui: &mut egui::Ui, app: &mut HookscopeApp, room: f32) -> f32 {
    // At the window's edge, A− and A+ last: a zoom, which grows every button, leaves them under
    // the pointer for the next click (they were the leftmost, and a second click on A+ landed
    // on the theme or Settings); a smaller zoom, which moves them towards the edge, leaves
    // room right of them while the pointer stays.
    if ui
        .selectable_label(app.state.show_service, "Service")
        .on_hover_text("Webhooks, the test message and the emulator")
        .clicked()
    {
        app.state.show_service = !app.state.show_service;
        // The user's choice from now on: a wider window does not undo it.
        app.state.service_aside = false;
    }
    if ui.button("Settings").clicked() {
        app.state.show_settings = !app.state.show_settings;
    }
    let theme = if app.state.settings.dark {
        "Light theme"
    } else {
        "Dark theme"
    };
    if ui
        .button(theme)
        .on_hover_text("Switch between light and dark")
        .clicked()
    {
        app.state.settings.dark = !app.state.settings.dark;
        crate::app::apply_look(ui.ctx(), &app.state.settings);
    }
    let zoom_clicked = |ui: &egui::Ui, larger: bool| {
        let z = ui.ctx().zoom_factor() + if larger { 0.1 } else { -0.1 };
        if let Some(p) = ui.ctx().pointer_interact_pos() {
            let at = (p.to_vec2() * ui.ctx().pixels_per_point()).to_pos2();
            ui.data_mut(|d| d.insert_temp(zoom_anchor_key(), ZoomAnchor { larger, at }));
        }
        z.clamp(crate::app::MIN_ZOOM, crate::app::MAX_ZOOM)
    };
    if ui
        .button("A−")
        .on_hover_text("Smaller text (Ctrl −)")
        .clicked()
    {
        let z = zoom_clicked(ui, false);
        app.pointer.zoom_to(ui.ctx(), z);
    }
    // No larger zoom than the window has room for (or than the layout is made for): A+ says
    // so rather than doing nothing.
    let larger = ui.ctx().zoom_factor() + 0.05 < app.state.zoom_room;
    let plus = ui
        .add_enabled(larger, egui::Button::new("A+"))
        .on_hover_text("Larger text (Ctrl +)")
        .on_disabled_hover_text(if app.state.zoom_room < crate::app::MAX_ZOOM {
            "The window has no room for larger text: make it larger first"
        } else {
            "The text is as large as it goes"
        });
    let middle = plus.rect.center().y;
    if plus.clicked() {
        let z = zoom_clicked(ui, true);
        app.pointer.zoom_to(ui.ctx(), z);
    }
    if room > 0.0 {
        ui.add_space(room);
    }
    middle
}

/// "Answering …" in the colour of what the service will do, and its hover text.
fn answer_text(app: &HookscopeApp) -> (String, String, crate::contract::Outcome) {
    let a = &app.state.settings.answer;
    // A Retry-After past the 2-day window leaves no retry: a discarded message's colour, as
    // its hover and the Timeline say, not the yellow of a retry.
    let past_window = a.retry_after_past_window(chrono::Utc::now());
    // A delay the built-in emulator gives up on (its fast clock waits 30 s of its own): there
    // the answer is a time-out, retried, whatever its code (the bar had said a green "200").
    let late = super::answer::late_for_emulator(a, super::answer::fast_emulator(app));
    // Too late first: the emulator never reads an answer it stopped waiting for, so a
    // Retry-After past the window leaves its retries as they are (the bar had said "no retry"
    // in a discarded message's colour while the emulator retried it, as the What-if said).
    let outcome = if late.is_some() {
        crate::contract::Outcome::RetryTemporary
    } else if past_window {
        crate::contract::Outcome::FailedPermanently
    } else {
        a.outcome()
    };
    let rules = app.state.rules.in_force;
    let catch_all = app.state.rules.catch_all.as_deref();
    // Said in the words too, not only in the colour: the code alone reads "retry".
    let summary = if late.is_some() {
        format!("{}, too late for the emulator", a.summary())
    } else if past_window {
        format!("{}, no retry", a.summary())
    } else {
        a.summary()
    };
    let text = match (rules, catch_all) {
        (0, _) => format!("Answering {summary}"),
        (1, Some(name)) => format!("Answering by rule \"{name}\" (every call)"),
        (n, Some(name)) => format!("Answering by {n} rules (\"{name}\" takes every call left)"),
        (1, None) => format!("Answering by 1 rule, else {summary}"),
        (n, None) => format!("Answering by {n} rules, else {summary}"),
    };
    // Why a Retry-After does not set the wait (ignored with this code, or a date gone by), as
    // the Answer panel's note says: the date shown in the bar is not one still to come. (One
    // past the window is said by the description itself.)
    let note = a
        .retry_after_note()
        .filter(|_| !past_window)
        .map_or(String::new(), |n| format!("\n{n}"));
    let note = match super::answer::late_for_emulator_note(a, super::answer::fast_emulator(app)) {
        Some(late) => format!("{note}\n{late}"),
        None => note,
    };
    let hover = if rules == 0 {
        format!("What the service does with it: {}{note}", a.describe())
    } else if let Some(name) = catch_all {
        format!(
            "The rule \"{name}\" has no condition and never retires: it answers every call the rules before it do not, so the rules after it and the fixed answer ({}) are never used",
            a.summary()
        )
    } else {
        format!(
            "The first rule that matches a call chooses its answer; a call no rule matches gets {} ({}){note}",
            a.summary(),
            a.describe()
        )
    };
    (text, hover, outcome)
}

#[cfg(test)]
mod tests {
    use super::TopBarLayout;

    #[test]
    fn the_top_bar_takes_a_second_line_only_when_its_parts_do_not_fit() {
        // Status 470, buttons 280, answer 200 points, and the gaps (48).
        assert_eq!(
            TopBarLayout::choose(1000.0, 470.0, 280.0, 200.0),
            TopBarLayout::OneLine
        );
        assert_eq!(
            TopBarLayout::choose(997.0, 470.0, 280.0, 200.0),
            TopBarLayout::AnswerBelow
        );
        assert_eq!(
            TopBarLayout::choose(774.0, 470.0, 280.0, 200.0),
            TopBarLayout::AnswerBelow
        );
        assert_eq!(
            TopBarLayout::choose(773.0, 470.0, 280.0, 200.0),
            TopBarLayout::TwoLines
        );
    }
}
