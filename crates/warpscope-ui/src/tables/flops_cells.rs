//! The FLOPs figures of the Kernels and CPU operators tables: FLOPs, achieved TFLOP/s, % of the
//! peak of its precision and arithmetic intensity, per name (`docs/flops.md`, sections 4 to 6),
//! as cells; unknown figures `—` with why on hover. The columns themselves are entries of the
//! tables' lists (`columns.rs`).

use std::collections::HashMap;

use warpscope_core::analysis::flops::{
    PeakOverride, WorkRow, attribute, device_peaks, kernel_rows, operator_rows,
};
use warpscope_core::{Profile, TimeRange};

use super::cell::{Cell, FigureUnit};
use crate::flops::{format_flops, peak_text};

/// The tooltip of the FLOPs column.
pub(super) const FLOPS_HINT: &str = "Floating-point operations from the operators' recorded \
     shapes, each piece of work counted once (docs/flops.md); a kernel gets its operator's, split \
     by time over the operator's kernels that do arithmetic (cuDNN's layout kernels and copies \
     get 0). — : unknown (no shapes, or no formula)";
/// The tooltip of the TFLOP/s column.
pub(super) const TFLOPS_HINT: &str =
    "Achieved: FLOPs over the GPU time of the calls with known FLOPs";
/// The tooltip of the % of peak column.
pub(super) const PCT_HINT: &str = "Achieved TFLOP/s over the GPU's dense peak at the precision \
     of its kernels (hover a cell for the peak and its source)";
/// The tooltip of the AI column.
pub(super) const AI_HINT: &str = "Arithmetic intensity: FLOPs per byte moved (inputs and \
     outputs by dtype); compute-bound above the GPU's ridge (peak / bandwidth), memory-bound below";

/// Why a figure is unknown, on hover.
const UNKNOWN_WHY: &str = "unknown: no operator with known FLOPs owns it (no shapes recorded, no \
     formula for it, or counted at an operator nested in it)";

/// One kernel's or operator's FLOPs figures and the peak they are measured against.
#[derive(Clone, Debug)]
pub struct FlopsFigures {
    /// The figures ([`warpscope_core::analysis::flops::operator_rows`] or `kernel_rows`).
    pub row: WorkRow,
    /// The peak at its precision on its GPU and where it comes from, for the tooltips.
    pub peak: String,
}

/// The FLOPs figures of every kernel name (`kernels`) or operator name over `range`, by name,
/// with the peaks `over`ridden where the user says.
pub(super) fn figures_by_name(
    profile: &Profile,
    range: TimeRange,
    kernels: bool,
    over: PeakOverride,
) -> HashMap<String, FlopsFigures> {
    let att = attribute(profile, range);
    let peaks = device_peaks(profile, over);
    let rows = if kernels {
        kernel_rows(profile, &att, &peaks)
    } else {
        operator_rows(profile, &att, &peaks)
    };
    rows.into_iter()
        .map(|row| {
            let peak = peak_text(row.device.and_then(|d| peaks.get(&d)), row.precision);
            (row.name.clone(), FlopsFigures { row, peak })
        })
        .collect()
}

fn figure(value: Option<f64>, unit: FigureUnit, note: String) -> Cell {
    Cell::Figure { value, unit, note }
}

/// The FLOPs cell.
pub(super) fn flops_cell(f: Option<&FlopsFigures>) -> Cell {
    let Some(f) = f else {
        return figure(None, FigureUnit::Flops, UNKNOWN_WHY.to_string());
    };
    match f.row.flops {
        Some(n) => {
            #[allow(clippy::cast_precision_loss)]
            let v = n as f64;
            let note = format!("{n} FLOPs ({}) in {} calls", format_flops(v), f.row.calls);
            figure(Some(v), FigureUnit::Flops, note)
        }
        None => figure(
            None,
            FigureUnit::Flops,
            "unknown: no call of it has shapes that fit a formula".to_string(),
        ),
    }
}

/// The achieved TFLOP/s cell.
pub(super) fn tflops_cell(f: Option<&FlopsFigures>) -> Cell {
    match f {
        Some(f) => figure(
            f.row.roofline.tflops_per_s,
            FigureUnit::TflopsPerS,
            format!("achieved TFLOP/s; {}", f.peak),
        ),
        None => figure(None, FigureUnit::TflopsPerS, UNKNOWN_WHY.to_string()),
    }
}

/// The % of peak cell.
pub(super) fn pct_of_peak_cell(f: Option<&FlopsFigures>) -> Cell {
    match f {
        Some(f) => figure(
            f.row.roofline.pct_of_peak,
            FigureUnit::PctOfPeak,
            f.peak.clone(),
        ),
        None => figure(None, FigureUnit::PctOfPeak, UNKNOWN_WHY.to_string()),
    }
}

/// The arithmetic intensity cell.
pub(super) fn intensity_cell(f: Option<&FlopsFigures>) -> Cell {
    let Some(f) = f else {
        return figure(None, FigureUnit::Intensity, UNKNOWN_WHY.to_string());
    };
    let r = &f.row.roofline;
    let note = match (r.intensity, r.bound, f.row.bytes) {
        (Some(i), Some(b), Some(bytes)) => format!(
            "{i:.2} FLOP/byte over {bytes} bytes: {}-bound; {}",
            b.as_str(),
            f.peak
        ),
        (Some(i), None, Some(bytes)) => format!("{i:.2} FLOP/byte over {bytes} bytes; {}", f.peak),
        _ => "unknown: no bytes known for it".to_string(),
    };
    figure(r.intensity, FigureUnit::Intensity, note)
}
