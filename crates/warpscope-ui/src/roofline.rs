//! The Roofline view: the operators of a profile over the selected range (or the whole run) on
//! log-log axes, achieved TFLOP/s against arithmetic intensity (FLOPs per byte), one point per
//! operator name sized by its GPU time and coloured by its precision, under the ceilings of the
//! device (bandwidth slope and compute peak per precision, from the peaks table). A click on a
//! point selects that operator: its longest call on the timeline, its name in the tables. Above
//! the plot, the user's peaks can be typed in ([`crate::peak_override`]); they apply to the whole
//! viewer. The rules are those of `docs/flops.md` ([`warpscope_core::analysis::flops`]).

use egui::{Color32, Pos2, RichText, Ui};
use egui_plot::{Legend, Line, Plot, Points};
use warpscope_core::analysis::flops::{
    DeviceFlops, DevicePeaks, FlopsReport, PeakOverride, Precision, WorkRow,
};
use warpscope_core::model::EventRef;
use warpscope_core::{Profile, TimeRange};

use crate::flops::{
    FlopsCache, format_flops, format_tflops, peak_source, peak_text, precision_name,
};
use crate::log_plot::{decade_tick, decades, hover_label, roof_points};
use crate::peak_override::{PeakEditor, peak_override_ui};
use crate::timeline::TimelineState;
use crate::timeline::layout::device_title;
use crate::{Selection, format_duration};

/// How many operators (those with the most GPU time) are named beside their points.
const LABELLED: usize = 6;

/// One operator drawn on the plot in the last frame, where it is on the screen.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedPoint {
    /// The operator's name.
    pub name: String,
    /// Its centre on the screen.
    pub pos: Pos2,
    /// Its radius in points (grows with its GPU time).
    pub radius: f32,
}

/// What the view keeps between frames: the analysis of the range and peaks shown, where its
/// points were drawn, and the text of the peak fields.
#[derive(Default)]
pub struct RooflineState {
    flops: FlopsCache,
    points: Vec<PlacedPoint>,
    editor: PeakEditor,
}

impl RooflineState {
    /// The points drawn in the last frame, largest GPU time first.
    pub fn points(&self) -> &[PlacedPoint] {
        &self.points
    }

    /// The analysis on display, once computed.
    pub fn report(&self) -> Option<&FlopsReport> {
        self.flops.report()
    }

    /// How many times the analysis ran (again only when the range, profile or peaks change).
    pub fn computations(&self) -> u64 {
        self.flops.computations()
    }

    /// Why the peaks typed last were refused (not applied), if they were.
    pub fn refused_peaks(&self) -> Option<&str> {
        self.editor.refused()
    }
}

/// The colour of a precision's points and ceiling.
pub fn precision_color(p: Option<Precision>) -> Color32 {
    match p {
        Some(Precision::Fp64) => Color32::from_rgb(0x8c, 0x56, 0x4b),
        Some(Precision::Fp32) => Color32::from_rgb(0x1f, 0x77, 0xb4),
        Some(Precision::Tf32) => Color32::from_rgb(0x2c, 0xa0, 0x2c),
        Some(Precision::Fp16) => Color32::from_rgb(0xff, 0x7f, 0x0e),
        Some(Precision::Bf16) => Color32::from_rgb(0xd6, 0x27, 0x28),
        Some(Precision::Fp8) => Color32::from_rgb(0x94, 0x67, 0xbd),
        None => Color32::from_gray(130),
    }
}

/// The radius of a point of `gpu_ns` when the longest operator took `max_ns`: its area grows
/// with the time.
fn radius(gpu_ns: i64, max_ns: i64) -> f32 {
    #[allow(clippy::cast_precision_loss)]
    let share = if max_ns > 0 {
        (gpu_ns.max(0) as f64 / max_ns as f64).sqrt()
    } else {
        0.0
    };
    #[allow(clippy::cast_possible_truncation)]
    let r = 3.0 + 13.0 * share as f32;
    r
}

/// The device whose roofline is drawn: the one with the most operator GPU time.
fn main_device(report: &FlopsReport) -> Option<&DeviceFlops> {
    report.devices.iter().max_by_key(|d| d.op_gpu_ns)
}

