//! The charts page of a comparison: for a sweep (batch, GPU count) time per step, per sample,
//! the top kernels' time, MFU and TFLOP/s, and peak memory against the swept number; otherwise
//! the top kernels', MFU and memory bars per run.

use egui::{Color32, Ui};
use egui_plot::{Bar, BarChart, Line, Plot, Points};
use warpscope_core::analysis::compare::Comparison;

use super::chart_parts::{SweepAxis, legend_ui, slot_axis};
use super::{CompareState, flops_chart, memory_chart};

/// How many kernels the charts follow.
const CHART_KERNELS: usize = 8;

/// The scaling charts (when the labels carry a number that varies) and the top kernels' time
/// per run.
pub(super) fn charts_ui(ui: &mut Ui, state: &CompareState) {
    let c = &state.comparison;
    let top: Vec<usize> = top_kernels(c, CHART_KERNELS);
    let names = chart_names(c, &top);
    // Room for the titles and the legends under the plots (the top kernels' legend wraps); a
    // sweep has two rows of charts, and a third for memory and MFU when the runs have them.
    let memory = memory_chart::has_memory(c);
    let flops = flops_chart::has_flops(c);
    let rows = if c.sweep.is_some() && (memory || flops) {
        3.0
    } else {
        2.0
    };
    let height = (ui.available_height() / rows - 75.0).max(120.0);
    let step_colour = Color32::from_rgb(0x4e, 0x9a, 0xd8);
    let gpu_colour = Color32::from_rgb(0x6a, 0xb0, 0x4c);
    match &c.sweep {
        Some(key) => {
            let raw: Vec<(f64, usize)> = c
                .runs
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.sweep_value.map(|x| (x, i)))
                .collect();
            // Sweeps span powers of two (batch 8 to 128, 1 to 8 GPUs): a log2 axis spaces them
            // evenly, with a tick at each power of two.
            let axis = SweepAxis::of(&raw);
            let runs: Vec<(f64, usize)> = raw.iter().map(|&(x, i)| (axis.x(x), i)).collect();
            let x_label = axis.label(key);
            let series = |f: &dyn Fn(usize) -> Option<f64>| -> Vec<[f64; 2]> {
                let mut v: Vec<[f64; 2]> = runs
                    .iter()
                    .filter_map(|&(x, i)| f(i).map(|y| [x, y]))
                    .collect();
                v.sort_by(|a, b| a[0].total_cmp(&b[0]));
                v
            };
            let [step, gpu] = per_step_series(c).map(|points| {
                points
                    .into_iter()
                    .map(|(x, y)| [axis.x(x), y])
                    .collect::<Vec<[f64; 2]>>()
            });
            // Per sample is a thousand times smaller: its own chart, in µs.
            let sample = series(&|i| c.runs[i].time_per_sample_ns.map(|t| t / 1e3));
            ui.columns(2, |cols| {
                cols[0].strong(format!("Time per step and GPU time per step against {key}"));
                let step_series = [
                    ("time per step", &step, step_colour),
                    ("GPU time per step", &gpu, gpu_colour),
                ];
                axis.apply(Plot::new("compare_step_scaling"))
                    .height(height)
                    .x_axis_label(x_label.clone())
                    .y_axis_label("ms")
                    .include_y(0.0)
                    .show(&mut cols[0], |plot| {
                        for (name, pts, color) in step_series {
                            if pts.is_empty() {
                                continue;
                            }
                            plot.line(Line::new(name, pts.clone()).color(color).width(2.0));
                            plot.points(Points::new(name, pts.clone()).color(color).radius(3.5));
                        }
                    });
                legend_ui(
                    &mut cols[0],
                    step_series
                        .iter()
                        .filter(|(_, pts, _)| !pts.is_empty())
                        .map(|(name, _, color)| ((*name).to_string(), *color)),
                );
                cols[1].strong(format!("Time per sample against {key}"));
                axis.apply(Plot::new("compare_sample_scaling"))
                    .height(height)
                    .x_axis_label(x_label.clone())
                    .y_axis_label("µs")
                    .include_y(0.0)
                    .show(&mut cols[1], |plot| {
                        if sample.is_empty() {
                            return;
                        }
                        let color = Color32::from_rgb(0xe0, 0x8a, 0x3c);
                        plot.line(
                            Line::new("time per sample", sample.clone())
                                .color(color)
                                .width(2.0),
                        );
                        plot.points(
                            Points::new("time per sample", sample.clone())
                                .color(color)
                                .radius(3.5),
                        );
                    });
            });
            ui.columns(2, |cols| {
                cols[0].strong(format!("Top kernels' time against {key}"));
                axis.apply(Plot::new("compare_kernel_scaling"))
                    .height(height)
                    .x_axis_label(x_label.clone())
                    .y_axis_label("ms")
                    .show(&mut cols[0], |plot| {
                        for (slot, (&k, name)) in top.iter().zip(&names).enumerate() {
                            let row = &c.kernels[k].row;
                            let mut pts: Vec<[f64; 2]> = runs
                                .iter()
                                .filter_map(|&(x, i)| {
                                    let s = row.per_run.get(i)?.as_ref()?;
                                    #[allow(clippy::cast_precision_loss)]
                                    Some([x, s.total_ns as f64 / 1e6])
                                })
                                .collect();
                            pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
                            // A qualitative palette: hashed kernel colours can be too alike
                            // to tell eight lines apart.
                            let color = run_color(slot);
                            plot.line(Line::new(name.clone(), pts.clone()).color(color).width(1.5));
                            plot.points(Points::new(name.clone(), pts).color(color).radius(3.0));
                        }
                    });
                legend_ui(
                    &mut cols[0],
                    names
                        .iter()
                        .enumerate()
                        .map(|(slot, name)| (name.clone(), run_color(slot))),
                );
                cols[1].strong("Top kernels: time per run");
                top_kernel_bars_ui(&mut cols[1], c, &top, &names, height);
            });
            let shown = usize::from(memory) + usize::from(flops);
            ui.columns(shown.max(1), |cols| {
                let mut col = 0;
                if memory {
                    cols[col].strong(format!(
                        "Peak memory per run (largest of any GPU, recorded window) against {key}"
                    ));
                    memory_chart::memory_chart_ui(&mut cols[col], c, height);
                    col += 1;
                }
                if flops {
                    cols[col].strong(format!("MFU against {key} (TFLOP/s on hover)"));
                    flops_chart::flops_sweep_ui(&mut cols[col], c, axis, &runs, &x_label, height);
                }
            });
        }
        None => {
            ui.weak(
                "No scaling chart: the run labels carry no number that differs between runs \
                 (name files like model_b8, model_b16, or label them batch=8).",
            );
            ui.strong("Top kernels: time per run");
            top_kernel_bars_ui(ui, c, &top, &names, height);
            let shown = usize::from(memory) + usize::from(flops);
            ui.columns(shown.max(1), |cols| {
                let mut col = 0;
                if memory {
                    cols[col].strong("Peak memory per run (largest of any GPU, recorded window)");
                    memory_chart::memory_chart_ui(&mut cols[col], c, height);
                    col += 1;
                }
                if flops {
                    cols[col].strong("MFU per run (TFLOP/s on hover)");
                    flops_chart::flops_bars_ui(&mut cols[col], c, height);
                }
            });
        }
    }
}

