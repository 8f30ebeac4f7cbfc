//! Nsight Systems CUDA memory usage (`nsys profile --cuda-memory-usage=true`):
//! `CUDA_GPU_MEMORY_USAGE_EVENTS`, one row per allocation or free that CUPTI saw, into memory
//! records with totals computed from the sizes, each on the thread of the CUDA call that made it
//! (found through `correlationId` in the runtime table). The rules are in `docs/memory.md`,
//! "Nsight Systems".

use rustc_hash::{FxHashMap, FxHashSet};

use super::{Db, TimeCheck, Zero, int, pid_of, thread_track, tid_of, time, uint32};
use crate::builder::{MemoryRecord, ProfileBuilder, TrackId};
use crate::import::{ImportError, Progress};
use crate::model::{MemoryAction, MemoryDevice, MemorySource};

/// The table of allocations and frees.
pub(super) const MEMORY_USAGE: &str = "CUDA_GPU_MEMORY_USAGE_EVENTS";
/// The runtime and driver calls, whose `correlationId` names the thread of each record.
const RUNTIME: &str = "CUPTI_ACTIVITY_KIND_RUNTIME";

/// `ENUM_CUDA_DEV_MEM_EVENT_OPER` values.
const OPER_ALLOCATION: i64 = 0;
const OPER_DEALLOCATION: i64 = 1;

/// `ENUM_CUDA_MEM_KIND` values (Nsight Systems numbers them differently from CUPTI).
const KIND_PAGEABLE: i64 = 0;
const KIND_PINNED: i64 = 1;
const KIND_DEVICE: i64 = 2;
const KIND_ARRAY: i64 = 3;
const KIND_MANAGED: i64 = 4;
const KIND_DEVICE_STATIC: i64 = 5;
const KIND_MANAGED_STATIC: i64 = 6;

/// Sizes above this (1 PiB) are not taken for a real allocation.
pub(super) const MAX_BYTES: i64 = 1 << 50;

/// Columns read (by name): the required ones first.
const REQUIRED: [&str; 4] = ["start", "deviceId", "bytes", "memoryOperationType"];
const OPTIONAL: [&str; 5] = [
    "memKind",
    "address",
    "globalPid",
    "correlationId",
    "streamId",
];

/// One row that will become a record.
struct Row {
    time_ns: i64,
    device: MemoryDevice,
    action: MemoryAction,
    addr: u64,
    bytes: u64,
    /// (pid, correlation id) of the CUDA call that made it, when the row names them.
    call: Option<(i64, i64)>,
    stream: u64,
}

/// Rows left out, by reason.
#[derive(Default)]
struct Skipped {
    operation: u64,
    bytes: u64,
    device: u64,
    unknown_kind: u64,
    managed: u64,
    statics: u64,
}

/// Reads `CUDA_GPU_MEMORY_USAGE_EVENTS`, if the export has it, into memory records on `b`
/// (source [`MemorySource::Nsys`]); the processes and GPUs it names are added to `pids` and
/// `devices`. A table that lacks a column read as required is left out with a warning; rows
/// that cannot be read are left out and counted.
pub(super) fn read(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    pids: &mut FxHashSet<i64>,
    devices: &mut FxHashSet<u32>,
) -> Result<(), ImportError> {
    if !db.has(MEMORY_USAGE) {
        return Ok(());
    }
    let present = db.columns(MEMORY_USAGE)?;
    let missing: Vec<&str> = REQUIRED
        .iter()
        .copied()
        .filter(|c| !present.iter().any(|p| p.eq_ignore_ascii_case(c)))
        .collect();
    if !missing.is_empty() {
        b.warn_at(
            "nsys_memory_column_missing",
            1,
            MEMORY_USAGE,
            &format!(
                "the table lacks column(s) {}: memory usage is not shown",
                missing.join(", ")
            ),
        );
        return Ok(());
    }
    let sel = db.select(MEMORY_USAGE, &REQUIRED, &OPTIONAL)?;
    let mut times = TimeCheck::new(Zero::BothUncollected);
    let mut skipped = Skipped::default();
    let mut rows: Vec<Row> = Vec::new();
    db.for_each_row(&sel, progress, |row| {
        if let Some(r) = read_row(row, &mut times, &mut skipped) {
            if let MemoryDevice::Gpu(id) = r.device {
                devices.insert(id);
            }
            if let Some(g) = int(row, 6) {
                pids.insert(pid_of(g));
            }
            rows.push(r);
        }
        Ok(())
    })?;
    times.report(b, MEMORY_USAGE);
    report_skipped(b, &skipped);
    if rows.is_empty() {
        return Ok(());
    }
    let threads = calling_threads(db, b, progress, &rows)?;
    // Stable: rows of one time keep the table's order.
    rows.sort_by_key(|r| r.time_ns);
    let (totals, older_frees) = totals(&rows);
    b.warn_at(
        "nsys_memory_freed_before_capture",
        older_frees,
        MEMORY_USAGE,
        "frees of blocks whose allocation is not in the table (made before the capture \
         started): the device's totals are raised so that their lowest point is 0",
    );
    let mut tracks: FxHashMap<i64, TrackId> = FxHashMap::default();
    for (r, total) in rows.into_iter().zip(totals) {
        let track = r
            .call
            .and_then(|call| threads.get(&call).copied())
            .map(|g| {
                *tracks
                    .entry(g)
                    .or_insert_with(|| thread_track(b, pid_of(g), tid_of(g)))
            });
        b.push_memory(MemoryRecord {
            allocated_bytes: total,
            reserved_bytes: total,
            track,
            stream: r.stream,
            ..MemoryRecord::new(r.time_ns, r.device, r.action, r.addr, r.bytes)
        });
    }
    b.memory.source = MemorySource::Nsys;
    Ok(())
}

