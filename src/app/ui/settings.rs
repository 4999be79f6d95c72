//! The settings window: bind address, port, brand word, body limit, theme; the data directory.

use crate::app::HookscopeApp;
use egui::RichText;

pub fn settings_window(ctx: &egui::Context, app: &mut HookscopeApp) {
    let mut open = app.state.show_settings;
    let mut restart = false;
    // Under the Settings button (top right), not over the listening URL.
    let screen = ctx.content_rect();
    egui::Window::new("Settings")
        .pivot(egui::Align2::RIGHT_TOP)
        .default_pos([screen.right() - 12.0, screen.top() + 40.0])
        .open(&mut open)
        .resizable(false)
        .collapsible(false)
        .show(ctx, |ui| {
            let s = &mut app.state.settings;
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
                    ui.add(egui::DragValue::new(&mut s.port).range(0..=65535))
                        .labelled_by(l.id)
                        .on_hover_text("0 picks any free port");
                    ui.end_row();
                    let l = ui.label("Brand word");
                    ui.add(egui::TextEdit::singleline(&mut s.brand).desired_width(140.0))
                        .labelled_by(l.id)
                        .on_hover_text("The word in the header names: X-<word>-Event");
                    ui.end_row();
                    let l = ui.label("Body limit (MiB)");
                    ui.add(egui::DragValue::new(&mut s.body_limit_mib).range(1..=crate::text::MAX_BODY_LIMIT >> 20))
                        .labelled_by(l.id);
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
                        if ui.selectable_label(s.dark, "Dark").clicked() {
                            s.dark = true;
                        }
                        if ui.selectable_label(!s.dark, "Light").clicked() {
                            s.dark = false;
                        }
                    });
                    ui.end_row();
                    ui.label("Data directory");
                    ui.label(RichText::new(app.state.data_dir.display().to_string()).monospace())
                        .on_hover_text("Choose another with --data-dir or HOOKSCOPE_DATA_DIR");
                    ui.end_row();
                });
            crate::app::apply_look(ui.ctx(), &app.state.settings);
            ui.add_space(6.0);
            let dark = ui.visuals().dark_mode;
            let warn = super::outcome_color(crate::contract::Outcome::RetryTemporary, dark);
            let bad = super::outcome_color(crate::contract::Outcome::WebhookCancelled, dark);
            let bind = app.state.settings.bind.trim();
            if crate::text::parse_bind(bind).is_ok_and(|ip| !ip.is_loopback()) {
                ui.label(
                    RichText::new("Warning: another bind address makes the receiver reachable from other machines.")
                        .color(warn),
                );
            }
            // The receiver keeps running as it is until the settings can be applied.
            let problems = app.state.settings.problems();
            for p in &problems {
                ui.label(RichText::new(p).color(bad));
            }
            let apply = ui
                .add_enabled(problems.is_empty(), egui::Button::new("Apply and restart the receiver"))
                .on_disabled_hover_text("Correct the settings in red first; the receiver keeps running as it is");
            if apply.clicked() {
                restart = true;
            }
        });
    app.state.show_settings = open;
    if restart {
        app.state.any_port_this_session = false;
        app.start_listening();
    }
}
