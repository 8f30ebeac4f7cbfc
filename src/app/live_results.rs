//! The live results page of a profile made by a live run: the result table (block size,
//! occupancy and CUPTI's cost where measured), and three plots: time against size (log-log, a
//! line per configuration), the roofline (achieved GFLOP/s against arithmetic intensity under the
//! ceilings measured in the run), and, for block-size sweeps, time and theoretical occupancy
//! against threads per block.

use egui::Color32;
use egui_plot::{Legend, Line, Plot, Points};
use warpscope_live::{LiveRun, PointResult, Target, format_size};

use warpscope_ui::log_plot::{decade_tick, decades, hover_label, roof_points};

use super::live_source::ERROR;

/// The results of a live run: a row per point, then time against size on log-log axes, one line
/// per configuration (CPU included).
pub fn live_results_ui(ui: &mut egui::Ui, run: &LiveRun) {
    let d = &run.device;
    ui.horizontal_wrapped(|ui| {
        ui.strong(format!("{} on {}", run.kernel, d.name));
        let mut facts = vec![if run.cupti {
            "timed with CUDA events and CUPTI".to_string()
        } else {
            "timed with CUDA events".to_string()
        }];
        if run.batch > 1 {
            facts.push(format!(
                "batched: {} launches per event pair, L2 warm after the first, times per launch",
                run.batch
            ));
        }
        if let Some(bw) = run.peaks.d2d_bytes_per_s {
            facts.push(format!("measured copy peak {:.0} GB/s", bw * 1e-9));
        }
        if let Some(f) = run.peaks.sgemm_flops_per_s {
            facts.push(format!("cuBLAS SGEMM {:.0} GFLOP/s", f * 1e-9));
        }
        if let Some(f) = run.peaks.fp16_flops_per_s {
            facts.push(format!("cuBLAS FP16 {:.0} GFLOP/s", f * 1e-9));
        }
        ui.weak(facts.join(" · "));
    });
    if let Some(u) = &run.user {
        ui.weak(format!(
            "Your kernel {} from {} ({})",
            u.kernel, u.file, u.args
        ));
    }
    for w in &run.warnings {
        ui.colored_label(Color32::from_rgb(0xe0, 0xa0, 0x40), w);
    }
    // The table on the left, the plot on the right: both keep the panel's full height.
    let height = ui.available_height().max(160.0);
    // The table gets the wider share: its Check column must not hide behind the plot.
    let table_width = (ui.available_width() * 0.58).max(300.0);
    ui.horizontal_top(|ui| {
        ui.allocate_ui(egui::vec2(table_width, height), |ui| {
            egui::ScrollArea::both()
                .id_salt("live_results_table")
                .max_height(height)
                .auto_shrink(false)
                .show(ui, |ui| results_table_ui(ui, run));
        });
        let rest = ui.available_width();
        ui.allocate_ui(egui::vec2(rest, height), |ui| {
            plots_ui(ui, run, height);
        });
    });
}

fn results_table_ui(ui: &mut egui::Ui, run: &LiveRun) {
    let unit = run.rate_unit();
    let blocks = run.points.iter().any(|p| p.block.is_some());
    let occupancy = run.points.iter().any(|p| p.occupancy.is_some());
    let cost = run.points.iter().any(|p| !p.cupti_off_ns.is_empty());
    let mut headers = vec!["Configuration", "Size"];
    if blocks {
        headers.push("Block");
    }
    headers.extend(["Timed", "Event median", "CUPTI median", unit, "% of peak"]);
    if occupancy {
        headers.extend(["Registers", "Occupancy"]);
    }
    if cost {
        headers.push("CUPTI cost");
    }
    headers.push("Check");
    egui::Grid::new("live_results_grid")
        .striped(true)
        .num_columns(headers.len())
        .spacing([14.0, 3.0])
        .show(ui, |ui| {
            for h in &headers {
                ui.strong(*h);
            }
            ui.end_row();
            for p in &run.points {
                let rate = run.rate(p);
                ui.label(&p.config);
                ui.label(format_size(p.size, run.size_unit));
                if blocks {
                    ui.label(p.block.map_or_else(|| "-".into(), |b| b.to_string()));
                }
                ui.label(format!("{}/{}", p.event_ns.len(), p.planned));
                ui.monospace(ns_text(p.median_event_ns()));
                ui.monospace(ns_text(p.median_cupti_ns()));
                ui.monospace(rate.map_or_else(|| "-".into(), |r| format!("{:.1}", r.0)));
                ui.monospace(
                    rate.and_then(|r| r.1)
                        .map_or_else(|| "-".into(), |v| format!("{v:.1}%")),
                );
                if occupancy {
                    ui.monospace(
                        p.resources
                            .and_then(|r| r.registers)
                            .map_or_else(|| "-".into(), |r| r.to_string()),
                    );
                    ui.monospace(p.occupancy.map_or_else(
                        || "-".into(),
                        |o| format!("{:.0}% ({} blocks/SM)", 100.0 * o.fraction, o.blocks_per_sm),
                    ));
                }
                if cost {
                    ui.monospace(
                        p.cupti_cost()
                            .map_or_else(|| "-".into(), |c| format!("{:+.1}%", 100.0 * c)),
                    );
                }
                match (&p.error, p.check) {
                    (Some(e), _) => {
                        ui.colored_label(ERROR, format!("FAILED: {e}"));
                    }
                    (None, Some(c)) if c.ok => {
                        ui.label(c.text());
                    }
                    (None, Some(c)) => {
                        ui.colored_label(ERROR, c.text());
                    }
                    (None, None) => {
                        ui.label("-");
                    }
                }
                ui.end_row();
            }
        });
}