/// One row of the table as a record-to-be, or `None` (counted) when it is left out.
fn read_row(row: &rusqlite::Row<'_>, times: &mut TimeCheck, skipped: &mut Skipped) -> Option<Row> {
    // 0 is a real time on the capture's clock.
    let time_ns = times.instant(time(row, 0))?;
    let action = match int(row, 3) {
        Some(OPER_ALLOCATION) => MemoryAction::Alloc,
        Some(OPER_DEALLOCATION) => MemoryAction::Free,
        _ => {
            skipped.operation += 1;
            return None;
        }
    };
    // memKind is NOT NULL in every schema seen; without it a row is taken for device memory.
    let device = match int(row, 4).unwrap_or(KIND_DEVICE) {
        KIND_DEVICE | KIND_ARRAY => match uint32(row, 1) {
            Some(id) => MemoryDevice::Gpu(id),
            None => {
                skipped.device += 1;
                return None;
            }
        },
        KIND_PAGEABLE | KIND_PINNED => MemoryDevice::Cpu,
        KIND_MANAGED => {
            skipped.managed += 1;
            return None;
        }
        KIND_DEVICE_STATIC | KIND_MANAGED_STATIC => {
            skipped.statics += 1;
            return None;
        }
        _ => {
            skipped.unknown_kind += 1;
            return None;
        }
    };
    let bytes = match int(row, 2) {
        Some(b) if (0..=MAX_BYTES).contains(&b) => b.unsigned_abs(),
        _ => {
            skipped.bytes += 1;
            return None;
        }
    };
    // Addresses are unsigned; SQLite stores them as signed 64-bit integers.
    #[allow(clippy::cast_sign_loss)]
    let addr = int(row, 5).map_or(0, |a| a as u64);
    let call = int(row, 6)
        .zip(int(row, 7).filter(|&c| c != 0))
        .map(|(g, c)| (pid_of(g), c));
    // NULL for synchronous allocations; -1 (or 2^32 - 1) is no stream.
    let stream = match int(row, 8) {
        Some(s) if (1..0xFFFF_FFFF).contains(&s) => s.unsigned_abs(),
        _ => 0,
    };
    Some(Row {
        time_ns,
        device,
        action,
        addr,
        bytes,
        call,
        stream,
    })
}

fn report_skipped(b: &mut ProfileBuilder, s: &Skipped) {
    b.warn_at(
        "nsys_memory_unknown_operation",
        s.operation,
        MEMORY_USAGE,
        "rows whose memoryOperationType is neither allocation (0) nor deallocation (1) were \
         left out",
    );
    b.warn_at(
        "nsys_memory_bad_bytes",
        s.bytes,
        MEMORY_USAGE,
        "rows whose bytes is missing, negative or above 2^50 (1 PiB) were left out",
    );
    b.warn_at(
        "nsys_memory_bad_device",
        s.device,
        MEMORY_USAGE,
        "device-memory rows without a valid deviceId were left out",
    );
    b.warn_at(
        "nsys_memory_unknown_kind",
        s.unknown_kind,
        MEMORY_USAGE,
        "rows whose memKind is unknown (7) or not in ENUM_CUDA_MEM_KIND were left out",
    );
    b.warn_at(
        "nsys_memory_managed_skipped",
        s.managed,
        MEMORY_USAGE,
        "managed (unified) memory rows (memKind 4) are not on the memory curves: the driver \
         moves such memory between host and device",
    );
    b.warn_at(
        "nsys_memory_static_skipped",
        s.statics,
        MEMORY_USAGE,
        "rows of static memory (memKind 5 and 6: the __device__ and __managed__ variables of \
         loaded modules, allocated at module load and never freed) are not on the memory curves",
    );
}

