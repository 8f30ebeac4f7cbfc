//! Why the GPU was idle: every gap of a device's (or a stream's) window attributed to host wait,
//! kernel wait or other, the CPU operator the GPU waited on, the blocking synchronisation the
//! launching thread was in when the GPU ran dry, and which of the device's runs of work were on
//! the critical path (`docs/analysis.md`, sections 3 and 7).

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::intervals::{gaps, union};
use super::launch::LaunchStats;
use super::{Activity, AnalyzeOptions};
use crate::model::{EventKind, EventRef, NO_PARENT, Profile};
use crate::strings::StrId;

/// Idle time by cause; the three sum to the idle time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct IdleBreakdown {
    /// The GPU waited for the CPU to ask for the next work.
    pub host_wait_ns: i64,
    /// Short gaps between work that was already queued.
    pub kernel_wait_ns: i64,
    /// Everything else: synchronisation, waits on events or other streams, unknown launches.
    pub other_ns: i64,
}

impl IdleBreakdown {
    fn add(&mut self, cause: GapCause, dur_ns: i64) {
        match cause {
            GapCause::HostWait => self.host_wait_ns = self.host_wait_ns.saturating_add(dur_ns),
            GapCause::KernelWait => {
                self.kernel_wait_ns = self.kernel_wait_ns.saturating_add(dur_ns);
            }
            GapCause::Other => self.other_ns = self.other_ns.saturating_add(dur_ns),
        }
    }
}

/// The cause of one gap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GapCause {
    /// The next work's launching call began at or after the gap's start.
    HostWait,
    /// Shorter than the threshold, between queued work.
    KernelWait,
    /// Anything else.
    Other,
}

impl GapCause {
    /// Stable name used in JSON and tables.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HostWait => "host_wait",
            Self::KernelWait => "kernel_wait",
            Self::Other => "other",
        }
    }
}

/// One idle gap of a device.
#[derive(Clone, Debug, Serialize)]
pub struct Gap {
    /// Device ordinal.
    pub device: u32,
    /// Start of the gap (end of the previous work).
    pub start_ns: i64,
    /// Its length.
    pub dur_ns: i64,
    /// Its cause.
    pub cause: GapCause,
    /// The work that ended the gap (the one whose launching call started first).
    pub next: EventRef,
    /// That work's launching call.
    pub launch: Option<EventRef>,
    /// The innermost CPU operator on the launching thread during the gap (step and profiler
    /// annotations do not count: [`is_step_or_profiler_annotation`]).
    pub operator: Option<EventRef>,
    /// The blocking synchronisation call ([`is_blocking_sync`]) the launching thread was in
    /// when the gap began, for a host-wait gap: the CPU waited for the GPU to finish, and the
    /// GPU then waited for the CPU.
    pub sync: Option<EventRef>,
}

/// Idle time of one stream.
#[derive(Clone, Debug, Serialize)]
pub struct StreamIdle {
    /// Device ordinal.
    pub device: u32,
    /// Stream id.
    pub stream: u64,
    /// First activity start to last activity end on the stream.
    pub window_ns: i64,
    /// Time the stream ran work.
    pub busy_ns: i64,
    /// `window_ns − busy_ns`.
    pub idle_ns: i64,
    /// Idle time by cause.
    pub idle_breakdown: IdleBreakdown,
}

/// Host-wait time of one device grouped by the CPU operator the GPU waited on.
#[derive(Clone, Debug, Serialize)]
pub struct HostWaitOp {
    /// Device ordinal.
    pub device: u32,
    /// Operator name (`None`: no operator, other than step and profiler annotations, enclosed
    /// the launching thread).
    pub operator: Option<String>,
    /// Host-wait time in gaps under this operator.
    pub time_ns: i64,
    /// Number of such gaps.
    pub gaps: u64,
}

