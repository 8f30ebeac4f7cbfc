//! The indexes against the scans they replace: random profiles with overlapping streams, long
//! events, zero and negative durations, and the real samples, over random ranges and ranges
//! whose edges fall on events' edges.

use super::*;
use crate::analysis::insight::activity::CoveredIndex;
use crate::analysis::insight::{AnalyzeOptions, device_activity};
use crate::analysis::{gpu_activities, gpu_busy_ns, gpu_total_ns};
use crate::builder::ProfileBuilder;
use crate::model::{CopyInfo, CopyKind, EventKind, Format, GpuLane, KernelInfo};
use crate::strings::StrId;

/// xorshift64: reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + i64::try_from(self.below(u64::try_from(hi - lo).unwrap_or(1))).unwrap_or(0)
    }
}

/// Rows in a canonical order (ties between rows of equal time and name are ordered by the
/// scan's hash map, which the index does not reproduce).
fn canonical(mut rows: Vec<ActivityRow>) -> Vec<ActivityRow> {
    rows.sort_by(|a, b| {
        b.stats
            .total_ns
            .cmp(&a.stats.total_ns)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.kind.cmp(&b.kind))
            .then_with(|| a.stats.calls.cmp(&b.stats.calls))
    });
    rows
}

fn check(profile: &Profile, index: &ActivityIndex, range: TimeRange) {
    let want = canonical(gpu_activities(profile, range));
    let got = canonical(index.gpu_activities(profile, range));
    assert_eq!(got.len(), want.len(), "{range:?}");
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w, "{range:?}");
    }
    assert_eq!(
        index.gpu_total_ns(profile, range),
        gpu_total_ns(profile, range),
        "{range:?}"
    );
    assert_eq!(
        index.gpu_busy_ns(profile, range),
        gpu_busy_ns(profile, range),
        "{range:?}"
    );
}

/// Two devices, three streams each, kernels of a few names overlapping across streams, long
/// kernels, instants, negative durations, copies of several kinds and sets.
fn random_profile(rng: &mut Rng, events: usize) -> Profile {
    let mut b = ProfileBuilder::new("random".into(), Format::ChromeJson);
    let names: Vec<StrId> = (0..6).map(|i| b.intern(&format!("k{i}"))).collect();
    let copy = b.intern("copy");
    let mut tracks = Vec::new();
    for device in 0..2 {
        for stream in 0..3 {
            tracks.push(b.track(TrackKey::Gpu {
                device,
                context: 1,
                stream,
                lane: GpuLane::Work,
            }));
        }
    }
    // An annotation lane: a GPU track with no GPU activity.
    let ann = b.track(TrackKey::Gpu {
        device: 2,
        context: 1,
        stream: 9,
        lane: GpuLane::Annotations,
    });
    b.push(ann, 5, 10, names[0], EventKind::GpuAnnotation);
    for _ in 0..events {
        let track = tracks[usize::try_from(rng.below(6)).unwrap_or(0)];
        let start = rng.range(0, 100_000);
        let dur = match rng.below(20) {
            0 => 0,
            1 => -rng.range(1, 50),
            2 => rng.range(10_000, 60_000),
            _ => rng.range(1, 400),
        };
        match rng.below(8) {
            0 => {
                let kind = [
                    CopyKind::HtoD,
                    CopyKind::DtoH,
                    CopyKind::DtoD,
                    CopyKind::Memset,
                ][usize::try_from(rng.below(4)).unwrap_or(0)];
                let info = CopyInfo {
                    kind,
                    bytes: Some(rng.below(1 << 20)),
                    src_kind: None,
                    dst_kind: None,
                    correlation: None,
                    external_id: None,
                };
                let ek = if kind == CopyKind::Memset {
                    EventKind::Memset
                } else {
                    EventKind::Memcpy
                };
                b.push_copy(track, start, dur, copy, ek, info, 0);
            }
            1 => b.push(track, start, dur, copy, EventKind::Memcpy),
            _ => {
                let name = names[usize::try_from(rng.below(6)).unwrap_or(0)];
                b.push_kernel(track, start, dur, name, KernelInfo::default(), 0);
            }
        }
    }
    b.origin_raw_ns = Some(0);
    b.finish()
}

