//! The job view of a distributed run: a rank × step heat map (time per step, or compute,
//! communication or idle time within the step), rank rows sorted by straggler score, and a
//! click on a cell that takes the timeline to that rank's GPU at that step.

use crate::format_duration as dur;
use egui::{Color32, Rect, RichText, Sense, Ui, vec2};
use warpscope_core::analysis::fleet::{FleetReport, StepCell};
use warpscope_core::{Profile, TimeRange};

use crate::timeline::TimelineState;

/// What the colour of a cell shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Duration of the step.
    #[default]
    StepTime,
    /// Compute time within the step.
    Compute,
    /// Communication time (not under compute) within the step.
    Comm,
    /// GPU idle time within the step.
    Idle,
}

impl Metric {
    const ALL: [Self; 4] = [Self::StepTime, Self::Compute, Self::Comm, Self::Idle];

    fn label(self) -> &'static str {
        match self {
            Self::StepTime => "Time per step",
            Self::Compute => "Compute",
            Self::Comm => "Communication",
            Self::Idle => "Idle",
        }
    }

    /// The cell's value for this metric.
    pub fn of(self, c: &StepCell) -> i64 {
        match self {
            Self::StepTime => c.dur_ns,
            Self::Compute => c.compute_ns,
            Self::Comm => c.comm_ns,
            Self::Idle => c.idle_ns,
        }
    }
}

/// The job view's state.
#[derive(Clone, Debug, Default)]
pub struct FleetState {
    /// What the colours show.
    pub metric: Metric,
    /// The cell clicked last: (rank, step).
    pub selected: Option<(i64, u64)>,
    /// Colour each step's cells from that step's lowest to its highest value (ranks compared
    /// within a step), instead of over the whole map.
    pub within_step: bool,
    /// What the map draws from its report, worked out once (a state belongs to one job's tab,
    /// whose report does not change).
    map: Option<MapCache>,
}

/// The rows and colour range of the heat map, and the choices they were made for.
#[derive(Clone, Debug)]
struct MapCache {
    metric: Metric,
    within_step: bool,
    scale: Scale,
    /// (rank, straggler score), in row order.
    rows: Vec<(i64, i64)>,
}

impl FleetState {
    /// Makes the map's rows and scale again when the metric or the colouring changed (or were
    /// never made).
    fn refresh_map(&mut self, report: &FleetReport) {
        let (metric, within_step) = (self.metric, self.within_step);
        self.map = self
            .map
            .take()
            .filter(|m| m.metric == metric && m.within_step == within_step);
        self.map.get_or_insert_with(|| MapCache {
            metric,
            within_step,
            scale: Scale::new(report, metric, within_step),
            rows: rank_order(report)
                .into_iter()
                .map(|rank| (rank, report.score_of(rank)))
                .collect(),
        });
    }
}

/// The colour range of the map's cells: over all cells, or per step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scale {
    /// Lowest and highest value over all cells.
    pub all: (i64, i64),
    /// Per step (sorted by step): its lowest and highest value, when colouring within steps.
    pub per_step: Vec<(u64, i64, i64)>,
}

impl Scale {
    /// The range of `metric` over the cells of `report`, per step when `within_step`.
    pub fn new(report: &FleetReport, metric: Metric, within_step: bool) -> Self {
        let mut all: Option<(i64, i64)> = None;
        let mut per: std::collections::BTreeMap<u64, (i64, i64)> =
            std::collections::BTreeMap::new();
        for c in &report.step_cells {
            let v = metric.of(c);
            all = Some(all.map_or((v, v), |(a, b)| (a.min(v), b.max(v))));
            if within_step {
                let e = per.entry(c.step).or_insert((v, v));
                *e = (e.0.min(v), e.1.max(v));
            }
        }
        Self {
            all: all.unwrap_or((0, 0)),
            per_step: per.into_iter().map(|(s, (a, b))| (s, a, b)).collect(),
        }
    }

    /// Where `value` of `step` lies in its range, 0 (lowest) to 1 (highest); 0 when the range
    /// is empty.
    pub fn position(&self, step: u64, value: i64) -> f32 {
        let (lo, hi) = self
            .per_step
            .binary_search_by_key(&step, |p| p.0)
            .map_or(self.all, |i| (self.per_step[i].1, self.per_step[i].2));
        if hi <= lo {
            return 0.0;
        }
        #[allow(clippy::cast_precision_loss)]
        let t = (value - lo) as f32 / (hi - lo) as f32;
        t.clamp(0.0, 1.0)
    }
}

/// `1 rank`, `8 ranks`.
pub fn ranks_text(n: usize) -> String {
    if n == 1 {
        "1 rank".to_string()
    } else {
        format!("{n} ranks")
    }
}

/// Rank rows: highest straggler score first, then by rank. The report's stragglers are already
/// in that order (every rank with a score above 0); the others, all at 0, follow by rank.
pub fn rank_order(report: &FleetReport) -> Vec<i64> {
    let stragglers: std::collections::HashSet<i64> =
        report.stragglers.iter().map(|s| s.rank).collect();
    let mut rest: Vec<i64> = report
        .ranks
        .iter()
        .map(|r| r.rank)
        .filter(|r| !stragglers.contains(r))
        .collect();
    rest.sort_unstable();
    report
        .stragglers
        .iter()
        .map(|s| s.rank)
        .chain(rest)
        .collect()
}

