//! What cross-rank analysis keeps of one rank: its time breakdown for the whole run and per
//! step (from the insight layer), and its collective calls. A few hundred bytes per step and
//! per collective, so that a job of a thousand ranks is analysed without keeping their events.

use std::path::PathBuf;

use serde::Serialize;

use crate::analysis::compare::{is_nccl_kernel, profile_rank, step_ranges};
use crate::analysis::insight::{DeviceBreakdown, device_breakdowns, is_communication};
use crate::model::{EventKind, Profile, TrackKey};
use crate::time::TimeRange;

/// Where a rank number came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankSource {
    /// Kineto's `distributedInfo.rank`, or the file name (`_rank3`, `worker1`).
    Trace,
    /// Neither gave one: numbered after the highest known rank, in file order.
    Position,
}

/// The time breakdown of a rank over a range, summed over its devices (one per rank in the
/// usual job): the figures of `warpscope analyze` (`docs/analysis.md`, section 2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Breakdown {
    /// From the first GPU activity to the last.
    pub window_ns: i64,
    /// Time with any kernel, copy or set running.
    pub busy_ns: i64,
    /// Time running compute (non-communication) kernels.
    pub compute_ns: i64,
    /// Time running communication kernels and no compute.
    pub comm_ns: i64,
    /// Time running copies or sets only.
    pub memory_ns: i64,
    /// `window_ns − busy_ns`.
    pub idle_ns: i64,
    /// Summed duration of the kernels.
    pub kernel_ns: i64,
}

impl Breakdown {
    /// The sum over devices of their breakdowns.
    pub fn of_devices(devices: &[DeviceBreakdown]) -> Self {
        let mut b = Self::default();
        for d in devices {
            b.window_ns = b.window_ns.saturating_add(d.window_ns);
            b.busy_ns = b.busy_ns.saturating_add(d.busy_ns);
            b.compute_ns = b.compute_ns.saturating_add(d.compute_ns);
            b.comm_ns = b.comm_ns.saturating_add(d.comm_ns);
            b.memory_ns = b.memory_ns.saturating_add(d.memory_ns);
            b.idle_ns = b.idle_ns.saturating_add(d.idle_ns);
            b.kernel_ns = b.kernel_ns.saturating_add(d.kernel_ns);
        }
        b
    }
}

/// One training step of one rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StepFacts {
    /// `N` of `ProfilerStep#N`.
    pub step: u64,
    /// Start of the step, rank-local nanoseconds.
    pub start_ns: i64,
    /// End of the step, rank-local nanoseconds.
    pub end_ns: i64,
    /// The breakdown within the step.
    pub breakdown: Breakdown,
}

/// One collective call of one rank: a communication kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CollectiveCall {
    /// The process group (Kineto `Process Group Name`), empty when the trace does not say.
    pub group: String,
    /// The collective (`AllReduce`, `AllGather`, `SendRecv`...) from the kernel name.
    pub name: String,
    /// The `ProfilerStep#N` whose range holds its start, if any.
    pub step: Option<u64>,
    /// Kernel start, rank-local nanoseconds: when this rank arrived.
    pub start_ns: i64,
    /// Kernel end, rank-local nanoseconds.
    pub end_ns: i64,
}

/// What cross-rank analysis keeps of one rank.
#[derive(Clone, Debug, Serialize)]
pub struct RankFacts {
    /// The rank.
    pub rank: i64,
    /// Where [`Self::rank`] came from.
    pub rank_source: RankSource,
    /// World size the trace states.
    pub world_size: Option<i64>,
    /// The file.
    pub file: PathBuf,
    /// Time zero of the rank as Unix-epoch nanoseconds, when known.
    pub unix_origin_ns: Option<i64>,
    /// The whole run.
    pub total: Breakdown,
    /// Per `ProfilerStep#N`, in step order.
    pub steps: Vec<StepFacts>,
    /// Communication kernels, by start.
    pub collectives: Vec<CollectiveCall>,
}

