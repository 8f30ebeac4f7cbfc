//! The FLOPs figures as text and JSON: the `flops` section of `warpscope analyze` and the
//! `warpscope roofline` command (rules: docs/flops.md).

use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;
use warpscope_core::Profile;
use warpscope_core::analysis::SourceReport;
use warpscope_core::analysis::flops::{
    Bound, DeviceFlops, FAR_BELOW_ROOF_PCT, FlopsReport, Precision, WorkRow,
};
use warpscope_core::time::format_duration_ns as dur;

use super::{describe_tool, short_name, write_warnings};
use crate::output::OutputFormat;
use warpscope_core::analysis::contract::AnalyzedRange;

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "—".to_string(), |v| format!("{v:.decimals$}"))
}

#[allow(clippy::cast_precision_loss)]
fn gflop(v: Option<u64>) -> String {
    v.map_or_else(|| "—".to_string(), |v| format!("{:.2}", v as f64 / 1e9))
}

fn precision(p: Option<Precision>) -> &'static str {
    p.map_or("—", Precision::as_str)
}

/// A device's headline: peaks, model FLOPs, MFU and HFU.
fn device_lines(out: &mut String, d: &DeviceFlops) {
    let name = if d.name.is_empty() {
        String::new()
    } else {
        format!(" ({})", d.name)
    };
    let peak = d.peak_flops_per_s.map_or_else(
        || "unknown".to_string(),
        |f| format!("{:.1} TFLOP/s", f / 1e12),
    );
    let bw = d
        .peak_bytes_per_s
        .map_or_else(|| "unknown".to_string(), |b| format!("{:.0} GB/s", b / 1e9));
    let _ = writeln!(
        out,
        "  GPU {}{name}: peak {peak} ({}), {bw}; source: {}",
        d.device,
        precision(d.precision),
        d.peak_source
    );
    #[allow(clippy::cast_precision_loss)]
    let _ = writeln!(
        out,
        "    model FLOPs {:.3} TFLOP, hardware FLOPs {:.3} TFLOP over {} (first to last operator GPU work): MFU {}, HFU {}",
        d.model_flops as f64 / 1e12,
        d.hardware_flops as f64 / 1e12,
        dur(d.window_ns),
        opt(d.mfu.map(|m| m * 100.0), 1) + "%",
        opt(d.hfu.map(|m| m * 100.0), 1) + "%",
    );
    #[allow(clippy::cast_precision_loss)]
    let known = if d.op_gpu_ns > 0 {
        100.0 * d.known_gpu_ns as f64 / d.op_gpu_ns as f64
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "    operators with known FLOPs: {known:.1}% of operator GPU time; below {FAR_BELOW_ROOF_PCT:.0}% of their roof: {}% of the time with a known roof",
        opt(d.far_below_roof_pct, 1)
    );
    for s in &d.steps {
        #[allow(clippy::cast_precision_loss)]
        let _ = writeln!(
            out,
            "    step {}: {:.3} TFLOP in {}, MFU {}%",
            s.step,
            s.flops as f64 / 1e12,
            dur(s.time_ns),
            opt(s.mfu.map(|m| m * 100.0), 1)
        );
    }
}

/// The rows of an operators or kernels table.
fn rows_table(out: &mut String, rows: &[WorkRow], top: usize, roof: bool) {
    let _ = writeln!(
        out,
        "  {:>12} {:>7} {:>10} {:>9} {:>7} {:>9} {:<7} {:>7} {:<5}  Name",
        "GPU time", "Calls", "GFLOP", "TFLOP/s", "% peak", "FLOP/B", "bound", "% roof", "prec."
    );
    let shown: Vec<&WorkRow> = rows.iter().take(top).collect();
    for r in &shown {
        let f = &r.roofline;
        let _ = writeln!(
            out,
            "  {:>12} {:>7} {:>10} {:>9} {:>7} {:>9} {:<7} {:>7} {:<5}  {}",
            dur(r.gpu_time_ns),
            r.calls,
            gflop(r.flops),
            opt(f.tflops_per_s, 2),
            opt(f.pct_of_peak, 1),
            opt(f.intensity, 1),
            f.bound.map_or("—", Bound::as_str),
            if roof {
                opt(f.pct_of_roof, 1)
            } else {
                "".to_string()
            },
            precision(r.precision),
            short_name(&r.name, 80)
        );
    }
    if rows.len() > shown.len() {
        let _ = writeln!(
            out,
            "  ... {} more (--top N to see more)",
            rows.len() - shown.len()
        );
    }
}

/// The FLOPs section of `analyze`'s table.
pub fn write_flops_section(out: &mut String, r: &FlopsReport, top: usize) {
    let _ = writeln!(
        out,
        "\nFLOPs (docs/flops.md; — is unknown: no shapes recorded or no formula):"
    );
    if r.is_empty() {
        let _ = writeln!(
            out,
            "  no operator has known FLOPs: the profile records no operator shapes (PyTorch: \
             record_shapes=True)."
        );
        return;
    }
    for w in &r.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
    for d in &r.devices {
        device_lines(out, d);
    }
    rows_table(out, &r.operators, top, false);
}

/// One row of `roofline --format json`.
#[derive(Serialize)]
struct RooflineRowJson<'a> {
    name: &'a str,
    device: Option<u32>,
    family: Option<&'static str>,
    precision: Option<&'static str>,
    calls: u64,
    flops: Option<u64>,
    bytes: Option<u64>,
    gpu_time_ns: i64,
    tflops_per_s: Option<f64>,
    pct_of_peak: Option<f64>,
    intensity: Option<f64>,
    bound: Option<&'static str>,
    roof_tflops_per_s: Option<f64>,
    pct_of_roof: Option<f64>,
}

