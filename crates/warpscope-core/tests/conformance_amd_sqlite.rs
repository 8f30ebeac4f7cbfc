//! Conformance of the AMD SQLite importers (rocprofv3 rocpd schema 3, rocmProfileData RPD schema
//! 2, rocprof v1 `results.db`) with `docs/formats.md` section 13 on the samples under
//! `../shared/samples/rocm` (read there, never copied), with `scripts/amd_reference_db.py` (an
//! independent count written from that section), and on databases written here: the synthetic
//! rocprofv3 database of `scripts/gen_rocpd_sqlite.py --small`, and tables that tell the two
//! "rocpd" formats apart by `schema_version`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{gpu_kind_totals, load, sample};
use rusqlite::{Connection, MAIN_DB};
use warpscope_core::analysis::{AnalyzeOptions, analyze};
use warpscope_core::model::{
    CopyKind, EventKind, FlowKind, Format, GpuVendor, MemoryAction, MemoryDevice, MemorySource,
    Profile, TrackKey,
};
use warpscope_core::{ImportError, Progress, TimeRange, import_bytes};

const ROCPD: &str = "rocm/rocprofv3_7.1.1_mi300x_bmm_results.db";
const RPD: &str = "rocm/rpd_gfx90a_matmul.rpd";
const ROCPROF: &str = "rocm/rocprofv1_mi300a_results.db";

/// API calls on CPU threads: (count, summed duration).
fn api_totals(p: &Profile) -> (u64, i64) {
    let mut n = 0;
    let mut total = 0;
    for t in p.tracks.iter().filter(|t| !t.key.is_gpu()) {
        for i in 0..t.events.len() {
            if t.events.kind[i].is_api() {
                n += 1;
                total += t.events.dur_ns[i];
            }
        }
    }
    (n, total)
}

/// Copies by kind: (count, bytes).
fn copies(p: &Profile) -> BTreeMap<&'static str, (u64, u64)> {
    let mut m = BTreeMap::new();
    for t in &p.tracks {
        for i in 0..t.events.len() {
            if t.events.kind[i] != EventKind::Memcpy {
                continue;
            }
            let info = p.copy_info(t, i).unwrap();
            let e = m.entry(info.kind.as_str()).or_insert((0, 0));
            e.0 += 1;
            e.1 += info.bytes.unwrap_or(0);
        }
    }
    m
}

