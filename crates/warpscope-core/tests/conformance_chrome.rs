//! Conformance tests of the Chrome / Kineto / TensorFlow importer against the real samples in
//! `../shared/samples/{chrome-kineto,chrome-tensorflow,kineto-h100}`.
//!
//! Every figure marked "formats.md §9" is copied from `docs/formats.md` section 9 and
//! must be reproduced exactly. Figures marked "extra" were computed independently for this suite
//! with Python (`json` + `decimal`, durations as exact integer ns from the decimal text) from the
//! same files. Tests skip (pass with a note) when `../shared/samples` is absent.
//!
//! The 139 MB `resnet50_b32_60steps` trace is only read when `WARPSCOPE_SLOW_TESTS` is set.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

use warpscope_core::analysis::{
    self, ActivityKind, ActivityRow, copies_by_kind, gpu_activities, summary_report,
};
use warpscope_core::model::{EventKind, FlowKind, NO_PARENT, Profile, TrackKey};
use warpscope_core::{Progress, TimeRange, import_file};

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Warning codes that must never appear on the real, well-formed samples.
const MUST_NOT_WARN: &[&str] = &[
    "truncated",
    "bad_event_syntax",
    "non_object_event",
    "empty_event",
    "lenient_tokens",
    "invalid_utf8",
    "missing_ph",
    "missing_ts",
    "bad_ts",
    "bad_dur",
    "negative_dur",
    "unmatched_end",
    "unclosed_begin",
    "no_events",
    "bad_base_time",
    "bad_device_properties",
    "tf_unmatched",
];

fn warnings_text(p: &Profile) -> String {
    if p.warnings.is_empty() {
        return "no warnings".to_string();
    }
    p.warnings
        .iter()
        .map(|w| format!("  [{}] x{}: {}", w.code, w.count, w.message))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Loads a sample, failing with the error text; `None` when the samples are absent.
fn load_sample(rel: &str) -> Option<Profile> {
    let path = common::sample(rel)?;
    assert!(path.is_file(), "sample missing: {}", path.display());
    let p = import_file(&path, &Progress::new())
        .unwrap_or_else(|e| panic!("{rel}: import failed: {e}"));
    for w in &p.warnings {
        assert!(
            !MUST_NOT_WARN.contains(&w.code.as_str()) && !w.code.starts_with("bad_type_"),
            "{rel}: unexpected warning {:?}; all warnings:\n{}",
            w.code,
            warnings_text(&p)
        );
    }
    assert!(p.event_count() > 0, "{rel}: no events");
    Some(p)
}

/// Kernel rows of the GPU-activities table, as a user sees them.
fn kernel_rows(p: &Profile) -> Vec<ActivityRow> {
    gpu_activities(p, TimeRange::ALL)
        .into_iter()
        .filter(|r| r.kind == ActivityKind::Kernel)
        .collect()
}

/// (kind, calls, bytes, total_ns) of copies_by_kind, sorted by kind.
fn copy_rows(p: &Profile) -> BTreeMap<String, (u64, u64, i64)> {
    copies_by_kind(p, TimeRange::ALL)
        .into_iter()
        .map(|r| (r.kind.clone(), (r.calls, r.bytes, r.total_ns)))
        .collect()
}

/// Kernel count per (device, stream).
fn kernels_per_stream(p: &Profile) -> BTreeMap<(u32, u64), u64> {
    let mut m = BTreeMap::new();
    for t in &p.tracks {
        if let TrackKey::Gpu { device, stream, .. } = t.key {
            let n = t
                .events
                .kind
                .iter()
                .filter(|k| **k == EventKind::Kernel)
                .count() as u64;
            if n > 0 {
                *m.entry((device, stream)).or_default() += n;
            }
        }
    }
    m
}

/// What section 9 (or the extra Python check) says about one Kineto sample.
struct Expected<'a> {
    kernels: u64,
    distinct: usize,
    sum_ns: i64,
    /// (name, total ns, calls); empty = not checked.
    top3: &'a [(&'a str, i64, u64)],
    /// (kind, calls, bytes or None = not checked, ns or None = not checked), memset included
    /// as kind "Memset"; must be the complete list of copy kinds.
    copies: &'a [(&'a str, u64, Option<u64>, Option<i64>)],
    /// Kernels per (device, stream); must be complete.
    streams: &'a [((u32, u64), u64)],
}

fn check(rel: &str, p: &Profile, e: &Expected<'_>) {
    let ctx = || format!("{rel}; warnings:\n{}", warnings_text(p));
    let rows = kernel_rows(p);
    let calls: u64 = rows.iter().map(|r| r.stats.calls).sum();
    let sum: i64 = rows.iter().map(|r| r.stats.total_ns).sum();
    assert_eq!(calls, e.kernels, "kernel events, {}", ctx());
    assert_eq!(rows.len(), e.distinct, "distinct kernel names, {}", ctx());
    assert_eq!(sum, e.sum_ns, "summed kernel ns, {}", ctx());
    // The raw track view agrees with the table.
    assert_eq!(
        common::gpu_kind_totals(p, EventKind::Kernel),
        (e.kernels, e.sum_ns),
        "gpu_kind_totals(Kernel), {}",
        ctx()
    );
    for (i, (name, ns, n)) in e.top3.iter().enumerate() {
        let r = &rows[i];
        assert_eq!(
            (r.name.as_str(), r.stats.total_ns, r.stats.calls),
            (*name, *ns, *n),
            "top-{} kernel, {}",
            i + 1,
            ctx()
        );
    }
    let got = copy_rows(p);
    let want_kinds: BTreeSet<String> = e.copies.iter().map(|c| c.0.to_string()).collect();
    let got_kinds: BTreeSet<String> = got.keys().cloned().collect();
    assert_eq!(got_kinds, want_kinds, "copy kinds {got:?}, {}", ctx());
    for (kind, n, bytes, ns) in e.copies {
        let (gn, gb, gns) = got[*kind];
        assert_eq!(gn, *n, "{kind} count, {}", ctx());
        if let Some(b) = bytes {
            assert_eq!(gb, *b, "{kind} bytes, {}", ctx());
        }
        if let Some(t) = ns {
            assert_eq!(gns, *t, "{kind} ns, {}", ctx());
        }
    }
    let want_streams: BTreeMap<(u32, u64), u64> = e.streams.iter().copied().collect();
    assert_eq!(
        kernels_per_stream(p),
        want_streams,
        "kernels per (device, stream), {}",
        ctx()
    );
    let pairs: Vec<(u32, u64)> = want_streams.keys().copied().collect();
    assert_eq!(common::kernel_streams(p), pairs, "(device, stream) pairs");
}

