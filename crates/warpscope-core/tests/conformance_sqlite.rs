//! Conformance of the SQLite importers (nvprof `.nvvp`, Nsight Systems exports) with the figures
//! in `docs/formats.md` section 9, plus fixtures written here: an nsys export with
//! `NVTX_EVENTS` (no real sample has one), several processes sharing correlation ids, and broken
//! or foreign SQLite files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{gpu_kind_totals, kernel_streams, load, sample};
use rusqlite::{Connection, MAIN_DB};
use warpscope_core::analysis::gpu_total_ns;
use warpscope_core::model::{
    CopyKind, EventKind, FlowKind, GpuLane, MemoryKind, NO_PARENT, Profile, TraceId, TrackKey,
};
use warpscope_core::{ImportError, Progress, TimeRange, import_bytes, import_file};

// ---------------------------------------------------------------------------------------------
// Helpers

/// Kernel names as stored in the file (the mangled symbol for nvprof, `demangledName` for nsys),
/// with summed duration and calls, ranked by time.
fn kernels_by_stored_name(p: &Profile) -> Vec<(String, i64, u64)> {
    let mut by: BTreeMap<String, (i64, u64)> = BTreeMap::new();
    for t in &p.tracks {
        for i in 0..t.events.len() {
            if t.events.kind[i] != EventKind::Kernel {
                continue;
            }
            let info = p.kernel_info(t, i).unwrap();
            let name = match (p.source.format, info.mangled_name) {
                (warpscope_core::model::Format::NvprofSqlite, Some(m)) => p.str(m),
                _ => p.str(t.events.name[i]),
            };
            let e = by.entry(name.to_string()).or_default();
            e.0 += t.events.dur_ns[i];
            e.1 += 1;
        }
    }
    let mut v: Vec<(String, i64, u64)> = by.into_iter().map(|(n, (d, c))| (n, d, c)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

fn top3(p: &Profile) -> Vec<(String, i64, u64)> {
    kernels_by_stored_name(p).into_iter().take(3).collect()
}

fn owned(v: &[(&str, i64, u64)]) -> Vec<(String, i64, u64)> {
    v.iter()
        .map(|(n, d, c)| ((*n).to_string(), *d, *c))
        .collect()
}

/// Copies (or sets, or unified-memory transfers) of event kind `kind`, by copy kind:
/// (count, bytes, ns).
fn copies(p: &Profile, kind: EventKind) -> BTreeMap<&'static str, (u64, u64, i64)> {
    let mut m = BTreeMap::new();
    for t in &p.tracks {
        for i in 0..t.events.len() {
            if t.events.kind[i] != kind {
                continue;
            }
            let info = p.copy_info(t, i).unwrap();
            let e = m.entry(info.kind.as_str()).or_insert((0, 0, 0));
            e.0 += 1;
            e.1 += info.bytes.unwrap();
            e.2 += t.events.dur_ns[i];
        }
    }
    m
}

/// How many kernels are the target of a launch flow from a runtime vs a driver call, and the
/// names of those calls.
fn kernel_joins(p: &Profile) -> (u64, u64, BTreeMap<String, u64>) {
    let (mut rt, mut drv) = (0, 0);
    let mut names = BTreeMap::new();
    for f in p.flows.iter().filter(|f| f.kind == FlowKind::Launch) {
        let to = &p.tracks[f.to.track as usize].events;
        if to.kind[f.to.index as usize] != EventKind::Kernel {
            continue;
        }
        let from_track = &p.tracks[f.from.track as usize];
        let from = &from_track.events;
        match from.kind[f.from.index as usize] {
            EventKind::Runtime => rt += 1,
            EventKind::Driver => drv += 1,
            other => panic!("launch flow from {other:?}"),
        }
        *names
            .entry(p.str(from.name[f.from.index as usize]).to_string())
            .or_default() += 1;
    }
    (rt, drv, names)
}

/// The cbids of the API calls that launched kernels.
fn kernel_join_cbids(p: &Profile) -> BTreeMap<u32, u64> {
    let mut m = BTreeMap::new();
    for f in p.flows.iter().filter(|f| f.kind == FlowKind::Launch) {
        let to = &p.tracks[f.to.track as usize].events;
        if to.kind[f.to.index as usize] != EventKind::Kernel {
            continue;
        }
        let from_track = &p.tracks[f.from.track as usize];
        let info = p.api_info(from_track, f.from.index as usize).unwrap();
        *m.entry(info.cbid.unwrap()).or_default() += 1;
    }
    m
}

fn kernels_per_stream(p: &Profile) -> Vec<((u32, u64), u64)> {
    let mut m: BTreeMap<(u32, u64), u64> = BTreeMap::new();
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
    m.into_iter().collect()
}

fn distinct_kernel_names(p: &Profile) -> usize {
    kernels_by_stored_name(p).len()
}

fn count_kind(p: &Profile, kind: EventKind) -> usize {
    p.tracks
        .iter()
        .map(|t| t.events.kind.iter().filter(|k| **k == kind).count())
        .sum()
}

fn warning_codes(p: &Profile) -> Vec<&str> {
    p.warnings.iter().map(|w| w.code.as_str()).collect()
}

/// A fresh directory under the system temp dir for one test.
fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "warpscope-sqlite-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn copy_sample(rel: &str, dir: &Path) -> Option<PathBuf> {
    let src = sample(rel)?;
    let dst = dir.join(src.file_name().unwrap());
    std::fs::copy(&src, &dst).unwrap();
    // Samples are read-only on disk; the copy must be writable.
    let mut perms = std::fs::metadata(&dst).unwrap().permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&dst, perms).unwrap();
    Some(dst)
}