/// Which plot the results page shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PlotKind {
    TimeBySize,
    Roofline,
    BlockSize,
}

/// The plot picker and the chosen plot.
fn plots_ui(ui: &mut egui::Ui, run: &LiveRun, height: f32) {
    ui.vertical(|ui| plots_column_ui(ui, run, height));
}

fn plots_column_ui(ui: &mut egui::Ui, run: &LiveRun, height: f32) {
    let id = ui.scope_id().with("live_plot_kind");
    let roofline = run.points.iter().any(|p| run.roofline(p).is_some());
    let blocks = run.points.iter().any(|p| p.block.is_some());
    // A block-size sweep opens on its occupancy/performance curve.
    let mut kind: PlotKind = ui.data(|d| d.get_temp(id)).unwrap_or(if blocks {
        PlotKind::BlockSize
    } else {
        PlotKind::TimeBySize
    });
    if roofline || blocks {
        ui.horizontal(|ui| {
            ui.selectable_value(&mut kind, PlotKind::TimeBySize, "Time by size");
            if roofline {
                ui.selectable_value(&mut kind, PlotKind::Roofline, "Roofline");
            }
            if blocks {
                ui.selectable_value(&mut kind, PlotKind::BlockSize, "Block size");
            }
        });
        ui.data_mut(|d| d.insert_temp(id, kind));
    }
    let height = (ui.available_height()).max(120.0).min(height);
    match kind {
        PlotKind::Roofline if roofline => roofline_plot_ui(ui, run, height),
        PlotKind::BlockSize if blocks => block_plot_ui(ui, run, height),
        _ => results_plot_ui(ui, run, height),
    }
}

/// A tick of a log-2 axis of threads per block: whole powers only (32, 64, ...).
fn block_tick(mark: egui_plot::GridMark, _: &std::ops::RangeInclusive<f64>) -> String {
    if (mark.value - mark.value.round()).abs() < 1e-6 {
        format!("{}", 2f64.powf(mark.value).round())
    } else {
        String::new()
    }
}

/// Marker shapes, one per configuration: lines on top of each other stay visible.
const SHAPES: [egui_plot::MarkerShape; 6] = [
    egui_plot::MarkerShape::Circle,
    egui_plot::MarkerShape::Square,
    egui_plot::MarkerShape::Diamond,
    egui_plot::MarkerShape::Up,
    egui_plot::MarkerShape::Cross,
    egui_plot::MarkerShape::Down,
];

/// The configurations of a run, in order of first appearance.
fn configs(run: &LiveRun) -> Vec<&str> {
    let mut configs: Vec<&str> = Vec::new();
    for p in &run.points {
        if !configs.contains(&p.config.as_str()) {
            configs.push(&p.config);
        }
    }
    configs
}

