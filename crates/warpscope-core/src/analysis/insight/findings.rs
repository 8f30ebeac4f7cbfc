//! The guided analysis: rules that turn the figures into ranked findings, each with the time at
//! stake and the events behind it (`docs/analysis.md`, section 7, lists the rules and these
//! thresholds).

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::tensor_cores::is_fp32_gemm_off_tensor_cores;
use super::{Activity, GapCause, Insights, KEEP_EVENTS, longest_first};
use crate::analysis::{pct, strip_version_suffix};
use crate::model::{CopyKind, EventKind, EventRef, MemoryKind, Profile, TrackKey};
use crate::strings::StrId;
use crate::time::{TimeRange, format_duration_ns as dur};

/// Host wait must reach this share of the window, in percent.
pub const HOST_WAIT_MIN_PCT: f64 = 10.0;
/// "Other" idle must reach this share of the window, in percent.
pub const IDLE_OTHER_MIN_PCT: f64 = 10.0;
/// Pageable copies must take this share of the window, in percent.
pub const PAGEABLE_MIN_PCT: f64 = 1.0;
/// When the profile has no pinned copy of a direction, pinned memory is assumed this many times
/// faster than pageable.
pub const PINNED_SPEEDUP_ASSUMED: f64 = 2.0;
/// Blocking synchronisation calls must take this share of the run's window, in percent.
pub const BLOCKING_SYNC_MIN_PCT: f64 = 5.0;
/// A kernel is checked for occupancy when it is among this many longest...
pub const LOW_OCCUPANCY_TOP_KERNELS: usize = 5;
/// ...and takes at least this share of kernel time, in percent...
pub const LOW_OCCUPANCY_MIN_TIME_PCT: f64 = 5.0;
/// ...and its weighted theoretical occupancy is below this, in percent.
pub const LOW_OCCUPANCY_BELOW_PCT: f64 = 50.0;
/// Launch-bound kernels must be at least this share of a device's kernels, in percent...
pub const LAUNCH_BOUND_MIN_KERNELS_PCT: f64 = 20.0;
/// ...and the gaps before them at least this share of its window, in percent.
pub const LAUNCH_BOUND_MIN_GAP_PCT: f64 = 5.0;
/// FP32 GEMMs and convolutions off Tensor Cores must take this share of kernel time, in percent.
pub const NO_TENSOR_CORES_MIN_PCT: f64 = 10.0;
/// The share of their time TF32 or AMP is assumed to save.
pub const NO_TENSOR_CORES_SAVING: f64 = 0.5;
/// Communication not overlapped with compute must take this share of the window, in percent.
pub const COMM_NOT_OVERLAPPED_MIN_PCT: f64 = 5.0;

/// The rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// The GPU waited for the CPU.
    HostWait,
    /// The GPU idled with work queued.
    GpuIdleOther,
    /// Host↔device copies from pageable memory.
    PageableCopies,
    /// Synchronisation calls blocked the CPU.
    BlockingSync,
    /// A top kernel has low theoretical occupancy.
    LowOccupancy,
    /// Many kernels shorter than a launch.
    LaunchBound,
    /// FP32 GEMMs and convolutions off Tensor Cores.
    NoTensorCores,
    /// Communication not hidden behind compute.
    CommNotOverlapped,
}

impl Rule {
    /// Stable name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HostWait => "host_wait",
            Self::GpuIdleOther => "gpu_idle_other",
            Self::PageableCopies => "pageable_copies",
            Self::BlockingSync => "blocking_sync",
            Self::LowOccupancy => "low_occupancy",
            Self::LaunchBound => "launch_bound",
            Self::NoTensorCores => "no_tensor_cores",
            Self::CommNotOverlapped => "comm_not_overlapped",
        }
    }
}

/// One finding.
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    /// The rule that fired.
    pub rule: Rule,
    /// The device it concerns (`None`: the whole run).
    pub device: Option<u32>,
    /// The time at stake.
    pub time_ns: i64,
    /// What was found and what to try, with its numbers.
    pub message: String,
    /// The events behind it, most important first (at most 20).
    pub events: Vec<EventRef>,
}

fn name_of(profile: &Profile, e: EventRef) -> &str {
    profile.str(profile.tracks[e.track as usize].events.name[e.index as usize])
}

fn at_least(part: i64, whole: i64, min_pct: f64) -> bool {
    part > 0 && pct(part, whole) >= min_pct
}

