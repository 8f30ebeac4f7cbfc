//! Per kernel name: calls, time, theoretical and achieved occupancy with the limiting resource,
//! Tensor Cores, and the launch-delay distribution (`docs/analysis.md`, sections 4–6).

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::breakdown::{WeightedMean, event_achieved_occupancy, event_occupancy};
use super::launch::{launch_delay, nearest_rank};
use super::tensor_cores::uses_tensor_cores;
use super::{Activity, LaunchStats};
use crate::model::{EventKind, EventRef, Profile};
use crate::strings::StrId;

/// The insight figures of one kernel name.
#[derive(Clone, Debug, Serialize)]
pub struct KernelInsight {
    /// Kernel name.
    pub name: String,
    /// Launches in the range.
    pub calls: u64,
    /// Their summed (clipped) time.
    pub total_ns: i64,
    /// GPU-time-weighted theoretical occupancy, in percent.
    pub theoretical_occupancy_pct: Option<f64>,
    /// The resource that limits most of its time (`registers`, `warps+registers`).
    pub occupancy_limiter: Option<String>,
    /// GPU-time-weighted estimated achieved occupancy from the file (Kineto), in percent.
    pub achieved_occupancy_pct: Option<f64>,
    /// Runs on Tensor Cores.
    pub tensor_cores: bool,
    /// Median launch delay.
    pub launch_delay_median_ns: Option<i64>,
    /// 95th-percentile launch delay.
    pub launch_delay_p95_ns: Option<i64>,
    /// Launches shorter than the typical launch cost.
    pub launch_bound_calls: u64,
    /// The longest launches (for findings and the viewer), at most 20.
    #[serde(skip)]
    pub longest: Vec<EventRef>,
}

#[derive(Default)]
struct Group {
    calls: u64,
    total_ns: i64,
    theoretical: WeightedMean,
    achieved: WeightedMean,
    limiter_ns: Vec<(String, i64)>,
    delays: Vec<i64>,
    launch_bound: u64,
    longest: Vec<(i64, EventRef)>,
}

/// How many events a kernel row keeps for findings.
const KEEP_EVENTS: usize = 20;

/// Per kernel name, longest total first (then by name).
pub(crate) fn kernel_insights(
    profile: &Profile,
    acts: &[Activity],
    launches: &FxHashMap<EventRef, EventRef>,
    launch: &LaunchStats,
) -> Vec<KernelInsight> {
    let mut groups: FxHashMap<StrId, Group> = FxHashMap::default();
    for a in acts.iter().filter(|a| a.kind == EventKind::Kernel) {
        let name = profile.tracks[a.event.track as usize].events.name[a.event.index as usize];
        let g = groups.entry(name).or_default();
        let dur = a.end_ns - a.start_ns;
        g.calls += 1;
        g.total_ns = g.total_ns.saturating_add(dur);
        if let Some(o) = event_occupancy(profile, a) {
            g.theoretical.add(o.occupancy_pct, dur);
            let text = o.limiter_text();
            match g.limiter_ns.iter_mut().find(|(l, _)| *l == text) {
                Some(entry) => entry.1 = entry.1.saturating_add(dur),
                None => g.limiter_ns.push((text, dur)),
            }
        }
        if let Some(v) = event_achieved_occupancy(profile, a) {
            g.achieved.add(v, dur);
        }
        if let Some(&call) = launches.get(&a.event) {
            g.delays.push(launch_delay(profile, a.event, call));
        }
        if launch.is_launch_bound(profile, a) {
            g.launch_bound += 1;
        }
        g.longest.push((dur, a.event));
        if g.longest.len() > 4 * KEEP_EVENTS {
            keep_longest(&mut g.longest);
        }
    }
    let mut rows: Vec<KernelInsight> = groups
        .into_iter()
        .map(|(name, mut g)| {
            let name = profile.str(name).to_string();
            g.delays.sort_unstable();
            keep_longest(&mut g.longest);
            g.limiter_ns
                .sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            KernelInsight {
                tensor_cores: uses_tensor_cores(&name),
                name,
                calls: g.calls,
                total_ns: g.total_ns,
                theoretical_occupancy_pct: g.theoretical.mean(),
                occupancy_limiter: g.limiter_ns.first().map(|(l, _)| l.clone()),
                achieved_occupancy_pct: g.achieved.mean(),
                launch_delay_median_ns: nearest_rank(&g.delays, 1, 2),
                launch_delay_p95_ns: nearest_rank(&g.delays, 95, 100),
                launch_bound_calls: g.launch_bound,
                longest: g.longest.iter().map(|&(_, e)| e).collect(),
            }
        })
        .collect();
    rows.sort_by(|a, b| {
        b.total_ns
            .cmp(&a.total_ns)
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}

fn keep_longest(list: &mut Vec<(i64, EventRef)>) {
    list.sort_unstable_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    list.truncate(KEEP_EVENTS);
}
