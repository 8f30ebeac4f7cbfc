//! rocprofv3's CSV traces (`--kernel-trace`, `--memory-copy-trace`, `--hip-trace`,
//! `--hsa-trace`, `--marker-trace` with `--output-format csv`): one file per kind of record,
//! told apart by their columns, times in nanoseconds in `Start_Timestamp`/`End_Timestamp`.
//! Kernels and API calls share `Correlation_Id`, which links a launch to its kernel.

use std::io::Read;
use std::path::Path;

use super::kernels_v1::{ResourceColumns, kernel_name, queue_track, workgroups};
use super::table::{Row, Table};
use crate::builder::ProfileBuilder;
use crate::import::ImportError;
use crate::model::{
    ApiInfo, CopyInfo, CopyKind, EventKind, GpuLane, KernelInfo, MemoryKind, TraceId, TrackKey,
};

/// The stream number of the lane of copies when the file gives no queue or stream for them.
const COPY_LANE: u64 = u32::MAX as u64;

/// The lane of the copies of GPU `device` that the file gives no queue for, named
/// `memory copies`.
pub(super) fn copy_track(b: &mut ProfileBuilder, device: u32) -> crate::builder::TrackId {
    let key = TrackKey::Gpu {
        device,
        context: 0,
        stream: COPY_LANE,
        lane: GpuLane::Work,
    };
    let fresh = b.find_track(&key).is_none();
    let track = b.track(key);
    if fresh {
        b.track_mut(track).name = "memory copies".to_string();
    }
    track
}

/// What one rocprofv3 CSV file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Records {
    Kernels,
    Copies,
    Calls,
}

/// Reads one rocprofv3 CSV trace into `b`; returns the bytes read. A table of another kind
/// (memory allocations, counters) is skipped with a warning.
pub(super) fn read(
    input: impl Read,
    path: &Path,
    b: &mut ProfileBuilder,
) -> Result<u64, ImportError> {
    let mut t = Table::open(input, path)?;
    let records = if t.column("Kernel_Name").is_some() {
        Records::Kernels
    } else if t.column("Direction").is_some() {
        Records::Copies
    } else if t.column("Function").is_some() {
        Records::Calls
    } else {
        b.warn_at(
            "unread_table",
            1,
            &path.display().to_string(),
            "rocprofv3 tables of records warpscope does not read (it reads kernel, memory copy \
             and API traces); skipped",
        );
        while t.next_row(path)?.is_some() {}
        return Ok(t.total_bytes());
    };
    let what = match records {
        Records::Kernels => "a rocprofv3 kernel trace",
        Records::Copies => "a rocprofv3 memory copy trace",
        Records::Calls => "a rocprofv3 API trace",
    };
    let cols = Columns {
        start: Some(t.required(path, "Start_Timestamp", what)?),
        end: Some(t.required(path, "End_Timestamp", what)?),
        correlation: t.column("Correlation_Id"),
    };
    match records {
        Records::Kernels => kernels(&mut t, path, b, &cols, what)?,
        Records::Copies => copies(&mut t, path, b, &cols, what)?,
        Records::Calls => calls(&mut t, path, b, &cols, what)?,
    }
    Ok(t.total_bytes())
}

/// The columns every rocprofv3 trace has.
struct Columns {
    start: Option<usize>,
    end: Option<usize>,
    correlation: Option<usize>,
}

impl Columns {
    /// Start and duration of a row, `None` where a time is missing.
    fn span(&self, row: &Row<'_>) -> Option<(i64, i64)> {
        let start = row.int(self.start)?;
        let end = row.int(self.end)?;
        Some((start, end.saturating_sub(start)))
    }

    /// The correlation id of a row (0, which rocprofv3 writes for none, is none).
    fn correlation(&self, row: &Row<'_>) -> Option<u64> {
        row.u64(self.correlation).filter(|&c| c != 0)
    }
}

fn skipped_rows(b: &mut ProfileBuilder, what: &str, n: u64) {
    b.warn(
        "rows_skipped",
        n,
        format!("{what}: rows without a name or a start and end time were skipped"),
    );
}