/// Every finding, largest time at stake first.
pub(crate) fn findings(
    profile: &Profile,
    range: TimeRange,
    acts: &[Activity],
    ins: &Insights,
    launch_bound_gap_ns: &[(u32, i64)],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for d in &ins.devices {
        // `acts` is sorted by device: this device's slice, found by binary search (a file with
        // thousands of devices must not make this quadratic).
        let lo = acts.partition_point(|a| a.device < d.device);
        let hi = acts.partition_point(|a| a.device <= d.device);
        let dev_acts: Vec<&Activity> = acts[lo..hi].iter().collect();
        let gaps_of = |cause: GapCause| -> Vec<EventRef> {
            ins.gaps
                .iter()
                .filter(|g| g.device == d.device && g.cause == cause)
                .map(|g| g.next)
                .collect()
        };
        let w = d.window_ns;
        let hw = d.idle_breakdown.host_wait_ns;
        if at_least(hw, w, HOST_WAIT_MIN_PCT) {
            // The operator the GPU waited on most; a training-step range means the thread was
            // between operators (Python or framework overhead).
            let first = ins.host_wait_ops.partition_point(|o| o.device < d.device);
            let top = ins.host_wait_ops[first..]
                .iter()
                .take_while(|o| o.device == d.device)
                .find(|o| {
                    !o.operator
                        .as_deref()
                        .is_some_and(crate::analysis::compare::is_step_name)
                });
            let under = match top {
                Some(op) => format!(
                    "; the most, {}, while the launching thread was in `{}`",
                    dur(op.time_ns),
                    op.operator.as_deref().unwrap_or("(no CPU operator)")
                ),
                None => String::new(),
            };
            out.push(Finding {
                rule: Rule::HostWait,
                device: Some(d.device),
                time_ns: hw,
                message: format!(
                    "GPU {} waited {} ({:.1}% of its {} window) for the CPU to launch work{under}. \
                     Cut CPU overhead there: larger batches, fused operators, CUDA graphs.",
                    d.device,
                    dur(hw),
                    pct(hw, w),
                    dur(w)
                ),
                events: gaps_of(GapCause::HostWait),
            });
        }
        let other = d.idle_breakdown.other_ns;
        if at_least(other, w, IDLE_OTHER_MIN_PCT) {
            out.push(Finding {
                rule: Rule::GpuIdleOther,
                device: Some(d.device),
                time_ns: other,
                message: format!(
                    "GPU {} sat idle {} ({:.1}% of its window) although the next work was already \
                     queued: synchronisation, waits on events or other streams. Look at the largest \
                     gaps and what precedes them.",
                    d.device,
                    dur(other),
                    pct(other, w)
                ),
                events: gaps_of(GapCause::Other),
            });
        }
        out.extend(pageable_copies(profile, d.device, w, &dev_acts));
        out.extend(launch_bound(
            profile,
            ins,
            d,
            &dev_acts,
            launch_bound_gap_ns,
        ));
        out.extend(no_tensor_cores(profile, d.device, d.kernel_ns, &dev_acts));
        if at_least(d.comm_ns, w, COMM_NOT_OVERLAPPED_MIN_PCT) {
            let events = dev_acts
                .iter()
                .filter(|a| a.comm)
                .take(KEEP_EVENTS)
                .map(|a| a.event)
                .collect();
            out.push(Finding {
                rule: Rule::CommNotOverlapped,
                device: Some(d.device),
                time_ns: d.comm_ns,
                message: format!(
                    "GPU {} spent {} ({:.1}% of its window) in communication with no compute \
                     running ({:.1}% of communication overlapped). Overlap it: bucket gradients \
                     (DDP bucket_cap_mb), start collectives earlier, or use more streams.",
                    d.device,
                    dur(d.comm_ns),
                    pct(d.comm_ns, w),
                    d.overlap_comm_pct
                ),
                events,
            });
        }
    }
    out.extend(blocking_sync(profile, range, ins));
    out.extend(low_occupancy(ins));
    out.sort_by(|a, b| {
        b.time_ns
            .cmp(&a.time_ns)
            .then_with(|| a.rule.cmp(&b.rule))
            .then_with(|| a.device.cmp(&b.device))
    });
    out
}

