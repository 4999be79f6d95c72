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
    // Up to 2 min in seconds: the first retry's 90 s is not "2 min".
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 3600.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 86_400.0 {
        format!("{:.0} h", s / 3600.0)
    } else {
        format!("{:.0} d", s / 86_400.0)
    }
}

/// How a time sits on the service's clock: its seconds from the timeline's start.
pub enum Scale<'a> {
    /// A clock running this many times faster than real time (1: the real service), so a fast
    /// emulator's 90 s, 1.5 s of real time, sits where the real service's 90 s does.
    Speed(f64),
    /// The emulator's own times (its speed may have changed along the way).
    Clock(&'a crate::deliveries::ClockMap),
}

/// The ticks of an axis `total` seconds long, from the right. The 2 days' is kept on an axis a
/// little shorter (up to 1%): a window planned from before the first call seen ends minutes
/// short of 2 days after it, and its axis had no "2 d" at its end.
fn ticks(total: f64) -> impl Iterator<Item = f64> {
    [0.0, 90.0, 600.0, 3600.0, 6.0 * 3600.0, 86_400.0, 172_800.0]
        .into_iter()
        .rev()
        .filter(move |&s| s <= total * if s == 172_800.0 { 1.01 } else { 1.001 })
}

/// The timeline from `start` to `end` on the service's clock (see [`Scale`]): the ticks read
/// in the service's time. `window`: `end` is the end of a retry window, marked as one (a
/// delivery whose first answer was final never had one).
pub fn timeline_ui(
    ui: &mut egui::Ui,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
    scale: Scale,
    marks: &[Mark],
    now: Option<DateTime<Utc>>,
    window: bool,
) {
    let clock_secs = |t: DateTime<Utc>| match scale {
        Scale::Speed(speed) => {
            let speed = if speed.is_finite() && speed > 0.0 {
                speed
            } else {
                1.0
            };
            crate::deliveries::secs_between(start, t) * speed
        }
        Scale::Clock(map) => map.secs_since_first(t) - map.secs_since_first(start),
    };
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
    let total = clock_secs(end).max(1.0);
    let x_of = |t: DateTime<Utc>| inner.left() + inner.width() * axis(clock_secs(t), total);
    let weak = visuals.weak_text_color();
    painter.line_segment(
        [
            Pos2::new(inner.left(), line_y),
            Pos2::new(inner.right(), line_y),
        ],
        Stroke::new(1.5, weak),
    );
    // Ticks on the compressed axis; a label that would touch the one after it (from the
    // right: the window's end is the one to keep) is left out, its tick stays.
    let tick_font = egui::FontId::proportional(10.0);
    let mut room_right = f32::INFINITY;
    for s in ticks(total) {
        let x = inner.left() + inner.width() * axis(s, total);
        painter.line_segment(
            [Pos2::new(x, line_y + 6.0), Pos2::new(x, line_y + 10.0)],
            Stroke::new(1.0, weak),
        );
        let label = tick_label(s);
        let half = ui
            .painter()
            .layout_no_wrap(label.clone(), tick_font.clone(), weak)
            .size()
            .x
            / 2.0;
        if x + half + 4.0 <= room_right {
            painter.text(
                Pos2::new(x, line_y + 12.0),
                egui::Align2::CENTER_TOP,
                label,
                tick_font.clone(),
                weak,
            );
            room_right = x - half;
        }
    }
    let width_of = |text: &str| {
        ui.painter()
            .layout_no_wrap(text.to_owned(), tick_font.clone(), weak)
            .size()
            .x
    };
    // The row above the axis: "now" first, then "end of window", then the counts of shared
    // spots from the right; a label that would touch one already there is left out. "now"
    // goes first: late in a delivery its line falls under "end of window", which had taken
    // the room on both sides of it, so "now" had no label and its line ran through the other.
    let mut row = LabelRow::default();
    let xe = x_of(end);
    if window {
        painter.line_segment(
            [Pos2::new(xe, rect.top() + 4.0), Pos2::new(xe, line_y + 6.0)],
            Stroke::new(2.0, visuals.warn_fg_color),
        );
    }
    let now_x = now.filter(|now| *now >= start && *now <= end).map(&x_of);
    if let Some(x) = now_x {
        painter.line_segment(
            [Pos2::new(x, rect.top() + 4.0), Pos2::new(x, line_y + 8.0)],
            Stroke::new(1.5, visuals.strong_text_color()),
        );
    }
    // Without a window's end, "now" has the row to the axis's right edge, and no room is kept
    // for words that are not drawn.
    let (now_at, end_label) = place_now_and_end(
        &mut row,
        now_x,
        window.then_some(xe),
        inner.right() + 12.0,
        width_of,
    );
    if let Some((x, right)) = now_at {
        let align = if right {
            egui::Align2::LEFT_TOP
        } else {
            egui::Align2::RIGHT_TOP
        };
        painter.text(
            Pos2::new(x, rect.top() + 2.0),
            align,
            "now",
            tick_font.clone(),
            visuals.strong_text_color(),
        );
    }
    if let Some(end_label) = end_label {
        painter.text(
            Pos2::new(xe - 2.0, rect.top() + 2.0),
            egui::Align2::RIGHT_TOP,
            end_label,
            tick_font.clone(),
            weak,
        );
    }
    // Marks closer than a mark's width are drawn once: projected ones (every 15 min, hundreds
    // of them in the last day) as a band, observed ones with how many share the spot.
    let placed = place(marks.iter().map(|m| (x_of(m.at), m.filled)));
    for &(x, i) in &placed.hollow {
        painter.circle_stroke(Pos2::new(x, line_y), 4.0, Stroke::new(1.5, marks[i].color));
    }
    if let Some((from, to, i)) = placed.band {
        painter.line_segment(
            [Pos2::new(from, line_y), Pos2::new(to, line_y)],
            Stroke::new(5.0, marks[i].color.gamma_multiply(0.45)),
        );
    }
    for &(x, n, last) in &placed.spots {
        painter.circle_filled(Pos2::new(x, line_y), 5.0, marks[last].color);
        // Attempts of another outcome on the same spot (two 503s, then the 200): a ring in
        // the colour of the first of them, so the dot does not read as all of one kind.
        let other = (n > 1)
            .then(|| {
                marks.iter().find(|m| {
                    m.filled && (x_of(m.at) - x).abs() < SPOT && m.color != marks[last].color
                })
            })
            .flatten();
        if let Some(m) = other {
            painter.circle_stroke(Pos2::new(x, line_y), 7.0, Stroke::new(2.0, m.color));
        }
    }
    // The counts, from the right (the latest attempts read first), where they fit.
    for &(x, n, last) in placed.spots.iter().rev().filter(|s| s.1 > 1) {
        let label = format!("×{n}");
        let half = width_of(&label) / 2.0;
        if row.take(x - half, x + half) {
            painter.text(
                Pos2::new(x, line_y - 7.0),
                egui::Align2::CENTER_BOTTOM,
                label,
                tick_font.clone(),
                marks[last].color,
            );
        }
    }
    // Every mark under the pointer, in order.
    if let Some(p) = response.hover_pos() {
        let near: Vec<&str> = marks
            .iter()
            .filter(|m| (p.x - x_of(m.at)).abs() < 6.0)
            .map(|m| m.label.as_str())
            .collect();
        const SHOWN: usize = 4;
        if !near.is_empty() {
            let mut text = near[..near.len().min(SHOWN)].join("\n\n");
            if near.len() > SHOWN {
                text += &format!("\n\n… and {} more here", near.len() - SHOWN);
            }
            response.on_hover_text(text);
        }
    }
}

