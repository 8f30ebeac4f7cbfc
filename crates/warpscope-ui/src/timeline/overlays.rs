//! What the timeline draws over its lanes: the grid, the selected event's outline and launch
//! flows, the selected time range, the time axis with its ticks and the range's length, the
//! visible span in the corner, the scroll bar, and the occurrences of a highlighted name.

use egui::{Align2, Color32, FontId, Painter, Pos2, Rect, Sense, Stroke, Vec2};
use warpscope_core::Profile;
use warpscope_core::TimeRange;
use warpscope_core::model::{EventRef, FlowKind};

use super::TimelineState;
use super::areas::{Areas, SCROLLBAR_WIDTH};
use super::layout::ROW_HEIGHT;
use super::paint::{self, Palette};
use super::view::{self, Ticks, Viewport};
use crate::format_duration;

/// The vertical grid lines at the axis's major ticks; returns the ticks.
pub(super) fn grid(painter: &Painter, areas: &Areas, view: &Viewport, palette: &Palette) -> Ticks {
    let lanes = painter.with_clip_rect(areas.lanes);
    let ticks = view::choose_ticks(view.ns_per_px(areas.width), 110.0);
    for t in ticks.positions(view.start_ns, view.end_ns) {
        let x = areas.lanes.left() + view.x_of(t, areas.width);
        lanes.vline(x, areas.lanes.y_range(), Stroke::new(1.0, palette.grid));
    }
    ticks
}

/// The selected event's outline and the launch flows from or to it (at most 256), where their
/// lanes are placed (`track_y`).
pub(super) fn selected_event(
    painter: &Painter,
    profile: &Profile,
    state: &TimelineState,
    selected: Option<EventRef>,
    track_y: &[Option<f32>],
    areas: &Areas,
    palette: &Palette,
) {
    let Some(sel) = selected else {
        return;
    };
    let view = &state.view;
    let lanes = painter.with_clip_rect(areas.lanes);
    let outline_color = if palette.dark {
        Color32::WHITE
    } else {
        Color32::BLACK
    };
    if let Some(r) = event_rect(profile, sel, track_y, view, areas.lanes) {
        paint::outline(&lanes, r, outline_color);
    }
    let Some(cache) = state.cache.as_ref() else {
        return;
    };
    for fi in cache.flows_of(profile, sel).into_iter().take(256) {
        let f = profile.flows[fi];
        if f.kind != FlowKind::Launch {
            continue;
        }
        let (Some(a), Some(b)) = (
            event_rect(profile, f.from, track_y, view, areas.lanes),
            event_rect(profile, f.to, track_y, view, areas.lanes),
        ) else {
            continue;
        };
        draw_flow(&lanes, a.left_center(), b.left_center(), outline_color);
    }
}

/// The selected time range, shaded over the axis and the lanes.
pub(super) fn range_shade(painter: &Painter, range: TimeRange, view: &Viewport, areas: &Areas) {
    let time_rect = areas.time;
    #[allow(clippy::cast_precision_loss)]
    let (a, b) = (
        areas.lanes.left() + view.x_of(range.start_ns as f64, areas.width),
        areas.lanes.left() + view.x_of(range.end_ns as f64, areas.width),
    );
    let shade = Rect::from_min_max(
        Pos2::new(a.max(time_rect.left() - 2.0), time_rect.top()),
        Pos2::new(b.min(time_rect.right() + 2.0), time_rect.bottom()),
    );
    let clipped = painter.with_clip_rect(time_rect);
    let tint = Color32::from_rgba_unmultiplied(80, 140, 255, 40);
    clipped.rect_filled(shade, 0.0, tint);
    let edge = Stroke::new(1.0, Color32::from_rgb(80, 140, 255));
    clipped.vline(a, time_rect.y_range(), edge);
    clipped.vline(b, time_rect.y_range(), edge);
}

