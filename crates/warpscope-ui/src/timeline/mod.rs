//! The timeline widget: every device's streams and every process's threads on one zoomable time
//! axis, with lane headers, folding of dense events, hover tooltips, selection with flow arrows,
//! highlighted occurrences of a name and a time range dragged on the axis.
//!
//! Call [`timeline_ui`] every frame with a [`TimelineState`] kept per profile.

mod cache;
mod details;
pub mod input;
pub mod layout;
pub mod memory_lane;
pub mod paint;
pub mod utilisation;
pub mod view;

pub use details::selected_event_ui;

use std::collections::HashSet;
use std::sync::Arc;

use crate::format_duration;
use egui::{Align2, Color32, FontId, Mesh, Pos2, Rect, Sense, Shape, Stroke, Vec2};
use warpscope_core::analysis::strip_version_suffix;
use warpscope_core::model::{EventRef, FlowKind, MemoryDevice};
use warpscope_core::{Profile, TimeRange};

use crate::{ProfileKey, Selection};
use cache::ProfileCache;
use layout::{GROUP_HEIGHT, GroupKey, LaneContent, ROW_HEIGHT};
use paint::LaneBox;
use view::Viewport;

/// Height of the time axis in points.
const AXIS_HEIGHT: f32 = 26.0;
/// Width of the vertical scroll bar.
const SCROLLBAR_WIDTH: f32 = 8.0;

/// What the pointer is over in the lanes.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Hit {
    /// One event.
    Event(EventRef),
    /// A folded run of events: track, depth, first level position, count, start, end.
    Fold {
        track: u32,
        depth: u16,
        first: u32,
        count: u32,
        start_ns: i64,
        end_ns: i64,
    },
    /// A column of a device's utilisation lane.
    Utilisation {
        device: u32,
        start_ns: i64,
        end_ns: i64,
    },
    /// A column of a device's memory lane.
    Memory {
        device: MemoryDevice,
        start_ns: i64,
        end_ns: i64,
    },
}

/// What a utilisation lane's mesh was computed for: its rectangle, the window and whether idle
/// causes show (as bits, so equal means the same mesh).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct LaneKey {
    device: u32,
    rect: [u32; 4],
    window: [u64; 2],
    causes: bool,
}

impl LaneKey {
    fn new(device: u32, rect: Rect, view: &Viewport, causes: bool) -> Self {
        Self {
            device,
            rect: [rect.min.x, rect.min.y, rect.max.x, rect.max.y].map(f32::to_bits),
            window: [view.start_ns.to_bits(), view.end_ns.to_bits()],
            causes,
        }
    }
}

/// The timeline's state for one profile: the visible window, vertical scroll, collapsed groups
/// and caches derived from the profile.
pub struct TimelineState {
    view: Viewport,
    /// Width of the lane area in the last frame (for key zoom and tests before the first frame).
    width_px: f32,
    scroll_y: f32,
    collapsed: HashSet<GroupKey>,
    cache: Option<ProfileCache>,
    /// Time where a drag on the axis started.
    axis_drag_from_ns: Option<f64>,
    /// Scratch buffer for the boxes of one level.
    boxes: Vec<LaneBox>,
    /// The last mesh of each utilisation lane: frames that show the same window (every frame
    /// while the pointer moves over a still timeline) draw it again instead of computing it.
    lane_meshes: Vec<(LaneKey, Arc<Mesh>)>,
    /// Colour the idle time of the utilisation lanes by cause.
    pub show_idle_causes: bool,
}

impl TimelineState {
    /// A state whose view is fitted to the whole run.
    pub fn new(profile: &Profile) -> Self {
        let mut s = Self {
            view: Viewport::new(0.0, 1_000.0),
            width_px: 1_000.0,
            scroll_y: 0.0,
            collapsed: HashSet::new(),
            cache: None,
            axis_drag_from_ns: None,
            boxes: Vec::new(),
            lane_meshes: Vec::new(),
            show_idle_causes: true,
        };
        s.fit(profile);
        s.fit_gpu_activity_if_small(profile);
        s
    }

    /// The height the timeline needs to show every lane without scrolling (time axis included),
    /// in points: the app gives the rest of the window to the tables.
    pub fn content_height(&mut self, profile: &Profile) -> f32 {
        let collapsed = self.collapsed.clone();
        let cache = self.cache(profile);
        layout::place(&cache.groups, &collapsed).height + AXIS_HEIGHT
    }

