//! nvprof CSV and text importer: the numbers of `formats.md` section 9 on the samples in
//! `../shared/samples/nvprof-csv` and `nvprof-text`, and malformed inputs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{gpu_kind_totals, kernel_streams, load, sample};
use warpscope_core::analysis::{api_calls, copies_by_kind, gpu_activities, summary_report};
use warpscope_core::model::{CopyKind, EventKind, Format, GpuLane, SummarySection, TrackKey};
use warpscope_core::{ImportError, Profile, Progress, TimeRange, import_file};

/// (count, summed duration) of events named `name` of `kind`, on any track.
fn named(p: &Profile, kind: EventKind, name: &str) -> (u64, i64) {
    let mut n = 0;
    let mut total = 0;
    for t in &p.tracks {
        for i in 0..t.events.len() {
            if t.events.kind[i] == kind && p.str(t.events.name[i]) == name {
                n += 1;
                total += t.events.dur_ns[i];
            }
        }
    }
    (n, total)
}

/// Summed bytes of the copies of `kind` events named `name`.
fn named_bytes(p: &Profile, kind: EventKind, name: &str) -> u64 {
    let mut bytes = 0;
    for t in &p.tracks {
        for i in 0..t.events.len() {
            if t.events.kind[i] == kind && p.str(t.events.name[i]) == name {
                bytes += p.copy_info(t, i).and_then(|c| c.bytes).unwrap_or(0);
            }
        }
    }
    bytes
}

/// Kernels by name: (summed ns, calls), ranked by summed ns.
fn top_kernels(p: &Profile) -> Vec<(String, i64, u64)> {
    let mut by: BTreeMap<String, (i64, u64)> = BTreeMap::new();
    for t in &p.tracks {
        for i in 0..t.events.len() {
            if t.events.kind[i] == EventKind::Kernel {
                let e = by.entry(p.str(t.events.name[i]).to_string()).or_default();
                e.0 += t.events.dur_ns[i];
                e.1 += 1;
            }
        }
    }
    let mut v: Vec<_> = by.into_iter().map(|(n, (d, c))| (n, d, c)).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

fn warning<'a>(p: &'a Profile, code: &str) -> &'a warpscope_core::model::Warning {
    p.warnings
        .iter()
        .find(|w| w.code == code)
        .unwrap_or_else(|| panic!("no warning {code}: {:?}", p.warnings))
}