/// An operator's figures, one per line (the hover text of its point).
pub fn operator_text(row: &WorkRow, peaks: Option<&DevicePeaks>) -> String {
    let r = &row.roofline;
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map_or("—".to_string(), f);
    #[allow(clippy::cast_precision_loss)]
    let flops = row.flops.map(|f| f as f64);
    format!(
        "{}\n{} calls · GPU time {}\nFLOPs {} · {} TFLOP/s · {} of peak\nintensity {} FLOP/byte · \
         {}-bound · {} of its roof\n{}",
        row.name,
        row.calls,
        format_duration(row.gpu_time_ns),
        opt(flops, &format_flops),
        opt(r.tflops_per_s, &format_tflops),
        opt(r.pct_of_peak, &|p| format!("{p:.1}%")),
        opt(r.intensity, &|i| format!("{i:.2}")),
        r.bound.map_or("—", |b| b.as_str()),
        opt(r.pct_of_roof, &|p| format!("{p:.1}%")),
        peak_text(peaks, row.precision),
    )
}

/// The call of operator `name` with the most GPU time, and its span widened by a tenth.
fn longest_call(
    profile: &Profile,
    report: &FlopsReport,
    name: &str,
) -> Option<(EventRef, TimeRange)> {
    let call = report
        .attribution
        .calls
        .iter()
        .filter(|c| {
            let ev = &profile.tracks[c.event.track as usize].events;
            profile.str(ev.name[c.event.index as usize]) == name
        })
        .max_by_key(|c| c.gpu_ns)?;
    let ev = &profile.tracks.get(call.event.track as usize)?.events;
    let i = call.event.index as usize;
    let (a, b) = (ev.start_ns[i], ev.end_ns(i));
    let pad = ((b - a) / 10).max(1_000);
    Some((call.event, TimeRange::new(a - pad, b + pad)))
}

/// Selects operator `name`: its longest call on the timeline (zoomed to), its name in the
/// tables.
fn select_operator(
    profile: &Profile,
    report: &FlopsReport,
    name: &str,
    timeline: &mut TimelineState,
    selection: &mut Selection,
) {
    if let Some((event, span)) = longest_call(profile, report, name) {
        selection.select_event(profile, event);
        timeline.set_visible_range(span);
    } else {
        selection.name = profile.strings.find(name);
    }
}

/// Draws the view over `selection.range` (the whole run when none), against `peaks` (the
/// viewer's override, which the fields above the plot change). A click on a point selects its
/// operator in `selection` and zooms `timeline` to its longest call.
pub fn roofline_ui(
    ui: &mut Ui,
    profile: &Profile,
    state: &mut RooflineState,
    timeline: &mut TimelineState,
    selection: &mut Selection,
    peaks: &mut PeakOverride,
) {
    let range = selection.range.unwrap_or(TimeRange::ALL);
    let RooflineState {
        flops,
        points,
        editor,
    } = state;
    points.clear();
    let report = flops.get(profile, range, *peaks);
    if !report.is_empty() {
        let in_use = main_device(report).map(|d| &d.peaks);
        if peak_override_ui(ui, editor, peaks, in_use) {
            ui.ctx().request_repaint();
        }
    }
    let report = flops.get(profile, range, *peaks);
    let scope = if range.is_all() {
        "the whole run".to_string()
    } else {
        format!(
            "the selected range {}..{}",
            format_duration(range.start_ns),
            format_duration(range.end_ns)
        )
    };
    if report.is_empty() {
        ui.strong(format!("Roofline over {scope}"));
        ui.weak(
            "No operator here has known FLOPs: the profile records no operator shapes (record \
             with torch.profiler.profile(record_shapes=True)), or none of its operators has a \
             formula (docs/flops.md).",
        );
        return;
    }
    let device = main_device(report);
    let peaks = device.map(|d| &d.peaks);
    let rows: Vec<&WorkRow> = report
        .operators
        .iter()
        .filter(|r| {
            r.roofline.tflops_per_s.is_some_and(|v| v > 0.0)
                && r.roofline.intensity.is_some_and(|v| v > 0.0)
        })
        .collect();
    let left_out = report
        .operators
        .iter()
        .filter(|r| r.flops.is_some())
        .count()
        - rows.len();
    header_ui(ui, profile, device, &scope, rows.len(), left_out);
    if let Some(name) = selection.name.map(|id| profile.str(id))
        && let Some(row) = report.operators.iter().find(|r| r.name == name)
    {
        ui.label(RichText::new(operator_text(row, peaks).replace('\n', " · ")).small());
    }
    let selected = selection.name.map(|id| profile.str(id).to_string());
    let (placed, clicked) = plot_ui(ui, &rows, peaks, selected.as_deref());
    *points = placed;
    if let Some(name) = clicked {
        select_operator(profile, report, &name, timeline, selection);
    }
}

