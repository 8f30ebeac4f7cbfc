//! The results of a live run: per point, the CUDA-event and CUPTI times of every timed launch,
//! the check against the CPU reference, and the achieved rates against the device's measured
//! peaks. A run's results travel inside its profile (as a JSON detail of the source), so a saved
//! and reopened run still has its table and plot.

use serde::{Deserialize, Serialize};
use warpscope_core::Profile;

use crate::catalog::{
    KernelSpec, Math, Memory, Metric, SizeUnit, Target, USER_KERNEL, Work, kernel,
};
use crate::gpu::{DeviceFacts, Occupancy, Resources};
use crate::reference::Check;
use crate::user::UserInfo;

/// Name of the source detail that holds a live run's results as JSON.
pub const RESULTS_DETAIL_KEY: &str = "live_results";

/// The device's ceilings, measured in the same run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Peaks {
    /// Device-to-device `cuMemcpyDtoD` bandwidth, counting bytes read plus bytes written.
    pub d2d_bytes_per_s: Option<f64>,
    /// cuBLAS SGEMM rate (FP32, default math) at 4096³.
    pub sgemm_flops_per_s: Option<f64>,
    /// cuBLAS GEMM rate with TF32 tensor-op math on FP32 data at 4096³.
    #[serde(default)]
    pub tf32_flops_per_s: Option<f64>,
    /// cuBLAS GEMM rate with FP16 inputs and FP32 accumulation (tensor-op math) at 4096³.
    #[serde(default)]
    pub fp16_flops_per_s: Option<f64>,
}

impl Peaks {
    /// The compute ceiling of FLOPs that run on `math`.
    pub fn compute(&self, math: Math) -> Option<f64> {
        match math {
            Math::Fp32 => self.sgemm_flops_per_s,
            Math::Tf32 => self.tf32_flops_per_s,
            Math::Fp16 => self.fp16_flops_per_s,
        }
    }
}

/// One measured point of a sweep.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// Configuration name.
    pub config: String,
    /// GPU or CPU.
    pub target: Target,
    /// Memory kind.
    pub memory: Memory,
    /// Size in the kernel's unit.
    pub size: u64,
    /// Work of one launch.
    pub work: Work,
    /// Timed launches planned.
    pub planned: u32,
    /// CUDA-event time of each timed launch (host wall time for CPU runs), in nanoseconds.
    pub event_ns: Vec<i64>,
    /// CUPTI duration of each timed launch (kernel or copy records), when CUPTI was present.
    pub cupti_ns: Vec<i64>,
    /// The check of the last launch's result against the CPU reference.
    pub check: Option<Check>,
    /// Threads per block when a `--blocks` sweep set it.
    #[serde(default)]
    pub block: Option<u32>,
    /// What the kernel uses per thread and block (registers, shared and local memory).
    #[serde(default)]
    pub resources: Option<Resources>,
    /// Theoretical occupancy of the launch, from the driver's occupancy API.
    #[serde(default)]
    pub occupancy: Option<Occupancy>,
    /// The arithmetic its FLOPs run on (the roofline's compute ceiling).
    #[serde(default)]
    pub math: Math,
    /// CUDA-event times of the same launches with CUPTI's activity collection paused
    /// (`--cupti-cost`), in nanoseconds.
    #[serde(default)]
    pub cupti_off_ns: Vec<i64>,
    /// Why the point could not be measured (a faulting kernel, a launch the GPU refused).
    #[serde(default)]
    pub error: Option<String>,
    /// Launches per pair of CUDA events (`--batch`): each time above is the events' elapsed
    /// time over this many back-to-back launches, divided by it. 1 for CPU points and unbatched
    /// runs.
    #[serde(default = "one")]
    pub batch: u32,
}

/// The batch of a run saved before batching existed.
fn one() -> u32 {
    1
}

/// A whole live run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LiveRun {
    /// Kernel name (`vector_add`).
    pub kernel: String,
    /// What a size counts.
    pub size_unit: SizeUnit,
    /// The device it ran on.
    pub device: DeviceFacts,
    /// Measured ceilings.
    pub peaks: Peaks,
    /// Whether CUPTI activity records were collected.
    pub cupti: bool,
    /// Why CUPTI records are missing, when they are.
    pub cupti_note: Option<String>,
    /// Warm-up launches per configuration.
    pub warmup: u32,
    /// The points, configuration by configuration.
    pub points: Vec<PointResult>,
    /// Problems that make some numbers less trustworthy.
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The user's kernel, for a run of one (`warpscope live --source`).
    #[serde(default)]
    pub user: Option<UserInfo>,
    /// Launches per pair of CUDA events asked for (`--batch`; 1: one launch per pair).
    #[serde(default = "one")]
    pub batch: u32,
}