fn launch_flows(p: &Profile) -> usize {
    p.flows
        .iter()
        .filter(|f| f.kind == FlowKind::Launch)
        .count()
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository"
)]
fn rocprofv3_database_reads_as_the_docs_say() {
    let Some(path) = sample(ROCPD) else { return };
    let p = load(&path);
    assert_eq!(p.source.format, Format::RocpdSqlite);
    assert_eq!(p.source.schema_version.as_deref(), Some("3"));
    assert_eq!(p.source.tool, "rocprofv3");
    // The eight MI300X agents are devices 2..=9 (two CPU agents first).
    assert_eq!(p.devices.len(), 8, "{:?}", p.devices);
    let d = p.device(2).expect("GPU agent 2");
    assert_eq!(d.name, "AMD Instinct MI300X");
    assert_eq!(d.vendor, GpuVendor::Amd);
    assert_eq!(d.gfx_target.as_deref(), Some("gfx942"));
    assert_eq!(d.sm_count, Some(304));
    assert_eq!(d.memory_bytes, Some(206_141_652_992));
    // 150 ck_tile batched GEMMs and one fill, all on agent 2.
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (151, 2_604_546));
    assert!(copies(&p).is_empty(), "copy tracing was off");
    // 629 HIP calls: 325 runtime and 304 compiler (push/pop call configuration).
    assert_eq!(api_totals(&p), (629, 426_748_865));
    // Every dispatch is linked to the call that launched it (stack_id = correlation id):
    // 150 hipLaunchKernel and one hipMemset.
    assert_eq!(launch_flows(&p), 151);
    let gemm = p
        .tracks
        .iter()
        .find_map(|t| {
            (0..t.events.len()).find_map(|i| {
                let name = p.str(t.events.name[i]);
                (name.contains("BatchedGemmKernel")).then(|| p.kernel_info(t, i).unwrap())
            })
        })
        .expect("a GEMM");
    assert_eq!(gemm.block, Some([256, 1, 1]));
    // 512 × 128 work-items in workgroups of 256: 2 × 128 workgroups.
    assert_eq!(gemm.grid, Some([2, 128, 1]));
    assert_eq!(gemm.registers_per_thread, Some(128));
    assert_eq!(gemm.accum_registers, Some(384));
    assert_eq!(gemm.scalar_registers, Some(112));
    assert_eq!(gemm.static_shared_bytes, Some(65536));
    assert_eq!(gemm.wave_size, Some(64));
    assert!(gemm.correlation.is_some());
    // Lanes are named after the stream and the queue.
    let lane = p
        .tracks
        .iter()
        .find(|t| matches!(t.key, TrackKey::Gpu { device: 2, .. }))
        .expect("a lane of GPU 2");
    assert_eq!(lane.name, "Default Stream · Queue 0");
    // The analysis sees AMD kernels: MFMA GEMMs on matrix cores, occupancy from the registers.
    let ins = analyze(&p, TimeRange::ALL, &AnalyzeOptions::default());
    let k = ins
        .kernels
        .iter()
        .find(|k| k.name.contains("BatchedGemmKernel"))
        .expect("GEMM insight");
    assert!(k.tensor_cores);
    // 128 + 384 VGPRs fill the file (1 wave per SIMD) and 64 KiB of LDS the CU: 4 of 32 waves.
    assert_eq!(k.theoretical_occupancy_pct, Some(12.5));
    assert_eq!(
        k.occupancy_limiter.as_deref(),
        Some("registers+shared_memory")
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository"
)]
fn rpd_database_reads_as_the_docs_say() {
    let Some(path) = sample(RPD) else { return };
    let p = load(&path);
    assert_eq!(p.source.format, Format::RpdSqlite);
    assert_eq!(p.source.schema_version.as_deref(), Some("2"));
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (29, 26_399_795));
    assert_eq!(gpu_kind_totals(&p, EventKind::Memset).0, 1);
    let c = copies(&p);
    assert_eq!(c.get("HtoD"), Some(&(2, 2_032_000_000)));
    assert_eq!(c.get("DtoH"), Some(&(53, 296)));
    // 125 rows: 120 HIP calls and 5 the tracer wrote about itself.
    assert_eq!(api_totals(&p).0, 120);
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
    assert_eq!(overhead, 5);
    // Every operation has its launching call (rocpd_api_ops).
    assert_eq!(launch_flows(&p), 85);
    let d = p.device(2).expect("gpuId 2");
    assert_eq!(d.vendor, GpuVendor::Amd);
    assert_eq!(d.gfx_target.as_deref(), Some("gfx90a"));
    let ins = analyze(&p, TimeRange::ALL, &AnalyzeOptions::default());
    assert!(
        ins.kernels
            .iter()
            .any(|k| k.name.starts_with("Cijk_") && k.tensor_cores),
        "the Tensile MFMA GEMM is on matrix cores"
    );
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository"
)]
fn rocprof_v1_database_reads_as_the_docs_say() {
    let Some(path) = sample(ROCPROF) else { return };
    let p = load(&path);
    assert_eq!(p.source.format, Format::RocprofSqlite);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (1, 3_431_611));
    let c = copies(&p);
    // Sizes from the hipMemcpy calls' sizeBytes(4000000000).
    assert_eq!(c.get("HtoD"), Some(&(2, 8_000_000_000)));
    assert_eq!(c.get("DtoH"), Some(&(1, 4_000_000_000)));
    assert_eq!(api_totals(&p).0, 13);
    // hipLaunchKernel → the kernel, three hipMemcpy → their copies (Index).
    assert_eq!(launch_flows(&p), 4);
    let d = p.device(4).expect("dev-id 4");
    assert_eq!(d.vendor, GpuVendor::Amd);
}

