//! Analysis: pure functions over a [`Profile`] and a [`TimeRange`], so the same code serves the
//! whole run (`TimeRange::ALL`) and a selection on the timeline.
//!
//! With a range other than `ALL`, an event counts if it touches the range and only the part of
//! its duration inside the range is added up, so totals equal busy time within the selection.

pub mod compare;
pub mod contract;
pub mod fleet;
pub mod flops;
pub mod insight;
pub mod memory;
mod ops;
pub mod range_index;
mod summary;

pub use compare::{CompareError, Comparison, MergeError, RunLabel, compare_runs, merge_ranks};
pub use insight::{AnalyzeOptions, Insights, analyze};
pub use ops::{OpRow, cpu_ops};
pub use summary::{SourceReport, SummaryReport, summary_report};

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::model::{CopyKind, EventKind, Profile, RecordedSummaryRow, SummarySection, Track};
use crate::strings::StrId;
use crate::time::TimeRange;

/// Call statistics of one group of events.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Number of events.
    pub calls: u64,
    /// Summed duration.
    pub total_ns: i64,
    /// Mean duration (rounded down).
    pub avg_ns: i64,
    /// Shortest.
    pub min_ns: i64,
    /// Longest.
    pub max_ns: i64,
    /// Median (the mean of the two middle values, rounded down, for an even count); `None` for
    /// rows an nvprof summary recorded, which has no median.
    pub median_ns: Option<i64>,
}

impl Stats {
    /// The statistics an nvprof summary row recorded (it has no median).
    pub fn recorded(r: &RecordedSummaryRow) -> Self {
        Self {
            calls: r.calls,
            total_ns: r.total_ns,
            avg_ns: r.avg_ns,
            min_ns: r.min_ns,
            max_ns: r.max_ns,
            median_ns: None,
        }
    }

    /// Statistics of a list of durations (reordered in place). Linear time: the median comes
    /// from a selection, not a sort, so a table over a dragged range stays cheap.
    pub fn of(durations: &mut [i64]) -> Self {
        Self::of_any(durations)
    }

    fn of_any<T: Copy + Ord + Into<i64>>(durations: &mut [T]) -> Self {
        let n = durations.len();
        if n == 0 {
            return Self::default();
        }
        let total_ns = saturating_sum(durations.iter().map(|&d| d.into()));
        let min_ns = durations.iter().copied().min().map_or(0, Into::into);
        let max_ns = durations.iter().copied().max().map_or(0, Into::into);
        let (below, &mut upper, _) = durations.select_nth_unstable(n / 2);
        let upper: i64 = upper.into();
        let median_ns = Some(if n % 2 == 1 {
            upper
        } else {
            let lower = below.iter().copied().max().map_or(upper, Into::into);
            // In i128: two durations near i64::MAX must not overflow.
            i64::try_from((i128::from(lower) + i128::from(upper)).div_euclid(2)).unwrap_or(upper)
        });
        Self {
            calls: n as u64,
            total_ns,
            avg_ns: total_ns / i64::try_from(n).unwrap_or(i64::MAX),
            min_ns,
            max_ns,
            median_ns,
        }
    }
}

/// The durations of one table row, kept for its median: 4 bytes each while they fit (up to
/// about 4.3 s, which nearly every kernel and API call does), 8 once one does not. A summary of a
/// 200 MB Nsight Systems export holds 1.7 M API calls at once.
pub(crate) enum Durations {
    Narrow(Vec<u32>),
    Wide(Vec<i64>),
}

impl Default for Durations {
    fn default() -> Self {
        Self::Narrow(Vec::new())
    }
}

impl Durations {
    pub(crate) fn push(&mut self, d: i64) {
        match self {
            Self::Narrow(v) => match u32::try_from(d) {
                Ok(d) => v.push(d),
                Err(_) => {
                    let mut wide: Vec<i64> = v.iter().map(|&x| i64::from(x)).collect();
                    wide.push(d);
                    *self = Self::Wide(wide);
                }
            },
            Self::Wide(v) => v.push(d),
        }
    }