/// Median of a list of nanosecond times (the lower middle for even counts).
pub fn median_ns(values: &[i64]) -> Option<i64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_unstable();
    Some(v[(v.len() - 1) / 2])
}

/// `amount` per second over a time of `ns` nanoseconds; `None` without a positive time.
pub fn per_second(amount: f64, ns: Option<i64>) -> Option<f64> {
    ns.filter(|&t| t > 0).map(|t| amount / (t as f64 * 1e-9))
}

impl PointResult {
    /// Median CUDA-event (or CPU wall) time.
    pub fn median_event_ns(&self) -> Option<i64> {
        median_ns(&self.event_ns)
    }

    /// Median CUPTI time.
    pub fn median_cupti_ns(&self) -> Option<i64> {
        median_ns(&self.cupti_ns)
    }

    /// The time rates are computed from: CUPTI's median where present, else the events'.
    pub fn best_ns(&self) -> Option<i64> {
        self.median_cupti_ns().or_else(|| self.median_event_ns())
    }

    /// Achieved bytes per second.
    pub fn bytes_per_s(&self) -> Option<f64> {
        let t = self.best_ns()?;
        (t > 0 && self.work.bytes > 0.0).then(|| self.work.bytes / (t as f64 * 1e-9))
    }

    /// Achieved floating-point operations per second.
    pub fn flops_per_s(&self) -> Option<f64> {
        let t = self.best_ns()?;
        (t > 0 && self.work.flops > 0.0).then(|| self.work.flops / (t as f64 * 1e-9))
    }

    /// Relative difference between the CUPTI and event medians, (event − cupti) / cupti.
    pub fn event_vs_cupti(&self) -> Option<f64> {
        let (e, c) = (self.median_event_ns()?, self.median_cupti_ns()?);
        (c > 0).then(|| (e - c) as f64 / c as f64)
    }

    /// What collecting CUPTI records costs the launch: (event median with CUPTI − event
    /// median without) / event median without, where both were run.
    pub fn cupti_cost(&self) -> Option<f64> {
        let (on, off) = (self.median_event_ns()?, median_ns(&self.cupti_off_ns)?);
        (off > 0).then(|| (on - off) as f64 / off as f64)
    }
}