fn kernels<R: Read>(
    t: &mut Table<R>,
    path: &Path,
    b: &mut ProfileBuilder,
    cols: &Columns,
    what: &str,
) -> Result<(), ImportError> {
    let name_col = t.column("Kernel_Name");
    let agent = t.column("Agent_Id");
    let queue = t.column("Queue_Id");
    let wg = [
        t.column("Workgroup_Size_X"),
        t.column("Workgroup_Size_Y"),
        t.column("Workgroup_Size_Z"),
    ];
    let grid = [
        t.column("Grid_Size_X"),
        t.column("Grid_Size_Y"),
        t.column("Grid_Size_Z"),
    ];
    let resources = ResourceColumns::v3(t);
    let mut skipped = 0;
    while let Some(row) = t.next_row(path)? {
        let (Some(name), Some((start_ns, dur_ns))) = (row.text(name_col), cols.span(&row)) else {
            skipped += 1;
            continue;
        };
        let dims = |c: [Option<usize>; 3]| -> Option<[u32; 3]> {
            let x = row.u32(c[0])?;
            Some([x, row.u32(c[1]).unwrap_or(1), row.u32(c[2]).unwrap_or(1)])
        };
        let block = dims(wg);
        let info = KernelInfo {
            grid: dims(grid).map(|g| {
                let w = block.unwrap_or([0; 3]);
                [
                    workgroups(g[0], w[0]),
                    workgroups(g[1], w[1]),
                    workgroups(g[2], w[2]),
                ]
            }),
            block,
            correlation: cols.correlation(&row),
            ..resources.info(&row)
        };
        let device = row.u32(agent).unwrap_or(0);
        let stream = row.u64(queue).unwrap_or(0);
        let name = b.intern(kernel_name(name));
        let track = queue_track(b, device, stream);
        b.push_kernel(track, start_ns, dur_ns, name, info, 0);
    }
    skipped_rows(b, what, skipped);
    Ok(())
}

/// `MEMORY_COPY_HOST_TO_DEVICE` → HtoD; a copy between two different GPUs is peer to peer.
fn copy_kind(direction: &str, src: Option<u32>, dst: Option<u32>) -> CopyKind {
    let d = direction.trim().trim_start_matches("MEMORY_COPY_");
    match d {
        "HOST_TO_DEVICE" => CopyKind::HtoD,
        "DEVICE_TO_HOST" => CopyKind::DtoH,
        "HOST_TO_HOST" => CopyKind::HtoH,
        "DEVICE_TO_DEVICE" if src.is_some() && dst.is_some() && src != dst => CopyKind::PtoP,
        "DEVICE_TO_DEVICE" => CopyKind::DtoD,
        "PEER_TO_PEER" => CopyKind::PtoP,
        _ => CopyKind::Unknown,
    }
}

fn copies<R: Read>(
    t: &mut Table<R>,
    path: &Path,
    b: &mut ProfileBuilder,
    cols: &Columns,
    what: &str,
) -> Result<(), ImportError> {
    let direction = t.column("Direction");
    let src = t.column("Source_Agent_Id");
    let dst = t.column("Destination_Agent_Id");
    let lane = t.any_column(&["Stream_Id", "Queue_Id"]);
    let size = t.any_column(&["Copy_Bytes", "Bytes", "Size"]);
    let mut skipped = 0;
    while let Some(row) = t.next_row(path)? {
        let (Some(dir), Some((start_ns, dur_ns))) = (row.text(direction), cols.span(&row)) else {
            skipped += 1;
            continue;
        };
        let (s, d) = (row.u32(src), row.u32(dst));
        let kind = copy_kind(dir, s, d);
        // The copy's lane is on the GPU side of it.
        let device = match kind {
            CopyKind::DtoH | CopyKind::PtoP => s.or(d),
            _ => d.or(s),
        }
        .unwrap_or(0);
        let host = MemoryKind::Host;
        let (src_kind, dst_kind) = match kind {
            CopyKind::HtoD => (Some(host), Some(MemoryKind::Device)),
            CopyKind::DtoH => (Some(MemoryKind::Device), Some(host)),
            CopyKind::HtoH => (Some(host), Some(host)),
            CopyKind::DtoD | CopyKind::PtoP => (Some(MemoryKind::Device), Some(MemoryKind::Device)),
            _ => (None, None),
        };
        let info = CopyInfo {
            kind,
            bytes: row.u64(size),
            src_kind,
            dst_kind,
            correlation: cols.correlation(&row),
            external_id: None,
        };
        let track = match row.u64(lane) {
            Some(queue) => queue_track(b, device, queue),
            None => copy_track(b, device),
        };
        let name = b.intern(&kind.activity_name_in("HIP"));
        b.push_copy(track, start_ns, dur_ns, name, EventKind::Memcpy, info, 0);
    }
    skipped_rows(b, what, skipped);
    Ok(())
}

