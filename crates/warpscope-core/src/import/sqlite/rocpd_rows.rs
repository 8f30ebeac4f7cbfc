//! The activity of a rocprofv3 session: kernel dispatches with their symbols' registers and
//! LDS, memory copies, API and marker regions, and zero-length API calls and marks (samples).
//! Every row's `event_id` leads to `rocpd_event`, whose `stack_id` is rocprofiler's internal
//! correlation id: the same on an API call and on the work it launched, so it links them.

use rustc_hash::FxHashMap;

use super::amd::{COPY_LANE, Lanes, api_kind, copy_kind, copy_memory, workgroups};
use super::db::{Join, Select};
use super::rocpd_info::{Session, SessionInfo};
use super::{Db, Strings, TimeCheck, Zero, int, text, thread_track, time, uint32, uint64};
use crate::builder::{ProfileBuilder, TrackId};
use crate::import::{ImportError, Progress};
use crate::model::{ApiInfo, CopyInfo, CopyKind, EventKind, KernelInfo};
use crate::strings::StrId;

/// Times are nanoseconds on the host's monotonic clock: 0 is never a real time there, but
/// only `start = end = 0` is taken for "not collected", as for Nsight Systems.
const ZERO: Zero = Zero::BothUncollected;

/// What a kernel symbol says about every dispatch of it.
struct Symbol {
    name: StrId,
    mangled: Option<StrId>,
    vgprs: Option<u32>,
    agprs: Option<u32>,
    sgprs: Option<u32>,
    lds_bytes: Option<u64>,
    scratch_bytes: Option<u64>,
}

/// A row of the kernel-symbol table as read: id, display name, symbol, and VGPRs, AGPRs, SGPRs,
/// LDS and scratch.
type SymbolRow = (i64, Option<String>, Option<String>, [Option<u64>; 5]);

/// The kernel symbols of session `s`, by row id (the dispatches' `kernel_id`).
fn symbols(db: &Db, b: &mut ProfileBuilder, s: &Session) -> FxHashMap<i64, Symbol> {
    let mut out = FxHashMap::default();
    let table = s.table("rocpd_info_kernel_symbol");
    let mut rows: Vec<SymbolRow> = Vec::new();
    db.meta_rows(
        b,
        &table,
        &["id"],
        &[
            "display_name",
            "kernel_name",
            "arch_vgpr_count",
            "accum_vgpr_count",
            "sgpr_count",
            "group_segment_size",
            "private_segment_size",
        ],
        |row| {
            if let Some(id) = int(row, 0) {
                rows.push((
                    id,
                    text(row, 1).map(str::to_string),
                    text(row, 2).map(str::to_string),
                    [3, 4, 5, 6, 7].map(|i| uint64(row, i)),
                ));
            }
        },
    );
    for (id, display, kernel, [vgprs, agprs, sgprs, lds, scratch]) in rows {
        // `kernel_name` is the code object's symbol (`_Z…` plus `.kd`, the kernel descriptor);
        // `display_name` the demangled, formatted name.
        let mangled = kernel
            .as_deref()
            .map(|k| k.strip_suffix(".kd").unwrap_or(k).to_string());
        let shown = display
            .filter(|d| !d.is_empty())
            .or_else(|| mangled.clone())
            .unwrap_or_else(|| format!("<kernel {id}>"));
        let name = b.intern(&shown);
        let mangled = mangled.filter(|m| *m != shown).map(|m| b.intern(&m));
        let to32 = |v: Option<u64>| v.and_then(|v| u32::try_from(v).ok());
        out.insert(
            id,
            Symbol {
                name,
                mangled,
                vgprs: to32(vgprs),
                agprs: to32(agprs),
                sgprs: to32(sgprs),
                lds_bytes: lds,
                scratch_bytes: scratch,
            },
        );
    }
    out
}

/// The correlation id of a row: its event's `stack_id` (rocprofiler's internal correlation
/// id; 0 and NULL mean none).
fn internal_correlation(row: &rusqlite::Row<'_>, i: usize) -> Option<u64> {
    uint64(row, i).filter(|&c| c != 0)
}

