//! How close to the hardware: FLOPs and bytes per operator call from its recorded shapes,
//! attributed to the kernels it launched; achieved TFLOP/s, % of peak, arithmetic intensity
//! and bound; model FLOPs, MFU and HFU per device and step; and findings. The rules are in
//! `docs/flops.md`.
//!
//! Entry points:
//! - [`flops_report`]: everything for a profile and a range (what `warpscope analyze` and
//!   `warpscope roofline` print).
//! - [`attribute`] → [`Attribution`]: per CPU-operator event ([`Attribution::call`]) its
//!   [`Work`] (family, FLOPs, bytes, dtype), whether it counts, its GPU time and precision;
//!   per kernel event ([`Attribution::kernel`], [`Attribution::kernel_flops`]) its owner and
//!   share.
//! - [`operator_rows`], [`kernel_rows`]: per name, with [`Roofline`] figures.
//! - [`device_flops`]: per device MFU, HFU and steps; [`device_peaks`] and [`peaks::PEAKS`]:
//!   the peaks table.
//! - [`op_work`]: the work of any operator event by its name and shapes, counted or not.

mod attribution;
mod figures;
mod findings;
pub mod formulas;
pub mod peaks;

use rustc_hash::FxHashMap;

pub use attribution::{Attribution, KernelShare, OpCall, attribute, moves_data_only, op_work};
pub use figures::{
    Bound, DeviceFlops, FAR_BELOW_ROOF_PCT, Roofline, StepFlops, WorkRow, device_flops,
    kernel_rows, operator_rows,
};
pub use findings::{FlopsFinding, FlopsRule, findings};
pub use formulas::{Family, Work};
pub use peaks::{
    DevicePeaks, PeakError, PeakFigure, PeakOverride, PeakRow, Precision, precision_of_kernel,
};

use crate::model::Profile;
use crate::time::TimeRange;

/// Everything the FLOPs analysis finds in one profile over one range.
#[derive(Clone, Debug)]
pub struct FlopsReport {
    /// Per device: peaks, model FLOPs, MFU, HFU, per step.
    pub devices: Vec<DeviceFlops>,
    /// Per operator name, most GPU time first.
    pub operators: Vec<WorkRow>,
    /// Per kernel name, most GPU time first.
    pub kernels: Vec<WorkRow>,
    /// Findings, largest time at stake first.
    pub findings: Vec<FlopsFinding>,
    /// The calls and kernels behind the figures.
    pub attribution: Attribution,
    /// What the figures leave out, ready to show to the user (import problems with shapes are
    /// the profile's own warnings).
    pub warnings: Vec<String>,
}

impl FlopsReport {
    /// True when no operator call has known FLOPs (a profile without shapes).
    pub fn is_empty(&self) -> bool {
        !self
            .attribution
            .calls
            .iter()
            .any(|c| c.counted_flops().is_some())
    }
}

/// The peaks of each device of `profile` (by the name the profile gives it), with the user's
/// override.
pub fn device_peaks(profile: &Profile, over: PeakOverride) -> FxHashMap<u32, DevicePeaks> {
    let mut out: FxHashMap<u32, DevicePeaks> = profile
        .devices
        .iter()
        .map(|d| (d.id, DevicePeaks::of(&d.name, over)))
        .collect();
    // Devices that run work without being described get the override alone.
    for t in &profile.tracks {
        if let crate::model::TrackKey::Gpu { device, .. } = t.key {
            out.entry(device)
                .or_insert_with(|| DevicePeaks::of("", over));
        }
    }
    out
}

/// The FLOPs analysis of `profile` over `range`, with peaks `over`riden where the user says.
pub fn flops_report(profile: &Profile, range: TimeRange, over: PeakOverride) -> FlopsReport {
    let peaks = device_peaks(profile, over);
    let attribution = attribute(profile, range);
    let devices = device_flops(profile, &attribution, &peaks);
    let mut warnings = Vec::new();
    if attribution.unusable_calls > 0 {
        warnings.push(format!(
            "{} operator calls have shapes that fit no formula (a convolution without `Concrete \
             Inputs`, matrices that do not multiply) or FLOPs beyond 2^64: their FLOPs are unknown",
            attribution.unusable_calls
        ));
    }
    for d in &devices {
        if d.peaks.row.is_none() && d.peaks.over.tflops.is_none() {
            warnings.push(format!(
                "GPU {} ({}) is not in the peaks table: no % of peak or MFU (give --peak-tflops \
                 and --peak-gbs)",
                d.device,
                if d.name.is_empty() {
                    "no name"
                } else {
                    &d.name
                }
            ));
        }
    }
    FlopsReport {
        warnings,
        operators: operator_rows(profile, &attribution, &peaks),
        kernels: kernel_rows(profile, &attribution, &peaks),
        findings: findings(profile, &attribution, &devices),
        devices,
        attribution,
    }
}

#[cfg(test)]
mod tests;