fn zero_duration_kernels(p: &Profile) -> usize {
    p.tracks
        .iter()
        .filter(|t| t.key.is_gpu())
        .map(|t| {
            (0..t.events.len())
                .filter(|&i| t.events.kind[i] == EventKind::Kernel && t.events.dur_ns[i] == 0)
                .count()
        })
        .sum()
}

fn ms3(ns: i64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let ms = ns as f64 / 1e6;
    format!("{ms:.3}")
}

// ---------------------------------------------------------------------------------------------
// Every sample loads
// ---------------------------------------------------------------------------------------------

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn every_chrome_sample_loads_without_error() {
    let Some(root) = common::samples_dir() else {
        eprintln!("skipping: ../shared/samples not found");
        return;
    };
    let slow = std::env::var_os("WARPSCOPE_SLOW_TESTS").is_some();
    let mut seen = 0;
    for dir in ["chrome-kineto", "chrome-tensorflow", "kineto-h100"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with("resnet50_b32_60steps") && !slow {
                eprintln!("skipping {name} (set WARPSCOPE_SLOW_TESTS to include it)");
                continue;
            }
            let rel = format!("{dir}/{name}");
            let p = load_sample(&rel).unwrap();
            assert_eq!(p.source.format.as_str(), "chrome-json", "{rel}");
            assert_eq!(p.source.compressed, name.ends_with(".gz"), "{rel}");
            assert!(p.span_ns().is_some(), "{rel}: no span");
            // Every track is sorted by start and has its nesting columns.
            for t in &p.tracks {
                let ev = &t.events;
                assert!(
                    ev.start_ns.windows(2).all(|w| w[0] <= w[1]),
                    "{rel}: track {} not sorted",
                    t.name
                );
                assert_eq!(ev.depth.len(), ev.len(), "{rel}");
                assert_eq!(ev.parent.len(), ev.len(), "{rel}");
                assert!(ev.dur_ns.iter().all(|&d| d >= 0), "{rel}: negative dur");
            }
            // Flows point at real events.
            for f in &p.flows {
                for r in [f.from, f.to] {
                    let t = &p.tracks[r.track as usize];
                    assert!((r.index as usize) < t.events.len(), "{rel}: dangling flow");
                }
            }
            seen += 1;
        }
    }
    assert!(seen >= 19, "expected at least 19 samples, saw {seen}");
}

/// warpscope's own gzip reader gives every compressed sample byte for byte as `flate2`'s
/// decoder does, whether read in blocks appended to a buffer (as the Chrome importer reads) or
/// through `Read` in odd sizes (as the format sniffer and the nvprof importer read).
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn every_gzip_sample_decompresses_to_the_same_bytes_as_flate2() {
    use warpscope_core::import::read::{AppendRead, Gunzip};
    let Some(root) = common::samples_dir() else {
        eprintln!("skipping: ../shared/samples not found");
        return;
    };
    let slow = std::env::var_os("WARPSCOPE_SLOW_TESTS").is_some();
    let mut seen = 0;
    for dir in std::fs::read_dir(&root).unwrap() {
        let dir = dir.unwrap().path();
        if !dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            if !name.ends_with(".gz") || (name.starts_with("resnet50_b32_60steps") && !slow) {
                continue;
            }
            let gz = std::fs::read(&f).unwrap();
            let mut expected = Vec::new();
            flate2::read::MultiGzDecoder::new(&gz[..])
                .read_to_end(&mut expected)
                .unwrap();
            let mut appended = Vec::new();
            let mut g = Gunzip::new(&gz[..]);
            while g.append(&mut appended, 1 << 20).unwrap() > 0 {}
            assert!(appended == expected, "{name}: appended blocks differ");
            let mut read = Vec::new();
            let mut g = Gunzip::new(&gz[..]);
            let mut buf = vec![0u8; 65_521];
            loop {
                match g.read(&mut buf).unwrap() {
                    0 => break,
                    n => read.extend_from_slice(&buf[..n]),
                }
            }
            assert!(read == expected, "{name}: reads differ");
            seen += 1;
        }
    }
    assert!(seen >= 15, "expected at least 15 gzip samples, saw {seen}");
}