    /// Shows the GPU activity when it fills less than half of the run (an nvprof trace whose
    /// kernels sit in the last 5% of a long CPU run would otherwise open on empty lanes).
    fn fit_gpu_activity_if_small(&mut self, profile: &Profile) {
        let cache = self.cache(profile);
        let Some((a, b)) = cache.span_ns else {
            return;
        };
        let gpu = cache
            .activity
            .iter()
            .filter_map(|d| Some((d.busy.intervals().first()?.0, d.busy.intervals().last()?.1)))
            .reduce(|(s, e), (x, y)| (s.min(x), e.max(y)));
        if let Some((s, e)) = gpu
            && (e - s).saturating_mul(2) < b - a
        {
            #[allow(clippy::cast_precision_loss)]
            let (s, e) = (s as f64, e as f64);
            let margin = ((e - s) * 0.02).max(1.0);
            self.view = Viewport::new(s - margin, e + margin);
        }
    }

    fn cache(&mut self, profile: &Profile) -> &mut ProfileCache {
        let key = ProfileKey::of(profile);
        if self.cache.as_ref().is_none_or(|c| c.key != key) {
            self.cache = Some(ProfileCache::build(profile));
            self.lane_meshes.clear();
        }
        self.cache
            .get_or_insert_with(|| ProfileCache::build(profile))
    }

    /// The visible time window, in profile nanoseconds.
    pub fn visible_range(&self) -> TimeRange {
        self.view.range()
    }

    /// Shows exactly `range`.
    #[allow(clippy::cast_precision_loss)]
    pub fn set_visible_range(&mut self, range: TimeRange) {
        self.view = Viewport::new(range.start_ns as f64, range.end_ns as f64);
    }

    /// Shows the whole run (with a small margin on both sides).
    pub fn fit(&mut self, profile: &Profile) {
        let span = self.cache(profile).span_ns.unwrap_or((0, 1_000));
        #[allow(clippy::cast_precision_loss)]
        let (a, b) = (span.0 as f64, span.1 as f64);
        let margin = ((b - a) * 0.01).max(1.0);
        self.view = Viewport::new(a - margin, b + margin);
    }

    /// Zooms so that `event` fills most of the window.
    pub fn zoom_to_event(&mut self, profile: &Profile, event: EventRef) {
        let Some(track) = profile.tracks.get(event.track as usize) else {
            return;
        };
        let i = event.index as usize;
        if i >= track.events.len() {
            return;
        }
        #[allow(clippy::cast_precision_loss)]
        let (s, e) = (
            track.events.start_ns[i] as f64,
            track.events.end_ns(i) as f64,
        );
        let margin = ((e - s) * 0.15).max(50.0);
        self.view = Viewport::new(s - margin, e + margin);
    }

    /// Centres the next (or previous) occurrence of events named `selection.name` (or the
    /// selected event's name) after the selected one (or after the window's centre) and
    /// selects it. Returns the event, or `None` when there is no further occurrence.
    pub fn step_to_occurrence(
        &mut self,
        profile: &Profile,
        selection: &mut Selection,
        forward: bool,
    ) -> Option<EventRef> {
        let name = selection.name.or_else(|| {
            let ev = selection.event?;
            let t = profile.tracks.get(ev.track as usize)?;
            t.events.name.get(ev.index as usize).copied()
        })?;
        // The current position: the selected event if it has this name, else the centre.
        let current = selection
            .event
            .filter(|ev| {
                profile
                    .tracks
                    .get(ev.track as usize)
                    .and_then(|t| t.events.name.get(ev.index as usize))
                    == Some(&name)
            })
            .map(|ev| {
                let t = &profile.tracks[ev.track as usize];
                (t.events.start_ns[ev.index as usize], ev.track, ev.index)
            });
        #[allow(clippy::cast_possible_truncation)]
        let centre = self.view.centre_ns() as i64;
        let key_now = current.unwrap_or(if forward {
            (centre, 0, 0)
        } else {
            (centre, u32::MAX, u32::MAX)
        });
        let lists = self.cache(profile).occurrences(profile, name);
        let mut best: Option<(i64, u32, u32)> = None;
        for (ti, list) in lists.iter().enumerate() {
            let ev = &profile.tracks[ti].events;
            let track = u32::try_from(ti).unwrap_or(u32::MAX);
            let key = |i: u32| (ev.start_ns[i as usize], track, i);
            let cand = if forward {
                let p = list.partition_point(|&i| key(i) <= key_now);
                list.get(p).map(|&i| key(i))
            } else {
                let p = list.partition_point(|&i| key(i) < key_now);
                p.checked_sub(1).map(|q| key(list[q]))
            };
            if let Some(c) = cand {
                let better = match best {
                    None => true,
                    Some(b) => (forward && c < b) || (!forward && c > b),
                };
                if better {
                    best = Some(c);
                }
            }
        }
        let (start_ns, track, index) = best?;
        let ev = EventRef { track, index };
        selection.event = Some(ev);
        selection.name = Some(name);
        let events = &profile.tracks[track as usize].events;
        #[allow(clippy::cast_precision_loss)]
        let (s, e) = (start_ns as f64, events.end_ns(index as usize) as f64);
        if e - s > self.view.width_ns() * 0.8 {
            self.zoom_to_event(profile, ev);
        } else {
            self.view.centre_on(0.5 * (s + e));
        }
        Some(ev)
    }

