//! Per kernel name: calls, time, theoretical and achieved occupancy with the limiting resource,
//! Tensor Cores, and the launch-delay distribution (`docs/analysis.md`, sections 4–6).

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::breakdown::OccupancyMeans;
use super::launch::{launch_delay, nearest_rank};
use super::occupancy::LimiterSet;
use super::{Activity, KEEP_EVENTS, LaunchStats, longest_first};
use crate::model::{EventKind, EventRef, Profile};
use crate::names::{KernelOwner, kernel_owner};
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
    /// Who owns the kernel ([`kernel_owner`]): whose advice a finding about it gives.
    pub owner: KernelOwner,
    /// GPU-time-weighted theoretical occupancy, in percent.
    pub theoretical_occupancy_pct: Option<f64>,
    /// The resource that limits most of its time (`registers`, `warps+registers`).
    pub occupancy_limiter: Option<String>,
    /// GPU-time-weighted estimated achieved occupancy from the file (Kineto), in percent, over
    /// the launches that have both it and a theoretical occupancy.
    pub achieved_occupancy_pct: Option<f64>,
    /// GPU-time-weighted theoretical occupancy over the same launches as
    /// `achieved_occupancy_pct`, in percent.
    pub theoretical_occupancy_where_achieved_pct: Option<f64>,
    /// The share of the kernel's time those launches take, in percent.
    pub achieved_occupancy_time_pct: f64,
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

impl KernelInsight {
    /// The limiter as the tables show it: `(full)` at full occupancy (nothing to lift), else
    /// the resource; `None` without a theoretical occupancy.
    pub fn shown_limiter(&self) -> Option<&str> {
        match (
            self.theoretical_occupancy_pct,
            self.occupancy_limiter.as_deref(),
        ) {
            (Some(o), _) if o >= 99.95 => Some("(full)"),
            (_, limiter) => limiter,
        }
    }
}

#[derive(Default)]
struct Group {
    calls: u64,
    total_ns: i64,
    occupancy: OccupancyMeans,
    tensor_cores: bool,
    limiter_ns: Vec<(LimiterSet, i64)>,
    delays: Vec<i64>,
    launch_bound: u64,
    longest: Vec<(i64, EventRef)>,
}

/// Per kernel name, longest total first (then by name).
pub(crate) fn kernel_insights(
    profile: &Profile,
    acts: &[Activity],
    launch: &LaunchStats,
) -> Vec<KernelInsight> {
    let mut groups: FxHashMap<StrId, Group> = FxHashMap::default();
    for a in acts.iter().filter(|a| a.kind == EventKind::Kernel) {
        let name = profile.tracks[a.event.track as usize].events.name[a.event.index as usize];
        let g = groups.entry(name).or_default();
        let dur = a.dur_ns();
        g.calls += 1;
        g.total_ns = g.total_ns.saturating_add(dur);
        g.tensor_cores = a.tensor_cores;
        g.occupancy.add(a);
        if let Some((_, limiters)) = a.occupancy {
            match g.limiter_ns.iter_mut().find(|(l, _)| *l == limiters) {
                Some(entry) => entry.1 = entry.1.saturating_add(dur),
                None => g.limiter_ns.push((limiters, dur)),
            }
        }
        if let Some(call) = a.call {
            g.delays.push(launch_delay(profile, a.event, call));
        }
        if launch.is_launch_bound(profile, a) {
            g.launch_bound += 1;
        }
        g.longest.push((dur, a.event));
        if g.longest.len() > 4 * KEEP_EVENTS {
            longest_first(&mut g.longest);
            g.longest.truncate(KEEP_EVENTS);
        }
    }
    let mut rows: Vec<KernelInsight> = groups
        .into_iter()
        .map(|(name, mut g)| {
            let name = profile.str(name).to_string();
            g.delays.sort_unstable();
            let mut limiters: Vec<(String, i64)> = g
                .limiter_ns
                .iter()
                .map(|&(set, ns)| (set.text(), ns))
                .collect();
            limiters.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            let (theoretical, achieved, theoretical_where_achieved, achieved_time_pct) =
                g.occupancy.figures();
            KernelInsight {
                tensor_cores: g.tensor_cores,
                owner: kernel_owner(&name),
                name,
                calls: g.calls,
                total_ns: g.total_ns,
                theoretical_occupancy_pct: theoretical,
                occupancy_limiter: limiters.into_iter().next().map(|(l, _)| l),
                achieved_occupancy_pct: achieved,
                theoretical_occupancy_where_achieved_pct: theoretical_where_achieved,
                achieved_occupancy_time_pct: achieved_time_pct,
                launch_delay_median_ns: nearest_rank(&g.delays, 1, 2),
                launch_delay_p95_ns: nearest_rank(&g.delays, 95, 100),
                launch_bound_calls: g.launch_bound,
                longest: longest_first(&mut g.longest),
            }
        })
        .collect();
    crate::analysis::by_total_then_name(&mut rows, |r| (r.total_ns, &r.name));
    rows
}