// ---------------------------------------------------------------------------------------------
// Samples

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn csv_gpu_trace() {
    let Some(path) = sample("nvprof-csv/cfd_titanxp_print-gpu-trace.csv") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.format, Format::NvprofCsv);
    assert_eq!(p.source.tool, "nvprof");
    assert_eq!(p.origin.raw_ns, 1_183_779_000);
    assert_eq!(p.event_count(), 16238);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (14003, 402_140_420));
    let top = top_kernels(&p);
    assert_eq!(
        top[..3],
        [
            (
                "cuda_compute_flux(int, int*, float*, float*, float*)".to_string(),
                297_488_829,
                6000
            ),
            (
                "cuda_time_step(int, int, float*, float*, float*, float*)".to_string(),
                88_668_323,
                6000
            ),
            (
                "cuda_compute_step_factor(int, float*, float*, float*)".to_string(),
                15_163_683,
                2000
            ),
        ]
    );
    assert_eq!(
        named(&p, EventKind::Memcpy, "[CUDA memcpy HtoD]"),
        (5, 3776)
    );
    assert_eq!(
        named(&p, EventKind::Memcpy, "[CUDA memcpy DtoD]"),
        (2000, 19_552_077)
    );
    assert_eq!(gpu_kind_totals(&p, EventKind::Memcpy), (2005, 19_555_853));
    assert_eq!(gpu_kind_totals(&p, EventKind::Memset), (1, 1312));
    let um = EventKind::UnifiedMemory;
    assert_eq!(
        named(&p, um, "[Unified Memory Memcpy HtoD]"),
        (160, 717_920)
    );
    assert_eq!(
        named_bytes(&p, um, "[Unified Memory Memcpy HtoD]"),
        6_610_944
    );
    assert_eq!(
        named(&p, um, "[Unified Memory GPU page faults]"),
        (20, 3_207_296)
    );
    assert_eq!(named(&p, um, "[Unified Memory CPU page faults]"), (49, 0));
    assert_eq!(kernel_streams(&p), vec![(0, 7)]);
    assert_eq!(p.devices.len(), 1);
    assert_eq!(
        (p.devices[0].id, p.devices[0].name.as_str()),
        (0, "TITAN Xp")
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);

    // Lanes: kernels on (0, 1, 7), migrations on the device's unified-memory lane, CPU faults
    // on their own host track.
    let kernel_track = p
        .tracks
        .iter()
        .find(|t| t.events.kind.contains(&EventKind::Kernel))
        .unwrap();
    assert_eq!(
        kernel_track.key,
        TrackKey::Gpu {
            device: 0,
            context: 1,
            stream: 7,
            lane: GpuLane::Work
        }
    );
    assert_eq!(kernel_track.name, "stream 7");
    let cpu_faults = p
        .tracks
        .iter()
        .find(|t| t.name == "CPU page faults")
        .unwrap();
    assert!(!cpu_faults.key.is_gpu());
    assert_eq!(cpu_faults.events.len(), 49);
    assert!(p.tracks.iter().any(|t| matches!(
        t.key,
        TrackKey::Gpu {
            device: 0,
            stream: 0,
            lane: GpuLane::UnifiedMemory,
            ..
        }
    ) && t.events.len() == 180));

    // Details: correlation, launch configuration, copy sizes and memory kinds.
    let k = p.kernels.get(0).unwrap();
    assert!(k.correlation.is_some());
    assert_eq!(k.block, Some([192, 1, 1]));
    let dtod: Vec<_> = p
        .copies
        .iter()
        .filter(|c| c.kind == CopyKind::DtoD)
        .collect();
    assert_eq!(dtod.len(), 2000);
    // 1.853027 MB = 1943039.6 B
    assert_eq!(dtod[0].bytes, Some(1_943_040));
    assert_eq!(
        dtod[0].src_kind,
        Some(warpscope_core::model::MemoryKind::Managed)
    );
    assert_eq!(p.process_names.len(), 1);
    assert!(
        p.source
            .details
            .iter()
            .any(|(k, v)| k == "command" && v.starts_with("./euler3d_adapt"))
    );

    // Analysis: GPU activities rank kernels and copies; UM migrations are in the copies table.
    let acts = gpu_activities(&p, TimeRange::ALL);
    assert_eq!(acts.len(), 7);
    assert_eq!(acts[0].stats.total_ns, 297_488_829);
    let copies = copies_by_kind(&p, TimeRange::ALL);
    let uhtod = copies.iter().find(|c| c.kind == "Unified HtoD").unwrap();
    assert_eq!((uhtod.calls, uhtod.bytes), (160, 6_610_944));
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn csv_gpu_summary() {
    let Some(path) = sample("nvprof-csv/cfd_titanxp_print-gpu-summary.csv") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.format, Format::NvprofCsv);
    assert_eq!(p.event_count(), 0);
    let s = p.recorded_summary.as_ref().unwrap();
    let gpu: Vec<_> = s
        .rows
        .iter()
        .filter(|r| r.section == SummarySection::GpuActivities)
        .collect();
    assert_eq!(gpu.len(), 7);
    assert_eq!(s.rows.len(), 7);
    let r = &s.rows[0];
    assert_eq!(
        r.name,
        "cuda_compute_flux(int, int*, float*, float*, float*)"
    );
    assert_eq!(
        (r.total_ns, r.calls, r.avg_ns, r.min_ns, r.max_ns),
        (268_352_834, 6000, 44_725, 43_106, 1_791_976)
    );
    assert!((r.time_pct - 68.739_052).abs() < 1e-9);
    assert_eq!(s.rows[6].name, "[CUDA memset]");
    assert_eq!(s.rows[6].total_ns, 1088);
    assert_eq!(s.unified_memory.len(), 2);
    let h = &s.unified_memory[0];
    assert_eq!(
        (h.device.as_str(), h.name.as_str(), h.count),
        ("TITAN Xp (0)", "Host To Device", Some(158))
    );
    // 6.304688 MB is 6610944.5 bytes as written (nvprof rounded 6610944 B up to 6 decimals).
    assert_eq!(h.total_bytes, Some(6_610_945));
    assert_eq!(h.avg_bytes, Some(41_841));
    assert_eq!(h.total_ns, Some(0));
    let f = &s.unified_memory[1];
    assert_eq!(
        (f.name.as_str(), f.count, f.total_bytes),
        ("Gpu page fault groups", Some(16), None)
    );
    assert_eq!(s.cpu_page_faults, Some(49));

    // The tables are the file's rows, in its order, never recomputed.
    let acts = gpu_activities(&p, TimeRange::ALL);
    assert_eq!(acts.len(), 7);
    for (a, r) in acts.iter().zip(&s.rows) {
        assert_eq!(
            (&a.name, a.stats.total_ns, a.stats.calls),
            (&r.name, r.total_ns, r.calls)
        );
        assert!((a.time_pct - r.time_pct).abs() < 1e-12);
    }
    let rep = summary_report(&p, TimeRange::ALL, None);
    assert_eq!(
        rep.gpu_total_ns,
        s.rows.iter().map(|r| r.total_ns).sum::<i64>()
    );
    assert!(rep.api.is_empty());
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn csv_gpu_and_api_summary() {
    let Some(path) = sample("nvprof-csv/cfd_titanxp_gpu-and-api-summary.csv") else {
        return;
    };
    let p = load(&path);
    let s = p.recorded_summary.as_ref().unwrap();
    let count = |sec| s.rows.iter().filter(|r| r.section == sec).count();
    assert_eq!(count(SummarySection::GpuActivities), 7);
    assert_eq!(count(SummarySection::ApiCalls), 19);
    let flux = s
        .rows
        .iter()
        .find(|r| r.name.starts_with("cuda_compute_flux"))
        .unwrap();
    assert_eq!((flux.total_ns, flux.calls), (302_355_298, 6000));
    let api = api_calls(&p, TimeRange::ALL);
    assert_eq!(api.len(), 19);
    assert_eq!(api[0].name, "cudaMemcpyToSymbol");
    assert_eq!(
        (api[0].stats.total_ns, api[0].stats.calls),
        (1_077_558_077, 5)
    );
    // Avg 215511.615000 us, Min 6.776000 us, Max 1077.530004 ms
    assert_eq!(
        (
            api[0].stats.avg_ns,
            api[0].stats.min_ns,
            api[0].stats.max_ns
        ),
        (215_511_615, 6_776, 1_077_530_004)
    );
    assert_eq!(api[18].name, "cudaGetDevice");
    assert_eq!(s.unified_memory.len(), 2);
    assert_eq!(s.unified_memory[0].count, Some(166));
    assert_eq!(s.cpu_page_faults, Some(49));
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn text_summary_new_layout_with_unified_memory() {
    let Some(path) = sample("nvprof-text/cfd_titanxp_summary-gpu-api-um.txt") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.format, Format::NvprofText);
    let s = p.recorded_summary.as_ref().unwrap();
    let gpu: Vec<_> = s
        .rows
        .iter()
        .filter(|r| r.section == SummarySection::GpuActivities)
        .collect();
    let api: Vec<_> = s
        .rows
        .iter()
        .filter(|r| r.section == SummarySection::ApiCalls)
        .collect();
    assert_eq!((gpu.len(), api.len()), (7, 19));
    assert_eq!(
        gpu[0].name,
        "cuda_compute_flux(int, int*, float*, float*, float*)"
    );
    assert_eq!(
        (gpu[0].total_ns, gpu[0].calls, gpu[0].avg_ns, gpu[0].max_ns),
        (305_080_000, 6000, 50_846, 1_705_000)
    );
    assert!((gpu[0].time_pct - 71.05).abs() < 1e-9);
    // `812ns` and `1.1840us` in one table.
    let htod = gpu.iter().find(|r| r.name == "[CUDA memcpy HtoD]").unwrap();
    assert_eq!(
        (htod.total_ns, htod.avg_ns, htod.min_ns, htod.max_ns),
        (4064, 812, 768, 992)
    );
    assert_eq!(api[0].name, "cudaMemcpyToSymbol");
    assert_eq!(
        (api[0].total_ns, api[0].calls, api[0].max_ns),
        (1_052_940_000, 5, 1_052_910_000)
    );
    assert_eq!(api[18].name, "cuDeviceGet");
    assert_eq!(s.unified_memory.len(), 2);
    let h = &s.unified_memory[0];
    assert_eq!(
        (
            h.device.as_str(),
            h.name.as_str(),
            h.count,
            h.total_bytes,
            h.total_ns
        ),
        (
            "TITAN Xp (0)",
            "Host To Device",
            Some(166),
            Some(6_610_945),
            Some(741_440)
        )
    );
    assert_eq!(h.avg_bytes, Some(39_824)); // 38.891 KB
    let f = &s.unified_memory[1];
    assert_eq!(
        (
            f.name.as_str(),
            f.count,
            f.avg_bytes,
            f.total_bytes,
            f.total_ns
        ),
        (
            "Gpu page fault groups",
            Some(18),
            None,
            None,
            Some(2_854_304)
        )
    );
    assert_eq!(s.cpu_page_faults, Some(49));
    assert_eq!(p.devices.len(), 1);
    assert_eq!(p.devices[0].name, "TITAN Xp");

    let rep = summary_report(&p, TimeRange::ALL, None);
    assert_eq!(rep.gpu_activities.len(), 7);
    assert_eq!(rep.api.len(), 19);
    let names: Vec<_> = rep.api.iter().map(|r| r.name.as_str()).collect();
    let file_order: Vec<_> = api.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, file_order);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn text_summary_with_application_noise_and_mangled_names() {
    let Some(path) = sample("nvprof-text/dlprof_k80x2_tensorflow_summary-with-app-noise.txt")
    else {
        return;
    };
    let p = load(&path);
    let s = p.recorded_summary.as_ref().unwrap();
    let count = |sec| s.rows.iter().filter(|r| r.section == sec).count();
    assert_eq!(count(SummarySection::GpuActivities), 62);
    assert_eq!(count(SummarySection::ApiCalls), 61);
    let r = &s.rows[0];
    assert_eq!(
        (r.name.as_str(), r.total_ns, r.calls),
        ("[CUDA memcpy PtoP]", 13_069_600_000, 94_774)
    );
    // Names are kept as written, mangled ones included.
    assert_eq!(
        s.rows.iter().filter(|r| r.name.starts_with("_Z")).count(),
        4
    );
    let last = s.rows.last().unwrap();
    assert_eq!(
        (last.name.as_str(), last.total_ns, last.min_ns),
        ("cuCtxGetCurrent", 494, 207)
    );
    assert_eq!(p.process_names.len(), 1);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn text_summary_old_layout() {
    let Some(path) = sample("nvprof-text/thrust2d_gtx1070_affine_summary-oldformat.txt") else {
        return;
    };
    let p = load(&path);
    let s = p.recorded_summary.as_ref().unwrap();
    let count = |sec| s.rows.iter().filter(|r| r.section == sec).count();
    assert_eq!(count(SummarySection::GpuActivities), 3);
    assert_eq!(count(SummarySection::ApiCalls), 20);
    let r = &s.rows[0];
    assert_eq!(
        (r.name.as_str(), r.total_ns, r.calls, r.min_ns),
        ("[CUDA memcpy HtoD]", 79_809, 3, 672)
    );
    assert!(
        s.rows[2]
            .name
            .starts_with("void cv::cuda::device::imgproc::warp<")
    );
    let api: Vec<_> = s
        .rows
        .iter()
        .filter(|r| r.section == SummarySection::ApiCalls)
        .collect();
    assert_eq!(
        (api[0].name.as_str(), api[0].total_ns, api[0].avg_ns),
        ("cudaMallocPitch", 8_512_350_000, 4_256_180_000)
    );
    assert_eq!(api[19].name, "cudaCreateChannelDesc");
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn text_gpu_trace() {
    let Some(path) = sample("nvprof-text/cudastream_titanxp_print-gpu-trace.txt") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.format, Format::NvprofText);
    assert_eq!(p.event_count(), 604);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (501, 742_137_600));
    let top = top_kernels(&p);
    assert_eq!(top.len(), 6);
    assert_eq!(
        top[..3],
        [
            (
                "void add_kernel<double>(double const *, double const *, double*)".to_string(),
                184_757_900,
                100
            ),
            (
                "void triad_kernel<double>(double*, double const *, double const *)".to_string(),
                184_749_900,
                100
            ),
            (
                "void mul_kernel<double>(double*, double const *)".to_string(),
                124_126_400,
                100
            ),
        ]
    );
    assert_eq!(
        named(&p, EventKind::Memcpy, "[CUDA memcpy DtoH]"),
        (103, 182_116_261)
    );
    assert_eq!(
        named_bytes(&p, EventKind::Memcpy, "[CUDA memcpy DtoH]"),
        100 * 2048 + 3 * 268_435_456
    );
    assert_eq!(named(&p, EventKind::Memcpy, "[CUDA memcpy HtoD]").0, 0);
    assert_eq!(gpu_kind_totals(&p, EventKind::Memset).0, 0);
    assert_eq!(kernel_streams(&p), vec![(0, 7)]);
    // ` [128]` is the correlation id, not part of the name.
    let track = p
        .tracks
        .iter()
        .find(|t| t.events.kind.contains(&EventKind::Kernel))
        .unwrap();
    let first = p.kernel_info(track, 0).unwrap();
    assert_eq!(first.correlation, Some(128));
    assert_eq!(first.grid, Some([32768, 1, 1]));
    assert_eq!(first.block, Some([1024, 1, 1]));
    assert_eq!(first.registers_per_thread, Some(14));
    assert_eq!(first.static_shared_bytes, Some(0));
    assert_eq!(
        p.str(track.events.name[0]),
        "void init_kernel<double>(double*, double*, double*, double, double, double)"
    );
    let dot = p
        .kernels
        .iter()
        .find(|k| k.static_shared_bytes == Some(8192))
        .unwrap();
    assert_eq!(dot.grid, Some([256, 1, 1]));
    assert_eq!(p.origin.raw_ns, 309_240_000);
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn text_gpu_trace_unified_memory_layout() {
    let Some(path) = sample("nvprof-text/bfs_titanxp_print-gpu-trace-um.txt") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.event_count(), 253);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel).0, 0);
    let um = EventKind::UnifiedMemory;
    assert_eq!(named(&p, um, "[Unified Memory CPU page faults]").0, 155);
    assert_eq!(named(&p, um, "[Unified Memory GPU page faults]").0, 12);
    assert_eq!(named(&p, um, "[Unified Memory Memcpy HtoD]").0, 29);
    assert_eq!(named(&p, um, "[Unified Memory Memcpy DtoH]").0, 25);
    assert_eq!(named(&p, um, "[Unified Memory page thrash]").0, 32);
    // Truncated device cells are kept as text, on a host-side track.
    let thrash = p
        .tracks
        .iter()
        .find(|t| t.name == "unified memory (CPU, TITAN Xp ()")
        .unwrap();
    assert_eq!(thrash.events.len(), 32);
    assert!(!thrash.key.is_gpu());
    // The last row: 188.000000KB in 26.624us.
    let dtoh_bytes = named_bytes(&p, um, "[Unified Memory Memcpy DtoH]");
    assert!(dtoh_bytes >= 188 * 1024);
    let w = warning(&p, "nvprof_warning");
    assert!(
        w.message
            .starts_with("nvprof: 2 records have invalid timestamps"),
        "{}",
        w.message
    );
    assert_eq!(p.origin.raw_ns, 1_182_080_000);
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn cpu_profiling_output_is_rejected() {
    let Some(path) = sample("nvprof-csv/cfd_titanxp_cpu-profiling.csv") else {
        return;
    };
    let err = import_file(&path, &Progress::new()).unwrap_err();
    assert!(matches!(err, ImportError::Unsupported { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: nvprof CPU-profiling output (a text tree, not a trace or summary; `CPU \
             profiling result` on line 2); profile with `--print-gpu-trace` or \
             `--print-gpu-summary` instead",
            path.display()
        )
    );
    assert_eq!(err.to_string().lines().count(), 1);
}

// ---------------------------------------------------------------------------------------------
// Fixtures written here

const TRACE_HEADER: &str = "\"Start\",\"Duration\",\"Grid X\",\"Grid Y\",\"Grid Z\",\"Block X\",\
\"Block Y\",\"Block Z\",\"Registers Per Thread\",\"Static SMem\",\"Dynamic SMem\",\"Size\",\
\"Throughput\",\"SrcMemType\",\"DstMemType\",\"Device\",\"Context\",\"Stream\",\
\"Unified Memory\",\"Virtual Address\",\"Name\",\"Correlation_ID\"";
const TRACE_UNITS: &str = "s,ms,,,,,,,,B,B,MB,GB/s,,,,,,B,,,";
const KERNEL_ROW_1: &str = "1.500000,0.010000,506,1,1,192,1,1,24,0,0,,,,,\"TITAN Xp (0)\",\"1\",\"7\",,,\"k(int, float*)\",121";
const KERNEL_ROW_2: &str = "1.500020,0.020000,506,1,1,192,1,1,24,0,0,,,,,\"TITAN Xp (0)\",\"1\",\"7\",,,\"k(int, float*)\",122";

struct Fixture(PathBuf);

impl Fixture {
    fn new(name: &str, content: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("warpscope-nvprof-{}-{}", std::process::id(), name));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.csv"));
        std::fs::write(&path, content).unwrap();
        Self(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn framed(body: &str) -> String {
    format!(
        "==42== NVPROF is profiling process 42, command: ./app\n\
         ==42== Profiling application: ./app\n\
         ==42== Profiling result:\n{body}"
    )
}

#[test]
fn csv_cut_mid_row_keeps_the_rest() {
    // Line 4 header, 5 units, 6 and 7 rows, 8 cut inside the kernel name (no final newline).
    let body = format!(
        "{TRACE_HEADER}\n{TRACE_UNITS}\n{KERNEL_ROW_1}\n{KERNEL_ROW_2}\n\
         1.500040,0.030000,506,1,1,192,1,1,24,0,0,,,,,\"TITAN Xp (0)\",\"1\",\"7\",,,\"k(int, fl"
    );
    let f = Fixture::new("cut", &framed(&body));
    let p = load(f.path());
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (2, 30_000));
    let w = warning(&p, "truncated");
    assert_eq!(w.count, 1);
    assert_eq!(
        w.message,
        "the file ends in the middle of a row: line 8 has 21 of 22 fields and was skipped"
    );
    assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
}

#[test]
fn csv_cut_after_a_complete_row_warns_that_it_may_be_short() {
    let body = format!("{TRACE_HEADER}\n{TRACE_UNITS}\n{KERNEL_ROW_1}\n{KERNEL_ROW_2}");
    let f = Fixture::new("cut-complete", &framed(&body));
    let p = load(f.path());
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel).0, 2);
    assert_eq!(
        warning(&p, "maybe_truncated").message,
        "the file ends without a line break after line 7; its last row may be cut short"
    );
}