    /// Adds `other`'s durations; into an empty list, `other` is moved, not copied.
    pub(crate) fn append(&mut self, other: Durations) {
        if self.is_empty() {
            *self = other;
            return;
        }
        match (&mut *self, other) {
            (Self::Narrow(a), Self::Narrow(b)) => a.extend(b),
            (Self::Wide(a), Self::Wide(b)) => a.extend(b),
            (Self::Wide(a), Self::Narrow(b)) => a.extend(b.into_iter().map(i64::from)),
            (Self::Narrow(a), Self::Wide(b)) => {
                let mut wide: Vec<i64> = a.iter().map(|&x| i64::from(x)).collect();
                wide.extend(b);
                *self = Self::Wide(wide);
            }
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Self::Narrow(v) => v.is_empty(),
            Self::Wide(v) => v.is_empty(),
        }
    }

    /// The statistics of the durations (reordered in place).
    pub(crate) fn stats(&mut self) -> Stats {
        match self {
            Self::Narrow(v) => Stats::of_any(v),
            Self::Wide(v) => Stats::of_any(v),
        }
    }
}

/// What a GPU-activities row counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityKind {
    /// Kernels.
    Kernel,
    /// Memory copies.
    Memcpy,
    /// Memory sets.
    Memset,
}

/// One row of the nvprof-style "GPU activities" table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ActivityRow {
    /// Kernel name, or `[CUDA memcpy HtoD]` / `[CUDA memset]`.
    pub name: String,
    /// What the row counts.
    pub kind: ActivityKind,
    /// Call statistics.
    #[serde(flatten)]
    pub stats: Stats,
    /// Share of all GPU activity time, in percent.
    pub time_pct: f64,
}

/// The sum of `values`, saturating at the ends of `i64` (a hostile file can hold durations whose
/// sum overflows).
pub(crate) fn saturating_sum(values: impl IntoIterator<Item = i64>) -> i64 {
    values.into_iter().fold(0, i64::saturating_add)
}

fn overlap_or_all(range: &TimeRange, start_ns: i64, dur_ns: i64) -> Option<i64> {
    if range.is_all() {
        return Some(dur_ns);
    }
    range
        .contains_event(start_ns, dur_ns)
        .then(|| range.overlap_ns(start_ns, dur_ns))
}

/// `part` as a percentage of `whole` (0 when `whole` is not positive).
pub fn pct(part: i64, whole: i64) -> f64 {
    if whole <= 0 {
        return 0.0;
    }
    #[allow(clippy::cast_precision_loss)]
    let p = part as f64 * 100.0 / whole as f64;
    p
}

/// Summed duration of all kernels, copies and sets in the range (nvprof's GPU activities
/// total; unified-memory transfers are not included).
pub fn gpu_total_ns(profile: &Profile, range: TimeRange) -> i64 {
    if let Some(rows) = recorded_activities(profile) {
        return saturating_sum(rows.iter().map(|r| r.stats.total_ns));
    }
    let mut total = 0i64;
    for track in profile.tracks.iter().filter(|t| t.key.is_gpu()) {
        let ev = &track.events;
        for i in track.candidates(&range) {
            if ev.kind[i].is_gpu_activity()
                && let Some(d) = overlap_or_all(&range, ev.start_ns[i], ev.dur_ns[i])
            {
                total = total.saturating_add(d);
            }
        }
    }
    total
}

/// What a row of the GPU-activities table groups: a kernel by name, a copy by direction, or
/// the sets.
#[derive(Clone, Copy, Hash, PartialEq, Eq)]
pub(crate) enum ActivityKey {
    Kernel(StrId),
    Copy(CopyKind, ActivityKind),
}

impl ActivityKey {
    /// The row of event `i` of `track`, or `None` if it is no kernel, copy or set.
    pub(crate) fn of(profile: &Profile, track: &Track, i: usize) -> Option<Self> {
        let ev = &track.events;
        Some(match ev.kind[i] {
            EventKind::Kernel => Self::Kernel(ev.name[i]),
            EventKind::Memset => Self::Copy(CopyKind::Memset, ActivityKind::Memset),
            EventKind::Memcpy => Self::Copy(
                profile
                    .copies
                    .kind(ev.detail[i] as usize)
                    .unwrap_or(CopyKind::Unknown),
                ActivityKind::Memcpy,
            ),
            _ => return None,
        })
    }