/// What the findings need to know of one device's gaps besides the totals.
#[derive(Clone, Debug, Default)]
pub(crate) struct DeviceChain {
    /// Device ordinal.
    pub device: u32,
    /// Host-wait and kernel-wait time of gaps whose next work includes a launch-bound kernel.
    pub launch_bound_gap_ns: i64,
    /// Host-wait gaps that began while the launching thread was blocked in a synchronising
    /// call, in time order: (gap length, the call's length, the call).
    pub sync_gaps: Vec<(i64, i64, EventRef)>,
    /// The device's runs of work (intervals of its busy union) on the critical path: those not
    /// followed by a host-wait gap, or followed by one that began during a blocking sync, and
    /// the last. Making their work shorter makes the step shorter; making the work of the
    /// others shorter only lengthens the wait for the CPU that follows them.
    pub critical_runs: Vec<(i64, i64)>,
}

impl DeviceChain {
    /// The part of `[start_ns, end_ns)` (an activity of this device) on the critical path.
    pub(crate) fn critical_ns(&self, start_ns: i64, end_ns: i64) -> i64 {
        // Every activity lies inside one run of the busy union.
        let k = self.critical_runs.partition_point(|r| r.0 <= start_ns);
        match k.checked_sub(1).map(|k| self.critical_runs[k]) {
            Some((_, run_end)) if run_end >= end_ns => end_ns - start_ns,
            _ => 0,
        }
    }
}

/// The idle analysis, device by device ([`IdleAnalysis::add_device`]), then
/// [`IdleAnalysis::finish`].
#[derive(Default)]
pub(crate) struct IdleAnalysis {
    /// Per stream.
    pub streams: Vec<StreamIdle>,
    /// Every device gap; the longest once finished.
    pub top_gaps: Vec<Gap>,
    /// Host-wait time by operator, per device.
    pub host_wait_ops: Vec<HostWaitOp>,
    /// Per device, in device order.
    pub chains: Vec<DeviceChain>,
}

/// Finds the cause of the gap `[gap_start, gap_end)` given the activities that start at its end:
/// the cause, the next work (the one whose launching call started first, on a tie ended first)
/// and that call.
fn classify(
    profile: &Profile,
    next: &[&Activity],
    gap_start: i64,
    gap_end: i64,
    threshold_ns: i64,
) -> (GapCause, EventRef, Option<EventRef>) {
    let first = next
        .iter()
        .filter_map(|a| {
            let call = a.call?;
            let (call_start, call_dur) = super::event_span(profile, call);
            Some((
                (call_start, call_start.saturating_add(call_dur)),
                a.event,
                call,
            ))
        })
        .min_by_key(|&(key, ..)| key);
    match first {
        Some(((call_start, _), work, call)) if call_start >= gap_start => {
            (GapCause::HostWait, work, Some(call))
        }
        _ => {
            let cause = if gap_end - gap_start < threshold_ns {
                GapCause::KernelWait
            } else {
                GapCause::Other
            };
            match first {
                Some((_, work, call)) => (cause, work, Some(call)),
                // Gaps end where work starts, so `next` is never empty.
                None => (
                    cause,
                    next.first()
                        .map_or(EventRef { track: 0, index: 0 }, |a| a.event),
                    None,
                ),
            }
        }
    }
}

/// True for the event kinds that count as CPU operators.
fn is_operator(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::CpuOp | EventKind::UserAnnotation | EventKind::PythonFunction
    )
}

/// True for annotations that mark a training step or the profiler's own work
/// (`ProfilerStep#3`, `train_step_12` and the other names of
/// [`crate::names::is_step_name`], `[pytorch|profiler|execution_trace|thread]`,
/// `PyTorch Profiler (0)`): a thread inside one and no operator is between operators, so they
/// never name the CPU work the GPU waited on.
pub fn is_step_or_profiler_annotation(name: &str) -> bool {
    crate::names::is_step_name(name)
        || name.starts_with("[pytorch|profiler")
        || name.starts_with("PyTorch Profiler")
}