/// The thread (`globalTid`) of the runtime or driver call of each (pid, correlation id) that
/// `rows` name: correlation ids are unique within a process. An export without the runtime
/// table, or whose runtime table lacks the columns, gives none.
fn calling_threads(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    rows: &[Row],
) -> Result<FxHashMap<(i64, i64), i64>, ImportError> {
    let wanted: FxHashSet<(i64, i64)> = rows.iter().filter_map(|r| r.call).collect();
    let mut found: FxHashMap<(i64, i64), i64> = FxHashMap::default();
    if wanted.is_empty() || !db.has(RUNTIME) {
        return Ok(found);
    }
    let present = db.columns(RUNTIME)?;
    if !["correlationId", "globalTid"]
        .iter()
        .all(|c| present.iter().any(|p| p.eq_ignore_ascii_case(c)))
    {
        return Ok(found);
    }
    let sel = db.select(RUNTIME, &["correlationId", "globalTid"], &[])?;
    db.for_each_row(&sel, progress, |row| {
        if let (Some(c), Some(g)) = (int(row, 0), int(row, 1)) {
            let key = (pid_of(g), c);
            if wanted.contains(&key) {
                found.entry(key).or_insert(g);
            }
        }
        Ok(())
    })?;
    let unplaced = rows
        .iter()
        .filter(|r| r.call.is_some_and(|c| !found.contains_key(&c)))
        .count();
    b.warn_at(
        "nsys_memory_call_not_found",
        unplaced as u64,
        MEMORY_USAGE,
        "rows whose correlationId matches no CUDA call of their process have no thread: the \
         report cannot say which NVTX range made them",
    );
    Ok(found)
}

/// The device's total after each row (rows in time order): the running sum of allocations
/// minus frees per device, raised so that its lowest point is 0; and how many frees had no
/// allocation open at their address.
fn totals(rows: &[Row]) -> (Vec<i64>, u64) {
    running_totals(rows.iter().map(|r| (r.device, r.action, r.addr, r.bytes)))
}

/// [`totals`] of (device, action, address, bytes) records in time order, for every importer
/// that computes totals from sizes (Nsight Systems, rocprofv3). Sizes are at most
/// [`MAX_BYTES`].
pub(super) fn running_totals(
    rows: impl Iterator<Item = (MemoryDevice, MemoryAction, u64, u64)>,
) -> (Vec<i64>, u64) {
    let mut sums: Vec<i64> = Vec::new();
    let mut devices: Vec<MemoryDevice> = Vec::new();
    let mut running: FxHashMap<MemoryDevice, i64> = FxHashMap::default();
    let mut lowest: FxHashMap<MemoryDevice, i64> = FxHashMap::default();
    let mut open: FxHashSet<(MemoryDevice, u64)> = FxHashSet::default();
    let mut older_frees = 0u64;
    for (device, action, addr, bytes) in rows {
        let bytes = i64::try_from(bytes).unwrap_or(MAX_BYTES);
        let sum = running.entry(device).or_insert(0);
        match action {
            MemoryAction::Alloc => {
                *sum = sum.saturating_add(bytes);
                open.insert((device, addr));
            }
            _ => {
                *sum = sum.saturating_sub(bytes);
                if !open.remove(&(device, addr)) {
                    older_frees += 1;
                }
            }
        }
        let low = lowest.entry(device).or_insert(0);
        *low = (*low).min(*sum);
        sums.push(*sum);
        devices.push(device);
    }
    for (s, d) in sums.iter_mut().zip(&devices) {
        *s = s.saturating_sub(lowest.get(d).copied().unwrap_or(0));
    }
    (sums, older_frees)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t: i64, device: u32, action: MemoryAction, addr: u64, bytes: u64) -> Row {
        Row {
            time_ns: t,
            device: MemoryDevice::Gpu(device),
            action,
            addr,
            bytes,
            call: None,
            stream: 0,
        }
    }

    #[test]
    fn totals_run_per_device_and_rise_over_older_frees() {
        use MemoryAction::{Alloc, Free};
        let rows = [
            row(1, 0, Alloc, 0x10, 100),
            row(2, 1, Alloc, 0x10, 7),
            row(3, 0, Free, 0x99, 300), // allocated before the capture
            row(4, 0, Alloc, 0x20, 50),
            row(5, 0, Free, 0x10, 100),
        ];
        let (t, older) = totals(&rows);
        // Device 0 runs 100, -200, -150, -250: raised by 250.
        assert_eq!(t, vec![350, 7, 50, 100, 0]);
        assert_eq!(older, 1);
    }
}