    /// The row's name and kind as the table shows them.
    pub(crate) fn name_and_kind(self, profile: &Profile) -> (String, ActivityKind) {
        match self {
            Self::Kernel(id) => (profile.str(id).to_string(), ActivityKind::Kernel),
            Self::Copy(ck, kind) => (ck.activity_name_in(profile.runtime_name()), kind),
        }
    }
}

/// The nvprof-style "GPU activities" table: kernels, copies (named by kind) and sets ranked
/// together by total time. For a profile that is an nvprof summary (no events), the rows are the
/// file's own.
pub fn gpu_activities(profile: &Profile, range: TimeRange) -> Vec<ActivityRow> {
    if let Some(rows) = recorded_activities(profile) {
        return rows;
    }
    // One pass, not pieces joined: every duration is kept for the statistics, and pieces held
    // them twice while they were joined (a 200 MB Nsight Systems export's peak went from 0.93x
    // to 1.01x the file).
    let mut groups: FxHashMap<ActivityKey, Durations> = FxHashMap::default();
    for track in profile.tracks.iter().filter(|t| t.key.is_gpu()) {
        let ev = &track.events;
        for i in track.candidates(&range) {
            let Some(key) = ActivityKey::of(profile, track, i) else {
                continue;
            };
            let Some(d) = overlap_or_all(&range, ev.start_ns[i], ev.dur_ns[i]) else {
                continue;
            };
            groups.entry(key).or_default().push(d);
        }
    }
    let mut rows: Vec<ActivityRow> = groups
        .into_iter()
        .map(|(key, mut durations)| {
            let (name, kind) = key.name_and_kind(profile);
            ActivityRow {
                name,
                kind,
                stats: durations.stats(),
                time_pct: 0.0,
            }
        })
        .collect();
    rank(&mut rows);
    rows
}

/// True for a profile whose GPU activities are an nvprof summary's recorded rows: it has a
/// recorded summary and no GPU events.
pub(crate) fn is_recorded_only(profile: &Profile) -> bool {
    profile.recorded_summary.is_some()
        && !profile
            .tracks
            .iter()
            .any(|t| t.key.is_gpu() && !t.events.is_empty())
}

fn recorded_activities(profile: &Profile) -> Option<Vec<ActivityRow>> {
    if !is_recorded_only(profile) {
        return None;
    }
    let recorded = profile.recorded_summary.as_ref()?;
    Some(
        recorded
            .rows
            .iter()
            .filter(|r| r.section == SummarySection::GpuActivities)
            .map(|r| ActivityRow {
                name: r.name.clone(),
                kind: if r.name.starts_with("[CUDA memcpy") || r.name.starts_with("[HIP memcpy") {
                    ActivityKind::Memcpy
                } else if r.name.starts_with("[CUDA memset") || r.name.starts_with("[HIP memset") {
                    ActivityKind::Memset
                } else {
                    ActivityKind::Kernel
                },
                stats: Stats::recorded(r),
                time_pct: r.time_pct,
            })
            .collect(),
    )
}

/// A table row with call statistics, ranked by total time.
trait Ranked {
    fn stats(&self) -> &Stats;
    fn name(&self) -> &str;
    fn set_time_pct(&mut self, pct: f64);
}

