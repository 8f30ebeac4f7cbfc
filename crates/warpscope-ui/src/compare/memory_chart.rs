//! The memory chart of a comparison: each run's peak allocated and reserved memory (the largest
//! of any GPU, `docs/memory.md`), so that a batch sweep shows memory growing with the batch and
//! FP32 against AMP shows what autocast saves.

use egui::{Color32, Ui};
use egui_plot::{Bar, BarChart, Plot};
use warpscope_core::analysis::Comparison;

use super::chart_parts::{legend_ui, slot_axis};

/// Colour of the allocated peak.
const ALLOCATED: Color32 = Color32::from_rgb(0x4e, 0x8f, 0xd8);
/// Colour of the reserved peak.
const RESERVED: Color32 = Color32::from_rgb(0xb0, 0x7a, 0xd8);

/// True if any run records GPU memory.
pub(super) fn has_memory(c: &Comparison) -> bool {
    c.runs.iter().any(|r| r.peak_allocated_bytes.is_some())
}

/// Two bars per run, in the runs' order: the allocated and the reserved peak, in GiB.
pub(super) fn memory_chart_ui(ui: &mut Ui, c: &Comparison, height: f32) {
    let labels: Vec<String> = (1..=c.runs.len()).map(|r| format!("#{r}")).collect();
    let gib = |b: Option<i64>| {
        #[allow(clippy::cast_precision_loss)]
        b.map_or(0.0, |b| b as f64 / f64::from(1u32 << 30))
    };
    slot_axis(Plot::new("compare_memory_peaks"), labels)
        .height(height)
        .y_axis_label("GiB")
        .include_y(0.0)
        .show(ui, |plot| {
            for (series, offset, color) in
                [("allocated", -0.2, ALLOCATED), ("reserved", 0.2, RESERVED)]
            {
                let bars: Vec<Bar> = c
                    .runs
                    .iter()
                    .enumerate()
                    .map(|(r, run)| {
                        let value = if series == "allocated" {
                            run.peak_allocated_bytes
                        } else {
                            run.peak_reserved_bytes
                        };
                        #[allow(clippy::cast_precision_loss)]
                        Bar::new(r as f64 + offset, gib(value))
                            .width(0.36)
                            .name(format!("#{} {} · peak {series}", r + 1, run.label))
                    })
                    .collect();
                plot.bar_chart(BarChart::new(format!("peak {series}"), bars).color(color));
            }
        });
    legend_ui(
        ui,
        [
            ("peak allocated".to_string(), ALLOCATED),
            ("peak reserved".to_string(), RESERVED),
        ],
    );
}
