//! The detail of the selected invocation: messages as a table, the JSON (coloured, collapsible),
//! headers, raw body (hex where it is not text), findings in plain words, and the answer sent.

use crate::app::HookscopeApp;
use crate::app::state::{DetailTab, Listening};
use crate::deliveries::speed_text;
use crate::store::Stored;
use egui::RichText;
use egui_extras::{Column, TableBuilder};
use serde_json::Value;

/// An attempt whose number could not be read, in a Timeline mark's words.
const NO_NUMBER: &str = "(no number)";
/// Why an attempt has no number in the Timeline's table.
const NO_NUMBER_HOVER: &str =
    "The call's attempt header was missing, or not a whole number that could be read";

pub fn detail_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    let json = app.state.detail_json.clone();
    let Some(s) = app.state.detail.clone() else {
        ui.add_space(8.0);
        ui.weak(if app.state.list.selected.is_some() {
            "Loading…"
        } else {
            "Select a call to see its messages, headers and findings (Up/Down or j/k to move, Enter to open)."
        });
        return;
    };
    ui.add_space(4.0);
    header_ui(ui, app, &s);
    // The findings of the call's delivery as a whole (read from all its attempts), when the
    // delivery on screen is this call's.
    let delivery = app
        .state
        .delivery
        .as_deref()
        .filter(|d| s.inv.delivery.as_deref() == Some(d.delivery.as_str()));
    // Copied (a few sentences), so the Timeline below may change the settings.
    let delivery_findings = delivery.map_or_else(Vec::new, |d| d.findings.clone());
    // Counted as the list counts them: the note every registration check carries is no problem.
    let findings = s
        .inv
        .findings
        .len()
        .saturating_sub(usize::from(s.inv.registration_check))
        + delivery_findings.len();
    let tabs = DetailTab::ALL.map(|tab| {
        let label = match tab {
            DetailTab::Findings if findings > 0 => format!("Findings ({findings})"),
            DetailTab::Messages => match s.inv.messages {
                Some(n) => format!("Messages ({n})"),
                None => "Messages".to_owned(),
            },
            _ => tab.label().to_owned(),
        };
        (tab, label)
    });
    // Wrapping onto a second line when the panel is narrow, not widening it past the list;
    // and closer together where that saves a row (at 720 x 480 and zoom 1.3 they took three
    // of the panel's least height, and the tab's first line was past its foot).
    let texts: Vec<f32> = tabs
        .iter()
        .map(|(_, label)| super::widest_text(ui, egui::TextStyle::Button, [label.as_str()]))
        .collect();
    let (pad, gap) = (ui.spacing().button_padding.x, ui.spacing().item_spacing.x);
    let room = ui.available_width();
    let rows_at = |pad: f32, gap: f32| {
        let widths: Vec<f32> = texts.iter().map(|t| t + 2.0 * pad).collect();
        rows_needed(&widths, room, gap)
    };
    let close = rows_at(pad / 2.0, gap / 2.0) < rows_at(pad, gap);
    ui.horizontal_wrapped(|ui| {
        if close {
            ui.spacing_mut().button_padding.x = pad / 2.0;
            ui.spacing_mut().item_spacing.x = gap / 2.0;
        }
        for (tab, label) in tabs {
            ui.selectable_value(&mut app.state.detail_tab, tab, label);
        }
    });
    ui.separator();
    if app.state.list.selected_hidden {
        // Under the tabs, not over them: choosing a filter had moved the tabs down a line, and
        // a click meant for one landed on nothing. One line, cut with the whole on hover:
        // wrapped at zoom 2 it took the last of the panel's room, and the tab under it showed
        // nothing.
        ui.add(
            egui::Label::new(
                RichText::new(
                    "The filter hides this call from the list; its detail stays here until another is chosen.",
                )
                .weak(),
            )
            .truncate(),
        );
    }
    // Tables and raw text scroll sideways; sentences and the timeline wrap to the panel.
    let mut scroll = match app.state.detail_tab {
        DetailTab::Messages | DetailTab::Json | DetailTab::Headers | DetailTab::Raw => {
            egui::ScrollArea::both()
        }
        DetailTab::Findings | DetailTab::Answer => egui::ScrollArea::vertical(),
        DetailTab::Delivery => egui::ScrollArea::vertical(),
    };
    if !s.inv.body_kept
        && matches!(
            app.state.detail_tab,
            DetailTab::Messages | DetailTab::Json | DetailTab::Raw
        )
    {
        // Not "not JSON" nor "empty": there is no body to read, and the user is told why.
        ui.label(not_kept_sentence(&s.inv));
        return;
    }
    if app.state.detail_tab == DetailTab::Raw {
        // Its own scroll area, which lays out only the rows in sight.
        let room = ui.available_height().max(0.0);
        raw_ui(ui, ("request", s.id), &s.inv.body, room);
        return;
    }
    if app.state.detail_tab == DetailTab::Answer {
        // Its body in a scroll area of its own, as the Raw body tab's.
        answer_sent_ui(ui, &s);
        return;
    }
    // A vertical tab's scroll bar is judged afresh once the panel's width has changed by more
    // than a bar's (a resize, a zoom): the bar a narrower panel needed had stayed after the
    // window was made wide again, the heading wrapped beside it, and the content, taller for
    // it, kept needing the bar (the Timeline's heading on two lines at the default size after
    // a trip to 1024 points and back, its table's last row out of sight). Where it was
    // scrolled to is kept.
    let mut keep_offset = None;
    if matches!(
        app.state.detail_tab,
        DetailTab::Findings | DetailTab::Delivery
    ) {
        let width = ui.available_width();
        let key = egui::Id::unique("detail_scroll_judged_at");
        let judged = ui.data(|d| d.get_temp::<f32>(key));
        if judged.is_none_or(|w| (w - width).abs() > ui.spacing().scroll.allocated_width()) {
            let id = ui.make_persistent_id(egui::IdSalt::new("detail_scroll"));
            keep_offset =
                egui::scroll_area::State::load(ui.ctx(), id).map(|s| s.clamped_offset().y);
            ui.data_mut(|d| {
                d.remove::<egui::scroll_area::State>(id);
                d.insert_temp(key, width);
            });
            // The bar's room is animated: left to fade out, it narrowed the content long
            // enough for the heading to wrap and the bar to be needed again. Ended at once.
            ui.ctx().animate_bool_with_time(id.with("v"), false, 0.0);
        }
    }
    if let Some(y) = keep_offset {
        scroll = scroll.vertical_scroll_offset(y);
    }
    // The Timeline grows as attempts come: its bar floats over the content rather than take
    // room from it, or the attempt that first made the tab scroll rewrapped the heading and
    // moved the table's columns sideways under the reader's eyes. (A bar's room kept from the
    // start wrapped the demo's heading at the default size.) Its content, and the areas in
    // it, keep the usual style.
    let style = ui.spacing().scroll;
    if app.state.detail_tab == DetailTab::Delivery {
        ui.spacing_mut().scroll = egui::style::ScrollStyle::floating();
    }
    // No taller than the room left under the header and the tabs: a scroll area keeps 64
    // points at least, and at zoom 2 (the tabs on two rows) that ran past the panel's foot,
    // which egui then moved up over the list's, its header hidden under the list.
    scroll
        .id_salt("detail_scroll")
        .auto_shrink([false, false])
        // The sideways bar inside that height: below it, it grew the panel (the tabs moved
        // under the pointer) and was drawn past the panel's foot, out of sight.
        .max_height(ui.available_height().max(0.0))
        .min_scrolled_height(
            (ui.available_height() - ui.spacing().scroll.allocated_width()).max(0.0),
        )
        .show(ui, |ui| match app.state.detail_tab {
            DetailTab::Messages => messages_ui(ui, &s, json.as_deref()),
            DetailTab::Json => json_tab_ui(ui, &s, json.as_deref()),
            DetailTab::Headers => headers_ui(ui, &s),
            DetailTab::Raw => {}
            DetailTab::Findings => findings_ui(ui, &s, &delivery_findings),
            DetailTab::Answer => {}
            DetailTab::Delivery => {
                ui.spacing_mut().scroll = style;
                let webhook = s.inv.webhook_id.as_deref();
                let clock = if app.from_builtin_emulator(webhook) {
                    Clock::Emulator(app.state.settings.emulator_speed)
                } else {
                    Clock::Other(app.state.settings.other_speed)
                };
                // A later attempt of it the receiver is holding now (a chosen delay): not
                // stored until answered, so the delivery would read overdue meanwhile.
                let held = s.inv.delivery.as_ref().and_then(|d| {
                    app.state
                        .held
                        .iter()
                        .rev()
                        .find(|h| h.delivery.as_ref() == Some(d))
                });
                if let Some(speed) = delivery_ui(ui, app.state.delivery.as_deref(), &s, clock, held)
                {
                    app.state.settings.other_speed = speed;
                    if let Some(d) = s.inv.delivery.clone() {
                        app.load_delivery(d, s.inv.webhook_id.clone());
                    }
                }
            }
        });
    ui.spacing_mut().scroll = style;
}

/// The Timeline's heading in the colour of the last outcome, a split batch's messages under
/// it, and the line that names the delivery.
fn delivery_heading(
    ui: &mut egui::Ui,
    d: &crate::deliveries::Delivery,
    heading: String,
    last_outcome: Option<crate::contract::Outcome>,
    now: chrono::DateTime<chrono::Utc>,
) {
    let dark = ui.visuals().dark_mode;
    // A date in it kept on one line ("until 26 / Nov 18:52" had broken at 1280 x 800), and a
    // number with its unit ("(in 9 / s)" at zoom 2); read out, and found, with its plain
    // spaces.
    let glued = crate::text::glue_units(&crate::text::glue_dates(&heading));
    let label =
        ui.label(RichText::new(glued).strong().size(16.0).color(
            last_outcome.map_or(ui.visuals().text_color(), |o| super::outcome_color(o, dark)),
        ));
    label.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, &heading));
    if let crate::deliveries::State::Split { parts, .. } = &d.state {
        for (id, state) in parts {
            ui.label(format!(
                "• {id}: {}",
                crate::deliveries::part_state(state.as_ref(), now)
            ));
        }
    }
    let planned = d.projection.as_ref().is_some_and(|p| !p.retries.is_empty());
    // An id of thousands of characters (a hostile header) cut, with how much is left: whole,
    // it filled the tab and pushed the timeline out of sight.
    let id =
        |text: &str| crate::text::single_line(&crate::text::cut_chars(text, ID_CHARS)).into_owned();
    ui.weak(format!(
        "Delivery {} {}: {} seen.{}",
        id(&d.delivery),
        d.webhook_id
            .as_deref()
            .map_or("(no webhook id header)".into(), |w| format!(
                "of webhook {}",
                id(w)
            )),
        crate::text::count(d.attempts.len() as u64, "attempt", "attempts"),
        if planned {
            " Hollow marks are the retries the contract's schedule still plans."
        } else {
            ""
        }
    ));
}