/// The GPU lane of work on `queue` / `stream`: a kernel's HIP stream, named after the stream
/// and the queue that ran it.
fn lane_name(info: &SessionInfo, stream: Option<i64>, queue: Option<i64>) -> String {
    let stream_name = stream.map(|s| {
        info.streams
            .get(&s)
            .cloned()
            .unwrap_or_else(|| format!("Stream {s}"))
    });
    let queue_name = queue.map(|q| {
        info.queues
            .get(&q)
            .cloned()
            .unwrap_or_else(|| format!("Queue {q}"))
    });
    match (stream_name, queue_name) {
        (Some(s), Some(q)) => format!("{s} · {q}"),
        (Some(s), None) => s,
        (None, Some(q)) => q,
        (None, None) => "queue".to_string(),
    }
}

/// The kernel dispatches of session `s`.
pub(super) fn read_dispatches(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    s: &Session,
    info: &SessionInfo,
    lanes: &mut Lanes,
    scope: u32,
) -> Result<(), ImportError> {
    let Some((table, sel)) = select_with_event(
        db,
        s,
        "rocpd_kernel_dispatch",
        &[
            (0, "start", true),
            (0, "end", true),
            (0, "agent_id", true),
            (0, "kernel_id", true),
            (0, "queue_id", false),
            (0, "stream_id", false),
            (0, "grid_size_x", false),
            (0, "grid_size_y", false),
            (0, "grid_size_z", false),
            (0, "workgroup_size_x", false),
            (0, "workgroup_size_y", false),
            (0, "workgroup_size_z", false),
            (0, "group_segment_size", false),
            (0, "private_segment_size", false),
            (1, "stack_id", false),
            (1, "correlation_id", false),
        ],
    )?
    else {
        return Ok(());
    };
    let symbols = symbols(db, b, s);
    let mut times = TimeCheck::new(ZERO);
    let mut unknown_symbol = 0u64;
    let mut unknown_name: Option<StrId> = None;
    db.for_each_row(&sel, progress, |row| {
        let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
            return Ok(());
        };
        let agent = int(row, 2).unwrap_or(-1);
        let device = info
            .agents
            .get(&agent)
            .map_or_else(|| u32::try_from(agent).unwrap_or(u32::MAX), |&(d, _)| d);
        let (queue, stream) = (int(row, 4), int(row, 5));
        let lane = u64::try_from(stream.unwrap_or(0)).unwrap_or(0);
        let track = lanes.track(b, device, lane, || lane_name(info, stream, queue));
        let symbol = int(row, 3).and_then(|k| symbols.get(&k));
        let grid = [6, 7, 8].map(|i| uint32(row, i));
        let block = [9, 10, 11].map(|i| uint32(row, i));
        let block = match block {
            [Some(x), Some(y), Some(z)] => Some([x, y, z]),
            _ => None,
        };
        let grid = match grid {
            [Some(x), Some(y), Some(z)] => workgroups(Some([x, y, z]), block),
            _ => None,
        };
        let info_row = KernelInfo {
            grid,
            block,
            registers_per_thread: symbol.and_then(|s| s.vgprs),
            accum_registers: symbol.and_then(|s| s.agprs),
            scalar_registers: symbol.and_then(|s| s.sgprs),
            static_shared_bytes: uint64(row, 12).or(symbol.and_then(|s| s.lds_bytes)),
            scratch_bytes: uint64(row, 13).or(symbol.and_then(|s| s.scratch_bytes)),
            wave_size: info.wave_size.get(&device).copied(),
            correlation: internal_correlation(row, 14),
            external_id: internal_correlation(row, 15),
            mangled_name: symbol.and_then(|s| s.mangled),
            ..KernelInfo::default()
        };
        let name = match symbol {
            Some(s) => s.name,
            None => {
                unknown_symbol += 1;
                *unknown_name.get_or_insert_with(|| b.intern("<unknown kernel>"))
            }
        };
        b.push_kernel(track, start, dur, name, info_row, scope);
        Ok(())
    })?;
    times.report(b, &table);
    b.warn_at(
        "rocpd_unknown_kernel_symbol",
        unknown_symbol,
        &table,
        "dispatches whose kernel_id names no kernel symbol are shown as <unknown kernel>, \
         without registers",
    );
    Ok(())
}

/// A SELECT of `columns` from session table `name` (table 0) joined to its `rocpd_event` row
/// (table 1, by `event_id`), with the table's session-suffixed name; `None` when the session
/// has no such table.
fn select_with_event(
    db: &Db,
    s: &Session,
    name: &str,
    columns: &[(usize, &str, bool)],
) -> Result<Option<(String, Select)>, ImportError> {
    let table = s.table(name);
    if !db.has(&table) {
        return Ok(None);
    }
    let event = s.table("rocpd_event");
    let join = Join {
        table: &event,
        key: "id",
        from_column: "event_id",
    };
    let sel = db.select_join(&table, &[join], columns)?;
    Ok(Some((table, sel)))
}

