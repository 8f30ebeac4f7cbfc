//! The insight layer: why a profile is slow. Utilisation and the temporal breakdown per device,
//! the causes of idle time, launch latency, occupancy, Tensor Core use, and ranked findings, all
//! over a [`TimeRange`]. The rules are written down in `docs/analysis.md`; every figure here
//! follows them to the nanosecond.

pub mod activity;
mod breakdown;
mod findings;
#[cfg(test)]
mod findings_tests;
mod gpu_rules;
mod idle;
pub mod intervals;
mod kernels;
mod launch;
pub mod occupancy;
mod rule;
pub mod tensor_cores;
#[cfg(test)]
mod tests;

pub use activity::{DeviceActivity, SpanTime, device_activity};
pub use breakdown::DeviceBreakdown;
pub use idle::{
    Gap, GapCause, HostWaitOp, IdleBreakdown, StreamIdle, is_blocking_sync,
    is_step_or_profiler_annotation,
};
pub use kernels::KernelInsight;
pub use launch::LaunchStats;
pub use rule::{AtStakeBasis, Finding, Rule};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::model::{EventKind, EventRef, FlowKind, Profile, TrackKey};
use crate::time::TimeRange;
use occupancy::{GpuArch, LaunchConfig, LimiterSet, launch_config, theoretical_occupancy};
use tensor_cores::uses_tensor_cores;

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
    /// Host-wait time by the CPU operator the GPU waited on, per device (in device order),
    /// largest first. The operator of a gap is the innermost one on the launching thread, step
    /// and profiler annotations left out ([`is_step_or_profiler_annotation`]).
    pub host_wait_ops: Vec<HostWaitOp>,
    /// Findings, largest time at stake first.
    pub findings: Vec<Finding>,
}

impl Insights {
    /// Host-wait time of `device` by the CPU operator the GPU waited on, largest first: the
    /// list `warpscope analyze` prints and the viewer's Insights panel shows.
    pub fn host_wait_ops_of(&self, device: u32) -> &[HostWaitOp] {
        let lo = self.host_wait_ops.partition_point(|o| o.device < device);
        let hi = self.host_wait_ops.partition_point(|o| o.device <= device);
        &self.host_wait_ops[lo..hi]
    }

    /// The CPU operator `device` waited on most (the first of [`Insights::host_wait_ops_of`]):
    /// the one the `host_wait` finding names.
    pub fn top_host_wait_op(&self, device: u32) -> Option<&HostWaitOp> {
        self.host_wait_ops_of(device).first()
    }
}

/// One kernel, copy or set that touches the range, clipped to it, with what the analysis asks of
/// it worked out once: its launching call, and for kernels, communication, Tensor Cores and
/// occupancy.
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
    /// The API call that launched it (launch flow).
    pub call: Option<EventRef>,
    /// A communication (NCCL/RCCL) kernel.
    pub comm: bool,
    /// A kernel that runs on Tensor Cores.
    pub tensor_cores: bool,
    /// A kernel's theoretical occupancy in percent, and what limits it.
    pub occupancy: Option<(f64, LimiterSet)>,
    /// A kernel's estimated achieved occupancy from the file (Kineto), in percent; Kineto's 0
    /// means it did not estimate it, and is left out.
    pub achieved_pct: Option<f64>,
}

impl Activity {
    /// Clipped length.
    pub fn dur_ns(&self) -> i64 {
        self.end_ns - self.start_ns
    }
}

pub use crate::names::is_communication;

/// The name facts of a kernel, decided once per name: (communication, Tensor Cores).
fn name_facts(name: &str) -> (bool, bool) {
    (is_communication(name), uses_tensor_cores(name))
}

/// The kernels, copies and sets of the range with positive clipped length, by device and start.
/// Name facts are decided once per name, occupancy once per (device, launch configuration).
pub(crate) fn activities(profile: &Profile, range: TimeRange) -> Vec<Activity> {
    activities_with(profile, range, true)
}

