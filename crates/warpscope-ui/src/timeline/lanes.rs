//! Drawing the lanes of one frame: the group headers (click to fold), each lane's name and
//! separator, and its content (events folded per depth level, a device's utilisation or memory,
//! a counter), noting what the pointer is over.

use std::sync::Arc;

use egui::{Align2, Color32, Painter, Pos2, Rect, Sense, Shape, Stroke};
use warpscope_core::Profile;
use warpscope_core::analysis::strip_version_suffix;
use warpscope_core::model::{EventRef, MemoryDevice};
use warpscope_core::strings::StrId;

use super::areas::Areas;
use super::cache::ProfileCache;
use super::layout::{self, GROUP_HEIGHT, GroupKey, Lane, LaneContent, Placement, ROW_HEIGHT};
use super::overlays::draw_occurrences;
use super::paint::{self, LaneBox, Palette};
use super::view::Viewport;
use super::{Hit, LaneKey, TimelineState, memory_lane, utilisation};

/// What the lanes of one frame are drawn with.
struct Lanes<'a> {
    profile: &'a Profile,
    cache: &'a ProfileCache,
    view: &'a Viewport,
    areas: &'a Areas,
    palette: &'a Palette,
    /// Clipped to the lanes.
    painter: Painter,
    /// Clipped to the headers.
    headers: Painter,
    hover_pos: Option<Pos2>,
    /// The name whose occurrences are highlighted.
    highlight: Option<StrId>,
}

/// What the lanes saw this frame.
pub(super) struct LanesOutput {
    /// What the pointer is over.
    pub hit: Option<Hit>,
    /// The top of each placed track's lane (`None`: folded away), for outlines and flows.
    pub track_y: Vec<Option<f32>>,
    /// A utilisation lane's name was clicked: show or hide the idle causes.
    pub toggle_idle_causes: bool,
}

/// Draws the group headers; returns the group whose header was clicked (to fold or unfold).
pub(super) fn group_headers_ui(
    ui: &egui::Ui,
    id: egui::Id,
    state: &TimelineState,
    placement: &Placement,
    top: f32,
    areas: &Areas,
    palette: &Palette,
) -> Option<GroupKey> {
    let cache = state.cache.as_ref()?;
    let painter = ui.painter_at(areas.rect);
    let headers_painter = painter.with_clip_rect(areas.headers);
    let bands = painter.with_clip_rect(Rect::from_min_max(
        Pos2::new(areas.rect.left(), areas.lanes.top()),
        areas.lanes.right_bottom(),
    ));
    let mut toggled = None;
    for &(gi, y, is_collapsed) in &placement.headers {
        let g = &cache.groups[gi];
        let y0 = top + y;
        if y0 > areas.lanes.bottom() || y0 + GROUP_HEIGHT < areas.lanes.top() {
            continue;
        }
        let band = Rect::from_min_max(
            Pos2::new(areas.rect.left(), y0),
            Pos2::new(areas.lanes.right(), y0 + GROUP_HEIGHT),
        );
        bands.rect_filled(band, 0.0, palette.gray(38, 232));
        let head = Rect::from_min_max(band.min, Pos2::new(areas.headers.right(), band.max.y))
            .intersect(areas.headers);
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
            palette.text,
        );
        headers_painter.text(
            Pos2::new(head.left() + 20.0, head.center().y),
            Align2::LEFT_CENTER,
            format!("{}{count}", g.name),
            palette.bold.clone(),
            palette.text,
        );
    }
    toggled
}