// ---------------------------------------------------------------------------------------------
// nvprof samples

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nvprof_gpuml_titanv_mxnet() {
    let Some(path) = sample("nvprof-sqlite/gpuml_titanv_mxnet_timeline.nvvp") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.tool, "nvprof");
    assert_eq!(p.source.schema_version.as_deref(), Some("Version 12"));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);

    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (38, 77_080_567));
    assert_eq!(distinct_kernel_names(&p), 15);
    assert_eq!(
        top3(&p),
        owned(&[
            ("volta_scudnn_128x64_relu_interior_nn_v1", 19_928_832, 1),
            ("volta_gcgemm_64x32_nt", 19_163_688, 4),
            (
                "_Z15fft2d_c2r_32x32IfLb0ELb0ELj0ELb0ELb0EEvPT_PK6float2iiiiiiiiiffN5cudnn15reduced_divisorEbS1_S1_4int2ii",
                9_715_908,
                4
            ),
        ])
    );
    let memcpy = copies(&p, EventKind::Memcpy);
    assert_eq!(
        memcpy,
        BTreeMap::from([
            ("HtoD", (20, 208_996_184, 35_458_635)),
            ("DtoH", (1, 40_000, 7_968))
        ])
    );
    assert_eq!(
        copies(&p, EventKind::Memset),
        BTreeMap::from([("Memset", (9, 123_196, 10_144))])
    );
    assert_eq!(
        gpu_total_ns(&p, TimeRange::ALL),
        77_080_567 + 35_458_635 + 7_968 + 10_144
    );
    assert_eq!(
        kernels_per_stream(&p),
        vec![
            ((0, 7), 2),
            ((0, 14), 17),
            ((0, 15), 7),
            ((0, 22), 6),
            ((0, 24), 6)
        ]
    );
    assert_eq!(kernel_streams(&p).len(), 5);
    // Memcpy/memset use 10 further streams: 15 GPU work lanes in all.
    let work_lanes = p
        .tracks
        .iter()
        .filter(|t| {
            matches!(
                t.key,
                TrackKey::Gpu {
                    lane: GpuLane::Work,
                    ..
                }
            )
        })
        .count();
    assert_eq!(work_lanes, 15);
    let (rt, drv, _) = kernel_joins(&p);
    assert_eq!((rt, drv), (38, 0));
    assert_eq!(kernel_join_cbids(&p), BTreeMap::from([(211, 38)]));

    // Mangled names are demangled for display and kept raw.
    let fft = p.kernels.iter().find(|k| k.mangled_name.is_some()).unwrap();
    let raw = p.str(fft.mangled_name.unwrap());
    assert!(raw.starts_with("_Z"), "{raw}");
    let shown: Vec<&str> = p
        .tracks
        .iter()
        .flat_map(|t| t.events.name.iter().zip(&t.events.kind))
        .filter(|(_, k)| **k == EventKind::Kernel)
        .map(|(n, _)| p.str(*n))
        .collect();
    assert!(
        shown
            .iter()
            .any(|n| n.starts_with("void fft2d_c2r_32x32<float"))
    );
    assert!(shown.contains(&"volta_gcgemm_64x32_nt"));

    // API names come from cbids; threadId is masked to unsigned 32 bits.
    let api_threads: Vec<(TraceId, TraceId)> = p
        .tracks
        .iter()
        .filter_map(|t| match t.key {
            TrackKey::Thread { pid, tid } => Some((pid, tid)),
            _ => None,
        })
        .collect();
    assert!(api_threads.contains(&(TraceId::Int(463), TraceId::Int(3_113_479_552))));
    assert!(api_threads.iter().all(|(_, tid)| match tid {
        TraceId::Int(t) => (0..=0xFFFF_FFFF).contains(t),
        TraceId::Name(_) => false,
    }));
    assert_eq!(count_kind(&p, EventKind::Runtime), 2278);
    assert_eq!(count_kind(&p, EventKind::Driver), 405);
    assert!(p.strings.find("cudaLaunchKernel").is_some());

    assert_eq!(p.process_name(TraceId::Int(463)), Some("python m1.2.py"));
    let d = p.device(0).unwrap();
    assert_eq!(d.name, "TITAN V");
    assert_eq!(d.compute_capability, Some((7, 0)));
    assert_eq!(d.sm_count, Some(80));
    assert_eq!(d.memory_bytes, Some(12_621_381_632));
    assert_eq!(d.memory_bandwidth_bytes_per_s, Some(652_800_000_000));
    // nvprof timestamps are epoch nanoseconds.
    assert_eq!(p.origin.unix_ns, Some(p.origin.raw_ns));
    // HtoD copies go from pageable host memory to the device (CUPTI numbering).
    let htod = p.copies.iter().find(|c| c.kind == CopyKind::HtoD).unwrap();
    assert_eq!(
        (htod.src_kind, htod.dst_kind),
        (Some(MemoryKind::Pageable), Some(MemoryKind::Device))
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nvprof_jetsonnano_tensorrt_nvtx() {
    let Some(path) = sample("nvprof-sqlite/jetsonnano_tensorrt_yolo_nvtx.nvvp") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.schema_version.as_deref(), Some("Version 12"));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (51, 47_562_432));
    assert_eq!(distinct_kernel_names(&p), 14);
    assert_eq!(
        top3(&p),
        owned(&[
            (
                "trt_maxwell_fp16x2_hcudnn_winograd_fp16x2_128x128_ldg1_ldg4_relu_tile148m_nt_v1",
                30_777_193,
                12
            ),
            ("generatedNativePointwise", 4_607_059, 19),
            (
                "trt_maxwell_fp16x2_hcudnn_fp16x2_128x64_relu_small_nn_v1",
                3_632_148,
                2
            ),
        ])
    );
    assert_eq!(
        copies(&p, EventKind::Memcpy),
        BTreeMap::from([
            ("HtoD", (12, 34_465_536, 57_164_154)),
            ("DtoH", (1, 70_980, 16_251)),
            ("DtoD", (48, 67_616_068, 20_849_047)),
        ])
    );
    assert_eq!(
        copies(&p, EventKind::Memset),
        BTreeMap::from([("Memset", (10, 39_484_416, 5_945_833))])
    );
    assert_eq!(kernel_streams(&p), vec![(0, 40)]);
    let (rt, drv, _) = kernel_joins(&p);
    assert_eq!((rt, drv), (32, 19));
    assert_eq!(
        kernel_join_cbids(&p),
        BTreeMap::from([(211, 32), (307, 19)])
    );

    // NVTX: 58 ranges on one thread; the outer enqueue contains the other 57.
    let nvtx_tracks: Vec<_> = p
        .tracks
        .iter()
        .filter(|t| t.events.kind.contains(&EventKind::Nvtx))
        .collect();
    assert_eq!(nvtx_tracks.len(), 1);
    let t = nvtx_tracks[0];
    assert_eq!(
        t.key,
        TrackKey::Thread {
            pid: TraceId::Int(14146),
            tid: TraceId::Int(2_621_071_376)
        }
    );
    let ev = &t.events;
    let nvtx: Vec<usize> = (0..ev.len())
        .filter(|&i| ev.kind[i] == EventKind::Nvtx)
        .collect();
    assert_eq!(nvtx.len(), 58);
    let outer: Vec<usize> = nvtx
        .iter()
        .copied()
        .filter(|&i| p.str(ev.name[i]) == "ExecutionContext::enqueue")
        .collect();
    assert_eq!(outer.len(), 1);
    let o = outer[0];
    assert_eq!(ev.dur_ns[o], 162_869_804);
    for &i in nvtx.iter().filter(|&&i| i != o) {
        assert!(ev.start_ns[i] >= ev.start_ns[o] && ev.end_ns(i) <= ev.end_ns(o));
        // Nested below the outer range, directly or through other events.
        let mut up = ev.parent[i];
        while up != NO_PARENT && up as usize != o {
            up = ev.parent[up as usize];
        }
        assert_eq!(up as usize, o);
    }
    assert!(
        p.source
            .details
            .contains(&("NVTX domains".to_string(), "TensorRT".to_string()))
    );
    assert_eq!(
        p.process_name(TraceId::Int(14146)),
        Some("python3 trt_yolo.py --video puppy.mp4 --model yolov4-tiny-416")
    );
    let d = p.device(0).unwrap();
    assert_eq!(
        (d.name.as_str(), d.compute_capability, d.sm_count),
        ("NVIDIA Tegra X1", Some((5, 3)), Some(1))
    );
    // DtoH on Tegra goes to pinned memory (CUPTI 3 → 2).
    let dtoh = p.copies.iter().find(|c| c.kind == CopyKind::DtoH).unwrap();
    assert_eq!(
        (dtoh.src_kind, dtoh.dst_kind),
        (Some(MemoryKind::Device), Some(MemoryKind::Pinned))
    );
}