/// The memory copies of session `s`, on a copy lane of the GPU they involve (the destination
/// when it is a GPU, else the source).
#[allow(clippy::too_many_arguments)] // the session's shared state, as the other readers
pub(super) fn read_copies(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    s: &Session,
    info: &SessionInfo,
    strings: &mut Strings<'_>,
    lanes: &mut Lanes,
    scope: u32,
) -> Result<(), ImportError> {
    let Some((table, sel)) = select_with_event(
        db,
        s,
        "rocpd_memory_copy",
        &[
            (0, "start", true),
            (0, "end", true),
            (0, "name_id", false),
            (0, "src_agent_id", false),
            (0, "dst_agent_id", false),
            (0, "size", false),
            (0, "stream_id", false),
            (0, "queue_id", false),
            (1, "stack_id", false),
            (1, "correlation_id", false),
        ],
    )?
    else {
        return Ok(());
    };
    let mut times = TimeCheck::new(ZERO);
    let mut kinds: FxHashMap<StrId, CopyKind> = FxHashMap::default();
    let mut no_gpu = 0u64;
    let mut unnamed: Option<StrId> = None;
    db.for_each_row(&sel, progress, |row| {
        let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
            return Ok(());
        };
        let name = match int(row, 2) {
            Some(id) => strings.get_or_placeholder(db, b, id)?,
            None => *unnamed.get_or_insert_with(|| b.intern("MEMORY_COPY")),
        };
        let agent = |i: usize| int(row, i).and_then(|a| info.agents.get(&a).copied());
        let (src, dst) = (agent(3), agent(4));
        let kind = *kinds
            .entry(name)
            .or_insert_with(|| copy_kind(b.strings.get(name)).unwrap_or(CopyKind::Unknown));
        // Between two different GPUs a device-to-device copy is peer to peer.
        let kind = match (kind, src, dst) {
            (CopyKind::DtoD, Some((a, true)), Some((c, true))) if a != c => CopyKind::PtoP,
            (k, _, _) => k,
        };
        let ((Some((device, true)), _) | (_, Some((device, true)))) = (dst, src) else {
            no_gpu += 1;
            return Ok(());
        };
        let stream = int(row, 6);
        let lane = COPY_LANE | u64::try_from(stream.unwrap_or(0)).unwrap_or(0);
        let track = lanes.track(b, device, lane, || {
            format!("copies · {}", lane_name(info, stream, int(row, 7)))
        });
        let (src_kind, dst_kind) = copy_memory(kind);
        let copy = CopyInfo {
            kind,
            bytes: uint64(row, 5),
            src_kind,
            dst_kind,
            correlation: internal_correlation(row, 8),
            external_id: internal_correlation(row, 9),
        };
        b.push_copy(track, start, dur, name, EventKind::Memcpy, copy, scope);
        Ok(())
    })?;
    times.report(b, &table);
    b.warn_at(
        "rocpd_copy_without_gpu",
        no_gpu,
        &table,
        "copies between agents that are not GPUs (or unknown agents) were left out",
    );
    Ok(())
}

/// The thread tracks of a session, by its thread row id.
#[derive(Default)]
struct Threads(FxHashMap<(Option<i64>, i64), TrackId>);

impl Threads {
    fn track(
        &mut self,
        b: &mut ProfileBuilder,
        info: &SessionInfo,
        pid: Option<i64>,
        tid: i64,
    ) -> TrackId {
        *self.0.entry((pid, tid)).or_insert_with(|| {
            let (pid, tid) = info.thread(pid, tid);
            thread_track(b, pid, tid)
        })
    }
}

/// The message of a ROCTx range or mark, which rocprofv3 keeps in the event's `extdata` as
/// `{"message": "..."}`.
fn marker_message(extdata: &str) -> Option<String> {
    match serde_json::from_str::<serde_json::Value>(extdata).ok()? {
        serde_json::Value::Object(map) => map
            .get("message")
            .and_then(serde_json::Value::as_str)
            .map(str::to_string),
        _ => None,
    }
}

