//! The top bar: where the receiver listens (with a copy button), its state, and the answer
//! currently chosen, always visible.

use crate::app::HookscopeApp;
use crate::app::state::Listening;
use egui::RichText;

pub fn top_bar_ui(ui: &mut egui::Ui, app: &mut HookscopeApp) {
    let dark = ui.visuals().dark_mode;
    ui.add_space(4.0);
    ui.horizontal(|ui| {
        ui.heading(RichText::new("Hookscope").strong());
        ui.separator();
        match app.state.listening.clone() {
            Listening::Starting => {
                ui.spinner();
                ui.label("Starting the receiver…");
            }
            Listening::On(addr) => {
                let url = format!("http://{addr}/");
                super::dot(
                    ui,
                    super::outcome_color(crate::contract::Outcome::Succeeded, dark),
                );
                ui.label(RichText::new("Listening").color(super::outcome_color(
                    crate::contract::Outcome::Succeeded,
                    dark,
                )))
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
                super::dot(
                    ui,
                    super::outcome_color(crate::contract::Outcome::WebhookCancelled, dark),
                );
                ui.label(RichText::new("Not listening").color(super::outcome_color(
                    crate::contract::Outcome::WebhookCancelled,
                    dark,
                )));
                let label = ui.label("Port:");
                ui.add(egui::TextEdit::singleline(&mut app.state.port_text).desired_width(60.0))
                    .labelled_by(label.id);
                if ui.button("Listen").clicked() {
                    match app.state.port_text.trim().parse::<u16>() {
                        Ok(p) => {
                            app.state.any_port_this_session = false;
                            let next = crate::app::state::Settings {
                                port: p,
                                ..app.state.settings.clone()
                            };
                            app.start_listening_with(next);
                        }
                        Err(_) => {
                            app.state.listening = Listening::Failed(format!(
                                "\"{}\" is not a port: give a number from 0 to 65535",
                                app.state.port_text.trim()
                            ))
                        }
                    }
                }
                if ui
                    .button("Any free port")
                    .on_hover_text("For this session; the next start tries the port in Settings again")
                    .clicked()
                {
                    app.state.any_port_this_session = true;
                    app.start_listening();
                }
            }
        }
        ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
            if ui
                .selectable_label(app.state.show_service, "Service")
                .on_hover_text("Webhooks, the test message and the emulator")
                .clicked()
            {
                app.state.show_service = !app.state.show_service;
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
            if ui
                .button("A+")
                .on_hover_text("Larger text (Ctrl +)")
                .clicked()
            {
                let z = (ui.ctx().zoom_factor() + 0.1).min(3.0);
                ui.ctx().set_zoom_factor(z);
            }
            if ui
                .button("A−")
                .on_hover_text("Smaller text (Ctrl −)")
                .clicked()
            {
                let z = (ui.ctx().zoom_factor() - 0.1).max(0.5);
                ui.ctx().set_zoom_factor(z);
            }
            ui.separator();
            let a = &app.state.settings.answer;
            let outcome = a.outcome();
            let rules = app.state.rules.in_force;
            let text = match rules {
                0 => format!("Answering {}", a.summary()),
                1 => format!("Answering by 1 rule, else {}", a.summary()),
                n => format!("Answering by {n} rules, else {}", a.summary()),
            };
            let hover = if rules == 0 {
                format!("The service will treat this as: {}", outcome.describe())
            } else {
                format!(
                    "The first rule that matches a call chooses its answer; a call no rule matches gets {} ({})",
                    a.summary(),
                    outcome.describe()
                )
            };
            ui.label(
                RichText::new(text)
                    .strong()
                    .color(super::outcome_color(outcome, dark)),
            )
            .on_hover_text(hover);
        });
    });
    // Why the receiver is not listening (or why a restart failed), on its own line, wrapped:
    // the bar's controls stay where they are.
    let problem = match &app.state.listening {
        Listening::Failed(why) => Some(why.clone()),
        _ => app.state.listen_notice.clone(),
    };
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
    ui.add_space(2.0);
}