    /// The full names of the lanes shown (collapsed groups' lanes left out), top to bottom.
    pub fn lane_names(&mut self, profile: &Profile) -> Vec<String> {
        let collapsed = self.collapsed.clone();
        self.cache(profile)
            .groups
            .iter()
            .filter(|g| !collapsed.contains(&g.key))
            .flat_map(|g| g.lanes.iter().map(|l| l.full_name.clone()))
            .collect()
    }

    /// Scrolls the lanes so that GPU `device`'s group is at the top (nothing happens when the
    /// profile has no such GPU).
    pub fn scroll_to_device(&mut self, profile: &Profile, device: u32) {
        let collapsed = self.collapsed.clone();
        let cache = self.cache(profile);
        let placement = layout::place(&cache.groups, &collapsed);
        let top = placement
            .headers
            .iter()
            .find(|(gi, _, _)| cache.groups[*gi].key == GroupKey::Device(device))
            .map(|&(_, y, _)| y);
        if let Some(y) = top {
            self.scroll_y = y;
        }
    }

    /// The header of the group at the top of the scrolled lanes (`GPU 3 · NVIDIA H100...`).
    pub fn top_group_name(&mut self, profile: &Profile) -> Option<String> {
        let collapsed = self.collapsed.clone();
        let scroll_y = self.scroll_y;
        let cache = self.cache(profile);
        let placement = layout::place(&cache.groups, &collapsed);
        placement
            .headers
            .iter()
            .rev()
            .find(|(_, y, _)| *y <= scroll_y)
            .map(|&(gi, _, _)| cache.groups[gi].name.clone())
    }
}

/// What happened in the timeline this frame.
pub struct TimelineResponse {
    /// The event clicked this frame, if any.
    pub clicked: Option<EventRef>,
    /// The time range dragged on the axis this frame (set while dragging), if any.
    pub range_selected: Option<TimeRange>,
    /// The response of the lane area.
    pub response: egui::Response,
}

