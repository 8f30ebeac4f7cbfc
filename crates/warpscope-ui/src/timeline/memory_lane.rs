//! The memory lane of a device: allocated memory filled and reserved memory as a line, both the
//! largest value under each pixel column, on a scale of the run's reserved peak; the allocated
//! peak marked. Each column is two searches forward from the last column's and a walk up the
//! curve's block maxima ([`MemoryCurve::sweep`]), so a frame costs about the same at any zoom and
//! any number of records.

use crate::format_duration;
use egui::{Align2, Color32, FontId, Mesh, Painter, Pos2, Rect, Shape, Stroke};
use warpscope_core::Profile;
use warpscope_core::analysis::memory::{Attribution, MemoryCurve};
use warpscope_core::model::MemoryAction;
use warpscope_core::units::format_bytes;

use super::utilisation::{COLUMN_PX, span_of};
use super::view::Viewport;

/// Colour of allocated memory.
pub const ALLOCATED: Color32 = Color32::from_rgb(0x4e, 0x8f, 0xd8);
/// Colour of reserved memory.
pub const RESERVED: Color32 = Color32::from_rgb(0xb0, 0x7a, 0xd8);
/// Colour of the peak's mark.
pub const PEAK: Color32 = Color32::from_rgb(0xe0, 0x4f, 0x4f);

/// Draws the lane into `rect`.
pub fn memory_lane_ui(
    painter: &Painter,
    rect: Rect,
    curve: &MemoryCurve,
    view: &Viewport,
    label_color: Color32,
) {
    let width = rect.width();
    let scale = curve
        .max_reserved_bytes
        .max(curve.peak.map_or(0, |k| curve.allocated_bytes[k]));
    if scale <= 0 || width <= 0.0 {
        return;
    }
    let h = rect.height() - 3.0;
    let bottom = rect.bottom() - 1.0;
    #[allow(clippy::cast_precision_loss)]
    let y_of = |bytes: i64| bottom - (bytes as f64 / scale as f64) as f32 * h;
    let mut mesh = Mesh::default();
    let mut line: Vec<Pos2> = Vec::new();
    let mut x = 0.0f32;
    // Runs of columns at the same height become one quad.
    let mut run: Option<(f32, f32)> = None;
    let flush = |mesh: &mut Mesh, from: f32, to: f32, top: f32| {
        if top < bottom {
            mesh.add_colored_rect(
                Rect::from_min_max(
                    Pos2::new(rect.left() + from, top),
                    Pos2::new(rect.left() + to, bottom),
                ),
                ALLOCATED,
            );
        }
    };
    let mut sweep = curve.sweep();
    while x < width {
        let x1 = (x + COLUMN_PX).min(width);
        let (a, b) = span_of(view, width, x, x1);
        let column = sweep.max_in(a, b);
        let top = column.map_or(bottom, |m| y_of(m.allocated_bytes).round());
        match run {
            Some((_, t)) if (t - top).abs() < 0.5 => {}
            Some((from, t)) => {
                flush(&mut mesh, from, x, t);
                run = Some((x, top));
            }
            None => run = Some((x, top)),
        }
        if let Some(m) = column {
            let y = y_of(m.reserved_bytes);
            line.push(Pos2::new(rect.left() + x, y));
            line.push(Pos2::new(rect.left() + x1, y));
        }
        x = x1;
    }
    if let Some((from, t)) = run {
        flush(&mut mesh, from, width, t);
    }
    if !mesh.is_empty() {
        painter.add(Shape::mesh(mesh));
    }
    if line.len() > 1 {
        painter.add(Shape::line(line, Stroke::new(1.5, RESERVED)));
    }
    // The allocated peak: a mark at its time, with its value.
    if let Some(k) = curve.peak {
        #[allow(clippy::cast_precision_loss)]
        let px = rect.left() + view.x_of(curve.time_ns[k] as f64, width);
        if px >= rect.left() - 1.0 && px <= rect.right() + 1.0 {
            let y = y_of(curve.allocated_bytes[k]);
            painter.line_segment(
                [Pos2::new(px, rect.top()), Pos2::new(px, bottom)],
                Stroke::new(1.0, PEAK),
            );
            painter.circle_filled(Pos2::new(px, y), 3.0, PEAK);
        }
    }
    painter.text(
        Pos2::new(rect.right() - 4.0, rect.top() + 1.0),
        Align2::RIGHT_TOP,
        format!("scale {}", format_bytes(scale)),
        FontId::proportional(10.0),
        label_color,
    );
}

/// The tooltip text for the span `[a, b)` of the lane: the largest values in it, and the record
/// in force at its start — the allocation or free that moved the curve there, and by whom.
pub fn describe(
    profile: &Profile,
    curve: &MemoryCurve,
    ops: &Attribution,
    a: i64,
    b: i64,
) -> String {
    let mut text = format!(
        "{} memory, {}..{}",
        curve.device.label(),
        format_duration(a),
        format_duration(b)
    );
    let Some(m) = curve.max_in(a, b) else {
        text.push_str("\nno records yet");
        return text;
    };
    text.push_str(&format!(
        "\nallocated {}\nreserved {}",
        format_bytes(m.allocated_bytes),
        format_bytes(m.reserved_bytes)
    ));
    if let Some(k) = curve.peak
        && curve.time_ns[k] >= a
        && curve.time_ns[k] < b
    {
        text.push_str("\nthe allocated peak of the run");
    }
    let mid = a / 2 + b / 2;
    if let Some(k) = curve.at(mid) {
        let i = curve.record[k] as usize;
        let ev = &profile.memory.events;
        let what = match ev.action[i] {
            MemoryAction::Alloc => "allocation",
            MemoryAction::Free => "free",
            MemoryAction::FreeRequested => "free requested",
            MemoryAction::SegmentAlloc => "segment reserved",
            MemoryAction::SegmentFree => "segment released",
            MemoryAction::Oom => "failed allocation",
            MemoryAction::Snapshot => "snapshot",
        };
        text.push_str(&format!(
            "\n\nlast change at {}: {what} of {}\nby {}",
            format_duration(ev.time_ns[i]),
            format_bytes(i64::try_from(ev.bytes[i]).unwrap_or(i64::MAX)),
            ops.stack_text(i)
        ));
    }
    text
}
