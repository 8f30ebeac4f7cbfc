//! Per device: the window, busy and idle time, the exclusive categories (compute, then
//! communication, then memory, then idle), the overlaps, Tensor Core time, occupancy and
//! utilisation over time (`docs/analysis.md`, sections 2, 5 and 6).

use serde::Serialize;

use super::intervals::{bucket_fractions, intersect, length, subtract, union};
use super::{Activity, IdleBreakdown};
use crate::model::EventKind;

/// Utilisation and the temporal breakdown of one device.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DeviceBreakdown {
    /// Device ordinal.
    pub device: u32,
    /// First activity start in the range.
    pub window_start_ns: i64,
    /// Last activity end in the range.
    pub window_end_ns: i64,
    /// `window_end_ns − window_start_ns`.
    pub window_ns: i64,
    /// Time with at least one kernel, copy or set running.
    pub busy_ns: i64,
    /// `window_ns − busy_ns`.
    pub idle_ns: i64,
    /// Busy over window, in percent.
    pub busy_pct: f64,
    /// Time running compute kernels (any non-communication kernel).
    pub compute_ns: i64,
    /// Time running communication kernels and no compute.
    pub comm_ns: i64,
    /// Time running copies or sets only.
    pub memory_ns: i64,
    /// Communication that ran while compute ran.
    pub overlap_comm_compute_ns: i64,
    /// That overlap as a share of all communication time, in percent.
    pub overlap_comm_pct: f64,
    /// Copies and sets that ran while compute ran.
    pub overlap_copy_compute_ns: i64,
    /// Summed (clipped) duration of the device's kernels.
    pub kernel_ns: i64,
    /// Summed duration of its kernels on Tensor Cores.
    pub tensor_core_ns: i64,
    /// `tensor_core_ns` over `kernel_ns`, in percent.
    pub tensor_core_pct: f64,
    /// GPU-time-weighted theoretical occupancy of its kernels, in percent.
    pub theoretical_occupancy_pct: Option<f64>,
    /// GPU-time-weighted estimated achieved occupancy the file gives (Kineto), in percent, over
    /// the kernels that have both it and a theoretical occupancy.
    pub achieved_occupancy_pct: Option<f64>,
    /// GPU-time-weighted theoretical occupancy over the same kernels as
    /// `achieved_occupancy_pct`, in percent: the figure to compare it with.
    pub theoretical_occupancy_where_achieved_pct: Option<f64>,
    /// The share of kernel time those kernels take, in percent.
    pub achieved_occupancy_time_pct: f64,
    /// Why the device was idle.
    pub idle_breakdown: IdleBreakdown,
    /// Busy fraction (0–1) of each time bucket of the window.
    pub utilisation: Vec<f64>,
    /// Length of one bucket (the last one takes the remainder).
    pub utilisation_bucket_ns: i64,
}

/// A weighted mean built up one value at a time.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WeightedMean {
    sum: f64,
    weight: i64,
}

impl WeightedMean {
    /// Adds `value` with weight `weight_ns`.
    pub fn add(&mut self, value: f64, weight_ns: i64) {
        #[allow(clippy::cast_precision_loss)]
        let w = weight_ns as f64;
        self.sum += value * w;
        self.weight = self.weight.saturating_add(weight_ns);
    }

    /// The mean, if anything was added.
    pub fn mean(self) -> Option<f64> {
        #[allow(clippy::cast_precision_loss)]
        (self.weight > 0).then(|| self.sum / self.weight as f64)
    }
}

/// The occupancy figures of a set of kernels (`docs/analysis.md`, section 5): every mean is
/// weighted by clipped time, the achieved one and its theoretical counterpart over the same
/// kernels (those with both values), so that they can be compared.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OccupancyMeans {
    theoretical: WeightedMean,
    achieved: WeightedMean,
    theoretical_where_achieved: WeightedMean,
    kernel_ns: i64,
}

