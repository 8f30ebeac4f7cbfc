//! The guided analysis: rules that turn the figures into ranked findings, each with the time at
//! stake, whether that time is measured or an estimate, and the events behind it
//! (`docs/analysis.md`, section 7, lists the rules and whom each rule's advice is for). The
//! rules' names and thresholds are in [`super::rule`]; the rules about GPU work itself
//! (occupancy, Tensor Cores, pageable copies) are in [`super::gpu_rules`].

use super::gpu_rules;
use super::idle::{DeviceChain, innermost_operator, is_blocking_sync};
use super::intervals::{intersect, length, subtract, union};
use super::rule::{
    BLOCKING_SYNC_MIN_PCT, COMM_NOT_OVERLAPPED_MIN_PCT, Finding, HOST_WAIT_MIN_PCT,
    IDLE_OTHER_MIN_PCT, LAUNCH_BOUND_MIN_GAP_PCT, LAUNCH_BOUND_MIN_KERNELS_PCT, Rule, at_least,
    name_of,
};
use super::{Activity, GapCause, Insights, KEEP_EVENTS, longest_first};
use crate::analysis::{pct, strip_version_suffix};
use crate::model::{EventKind, EventRef, Profile, TrackKey};
use crate::time::{TimeRange, format_duration_ns as dur};

/// Every finding, largest time at stake first. `chains` holds one entry per device of
/// `ins.devices`, in the same order.
pub(crate) fn findings(
    profile: &Profile,
    range: TimeRange,
    acts: &[Activity],
    ins: &Insights,
    chains: &[DeviceChain],
) -> Vec<Finding> {
    let mut out = Vec::new();
    let blocked = cpu_blocked(profile, range);
    for (d, chain) in ins.devices.iter().zip(chains) {
        // `acts` is sorted by device: this device's slice, found by binary search (a file with
        // thousands of devices must not make this quadratic).
        let lo = acts.partition_point(|a| a.device < d.device);
        let hi = acts.partition_point(|a| a.device <= d.device);
        let dev_acts: Vec<&Activity> = acts[lo..hi].iter().collect();
        out.extend(host_wait(ins, d));
        let other = d.idle_breakdown.other_ns;
        if at_least(other, d.window_ns, IDLE_OTHER_MIN_PCT) {
            out.push(Finding::new(
                Rule::GpuIdleOther,
                Some(d.device),
                other,
                format!(
                    "GPU {} sat idle {} ({:.1}% of its window) although the next work was already \
                     queued: synchronisation, waits on events or other streams. Look at the largest \
                     gaps and what precedes them.",
                    d.device,
                    dur(other),
                    pct(other, d.window_ns)
                ),
                gaps_of(ins, d.device, GapCause::Other),
            ));
        }
        out.extend(gpu_rules::pageable_copies(
            profile,
            d.device,
            d.window_ns,
            &dev_acts,
        ));
        out.extend(launch_bound(profile, ins, d, &dev_acts, chain));
        out.extend(gpu_rules::no_tensor_cores(
            profile,
            d.device,
            d.kernel_ns,
            &dev_acts,
            chain,
        ));
        out.extend(comm_not_overlapped(d, &dev_acts, chain));
        out.extend(blocking_sync(profile, d, chain, &blocked));
    }
    out.extend(gpu_rules::low_occupancy(profile, ins, acts, chains));
    out.sort_by(|a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then_with(|| a.rule.cmp(&b.rule))
            .then_with(|| a.device.cmp(&b.device))
    });
    out
}

/// The next work of the device's largest gaps of one cause.
fn gaps_of(ins: &Insights, device: u32, cause: GapCause) -> Vec<EventRef> {
    ins.gaps
        .iter()
        .filter(|g| g.device == device && g.cause == cause)
        .map(|g| g.next)
        .collect()
}

