//! A horizontal retry timeline: observed attempts as filled marks coloured by outcome, projected
//! retries as hollow marks, "now" as a line, and the end of the 2-day window. The axis is
//! compressed (logarithmic) so 90 seconds and 2 days are both readable; hover a mark for details.

use chrono::{DateTime, Utc};
use egui::{Color32, Pos2, Rect, Sense, Stroke, vec2};

pub struct Mark {
    pub at: DateTime<Utc>,
    pub filled: bool,
    pub color: Color32,
    pub label: String,
}

/// The compressed position (0..1) of `s` seconds in a span of `total` seconds.
pub fn axis(s: f64, total: f64) -> f32 {
    const K: f64 = 60.0;
    if total <= 0.0 {
        return 0.0;
    }
    ((1.0 + s.max(0.0) / K).ln() / (1.0 + total / K).ln()).clamp(0.0, 1.0) as f32
}

fn tick_label(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 86_400.0 {
        format!("{:.0} h", s / 3600.0)
    } else {
        format!("{:.0} d", s / 86_400.0)
    }
}

pub fn timeline_ui(
    ui: &mut egui::Ui,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    marks: &[Mark],
    now: Option<DateTime<Utc>>,
) {
    let height = 58.0;
    let width = ui.available_width().max(200.0);
    let (rect, response) = ui.allocate_exact_size(vec2(width, height), Sense::hover());
    let painter = ui.painter_at(rect);
    let visuals = ui.visuals();
    let line_y = rect.top() + 22.0;
    // Room on the right for the last tick's label ("2 d") and a scroll bar beside the panel.
    let inner = Rect::from_min_max(
        Pos2::new(rect.left() + 8.0, line_y),
        Pos2::new(rect.right() - 20.0, line_y),
    );
    let total = crate::deliveries::secs_between(start, end).max(1.0);
    let x_of = |t: DateTime<Utc>| {
        inner.left() + inner.width() * axis(crate::deliveries::secs_between(start, t), total)
    };
    let weak = visuals.weak_text_color();
    painter.line_segment(
        [
            Pos2::new(inner.left(), line_y),
            Pos2::new(inner.right(), line_y),
        ],
        Stroke::new(1.5, weak),
    );
    // Ticks on the compressed axis.
    for s in [0.0, 90.0, 600.0, 3600.0, 6.0 * 3600.0, 86_400.0, 172_800.0] {
        if s > total * 1.001 {
            continue;
        }
        let x = inner.left() + inner.width() * axis(s, total);
        painter.line_segment(
            [Pos2::new(x, line_y + 6.0), Pos2::new(x, line_y + 10.0)],
            Stroke::new(1.0, weak),
        );
        painter.text(
            Pos2::new(x, line_y + 12.0),
            egui::Align2::CENTER_TOP,
            tick_label(s),
            egui::FontId::proportional(10.0),
            weak,
        );
    }
    // The end of the window.
    let xe = x_of(end);
    painter.line_segment(
        [Pos2::new(xe, rect.top() + 4.0), Pos2::new(xe, line_y + 6.0)],
        Stroke::new(2.0, visuals.warn_fg_color),
    );
    painter.text(
        Pos2::new(xe - 2.0, rect.top() + 2.0),
        egui::Align2::RIGHT_TOP,
        "end of window",
        egui::FontId::proportional(10.0),
        weak,
    );
    if let Some(now) = now
        && now >= start
        && now <= end
    {
        let x = x_of(now);
        painter.line_segment(
            [Pos2::new(x, rect.top() + 4.0), Pos2::new(x, line_y + 8.0)],
            Stroke::new(1.5, visuals.strong_text_color()),
        );
        painter.text(
            Pos2::new(x + 3.0, rect.top() + 2.0),
            egui::Align2::LEFT_TOP,
            "now",
            egui::FontId::proportional(10.0),
            visuals.strong_text_color(),
        );
    }
    let mut hovered: Option<(f32, &Mark)> = None;
    let pointer = response.hover_pos();
    for m in marks {
        let c = Pos2::new(x_of(m.at), line_y);
        if m.filled {
            painter.circle_filled(c, 5.0, m.color);
        } else {
            painter.circle_stroke(c, 4.0, Stroke::new(1.5, m.color));
        }
        if let Some(p) = pointer {
            let d = (p.x - c.x).abs();
            if d < 6.0 && hovered.is_none_or(|(best, _)| d < best) {
                hovered = Some((d, m));
            }
        }
    }
    if let Some((_, m)) = hovered {
        response.on_hover_text(m.label.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_axis_keeps_90_seconds_and_2_days_apart() {
        let total = 172_800.0;
        assert_eq!(axis(0.0, total), 0.0);
        assert_eq!(axis(total, total), 1.0);
        // 90 s is visibly away from the start, and 12 min from 90 s.
        assert!(axis(90.0, total) > 0.1);
        assert!(axis(720.0, total) - axis(90.0, total) > 0.15);
        assert!(axis(-5.0, total) == 0.0 && axis(1e9, total) == 1.0);
    }
}
