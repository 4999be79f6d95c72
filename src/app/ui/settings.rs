//! The settings window: bind address, port, brand word, body limit, theme; the data directory.

use crate::app::HookscopeApp;
use crate::app::state::Listening;
use egui::RichText;

pub fn settings_window(ctx: &egui::Context, app: &mut HookscopeApp) {
    if !app.state.show_settings {
        // Closed without applying: what was typed is thrown away, and what a box refused is
        // not said again when Settings reopens.
        app.state.settings_draft = None;
        app.state.settings_draft_base = None;
        app.state.settings_applied = None;
        ctx.data_mut(|d| {
            for key in REFUSED_KEYS {
                d.remove_temp::<Option<(String, u64)>>(egui::Id::unique(key));
            }
        });
        return;
    }
    let mut open = true;
    let mut apply = false;
    let mut draft = app
        .state
        .settings_draft
        .take()
        .unwrap_or_else(|| app.state.settings.clone());
    let base = app
        .state
        .settings_draft_base
        .get_or_insert_with(|| app.state.settings.clone());
    if *base != app.state.settings {
        draft.rebase(base, &app.state.settings);
        *base = app.state.settings.clone();
    }
    // Under the Settings button (top right), not over the listening URL; kept under the top
    // bar, however tall the zoom makes it (at zoom 2 it covered the bar's buttons, A− and A+
    // with them), where it may be dragged.
    let below_bar = super::room_under_bar(ctx, app);
    // No taller than the room under the bar: past that its content scrolls. (Grown past the
    // screen's foot, at zoom 2, egui moved the whole window up as each note appeared, and the
    // field being typed in with it.)
    // Its content in a scroll area of its own, as tall as the content up to the room left
    // under the window's title: egui's window scroll kept the height the window opened with,
    // and notes that came later were cut at its foot with half the screen free below it. The
    // title's and margins' height is the window's last frame's, less its content's.
    let max_height = (below_bar.height() - 10.0).max(120.0);
    let chrome_key = egui::Id::unique("settings_chrome_height");
    let (chrome, content) = ctx
        .data(|d| d.get_temp::<(f32, f32)>(chrome_key))
        .unwrap_or((40.0, 0.0));
    // egui sizes the window from the height it opened with: asked for what the content
    // needs, it grows with it.
    let place = egui::pos2(below_bar.right() - 12.0, below_bar.top() + 4.0);
    super::keep_window_in_place(ctx, window_id(), place);
    let shown = egui::Window::new("Settings")
        .id(window_id())
        .pivot(egui::Align2::RIGHT_TOP)
        .default_pos(place)
        .constrain_to(super::room_for_window(ctx, app))
        .min_height((content + chrome).clamp(0.0, max_height))
        .max_height(max_height)
        .open(&mut open)
        .resizable(false)
        .collapsible(false)
        .show(ctx, |ui| {
            egui::ScrollArea::vertical()
                .id_salt("settings_scroll")
                .max_height((max_height - chrome).max(60.0))
                .auto_shrink([false, true])
                // Its scroll bar has room of its own: kept in sight, so that a note that makes
                // the content scroll does not widen the window and move Apply under the pointer.
                .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
                .show(ui, |ui| {
            let s = &mut draft;
            let dark = &mut app.state.settings.dark;
            // What the number boxes cannot take is said below Apply, not clamped without a
            // word (99999 had become 65535, 0 MiB 1).
            let (port_refusals, limit_refusals) =
                (super::Refusals::default(), super::Refusals::default());
            let mut port_field = None;
            let mut limit_field = None;
            let any_port = app.state.any_port_this_session;
            let listening_on = match app.state.listening {
                Listening::On(addr) => Some(addr.port()),
                _ => None,
            };
            egui::Grid::new("settings_grid")
                .num_columns(2)
                .spacing([10.0, 6.0])
                .show(ui, |ui| {
                    let l = ui.label("Bind address");
                    ui.add(egui::TextEdit::singleline(&mut s.bind).desired_width(140.0))
                        .labelled_by(l.id)
                        .on_hover_text("127.0.0.1 keeps the receiver on this machine; 0.0.0.0 opens it to the network");
                    ui.end_row();
                    let l = ui.label("Port");
                    ui.horizontal(|ui| {
                        port_field = Some(
                            ui.add(
                                egui::DragValue::new(&mut s.port)
                                    .range(0..=65535)
                                    // Read once typed: "99999" had set the port to 9 999 on
                                    // the way, and the note said it kept that.
                                    .update_while_editing(false)
                                    .custom_parser(port_refusals.parser(parse_port)),
                            )
                            .labelled_by(l.id)
                            .on_hover_text("0 picks any free port"),
                        );
                        // 0 beside the port in the top bar read as a contradiction.
                        if s.port == 0
                            && let Some(port) = listening_on
                        {
                            ui.weak(format!("any free port: {port} now"));
                        } else if any_port
                            && let Some(port) = listening_on.filter(|p| *p != s.port)
                        {
                            // *Any free port* in the top bar: this port is saved for the next
                            // start, and another is in use now.
                            ui.weak(format!("this session: {port}"))
                                .on_hover_text("Any free port was chosen for this session; the port here is the one the next start tries");
                        }
                    });
                    ui.end_row();
                    let l = ui.label("Brand word");
                    ui.add(egui::TextEdit::singleline(&mut s.brand).desired_width(140.0))
                        .labelled_by(l.id)
                        .on_hover_text("The word in the header names: X-<word>-Event");
                    ui.end_row();
                    let l = ui.label("Body limit (MiB)");
                    limit_field = Some(
                        ui.add(
                            egui::DragValue::new(&mut s.body_limit_mib)
                                .range(1..=crate::text::MAX_BODY_LIMIT >> 20)
                                .update_while_editing(false)
                                .custom_parser(limit_refusals.parser(parse_limit_mib)),
                        )
                        .labelled_by(l.id),
                    );
                    ui.end_row();
                    let l = ui.label("Public URL");
                    ui.add(
                        egui::TextEdit::singleline(&mut s.public_url)
                            .hint_text("https://xyz.trycloudflare.com/hook")
                            .desired_width(220.0),
                    )
                    .labelled_by(l.id)
                    .on_hover_text("A tunnel in front of the receiver; new webhooks point here when set");
                    ui.end_row();
                    ui.label("Theme");
                    ui.horizontal(|ui| {
                        if ui.selectable_label(*dark, "Dark").clicked() {
                            *dark = true;
                        }
                        if ui.selectable_label(!*dark, "Light").clicked() {
                            *dark = false;
                        }
                    });
                    ui.end_row();
                    ui.label("Data directory");
                    ui.label(RichText::new(app.state.data_dir.display().to_string()).monospace())
                        .on_hover_text("Choose another with --data-dir or HOOKSCOPE_DATA_DIR");
                    ui.end_row();
                });
            crate::app::apply_look(ui.ctx(), &app.state.settings);
            ui.add_space(4.0);
            // Not every user knows why the service cannot call 127.0.0.1.
            ui.weak(
                "Public URL: the real service cannot reach this laptop's 127.0.0.1. Put a tunnel (cloudflared, ngrok) in front of the port and give its https address here; new webhooks point there.",
            );
            ui.add_space(6.0);
            let dark = ui.visuals().dark_mode;
            let warn = super::outcome_color(crate::contract::Outcome::RetryTemporary, dark);
            let bad = super::outcome_color(crate::contract::Outcome::WebhookCancelled, dark);
            let bind = draft.bind.trim();
            let open_to_others = crate::text::parse_bind(bind).is_ok_and(|ip| !ip.to_canonical().is_loopback());
            // The receiver keeps running as it is until the settings can be applied.
            let mut problems = draft.problems();
            // The port this window's own emulator took: "in use by another program" would
            // send the user looking for one.
            if let Some(e) = &app.state.service.emulator
                && draft.port != 0
                && draft.port == e.addr.port()
            {
                problems.push(format!(
                    "Port {} is the built-in emulator's (the service the Service panel talks to listens there): choose another.",
                    draft.port
                ));
            }
            let in_force = &app.state.settings;
            let listening = matches!(app.state.listening, Listening::On(_));
            let restarts = draft.receiver_differs(in_force) || !listening;
            let changed = restarts || draft.public_url.trim() != in_force.public_url;
            let label = if restarts {
                "Apply and restart the receiver"
            } else {
                "Apply"
            };
            // One restart at a time: the settings it tries become the ones in force when it
            // listens.
            let starting = matches!(app.state.listening, Listening::Starting);
            // A number typed in a box is read when the box loses the keyboard, which the
            // press on Apply itself does: the button takes that press while a box is being
            // typed in, or the first click only read the box and the second applied it.
            let typing = [&port_field, &limit_field]
                .into_iter()
                .flatten()
                .any(egui::Response::has_focus);
            // Whatever the box holds now: a port refused (the emulator's) being typed over is
            // judged once it is read, by the same press.
            let button = ui.add_enabled(
                (typing || (changed && problems.is_empty())) && !starting,
                egui::Button::new(label),
            );
            let button = if starting {
                button.on_disabled_hover_text("The receiver is starting; apply once it has")
            } else if problems.is_empty() {
                button.on_disabled_hover_text("Nothing to apply: these are the settings in force")
            } else {
                button.on_disabled_hover_text(
                    "Correct the settings in red first; the receiver keeps running as it is",
                )
            };
            // Only what the boxes read differs: a number typed back to the one in force is
            // nothing to apply.
            apply = button.clicked() && changed && problems.is_empty();
            // What the fields say, below the button: they come and go as the fields are typed
            // in, and above it they moved it under the pointer.
            if open_to_others {
                ui.label(
                    RichText::new("Warning: another bind address makes the receiver reachable from other machines.")
                        .color(warn),
                );
            }
            for p in &problems {
                ui.label(RichText::new(p).color(bad));
            }
            let refused = [
                (port_refusals, port_field, REFUSED_KEYS[0], draft.port as f64),
                (
                    limit_refusals,
                    limit_field,
                    REFUSED_KEYS[1],
                    draft.body_limit_mib as f64,
                ),
            ];
            for (refusals, field, key, value) in refused {
                let Some(field) = field else { continue };
                let kept = format!("{value:.0}");
                if let Some(note) = refusals.note(ui, egui::Id::unique(key), &field, value, &kept)
                {
                    ui.label(RichText::new(note).color(warn));
                }
            }
            // Typed in since: what was applied is no longer what the window shows.
            if app.state.settings_applied.as_ref().is_some_and(|(a, _)| *a != draft) {
                app.state.settings_applied = None;
            }
            // The click did something, said where it is seen (the top bar may be under this
            // window); a restart that failed is not "applied": why is said in red below.
            let done = match (&app.state.settings_applied, &app.state.listening) {
                (Some(_), Listening::Starting) => {
                    Some("Applied: the receiver is restarting…".to_owned())
                }
                (Some((applied, restarted)), Listening::On(addr))
                    if !applied.receiver_differs(in_force)
                        && app.state.listen_notice.is_none() =>
                {
                    Some(if *restarted {
                        format!(
                            "Applied: the receiver listens on {}",
                            crate::receiver::url_for(*addr)
                        )
                    } else {
                        "Applied.".to_owned()
                    })
                }
                _ => None,
            };
            if let Some(done) = done {
                ui.label(RichText::new(done).small().weak());
            } else if changed && problems.is_empty() {
                ui.label(
                    RichText::new("Not applied yet: closing this window throws the changes away.")
                        .small()
                        .weak(),
                );
            }
            // Why the last restart did not happen, here too: this window may cover the top
            // bar's line.
            let why = match &app.state.listening {
                Listening::Failed(why) => Some(why.as_str()),
                _ => app.state.listen_notice.as_deref(),
            }
            .filter(|_| {
                app.state
                    .receiver_tried
                    .as_ref()
                    .is_none_or(|tried| !draft.receiver_differs(tried))
            });
            if let Some(why) = why {
                ui.label(RichText::new(why).color(bad));
            }
            super::follow_keyboard_focus(ui);
                })
        });
    if let Some(shown) = &shown
        && let Some(scroll) = &shown.inner
    {
        let chrome = (shown.response.rect.height() - scroll.inner_rect.height()).max(0.0);
        let content = scroll.content_size.y;
        ctx.data_mut(|d| d.insert_temp(chrome_key, (chrome, content)));
    }
    // Escape closes it, as its × does, throwing away what was not applied.
    if let Some(shown) = &shown
        && super::escape_closes(ctx, app, shown.response.layer_id)
    {
        open = false;
    }
    app.state.show_settings = open;
    if !open {
        return;
    }
    if apply {
        app.state.settings.public_url = draft.public_url.trim().to_owned();
        let restarts = draft.receiver_differs(&app.state.settings)
            || !matches!(app.state.listening, Listening::On(_));
        app.state.settings_applied = Some((draft.clone(), restarts));
        if restarts {
            app.state.any_port_this_session = false;
            app.start_listening_with(draft.clone());
        }
    }
    app.state.settings_draft = Some(draft);
}