fn host_wait(ins: &Insights, d: &super::DeviceBreakdown) -> Option<Finding> {
    let (w, hw) = (d.window_ns, d.idle_breakdown.host_wait_ns);
    if !at_least(hw, w, HOST_WAIT_MIN_PCT) {
        return None;
    }
    // The operator the GPU waited on most: the first of the list the CLI and the viewer show.
    let under = match ins.top_host_wait_op(d.device) {
        Some(op) => match op.operator.as_deref() {
            Some(name) => format!(
                "; the most, {}, while the launching thread was in `{name}`",
                dur(op.time_ns)
            ),
            None => format!(
                "; the most, {}, while the launching thread was in no CPU operator (between \
                 operators: Python or framework overhead)",
                dur(op.time_ns)
            ),
        },
        None => String::new(),
    };
    Some(Finding::new(
        Rule::HostWait,
        Some(d.device),
        hw,
        format!(
            "GPU {} waited {} ({:.1}% of its {} window) for the CPU to launch work{under}. \
             Cut CPU overhead there: larger batches, fused operators, CUDA graphs.",
            d.device,
            dur(hw),
            pct(hw, w),
            dur(w)
        ),
        gaps_of(ins, d.device, GapCause::HostWait),
    ))
}

fn comm_not_overlapped(
    d: &super::DeviceBreakdown,
    acts: &[&Activity],
    chain: &DeviceChain,
) -> Option<Finding> {
    if !at_least(d.comm_ns, d.window_ns, COMM_NOT_OVERLAPPED_MIN_PCT) {
        return None;
    }
    // Exposed communication on the critical path: hidden behind compute, it would shorten the
    // step; before a wait for the CPU, only lengthen that wait.
    let spans = |comm: bool| {
        union(
            acts.iter()
                .filter(|a| a.kind == EventKind::Kernel && a.comm == comm)
                .map(|a| (a.start_ns, a.end_ns))
                .collect(),
        )
    };
    let exposed = subtract(&spans(true), &spans(false));
    let stake = length(&intersect(&exposed, &chain.critical_runs));
    if stake <= 0 {
        return None;
    }
    let events = acts
        .iter()
        .filter(|a| a.comm)
        .take(KEEP_EVENTS)
        .map(|a| a.event)
        .collect();
    let waiting = if stake < d.comm_ns {
        format!(
            "; {} of it ran before the GPU waited for the CPU anyway, so {} is at stake",
            dur(d.comm_ns - stake),
            dur(stake)
        )
    } else {
        String::new()
    };
    Some(Finding::new(
        Rule::CommNotOverlapped,
        Some(d.device),
        stake,
        format!(
            "GPU {} spent {} ({:.1}% of its window) in communication with no compute running \
             ({:.1}% of communication overlapped){waiting}. Overlap it: bucket gradients (DDP \
             bucket_cap_mb), start collectives earlier, or use more streams.",
            d.device,
            dur(d.comm_ns),
            pct(d.comm_ns, d.window_ns),
            d.overlap_comm_pct
        ),
        events,
    ))
}

fn launch_bound(
    profile: &Profile,
    ins: &Insights,
    d: &super::DeviceBreakdown,
    acts: &[&Activity],
    chain: &DeviceChain,
) -> Option<Finding> {
    let typical = ins.launch.typical_launch_ns?;
    let kernels: Vec<&&Activity> = acts
        .iter()
        .filter(|a| a.kind == EventKind::Kernel)
        .collect();
    let bound: Vec<EventRef> = kernels
        .iter()
        .filter(|a| ins.launch.is_launch_bound(profile, a))
        .map(|a| a.event)
        .collect();
    let gap_ns = chain.launch_bound_gap_ns;
    let count_pct = pct(bound.len() as i64, kernels.len() as i64);
    if count_pct < LAUNCH_BOUND_MIN_KERNELS_PCT
        || !at_least(gap_ns, d.window_ns, LAUNCH_BOUND_MIN_GAP_PCT)
    {
        return None;
    }
    Some(Finding::new(
        Rule::LaunchBound,
        Some(d.device),
        gap_ns,
        format!(
            "{} of {} kernels on GPU {} ({count_pct:.0}%) run shorter than a typical launch \
             ({}); the GPU idled {} before them. Fuse them (torch.compile, fused optimizers) or \
             capture the step in a CUDA graph.",
            bound.len(),
            kernels.len(),
            d.device,
            dur(typical),
            dur(gap_ns)
        ),
        bound.into_iter().take(KEEP_EVENTS).collect(),
    ))
}