/// What became of attempt `i` of delivery `d`: the last one is "discarded" when its
/// Retry-After left no retry in the window, as the Timeline's heading says.
fn attempt_fate(d: &crate::deliveries::Delivery, i: usize) -> super::list::Fate {
    let a = &d.attempts[i];
    super::list::Fate {
        outcome: a.outcome,
        unanswered: a.unanswered,
        discarded: i + 1 == d.attempts.len()
            && matches!(
                d.state,
                crate::deliveries::State::Discarded {
                    by_retry_after: true,
                    ..
                }
            ),
        registration_check: false,
    }
}

/// A delivery's attempts, one row each: its number, when it came, the gap before it, the
/// answer and what it meant.
fn attempts_grid(ui: &mut egui::Ui, d: &crate::deliveries::Delivery, speed: f64, dark: bool) {
    // Where the whole rows would run past the panel (1024 points with both side panels open),
    // the gaps are given on the clock they are read on alone, the header saying so: the
    // Outcome column had been cut to "Outc", its sideways bar under the last of 195 rows.
    let gaps: Vec<String> = d
        .attempts
        .iter()
        .map(|a| a.gap_text(speed).unwrap_or_else(|| "—".into()))
        .collect();
    let on_clock = d
        .attempts
        .iter()
        .any(|a| a.gap_text_short(speed) != a.gap_text(speed));
    let body = egui::TextStyle::Body;
    let widest =
        |texts: &mut dyn Iterator<Item = &str>| super::widest_text(ui, body.clone(), texts);
    let answers: Vec<String> = d.attempts.iter().map(|a| a.answer_text()).collect();
    let spacing = ui.spacing().item_spacing.x * 5.0;
    let fixed = widest(&mut ["Attempt", "000"].into_iter())
        + widest(&mut ["00:00:00.000"].into_iter())
        + widest(&mut answers.iter().map(String::as_str))
        + widest(&mut ["retry (other)", "retry (late)", "Outcome"].into_iter())
        + spacing;
    let short =
        on_clock && fixed + widest(&mut gaps.iter().map(String::as_str)) > ui.available_width();
    let gap_header = if short { "Gap (its clock)" } else { "Gap" };
    egui::Grid::new("attempts_grid")
        .striped(true)
        .num_columns(5)
        .show(ui, |ui| {
            for h in ["Attempt", "Arrived", gap_header, "Answer", "Outcome"] {
                ui.strong(h);
            }
            ui.end_row();
            for (i, a) in d.attempts.iter().enumerate() {
                let fate = attempt_fate(d, i);
                match a.number {
                    Some(n) => ui.label(n.to_string()),
                    None => ui.label("—").on_hover_text(NO_NUMBER_HOVER),
                };
                ui.label(
                    a.at.with_timezone(&chrono::Local)
                        .format("%H:%M:%S%.3f")
                        .to_string(),
                );
                if short {
                    // The real time on hover.
                    ui.label(a.gap_text_short(speed).unwrap_or_else(|| "—".into()))
                        .on_hover_text(gaps[i].as_str());
                } else {
                    ui.label(gaps[i].as_str());
                }
                // With the Retry-After that moved the next attempt, when the service honours it.
                ui.label(a.answer_text());
                ui.label(RichText::new(fate.word()).color(fate.color(dark)))
                    .on_hover_text(fate.hover());
                ui.end_row();
            }
        });
}

/// The Timeline's heading while the receiver holds the delivery's next attempt: `attempt 3
/// came at 14:03:05 and waits for its answer: 503 in 27 s (stored when answered)`.
fn held_heading(h: &crate::receiver::Held) -> String {
    format!(
        "{} came at {} and waits for its answer: {} (stored when answered)",
        h.attempt
            .map_or("a call".to_owned(), |n| format!("attempt {n}")),
        h.received_at
            .with_timezone(&chrono::Local)
            .format("%H:%M:%S"),
        h.countdown(std::time::Instant::now())
    )
}

/// The clock a delivery is read at.
#[derive(Clone, Copy)]
enum Clock {
    /// The built-in emulator's, at this speed.
    Emulator(f64),
    /// The speed a Hookscope emulator marked the calls with (built in or `hookscope emulate`).
    Marked(f64),
    /// Any other service's, at the speed chosen for them (1: the real service).
    Other(f64),
}

/// The speeds the Timeline offers for other services' deliveries.
const OTHER_SPEEDS: std::ops::RangeInclusive<f64> = 1.0..=1_000_000.0;

/// A speed typed in the Timeline's *Read at* field: a number from 1 to 1,000,000, its `x`
/// optional (`60`, `60x`, `1.5`, `1 000`). The error says what was typed and what is taken.
fn parse_speed(text: &str) -> Result<f64, String> {
    const TAKES: &str = "Read at takes a number from 1 (the real service) to 1,000,000";
    let refused = || match text.trim() {
        "" => TAKES.to_owned(),
        typed => format!(
            "\"{}\" is not a speed: {TAKES}",
            crate::text::single_line(typed)
        ),
    };
    match super::typed_number(text, &super::SPEED_UNITS) {
        Some(v) if OTHER_SPEEDS.contains(&v) => Ok(v),
        _ => Err(refused()),
    }
}

