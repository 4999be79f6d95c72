//! The pointer's position across a zoom.
//!
//! egui-winit turns the mouse's position into points when the mouse moves, at the zoom of that
//! moment, and gives a click the last position it turned. After a zoom (A+, A−, Ctrl +) that
//! position is in the old zoom's points until the mouse moves again, so a second click on A+
//! without moving landed elsewhere: on nothing, on Settings, on the theme. egui itself rescales
//! only the screen's rectangle ("we should really scale everything else in the input too").
//! [`PointerZoom::restate`] puts the positions of the input in the points of the zoom the frame
//! is drawn at.

use egui::{Event, Pos2};

/// What is known of the position egui-winit keeps for the pointer.
#[derive(Debug, Default)]
pub struct PointerZoom {
    /// A zoom asked for during the last frame, in force from the next one.
    pending: Option<f32>,
    /// The pointer's last position as egui-winit turned it, and the zoom it was turned at.
    last: Option<(Pos2, f32)>,
    /// The zoom the last frame was drawn at.
    drawn_at: Option<f32>,
}

impl PointerZoom {
    /// Zoom to `zoom` from the next frame on, and say so to [`PointerZoom::restate`].
    pub fn zoom_to(&mut self, ctx: &egui::Context, zoom: f32) {
        ctx.set_zoom_factor(zoom);
        self.pending = Some(zoom);
    }

    /// Put the pointer's positions in `events` in the points of the zoom the coming frame is
    /// drawn at. `before` is the zoom now in force, at which egui-winit turned the moves
    /// among `events`.
    pub fn restate(&mut self, before: f32, events: &mut Vec<Event>) {
        let after = self.pending.take().unwrap_or(before);
        let mut moved = false;
        for event in events.iter_mut() {
            match event {
                Event::PointerMoved(pos) => {
                    self.last = Some((*pos, before));
                    moved = true;
                    *pos = at_zoom(*pos, before, after);
                }
                Event::PointerButton { pos, .. } => {
                    if let Some((_, turned_at)) = self.last {
                        *pos = at_zoom(*pos, turned_at, after);
                    }
                }
                Event::PointerGone => self.last = None,
                _ => {}
            }
        }
        // A zoom that takes effect while the pointer rests: what it is over is where it is now,
        // not where the old position would put it.
        let zoomed = self.drawn_at.is_some_and(|z| z != after);
        if zoomed
            && !moved
            && let Some((pos, turned_at)) = self.last
        {
            events.insert(0, Event::PointerMoved(at_zoom(pos, turned_at, after)));
        }
        self.drawn_at = Some(after);
    }
}

/// `pos` in the points of zoom `from`, in those of zoom `to` (the pixel stays where it is).
fn at_zoom(pos: Pos2, from: f32, to: f32) -> Pos2 {
    if from == to || !(from > 0.0 && to > 0.0) {
        pos
    } else {
        (pos.to_vec2() * (from / to)).to_pos2()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn click(pos: Pos2, pressed: bool) -> Event {
        Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        }
    }

    fn positions(events: &[Event]) -> Vec<(bool, Pos2)> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::PointerMoved(p) => Some((false, *p)),
                Event::PointerButton { pos, .. } => Some((true, *pos)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_second_click_after_a_zoom_lands_where_the_pointer_is() {
        let ctx = egui::Context::default();
        let mut p = PointerZoom::default();
        // At zoom 1 the pointer moves to (1000, 20) and clicks A+.
        let mut frame = vec![
            Event::PointerMoved(Pos2::new(1000.0, 20.0)),
            click(Pos2::new(1000.0, 20.0), true),
            click(Pos2::new(1000.0, 20.0), false),
        ];
        p.restate(1.0, &mut frame);
        assert_eq!(
            positions(&frame),
            [
                (false, Pos2::new(1000.0, 20.0)),
                (true, Pos2::new(1000.0, 20.0)),
                (true, Pos2::new(1000.0, 20.0))
            ]
        );
        p.zoom_to(&ctx, 1.25);
        // The frame drawn at 1.25 first: the resting pointer is moved to where it now is.
        let mut next = Vec::new();
        p.restate(1.0, &mut next);
        assert_eq!(positions(&next), [(false, Pos2::new(800.0, 16.0))]);
        // The second click, the mouse not moved: egui-winit gives the old position.
        let mut again = vec![
            click(Pos2::new(1000.0, 20.0), true),
            click(Pos2::new(1000.0, 20.0), false),
        ];
        p.restate(1.25, &mut again);
        assert_eq!(
            positions(&again),
            [
                (true, Pos2::new(800.0, 16.0)),
                (true, Pos2::new(800.0, 16.0))
            ]
        );
        // Once the mouse moves, egui-winit turns it at the new zoom: left as it is.
        let mut moved = vec![
            Event::PointerMoved(Pos2::new(801.0, 16.0)),
            click(Pos2::new(801.0, 16.0), true),
        ];
        p.restate(1.25, &mut moved);
        assert_eq!(
            positions(&moved),
            [
                (false, Pos2::new(801.0, 16.0)),
                (true, Pos2::new(801.0, 16.0))
            ]
        );
    }

    #[test]
    fn a_zoom_from_the_keyboard_is_seen_a_frame_later() {
        // Ctrl + zooms inside egui: nothing says it is pending, but the next frame's zoom does.
        let mut p = PointerZoom::default();
        let mut frame = vec![Event::PointerMoved(Pos2::new(300.0, 300.0))];
        p.restate(1.0, &mut frame);
        let mut drawn_at_1_5 = vec![click(Pos2::new(300.0, 300.0), true)];
        p.restate(1.5, &mut drawn_at_1_5);
        assert_eq!(
            positions(&drawn_at_1_5),
            [
                (false, Pos2::new(200.0, 200.0)),
                (true, Pos2::new(200.0, 200.0))
            ]
        );
    }

    #[test]
    fn nothing_moves_without_a_zoom_or_a_pointer() {
        let mut p = PointerZoom::default();
        let mut none = vec![click(Pos2::new(5.0, 5.0), true)];
        p.restate(1.0, &mut none);
        assert_eq!(positions(&none), [(true, Pos2::new(5.0, 5.0))]);
        // A pointer that left the window is not brought back by a zoom.
        let mut gone = vec![Event::PointerMoved(Pos2::new(9.0, 9.0)), Event::PointerGone];
        p.restate(1.0, &mut gone);
        let mut later = Vec::new();
        p.restate(2.0, &mut later);
        assert!(later.is_empty());
    }
}
