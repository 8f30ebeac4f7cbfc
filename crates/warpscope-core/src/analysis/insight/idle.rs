//! Why the GPU was idle: every gap of a device's (or a stream's) window attributed to host wait,
//! kernel wait or other, and the CPU operator the GPU waited on (`docs/analysis.md`, section 3).

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::intervals::{gaps, union};
use super::launch::LaunchStats;
use super::{Activity, AnalyzeOptions};
use crate::model::{EventKind, EventRef, NO_PARENT, Profile};

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
    /// The innermost CPU operator on the launching thread during the gap.
    pub operator: Option<EventRef>,
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
    /// Operator name (`None`: no operator enclosed the launching thread).
    pub operator: Option<String>,
    /// Host-wait time in gaps under this operator.
    pub time_ns: i64,
    /// Number of such gaps.
    pub gaps: u64,
}

/// What [`idle_analysis`] returns.
pub(crate) struct IdleAnalysis {
    /// Idle breakdown per device.
    pub device: Vec<(u32, IdleBreakdown)>,
    /// Per stream.
    pub streams: Vec<StreamIdle>,
    /// The longest device gaps.
    pub top_gaps: Vec<Gap>,
    /// Host-wait time by operator, per device.
    pub host_wait_ops: Vec<HostWaitOp>,
    /// Per device: host-wait and kernel-wait time of gaps whose next work includes a
    /// launch-bound kernel.
    pub launch_bound_gap_ns: Vec<(u32, i64)>,
}