/// Random ranges, ranges from one event's edge to another's, one-nanosecond ranges, and
/// ranges outside the run.
fn ranges(profile: &Profile, rng: &mut Rng, count: usize) -> Vec<TimeRange> {
    let (lo, hi) = profile.span_ns().unwrap_or((0, 1));
    let edges: Vec<i64> = profile
        .tracks
        .iter()
        .flat_map(|t| {
            let ev = &t.events;
            (0..ev.len()).flat_map(move |i| [ev.start_ns[i], ev.end_ns(i)])
        })
        .collect();
    let edge = |rng: &mut Rng| {
        let e = edges[usize::try_from(rng.below(edges.len() as u64)).unwrap_or(0)];
        e + rng.range(-1, 2)
    };
    let mut out = vec![
        TimeRange::new(lo - 100, hi + 100),
        TimeRange::new(lo, hi),
        TimeRange::new(hi + 10, hi + 20),
        TimeRange::new(lo - 20, lo - 10),
        TimeRange::new(i64::MIN, i64::MAX - 1),
    ];
    for k in 0..count {
        let r = match k % 4 {
            0 => {
                let a = rng.range(lo - 10, hi + 10);
                TimeRange::new(a, rng.range(a, hi + 20))
            }
            1 => TimeRange::new(edge(rng), edge(rng)),
            2 => {
                let a = edge(rng);
                TimeRange::new(a, a + 1)
            }
            _ => {
                let a = edge(rng);
                TimeRange::new(a, a + rng.range(1, 2_000))
            }
        };
        out.push(r);
    }
    out
}

#[test]
fn random_profiles_give_the_scans_numbers() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for events in [0, 1, 5, 60, 3_000] {
        let profile = random_profile(&mut rng, events);
        let index = ActivityIndex::new(&profile);
        check(&profile, &index, TimeRange::ALL);
        for r in ranges(&profile, &mut rng, 400) {
            check(&profile, &index, r);
        }
    }
}

#[test]
fn cover_index_matches_the_covered_index() {
    let mut rng = Rng(7);
    for n in [0usize, 1, 2, 50, 5_000] {
        let mut iv = Vec::new();
        let mut t = -1_000i64;
        for _ in 0..n {
            t += rng.range(1, 300);
            let e = t + rng.range(1, 300);
            iv.push((t, e));
            t = e;
        }
        let old = CoveredIndex::new(iv.clone());
        let new = CoverIndex::new(iv);
        for _ in 0..2_000 {
            let a = rng.range(-2_000, t + 1_000);
            let b = a + rng.range(0, 20_000);
            assert_eq!(new.covered_in(a, b), old.covered_in(a, b), "{a}..{b}");
        }
        let all = (i64::MIN / 4, i64::MAX / 4);
        assert_eq!(new.covered_in(all.0, all.1), old.covered_in(all.0, all.1));
    }
}

#[test]
fn buckets_bound_the_first_position_at_or_after_a_time() {
    let mut rng = Rng(11);
    let mut times: Vec<i64> = (0..3_000).map(|_| rng.range(-5_000, 5_000)).collect();
    // A burst and an outlier.
    times.extend(std::iter::repeat_n(17, 500));
    times.push(1 << 40);
    times.sort_unstable();
    for per in [1, 4, 64] {
        let b = TimeBuckets::new(times.len(), per, |i| times[i]);
        for t in (-6_000..6_000).chain([1 << 39, 1 << 40, (1 << 40) + 1, i64::MIN, i64::MAX]) {
            let want = times.partition_point(|&x| x < t);
            let (lo, hi) = b.window(t);
            assert!(lo <= want && want <= hi, "{t}: {want} not in {lo}..={hi}");
        }
    }
    // Unsorted times: the whole array.
    let b = TimeBuckets::new(3, 1, |i| [3, 1, 2][i]);
    assert_eq!(b.window(2), (0, 3));
}

/// On the real samples: the device activity's lanes and the activity table over random ranges.
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn real_samples_give_the_scans_numbers() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/samples");
    let mut rng = Rng(0x51_7cc1_b727_220a);
    for file in [
        "kineto-h100/resnet50_b32_60steps.pt.trace.json.gz",
        "kineto-h100/alexnet_b8.pt.trace.json.gz",
    ] {
        let path = dir.join(file);
        if !path.exists() {
            continue;
        }
        let profile = crate::import_file(&path, &crate::Progress::new()).expect("sample loads");
        let index = ActivityIndex::new(&profile);
        assert!(!index.is_empty());
        check(&profile, &index, TimeRange::ALL);
        for r in ranges(&profile, &mut rng, 300) {
            check(&profile, &index, r);
        }
        for act in device_activity(&profile, &AnalyzeOptions::default()) {
            let cover = ActivityCover::new(&act);
            let (lo, hi) = profile.span_ns().unwrap_or((0, 1));
            for _ in 0..2_000 {
                let a = rng.range(lo - 100, hi + 100);
                let b = a + rng.range(0, (hi - lo) / 50);
                assert_eq!(cover.time_in(a, b), act.time_in(a, b), "{a}..{b}");
            }
        }
    }
}