#[test]
fn csv_missing_units_row_is_an_error_naming_the_line() {
    let body = format!("{TRACE_HEADER}\n{KERNEL_ROW_1}\n{KERNEL_ROW_2}\n");
    let f = Fixture::new("nounits", &framed(&body));
    let err = import_file(f.path(), &Progress::new()).unwrap_err();
    assert!(matches!(err, ImportError::Corrupt { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{}: line 5: the units row is missing: nvprof writes one unit per column \
             (`s,ms,,...`) on the line after the header (line 4), but this line is data \
             (`1.500000,0.010000,506,1,1,192,1,1,24,0,0`)",
            f.path().display()
        )
    );
}

#[test]
fn csv_unknown_time_unit_is_an_error() {
    let body = format!("{TRACE_HEADER}\nmin,ms,,,,,,,,B,B,MB,GB/s,,,,,,B,,,\n{KERNEL_ROW_1}\n");
    let f = Fixture::new("badunit", &framed(&body));
    let err = import_file(f.path(), &Progress::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: line 5: unknown unit `min` for column `Start` in the units row",
            f.path().display()
        )
    );
}

#[test]
fn empty_inputs_are_errors() {
    let f = Fixture::new("empty", "");
    let err = import_file(f.path(), &Progress::new()).unwrap_err();
    assert!(matches!(err, ImportError::Empty { .. }), "{err:?}");
    let err = warpscope_core::import::nvprof::import(
        warpscope_core::Input::File(f.path()),
        &Progress::new(),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{}: file is empty", f.path().display())
    );

    let f = Fixture::new(
        "empty-table",
        &framed(&format!("{TRACE_HEADER}\n{TRACE_UNITS}\n")),
    );
    let err = import_file(f.path(), &Progress::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: line 4: the table has a header but no rows",
            f.path().display()
        )
    );

    let f = Fixture::new(
        "nothing",
        "==42== Profiling application: ./app\n==42== Profiling result:\n==42== No kernels were profiled.\n",
    );
    let err = import_file(f.path(), &Progress::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: nvprof profiled nothing (`No kernels were profiled.`)",
            f.path().display()
        )
    );
}