/// The time axis on top of everything: minor and major ticks with labels, the selected range's
/// length, the visible span in the corner, and the lines between headers, axis and lanes.
pub(super) fn axis(
    painter: &Painter,
    ticks: Ticks,
    range: Option<TimeRange>,
    view: &Viewport,
    areas: &Areas,
    palette: &Palette,
) {
    let (rect, axis_rect, width) = (areas.rect, areas.axis, areas.width);
    painter.rect_filled(
        Rect::from_min_max(rect.left_top(), Pos2::new(rect.right(), axis_rect.bottom())),
        0.0,
        palette.gray(32, 240),
    );
    let axis_painter = painter.with_clip_rect(axis_rect);
    let minor_ticks = Ticks {
        step_ns: ticks.step_ns / 5.0,
        ..ticks
    };
    for t in minor_ticks.positions(view.start_ns, view.end_ns) {
        let x = axis_rect.left() + view.x_of(t, width);
        let y = (axis_rect.bottom() - 4.0)..=axis_rect.bottom();
        axis_painter.vline(x, y, Stroke::new(1.0, palette.weak));
    }
    for t in ticks.positions(view.start_ns, view.end_ns) {
        let x = axis_rect.left() + view.x_of(t, width);
        let y = (axis_rect.bottom() - 9.0)..=axis_rect.bottom();
        axis_painter.vline(x, y, Stroke::new(1.0, palette.text));
        axis_painter.text(
            Pos2::new(x + 3.0, axis_rect.top() + 3.0),
            Align2::LEFT_TOP,
            ticks.label(t),
            palette.small.clone(),
            palette.text,
        );
    }
    if let Some(r) = range {
        range_label(painter, &axis_painter, r, view, areas, palette);
    }
    // Corner: the visible span.
    let corner = Rect::from_min_max(
        rect.left_top(),
        Pos2::new(axis_rect.left(), axis_rect.bottom()),
    );
    painter.text(
        corner.left_center() + Vec2::new(6.0, 0.0),
        Align2::LEFT_CENTER,
        format!("view {}", format_duration(view.range().duration_ns())),
        palette.small.clone(),
        palette.weak,
    );
    let line = Stroke::new(1.0, palette.grid);
    painter.vline(areas.headers.right(), rect.y_range(), line);
    painter.hline(rect.x_range(), axis_rect.bottom(), line);
}

/// The selected range's length in a label on the axis, over the middle of the range.
fn range_label(
    painter: &Painter,
    axis_painter: &Painter,
    r: TimeRange,
    view: &Viewport,
    areas: &Areas,
    palette: &Palette,
) {
    let axis_rect = areas.axis;
    #[allow(clippy::cast_precision_loss)]
    let (a, b) = (
        axis_rect.left() + view.x_of(r.start_ns as f64, areas.width),
        axis_rect.left() + view.x_of(r.end_ns as f64, areas.width),
    );
    let mid = Pos2::new(
        (0.5 * (a + b)).clamp(axis_rect.left() + 40.0, axis_rect.right() - 40.0),
        axis_rect.center().y,
    );
    let label = format_duration(r.duration_ns());
    let galley = painter.layout_no_wrap(label, palette.bold.clone(), Color32::WHITE);
    let bg_rect = Rect::from_center_size(mid, galley.size() + Vec2::new(10.0, 4.0));
    axis_painter.rect_filled(bg_rect, 3.0, Color32::from_rgb(50, 110, 220));
    axis_painter.galley(bg_rect.min + Vec2::new(5.0, 2.0), galley, Color32::WHITE);
}

/// The vertical scroll bar of the lanes, when they are taller than the area (`content_height`);
/// dragging it scrolls (`scroll_y`, up to `max_scroll`).
#[allow(clippy::too_many_arguments)]
pub(super) fn scrollbar_ui(
    ui: &egui::Ui,
    id: egui::Id,
    painter: &Painter,
    scroll_y: &mut f32,
    max_scroll: f32,
    content_height: f32,
    areas: &Areas,
    palette: &Palette,
) {
    if max_scroll <= 0.0 {
        return;
    }
    let (rect, lanes_rect) = (areas.rect, areas.lanes);
    let track = Rect::from_min_max(
        Pos2::new(rect.right() - SCROLLBAR_WIDTH, lanes_rect.top()),
        rect.right_bottom(),
    );
    let frac = lanes_rect.height() / content_height.max(1.0);
    let thumb_h = (track.height() * frac).max(20.0);
    let thumb_y = track.top() + (track.height() - thumb_h) * (*scroll_y / max_scroll);
    let sb = ui.interact(track, id.with("scrollbar"), Sense::drag());
    sb.widget_info(|| egui::WidgetInfo::labeled(egui::Role::ScrollBar, true, "lanes scroll"));
    if sb.dragged() {
        *scroll_y += sb.drag_delta().y / frac.max(1e-3);
    }
    painter.rect_filled(
        Rect::from_min_size(
            Pos2::new(track.left() + 1.0, thumb_y),
            Vec2::new(6.0, thumb_h),
        ),
        3.0,
        palette.gray(90, 170),
    );
}