/// The device of `rank` in the merged profile: the one whose `rank` property names it (the
/// merge writes `rank 3`), else the device numbered like the rank.
pub fn rank_device(profile: &Profile, rank: i64) -> Option<u32> {
    let who = format!("rank {rank}");
    profile
        .devices
        .iter()
        .find(|d| d.properties.iter().any(|(k, v)| k == "rank" && *v == who))
        .map(|d| d.id)
        .or_else(|| u32::try_from(rank).ok())
}

/// Shows the job view; a click on a cell shows that step on the timeline, scrolled to the
/// rank's GPU. Returns the (rank, step) clicked this frame.
pub fn fleet_ui(
    ui: &mut Ui,
    profile: &Profile,
    report: &FleetReport,
    state: &mut FleetState,
    timeline: &mut TimelineState,
) -> Option<(i64, u64)> {
    ui.horizontal(|ui| {
        ui.strong(format!("Job of {}", ranks_text(report.ranks.len())));
        ui.label("Colour:");
        for m in Metric::ALL {
            ui.selectable_value(&mut state.metric, m, m.label());
        }
        ui.checkbox(&mut state.within_step, "Within each step").on_hover_text(
            "Compare the ranks inside each step: light is the step's lowest value, dark red its \
             highest",
        );
    });
    if !report.aligned {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            "A trace has no Unix-epoch time origin: ranks are not on one clock.",
        );
    }
    for w in &report.warnings {
        ui.colored_label(ui.visuals().warn_fg_color, format!("Warning: {w}"));
    }
    ui.strong(
        "Stragglers (score = lateness past the median arrival + compute above the median; \
         docs/fleet.md)",
    );
    if report.stragglers.is_empty() {
        ui.weak("None: no rank arrived late or computed longer than the median rank.");
    }
    for (i, s) in report.stragglers.iter().take(3).enumerate() {
        ui.label(format!(
            "{}. rank {}: score {}: {}",
            i + 1,
            s.rank,
            dur(s.score),
            s.reason
        ));
    }
    ui.separator();
    if report.step_numbers.is_empty() {
        ui.weak("No ProfilerStep#N ranges in these traces: no per-step map.");
    }
    // The map comes last and takes the height that is left, scrolling its rows.
    state.refresh_map(report);
    let clicked = heat_map_ui(ui, report, state);
    if let Some((rank, step)) = clicked {
        state.selected = Some((rank, step));
        if let Some(c) = cell_of(report, rank, step) {
            let margin = (c.dur_ns / 50).max(1);
            timeline.set_visible_range(TimeRange::new(
                c.start_ns - margin,
                c.start_ns + c.dur_ns + margin,
            ));
            if let Some(device) = rank_device(profile, rank) {
                timeline.scroll_to_device(profile, device);
            }
        }
    }
    clicked
}

/// The cell of (rank, step): `report.step_cells` is sorted by rank, then step.
fn cell_of(report: &FleetReport, rank: i64, step: u64) -> Option<&StepCell> {
    report
        .step_cells
        .binary_search_by_key(&(rank, step), |c| (c.rank, c.step))
        .ok()
        .map(|i| &report.step_cells[i])
}

/// Row height and the widths of the label column and of a cell, in points.
const ROW_H: f32 = 18.0;
const LABEL_W: f32 = 190.0;
const CELL_MIN_W: f32 = 14.0;

fn heat_map_ui(ui: &mut Ui, report: &FleetReport, state: &FleetState) -> Option<(i64, u64)> {
    let steps = &report.step_numbers;
    let map = state.map.as_ref()?;
    if steps.is_empty() {
        return None;
    }
    let (lo, hi) = map.scale.all;
    ui.horizontal(|ui| {
        let range = if state.within_step {
            "each step's lowest (light) to its highest (dark red)".to_string()
        } else {
            format!("{} (light) to {} (dark red)", dur(lo), dur(hi))
        };
        ui.weak(format!(
            "{}: {range}; rows by straggler score; click a cell to see that rank's step on the \
             timeline",
            state.metric.label(),
        ));
    });
    // The step header.
    #[allow(clippy::cast_precision_loss)]
    let cell_w = ((ui.available_width() - LABEL_W) / steps.len() as f32).clamp(CELL_MIN_W, 60.0);
    ui.horizontal(|ui| {
        ui.add_space(LABEL_W);
        for (i, s) in steps.iter().enumerate() {
            let (rect, _) = ui.allocate_exact_size(vec2(cell_w, ROW_H), Sense::hover());
            if i == 0 || i + 1 == steps.len() || cell_w >= 40.0 {
                ui.painter().text(
                    rect.center(),
                    egui::Align2::CENTER_CENTER,
                    s.to_string(),
                    egui::FontId::proportional(11.0),
                    ui.visuals().weak_text_color(),
                );
            }
        }
    });
    let mut clicked = None;
    egui::ScrollArea::vertical()
        .id_salt("fleet_heat_map")
        .auto_shrink(false)
        .show_rows(ui, ROW_H, map.rows.len(), |ui, rows| {
            for &(rank, score) in &map.rows[rows] {
                ui.horizontal(|ui| {
                    ui.spacing_mut().item_spacing.x = 0.0;
                    let label = if score > 0 {
                        format!("rank {rank} · score {}", dur(score))
                    } else {
                        format!("rank {rank}")
                    };
                    let (rect, _) = ui.allocate_exact_size(vec2(LABEL_W, ROW_H), Sense::hover());
                    ui.painter().text(
                        rect.left_center(),
                        egui::Align2::LEFT_CENTER,
                        label,
                        egui::FontId::proportional(12.0),
                        ui.visuals().text_color(),
                    );
                    for &step in steps {
                        let cell = cell_of(report, rank, step);
                        if let Some(hit) =
                            cell_ui(ui, cell, (rank, step), cell_w, &map.scale, state)
                        {
                            clicked = Some(hit);
                        }
                    }
                });
            }
        });
    clicked
}

