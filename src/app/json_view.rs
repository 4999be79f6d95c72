//! A JSON tree: collapsible objects and arrays, values coloured by type.

use egui::{Color32, RichText};
use serde_json::Value;

/// Most nodes drawn; past that the Raw body tab has it all.
const MAX_NODES: usize = 5_000;

struct Palette {
    key: Color32,
    string: Color32,
    number: Color32,
    literal: Color32,
}

fn palette(dark: bool) -> Palette {
    if dark {
        Palette {
            key: Color32::from_rgb(130, 180, 255),
            string: Color32::from_rgb(150, 215, 140),
            number: Color32::from_rgb(240, 180, 100),
            literal: Color32::from_rgb(205, 150, 240),
        }
    } else {
        Palette {
            key: Color32::from_rgb(20, 80, 180),
            string: Color32::from_rgb(30, 120, 40),
            number: Color32::from_rgb(170, 90, 0),
            literal: Color32::from_rgb(130, 40, 170),
        }
    }
}

/// The most characters of one string the tree shows.
const MAX_STRING: usize = 2000;

pub fn json_ui(ui: &mut egui::Ui, value: &Value) {
    let p = palette(ui.visuals().dark_mode);
    let mut budget = MAX_NODES;
    node_ui(
        ui,
        None,
        value,
        &p,
        &mut budget,
        egui::Id::unique("json_root"),
    );
    if budget == 0 {
        ui.weak("… the rest is not shown here; see the Raw body tab.");
    }
}

/// A value's text, and for a string cut short, a note saying how much more there is.
fn scalar(v: &Value, p: &Palette) -> (RichText, Option<String>) {
    // At most a few thousand characters: one long string (a body of megabytes) is not laid
    // out whole on every frame.
    if let Value::String(s) = v {
        let (head, rest) = crate::text::head_chars(s, MAX_STRING);
        let quoted = crate::text::quoted(head);
        let text = RichText::new(if rest == 0 { quoted } else { quoted + "…" });
        let note =
            (rest > 0).then(|| format!("{rest} more characters; the Raw body tab has them all"));
        return (text.color(p.string).monospace(), note);
    }
    let text = match v {
        Value::Number(n) => RichText::new(n.to_string()).color(p.number),
        Value::Bool(b) => RichText::new(b.to_string()).color(p.literal),
        Value::Null => RichText::new("null").color(p.literal),
        _ => RichText::new(""),
    };
    (text.monospace(), None)
}

fn node_ui(
    ui: &mut egui::Ui,
    key: Option<&str>,
    v: &Value,
    p: &Palette,
    budget: &mut usize,
    id: egui::Id,
) {
    if *budget == 0 {
        return;
    }
    *budget -= 1;
    let key_text = |ui: &mut egui::Ui| {
        if let Some(k) = key {
            let key = RichText::new(format!("{k}:")).monospace().color(p.key);
            ui.label(crate::app::ui::bidi_safe(ui, key));
        }
    };
    match v {
        Value::Object(map) => {
            let title = format!(
                "{}{{…}} {}",
                key.map_or(String::new(), |k| format!("{k}: ")),
                crate::text::count(map.len() as u64, "field", "fields")
            );
            egui::CollapsingHeader::new(RichText::new(title).monospace())
                .id_salt(id)
                .default_open(true)
                .show(ui, |ui| {
                    for (k, child) in map {
                        node_ui(ui, Some(k), child, p, budget, id.with(k));
                    }
                });
        }
        Value::Array(items) => {
            let title = format!(
                "{}[…] {}",
                key.map_or(String::new(), |k| format!("{k}: ")),
                crate::text::count(items.len() as u64, "item", "items")
            );
            egui::CollapsingHeader::new(RichText::new(title).monospace())
                .id_salt(id)
                .default_open(items.len() <= 20)
                .show(ui, |ui| {
                    for (i, child) in items.iter().enumerate() {
                        node_ui(ui, Some(&i.to_string()), child, p, budget, id.with(i));
                    }
                });
        }
        _ => {
            let (text, note) = scalar(v, p);
            // Wrapped at the panel's edge: a string of a thousand characters on one line ran
            // far out of sight, and the note that it was cut with it.
            ui.horizontal_wrapped(|ui| {
                key_text(ui);
                let text = crate::app::ui::bidi_safe(ui, text);
                ui.add(egui::Label::new(text).selectable(true).wrap());
            });
            if let Some(note) = note {
                ui.weak(note);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_long_string_is_shown_cut() {
        let p = super::palette(true);
        let long = serde_json::Value::String("y".repeat(5 * 1024 * 1024));
        let (text, note) = super::scalar(&long, &p);
        assert!(
            text.text().len() < 3000,
            "{} characters laid out",
            text.text().len()
        );
        assert!(text.text().ends_with("yyy\"…"));
        assert_eq!(
            note.as_deref(),
            Some("5240880 more characters; the Raw body tab has them all")
        );
        let short = serde_json::Value::String("hi".into());
        let (text, note) = super::scalar(&short, &p);
        assert_eq!((text.text(), note), ("\"hi\"", None));
    }

    #[test]
    fn keys_keep_the_order_they_came_in() {
        // serde_json's preserve_order: the tree shows a message's fields as the service sent
        // them, not sorted.
        let v: serde_json::Value =
            serde_json::from_str(r#"{"type":"SENT","id":"1","body":"x","from":"+2"}"#).unwrap();
        let keys: Vec<&str> = v
            .as_object()
            .map(|o| o.keys().map(String::as_str).collect())
            .unwrap_or_default();
        assert_eq!(keys, ["type", "id", "body", "from"]);
    }
}
