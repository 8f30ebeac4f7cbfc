//! Drawing the lanes: per depth level, the visible events are found by binary search and runs of
//! events narrower than [`MIN_BOX_PX`] are folded into one box that carries a count (Tracy's
//! approach), so a frame costs pixels × log(events), never events. Also the colours of events,
//! names clipped with an ellipsis inside boxes, and counters as small area charts.

use egui::epaint::text::{LayoutJob, TextFormat, TextWrapping};
use egui::{Color32, FontId, Painter, Pos2, Rect, Stroke, StrokeKind};
use warpscope_core::Profile;
use warpscope_core::analysis::range_index::TimeBuckets;
use warpscope_core::model::{CounterTrack, EventKind, Events};

use crate::colors::{copy_color, kernel_color, kind_color};

use super::view::Viewport;

/// The timeline's colours and fonts in the current theme.
#[derive(Clone, Debug)]
pub struct Palette {
    /// Dark theme.
    pub dark: bool,
    /// Background of the lanes.
    pub bg: Color32,
    /// Text.
    pub text: Color32,
    /// Weak text (axis ticks, the visible span).
    pub weak: Color32,
    /// Grid lines and separators.
    pub grid: Color32,
    /// Lane names, event names and tick labels.
    pub small: FontId,
    /// Group headers and the range label.
    pub bold: FontId,
}

impl Palette {
    /// The palette for `visuals`.
    pub fn of(visuals: &egui::Visuals) -> Self {
        let dark = visuals.dark_mode;
        Self {
            dark,
            bg: if dark {
                Color32::from_gray(24)
            } else {
                Color32::from_gray(250)
            },
            text: visuals.text_color(),
            weak: visuals.weak_text_color(),
            grid: if dark {
                Color32::from_white_alpha(14)
            } else {
                Color32::from_black_alpha(16)
            },
            small: FontId::proportional(11.5),
            bold: FontId::proportional(12.5),
        }
    }

    /// A grey of `dark` in the dark theme and `light` in the light one.
    pub fn gray(&self, dark: u8, light: u8) -> Color32 {
        Color32::from_gray(if self.dark { dark } else { light })
    }
}

/// Events narrower than this (in points) are folded with their neighbours.
pub const MIN_BOX_PX: f32 = 3.0;
/// Boxes at least this wide get their name (or count) written inside.
pub const MIN_TEXT_PX: f32 = 26.0;

/// The events of one depth level of a track: all events when the track has a single level, or
/// the indices of the events at that depth. Events of one level never overlap, so both their
/// starts and their ends are sorted.
#[derive(Clone, Copy, Debug)]
pub struct Level<'a> {
    /// The track's events.
    pub events: &'a Events,
    /// Indices of this level's events, or `None` for all events.
    pub indices: Option<&'a [u32]>,
    /// Buckets over the level's event ends, which narrow each search to a few events (a binary
    /// search over millions of events misses the cache at every probe); `None` searches the
    /// whole level.
    pub ends: Option<&'a TimeBuckets>,
}

impl Level<'_> {
    /// Number of events on the level.
    pub fn len(&self) -> usize {
        self.indices.map_or(self.events.len(), <[u32]>::len)
    }

    /// True if the level has no events.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Event index (into the track) of the level's `k`-th event.
    pub fn event(&self, k: usize) -> usize {
        self.indices.map_or(k, |ix| ix[k] as usize)
    }

    /// Start of the level's `k`-th event.
    pub fn start_ns(&self, k: usize) -> i64 {
        self.events.start_ns[self.event(k)]
    }

    /// End of the level's `k`-th event.
    pub fn end_ns(&self, k: usize) -> i64 {
        self.events.end_ns(self.event(k))
    }

    /// First position `>= from` whose event does not satisfy `pred` (binary search; `pred`
    /// must be true for a prefix of the level).
    pub fn partition_point_from(&self, from: usize, pred: impl Fn(usize) -> bool) -> usize {
        partition_point_in(from, self.len(), pred)
    }

    /// First position `>= from` whose event ends at or after `end_ns`: the same as
    /// `partition_point_from(from, pred)` for a `pred` that is true exactly for the events ending
    /// before `end_ns`, searched only in the bucket of `end_ns` when the level has buckets.
    pub fn first_ending_at_or_after(
        &self,
        from: usize,
        end_ns: i64,
        pred: impl Fn(usize) -> bool,
    ) -> usize {
        if let Some(ends) = self.ends {
            let (lo, hi) = ends.window(end_ns);
            let (lo, hi) = (lo.max(from), hi.max(from).min(self.len()));
            // The window must bracket the answer (it does unless `pred` and `end_ns` disagree,
            // as with times beyond 2^53 ns, where f64 comparisons round).
            if (lo == from || pred(lo - 1)) && (hi == self.len() || !pred(hi)) {
                return partition_point_in(lo, hi, pred);
            }
        }
        self.partition_point_from(from, pred)
    }
}