/// The kind of an API call of `domain` (`HIP_RUNTIME_API`, `HSA_CORE_API`, `MARKER_CORE_API`):
/// HIP is the runtime, HSA underneath it the driver, markers (ROCTx) are annotations.
fn call_kind(domain: &str) -> EventKind {
    if domain.starts_with("HSA") {
        EventKind::Driver
    } else if domain.starts_with("MARKER") || domain.starts_with("ROCTX") {
        EventKind::Nvtx
    } else {
        EventKind::Runtime
    }
}

fn calls<R: Read>(
    t: &mut Table<R>,
    path: &Path,
    b: &mut ProfileBuilder,
    cols: &Columns,
    what: &str,
) -> Result<(), ImportError> {
    let domain = t.column("Domain");
    let function = t.column("Function");
    let pid = t.column("Process_Id");
    let tid = t.column("Thread_Id");
    let mut skipped = 0;
    while let Some(row) = t.next_row(path)? {
        let (Some(name), Some((start_ns, dur_ns))) = (row.text(function), cols.span(&row)) else {
            skipped += 1;
            continue;
        };
        let kind = call_kind(row.text(domain).unwrap_or(""));
        let p = row.int(pid).unwrap_or(0);
        let key = TrackKey::Thread {
            pid: TraceId::Int(p),
            tid: TraceId::Int(row.int(tid).unwrap_or(p)),
        };
        let fresh = b.find_track(&key).is_none();
        let track = b.track(key);
        if fresh
            && let TrackKey::Thread {
                tid: TraceId::Int(tid),
                ..
            } = key
        {
            b.track_mut(track).name = format!("thread {tid}");
        }
        let name = b.intern(name);
        if kind == EventKind::Nvtx {
            b.push(track, start_ns, dur_ns, name, kind);
        } else {
            let info = ApiInfo {
                correlation: cols.correlation(&row),
                ..ApiInfo::default()
            };
            b.push_api(track, start_ns, dur_ns, name, kind, info, 0);
        }
    }
    skipped_rows(b, what, skipped);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directions_and_domains() {
        assert_eq!(
            copy_kind("MEMORY_COPY_HOST_TO_DEVICE", Some(0), Some(1)),
            CopyKind::HtoD
        );
        assert_eq!(
            copy_kind("MEMORY_COPY_DEVICE_TO_DEVICE", Some(2), Some(3)),
            CopyKind::PtoP
        );
        assert_eq!(
            copy_kind("MEMORY_COPY_DEVICE_TO_DEVICE", Some(2), Some(2)),
            CopyKind::DtoD
        );
        assert_eq!(copy_kind("SOMETHING_NEW", None, None), CopyKind::Unknown);
        assert_eq!(call_kind("HIP_RUNTIME_API_EXT"), EventKind::Runtime);
        assert_eq!(call_kind("HSA_CORE_API"), EventKind::Driver);
        assert_eq!(call_kind("MARKER_CORE_API"), EventKind::Nvtx);
    }
}