/// Finds the cause of the gap `[gap_start, gap_end)` given the activities that start at its end.
fn classify(
    profile: &Profile,
    next: &[&Activity],
    launches: &FxHashMap<EventRef, EventRef>,
    gap_start: i64,
    gap_end: i64,
    threshold_ns: i64,
) -> (GapCause, EventRef, Option<EventRef>) {
    // The next work whose launching call started first (on a tie, ended first).
    let mut first: Option<((i64, i64), EventRef, EventRef)> = None;
    for a in next {
        if let Some(&call) = launches.get(&a.event) {
            let (call_start, call_dur) = super::event_span(profile, call);
            let key = (call_start, call_start.saturating_add(call_dur));
            if first.is_none_or(|(k, ..)| key < k) {
                first = Some((key, a.event, call));
            }
        }
    }
    let fallback = next
        .first()
        .map_or(EventRef { track: 0, index: 0 }, |a| a.event);
    match first {
        Some(((call_start, _), work, call)) if call_start >= gap_start => {
            (GapCause::HostWait, work, Some(call))
        }
        other => {
            let cause = if gap_end - gap_start < threshold_ns {
                GapCause::KernelWait
            } else {
                GapCause::Other
            };
            match other {
                Some((_, work, call)) => (cause, work, Some(call)),
                None => (cause, fallback, None),
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

/// The innermost CPU operator on `track` that contains `t_ns` (start ≤ t < end): the latest
/// starting one (then the shortest), found through the parent chain of the last event starting
/// at or before `t_ns`.
fn innermost_operator(profile: &Profile, track: u32, t_ns: i64) -> Option<EventRef> {
    let ev = &profile.tracks.get(track as usize)?.events;
    let upto = ev.start_ns.partition_point(|&s| s <= t_ns);
    let mut at = u32::try_from(upto.checked_sub(1)?).ok()?;
    // Real stacks are a few dozen deep; the bound keeps a pathological file (a million nested
    // ranges) from making every gap walk all of them.
    for _ in 0..MAX_STACK_WALK {
        let i = at as usize;
        if is_operator(ev.kind[i]) && ev.start_ns[i] <= t_ns && t_ns < ev.end_ns(i) {
            return Some(EventRef { track, index: at });
        }
        at = ev.parent[i];
        if at == NO_PARENT {
            return None;
        }
    }
    None
}

/// The most enclosing events [`innermost_operator`] looks through.
const MAX_STACK_WALK: usize = 1_024;

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

/// Classifies every gap of `acts` (one device, or one stream, sorted by start) and returns the
/// gaps with their causes.
pub(crate) fn classify_gaps(
    profile: &Profile,
    acts: &[&Activity],
    launches: &FxHashMap<EventRef, EventRef>,
    threshold_ns: i64,
) -> (IdleBreakdown, Vec<ClassifiedGap>) {
    let busy = union(acts.iter().map(|a| (a.start_ns, a.end_ns)).collect());
    let mut breakdown = IdleBreakdown::default();
    let mut out = Vec::new();
    for (start, end) in gaps(&busy) {
        let lo = acts.partition_point(|a| a.start_ns < end);
        let hi = acts.partition_point(|a| a.start_ns <= end);
        let (cause, next, call) =
            classify(profile, &acts[lo..hi], launches, start, end, threshold_ns);
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

/// The idle analysis of every device and stream. `acts` is sorted by device then start.
pub(crate) fn idle_analysis(
    profile: &Profile,
    acts: &[Activity],
    launches: &FxHashMap<EventRef, EventRef>,
    launch: &LaunchStats,
    opts: &AnalyzeOptions,
) -> IdleAnalysis {
    let threshold = opts.kernel_wait_threshold_ns;
    let mut result = IdleAnalysis {
        device: Vec::new(),
        streams: Vec::new(),
        top_gaps: Vec::new(),
        host_wait_ops: Vec::new(),
        launch_bound_gap_ns: Vec::new(),
    };
    let mut all_gaps = Vec::new();
    for dev in acts.chunk_by(|a, b| a.device == b.device) {
        let device = dev[0].device;
        let refs: Vec<&Activity> = dev.iter().collect();
        let (breakdown, gap_list) = classify_gaps(profile, &refs, launches, threshold);
        result.device.push((device, breakdown));
        let mut by_op: FxHashMap<Option<EventRef>, (i64, u64)> = FxHashMap::default();
        let mut bound_ns = 0i64;
        for g in gap_list {
            let (start, dur, cause, call) = (g.start_ns, g.dur_ns, g.cause, g.call);
            let operator = call.and_then(|c| gap_operator(profile, c, start));
            if cause == GapCause::HostWait {
                let e = by_op.entry(operator).or_default();
                e.0 = e.0.saturating_add(dur);
                e.1 += 1;
            }
            if cause != GapCause::Other
                && refs[g.next_acts.clone()]
                    .iter()
                    .any(|a| launch.is_launch_bound(profile, a))
            {
                bound_ns = bound_ns.saturating_add(dur);
            }
            all_gaps.push(Gap {
                device,
                start_ns: start,
                dur_ns: dur,
                cause,
                next: g.next,
                launch: call,
                operator,
            });
        }
        result.launch_bound_gap_ns.push((device, bound_ns));
        // Group by operator name (several events share a name).
        let mut by_name: FxHashMap<Option<String>, (i64, u64)> = FxHashMap::default();
        for (op, (t, n)) in by_op {
            let name = op.map(|e| {
                let ev = &profile.tracks[e.track as usize].events;
                profile.str(ev.name[e.index as usize]).to_string()
            });
            let entry = by_name.entry(name).or_default();
            entry.0 = entry.0.saturating_add(t);
            entry.1 += n;
        }
        let mut ops: Vec<HostWaitOp> = by_name
            .into_iter()
            .map(|(operator, (time_ns, gaps))| HostWaitOp {
                device,
                operator,
                time_ns,
                gaps,
            })
            .collect();
        ops.sort_by(|a, b| {
            b.time_ns
                .cmp(&a.time_ns)
                .then_with(|| a.operator.cmp(&b.operator))
        });
        result.host_wait_ops.extend(ops);

        // Streams of this device.
        let mut streams: FxHashMap<u64, Vec<&Activity>> = FxHashMap::default();
        for a in dev {
            streams.entry(a.stream).or_default().push(a);
        }
        let mut keys: Vec<u64> = streams.keys().copied().collect();
        keys.sort_unstable();
        for stream in keys {
            let list = &streams[&stream];
            let (breakdown, _) = classify_gaps(profile, list, launches, threshold);
            let window_ns = list.iter().map(|a| a.end_ns).max().unwrap_or(0)
                - list.iter().map(|a| a.start_ns).min().unwrap_or(0);
            let busy_ns = super::intervals::length(&union(
                list.iter().map(|a| (a.start_ns, a.end_ns)).collect(),
            ));
            result.streams.push(StreamIdle {
                device,
                stream,
                window_ns,
                busy_ns,
                idle_ns: window_ns - busy_ns,
                idle_breakdown: breakdown,
            });
        }
    }
    all_gaps.sort_by(|a, b| {
        b.dur_ns
            .cmp(&a.dur_ns)
            .then_with(|| a.start_ns.cmp(&b.start_ns))
            .then_with(|| a.device.cmp(&b.device))
    });
    all_gaps.truncate(opts.top_gaps);
    result.top_gaps = all_gaps;
    result
}
