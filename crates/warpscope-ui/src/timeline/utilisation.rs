//! The utilisation lane at the top of each GPU: how busy the device was under every pixel
//! column, and — with idle causes on — why the rest of the column was idle (host wait, kernel
//! wait, other; `docs/analysis.md`). Each column edge is a bucket lookup and a short search over
//! prefix sums ([`ActivityCover::time_before`]), so a frame costs the same at any zoom and any
//! trace size.

use crate::format_duration;
use egui::{Color32, Mesh, Painter, Pos2, Rect, Shape};
use warpscope_core::analysis::insight::SpanTime;
use warpscope_core::analysis::range_index::{ActivityCover, span_between};

use super::view::Viewport;

/// Width of one column in points.
pub const COLUMN_PX: f32 = 2.0;

/// Colour of busy time.
pub const BUSY: Color32 = Color32::from_rgb(0x5f, 0xa8, 0x3a);
/// Colour of host-wait idle time.
pub const HOST_WAIT: Color32 = Color32::from_rgb(0xe8, 0x8a, 0x2e);
/// Colour of kernel-wait idle time.
pub const KERNEL_WAIT: Color32 = Color32::from_rgb(0xd9, 0xc2, 0x3b);
/// Colour of other idle time.
pub const OTHER_IDLE: Color32 = Color32::from_rgb(0x9a, 0x9a, 0xa6);

/// The time span under columns `[x0, x1)` of the lane.
pub fn span_of(view: &Viewport, width_px: f32, x0: f32, x1: f32) -> (i64, i64) {
    #[allow(clippy::cast_possible_truncation)]
    let t = |x: f32| view.t_of(x, width_px).floor() as i64;
    let (a, b) = (t(x0), t(x1));
    (a, b.max(a + 1))
}

/// Draws the lane into `rect`.
pub fn utilisation_ui(
    painter: &Painter,
    rect: Rect,
    activity: &ActivityCover,
    view: &Viewport,
    show_causes: bool,
) {
    let mesh = utilisation_mesh(rect, activity, view, show_causes);
    if !mesh.is_empty() {
        painter.add(Shape::mesh(mesh));
    }
}

/// The lane in `rect` as one mesh (a shape per box would cost more to tessellate than to
/// compute): runs of columns with the same quantised heights become one quad per colour.
pub fn utilisation_mesh(
    rect: Rect,
    activity: &ActivityCover,
    view: &Viewport,
    show_causes: bool,
) -> Mesh {
    let width = rect.width();
    let h = rect.height() - 2.0;
    let bottom = rect.bottom() - 1.0;
    let mut mesh = Mesh::default();
    let mut flush = |from: f32, to: f32, levels: [u16; 4]| {
        let mut y = bottom;
        let colours = [BUSY, HOST_WAIT, KERNEL_WAIT, OTHER_IDLE];
        for (level, colour) in levels.iter().zip(colours) {
            if *level == 0 {
                continue;
            }
            let top = y - f32::from(*level) / 64.0 * h;
            mesh.add_colored_rect(
                Rect::from_min_max(
                    Pos2::new(rect.left() + from, top),
                    Pos2::new(rect.left() + to, y),
                ),
                colour,
            );
            y = top;
        }
    };
    let mut run: Option<(f32, [u16; 4])> = None;
    let mut x = 0.0f32;
    // A column usually starts where the last one ended: its cumulative times are reused.
    let mut last_edge: Option<(i64, SpanTime)> = None;
    while x < width {
        let x1 = (x + COLUMN_PX).min(width);
        let (a, b) = span_of(view, width, x, x1);
        let ca = match last_edge {
            Some((at, c)) if at == a => c,
            _ => activity.time_before(a),
        };
        let cb = activity.time_before(b);
        last_edge = Some((b, cb));
        let t = span_between(&ca, &cb);
        let levels = quantise(&t, b - a, show_causes);
        match run {
            Some((_, l)) if l == levels => {}
            Some((from, l)) => {
                flush(from, x, l);
                run = Some((x, levels));
            }
            None => run = Some((x, levels)),
        }
        x = x1;
    }
    if let Some((from, l)) = run {
        flush(from, width, l);
    }
    mesh
}

/// Heights in 64ths of the lane: busy, then host wait, kernel wait, other.
fn quantise(t: &SpanTime, span_ns: i64, show_causes: bool) -> [u16; 4] {
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let q = |ns: i64| {
        ((ns as f64 / span_ns as f64) * 64.0)
            .round()
            .clamp(0.0, 64.0) as u16
    };
    if show_causes {
        [
            q(t.busy_ns),
            q(t.host_wait_ns),
            q(t.kernel_wait_ns),
            q(t.other_ns),
        ]
    } else {
        [q(t.busy_ns), 0, 0, 0]
    }
}

/// The tooltip text for the span `[a, b)`.
pub fn describe(t: &SpanTime, a: i64, b: i64) -> String {
    let span = (b - a).max(1);
    #[allow(clippy::cast_precision_loss)]
    let p = |ns: i64| ns as f64 * 100.0 / span as f64;
    format!(
        "{}..{} ({} wide)\nbusy {:.1}%\nidle, host wait {:.1}%\nidle, kernel wait {:.1}%\nidle, other {:.1}%",
        format_duration(a),
        format_duration(b),
        format_duration(b - a),
        p(t.busy_ns),
        p(t.host_wait_ns),
        p(t.kernel_wait_ns),
        p(t.other_ns)
    )
}