// ---------------------------------------------------------------------------------------------
// chrome-kineto: formats.md §9
// ---------------------------------------------------------------------------------------------

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nccl_rank0_matches_formats_md() {
    let rel = "chrome-kineto/hta_a100_ddp2_nccl_rank0.json.gz";
    let Some(p) = load_sample(rel) else { return };
    check(
        rel,
        &p,
        &Expected {
            kernels: 2700,
            distinct: 70,
            sum_ns: 162_532_340,
            top3: &[
                (
                    "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
                    46_762_159,
                    15,
                ),
                (
                    "void cudnn::ops::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>(cudnn::ops::nchw2nhwc_params_t<float>, float const*, float*)",
                    12_616_974,
                    474,
                ),
                (
                    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
                    9_592_287,
                    33,
                ),
            ],
            copies: &[
                ("DtoD", 960, Some(307_323_096), Some(2_262_781)),
                // bytes: extra (Python).
                ("Memset", 114, Some(409_141_005), Some(390_717)),
            ],
            streams: &[((0, 7), 2679), ((0, 40), 21)],
        },
    );
    assert_eq!(zero_duration_kernels(&p), 0, "none zero-duration");
    // Earliest ts 4458676388068.751 relative to baseTimeNanoseconds (which comes after
    // traceEvents in this file).
    assert_eq!(p.origin.unix_ns, Some(1_716_423_322_388_068_751));
    let d = p.distributed.as_ref().expect("distributedInfo");
    assert_eq!(d.backend.as_deref(), Some("nccl"));
    assert_eq!(d.rank, Some(0));
    assert_eq!(d.world_size, Some(2));
    assert!(!p.devices.is_empty(), "deviceProperties read");
    // Pitfall 36: 8 or 16 GPU processes declared, one used: no empty tracks.
    assert!(
        p.tracks.iter().all(|t| !t.events.is_empty()),
        "empty track kept"
    );
    // Pitfall 37: the lone flow ends are normal and not reported as an error.
    assert!(
        !p.warnings.iter().any(|w| w.code.contains("flow")),
        "orphan flow ends reported:\n{}",
        warnings_text(&p)
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn kineto2021_matches_formats_md() {
    let rel = "chrome-kineto/kineto2021_v100_resnet50_worker0.pt.trace.json.gz";
    let Some(p) = load_sample(rel) else { return };
    check(
        rel,
        &p,
        &Expected {
            kernels: 8772,
            distinct: 67,
            sum_ns: 591_532_000,
            top3: &[
                (
                    "void cudnn::detail::dgrad_engine<float, 512, 6, 5, 3, 3, 3, false>(int, int, int, float const*, int, float const*, int, float*, kernel_grad_params, unsigned long long, int, unsigned long long, int, float, int, int, int)",
                    80_756_000,
                    162,
                ),
                (
                    "void cudnn::cnn::wgrad_alg0_engine<float, 128, 6, 7, 3, 3, 5, false, 512>(int, int, int, float const*, int, float*, float const*, kernel_grad_params, unsigned long long, int, float, int, int, int, int)",
                    66_472_000,
                    156,
                ),
                (
                    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
                    59_642_000,
                    264,
                ),
            ],
            copies: &[
                ("HtoD", 12, Some(115_607_040), Some(11_492_000)),
                // bytes: extra (Python).
                ("Memset", 312, Some(366_475_920), Some(534_000)),
            ],
            // pid 0, tid "stream 7" (args.stream 7).
            streams: &[((0, 7), 8772)],
        },
    );
    assert_eq!(zero_duration_kernels(&p), 636, "zero-duration kernels kept");
    let launches = p
        .flows
        .iter()
        .filter(|f| f.kind == FlowKind::Launch)
        .count();
    assert_eq!(
        launches, 9096,
        "launch links (9096 s + 9096 f, all matched)"
    );
    // Every launch goes from a CPU runtime call to GPU work.
    for f in p.flows.iter().filter(|f| f.kind == FlowKind::Launch) {
        let from = &p.tracks[f.from.track as usize];
        let to = &p.tracks[f.to.track as usize];
        assert_eq!(from.events.kind[f.from.index as usize], EventKind::Runtime);
        assert!(to.events.kind[f.to.index as usize].is_gpu_activity());
    }
    // Pitfall 35: the CPU thread is "25738" for slices and 25738 for instants/flows: one track.
    let threads_25738 = p
        .tracks
        .iter()
        .filter(|t| matches!(t.key, TrackKey::Thread { tid, .. } if p.id_text(tid) == "25738"))
        .count();
    assert_eq!(threads_25738, 1, "string and integer tid 25738 merged");
    // Absolute epoch µs: the origin is the earliest event.
    let origin = p.origin.unix_ns.expect("epoch origin");
    assert_eq!(origin % 1000, 0, "integer µs");
    assert!(origin > 1_623_000_000_000_000_000 && origin < 1_624_000_000_000_000_000);
}

// ---------------------------------------------------------------------------------------------
// chrome-kineto: the other samples (extra, Python-computed)
// ---------------------------------------------------------------------------------------------

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn kineto2022_async_cpu_to_gpu_counts() {
    let rel = "chrome-kineto/hta_a100_2022_rank3of8_async_cpu_to_gpu.json.gz";
    let Some(p) = load_sample(rel) else { return };
    check(
        rel,
        &p,
        &Expected {
            kernels: 8568,
            distinct: 170,
            sum_ns: 446_813_000,
            top3: &[],
            copies: &[
                ("DtoD", 18, Some(1_821_299_360), Some(2_735_000)),
                ("DtoH", 60, Some(100_896), Some(107_000)),
                ("HtoD", 150, Some(423_923_260), Some(50_656_000)),
                ("Memset", 654, Some(76_353_248), Some(1_256_000)),
            ],
            streams: &[((3, 7), 8298), ((3, 20), 210), ((3, 21), 60)],
        },
    );
    let rows = kernel_rows(&p);
    assert_eq!(
        (
            rows[0].name.as_str(),
            rows[0].stats.total_ns,
            rows[0].stats.calls
        ),
        (
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)",
            130_655_000,
            42
        )
    );
    // Pitfall 39: 60 runtime events named "INVALID" (cbid 409) are named from the cbid.
    let invalid = api_named(&p, "INVALID");
    assert_eq!(invalid, 0, "runtime calls still named INVALID");
    assert_eq!(api_named(&p, "cudaStreamGetCaptureInfo_v2"), 60);
    let w = p
        .warnings
        .iter()
        .find(|w| w.code == "invalid_api_name")
        .unwrap_or_else(|| panic!("no invalid_api_name warning:\n{}", warnings_text(&p)));
    assert_eq!(w.count, 60);
    assert_eq!(zero_duration_kernels(&p), 0);
}

fn api_named(p: &Profile, name: &str) -> usize {
    p.tracks
        .iter()
        .map(|t| {
            (0..t.events.len())
                .filter(|&i| t.events.kind[i].is_api() && p.str(t.events.name[i]) == name)
                .count()
        })
        .sum()
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn ns_resolution_sample_counts_and_origin() {
    let rel = "chrome-kineto/hta_v100_ns_resolution_rank-0.pt.trace.json.gz";
    let Some(p) = load_sample(rel) else { return };
    check(
        rel,
        &p,
        &Expected {
            kernels: 4350,
            distinct: 77,
            sum_ns: 468_153_602,
            top3: &[],
            copies: &[
                ("DtoD", 1600, Some(512_205_160), Some(3_715_404)),
                ("Memset", 145, Some(287_705_000), Some(585_435)),
            ],
            streams: &[((0, 7), 4350)],
        },
    );
    // Absolute epoch µs with 3 decimals, no baseTimeNanoseconds: the origin keeps its ns digits.
    let origin = p.origin.unix_ns.expect("epoch origin");
    assert!(origin > 1_712_000_000_000_000_000 && origin < 1_713_000_000_000_000_000);
}

/// Pitfall 31: with exact decimal parsing no `X` event of the ns-resolution sample partially
/// overlaps another on its thread (through f64, 785 events would).
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn ns_resolution_sample_nests_exactly_on_cpu_threads() {
    let rel = "chrome-kineto/hta_v100_ns_resolution_rank-0.pt.trace.json.gz";
    let Some(p) = load_sample(rel) else { return };
    let mut checked = 0usize;
    let mut bad = Vec::new();
    for t in p
        .tracks
        .iter()
        .filter(|t| matches!(t.key, TrackKey::Thread { .. }))
    {
        let ev = &t.events;
        for i in 0..ev.len() {
            let parent = ev.parent[i];
            if parent == NO_PARENT {
                continue;
            }
            checked += 1;
            let parent = parent as usize;
            assert!(parent < i, "parent after child");
            if ev.end_ns(i) > ev.end_ns(parent) {
                bad.push(format!(
                    "{}: {:?} [{}, {}] inside {:?} [{}, {}]",
                    t.name,
                    p.str(ev.name[i]),
                    ev.start_ns[i],
                    ev.end_ns(i),
                    p.str(ev.name[parent]),
                    ev.start_ns[parent],
                    ev.end_ns(parent)
                ));
            }
        }
    }
    assert!(checked > 10_000, "only {checked} nested events");
    assert_eq!(cpu_partial_overlaps(&p), 0, "partially overlapping events");
    assert!(
        bad.is_empty(),
        "{} partial overlaps, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(5)]
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn world128_samples_counts() {
    // `dur` written as `68.0` with integer `ts` (pitfall 30).
    let cases: [(&str, Expected<'_>); 2] = [
        (
            "chrome-kineto/hta_world128_sampled_rank-0.json.gz",
            Expected {
                kernels: 1154,
                distinct: 194,
                sum_ns: 606_519_000,
                top3: &[],
                copies: &[
                    ("DtoD", 8, Some(209_194_904), Some(404_000)),
                    ("DtoH", 8, Some(6115), Some(16_000)),
                    ("HtoD", 24, Some(4_866_112), Some(877_000)),
                    ("Memset", 10, Some(8_030_732), Some(28_000)),
                ],
                streams: &[((0, 7), 1036), ((0, 23), 108), ((0, 84), 8), ((0, 203), 2)],
            },
        ),
        (
            "chrome-kineto/hta_world128_sampled_rank-1.json.gz",
            Expected {
                kernels: 1104,
                distinct: 183,
                sum_ns: 651_026_000,
                top3: &[],
                copies: &[
                    ("DtoD", 8, Some(3_298_965_512), Some(4_327_000)),
                    ("DtoH", 8, Some(2396), Some(16_000)),
                    ("HtoD", 24, Some(63_474_164), Some(12_130_000)),
                    ("Memset", 10, Some(856), Some(31_000)),
                ],
                streams: &[((1, 7), 986), ((1, 23), 108), ((1, 84), 8), ((1, 203), 2)],
            },
        ),
    ];
    for (rel, e) in &cases {
        let Some(p) = load_sample(rel) else { return };
        check(rel, &p, e);
    }
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn small_kineto_samples_counts() {
    let cases: [(&str, Expected<'_>); 4] = [
        (
            "chrome-kineto/hta_a100_triton_example.json.gz",
            Expected {
                kernels: 1,
                distinct: 1,
                sum_ns: 1760,
                top3: &[("triton_poi_fused_add_cos_sin_0", 1760, 1)],
                copies: &[],
                streams: &[((0, 7), 1)],
            },
        ),
        (
            // ROCm: pid 2 = HIP device, tid 0.
            "chrome-kineto/hta_mi250_rocm6.2_minitoy.json.gz",
            Expected {
                kernels: 14,
                distinct: 12,
                sum_ns: 110_881,
                top3: &[],
                copies: &[("HtoD", 2, None, Some(38_161))],
                streams: &[((2, 0), 14)],
            },
        ),
        (
            "chrome-kineto/tracelens_b200_world8_eager_no_metadata.json.gz",
            Expected {
                kernels: 768,
                distinct: 29,
                sum_ns: 10_862_916,
                top3: &[],
                copies: &[
                    ("DtoD", 146, Some(771_323_904), Some(781_500)),
                    ("HtoD", 15, Some(33_109), Some(21_344)),
                ],
                streams: &[((0, 7), 768)],
            },
        ),
        (
            "chrome-kineto/tracelens_h100_bert-small_with_stack.json.gz",
            Expected {
                kernels: 60,
                distinct: 11,
                sum_ns: 307_197,
                top3: &[],
                copies: &[("DtoH", 1, Some(1), Some(2240))],
                streams: &[((0, 7), 60)],
            },
        ),
    ];
    for (rel, e) in &cases {
        let Some(p) = load_sample(rel) else { return };
        check(rel, &p, e);
    }
}

/// Pitfall 35: in the BERT sample 5 `python_function` events sit on pid 0 / tid 0, next to
/// GPU 0's stream 7: they stay on a CPU thread track and the kernels on the GPU track.
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn bert_python_functions_on_pid0_stay_on_a_thread_track() {
    let rel = "chrome-kineto/tracelens_h100_bert-small_with_stack.json.gz";
    let Some(p) = load_sample(rel) else { return };
    for t in &p.tracks {
        for &k in &t.events.kind {
            if t.key.is_gpu() {
                assert!(
                    k != EventKind::PythonFunction,
                    "python_function on a GPU track"
                );
            } else {
                assert!(!k.is_gpu_activity(), "GPU work on track {}", t.name);
            }
        }
    }
    let on_pid0_tid0 = p
        .tracks
        .iter()
        .find(|t| {
            matches!(t.key, TrackKey::Thread { pid, tid }
                if p.id_text(pid) == "0" && p.id_text(tid) == "0")
        })
        .expect("thread track pid 0 / tid 0");
    assert!(
        on_pid0_tid0
            .events
            .kind
            .iter()
            .all(|k| *k == EventKind::PythonFunction)
    );
    assert_eq!(on_pid0_tid0.events.len(), 5);
}

/// Pitfall 33/34: partial overlaps on one CPU thread and on one GPU stream are all kept, on
/// extra rows, and GPU totals are unaffected.
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn tracelens_b200_overlaps_are_kept_on_extra_rows() {
    let rel = "chrome-kineto/tracelens_b200_world8_eager_no_metadata.json.gz";
    let Some(p) = load_sample(rel) else { return };
    let gpu = p
        .tracks
        .iter()
        .find(|t| matches!(t.key, TrackKey::Gpu { stream: 7, .. }) && t.events.len() > 100)
        .expect("stream 7");
    // 74 kernels start before the previous one on the same stream ends.
    let mut overlapping = 0;
    let mut last_end = i64::MIN;
    for i in 0..gpu.events.len() {
        if gpu.events.kind[i] != EventKind::Kernel {
            continue;
        }
        if gpu.events.start_ns[i] < last_end {
            overlapping += 1;
            assert!(gpu.events.depth[i] > 0, "overlapping kernel on row 0");
        }
        last_end = last_end.max(gpu.events.end_ns(i));
    }
    assert_eq!(overlapping, 74);
    assert!(gpu.max_depth >= 2);
}

/// Events on CPU thread tracks that start strictly inside another event of the same track and
/// end after it (formats.md pitfall 33's definition), found with a sweep over the sorted
/// events; each must sit below row 0.
fn cpu_partial_overlaps(p: &Profile) -> usize {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut n = 0;
    for t in p
        .tracks
        .iter()
        .filter(|t| matches!(t.key, TrackKey::Thread { .. }))
    {
        let ev = &t.events;
        let mut ends: BinaryHeap<Reverse<i64>> = BinaryHeap::new();
        let mut i = 0;
        while i < ev.len() {
            let start = ev.start_ns[i];
            let mut j = i;
            while j < ev.len() && ev.start_ns[j] == start {
                j += 1;
            }
            while ends.peek().is_some_and(|e| e.0 <= start) {
                ends.pop();
            }
            for k in i..j {
                if ends.peek().is_some_and(|e| e.0 < ev.end_ns(k)) {
                    n += 1;
                    assert!(ev.depth[k] > 0, "{}: partial overlap on row 0", t.name);
                }
            }
            for k in i..j {
                ends.push(Reverse(ev.end_ns(k)));
            }
            i = j;
        }
    }
    n
}

/// Kernels that start before the previous kernel on the same stream has ended.
fn gpu_kernel_overlaps(p: &Profile) -> usize {
    let mut n = 0;
    for t in p.tracks.iter().filter(|t| t.key.is_gpu()) {
        let mut last_end = i64::MIN;
        for i in 0..t.events.len() {
            if t.events.kind[i] != EventKind::Kernel {
                continue;
            }
            if t.events.start_ns[i] < last_end {
                n += 1;
                assert!(
                    t.events.depth[i] > 0,
                    "{}: overlapping kernel on row 0",
                    t.name
                );
            }
            last_end = last_end.max(t.events.end_ns(i));
        }
    }
    n
}

/// Pitfall 33: real partial overlaps on one CPU thread, 13 events in the B200 sample and 5 in
/// the H100 BERT sample; they are kept (one row deeper), not dropped or clipped away.
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn cpu_partial_overlaps_are_kept() {
    for (rel, want) in [
        (
            "chrome-kineto/tracelens_b200_world8_eager_no_metadata.json.gz",
            13,
        ),
        (
            "chrome-kineto/tracelens_h100_bert-small_with_stack.json.gz",
            5,
        ),
    ] {
        let Some(p) = load_sample(rel) else { return };
        assert_eq!(cpu_partial_overlaps(&p), want, "{rel}");
    }
}

/// Pitfall 34: overlapping kernels on one GPU stream.
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn gpu_kernel_overlaps_are_kept() {
    let slow = std::env::var_os("WARPSCOPE_SLOW_TESTS").is_some();
    for (rel, want) in [
        ("kineto-h100/resnet50_b64_fp32.pt.trace.json.gz", 20),
        ("kineto-h100/resnet50_b64_amp.pt.trace.json.gz", 6),
        ("kineto-h100/resnet50_b32_60steps.pt.trace.json.gz", 587),
        (
            "chrome-kineto/hta_v100_ns_resolution_rank-0.pt.trace.json.gz",
            0,
        ),
        ("chrome-kineto/hta_a100_ddp2_nccl_rank0.json.gz", 0),
        ("chrome-kineto/hta_mi250_rocm6.2_minitoy.json.gz", 0),
    ] {
        if rel.contains("60steps") && !slow {
            continue;
        }
        let Some(p) = load_sample(rel) else { return };
        assert_eq!(gpu_kernel_overlaps(&p), want, "{rel}");
    }
}

// ---------------------------------------------------------------------------------------------
// kineto-h100
// ---------------------------------------------------------------------------------------------

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn resnet50_fp32_and_amp_match_formats_md() {
    let fp32 = "kineto-h100/resnet50_b64_fp32.pt.trace.json.gz";
    let Some(p) = load_sample(fp32) else { return };
    check(
        fp32,
        &p,
        &Expected {
            kernels: 1488,
            distinct: 75,
            sum_ns: 72_331_030,
            top3: &[
                (
                    "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, float const*, cudnnTensorStruct, float const*, cudnnTensorStruct, float*, float const*, float*, float*, float const*, float const*, float)",
                    7_980_813,
                    22,
                ),
                (
                    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
                    5_480_588,
                    64,
                ),
                (
                    "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, float*)",
                    5_040_173,
                    270,
                ),
            ],
            copies: &[
                ("HtoD", 4, Some(77_071_360), Some(10_527_344)),
                ("DtoH", 2, Some(8), Some(4256)),
                ("Memset", 114, None, Some(132_100)),
            ],
            streams: &[((0, 7), 1488)],
        },
    );
    let amp = "kineto-h100/resnet50_b64_amp.pt.trace.json.gz";
    let Some(p) = load_sample(amp) else { return };
    check(
        amp,
        &p,
        &Expected {
            kernels: 1679,
            distinct: 88,
            sum_ns: 47_353_922,
            top3: &[
                (
                    "void cudnn::bn_bw_1C11_kernel_new<__half, float, float2, 128, true, 1>(float, float, float, float, cudnnTensorStruct, __half const*, cudnnTensorStruct, __half const*, cudnnTensorStruct, __half*, float const*, float*, float*, float const*, float const*, float)",
                    6_975_908,
                    22,
                ),
                (
                    "void cudnn::engines_precompiled::nchwToNhwcKernel<__half, __half, float, false, true, (cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __half const*, __half*)",
                    4_987_087,
                    316,
                ),
                (
                    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<__half, float, int, 128, true, 1, true>(cudnnTensorStruct, __half const*, cudnnTensorStruct, __half*, float const*, float const*, float, float, float*, float*, float*, float*, float, float)",
                    3_677_077,
                    22,
                ),
            ],
            copies: &[
                ("HtoD", 4, Some(77_071_360), Some(10_131_276)),
                ("DtoH", 4, Some(16), Some(7745)),
                ("DtoD", 165, Some(102_228_144), Some(290_371)),
                ("Memset", 110, None, Some(119_736)),
            ],
            streams: &[((0, 7), 1679)],
        },
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn alexnet_sweep_matches_formats_md() {
    // (file, kernels, summed ns, distinct names, memsets); memcpy HtoD 4, DtoH 2 each.
    let cases = [
        ("alexnet_b8", 260, 3_877_978, 44, 8),
        ("alexnet_b16", 256, 5_004_726, 48, 12),
        ("alexnet_b32", 268, 6_458_354, 44, 14),
        ("alexnet_b128", 266, 15_465_240, 43, 28),
    ];
    for (stem, kernels, sum_ns, distinct, memsets) in cases {
        let rel = format!("kineto-h100/{stem}.pt.trace.json.gz");
        let Some(p) = load_sample(&rel) else { return };
        check(
            &rel,
            &p,
            &Expected {
                kernels,
                distinct,
                sum_ns,
                top3: &[],
                copies: &[
                    ("HtoD", 4, None, None),
                    ("DtoH", 2, None, None),
                    ("Memset", memsets, None, None),
                ],
                streams: &[((0, 7), kernels)],
            },
        );
    }
}

/// `gpu_total_ns` equals PyTorch's "Self CUDA time total" for the same run (printed in ms with
/// 3 decimals); the exact ns values are pinned as observed (and checked independently with
/// Python: kernels + memcpy + memset, exact decimal µs → ns).
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn gpu_total_equals_pytorch_self_cuda_time_total() {
    let cases = [
        ("alexnet_b8", "4.871", 4_870_889),
        ("alexnet_b16", "7.206", 7_206_323),
        ("alexnet_b32", "11.593", 11_593_018),
        ("alexnet_b128", "39.869", 39_868_961),
        ("resnet50_b64_fp32", "82.995", 82_994_730),
        ("resnet50_b64_amp", "57.903", 57_903_050),
    ];
    for (stem, ms, ns) in cases {
        let rel = format!("kineto-h100/{stem}.pt.trace.json.gz");
        let Some(p) = load_sample(&rel) else { return };
        let total = analysis::gpu_total_ns(&p, TimeRange::ALL);
        assert_eq!(ms3(total), ms, "{rel}: {total} ns");
        assert_eq!(total, ns, "{rel}");
        let report = summary_report(&p, TimeRange::ALL, Some(5));
        assert_eq!(
            report.gpu_total_ns, ns,
            "{rel}: summary_report with --top 5"
        );
        let report = summary_report(&p, TimeRange::ALL, None);
        assert_eq!(report.gpu_total_ns, ns, "{rel}: summary_report");
        assert_eq!(report.source.format, "chrome-json");
        assert_eq!(report.source.tool, "PyTorch profiler (Kineto)");
        // The GPU-activities table adds up to the same total.
        let rows = gpu_activities(&p, TimeRange::ALL);
        assert_eq!(rows.iter().map(|r| r.stats.total_ns).sum::<i64>(), ns);
        let pct: f64 = rows.iter().map(|r| r.time_pct).sum();
        assert!((pct - 100.0).abs() < 1e-6, "{rel}: Time(%) sums to {pct}");
    }
}

/// Pitfall 36: the same (pid, tid) gets two different `thread_name`s in the kineto-h100 traces;
/// both names are kept and neither has trailing spaces.
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn h100_thread_names_are_merged_and_trimmed() {
    let rel = "kineto-h100/alexnet_b8.pt.trace.json.gz";
    let Some(p) = load_sample(rel) else { return };
    let merged = p
        .tracks
        .iter()
        .find(|t| t.name.contains("(python3)") && t.name.contains("(pt_autograd_0)"));
    assert!(
        merged.is_some(),
        "no track carries both thread names; tracks: {:?}",
        p.tracks.iter().map(|t| &t.name).collect::<Vec<_>>()
    );
    for t in &p.tracks {
        assert_eq!(t.name, t.name.trim(), "untrimmed track name {:?}", t.name);
    }
    let gpu: Vec<&str> = p
        .tracks
        .iter()
        .filter(|t| t.key.is_gpu())
        .map(|t| t.name.as_str())
        .collect();
    assert!(gpu.contains(&"stream 7"), "GPU tracks: {gpu:?}");
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn resnet50_b32_60steps_counts_slow() {
    if std::env::var_os("WARPSCOPE_SLOW_TESTS").is_none() {
        eprintln!("skipping resnet50_b32_60steps (set WARPSCOPE_SLOW_TESTS to run)");
        return;
    }
    let rel = "kineto-h100/resnet50_b32_60steps.pt.trace.json.gz";
    let Some(p) = load_sample(rel) else { return };
    check(
        rel,
        &p,
        &Expected {
            kernels: 43_754,
            distinct: 75,
            sum_ns: 1_157_395_560,
            top3: &[],
            copies: &[("Memset", 1562, None, None)],
            streams: &[((0, 7), 43_754)],
        },
    );
}

// ---------------------------------------------------------------------------------------------
// chrome-tensorflow
// ---------------------------------------------------------------------------------------------

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn tf1_mnistxla_matches_formats_md() {
    let rel = "chrome-tensorflow/tf1_mnistxla_gpu_timeline.ctf.json";
    let Some(p) = load_sample(rel) else { return };
    assert_eq!(p.source.tool, "TensorFlow 1.x timeline");
    assert_eq!(
        common::gpu_kind_totals(&p, EventKind::Kernel),
        (83, 12_472_000),
        "kernels; warnings:\n{}",
        warnings_text(&p)
    );
    assert_eq!(
        common::gpu_kind_totals(&p, EventKind::Memcpy),
        (11, 150_000)
    );
    let rows = kernel_rows(&p);
    let top: Vec<(&str, i64, u64)> = rows
        .iter()
        .take(3)
        .map(|r| (r.name.as_str(), r.stats.total_ns, r.stats.calls))
        .collect();
    assert_eq!(
        top,
        vec![
            ("Conv2DBackpropFilter", 2_961_000, 7),
            ("Conv2D", 1_727_000, 6),
            ("Conv2DBackpropInput", 1_723_000, 4),
        ]
    );
    let copies = copy_rows(&p);
    let kinds: Vec<(&str, u64)> = copies.iter().map(|(k, v)| (k.as_str(), v.0)).collect();
    assert_eq!(kinds, vec![("DtoD", 8), ("DtoH", 1), ("HtoD", 2)]);
    assert_eq!(copies.values().map(|v| v.2).sum::<i64>(), 150_000);
    // Copies sit on their streams: DtoD on 29, HtoD on 14, DtoH on 15.
    let mut copy_streams = BTreeMap::new();
    for t in &p.tracks {
        if let TrackKey::Gpu { stream, .. } = t.key {
            for i in 0..t.events.len() {
                if t.events.kind[i] == EventKind::Memcpy {
                    *copy_streams
                        .entry((p.str(t.events.name[i]).to_string(), stream))
                        .or_insert(0) += 1;
                }
            }
        }
    }
    let want: BTreeMap<(String, u64), i32> = [
        (("MEMCPYDtoD".to_string(), 29), 8),
        (("MEMCPYDtoH".to_string(), 15), 1),
        (("MEMCPYHtoD".to_string(), 14), 2),
    ]
    .into_iter()
    .collect();
    assert_eq!(copy_streams, want);
    assert_eq!(common::kernel_streams(&p), vec![(0, 13)]);
    // 4 GPU lanes in all: streams 13, 14, 15, 29; stream:all and memcpy pids are dropped.
    let lanes: BTreeSet<(u32, u64)> = p
        .tracks
        .iter()
        .filter_map(|t| match t.key {
            TrackKey::Gpu { device, stream, .. } => Some((device, stream)),
            _ => None,
        })
        .collect();
    assert_eq!(
        lanes,
        [(0, 13), (0, 14), (0, 15), (0, 29)].into_iter().collect()
    );
    for t in &p.tracks {
        if let TrackKey::Thread { pid, .. } = t.key {
            let name = p.process_name(pid).unwrap_or("");
            assert!(
                !name.contains("stream:all") && !name.contains("/memcpy "),
                "duplicate TF lane kept: {name} / {}",
                t.name
            );
            assert!(
                !name.contains("/stream:"),
                "per-stream pid left as thread: {name}"
            );
        }
    }
    // 94 per-stream events in all, counted once.
    assert_eq!(
        analysis::gpu_total_ns(&p, TimeRange::ALL),
        12_472_000 + 150_000
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn tf1_deepconn_copies_named_after_ops_are_memcpy() {
    // Extra (Python): 118 kernels on stream 13 (8 932 000 ns); 14 copies classified by the
    // memcpy pid, 8 of them named after the op (Assign 4, MatMul 2, ConcatV2 2).
    let rel = "chrome-tensorflow/tf1_dlprof_deepconn_feeddict_timeline_01.json";
    let Some(p) = load_sample(rel) else { return };
    assert_eq!(
        common::gpu_kind_totals(&p, EventKind::Kernel),
        (118, 8_932_000)
    );
    assert_eq!(common::gpu_kind_totals(&p, EventKind::Memcpy), (14, 81_000));
    let mut names = BTreeMap::new();
    for t in p.tracks.iter().filter(|t| t.key.is_gpu()) {
        for i in 0..t.events.len() {
            if t.events.kind[i] == EventKind::Memcpy {
                *names
                    .entry(p.str(t.events.name[i]).to_string())
                    .or_insert(0) += 1;
            }
        }
    }
    let want: BTreeMap<String, i32> = [
        ("Assign", 4),
        ("ConcatV2", 2),
        ("MEMCPYDtoH", 1),
        ("MEMCPYHtoD", 5),
        ("MatMul", 2),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(names, want);
    assert_eq!(common::kernel_streams(&p), vec![(0, 13)]);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn tf1_without_stream_lanes_warns() {
    let rel = "chrome-tensorflow/tf1_dlprof_mnist_xla_timeline.ctf.json";
    let Some(p) = load_sample(rel) else { return };
    assert_eq!(p.source.tool, "TensorFlow 1.x timeline");
    assert!(p.tracks.iter().all(|t| !t.key.is_gpu()));
    let w = p.warnings.iter().find(|w| w.code == "tf_no_streams");
    assert_eq!(w.map(|w| w.count), Some(1), "{}", warnings_text(&p));
    assert_eq!(p.event_count(), 66, "66 X events");
}

// ---------------------------------------------------------------------------------------------
// A truncated trace made by cutting a real sample
// ---------------------------------------------------------------------------------------------

fn read_gz(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// Offsets (start, end) of the elements of the `traceEvents` array.
fn event_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let key = b"\"traceEvents\"";
    let at = text.windows(key.len()).position(|w| w == key).unwrap();
    let mut i = at + key.len();
    while text[i] != b'[' {
        i += 1;
    }
    i += 1;
    let mut spans = Vec::new();
    let (mut depth, mut in_str, mut esc, mut start) = (0i32, false, false, 0usize);
    while i < text.len() {
        let b = text[i];
        if in_str {
            if esc {
                esc = false;
            } else if b == b'\\' {
                esc = true;
            } else if b == b'"' {
                in_str = false;
            }
        } else {
            match b {
                b'"' => in_str = true,
                b'{' | b'[' => {
                    if depth == 0 {
                        start = i;
                    }
                    depth += 1;
                }
                b'}' | b']' => {
                    if depth == 0 {
                        break;
                    }
                    depth -= 1;
                    if depth == 0 {
                        spans.push((start, i + 1));
                    }
                }
                _ => {}
            }
        }
        i += 1;
    }
    spans
}

fn is_kernel_event(text: &[u8]) -> bool {
    let v: serde_json::Value = serde_json::from_slice(text).unwrap();
    v.get("ph").and_then(|p| p.as_str()) == Some("X")
        && v.get("cat").and_then(|c| c.as_str()) == Some("kernel")
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn truncated_cut_of_real_alexnet_sample_loads_what_it_has() {
    let rel = "kineto-h100/alexnet_b8.pt.trace.json.gz";
    let Some(path) = common::sample(rel) else {
        return;
    };
    let full = read_gz(&path);
    let spans = event_spans(&full);
    assert!(spans.len() > 1000);
    // Cut in the middle of an element in the second half.
    let k = spans.len() * 2 / 3;
    let (s, e) = spans[k];
    let cut = s + (e - s) / 2;
    let kernels_before = spans[..k]
        .iter()
        .filter(|(a, b)| is_kernel_event(&full[*a..*b]))
        .count() as u64;
    assert!(kernels_before > 0 && kernels_before < 260);
    let dir = std::env::temp_dir().join(format!("warpscope-conf-chrome-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("alexnet_b8_cut_truncated_from_real_sample.json");
    std::fs::write(&out, &full[..cut]).unwrap();
    let p = import_file(&out, &Progress::new()).unwrap_or_else(|e| panic!("{e}"));
    let t = p
        .warnings
        .iter()
        .find(|w| w.code == "truncated")
        .unwrap_or_else(|| panic!("no truncated warning:\n{}", warnings_text(&p)));
    assert_eq!(t.count, 1);
    assert_eq!(
        common::gpu_kind_totals(&p, EventKind::Kernel).0,
        kernels_before
    );
    // Same cut, gzip-compressed under a misleading name.
    let gz = dir.join("alexnet_b8_cut_truncated_from_real_sample.txt");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut enc, &full[..cut]).unwrap();
    std::fs::write(&gz, enc.finish().unwrap()).unwrap();
    let q = import_file(&gz, &Progress::new()).unwrap_or_else(|e| panic!("{e}"));
    assert!(q.source.compressed);
    assert_eq!(
        common::gpu_kind_totals(&q, EventKind::Kernel).0,
        kernels_before
    );
    let _ = std::fs::remove_dir_all(&dir);
}