/// The Timeline tab; returns the clock speed the user chose for other services' deliveries.
fn delivery_ui(
    ui: &mut egui::Ui,
    d: Option<&crate::deliveries::Delivery>,
    s: &Stored,
    clock: Clock,
    held: Option<&crate::receiver::Held>,
) -> Option<f64> {
    let mut chosen = None;
    let Some(d) = d else {
        ui.label(if s.inv.delivery.is_some() {
            "Reading the delivery…"
        } else if s.inv.not_http() {
            "The HTTP layer refused this request before its headers could be read (Findings says why), so it belongs to no delivery and has no retry timeline. What arrived is in Raw body."
        } else if s.inv.registration_check {
            "A registration check is never retried: the service asks it once, before it accepts the URL, so it has no retry timeline."
        } else {
            "This call has no delivery header, so it belongs to no delivery and has no retry timeline."
        });
        return None;
    };
    // Another emulator's calls that say their clock's speed are read on it, whatever speed is
    // chosen for other services (the built-in emulator's retries follow its speed now; the
    // gaps before its calls are held to the speed each was made at all the same).
    let clock = match (clock, d.marked_speed) {
        (Clock::Other(_), Some(speed)) => Clock::Marked(speed),
        (clock, _) => clock,
    };
    let dark = ui.visuals().dark_mode;
    let now = chrono::Utc::now();
    if d.state.under_way() {
        // The countdown and the "now" line move with the clock, not only when a call arrives.
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_secs(1));
    }
    let last_outcome = d.heading_outcome();
    // A split batch: the heading, then each message on a line of its own.
    let heading = match &d.state {
        crate::deliveries::State::Split { messages, parts } => {
            crate::deliveries::split_heading(*messages, parts)
        }
        // Retrying, and the next attempt is here, its answer held back: not overdue.
        crate::deliveries::State::Retrying { .. } if let Some(h) = held => held_heading(h),
        state => state.describe(now),
    };
    // The heading and the line under it, never shorter than they have been for this delivery
    // at this width: a countdown ("in 8 min 6 s", then "in 7 min 59 s") or a new reading
    // ("discarded after the last retry", "succeeded on attempt 2") took them from two lines to
    // one and back, and everything under them jumped under the pointer every minute.
    // (A width that changes by a scroll bar's coming or going keeps it; a resize does not.)
    let tallest = ui.make_persistent_id(("timeline_heading", &d.delivery, &d.webhook_id));
    let width = ui.available_width();
    let kept = ui
        .data(|m| m.get_temp::<(f32, f32)>(tallest))
        .filter(|(w, _)| (w - width).abs() <= 2.0 * ui.spacing().scroll.allocated_width());
    let least = kept.map_or(0.0, |(_, h)| h);
    let shown = ui
        .scope(|ui| {
            ui.set_min_height(least);
            delivery_heading(ui, d, heading, last_outcome, now);
        })
        .response
        .rect
        .height();
    // Kept with the width it was measured at, so a slow resize does not carry it along.
    let keep = match kept {
        Some((w, h)) if shown <= h + 0.5 => (w, h),
        _ => (width, shown),
    };
    ui.data_mut(|m| m.insert_temp(tallest, keep));
    let planned = d.projection.as_ref().is_some_and(|p| !p.retries.is_empty());
    // The reading of the contract the projection rests on, a click away (not only on hover),
    // when there are retries to read: not under a delivery that succeeded at once. Folded: its
    // five lines had stood over every Timeline, pushing the attempts down to three rows at
    // 1024 x 768, in a demo as much as anywhere. Open or folded, it stays so for every delivery.
    if planned || d.attempts.len() > 1 {
        egui::CollapsingHeader::new(
            RichText::new("How the service retries (assumed where the contract is silent)").small(),
        )
        .id_salt("timeline_retry_rule")
        .default_open(false)
        .show(ui, |ui| {
            ui.label(RichText::new(crate::contract::SCHEDULE_RULE).small().weak());
        });
    }
    match clock {
        Clock::Emulator(speed) => {
            ui.weak(on_clock(
                "This webhook belongs to the built-in emulator, whose clock runs",
                speed,
            ));
            // Its clock changed along the way: the speeds its calls were made at, each gap read
            // at its own (only the last had been said, or none when that was the speed now).
            // What comes next is said only while retries are still to come (it had stayed on a
            // delivery long discarded).
            if d.speed_runs.len() > 1 {
                ui.weak(speed_runs_text(d, speed, planned));
            } else if let Some(made) = d.marked_speed.filter(|m| (m - speed).abs() > f64::EPSILON) {
                ui.weak(if planned {
                    format!(
                        "Its calls so far were made at {}, and their gaps are read at that speed; the retries still to come follow {} now.",
                        speed_text(made),
                        speed_text(speed)
                    )
                } else {
                    format!(
                        "Its calls were made at {}, and their gaps are read at that speed.",
                        speed_text(made)
                    )
                });
            }
        }
        Clock::Marked(speed) => {
            ui.weak(on_clock(
                "These calls came from Hookscope's emulator, whose clock ran",
                speed,
            ));
        }
        Clock::Other(speed) => {
            ui.horizontal_wrapped(|ui| {
                let l = ui.weak("Read at");
                let mut v = speed;
                // Said for this delivery, while the speed it kept is the one read at.
                let refusals = super::Refusals::default();
                let field = ui
                    .add(
                        egui::DragValue::new(&mut v)
                            .range(OTHER_SPEEDS)
                            .speed(1.0)
                            .max_decimals(2)
                            .suffix("x")
                            // Read once typed (Enter, or leaving the field), not at each key:
                            // "600" read the delivery again at 6 and 60 on the way.
                            .update_while_editing(false)
                            .custom_parser(refusals.parser(parse_speed)),
                    )
                    .labelled_by(l.id)
                    .on_hover_text(
                        "The speed of the service's clock: 1 for the real service, N for an emulator whose clock runs N times faster. The timeline is drawn on that clock. (Hookscope's own emulator names its speed in each call, and is read on it.)",
                    );
                if field.changed() {
                    chosen = Some(v);
                }
                let key = egui::Id::unique(("read_at_refused", &d.delivery, &d.webhook_id));
                let note = refusals.note(ui, key, &field, speed, &speed_text(speed));
                ui.weak("real time (1 for the real service, N for an emulator N times faster)");
                if let Some(note) = note {
                    ui.label(
                        RichText::new(note)
                            .color(super::severity_color(crate::contract::Severity::Warning, dark)),
                    );
                }
            });
            if let Some(hint) = d.speed_hint.filter(|h| (h / speed - 1.0).abs() > 0.2) {
                ui.horizontal_wrapped(|ui| {
                    let color = super::severity_color(crate::contract::Severity::Warning, dark);
                    ui.label(RichText::new(if hint > speed {
                        format!("These retries came about {} faster than the schedule read at {}: they follow a clock at about {}.", speed_text(hint / speed), speed_text(speed), speed_text(hint))
                    } else {
                        format!("These retries came about {} slower than the schedule read at {}: they follow a clock at about {}.", speed_text(speed / hint), speed_text(speed), speed_text(hint))
                    }).color(color));
                    if ui
                        .button(format!("Read at {}", speed_text(hint)))
                        .on_hover_text("For an emulator N times faster than real time, read its deliveries at N (kept for next time).")
                        .clicked()
                    {
                        chosen = Some(hint);
                    }
                });
            }
        }
    }
    let speed = match clock {
        Clock::Emulator(speed) | Clock::Marked(speed) | Clock::Other(speed) => speed,
    };
    // Timeline: from the first attempt to the end of the 2-day window.
    if let Some(first) = d.attempts.first() {
        let end = d.window_end;
        let mut marks: Vec<super::timeline::Mark> = d
            .attempts
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let fate = attempt_fate(d, i);
                super::timeline::Mark {
                    at: a.at,
                    filled: true,
                    color: fate.color(dark),
                    label: format!(
                        "attempt {} at {}: answered {}, {}",
                        a.number.map_or(NO_NUMBER.into(), |n| n.to_string()),
                        a.at.with_timezone(&chrono::Local).format("%H:%M:%S"),
                        a.status,
                        fate.word()
                    ),
                }
            })
            .collect();
        if let Some(plan) = &d.projection {
            marks.extend(plan.retries.iter().map(|r| super::timeline::Mark {
                at: r.at,
                filled: false,
                color: ui.visuals().weak_text_color(),
                label: format!(
                    "attempt {} expected at {}",
                    r.number,
                    r.at.with_timezone(&chrono::Local).format("%-d %b %H:%M:%S")
                ),
            }));
        }
        // On the emulator's own times when its calls carry them, whatever speed it ran at
        // when: a speed changed mid-delivery does not move the attempts made before.
        let scale = match (&d.clock, clock) {
            (Some(map), Clock::Emulator(_) | Clock::Marked(_)) => {
                super::timeline::Scale::Clock(map)
            }
            _ => super::timeline::Scale::Speed(speed),
        };
        // The end of a retry window only where one opened: a delivery whose answers were all
        // final (its first a success or a 4xx) never had one.
        let window = d.attempts.iter().any(|a| a.outcome.is_retry());
        super::timeline::timeline_ui(
            ui,
            first.at,
            end.max(first.at),
            scale,
            &marks,
            Some(now),
            window,
        );
    }
    // Sideways in its own scroll area when the panel is narrower than its five columns (a
    // large zoom): it had widened the detail panel, whose top edge then ran on into the
    // Answer panel.
    egui::ScrollArea::horizontal()
        .id_salt("attempts_sideways")
        .show(ui, |ui| attempts_grid(ui, d, speed, dark));
    for f in &d.findings {
        finding_ui(ui, f, dark);
    }
    chosen
}

/// `lead` ("…whose clock runs") and how fast, for a delivery drawn on an emulator's clock.
fn on_clock(lead: &str, speed: f64) -> String {
    if speed == 1.0 {
        format!("{lead} at real time.")
    } else {
        format!(
            "{lead} {} faster than real time: the timeline is drawn on its clock (its 90 s are {} here).",
            speed_text(speed),
            crate::text::human_duration(std::time::Duration::from_secs_f64(90.0 / speed))
        )
    }
}

/// The speeds a delivery's calls were made at, when the emulator's clock changed along the
/// way, and the one its retries follow now: `Its calls were made at 60x (attempts 1-5), then
/// 6000x (attempt 6): each gap is read on the clock it passed on; the retries
/// still to come follow 6000x.`
fn speed_runs_text(d: &crate::deliveries::Delivery, now: f64, planned: bool) -> String {
    let then = if planned {
        let changed = d
            .speed_runs
            .last()
            .is_some_and(|(last, _)| (last - now).abs() > f64::EPSILON);
        format!(
            "; the retries still to come follow {}{}",
            speed_text(now),
            if changed { " now" } else { "" }
        )
    } else {
        String::new()
    };
    format!(
        "Its calls were made at {}: each gap is read on the clock it passed on{then}.",
        d.speed_runs_words(),
    )
}

/// One finding: severity in its colour, the sentence, and the stable code.
/// One text laid out and wrapped as a whole: a long unbroken value in the sentence (a
/// 300-character event name) wraps inside the panel, where labels side by side lost its start.
fn finding_ui(ui: &mut egui::Ui, f: &crate::contract::Finding, dark: bool) {
    let style = ui.style().clone();
    let mut job = egui::text::LayoutJob::default();
    RichText::new(f.severity.as_str().to_uppercase())
        .strong()
        .color(super::severity_color(f.severity, dark))
        .append_to(
            &mut job,
            &style,
            egui::FontSelection::Default,
            egui::Align::Center,
        );
    RichText::new(format!(" {} ", crate::app::in_window_words(&f.message))).append_to(
        &mut job,
        &style,
        egui::FontSelection::Default,
        egui::Align::Center,
    );
    RichText::new(format!("({})", f.code))
        .color(ui.visuals().weak_text_color())
        .append_to(
            &mut job,
            &style,
            egui::FontSelection::Default,
            egui::Align::Center,
        );
    super::split_directions(ui.ctx(), &mut job);
    ui.add(egui::Label::new(job).wrap());
}

/// A value as a cell or a line shows it: at most [`SHOWN_CHARS`] characters, so a body of a
/// megabyte in one string is not laid out whole on every frame (the Raw body tab has it).
/// A field's text for a cell of the Messages table: at most [`SHOWN_CHARS`] characters, on one
/// line (a line break in a message's text reads `\n`).
fn shown(text: &str) -> String {
    match crate::text::head_chars(text, SHOWN_CHARS) {
        (whole, 0) => crate::text::single_line(whole).into_owned(),
        (head, rest) => format!(
            "{}… ({rest} more characters)",
            crate::text::single_line(head)
        ),
    }
}

const SHOWN_CHARS: usize = 2000;

/// The most of a delivery or webhook id the Timeline's line under its heading shows.
const ID_CHARS: usize = 120;

/// A message's field at `path`, borrowed when it is a string (it may be megabytes long).
fn field<'a>(v: &'a Value, path: &[&str]) -> std::borrow::Cow<'a, str> {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(next) => cur = next,
            None => return "—".into(),
        }
    }
    match cur {
        Value::String(s) => s.as_str().into(),
        Value::Null => "null".into(),
        other => other.to_string().into(),
    }
}

/// The Messages table's columns: title, the field's path, designed and narrowest widths.
const MESSAGE_COLUMNS: [(&str, &[&str], f32, f32); 9] = [
    ("Status", &["status", "id"], 150.0, 60.0),
    ("From", &["from"], 110.0, 56.0),
    ("To", &["to"], 110.0, 56.0),
    // A body cut under 140 points ("Hooksco…") says nothing: the other columns step aside
    // first.
    ("Body", &["body"], 230.0, 140.0),
    ("Type", &["type"], 75.0, 40.0),
    ("Parts", &["numberOfParts"], 45.0, 36.0),
    ("Credits", &["creditCost"], 55.0, 40.0),
    ("Submitted", &["submission", "date"], 170.0, 56.0),
    ("Message id", &["id"], 170.0, 50.0),
];

