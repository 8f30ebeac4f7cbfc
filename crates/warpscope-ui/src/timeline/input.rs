//! Input of the timeline: mouse wheel (zoom at the cursor, Ctrl/Shift pans, over the lane
//! headers scrolls vertically), the W/S/A/D/F keys, Esc, which clears the selection (so that F
//! then fits the whole run), dragging the lanes (pan and scroll), dragging a time range on the
//! axis, and clicks on the lanes (select, double-click to zoom).

use egui::{Event, Key, MouseWheelUnit, Pos2, Rect, Sense};
use warpscope_core::model::EventRef;
use warpscope_core::{Profile, TimeRange};

use super::areas::Areas;
use super::{Hit, TimelineState};
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

/// The lanes as sensed this frame, and the range dragged on the axis.
pub(super) struct Pointer {
    /// The lane area.
    pub lanes: egui::Response,
    /// The time range dragged on the axis this frame, if any.
    pub range_selected: Option<TimeRange>,
}

/// Senses the lanes and the axis, then applies the wheel and keys ([`navigate_ui`]), a drag on
/// the lanes (pan and scroll) and a drag on the axis (a time range; a click clears it).
pub(super) fn pointer_ui(
    ui: &mut egui::Ui,
    id: egui::Id,
    profile: &Profile,
    state: &mut TimelineState,
    selection: &mut Selection,
    areas: &Areas,
) -> Pointer {
    let lanes = ui.interact(areas.lanes, id.with("lanes"), Sense::click_and_drag());
    lanes.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "timeline"));
    let axis = ui.interact(areas.axis, id.with("axis"), Sense::click_and_drag());
    axis.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Slider, true, "time axis"));
    if lanes.clicked() || lanes.drag_started() || axis.clicked() {
        lanes.request_focus();
    }

    let pointer = ui.ctx().pointer_hover_pos();
    let active =
        lanes.has_focus() || axis.has_focus() || pointer.is_some_and(|p| areas.rect.contains(p));
    navigate_ui(
        ui,
        profile,
        state,
        selection,
        &PointerPlace {
            pos: pointer,
            time_rect: areas.time,
            headers_rect: areas.headers,
        },
        active,
    );
    if lanes.dragged() {
        let d = lanes.drag_delta();
        state
            .view
            .pan_ns(-f64::from(d.x) * state.view.ns_per_px(areas.width));
        state.scroll_y -= d.y;
    }
    let range_selected = axis_range_ui(ui, state, selection, &axis, areas);
    Pointer {
        lanes,
        range_selected,
    }
}

/// A drag on the axis selects a time range (from where the button went down); a click clears
/// the range.
fn axis_range_ui(
    ui: &egui::Ui,
    state: &mut TimelineState,
    selection: &mut Selection,
    axis: &egui::Response,
    areas: &Areas,
) -> Option<TimeRange> {
    let width = areas.width;
    let mut range_selected = None;
    if axis.drag_started() {
        // From where the button went down, not where the drag was recognised a few points on.
        state.axis_drag_from_ns = ui
            .input(|i| i.pointer.press_origin())
            .or_else(|| axis.interact_pointer_pos())
            .map(|p| state.view.t_of(p.x - areas.axis.left(), width));
    }
    if axis.dragged()
        && let (Some(from), Some(p)) = (state.axis_drag_from_ns, axis.interact_pointer_pos())
    {
        let to = state.view.t_of(p.x - areas.axis.left(), width);
        #[allow(clippy::cast_possible_truncation)]
        let r = TimeRange::new(from.round() as i64, to.round() as i64);
        if r.duration_ns() > 0 {
            selection.range = Some(r);
            range_selected = Some(r);
        }
    }
    if axis.drag_stopped() {
        state.axis_drag_from_ns = None;
    }
    if axis.clicked() {
        selection.range = None;
    }
    range_selected
}

/// A double-click on the lanes zooms to the event or folded run under the pointer; a click
/// selects the event (returned) or, on empty space, clears the selection.
pub(super) fn clicks_ui(
    ui: &egui::Ui,
    profile: &Profile,
    state: &mut TimelineState,
    selection: &mut Selection,
    lanes: &egui::Response,
    hit: Option<Hit>,
) -> Option<EventRef> {
    let mut clicked = None;
    if lanes.double_clicked() {
        if let Some(Hit::Event(ev)) = hit {
            state.zoom_to_event(profile, ev);
        } else if let Some(Hit::Fold {
            start_ns, end_ns, ..
        }) = hit
        {
            state.set_visible_range(TimeRange::new(start_ns, end_ns.max(start_ns + 1)));
        }
    } else if lanes.clicked() {
        match hit {
            Some(Hit::Event(ev)) => {
                selection.select_event(profile, ev);
                clicked = Some(ev);
            }
            Some(Hit::Fold { .. } | Hit::Utilisation { .. } | Hit::Memory { .. }) => {}
            None => {
                selection.event = None;
                selection.name = None;
            }
        }
        ui.ctx().request_repaint();
    }
    clicked
}
