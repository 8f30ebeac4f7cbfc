//! Conformance of the AMD text importers (`docs/formats.md` §14) over
//! `../shared/samples/rocm` and the two AMD Kineto traces: the counts and sums of the
//! independent reference `scripts/amd_reference_text.py`, to the ns; devices, lanes and launch
//! details as the files give them; the `--stats` summaries against the traces they summarise;
//! and fixtures written here (a rocprofv3 run directory, later column layouts, broken files).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{load, sample};
use warpscope_core::analysis::gpu_activities;
use warpscope_core::import::rocprof::{import_set, read_stats};
use warpscope_core::model::{
    CopyKind, EventKind, Format, GpuVendor, MemoryDevice, Profile, SummarySection, TrackKey,
};
use warpscope_core::{Progress, TimeRange, import_bytes, import_file};

/// (number, summed ns) of kernels, copies and sets, and API calls, as the reference counts them.
fn counts(p: &Profile) -> BTreeMap<&'static str, (u64, i64)> {
    let mut out = BTreeMap::from([
        ("kernels", (0, 0)),
        ("copies", (0, 0)),
        ("api_calls", (0, 0)),
    ]);
    let mut add = |what, ns| {
        let e = out.get_mut(what).unwrap();
        e.0 += 1;
        e.1 += ns;
    };
    if let Some(s) = &p.recorded_summary {
        let mut out = out.clone();
        for r in &s.rows {
            let what = match r.section {
                SummarySection::ApiCalls => "api_calls",
                _ if r.name.starts_with("[HIP mem") => "copies",
                _ => "kernels",
            };
            let e = out.get_mut(what).unwrap();
            e.0 += r.calls;
            e.1 += r.total_ns;
        }
        return out;
    }
    for t in &p.tracks {
        for i in 0..t.events.len() {
            let ns = t.events.dur_ns[i];
            match t.events.kind[i] {
                EventKind::Kernel if t.key.is_gpu() => add("kernels", ns),
                EventKind::Memcpy | EventKind::Memset if t.key.is_gpu() => add("copies", ns),
                EventKind::Runtime | EventKind::Driver => add("api_calls", ns),
                _ => {}
            }
        }
    }
    out
}

/// Every AMD text sample (and the two AMD Kineto traces).
fn amd_text_samples() -> Vec<PathBuf> {
    let Some(dir) = sample("rocm") else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_str().unwrap();
            (n.ends_with(".csv") || n.ends_with(".json") || n.ends_with(".json.gz"))
                && !n.ends_with(".db")
        })
        .collect();
    files.push(dir.join("../chrome-kineto/hta_mi250_rocm6.2_minitoy.json.gz"));
    files.sort();
    files
}

#[test]
fn every_amd_text_sample_equals_the_independent_reference() {
    let files = amd_text_samples();
    if files.is_empty() {
        return;
    }
    assert_eq!(files.len(), 13, "{files:?}");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/amd_reference_text.py");
    let out = match Command::new("python3").arg(&script).args(&files).output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping the reference: python3 cannot run: {e}");
            return;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reference: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for f in &files {
        let p = load(f);
        let want = &reference[f.to_str().unwrap()];
        assert_eq!(p.source.format.as_str(), want["format"], "{}", f.display());
        for (what, (n, ns)) in counts(&p) {
            assert_eq!(
                (n, ns),
                (
                    want[what][0].as_u64().unwrap(),
                    want[what][1].as_i64().unwrap()
                ),
                "{} {what}",
                f.display()
            );
        }
    }
}