/// `csl7520_*` has no block in section 9; the figures come from its table rows (section 2.2)
/// and a direct `sqlite3` query of the sample.
#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nvprof_csl7520_version_11() {
    let Some(path) = sample("nvprof-sqlite/csl7520_titanxpascal_matrix_profile.nvvp") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.schema_version.as_deref(), Some("Version 11"));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (1, 4_868_167));
    assert_eq!(
        top3(&p),
        owned(&[("_Z15squareMatrixGpuPdS_", 4_868_167, 1)])
    );
    let k = p
        .tracks
        .iter()
        .find(|t| t.events.kind.contains(&EventKind::Kernel))
        .unwrap();
    let i = k
        .events
        .kind
        .iter()
        .position(|&x| x == EventKind::Kernel)
        .unwrap();
    assert_eq!(p.str(k.events.name[i]), "squareMatrixGpu(double*, double*)");
    assert_eq!(
        copies(&p, EventKind::Memcpy),
        BTreeMap::from([("HtoD", (1, 131_072, 12_513))])
    );
    assert_eq!(count_kind(&p, EventKind::Runtime), 8);
    assert_eq!(count_kind(&p, EventKind::Driver), 104);
    assert_eq!(kernel_streams(&p), vec![(0, 7)]);
    assert_eq!(kernel_joins(&p).0, 1);
    assert_eq!(p.process_name(TraceId::Int(15068)), Some("a.out"));
    let d = p.device(0).unwrap();
    assert_eq!(
        (d.name.as_str(), d.compute_capability, d.sm_count),
        ("TITAN X (Pascal)", Some((6, 1)), Some(28))
    );
}

// ---------------------------------------------------------------------------------------------
// Nsight Systems samples

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nsys_2022_uvm() {
    let Some(path) = sample("nsys-sqlite/nsys2022.2_a100_vecadd_uvm_report1.sqlite") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.tool, "Nsight Systems");
    assert_eq!(p.source.tool_version.as_deref(), Some("2022.2.1.31"));
    assert_eq!(p.source.schema_version.as_deref(), Some("2.9.1"));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (1, 6_300_325_739));
    assert_eq!(
        top3(&p),
        owned(&[("add(int, float *, float *)", 6_300_325_739, 1)])
    );
    // UVM migrations are their own kind, not memcpy, and not in the GPU total.
    assert!(copies(&p, EventKind::Memcpy).is_empty());
    assert_eq!(
        copies(&p, EventKind::UnifiedMemory),
        BTreeMap::from([
            ("Unified HtoD", (3072, 536_870_912, 26_125_345)),
            ("Unified DtoH", (1536, 268_435_456, 12_764_872)),
        ])
    );
    assert_eq!(gpu_total_ns(&p, TimeRange::ALL), 6_300_325_739);
    let uvm_tracks: Vec<TrackKey> = p
        .tracks
        .iter()
        .filter(|t| t.events.kind.contains(&EventKind::UnifiedMemory))
        .map(|t| t.key)
        .collect();
    assert_eq!(
        uvm_tracks,
        vec![TrackKey::Gpu {
            device: 0,
            context: 0,
            stream: 0,
            lane: GpuLane::UnifiedMemory
        }]
    );
    assert!(
        p.copies
            .iter()
            .filter(|c| matches!(c.kind, CopyKind::UnifiedHtoD | CopyKind::UnifiedDtoH))
            .all(|c| c.src_kind == Some(MemoryKind::Unknown) && c.correlation.is_none())
    );
    assert_eq!(count_kind(&p, EventKind::Memset), 0);
    assert_eq!(kernel_streams(&p), vec![(0, 7)]);
    let (rt, drv, names) = kernel_joins(&p);
    assert_eq!((rt, drv), (1, 0));
    assert_eq!(
        names,
        BTreeMap::from([("cudaLaunchKernel_v7000".to_string(), 1)])
    );
    assert_eq!(count_kind(&p, EventKind::Runtime), 6);
    assert_eq!(count_kind(&p, EventKind::Driver), 1);
    assert_eq!(
        p.process_names,
        vec![(TraceId::Int(107_275), "./vecadd_gpu_1t".to_string())]
    );
    let thread = p
        .tracks
        .iter()
        .find(|t| {
            t.key
                == TrackKey::Thread {
                    pid: TraceId::Int(107_275),
                    tid: TraceId::Int(107_275),
                }
        })
        .unwrap();
    assert_eq!(thread.name, "vecadd_gpu_1t");
    assert_eq!(p.devices.len(), 1);
    assert_eq!(p.devices[0].name, "NVIDIA A100-SXM4-40GB");
    // The capture clock is relative; the session start anchors it to the epoch.
    assert_eq!(
        p.origin.unix_ns,
        Some(1_684_405_961_402_176_525 + p.origin.raw_ns)
    );
    assert_eq!(count_kind(&p, EventKind::GpuSync), 1);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nsys_2023_cupy_4gpu() {
    let Some(path) = sample("nsys-sqlite/nsys2023.1_4gpu_reconstream_prof19.sqlite") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.tool_version.as_deref(), Some("2023.1.2.43"));
    assert_eq!(p.source.schema_version.as_deref(), Some("3.1.2"));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (6, 14_272));
    assert_eq!(
        top3(&p),
        owned(&[
            ("cupy_log__float64_float64", 4864, 2),
            ("cupy_scan_naive", 2880, 1),
            ("cupy_scatter_update_mask", 2496, 1),
        ])
    );
    assert_eq!(
        copies(&p, EventKind::Memcpy),
        BTreeMap::from([("DtoH", (1, 4, 2240))])
    );
    assert_eq!(
        copies(&p, EventKind::Memset),
        BTreeMap::from([("Memset", (1, 8, 1153))])
    );
    assert_eq!(kernel_streams(&p), vec![(0, 7)]);
    let (rt, drv, names) = kernel_joins(&p);
    assert_eq!((rt, drv), (0, 6));
    assert_eq!(names, BTreeMap::from([("cuLaunchKernel".to_string(), 6)]));
    assert_eq!(count_kind(&p, EventKind::Runtime), 9);
    assert_eq!(count_kind(&p, EventKind::Driver), 17);
    assert_eq!(
        p.process_names,
        vec![(TraceId::Int(3_876_054), "python".to_string())]
    );
    // Four GPUs in TARGET_INFO_GPU: all listed (`info` shows them), only GPU 0 has activity.
    assert_eq!(
        p.devices.iter().map(|d| d.id).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert!(p.devices.iter().all(|d| d.name == "NVIDIA A100-SXM4-40GB"));
    assert_eq!(p.devices[0].sm_count, Some(108));
    assert_eq!(kernel_streams(&p), vec![(0, 7)]);
    // nsys memory kinds: DtoH from device (2) to pageable (0).
    let dtoh = p.copies.iter().find(|c| c.kind == CopyKind::DtoH).unwrap();
    assert_eq!(
        (dtoh.src_kind, dtoh.dst_kind),
        (Some(MemoryKind::Device), Some(MemoryKind::Pageable))
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nsys_2025_vecadd() {
    let Some(path) = sample("nsys-sqlite/nsys2025.5_vecadd_report1.sqlite") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.tool_version.as_deref(), Some("2025.5.2.266"));
    assert_eq!(p.source.schema_version.as_deref(), Some("3.24.0"));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (1, 38_912));
    assert_eq!(
        top3(&p),
        owned(&[(
            "kernVectorAdd(const float *, const float *, float *, int)",
            38_912,
            1
        )])
    );
    assert_eq!(
        copies(&p, EventKind::Memcpy),
        BTreeMap::from([
            ("HtoD", (2, 8_388_608, 2_458_272)),
            ("DtoH", (1, 4_194_304, 586_464))
        ])
    );
    assert_eq!(count_kind(&p, EventKind::Memset), 0);
    assert_eq!(kernel_streams(&p), vec![(0, 7)]);
    let (rt, drv, names) = kernel_joins(&p);
    assert_eq!((rt, drv), (1, 0));
    assert_eq!(
        names,
        BTreeMap::from([("cudaLaunchKernel_v7000".to_string(), 1)])
    );
    assert_eq!(
        p.process_names,
        vec![(TraceId::Int(1246), "./vecAdd".to_string())]
    );
    // nsys numbering: HtoD from pageable (0) to device (2).
    let htod = p.copies.iter().find(|c| c.kind == CopyKind::HtoD).unwrap();
    assert_eq!(
        (htod.src_kind, htod.dst_kind),
        (Some(MemoryKind::Pageable), Some(MemoryKind::Device))
    );
    assert_eq!(p.devices.len(), 1);
    assert_eq!(p.devices[0].name, "NVIDIA GeForce RTX 3060");
    // Kernel names are already demangled in nsys; the raw symbol is kept.
    let k = p.kernels.get(0).unwrap();
    assert!(p.str(k.mangled_name.unwrap()).starts_with("_Z"));
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nsys_2026_four_streams() {
    let Some(path) = sample("nsys-sqlite/nsys2026.1_testcuda_report2.sqlite") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.tool_version.as_deref(), Some("2026.1.1.204"));
    assert_eq!(p.source.schema_version.as_deref(), Some("3.24.14"));
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (4, 4_839_761));
    assert_eq!(
        top3(&p),
        owned(&[(
            "add_parallel(const float *, const float *, float *, int)",
            4_839_761,
            4
        )])
    );
    assert_eq!(
        copies(&p, EventKind::Memcpy),
        BTreeMap::from([
            ("HtoD", (8, 800_000_000, 61_425_271)),
            ("DtoH", (4, 400_000_000, 30_316_321))
        ])
    );
    assert_eq!(kernel_streams(&p), vec![(0, 13), (0, 14), (0, 15), (0, 16)]);
    let (rt, drv, names) = kernel_joins(&p);
    assert_eq!((rt, drv), (4, 0));
    assert_eq!(
        names,
        BTreeMap::from([("cudaLaunchKernel_v7000".to_string(), 4)])
    );
    assert_eq!(
        p.process_names,
        vec![(
            TraceId::Int(58972),
            "/home/hangyudu/tmp/async.out".to_string()
        )]
    );
    // Pinned host memory (nsys 1) in both directions.
    let htod = p.copies.iter().find(|c| c.kind == CopyKind::HtoD).unwrap();
    assert_eq!(
        (htod.src_kind, htod.dst_kind),
        (Some(MemoryKind::Pinned), Some(MemoryKind::Device))
    );
    let d = &p.devices[0];
    assert_eq!(
        (d.name.as_str(), d.compute_capability, d.sm_count),
        ("NVIDIA GeForce RTX 4060 Ti", Some((8, 9)), Some(34))
    );
    assert_eq!(d.memory_bandwidth_bytes_per_s, Some(288_032_000_000));
    assert_eq!(
        p.origin.unix_ns,
        Some(1_769_320_577_184_271_416 + p.origin.raw_ns)
    );
    // Synchronisation records, one of them for a whole context (stream "-1").
    assert_eq!(count_kind(&p, EventKind::GpuSync), 2);
}