/// The Messages table's body and date columns (indices into its list).
const BODY: usize = 3;
const SUBMITTED: usize = 7;
/// The least width the body is given up to when only the columns kept whole are left beside it.
const BODY_FLOOR: f32 = 80.0;

/// The Messages table's columns (indices into its list) that step aside first when the panel is
/// too narrow for all of them at their narrowest. The id, kept whole or not at all (cut short,
/// an opaque id is no use), goes before the short Type and the date: its room lets the body
/// show more.
const DROPPED_FIRST: [usize; 5] = [5, 6, 8, 4, 7];

fn messages_ui(ui: &mut egui::Ui, s: &Stored, json: Option<&Value>) {
    let Some(Value::Array(items)) = json else {
        // An empty body is not "not JSON" to a reader: there is nothing there at all.
        if s.inv.body.is_empty() {
            ui.label("The call has no body, so no messages (a GET, or a POST with nothing in it).");
        } else if let (None, Some(f)) = (json, unreadable_json(s)) {
            // Well-formed, as the JSON and Findings tabs say: not "not an array".
            let text = format!("{} See the Raw body tab.", f.message);
            ui.label(super::bidi_safe(ui, text.into()));
        } else {
            ui.label(
                "The body is not a JSON array of messages; see the Raw body and Findings tabs.",
            );
        }
        return;
    };
    if items.is_empty() {
        ui.label(if s.inv.registration_check {
            "An empty array: this is the registration check the service makes before it accepts a URL."
        } else {
            "An empty array: no messages in this call."
        });
        return;
    }
    // What a reader looks for first comes first; the widths shrink together to the panel's, so
    // every column is in sight (a cut cell shows the whole value on hover).
    // A status, a phone number, a type, a date or an id cut short is no use to read
    // ("+27001…", "RECEIV…", "2026-11…", "10000…"): these columns keep room for their longest
    // value (FAILED.HANDSET_ERROR, an international number, RECEIVED, a timestamp, a message
    // id), up to a limit, and step aside whole rather than be cut.
    const WHOLE: [usize; 6] = [0, 1, 2, 4, 7, 8];
    let whole_width: Vec<(usize, f32)> = WHOLE
        .iter()
        .map(|&i| {
            let values: Vec<_> = items
                .iter()
                .take(50)
                .map(|m| field(m, MESSAGE_COLUMNS[i].1))
                .collect();
            // The text and the cell's own margins; a hostile value is measured by its head only.
            let widest = super::widest_text(
                ui,
                egui::TextStyle::Body,
                values.iter().map(|v| crate::text::head_chars(v, 40).0),
            );
            (i, (widest + 12.0).min(220.0))
        })
        .collect();
    // The columns shown: all where they fit at their narrowest; in a narrow panel (or at a
    // large zoom) the ones a reader needs least step aside first (the JSON tab has them).
    let spacing = ui.spacing().item_spacing.x;
    let room = ui.available_width();
    // Never narrower than its title ("Submit…" and "Messa…" had been cut while the body had
    // room to spare): a column that cannot have that steps aside, named above the table.
    let titles: Vec<f32> = MESSAGE_COLUMNS
        .iter()
        .map(|c| super::widest_text(ui, egui::TextStyle::Body, [c.0]) + 12.0)
        .collect();
    let least_of = |i: usize| {
        let whole = whole_width.iter().find(|(w, _)| *w == i).map(|(_, w)| *w);
        MESSAGE_COLUMNS[i]
            .3
            .max(whole.unwrap_or(0.0))
            .max(titles[i])
    };
    // A gap after every column, and one more for the scroll area's edge.
    let needed = |cols: &[usize]| -> f32 {
        cols.iter().map(|&i| least_of(i) + spacing).sum::<f32>() + 2.0 * spacing
    };
    let shown_cols = super::columns_shown(MESSAGE_COLUMNS.len(), &DROPPED_FIRST, |cols| {
        needed(cols) <= room
    });
    // Too narrow even for the four kept whole (a large zoom with both side panels open): the
    // body, which no column is left to make room for, gives up some of its least width first,
    // down to BODY_FLOOR (at 1024 points the table had scrolled sideways for a few points);
    // past that the table scrolls sideways, as the list does, rather than cut them.
    let over = needed(&shown_cols) - room;
    let body_give = if over > 0.0 && shown_cols.contains(&BODY) {
        over.min((least_of(BODY) - BODY_FLOOR).max(0.0))
    } else {
        0.0
    };
    let least_of = |i: usize| least_of(i) - if i == BODY { body_give } else { 0.0 };
    let sideways = over - body_give > 0.5;
    let room = room.max(needed(&shown_cols) - body_give);
    // A column kept whole is designed as wide as its widest value: room it would not use is
    // the body's to show more (a short "To" had kept 40 points of blank while the body read
    // "Your par…").
    let designed: Vec<f32> = shown_cols
        .iter()
        .map(|&i| match whole_width.iter().find(|(w, _)| *w == i) {
            Some(_) => least_of(i),
            None => MESSAGE_COLUMNS[i].2,
        })
        .collect();
    let least: Vec<f32> = shown_cols.iter().map(|&i| least_of(i)).collect();
    let gaps = spacing * (shown_cols.len() + 2) as f32;
    let widths = super::fit_columns(&designed, &least, room - gaps);
    if shown_cols.len() < MESSAGE_COLUMNS.len() {
        let hidden: Vec<&str> = (0..MESSAGE_COLUMNS.len())
            .filter(|i| !shown_cols.contains(i))
            .map(|i| MESSAGE_COLUMNS[i].0)
            .collect();
        ui.weak(format!(
            "{} left out to fit the panel: the JSON tab has every field.",
            hidden.join(", ")
        ));
    }
    // The built-in emulator dates its messages by its own clock: at 60x a message submitted a
    // minute ago reads as an hour ago, and its status dates run ahead of this machine's. Said
    // where the table shows a date.
    if let Some(speed) = crate::deliveries::marked_speed(std::slice::from_ref(s))
        && speed > 1.0
        && shown_cols.contains(&SUBMITTED)
    {
        ui.weak(format!(
            "Dated by the emulator's clock, which runs at {}: its dates are ahead of this machine's.",
            speed_text(speed)
        ));
    }
    if sideways {
        egui::ScrollArea::horizontal()
            .id_salt("messages_sideways")
            .show(ui, |ui| {
                ui.set_width(room);
                messages_table(ui, items, &shown_cols, &widths, &least);
            });
    } else {
        messages_table(ui, items, &shown_cols, &widths, &least);
    }
}

/// The Messages tab's table: the columns `shown` (indices into `MESSAGE_COLUMNS`) at `widths`.
fn messages_table(
    ui: &mut egui::Ui,
    items: &[Value],
    shown_cols: &[usize],
    widths: &[f32],
    least: &[f32],
) {
    let table = TableBuilder::new(ui)
        // Laid out afresh when the columns' fitted widths change (the panel's width, or a
        // status that needs more room than the last table's: FAILED.HANDSET_ERROR after
        // SENT.null kept SENT.null's width and was cut).
        .id_salt((
            "messages_table",
            widths.iter().map(|w| (*w / 8.0) as i32).collect::<Vec<_>>(),
        ))
        .striped(true)
        .resizable(true)
        .vscroll(false);
    let table = widths.iter().zip(least).fold(table, |t, (w, l)| {
        t.column(Column::initial(*w).at_least(l.min(36.0)).clip(true))
    });
    table
        .header(20.0, |mut h| {
            for &i in shown_cols {
                h.col(|ui| {
                    ui.strong(MESSAGE_COLUMNS[i].0);
                });
            }
        })
        // Only the rows in the detail's sight are laid out (the table reads the clip of the
        // scroll area around it): every message of a call is listed, however many, where a
        // thousand laid out on every frame had taken 22 ms a frame.
        .body(|body| {
            body.rows(18.0, items.len(), |mut row| {
                let m = &items[row.index()];
                for path in shown_cols.iter().map(|&i| MESSAGE_COLUMNS[i].1) {
                    row.col(|ui| {
                        // A value cut to the column's width shows whole on hover (egui's
                        // own tooltip for elided text: a second one would stack on it).
                        let text = super::bidi_safe(ui, shown(&field(m, path)).into());
                        ui.add(egui::Label::new(text).truncate());
                    });
                }
            });
        });
}

/// The finding of a body that is well-formed JSON but cannot be read as data (nested past 128
/// levels...): not "not JSON", and the finding says what it is.
fn unreadable_json(s: &Stored) -> Option<&crate::contract::Finding> {
    s.inv
        .findings
        .iter()
        .find(|f| f.code == "body-json-unreadable")
}

fn json_tab_ui(ui: &mut egui::Ui, s: &Stored, json: Option<&Value>) {
    match (json, unreadable_json(s)) {
        (Some(v), _) => crate::app::json_view::json_ui(ui, v),
        (None, Some(f)) => {
            let text = format!("{} See the Raw body tab.", f.message);
            ui.label(super::bidi_safe(ui, text.into()));
        }
        (None, None) if s.inv.body.is_empty() => {
            ui.label("The call has no body: there is no JSON to show.");
        }
        (None, None) => {
            ui.label("The body is not JSON; see the Raw body tab.");
        }
    }
}

fn headers_ui(ui: &mut egui::Ui, s: &Stored) {
    egui::Grid::new("headers_grid")
        .striped(true)
        .num_columns(2)
        .show(ui, |ui| {
            ui.strong("Header");
            ui.strong("Value");
            ui.end_row();
            for h in &s.inv.headers {
                ui.label(RichText::new(crate::text::single_line(&h.name)).monospace());
                let mut v = crate::text::single_line(&h.value).into_owned();
                if let Some(hex) = &h.bytes_hex {
                    v.push_str(&format!("   (not UTF-8; bytes {hex})"));
                }
                ui.label(super::bidi_safe(ui, RichText::new(v).monospace()));
                ui.end_row();
            }
        });
    if s.inv.not_http() {
        ui.label("None read: the HTTP layer refused the request. Its bytes, head included, are in Raw body.");
    } else if s.inv.headers.is_empty() {
        ui.label("The call had no headers.");
    }
    ui.add_space(6.0);
    ui.weak(format!(
        "From {} · query {} · received {}",
        s.inv.peer.as_deref().unwrap_or("an address not known"),
        s.inv.query.as_deref().unwrap_or("none"),
        s.inv
            .received_at
            .with_timezone(&chrono::Local)
            .format("%Y-%m-%d %H:%M:%S%.3f")
    ));
}