/// First position in `lo..hi` where `pred` is false (`hi` if none), `pred` true on a prefix.
fn partition_point_in(mut lo: usize, mut hi: usize, pred: impl Fn(usize) -> bool) -> usize {
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// The smallest integer time above `t_ns` (`f64` times compared with integer ones).
#[allow(clippy::cast_possible_truncation)]
fn int_above(t_ns: f64) -> i64 {
    (t_ns.floor() as i64).saturating_add(1)
}

/// The smallest integer time at or above `t_ns`.
#[allow(clippy::cast_possible_truncation)]
fn int_at_or_above(t_ns: f64) -> i64 {
    t_ns.ceil() as i64
}

/// One box to draw: a single event (`count == 1`) or a folded run of `count` events starting at
/// level position `first`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LaneBox {
    /// Left edge in points from the lane area's left edge.
    pub x0: f32,
    /// Right edge.
    pub x1: f32,
    /// Level position of the first event.
    pub first: u32,
    /// Number of events in the box.
    pub count: u32,
    /// Start of the first event.
    pub start_ns: i64,
    /// End of the last event.
    pub end_ns: i64,
}

/// Computes the boxes of one level over `view` spread on `width_px` points, into `out` (cleared
/// first). Each step of the loop either emits a box at least [`MIN_BOX_PX`] wide or absorbs
/// events by binary search, so the cost is about `width_px / MIN_BOX_PX × log(events)`.
pub fn fold_level(level: Level<'_>, view: &Viewport, width_px: f32, out: &mut Vec<LaneBox>) {
    out.clear();
    let n = level.len();
    if n == 0 || width_px <= 0.0 {
        return;
    }
    let ns_per_px = view.ns_per_px(width_px);
    let min_ns = f64::from(MIN_BOX_PX) * ns_per_px;
    let t0 = view.start_ns;
    let t1 = view.end_ns;
    #[allow(clippy::cast_precision_loss)]
    let f = |t: i64| t as f64;
    let x = |t: f64| view.x_of(t, width_px);
    let mut k = level.first_ending_at_or_after(0, int_above(t0), |k| f(level.end_ns(k)) <= t0);
    while k < n {
        let s = level.start_ns(k);
        if f(s) > t1 {
            break;
        }
        let e = level.end_ns(k);
        if f(e) - f(s) >= min_ns {
            out.push(LaneBox {
                x0: x(f(s)),
                x1: x(f(e)),
                first: u32::try_from(k).unwrap_or(u32::MAX),
                count: 1,
                start_ns: s,
                end_ns: e,
            });
            k += 1;
            continue;
        }
        // Fold: absorb what ends within MIN_BOX_PX of the fold's end, and a narrow event that
        // starts within that distance; stop at a wide event, a real gap, or the window's end.
        let first = k;
        let mut fold_end = e;
        k += 1;
        loop {
            let limit = f(fold_end) + min_ns;
            let j = level.first_ending_at_or_after(k, int_at_or_above(limit), |p| {
                f(level.end_ns(p)) < limit
            });
            if j > k {
                fold_end = fold_end.max(level.end_ns(j - 1));
                k = j;
            }
            if k >= n || f(fold_end) > t1 {
                break;
            }
            let (s2, e2) = (level.start_ns(k), level.end_ns(k));
            if f(e2) - f(s2) < min_ns && f(s2) <= limit {
                fold_end = fold_end.max(e2);
                k += 1;
            } else {
                break;
            }
        }
        out.push(LaneBox {
            x0: x(f(s)),
            x1: x(f(fold_end)),
            first: u32::try_from(first).unwrap_or(u32::MAX),
            count: u32::try_from(k - first).unwrap_or(u32::MAX),
            start_ns: s,
            end_ns: fold_end,
        });
    }
}

/// The box under `x` (points from the lane area's left edge), with a little slack for boxes
/// narrower than a few points; the nearest one wins.
pub fn hit_box(boxes: &[LaneBox], x: f32) -> Option<&LaneBox> {
    let i = boxes.partition_point(|b| b.x1.max(b.x0 + 1.0) + 2.0 < x);
    boxes[i..]
        .iter()
        .take_while(|b| b.x0 - 2.0 <= x)
        .min_by(|a, b| {
            let d = |bx: &LaneBox| {
                if x >= bx.x0 && x <= bx.x1 {
                    0.0
                } else {
                    (bx.x0 - x).abs().min((bx.x1 - x).abs())
                }
            };
            d(a).total_cmp(&d(b))
        })
}