/// One cell of (rank, step); returns them when clicked.
fn cell_ui(
    ui: &mut Ui,
    cell: Option<&StepCell>,
    (rank, step): (i64, u64),
    w: f32,
    scale: &Scale,
    state: &FleetState,
) -> Option<(i64, u64)> {
    let (rect, response) = ui.allocate_exact_size(vec2(w, ROW_H), Sense::click());
    let Some(c) = cell else {
        response.widget_info(|| {
            egui::WidgetInfo::labeled(
                egui::Role::Cell,
                true,
                format!("rank {rank} step {step}: no step"),
            )
        });
        return None;
    };
    let value = state.metric.of(c);
    response.widget_info(|| {
        let name = format!(
            "rank {rank} step {step}: {} {}",
            state.metric.label().to_lowercase(),
            dur(value)
        );
        egui::WidgetInfo::labeled(egui::Role::Button, true, name)
    });
    let inner = Rect::from_min_size(rect.min, rect.size() - vec2(1.0, 1.0));
    ui.painter()
        .rect_filled(inner, 0.0, ramp(scale.position(step, value)));
    if state.selected == Some((rank, step)) {
        ui.painter().rect_stroke(
            inner,
            0.0,
            egui::Stroke::new(2.0, ui.visuals().strong_text_color()),
            egui::StrokeKind::Inside,
        );
    }
    let response = response.on_hover_ui(|ui| {
        ui.label(RichText::new(format!("rank {rank}, step {step}")).strong());
        ui.label(format!("step {}", dur(c.dur_ns)));
        ui.label(format!("compute {}", dur(c.compute_ns)));
        ui.label(format!("communication {}", dur(c.comm_ns)));
        ui.label(format!("idle {}", dur(c.idle_ns)));
        ui.weak("Click: this step of this rank on the timeline");
    });
    response.clicked().then_some((rank, step))
}

/// A light-yellow (0) → dark-red (1) ramp.
fn ramp(t: f32) -> Color32 {
    let lerp = |a: f32, b: f32| a + (b - a) * t;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let c = |x: f32| x.round().clamp(0.0, 255.0) as u8;
    Color32::from_rgb(
        c(lerp(255.0, 150.0)),
        c(lerp(237.0, 20.0)),
        c(lerp(160.0, 30.0)),
    )
}

#[cfg(test)]
mod tests {
    use warpscope_core::analysis::fleet::{FleetReport, StepCell};

    use super::{Metric, Scale};

    fn cell(rank: i64, step: u64, dur_ns: i64) -> StepCell {
        StepCell {
            rank,
            step,
            start_ns: 0,
            dur_ns,
            compute_ns: 0,
            comm_ns: 0,
            idle_ns: 0,
        }
    }

    #[test]
    fn cells_are_coloured_over_the_map_or_within_their_step() {
        let report = FleetReport {
            ranks: Vec::new(),
            collectives: Vec::new(),
            stragglers: Vec::new(),
            step_numbers: vec![1, 2],
            // Step 2 is slow for everyone; rank 1 is the slowest in both steps.
            step_cells: vec![
                cell(0, 1, 100),
                cell(0, 2, 300),
                cell(1, 1, 110),
                cell(1, 2, 320),
            ],
            aligned: true,
            median_compute_ns: 0,
            no_gpu_ranks: Vec::new(),
            warnings: Vec::new(),
        };
        let map = Scale::new(&report, Metric::StepTime, false);
        assert_eq!(map.all, (100, 320));
        assert!((map.position(1, 110) - 10.0 / 220.0).abs() < 1e-6);
        let steps = Scale::new(&report, Metric::StepTime, true);
        assert_eq!(steps.per_step, [(1, 100, 110), (2, 300, 320)]);
        assert!((steps.position(1, 110) - 1.0).abs() < 1e-6);
        assert!(steps.position(2, 300).abs() < 1e-6);
    }
}