/// [`OccupancyMeans`] worked out: theoretical, achieved, theoretical where achieved, and the
/// share of kernel time the last two cover (percent).
pub(crate) type OccupancyFigures = (Option<f64>, Option<f64>, Option<f64>, f64);

impl OccupancyMeans {
    /// Adds a kernel (clipped to the range).
    pub fn add(&mut self, a: &Activity) {
        let dur = a.dur_ns();
        self.kernel_ns = self.kernel_ns.saturating_add(dur);
        if let Some((theoretical, _)) = a.occupancy {
            self.theoretical.add(theoretical, dur);
            if let Some(achieved) = a.achieved_pct {
                self.achieved.add(achieved, dur);
                self.theoretical_where_achieved.add(theoretical, dur);
            }
        }
    }

    /// The figures.
    pub fn figures(&self) -> OccupancyFigures {
        (
            self.theoretical.mean(),
            self.achieved.mean(),
            self.theoretical_where_achieved.mean(),
            crate::analysis::pct(self.achieved.weight, self.kernel_ns),
        )
    }
}

/// The breakdown of one device's activities (sorted by start, not empty), whose union is `busy`.
pub(crate) fn device_breakdown(
    acts: &[Activity],
    busy: &[(i64, i64)],
    buckets: usize,
) -> DeviceBreakdown {
    let (mut compute, mut comm, mut memory) = (Vec::new(), Vec::new(), Vec::new());
    let (mut kernel_ns, mut tensor_core_ns) = (0i64, 0i64);
    let mut occupancy = OccupancyMeans::default();
    for a in acts {
        let span = (a.start_ns, a.end_ns);
        if a.kind != EventKind::Kernel {
            memory.push(span);
            continue;
        }
        let dur = a.dur_ns();
        kernel_ns = kernel_ns.saturating_add(dur);
        if a.tensor_cores {
            tensor_core_ns = tensor_core_ns.saturating_add(dur);
        }
        occupancy.add(a);
        if a.comm {
            comm.push(span);
        } else {
            compute.push(span);
        }
    }
    // The window is the union's extent.
    let window_start_ns = busy.first().map_or(0, |b| b.0);
    let window_end_ns = busy.last().map_or(0, |b| b.1);
    let (compute, comm, memory) = (union(compute), union(comm), union(memory));
    let busy_ns = length(busy);
    let window_ns = window_end_ns - window_start_ns;
    let comm_only = subtract(&comm, &compute);
    let compute_or_comm = union([compute.as_slice(), comm.as_slice()].concat());
    let overlap_comm_compute_ns = length(&intersect(&comm, &compute));
    let (utilisation, utilisation_bucket_ns) =
        bucket_fractions(busy, window_start_ns, window_end_ns, buckets);
    let (theoretical, achieved, theoretical_where_achieved, achieved_time_pct) =
        occupancy.figures();
    DeviceBreakdown {
        device: acts.first().map_or(0, |a| a.device),
        window_start_ns,
        window_end_ns,
        window_ns,
        busy_ns,
        idle_ns: window_ns - busy_ns,
        busy_pct: crate::analysis::pct(busy_ns, window_ns),
        compute_ns: length(&compute),
        comm_ns: length(&comm_only),
        memory_ns: length(&subtract(&memory, &compute_or_comm)),
        overlap_comm_compute_ns,
        overlap_comm_pct: crate::analysis::pct(overlap_comm_compute_ns, length(&comm)),
        overlap_copy_compute_ns: length(&intersect(&memory, &compute)),
        kernel_ns,
        tensor_core_ns,
        tensor_core_pct: crate::analysis::pct(tensor_core_ns, kernel_ns),
        theoretical_occupancy_pct: theoretical,
        achieved_occupancy_pct: achieved,
        theoretical_occupancy_where_achieved_pct: theoretical_where_achieved,
        achieved_occupancy_time_pct: achieved_time_pct,
        idle_breakdown: IdleBreakdown::default(),
        utilisation,
        utilisation_bucket_ns,
    }
}
