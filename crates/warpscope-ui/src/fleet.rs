//! The job view of a distributed run: a rank × step heat map (time per step, or compute,
//! communication or idle time within the step), rank rows sorted by straggler score, and a
//! click on a cell that takes the timeline to that rank's GPU at that step.

use crate::format_duration as dur;
use egui::{Color32, Rect, RichText, Sense, Ui, vec2};
use warpscope_core::analysis::fleet::{FleetReport, StepCell};
use warpscope_core::{Profile, TimeRange};

use crate::timeline::TimelineState;

/// What the colour of a cell shows. Compute comes first: in a synchronous job every rank's step
/// takes about as long as the slowest's (the collectives wait for it), so the step time hardly
/// tells the ranks apart, while the compute within the step does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Duration of the step.
    StepTime,
    /// Compute time within the step.
    #[default]
    Compute,
    /// Communication time (not under compute) within the step.
    Comm,
    /// GPU idle time within the step.
    Idle,
}

impl Metric {
    const ALL: [Self; 4] = [Self::Compute, Self::Comm, Self::Idle, Self::StepTime];

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

/// How the cells are coloured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Colouring {
    /// By how far a cell lies from the median rank of its step, as a share of that step's
    /// median time: white at the median, red above it, blue below; full colour at the largest
    /// deviation of the map, and never for less than [`MIN_SPAN`] (so that noise stays pale).
    #[default]
    FromStepMedian,
    /// Each step from its lowest value (light) to its highest (dark red).
    WithinStep,
    /// The whole map from its lowest value (light) to its highest (dark red).
    WholeMap,
}

impl Colouring {
    const ALL: [Self; 3] = [Self::FromStepMedian, Self::WithinStep, Self::WholeMap];

    fn label(self) -> &'static str {
        match self {
            Self::FromStepMedian => "vs step median",
            Self::WithinStep => "within each step",
            Self::WholeMap => "whole map",
        }
    }

    fn tip(self) -> &'static str {
        match self {
            Self::FromStepMedian => {
                "Each cell against the median rank of its step: white is the median, red longer, \
                 blue shorter, as a share of the step's median time"
            }
            Self::WithinStep => {
                "Ranks compared inside each step: light is the step's lowest value, dark red its \
                 highest, however small the difference"
            }
            Self::WholeMap => {
                "One range for the whole map: light is its lowest value, dark red its highest"
            }
        }
    }
}

/// The smallest deviation from the step median that gets the full colour: 2% of the step's
/// median time. A job whose ranks differ by less than this looks pale, not alarming.
pub const MIN_SPAN: f64 = 0.02;

/// The job view's state.
#[derive(Clone, Debug, Default)]
pub struct FleetState {
    /// What the colours show.
    pub metric: Metric,
    /// The cell clicked last: (rank, step).
    pub selected: Option<(i64, u64)>,
    /// How values become colours.
    pub colouring: Colouring,
    /// What the map draws from its report, worked out once (a state belongs to one job's tab,
    /// whose report does not change).
    map: Option<MapCache>,
}

/// The rows and colour range of the heat map, and the choices they were made for.
#[derive(Clone, Debug)]
struct MapCache {
    metric: Metric,
    colouring: Colouring,
    scale: Scale,
    /// (rank, straggler score), in row order.
    rows: Vec<(i64, i64)>,
}

impl FleetState {
    /// Makes the map's rows and scale again when the metric or the colouring changed (or were
    /// never made).
    fn refresh_map(&mut self, report: &FleetReport) {
        let (metric, colouring) = (self.metric, self.colouring);
        self.map = self
            .map
            .take()
            .filter(|m| m.metric == metric && m.colouring == colouring);
        self.map.get_or_insert_with(|| MapCache {
            metric,
            colouring,
            scale: Scale::new(report, metric, colouring),
            rows: rank_order(report)
                .into_iter()
                .map(|rank| (rank, report.score_of(rank)))
                .collect(),
        });
    }
}

/// The figures of one step across ranks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepRange {
    /// The step.
    pub step: u64,
    /// Lowest and highest value of the metric.
    pub lo: i64,
    /// Highest value of the metric.
    pub hi: i64,
    /// Median value of the metric (the lower middle of an even count).
    pub median: i64,
    /// Median duration of the step: what deviations are a share of.
    pub median_dur_ns: i64,
}

/// The colour range of the map's cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Scale {
    /// How values become colours.
    pub colouring: Colouring,
    /// Lowest and highest value over all cells.
    pub all: (i64, i64),
    /// Per step, sorted by step.
    pub per_step: Vec<StepRange>,
    /// With [`Colouring::FromStepMedian`]: the deviation, as a share of the step's median
    /// time, that gets the full colour (the largest of the map, at least [`MIN_SPAN`]).
    pub span: f64,
}