/// The two series of the first scaling chart, as (swept value, ms) sorted by the swept value:
/// time per step, and GPU time per step (like with like: the whole run's GPU time beside one
/// step's time would read as the GPU working longer than the step).
pub fn per_step_series(c: &Comparison) -> [Vec<(f64, f64)>; 2] {
    let series = |f: &dyn Fn(&warpscope_core::analysis::compare::RunSummary) -> Option<i64>| {
        let mut v: Vec<(f64, f64)> = c
            .runs
            .iter()
            .filter_map(|r| {
                #[allow(clippy::cast_precision_loss)]
                Some((r.sweep_value?, f(r)? as f64 / 1e6))
            })
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    [
        series(&|r| r.time_per_step_ns),
        series(&|r| r.gpu_time_per_step_ns),
    ]
}

/// The top kernels' time in each run as grouped bars, the kernels named under their group.
fn top_kernel_bars_ui(ui: &mut Ui, c: &Comparison, top: &[usize], names: &[String], height: f32) {
    // Under each group its key (`K1`, as in the legend of the kernel chart, which names it); a
    // name would not fit eight groups. Hovering a bar gives the name.
    let labels: Vec<String> = (1..=names.len()).map(|k| format!("K{k}")).collect();
    // One mark per kernel group, so every group is named under its bars.
    slot_axis(Plot::new("compare_top_kernels"), labels)
        .height(height)
        .y_axis_label("ms")
        .show(ui, |plot| {
            let n = c.runs.len();
            #[allow(clippy::cast_precision_loss)]
            let width = 0.8 / n as f64;
            for r in 0..n {
                let bars: Vec<Bar> = top
                    .iter()
                    .zip(names)
                    .enumerate()
                    .map(|(slot, (&k, name))| {
                        let total = c.kernels[k]
                            .row
                            .per_run
                            .get(r)
                            .and_then(Option::as_ref)
                            .map_or(0, |s| s.total_ns);
                        #[allow(clippy::cast_precision_loss)]
                        let x = slot as f64 - 0.4 + width * (r as f64 + 0.5);
                        #[allow(clippy::cast_precision_loss)]
                        Bar::new(x, total as f64 / 1e6)
                            .width(width * 0.9)
                            .name(format!("{name} · {}", c.runs[r].label))
                    })
                    .collect();
                plot.bar_chart(BarChart::new(c.runs[r].label.clone(), bars).color(run_color(r)));
            }
        });
    legend_ui(
        ui,
        (0..c.runs.len()).map(|r| (format!("#{} {}", r + 1, c.runs[r].label), run_color(r))),
    );
}

/// Names of the charted kernels, keyed `K1`, `K2`... (the bar chart's groups) and shortened
/// readably (template arguments folded); the keys keep two kernels from sharing a legend entry,
/// which would also mix their colours.
fn chart_names(c: &Comparison, top: &[usize]) -> Vec<String> {
    let full: Vec<&str> = top
        .iter()
        .map(|&k| c.kernels[k].row.name.as_str())
        .collect();
    warpscope_core::names::distinct_short_names(&full, 48)
        .into_iter()
        .enumerate()
        .map(|(i, n)| format!("K{} {}", i + 1, n.strip_prefix("void ").unwrap_or(&n)))
        .collect()
}

/// The kernels with the largest total in any run, largest first.
pub fn top_kernels(c: &Comparison, count: usize) -> Vec<usize> {
    let mut order: Vec<(i64, usize)> = c
        .kernels
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let max = k
                .row
                .per_run
                .iter()
                .flatten()
                .map(|s| s.total_ns)
                .max()
                .unwrap_or(0);
            (max, i)
        })
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    order.into_iter().take(count).map(|(_, i)| i).collect()
}

/// A colour per run, or per line of any plot (a small qualitative palette, repeating after 8).
pub fn run_color(r: usize) -> Color32 {
    const PALETTE: [Color32; 8] = [
        Color32::from_rgb(0x4e, 0x79, 0xa7),
        Color32::from_rgb(0xf2, 0x8e, 0x2b),
        Color32::from_rgb(0x59, 0xa1, 0x4f),
        Color32::from_rgb(0xe1, 0x57, 0x59),
        Color32::from_rgb(0x76, 0xb7, 0xb2),
        Color32::from_rgb(0xed, 0xc9, 0x48),
        Color32::from_rgb(0xb0, 0x7a, 0xa1),
        Color32::from_rgb(0xff, 0x9d, 0xa7),
    ];
    PALETTE[r % PALETTE.len()]
}