/// The line above the plot: which device's ceilings, their source, and what is left out.
fn header_ui(
    ui: &mut Ui,
    profile: &Profile,
    device: Option<&DeviceFlops>,
    scope: &str,
    drawn: usize,
    left_out: usize,
) {
    ui.horizontal_wrapped(|ui| {
        ui.strong(format!("Roofline over {scope}"));
        match device {
            Some(d) if d.peaks.row.is_some() || d.peaks.over.tflops.is_some() => {
                let title = device_title(profile, d.device);
                let text = match d.peaks.row.map(|r| r.model) {
                    _ if d.peaks.over.is_set() => format!("· ceilings of {title} (user override)"),
                    Some(model) if !title.ends_with(model) => {
                        format!("· ceilings of {title} (as {model})")
                    }
                    _ => format!("· ceilings of {title}"),
                };
                ui.label(text)
                    .on_hover_text(format!("Peaks from: {}", peak_source(&d.peaks)));
            }
            Some(d) => {
                ui.label(
                    RichText::new(format!(
                        "· {}: unknown device, not in the peaks table: no ceilings, no % of peak \
                         (type its peaks above)",
                        device_title(profile, d.device)
                    ))
                    .color(Color32::from_rgb(0xe0, 0xa0, 0x40)),
                );
            }
            None => {
                ui.weak("· no GPU work owned by an operator: no ceilings");
            }
        }
        let mut text = format!(
            "· {drawn} operators, one point per name, area by GPU time; click one to select it"
        );
        if left_out > 0 {
            text.push_str(&format!(
                " ({left_out} with FLOPs but no bytes or no GPU time: not drawn)"
            ));
        }
        ui.weak(text);
    });
}

/// The plot; returns where each point was drawn, and the operator clicked, if any.
fn plot_ui(
    ui: &mut Ui,
    rows: &[&WorkRow],
    peaks: Option<&DevicePeaks>,
    selected: Option<&str>,
) -> (Vec<PlacedPoint>, Option<String>) {
    let max_ns = rows.iter().map(|r| r.gpu_time_ns).max().unwrap_or(0);
    let intensities = rows.iter().filter_map(|r| r.roofline.intensity);
    let (mut lo, mut hi) =
        intensities.fold((f64::INFINITY, 0f64), |(a, b), i| (a.min(i), b.max(i)));
    let mut precisions: Vec<Option<Precision>> = Vec::new();
    for r in rows {
        if !precisions.contains(&r.precision) {
            precisions.push(r.precision);
        }
    }
    precisions.sort();
    let bw = peaks.and_then(DevicePeaks::bytes_per_s);
    let ceilings: Vec<(Precision, f64)> = precisions
        .iter()
        .filter_map(|p| {
            let p = (*p)?;
            Some((p, peaks?.flops_per_s(p)?))
        })
        .collect();
    if let Some(bw) = bw {
        for (_, peak) in &ceilings {
            let ridge = peak / bw;
            lo = lo.min(ridge);
            hi = hi.max(ridge);
        }
    }
    let (x0, x1) = (lo / 10.0, hi * 10.0);
    let source = peaks.map(peak_source).unwrap_or_default();
    let roof_names: Vec<String> = ceilings
        .iter()
        .map(|(p, peak)| {
            format!(
                "{} roof: {} TFLOP/s{}",
                precision_name(*p),
                format_tflops(peak * 1e-12),
                bw.map_or_else(String::new, |b| format!(", {:.0} GB/s", b * 1e-9))
            )
        })
        .collect();
    let height = ui.available_height().max(160.0);
    // The axis's title runs along it: a short plot (a small panel, a long device name wrapping
    // the header) gets the short one, which does not reach past the plot into the header.
    let y_title = if height < 260.0 {
        "TFLOP/s (log)"
    } else {
        "achieved TFLOP/s (log scale)"
    };
    let response = Plot::new("roofline_plot")
        .height(height)
        .x_grid_spacer(decades())
        .y_grid_spacer(decades())
        .legend(Legend::default().position(egui_plot::Corner::RightBottom))
        .x_axis_label("arithmetic intensity (FLOP/byte, log scale)")
        .y_axis_label(y_title)
        .x_axis_formatter(|mark, _| decade_tick(mark.value))
        .y_axis_formatter(|mark, _| decade_tick(mark.value))
        .label_formatter(move |hover| match hover {
            egui_plot::HoverPosition::NearDataPoint { plot_name: "", .. } => None,
            egui_plot::HoverPosition::NearDataPoint { .. } => hover_label(hover, |x, y| {
                format!(
                    "{x:.3} FLOP/byte: {} TFLOP/s\npeaks from: {source}",
                    format_tflops(y)
                )
            }),
            egui_plot::HoverPosition::Elsewhere { .. } => hover_label(hover, |x, y| {
                format!("{x:.3} FLOP/byte: {} TFLOP/s", format_tflops(y))
            }),
        })
        .show(ui, |plot| {
            if let Some(bw) = bw {
                for ((p, peak), name) in ceilings.iter().zip(&roof_names) {
                    plot.line(
                        Line::new(name.as_str(), roof_points(x0, x1, bw, *peak, 1e-12))
                            .color(precision_color(Some(*p)))
                            .style(egui_plot::LineStyle::dashed_dense())
                            .width(1.5),
                    );
                }
            }
            let mut placed = Vec::with_capacity(rows.len());
            for r in rows {
                let (Some(i), Some(t)) = (r.roofline.intensity, r.roofline.tflops_per_s) else {
                    continue;
                };
                let at = [i.log10(), t.log10()];
                let rad = radius(r.gpu_time_ns, max_ns);
                let color = precision_color(r.precision);
                plot.points(
                    Points::new("", vec![at])
                        .color(color.gamma_multiply(0.75))
                        .radius(rad)
                        .filled(true),
                );
                if selected == Some(r.name.as_str()) {
                    plot.points(
                        Points::new("", vec![at])
                            .color(Color32::WHITE)
                            .radius(rad + 3.0)
                            .filled(false),
                    );
                }
                placed.push((r.name.clone(), at, rad));
            }
            placed
        });
    let transform = response.transform;
    let placed: Vec<PlacedPoint> = response
        .inner
        .into_iter()
        .map(|(name, at, radius)| PlacedPoint {
            name,
            pos: transform.position_from_point(&egui_plot::PlotPoint::new(at[0], at[1])),
            radius,
        })
        .collect();
    // The operators with the most GPU time are named beside their points (hover names any).
    label_points_ui(ui, response.response.rect, &placed);
    let hit = |pos: Option<Pos2>| -> Option<&PlacedPoint> {
        let pos = pos?;
        // The smallest point under the pointer wins: a small one drawn over a large one.
        placed
            .iter()
            .filter(|p| p.pos.distance(pos) <= p.radius + 4.0)
            .min_by(|a, b| a.radius.total_cmp(&b.radius))
    };
    let hovered = hit(response.response.hover_pos()).map(|p| p.name.clone());
    let clicked = if response.response.clicked() {
        hit(response.response.interact_pointer_pos()).map(|p| p.name.clone())
    } else {
        None
    };
    if let Some(name) = hovered
        && let Some(row) = rows.iter().find(|r| r.name == name)
    {
        let text = operator_text(row, peaks);
        response.response.on_hover_text_at_pointer(text);
    }
    (placed, clicked)
}