impl Scale {
    /// The range of `metric` over the cells of `report`, coloured as `colouring` says.
    pub fn new(report: &FleetReport, metric: Metric, colouring: Colouring) -> Self {
        let mut all: Option<(i64, i64)> = None;
        let mut per: std::collections::BTreeMap<u64, (Vec<i64>, Vec<i64>)> =
            std::collections::BTreeMap::new();
        for c in &report.step_cells {
            let v = metric.of(c);
            all = Some(all.map_or((v, v), |(a, b)| (a.min(v), b.max(v))));
            let e = per.entry(c.step).or_default();
            e.0.push(v);
            e.1.push(c.dur_ns);
        }
        let per_step: Vec<StepRange> = per
            .into_iter()
            .map(|(step, (mut values, mut durs))| {
                values.sort_unstable();
                durs.sort_unstable();
                StepRange {
                    step,
                    lo: values.first().copied().unwrap_or(0),
                    hi: values.last().copied().unwrap_or(0),
                    median: values[(values.len() - 1) / 2],
                    median_dur_ns: durs[(durs.len() - 1) / 2],
                }
            })
            .collect();
        let mut scale = Self {
            colouring,
            all: all.unwrap_or((0, 0)),
            per_step,
            span: MIN_SPAN,
        };
        if colouring == Colouring::FromStepMedian {
            let widest = report
                .step_cells
                .iter()
                .filter_map(|c| scale.deviation(c.step, metric.of(c)))
                .fold(0.0_f64, |m, d| m.max(d.abs()));
            scale.span = widest.max(MIN_SPAN);
        }
        scale
    }

    fn step_range(&self, step: u64) -> Option<&StepRange> {
        self.per_step
            .binary_search_by_key(&step, |p| p.step)
            .ok()
            .map(|i| &self.per_step[i])
    }

    /// How far `value` of `step` lies from the step's median, as a share of the step's median
    /// time; `None` for a step without cells or of no time.
    pub fn deviation(&self, step: u64, value: i64) -> Option<f64> {
        let r = self.step_range(step)?;
        #[allow(clippy::cast_precision_loss)]
        (r.median_dur_ns > 0).then(|| (value - r.median) as f64 / r.median_dur_ns as f64)
    }

    /// Where `value` of `step` lies on the colour ramp: 0 (lowest) to 1 (highest) for the
    /// sequential colourings; -1 (shorter than the median by the span or more) to 1 for
    /// [`Colouring::FromStepMedian`]. 0 when the range is empty.
    pub fn position(&self, step: u64, value: i64) -> f32 {
        if self.colouring == Colouring::FromStepMedian {
            #[allow(clippy::cast_possible_truncation)]
            return self
                .deviation(step, value)
                .map_or(0.0, |d| (d / self.span).clamp(-1.0, 1.0) as f32);
        }
        let (lo, hi) = match (self.colouring, self.step_range(step)) {
            (Colouring::WithinStep, Some(r)) => (r.lo, r.hi),
            _ => self.all,
        };
        if hi <= lo {
            return 0.0;
        }
        #[allow(clippy::cast_precision_loss)]
        let t = (value - lo) as f32 / (hi - lo) as f32;
        t.clamp(0.0, 1.0)
    }