fn roofline_row(r: &WorkRow) -> RooflineRowJson<'_> {
    RooflineRowJson {
        name: &r.name,
        device: r.device,
        family: r.family.map(|f| f.as_str()),
        precision: r.precision.map(Precision::as_str),
        calls: r.calls,
        flops: r.flops,
        bytes: r.bytes,
        gpu_time_ns: r.gpu_time_ns,
        tflops_per_s: r.roofline.tflops_per_s,
        pct_of_peak: r.roofline.pct_of_peak,
        intensity: r.roofline.intensity,
        bound: r.roofline.bound.map(Bound::as_str),
        roof_tflops_per_s: r.roofline.roof_tflops_per_s,
        pct_of_roof: r.roofline.pct_of_roof,
    }
}

/// A ceiling of a device: the peak of one precision.
#[derive(Serialize)]
struct CeilingJson {
    precision: &'static str,
    flops_per_s: f64,
}

/// One device of `roofline --format json`.
#[derive(Serialize)]
struct RooflineDeviceJson<'a> {
    device: u32,
    name: &'a str,
    precision: Option<&'static str>,
    peak_flops_per_s: Option<f64>,
    peak_bytes_per_s: Option<f64>,
    ridge_flops_per_byte: Option<f64>,
    peak_source: &'a str,
    ceilings: Vec<CeilingJson>,
    model_flops: u64,
    hardware_flops: u64,
    window_ns: i64,
    mfu: Option<f64>,
    hfu: Option<f64>,
    far_below_roof_pct: Option<f64>,
}

#[derive(Serialize)]
struct RooflineJson<'a> {
    source: SourceReport,
    range: &'a AnalyzedRange,
    devices: Vec<RooflineDeviceJson<'a>>,
    operators: Vec<RooflineRowJson<'a>>,
    kernels: Vec<RooflineRowJson<'a>>,
}

/// Renders `warpscope roofline`: the devices' ceilings and every operator and kernel on them.
pub fn roofline(
    p: &Profile,
    r: &FlopsReport,
    range: &AnalyzedRange,
    top: usize,
    format: OutputFormat,
) -> Result<String> {
    Ok(match format {
        OutputFormat::Json => {
            let json = RooflineJson {
                source: SourceReport::of(p),
                range,
                devices: r
                    .devices
                    .iter()
                    .map(|d| RooflineDeviceJson {
                        device: d.device,
                        name: &d.name,
                        precision: d.precision.map(Precision::as_str),
                        peak_flops_per_s: d.peak_flops_per_s,
                        peak_bytes_per_s: d.peak_bytes_per_s,
                        ridge_flops_per_byte: match (d.peak_flops_per_s, d.peak_bytes_per_s) {
                            (Some(f), Some(b)) if b > 0.0 => Some(f / b),
                            _ => None,
                        },
                        peak_source: &d.peak_source,
                        ceilings: Precision::ALL
                            .iter()
                            .filter_map(|&pr| {
                                Some(CeilingJson {
                                    precision: pr.as_str(),
                                    flops_per_s: d.peaks.flops_per_s(pr)?,
                                })
                            })
                            .collect(),
                        model_flops: d.model_flops,
                        hardware_flops: d.hardware_flops,
                        window_ns: d.window_ns,
                        mfu: d.mfu,
                        hfu: d.hfu,
                        far_below_roof_pct: d.far_below_roof_pct,
                    })
                    .collect(),
                operators: r.operators.iter().map(roofline_row).collect(),
                kernels: r.kernels.iter().map(roofline_row).collect(),
            };
            serde_json::to_string_pretty(&json)? + "\n"
        }
        OutputFormat::Table | OutputFormat::Csv => {
            let mut out = String::new();
            let source = SourceReport::of(p);
            let _ = writeln!(
                out,
                "==warpscope== Roofline of {} ({})",
                source.path,
                describe_tool(&source)
            );
            write_warnings(&mut out, &p.warnings);
            if r.is_empty() {
                let _ = writeln!(
                    out,
                    "\nNo operator has known FLOPs: the profile records no operator shapes \
                     (PyTorch: record_shapes=True). Rules: docs/flops.md."
                );
                return Ok(out);
            }
            for w in &r.warnings {
                let _ = writeln!(out, "warning: {w}");
            }
            let _ = writeln!(out, "\nDevices:");
            for d in &r.devices {
                device_lines(&mut out, d);
                let ceilings: Vec<String> = Precision::ALL
                    .iter()
                    .filter_map(|&pr| {
                        Some(format!(
                            "{} {:.1}",
                            pr.as_str(),
                            d.peaks.flops_per_s(pr)? / 1e12
                        ))
                    })
                    .collect();
                if !ceilings.is_empty() {
                    let _ = writeln!(out, "    ceilings (TFLOP/s): {}", ceilings.join(", "));
                }
            }
            let _ = writeln!(out, "\nOperators on the roofline (most GPU time first):");
            rows_table(&mut out, &r.operators, top, true);
            let _ = writeln!(
                out,
                "\nKernels (their operator's FLOPs split by time over its arithmetic kernels; layout kernels and copies 0):"
            );
            rows_table(&mut out, &r.kernels, top, true);
            let _ = writeln!(
                out,
                "\nRules: docs/flops.md. — is unknown (no shapes, no formula or no peak)."
            );
            out
        }
    })
}