/// [`activities`]; without `launches_and_occupancy` the launching calls and theoretical
/// occupancy are left out (`call` and `occupancy` are `None`), which the temporal breakdown
/// does not need and which cost a pass over the flows per range.
fn activities_with(
    profile: &Profile,
    range: TimeRange,
    launches_and_occupancy: bool,
) -> Vec<Activity> {
    let launches = if launches_and_occupancy {
        launch_map(profile, range)
    } else {
        FxHashMap::default()
    };
    let mut by_name: FxHashMap<crate::StrId, (bool, bool)> = FxHashMap::default();
    let mut arch_of: FxHashMap<u32, Option<GpuArch>> = FxHashMap::default();
    let mut occupancy_of: FxHashMap<(u32, LaunchConfig), Option<(f64, LimiterSet)>> =
        FxHashMap::default();
    let mut out = Vec::new();
    for (t, track) in profile.tracks.iter().enumerate() {
        let TrackKey::Gpu { device, stream, .. } = track.key else {
            continue;
        };
        let ev = &track.events;
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
            let event = event_ref(t, i);
            let mut a = Activity {
                event,
                device,
                stream,
                start_ns,
                end_ns,
                kind,
                call: launches.get(&event).copied(),
                comm: false,
                tensor_cores: false,
                occupancy: None,
                achieved_pct: None,
            };
            if kind == EventKind::Kernel {
                (a.comm, a.tensor_cores) = *by_name
                    .entry(ev.name[i])
                    .or_insert_with(|| name_facts(profile.str(ev.name[i])));
                if let Some(info) = profile.kernel_info(track, i) {
                    a.achieved_pct = info.occupancy_pct.filter(|&v| v > 0.0).map(f64::from);
                    let mut arch = || {
                        *arch_of.entry(device).or_insert_with(|| {
                            let (major, minor) = profile.device(device)?.compute_capability?;
                            GpuArch::for_compute_capability(major, minor)
                        })
                    };
                    if launches_and_occupancy
                        && let (Some(arch), Some(config)) = (arch(), launch_config(&info))
                    {
                        a.occupancy = *occupancy_of.entry((device, config)).or_insert_with(|| {
                            theoretical_occupancy(&arch, config)
                                .ok()
                                .map(|o| (o.occupancy_pct, o.limiter_set()))
                        });
                    }
                }
            }
            out.push(a);
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

/// The launching API call of each GPU event that touches `range`, from the profile's launch
/// flows (only those flows are hashed: a table over a dragged range stays cheap).
fn launch_map(profile: &Profile, range: TimeRange) -> FxHashMap<EventRef, EventRef> {
    profile
        .flows
        .iter()
        .filter(|f| f.kind == FlowKind::Launch)
        .filter(|f| {
            range.is_all() || {
                let (start_ns, dur_ns) = event_span(profile, f.to);
                range.contains_event(start_ns, dur_ns)
            }
        })
        .map(|f| (f.to, f.from))
        .collect()
}

/// How many events a finding or a kernel row keeps: the longest.
pub(crate) const KEEP_EVENTS: usize = 20;

/// Sorts (duration, event) pairs longest first (then by position), and returns the events of the
/// first [`KEEP_EVENTS`].
pub(crate) fn longest_first(timed: &mut [(i64, EventRef)]) -> Vec<EventRef> {
    timed.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    timed.iter().take(KEEP_EVENTS).map(|&(_, e)| e).collect()
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
    let launch = launch::launch_stats(profile, &acts);
    kernels::kernel_insights(profile, &acts, &launch)
}

/// The temporal breakdown of each device over `range` (window, busy, compute, communication,
/// memory, idle, kernel time; `docs/analysis.md`, section 2) without the rest of [`analyze`]:
/// the figures are those [`analyze`] gives, but `idle_breakdown` is left at zero and
/// `utilisation` has `buckets` buckets, and `theoretical_occupancy_pct` is `None` (launches are
/// not looked up). What cross-rank analysis asks of every rank and step.
pub fn device_breakdowns(
    profile: &Profile,
    range: TimeRange,
    buckets: usize,
) -> Vec<DeviceBreakdown> {
    let acts = activities_with(profile, range, false);
    acts.chunk_by(|a, b| a.device == b.device)
        .map(|dev| breakdown::device_breakdown(dev, &idle::busy_of(dev), buckets))
        .collect()
}

/// Analyses `profile` over `range`: see the module documentation and `docs/analysis.md`.
pub fn analyze(profile: &Profile, range: TimeRange, opts: &AnalyzeOptions) -> Insights {
    let acts = activities(profile, range);
    let launch = launch::launch_stats(profile, &acts);
    let kernels = kernels::kernel_insights(profile, &acts, &launch);
    let mut devices = Vec::new();
    let mut idle = idle::IdleAnalysis::default();
    for dev in acts.chunk_by(|a, b| a.device == b.device) {
        // One union of the device's work serves the breakdown and the gaps.
        let busy = idle::busy_of(dev);
        let mut d = breakdown::device_breakdown(dev, &busy, opts.buckets);
        d.idle_breakdown = idle.add_device(profile, dev, &busy, &launch, opts);
        devices.push(d);
    }
    let idle = idle.finish(opts.top_gaps);
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
    insights.findings = findings::findings(profile, range, &acts, &insights, &idle.chains);
    insights
}
