//! The insight layer: why a profile is slow. Utilisation and the temporal breakdown per device,
//! the causes of idle time, launch latency, occupancy, Tensor Core use, and ranked findings, all
//! over a [`TimeRange`]. The rules are written down in `docs/analysis.md`; every figure here
//! follows them to the nanosecond.

pub mod activity;
mod breakdown;
mod findings;
mod idle;
pub mod intervals;
mod kernels;
mod launch;
pub mod occupancy;
pub mod tensor_cores;
#[cfg(test)]
mod tests;

pub use activity::{DeviceActivity, SpanTime, device_activity};
pub use breakdown::DeviceBreakdown;
pub use findings::{Finding, Rule};
pub use idle::{Gap, GapCause, HostWaitOp, IdleBreakdown, StreamIdle};
pub use kernels::KernelInsight;
pub use launch::LaunchStats;

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::model::{EventKind, EventRef, FlowKind, Profile, TrackKey};
use crate::time::TimeRange;

/// Settings of [`analyze`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnalyzeOptions {
    /// Number of utilisation buckets per device.
    pub buckets: usize,
    /// Gaps shorter than this between queued work are "kernel wait".
    pub kernel_wait_threshold_ns: i64,
    /// How many of the largest gaps to list.
    pub top_gaps: usize,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        Self {
            buckets: 200,
            kernel_wait_threshold_ns: 10_000,
            top_gaps: 10,
        }
    }
}

/// Everything [`analyze`] finds in one profile over one range.
#[derive(Clone, Debug, Serialize)]
pub struct Insights {
    /// Per device: utilisation, the temporal breakdown and the idle causes.
    pub devices: Vec<DeviceBreakdown>,
    /// Per (device, stream): the idle causes.
    pub streams: Vec<StreamIdle>,
    /// Per kernel name, longest total first: occupancy, Tensor Cores, launch delay.
    pub kernels: Vec<KernelInsight>,
    /// Share of kernel time on Tensor Cores, in percent, over all devices.
    pub tensor_core_pct: f64,
    /// Launch latency and launch-bound kernels.
    pub launch: LaunchStats,
    /// The longest device gaps, longest first.
    pub gaps: Vec<Gap>,
    /// Host-wait time by the CPU operator the GPU waited on, largest first.
    pub host_wait_ops: Vec<HostWaitOp>,
    /// Findings, largest time at stake first.
    pub findings: Vec<Finding>,
}

/// One kernel, copy or set that touches the range, clipped to it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Activity {
    /// The event.
    pub event: EventRef,
    /// Its device.
    pub device: u32,
    /// Its stream.
    pub stream: u64,
    /// Clipped start.
    pub start_ns: i64,
    /// Clipped end.
    pub end_ns: i64,
    /// Kernel, copy or set.
    pub kind: EventKind,
    /// A communication (NCCL/RCCL) kernel.
    pub comm: bool,
}

/// True for communication kernels: names containing `nccl` or `rccl`, in any case.
pub fn is_communication(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.contains("nccl") || lower.contains("rccl")
}

/// The kernels, copies and sets of the range with positive clipped length, by device and start.
pub(crate) fn activities(profile: &Profile, range: TimeRange) -> Vec<Activity> {
    let mut out = Vec::new();
    for (t, track) in profile.tracks.iter().enumerate() {
        let TrackKey::Gpu { device, stream, .. } = track.key else {
            continue;
        };
        let ev = &track.events;
        // Communication is decided once per name, not per event.
        let mut comm_by_name: FxHashMap<crate::StrId, bool> = FxHashMap::default();
        for i in track.candidates(&range) {
            let kind = ev.kind[i];
            if !kind.is_gpu_activity() {
                continue;
            }
            let start_ns = ev.start_ns[i].max(range.start_ns);
            let end_ns = ev.end_ns(i).min(range.end_ns);
            if end_ns <= start_ns {
                continue;
            }
            let comm = kind == EventKind::Kernel
                && *comm_by_name
                    .entry(ev.name[i])
                    .or_insert_with(|| is_communication(profile.str(ev.name[i])));
            out.push(Activity {
                event: event_ref(t, i),
                device,
                stream,
                start_ns,
                end_ns,
                kind,
                comm,
            });
        }
    }
    out.sort_by_key(|a| (a.device, a.start_ns, a.event));
    out
}

/// An [`EventRef`] from track and event positions.
pub(crate) fn event_ref(track: usize, index: usize) -> EventRef {
    EventRef {
        track: u32::try_from(track).unwrap_or(u32::MAX),
        index: u32::try_from(index).unwrap_or(u32::MAX),
    }
}

/// The launching API call of each GPU event, from the profile's launch flows.
pub(crate) fn launch_map(profile: &Profile) -> FxHashMap<EventRef, EventRef> {
    profile
        .flows
        .iter()
        .filter(|f| f.kind == FlowKind::Launch)
        .map(|f| (f.to, f.from))
        .collect()
}

/// Start and duration of an event.
pub(crate) fn event_span(profile: &Profile, e: EventRef) -> (i64, i64) {
    let ev = &profile.tracks[e.track as usize].events;
    let i = e.index as usize;
    (ev.start_ns[i], ev.dur_ns[i])
}

/// Per kernel name over `range`, longest total first: occupancy with its limiter, Tensor Cores,
/// launch delays (the `kernels` of [`analyze`], without the rest of the analysis).
pub fn kernel_insights(profile: &Profile, range: TimeRange) -> Vec<KernelInsight> {
    let acts = activities(profile, range);
    let launches = launch_map(profile);
    let launch = launch::launch_stats(profile, &acts, &launches);
    kernels::kernel_insights(profile, &acts, &launches, &launch)
}

/// Analyses `profile` over `range`: see the module documentation and `docs/analysis.md`.
pub fn analyze(profile: &Profile, range: TimeRange, opts: &AnalyzeOptions) -> Insights {
    let acts = activities(profile, range);
    let launches = launch_map(profile);
    let launch = launch::launch_stats(profile, &acts, &launches);
    let kernels = kernels::kernel_insights(profile, &acts, &launches, &launch);
    let mut devices = breakdown::device_breakdowns(profile, &acts, opts.buckets);
    let idle = idle::idle_analysis(profile, &acts, &launches, &launch, opts);
    // Both lists hold the devices in the same (ascending) order.
    for (d, (device, breakdown)) in devices.iter_mut().zip(&idle.device) {
        debug_assert_eq!(d.device, *device);
        d.idle_breakdown = *breakdown;
    }
    let kernel_ns = crate::analysis::saturating_sum(devices.iter().map(|d| d.kernel_ns));
    let tensor_ns = crate::analysis::saturating_sum(devices.iter().map(|d| d.tensor_core_ns));
    let mut insights = Insights {
        tensor_core_pct: super::pct(tensor_ns, kernel_ns),
        devices,
        streams: idle.streams,
        kernels,
        launch,
        gaps: idle.top_gaps,
        host_wait_ops: idle.host_wait_ops,
        findings: Vec::new(),
    };
    insights.findings =
        findings::findings(profile, range, &acts, &insights, &idle.launch_bound_gap_ns);
    insights
}