impl Ranked for ActivityRow {
    fn stats(&self) -> &Stats {
        &self.stats
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn set_time_pct(&mut self, pct: f64) {
        self.time_pct = pct;
    }
}

impl Ranked for ApiRow {
    fn stats(&self) -> &Stats {
        &self.stats
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn set_time_pct(&mut self, pct: f64) {
        self.time_pct = pct;
    }
}

/// Fills in each row's share of the total and sorts by total time (then name), longest first.
fn rank<R: Ranked>(rows: &mut [R]) {
    let total = saturating_sum(rows.iter().map(|r| r.stats().total_ns));
    for r in rows.iter_mut() {
        let p = pct(r.stats().total_ns, total);
        r.set_time_pct(p);
    }
    by_total_then_name(rows, |r| (r.stats().total_ns, r.name()));
}

/// Sorts table rows as nvprof ranks them: the longest total time first, ties by name.
pub(crate) fn by_total_then_name<R>(rows: &mut [R], key: impl Fn(&R) -> (i64, &str)) {
    rows.sort_by(|a, b| {
        let ((a_ns, a_name), (b_ns, b_name)) = (key(a), key(b));
        b_ns.cmp(&a_ns).then_with(|| a_name.cmp(b_name))
    });
}

/// One row of the copies table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CopyRow {
    /// Direction (`HtoD`, `Memset`, `Unified HtoD`).
    pub kind: String,
    /// Number of copies.
    pub calls: u64,
    /// Bytes moved (copies whose size is unknown count 0).
    pub bytes: u64,
    /// Summed duration.
    pub total_ns: i64,
    /// Achieved bandwidth in GB/s (10^9 bytes per second), over the summed duration.
    pub gbps: f64,
}

/// Copies, sets and unified-memory transfers grouped by kind, with bytes and bandwidth.
pub fn copies_by_kind(profile: &Profile, range: TimeRange) -> Vec<CopyRow> {
    let mut groups: FxHashMap<CopyKind, (u64, u64, i64)> = FxHashMap::default();
    for track in profile.tracks.iter().filter(|t| t.key.is_gpu()) {
        let ev = &track.events;
        for i in track.candidates(&range) {
            if !matches!(
                ev.kind[i],
                EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory
            ) {
                continue;
            }
            let Some(d) = overlap_or_all(&range, ev.start_ns[i], ev.dur_ns[i]) else {
                continue;
            };
            let info = profile.copy_info(track, i);
            let kind = match (ev.kind[i], info) {
                (EventKind::Memset, _) => CopyKind::Memset,
                (_, Some(c)) => c.kind,
                // Unified-memory page faults move no data of their own.
                (EventKind::UnifiedMemory, None) => continue,
                (_, None) => CopyKind::Unknown,
            };
            let g = groups.entry(kind).or_default();
            g.0 += 1;
            g.1 = g.1.saturating_add(info.and_then(|c| c.bytes).unwrap_or(0));
            g.2 = g.2.saturating_add(d);
        }
    }
    let mut rows: Vec<CopyRow> = groups
        .into_iter()
        .map(|(kind, (calls, bytes, total_ns))| CopyRow {
            kind: kind.as_str().to_string(),
            calls,
            bytes,
            total_ns,
            gbps: gbps(bytes, total_ns),
        })
        .collect();
    by_total_then_name(&mut rows, |r| (r.total_ns, r.kind.as_str()));
    rows
}

/// Bytes per nanosecond is GB/s.
pub fn gbps(bytes: u64, ns: i64) -> f64 {
    if ns <= 0 {
        return 0.0;
    }
    #[allow(clippy::cast_precision_loss)]
    let v = bytes as f64 / ns as f64;
    v
}

/// One row of the API-calls table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ApiRow {
    /// API function name, without CUPTI's `_v7000` version suffix.
    pub name: String,
    /// `runtime` or `driver`.
    pub kind: EventKind,
    /// Call statistics.
    #[serde(flatten)]
    pub stats: Stats,
    /// Share of all API time, in percent.
    pub time_pct: f64,
}

/// Removes CUPTI's CUDA-version suffix (`cudaLaunchKernel_v7000` → `cudaLaunchKernel`).
pub fn strip_version_suffix(name: &str) -> &str {
    if let Some(pos) = name.rfind("_v") {
        let digits = &name[pos + 2..];
        if (4..=5).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
            return &name[..pos];
        }
    }
    name
}

/// CUDA runtime and driver API calls by name.
pub fn api_calls(profile: &Profile, range: TimeRange) -> Vec<ApiRow> {
    if profile.event_count() == 0
        && let Some(recorded) = &profile.recorded_summary
    {
        return recorded
            .rows
            .iter()
            .filter(|r| r.section == SummarySection::ApiCalls)
            .map(|r| ApiRow {
                name: r.name.clone(),
                kind: if (r.name.starts_with("cu") && !r.name.starts_with("cuda"))
                    || r.name.starts_with("hsa_")
                {
                    EventKind::Driver
                } else {
                    EventKind::Runtime
                },
                stats: Stats::recorded(r),
                time_pct: r.time_pct,
            })
            .collect();
    }
    // One pass, as in `gpu_activities`: pieces would hold every duration twice while joined.
    let mut groups: FxHashMap<(StrId, EventKind), Durations> = FxHashMap::default();
    for track in profile.tracks.iter().filter(|t| !t.key.is_gpu()) {
        let ev = &track.events;
        for i in track.candidates(&range) {
            if !ev.kind[i].is_api() {
                continue;
            }
            if let Some(d) = overlap_or_all(&range, ev.start_ns[i], ev.dur_ns[i]) {
                groups.entry((ev.name[i], ev.kind[i])).or_default().push(d);
            }
        }
    }
    // Names differing only by version suffix are one function.
    let mut merged: FxHashMap<(String, EventKind), Durations> = FxHashMap::default();
    for ((name, kind), durations) in groups {
        let clean = strip_version_suffix(profile.str(name)).to_string();
        merged.entry((clean, kind)).or_default().append(durations);
    }
    let mut rows: Vec<ApiRow> = merged
        .into_iter()
        .map(|((name, kind), mut d)| ApiRow {
            name,
            kind,
            stats: d.stats(),
            time_pct: 0.0,
        })
        .collect();
    rank(&mut rows);
    rows
}