/// Where marks are drawn, from their x and whether each is observed (filled).
#[derive(Debug, Default, PartialEq)]
struct Placed {
    /// Observed marks by spot: x, how many share it, the index of the last (its colour).
    spots: Vec<(f32, usize, usize)>,
    /// Projected marks drawn one by one: x, and the index of the mark.
    hollow: Vec<(f32, usize)>,
    /// Projected marks too close to draw apart: from, to, and one of them (its colour).
    band: Option<(f32, f32, usize)>,
}

/// Where the row above the axis puts "now" (the x its text starts or ends at, and whether it
/// is right of its line at `now_x`) and which words name the end of the window at `xe` (none:
/// no window's end is drawn, and the row runs to `right`), given the width of a text. "now" goes first, right of its line, else left of it: late in a
/// delivery its line falls under "end of window", which had taken the room on both sides of
/// it, so "now" had no label and its line ran through the other's words. The end is named in
/// full where it has room and no "now" line runs through the words, else as "end", else not
/// at all (its line and the axis's last tick say it).
fn place_now_and_end(
    row: &mut LabelRow,
    now_x: Option<f32>,
    xe: Option<f32>,
    right: f32,
    width_of: impl Fn(&str) -> f32,
) -> (Option<(f32, bool)>, Option<&'static str>) {
    let limit = xe.unwrap_or(right);
    let now_at = now_x.and_then(|x| {
        let w = width_of("now");
        if x + 3.0 + w <= limit - 2.0 && row.take(x + 3.0, x + 3.0 + w) {
            Some((x + 3.0, true))
        } else if row.take(x - 3.0 - w, x - 3.0) {
            Some((x - 3.0, false))
        } else {
            None
        }
    });
    let end_label = xe.and_then(|xe| {
        ["end of window", "end"].into_iter().find(|label| {
            let from = xe - 2.0 - width_of(label);
            let crossed = now_x.is_some_and(|x| x > from - 2.0 && x < xe);
            !crossed && row.take(from, xe - 2.0)
        })
    });
    (now_at, end_label)
}

