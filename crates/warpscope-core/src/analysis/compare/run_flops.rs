//! The FLOPs figures of one compared run (`docs/flops.md`, section 6): its model FLOPs, the
//! TFLOP/s they ran at and its MFU, over every GPU.

use serde::Serialize;

use crate::analysis::flops::{DeviceFlops, PeakOverride, flops_report};
use crate::model::Profile;
use crate::time::TimeRange;

/// How close to the hardware one run came, summed over its GPUs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunFlops {
    /// Model FLOPs (matrix products, convolutions, attention; each counted once) over all GPUs.
    pub model_flops: u64,
    /// Sum over the GPUs of each one's model FLOPs over its window, in TFLOP/s; `None` when no
    /// GPU has a window.
    pub tflops_per_s: Option<f64>,
    /// Model FLOPs over the sum of each GPU's window × peak: the device MFU for one GPU;
    /// `None` when a GPU with model FLOPs has no peak (an unknown device).
    pub mfu: Option<f64>,
}

impl RunFlops {
    /// The figures of `profile` over the whole run, with the peaks table's peaks; `None` when
    /// no operator has known FLOPs (a profile without shapes).
    pub fn of(profile: &Profile) -> Option<Self> {
        Self::with_peaks(profile, PeakOverride::default())
    }

    /// The figures of `profile` over the whole run, with the peaks `over`ridden where the user
    /// says (the viewer's comparison, when the user gives peaks).
    pub fn with_peaks(profile: &Profile, over: PeakOverride) -> Option<Self> {
        let report = flops_report(profile, TimeRange::ALL, over);
        if report.is_empty() {
            return None;
        }
        Some(Self::of_devices(&report.devices))
    }

    /// The figures of the devices of one run.
    #[allow(clippy::cast_precision_loss)]
    pub fn of_devices(devices: &[DeviceFlops]) -> Self {
        let model_flops = devices
            .iter()
            .fold(0u64, |a, d| a.saturating_add(d.model_flops));
        let timed: Vec<&DeviceFlops> = devices.iter().filter(|d| d.window_ns > 0).collect();
        let tflops_per_s = (!timed.is_empty()).then(|| {
            timed
                .iter()
                .map(|d| d.model_flops as f64 / (d.window_ns as f64 * 1e-9) * 1e-12)
                .sum()
        });
        let with_flops: Vec<&&DeviceFlops> = timed.iter().filter(|d| d.model_flops > 0).collect();
        let capacity: Option<f64> = with_flops
            .iter()
            .map(|d| Some(d.peak_flops_per_s? * d.window_ns as f64 * 1e-9))
            .sum();
        let mfu = capacity
            .filter(|c| *c > 0.0 && !with_flops.is_empty())
            .map(|c| model_flops as f64 / c);
        Self {
            model_flops,
            tflops_per_s,
            mfu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::flops::DevicePeaks;

    fn device(
        id: u32,
        name: &str,
        model_flops: u64,
        window_ns: i64,
        peak: Option<f64>,
    ) -> DeviceFlops {
        DeviceFlops {
            device: id,
            name: name.to_string(),
            peaks: DevicePeaks::of(name, PeakOverride::default()),
            precision: None,
            peak_flops_per_s: peak,
            peak_bytes_per_s: None,
            peak_source: String::new(),
            model_flops,
            hardware_flops: model_flops,
            window_ns,
            mfu: None,
            hfu: None,
            op_gpu_ns: window_ns,
            known_gpu_ns: window_ns,
            far_below_roof_pct: None,
            steps: Vec::new(),
        }
    }

    #[test]
    fn one_gpu_gives_its_own_mfu() {
        // 50 TFLOP in 1 s on a 100 TFLOP/s part: 50 TFLOP/s, MFU 0.5.
        let r = RunFlops::of_devices(&[device(
            0,
            "A",
            50_000_000_000_000,
            1_000_000_000,
            Some(100e12),
        )]);
        assert_eq!(r.model_flops, 50_000_000_000_000);
        assert!((r.tflops_per_s.unwrap() - 50.0).abs() < 1e-9);
        assert!((r.mfu.unwrap() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn gpus_add_up_and_an_unknown_one_leaves_mfu_unknown() {
        // 10 TFLOP in 1 s and 30 TFLOP in 0.5 s on 100 TFLOP/s parts: 10 + 60 TFLOP/s;
        // MFU = 40 / (100 + 50).
        let both = [
            device(0, "A", 10_000_000_000_000, 1_000_000_000, Some(100e12)),
            device(1, "A", 30_000_000_000_000, 500_000_000, Some(100e12)),
        ];
        let r = RunFlops::of_devices(&both);
        assert!((r.tflops_per_s.unwrap() - 70.0).abs() < 1e-9);
        assert!((r.mfu.unwrap() - 40.0 / 150.0).abs() < 1e-12);
        let unknown = [
            device(0, "A", 10_000_000_000_000, 1_000_000_000, Some(100e12)),
            device(1, "Mystery", 30_000_000_000_000, 500_000_000, None),
        ];
        assert_eq!(RunFlops::of_devices(&unknown).mfu, None);
        assert_eq!(RunFlops::of_devices(&[]).tflops_per_s, None);
    }
}