#[test]
fn garbage_is_an_error_naming_the_line() {
    let f = Fixture::new(
        "garbage",
        "==42== Profiling result:\n#&*@ not a table\n\u{1}\u{2}binary-ish\n",
    );
    let err = import_file(f.path(), &Progress::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: line 1: no nvprof table found: expected a GPU trace, API trace or summary \
             table (`\"Start\",\"Duration\",...`, `Start  Duration ...` or `Type  Time(%) ...`)",
            f.path().display()
        )
    );

    let body = format!("{TRACE_HEADER}\n{TRACE_UNITS}\nabc,def,ghi\nxyz\n");
    let f = Fixture::new("garbage-rows", &framed(&body));
    let err = import_file(f.path(), &Progress::new()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "{}: line 6: no row of the table could be read (Start `abc` is not a time)",
            f.path().display()
        )
    );

    // Bad rows among good ones are skipped with a warning that names the first.
    let body = format!("{TRACE_HEADER}\n{TRACE_UNITS}\n{KERNEL_ROW_1}\nabc,def\n{KERNEL_ROW_2}\n");
    let f = Fixture::new("some-garbage", &framed(&body));
    let p = load(f.path());
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel).0, 2);
    let w = warning(&p, "skipped_rows");
    assert_eq!(
        (w.count, w.message.as_str()),
        (
            1,
            "table rows that could not be read were skipped (first at line 7: Start `abc` is not a time)"
        )
    );
}

