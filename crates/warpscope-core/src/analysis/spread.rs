//! Tables worked out on all cores: the events of the tracks a table reads, in pieces
//! ([`crate::parallel::pieces`]), each piece summed on its own and the sums joined. Every table
//! that does this adds up values that do not depend on the order they come in (counts,
//! saturating sums of times that are never negative, lists of durations whose statistics are
//! those of the set), so the result is the one of a single pass.

use std::ops::Range;

use crate::model::{Profile, Track};
use crate::time::TimeRange;

/// Below this many events in the profile, everything runs on the calling thread (the viewer
/// asks again for every range dragged on its timeline).
#[cfg(not(test))]
pub(crate) const SMALL_PROFILE_EVENTS: usize = 1 << 16;
/// Unit tests work out tiny profiles on several threads too.
#[cfg(test)]
pub(crate) const SMALL_PROFILE_EVENTS: usize = 2;

/// `f(track, events)` for pieces of the events of the tracks `keep` selects that can touch
/// `range` ([`Track::candidates`]), on up to [`crate::parallel::threads`] threads; the results
/// in track order, then event order.
pub(crate) fn over_pieces<R: Send>(
    profile: &Profile,
    range: TimeRange,
    keep: impl Fn(&Track) -> bool,
    f: impl Fn(&Track, Range<usize>) -> R + Sync,
) -> Vec<R> {
    let spans: Vec<(&Track, Range<usize>)> = profile
        .tracks
        .iter()
        .filter(|t| keep(t))
        .map(|t| (t, t.candidates(&range)))
        .collect();
    let work = || {
        let lens: Vec<usize> = spans.iter().map(|(_, r)| r.len()).collect();
        let mut pieces = crate::parallel::pieces(&lens);
        crate::parallel::map_mut(
            &mut pieces,
            |(_, r)| r.len(),
            |(s, r)| {
                let (track, span) = &spans[*s];
                f(track, span.start + r.start..span.start + r.end)
            },
        )
    };
    if profile.event_count() < SMALL_PROFILE_EVENTS {
        crate::parallel::with_threads(1, work)
    } else {
        work()
    }
}

#[cfg(test)]
mod tests {
    use crate::analysis::{api_calls, copies_by_kind, gpu_activities};
    use crate::builder::ProfileBuilder;
    use crate::model::{
        ApiInfo, CopyInfo, CopyKind, EventKind, Format, GpuLane, KernelInfo, Profile, TraceId,
        TrackKey,
    };
    use crate::parallel::with_threads;
    use crate::time::TimeRange;

    /// Two CPU threads of 1500 API calls each (three names, one with a version suffix) and
    /// two streams of 1500 kernels (five names) and 300 copies; durations vary with the index.
    fn profile() -> Profile {
        let mut b = ProfileBuilder::new("spread.json".into(), Format::ChromeJson);
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
    fn tables_worked_out_in_pieces_are_those_of_one_pass() {
        let p = profile();
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