/// The blocking synchronisation calls on the CPU threads in the range: how many, and their
/// summed (clipped) duration.
fn cpu_blocked(profile: &Profile, range: TimeRange) -> (usize, i64) {
    let (mut calls, mut time) = (0usize, 0i64);
    for track in &profile.tracks {
        if !matches!(track.key, TrackKey::Thread { .. }) {
            continue;
        }
        let ev = &track.events;
        for i in track.candidates(&range) {
            if !ev.kind[i].is_api() || !is_blocking_sync(profile.str(ev.name[i])) {
                continue;
            }
            let clipped = ev.end_ns(i).min(range.end_ns) - ev.start_ns[i].max(range.start_ns);
            if clipped > 0 {
                calls += 1;
                time = time.saturating_add(clipped);
            }
        }
    }
    (calls, time)
}

/// The GPU ran dry while the CPU was blocked in a synchronising call, and idled until the CPU,
/// once the call returned, launched more: the gaps of `chain.sync_gaps`. Each gap is at stake up
/// to the time the CPU was blocked in the call: without the sync, the CPU's next work (and the
/// launch after it) would have started that much earlier, while the GPU was still busy. A sync
/// that returns while the GPU still has queued work costs nothing and is not counted.
fn blocking_sync(
    profile: &Profile,
    d: &super::DeviceBreakdown,
    chain: &DeviceChain,
    &(all_calls, blocked_ns): &(usize, i64),
) -> Option<Finding> {
    let idle = crate::analysis::saturating_sum(chain.sync_gaps.iter().map(|g| g.0));
    let stake = crate::analysis::saturating_sum(chain.sync_gaps.iter().map(|g| g.0.min(g.1)));
    if !at_least(stake, d.window_ns, BLOCKING_SYNC_MIN_PCT) {
        return None;
    }
    let mut by_call: Vec<(i64, EventRef)> = Vec::new();
    for &(gap_ns, call_ns, call) in &chain.sync_gaps {
        let at_stake = gap_ns.min(call_ns);
        match by_call.iter_mut().find(|c| c.1 == call) {
            Some(c) => c.0 = c.0.saturating_add(at_stake),
            None => by_call.push((at_stake, call)),
        }
    }
    let events = longest_first(&mut by_call);
    let (top_ns, top) = by_call[0];
    let (top_start, _) = super::event_span(profile, top);
    let inside = innermost_operator(profile, top.track, top_start)
        .map(|op| format!(" in `{}`", name_of(profile, op)))
        .unwrap_or_default();
    Some(Finding::new(
        Rule::BlockingSync,
        Some(d.device),
        stake,
        format!(
            "GPU {} ran out of work {} times while the CPU was blocked in a synchronising call, \
             then idled {} until the CPU launched more. Without those syncs the CPU would have \
             gone on while the GPU was still busy: {} ({:.1}% of the window) at stake, the \
             blocked time before each gap up to its length (the most: `{}`{inside}, {}). Remove \
             syncs that are not needed (`.item()`, `.cpu()`, printing tensors) or queue the next \
             work before them. In all the CPU waited {} in {} such calls; where the GPU still \
             had work queued, that cost nothing.",
            d.device,
            chain.sync_gaps.len(),
            dur(idle),
            dur(stake),
            pct(stake, d.window_ns),
            strip_version_suffix(name_of(profile, top)),
            dur(top_ns),
            dur(blocked_ns),
            all_calls
        ),
        events,
    ))
}