#[test]
fn api_trace_links_to_gpu_work() {
    let body = format!(
        "\"Start\",\"Duration\",\"Name\",\"Correlation_ID\"\n\
         us,us,,\n\
         1499990.5,3.250,\"cudaLaunch\",121\n\
         1500010.0,2.000,\"cudaLaunch\",122\n\
         1500100.0,1.000,\"cuCtxSynchronize\",130\n\
         \n==42== Profiling result:\n{TRACE_HEADER}\n{TRACE_UNITS}\n{KERNEL_ROW_1}\n{KERNEL_ROW_2}\n"
    );
    let f = Fixture::new("api", &framed(&body));
    let p = load(f.path());
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let api_track = p.tracks.iter().find(|t| t.name == "CUDA API").unwrap();
    assert_eq!(api_track.events.len(), 3);
    assert_eq!(api_track.events.dur_ns[0], 3250);
    assert_eq!(api_track.events.kind[2], EventKind::Driver);
    assert_eq!(p.origin.raw_ns, 1_499_990_500);
    assert_eq!(p.flows.len(), 2);
    let api = api_calls(&p, TimeRange::ALL);
    let launch = api.iter().find(|r| r.name == "cudaLaunch").unwrap();
    assert_eq!((launch.stats.calls, launch.stats.total_ns), (2, 5250));
}