/// GFLOP/s against FLOPs per byte, both log scale: the roofs (DRAM slope, then the compute
/// ceiling of each arithmetic the points use) and the points, one marker kind per configuration.
fn roofline_plot_ui(ui: &mut egui::Ui, run: &LiveRun, height: f32) {
    let placed: Vec<(&PointResult, warpscope_live::RooflinePoint)> = run
        .points
        .iter()
        .filter_map(|p| Some((p, run.roofline(p)?)))
        .collect();
    let (lo, hi) = placed
        .iter()
        .fold((f64::INFINITY, 0f64), |(lo, hi), (_, r)| {
            (lo.min(r.intensity), hi.max(r.intensity))
        });
    let mut maths: Vec<warpscope_live::Math> = Vec::new();
    for (_, r) in &placed {
        if !maths.contains(&r.math) {
            maths.push(r.math);
        }
    }
    Plot::new("live_roofline_plot")
        .height(height)
        .x_grid_spacer(decades())
        .y_grid_spacer(decades())
        .legend(Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label("arithmetic intensity (FLOP/byte, log scale)")
        .y_axis_label("GFLOP/s (log scale)")
        .x_axis_formatter(|mark, _| decade_tick(mark.value))
        .y_axis_formatter(|mark, _| decade_tick(mark.value))
        .label_formatter(|hover| {
            hover_label(hover, |x, y| format!("{x:.3} FLOP/byte: {y:.0} GFLOP/s"))
        })
        .show(ui, |plot| {
            let Some(bw) = run.peaks.d2d_bytes_per_s else {
                return;
            };
            // From a decade left of the points or the leftmost ridge to past the rightmost.
            let ridges = maths
                .iter()
                .filter_map(|m| run.ridge(*m))
                .fold((f64::INFINITY, 0f64), |(a, b), r| (a.min(r), b.max(r)));
            let (x0, x1) = (lo.min(ridges.0) / 10.0, hi.max(ridges.1) * 4.0);
            for (i, math) in maths.iter().enumerate() {
                let Some(compute) = run.peaks.compute(*math) else {
                    continue;
                };
                let roof = roof_points(x0, x1, bw, compute, 1e-9);
                plot.line(
                    Line::new(
                        format!("roof {} ({:.0} GFLOP/s)", math.as_str(), compute * 1e-9),
                        roof,
                    )
                    .color(Color32::from_gray(140 + 30 * i as u8))
                    .style(egui_plot::LineStyle::dashed_dense())
                    .width(1.5),
                );
            }
            for (i, config) in configs(run).iter().enumerate() {
                let pts: Vec<[f64; 2]> = placed
                    .iter()
                    .filter(|(p, _)| p.config == *config)
                    .map(|(_, r)| [r.intensity.log10(), (r.flops_per_s * 1e-9).log10()])
                    .collect();
                if pts.is_empty() {
                    continue;
                }
                plot.points(
                    Points::new(*config, pts)
                        .color(warpscope_ui::compare::run_color(i))
                        .radius(5.0)
                        .shape(SHAPES[i % SHAPES.len()])
                        .filled(true),
                );
            }
        });
}

/// Time and theoretical occupancy against threads per block (log 2 scale), a line per
/// configuration and size.
fn block_plot_ui(ui: &mut egui::Ui, run: &LiveRun, height: f32) {
    ui.vertical(|ui| block_plots_ui(ui, run, height));
}

fn block_plots_ui(ui: &mut egui::Ui, run: &LiveRun, height: f32) {
    let mut series: Vec<(String, usize)> = Vec::new();
    for p in &run.points {
        let name = format!("{} {}", p.config, format_size(p.size, run.size_unit));
        if !series.iter().any(|(n, _)| *n == name) {
            let index = series.len();
            series.push((name, index));
        }
    }
    // The (log2 block, value) points of one series.
    let series_points = |name: &str, value: &dyn Fn(&PointResult) -> Option<f64>| {
        run.points
            .iter()
            .filter(|p| format!("{} {}", p.config, format_size(p.size, run.size_unit)) == name)
            .filter_map(|p| Some([f64::from(p.block?).log2(), value(p)?]))
            .collect::<Vec<[f64; 2]>>()
    };
    let half = (height - 8.0) / 2.0;
    Plot::new("live_block_time_plot")
        .height(half)
        .legend(Legend::default().position(egui_plot::Corner::RightTop))
        .x_axis_label("threads per block")
        .y_axis_label("time (µs)")
        .x_grid_spacer(egui_plot::log_grid_spacer(10))
        .x_axis_formatter(block_tick)
        .include_y(0.0)
        .show(ui, |plot| {
            for (name, i) in &series {
                let pts = series_points(name, &|p| p.best_ns().map(|t| t as f64 / 1e3));
                let color = warpscope_ui::compare::run_color(*i);
                plot.line(
                    Line::new(name.as_str(), pts.clone())
                        .color(color)
                        .width(2.0),
                );
                plot.points(Points::new(name.as_str(), pts).color(color).radius(4.0));
            }
        });
    Plot::new("live_block_occupancy_plot")
        .height(half)
        .x_axis_label("threads per block")
        .y_axis_label("theoretical occupancy (%)")
        .x_grid_spacer(egui_plot::log_grid_spacer(10))
        .x_axis_formatter(block_tick)
        .include_y(0.0)
        .include_y(100.0)
        .show(ui, |plot| {
            for (name, i) in &series {
                let pts = series_points(name, &|p| p.occupancy.map(|o| 100.0 * o.fraction));
                let color = warpscope_ui::compare::run_color(*i);
                plot.line(Line::new(name.as_str(), pts).color(color).width(2.0));
            }
        });
}

/// A time tick of a log axis with as many digits as it needs (`1 µs`, `20 ms`, `1.5 s`), the
/// same precision on every tick.
fn tick_time(ns: f64) -> String {
    let (value, unit) = match ns.abs() {
        n if n >= 1e9 => (ns / 1e9, "s"),
        n if n >= 1e6 => (ns / 1e6, "ms"),
        n if n >= 1e3 => (ns / 1e3, "µs"),
        _ => (ns, "ns"),
    };
    let rounded = (value * 10.0).round() / 10.0;
    if (rounded - rounded.round()).abs() < 1e-9 {
        format!("{} {unit}", rounded.round())
    } else {
        format!("{rounded:.1} {unit}")
    }
}

fn ns_text(v: Option<i64>) -> String {
    v.map_or_else(|| "-".into(), warpscope_ui::format_duration)
}

fn results_plot_ui(ui: &mut egui::Ui, run: &LiveRun, height: f32) {
    let unit = run.size_unit;
    // Headroom above the slowest point keeps the legend (top left, about half the plot's
    // height) off the lines.
    let times_ms: Vec<f64> = run
        .points
        .iter()
        .filter_map(PointResult::best_ns)
        .filter(|&t| t > 0)
        .map(|t| (t as f64 / 1e6).log10())
        .collect();
    let (low, high) = times_ms
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &t| {
            (lo.min(t), hi.max(t))
        });
    // A quarter of the data's span above it, between 0.3 and 1 decade: room for the legend
    // without stretching the axis far past the data.
    let headroom = if high.is_finite() {
        high + (0.25 * (high - low)).clamp(0.3, 1.0)
    } else {
        1.0
    };
    Plot::new("live_results_plot")
        .height(height)
        .include_y(headroom)
        .x_grid_spacer(egui_plot::log_grid_spacer(10))
        .y_grid_spacer(egui_plot::log_grid_spacer(10))
        // Time grows with size: the top left stays empty.
        .legend(Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label(format!("size ({}, log scale)", unit.as_str()))
        .y_axis_label("time (log scale)")
        .x_axis_formatter(move |mark, _| format_size(10f64.powf(mark.value).round() as u64, unit))
        .y_axis_formatter(|mark, _| tick_time(10f64.powf(mark.value) * 1e6))
        .label_formatter(move |hover| {
            hover_label(hover, |x, y| {
                format!(
                    "{}: {}",
                    format_size(x.round() as u64, unit),
                    warpscope_ui::format_duration((y * 1e6) as i64)
                )
            })
        })
        .show(ui, |plot| {
            for (i, config) in configs(run).iter().enumerate() {
                let pts: Vec<[f64; 2]> = run
                    .points
                    .iter()
                    .filter(|p| p.config == *config)
                    .filter_map(|p| {
                        let t = p.best_ns()?;
                        (t > 0).then(|| [(p.size as f64).log10(), (t as f64 / 1e6).log10()])
                    })
                    .collect();
                let cpu = run
                    .points
                    .iter()
                    .any(|p| p.config == *config && p.target == Target::Cpu);
                let color = warpscope_ui::compare::run_color(i);
                let mut line = Line::new(*config, pts.clone()).color(color).width(2.0);
                if cpu {
                    line = line.style(egui_plot::LineStyle::dashed_loose());
                }
                plot.line(line);
                plot.points(
                    Points::new(*config, pts)
                        .color(color)
                        .radius(4.0)
                        .shape(SHAPES[i % SHAPES.len()])
                        .filled(i % 2 == 0),
                );
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ticks_have_one_precision() {
        assert_eq!(tick_time(1e3), "1 µs");
        assert_eq!(tick_time(1e5), "100 µs");
        assert_eq!(tick_time(2e7), "20 ms");
        assert_eq!(tick_time(1.5e9), "1.5 s");
        assert_eq!(tick_time(100.0), "100 ns");
    }
}
