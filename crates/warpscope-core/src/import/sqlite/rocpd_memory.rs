//! rocprofv3 memory-allocation records (`rocprofv3 --memory-allocation-trace`):
//! `rocpd_memory_allocate`, one row per allocation or free the HSA runtime made, into memory
//! records with totals computed from the sizes, each on the thread that made the call. The
//! rules are in `docs/memory.md`, "rocprofv3".

use rustc_hash::FxHashMap;

use super::nsys_memory::{MAX_BYTES, running_totals};
use super::rocpd_info::{Session, SessionInfo};
use super::{Db, TimeCheck, Zero, int, text, thread_track, time};
use crate::builder::{MemoryRecord, ProfileBuilder, TrackId};
use crate::import::{ImportError, Progress};
use crate::model::{MemoryAction, MemoryDevice, MemorySource};

/// One row that will become a record.
struct Row {
    time_ns: i64,
    device: MemoryDevice,
    action: MemoryAction,
    addr: u64,
    bytes: u64,
    thread: Option<(Option<i64>, i64)>,
}

/// A row as read, before frees are matched to their allocations.
struct RawRow {
    time_ns: i64,
    action: MemoryAction,
    device: Option<MemoryDevice>,
    addr: u64,
    bytes: Option<u64>,
    thread: Option<(Option<i64>, i64)>,
}

/// Rows left out, by reason.
#[derive(Default)]
struct Skipped {
    /// `type` other than ALLOC and FREE (REALLOC, RECLAIM).
    operation: u64,
    /// `level` VIRTUAL (address ranges reserved, not memory) or SCRATCH (the runtime's
    /// per-queue scratch backing).
    level: u64,
    /// Size missing, negative or above 2^50.
    bytes: u64,
    /// An allocation whose agent is unknown, or a free of an address never allocated.
    device: u64,
}

/// Reads `rocpd_memory_allocate` of session `s`, if it has rows, into memory records on `b`
/// (source [`MemorySource::Rocpd`]).
pub(super) fn read(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    s: &Session,
    info: &SessionInfo,
) -> Result<(), ImportError> {
    let table = s.table("rocpd_memory_allocate");
    if !db.has(&table) {
        return Ok(());
    }
    let sel = db.select(
        &table,
        &["start", "type", "size"],
        &["level", "agent_id", "address", "pid", "tid"],
    )?;
    let mut times = TimeCheck::new(Zero::BothUncollected);
    let mut skipped = Skipped::default();
    let mut rows: Vec<Row> = Vec::new();
    // The device of each live allocation, by address: frees name no agent.
    let mut live: FxHashMap<u64, (MemoryDevice, u64)> = FxHashMap::default();
    let mut raw: Vec<RawRow> = Vec::new();
    db.for_each_row(&sel, progress, |row| {
        let Some(time_ns) = times.instant(time(row, 0)) else {
            return Ok(());
        };
        let action = match text(row, 1).map(str::to_ascii_uppercase).as_deref() {
            Some("ALLOC") => MemoryAction::Alloc,
            Some("FREE") => MemoryAction::Free,
            _ => {
                skipped.operation += 1;
                return Ok(());
            }
        };
        if text(row, 3).is_some_and(|l| !l.eq_ignore_ascii_case("REAL")) {
            skipped.level += 1;
            return Ok(());
        }
        let bytes = int(row, 2)
            .filter(|b| (0..=MAX_BYTES).contains(b))
            .map(i64::unsigned_abs);
        let device = int(row, 4)
            .and_then(|a| info.agents.get(&a))
            .map(|&(d, gpu)| {
                if gpu {
                    MemoryDevice::Gpu(d)
                } else {
                    MemoryDevice::Cpu
                }
            });
        // Addresses are unsigned; SQLite stores them as signed 64-bit integers.
        #[allow(clippy::cast_sign_loss)]
        let addr = int(row, 5).map_or(0, |a| a as u64);
        let thread = int(row, 7).map(|tid| (int(row, 6), tid));
        raw.push(RawRow {
            time_ns,
            action,
            device,
            addr,
            bytes,
            thread,
        });
        Ok(())
    })?;
    // In time order (stable: a free and an allocation at one time keep the table's order).
    raw.sort_by_key(|r| r.time_ns);
    for RawRow {
        time_ns,
        action,
        device,
        addr,
        bytes,
        thread,
    } in raw
    {
        let (device, bytes) = match action {
            MemoryAction::Alloc => match (device, bytes) {
                (Some(d), Some(n)) => {
                    live.insert(addr, (d, n));
                    (d, n)
                }
                (None, _) => {
                    skipped.device += 1;
                    continue;
                }
                (_, None) => {
                    skipped.bytes += 1;
                    continue;
                }
            },
            // A free gives its size as 0: the allocation at its address says how much.
            _ => match live.remove(&addr) {
                Some((d, n)) => (d, n),
                None => {
                    skipped.device += 1;
                    continue;
                }
            },
        };
        rows.push(Row {
            time_ns,
            device,
            action,
            addr,
            bytes,
            thread,
        });
    }
    times.report(b, &table);
    report_skipped(b, &table, &skipped);
    if rows.is_empty() {
        return Ok(());
    }
    let totals = running_totals(rows.iter().map(|r| (r.device, r.action, r.addr, r.bytes))).0;
    let mut tracks: FxHashMap<(Option<i64>, i64), TrackId> = FxHashMap::default();
    for (r, total) in rows.into_iter().zip(totals) {
        let track = r.thread.map(|(pid, tid)| {
            *tracks.entry((pid, tid)).or_insert_with(|| {
                let (pid, tid) = info.thread(pid, tid);
                thread_track(b, pid, tid)
            })
        });
        b.push_memory(MemoryRecord {
            allocated_bytes: total,
            reserved_bytes: total,
            track,
            ..MemoryRecord::new(r.time_ns, r.device, r.action, r.addr, r.bytes)
        });
    }
    b.memory.source = MemorySource::Rocpd;
    Ok(())
}

fn report_skipped(b: &mut ProfileBuilder, table: &str, s: &Skipped) {
    b.warn_at(
        "rocpd_memory_other_operation",
        s.operation,
        table,
        "rows whose type is not ALLOC or FREE (REALLOC, RECLAIM) were left out",
    );
    b.warn_at(
        "rocpd_memory_other_level",
        s.level,
        table,
        "rows of level VIRTUAL (address ranges reserved, not memory) or SCRATCH (the runtime's \
         scratch backing) are not on the memory curves",
    );
    b.warn_at(
        "rocpd_memory_bad_bytes",
        s.bytes,
        table,
        "allocations whose size is missing, negative or above 2^50 (1 PiB) were left out",
    );
    b.warn_at(
        "rocpd_memory_unmatched",
        s.device,
        table,
        "allocations of an unknown agent, and frees of an address with no allocation in the \
         table (made before tracing started), were left out",
    );
}
