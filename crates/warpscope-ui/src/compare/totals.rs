//! The per-run totals of a comparison: GPU time and its ratio to the baseline, busy share, span,
//! steps, time per step and per sample, NCCL time, and why the GPUs were not busy (host wait,
//! Tensor Core share, the top finding of `docs/analysis.md`), MFU and model TFLOP/s
//! (`docs/flops.md`) and the peak memory (`docs/memory.md`).

use crate::format_duration;
use egui::{Role, Ui, WidgetInfo};
use warpscope_core::units::format_bytes;

use super::CompareState;
use crate::flops::{UNKNOWN, format_tflops};

pub(super) fn totals_ui(ui: &mut Ui, state: &CompareState) {
    let c = &state.comparison;
    egui::Grid::new("compare_totals")
        .striped(true)
        .num_columns(17)
        .spacing([18.0, 3.0])
        .show(ui, |ui| {
            for h in [
                "Run",
                "File",
                "GPU time",
                "× base",
                "GPU busy",
                "Span",
                "Steps",
                "Time/step",
                "Time/sample",
                "NCCL",
                "Host wait",
                "Tensor Cores",
                "MFU",
                "TFLOP/s",
                "Peak alloc",
                "Peak reserved",
                "Top finding",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for (r, run) in c.runs.iter().enumerate() {
                // Numbered as the tables' `only in #2` and column headers count the runs.
                let label = if run.is_baseline {
                    format!("#{} {} (baseline)", r + 1, run.label)
                } else {
                    format!("#{} {}", r + 1, run.label)
                };
                ui.label(label);
                let file = std::path::Path::new(&run.path)
                    .file_name()
                    .map_or_else(|| run.path.clone(), |f| f.to_string_lossy().into_owned());
                ui.label(file).on_hover_text(&run.path);
                let cell = |ui: &mut Ui, text: String, name: &str| {
                    let resp = ui.monospace(&text);
                    resp.widget_info(|| {
                        WidgetInfo::labeled(Role::Label, true, format!("{name} run {r}: {text}"))
                    });
                };
                cell(ui, format_duration(run.gpu_total_ns), "GPU time");
                cell(
                    ui,
                    run.gpu_total_ratio_vs_baseline
                        .map_or_else(|| "–".to_string(), |x| format!("{x:.2}×")),
                    "ratio",
                );
                cell(ui, format!("{:.1}%", run.gpu_busy_pct), "busy");
                cell(ui, format_duration(run.span_ns), "span");
                cell(
                    ui,
                    run.steps
                        .as_ref()
                        .map_or_else(|| "–".to_string(), |s| s.count.to_string()),
                    "steps",
                );
                cell(
                    ui,
                    run.time_per_step_ns
                        .map_or_else(|| "–".to_string(), format_duration),
                    "time per step",
                );
                cell(
                    ui,
                    run.time_per_sample_ns.map_or_else(
                        || "–".to_string(),
                        |t| {
                            #[allow(clippy::cast_possible_truncation)]
                            let ns = t.round() as i64;
                            format_duration(ns)
                        },
                    ),
                    "time per sample",
                );
                cell(
                    ui,
                    if run.nccl_total_ns > 0 {
                        format_duration(run.nccl_total_ns)
                    } else {
                        "–".to_string()
                    },
                    "NCCL",
                );
                // Why (docs/analysis.md): idle time waiting on the CPU, Tensor Core share, the
                // finding with the most time at stake.
                let why = run.why.as_ref();
                cell(
                    ui,
                    why.map_or_else(
                        || "–".to_string(),
                        |w| {
                            let p = warpscope_core::analysis::pct(w.host_wait_ns, w.window_ns);
                            format!("{p:.1}%")
                        },
                    ),
                    "host wait",
                );
                cell(
                    ui,
                    why.map_or_else(|| "–".to_string(), |w| format!("{:.1}%", w.tensor_core_pct)),
                    "tensor cores",
                );
                // How close to the hardware (docs/flops.md): model FLOPs over time × peak, and
                // the model TFLOP/s; unknown without shapes or for a GPU not in the peaks table.
                let flops = run.flops.as_ref();
                cell(
                    ui,
                    flops
                        .and_then(|f| f.mfu)
                        .map_or_else(|| UNKNOWN.to_string(), |m| format!("{:.1}%", m * 100.0)),
                    "MFU",
                );
                cell(
                    ui,
                    flops
                        .and_then(|f| f.tflops_per_s)
                        .map_or_else(|| UNKNOWN.to_string(), format_tflops),
                    "TFLOP/s",
                );
                let bytes = |b: Option<i64>| b.map_or_else(|| "–".to_string(), format_bytes);
                cell(ui, bytes(run.peak_allocated_bytes), "peak allocated");
                cell(ui, bytes(run.peak_reserved_bytes), "peak reserved");
                cell(
                    ui,
                    why.and_then(|w| w.top_finding).unwrap_or("–").to_string(),
                    "top finding",
                );
                ui.end_row();
            }
        });
}
