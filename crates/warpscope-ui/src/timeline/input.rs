//! Navigation input of the timeline: mouse wheel (zoom at the cursor, Ctrl/Shift pans, over the
//! lane headers scrolls vertically), the W/S/A/D/F keys, and Esc, which clears the selection
//! (so that F then fits the whole run).

use egui::{Event, Key, MouseWheelUnit, Pos2, Rect};
use warpscope_core::Profile;

use super::TimelineState;
use crate::Selection;

/// Zoom factor of one W/S key press.
pub const KEY_ZOOM: f64 = 0.75;
/// Fraction of the window one A/D key press pans.
pub const KEY_PAN: f64 = 0.15;

/// Where the pointer is, for the wheel and the keys.
pub struct PointerPlace {
    /// Pointer position, if any.
    pub pos: Option<Pos2>,
    /// The lane area (events) and time axis, left to right.
    pub time_rect: Rect,
    /// The header column.
    pub headers_rect: Rect,
}

/// Applies the wheel and key events of this frame. `active` says whether the keys apply (the
/// timeline is focused or hovered).
pub fn navigate_ui(
    ui: &egui::Ui,
    profile: &Profile,
    state: &mut TimelineState,
    selection: &mut Selection,
    place: &PointerPlace,
    active: bool,
) {
    let width = place.time_rect.width().max(1.0);
    let pointer_time_x = place
        .pos
        .filter(|p| place.time_rect.contains(*p))
        .map(|p| p.x - place.time_rect.left());
    let over_headers = place.pos.is_some_and(|p| place.headers_rect.contains(p));
    let events = ui.input(|i| i.events.clone());
    let mut fit = false;
    for event in &events {
        match event {
            Event::MouseWheel {
                unit,
                delta,
                modifiers,
                ..
            } if pointer_time_x.is_some() || over_headers => {
                let scale = match unit {
                    MouseWheelUnit::Point => 1.0,
                    MouseWheelUnit::Line => 40.0,
                    MouseWheelUnit::Page => place.time_rect.height(),
                };
                let d = *delta * scale;
                if over_headers {
                    state.scroll_y -= d.y;
                } else if modifiers.ctrl || modifiers.shift || modifiers.command {
                    let px = if d.x.abs() > d.y.abs() { d.x } else { d.y };
                    state
                        .view
                        .pan_ns(-f64::from(px) * state.view.ns_per_px(width));
                } else {
                    if d.x.abs() > 0.0 {
                        state
                            .view
                            .pan_ns(-f64::from(d.x) * state.view.ns_per_px(width));
                    }
                    if d.y.abs() > 0.0 {
                        let anchor = state
                            .view
                            .t_of(pointer_time_x.unwrap_or(width / 2.0), width);
                        state.view.zoom_at(anchor, (-f64::from(d.y) / 200.0).exp());
                    }
                }
            }
            Event::Key {
                key,
                pressed: true,
                modifiers,
                ..
            } if active && !modifiers.ctrl && !modifiers.command && !modifiers.alt => {
                let anchor = state
                    .view
                    .t_of(pointer_time_x.unwrap_or(width / 2.0), width);
                let pan = KEY_PAN * state.view.width_ns();
                match key {
                    Key::W => state.view.zoom_at(anchor, KEY_ZOOM),
                    Key::S => state.view.zoom_at(anchor, 1.0 / KEY_ZOOM),
                    Key::A => state.view.pan_ns(-pan),
                    Key::D => state.view.pan_ns(pan),
                    Key::F => fit = true,
                    Key::Escape => *selection = Selection::default(),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    if fit {
        if let Some(range) = selection.range {
            state.set_visible_range(range);
        } else if let Some(ev) = selection.event {
            state.zoom_to_event(profile, ev);
        } else {
            state.fit(profile);
        }
    }
}