/// Draws the timeline of `profile` filling the available space and handles its input.
#[allow(clippy::too_many_lines)]
pub fn timeline_ui(
    ui: &mut egui::Ui,
    profile: &Profile,
    state: &mut TimelineState,
    selection: &mut Selection,
) -> TimelineResponse {
    let size = ui.available_size().max(Vec2::new(200.0, 80.0));
    let (rect, _) = ui.allocate_exact_size(size, Sense::hover());
    let id = ui.scope_id().with("warpscope_timeline");
    let header_w = (rect.width() * 0.2).clamp(150.0, 320.0);
    let axis_rect = Rect::from_min_max(
        Pos2::new(rect.left() + header_w, rect.top()),
        Pos2::new(rect.right() - SCROLLBAR_WIDTH, rect.top() + AXIS_HEIGHT),
    );
    let lanes_rect = Rect::from_min_max(
        Pos2::new(axis_rect.left(), axis_rect.bottom()),
        Pos2::new(axis_rect.right(), rect.bottom()),
    );
    let headers_rect = Rect::from_min_max(
        Pos2::new(rect.left(), axis_rect.bottom()),
        Pos2::new(axis_rect.left(), rect.bottom()),
    );
    let time_rect = Rect::from_min_max(axis_rect.left_top(), lanes_rect.right_bottom());
    let width = lanes_rect.width().max(1.0);
    state.width_px = width;
    let _ = state.cache(profile);

    let lanes_resp = ui.interact(lanes_rect, id.with("lanes"), Sense::click_and_drag());
    lanes_resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, "timeline"));
    let axis_resp = ui.interact(axis_rect, id.with("axis"), Sense::click_and_drag());
    axis_resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Slider, true, "time axis"));
    if lanes_resp.clicked() || lanes_resp.drag_started() || axis_resp.clicked() {
        lanes_resp.request_focus();
    }

    // --- navigation -----------------------------------------------------------------------
    let pointer = ui.ctx().pointer_hover_pos();
    let active = lanes_resp.has_focus()
        || axis_resp.has_focus()
        || pointer.is_some_and(|p| rect.contains(p));
    input::navigate_ui(
        ui,
        profile,
        state,
        selection,
        &input::PointerPlace {
            pos: pointer,
            time_rect,
            headers_rect,
        },
        active,
    );
    if lanes_resp.dragged() {
        let d = lanes_resp.drag_delta();
        state
            .view
            .pan_ns(-f64::from(d.x) * state.view.ns_per_px(width));
        state.scroll_y -= d.y;
    }
    // Range selection on the axis.
    let mut range_selected = None;
    if axis_resp.drag_started() {
        // From where the button went down, not where the drag was recognised a few points on.
        state.axis_drag_from_ns = ui
            .input(|i| i.pointer.press_origin())
            .or_else(|| axis_resp.interact_pointer_pos())
            .map(|p| state.view.t_of(p.x - axis_rect.left(), width));
    }
    if axis_resp.dragged()
        && let (Some(from), Some(p)) = (state.axis_drag_from_ns, axis_resp.interact_pointer_pos())
    {
        let to = state.view.t_of(p.x - axis_rect.left(), width);
        #[allow(clippy::cast_possible_truncation)]
        let r = TimeRange::new(from.round() as i64, to.round() as i64);
        if r.duration_ns() > 0 {
            selection.range = Some(r);
            range_selected = Some(r);
        }
    }
    if axis_resp.drag_stopped() {
        state.axis_drag_from_ns = None;
    }
    if axis_resp.clicked() {
        selection.range = None;
    }

    // --- layout ---------------------------------------------------------------------------
    let placement = {
        let collapsed = state.collapsed.clone();
        let cache = state.cache(profile);
        layout::place(&cache.groups, &collapsed)
    };
    let max_scroll = (placement.height - lanes_rect.height() + 8.0).max(0.0);
    state.scroll_y = state.scroll_y.clamp(0.0, max_scroll);
    let top = lanes_rect.top() - state.scroll_y;

    let visuals = ui.visuals().clone();
    let dark = visuals.dark_mode;
    let bg = if dark {
        Color32::from_gray(24)
    } else {
        Color32::from_gray(250)
    };
    let text_color = visuals.text_color();
    let weak = visuals.weak_text_color();
    let grid_color = if dark {
        Color32::from_white_alpha(14)
    } else {
        Color32::from_black_alpha(16)
    };
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, bg);
    let lanes_painter = painter.with_clip_rect(lanes_rect);
    let headers_painter = painter.with_clip_rect(headers_rect);

    // Grid.
    let ticks = view::choose_ticks(state.view.ns_per_px(width), 110.0);
    for t in ticks.positions(state.view.start_ns, state.view.end_ns) {
        let x = lanes_rect.left() + state.view.x_of(t, width);
        lanes_painter.vline(x, lanes_rect.y_range(), Stroke::new(1.0, grid_color));
    }

    // Group headers and lanes.
    let small = FontId::proportional(11.5);
    let bold = FontId::proportional(12.5);
    let collapsed_changed: Option<GroupKey> = {
        let mut toggled = None;
        let cache = state.cache.as_ref();
        if let Some(cache) = cache {
            for &(gi, y, is_collapsed) in &placement.headers {
                let g = &cache.groups[gi];
                let y0 = top + y;
                if y0 > lanes_rect.bottom() || y0 + GROUP_HEIGHT < lanes_rect.top() {
                    continue;
                }
                let band = Rect::from_min_max(
                    Pos2::new(rect.left(), y0),
                    Pos2::new(lanes_rect.right(), y0 + GROUP_HEIGHT),
                );
                let band_color = if dark {
                    Color32::from_gray(38)
                } else {
                    Color32::from_gray(232)
                };
                painter
                    .with_clip_rect(Rect::from_min_max(
                        Pos2::new(rect.left(), lanes_rect.top()),
                        lanes_rect.right_bottom(),
                    ))
                    .rect_filled(band, 0.0, band_color);
                let head =
                    Rect::from_min_max(band.min, Pos2::new(headers_rect.right(), band.max.y))
                        .intersect(headers_rect);
                let resp = ui.interact(head, id.with(("group", gi)), Sense::click());
                let name = g.name.clone();
                resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &name));
                if resp.clicked() {
                    toggled = Some(g.key);
                }
                let count = if is_collapsed {
                    format!("  ({} lanes)", g.lanes.len())
                } else {
                    String::new()
                };
                paint::disclosure_triangle(
                    &headers_painter,
                    Pos2::new(head.left() + 11.0, head.center().y),
                    !is_collapsed,
                    text_color,
                );
                headers_painter.text(
                    Pos2::new(head.left() + 20.0, head.center().y),
                    Align2::LEFT_CENTER,
                    format!("{}{count}", g.name),
                    bold.clone(),
                    text_color,
                );
            }
        }
        toggled
    };
    if let Some(key) = collapsed_changed
        && !state.collapsed.remove(&key)
    {
        state.collapsed.insert(key);
    }

    let hover_pos = lanes_resp.hover_pos();
    let mut hit: Option<Hit> = None;
    let mut toggle_idle_causes = false;
    let highlight = selection.name;
    let mut track_y: Vec<Option<f32>> = vec![None; profile.tracks.len()];
    let mut boxes = std::mem::take(&mut state.boxes);
    let mut lane_meshes = std::mem::take(&mut state.lane_meshes);
    if let Some(name) = highlight {
        let _ = state.cache(profile).occurrences(profile, name);
    }
    if let Some(cache) = state.cache.as_ref() {
        let occurrences = cache
            .occurrences
            .as_ref()
            .filter(|(n, _)| Some(*n) == highlight)
            .map(|(_, l)| l);
        for &(gi, li, y) in &placement.lanes {
            let lane = &cache.groups[gi].lanes[li];
            let y0 = top + y;
            let h = lane.height();
            if let LaneContent::Track(ti) = lane.content {
                track_y[ti] = Some(y0);
            }
            if y0 > lanes_rect.bottom() || y0 + h < lanes_rect.top() {
                continue;
            }
            // Header label.
            let label_rect = Rect::from_min_max(
                Pos2::new(headers_rect.left(), y0),
                Pos2::new(headers_rect.right(), y0 + h.min(ROW_HEIGHT + 4.0)),
            );
            let is_utilisation = matches!(lane.content, LaneContent::Utilisation(_));
            let lr = ui.interact(
                label_rect.intersect(headers_rect),
                id.with(("lane", gi, li)),
                if is_utilisation {
                    Sense::click()
                } else {
                    Sense::hover()
                },
            );
            let full = lane.full_name.clone();
            let role = if is_utilisation {
                egui::Role::Button
            } else {
                egui::Role::Label
            };
            lr.widget_info(|| egui::WidgetInfo::labeled(role, true, &full));
            let lr = lr.on_hover_text(&lane.full_name);
            if is_utilisation && lr.clicked() {
                toggle_idle_causes = true;
            }
            paint::boxed_text(
                &headers_painter,
                Rect::from_min_max(
                    Pos2::new(label_rect.left() + 16.0, label_rect.top()),
                    Pos2::new(label_rect.right() - 4.0, label_rect.top() + ROW_HEIGHT),
                ),
                &lane.short_name,
                paint::mix(text_color, bg, 0.2),
                &small,
            );
            // Lane separator.
            lanes_painter.hline(
                lanes_rect.x_range(),
                y0 + h + layout::LANE_GAP / 2.0,
                Stroke::new(1.0, grid_color),
            );
            headers_painter.hline(
                headers_rect.x_range(),
                y0 + h + layout::LANE_GAP / 2.0,
                Stroke::new(1.0, grid_color),
            );
            match lane.content {
                LaneContent::Utilisation(device) => {
                    let Some(act) = cache.activity_of(device) else {
                        continue;
                    };
                    let r = Rect::from_min_max(
                        Pos2::new(lanes_rect.left(), y0),
                        Pos2::new(lanes_rect.right(), y0 + h),
                    );
                    let key = LaneKey::new(device, r, &state.view, state.show_idle_causes);
                    let mesh = match lane_meshes.iter().find(|(k, _)| *k == key) {
                        Some((_, mesh)) => Arc::clone(mesh),
                        None => {
                            let mesh = Arc::new(utilisation::utilisation_mesh(
                                r,
                                act,
                                &state.view,
                                state.show_idle_causes,
                            ));
                            lane_meshes.retain(|(k, _)| k.device != device);
                            lane_meshes.push((key, Arc::clone(&mesh)));
                            mesh
                        }
                    };
                    if !mesh.is_empty() {
                        lanes_painter.add(Shape::Mesh(mesh));
                    }
                    if let Some((start_ns, end_ns)) =
                        hovered_column(hover_pos, y0, h, lanes_rect, &state.view, width)
                    {
                        hit = Some(Hit::Utilisation {
                            device,
                            start_ns,
                            end_ns,
                        });
                    }
                }
                LaneContent::Memory(device) => {
                    let Some(curve) = cache.memory_of(device) else {
                        continue;
                    };
                    let r = Rect::from_min_max(
                        Pos2::new(lanes_rect.left(), y0),
                        Pos2::new(lanes_rect.right(), y0 + h),
                    );
                    memory_lane::memory_lane_ui(&lanes_painter, r, curve, &state.view, weak);
                    if let Some((start_ns, end_ns)) =
                        hovered_column(hover_pos, y0, h, lanes_rect, &state.view, width)
                    {
                        hit = Some(Hit::Memory {
                            device,
                            start_ns,
                            end_ns,
                        });
                    }
                }
                LaneContent::Counter(ci) => {
                    let r = Rect::from_min_max(
                        Pos2::new(lanes_rect.left(), y0),
                        Pos2::new(lanes_rect.right(), y0 + h),
                    );
                    paint::counter_ui(
                        &lanes_painter,
                        r,
                        &profile.counters[ci],
                        &state.view,
                        Color32::from_rgb(0x4e, 0x9a, 0xd8),
                    );
                }
                LaneContent::Track(ti) => {
                    let track = &profile.tracks[ti];
                    let ev = &track.events;
                    for depth in 0..lane.rows {
                        let ry = y0 + f32::from(depth) * ROW_HEIGHT;
                        if ry > lanes_rect.bottom() || ry + ROW_HEIGHT < lanes_rect.top() {
                            continue;
                        }
                        let level = cache.level(profile, ti, depth);
                        paint::fold_level(level, &state.view, width, &mut boxes);
                        let row_hovered =
                            hover_pos.is_some_and(|p| p.y >= ry && p.y < ry + ROW_HEIGHT);
                        for b in &boxes {
                            let x0 = lanes_rect.left() + b.x0.max(-10.0);
                            let x1 = lanes_rect.left() + b.x1.min(width + 10.0);
                            let first = level.event(b.first as usize);
                            let kind = ev.kind[first];
                            let mut color = cache.event_color(profile, ev, kind, first);
                            let r = Rect::from_min_max(
                                Pos2::new(x0, ry + 1.0),
                                Pos2::new((x1 - 0.5).max(x0 + 1.0), ry + ROW_HEIGHT - 1.0),
                            );
                            if b.count > 1 {
                                color = paint::mix(color, Color32::from_gray(128), 0.35);
                            }
                            if let Some(name) = highlight
                                && (b.count > 1 || ev.name[first] != name)
                            {
                                color = paint::mix(color, bg, 0.6);
                            }
                            lanes_painter.rect_filled(r, 1.0, color);
                            if r.width() >= paint::MIN_TEXT_PX {
                                let tc = paint::text_color_on(color);
                                let text = if b.count > 1 {
                                    format!("{} events", b.count)
                                } else if kind.is_api() {
                                    // As the tables name it: `cudaDeviceSynchronize`, not
                                    // `cudaDeviceSynchronize_v3020`.
                                    strip_version_suffix(profile.str(ev.name[first])).to_owned()
                                } else {
                                    profile.str(ev.name[first]).to_owned()
                                };
                                let vis = r.intersect(lanes_rect);
                                paint::boxed_text(&lanes_painter, vis, &text, tc, &small);
                            }
                        }
                        if row_hovered
                            && let Some(p) = hover_pos
                            && let Some(b) = paint::hit_box(&boxes, p.x - lanes_rect.left())
                        {
                            let track = u32::try_from(ti).unwrap_or(u32::MAX);
                            hit = Some(if b.count == 1 {
                                let idx = level.event(b.first as usize);
                                Hit::Event(EventRef {
                                    track,
                                    index: u32::try_from(idx).unwrap_or(u32::MAX),
                                })
                            } else {
                                Hit::Fold {
                                    track,
                                    depth,
                                    first: b.first,
                                    count: b.count,
                                    start_ns: b.start_ns,
                                    end_ns: b.end_ns,
                                }
                            });
                        }
                    }
                    // Occurrences of the highlighted name, bright on top, one per point.
                    if let Some(lists) = occurrences {
                        draw_occurrences(
                            &lanes_painter,
                            profile,
                            ti,
                            &lists[ti],
                            &state.view,
                            lanes_rect,
                            y0,
                        );
                    }
                }
            }
        }
    }
    state.boxes = boxes;
    state.lane_meshes = lane_meshes;
    if toggle_idle_causes {
        state.show_idle_causes = !state.show_idle_causes;
    }

    // Selected event outline and its flows.
    let outline_color = if dark { Color32::WHITE } else { Color32::BLACK };
    if let Some(sel) = selection.event
        && let Some(r) = event_rect(profile, sel, &track_y, &state.view, lanes_rect)
    {
        paint::outline(&lanes_painter, r, outline_color);
    }
    if let Some(sel) = selection.event
        && let Some(cache) = state.cache.as_ref()
    {
        let flows = cache.flows_of(profile, sel);
        for fi in flows.into_iter().take(256) {
            let f = profile.flows[fi];
            if f.kind != FlowKind::Launch {
                continue;
            }
            let (Some(a), Some(b)) = (
                event_rect(profile, f.from, &track_y, &state.view, lanes_rect),
                event_rect(profile, f.to, &track_y, &state.view, lanes_rect),
            ) else {
                continue;
            };
            draw_flow(
                &lanes_painter,
                a.left_center(),
                b.left_center(),
                outline_color,
            );
        }
    }

    // Range selection shading.
    if let Some(r) = selection.range {
        #[allow(clippy::cast_precision_loss)]
        let (a, b) = (
            lanes_rect.left() + state.view.x_of(r.start_ns as f64, width),
            lanes_rect.left() + state.view.x_of(r.end_ns as f64, width),
        );
        let shade = Rect::from_min_max(
            Pos2::new(a.max(time_rect.left() - 2.0), time_rect.top()),
            Pos2::new(b.min(time_rect.right() + 2.0), time_rect.bottom()),
        );
        let tint = Color32::from_rgba_unmultiplied(80, 140, 255, 40);
        painter
            .with_clip_rect(time_rect)
            .rect_filled(shade, 0.0, tint);
        let edge = Stroke::new(1.0, Color32::from_rgb(80, 140, 255));
        painter
            .with_clip_rect(time_rect)
            .vline(a, time_rect.y_range(), edge);
        painter
            .with_clip_rect(time_rect)
            .vline(b, time_rect.y_range(), edge);
    }

    // Time axis on top of everything.
    painter.rect_filled(
        Rect::from_min_max(rect.left_top(), Pos2::new(rect.right(), axis_rect.bottom())),
        0.0,
        if dark {
            Color32::from_gray(32)
        } else {
            Color32::from_gray(240)
        },
    );
    let axis_painter = painter.with_clip_rect(axis_rect);
    let minor = ticks.step_ns / 5.0;
    let minor_ticks = view::Ticks {
        step_ns: minor,
        ..ticks
    };
    for t in minor_ticks.positions(state.view.start_ns, state.view.end_ns) {
        let x = axis_rect.left() + state.view.x_of(t, width);
        axis_painter.vline(
            x,
            (axis_rect.bottom() - 4.0)..=axis_rect.bottom(),
            Stroke::new(1.0, weak),
        );
    }
    for t in ticks.positions(state.view.start_ns, state.view.end_ns) {
        let x = axis_rect.left() + state.view.x_of(t, width);
        axis_painter.vline(
            x,
            (axis_rect.bottom() - 9.0)..=axis_rect.bottom(),
            Stroke::new(1.0, text_color),
        );
        axis_painter.text(
            Pos2::new(x + 3.0, axis_rect.top() + 3.0),
            Align2::LEFT_TOP,
            ticks.label(t),
            small.clone(),
            text_color,
        );
    }
    if let Some(r) = selection.range {
        #[allow(clippy::cast_precision_loss)]
        let (a, b) = (
            axis_rect.left() + state.view.x_of(r.start_ns as f64, width),
            axis_rect.left() + state.view.x_of(r.end_ns as f64, width),
        );
        let mid = Pos2::new(
            (0.5 * (a + b)).clamp(axis_rect.left() + 40.0, axis_rect.right() - 40.0),
            axis_rect.center().y,
        );
        let label = format_duration(r.duration_ns());
        let galley = painter.layout_no_wrap(label, bold, Color32::WHITE);
        let bg_rect = Rect::from_center_size(mid, galley.size() + Vec2::new(10.0, 4.0));
        axis_painter.rect_filled(bg_rect, 3.0, Color32::from_rgb(50, 110, 220));
        axis_painter.galley(bg_rect.min + Vec2::new(5.0, 2.0), galley, Color32::WHITE);
    }
    // Corner: the visible span.
    let corner = Rect::from_min_max(
        rect.left_top(),
        Pos2::new(axis_rect.left(), axis_rect.bottom()),
    );
    painter.text(
        corner.left_center() + Vec2::new(6.0, 0.0),
        Align2::LEFT_CENTER,
        format!(
            "view {}",
            format_duration(state.visible_range().duration_ns())
        ),
        small,
        weak,
    );
    painter.vline(
        headers_rect.right(),
        rect.y_range(),
        Stroke::new(1.0, grid_color),
    );
    painter.hline(
        rect.x_range(),
        axis_rect.bottom(),
        Stroke::new(1.0, grid_color),
    );

    // Scroll bar.
    if max_scroll > 0.0 {
        let track = Rect::from_min_max(
            Pos2::new(rect.right() - SCROLLBAR_WIDTH, lanes_rect.top()),
            rect.right_bottom(),
        );
        let frac = lanes_rect.height() / placement.height.max(1.0);
        let thumb_h = (track.height() * frac).max(20.0);
        let thumb_y = track.top() + (track.height() - thumb_h) * (state.scroll_y / max_scroll);
        let sb = ui.interact(track, id.with("scrollbar"), Sense::drag());
        sb.widget_info(|| egui::WidgetInfo::labeled(egui::Role::ScrollBar, true, "lanes scroll"));
        if sb.dragged() {
            state.scroll_y += sb.drag_delta().y / frac.max(1e-3);
        }
        painter.rect_filled(
            Rect::from_min_size(
                Pos2::new(track.left() + 1.0, thumb_y),
                Vec2::new(6.0, thumb_h),
            ),
            3.0,
            if dark {
                Color32::from_gray(90)
            } else {
                Color32::from_gray(170)
            },
        );
    }

    // Clicks, double-clicks and the tooltip.
    let mut clicked = None;
    if lanes_resp.double_clicked() {
        if let Some(Hit::Event(ev)) = hit {
            state.zoom_to_event(profile, ev);
        } else if let Some(Hit::Fold {
            start_ns, end_ns, ..
        }) = hit
        {
            state.set_visible_range(TimeRange::new(start_ns, end_ns.max(start_ns + 1)));
        }
    } else if lanes_resp.clicked() {
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
    let response = if lanes_resp.dragged() {
        lanes_resp
    } else if let Some(h) = hit {
        let boxes_state = &*state;
        lanes_resp.on_hover_ui_at_pointer(|ui| {
            details::tooltip_ui(ui, profile, boxes_state, h);
        })
    } else {
        lanes_resp
    };
    TimelineResponse {
        clicked,
        range_selected,
        response,
    }
}

/// The time span under the pointer's column of a lane at `y0`, `h` high, if the pointer is over
/// that lane (utilisation and memory lanes).
fn hovered_column(
    hover_pos: Option<Pos2>,
    y0: f32,
    h: f32,
    lanes_rect: Rect,
    view: &Viewport,
    width: f32,
) -> Option<(i64, i64)> {
    let p = hover_pos.filter(|p| p.y >= y0 && p.y < y0 + h)?;
    let x = p.x - lanes_rect.left();
    Some(utilisation::span_of(
        view,
        width,
        x - utilisation::COLUMN_PX,
        x + utilisation::COLUMN_PX,
    ))
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
fn draw_flow(painter: &egui::Painter, from: Pos2, to: Pos2, color: Color32) {
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
fn draw_occurrences(
    painter: &egui::Painter,
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
