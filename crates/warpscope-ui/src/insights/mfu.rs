//! The Insights panel's model FLOPs utilisation: per GPU the run's MFU and HFU, its model
//! FLOPs, the peak used and where it comes from, and MFU per training step (rules:
//! `docs/flops.md`, section 6).

use egui::{Color32, RichText, Ui};
use warpscope_core::Profile;
use warpscope_core::analysis::flops::{DeviceFlops, FlopsReport};

use crate::flops::{UNKNOWN, format_flops, format_tflops, peak_source, precision_name};
use crate::format_duration as dur;
use crate::timeline::layout::device_title;

/// A utilisation (a fraction) as a percentage, or "—" when unknown.
fn util_text(v: Option<f64>) -> String {
    v.map_or_else(|| UNKNOWN.to_string(), |v| format!("{:.1}%", v * 100.0))
}

/// FLOPs over a time as TFLOP/s, or "—" without time.
fn rate_text(flops: u64, time_ns: i64) -> String {
    if time_ns <= 0 {
        return UNKNOWN.to_string();
    }
    #[allow(clippy::cast_precision_loss)]
    let tflops = flops as f64 / (time_ns as f64 * 1e-9) * 1e-12;
    format_tflops(tflops)
}

/// The section: a heading, then each GPU's figures and steps.
pub(super) fn mfu_ui(ui: &mut Ui, profile: &Profile, report: &FlopsReport) {
    ui.strong("Model FLOPs utilisation").on_hover_text(
        "MFU = model FLOPs (matrix products, convolutions, attention; each counted once) / \
         (time × the peak of the precision holding most of them). HFU counts every FLOP counted \
         (elementwise, normalisation, reductions too). Rules: docs/flops.md, section 6",
    );
    if report.is_empty() {
        ui.weak(
            "FLOPs unknown: no operator here records its shapes (record with \
             torch.profiler.profile(record_shapes=True)), so no MFU.",
        );
        return;
    }
    for d in &report.devices {
        device_mfu_ui(ui, profile, d);
    }
}

/// One GPU: MFU, HFU, FLOPs, the peak and its source, and the steps.
fn device_mfu_ui(ui: &mut Ui, profile: &Profile, d: &DeviceFlops) {
    let title = device_title(profile, d.device);
    let known_peak = d.peak_flops_per_s.is_some();
    let rate = rate_text(d.model_flops, d.window_ns);
    if known_peak {
        ui.label(
            RichText::new(format!(
                "{title}: MFU {} · HFU {} · model FLOPs {} ({rate} TFLOP/s) over {}",
                util_text(d.mfu),
                util_text(d.hfu),
                format_flops(u64_f64(d.model_flops)),
                dur(d.window_ns),
            ))
            .strong(),
        );
    } else {
        ui.label(
            RichText::new(format!(
                "{title}: MFU {UNKNOWN} · model FLOPs {} ({rate} TFLOP/s) over {}",
                format_flops(u64_f64(d.model_flops)),
                dur(d.window_ns),
            ))
            .strong(),
        );
    }
    let peak = match (d.precision, d.peak_flops_per_s) {
        (Some(p), Some(f)) => format!(
            "Peak used: {} {} TFLOP/s (the precision of most model FLOPs), from {}",
            precision_name(p),
            format_tflops(f * 1e-12),
            peak_source(&d.peaks)
        ),
        (None, _) => "Peak used: none, no model FLOPs of known precision".to_string(),
        (Some(p), None) if d.peaks.row.is_none() && d.peaks.over.tflops.is_none() => format!(
            "Unknown device{}: not in the peaks table, so no peak and no MFU (model FLOPs in {}; \
             type its peak in the Roofline view, or start with --peak-tflops)",
            if d.name.is_empty() {
                String::new()
            } else {
                format!(" \"{}\"", d.name)
            },
            precision_name(p)
        ),
        (Some(p), None) => format!(
            "Peak used: none, {} has no {} peak ({})",
            d.peaks.row.map_or("the device", |r| r.model),
            precision_name(p),
            peak_source(&d.peaks)
        ),
    };
    let colour = if known_peak {
        ui.visuals().text_color()
    } else {
        Color32::from_rgb(0xe0, 0xa0, 0x40)
    };
    ui.label(RichText::new(peak).small().color(colour));
    #[allow(clippy::cast_precision_loss)]
    let known = if d.op_gpu_ns > 0 {
        100.0 * d.known_gpu_ns as f64 / d.op_gpu_ns as f64
    } else {
        0.0
    };
    let mut facts = format!(
        "Hardware FLOPs {}; operators with known FLOPs hold {known:.1}% of the operators' GPU time",
        format_flops(u64_f64(d.hardware_flops)),
    );
    if let Some(far) = d.far_below_roof_pct {
        facts.push_str(&format!(
            "; {far:.1}% of the time with a known roof runs below 10% of it"
        ));
    }
    ui.label(RichText::new(facts).small());
    if !d.steps.is_empty() {
        steps_ui(ui, d);
    }
    ui.add_space(4.0);
}

/// MFU per step, as a grid.
fn steps_ui(ui: &mut Ui, d: &DeviceFlops) {
    egui::Grid::new(("insight_mfu_steps", d.device))
        .striped(true)
        .num_columns(5)
        .show(ui, |ui| {
            for h in ["step", "model FLOPs", "step time", "TFLOP/s", "MFU"] {
                ui.strong(h);
            }
            ui.end_row();
            for st in &d.steps {
                ui.label(format!("step {}", st.step));
                ui.label(format_flops(u64_f64(st.flops)));
                ui.label(dur(st.time_ns));
                ui.label(rate_text(st.flops, st.time_ns));
                ui.label(util_text(st.mfu));
                ui.end_row();
            }
        });
}

/// A count as a float (the printed figures have four digits).
#[allow(clippy::cast_precision_loss)]
fn u64_f64(v: u64) -> f64 {
    v as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_figures_are_dashes() {
        assert_eq!(util_text(None), "—");
        assert_eq!(util_text(Some(0.2345)), "23.4%");
        assert_eq!(rate_text(2_000_000_000_000, 1_000_000_000), "2.00");
        assert_eq!(rate_text(5, 0), "—");
    }
}