/// Time during which each device had at least one kernel, copy or set running, within the
/// range: the union of their intervals (overlapping work on several streams counts once).
/// Returns (device, busy ns), by device.
pub fn gpu_busy_ns(profile: &Profile, range: TimeRange) -> Vec<(u32, i64)> {
    let mut by_device: FxHashMap<u32, Vec<(i64, i64)>> = FxHashMap::default();
    for track in &profile.tracks {
        let crate::model::TrackKey::Gpu { device, .. } = track.key else {
            continue;
        };
        let ev = &track.events;
        let intervals = by_device.entry(device).or_default();
        for i in track.candidates(&range) {
            if !ev.kind[i].is_gpu_activity() || !range.contains_event(ev.start_ns[i], ev.dur_ns[i])
            {
                continue;
            }
            let start = ev.start_ns[i].max(range.start_ns);
            let end = ev.end_ns(i).min(range.end_ns);
            if end > start {
                intervals.push((start, end));
            }
        }
    }
    let mut out: Vec<(u32, i64)> = by_device
        .into_iter()
        .map(|(device, mut intervals)| {
            intervals.sort_unstable();
            let mut busy = 0i64;
            let mut current: Option<(i64, i64)> = None;
            for (s, e) in intervals {
                match current {
                    Some((cs, ce)) if s <= ce => current = Some((cs, ce.max(e))),
                    Some((cs, ce)) => {
                        busy += ce - cs;
                        current = Some((s, e));
                    }
                    None => current = Some((s, e)),
                }
            }
            if let Some((cs, ce)) = current {
                busy += ce - cs;
            }
            (device, busy)
        })
        .collect();
    out.sort_unstable();
    out
}