#[test]
fn kineto_on_mi300x_names_the_amd_device_by_its_event_number() {
    let Some(path) = sample("rocm/kineto_mi300x_bert_small.json.gz") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.tool, "PyTorch profiler (Kineto, ROCm)");
    assert_eq!(
        p.source.tool_version.as_deref(),
        Some("HIP runtime 6.4.43483, roctracer 4.1")
    );
    // deviceProperties says HIP device 0; every GPU event says 2: one device, GPU 2.
    assert_eq!(p.devices.len(), 1, "{:?}", p.devices);
    let d = &p.devices[0];
    assert_eq!(d.id, 2);
    assert_eq!(d.name, "AMD Instinct MI300X VF");
    assert_eq!(d.vendor, GpuVendor::Amd);
    assert_eq!(d.gfx_target.as_deref(), Some("gfx942"));
    assert_eq!(d.sm_count, Some(304));
    let numbering = p
        .source
        .details
        .iter()
        .find(|(k, _)| k == "device numbering")
        .unwrap();
    assert!(
        numbering.1.ends_with("HIP device 0 = GPU 2"),
        "{numbering:?}"
    );
    // The [memory] instants of HIP device 0 are GPU 2's.
    assert_eq!(
        p.memory.devices(),
        vec![MemoryDevice::Cpu, MemoryDevice::Gpu(2)]
    );
    // Texts name the runtime HIP.
    assert_eq!(p.runtime_name(), "HIP");
    let rows = gpu_activities(&p, TimeRange::ALL);
    assert!(rows.iter().any(|r| r.name == "[HIP memcpy DtoD]"));
    assert!(!rows.iter().any(|r| r.name.starts_with("[CUDA")));
    // 61 launches linked; the 100 flow ends without a start are no arrows and no warning.
    assert_eq!(p.flows.len(), 61);
    assert!(
        p.warnings.iter().all(|w| !w.code.contains("flow")),
        "{:?}",
        p.warnings
    );
}

#[test]
fn kineto_on_mi250_keeps_its_numbers_where_they_agree() {
    let Some(path) = sample("chrome-kineto/hta_mi250_rocm6.2_minitoy.json.gz") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.devices.len(), 4);
    let d = p.devices.iter().find(|d| d.id == 2).unwrap();
    assert_eq!(d.vendor, GpuVendor::Amd);
    assert_eq!(
        d.gfx_target.as_deref(),
        Some("gfx90a"),
        "from _ISA90a_ kernels"
    );
    assert_eq!(d.sm_count, Some(104));
    assert!(
        !p.source
            .details
            .iter()
            .any(|(k, _)| k == "device numbering")
    );
}

#[test]
fn rocprof_v1_json_reads_the_ns_args_and_the_devices_of_rocminfo() {
    let Some(path) = sample("rocm/rocprofv1_mi300a_results.json") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.format, Format::RocprofJson);
    let d = p.devices.iter().find(|d| d.id == 4).unwrap();
    assert_eq!(d.name, "AMDInstinctMI300A");
    assert_eq!(d.gfx_target.as_deref(), Some("gfx942"));
    assert_eq!(d.sm_count, Some(228));
    assert_eq!(p.devices.len(), 4, "the four GPU agents of rocminfo");
    let kernels: Vec<_> = p
        .tracks
        .iter()
        .filter(|t| t.events.kind.contains(&EventKind::Kernel))
        .collect();
    assert_eq!(kernels.len(), 1);
    let t = kernels[0];
    assert!(matches!(
        t.key,
        TrackKey::Gpu {
            device: 4,
            stream: 0,
            ..
        }
    ));
    assert_eq!(
        p.str(t.events.name[0]),
        "vector_add(float*, float*, float*, int)"
    );
    assert_eq!(
        t.events.dur_ns[0], 3_431_611,
        "EndNs - BeginNs, not the µs dur"
    );
    // Copies: sizes from the launching hipMemcpy's arguments, through the DataFlow flows.
    let mut copies: Vec<(CopyKind, Option<u64>)> =
        p.copies.iter().map(|c| (c.kind, c.bytes)).collect();
    copies.sort();
    assert_eq!(
        copies,
        [
            (CopyKind::HtoD, Some(4_000_000_000)),
            (CopyKind::HtoD, Some(4_000_000_000)),
            (CopyKind::DtoH, Some(4_000_000_000)),
        ]
    );
    assert_eq!(p.flows.len(), 4);
}