fn pageable_copies(
    profile: &Profile,
    device: u32,
    window_ns: i64,
    acts: &[&Activity],
) -> Option<Finding> {
    // Per direction: (time in range, bytes, full duration) for pageable and pinned copies.
    let mut stats = [[(0i64, 0u64, 0i64); 2]; 2];
    let mut events = Vec::new();
    for a in acts.iter().filter(|a| a.kind == EventKind::Memcpy) {
        let track = &profile.tracks[a.event.track as usize];
        let Some(info) = profile.copy_info(track, a.event.index as usize) else {
            continue;
        };
        let dir = match info.kind {
            CopyKind::HtoD => 0,
            CopyKind::DtoH => 1,
            _ => continue,
        };
        let host = if dir == 0 {
            info.src_kind
        } else {
            info.dst_kind
        };
        let pinned = match host {
            Some(MemoryKind::Pageable) => 0,
            Some(MemoryKind::Pinned) => 1,
            _ => continue,
        };
        let s = &mut stats[dir][pinned];
        // Saturating: a hostile file can hold sizes and durations whose sums overflow.
        s.0 = s.0.saturating_add(a.dur_ns());
        s.1 = s.1.saturating_add(info.bytes.unwrap_or(0));
        s.2 =
            s.2.saturating_add(track.events.dur_ns[a.event.index as usize]);
        if pinned == 0 {
            events.push((a.dur_ns(), a.event));
        }
    }
    let bandwidth = |(_, bytes, full): (i64, u64, i64)| {
        #[allow(clippy::cast_precision_loss)]
        (full > 0 && bytes > 0).then(|| bytes as f64 / full as f64)
    };
    let mut stake = 0.0f64;
    let mut time = 0i64;
    let mut parts = Vec::new();
    for (dir, name) in [(0, "HtoD"), (1, "DtoH")] {
        let [pageable, pinned] = stats[dir];
        let Some(pageable_bw) = bandwidth(pageable) else {
            continue;
        };
        let (pinned_bw, measured) = match bandwidth(pinned) {
            Some(bw) => (bw, "measured in this profile"),
            None => (pageable_bw * PINNED_SPEEDUP_ASSUMED, "assumed 2×"),
        };
        time = time.saturating_add(pageable.0);
        if pinned_bw > pageable_bw {
            #[allow(clippy::cast_precision_loss)]
            let saved = pageable.0 as f64 * (1.0 - pageable_bw / pinned_bw);
            stake += saved;
        }
        parts.push(format!(
            "{name} {} at {:.1} GB/s (pinned: {:.1} GB/s, {measured})",
            dur(pageable.0),
            pageable_bw,
            pinned_bw
        ));
    }
    #[allow(clippy::cast_possible_truncation)]
    let stake = stake as i64;
    if !at_least(time, window_ns, PAGEABLE_MIN_PCT) || stake <= 0 {
        return None;
    }
    Some(Finding {
        rule: Rule::PageableCopies,
        device: Some(device),
        time_ns: stake,
        message: format!(
            "GPU {device} copied to or from pageable host memory: {}. Pinned memory \
             (`pin_memory=True`, cudaHostAlloc) would save about {}.",
            parts.join("; "),
            dur(stake)
        ),
        events: longest_first(&mut events),
    })
}

fn launch_bound(
    profile: &Profile,
    ins: &Insights,
    d: &super::DeviceBreakdown,
    acts: &[&Activity],
    launch_bound_gap_ns: &[(u32, i64)],
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
    let gap_ns = launch_bound_gap_ns
        .binary_search_by_key(&d.device, |&(dev, _)| dev)
        .map_or(0, |k| launch_bound_gap_ns[k].1);
    let count_pct = pct(bound.len() as i64, kernels.len() as i64);
    if count_pct < LAUNCH_BOUND_MIN_KERNELS_PCT
        || !at_least(gap_ns, d.window_ns, LAUNCH_BOUND_MIN_GAP_PCT)
    {
        return None;
    }
    Some(Finding {
        rule: Rule::LaunchBound,
        device: Some(d.device),
        time_ns: gap_ns,
        message: format!(
            "{} of {} kernels on GPU {} ({count_pct:.0}%) run shorter than a typical launch \
             ({}); the GPU idled {} before them. Fuse them (torch.compile, fused optimizers) or \
             capture the step in a CUDA graph.",
            bound.len(),
            kernels.len(),
            d.device,
            dur(typical),
            dur(gap_ns)
        ),
        events: bound.into_iter().take(KEEP_EVENTS).collect(),
    })
}

fn no_tensor_cores(
    profile: &Profile,
    device: u32,
    kernel_ns: i64,
    acts: &[&Activity],
) -> Option<Finding> {
    let (major, _) = profile.device(device)?.compute_capability?;
    if major < 7 {
        return None;
    }
    let mut time = 0i64;
    let mut events = Vec::new();
    // Classified once per name, not per launch.
    let mut fp32_gemm: FxHashMap<StrId, bool> = FxHashMap::default();
    for a in acts
        .iter()
        .filter(|a| a.kind == EventKind::Kernel && !a.tensor_cores)
    {
        let name = profile.tracks[a.event.track as usize].events.name[a.event.index as usize];
        if *fp32_gemm
            .entry(name)
            .or_insert_with(|| is_fp32_gemm_off_tensor_cores(profile.str(name)))
        {
            time = time.saturating_add(a.dur_ns());
            events.push((a.dur_ns(), a.event));
        }
    }
    if !at_least(time, kernel_ns, NO_TENSOR_CORES_MIN_PCT) {
        return None;
    }
    #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
    let stake = (time as f64 * NO_TENSOR_CORES_SAVING) as i64;
    Some(Finding {
        rule: Rule::NoTensorCores,
        device: Some(device),
        time_ns: stake,
        message: format!(
            "GPU {device} spent {} ({:.1}% of kernel time) in FP32 GEMMs and convolutions on the \
             CUDA cores. Allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True) or use AMP to \
             move them to Tensor Cores; that typically halves their time (about {}).",
            dur(time),
            pct(time, kernel_ns),
            dur(stake)
        ),
        events: longest_first(&mut events),
    })
}