/// Number of events of each kind, in kind order.
pub fn event_counts(profile: &Profile) -> Vec<(EventKind, u64)> {
    let mut counts: FxHashMap<EventKind, u64> = FxHashMap::default();
    for t in &profile.tracks {
        for &k in &t.events.kind {
            *counts.entry(k).or_default() += 1;
        }
    }
    let mut v: Vec<_> = counts.into_iter().collect();
    v.sort();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_kept_in_4_bytes_give_the_same_statistics_and_widen_when_needed() {
        let values: Vec<i64> = (0..1001).map(|i| (i * 7919) % 1013).collect();
        let mut narrow = Durations::default();
        values.iter().for_each(|&d| narrow.push(d));
        assert!(matches!(narrow, Durations::Narrow(_)));
        assert_eq!(narrow.stats(), Stats::of(&mut values.clone()));
        // One duration past u32 (about 4.3 s), and one negative (a hostile file): 8 bytes each.
        for odd in [i64::from(u32::MAX) + 1, -5] {
            let mut all = values.clone();
            all.push(odd);
            let mut d = Durations::default();
            all.iter().for_each(|&v| d.push(v));
            assert!(matches!(d, Durations::Wide(_)));
            assert_eq!(d.stats(), Stats::of(&mut all));
            // Appending keeps every value, whichever side is wide.
            let mut front = Durations::default();
            values.iter().for_each(|&v| front.push(v));
            let mut back = Durations::default();
            back.push(odd);
            front.append(back);
            assert_eq!(front.stats(), Stats::of(&mut all));
        }
    }

    #[test]
    fn stats_of_durations() {
        let s = Stats::of(&mut [5, 1, 3, 2]);
        assert_eq!(s.calls, 4);
        assert_eq!(s.total_ns, 11);
        assert_eq!(s.avg_ns, 2);
        assert_eq!(s.min_ns, 1);
        assert_eq!(s.max_ns, 5);
        assert_eq!(s.median_ns, Some(2));
        assert_eq!(Stats::of(&mut [7]).median_ns, Some(7));
        assert_eq!(Stats::of(&mut []), Stats::default());
        // Even counts: the mean of the two middle values, whatever the order.
        assert_eq!(Stats::of(&mut [9, 1, 4, 6, 2, 8]).median_ns, Some(5));
        assert_eq!(Stats::of(&mut [3, 3]).median_ns, Some(3));
    }

    #[test]
    fn ranges_find_long_events_that_started_long_before() {
        use crate::builder::ProfileBuilder;
        use crate::model::{Format, GpuLane, KernelInfo, TrackKey};
        let mut b = ProfileBuilder::new("x".into(), Format::ChromeJson);
        let s7 = b.track(TrackKey::Gpu {
            device: 0,
            context: 1,
            stream: 7,
            lane: GpuLane::Work,
        });
        let (long, short) = (b.intern("long"), b.intern("short"));
        b.push_kernel(s7, 0, 10_000, long, KernelInfo::default(), 0);
        for k in 0..100 {
            b.push_kernel(s7, 10_000 + k * 100, 10, short, KernelInfo::default(), 0);
        }
        let p = b.finish();
        let brute = |r: TimeRange| -> Vec<(String, u64, i64)> {
            let ev = &p.tracks[0].events;
            let mut v: Vec<(String, u64, i64)> = Vec::new();
            for name in ["long", "short"] {
                let d: Vec<i64> = (0..ev.len())
                    .filter(|&i| p.str(ev.name[i]) == name)
                    .filter_map(|i| overlap_or_all(&r, ev.start_ns[i], ev.dur_ns[i]))
                    .collect();
                if !d.is_empty() {
                    v.push((name.to_string(), d.len() as u64, d.iter().sum()));
                }
            }
            v.sort();
            v
        };
        for r in [
            TimeRange::new(9_000, 9_500),
            TimeRange::new(9_999, 10_105),
            TimeRange::new(10_005, 10_100),
            TimeRange::new(10_100, 10_100 + 1),
            TimeRange::new(20_000, 30_000),
        ] {
            let mut got: Vec<(String, u64, i64)> = gpu_activities(&p, r)
                .into_iter()
                .map(|row| (row.name, row.stats.calls, row.stats.total_ns))
                .collect();
            got.sort();
            assert_eq!(got, brute(r), "{r:?}");
        }
    }

    #[test]
    fn busy_time_is_the_union_of_gpu_work() {
        use crate::builder::ProfileBuilder;
        use crate::model::{CopyInfo, Format, GpuLane, KernelInfo, TrackKey};
        let mut b = ProfileBuilder::new("x".into(), Format::ChromeJson);
        let gpu = |stream| TrackKey::Gpu {
            device: 0,
            context: 1,
            stream,
            lane: GpuLane::Work,
        };
        let s7 = b.track(gpu(7));
        let s8 = b.track(gpu(8));
        let k = b.intern("k");
        b.push_kernel(s7, 0, 100, k, KernelInfo::default(), 0);
        b.push_kernel(s8, 50, 100, k, KernelInfo::default(), 0); // overlaps: union 0..150
        let copy = CopyInfo {
            kind: CopyKind::HtoD,
            bytes: Some(8),
            src_kind: None,
            dst_kind: None,
            correlation: None,
            external_id: None,
        };
        b.push_copy(s7, 300, 50, k, EventKind::Memcpy, copy, 0);
        let p = b.finish();
        assert_eq!(gpu_busy_ns(&p, TimeRange::ALL), vec![(0, 200)]);
        assert_eq!(gpu_busy_ns(&p, TimeRange::new(100, 320)), vec![(0, 70)]);
        assert_eq!(gpu_total_ns(&p, TimeRange::new(100, 320)), 50 + 20);
    }

    #[test]
    fn version_suffixes() {
        assert_eq!(
            strip_version_suffix("cudaLaunchKernel_v7000"),
            "cudaLaunchKernel"
        );
        assert_eq!(
            strip_version_suffix("cudaGetDeviceProperties_v2_v12000"),
            "cudaGetDeviceProperties_v2"
        );
        assert_eq!(strip_version_suffix("cuMemcpyHtoD_v2"), "cuMemcpyHtoD_v2");
        assert_eq!(strip_version_suffix("cuLaunchKernel"), "cuLaunchKernel");
    }

    use crate::builder::ProfileBuilder;
    use crate::model::{ApiInfo, CopyInfo, Format, GpuLane, KernelInfo, TraceId, TrackKey};
    use crate::parallel::with_threads;

    /// Two CPU threads of 1500 API calls each (three names, one with a version suffix) and
    /// two streams of 1500 kernels (five names) and 300 copies; durations vary with the index.
    fn api_kernel_copy_profile() -> Profile {
        let mut b = ProfileBuilder::new("tables.json".into(), Format::ChromeJson);
        let names = [
            "cudaLaunchKernel",
            "cudaLaunchKernel_v7000",
            "cuLaunchKernel",
        ];
        let calls = names.map(|n| b.intern(n));
        let kernels: Vec<_> = (0..5).map(|k| b.intern(&format!("kernel_{k}"))).collect();
        let copy = b.intern("Memcpy HtoD");
        for tid in 0..2i64 {
            let t = b.track(TrackKey::Thread {
                pid: TraceId::Int(1),
                tid: TraceId::Int(tid),
            });
            let gpu = b.track(TrackKey::Gpu {
                device: 0,
                context: 1,
                stream: 7 + u64::try_from(tid).unwrap_or(0),
                lane: GpuLane::Work,
            });
            for i in 0..1500i64 {
                let at = i * 100 + tid * 7;
                let which = usize::try_from(i % 3).unwrap_or(0);
                let kind = if which == 2 {
                    EventKind::Driver
                } else {
                    EventKind::Runtime
                };
                let api = ApiInfo::default();
                b.push_api(t, at, 5 + i % 11, calls[which], kind, api, 0);
                let name = kernels[usize::try_from(i % 5).unwrap_or(0)];
                let info = KernelInfo::default();
                b.push_kernel(gpu, at + 10, 20 + (i * 7) % 13, name, info, 0);
                if i % 5 == 0 {
                    let info = CopyInfo {
                        kind: CopyKind::HtoD,
                        bytes: Some(1000 + u64::try_from(i).unwrap_or(0)),
                        src_kind: None,
                        dst_kind: None,
                        correlation: None,
                        external_id: None,
                    };
                    b.push_copy(gpu, at + 50, 30, copy, EventKind::Memcpy, info, 0);
                }
            }
        }
        b.finish()
    }

    #[test]
    fn the_tables_are_the_same_on_any_number_of_threads() {
        let p = api_kernel_copy_profile();
        for range in [TimeRange::ALL, TimeRange::new(20_003, 101_050)] {
            let one = with_threads(1, || {
                (
                    gpu_activities(&p, range),
                    api_calls(&p, range),
                    copies_by_kind(&p, range),
                )
            });
            for threads in [2, 16] {
                let many = with_threads(threads, || {
                    (
                        gpu_activities(&p, range),
                        api_calls(&p, range),
                        copies_by_kind(&p, range),
                    )
                });
                assert_eq!(many, one, "{threads} threads, {range:?}");
            }
        }
        let (gpu, api, copies) = (
            gpu_activities(&p, TimeRange::ALL),
            api_calls(&p, TimeRange::ALL),
            copies_by_kind(&p, TimeRange::ALL),
        );
        // Five kernel names of 600 calls each, and one copy row of 600 copies.
        assert_eq!(gpu.len(), 6);
        assert_eq!(gpu.iter().map(|r| r.stats.calls).sum::<u64>(), 3600);
        // The suffixed name joins its plain one: 2000 runtime calls, 1000 driver calls.
        assert_eq!(api.len(), 2);
        assert_eq!(api.iter().map(|r| r.stats.calls).sum::<u64>(), 3000);
        assert!(
            api.iter()
                .any(|r| r.name == "cudaLaunchKernel" && r.stats.calls == 2000)
        );
        assert_eq!((copies.len(), copies[0].calls), (1, 600));
        assert_eq!(copies[0].total_ns, 600 * 30);
    }
}