/// Draws every placed lane that is in view (`top` is where the placement's 0 lies on screen),
/// with `selection_name`'s occurrences highlighted.
#[allow(clippy::too_many_arguments)]
pub(super) fn lanes_ui(
    ui: &egui::Ui,
    id: egui::Id,
    profile: &Profile,
    state: &mut TimelineState,
    selection_name: Option<StrId>,
    placement: &Placement,
    top: f32,
    areas: &Areas,
    palette: &Palette,
    hover_pos: Option<Pos2>,
) -> LanesOutput {
    let mut out = LanesOutput {
        hit: None,
        track_y: vec![None; profile.tracks.len()],
        toggle_idle_causes: false,
    };
    let mut boxes = std::mem::take(&mut state.boxes);
    let mut lane_meshes = std::mem::take(&mut state.lane_meshes);
    if let Some(name) = selection_name {
        let _ = state.cache(profile).occurrences(profile, name);
    }
    if let Some(cache) = state.cache.as_ref() {
        let painter = ui.painter_at(areas.rect);
        let lanes = Lanes {
            profile,
            cache,
            view: &state.view,
            areas,
            palette,
            painter: painter.with_clip_rect(areas.lanes),
            headers: painter.with_clip_rect(areas.headers),
            hover_pos,
            highlight: selection_name,
        };
        let occurrences = cache
            .occurrences
            .as_ref()
            .filter(|(n, _)| Some(*n) == selection_name)
            .map(|(_, l)| l);
        for &(gi, li, y) in &placement.lanes {
            let lane = &cache.groups[gi].lanes[li];
            let y0 = top + y;
            let h = lane.height();
            if let LaneContent::Track(ti) = lane.content {
                out.track_y[ti] = Some(y0);
            }
            if y0 > areas.lanes.bottom() || y0 + h < areas.lanes.top() {
                continue;
            }
            if lanes.header_ui(ui, id.with(("lane", gi, li)), lane, y0, h) {
                out.toggle_idle_causes = true;
            }
            let r = Rect::from_min_max(
                Pos2::new(areas.lanes.left(), y0),
                Pos2::new(areas.lanes.right(), y0 + h),
            );
            let hit = match lane.content {
                LaneContent::Utilisation(device) => {
                    let causes = state.show_idle_causes;
                    lanes.utilisation(device, r, causes, &mut lane_meshes)
                }
                LaneContent::Memory(device) => lanes.memory(device, r),
                LaneContent::Counter(ci) => {
                    paint::counter_ui(
                        &lanes.painter,
                        r,
                        &profile.counters[ci],
                        lanes.view,
                        Color32::from_rgb(0x4e, 0x9a, 0xd8),
                    );
                    None
                }
                LaneContent::Track(ti) => {
                    let hit = lanes.track(ti, lane.rows, y0, &mut boxes);
                    // Occurrences of the highlighted name, bright on top, one per point.
                    if let Some(lists) = occurrences {
                        draw_occurrences(
                            &lanes.painter,
                            profile,
                            ti,
                            &lists[ti],
                            lanes.view,
                            areas.lanes,
                            y0,
                        );
                    }
                    hit
                }
            };
            if hit.is_some() {
                out.hit = hit;
            }
        }
    }
    state.boxes = boxes;
    state.lane_meshes = lane_meshes;
    out
}