/// FNV-1a of a string: a stable per-name number for shading.
fn name_hash(s: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in s.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Colour of event `i` of `events`: per kernel name for kernels, by direction for copies and
/// sets, by kind (shaded a little per name so neighbours differ) otherwise.
pub fn event_color(
    profile: &Profile,
    events: &Events,
    detail_kind: EventKind,
    i: usize,
) -> Color32 {
    let name = profile.str(events.name[i]);
    match detail_kind {
        EventKind::Kernel => kernel_color(name),
        EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory => profile
            .copies
            .get(events.detail[i] as usize)
            .map_or_else(|| kind_color(detail_kind), |c| copy_color(c.kind)),
        kind => {
            let base = kind_color(kind);
            #[allow(clippy::cast_precision_loss)]
            let shade = 0.85 + (name_hash(name) % 31) as f32 / 100.0;
            scale_rgb(base, shade)
        }
    }
}

/// Multiplies the RGB channels by `k` (clamped).
pub fn scale_rgb(c: Color32, k: f32) -> Color32 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let s = |v: u8| (f32::from(v) * k).round().clamp(0.0, 255.0) as u8;
    Color32::from_rgba_premultiplied(s(c.r()), s(c.g()), s(c.b()), c.a())
}

/// Mixes `c` towards `to` by `t` (0 = c, 1 = to).
pub fn mix(c: Color32, to: Color32, t: f32) -> Color32 {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let m = |a: u8, b: u8| (f32::from(a) * (1.0 - t) + f32::from(b) * t).round() as u8;
    Color32::from_rgb(m(c.r(), to.r()), m(c.g(), to.g()), m(c.b(), to.b()))
}

/// Black or white, whichever reads better on `bg`.
pub fn text_color_on(bg: Color32) -> Color32 {
    let l = 0.299 * f32::from(bg.r()) + 0.587 * f32::from(bg.g()) + 0.114 * f32::from(bg.b());
    if l > 150.0 {
        Color32::from_gray(20)
    } else {
        Color32::from_gray(245)
    }
}

/// Writes `text` left-aligned inside `rect`, elided with `…` when it does not fit.
pub fn boxed_text(painter: &Painter, rect: Rect, text: &str, color: Color32, font: &FontId) {
    let max_width = rect.width() - 6.0;
    if max_width < 8.0 {
        return;
    }
    let mut job = LayoutJob::single_section(
        text.to_owned(),
        TextFormat {
            font_id: font.clone(),
            color,
            ..TextFormat::default()
        },
    );
    job.wrap = TextWrapping {
        max_width,
        max_rows: 1,
        break_anywhere: true,
        overflow_character: Some('…'),
    };
    let galley = painter.layout_job(job);
    let pos = Pos2::new(rect.left() + 3.0, rect.center().y - galley.size().y / 2.0);
    painter
        .with_clip_rect(rect.intersect(painter.clip_rect()))
        .galley(pos, galley, color);
}

/// Draws a counter as a step-area chart: one sample per point column (the last sample at or
/// before the column), found by binary search, so dense counters cost pixels, not samples.
pub fn counter_ui(
    painter: &Painter,
    rect: Rect,
    counter: &CounterTrack,
    view: &Viewport,
    color: Color32,
) {
    let n = counter.time_ns.len();
    if n == 0 {
        return;
    }
    let (lo, hi) = counter
        .value
        .iter()
        .fold((0.0f64, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let span = (hi - lo).max(f64::EPSILON);
    let width = rect.width();
    let mut mesh = egui::Mesh::default();
    let fill = color.gamma_multiply(0.55);
    let mut line = Vec::new();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let cols = width.ceil().max(0.0) as usize;
    let mut x = 0usize;
    while x < cols {
        #[allow(clippy::cast_precision_loss)]
        let t = view.t_of(x as f32 + 1.0, width);
        #[allow(clippy::cast_possible_truncation)]
        let t_i = t.floor() as i64;
        let upto = counter.time_ns.partition_point(|&s| s <= t_i);
        if upto == 0 {
            x += 1;
            continue;
        }
        let v = counter.value[upto - 1];
        // Extend the column while the same sample stays current.
        let next_t = counter.time_ns.get(upto).copied();
        #[allow(clippy::cast_precision_loss)]
        let next_x = next_t.map_or(cols, |nt| {
            let nx = view.x_of(nt as f64, width).floor();
            if nx.is_finite() && nx > x as f32 {
                (nx as usize).min(cols)
            } else {
                x + 1
            }
        });
        let x_end = next_x.max(x + 1);
        #[allow(clippy::cast_possible_truncation)]
        let h = ((v - lo) / span) as f32 * (rect.height() - 3.0);
        #[allow(clippy::cast_precision_loss)]
        let r = Rect::from_min_max(
            Pos2::new(rect.left() + x as f32, rect.bottom() - h),
            Pos2::new(rect.left() + x_end as f32, rect.bottom()),
        );
        mesh.add_colored_rect(r, fill);
        line.push(r.left_top());
        line.push(r.right_top());
        x = x_end;
    }
    painter.add(egui::Shape::mesh(mesh));
    painter.add(egui::Shape::line(line, Stroke::new(1.0, color)));
    let label = format!("max {}", format_value(hi));
    painter.text(
        rect.right_top() + egui::vec2(-4.0, 1.0),
        egui::Align2::RIGHT_TOP,
        label,
        FontId::proportional(10.0),
        color,
    );
}

/// A counter value with a few significant digits.
pub fn format_value(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2} G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2} M", v / 1e6)
    } else if a >= 1e3 {
        format!("{:.2} k", v / 1e3)
    } else {
        format!("{v:.3}")
    }
}

