//! Trace and summary rows into events and summary rows: tracks, devices, kernel names
//! (demangled when nvprof left them mangled), copies, Unified Memory rows and API calls.

use super::State;
use super::cells::{
    Cells, Col, SummaryCells, Unit, Units, bytes_cell, dims_cell, is_missing, opt_int_cell,
    parse_device, strip_correlation_suffix, time_ns, time_value,
};
use crate::builder::TrackId;
use crate::demangle::demangle;
use crate::model::{
    ApiInfo, CopyInfo, CopyKind, Device, EventKind, GpuLane, KernelInfo, MemoryKind,
    RecordedSummaryRow, SummarySection, TraceId, TrackKey, UnifiedMemorySummaryRow,
};
use crate::strings::StrId;
use crate::time::parse_decimal_scaled;

impl State<'_> {
    /// Registers device `id` named `name` unless already known.
    fn add_device(&mut self, name: &str, id: u32) {
        if self.device_ids.insert(id) {
            self.b.devices.push(Device {
                id,
                name: name.to_string(),
                ..Device::default()
            });
        }
    }

    /// The ordinal of a device cell (`TITAN Xp (0)`), registering the device on first sight.
    fn device_id(&mut self, cell: &str) -> Option<u32> {
        let cell = cell.trim();
        if is_missing(cell) {
            return None;
        }
        if self.last_device.0 == cell {
            return self.last_device.1;
        }
        let parsed = parse_device(cell);
        if let Some((name, id)) = parsed {
            self.add_device(name, id);
        }
        let id = parsed.map(|(_, id)| id);
        self.last_device = (cell.to_string(), id);
        id
    }

    /// The display name of a kernel and, when nvprof left it mangled, the mangled name.
    fn kernel_name(&mut self, raw: &str) -> (StrId, Option<StrId>) {
        if !raw.starts_with("_Z") {
            return (self.b.intern(raw), None);
        }
        if let Some(&ids) = self.demangled.get(raw) {
            return ids;
        }
        let ids = match demangle(raw) {
            Some(d) => (self.b.intern(&d), Some(self.b.intern(raw))),
            None => (self.b.intern(raw), None),
        };
        self.demangled.insert(raw.to_string(), ids);
        ids
    }

    fn track(&mut self, key: TrackKey, name: impl FnOnce() -> String) -> TrackId {
        let id = self.b.track(key);
        let i = id.0 as usize;
        if self.named_tracks.len() <= i {
            self.named_tracks.resize(i + 1, false);
        }
        if !self.named_tracks[i] {
            self.named_tracks[i] = true;
            self.b.track_mut(id).name = name();
        }
        id
    }

    fn pid_id(&self) -> TraceId {
        TraceId::Int(self.pid.unwrap_or(0))
    }

    /// A track for Unified Memory rows that name no usable device (CPU page faults, and cells
    /// nvprof truncated such as `CPU, TITAN Xp (`).
    fn host_um_track(&mut self, name: &str, device_cell: &str) -> TrackId {
        let label = if is_missing(device_cell.trim()) {
            if name.contains("CPU page faults") {
                "CPU page faults".to_string()
            } else {
                "unified memory (no device)".to_string()
            }
        } else {
            format!("unified memory ({})", device_cell.trim())
        };
        let tid = TraceId::Name(self.b.intern(&label));
        let pid = self.pid_id();
        self.track(TrackKey::Thread { pid, tid }, || label)
    }

    /// One row of a GPU trace (`gpu`) or API trace, CSV or text.
    pub(super) fn trace_row(
        &mut self,
        gpu: bool,
        cells: &Cells<'_>,
        units: &Units,
        has_corr_col: bool,
        line: usize,
    ) {
        if gpu {
            self.gpu_row(cells, units, has_corr_col, line);
        } else {
            self.api_row(cells, units, line);
        }
    }

    /// The Start, Name and Duration (0 when empty; a negative one is set to 0 and counted) of
    /// a trace row, or `None` after counting it as a bad row. Start is not negative and
    /// `Start + Duration` fits an i64.
    fn row_basics<'c>(
        &mut self,
        cells: &Cells<'c>,
        units: &Units,
        line: usize,
    ) -> Option<(i64, &'c str, i64)> {
        let start = cells[Col::Start as usize];
        let start_ns = match time_value(start, units[Col::Start as usize]) {
            Ok(Some(v)) => v,
            Ok(None) => {
                self.bad_row(line, || "the Start cell is empty".to_string());
                return None;
            }
            Err(p) => {
                self.bad_row(line, || format!("Start {}", p.message(start)));
                return None;
            }
        };
        let name = cells[Col::Name as usize].trim();
        if name.is_empty() {
            self.bad_row(line, || "the Name cell is empty".to_string());
            return None;
        }
        let dur = cells[Col::Duration as usize];
        let mut dur_ns = match time_value(dur, units[Col::Duration as usize]) {
            Ok(dur_ns) => dur_ns.unwrap_or(0),
            Err(p) => {
                self.bad_row(line, || format!("Duration {}", p.message(dur)));
                return None;
            }
        };
        if start_ns < 0 {
            self.time_out_of_range(line, &format!("Start is {start_ns} ns"));
            return None;
        }
        if dur_ns < 0 {
            self.problem("negative_duration", || {
                format!("negative durations were set to 0 (first at line {line})")
            });
            dur_ns = 0;
        }
        if start_ns.checked_add(dur_ns).is_none() {
            self.time_out_of_range(
                line,
                &format!("Start {start_ns} ns + Duration {dur_ns} ns overflows"),
            );
            return None;
        }
        Some((start_ns, name, dur_ns))
    }

    /// A size cell of a copy row; an unreadable one is left empty and counted under `bad_size`
    /// (`what` names the column in the warning).
    fn copy_bytes(&mut self, cell: &str, unit: Unit, what: &str, line: usize) -> Option<u64> {
        bytes_cell(cell, unit).unwrap_or_else(|e| {
            self.problem("bad_size", || {
                format!("unreadable {what} cells were left empty (first at line {line}: {e})")
            });
            None
        })
    }

    /// One row of a GPU trace (CSV or text).
    fn gpu_row(&mut self, cells: &Cells<'_>, units: &Units, has_corr_col: bool, line: usize) {
        let Some((start_ns, name_cell, dur_ns)) = self.row_basics(cells, units, line) else {
            return;
        };
        let (name, suffix_corr) = if has_corr_col {
            (name_cell, None)
        } else {
            strip_correlation_suffix(name_cell)
        };
        let correlation = opt_int_cell(cells[Col::Correlation as usize]).or(suffix_corr);
        let device = self.device_id(cells[Col::Device as usize]);
        let context = opt_int_cell(cells[Col::Context as usize])
            .and_then(|c| u32::try_from(c).ok())
            .unwrap_or(0);
        let stream = opt_int_cell(cells[Col::Stream as usize]).unwrap_or(0);
        self.rows += 1;

        if name.starts_with("[Unified Memory ") {
            self.um_row(name, cells, units, device, (start_ns, dur_ns), line);
            return;
        }

        let device = device.unwrap_or_else(|| {
            self.problem("no_device", || {
                format!("GPU rows without a usable Device cell were put on device 0 (first at line {line})")
            });
            0
        });
        let key = TrackKey::Gpu {
            device,
            context,
            stream,
            lane: GpuLane::Work,
        };
        let track = self.track(key, || format!("stream {stream}"));

        if name.starts_with("[CUDA memcpy") || name.starts_with("[CUDA memset") {
            let is_set = name.starts_with("[CUDA memset");
            let kind = if is_set {
                CopyKind::Memset
            } else {
                let inner = name
                    .strip_prefix("[CUDA memcpy")
                    .unwrap_or("")
                    .trim()
                    .trim_end_matches(']');
                CopyKind::from_short(inner).unwrap_or_else(|| {
                    self.problem("unknown_copy_kind", || {
                        format!("copies of an unknown direction such as `{name}` are shown as `[CUDA memcpy]` (first at line {line})")
                    });
                    CopyKind::Unknown
                })
            };
            let size = Col::Size as usize;
            let bytes = self.copy_bytes(cells[size], units[size], "Size", line);
            let mem = |cell: &str| {
                let c = cell.trim();
                (!is_missing(c)).then(|| MemoryKind::from_word(c))
            };
            let info = CopyInfo {
                kind,
                bytes,
                src_kind: mem(cells[Col::SrcMemType as usize]),
                dst_kind: mem(cells[Col::DstMemType as usize]),
                correlation,
                external_id: None,
            };
            let name_id = self.b.intern(name);
            let ev_kind = if is_set {
                EventKind::Memset
            } else {
                EventKind::Memcpy
            };
            self.b
                .push_copy(track, start_ns, dur_ns, name_id, ev_kind, info, 0);
            return;
        }

        if name.starts_with('[') {
            self.problem("unknown_activity", || {
                format!("rows with an unknown bracketed name such as `{name}` are shown as plain slices (first at line {line})")
            });
            let name_id = self.b.intern(name);
            self.b
                .push(track, start_ns, dur_ns, name_id, EventKind::Slice);
            return;
        }

        let dim = |x: Col, y: Col, z: Col| -> Option<[u32; 3]> {
            let p = |c: Col| cells[c as usize].trim().parse::<u32>().ok();
            Some([p(x)?, p(y)?, p(z)?])
        };
        let grid = dims_cell(cells[Col::GridSize as usize])
            .or_else(|| dim(Col::GridX, Col::GridY, Col::GridZ));
        let block = dims_cell(cells[Col::BlockSize as usize])
            .or_else(|| dim(Col::BlockX, Col::BlockY, Col::BlockZ));
        let smem = |c: Col| {
            bytes_cell(cells[c as usize], units[c as usize])
                .ok()
                .flatten()
        };
        let (name_id, mangled) = self.kernel_name(name);
        let info = KernelInfo {
            grid,
            block,
            registers_per_thread: opt_int_cell(cells[Col::Registers as usize])
                .and_then(|r| u32::try_from(r).ok()),
            static_shared_bytes: smem(Col::StaticSmem),
            dynamic_shared_bytes: smem(Col::DynamicSmem),
            correlation,
            mangled_name: mangled,
            ..KernelInfo::default()
        };
        self.b
            .push_kernel(track, start_ns, dur_ns, name_id, info, 0);
    }

    /// A `[Unified Memory ...]` row of a GPU trace, `device` read from its Device cell:
    /// migrations with their bytes, page faults and thrashing as plain unified-memory events.
    fn um_row(
        &mut self,
        name: &str,
        cells: &Cells<'_>,
        units: &Units,
        device: Option<u32>,
        (start_ns, dur_ns): (i64, i64),
        line: usize,
    ) {
        let track = match device {
            Some(device) => self.track(
                TrackKey::Gpu {
                    device,
                    context: 0,
                    stream: 0,
                    lane: GpuLane::UnifiedMemory,
                },
                || "unified memory".to_string(),
            ),
            None => self.host_um_track(name, cells[Col::Device as usize]),
        };
        let name_id = self.b.intern(name);
        let copy_kind = match name
            .strip_prefix("[Unified Memory Memcpy ")
            .map(|r| r.trim_end_matches(']'))
        {
            Some("HtoD") => CopyKind::UnifiedHtoD,
            Some("DtoH") => CopyKind::UnifiedDtoH,
            Some("DtoD") => CopyKind::UnifiedDtoD,
            _ => {
                self.b
                    .push(track, start_ns, dur_ns, name_id, EventKind::UnifiedMemory);
                return;
            }
        };
        let um = Col::UnifiedMemory as usize;
        let info = CopyInfo {
            kind: copy_kind,
            bytes: self.copy_bytes(cells[um], units[um], "size", line),
            src_kind: None,
            dst_kind: None,
            correlation: None,
            external_id: None,
        };
        self.b.push_copy(
            track,
            start_ns,
            dur_ns,
            name_id,
            EventKind::UnifiedMemory,
            info,
            0,
        );
    }

    /// One row of an API trace.
    fn api_row(&mut self, cells: &Cells<'_>, units: &Units, line: usize) {
        let Some((start_ns, name_cell, dur_ns)) = self.row_basics(cells, units, line) else {
            return;
        };
        // nvprof's text API trace writes launches as `cudaLaunch (kernel(int) [121])`.
        let name = match name_cell.split_once(" (") {
            Some((api, _)) if !api.contains(' ') => api,
            _ => name_cell,
        };
        let correlation = opt_int_cell(cells[Col::Correlation as usize]);
        let kind = if name.starts_with("cu") && !name.starts_with("cuda") {
            EventKind::Driver
        } else {
            EventKind::Runtime
        };
        self.rows += 1;
        let pid = self.pid_id();
        let tid = TraceId::Name(self.b.intern("CUDA API"));
        let track = self.track(TrackKey::Thread { pid, tid }, || "CUDA API".to_string());
        let name_id = self.b.intern(name);
        let info = ApiInfo {
            correlation,
            ..ApiInfo::default()
        };
        self.b
            .push_api(track, start_ns, dur_ns, name_id, kind, info, 0);
    }

    /// One summary row of table `section` (CSV or text), or a bad row if a value does not parse.
    pub(super) fn summary_row(
        &mut self,
        section: SummarySection,
        name: &str,
        cells: &SummaryCells<'_>,
        units: [Unit; 4],
        line: usize,
    ) {
        match cells.parse(units) {
            Ok((time_pct, [total_ns, avg_ns, min_ns, max_ns], calls)) => {
                self.rows += 1;
                self.summary.rows.push(RecordedSummaryRow {
                    section,
                    name: name.to_string(),
                    time_pct,
                    total_ns,
                    calls,
                    avg_ns,
                    min_ns,
                    max_ns,
                });
            }
            Err(e) => self.bad_row(line, || e),
        }
    }

    /// A `Total Time` cell of the Unified Memory summary table: inline unit, or a bare
    /// `0.000000`; anything else is left empty and counted.
    pub(super) fn um_time(&mut self, cell: &str, line: usize) -> Option<i64> {
        match time_ns(cell, Unit::Inline) {
            Ok(Some(v)) if v < 0 => {
                self.problem("um_time", || {
                    format!("negative Unified Memory times were left empty (first at line {line})")
                });
                None
            }
            Ok(v) => v,
            Err(_) if parse_decimal_scaled(cell.as_bytes(), 9) == Some(0) => Some(0),
            Err(e) => {
                self.problem("um_time", || {
                    format!(
                        "Unified Memory times without a unit were left empty (first at line {line}: {e})"
                    )
                });
                None
            }
        }
    }

    /// One row of the Unified Memory summary table.
    pub(super) fn um_summary_row(&mut self, row: UnifiedMemorySummaryRow) {
        self.rows += 1;
        if let Some((name, id)) = parse_device(&row.device) {
            self.add_device(name, id);
        }
        self.summary.unified_memory.push(row);
    }
}