/// API calls that block the calling thread until the GPU catches up.
fn is_blocking_sync(name: &str) -> bool {
    matches!(
        strip_version_suffix(name),
        "cudaDeviceSynchronize"
            | "cudaStreamSynchronize"
            | "cudaEventSynchronize"
            | "cudaMemcpy"
            | "cudaMemcpy2D"
            | "cudaMemcpy3D"
            | "cuCtxSynchronize"
            | "cuStreamSynchronize"
            | "cuEventSynchronize"
            | "cuMemcpyDtoH"
            | "cuMemcpyHtoD"
    )
}

fn blocking_sync(profile: &Profile, range: TimeRange, ins: &Insights) -> Option<Finding> {
    let start = ins.devices.iter().map(|d| d.window_start_ns).min()?;
    let end = ins.devices.iter().map(|d| d.window_end_ns).max()?;
    let window = end - start;
    let mut time = 0i64;
    let mut calls = Vec::new();
    for (t, track) in profile.tracks.iter().enumerate() {
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
                time = time.saturating_add(clipped);
                calls.push((clipped, super::event_ref(t, i)));
            }
        }
    }
    if !at_least(time, window, BLOCKING_SYNC_MIN_PCT) {
        return None;
    }
    let events = longest_first(&mut calls);
    let top = name_of(profile, calls[0].1).to_string();
    Some(Finding {
        rule: Rule::BlockingSync,
        device: None,
        time_ns: time,
        message: format!(
            "{} synchronising calls blocked the CPU for {} ({:.1}% of the GPU window; the \
             longest: `{}`, {}). While the CPU waits it cannot queue more work: remove \
             unneeded syncs (`.item()`, `.cpu()`, printing tensors) or move them off the hot path.",
            calls.len(),
            dur(time),
            pct(time, window),
            strip_version_suffix(&top),
            dur(calls[0].0)
        ),
        events,
    })
}

fn low_occupancy(ins: &Insights) -> Vec<Finding> {
    let kernel_ns = crate::analysis::saturating_sum(ins.kernels.iter().map(|k| k.total_ns));
    let mut out = Vec::new();
    for k in ins.kernels.iter().take(LOW_OCCUPANCY_TOP_KERNELS) {
        // Tensor Core GEMMs keep big tiles in registers and shared memory: low occupancy is
        // their design, not a defect.
        let Some(occ) = k.theoretical_occupancy_pct.filter(|_| !k.tensor_cores) else {
            continue;
        };
        if occ >= LOW_OCCUPANCY_BELOW_PCT || pct(k.total_ns, kernel_ns) < LOW_OCCUPANCY_MIN_TIME_PCT
        {
            continue;
        }
        #[allow(clippy::cast_precision_loss, clippy::cast_possible_truncation)]
        let stake = (k.total_ns as f64 * (1.0 - occ / LOW_OCCUPANCY_BELOW_PCT)) as i64;
        let limiter = k.occupancy_limiter.as_deref().unwrap_or("unknown");
        out.push(Finding {
            rule: Rule::LowOccupancy,
            device: None,
            time_ns: stake,
            message: format!(
                "`{}` takes {} ({:.1}% of kernel time) at a theoretical occupancy of {occ:.0}%, \
                 limited by {}. {}",
                crate::names::short_name(&k.name, 80),
                dur(k.total_ns),
                pct(k.total_ns, kernel_ns),
                limiter.replace('_', " "),
                advice(limiter)
            ),
            events: k.longest.clone(),
        });
    }
    out
}

fn advice(limiter: &str) -> &'static str {
    match limiter.split('+').next().unwrap_or("") {
        "registers" => "Cap registers (__launch_bounds__, -maxrregcount) or split the kernel.",
        "shared_memory" => "Use less shared memory per block (smaller tiles) or fewer stages.",
        "blocks" => "Use larger blocks: the SM's block slots run out before its warps.",
        _ => "Use smaller blocks or a grid that fills more SMs.",
    }
}