/// The fewest characters on one row of the Raw body tab, however narrow the panel (a longer
/// line continues on the next row).
const RAW_ROW_CHARS: usize = 40;

/// How many monospace characters fit on a row `width` points wide, in steps of 10 (dragging a
/// panel's edge cuts the rows again only now and then), never under [`RAW_ROW_CHARS`].
fn raw_row_chars(width: f32, char_width: f32) -> usize {
    if char_width.is_nan() || char_width <= 0.0 || !width.is_finite() {
        return RAW_ROW_CHARS;
    }
    let fits = (width / char_width).floor().max(0.0) as usize;
    (fits / 10 * 10).max(RAW_ROW_CHARS)
}

/// How many bytes a line of the Raw body tab's hex dump shows when `per_row` characters fit:
/// 16 as `show` prints them, or 8 where those would run past the panel.
fn hex_bytes_per_line(per_row: usize) -> usize {
    if per_row >= crate::cli::hex_line(0, &[], 16).len() + 16 {
        16
    } else {
        8
    }
}

/// The rows of `text` as the Raw body tab shows them: byte ranges of its lines (without their
/// line break), each cut into rows of at most `per_row` columns of the monospace font.
/// Characters are counted by the room they take ([`shown_columns`]), not one each: a Hebrew
/// text's vowel points, which take none, had cut its rows at half the panel, and an emoji's
/// two columns had run a row of them past it.
fn text_rows(text: &str, per_row: usize) -> Vec<std::ops::Range<usize>> {
    let per_row = per_row.max(1);
    let mut rows = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let shown = line.trim_end_matches(['\n', '\r']);
        let mut start = offset;
        let (mut used, mut chars) = (0, 0);
        for (i, c) in shown.char_indices() {
            let w = shown_columns(c);
            // A mark that takes no room stays with the letter before it; but a row holds at
            // most four characters a column, so that a body of zero-width characters (a
            // hostile one) is not one row of megabytes laid out whole.
            if (used > 0 && used + w > per_row) || chars >= 4 * per_row {
                rows.push(start..offset + i);
                start = offset + i;
                (used, chars) = (0, 0);
            }
            used += w;
            chars += 1;
        }
        rows.push(start..offset + shown.len());
        offset += line.len();
    }
    rows
}

/// How many monospace columns `c` takes in the Raw body tab: none for a combining mark or a
/// zero-width character, two for a wide one (an emoji, a Chinese character), a tab's four, and
/// a control character's escape (`\u{1b}`, as [`crate::text::shown_controls`] writes it).
fn shown_columns(c: char) -> usize {
    use unicode_width::UnicodeWidthChar;
    match c {
        '\t' => 4,
        c if crate::text::risky(c) => {
            let digits = (32 - (c as u32).leading_zeros()).div_ceil(4).max(1) as usize;
            digits + "\\u{}".len()
        }
        c => c.width().unwrap_or(0),
    }
}

/// What the body tabs say of a body refused for its size: it was not kept, only counted.
fn not_kept_sentence(inv: &crate::store::Invocation) -> String {
    let size = crate::text::human_size(inv.body_size);
    let size = match inv.declared_size {
        Some(d) if d > inv.body_size => {
            format!("declared {}, {size} arrived", crate::text::human_size(d))
        }
        _ => size,
    };
    format!(
        "The body ({size}) was over the body limit: it was answered {} and not kept, so there is nothing to show here. Raise the limit with Body limit in Settings to keep bodies this large.",
        inv.answer.status
    )
}

/// The Raw body tab's rows of the text body in sight (see [`text_rows`]).
type RawRows = std::sync::Arc<Vec<std::ops::Range<usize>>>;

/// Where the rows of the body in sight are kept, with the body's id and the width they are for.
fn raw_rows_key() -> egui::Id {
    egui::Id::unique("raw_rows")
}

/// The body whole, text or hex dump, in a scroll area that lays out only the rows in sight:
/// a body of megabytes costs the rows on screen, not a galley of millions of glyphs. It is
/// `height` points tall.
fn raw_ui(
    ui: &mut egui::Ui,
    id: impl std::hash::Hash + std::fmt::Debug + Copy,
    body: &[u8],
    height: f32,
) {
    if body.is_empty() {
        ui.label("(empty body)");
        return;
    }
    let text = std::str::from_utf8(body).ok();
    // Rows as wide as the panel (less its scroll bar), so no line runs on past its edge.
    let font = egui::TextStyle::Monospace.resolve(ui.style());
    let ten = ui
        .painter()
        .layout_no_wrap("0123456789".into(), font, egui::Color32::WHITE)
        .size()
        .x;
    let bar = ui.spacing().scroll.allocated_width();
    let per_row = raw_row_chars(ui.available_width() - bar, ten / 10.0);
    // The rows of a text body, worked out once per call and width (a pass over the whole body),
    // and kept for the body in sight only: kept for every body opened, a session of bodies of
    // megabytes held all their rows until the window closed.
    let rows: RawRows = match text {
        Some(t) => {
            let body_id = egui::Id::unique(id);
            match ui.data(|d| d.get_temp::<(egui::Id, usize, RawRows)>(raw_rows_key())) {
                Some((of, width, rows)) if of == body_id && width == per_row => rows,
                _ => {
                    let rows = std::sync::Arc::new(text_rows(t, per_row));
                    ui.data_mut(|d| {
                        d.insert_temp(raw_rows_key(), (body_id, per_row, rows.clone()))
                    });
                    rows
                }
            }
        }
        None => std::sync::Arc::new(Vec::new()),
    };
    // A hex dump's 16 bytes a line take 75 characters; a narrower panel gets 8 (43).
    let per_line = hex_bytes_per_line(per_row);
    let count = match text {
        Some(_) => rows.len(),
        None => body.len().div_ceil(per_line),
    };
    let row_height = ui.text_style_height(&egui::TextStyle::Monospace);
    egui::ScrollArea::both()
        .id_salt(("raw_scroll", id))
        .auto_shrink([false, false])
        .max_height(height)
        .min_scrolled_height(height)
        .show_rows(ui, row_height, count, |ui, range| {
            for i in range {
                let line = match text {
                    Some(t) => crate::text::shown_controls(&t[rows[i].clone()]).into_owned(),
                    None => {
                        let start = i * per_line;
                        let end = (start + per_line).min(body.len());
                        crate::cli::hex_line(start, &body[start..end], per_line)
                    }
                };
                ui.add(
                    egui::Label::new(RichText::new(line).monospace())
                        .selectable(true)
                        .extend(),
                );
            }
        });
}

fn findings_ui(ui: &mut egui::Ui, s: &Stored, delivery: &[crate::contract::Finding]) {
    let dark = ui.visuals().dark_mode;
    if s.inv.findings.is_empty() && delivery.is_empty() {
        ui.label("No findings: the call keeps to the contract.");
        return;
    }
    if s.inv.findings.is_empty() {
        ui.label("The call on its own keeps to the contract.");
    }
    call_findings_ui(ui, s.id, &s.inv.findings, dark);
    if !delivery.is_empty() {
        ui.add_space(6.0);
        ui.strong("Across its delivery (all its attempts, as in the Timeline tab)");
        for f in delivery {
            finding_ui(ui, f, dark);
        }
    }
}

/// A call's own findings: all of them when they are few; more than a page, what kinds they are
/// and how many of each, then a page of them at a time with the buttons to move between pages
/// (above the page and again below it, which brings the new page's head into sight).
fn call_findings_ui(
    ui: &mut egui::Ui,
    call: i64,
    findings: &[crate::contract::Finding],
    dark: bool,
) {
    use crate::app::state::FINDINGS_PAGE;
    if findings.len() <= FINDINGS_PAGE {
        for f in findings {
            finding_ui(ui, f, dark);
        }
        return;
    }
    let pages = findings.len().div_ceil(FINDINGS_PAGE);
    let key = egui::Id::unique(("findings_page", call));
    let mut page = ui
        .data(|d| d.get_temp::<usize>(key))
        .unwrap_or(0)
        .min(pages - 1);
    // Counted once for the call in sight (and its findings as many as they are: a note added
    // to it counts again), not on every frame: a pass over 16,000 findings.
    type Summary = ((i64, usize), std::sync::Arc<Vec<String>>);
    let summary_key = egui::Id::unique("findings_summary");
    let of_call = (call, findings.len());
    let summary = match ui.data(|d| d.get_temp::<Summary>(summary_key)) {
        Some((of, lines)) if of == of_call => lines,
        _ => {
            let lines = std::sync::Arc::new(findings_summary(findings));
            ui.data_mut(|d| d.insert_temp(summary_key, (of_call, lines.clone())));
            lines
        }
    };
    for line in summary.iter() {
        ui.label(line.as_str());
    }
    let nav = |ui: &mut egui::Ui, page: &mut usize| {
        let first = *page * FINDINGS_PAGE;
        let last = (first + FINDINGS_PAGE).min(findings.len());
        let mut moved = false;
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(*page > 0, egui::Button::new("Previous"))
                .clicked()
            {
                *page -= 1;
                moved = true;
            }
            if ui
                .add_enabled(*page + 1 < pages, egui::Button::new("Next"))
                .clicked()
            {
                *page += 1;
                moved = true;
            }
            ui.label(format!("{}–{last} of {}", first + 1, findings.len()));
        });
        moved
    };
    let top = ui.cursor().min;
    nav(ui, &mut page);
    let first = page * FINDINGS_PAGE;
    for f in &findings[first..(first + FINDINGS_PAGE).min(findings.len())] {
        finding_ui(ui, f, dark);
    }
    ui.add_space(4.0);
    if nav(ui, &mut page) {
        // The new page from its head: the buttons above it, in sight.
        let at = egui::Rect::from_min_size(top, egui::vec2(1.0, 1.0));
        ui.scroll_to_rect(at, Some(egui::Align::TOP));
    }
    ui.data_mut(|d| d.insert_temp(key, page));
}