/// The Settings window's id, named so that Escape and a zoom can find the window.
pub fn window_id() -> egui::Id {
    egui::Id::unique("Settings")
}

/// Where the port and body-limit boxes keep what they refused.
const REFUSED_KEYS: [&str; 2] = ["settings_port_refused", "settings_limit_refused"];

/// A port typed in Settings: a whole number from 0 (any free port) to 65535.
fn parse_port(text: &str) -> Result<f64, String> {
    whole_in(
        text,
        0.0..=65535.0,
        "a port",
        "a whole number from 0 (any free port) to 65535",
    )
}

/// A body limit typed in Settings, in MiB: a whole number from 1 to 512.
fn parse_limit_mib(text: &str) -> Result<f64, String> {
    whole_in(
        text,
        1.0..=(crate::text::MAX_BODY_LIMIT >> 20) as f64,
        "a body limit",
        "a whole number of MiB from 1 to 512",
    )
}

/// `text` read as a whole number within `range`; else why not, naming `what` it must be and
/// what it `takes`.
fn whole_in(
    text: &str,
    range: std::ops::RangeInclusive<f64>,
    what: &str,
    takes: &str,
) -> Result<f64, String> {
    match super::typed_number(text, &[]) {
        Some(v) if v.fract() == 0.0 && range.contains(&v) => Ok(v),
        _ => Err(format!(
            "\"{}\" is not {what}: give {takes}",
            crate::text::single_line(text.trim())
        )),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_number_boxes_take_whole_numbers_in_range_and_say_what_they_refuse() {
        use super::{parse_limit_mib, parse_port};
        assert_eq!(parse_port("0"), Ok(0.0));
        assert_eq!(parse_port("8 787"), Ok(8787.0));
        assert_eq!(parse_port("65535"), Ok(65535.0));
        for typed in ["99999", "-1", "80.5", "abc"] {
            assert_eq!(
                parse_port(typed),
                Err(format!(
                    "\"{typed}\" is not a port: give a whole number from 0 (any free port) to 65535"
                ))
            );
        }
        assert_eq!(parse_limit_mib("32"), Ok(32.0));
        assert_eq!(parse_limit_mib("512"), Ok(512.0));
        for typed in ["0", "513", "1.5", "lots"] {
            assert_eq!(
                parse_limit_mib(typed),
                Err(format!(
                    "\"{typed}\" is not a body limit: give a whole number of MiB from 1 to 512"
                ))
            );
        }
    }
}