// ---------------------------------------------------------------------------------------------
// Fixtures

const NSYS_META: &str = "
    CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
    INSERT INTO META_DATA_EXPORT VALUES
        ('EXPORT_PRODUCT_VERSION', '2099.1.0.1'), ('EXPORT_SCHEMA_VERSION', '9.9.9');
    CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
";

/// Packs a global thread id the way nsys does (vm 1 in the top bits).
fn global_tid(pid: i64, tid: i64) -> i64 {
    (1 << 48) | (pid << 24) | tid
}

/// An nsys-schema export with NVTX_EVENTS and two processes that reuse correlation id 1.
fn write_nvtx_fixture(path: &Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(NSYS_META).unwrap();
    conn.execute_batch(
        "
        INSERT INTO StringIds VALUES (1, 'cudaLaunchKernel_v7000'), (2, 'kern(int)'),
            (3, '_Z4kerni'), (4, 'from textId'), (5, 'main'), (6, 'worker');
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
            eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
            nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,
            deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,
            correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
            shortName INTEGER NOT NULL, mangledName INTEGER, gridX INTEGER, gridY INTEGER,
            gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER,
            registersPerThread INTEGER);
        CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
            rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
            endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
        CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
        CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, cuDevice INTEGER);
        INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'Fixture GPU', 0), (1, 1, 'Unused GPU', 1);
        CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
        CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT,
            localTime TEXT);
        INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (1700000000000000000,
            '2023-11-14T22:13:20', '');
        ",
    )
    .unwrap();
    let a = global_tid(100, 101);
    let b = global_tid(200, 201);
    let pa = global_tid(100, 0);
    let pb = global_tid(200, 0);
    let ins = |sql: &str, params: &[&dyn rusqlite::ToSql]| {
        conn.execute(sql, params).unwrap();
    };
    // Both processes launch with correlation id 1; process 200's kernel must join its own call.
    let rt = "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, 0, ?3, 1, 1, 0, NULL)";
    ins(rt, &[&1000, &1100, &a]);
    ins(rt, &[&5000, &5100, &b]);
    let k = "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?1, ?2, 0, 1, 7, 1, ?3, 2, 2, 3,
        1, 1, 1, 32, 1, 1, 16)";
    ins(k, &[&2000, &2500, &pa]);
    ins(k, &[&6000, &6400, &pb]);
    let nvtx = "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId,
        domainId) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
    let none: Option<i64> = None;
    let no_text: Option<&str> = None;
    // Domain create, a push/pop range with a nested one, a start/end range named by textId, a
    // mark, and an unterminated range.
    ins(nvtx, &[&0, &none, &75, &"MyDomain", &a, &none, &1]);
    ins(nvtx, &[&900, &3000, &59, &"outer", &a, &none, &0]);
    ins(nvtx, &[&950, &1200, &59, &"inner", &a, &none, &1]);
    ins(nvtx, &[&4000, &7000, &60, &no_text, &b, &4, &0]);
    ins(nvtx, &[&4500, &none, &34, &"mark", &b, &none, &0]);
    ins(nvtx, &[&4600, &none, &59, &"never ends", &b, &none, &0]);
    ins(
        "INSERT INTO PROCESSES VALUES (?1, 100, 'proc-a'), (?2, 200, 'proc-b'), (?3, 300, 'idle')",
        &[&pa, &pb, &global_tid(300, 0)],
    );
    ins(
        "INSERT INTO ThreadNames VALUES (5, 20, ?1), (6, 20, ?2)",
        &[&a, &b],
    );
}