/// API calls that block the calling thread until the GPU catches up: the synchronisation calls
/// and the synchronous copies (`cudaMemcpy`), any `_vNNNN` suffix removed.
pub fn is_blocking_sync(name: &str) -> bool {
    matches!(
        crate::analysis::strip_version_suffix(name),
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

/// The innermost event on `track` that contains `t_ns` (start ≤ t < end) and satisfies `keep`:
/// the latest starting one (then the shortest), found through the parent chain of the last
/// event starting at or before `t_ns`.
fn innermost_where(
    profile: &Profile,
    track: u32,
    t_ns: i64,
    keep: impl Fn(EventKind, StrId) -> bool,
) -> Option<EventRef> {
    let ev = &profile.tracks.get(track as usize)?.events;
    let upto = ev.start_ns.partition_point(|&s| s <= t_ns);
    let mut at = u32::try_from(upto.checked_sub(1)?).ok()?;
    // Real stacks are a few dozen deep; the bound keeps a pathological file (a million nested
    // ranges) from making every gap walk all of them.
    for _ in 0..MAX_STACK_WALK {
        let i = at as usize;
        if ev.start_ns[i] <= t_ns && t_ns < ev.end_ns(i) && keep(ev.kind[i], ev.name[i]) {
            return Some(EventRef { track, index: at });
        }
        at = ev.parent[i];
        if at == NO_PARENT {
            return None;
        }
    }
    None
}

/// The most enclosing events [`innermost_where`] looks through.
const MAX_STACK_WALK: usize = 1_024;

/// The innermost CPU operator on `track` that contains `t_ns`, step and profiler annotations
/// left out ([`is_step_or_profiler_annotation`]).
pub(crate) fn innermost_operator(profile: &Profile, track: u32, t_ns: i64) -> Option<EventRef> {
    innermost_where(profile, track, t_ns, |kind, name| {
        is_operator(kind) && !is_step_or_profiler_annotation(profile.str(name))
    })
}

/// The blocking synchronisation call on `track` running at `t_ns` (start ≤ t < end).
fn sync_at(profile: &Profile, track: u32, t_ns: i64) -> Option<EventRef> {
    innermost_where(profile, track, t_ns, |kind, name| {
        kind.is_api() && is_blocking_sync(profile.str(name))
    })
}

/// The operator the launching thread was in during a gap starting at `gap_start`.
fn gap_operator(profile: &Profile, call: EventRef, gap_start: i64) -> Option<EventRef> {
    innermost_operator(profile, call.track, gap_start).or_else(|| {
        let (call_start, _) = super::event_span(profile, call);
        innermost_operator(profile, call.track, call_start)
    })
}

/// A gap with its cause, the work after it and that work's launching call.
pub(crate) struct ClassifiedGap {
    pub start_ns: i64,
    pub dur_ns: i64,
    pub cause: GapCause,
    next: EventRef,
    call: Option<EventRef>,
    /// The positions in the activity list of the work starting at the gap's end.
    next_acts: std::ops::Range<usize>,
}

/// Classifies every gap of `acts` (one device, or one stream, sorted by start) whose union is
/// `busy`, and returns the idle breakdown and the gaps.
pub(crate) fn classify_gaps(
    profile: &Profile,
    acts: &[&Activity],
    busy: &[(i64, i64)],
    threshold_ns: i64,
) -> (IdleBreakdown, Vec<ClassifiedGap>) {
    let mut breakdown = IdleBreakdown::default();
    let mut out = Vec::new();
    for (start, end) in gaps(busy) {
        let lo = acts.partition_point(|a| a.start_ns < end);
        let hi = acts.partition_point(|a| a.start_ns <= end);
        let (cause, next, call) = classify(profile, &acts[lo..hi], start, end, threshold_ns);
        breakdown.add(cause, end - start);
        out.push(ClassifiedGap {
            start_ns: start,
            dur_ns: end - start,
            cause,
            next,
            call,
            next_acts: lo..hi,
        });
    }
    (breakdown, out)
}

/// The union of the activities' intervals.
pub(crate) fn busy_of<'a>(acts: impl IntoIterator<Item = &'a Activity>) -> Vec<(i64, i64)> {
    union(acts.into_iter().map(|a| (a.start_ns, a.end_ns)).collect())
}

impl IdleAnalysis {
    /// Analyses one device: `dev` its activities sorted by start, `busy` their union. Returns
    /// the device's idle breakdown.
    pub(crate) fn add_device(
        &mut self,
        profile: &Profile,
        dev: &[Activity],
        busy: &[(i64, i64)],
        launch: &LaunchStats,
        opts: &AnalyzeOptions,
    ) -> IdleBreakdown {
        let threshold = opts.kernel_wait_threshold_ns;
        let device = dev[0].device;
        let refs: Vec<&Activity> = dev.iter().collect();
        let (breakdown, gap_list) = classify_gaps(profile, &refs, busy, threshold);
        // Host-wait time by the name of the operator the launching thread was in.
        let mut by_op: FxHashMap<Option<StrId>, (i64, u64)> = FxHashMap::default();
        let mut chain = DeviceChain {
            device,
            ..DeviceChain::default()
        };
        // Gap k follows run k of the busy union; the last run is followed by none.
        let mut runs = busy.iter();
        for g in gap_list {
            let operator = g.call.and_then(|c| gap_operator(profile, c, g.start_ns));
            let sync = match (g.cause, g.call) {
                (GapCause::HostWait, Some(call)) => sync_at(profile, call.track, g.start_ns),
                _ => None,
            };
            if g.cause == GapCause::HostWait {
                let name = operator
                    .map(|e| profile.tracks[e.track as usize].events.name[e.index as usize]);
                let entry = by_op.entry(name).or_default();
                entry.0 = entry.0.saturating_add(g.dur_ns);
                entry.1 += 1;
            }
            if let Some(call) = sync {
                let (_, blocked_ns) = super::event_span(profile, call);
                chain.sync_gaps.push((g.dur_ns, blocked_ns, call));
            }
            if g.cause != GapCause::Other
                && refs[g.next_acts.clone()]
                    .iter()
                    .any(|a| launch.is_launch_bound(profile, a))
            {
                chain.launch_bound_gap_ns = chain.launch_bound_gap_ns.saturating_add(g.dur_ns);
            }
            if let Some(&run) = runs.next()
                && (g.cause != GapCause::HostWait || sync.is_some())
            {
                chain.critical_runs.push(run);
            }
            self.top_gaps.push(Gap {
                device,
                start_ns: g.start_ns,
                dur_ns: g.dur_ns,
                cause: g.cause,
                next: g.next,
                launch: g.call,
                operator,
                sync,
            });
        }
        chain.critical_runs.extend(runs.last().copied());
        self.chains.push(chain);
        let mut ops: Vec<HostWaitOp> = by_op
            .into_iter()
            .map(|(name, (time_ns, gaps))| HostWaitOp {
                device,
                operator: name.map(|n| profile.str(n).to_string()),
                time_ns,
                gaps,
            })
            .collect();
        ops.sort_by(|a, b| {
            b.time_ns
                .cmp(&a.time_ns)
                .then_with(|| a.operator.cmp(&b.operator))
        });
        self.host_wait_ops.extend(ops);

        // The device's streams, each with its own gaps.
        let mut streams: FxHashMap<u64, Vec<&Activity>> = FxHashMap::default();
        for a in dev {
            streams.entry(a.stream).or_default().push(a);
        }
        let mut streams: Vec<(u64, Vec<&Activity>)> = streams.into_iter().collect();
        streams.sort_unstable_by_key(|s| s.0);
        for (stream, list) in streams {
            let busy = busy_of(list.iter().copied());
            let (idle_breakdown, _) = classify_gaps(profile, &list, &busy, threshold);
            let window_ns = busy.last().map_or(0, |b| b.1) - busy.first().map_or(0, |b| b.0);
            let busy_ns = super::intervals::length(&busy);
            self.streams.push(StreamIdle {
                device,
                stream,
                window_ns,
                busy_ns,
                idle_ns: window_ns - busy_ns,
                idle_breakdown,
            });
        }
        breakdown
    }

    /// Keeps the `top` longest gaps (then the earliest).
    pub(crate) fn finish(mut self, top: usize) -> Self {
        self.top_gaps.sort_by(|a, b| {
            b.dur_ns
                .cmp(&a.dur_ns)
                .then_with(|| a.start_ns.cmp(&b.start_ns))
                .then_with(|| a.device.cmp(&b.device))
        });
        self.top_gaps.truncate(top);
        self
    }
}
