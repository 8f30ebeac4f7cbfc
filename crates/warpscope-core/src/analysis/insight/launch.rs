//! Launch latency and queueing: the delay from each kernel's launching call to its start, the
//! typical cost of a launch, the kernels shorter than it, and CUDA graph launches
//! (`docs/analysis.md`, section 4).

use rustc_hash::FxHashSet;
use serde::Serialize;

use super::Activity;
use crate::model::{EventKind, EventRef, Profile};

/// Launch statistics of a range.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LaunchStats {
    /// Kernels in the range.
    pub kernels: u64,
    /// Of those, kernels with a launching call in the profile.
    pub kernels_with_launch: u64,
    /// Median duration of the distinct launching calls (nearest rank).
    pub typical_launch_ns: Option<i64>,
    /// Median launch delay of all kernels (start − end of the launching call).
    pub delay_median_ns: Option<i64>,
    /// 95th percentile of the launch delay.
    pub delay_p95_ns: Option<i64>,
    /// Kernels shorter than the typical launch.
    pub launch_bound_kernels: u64,
    /// Their summed (clipped) time.
    pub launch_bound_ns: i64,
    /// All kernel time (clipped).
    pub kernel_ns: i64,
    /// `launch_bound_ns` over `kernel_ns`, in percent.
    pub launch_bound_pct: f64,
    /// Distinct CUDA graph launch calls that launched kernels in the range.
    pub graph_launches: u64,
    /// Kernels launched by a CUDA graph launch.
    pub graph_kernels: u64,
}

impl LaunchStats {
    /// True if `a` is a kernel shorter than the typical launch cost.
    pub(crate) fn is_launch_bound(&self, profile: &Profile, a: &Activity) -> bool {
        let Some(typical) = self.typical_launch_ns else {
            return false;
        };
        a.kind == EventKind::Kernel && super::event_span(profile, a.event).1 < typical
    }
}

/// The value at nearest rank ⌈p·n⌉ of sorted `values`, p = `num / den`.
pub(crate) fn nearest_rank(sorted: &[i64], num: usize, den: usize) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (num * sorted.len()).div_ceil(den).max(1);
    sorted.get(rank - 1).copied()
}

/// True for launching calls that launch a CUDA graph.
pub(crate) fn is_graph_launch(name: &str) -> bool {
    name.starts_with("cudaGraphLaunch")
        || name.starts_with("cuGraphLaunch")
        || name.starts_with("hipGraphLaunch")
}

/// The launch delay of a kernel: its start − the end of its launching call.
pub(crate) fn launch_delay(profile: &Profile, kernel: EventRef, call: EventRef) -> i64 {
    let (k_start, _) = super::event_span(profile, kernel);
    let (c_start, c_dur) = super::event_span(profile, call);
    k_start - c_start.saturating_add(c_dur)
}

/// The launch statistics of the kernels among `acts`.
pub(crate) fn launch_stats(profile: &Profile, acts: &[Activity]) -> LaunchStats {
    let mut stats = LaunchStats::default();
    let mut calls: FxHashSet<EventRef> = FxHashSet::default();
    let mut graph_calls: FxHashSet<EventRef> = FxHashSet::default();
    let mut delays = Vec::new();
    for a in acts.iter().filter(|a| a.kind == EventKind::Kernel) {
        stats.kernels += 1;
        stats.kernel_ns = stats.kernel_ns.saturating_add(a.dur_ns());
        let Some(call) = a.call else {
            continue;
        };
        stats.kernels_with_launch += 1;
        calls.insert(call);
        delays.push(launch_delay(profile, a.event, call));
        let ev = &profile.tracks[call.track as usize].events;
        if is_graph_launch(profile.str(ev.name[call.index as usize])) {
            stats.graph_kernels += 1;
            graph_calls.insert(call);
        }
    }
    let mut durations: Vec<i64> = calls
        .iter()
        .map(|&c| super::event_span(profile, c).1)
        .collect();
    durations.sort_unstable();
    delays.sort_unstable();
    stats.typical_launch_ns = nearest_rank(&durations, 1, 2);
    stats.delay_median_ns = nearest_rank(&delays, 1, 2);
    stats.delay_p95_ns = nearest_rank(&delays, 95, 100);
    stats.graph_launches = graph_calls.len() as u64;
    for a in acts {
        if stats.is_launch_bound(profile, a) {
            stats.launch_bound_kernels += 1;
            stats.launch_bound_ns = stats.launch_bound_ns.saturating_add(a.dur_ns());
        }
    }
    stats.launch_bound_pct = crate::analysis::pct(stats.launch_bound_ns, stats.kernel_ns);
    stats
}
