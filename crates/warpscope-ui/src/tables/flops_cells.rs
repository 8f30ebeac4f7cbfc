//! The FLOPs columns of the Kernels and CPU operators tables: FLOPs, achieved TFLOP/s, % of the
//! peak of its precision and arithmetic intensity, per name (`docs/flops.md`, sections 4 to 6),
//! unknown figures `—` with why on hover.

use std::borrow::Cow;
use std::collections::HashMap;

use warpscope_core::analysis::flops::{
    DevicePeaks, PeakOverride, WorkRow, attribute, device_peaks, kernel_rows, operator_rows,
};
use warpscope_core::{Profile, TimeRange};

use super::rows::{Cell, ColumnSpec, FigureUnit};
use crate::flops::{format_flops, peak_text};

/// The four columns, in order.
pub(super) const FLOPS_COLUMNS: [ColumnSpec; 4] = [
    ColumnSpec {
        title: Cow::Borrowed("FLOPs"),
        hint: Cow::Borrowed(
            "Floating-point operations from the operators' recorded shapes, each piece of work \
             counted once (docs/flops.md); a kernel gets its operator's, split by time. — : \
             unknown (no shapes, or no formula)",
        ),
        width: 84.0,
    },
    ColumnSpec {
        title: Cow::Borrowed("TFLOP/s"),
        hint: Cow::Borrowed("Achieved: FLOPs over the GPU time of the calls with known FLOPs"),
        width: 64.0,
    },
    ColumnSpec {
        title: Cow::Borrowed("% of peak"),
        hint: Cow::Borrowed(
            "Achieved TFLOP/s over the GPU's dense peak at the precision of its kernels \
             (hover a cell for the peak and its source)",
        ),
        width: 76.0,
    },
    ColumnSpec {
        title: Cow::Borrowed("AI"),
        hint: Cow::Borrowed(
            "Arithmetic intensity: FLOPs per byte moved (inputs and outputs by dtype); \
             compute-bound above the GPU's ridge (peak / bandwidth), memory-bound below",
        ),
        width: 52.0,
    },
];

/// The FLOPs figures of every kernel or operator name over a range.
pub(super) struct FlopsFigures {
    rows: HashMap<String, WorkRow>,
    peaks: HashMap<u32, DevicePeaks>,
}

impl FlopsFigures {
    /// Per kernel name (`kernels`) or per operator name, from the profile's shapes.
    pub(super) fn of(profile: &Profile, range: TimeRange, kernels: bool) -> Self {
        let att = attribute(profile, range);
        let peaks = device_peaks(profile, PeakOverride::default());
        let rows = if kernels {
            kernel_rows(profile, &att, &peaks)
        } else {
            operator_rows(profile, &att, &peaks)
        };
        Self {
            rows: rows.into_iter().map(|r| (r.name.clone(), r)).collect(),
            peaks: peaks.into_iter().collect(),
        }
    }

    /// The four cells of `name`.
    pub(super) fn cells(&self, name: &str) -> [Cell; 4] {
        let Some(row) = self.rows.get(name) else {
            let why = "unknown: no operator with known FLOPs owns it (no shapes recorded, no \
                       formula for it, or counted at an operator nested in it)";
            return [
                FigureUnit::Flops,
                FigureUnit::TflopsPerS,
                FigureUnit::PctOfPeak,
                FigureUnit::Intensity,
            ]
            .map(|unit| Cell::Figure {
                value: None,
                unit,
                note: why.to_string(),
            });
        };
        let r = &row.roofline;
        let peak = peak_text(row.device.and_then(|d| self.peaks.get(&d)), row.precision);
        #[allow(clippy::cast_precision_loss)]
        let flops = row.flops.map(|f| f as f64);
        let flops_note = match (row.flops, flops) {
            (Some(f), Some(approx)) => {
                format!(
                    "{f} FLOPs ({}) in {} calls",
                    format_flops(approx),
                    row.calls
                )
            }
            _ => "unknown: no call of it has shapes that fit a formula".to_string(),
        };
        let intensity_note = match (r.intensity, r.bound, row.bytes) {
            (Some(i), Some(b), Some(bytes)) => format!(
                "{i:.2} FLOP/byte over {bytes} bytes: {}-bound; {}",
                b.as_str(),
                peak
            ),
            (Some(i), None, Some(bytes)) => {
                format!("{i:.2} FLOP/byte over {bytes} bytes; {peak}")
            }
            _ => "unknown: no bytes known for it".to_string(),
        };
        [
            Cell::Figure {
                value: flops,
                unit: FigureUnit::Flops,
                note: flops_note,
            },
            Cell::Figure {
                value: r.tflops_per_s,
                unit: FigureUnit::TflopsPerS,
                note: format!("achieved TFLOP/s; {peak}"),
            },
            Cell::Figure {
                value: r.pct_of_peak,
                unit: FigureUnit::PctOfPeak,
                note: peak,
            },
            Cell::Figure {
                value: r.intensity,
                unit: FigureUnit::Intensity,
                note: intensity_note,
            },
        ]
    }
}