/// The reference's JSON line for `path`, or `None` when python3 cannot run.
fn reference(path: &Path) -> Option<BTreeMap<String, serde_json::Value>> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/amd_reference_db.py");
    let out = match Command::new("python3").arg(&script).arg(path).output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("skipping the reference: python3 cannot run: {e}");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// warpscope's figures in the reference's terms.
fn ours(p: &Profile) -> BTreeMap<String, i64> {
    let (kernels, kernel_ns) = gpu_kind_totals(p, EventKind::Kernel);
    let (copies, copy_ns) = gpu_kind_totals(p, EventKind::Memcpy);
    let bytes: u64 = self::copies(p).values().map(|v| v.1).sum();
    let (api_calls, api_ns) = api_totals(p);
    [
        ("kernels", i64::try_from(kernels).unwrap()),
        ("kernel_ns", kernel_ns),
        ("copies", i64::try_from(copies).unwrap()),
        ("copy_ns", copy_ns),
        ("copy_bytes", i64::try_from(bytes).unwrap()),
        ("api_calls", i64::try_from(api_calls).unwrap()),
        ("api_ns", api_ns),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn assert_matches_reference(path: &Path) {
    let Some(r) = reference(path) else { return };
    let p = load(path);
    for (k, v) in ours(&p) {
        assert_eq!(
            r[&k].as_i64(),
            Some(v),
            "{}: {k}: reference {} against warpscope {v}",
            path.display(),
            r[&k]
        );
    }
    assert_eq!(r["format"].as_str(), Some(p.source.format.as_str()));
}

#[test]
#[cfg_attr(
    not(has_samples),
    ignore = "needs ../shared/samples next to the repository"
)]
fn every_amd_database_sample_equals_the_reference_to_the_ns() {
    for rel in [ROCPD, RPD, ROCPROF] {
        let Some(path) = sample(rel) else { return };
        assert_matches_reference(&path);
    }
}

/// The synthetic rocprofv3 database of `gen_rocpd_sqlite.py --small`, or `None` when python3
/// cannot run.
fn synthetic() -> Option<PathBuf> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("warpscope-amd-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("small_results.db");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/gen_rocpd_sqlite.py");
    match Command::new("python3")
        .arg(&script)
        .arg("--small")
        .arg(&path)
        .output()
    {
        Ok(o) if o.status.success() => Some(path),
        Ok(o) => panic!("{}", String::from_utf8_lossy(&o.stderr)),
        Err(e) => {
            eprintln!("skipping: python3 cannot run: {e}");
            None
        }
    }
}

#[test]
fn synthetic_rocprofv3_database_has_copies_markers_and_memory() {
    let Some(path) = synthetic() else { return };
    assert_matches_reference(&path);
    let p = load(&path);
    assert_eq!(p.source.format, Format::RocpdSqlite);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel).0, 4);
    let c = copies(&p);
    assert_eq!(c.values().map(|v| v.0).sum::<u64>(), 1);
    // Each launch and copy is linked to its call.
    assert_eq!(launch_flows(&p), 5);
    // The ROCTx range of the step, named by its message.
    let marker = p
        .tracks
        .iter()
        .flat_map(|t| (0..t.events.len()).map(move |i| (t, i)))
        .find(|&(t, i)| t.events.kind[i] == EventKind::Nvtx)
        .expect("a ROCTx range");
    assert_eq!(p.str(marker.0.events.name[marker.1]), "step 1");
    // The zero-length call is an instant named after its family.
    assert!(p.tracks.iter().any(|t| {
        (0..t.events.len()).any(|i| {
            t.events.kind[i] == EventKind::Instant
                && p.str(t.events.name[i]) == "HIP_RUNTIME_API_EXT"
        })
    }));
    // One 2 MiB or 64 MiB allocation on GPU 3, on the thread that made it.
    assert_eq!(p.memory.source, MemorySource::Rocpd);
    let m = &p.memory.events;
    assert_eq!(m.len(), 1);
    assert_eq!(m.action[0], MemoryAction::Alloc);
    assert_eq!(m.device[0], MemoryDevice::Gpu(3));
    assert_eq!(i64::try_from(m.bytes[0]).unwrap(), m.allocated_bytes[0]);
    assert_ne!(m.track[0], warpscope_core::model::memory::NO_TRACK);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// Every event of `p` as text, track by track, with its flows and warnings: what must not
