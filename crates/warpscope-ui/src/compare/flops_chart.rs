//! The FLOPs chart of a comparison: each run's MFU (model FLOPs over time × peak,
//! `docs/flops.md`) with its model TFLOP/s on hover, against the swept number (MFU against
//! batch) or as a bar per run.

use egui::{Color32, Ui};
use egui_plot::{Bar, BarChart, Line, Plot, Points};
use warpscope_core::analysis::compare::{Comparison, RunSummary};

use super::chart_parts::{SweepAxis, legend_ui, slot_axis};
use crate::flops::{UNKNOWN, format_tflops};

/// Colour of MFU.
const MFU: Color32 = Color32::from_rgb(0xd6, 0x5a, 0x3a);

/// True if any run has known FLOPs.
pub(super) fn has_flops(c: &Comparison) -> bool {
    c.runs.iter().any(|r| r.flops.is_some())
}

/// A run's MFU in percent, when known.
fn mfu_pct(run: &RunSummary) -> Option<f64> {
    run.flops.as_ref()?.mfu.map(|m| m * 100.0)
}

/// What hovering a run's point or bar says: its MFU and model TFLOP/s.
pub(super) fn run_flops_text(r: usize, run: &RunSummary) -> String {
    let (mfu, rate) = run.flops.as_ref().map_or_else(
        || (UNKNOWN.to_string(), UNKNOWN.to_string()),
        |f| {
            (
                f.mfu
                    .map_or_else(|| UNKNOWN.to_string(), |m| format!("{:.1}%", m * 100.0)),
                f.tflops_per_s
                    .map_or_else(|| UNKNOWN.to_string(), format_tflops),
            )
        },
    );
    format!("#{} {}: MFU {mfu}, {rate} TFLOP/s", r + 1, run.label)
}

/// MFU against the swept number (`runs`: the x of each run on `axis`, and its index).
pub(super) fn flops_sweep_ui(
    ui: &mut Ui,
    c: &Comparison,
    axis: SweepAxis,
    runs: &[(f64, usize)],
    x_label: &str,
    height: f32,
) {
    let mut pts: Vec<([f64; 2], usize)> = runs
        .iter()
        .filter_map(|&(x, i)| Some(([x, mfu_pct(c.runs.get(i)?)?], i)))
        .collect();
    pts.sort_by(|a, b| a.0[0].total_cmp(&b.0[0]));
    let texts: Vec<([f64; 2], String)> = pts
        .iter()
        .map(|(p, i)| (*p, run_flops_text(*i, &c.runs[*i])))
        .collect();
    let line: Vec<[f64; 2]> = pts.iter().map(|(p, _)| *p).collect();
    axis.apply(Plot::new("compare_mfu_scaling"))
        .height(height)
        .x_axis_label(x_label.to_string())
        .y_axis_label("MFU (%)")
        .include_y(0.0)
        .label_formatter(move |hover| {
            let egui_plot::HoverPosition::NearDataPoint { position, .. } = hover else {
                return None;
            };
            texts
                .iter()
                .find(|(p, _)| (p[0] - position.x).abs() < 1e-9 && (p[1] - position.y).abs() < 1e-9)
                .map(|(_, t)| t.clone())
        })
        .show(ui, |plot| {
            if line.is_empty() {
                return;
            }
            plot.line(Line::new("MFU", line.clone()).color(MFU).width(2.0));
            plot.points(Points::new("MFU", line).color(MFU).radius(3.5));
        });
    runs_legend_ui(ui, c);
}

/// One MFU bar per run, in the runs' order.
pub(super) fn flops_bars_ui(ui: &mut Ui, c: &Comparison, height: f32) {
    let labels: Vec<String> = (1..=c.runs.len()).map(|r| format!("#{r}")).collect();
    slot_axis(Plot::new("compare_mfu_bars"), labels)
        .height(height)
        .y_axis_label("MFU (%)")
        .include_y(0.0)
        .show(ui, |plot| {
            let bars: Vec<Bar> = c
                .runs
                .iter()
                .enumerate()
                .filter_map(|(r, run)| {
                    #[allow(clippy::cast_precision_loss)]
                    Some(
                        Bar::new(r as f64, mfu_pct(run)?)
                            .width(0.5)
                            .name(run_flops_text(r, run)),
                    )
                })
                .collect();
            plot.bar_chart(BarChart::new("MFU", bars).color(MFU));
        });
    runs_legend_ui(ui, c);
}

/// Each run's MFU and TFLOP/s under the chart.
fn runs_legend_ui(ui: &mut Ui, c: &Comparison) {
    legend_ui(
        ui,
        c.runs
            .iter()
            .enumerate()
            .map(|(r, run)| (run_flops_text(r, run), MFU)),
    );
}