#[test]
fn metrics_are_kept_not_dropped() {
    let body = "\"Device\",\"Kernel\",\"Invocations\",\"Metric Name\",\"Metric Description\",\"Min\",\"Max\",\"Avg\"\n\
                \"TITAN Xp (0)\",\"k(int)\",1,\"achieved_occupancy\",\"Achieved Occupancy\",0.5,0.5,0.5\n\
                \"TITAN Xp (0)\",\"k(int)\",1,\"ipc\",\"Executed IPC\",1.2,1.2,1.2\n";
    let text = format!(
        "==42== NVPROF is profiling process 42, command: ./app\n==42== Metric result:\n{body}"
    );
    let f = Fixture::new("metrics", &text);
    let p = load(f.path());
    let w = warning(&p, "metrics_not_shown");
    assert_eq!(w.count, 2);
    let (_, kept) = p
        .source
        .details
        .iter()
        .find(|(k, _)| k == "nvprof metric result")
        .unwrap();
    assert!(kept.contains("achieved_occupancy") && kept.contains("Executed IPC"));
}

#[test]
fn text_trace_demangles_names_nvprof_left_mangled() {
    // Right-aligned cells, as nvprof writes them.
    let row = |c: [&str; 11]| {
        format!(
            "{:>8}  {:>8}  {:>19}  {:>14}  {:>8}  {:>8}  {:>8}  {:>16}  {:>8}  {:>8}  {}",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9], c[10]
        )
    };
    let text = [
        "==7== Profiling result:".to_string(),
        row([
            "Start",
            "Duration",
            "Grid Size",
            "Block Size",
            "Regs*",
            "SSMem*",
            "DSMem*",
            "Device",
            "Context",
            "Stream",
            "Name",
        ]),
        row([
            "1.00000s",
            "2.0000us",
            "(1 1 1)",
            "(32 1 1)",
            "8",
            "0B",
            "0B",
            "Tesla K80 (1)",
            "1",
            "13",
            "_Z3fooi [5]",
        ]),
        row([
            "1.00001s",
            "640ns",
            "(1 1 1)",
            "(32 1 1)",
            "8",
            "1.0000KB",
            "-",
            "Tesla K80 (1)",
            "1",
            "13",
            "void bar<int>(int) [6]",
        ]),
        String::new(),
        "Regs: Number of registers used per CUDA thread.".to_string(),
        String::new(),
    ]
    .join("\n");
    let f = Fixture::new("mangled", &text);
    let p = load(f.path());
    assert_eq!(kernel_streams(&p), vec![(1, 13)]);
    assert_eq!(p.devices[0].name, "Tesla K80");
    let t = &p.tracks[0];
    assert_eq!(p.str(t.events.name[0]), "foo(int)");
    let k = p.kernel_info(t, 0).unwrap();
    assert_eq!(k.mangled_name.map(|m| p.str(m)), Some("_Z3fooi"));
    assert_eq!(k.correlation, Some(5));
    assert_eq!(t.events.dur_ns, vec![2000, 640]);
    let bar = p.kernel_info(t, 1).unwrap();
    assert_eq!(bar.mangled_name, None);
    assert_eq!(
        (bar.static_shared_bytes, bar.dynamic_shared_bytes),
        (Some(1024), None)
    );
}