/// The ▶/▼ of a collapsible group header, painted (not a glyph, so no font needs to have it):
/// pointing down when `open`, right otherwise, centred on `centre`.
pub fn disclosure_triangle(painter: &Painter, centre: Pos2, open: bool, color: Color32) {
    let r = 4.0;
    let points = if open {
        vec![
            centre + egui::vec2(-r, -r * 0.6),
            centre + egui::vec2(r, -r * 0.6),
            centre + egui::vec2(0.0, r * 0.7),
        ]
    } else {
        vec![
            centre + egui::vec2(-r * 0.6, -r),
            centre + egui::vec2(r * 0.7, 0.0),
            centre + egui::vec2(-r * 0.6, r),
        ]
    };
    painter.add(egui::Shape::convex_polygon(
        points,
        color,
        egui::Stroke::NONE,
    ));
}

/// An outline around `rect` (at least a few points wide so it shows on narrow events).
pub fn outline(painter: &Painter, rect: Rect, color: Color32) {
    let mut r = rect;
    if r.width() < 4.0 {
        r = Rect::from_center_size(r.center(), egui::vec2(4.0, r.height()));
    }
    painter.rect_stroke(
        r.expand(1.0),
        1.0,
        Stroke::new(2.0, color),
        StrokeKind::Outside,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use warpscope_core::StrId;

    fn lane(starts: &[i64], durs: &[i64]) -> Events {
        Events {
            start_ns: starts.to_vec(),
            dur_ns: durs.to_vec(),
            name: vec![StrId(0); starts.len()],
            kind: vec![EventKind::Kernel; starts.len()],
            depth: vec![0; starts.len()],
            parent: vec![u32::MAX; starts.len()],
            detail: vec![u32::MAX; starts.len()],
        }
    }

    #[test]
    fn a_million_tiny_events_fold_into_a_few_boxes_that_count_them_all() {
        let n: i64 = 1_000_000;
        // 1 µs apart, 400 ns long, over one second, seen over 1000 points: 1 ms per point.
        let starts: Vec<i64> = (0..n).map(|i| i * 1_000).collect();
        let durs = vec![400; starts.len()];
        let ev = lane(&starts, &durs);
        let view = Viewport::new(0.0, 1e9);
        let mut out = Vec::new();
        fold_level(
            Level {
                events: &ev,
                indices: None,
                ends: None,
            },
            &view,
            1000.0,
            &mut out,
        );
        assert!(!out.is_empty());
        assert!(out.len() <= 1000 / 3 + 1, "{} boxes", out.len());
        assert_eq!(
            out.iter().map(|b| u64::from(b.count)).sum::<u64>(),
            1_000_000
        );
    }

    #[test]
    fn buckets_over_the_ends_fold_exactly_as_the_binary_search() {
        // Bursts of tiny events, wide events and gaps of every size, on one level and on a
        // level of every third event.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            i64::try_from(x % n).unwrap_or(0)
        };
        let (mut starts, mut durs) = (Vec::new(), Vec::new());
        let mut t = 0i64;
        for _ in 0..200_000 {
            t += [1, 40, 900, 50_000][usize::try_from(next(4)).unwrap_or(0)] + next(30);
            let d = [0, 3, 200, 20_000][usize::try_from(next(4)).unwrap_or(0)] + next(10);
            starts.push(t);
            durs.push(d);
            t += d;
        }
        let ev = lane(&starts, &durs);
        let idx: Vec<u32> = (0..200_000).step_by(3).collect();
        let all = TimeBuckets::new(ev.len(), 8, |k| ev.end_ns(k));
        let third = TimeBuckets::new(idx.len(), 8, |k| ev.end_ns(idx[k] as usize));
        assert!(all.has_buckets() && third.has_buckets());
        let (mut want, mut got) = (Vec::new(), Vec::new());
        for v in 0..300 {
            #[allow(clippy::cast_precision_loss)]
            let (a, w) = (
                next(t.unsigned_abs()) as f64 - 500.0,
                [t as f64 * 1.1, 1e6, 3e4, 100.0][v % 4] * (0.5 + v as f64 / 300.0),
            );
            let view = Viewport::new(a, a + w);
            for (indices, ends) in [(None, &all), (Some(&idx[..]), &third)] {
                let plain = Level {
                    events: &ev,
                    indices,
                    ends: None,
                };
                fold_level(plain, &view, 1_700.0, &mut want);
                fold_level(
                    Level {
                        ends: Some(ends),
                        ..plain
                    },
                    &view,
                    1_700.0,
                    &mut got,
                );
                assert_eq!(got, want, "{view:?}");
            }
        }
    }

    #[test]
    fn bursts_fold_into_one_box_each() {
        // 1000 bursts of 1000 events (50 ns apart, 20 ns long), one burst every 10 ms; over
        // 16000 points (0.625 ms per point) each burst is one box of 1000.
        let mut starts = Vec::new();
        for burst in 0..1_000i64 {
            for k in 0..1_000 {
                starts.push(burst * 10_000_000 + k * 50);
            }
        }
        let durs = vec![20; starts.len()];
        let ev = lane(&starts, &durs);
        let view = Viewport::new(0.0, 1e10);
        let mut out = Vec::new();
        fold_level(
            Level {
                events: &ev,
                indices: None,
                ends: None,
            },
            &view,
            16_000.0,
            &mut out,
        );
        assert_eq!(out.len(), 1_000);
        assert!(out.iter().all(|b| b.count == 1_000));
    }

    #[test]
    fn wide_events_stay_single_and_only_visible_ones_are_drawn() {
        let ev = lane(
            &[0, 1_000, 2_000, 3_000, 10_000],
            &[900, 900, 900, 900, 900],
        );
        let view = Viewport::new(900.0, 3_500.0);
        let mut out = Vec::new();
        fold_level(
            Level {
                events: &ev,
                indices: None,
                ends: None,
            },
            &view,
            260.0,
            &mut out,
        );
        // 10 ns per point: each event is 90 points wide; the first ends at 900 (not visible).
        assert_eq!(
            out.iter().map(|b| b.first).collect::<Vec<_>>(),
            vec![1, 2, 3]
        );
        assert!(out.iter().all(|b| b.count == 1));
        assert!((out[0].x0 - 10.0).abs() < 1e-3 && (out[0].x1 - 100.0).abs() < 1e-3);
    }

    #[test]
    fn levels_with_indices_fold_only_their_events() {
        let ev = lane(&[0, 10, 100, 110], &[50, 5, 50, 5]);
        let idx = [1u32, 3];
        let view = Viewport::new(0.0, 200.0);
        let mut out = Vec::new();
        fold_level(
            Level {
                events: &ev,
                indices: Some(&idx),
                ends: None,
            },
            &view,
            200.0,
            &mut out,
        );
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].start_ns, out[0].end_ns), (10, 15));
        assert_eq!((out[1].start_ns, out[1].end_ns), (110, 115));
    }

    #[test]
    fn hit_testing_finds_the_box_under_the_pointer() {
        let ev = lane(&[0, 1_000, 2_000], &[500, 500, 500]);
        let view = Viewport::new(0.0, 3_000.0);
        let mut out = Vec::new();
        fold_level(
            Level {
                events: &ev,
                indices: None,
                ends: None,
            },
            &view,
            300.0,
            &mut out,
        );
        assert_eq!(hit_box(&out, 125.0).map(|b| b.first), Some(1));
        assert_eq!(hit_box(&out, 20.0).map(|b| b.first), Some(0));
        assert_eq!(hit_box(&out, 75.0), None);
        assert_eq!(hit_box(&out, 280.0), None);
        // A narrow event is still hit from a point away.
        let ev = lane(&[1_000], &[1]);
        fold_level(
            Level {
                events: &ev,
                indices: None,
                ends: None,
            },
            &view,
            300.0,
            &mut out,
        );
        assert_eq!(hit_box(&out, 101.0).map(|b| b.count), Some(1));
    }
}