impl Lanes<'_> {
    /// The lane's name in the header column and its separator; true when a utilisation lane's
    /// name was clicked.
    fn header_ui(&self, ui: &egui::Ui, id: egui::Id, lane: &Lane, y0: f32, h: f32) -> bool {
        let (headers_rect, lanes_rect) = (self.areas.headers, self.areas.lanes);
        let label_rect = Rect::from_min_max(
            Pos2::new(headers_rect.left(), y0),
            Pos2::new(headers_rect.right(), y0 + h.min(ROW_HEIGHT + 4.0)),
        );
        let is_utilisation = matches!(lane.content, LaneContent::Utilisation(_));
        let lr = ui.interact(
            label_rect.intersect(headers_rect),
            id,
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
        let clicked = is_utilisation && lr.clicked();
        paint::boxed_text(
            &self.headers,
            Rect::from_min_max(
                Pos2::new(label_rect.left() + 16.0, label_rect.top()),
                Pos2::new(label_rect.right() - 4.0, label_rect.top() + ROW_HEIGHT),
            ),
            &lane.short_name,
            paint::mix(self.palette.text, self.palette.bg, 0.2),
            &self.palette.small,
        );
        // Lane separator.
        let y = y0 + h + layout::LANE_GAP / 2.0;
        let stroke = Stroke::new(1.0, self.palette.grid);
        self.painter.hline(lanes_rect.x_range(), y, stroke);
        self.headers.hline(headers_rect.x_range(), y, stroke);
        clicked
    }

    /// A device's utilisation in `r` (its mesh reused while the window stays the same).
    fn utilisation(
        &self,
        device: u32,
        r: Rect,
        causes: bool,
        lane_meshes: &mut Vec<(LaneKey, Arc<egui::Mesh>)>,
    ) -> Option<Hit> {
        let act = self.cache.activity_of(device)?;
        let key = LaneKey::new(device, r, self.view, causes);
        let mesh = match lane_meshes.iter().find(|(k, _)| *k == key) {
            Some((_, mesh)) => Arc::clone(mesh),
            None => {
                let mesh = Arc::new(utilisation::utilisation_mesh(r, act, self.view, causes));
                lane_meshes.retain(|(k, _)| k.device != device);
                lane_meshes.push((key, Arc::clone(&mesh)));
                mesh
            }
        };
        if !mesh.is_empty() {
            self.painter.add(Shape::Mesh(mesh));
        }
        let (start_ns, end_ns) = self.hovered_column(r)?;
        Some(Hit::Utilisation {
            device,
            start_ns,
            end_ns,
        })
    }

    /// A device's memory curve in `r`.
    fn memory(&self, device: MemoryDevice, r: Rect) -> Option<Hit> {
        let curve = self.cache.memory_of(device)?;
        memory_lane::memory_lane_ui(&self.painter, r, curve, self.view, self.palette.weak);
        let (start_ns, end_ns) = self.hovered_column(r)?;
        Some(Hit::Memory {
            device,
            start_ns,
            end_ns,
        })
    }

    /// The time span under the pointer's column of the lane `r`, if the pointer is over it
    /// (utilisation and memory lanes).
    fn hovered_column(&self, r: Rect) -> Option<(i64, i64)> {
        let p = self
            .hover_pos
            .filter(|p| p.y >= r.top() && p.y < r.bottom())?;
        let x = p.x - self.areas.lanes.left();
        Some(utilisation::span_of(
            self.view,
            self.areas.width,
            x - utilisation::COLUMN_PX,
            x + utilisation::COLUMN_PX,
        ))
    }

    /// The events of track `ti`, `rows` depth levels from `y0`, folded where narrow.
    fn track(&self, ti: usize, rows: u16, y0: f32, boxes: &mut Vec<LaneBox>) -> Option<Hit> {
        let lanes_rect = self.areas.lanes;
        let mut hit = None;
        for depth in 0..rows {
            let ry = y0 + f32::from(depth) * ROW_HEIGHT;
            if ry > lanes_rect.bottom() || ry + ROW_HEIGHT < lanes_rect.top() {
                continue;
            }
            let level = self.cache.level(self.profile, ti, depth);
            paint::fold_level(level, self.view, self.areas.width, boxes);
            for b in boxes.iter() {
                self.event_box(ti, level.event(b.first as usize), b, ry);
            }
            let row_hovered = self
                .hover_pos
                .is_some_and(|p| p.y >= ry && p.y < ry + ROW_HEIGHT);
            if row_hovered
                && let Some(p) = self.hover_pos
                && let Some(b) = paint::hit_box(boxes, p.x - lanes_rect.left())
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
        hit
    }

    /// One box of a level at `ry`: an event (`first`), or a folded run that starts with it.
    fn event_box(&self, ti: usize, first: usize, b: &LaneBox, ry: f32) {
        let (profile, lanes_rect) = (self.profile, self.areas.lanes);
        let ev = &profile.tracks[ti].events;
        let x0 = lanes_rect.left() + b.x0.max(-10.0);
        let x1 = lanes_rect.left() + b.x1.min(self.areas.width + 10.0);
        let kind = ev.kind[first];
        let mut color = self.cache.event_color(profile, ev, kind, first);
        let r = Rect::from_min_max(
            Pos2::new(x0, ry + 1.0),
            Pos2::new((x1 - 0.5).max(x0 + 1.0), ry + ROW_HEIGHT - 1.0),
        );
        if b.count > 1 {
            color = paint::mix(color, Color32::from_gray(128), 0.35);
        }
        if let Some(name) = self.highlight
            && (b.count > 1 || ev.name[first] != name)
        {
            color = paint::mix(color, self.palette.bg, 0.6);
        }
        self.painter.rect_filled(r, 1.0, color);
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
            paint::boxed_text(&self.painter, vis, &text, tc, &self.palette.small);
        }
    }
}