#[test]
fn cuda8_csv_header_is_mapped_by_name() {
    // The 17-column CUDA 7/8 layout: no memory types, no correlation column, sizes in KB.
    let body = "\"Start\",\"Duration\",\"Grid X\",\"Grid Y\",\"Grid Z\",\"Block X\",\"Block Y\",\
\"Block Z\",\"Registers Per Thread\",\"Static SMem\",\"Dynamic SMem\",\"Size\",\"Throughput\",\
\"Device\",\"Context\",\"Stream\",\"Name\"\n\
us,us,,,,,,,,KB,KB,KB,GB/s,,,,\n\
250.5,1.25,,,,,,,,,,2.000000,1.5,\"GeForce GTX 1070 (0)\",\"1\",\"7\",\"[CUDA memcpy HtoD]\"\n\
260.0,12.5,64,1,1,256,1,1,32,1.000000,0.500000,,,\"GeForce GTX 1070 (0)\",\"1\",\"7\",\"add(float*, float const *)\"\n";
    let f = Fixture::new("cuda8", &framed(body));
    let p = load(f.path());
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (1, 12_500));
    assert_eq!(
        named_bytes(&p, EventKind::Memcpy, "[CUDA memcpy HtoD]"),
        2048
    );
    let k = p.kernels.get(0).unwrap();
    assert_eq!(
        (k.grid, k.block, k.registers_per_thread),
        (Some([64, 1, 1]), Some([256, 1, 1]), Some(32))
    );
    assert_eq!(
        (k.static_shared_bytes, k.dynamic_shared_bytes),
        (Some(1024), Some(512))
    );
    assert_eq!(p.devices[0].name, "GeForce GTX 1070");
    assert_eq!(p.origin.raw_ns, 250_500);
}