/// depend on how many threads read the file.
fn fingerprint(p: &Profile) -> Vec<String> {
    let mut out = Vec::new();
    for t in &p.tracks {
        out.push(format!("track {:?} {}", t.key, t.name));
        for i in 0..t.events.len() {
            out.push(format!(
                "{} {} {} {:?}",
                t.events.start_ns[i],
                t.events.dur_ns[i],
                p.str(t.events.name[i]),
                t.events.kind[i]
            ));
        }
    }
    out.extend(p.flows.iter().map(|f| format!("{f:?}")));
    out.extend(p.warnings.iter().map(|w| format!("{} {}", w.code, w.count)));
    out
}

#[test]
fn regions_read_on_a_second_thread_give_the_same_profile() {
    let Some(path) = synthetic() else { return };
    let one = warpscope_core::parallel::with_threads(1, || load(&path));
    let two = warpscope_core::parallel::with_threads(2, || load(&path));
    assert_eq!(fingerprint(&one), fingerprint(&two));
    assert!(one.event_count() > 20);
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

/// A database in memory with `sql` run on it, as bytes.
fn database(sql: &str) -> Vec<u8> {
    let mut c = Connection::open_in_memory().unwrap();
    c.execute_batch(sql).unwrap();
    c.serialize(MAIN_DB).unwrap().to_vec()
}

fn import(name: &str, data: &[u8]) -> Result<Profile, ImportError> {
    import_bytes(Path::new(name), data, &Progress::new())
}

#[test]
fn the_two_rocpd_formats_are_told_apart_by_schema_version_and_tables() {
    const RPD_TABLES: &str = "CREATE TABLE rocpd_string (id INTEGER PRIMARY KEY, string TEXT);
        INSERT INTO rocpd_string VALUES (1, 'KernelExecution'), (2, 'k'), (3, 'hipLaunchKernel'), (4, '');
        CREATE TABLE rocpd_op (id INTEGER PRIMARY KEY, gpuId INTEGER, queueId INTEGER,
            sequenceId INTEGER, completionSignal TEXT, start INTEGER, end INTEGER,
            description_id INTEGER, opType_id INTEGER);
        INSERT INTO rocpd_op VALUES (1, 2, 0, 0, '', 1000, 1500, 2, 1);
        CREATE TABLE rocpd_api (id INTEGER PRIMARY KEY, pid INTEGER, tid INTEGER, start INTEGER,
            end INTEGER, apiName_id INTEGER, args_id INTEGER);
        INSERT INTO rocpd_api VALUES (1, 7, 7, 900, 950, 3, 4);
        CREATE TABLE rocpd_api_ops (id INTEGER PRIMARY KEY, api_id INTEGER, op_id INTEGER);
        INSERT INTO rocpd_api_ops VALUES (1, 1, 1);";
    // RPD with its metadata saying 2: RPD, whatever the file is called.
    let rpd = database(&format!(
        "{RPD_TABLES} CREATE TABLE rocpd_metadata (id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
         INSERT INTO rocpd_metadata VALUES (1, 'schema_version', '2');"
    ));
    let p = import("trace_results.db", &rpd).unwrap();
    assert_eq!(p.source.format, Format::RpdSqlite);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (1, 500));
    assert_eq!(launch_flows(&p), 1);
    // A rocprofv3 session whose metadata says 3, unsuffixed, in a file named `.rpd`.
    let rocpd = database(
        "CREATE TABLE rocpd_metadata (id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
         INSERT INTO rocpd_metadata VALUES (1, 'schema_version', '3');
         CREATE TABLE rocpd_kernel_dispatch (id INTEGER PRIMARY KEY, agent_id INTEGER,
             kernel_id INTEGER, start INTEGER, end INTEGER);
         INSERT INTO rocpd_kernel_dispatch VALUES (1, 2, 1, 100, 350);",
    );
    let p = import("trace.rpd", &rocpd).unwrap();
    assert_eq!(p.source.format, Format::RocpdSqlite);
    assert_eq!(gpu_kind_totals(&p, EventKind::Kernel), (1, 250));
    assert!(
        p.warnings
            .iter()
            .any(|w| w.code == "rocpd_unknown_kernel_symbol"),
        "{:?}",
        p.warnings
    );
    // RPD tables with a metadata table that says 4: neither format; the error lists them.
    let future = database(&format!(
        "{RPD_TABLES} CREATE TABLE rocpd_metadata (id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
         INSERT INTO rocpd_metadata VALUES (1, 'schema_version', '4');"
    ));
    let e = import("future.db", &future).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "future.db: not a recognised profile (SQLite database without the tables of \
             nvprof, Nsight Systems, rocprofv3 (rocpd schema 3), rocmProfileData (RPD schema 2) \
             or rocprof v1 (tables: rocpd_api"
        ),
        "{e}"
    );
}