impl LiveRun {
    /// The kernel's catalogue entry ([`USER_KERNEL`] for a user kernel).
    pub fn spec(&self) -> Option<&'static KernelSpec> {
        if self.user.is_some() {
            Some(&USER_KERNEL)
        } else {
            kernel(&self.kernel)
        }
    }

    /// The rate that says how well a kernel did: FLOP/s for a user kernel given `--flops`.
    fn metric(&self) -> Option<Metric> {
        match &self.user {
            Some(u) if u.has_flops => Some(Metric::Flops),
            Some(_) => Some(Metric::Bandwidth),
            None => self.spec().map(|k| k.metric),
        }
    }

    /// The rate that matters for this kernel and its share of the measured peak, for a point:
    /// (rate in GB/s or GFLOP/s, percent of peak). GB/s are set against the device-to-device
    /// copy; GFLOP/s against the roof at the point's intensity (the compute ceiling of its
    /// arithmetic, or intensity × DRAM bandwidth when that is lower).
    pub fn rate(&self, point: &PointResult) -> Option<(f64, Option<f64>)> {
        match self.metric()? {
            Metric::Bandwidth => {
                let r = point.bytes_per_s()?;
                // Host-device copies cross the bus: their ceiling is not the HBM's.
                let on_device = self.spec()?.id != crate::catalog::KernelId::Transfer;
                let pct = (point.target == Target::Gpu && on_device)
                    .then_some(self.peaks.d2d_bytes_per_s)
                    .flatten()
                    .map(|p| 100.0 * r / p);
                Some((r * 1e-9, pct))
            }
            Metric::Flops => {
                // The share of the roof at the point's intensity: of the compute ceiling when it
                // is compute-bound, of intensity x DRAM when it is memory-bound.
                let r = point.flops_per_s()?;
                let pct = match self.roofline(point) {
                    Some(roof) => Some(roof.percent_of_roof),
                    None => self.peaks.compute(point.math).map(|p| 100.0 * r / p),
                };
                Some((r * 1e-9, pct))
            }
        }
    }

    /// Unit of [`LiveRun::rate`].
    pub fn rate_unit(&self) -> &'static str {
        match self.metric() {
            Some(Metric::Flops) => "GFLOP/s",
            _ => "GB/s",
        }
    }

    /// True when every checked point matched its CPU reference and no point failed.
    pub fn all_checks_ok(&self) -> bool {
        self.points
            .iter()
            .all(|p| p.check.is_none_or(|c| c.ok) && p.error.is_none())
    }

    /// The results as the JSON text stored in a profile's source details.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The results stored in `profile`, if it is a live run (fresh or saved and reopened).
    pub fn from_profile(profile: &Profile) -> Option<Self> {
        let (_, text) = profile
            .source
            .details
            .iter()
            .find(|(k, _)| k == RESULTS_DETAIL_KEY)?;
        serde_json::from_str(text).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(event_ns: Vec<i64>, cupti_ns: Vec<i64>) -> PointResult {
        PointResult {
            config: "grid-device".into(),
            target: Target::Gpu,
            memory: Memory::Device,
            size: 1_000_000,
            work: kernel("vector_add").unwrap().work(1_000_000),
            planned: 3,
            event_ns,
            cupti_ns,
            check: None,
            block: None,
            resources: None,
            occupancy: None,
            math: Math::Fp32,
            cupti_off_ns: Vec::new(),
            error: None,
            batch: 1,
        }
    }

    #[test]
    fn medians_and_rates() {
        assert_eq!(median_ns(&[]), None);
        assert_eq!(median_ns(&[5, 1, 3]), Some(3));
        assert_eq!(median_ns(&[4, 1, 3, 2]), Some(2));
        let p = point(vec![10_000, 12_000, 11_000], vec![9_000, 9_500, 9_200]);
        assert_eq!(p.median_event_ns(), Some(11_000));
        assert_eq!(p.best_ns(), Some(9_200));
        // 12 MB in 9.2 us.
        let gbs = p.bytes_per_s().unwrap() * 1e-9;
        assert!((gbs - 12e6 / 9.2e-6 * 1e-9).abs() < 1e-9, "{gbs}");
        let diff = p.event_vs_cupti().unwrap();
        assert!((diff - 1800.0 / 9200.0).abs() < 1e-12);
        let no_cupti = point(vec![10_000], vec![]);
        assert_eq!(no_cupti.best_ns(), Some(10_000));
        assert_eq!(no_cupti.event_vs_cupti(), None);
    }

    #[test]
    fn rate_against_peak_and_json_round_trip() {
        let run = LiveRun {
            kernel: "vector_add".into(),
            size_unit: SizeUnit::Floats,
            device: DeviceFacts::default(),
            peaks: Peaks {
                d2d_bytes_per_s: Some(2.4e12),
                sgemm_flops_per_s: None,
                ..Peaks::default()
            },
            cupti: true,
            cupti_note: None,
            warmup: 1,
            points: vec![point(vec![10_000], vec![10_000])],
            warnings: Vec::new(),
            user: None,
            batch: 1,
        };
        let (gbs, pct) = run.rate(&run.points[0]).unwrap();
        assert!((gbs - 1200.0).abs() < 1e-6, "{gbs}");
        assert!((pct.unwrap() - 50.0).abs() < 1e-6);
        assert_eq!(run.rate_unit(), "GB/s");
        let back: LiveRun = serde_json::from_str(&run.to_json()).unwrap();
        assert_eq!(back, run);
        // Host-device copies cross the bus: no share of the HBM peak for them.
        let mut transfer = run;
        transfer.kernel = "transfer".into();
        transfer.points[0].work = kernel("transfer").unwrap().work(12_000_000);
        let (gbs, pct) = transfer.rate(&transfer.points[0]).unwrap();
        assert!((gbs - 1200.0).abs() < 1e-6, "{gbs}");
        assert_eq!(pct, None);
    }
}