#[test]
fn rpd_json_tells_ops_by_desc_and_keeps_counters() {
    let Some(path) = sample("rocm/rpd_gfx90a_matmul.json") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.format, Format::RpdJson);
    assert_eq!(p.devices.len(), 1);
    assert_eq!(p.devices[0].id, 2);
    assert_eq!(
        p.devices[0].gfx_target.as_deref(),
        Some("gfx90a"),
        "from _ISA90a_"
    );
    assert!(p.tracks.iter().any(|t| t.name == "Hip 1087077"));
    let overhead: usize = p
        .tracks
        .iter()
        .map(|t| {
            t.events
                .kind
                .iter()
                .filter(|&&k| k == EventKind::Overhead)
                .count()
        })
        .sum();
    assert_eq!(overhead, 5, "rpd_tracer's own rows");
    assert_eq!(p.flows.len(), 85);
    let names: Vec<&str> = p.counters.iter().map(|c| c.name.as_str()).collect();
    for c in ["QueueDepth", "Idle", "sclk", "Allocated Memory"] {
        assert!(names.contains(&c), "{names:?}");
    }
    // The 6240 ns kernel of the .rpd is 6 µs here.
    assert!(p.tracks.iter().any(|t| t.events.dur_ns.contains(&6000)));
}

#[test]
fn rocprof_v1_kernel_trace_has_the_launch_resources() {
    let Some(path) = sample("rocm/rocprofv1_gunrock_results.csv") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.format, Format::RocprofCsv);
    let t = p
        .tracks
        .iter()
        .find(|t| t.events.kind.contains(&EventKind::Kernel))
        .unwrap();
    assert!(matches!(t.key, TrackKey::Gpu { device: 2, .. }));
    let first = t.events.first_starting_at_or_after(i64::MIN);
    assert_eq!(p.str(t.events.name[first]), "__amd_rocclr_copyBuffer");
    let k = p.kernel_info(t, first).unwrap();
    assert_eq!(k.grid, Some([304, 1, 1]), "155648 work-items / 512");
    assert_eq!(k.block, Some([512, 1, 1]));
    assert_eq!(k.registers_per_thread, Some(16));
    assert_eq!(k.accum_registers, Some(0));
    assert_eq!(k.scalar_registers, Some(32));
    assert_eq!(k.wave_size, Some(64));
    assert_eq!(k.static_shared_bytes, Some(0));
    assert_eq!(k.scratch_bytes, Some(0));
    let complete = p
        .source
        .details
        .iter()
        .find(|(k, _)| k == "CompleteNs")
        .unwrap();
    assert!(
        complete.1.starts_with("earlier than EndNs on 8 rows"),
        "{complete:?}"
    );
}

/// Each kernel's calls and total in a `--stats` summary equal warpscope's count and sum of it
/// in the trace of the same run.
#[test]
fn stats_summaries_equal_the_traces_they_summarise() {
    let Some(dir) = sample("rocm") else { return };
    for (stats, trace) in [
        (
            "rocprofv1_gunrock_results.stats.csv",
            "rocprofv1_gunrock_results.csv",
        ),
        (
            "rocprofv1_mi300a_results.stats.csv",
            "rocprofv1_mi300a_results.json",
        ),
        (
            "rocprofv1_mi300a_results.hip_stats.csv",
            "rocprofv1_mi300a_results.json",
        ),
    ] {
        let rows = read_stats(&dir.join(stats)).unwrap();
        let p = load(&dir.join(trace));
        let mut ours: BTreeMap<String, (u64, i64)> = BTreeMap::new();
        for t in &p.tracks {
            for i in 0..t.events.len() {
                if matches!(t.events.kind[i], EventKind::Kernel | EventKind::Runtime) {
                    let e = ours.entry(p.str(t.events.name[i]).to_string()).or_default();
                    e.0 += 1;
                    e.1 += t.events.dur_ns[i];
                }
            }
        }
        assert!(!rows.is_empty());
        for r in rows {
            assert_eq!(
                ours.get(&r.name),
                Some(&(r.calls, r.total_ns)),
                "{stats}: {}",
                r.name
            );
        }
    }
}

