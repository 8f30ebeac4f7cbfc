//! Training steps: the `ProfilerStep#N` ranges Kineto records on the CPU, or NVTX / user
//! annotation ranges named like steps (`step 3`, `train_step`, `iteration#12`), so that runs can
//! be compared per step and per sample.

use rustc_hash::FxHashMap;
use serde::Serialize;

use crate::model::{EventKind, Profile};
use crate::names::is_step_name;
use crate::time::TimeRange;

/// Where the steps of a run were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepSource {
    /// PyTorch profiler `ProfilerStep#N` ranges on CPU threads.
    ProfilerStep,
    /// NVTX or user-annotation ranges whose name looks like a step.
    Annotation,
}

/// The training steps of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct StepStats {
    /// Where they were found.
    pub source: StepSource,
    /// Number of steps.
    pub count: u64,
    /// Summed duration of the steps.
    pub total_ns: i64,
    /// Mean duration of a step (rounded down).
    pub mean_ns: i64,
    /// Shortest step.
    pub min_ns: i64,
    /// Longest step.
    pub max_ns: i64,
    /// Start of the first step, in profile nanoseconds.
    pub first_start_ns: i64,
    /// End of the last step, in profile nanoseconds.
    pub last_end_ns: i64,
    /// Wall time from the start of the first step to the end of the last.
    pub span_ns: i64,
}

/// The steps of a profile: `ProfilerStep#N` ranges on CPU tracks when there are any (a step
/// number seen on several threads counts once, over the union of its ranges), otherwise NVTX
/// and user-annotation ranges named like steps ([`is_step_name`]) that are not nested in another
/// such range. `None` when the profile has neither. GPU-side copies of the ranges
/// (`gpu_user_annotation`) are not counted.
pub fn detect_steps(profile: &Profile) -> Option<StepStats> {
    // ProfilerStep#N, by name.
    let mut by_name: FxHashMap<crate::StrId, (i64, i64)> = FxHashMap::default();
    let mut nvtx: Vec<(i64, i64)> = Vec::new();
    for track in profile.tracks.iter().filter(|t| !t.key.is_gpu()) {
        let ev = &track.events;
        // Steps on this track so far, to leave out the ones nested in another step.
        let mut open_end_ns = i64::MIN;
        for i in 0..ev.len() {
            if ev.dur_ns[i] <= 0 {
                continue;
            }
            let name = profile.str(ev.name[i]);
            if name.starts_with("ProfilerStep#") {
                let (start, end) = (ev.start_ns[i], ev.end_ns(i));
                by_name
                    .entry(ev.name[i])
                    .and_modify(|(s, e)| {
                        *s = (*s).min(start);
                        *e = (*e).max(end);
                    })
                    .or_insert((start, end));
            } else if matches!(ev.kind[i], EventKind::Nvtx | EventKind::UserAnnotation)
                && ev.start_ns[i] >= open_end_ns
                && is_step_name(name)
            {
                nvtx.push((ev.start_ns[i], ev.end_ns(i)));
                open_end_ns = ev.end_ns(i);
            }
        }
    }
    if !by_name.is_empty() {
        return Some(stats(StepSource::ProfilerStep, by_name.into_values()));
    }
    if !nvtx.is_empty() {
        return Some(stats(StepSource::Annotation, nvtx.into_iter()));
    }
    None
}

/// The numbers `N` of the `ProfilerStep#N` ranges in the profile, sorted.
pub fn step_numbers(profile: &Profile) -> Vec<u64> {
    let mut numbers: Vec<u64> = profile
        .tracks
        .iter()
        .flat_map(|t| t.events.name.iter())
        .filter_map(|&id| profile.str(id).strip_prefix("ProfilerStep#")?.parse().ok())
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    numbers
}

/// The time range of training step `n`: the span of the GPU-side `ProfilerStep#n` annotations
/// (Kineto's `gpu_user_annotation`, which covers the GPU work of the step) when the profile has
/// them, otherwise the span of the CPU `ProfilerStep#n` ranges. `None` when there is no such step.
pub fn step_range(profile: &Profile, n: u64) -> Option<TimeRange> {
    let wanted = format!("ProfilerStep#{n}");
    let mut gpu: Option<(i64, i64)> = None;
    let mut cpu: Option<(i64, i64)> = None;
    for track in &profile.tracks {
        let ev = &track.events;
        for i in 0..ev.len() {
            if ev.dur_ns[i] <= 0 || profile.str(ev.name[i]) != wanted {
                continue;
            }
            let span = if track.key.is_gpu() {
                &mut gpu
            } else {
                &mut cpu
            };
            let (a, b) = (ev.start_ns[i], ev.end_ns(i));
            *span = Some(span.map_or((a, b), |(s, e)| (s.min(a), e.max(b))));
        }
    }
    gpu.or(cpu).map(|(s, e)| TimeRange::new(s, e))
}