/// Screen rectangle of `ev` if its lane is placed.
fn event_rect(
    profile: &Profile,
    ev: EventRef,
    track_y: &[Option<f32>],
    view: &Viewport,
    lanes_rect: Rect,
) -> Option<Rect> {
    let y0 = (*track_y.get(ev.track as usize)?)?;
    let events = &profile.tracks.get(ev.track as usize)?.events;
    let i = ev.index as usize;
    if i >= events.len() {
        return None;
    }
    let w = lanes_rect.width();
    let ry = y0 + f32::from(events.depth[i]) * ROW_HEIGHT;
    #[allow(clippy::cast_precision_loss)]
    let (x0, x1) = (
        lanes_rect.left() + view.x_of(events.start_ns[i] as f64, w),
        lanes_rect.left() + view.x_of(events.end_ns(i) as f64, w),
    );
    let x0 = x0.clamp(lanes_rect.left() - 50.0, lanes_rect.right() + 50.0);
    let x1 = x1.clamp(lanes_rect.left() - 50.0, lanes_rect.right() + 50.0);
    Some(Rect::from_min_max(
        Pos2::new(x0, ry + 1.0),
        Pos2::new(x1.max(x0 + 1.0), ry + ROW_HEIGHT - 1.0),
    ))
}

/// A curved arrow from `from` to `to`.
fn draw_flow(painter: &Painter, from: Pos2, to: Pos2, color: Color32) {
    let dy = (to.y - from.y) * 0.5;
    let curve = egui::epaint::CubicBezierShape::from_points_stroke(
        [from, from + Vec2::new(0.0, dy), to - Vec2::new(0.0, dy), to],
        false,
        Color32::TRANSPARENT,
        Stroke::new(1.5, color),
    );
    painter.add(curve);
    let dir = if dy >= 0.0 { 1.0 } else { -1.0 };
    let tip = to;
    let a = tip + Vec2::new(-4.0, -7.0 * dir);
    let b = tip + Vec2::new(4.0, -7.0 * dir);
    painter.add(egui::Shape::convex_polygon(
        vec![tip, a, b],
        color,
        Stroke::NONE,
    ));
}

/// Bright boxes for the occurrences of the highlighted name on one track, at most one per point
/// (jumping by binary search), so the cost stays per pixel.
pub(super) fn draw_occurrences(
    painter: &Painter,
    profile: &Profile,
    ti: usize,
    list: &[u32],
    view: &Viewport,
    lanes_rect: Rect,
    y0: f32,
) {
    if list.is_empty() {
        return;
    }
    let ev = &profile.tracks[ti].events;
    let w = lanes_rect.width();
    #[allow(clippy::cast_possible_truncation)]
    let t0 = view.start_ns.floor() as i64;
    // Events of one name may nest, so start a little early by start time only.
    let mut k =
        list.partition_point(|&i| ev.end_ns(i as usize) < t0 && ev.start_ns[i as usize] < t0);
    while k < list.len() {
        let i = list[k] as usize;
        #[allow(clippy::cast_precision_loss)]
        let (s, e) = (ev.start_ns[i] as f64, ev.end_ns(i) as f64);
        if s > view.end_ns {
            break;
        }
        let x0 = lanes_rect.left() + view.x_of(s, w);
        let x1 = lanes_rect.left() + view.x_of(e, w);
        let ry = y0 + f32::from(ev.depth[i]) * ROW_HEIGHT;
        let color = paint::event_color(profile, ev, ev.kind[i], i);
        let r = Rect::from_min_max(
            Pos2::new(x0.max(lanes_rect.left() - 2.0), ry + 1.0),
            Pos2::new(
                x1.max(x0 + 2.0).min(lanes_rect.right() + 2.0),
                ry + ROW_HEIGHT - 1.0,
            ),
        );
        painter.rect_filled(r, 1.0, color);
        if x1 - x0 < 2.0 {
            // Jump to the first occurrence starting a point later.
            let next_t = view.t_of(x0 - lanes_rect.left() + 1.0, w);
            #[allow(clippy::cast_possible_truncation)]
            let next_t = next_t.ceil() as i64;
            k = (k + 1).max(list.partition_point(|&j| ev.start_ns[j as usize] < next_t));
        } else {
            if r.width() >= paint::MIN_TEXT_PX {
                paint::boxed_text(
                    painter,
                    r.intersect(lanes_rect),
                    profile.str(ev.name[i]),
                    paint::text_color_on(color),
                    &FontId::proportional(11.5),
                );
            }
            k += 1;
        }
    }
}