/// Names the [`LABELLED`] points with the most GPU time (the first of `placed`) beside them,
/// right of the point or else left of it, leaving out a name that would cover another.
fn label_points_ui(ui: &Ui, clip: egui::Rect, placed: &[PlacedPoint]) {
    let painter = ui.painter().with_clip_rect(clip);
    let font = egui::TextStyle::Small.resolve(ui.style());
    let colour = ui.visuals().strong_text_color();
    let mut taken: Vec<egui::Rect> = placed
        .iter()
        .take(LABELLED)
        .map(|p| egui::Rect::from_center_size(p.pos, egui::Vec2::splat(p.radius * 2.0)))
        .collect();
    for p in placed.iter().take(LABELLED) {
        let name = p.name.strip_prefix("aten::").unwrap_or(&p.name);
        let galley = painter.layout_no_wrap(
            warpscope_core::names::short_name(name, 40),
            font.clone(),
            colour,
        );
        let size = galley.size();
        let right =
            egui::Rect::from_min_size(p.pos + egui::vec2(p.radius + 6.0, -size.y / 2.0), size);
        let left = egui::Rect::from_min_size(
            p.pos + egui::vec2(-p.radius - 6.0 - size.x, -size.y / 2.0),
            size,
        );
        let Some(at) = [right, left]
            .into_iter()
            .find(|r| clip.contains_rect(*r) && !taken.iter().any(|t| t.intersects(*r)))
        else {
            continue;
        };
        taken.push(at);
        painter.galley(at.min, galley, colour);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_grow_with_time() {
        assert!((radius(0, 100) - 3.0).abs() < 1e-6);
        assert!((radius(100, 100) - 16.0).abs() < 1e-6);
        assert!((radius(25, 100) - 9.5).abs() < 1e-6);
        assert!((radius(5, 0) - 3.0).abs() < 1e-6);
    }
}
