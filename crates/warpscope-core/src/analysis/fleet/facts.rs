//! What cross-rank analysis keeps of one rank: its time breakdown for the whole run and per
//! step (from the insight layer), and its collective calls. A few hundred bytes per step and
//! per collective, so that a job of a thousand ranks is analysed without keeping their events.

use std::path::PathBuf;

use serde::Serialize;

use crate::analysis::compare::{profile_rank, step_ranges};
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

/// Sets each call's step: the step whose range holds its start, the latest starting at or
/// before it when steps overlap (ties: the higher step number). `calls` must be sorted by
/// start. One sweep with a heap of the steps begun and not yet over, so that each step enters
/// and leaves once: O((steps + calls) log steps), also when thousands of short steps precede
/// thousands of calls (walking back over the earlier steps per call was quadratic: 100,000
/// steps and calls took 7 s, 200,000 took 41 s).
fn assign_steps(steps: &[StepFacts], calls: &mut [CollectiveCall]) {
    // By start, then step: the index is the order "latest starting" refers to.
    let mut steps = steps.to_vec();
    steps.sort_by_key(|s| (s.start_ns, s.step));
    let mut begun = std::collections::BinaryHeap::new();
    let mut next = 0;
    for call in calls {
        let t_ns = call.start_ns;
        while next < steps.len() && steps[next].start_ns <= t_ns {
            begun.push(next);
            next += 1;
        }
        // A step over by `t_ns` is over for every later call too.
        while let Some(&top) = begun.peek() {
            if steps[top].end_ns > t_ns {
                break;
            }
            begun.pop();
        }
        call.step = begun.peek().map(|&i| steps[i].step);
    }
}

/// The communication kernels of a profile, by start (then end, group), each with its step.
fn collective_calls(profile: &Profile, steps: &[StepFacts]) -> Vec<CollectiveCall> {
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
                step: None,
                start_ns: ev.start_ns[i],
                end_ns: ev.end_ns(i),
            });
        }
    }
    calls.sort_by(|a, b| (a.start_ns, a.end_ns, &a.group).cmp(&(b.start_ns, b.end_ns, &b.group)));
    assign_steps(steps, &mut calls);
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
    if is_communication(head) {
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

#[cfg(test)]
mod step_tests {
    use super::*;

    fn step(step: u64, start_ns: i64, end_ns: i64) -> StepFacts {
        StepFacts {
            step,
            start_ns,
            end_ns,
            breakdown: Breakdown::default(),
        }
    }

    fn steps_of(steps: &[StepFacts], starts: &[i64]) -> Vec<Option<u64>> {
        let mut calls: Vec<CollectiveCall> = starts
            .iter()
            .map(|&start_ns| CollectiveCall {
                group: String::new(),
                name: "AllReduce".into(),
                step: None,
                start_ns,
                end_ns: start_ns + 1,
            })
            .collect();
        assign_steps(steps, &mut calls);
        calls.iter().map(|c| c.step).collect()
    }

    #[test]
    fn a_call_belongs_to_the_latest_step_that_holds_its_start() {
        // Step 9 spans the run (a nested or hostile range); 1 and 2 follow each other inside it,
        // step 3 has no length, step 7 starts with step 2 (same start: the higher number wins).
        let steps = [
            step(9, 0, 1_000),
            step(1, 100, 200),
            step(2, 200, 300),
            step(7, 200, 250),
            step(3, 400, 400),
        ];
        assert_eq!(
            steps_of(&steps, &[0, 150, 200, 260, 300, 400, 999, 1_000, 5_000]),
            [
                Some(9),
                Some(1),
                Some(7),
                Some(2),
                Some(9),
                Some(9),
                Some(9),
                None,
                None
            ]
        );
        // Thousands of short steps, then the calls after all of them: none is in a step.
        let short: Vec<StepFacts> = (0..10_000)
            .map(|i| step(i, 2 * i as i64, 2 * i as i64 + 1))
            .collect();
        let late: Vec<i64> = (0..10_000).map(|i| 100_000 + i).collect();
        assert!(steps_of(&short, &late).iter().all(Option::is_none));
        assert_eq!(
            steps_of(&short, &[0, 1, 2, 19_998]),
            [Some(0), None, Some(1), Some(9_999)]
        );
    }
}
