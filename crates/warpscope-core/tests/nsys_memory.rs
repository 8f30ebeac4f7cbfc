//! Nsight Systems CUDA memory usage (`CUDA_GPU_MEMORY_USAGE_EVENTS`, `docs/memory.md`): a
//! synthetic export whose figures are worked out by hand, hostile rows, exports without the
//! table, and a real export of a small PyTorch program against what PyTorch itself reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use rusqlite::Connection;
use warpscope_core::analysis::memory::{MemoryRule, NO_OPERATOR, memory_report};
use warpscope_core::model::memory::NO_TRACK;
use warpscope_core::model::{MemoryAction, MemoryDevice, MemorySource, Profile, TraceId, TrackKey};
use warpscope_core::{Progress, TimeRange, import_file};

use common::load;

const MIB: i64 = 1 << 20;

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "warpscope-nsys-memory-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Packs a global thread id the way nsys does (vm 1 in the top bits).
fn global_tid(pid: i64, tid: i64) -> i64 {
    (1 << 48) | (pid << 24) | tid
}

/// The table as nsys 2025.3 writes it.
const MEMORY_TABLE: &str = "
    CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER NOT NULL,
        globalPid INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
        address INTEGER NOT NULL, pc INTEGER NOT NULL, bytes INTEGER NOT NULL,
        memKind INTEGER NOT NULL, memoryOperationType INTEGER NOT NULL, name TEXT,
        correlationId INTEGER, streamId INTEGER, localMemoryPoolAddress INTEGER,
        localMemoryPoolReleaseThreshold INTEGER, localMemoryPoolSize INTEGER,
        localMemoryPoolUtilizedSize INTEGER, importedMemoryPoolAddress INTEGER,
        importedMemoryPoolProcessId INTEGER);
";

/// An export of one process (pid 100) with two threads: thread 101 works on GPU 0 inside NVTX
/// ranges, thread 102 on GPU 1 outside any. `memory` says whether the memory table is written.
fn write_export(path: &Path, memory: bool) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "
        CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
        INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2025.3.2.0'),
            ('EXPORT_SCHEMA_VERSION', '3.20.3');
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO StringIds VALUES (1, 'cudaMalloc_v3020'), (2, 'cudaFree_v3020'),
            (3, 'main'), (4, 'worker');
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,
            eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,
            nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
        CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,
            rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,
            endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
        CREATE TABLE TARGET_INFO_GPU (vmId INTEGER, id INTEGER, name TEXT, cuDevice INTEGER,
            totalMemory INTEGER);
        INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'GPU A', 0, 85899345920),
            (1, 1, 'GPU B', 1, 85899345920);
        CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
        ",
    )
    .unwrap();
    let (main, worker) = (global_tid(100, 101), global_tid(100, 102));
    let ins = |sql: &str, params: &[&dyn rusqlite::ToSql]| {
        conn.execute(sql, params).unwrap();
    };
    ins(
        "INSERT INTO ThreadNames VALUES (3, 0, ?1), (4, 0, ?2)",
        &[&main, &worker],
    );
    let nvtx = "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid)
        VALUES (?1, ?2, 59, ?3, ?4)";
    ins(nvtx, &[&900, &3000, &"forward", &main]);
    ins(nvtx, &[&2400, &2600, &"inner", &main]);
    ins(nvtx, &[&3500, &4500, &"cleanup", &main]);
    // Each call spans its record's time ± 50 ns: (time, correlation id, thread, name id).
    let calls: [(i64, i64, i64, i64); 8] = [
        (1000, 1, main, 1),
        (1500, 2, main, 1),
        (2000, 3, main, 2),
        (2500, 4, main, 1),
        (4000, 5, main, 2),
        (1200, 10, worker, 2),
        (1300, 11, worker, 1),
        (3000, 12, worker, 1),
    ];
    for (t, corr, tid, name) in calls {
        ins(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?1, ?2, 0, ?3, ?4, ?5, 0, NULL)",
            &[&(t - 50), &(t + 50), &tid, &corr, &name],
        );
    }
    // Another process reuses correlation id 1: its call must not claim thread 101's record.
    ins(
        "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (10, 20, 0, ?1, 1, 1, 0, NULL)",
        &[&global_tid(300, 301)],
    );
    if !memory {
        return;
    }
    conn.execute_batch(MEMORY_TABLE).unwrap();
    let pid = global_tid(100, 0);
    let mem = |t: i64, dev: i64, addr: i64, bytes: i64, kind: i64, op: i64, corr: i64| {
        conn.execute(
            "INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId,
                address, pc, bytes, memKind, memoryOperationType, correlationId)
             VALUES (?1, ?2, ?3, 1, ?4, 0, ?5, ?6, ?7, ?8)",
            rusqlite::params![t, pid, dev, addr, bytes * MIB, kind, op, corr],
        )
        .unwrap();
    };
    // Out of time order on purpose: the importer sorts.
    // GPU 0: 64 + 32 - 64 + 128 (peak 160) - 32.
    mem(2500, 0, 0xC000, 128, 2, 0, 4);
    mem(1000, 0, 0xA000, 64, 2, 0, 1);
    mem(1500, 0, 0xB000, 32, 2, 0, 2);
    mem(2000, 0, 0xA000, 64, 2, 1, 3);
    mem(4000, 0, 0xB000, 32, 2, 1, 5);
    // GPU 1: a free of 16 MiB allocated before the capture, then 8 and 40 (an array).
    mem(1200, 1, 0xD000, 16, 2, 1, 10);
    mem(1300, 1, 0xE000, 8, 2, 0, 11);
    mem(3000, 1, 0xF000, 40, 3, 0, 12);
    // Pinned host memory (the CPU), whose call is not in the runtime table.
    mem(500, 0, 0x1000, 1, 1, 0, 99);
    // Left out: static and managed memory, an unknown operation, an unknown kind, a negative
    // and an absurd size, a device-memory row of device -1.
    mem(600, 0, 0x2000, 1, 5, 0, 0);
    mem(700, 0, 0x3000, 1, 4, 0, 0);
    mem(800, 0, 0x4000, 1, 2, 7, 0);
    mem(810, 0, 0x5000, 1, 9, 0, 0);
    mem(820, 0, 0x6000, -1, 2, 0, 0);
    mem(830, 0, 0x7000, 1 << 40, 2, 0, 0);
    mem(840, -1, 0x8000, 1, 2, 0, 0);
}