/// For a call whose findings take more than a page: how many, and the most frequent kinds of
/// them with how many of each ("2000 × Message … has no "encoding" field."), the message's
/// number left out so that the same finding about each message counts as one kind.
fn findings_summary(findings: &[crate::contract::Finding]) -> Vec<String> {
    const KINDS: usize = 5;
    let mut kinds: Vec<(String, usize)> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for f in findings {
        let kind = finding_kind(&f.message);
        match index.get(&kind) {
            Some(&at) => kinds[at].1 += 1,
            None => {
                index.insert(kind.clone(), kinds.len());
                kinds.push((kind, 1));
            }
        }
    }
    // Most frequent first; a tie keeps the order the kinds came in.
    kinds.sort_by_key(|k| std::cmp::Reverse(k.1));
    let mut lines = vec![format!(
        "{} findings, shown {} at a time. The most frequent:",
        findings.len(),
        crate::app::state::FINDINGS_PAGE
    )];
    for (kind, n) in kinds.iter().take(KINDS) {
        lines.push(format!("{n} × {}", crate::app::in_window_words(kind)));
    }
    if kinds.len() > KINDS {
        let others: usize = kinds[KINDS..].iter().map(|(_, n)| n).sum();
        lines.push(format!(
            "and {} more, of {} other kinds",
            others,
            kinds.len() - KINDS
        ));
    }
    lines
}

/// A finding's sentence with the number of the message it names left out: `Message 12 has no
/// "encoding" field.` is `Message … has no "encoding" field.`
fn finding_kind(message: &str) -> String {
    match message.strip_prefix("Message ") {
        Some(rest) => {
            let number = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if number > 0 {
                format!("Message …{}", &rest[number..])
            } else {
                message.to_owned()
            }
        }
        None => message.to_owned(),
    }
}

/// What was answered: its code and meaning, when, chosen by what, its headers, then its body
/// with its size, laid out a row in sight at a time as the Raw body tab's (a body file of
/// megabytes had been one label, laid out whole on every frame).
fn answer_sent_ui(ui: &mut egui::Ui, s: &Stored) {
    let a = &s.inv.answer;
    // Never taller than the room left, however short (a scroll area keeps 64 points unless
    // told, which at zoom 2 ran past the panel's foot and pushed the panel up under the list).
    let room = ui.available_height().max(0.0);
    let line = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
    let heading = |ui: &mut egui::Ui| {
        ui.strong(format!(
            "Body ({})",
            crate::text::human_size(a.body.len() as u64)
        ));
    };
    if a.body.is_empty() || room < 8.0 * line {
        // No body, or too little room to share (a large zoom on a laptop): one scroll area,
        // the sentences first, then the body, in a box as tall as its rows when they are a
        // few hundred or fewer, so it scrolls with the rest rather than inside a keyhole of
        // a line and a half; a longer one in a box as tall as the room.
        let rows = match std::str::from_utf8(&a.body) {
            Ok(text) => text.lines().count().max(1),
            Err(_) => a.body.len().div_ceil(8),
        };
        let row = ui.text_style_height(&egui::TextStyle::Monospace) + ui.spacing().item_spacing.y;
        let bar = ui.spacing().scroll.allocated_width();
        let body_height = if rows <= 300 {
            rows as f32 * row + bar
        } else {
            room
        };
        egui::ScrollArea::vertical()
            .id_salt("answer_sent")
            .auto_shrink([false, false])
            .max_height(room)
            .min_scrolled_height(room)
            .show(ui, |ui| {
                answer_head_ui(ui, s);
                if !a.body.is_empty() {
                    heading(ui);
                    raw_ui(ui, ("answer", s.id), &a.body, body_height);
                }
            });
        return;
    }
    // The sentences take at most half the room and scroll on their own past it; the body,
    // under its heading, takes the rest.
    egui::ScrollArea::vertical()
        .id_salt("answer_head")
        .auto_shrink([false, true])
        .max_height(room / 2.0)
        .min_scrolled_height(room / 2.0)
        .show(ui, |ui| answer_head_ui(ui, s));
    heading(ui);
    let rest = ui.available_height().max(0.0);
    raw_ui(ui, ("answer", s.id), &a.body, rest);
}

fn answer_head_ui(ui: &mut egui::Ui, s: &Stored) {
    let a = &s.inv.answer;
    let fate = super::list::Fate::of_call(&s.inv);
    // A 200 the service never got in time is not a success: said before what it means.
    let head = if s.inv.not_http() && s.inv.unanswered().is_some() {
        s.inv.meaning().to_owned()
    } else if s.inv.unanswered().is_some() {
        format!("{}, not received in time: {}", a.status, s.inv.meaning())
    } else if fate.discarded {
        // Its code alone reads "retried on the schedule": the Retry-After leaves no retry.
        format!(
            "{}: not retried: its Retry-After reaches past the service's 2-day window, so the message is discarded",
            a.status
        )
    } else {
        format!("{}: {}", a.status, s.inv.meaning())
    };
    ui.label(
        RichText::new(head)
            .strong()
            .color(fate.color(ui.visuals().dark_mode)),
    );
    if let Some(why) = s.inv.unanswered()
        && !s.inv.not_http()
    {
        ui.label(format!(
            "No answer for the service: {why}. {}",
            crate::store::unanswered_consequence(s.inv.registration_check)
        ));
    }
    ui.label(format!("Answer {}", s.inv.answer_timing()));
    if let Some(rule) = &s.inv.rule {
        ui.label(format!("Chosen by: {rule}"));
    }
    let retry_after_note = s.inv.retry_after_note();
    for (n, v) in &a.headers {
        let note = retry_after_note.filter(|_| n.eq_ignore_ascii_case("retry-after"));
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("{n}: {v}")).monospace());
            if let Some(note) = note {
                ui.weak(format!("({note})"));
            }
        });
    }
    if let Some(why) = crate::receiver::no_body_sent(&s.inv.method, a.status) {
        // Not a body lost: none is sent, whatever was chosen.
        ui.weak(format!("No body: {why}."));
    }
}