/// The API calls and ROCTx ranges of session `s` (`rocpd_region`), on their threads, their kind
/// from their event's category (see `amd::api_kind`).
pub(super) fn read_regions(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    s: &Session,
    info: &SessionInfo,
    strings: &mut Strings<'_>,
    scope: u32,
) -> Result<(), ImportError> {
    let Some((table, sel)) = select_with_event(
        db,
        s,
        "rocpd_region",
        &[
            (0, "start", true),
            (0, "end", true),
            (0, "name_id", true),
            (0, "pid", false),
            (0, "tid", false),
            (1, "category_id", false),
            (1, "stack_id", false),
            (1, "correlation_id", false),
            (1, "extdata", false),
        ],
    )?
    else {
        return Ok(());
    };
    let mut times = TimeCheck::new(ZERO);
    let mut threads = Threads::default();
    let mut kind_of: FxHashMap<i64, EventKind> = FxHashMap::default();
    db.for_each_row(&sel, progress, |row| {
        let Some((start, dur)) = times.span(time(row, 0), time(row, 1)) else {
            return Ok(());
        };
        let track = threads.track(b, info, int(row, 3), int(row, 4).unwrap_or(0));
        let kind = match int(row, 5) {
            Some(c) => match kind_of.get(&c) {
                Some(&k) => k,
                None => {
                    let family = strings.text(db, c)?.unwrap_or_default();
                    *kind_of.entry(c).or_insert(api_kind(&family))
                }
            },
            None => EventKind::Slice,
        };
        let mut name = strings.get_or_placeholder(db, b, int(row, 2).unwrap_or(0))?;
        if kind == EventKind::Nvtx
            && let Some(message) = text(row, 8).and_then(marker_message)
        {
            name = b.intern(&message);
        }
        if kind.is_api() {
            let api = ApiInfo {
                correlation: internal_correlation(row, 6),
                cbid: None,
                external_id: internal_correlation(row, 7),
            };
            b.push_api(track, start, dur, name, kind, api, scope);
        } else {
            b.push(track, start, dur, name, kind);
        }
        Ok(())
    })?;
    times.report(b, &table);
    Ok(())
}

/// The zero-length calls and ROCTx marks of session `s` (`rocpd_sample`, which rocprofv3 writes
/// for calls whose start and end are equal): instants on their threads, named by their
/// message (marks) or by their track's name (the API family: the call's own name is not kept).
pub(super) fn read_samples(
    db: &Db,
    b: &mut ProfileBuilder,
    progress: &Progress,
    s: &Session,
    info: &SessionInfo,
    strings: &mut Strings<'_>,
) -> Result<(), ImportError> {
    let table = s.table("rocpd_sample");
    if !db.has(&table) {
        return Ok(());
    }
    let (track_table, event) = (s.table("rocpd_track"), s.table("rocpd_event"));
    let sel = db.select_join(
        &table,
        &[
            Join {
                table: &track_table,
                key: "id",
                from_column: "track_id",
            },
            Join {
                table: &event,
                key: "id",
                from_column: "event_id",
            },
        ],
        &[
            (0, "timestamp", true),
            (1, "pid", false),
            (1, "tid", false),
            (1, "name_id", false),
            (2, "extdata", false),
        ],
    )?;
    let mut times = TimeCheck::new(ZERO);
    let mut threads = Threads::default();
    db.for_each_row(&sel, progress, |row| {
        let Some(t) = times.instant(time(row, 0)) else {
            return Ok(());
        };
        let track = threads.track(b, info, int(row, 1), int(row, 2).unwrap_or(0));
        let family = match int(row, 3) {
            Some(id) => strings.text(db, id)?.unwrap_or_default(),
            None => String::new(),
        };
        let kind = api_kind(&family);
        let name = match text(row, 4).and_then(marker_message) {
            Some(message) => b.intern(&message),
            None if family.is_empty() => b.intern("sample"),
            None => b.intern(&family),
        };
        let kind = if kind == EventKind::Nvtx {
            kind
        } else {
            EventKind::Instant
        };
        b.push(track, t, 0, name, kind);
        Ok(())
    })?;
    times.report(b, &table);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_messages_come_from_extdata() {
        assert_eq!(
            marker_message(r#"{"message":"step 3"}"#).as_deref(),
            Some("step 3")
        );
        assert_eq!(marker_message("{}"), None);
        assert_eq!(marker_message("not json"), None);
    }
}