/// Every step's range as [`step_range`] gives it, in one pass over the events (names are
/// looked at once per distinct name): `(N, range)` sorted by `N`.
pub fn step_ranges(profile: &Profile) -> Vec<(u64, TimeRange)> {
    // Per name id: its step number, if it is `ProfilerStep#N`.
    let mut number_of: FxHashMap<crate::StrId, Option<u64>> = FxHashMap::default();
    // N → (GPU span, CPU span).
    type Spans = (Option<(i64, i64)>, Option<(i64, i64)>);
    let mut spans: FxHashMap<u64, Spans> = FxHashMap::default();
    for track in &profile.tracks {
        let ev = &track.events;
        for i in 0..ev.len() {
            if ev.dur_ns[i] <= 0 {
                continue;
            }
            let id = ev.name[i];
            let Some(n) = *number_of
                .entry(id)
                .or_insert_with(|| profile.str(id).strip_prefix("ProfilerStep#")?.parse().ok())
            else {
                continue;
            };
            let entry = spans.entry(n).or_default();
            let span = if track.key.is_gpu() {
                &mut entry.0
            } else {
                &mut entry.1
            };
            let (a, b) = (ev.start_ns[i], ev.end_ns(i));
            *span = Some(span.map_or((a, b), |(s, e)| (s.min(a), e.max(b))));
        }
    }
    let mut out: Vec<(u64, TimeRange)> = spans
        .into_iter()
        .filter_map(|(n, (gpu, cpu))| gpu.or(cpu).map(|(s, e)| (n, TimeRange::new(s, e))))
        .collect();
    out.sort_unstable_by_key(|(n, _)| *n);
    out
}

fn stats(source: StepSource, ranges: impl Iterator<Item = (i64, i64)>) -> StepStats {
    let mut count = 0u64;
    let mut total_ns = 0i64;
    let mut min_ns = i64::MAX;
    let mut max_ns = i64::MIN;
    let mut first_start_ns = i64::MAX;
    let mut last_end_ns = i64::MIN;
    for (start, end) in ranges {
        let d = end - start;
        count += 1;
        total_ns += d;
        min_ns = min_ns.min(d);
        max_ns = max_ns.max(d);
        first_start_ns = first_start_ns.min(start);
        last_end_ns = last_end_ns.max(end);
    }
    StepStats {
        source,
        count,
        total_ns,
        mean_ns: total_ns / i64::try_from(count.max(1)).unwrap_or(i64::MAX),
        min_ns,
        max_ns,
        first_start_ns,
        last_end_ns,
        span_ns: last_end_ns - first_start_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProfileBuilder;
    use crate::model::{Format, GpuLane, TraceId, TrackKey};

    fn thread(b: &mut ProfileBuilder, tid: i64) -> crate::builder::TrackId {
        b.track(TrackKey::Thread {
            pid: TraceId::Int(1),
            tid: TraceId::Int(tid),
        })
    }

    #[test]
    fn profiler_steps_count_once_per_number_and_skip_gpu_copies() {
        let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
        let t1 = thread(&mut b, 1);
        let t2 = thread(&mut b, 2);
        let gpu = b.track(TrackKey::Gpu {
            device: 0,
            context: 1,
            stream: 7,
            lane: GpuLane::Annotations,
        });
        let s1 = b.intern("ProfilerStep#1");
        let s2 = b.intern("ProfilerStep#2");
        let nvtx = b.intern("step 9");
        b.push(t1, 0, 100, s1, EventKind::UserAnnotation);
        b.push(t1, 100, 300, s2, EventKind::UserAnnotation);
        b.push(t2, 90, 20, s1, EventKind::UserAnnotation); // same step, other thread: 0..110
        b.push(gpu, 5, 1000, s1, EventKind::GpuAnnotation);
        b.push(t1, 0, 50, nvtx, EventKind::Nvtx); // ignored: ProfilerStep wins
        let p = b.finish();
        let s = detect_steps(&p).unwrap();
        assert_eq!(s.source, StepSource::ProfilerStep);
        assert_eq!(s.count, 2);
        assert_eq!(s.total_ns, 110 + 300);
        assert_eq!(s.mean_ns, 205);
        assert_eq!((s.min_ns, s.max_ns), (110, 300));
        assert_eq!((s.first_start_ns, s.last_end_ns, s.span_ns), (0, 400, 400));
        // Step 1 has a GPU-side range, which wins; step 2 only its CPU one. One pass gives
        // what step_range gives per step.
        let all = step_ranges(&p);
        assert_eq!(
            all,
            [(1, TimeRange::new(5, 1005)), (2, TimeRange::new(100, 400))]
        );
        for (n, r) in all {
            assert_eq!(step_range(&p, n), Some(r));
        }
    }

    #[test]
    fn nvtx_steps_leave_out_nested_ones() {
        let mut b = ProfileBuilder::new("x.sqlite".into(), Format::NsysSqlite);
        let t = thread(&mut b, 1);
        let step = b.intern("train_step");
        let inner = b.intern("step");
        let other = b.intern("forward");
        b.push(t, 0, 100, step, EventKind::Nvtx);
        b.push(t, 10, 20, inner, EventKind::Nvtx); // nested in a step: not a step of its own
        b.push(t, 20, 5, other, EventKind::Nvtx);
        b.push(t, 150, 50, step, EventKind::Nvtx);
        let p = b.finish();
        let s = detect_steps(&p).unwrap();
        assert_eq!(s.source, StepSource::Annotation);
        assert_eq!(s.count, 2);
        assert_eq!(s.mean_ns, 75);
        assert_eq!(s.span_ns, 200);
    }

    #[test]
    fn no_steps() {
        let mut b = ProfileBuilder::new("x.json".into(), Format::ChromeJson);
        let t = thread(&mut b, 1);
        let op = b.intern("aten::mm");
        b.push(t, 0, 100, op, EventKind::CpuOp);
        assert_eq!(detect_steps(&b.finish()), None);
    }
}