fn warning(p: &Profile, code: &str) -> Option<u64> {
    p.warnings.iter().find(|w| w.code == code).map(|w| w.count)
}

fn thread_name(p: &Profile, track: u32) -> (&str, TrackKey) {
    let t = &p.tracks[track as usize];
    (t.name.as_str(), t.key)
}

#[test]
fn synthetic_export_gives_the_records_and_figures_worked_out_by_hand() {
    let dir = temp_dir("synthetic");
    let path = dir.join("mem.sqlite");
    write_export(&path, true);
    let p = load(&path);
    assert_eq!(p.memory.source, MemorySource::Nsys);
    let ev = &p.memory.events;
    // (time, device, action, address, MiB, allocated MiB = reserved MiB after it)
    let got: Vec<(i64, MemoryDevice, MemoryAction, u64, i64, i64)> = (0..ev.len())
        .map(|i| {
            assert_eq!(ev.allocated_bytes[i], ev.reserved_bytes[i]);
            (
                ev.time_ns[i] + p.origin.raw_ns,
                ev.device[i],
                ev.action[i],
                ev.addr[i],
                i64::try_from(ev.bytes[i]).unwrap() / MIB,
                ev.allocated_bytes[i] / MIB,
            )
        })
        .collect();
    let (g0, g1, cpu) = (
        MemoryDevice::Gpu(0),
        MemoryDevice::Gpu(1),
        MemoryDevice::Cpu,
    );
    use MemoryAction::{Alloc, Free};
    assert_eq!(
        got,
        vec![
            (500, cpu, Alloc, 0x1000, 1, 1),
            (1000, g0, Alloc, 0xA000, 64, 64),
            // GPU 1 runs -16, -8, +32: raised by 16.
            (1200, g1, Free, 0xD000, 16, 0),
            (1300, g1, Alloc, 0xE000, 8, 8),
            (1500, g0, Alloc, 0xB000, 32, 96),
            (2000, g0, Free, 0xA000, 64, 32),
            (2500, g0, Alloc, 0xC000, 128, 160),
            (3000, g1, Alloc, 0xF000, 40, 48),
            (4000, g0, Free, 0xB000, 32, 128),
        ]
    );
    // Each record is on the thread of its call; the pinned one's call is not in the table.
    let main = TrackKey::Thread {
        pid: TraceId::Int(100),
        tid: TraceId::Int(101),
    };
    let worker = TrackKey::Thread {
        pid: TraceId::Int(100),
        tid: TraceId::Int(102),
    };
    assert_eq!(ev.track[0], NO_TRACK);
    for i in 1..ev.len() {
        let (name, key) = thread_name(&p, ev.track[i]);
        if ev.device[i] == g0 {
            assert_eq!((name, key), ("main", main));
        } else {
            assert_eq!((name, key), ("worker", worker));
        }
    }
    for (code, count) in [
        ("nsys_memory_static_skipped", 1),
        ("nsys_memory_managed_skipped", 1),
        ("nsys_memory_unknown_operation", 1),
        ("nsys_memory_unknown_kind", 1),
        ("nsys_memory_bad_bytes", 2),
        ("nsys_memory_bad_device", 1),
        ("nsys_memory_call_not_found", 1),
        ("nsys_memory_freed_before_capture", 1),
    ] {
        assert_eq!(warning(&p, code), Some(count), "{code}: {:?}", p.warnings);
    }

    let r = memory_report(&p, TimeRange::ALL, 0);
    assert_eq!(r.source, MemorySource::Nsys);
    let devices: Vec<MemoryDevice> = r.devices.iter().map(|d| d.device).collect();
    assert_eq!(devices, vec![cpu, g0, g1]);
    let d0 = &r.devices[1];
    assert_eq!(d0.capacity_bytes, Some(80 << 30));
    assert_eq!(
        (d0.peak_allocated_bytes, d0.peak_reserved_bytes),
        (160 * MIB, 160 * MIB)
    );
    assert_eq!(d0.peak_allocated_ns + p.origin.raw_ns, 2500);
    assert_eq!(d0.fragmentation_at_peak_bytes, 0);
    assert_eq!((d0.start_allocated_bytes, d0.low_allocated_bytes), (0, 0));
    assert_eq!(d0.end_allocated_bytes, 128 * MIB);
    assert_eq!((d0.allocations, d0.frees), (3, 2));
    // Live at the peak, by the innermost NVTX range of the calling thread.
    let live: Vec<(&str, i64, u64)> = d0
        .live_at_peak
        .iter()
        .map(|g| (g.operator.as_str(), g.bytes, g.count))
        .collect();
    assert_eq!(
        live,
        vec![("inner", 128 * MIB, 1), ("forward", 32 * MIB, 1)]
    );
    assert_eq!((d0.never_freed.count, d0.never_freed.bytes), (1, 128 << 20));
    assert_eq!(d0.forward_live_at_peak_bytes, 0);
    let d1 = &r.devices[2];
    assert_eq!(d1.peak_allocated_bytes, 48 * MIB);
    assert_eq!(d1.peak_allocated_ns + p.origin.raw_ns, 3000);
    // What the free shows was allocated before the capture.
    assert_eq!(d1.start_allocated_bytes, 16 * MIB);
    assert_eq!(
        (
            d1.frees_without_allocation.count,
            d1.frees_without_allocation.bytes
        ),
        (1, 16 << 20)
    );
    let live: Vec<(&str, i64)> = d1
        .live_at_peak
        .iter()
        .map(|g| (g.operator.as_str(), g.bytes))
        .collect();
    assert_eq!(live, vec![(NO_OPERATOR, 48 * MIB)]);
    let cpu_d = &r.devices[0];
    assert_eq!(cpu_d.peak_allocated_bytes, MIB);
    // Operators: NVTX ranges, with their children.
    let ops: Vec<(&str, u64, u64)> = r
        .operators
        .iter()
        .map(|o| {
            (
                o.name.as_str(),
                o.alloc_bytes >> 20,
                o.self_alloc_bytes >> 20,
            )
        })
        .collect();
    assert_eq!(
        ops,
        vec![
            ("forward", 224, 96),
            ("inner", 128, 128),
            (NO_OPERATOR, 49, 49)
        ]
    );
    // NVTX names do not say forward or backward: no activations finding; the headroom one
    // fires on both GPUs.
    let rules: Vec<(MemoryRule, MemoryDevice)> =
        r.findings.iter().map(|f| (f.rule, f.device)).collect();
    assert_eq!(rules.len(), 2);
    assert!(rules.iter().all(|(rule, _)| *rule == MemoryRule::Headroom));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn export_without_the_table_has_no_memory() {
    let dir = temp_dir("without");
    let path = dir.join("plain.sqlite");
    write_export(&path, false);
    let p = load(&path);
    assert_eq!(p.memory.source, MemorySource::None);
    assert!(p.memory.is_empty());
    assert!(
        p.warnings
            .iter()
            .all(|w| !w.code.starts_with("nsys_memory"))
    );
    assert!(memory_report(&p, TimeRange::ALL, 0).devices.is_empty());
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_table_without_its_columns_is_left_out_with_a_warning() {
    let dir = temp_dir("columns");
    let path = dir.join("columns.sqlite");
    write_export(&path, false);
    let conn = Connection::open(&path).unwrap();
    conn.execute_batch(
        "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start INTEGER, deviceId INTEGER);
         INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES (1, 0);",
    )
    .unwrap();
    drop(conn);
    let p = load(&path);
    assert!(p.memory.is_empty());
    let w = p
        .warnings
        .iter()
        .find(|w| w.code == "nsys_memory_column_missing")
        .unwrap();
    assert!(
        w.message.contains("bytes, memoryOperationType"),
        "{}",
        w.message
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn hostile_cells_are_counted_never_a_panic() {
    let dir = temp_dir("hostile");
    let path = dir.join("hostile.sqlite");
    write_export(&path, false);
    let conn = Connection::open(&path).unwrap();
    // No types, so any cell goes: text, blobs, reals, NULLs, extremes.
    conn.execute_batch(
        "CREATE TABLE CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, address, bytes,
             memKind, memoryOperationType, correlationId, streamId);
         INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS VALUES
             (NULL, 1, 0, 1, 1, 2, 0, 1, NULL),
             (-5, 1, 0, 1, 1, 2, 0, 1, NULL),
             ('x', 1, 0, 1, 1, 2, 0, 1, NULL),
             (10, 'pid', 4294967296, 1, 1, 2, 0, 1, NULL),
             (11, 1, 0, -1, 9223372036854775807, 2, 0, 1, NULL),
             (12, 1, 0, X'00', 1.5e300, 2, 0, 1, NULL),
             (13, NULL, 0, NULL, 5, NULL, 1, -9223372036854775808, -1),
             (14, 1, 0, -9223372036854775808, 4, 2, 0, 0, 4294967295),
             (15, 1, 0, 7, 0, 1, 0, 1, 2.5),
             (16, 1, 2147483647, 8, 1, 3, -1, 1, 'z');",
    )
    .unwrap();
    drop(conn);
    let p = import_file(&path, &Progress::new()).unwrap();
    let ev = &p.memory.events;
    // Kept: the free without a kind (device memory, no address), the block at the top
    // address, the zero-byte pinned block.
    assert_eq!(ev.len(), 3);
    assert_eq!(ev.addr[1], 1 << 63);
    assert!(ev.allocated_bytes.iter().all(|&a| a >= 0));
    let _ = memory_report(&p, TimeRange::ALL, 0);
    assert!(warning(&p, "nsys_memory_bad_bytes").is_some());
    assert!(warning(&p, "sqlite_time_out_of_range").is_some());
    assert!(warning(&p, "sqlite_null_time").is_some());
    let _ = std::fs::remove_dir_all(dir);
}

/// The real export: `tests/data/nsys_cuda_memory_h200.py` under Nsight Systems 2025.3
/// (`--cuda-memory-usage=true`) on an H200, PyTorch 2.11. The program printed (its stdout is in
/// the export too): max_memory_allocated 268435456, max_memory_reserved 304087040,
/// memory_reserved at the end 167772160.
#[test]
fn real_export_peak_equals_pytorch_max_memory_reserved() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/nsys_cuda_memory_h200.sqlite.gz");
    let p = load(&path);
    assert_eq!(p.memory.source, MemorySource::Nsys);
    let r = memory_report(&p, TimeRange::ALL, 0);
    let devices: Vec<MemoryDevice> = r.devices.iter().map(|d| d.device).collect();
    assert_eq!(devices, vec![MemoryDevice::Cpu, MemoryDevice::Gpu(0)]);
    let g = &r.devices[1];
    // nsys sees the caching allocator's cudaMalloc segments: its peak is PyTorch's *reserved*
    // peak, to the byte; the allocated peak (268435456) is below it.
    assert_eq!(g.peak_reserved_bytes, 304_087_040);
    assert_eq!(g.peak_allocated_bytes, 304_087_040);
    assert_eq!(g.end_reserved_bytes, 167_772_160);
    assert_eq!((g.allocations, g.frees), (6, 4));
    assert_eq!(g.frees_without_allocation.count, 0);
    assert_eq!(g.capacity_bytes, Some(150_109_880_320));
    // At the peak: step0's three segments (64 + 32 + 64 MiB), step1's 128 MiB, and the 2 MiB
    // small-pool segment of the first tensor, made before any NVTX range.
    let live: Vec<(&str, i64, u64)> = g
        .live_at_peak
        .iter()
        .map(|l| (l.operator.as_str(), l.bytes, l.count))
        .collect();
    assert_eq!(
        live,
        vec![
            ("step0", 160 * MIB, 3),
            ("step1", 128 * MIB, 1),
            (NO_OPERATOR, 2 * MIB, 1)
        ]
    );
    // The pinned 1 MiB host block is the CPU's.
    assert_eq!(r.devices[0].peak_allocated_bytes, MIB);
    // Every record is on the Python thread that called cudaMalloc / cudaFree / cudaHostAlloc.
    let ev = &p.memory.events;
    assert!((0..ev.len()).all(|i| p.tracks[ev.track[i] as usize].name == "python3"));
    assert_eq!(warning(&p, "nsys_memory_static_skipped"), Some(105));
    assert_eq!(warning(&p, "nsys_memory_call_not_found"), None);
}