impl RankFacts {
    /// The facts of `profile`; `position` (the file's place among the job's files) stands in
    /// for the rank when neither the trace nor the file name gives one.
    pub fn of(profile: &Profile, position: usize) -> Self {
        let (rank, rank_source) = match profile_rank(profile) {
            Some(r) => (r, RankSource::Trace),
            None => (
                i64::try_from(position).unwrap_or(i64::MAX),
                RankSource::Position,
            ),
        };
        let total = Breakdown::of_devices(&device_breakdowns(profile, TimeRange::ALL, 1));
        let steps: Vec<StepFacts> = step_ranges(profile)
            .into_iter()
            .map(|(step, range)| StepFacts {
                step,
                start_ns: range.start_ns,
                end_ns: range.end_ns,
                breakdown: Breakdown::of_devices(&device_breakdowns(profile, range, 1)),
            })
            .collect();
        Self {
            rank,
            rank_source,
            world_size: profile.distributed.as_ref().and_then(|d| d.world_size),
            file: profile.source.path.clone(),
            unix_origin_ns: profile.origin.unix_ns,
            total,
            collectives: collective_calls(profile, &steps),
            steps,
        }
    }

    /// Mean step duration (rounded down), 0 without steps.
    pub fn mean_step_ns(&self) -> i64 {
        let n = i64::try_from(self.steps.len()).unwrap_or(i64::MAX);
        if n == 0 {
            return 0;
        }
        crate::analysis::saturating_sum(self.steps.iter().map(|s| s.end_ns - s.start_ns)) / n
    }
}

/// The step whose range holds `t_ns` (the latest starting at or before it), if any.
fn step_at(steps: &[StepFacts], t_ns: i64) -> Option<u64> {
    let after = steps.partition_point(|s| s.start_ns <= t_ns);
    let s = steps[..after].iter().rev().find(|s| t_ns < s.end_ns)?;
    Some(s.step)
}

/// The communication kernels of a profile, by start (then end, group), each with its step.
fn collective_calls(profile: &Profile, steps: &[StepFacts]) -> Vec<CollectiveCall> {
    // By start, for the search of `step_at`.
    let mut steps = steps.to_vec();
    steps.sort_by_key(|s| (s.start_ns, s.step));
    let mut calls = Vec::new();
    for track in &profile.tracks {
        if !matches!(track.key, TrackKey::Gpu { .. }) {
            continue;
        }
        let ev = &track.events;
        for i in 0..ev.len() {
            if ev.kind[i] != EventKind::Kernel {
                continue;
            }
            let name = profile.str(ev.name[i]);
            if !is_communication(name) {
                continue;
            }
            let group = profile
                .kernel_info(track, i)
                .and_then(|k| k.process_group)
                .map(|g| profile.str(g).to_string())
                .unwrap_or_default();
            calls.push(CollectiveCall {
                group,
                name: collective_name(name),
                step: step_at(&steps, ev.start_ns[i]),
                start_ns: ev.start_ns[i],
                end_ns: ev.end_ns(i),
            });
        }
    }
    calls.sort_by(|a, b| (a.start_ns, a.end_ns, &a.group).cmp(&(b.start_ns, b.end_ns, &b.group)));
    calls
}

/// The collective a communication kernel runs: `AllReduce` for
/// `ncclDevKernel_AllReduce_Sum_f32_RING_LL(...)` or `ncclKernel_AllReduce_RING_LL_Sum_float`;
/// otherwise the name up to its first `(` or `<`.
pub fn collective_name(kernel: &str) -> String {
    let head = kernel
        .split(['(', '<'])
        .next()
        .unwrap_or(kernel)
        .trim_start_matches("void ")
        .trim();
    if is_nccl_kernel(head) || head.to_ascii_lowercase().contains("rccl") {
        let mut parts = head.split('_');
        let first = parts.next().unwrap_or_default().to_ascii_lowercase();
        if first.ends_with("kernel")
            && let Some(op) = parts.next()
            && !op.is_empty()
        {
            return op.to_string();
        }
    }
    head.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn collective_names_come_from_nccl_kernel_names() {
        assert_eq!(
            collective_name(
                "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
            ),
            "AllReduce"
        );
        assert_eq!(
            collective_name(
                "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)"
            ),
            "Broadcast"
        );
        assert_eq!(
            collective_name("void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)"),
            "SendRecv"
        );
        assert_eq!(
            collective_name("my_comm_kernel<float>(x)"),
            "my_comm_kernel"
        );
    }
}