#[test]
fn nsys_fixture_nvtx_events_and_multi_process_correlation() {
    let dir = temp_dir("nvtx");
    let path = dir.join("nvtx.sqlite");
    write_nvtx_fixture(&path);
    let p = load(&path);
    assert_eq!(p.source.tool, "Nsight Systems");
    assert_eq!(p.source.tool_version.as_deref(), Some("2099.1.0.1"));
    assert_eq!(p.source.schema_version.as_deref(), Some("9.9.9"));
    assert_eq!(warning_codes(&p), vec!["nvtx_start_without_end"]);
    assert_eq!(p.warnings[0].count, 1);

    // NVTX: 3 ranges + 1 mark, on the threads that opened them.
    let thread = |pid, tid| {
        p.tracks
            .iter()
            .find(|t| {
                t.key
                    == TrackKey::Thread {
                        pid: TraceId::Int(pid),
                        tid: TraceId::Int(tid),
                    }
            })
            .unwrap()
    };
    let ta = thread(100, 101);
    assert_eq!(ta.name, "main");
    let nvtx_a: Vec<(&str, i64, i64, u16)> = (0..ta.events.len())
        .filter(|&i| ta.events.kind[i] == EventKind::Nvtx)
        .map(|i| {
            (
                p.str(ta.events.name[i]),
                ta.events.start_ns[i] + p.origin.raw_ns,
                ta.events.dur_ns[i],
                ta.events.depth[i],
            )
        })
        .collect();
    assert_eq!(
        nvtx_a,
        vec![("outer", 900, 2100, 0), ("inner", 950, 250, 1)]
    );
    let tb = thread(200, 201);
    assert_eq!(tb.name, "worker");
    let nvtx_b: Vec<(&str, i64, i64)> = (0..tb.events.len())
        .filter(|&i| tb.events.kind[i] == EventKind::Nvtx)
        .map(|i| {
            (
                p.str(tb.events.name[i]),
                tb.events.start_ns[i] + p.origin.raw_ns,
                tb.events.dur_ns[i],
            )
        })
        .collect();
    assert_eq!(nvtx_b, vec![("from textId", 4000, 3000), ("mark", 4500, 0)]);
    assert!(
        p.source
            .details
            .contains(&("NVTX domains".to_string(), "MyDomain".to_string()))
    );

    // Correlation id 1 in both processes: each kernel joins its own process's call.
    assert_eq!(p.flows.len(), 2);
    for f in &p.flows {
        let from = &p.tracks[f.from.track as usize];
        let to = &p.tracks[f.to.track as usize];
        let api_start = from.events.start_ns[f.from.index as usize] + p.origin.raw_ns;
        let k_start = to.events.start_ns[f.to.index as usize] + p.origin.raw_ns;
        assert_eq!(
            k_start - api_start,
            1000,
            "kernel at {k_start} joined call at {api_start}"
        );
    }
    // Only processes with activity are named.
    assert_eq!(
        p.process_names,
        vec![
            (TraceId::Int(100), "proc-a".to_string()),
            (TraceId::Int(200), "proc-b".to_string())
        ]
    );
    assert_eq!(p.origin.unix_ns, Some(1_700_000_000_000_000_000 + 900));
    let k = p.kernels.get(0).unwrap();
    assert_eq!(k.grid, Some([1, 1, 1]));
    assert_eq!(k.block, Some([32, 1, 1]));
    assert_eq!(k.registers_per_thread, Some(16));
    assert_eq!(p.str(k.mangled_name.unwrap()), "_Z4kerni");
    // Both GPUs of the machine are listed; only the first has activity.
    let devices: Vec<(u32, &str)> = p.devices.iter().map(|d| (d.id, d.name.as_str())).collect();
    assert_eq!(devices, vec![(0, "Fixture GPU"), (1, "Unused GPU")]);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn nsys_fixture_without_activity_tables_loads_empty_with_a_warning() {
    let dir = temp_dir("empty-nsys");
    let path = dir.join("empty.sqlite");
    Connection::open(&path)
        .unwrap()
        .execute_batch(NSYS_META)
        .unwrap();
    let p = load(&path);
    assert_eq!(p.event_count(), 0);
    assert_eq!(warning_codes(&p), vec!["sqlite_no_activity_tables"]);
    assert!(p.warnings[0].message.contains("CUPTI_ACTIVITY_KIND_KERNEL"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn nsys_fixture_missing_required_column_is_a_corrupt_error_naming_the_table() {
    let dir = temp_dir("bad-column");
    let path = dir.join("bad.sqlite");
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(NSYS_META).unwrap();
    conn.execute_batch(
        "CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
            streamId INTEGER, shortName INTEGER);
         INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1, 2, 0, 7, 1);",
    )
    .unwrap();
    drop(conn);
    let err = import_file(&path, &Progress::new()).unwrap_err();
    match &err {
        ImportError::Corrupt {
            path: p,
            location,
            detail,
        } => {
            assert_eq!(p, &path);
            assert_eq!(location, "table CUPTI_ACTIVITY_KIND_KERNEL");
            assert!(
                detail.starts_with("missing required column demangledName"),
                "{detail}"
            );
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(err.to_string().contains("bad.sqlite"));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn sqlite_that_is_not_a_profile_is_rejected() {
    let dir = temp_dir("foreign");
    let path = dir.join("addresses.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "CREATE TABLE people (name TEXT, street TEXT); INSERT INTO people VALUES ('a', 'b');",
        )
        .unwrap();
    let err = import_file(&path, &Progress::new()).unwrap_err();
    match &err {
        ImportError::UnknownFormat { path: p, detail } => {
            assert_eq!(p, &path);
            assert_eq!(
                detail,
                "SQLite database without the tables of nvprof, Nsight Systems, rocprofv3 (rocpd schema 3), rocmProfileData (RPD schema 2) or rocprof v1 (tables: people)"
            );
        }
        other => panic!("unexpected error {other:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn empty_files_are_rejected() {
    let dir = temp_dir("empty");
    let path = dir.join("empty.nvvp");
    std::fs::write(&path, b"").unwrap();
    let err = import_file(&path, &Progress::new()).unwrap_err();
    assert!(matches!(err, ImportError::Empty { .. }), "{err:?}");
    // Called directly, SQLite sees an empty database: no tables.
    let err = warpscope_core::import::sqlite::import(
        warpscope_core::Input::File(&path),
        &Progress::new(),
    )
    .unwrap_err();
    match err {
        ImportError::UnknownFormat { detail, .. } => assert_eq!(
            detail,
            "SQLite database without the tables of nvprof, Nsight Systems, rocprofv3 (rocpd schema 3), rocmProfileData (RPD schema 2) or rocprof v1 (it has no tables)"
        ),
        other => panic!("unexpected error {other:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn nvprof_without_kernel_tables_loads_the_rest_with_a_warning() {
    let dir = temp_dir("no-kernels");
    let Some(path) = copy_sample("nvprof-sqlite/gpuml_titanv_mxnet_timeline.nvvp", &dir) else {
        return;
    };
    Connection::open(&path)
        .unwrap()
        .execute_batch(
            "DROP TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL;",
        )
        .unwrap();
    let p = load(&path);
    assert_eq!(count_kind(&p, EventKind::Kernel), 0);
    assert_eq!(warning_codes(&p), vec!["nvprof_no_kernel_table"]);
    assert_eq!(p.warnings[0].count, 1);
    assert_eq!(
        p.warnings[0].message,
        "neither CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL nor CUPTI_ACTIVITY_KIND_KERNEL exists in \
         this nvprof database: the profile has no kernels"
    );
    // Everything else is still there.
    assert_eq!(copies(&p, EventKind::Memcpy)["HtoD"].0, 20);
    assert_eq!(count_kind(&p, EventKind::Runtime), 2278);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn truncated_databases_are_corrupt_errors_not_panics() {
    let dir = temp_dir("truncated");
    let Some(path) = copy_sample("nvprof-sqlite/gpuml_titanv_mxnet_timeline.nvvp", &dir) else {
        return;
    };
    let full = std::fs::read(&path).unwrap();
    // SQLite compares the page count in the header with the file size when it opens the
    // database, so any truncation fails while the schema is read.
    for cut in [full.len() / 10 * 9, full.len() / 2, 100] {
        std::fs::write(&path, &full[..cut]).unwrap();
        let err = import_file(&path, &Progress::new()).unwrap_err();
        match &err {
            ImportError::Corrupt {
                path: p,
                location,
                detail,
            } => {
                assert_eq!(p, &path);
                assert_eq!(location, "table sqlite_master", "cut at {cut}");
                assert_eq!(
                    detail,
                    "SQLite cannot read it (truncated or damaged file?): database disk image is \
                     malformed",
                    "cut at {cut}"
                );
            }
            other => panic!("cut at {cut}: unexpected error {other:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_damaged_table_is_a_corrupt_error_naming_the_table() {
    let dir = temp_dir("damaged");
    let Some(path) = copy_sample("nvprof-sqlite/gpuml_titanv_mxnet_timeline.nvvp", &dir) else {
        return;
    };
    let (page_size, root): (i64, i64) = {
        let conn = Connection::open(&path).unwrap();
        let page_size = conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .unwrap();
        let root = conn
            .query_row(
                "SELECT rootpage FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_RUNTIME'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        (page_size, root)
    };
    // Overwrite the runtime table's root page with garbage.
    let mut bytes = std::fs::read(&path).unwrap();
    let at = usize::try_from((root - 1) * page_size).unwrap();
    let len = usize::try_from(page_size).unwrap();
    bytes[at..at + len].fill(0xFF);
    std::fs::write(&path, &bytes).unwrap();
    let err = import_file(&path, &Progress::new()).unwrap_err();
    match &err {
        ImportError::Corrupt {
            location, detail, ..
        } => {
            assert_eq!(location, "table CUPTI_ACTIVITY_KIND_RUNTIME");
            assert_eq!(detail, "database disk image is malformed");
        }
        other => panic!("unexpected error {other:?}"),
    }
    assert!(
        err.to_string()
            .contains("gpuml_titanv_mxnet_timeline.nvvp: table CUPTI_ACTIVITY_KIND_RUNTIME: ")
    );
    let _ = std::fs::remove_dir_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Damaged copies of the samples (made in memory, loaded with `import_bytes`)

/// An in-memory, writable copy of sample `rel`.
fn sample_copy(rel: &str) -> Option<Connection> {
    let data = std::fs::read(sample(rel)?).unwrap();
    let mut conn = Connection::open_in_memory().unwrap();
    conn.deserialize_read_exact(MAIN_DB, &data[..], data.len(), false)
        .unwrap();
    Some(conn)
}

/// Imports the database `conn` holds, named `rel`.
fn import_copy(rel: &str, mut conn: Connection) -> Result<Profile, ImportError> {
    let bytes = conn.serialize(MAIN_DB).unwrap().to_vec();
    import_bytes(Path::new(rel), &bytes, &Progress::new())
}

/// Rebuilds `table` without `column`.
fn drop_column(conn: &Connection, table: &str, column: &str) {
    let cols: Vec<String> = conn
        .prepare(&format!("PRAGMA table_info({table})"))
        .unwrap()
        .query_map([], |r| r.get::<_, String>(1))
        .unwrap()
        .map(Result::unwrap)
        .filter(|c| c != column)
        .map(|c| format!("\"{c}\""))
        .collect();
    conn.execute_batch(&format!(
        "CREATE TABLE damaged AS SELECT {} FROM {table}; DROP TABLE {table};
         ALTER TABLE damaged RENAME TO {table};",
        cols.join(", ")
    ))
    .unwrap();
}

/// `end - start` of the row `rowid_sql` (an SQL expression) of `table`.
fn row_duration(conn: &Connection, table: &str, rowid_sql: &str) -> i64 {
    conn.query_row(
        &format!("SELECT \"end\" - start FROM {table} WHERE rowid = {rowid_sql}"),
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// SQL for the rowid of the first and the second row of `table`.
fn first(table: &str) -> String {
    format!("(SELECT min(rowid) FROM {table})")
}
fn second(table: &str) -> String {
    format!("(SELECT min(rowid) FROM {table} WHERE rowid > (SELECT min(rowid) FROM {table}))")
}

fn warning<'p>(p: &'p Profile, code: &str) -> &'p warpscope_core::model::Warning {
    p.warnings
        .iter()
        .find(|w| w.code == code)
        .unwrap_or_else(|| panic!("no warning {code} in {:?}", p.warnings))
}

/// What a user sees must stay sane: no negative duration, a span that starts at time zero and
/// lasts less than a day, a GPU total that is not negative.
fn assert_sane(p: &Profile) {
    for t in &p.tracks {
        assert!(t.events.dur_ns.iter().all(|&d| d >= 0), "{}", t.name);
    }
    let (s, e) = p.span_ns().unwrap();
    assert!(s >= 0 && e - s < 86_400_000_000_000, "span {s}..{e}");
    assert!(gpu_total_ns(p, TimeRange::ALL) >= 0);
}

const I64_MIN: &str = "-9223372036854775808";
const I64_MAX: &str = "9223372036854775807";

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nvprof_extreme_timestamps_are_skipped_and_counted_per_table() {
    let rel = "nvprof-sqlite/jetsonnano_tensorrt_yolo_nvtx.nvvp";
    let Some(conn) = sample_copy(rel) else {
        return;
    };
    let baseline = import_copy(rel, sample_copy(rel).unwrap()).unwrap();
    const K: &str = "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL";
    const C: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
    const S: &str = "CUPTI_ACTIVITY_KIND_MEMSET";
    const M: &str = "CUPTI_ACTIVITY_KIND_MARKER";
    let dropped_gpu_ns = row_duration(&conn, K, &first(K))
        + row_duration(&conn, K, &second(K))
        + row_duration(&conn, C, &first(C))
        + row_duration(&conn, S, &first(S));
    conn.execute_batch(&format!(
        "UPDATE {K} SET start = {I64_MIN} WHERE rowid = {k1};
         UPDATE {K} SET \"end\" = {I64_MAX} WHERE rowid = {k2};
         UPDATE {C} SET start = -1 WHERE rowid = {c1};
         UPDATE {S} SET \"end\" = 1e300 WHERE rowid = {s1};
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET start = 'soon' WHERE rowid = {r1};
         UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET start = {I64_MIN} WHERE rowid = {y1};
         UPDATE {M} SET timestamp = {I64_MIN}
             WHERE rowid = (SELECT min(rowid) FROM {M} WHERE flags = 2);
         UPDATE {M} SET timestamp = {I64_MAX}
             WHERE rowid = (SELECT max(rowid) FROM {M} WHERE flags = 4);",
        k1 = first(K),
        k2 = second(K),
        c1 = first(C),
        s1 = first(S),
        r1 = first("CUPTI_ACTIVITY_KIND_RUNTIME"),
        y1 = first("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"),
    ))
    .unwrap();
    let p = import_copy(rel, conn).unwrap();
    let w = warning(&p, "sqlite_time_out_of_range");
    assert_eq!(w.count, 8);
    assert_eq!(
        w.message,
        "CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (2), CUPTI_ACTIVITY_KIND_MEMCPY (1), \
         CUPTI_ACTIVITY_KIND_MEMSET (1), CUPTI_ACTIVITY_KIND_RUNTIME (1), \
         CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (1), CUPTI_ACTIVITY_KIND_MARKER (2): rows with a \
         time that is negative, not an integer or beyond 2^62 ns (146 years after the clock's \
         zero) were skipped"
    );
    assert_sane(&p);
    assert_eq!(
        gpu_total_ns(&p, TimeRange::ALL),
        gpu_total_ns(&baseline, TimeRange::ALL) - dropped_gpu_ns
    );
    assert_eq!(
        count_kind(&p, EventKind::Kernel) + 2,
        count_kind(&baseline, EventKind::Kernel)
    );
    // The damaged start and end belong to the same range (id 1, around the whole run).
    assert_eq!(
        count_kind(&p, EventKind::Nvtx) + 1,
        count_kind(&baseline, EventKind::Nvtx)
    );
    assert_eq!(p.origin.unix_ns, baseline.origin.unix_ns);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nsys_extreme_timestamps_are_skipped_and_counted_per_table() {
    let rel = "nsys-sqlite/nsys2026.1_testcuda_report2.sqlite";
    let Some(conn) = sample_copy(rel) else {
        return;
    };
    let baseline = import_copy(rel, sample_copy(rel).unwrap()).unwrap();
    const K: &str = "CUPTI_ACTIVITY_KIND_KERNEL";
    const C: &str = "CUPTI_ACTIVITY_KIND_MEMCPY";
    let dropped_gpu_ns = row_duration(&conn, K, &first(K))
        + row_duration(&conn, K, &second(K))
        + row_duration(&conn, C, &first(C));
    conn.execute_batch(&format!(
        "UPDATE {K} SET start = {I64_MIN} WHERE rowid = {k1};
         UPDATE {K} SET \"end\" = {I64_MAX} WHERE rowid = {k2};
         UPDATE {C} SET start = -1e300 WHERE rowid = {c1};
         UPDATE CUPTI_ACTIVITY_KIND_RUNTIME SET \"end\" = -1 WHERE rowid = {r1};
         UPDATE CUPTI_ACTIVITY_KIND_SYNCHRONIZATION SET start = x'00ff' WHERE rowid = {y1};",
        k1 = first(K),
        k2 = second(K),
        c1 = first(C),
        r1 = first("CUPTI_ACTIVITY_KIND_RUNTIME"),
        y1 = first("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"),
    ))
    .unwrap();
    let p = import_copy(rel, conn).unwrap();
    let w = warning(&p, "sqlite_time_out_of_range");
    assert_eq!(w.count, 5);
    assert!(
        w.message.starts_with(
            "CUPTI_ACTIVITY_KIND_KERNEL (2), CUPTI_ACTIVITY_KIND_MEMCPY (1), \
             CUPTI_ACTIVITY_KIND_RUNTIME (1), CUPTI_ACTIVITY_KIND_SYNCHRONIZATION (1): "
        ),
        "{}",
        w.message
    );
    assert_sane(&p);
    assert_eq!(
        gpu_total_ns(&p, TimeRange::ALL),
        gpu_total_ns(&baseline, TimeRange::ALL) - dropped_gpu_ns
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn plausible_but_huge_durations_saturate_the_totals() {
    // Every kernel lasts 2^62 - 2 ns: each passes the rule, their sum does not fit in i64.
    let rel = "nvprof-sqlite/gpuml_titanv_mxnet_timeline.nvvp";
    let Some(conn) = sample_copy(rel) else {
        return;
    };
    conn.execute_batch(
        "UPDATE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL SET start = 1, \"end\" = 4611686018427387903",
    )
    .unwrap();
    let p = import_copy(rel, conn).unwrap();
    assert!(
        !p.warnings
            .iter()
            .any(|w| w.code == "sqlite_time_out_of_range")
    );
    assert_eq!(gpu_total_ns(&p, TimeRange::ALL), i64::MAX);
    let report = warpscope_core::analysis::summary_report(&p, TimeRange::ALL, None);
    assert_eq!(report.gpu_total_ns, i64::MAX);
    assert!(report.gpu_activities.iter().all(|r| r.stats.total_ns >= 0));
    let (s, e) = p.span_ns().unwrap();
    assert_eq!((s, e), (0, 4_611_686_018_427_387_902));
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nsys_metadata_tables_missing_a_column_load_the_activity_with_warnings() {
    let rel = "nsys-sqlite/nsys2026.1_testcuda_report2.sqlite";
    let Some(conn) = sample_copy(rel) else {
        return;
    };
    let baseline = import_copy(rel, sample_copy(rel).unwrap()).unwrap();
    for (table, column) in [
        ("ThreadNames", "nameId"),
        ("TARGET_INFO_GPU", "id"),
        ("PROCESSES", "globalPid"),
        ("META_DATA_EXPORT", "value"),
        ("TARGET_INFO_SESSION_START_TIME", "utcEpochNs"),
        ("TARGET_INFO_CUDA_DEVICE", "cudaId"),
    ] {
        drop_column(&conn, table, column);
    }
    let p = import_copy(rel, conn).unwrap();
    assert_eq!(p.event_count(), baseline.event_count());
    let w = warning(&p, "sqlite_metadata_column_missing");
    assert_eq!(w.count, 6);
    for place in [
        "ThreadNames.nameId",
        "TARGET_INFO_GPU.id",
        "PROCESSES.globalPid",
        "META_DATA_EXPORT.value",
        "TARGET_INFO_SESSION_START_TIME.utcEpochNs",
        "TARGET_INFO_CUDA_DEVICE.cudaId",
    ] {
        assert!(w.message.contains(place), "{}", w.message);
    }
    assert_eq!(p.origin.unix_ns, None);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn nvprof_metadata_tables_missing_a_column_load_the_activity_with_warnings() {
    let rel = "nvprof-sqlite/gpuml_titanv_mxnet_timeline.nvvp";
    let Some(conn) = sample_copy(rel) else {
        return;
    };
    let baseline = import_copy(rel, sample_copy(rel).unwrap()).unwrap();
    // Version has one column: rename it rather than drop it.
    conn.execute_batch("ALTER TABLE Version RENAME COLUMN version TO v")
        .unwrap();
    for (table, column) in [
        ("CUPTI_ACTIVITY_KIND_DEVICE", "id"),
        ("CUPTI_ACTIVITY_KIND_NAME", "objectId"),
        ("CUPTI_ACTIVITY_KIND_CONTEXT", "deviceId"),
    ] {
        drop_column(&conn, table, column);
    }
    let p = import_copy(rel, conn).unwrap();
    assert_eq!(p.event_count(), baseline.event_count());
    let w = warning(&p, "sqlite_metadata_column_missing");
    assert_eq!(w.count, 4);
    assert!(
        w.message.contains("CUPTI_ACTIVITY_KIND_NAME.objectId"),
        "{}",
        w.message
    );
    assert!(w.message.contains("Version.version"), "{}", w.message);
    // The device description is gone; the GPU is still there, by number.
    assert_eq!(p.devices[0].name, "GPU 0");
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn a_missing_or_broken_string_table_shows_placeholders_with_a_warning() {
    for (rel, table) in [
        (
            "nvprof-sqlite/csl7520_titanxpascal_matrix_profile.nvvp",
            "StringTable",
        ),
        ("nsys-sqlite/nsys2025.5_vecadd_report1.sqlite", "StringIds"),
    ] {
        let Some(conn) = sample_copy(rel) else {
            return;
        };
        let baseline = import_copy(rel, sample_copy(rel).unwrap()).unwrap();
        conn.execute_batch(&format!("DROP TABLE {table}")).unwrap();
        let p = import_copy(rel, conn).unwrap();
        assert_eq!(p.event_count(), baseline.event_count(), "{rel}");
        let w = warning(&p, "sqlite_string_table_unusable");
        assert!(
            w.message
                .starts_with(&format!("{table}: the table is missing")),
            "{}",
            w.message
        );
        let k = p
            .tracks
            .iter()
            .find(|t| t.events.kind.contains(&EventKind::Kernel))
            .unwrap();
        let i = k
            .events
            .kind
            .iter()
            .position(|&x| x == EventKind::Kernel)
            .unwrap();
        assert!(p.str(k.events.name[i]).starts_with("<string "), "{rel}");

        let conn = sample_copy(rel).unwrap();
        drop_column(&conn, table, "value");
        let p = import_copy(rel, conn).unwrap();
        let w = warning(&p, "sqlite_string_table_unusable");
        assert!(
            w.message.contains("the table has no column value"),
            "{}",
            w.message
        );
    }
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn a_string_table_without_an_index_resolves_the_same_names() {
    let rel = "nsys-sqlite/nsys2025.5_vecadd_report1.sqlite";
    let Some(conn) = sample_copy(rel) else {
        return;
    };
    let baseline = import_copy(rel, sample_copy(rel).unwrap()).unwrap();
    // CREATE TABLE AS drops the primary key: every lookup by id would scan the table.
    conn.execute_batch(
        "CREATE TABLE s AS SELECT id, value FROM StringIds; DROP TABLE StringIds;
         ALTER TABLE s RENAME TO StringIds;",
    )
    .unwrap();
    let p = import_copy(rel, conn).unwrap();
    assert_eq!(top3(&p), top3(&baseline));
    assert_eq!(warning_codes(&p), warning_codes(&baseline));
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn views_are_never_read() {
    // A view under an activity table's name that would never end: ignored, with a warning.
    let rel = "nsys-sqlite/nsys2025.5_vecadd_report1.sqlite";
    let Some(conn) = sample_copy(rel) else {
        return;
    };
    let baseline = import_copy(rel, sample_copy(rel).unwrap()).unwrap();
    conn.execute_batch(
        "CREATE VIEW CUPTI_ACTIVITY_KIND_MEMSET AS
             WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n)
             SELECT x AS start, x + 1 AS \"end\", 0 AS deviceId, 7 AS streamId, 8 AS bytes
             FROM n;",
    )
    .unwrap();
    let p = import_copy(rel, conn).unwrap();
    assert_eq!(p.event_count(), baseline.event_count());
    let w = warning(&p, "sqlite_view_ignored");
    assert_eq!(w.count, 1);
    assert!(
        w.message.contains("CUPTI_ACTIVITY_KIND_MEMSET"),
        "{}",
        w.message
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn a_cell_bigger_than_64_mib_fails_its_table_instead_of_taking_the_memory() {
    let rel = "nsys-sqlite/nsys2025.5_vecadd_report1.sqlite";
    let Some(conn) = sample_copy(rel) else {
        return;
    };
    // A kernel name of 80 MiB: gzip would make it a few kilobytes.
    conn.execute_batch(
        "UPDATE StringIds SET value = CAST(zeroblob(80 * 1024 * 1024) AS TEXT)
         WHERE id IN (SELECT shortName FROM CUPTI_ACTIVITY_KIND_KERNEL
                      UNION SELECT demangledName FROM CUPTI_ACTIVITY_KIND_KERNEL);",
    )
    .unwrap();
    let err = import_copy(rel, conn).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{rel}: table StringIds: string or blob too big")
    );
}

#[test]
fn an_nvtx_mark_at_the_capture_start_is_kept() {
    // nsys times count from the capture's start: a mark at 0 happened then, it is not a time
    // left uncollected (that is only a range whose start and end are both 0).
    let dir = temp_dir("nvtx-zero");
    let path = dir.join("nvtx.sqlite");
    write_nvtx_fixture(&path);
    let conn = Connection::open(&path).unwrap();
    conn.execute(
        "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, domainId)
         VALUES (0, NULL, 34, 'at the start', ?1, 0)",
        [global_tid(100, 101)],
    )
    .unwrap();
    drop(conn);
    let p = load(&path);
    let names: Vec<&str> = p
        .tracks
        .iter()
        .flat_map(|t| {
            (0..t.events.len())
                .filter(|&i| t.events.kind[i] == EventKind::Nvtx)
                .map(|i| p.str(t.events.name[i]))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(names.contains(&"at the start"), "{names:?}");
    assert_eq!(warning_codes(&p), vec!["nvtx_start_without_end"]);
}