/// The labels placed in one row, by their extent: a label is placed only where it does not come
/// within a few points of one already there.
#[derive(Debug, Default)]
struct LabelRow(Vec<(f32, f32)>);

impl LabelRow {
    /// Place a label from `from` to `to`, if there is room; whether it was placed.
    fn take(&mut self, from: f32, to: f32) -> bool {
        const GAP: f32 = 4.0;
        if self.0.iter().any(|&(a, b)| from < b + GAP && a < to + GAP) {
            return false;
        }
        self.0.push((from, to));
        true
    }
}

/// Observed marks closer than this (a filled mark's diameter) share one spot.
const SPOT: f32 = 10.0;

fn place(xs: impl Iterator<Item = (f32, bool)>) -> Placed {
    let mut p = Placed::default();
    for (i, (x, filled)) in xs.enumerate() {
        if filled {
            match p.spots.last_mut() {
                Some((px, n, last)) if (x - *px).abs() < SPOT => {
                    *n += 1;
                    *last = i;
                }
                _ => p.spots.push((x, 1, i)),
            }
        } else if let Some(&(px, _)) = p.hollow.last().filter(|(px, _)| x - px < 9.0) {
            p.band = Some(match p.band {
                Some((from, _, j)) => (from, x, j),
                None => (px, x, i),
            });
        } else {
            p.hollow.push((x, i));
        }
    }
    p
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_axis_a_little_short_of_two_days_still_ends_at_2_d() {
        let labels = |total: f64| {
            super::ticks(total)
                .map(super::tick_label)
                .collect::<Vec<_>>()
        };
        assert_eq!(labels(172_800.0)[0], "2 d");
        // 265 s short: a window planned from before the first call seen.
        assert_eq!(labels(172_535.0)[0], "2 d");
        // A day and a half: no tick past its end.
        assert_eq!(labels(129_600.0)[0], "1 d");
        assert_eq!(labels(100.0), ["90 s", "0 s"]);
    }

    /// Texts 6 points a character wide: "now" 18, "end" 18, "end of window" 78.
    fn width(text: &str) -> f32 {
        6.0 * text.chars().count() as f32
    }

    #[test]
    fn now_is_labelled_even_under_the_end_of_the_window() {
        use super::{LabelRow, place_now_and_end};
        // Early in the window: "now" right of its line, the end named in full.
        let mut row = LabelRow::default();
        assert_eq!(
            place_now_and_end(&mut row, Some(100.0), Some(600.0), 620.0, width),
            (Some((103.0, true)), Some("end of window"))
        );
        // Under "end of window" (which spans 520-598): "now" keeps its label, right of its
        // line, and the end, whose words its line would cross, is named by its line alone.
        let mut row = LabelRow::default();
        assert_eq!(
            place_now_and_end(&mut row, Some(560.0), Some(600.0), 620.0, width),
            (Some((563.0, true)), None)
        );
        // Closer still to the end: "now" left of its line; "end" has no room either.
        let mut row = LabelRow::default();
        assert_eq!(
            place_now_and_end(&mut row, Some(590.0), Some(600.0), 620.0, width),
            (Some((587.0, false)), None)
        );
        // Just left of the full words: "now" right of its line, where "end of window" would
        // have gone, and the end named as "end" after it.
        let mut row = LabelRow::default();
        let (now, end) = place_now_and_end(&mut row, Some(500.0), Some(600.0), 620.0, width);
        assert_eq!(now, Some((503.0, true)));
        assert_eq!(end, Some("end"));
        // No "now" on the axis (a delivery read after its window): the end in full.
        let mut row = LabelRow::default();
        assert_eq!(
            place_now_and_end(&mut row, None, Some(600.0), 620.0, width),
            (None, Some("end of window"))
        );
        // No window's end (a delivery whose answers were all final): "now" right of its line
        // up to the axis's edge, and no room kept for words not drawn.
        let mut row = LabelRow::default();
        assert_eq!(
            place_now_and_end(&mut row, Some(590.0), None, 620.0, width),
            (Some((593.0, true)), None)
        );
        assert!(row.take(560.0, 580.0), "the room the end's words had taken");
    }

    #[test]
    fn a_label_that_would_touch_another_is_left_out() {
        let mut row = super::LabelRow::default();
        assert!(row.take(100.0, 160.0), "end of window");
        assert!(!row.take(150.0, 170.0), "now, over it");
        assert!(!row.take(162.0, 170.0), "now, closer than the gap");
        assert!(row.take(80.0, 95.0), "now, left of it");
        // Counts side by side: ×7 and ×5 10 points apart do not both fit.
        assert!(row.take(40.0, 52.0));
        assert!(!row.take(31.0, 43.0));
        assert!(row.take(20.0, 32.0));
    }

    #[test]
    fn marks_too_close_to_tell_apart_are_drawn_once() {
        // Three attempts within a pixel, one apart; projected retries every 20 px, then every 2.
        let xs = [(0.0, true), (0.5, true), (1.0, true), (50.0, true)]
            .into_iter()
            .chain([
                (100.0, false),
                (120.0, false),
                (122.0, false),
                (124.0, false),
            ]);
        let p = super::place(xs);
        assert_eq!(p.spots, vec![(0.0, 3, 2), (50.0, 1, 3)]);
        assert_eq!(p.hollow, vec![(100.0, 4), (120.0, 5)]);
        assert_eq!(p.band, Some((120.0, 124.0, 6)));
    }

    use super::*;

    #[test]
    fn the_first_retry_is_labelled_90_s() {
        assert_eq!(tick_label(0.0), "0 s");
        assert_eq!(tick_label(90.0), "90 s");
        assert_eq!(tick_label(600.0), "10 min");
        assert_eq!(tick_label(3600.0), "1 h");
        assert_eq!(tick_label(172_800.0), "2 d");
    }

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
