//! Where the parts of the timeline go: the lane headers on the left, the time axis on top, the
//! lanes below it and the vertical scroll bar on the right.

use egui::{Pos2, Rect};

/// Height of the time axis in points.
pub const AXIS_HEIGHT: f32 = 26.0;
/// Width of the vertical scroll bar.
pub const SCROLLBAR_WIDTH: f32 = 8.0;

/// The rectangles of one frame of the timeline.
#[derive(Clone, Copy, Debug)]
pub struct Areas {
    /// The whole widget.
    pub rect: Rect,
    /// The time axis (above the lanes, right of the headers).
    pub axis: Rect,
    /// The lanes (events, utilisation, memory, counters).
    pub lanes: Rect,
    /// The lane headers (names), left of the lanes.
    pub headers: Rect,
    /// The axis and the lanes together: what a time range shades.
    pub time: Rect,
    /// Width of the lanes in points (at least 1).
    pub width: f32,
}

impl Areas {
    /// The areas of a timeline drawn in `rect`.
    pub fn new(rect: Rect) -> Self {
        let header_w = (rect.width() * 0.2).clamp(150.0, 320.0);
        let axis = Rect::from_min_max(
            Pos2::new(rect.left() + header_w, rect.top()),
            Pos2::new(rect.right() - SCROLLBAR_WIDTH, rect.top() + AXIS_HEIGHT),
        );
        let lanes = Rect::from_min_max(
            Pos2::new(axis.left(), axis.bottom()),
            Pos2::new(axis.right(), rect.bottom()),
        );
        let headers = Rect::from_min_max(
            Pos2::new(rect.left(), axis.bottom()),
            Pos2::new(axis.left(), rect.bottom()),
        );
        let time = Rect::from_min_max(axis.left_top(), lanes.right_bottom());
        Self {
            rect,
            axis,
            lanes,
            headers,
            time,
            width: lanes.width().max(1.0),
        }
    }
}