/// Text quoted for bash and zsh: in plain quotes, or, when it holds a control character or an
/// invisible direction mark (a payload's ESC or U+202E, which a terminal would act on or
/// which would reorder the command as shown), in `$'...'` with those written as `\xHH`
/// bytes: pasted, the command shows what it sends and sends the same bytes.
fn sh_quote(s: &str) -> String {
    if !s.chars().any(|c| crate::text::risky(c) && c != '\n') {
        return format!("'{}'", s.replace('\'', "'\\''"));
    }
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\'' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            c if crate::text::risky(c) => {
                let mut utf8 = [0; 4];
                for b in c.encode_utf8(&mut utf8).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// Quote bytes that are not UTF-8 for bash and zsh (`$'...'`), each such byte as `\xHH`.
fn sh_quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("$'");
    for &b in bytes {
        match b {
            b'\'' | b'\\' => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('\'');
    out
}

/// The largest body Copy as curl puts on the command line itself.
const INLINE_BODY: usize = 64 * 1024;

/// A curl command that sends the call again to `base` (the receiver).
pub fn curl_command(s: &Stored, base: &str) -> String {
    let inv = &s.inv;
    let mut url = format!("{base}{}", inv.path);
    if let Some(q) = &inv.query {
        url.push('?');
        url.push_str(q);
    }
    let mut parts = vec![
        "curl".to_owned(),
        "-X".to_owned(),
        inv.method.clone(),
        sh_quote(&url),
    ];
    for h in &inv.headers {
        let name = h.name.to_ascii_lowercase();
        // `Expect: 100-continue` is curl's own to send for a large body (copied, it made
        // curl wait for a go-ahead before a body it did not have).
        if matches!(
            name.as_str(),
            "host"
                | "content-length"
                | "connection"
                | "transfer-encoding"
                | "accept-encoding"
                | "expect"
        ) {
            continue;
        }
        parts.push("-H".to_owned());
        parts.push(match h.bytes_hex {
            // The exact bytes, not the text with U+FFFD in place of what is not UTF-8.
            Some(_) => sh_quote_bytes(&[format!("{}: ", h.name).as_bytes(), &h.bytes()].concat()),
            None => sh_quote(&format!("{}: {}", h.name, h.value)),
        });
    }
    if !inv.body_kept {
        // Sent again, it would be another request: the command says it lacks the body.
        let size = crate::text::human_size(inv.declared_size.unwrap_or(0).max(inv.body_size));
        return format!(
            "# The body ({size}) was over the body limit and not kept: this command sends none.\n{}",
            parts.join(" ")
        );
    }
    if inv.body.len() > INLINE_BODY {
        // One shell argument holds at most 128 KiB (Linux): a larger body goes through stdin,
        // as base64 in a here-document (any bytes, and no line of it can end the document).
        use base64::Engine as _;
        let encoded = base64::engine::general_purpose::STANDARD.encode(&inv.body);
        let lines: Vec<&str> = encoded
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap_or_default())
            .collect();
        return format!(
            "base64 -d <<'END-OF-BODY' | {} --data-binary @-\n{}\nEND-OF-BODY",
            parts.join(" "),
            lines.join("\n")
        );
    }
    if !inv.body.is_empty() {
        match std::str::from_utf8(&inv.body) {
            Ok(text) => {
                parts.push("--data-binary".to_owned());
                parts.push(sh_quote(text));
            }
            Err(_) => {
                let escaped: String = inv.body.iter().map(|b| format!("\\x{b:02x}")).collect();
                return format!("printf '{escaped}' | {} --data-binary @-", parts.join(" "));
            }
        }
    }
    parts.join(" ")
}

/// A curl command that sends the receiver at `base` a status report as the service would:
/// the contract's headers under `brand`, one delivered message, so it keeps to the contract.
pub fn sample_curl(base: &str, brand: &crate::contract::Brand) -> String {
    curl_command(
        &Stored {
            id: 0,
            inv: sample_call(brand),
        },
        base,
    )
}

fn sample_call(brand: &crate::contract::Brand) -> crate::store::Invocation {
    use crate::store::Header;
    let message = crate::contract::Message::sample_status_report("1000000000000000001");
    let body = serde_json::to_vec(&[message]).unwrap_or_default();
    let mut inv = crate::store::Invocation::synthetic(1, &body);
    inv.headers = vec![
        Header::new("Content-Type", b"application/json"),
        Header::new("User-Agent", brand.user_agent().as_bytes()),
        Header::new(brand.event_header(), b"status-report"),
        Header::new(brand.delivery_header(), b"dlv-sample-1"),
        Header::new(brand.attempt_header(), b"1"),
        Header::new(brand.webhook_id_header(), b"1"),
    ];
    inv
}

/// How many rows items `widths` wide take, in order, `gap` apart, wrapping where the next
/// would pass `room` (as egui's wrapping layout places them).
fn rows_needed(widths: &[f32], room: f32, gap: f32) -> usize {
    let mut rows = 0;
    let mut used = 0.0;
    for &w in widths {
        if rows == 0 || used + gap + w > room {
            rows += 1;
            used = w;
        } else {
            used += gap + w;
        }
    }
    rows
}

/// The detail's first line: what the call is on the left (its answer and what the service
/// makes of it first, cut with the whole on hover), the copy buttons on the right. Where the
/// buttons would cut the answer's words (a narrow panel, a large zoom), they fold into one
/// *Copy* menu.
fn header_ui(ui: &mut egui::Ui, app: &mut HookscopeApp, s: &Stored) {
    let mut copies: Vec<super::Copy<'_>> = Vec::new();
    if !s.inv.body_kept {
        // Nothing of the body was kept to copy (its tabs say why).
    } else if std::str::from_utf8(&s.inv.body).is_ok() {
        copies.push(super::Copy {
            label: "Copy body",
            hover: "Copy the request body as received",
            text: Box::new(|| String::from_utf8_lossy(&s.inv.body).into_owned()),
        });
    } else {
        // As text its bytes would be changed (to U+FFFD) without a word.
        copies.push(super::Copy {
            label: "Copy body (hex)",
            hover: "The body is not UTF-8 text: it is copied as its hex dump (Copy as curl sends the bytes exactly)",
            text: Box::new(|| crate::cli::hex_dump(&s.inv.body, usize::MAX)),
        });
    }
    // A request HTTP refused has no method and headers of its own to send again.
    if !s.inv.not_http() {
        let base = match &app.state.listening {
            Listening::On(addr) => format!("http://{addr}"),
            _ => "http://127.0.0.1:8787".to_owned(),
        };
        copies.push(super::Copy {
            label: "Copy as curl",
            hover: "A curl command that sends this call again to the receiver",
            text: Box::new(move || curl_command(s, &base)),
        });
    }
    let dark = ui.visuals().dark_mode;
    let fate = super::list::Fate::of_call(&s.inv);
    let answer = match s.inv.unanswered() {
        Some(_) if s.inv.not_http() => "not HTTP, not answered".to_owned(),
        Some(why) => format!("{}, no answer for the service: {why}", s.inv.answer.status),
        // The HTTP layer's own answer: the States table says nothing of it.
        None if s.inv.not_http() => {
            format!(
                "not HTTP, refused {} by the HTTP layer",
                s.inv.answer.status
            )
        }
        // A Retry-After past the window: no retry, as the Timeline and the list say.
        None if fate.discarded => format!(
            "answered {}: discarded (Retry-After past the 2-day window)",
            s.inv.answer.status
        ),
        None => format!("answered {}: {}", s.inv.answer.status, fate.outcome.label()),
    };
    // What matters most first: the answer and what the service makes of it, then the attempt;
    // the long path and delivery id last, where a narrow panel cuts.
    let mut parts = vec![
        RichText::new(format!("Call {}", s.id)).strong(),
        RichText::new(answer).color(fate.color(dark)),
    ];
    if let Some(a) = s.inv.attempt {
        parts.push(RichText::new(format!("attempt {a}")));
    }
    // Bytes with no request line: the answer's words already say "not HTTP".
    if !s.inv.method.is_empty() {
        let path = crate::text::head_chars(&s.inv.path, 200).0;
        let request = crate::store::request_phrase(&s.inv.method, path);
        parts.push(RichText::new(crate::text::single_line(&request)).monospace());
    }
    // A direction override in it reads as its escape, as in the Headers tab: hidden, it turned
    // the id around and a search for what was shown found nothing.
    let delivery = s.inv.delivery.as_deref().map(crate::text::single_line);
    let line = |ui: &egui::Ui, parts: &[RichText]| {
        let mut job = egui::text::LayoutJob::default();
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                RichText::new("  ").append_to(
                    &mut job,
                    ui.style(),
                    egui::FontSelection::Default,
                    egui::Align::Center,
                );
            }
            part.clone().append_to(
                &mut job,
                ui.style(),
                egui::FontSelection::Default,
                egui::Align::Center,
            );
        }
        job
    };
    // The call and its answer, whole, beside the buttons; or the buttons fold.
    let needed = ui.fonts_mut(|f| f.layout_job(line(ui, &parts[..2])).size().x);
    let spacing = ui.spacing().item_spacing.x;
    let buttons: f32 = copies
        .iter()
        .map(|c| super::copy_button_width(ui, c.label) + spacing)
        .sum();
    // Only where folding makes the room: an answer too long for the panel either way (a call
    // the service never got in time says why at length) keeps the buttons.
    let menu = super::copy_button_width(ui, "Copy") + spacing;
    let room = ui.available_width();
    let fold = copies.len() > 1 && room - buttons < needed && room - menu >= needed;
    // One line whatever the call, cut with the whole of it on hover: a header that wrapped
    // for some calls moved the tabs under the pointer from call to call.
    ui.horizontal(|ui| {
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if fold {
                super::copy_menu(ui, &mut app.state.copied, copies);
            } else {
                for c in copies {
                    super::copy_button(ui, &mut app.state.copied, c.label, c.hover, c.text);
                }
            }
            ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                // The delivery id, last, is cut at its front as in the list: its end is what
                // tells one delivery from the next ("dlv-2834765…" had read the same for all).
                // (Two points to spare: measured apart, the parts may add up a little wider
                // than the line, which egui would then cut at the id's end.)
                let mut cut_id = false;
                if let Some(d) = &delivery {
                    parts.push(RichText::new("delivery "));
                    let before = ui.fonts_mut(|f| f.layout_job(line(ui, &parts)).size().x);
                    parts.pop();
                    let font = egui::TextStyle::Body.resolve(ui.style());
                    let room = ui.available_width() - before - 2.0;
                    let id = super::list::elide_front(ui, d, &font, room);
                    cut_id = id != **d;
                    if id != "…" {
                        parts.push(RichText::new(format!("delivery {id}")));
                    }
                }
                let job = line(ui, &parts);
                let fits =
                    ui.fonts_mut(|f| f.layout_job(job.clone()).size().x) <= ui.available_width();
                let shown = ui.add(egui::Label::new(job).truncate());
                // The whole id on hover, where only it was cut (a line egui cuts has egui's
                // own hover with the whole line: a second would stack on it).
                if let Some(d) = delivery.as_deref().filter(|_| cut_id && fits) {
                    shown.on_hover_text(format!("delivery {d}"));
                }
            });
        });
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{Header, Invocation, SentAnswer};

    #[test]
    fn read_at_takes_a_speed_with_or_without_its_x_and_says_what_it_refuses() {
        for (typed, speed) in [
            ("60", 60.0),
            ("60x", 60.0),
            (" 1.5 ", 1.5),
            ("1 000", 1000.0),
            ("1", 1.0),
            ("1000000×", 1e6),
        ] {
            assert_eq!(parse_speed(typed), Ok(speed), "{typed}");
        }
        assert_eq!(
            parse_speed(" "),
            Err("Read at takes a number from 1 (the real service) to 1,000,000".to_owned())
        );
        for typed in ["0", "abc", "-5", "0.5", "2000000", "NaN", "inf"] {
            let e = parse_speed(typed).expect_err(typed);
            assert!(
                e.starts_with(&format!("\"{}\" is not a speed", typed.trim())),
                "{e}"
            );
            assert!(
                e.ends_with("a number from 1 (the real service) to 1,000,000"),
                "{e}"
            );
        }
    }

    #[test]
    fn items_wrap_where_the_next_would_pass_the_room() {
        assert_eq!(rows_needed(&[], 100.0, 8.0), 0);
        assert_eq!(rows_needed(&[100.0], 100.0, 8.0), 1);
        // 40 + 8 + 52 = 100 fits exactly; one more point does not.
        assert_eq!(rows_needed(&[40.0, 52.0], 100.0, 8.0), 1);
        assert_eq!(rows_needed(&[40.0, 53.0], 100.0, 8.0), 2);
        // An item wider than the room has a row of its own.
        assert_eq!(rows_needed(&[10.0, 150.0, 10.0], 100.0, 8.0), 3);
        // Closer together, the same items take fewer rows.
        // The tabs at 720 x 480 and zoom 1.3: buttons 8 points wider each, then 4.
        let tabs = [55.0, 80.0, 33.0, 50.0, 56.0, 55.0, 73.0];
        let at = |pad: f32| tabs.map(|t| t + 2.0 * pad);
        assert_eq!(rows_needed(&at(8.0), 285.0, 8.0), 3);
        assert_eq!(rows_needed(&at(4.0), 285.0, 4.0), 2);
    }

    #[test]
    fn a_long_value_is_shown_cut_with_what_is_left() {
        assert_eq!(shown("short"), "short");
        let long = "é".repeat(SHOWN_CHARS + 500);
        let cut = shown(&long);
        assert!(
            cut.ends_with("… (500 more characters)"),
            "{}",
            &cut[cut.len() - 40..]
        );
        assert_eq!(cut.chars().filter(|c| *c == 'é').count(), SHOWN_CHARS);
    }

    fn stored(body: &[u8]) -> Stored {
        Stored {
            id: 1,
            inv: Invocation {
                received_at: chrono::Utc::now(),
                method: "POST".into(),
                path: "/hook".into(),
                query: Some("secret=it's".into()),
                headers: vec![
                    Header::new("host", b"x"),
                    Header::new("x-service-event", b"status-report"),
                ],
                body: body.to_vec(),
                body_size: body.len() as u64,
                declared_size: None,
                body_kept: true,
                peer: None,
                event: None,
                delivery: None,
                attempt: None,
                webhook_id: None,
                messages: None,
                registration_check: false,
                findings: vec![],
                answer: SentAnswer::default(),
                took_us: 0,
                rule: None,
            },
        }
    }

    #[test]
    fn the_sample_call_keeps_to_the_contract_under_any_brand() {
        for word in ["Service", "Acme"] {
            let brand = crate::contract::Brand::new(word);
            let inv = sample_call(&brand);
            let pairs: Vec<(&str, &[u8])> = inv
                .headers
                .iter()
                .map(|h| (h.name.as_str(), h.value.as_bytes()))
                .collect();
            let v = crate::contract::validate(&brand, "POST", &pairs, &inv.body);
            assert!(v.findings.is_empty(), "{word}: {:?}", v.findings);
            let curl = sample_curl("http://127.0.0.1:1", &brand);
            assert!(curl.contains(&format!("-H '{}: status-report'", brand.event_header())));
        }
    }

    #[test]
    fn raw_rows_follow_the_lines_and_cut_long_ones() {
        let text = format!("ab\r\n\n{}é\nlast", "x".repeat(120));
        let rows: Vec<&str> = text_rows(&text, 60).into_iter().map(|r| &text[r]).collect();
        let long = "x".repeat(60);
        assert_eq!(rows, ["ab", "", long.as_str(), long.as_str(), "é", "last"]);
        assert_eq!(text_rows("é", 60).len(), 1);
        // Hebrew with its points: 60 letters to a row of 60 columns, each with its points
        // (which take no room), however many characters that is.
        let pointed = "שָׁ".repeat(90);
        let rows: Vec<&str> = text_rows(&pointed, 60)
            .into_iter()
            .map(|r| &pointed[r])
            .collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0], "שָׁ".repeat(60));
        // Emoji take two columns each: 30 to a row of 60.
        let faces = "😀".repeat(45);
        let rows: Vec<&str> = text_rows(&faces, 60)
            .into_iter()
            .map(|r| &faces[r])
            .collect();
        assert_eq!(rows, ["😀".repeat(30), "😀".repeat(15)]);
        // A control character takes its escape's room: \u{1b} is six columns.
        assert_eq!(shown_columns('\u{1b}'), 6);
        assert_eq!(shown_columns('\u{202e}'), 8);
        assert_eq!(shown_columns('\u{5b8}'), 0);
        assert_eq!(shown_columns('x'), 1);
        // Zero-width characters only: cut at four a column, not one row of them all.
        let hidden = "\u{200b}".repeat(1000);
        let rows = text_rows(&hidden, 60);
        assert_eq!(rows.len(), 5, "{} rows", rows.len());
        assert!(
            rows.iter()
                .all(|r| hidden[r.clone()].chars().count() <= 240)
        );
        let escapes = format!("{}x", "\u{1b}".repeat(10));
        let rows: Vec<&str> = text_rows(&escapes, 60)
            .into_iter()
            .map(|r| &escapes[r])
            .collect();
        assert_eq!(rows, ["\u{1b}".repeat(10), "x".to_owned()]);
        // As wide as the panel, in steps of ten characters, never under forty.
        assert_eq!(raw_row_chars(700.0, 7.0), 100);
        assert_eq!(raw_row_chars(706.0, 7.0), 100);
        assert_eq!(raw_row_chars(780.0, 7.0), 110);
        assert_eq!(raw_row_chars(100.0, 7.0), RAW_ROW_CHARS);
        assert_eq!(raw_row_chars(700.0, 0.0), RAW_ROW_CHARS);
        assert_eq!(raw_row_chars(f32::NAN, 7.0), RAW_ROW_CHARS);
    }

    #[test]
    fn a_hex_dump_line_fits_the_panel_it_is_shown_in() {
        assert_eq!(hex_bytes_per_line(80), 16);
        assert_eq!(hex_bytes_per_line(70), 8);
        assert_eq!(hex_bytes_per_line(RAW_ROW_CHARS), 8);
        for per_line in [8, 16] {
            let full = crate::cli::hex_line(0x10, &[b'A'; 16][..per_line], per_line);
            assert!(full.len() <= 80, "{full}");
            // A short last line keeps its printable column where a full one has it.
            let short = crate::cli::hex_line(0x20, b"AB", per_line);
            assert_eq!(short.len() + per_line - 2, full.len(), "{short}");
        }
        assert_eq!(
            crate::cli::hex_line(8, b"AB\x00", 8),
            "00000008  41 42 00                 AB."
        );
    }

    #[test]
    fn curl_quotes_for_the_shell_and_skips_hop_headers() {
        let c = curl_command(&stored(b"[\"it's\"]"), "http://127.0.0.1:1");
        assert_eq!(
            c,
            "curl -X POST 'http://127.0.0.1:1/hook?secret=it'\\''s' -H 'x-service-event: status-report' --data-binary '[\"it'\\''s\"]'"
        );
        let mut odd = stored(b"");
        odd.inv.headers = vec![Header::new("x-odd", b"caf\xe9 'q' \\")];
        assert_eq!(
            curl_command(&odd, "http://h"),
            "curl -X POST 'http://h/hook?secret=it'\\''s' -H $'x-odd: caf\\xe9 \\'q\\' \\\\'"
        );
        // A body too large for one shell argument goes through stdin.
        let big = curl_command(&stored(&vec![b'a'; INLINE_BODY + 1]), "http://h");
        assert!(
            big.starts_with("base64 -d <<'END-OF-BODY' | curl -X POST"),
            "{}",
            &big[..80]
        );
        assert!(big.ends_with("\nEND-OF-BODY"));
        assert!(
            big.lines().all(|l| l.len() <= 200),
            "no line is the whole body"
        );
        // A terminal escape or a direction override in a body is written as its bytes.
        let c = curl_command(
            &stored("[\"\u{1b}[2J \u{202e}x'\ny\"]".as_bytes()),
            "http://h",
        );
        assert!(
            c.ends_with(r#"--data-binary $'["\x1b[2J \xe2\x80\xaex\'\ny"]'"#),
            "{c}"
        );
        let c = curl_command(&stored(b"\xff\x00"), "http://h");
        assert!(c.starts_with("printf '\\xff\\x00' | curl"));
        assert!(c.ends_with("--data-binary @-"));
        // A body over the limit was not kept: the command says it sends none, and leaves out
        // the Expect header that made curl wait for a go-ahead before it.
        let mut dropped = stored(b"");
        dropped.inv.body_kept = false;
        dropped.inv.body_size = 2_100_000;
        dropped.inv.declared_size = Some(2_100_000);
        dropped.inv.headers = vec![
            Header::new("expect", b"100-continue"),
            Header::new("x-service-event", b"status-report"),
        ];
        assert_eq!(
            curl_command(&dropped, "http://h"),
            "# The body (2.0 MiB) was over the body limit and not kept: this command sends none.\ncurl -X POST 'http://h/hook?secret=it'\\''s' -H 'x-service-event: status-report'"
        );
    }

    #[test]
    fn the_summary_counts_the_same_finding_about_each_message_as_one_kind() {
        use crate::contract::{Finding, Severity};
        let f = |m: &str| Finding {
            severity: Severity::Error,
            code: "missing-field".into(),
            message: m.to_owned(),
        };
        assert_eq!(
            finding_kind("Message 12 has no \"encoding\" field."),
            "Message … has no \"encoding\" field."
        );
        // Not a message's number: left as it is.
        assert_eq!(
            finding_kind("Message body is empty."),
            "Message body is empty."
        );
        assert_eq!(
            finding_kind("The body is not JSON."),
            "The body is not JSON."
        );
        let mut all: Vec<Finding> = (1..=300)
            .map(|i| f(&format!("Message {i} has no \"encoding\" field.")))
            .collect();
        all.extend((1..=5).map(|i| f(&format!("Message {i}: kind {i}."))));
        all.push(f("Header X is missing."));
        let lines = findings_summary(&all);
        assert_eq!(
            lines[0],
            "306 findings, shown 200 at a time. The most frequent:"
        );
        assert_eq!(lines[1], "300 × Message … has no \"encoding\" field.");
        // Then the ties in the order they came, five kinds in all, and the rest counted.
        assert_eq!(lines[2], "1 × Message …: kind 1.");
        assert_eq!(lines[5], "1 × Message …: kind 4.");
        assert_eq!(lines[6], "and 2 more, of 2 other kinds");
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn the_raw_tab_keeps_the_rows_of_the_body_in_sight_only() {
        let ctx = egui::Context::default();
        let bodies: Vec<Vec<u8>> = (0..5)
            .map(|i| format!("line {i}\n").repeat(1000).into_bytes())
            .collect();
        for (i, body) in bodies.iter().enumerate() {
            let mut out = ctx.run_ui(egui::RawInput::default(), |ui| {
                raw_ui(ui, ("request", i as i64), body, 400.0);
            });
            out.textures_delta.clear();
        }
        let kept = ctx.data(|d| d.count::<(egui::Id, usize, RawRows)>());
        assert_eq!(kept, 1, "the rows of one body, not of each opened");
        let rows = ctx.data(|d| d.get_temp::<(egui::Id, usize, RawRows)>(raw_rows_key()));
        let (of, _, rows) = rows.expect("the last body's rows");
        assert_eq!(of, egui::Id::unique(("request", 4i64)));
        assert_eq!(rows.len(), 1000, "a row a line");
    }
}