#[test]
fn a_stats_file_loads_as_the_tools_totals() {
    let Some(path) = sample("rocm/rocprofv3_docs_hip_api_stats.csv") else {
        return;
    };
    let p = load(&path);
    assert_eq!(p.source.format, Format::RocprofStats);
    let rows = &p.recorded_summary.as_ref().unwrap().rows;
    assert_eq!(rows.len(), 17);
    let free = rows.iter().find(|r| r.name == "hipFree").unwrap();
    assert_eq!(
        (
            free.calls,
            free.total_ns,
            free.avg_ns,
            free.min_ns,
            free.max_ns
        ),
        (12, 1_994_421, 166_201, 7790, 1_036_046)
    );
    assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    let v1 = load(&sample("rocm/rocprofv1_mi300a_results.copy_stats.csv").unwrap());
    let rows = &v1.recorded_summary.as_ref().unwrap().rows;
    assert_eq!(rows[0].name, "[HIP memcpy DtoH]");
    assert_eq!(v1.warnings[0].code, "stats_without_min_max");
}

#[test]
fn rocprofv3_documentation_files_each_load() {
    let Some(dir) = sample("rocm") else { return };
    let k = load(&dir.join("rocprofv3_docs_kernel_trace.csv"));
    let queues: Vec<u64> = k
        .tracks
        .iter()
        .filter_map(|t| match t.key {
            TrackKey::Gpu {
                device: 1, stream, ..
            } => Some(stream),
            _ => None,
        })
        .collect();
    assert_eq!(queues.len(), 4, "queues 1 to 4 of agent 1");
    let t = &k.tracks[0];
    let info = k.kernel_info(t, 0).unwrap();
    assert_eq!(
        info.grid,
        Some([16, 1024, 1]),
        "1024 x 1024 work-items in workgroups of 64 x 1"
    );
    assert_eq!(info.block, Some([64, 1, 1]));
    let c = load(&dir.join("rocprofv3_docs_memory_copy_trace.csv"));
    let kinds: Vec<CopyKind> = c.copies.iter().map(|c| c.kind).collect();
    assert_eq!(kinds, [CopyKind::HtoD, CopyKind::DtoH]);
    assert!(
        c.tracks
            .iter()
            .all(|t| matches!(t.key, TrackKey::Gpu { device: 1, .. }))
    );
    let h = load(&dir.join("rocprofv3_docs_hip_runtime_trace.csv"));
    assert_eq!(h.api_calls.len(), 8);
}

