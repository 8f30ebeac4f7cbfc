//! The timeline widget: every device's streams and every process's threads on one zoomable time
//! axis, with lane headers, folding of dense events, hover tooltips, selection with flow arrows,
//! highlighted occurrences of a name and a time range dragged on the axis.
//!
//! Call [`timeline_ui`] every frame with a [`TimelineState`] kept per profile.

mod areas;
mod cache;
mod details;
pub mod input;
mod lanes;
pub mod layout;
pub mod memory_lane;
mod overlays;
pub mod paint;
pub mod utilisation;
pub mod view;

pub use details::selected_event_ui;

use std::collections::HashSet;
use std::sync::Arc;

use egui::{Mesh, Rect, Sense, Vec2};
use warpscope_core::model::{EventRef, MemoryDevice};
use warpscope_core::{Profile, TimeRange};

use crate::{ProfileKey, Selection};
use areas::{AXIS_HEIGHT, Areas};
use cache::ProfileCache;
use layout::GroupKey;
use paint::{LaneBox, Palette};
use view::Viewport;

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
pub fn timeline_ui(
    ui: &mut egui::Ui,
    profile: &Profile,
    state: &mut TimelineState,
    selection: &mut Selection,
) -> TimelineResponse {
    let size = ui.available_size().max(Vec2::new(200.0, 80.0));
    let (rect, _) = ui.allocate_exact_size(size, Sense::hover());
    let id = ui.scope_id().with("warpscope_timeline");
    let areas = Areas::new(rect);
    state.width_px = areas.width;
    let _ = state.cache(profile);
    let pointer = input::pointer_ui(ui, id, profile, state, selection, &areas);

    let placement = {
        let collapsed = state.collapsed.clone();
        let cache = state.cache(profile);
        layout::place(&cache.groups, &collapsed)
    };
    let max_scroll = (placement.height - areas.lanes.height() + 8.0).max(0.0);
    state.scroll_y = state.scroll_y.clamp(0.0, max_scroll);
    let top = areas.lanes.top() - state.scroll_y;

    let palette = Palette::of(ui.visuals());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, palette.bg);
    let ticks = overlays::grid(&painter, &areas, &state.view, &palette);
    let toggled = lanes::group_headers_ui(ui, id, state, &placement, top, &areas, &palette);
    if let Some(key) = toggled
        && !state.collapsed.remove(&key)
    {
        state.collapsed.insert(key);
    }
    let hover_pos = pointer.lanes.hover_pos();
    let drawn = lanes::lanes_ui(
        ui,
        id,
        profile,
        state,
        selection.name,
        &placement,
        top,
        &areas,
        &palette,
        hover_pos,
    );
    if drawn.toggle_idle_causes {
        state.show_idle_causes = !state.show_idle_causes;
    }

    let (selected, track_y) = (selection.event, &drawn.track_y);
    overlays::selected_event(
        &painter, profile, state, selected, track_y, &areas, &palette,
    );
    if let Some(r) = selection.range {
        overlays::range_shade(&painter, r, &state.view, &areas);
    }
    overlays::axis(
        &painter,
        ticks,
        selection.range,
        &state.view,
        &areas,
        &palette,
    );
    overlays::scrollbar_ui(
        ui,
        id,
        &painter,
        &mut state.scroll_y,
        max_scroll,
        placement.height,
        &areas,
        &palette,
    );

    let hit = drawn.hit;
    let clicked = input::clicks_ui(ui, profile, state, selection, &pointer.lanes, hit);
    let response = if pointer.lanes.dragged() {
        pointer.lanes
    } else if let Some(h) = hit {
        let shown = &*state;
        pointer.lanes.on_hover_ui_at_pointer(|ui| {
            details::tooltip_ui(ui, profile, shown, h);
        })
    } else {
        pointer.lanes
    };
    TimelineResponse {
        clicked,
        range_selected: pointer.range_selected,
        response,
    }
}