#[test]
fn copies_between_two_gpus_are_peer_to_peer_and_cpu_only_copies_are_counted_out() {
    let db = database(
        "CREATE TABLE rocpd_metadata_x_1 (id INTEGER PRIMARY KEY, tag TEXT, value TEXT);
         INSERT INTO rocpd_metadata_x_1 VALUES (1, 'schema_version', '3');
         CREATE TABLE rocpd_string_x_1 (id INTEGER PRIMARY KEY, string TEXT);
         INSERT INTO rocpd_string_x_1 VALUES (1, 'MEMORY_COPY_DEVICE_TO_DEVICE'),
             (2, 'MEMORY_COPY_HOST_TO_HOST');
         CREATE TABLE rocpd_info_agent_x_1 (id INTEGER PRIMARY KEY, type TEXT,
             absolute_index INTEGER, name TEXT, product_name TEXT);
         INSERT INTO rocpd_info_agent_x_1 VALUES (0, 'CPU', 0, 'cpu', 'cpu'),
             (1, 'GPU', 1, 'gfx90a', 'AMD Instinct MI250X'),
             (2, 'GPU', 2, 'gfx90a', 'AMD Instinct MI250X');
         CREATE TABLE rocpd_memory_copy_x_1 (id INTEGER PRIMARY KEY, start INTEGER, end INTEGER,
             name_id INTEGER, src_agent_id INTEGER, dst_agent_id INTEGER, size INTEGER,
             stream_id INTEGER);
         INSERT INTO rocpd_memory_copy_x_1 VALUES (1, 10, 20, 1, 1, 2, 4096, 0),
             (2, 30, 40, 1, 1, 1, 64, 0), (3, 50, 60, 2, 0, 0, 8, 0);",
    );
    // Table names that are not `_<uuid>` still count: the suffix is whatever follows.
    let p = import("p2p.db", &db).unwrap();
    let c = copies(&p);
    assert_eq!(c.get(CopyKind::PtoP.as_str()), Some(&(1, 4096)));
    assert_eq!(c.get(CopyKind::DtoD.as_str()), Some(&(1, 64)));
    assert!(
        p.warnings
            .iter()
            .any(|w| w.code == "rocpd_copy_without_gpu")
    );
    // The peer-to-peer copy sits on its destination GPU.
    assert!(p.tracks.iter().any(|t| {
        matches!(t.key, TrackKey::Gpu { device: 2, .. })
            && t.events.kind.contains(&EventKind::Memcpy)
    }));
    assert_eq!(p.device(1).unwrap().gfx_target.as_deref(), Some("gfx90a"));
}