#[test]
fn text_api_trace() {
    let text = [
        "==5== Profiling result:",
        "   Start  Duration  Name",
        "1.00000s  10.500us  cudaMalloc",
        "1.00002s     812ns  cudaLaunch (foo(int) [121])",
        "some application output",
        "",
    ]
    .join("\n");
    let f = Fixture::new("api-text", &text);
    let p = load(f.path());
    let t = p.tracks.iter().find(|t| t.name == "CUDA API").unwrap();
    assert_eq!(t.events.dur_ns, vec![10_500, 812]);
    assert_eq!(p.str(t.events.name[1]), "cudaLaunch");
    // The application line inside the table is skipped and reported.
    let w = warning(&p, "skipped_rows");
    assert_eq!(
        w.message,
        "table rows that could not be read were skipped (first at line 5: Start `some app` is not a time)"
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository (not found when warpscope-core was built)"
)]
fn truncated_or_mangled_samples_never_panic() {
    let rels = [
        "nvprof-text/cudastream_titanxp_print-gpu-trace.txt",
        "nvprof-text/bfs_titanxp_print-gpu-trace-um.txt",
        "nvprof-text/cfd_titanxp_summary-gpu-api-um.txt",
        "nvprof-text/thrust2d_gtx1070_affine_summary-oldformat.txt",
        "nvprof-csv/cfd_titanxp_gpu-and-api-summary.csv",
    ];
    for rel in rels {
        let Some(path) = sample(rel) else {
            return;
        };
        let full = std::fs::read(&path).unwrap();
        let f = Fixture::new("trunc", "");
        for i in 0..40 {
            let cut = full.len() * i / 40 + i % 7;
            let mut bytes = full[..cut.min(full.len())].to_vec();
            if i % 3 == 0 {
                // Flip a byte inside the kept part too.
                let at = bytes.len() / 2;
                if let Some(b) = bytes.get_mut(at) {
                    *b = 0xFF;
                }
            }
            std::fs::write(f.path(), &bytes).unwrap();
            // Ok or Err, but never a panic.
            let _ = warpscope_core::import::nvprof::import(
                warpscope_core::Input::File(f.path()),
                &Progress::new(),
            );
        }
    }
}