#[test]
fn rocminfo_text_is_refused_with_advice() {
    let Some(path) = sample("rocm/rocprofv1_mi300a_results.sysinfo.txt") else {
        return;
    };
    let err = import_file(&path, &Progress::new())
        .err()
        .unwrap()
        .to_string();
    assert!(
        err.ends_with(
            "this is rocminfo output (rocprof writes it beside a run as results.sysinfo.txt): it \
             describes the machine but holds no trace; open the run's results.db, results.json \
             or results.csv instead"
        ),
        "{err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Fixtures written here.

const KERNELS_V3_LATER: &str = "\"Kind\",\"Agent_Id\",\"Queue_Id\",\"Stream_Id\",\"Thread_Id\",\"Dispatch_Id\",\"Kernel_Id\",\"Kernel_Name\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\",\"LDS_Block_Size\",\"Scratch_Size\",\"Arch_VGPR_Count\",\"Accum_VGPR_Count\",\"SGPR_Count\",\"Workgroup_Size_X\",\"Workgroup_Size_Y\",\"Workgroup_Size_Z\",\"Grid_Size_X\",\"Grid_Size_Y\",\"Grid_Size_Z\"\n\
\"KERNEL_DISPATCH\",\"Agent 2\",1,0,7,1,3,\"gemm(float*)\",11,1000,3000,4096,16,128,64,96,256,1,1,1000,2,1\n\
\"KERNEL_DISPATCH\",\"Agent 2\",1,0,7,2,3,\"gemm(float*)\",12,5000,5500,4096,16,128,64,96,256,1,1,1000,2,1";

const API_V3: &str = "\"Domain\",\"Function\",\"Process_Id\",\"Thread_Id\",\"Correlation_Id\",\"Start_Timestamp\",\"End_Timestamp\"\n\
\"HIP_RUNTIME_API\",\"hipLaunchKernel\",7,7,11,500,900\n\
\"HIP_RUNTIME_API\",\"hipLaunchKernel\",7,7,12,4000,4100\n\
\"MARKER_CORE_API\",\"step 1\",7,7,0,100,6000\n";

#[test]
fn a_rocprofv3_run_directory_is_one_profile_with_launches_linked() {
    let dir = std::env::temp_dir().join(format!("warpscope_rocprofv3_run_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("77_kernel_trace.csv"), KERNELS_V3_LATER).unwrap();
    std::fs::write(dir.join("77_hip_api_trace.csv"), API_V3).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a trace").unwrap();
    let p = import_file(&dir, &Progress::new()).unwrap();
    assert_eq!(p.source.format, Format::Rocprofv3Csv);
    assert_eq!(p.flows.len(), 2, "both launches linked by Correlation_Id");
    let k = p
        .tracks
        .iter()
        .find(|t| t.events.kind.contains(&EventKind::Kernel))
        .unwrap();
    assert!(matches!(
        k.key,
        TrackKey::Gpu {
            device: 2,
            stream: 1,
            ..
        }
    ));
    let info = p.kernel_info(k, 0).unwrap();
    assert_eq!(info.grid, Some([4, 2, 1]));
    assert_eq!(info.static_shared_bytes, Some(4096));
    assert_eq!(info.scratch_bytes, Some(16));
    assert_eq!(info.registers_per_thread, Some(128));
    assert_eq!(info.accum_registers, Some(64));
    assert_eq!(info.scalar_registers, Some(96));
    let ranges: usize = p
        .tracks
        .iter()
        .map(|t| {
            t.events
                .kind
                .iter()
                .filter(|&&k| k == EventKind::Nvtx)
                .count()
        })
        .sum();
    assert_eq!(ranges, 1, "the ROCTx range");
    // The same two files given as a set.
    let set = import_set(
        &[
            dir.join("77_kernel_trace.csv"),
            dir.join("77_hip_api_trace.csv"),
        ],
        &Progress::new(),
    )
    .unwrap()
    .0;
    assert_eq!(set.flows.len(), 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn broken_amd_text_files_are_clear_errors_or_warnings() {
    let err = |name: &str, text: &str| {
        import_bytes(Path::new(name), text.as_bytes(), &Progress::new())
            .err()
            .map(|e| e.to_string())
    };
    assert_eq!(
        err(
            "stats.csv",
            "\"Name\",\"Calls\",\"TotalDurationNs\"\n\"k\",1\n"
        )
        .unwrap(),
        "stats.csv: line 2: a summary row without a name, a number of calls or a total"
    );
    // A row without times is skipped and counted.
    let p = import_bytes(
        Path::new("results.csv"),
        b"\"KernelName\",\"BeginNs\",\"EndNs\"\n\"k\",1,5\n\"k\",,\n\"k\",7,9",
        &Progress::new(),
    )
    .unwrap();
    assert_eq!(p.kernels.len(), 2);
    assert_eq!(p.warnings[0].code, "rows_skipped");
    assert_eq!(p.warnings[0].count, 1);
    // rocprof v1 JSON cut off mid-event keeps what it read.
    let cut = "{ \"traceEvents\":[{}\n,{\"args\":{\"name\":\"GPU0\"},\"ph\":\"M\",\"pid\":6,\"name\":\"process_name\"}\n,{\"ph\":\"X\",\"name\":\"k\",\"pid\":\"6\",\"tid\":\"1\",\"ts\":\"1\",\"dur\":\"2\",\"args\":{\"BeginNs\":\"1000\",\"EndNs\":\"3500\",\"dev-id\":\"2\",\"DurationNs\":\"2500\"}}\n,{\"ph\":\"X\",\"na";
    let p = import_bytes(Path::new("results.json"), cut.as_bytes(), &Progress::new()).unwrap();
    assert_eq!(p.kernels.len(), 1);
    assert!(
        p.warnings.iter().any(|w| w.code == "truncated"),
        "{:?}",
        p.warnings
    );
}

/// A Kineto trace recorded on ROCm, written here: `deviceProperties` and `[memory]` name HIP
/// devices 0 and 1, the GPU events HSA agents 4 and 5 (a host with four CPU agents).
fn rocm_kineto(event_devices: [u32; 2]) -> String {
    let kernel = |d: u32, ts: u32| {
        format!(
            r#"{{"ph": "X", "cat": "kernel", "name": "Cijk_Ailk_Bljk_MT64x64x8_MI16x16x1_ISA90a_K1", "pid": {d}, "tid": 0, "ts": {ts}, "dur": 2, "args": {{"device": {d}, "stream": 0, "correlation": {ts}}}}}"#
        )
    };
    let memory = |d: u32, ts: u32| {
        format!(
            r#"{{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 9, "tid": 9, "ts": {ts}, "args": {{"Total Reserved": 2048, "Total Allocated": 1024, "Bytes": 1024, "Device Id": {d}, "Device Type": 6, "Addr": {ts}}}}}"#
        )
    };
    let props = |id: u32| {
        format!(
            r#"{{"id": {id}, "name": "AMD Instinct MI250X", "numSms": 110, "computeMajor": 9, "computeMinor": 0}}"#
        )
    };
    format!(
        r#"{{"schemaVersion": 1, "hip_runtime_version": 60242134, "deviceProperties": [{}, {}], "traceEvents": [{}, {}, {}, {}]}}"#,
        props(0),
        props(1),
        kernel(event_devices[0], 10),
        kernel(event_devices[1], 20),
        memory(0, 5),
        memory(1, 6),
    )
}

#[test]
fn rocm_kineto_devices_are_joined_to_hip_numbers_by_rank() {
    let p = import_bytes(
        Path::new("rocm.json"),
        rocm_kineto([5, 4]).as_bytes(),
        &Progress::new(),
    )
    .unwrap();
    let ids: Vec<u32> = p.devices.iter().map(|d| d.id).collect();
    assert_eq!(ids, [4, 5], "HIP 0 is the lowest agent, HIP 1 the next");
    assert!(
        p.devices
            .iter()
            .all(|d| d.vendor == GpuVendor::Amd && d.sm_count == Some(110))
    );
    assert!(
        p.devices
            .iter()
            .all(|d| d.gfx_target.as_deref() == Some("gfx90a"))
    );
    assert_eq!(
        p.memory.devices(),
        [MemoryDevice::Gpu(4), MemoryDevice::Gpu(5)]
    );
    assert_eq!(
        p.source.tool_version.as_deref(),
        Some("HIP runtime 6.2.42134")
    );
    assert_eq!(p.runtime_name(), "HIP");
    // Where events and properties agree, nothing moves.
    let same = import_bytes(
        Path::new("rocm.json"),
        rocm_kineto([0, 1]).as_bytes(),
        &Progress::new(),
    )
    .unwrap();
    let ids: Vec<u32> = same.devices.iter().map(|d| d.id).collect();
    assert_eq!(ids, [0, 1]);
    assert_eq!(
        same.memory.devices(),
        [MemoryDevice::Gpu(0), MemoryDevice::Gpu(1)]
    );
    assert!(
        !same
            .source
            .details
            .iter()
            .any(|(k, _)| k == "device numbering")
    );
}