    /// The colour of `value` of `step`.
    pub fn colour(&self, step: u64, value: i64) -> Color32 {
        let t = self.position(step, value);
        if self.colouring == Colouring::FromStepMedian {
            diverging(t)
        } else {
            ramp(t)
        }
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
        ui.separator();
        ui.label("Scale:");
        for c in Colouring::ALL {
            ui.selectable_value(&mut state.colouring, c, c.label())
                .on_hover_text(c.tip());
        }
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
    legend_ui(ui, &map.scale, state.metric);
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
                    // Every rank has a score, 0 included (as `warpscope fleet` prints it).
                    let label = format!("rank {rank} · score {}", dur(score));
                    let (rect, response) =
                        ui.allocate_exact_size(vec2(LABEL_W, ROW_H), Sense::hover());
                    response.widget_info(|| {
                        egui::WidgetInfo::labeled(egui::Role::Label, true, label.as_str())
                    });
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
        .rect_filled(inner, 0.0, scale.colour(step, value));
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

/// The legend of the map's colours: a bar of the ramp with what its ends and middle mean, and
/// how to read and use the map.
fn legend_ui(ui: &mut Ui, scale: &Scale, metric: Metric) {
    let (left, middle, right, what) = match scale.colouring {
        Colouring::FromStepMedian => {
            let pct = format!("{:.1}%", scale.span * 100.0);
            (
                format!("−{pct}"),
                "step median".to_string(),
                format!("+{pct}"),
                format!(
                    "{}: each rank against the median rank of the step, as a share of the \
                     step's median time (blue shorter, red longer)",
                    metric.label()
                ),
            )
        }
        Colouring::WithinStep => (
            "lowest".to_string(),
            String::new(),
            "highest".to_string(),
            format!("{}: within each step", metric.label()),
        ),
        Colouring::WholeMap => (
            dur(scale.all.0),
            String::new(),
            dur(scale.all.1),
            format!("{}: over the whole map", metric.label()),
        ),
    };
    ui.horizontal(|ui| {
        let colour = ui.visuals().text_color();
        ui.label(RichText::new(left).size(11.0));
        let (rect, _) = ui.allocate_exact_size(vec2(160.0, 12.0), Sense::hover());
        let n = 32;
        for i in 0..n {
            #[allow(clippy::cast_precision_loss)]
            let (a, b) = (i as f32 / n as f32, (i + 1) as f32 / n as f32);
            let x0 = rect.left() + rect.width() * a;
            let x1 = rect.left() + rect.width() * b;
            let t = (a + b) / 2.0;
            let c = if scale.colouring == Colouring::FromStepMedian {
                diverging(t * 2.0 - 1.0)
            } else {
                ramp(t)
            };
            ui.painter()
                .rect_filled(Rect::from_x_y_ranges(x0..=x1, rect.y_range()), 0.0, c);
        }
        if !middle.is_empty() {
            ui.painter().line_segment(
                [rect.center_top(), rect.center_bottom()],
                egui::Stroke::new(1.0, colour),
            );
        }
        ui.label(RichText::new(right).size(11.0));
        if !middle.is_empty() {
            ui.label(
                RichText::new(format!("(middle: {middle})"))
                    .size(11.0)
                    .weak(),
            );
        }
    });
    ui.weak(format!(
        "{what}; rows by straggler score; click a cell to see that rank's step on the timeline"
    ));
}

/// A blue (-1) → white (0) → red (1) ramp, for deviations from a median.
fn diverging(t: f32) -> Color32 {
    let t = t.clamp(-1.0, 1.0);
    let (end, s) = if t < 0.0 {
        ((40.0, 100.0, 200.0), -t)
    } else {
        ((200.0, 30.0, 30.0), t)
    };
    let lerp = |a: f32, b: f32| a + (b - a) * s;
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let c = |x: f32| x.round().clamp(0.0, 255.0) as u8;
    Color32::from_rgb(
        c(lerp(250.0, end.0)),
        c(lerp(250.0, end.1)),
        c(lerp(250.0, end.2)),
    )
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

    use super::{Colouring, MIN_SPAN, Metric, Scale};

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

    fn report(step_cells: Vec<StepCell>) -> FleetReport {
        FleetReport {
            ranks: Vec::new(),
            collectives: Vec::new(),
            stragglers: Vec::new(),
            step_numbers: vec![1, 2],
            step_cells,
            aligned: true,
            median_compute_ns: 0,
            no_gpu_ranks: Vec::new(),
            warnings: Vec::new(),
        }
    }

    #[test]
    fn cells_are_coloured_over_the_map_or_within_their_step() {
        // Step 2 is slow for everyone; rank 1 is the slowest in both steps.
        let report = report(vec![
            cell(0, 1, 100),
            cell(0, 2, 300),
            cell(1, 1, 110),
            cell(1, 2, 320),
        ]);
        let map = Scale::new(&report, Metric::StepTime, Colouring::WholeMap);
        assert_eq!(map.all, (100, 320));
        assert!((map.position(1, 110) - 10.0 / 220.0).abs() < 1e-6);
        let steps = Scale::new(&report, Metric::StepTime, Colouring::WithinStep);
        let ranges: Vec<(u64, i64, i64)> = steps
            .per_step
            .iter()
            .map(|r| (r.step, r.lo, r.hi))
            .collect();
        assert_eq!(ranges, [(1, 100, 110), (2, 300, 320)]);
        assert!((steps.position(1, 110) - 1.0).abs() < 1e-6);
        assert!(steps.position(2, 300).abs() < 1e-6);
    }

    /// Eight ranks whose steps differ by 0.6% from step to step, with 0.1% of noise between
    /// ranks, and one rank 5% slower in every step: against each step's median, that rank is
    /// the one red row and the noise stays white.
    #[test]
    fn by_default_the_rank_that_differs_stands_out_and_noise_stays_pale() {
        let mut cells = Vec::new();
        for rank in 0..8 {
            for step in 1..=2u64 {
                let base = if step == 1 { 100_000 } else { 100_600 };
                let jitter = i64::from(rank % 3) * 50; // 0.05%: noise
                let slow = if rank == 4 { base / 20 } else { 0 };
                cells.push(cell(rank.into(), step, base + jitter + slow));
            }
        }
        let job = report(cells);
        let default = Scale::new(&job, Metric::StepTime, Colouring::default());
        assert_eq!(default.colouring, Colouring::FromStepMedian);
        assert!((default.span - 0.05).abs() < 1e-3, "{}", default.span);
        for step in 1..=2u64 {
            let base = if step == 1 { 100_000 } else { 100_600 };
            assert!(
                default.position(step, base + base / 20) > 0.95,
                "rank 4, step {step}"
            );
            for jitter in [0, 50, 100] {
                assert!(default.position(step, base + jitter).abs() < 0.05, "noise");
            }
        }
        // Ranks that all agree within the minimum span stay pale.
        let even = report(vec![cell(0, 1, 1000), cell(1, 1, 1006)]);
        let pale = Scale::new(&even, Metric::StepTime, Colouring::FromStepMedian);
        assert!((pale.span - MIN_SPAN).abs() < 1e-12);
        assert!(pale.position(1, 1006) < 0.31);
    }
}
