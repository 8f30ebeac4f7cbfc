//! nvprof CSV and plain-text output (`formats.md` section 1): GPU traces, API traces, summaries,
//! the Unified Memory table, and the framing (`==PID== ` lines, application output) around them.
//!
//! The file is streamed line by line (`lines.rs`). nvprof's own lines (`==PID== Profiling
//! result:`) set the section; a CSV header (`"Start","Duration",...`) is handed to `csv.rs`, a
//! text header (`   Start  Duration ...`) to `text.rs`; everything else is application output and
//! is ignored. Both table readers turn rows into the same cells (`Cells`), and this module turns
//! cells into events, summary rows and warnings.

mod csv;
mod lines;
mod text;

use std::path::Path;
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use self::lines::Lines;

use super::{ImportError, ImportTimings, Input, Progress};
use crate::builder::{ProfileBuilder, TrackId};
use crate::model::{
    ApiInfo, CopyInfo, CopyKind, Device, EventKind, Format, GpuLane, KernelInfo, MemoryKind,
    Profile, RecordedSummary, RecordedSummaryRow, SummarySection, TraceId, TrackKey,
    UnifiedMemorySummaryRow,
};
use crate::strings::StrId;
use crate::time::parse_decimal_scaled;

/// Imports nvprof `--csv` output or a plain-text nvprof log (GPU trace, API trace, summary,
/// Unified Memory table). Rejects `--cpu-profiling` output, which is a text tree.
pub fn import(
    input: Input<'_>,
    progress: &Progress,
) -> Result<(Profile, ImportTimings), ImportError> {
    let started = Instant::now();
    let path = input.path();
    let (reader, compressed, file_bytes) = input.open()?;
    progress.set_total(file_bytes);
    let mut lines = Lines::new(reader, path, compressed, file_bytes, progress);

    let mut st = State::new(path);
    st.b.source.compressed = compressed;
    st.b.source.file_bytes = file_bytes;
    st.run(&mut lines)?;
    lines.finish();
    if !lines.any_content {
        return Err(ImportError::Empty {
            path: path.to_path_buf(),
        });
    }
    st.b.source.content_bytes = lines.read_bytes();
    if lines.lossy {
        st.b.warn(
            "not_utf8",
            1,
            "the file is not valid UTF-8; invalid bytes were replaced with U+FFFD",
        );
    }
    let read = lines.read_time;
    let parse = started.elapsed().saturating_sub(read);

    let t = Instant::now();
    let profile = st.finish()?;
    let index = t.elapsed();
    progress.set_done(file_bytes);
    Ok((
        profile,
        ImportTimings {
            read,
            parse,
            index,
            total: started.elapsed(),
        },
    ))
}

// ------------------------------------------------------------------------------------------
// Lines

/// True for a line that ends a table: blank, an nvprof line, or the `Total CPU ...` trailer.
fn ends_table(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || framing(line).is_some() || t.starts_with("Total CPU ")
}

/// If `line` was written by nvprof itself (`==1234== text` or `======== text`), its pid (if
/// any) and text.
fn framing(line: &str) -> Option<(Option<i64>, &str)> {
    if let Some(rest) = line.strip_prefix("========") {
        return Some((None, rest.strip_prefix(' ').unwrap_or(rest)));
    }
    let rest = line.strip_prefix("==")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let after = rest[digits..].strip_prefix("==")?;
    let pid = rest[..digits].parse::<i64>().ok();
    Some((pid, after.strip_prefix(' ').unwrap_or(after)))
}

// ------------------------------------------------------------------------------------------
// Columns, units and cell values

/// The trace columns warpscope reads, matched by header name (CSV and text spellings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
enum Col {
    Start,
    Duration,
    GridX,
    GridY,
    GridZ,
    BlockX,
    BlockY,
    BlockZ,
    GridSize,
    BlockSize,
    Registers,
    StaticSmem,
    DynamicSmem,
    Size,
    Throughput,
    SrcMemType,
    DstMemType,
    Device,
    Context,
    Stream,
    SrcDev,
    SrcCtx,
    DstDev,
    DstCtx,
    UnifiedMemory,
    VirtualAddress,
    Name,
    Correlation,
}

/// Number of [`Col`] variants.
const NCOL: usize = Col::Correlation as usize + 1;

impl Col {
    fn from_header(name: &str) -> Option<Self> {
        Some(match name.trim() {
            "Start" => Self::Start,
            "Duration" => Self::Duration,
            "Grid X" => Self::GridX,
            "Grid Y" => Self::GridY,
            "Grid Z" => Self::GridZ,
            "Block X" => Self::BlockX,
            "Block Y" => Self::BlockY,
            "Block Z" => Self::BlockZ,
            "Grid Size" => Self::GridSize,
            "Block Size" => Self::BlockSize,
            "Registers Per Thread" | "Regs*" | "Regs" => Self::Registers,
            "Static SMem" | "SSMem*" | "SSMem" => Self::StaticSmem,
            "Dynamic SMem" | "DSMem*" | "DSMem" => Self::DynamicSmem,
            "Size" => Self::Size,
            "Throughput" => Self::Throughput,
            "SrcMemType" => Self::SrcMemType,
            "DstMemType" => Self::DstMemType,
            "Device" => Self::Device,
            "Context" => Self::Context,
            "Stream" => Self::Stream,
            "Src Dev" => Self::SrcDev,
            "Src Ctx" => Self::SrcCtx,
            "Dst Dev" => Self::DstDev,
            "Dst Ctx" => Self::DstCtx,
            "Unified Memory" => Self::UnifiedMemory,
            "Virtual Address" => Self::VirtualAddress,
            "Name" => Self::Name,
            "Correlation_ID" | "Correlation ID" | "CorrelationId" => Self::Correlation,
            _ => return None,
        })
    }

    /// What kind of unit the column must carry.
    fn quantity(self) -> Quantity {
        match self {
            Self::Start | Self::Duration => Quantity::Time,
            Self::StaticSmem | Self::DynamicSmem | Self::Size | Self::UnifiedMemory => {
                Quantity::Bytes
            }
            _ => Quantity::Other,
        }
    }
}

/// What a column measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quantity {
    Time,
    Bytes,
    Other,
}

/// The unit of a column (CSV units row) or [`Unit::Inline`] when every value carries its own
/// suffix (text logs, the CSV Unified Memory table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    /// Values carry their own unit (`812ns`, `8.0000KB`).
    Inline,
    /// The units row leaves the column empty: plain numbers.
    Plain,
    /// A time unit: the power of ten that turns it into nanoseconds (`s` = 9).
    Time(i32),
    /// A size unit: the power of 1024 that turns it into bytes (`KB` = 1).
    Bytes(u32),
    /// A throughput (`GB/s`), not read.
    Rate,
    /// A percentage.
    Percent,
}

impl Unit {
    /// Parses a unit as written in a units row or after a value; `None` if unknown.
    fn parse(s: &str) -> Option<Self> {
        Some(match s.trim() {
            "" => Self::Plain,
            "s" => Self::Time(9),
            "ms" => Self::Time(6),
            "us" | "\u{b5}s" => Self::Time(3),
            "ns" => Self::Time(0),
            "B" => Self::Bytes(0),
            "KB" => Self::Bytes(1),
            "MB" => Self::Bytes(2),
            "GB" => Self::Bytes(3),
            "TB" => Self::Bytes(4),
            "B/s" | "KB/s" | "MB/s" | "GB/s" | "TB/s" => Self::Rate,
            "%" => Self::Percent,
            _ => return None,
        })
    }
}

/// Splits `1.0837GB/s` into (`1.0837`, `GB/s`).
fn split_suffix(cell: &str) -> (&str, &str) {
    let end = cell
        .bytes()
        .position(|b| !(b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+')))
        .unwrap_or(cell.len());
    (&cell[..end], &cell[end..])
}

/// True for an empty cell or nvprof's `-` (not applicable).
fn is_missing(cell: &str) -> bool {
    cell.is_empty() || cell == "-"
}

/// A time cell in nanoseconds: `Ok(None)` when empty or `-`, `Err` when it is not a time.
fn time_ns(cell: &str, unit: Unit) -> Result<Option<i64>, String> {
    let c = cell.trim();
    if is_missing(c) {
        return Ok(None);
    }
    let bad = || format!("`{}` is not a time", shown(c, 40));
    let (num, scale) = match unit {
        Unit::Time(scale) => (c, scale),
        Unit::Inline => {
            let (num, suffix) = split_suffix(c);
            match Unit::parse(suffix) {
                Some(Unit::Time(scale)) => (num, scale),
                _ => return Err(bad()),
            }
        }
        _ => return Err(bad()),
    };
    match parse_decimal_scaled(num.as_bytes(), scale) {
        Some(v) => Ok(Some(v)),
        // A number, but too large for i64 nanoseconds (`1e300`, `99999999999s`).
        None if num.parse::<f64>().is_ok_and(f64::is_finite) => Err(format!(
            "`{}` is out of range (beyond about 292 years in nanoseconds)",
            shown(c, 40)
        )),
        None => Err(bad()),
    }
}

/// `text` (a decimal number) times `1024^pow`, rounded to the nearest integer, exactly.
fn scaled_bytes(text: &str, pow: u32) -> Option<u64> {
    let factor = 1024i128.checked_pow(pow)?;
    for scale in [9u32, 6, 3, 0] {
        let Some(v) = parse_decimal_scaled(text.as_bytes(), i32::try_from(scale).ok()?) else {
            continue;
        };
        if v < 0 {
            return None;
        }
        let divisor = 10i128.pow(scale);
        let x = (i128::from(v) * factor + divisor / 2) / divisor;
        return u64::try_from(x).ok();
    }
    None
}

/// A size cell in bytes: `Ok(None)` when empty or `-`. Plain numbers count as bytes.
fn bytes_cell(cell: &str, unit: Unit) -> Result<Option<u64>, String> {
    let c = cell.trim();
    if is_missing(c) {
        return Ok(None);
    }
    let bad = || format!("`{}` is not a size", shown(c, 40));
    let (num, pow) = match unit {
        Unit::Bytes(pow) => (c, pow),
        Unit::Plain => (c, 0),
        Unit::Inline => {
            let (num, suffix) = split_suffix(c);
            match Unit::parse(suffix) {
                Some(Unit::Bytes(pow)) => (num, pow),
                Some(Unit::Plain) => (num, 0),
                _ => return Err(bad()),
            }
        }
        _ => return Err(bad()),
    };
    scaled_bytes(num, pow).map(Some).ok_or_else(bad)
}

/// An unsigned integer cell (`Ok(None)` when empty or `-`).
fn int_cell(cell: &str) -> Result<Option<u64>, String> {
    let c = cell.trim();
    if is_missing(c) {
        return Ok(None);
    }
    c.parse::<u64>()
        .map(Some)
        .map_err(|_| format!("`{}` is not a whole number", shown(c, 40)))
}

/// An unsigned integer cell, `None` when empty, `-` or unreadable (for optional columns).
fn opt_int_cell(cell: &str) -> Option<u64> {
    int_cell(cell).ok().flatten()
}

/// A percentage (`71.05%` or `71.05`).
fn percent_cell(cell: &str) -> Result<f64, String> {
    let c = cell.trim();
    let num = c.strip_suffix('%').unwrap_or(c);
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{}` is not a percentage", shown(c, 40))),
    }
}

/// The device of a text Unified Memory block, from its trimmed `Device "TITAN Xp (0)"` line.
fn um_device(line: &str) -> Option<&str> {
    line.strip_prefix("Device \"")?.strip_suffix('"')
}

/// `(32768 1 1)` → `[32768, 1, 1]`.
fn dims_cell(cell: &str) -> Option<[u32; 3]> {
    let inner = cell.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut it = inner.split_whitespace().map(|v| v.parse::<u32>().ok());
    let dims = [it.next()??, it.next()??, it.next()??];
    it.next().is_none().then_some(dims)
}

/// `TITAN Xp (0)` → (`TITAN Xp`, 0).
fn parse_device(cell: &str) -> Option<(&str, u32)> {
    let c = cell.trim();
    let inner = c.strip_suffix(')')?;
    let open = inner.rfind(" (")?;
    let id = inner[open + 2..].parse::<u32>().ok()?;
    Some((inner[..open].trim(), id))
}

/// `void k<double>(double*) [128]` → (`void k<double>(double*)`, Some(128)).
fn strip_correlation_suffix(name: &str) -> (&str, Option<u64>) {
    if let Some(body) = name.strip_suffix(']')
        && let Some(open) = body.rfind(" [")
    {
        let digits = &body[open + 2..];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return (&name[..open], digits.parse().ok());
        }
    }
    (name, None)
}

/// The value cells of a summary row as written (CSV or text): `Time(%)`, `Time`, `Avg`, `Min`,
/// `Max` and `Calls`.
struct SummaryCells<'a> {
    pct: &'a str,
    /// `Time`, `Avg`, `Min` and `Max`.
    times: [&'a str; 4],
    calls: &'a str,
}

impl SummaryCells<'_> {
    /// Converts the cells, the times in `units`: (Time(%), [Time, Avg, Min, Max] in ns, Calls).
    fn parse(&self, units: [Unit; 4]) -> Result<(f64, [i64; 4], u64), String> {
        let time_pct = percent_cell(self.pct)?;
        let mut out = [0i64; 4];
        let labels = ["Time", "Avg", "Min", "Max"];
        for i in 0..4 {
            out[i] = time_ns(self.times[i], units[i])?
                .ok_or_else(|| format!("{} is empty", labels[i]))?;
            if out[i] < 0 {
                return Err(format!(
                    "{} `{}` is negative",
                    labels[i],
                    shown(self.times[i], 40)
                ));
            }
        }
        let calls = int_cell(self.calls)?.ok_or_else(|| "Calls is empty".to_string())?;
        Ok((time_pct, out, calls))
    }
}

/// The size cells of a Unified Memory summary row (`Avg Size`, `Min Size`, `Max Size`,
/// `Total Size`), each with its unit inside.
fn um_sizes(cells: [&str; 4]) -> Result<[Option<u64>; 4], String> {
    let [avg, min, max, total] = cells.map(|c| bytes_cell(c, Unit::Inline));
    Ok([avg?, min?, max?, total?])
}

/// The cells of one trace row, by column (empty when the column is absent).
type Cells<'a> = [&'a str; NCOL];

/// The unit of each column of a table.
type Units = [Unit; NCOL];

// ------------------------------------------------------------------------------------------
// Import state

/// Which part of nvprof's output the lines belong to, from the last `==PID==` line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Section {
    /// Before any result section, or `Profiling result:`.
    Result,
    /// `API calls:` (the ≤ CUDA 8 summary layout).
    ApiCalls,
    /// `Unified Memory profiling result:`.
    UnifiedMemory,
    /// `CPU profiling result`: a text tree, skipped.
    CpuProfile,
    /// `Metric result:` / `Event result:`: kept as text in the source details.
    Metrics,
    /// Another titled section warpscope does not read (`OpenACC (excl):`).
    Other,
}

/// A problem counted over the whole file, reported once with its first line.
#[derive(Debug)]
struct Problem {
    count: u64,
    message: String,
}

/// Everything collected while walking the file.
struct State<'p> {
    path: &'p Path,
    b: ProfileBuilder,
    section: Section,
    pid: Option<i64>,
    saw_csv: bool,
    summary: RecordedSummary,
    /// Data rows read into events or summary rows.
    rows: u64,
    /// First problem that made a row unreadable: reported as the error if nothing was read.
    first_problem: Option<(usize, String)>,
    /// Header line of the first table without rows, and how many there were.
    empty_tables: (Option<usize>, u64),
    /// Problems by warning code, in first-seen order.
    problems: Vec<(&'static str, Problem)>,
    /// Line of the `CPU profiling result` title, if any, and how many tree lines followed.
    cpu_profile: Option<(usize, u64)>,
    /// The `Metric result:` / `Event result:` section being collected.
    metrics: Option<Metrics>,
    /// Bytes of metric text kept so far (capped at [`MAX_METRICS_TEXT`]).
    metrics_kept: usize,
    /// Line of the first metric line not kept because of the cap.
    metrics_cut: Option<usize>,
    /// nvprof said `No kernels were profiled.`
    nothing_profiled: bool,
    /// The last line nvprof itself wrote (for errors that have no better line).
    last_framing_line: usize,
    /// Count of distinct `Warning:` lines seen.
    nvprof_warnings: u32,
    /// Device currently named by the text Unified Memory block (`Device "TITAN Xp (0)"`).
    um_device: String,
    /// Display and mangled ids of names that needed demangling.
    demangled: FxHashMap<String, (StrId, Option<StrId>)>,
    /// Last device cell seen and its ordinal.
    last_device: (String, Option<u32>),
    /// Tracks already named.
    named_tracks: Vec<bool>,
    /// Columns seen in headers that warpscope does not read, in first-seen order (the first
    /// [`SHOWN_COLUMNS`] of them), and how many distinct ones there were.
    unknown_columns: Vec<String>,
    /// Every distinct unknown column name (up to [`MAX_UNKNOWN_SEEN`]), for counting.
    unknown_seen: FxHashSet<String>,
    /// Unknown column names met once `unknown_seen` was full.
    unknown_extra: u64,
    /// Device ordinals already registered.
    device_ids: FxHashSet<u32>,
    /// Process ids already named.
    named_pids: FxHashSet<i64>,
    /// The `Profiling application:` command was recorded.
    saw_command: bool,
    /// `Total CPU ...` lines kept as details.
    totals_kept: usize,
}

/// A `Metric result:` / `Event result:` section being collected.
struct Metrics {
    /// Line of its title.
    line: usize,
    /// Its key in the source details (`nvprof metric result`).
    key: String,
    /// The text kept.
    body: String,
    /// Non-blank lines seen after the title.
    lines: u64,
    /// Data rows (not the header nor the text form's `Device`/`Kernel:` lines).
    rows: u64,
}

/// Most bytes of metric/event text kept in the source details, over the whole file.
const MAX_METRICS_TEXT: usize = 16 << 20;

/// Most unknown column names listed in the warning (all are counted).
const SHOWN_COLUMNS: usize = 20;

/// Most processes named (nvprof profiles one, or a few with `--profile-child-processes`).
const MAX_PROCESSES: usize = 4096;

/// Most distinct unknown column names remembered; past it, unknown names are counted without
/// telling repeats apart.
const MAX_UNKNOWN_SEEN: usize = 65_536;

/// Most `Total CPU ...` lines kept as details.
const MAX_TOTALS: usize = 64;

/// Most nvprof `Warning:` lines reported each with its own warning; later ones are counted
/// together.
const MAX_NVPROF_WARNINGS: u32 = 32;

/// `s` cut to at most `n` characters, for messages that quote the file.
fn shown(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => s.get(..i).unwrap_or_default().to_string(),
        None => s.to_string(),
    }
}

impl<'p> State<'p> {
    fn new(path: &'p Path) -> Self {
        let mut b = ProfileBuilder::new(path.to_path_buf(), Format::NvprofText);
        b.source.tool = "nvprof".to_string();
        Self {
            path,
            b,
            section: Section::Result,
            pid: None,
            saw_csv: false,
            summary: RecordedSummary::default(),
            rows: 0,
            first_problem: None,
            empty_tables: (None, 0),
            problems: Vec::new(),
            cpu_profile: None,
            metrics: None,
            metrics_kept: 0,
            metrics_cut: None,
            nothing_profiled: false,
            last_framing_line: 1,
            nvprof_warnings: 0,
            um_device: String::new(),
            demangled: FxHashMap::default(),
            last_device: (String::new(), None),
            named_tracks: Vec::new(),
            unknown_columns: Vec::new(),
            unknown_seen: FxHashSet::default(),
            unknown_extra: 0,
            device_ids: FxHashSet::default(),
            named_pids: FxHashSet::default(),
            saw_command: false,
            totals_kept: 0,
        }
    }

    fn corrupt(&self, line: usize, detail: impl Into<String>) -> ImportError {
        ImportError::Corrupt {
            path: self.path.to_path_buf(),
            location: format!("line {line}"),
            detail: detail.into(),
        }
    }

    /// Counts a problem under `code`; the first occurrence's message (which names its line)
    /// is kept.
    fn problem(&mut self, code: &'static str, message: impl FnOnce() -> String) {
        self.problems_add(code, 1, message);
    }

    /// Notes a table with a header but no rows.
    fn empty_table(&mut self, header_no: usize) {
        self.empty_tables.0.get_or_insert(header_no);
        self.empty_tables.1 += 1;
    }

    /// Counts `count` problems under `code`, like [`State::problem`].
    fn problems_add(&mut self, code: &'static str, count: u64, message: impl FnOnce() -> String) {
        if let Some((_, p)) = self.problems.iter_mut().find(|(c, _)| *c == code) {
            p.count += count;
            return;
        }
        self.problems.push((
            code,
            Problem {
                count,
                message: message(),
            },
        ));
    }

    /// A data row that could not be read: counted, skipped, remembered for the error text.
    fn bad_row(&mut self, line: usize, detail: &str) {
        if self.first_problem.is_none() {
            self.first_problem = Some((line, detail.to_string()));
        }
        self.problem("skipped_rows", || {
            format!(
                "table rows that could not be read were skipped (first at line {line}: {detail})"
            )
        });
    }

    /// A row whose times cannot be placed on the timeline (negative Start, or an end beyond
    /// i64 nanoseconds): counted under `time_out_of_range`, skipped, remembered for the error
    /// text.
    fn time_out_of_range(&mut self, line: usize, detail: &str) {
        if self.first_problem.is_none() {
            self.first_problem = Some((line, detail.to_string()));
        }
        self.problem("time_out_of_range", || {
            format!(
                "rows whose times do not fit the timeline (a negative Start, or an end past \
                 about 292 years in nanoseconds) were skipped (first at line {line}: {detail})"
            )
        });
    }

    /// Walks the whole file.
    fn run(&mut self, lines: &mut Lines<'_>) -> Result<(), ImportError> {
        // One CSV splitter for the whole file: its buffers serve every line.
        let mut splitter = csv::Splitter::default();
        while let Some(line) = lines.next()? {
            if let Some((pid, msg)) = framing(line.text) {
                self.on_framing(pid, msg, line.no);
                continue;
            }
            match self.section {
                Section::CpuProfile => {
                    if let Some((_, n)) = &mut self.cpu_profile {
                        *n += 1;
                    }
                    continue;
                }
                Section::Metrics => {
                    self.metrics_line(line.text, line.no);
                    continue;
                }
                _ => {}
            }
            let trimmed = line.text.trim();
            if trimmed.is_empty() {
                continue;
            }
            if let Some(rest) = trimmed.strip_prefix("Total CPU ") {
                self.total_line(rest, line.no);
                continue;
            }
            if self.section == Section::Other {
                continue;
            }
            if line.text.starts_with('"') {
                self.saw_csv = true;
                let header = (line.no, line.text.to_string());
                csv::table(self, lines, &mut splitter, header)?;
                continue;
            }
            if let Some(device) = um_device(trimmed) {
                self.um_device = device.to_string();
                continue;
            }
            if let Some(kind) = text::header_kind(line.text) {
                let header = (line.no, line.text.to_string());
                text::table(self, lines, header, kind)?;
            }
            // Anything else is application output or nvprof's footnotes: not part of a table.
        }
        self.flush_metrics();
        Ok(())
    }

    /// A line of a `Metric result:` / `Event result:` section: kept as text (up to
    /// [`MAX_METRICS_TEXT`] over the file) and counted.
    fn metrics_line(&mut self, text: &str, no: usize) {
        let t = text.trim();
        if t.is_empty() {
            return;
        }
        let Some(m) = &mut self.metrics else {
            return;
        };
        // Count data rows: not the header (the section's first line after its title) nor the
        // text form's `Device "..."` / `Kernel: ...` lines.
        let header = m.lines == 0;
        m.lines += 1;
        if !header && !t.starts_with("Device \"") && !t.starts_with("Kernel:") {
            m.rows += 1;
        }
        if !m.body.is_empty() && self.metrics_kept + text.len() < MAX_METRICS_TEXT {
            self.metrics_kept += text.len() + 1;
            m.body.push_str(text);
            m.body.push('\n');
        } else if self.metrics_cut.is_none() {
            self.metrics_cut = Some(no);
        }
    }

    /// Handles a line written by nvprof itself.
    fn on_framing(&mut self, pid: Option<i64>, msg: &str, line_no: usize) {
        self.last_framing_line = line_no;
        if self.pid.is_none() {
            self.pid = pid;
        }
        let msg = msg.trim();
        if self.section == Section::Metrics {
            self.flush_metrics();
        }
        if let Some(rest) = msg.strip_prefix("NVPROF is profiling process ") {
            if let Some((p, cmd)) = rest.split_once(", command: ")
                && let Ok(p) = p.trim().parse::<i64>()
            {
                self.pid = Some(p);
                if self.named_pids.len() >= MAX_PROCESSES && !self.named_pids.contains(&p) {
                    self.problem("extra_processes", || {
                        format!(
                            "processes after the first {MAX_PROCESSES} were not named (first \
                             at line {line_no})"
                        )
                    });
                } else if self.named_pids.insert(p) {
                    self.b
                        .process_names
                        .push((TraceId::Int(p), shown(cmd.trim(), 500)));
                }
            }
        } else if let Some(cmd) = msg.strip_prefix("Profiling application: ") {
            if !self.saw_command {
                self.saw_command = true;
                let cmd = cmd.trim().to_string();
                self.b.source.details.push(("command".to_string(), cmd));
            }
        } else if msg.starts_with("Profiling result") {
            self.section = Section::Result;
        } else if msg == "API calls:" {
            self.section = Section::ApiCalls;
        } else if msg.starts_with("Unified Memory profiling result") {
            self.section = Section::UnifiedMemory;
        } else if msg.starts_with("CPU profiling result") {
            self.section = Section::CpuProfile;
            if self.cpu_profile.is_none() {
                self.cpu_profile = Some((line_no, 0));
            }
        } else if msg.starts_with("Metric result") || msg.starts_with("Event result") {
            self.section = Section::Metrics;
            self.start_metrics(line_no, msg);
        } else if let Some(w) = msg.strip_prefix("Warning:") {
            self.nvprof_warnings = self.nvprof_warnings.saturating_add(1);
            if self.nvprof_warnings > MAX_NVPROF_WARNINGS {
                self.problem("nvprof_warnings_more", || {
                    format!(
                        "further nvprof warnings were not listed one by one (first at line {line_no})"
                    )
                });
                return;
            }
            let code = if self.nvprof_warnings == 1 {
                "nvprof_warning".to_string()
            } else {
                format!("nvprof_warning_{}", self.nvprof_warnings)
            };
            self.b.warn(
                &code,
                1,
                format!("nvprof: {} (line {line_no})", shown(w.trim(), 500)),
            );
        } else if let Some(e) = msg.strip_prefix("Error:") {
            self.b.warn(
                "nvprof_error",
                1,
                format!(
                    "nvprof reported an error: {} (line {line_no})",
                    shown(e.trim(), 500)
                ),
            );
        } else if msg.starts_with("No kernels were profiled") {
            self.nothing_profiled = true;
        } else if msg.ends_with(':') && !msg.contains("  ") {
            // Another result title (`OpenACC (excl):`, `OpenMP Events:`): not read.
            self.section = Section::Other;
            let title = shown(msg.trim_end_matches(':'), 80);
            self.problem("unread_section", || {
                format!("nvprof section `{title}` (line {line_no}) is not read by warpscope")
            });
        }
    }

    /// `Total CPU Page faults: 49` and its siblings after the Unified Memory table.
    fn total_line(&mut self, rest: &str, line_no: usize) {
        let Some((label, value)) = rest.split_once(':') else {
            return;
        };
        let value = value.trim();
        if label.trim().eq_ignore_ascii_case("Page faults") {
            match value.parse::<u64>() {
                Ok(n) => self.summary.cpu_page_faults = Some(n),
                Err(_) => self.problem("bad_total", || {
                    let value = shown(value, 40);
                    format!("line {line_no}: `Total CPU Page faults: {value}` is not a count")
                }),
            }
        } else if self.totals_kept >= MAX_TOTALS {
            self.problem("extra_totals", || {
                format!(
                    "`Total CPU ...` lines after the first {MAX_TOTALS} were not kept (first at \
                     line {line_no})"
                )
            });
        } else {
            self.totals_kept += 1;
            self.b
                .source
                .details
                .push((format!("Total CPU {}", label.trim()), value.to_string()));
        }
    }

    /// Starts collecting a metric/event section whose text begins with `title`.
    fn start_metrics(&mut self, line: usize, title: &str) {
        let title = shown(title.trim(), 80);
        let key = format!("nvprof {}", title.trim_end_matches(':').to_lowercase());
        let body = if self.metrics_kept < MAX_METRICS_TEXT {
            self.metrics_kept += title.len() + 1;
            format!("{title}\n")
        } else {
            self.metrics_cut.get_or_insert(line);
            String::new()
        };
        self.metrics = Some(Metrics {
            line,
            key,
            body,
            lines: 0,
            rows: 0,
        });
    }

    fn flush_metrics(&mut self) {
        if let Some(Metrics {
            line,
            key,
            body,
            rows,
            ..
        }) = self.metrics.take()
        {
            if rows == 0 {
                return;
            }
            // Count rows, not sections.
            self.problems_add("metrics_not_shown", rows, || {
                format!(
                    "nvprof metric/event results (from line {line}) are kept as text in the \
                     source details; warpscope does not chart them"
                )
            });
            if !body.is_empty() {
                self.b.source.details.push((key, body));
            }
        }
    }

    /// A metric/event CSV table met outside a `Metric result:` section: its lines are fed to
    /// [`State::metrics_line`] by the caller between this and [`State::flush_metrics`].
    fn begin_metrics_table(&mut self, header_no: usize, header: &str) {
        self.flush_metrics();
        self.start_metrics(header_no, "Metric result:");
        self.metrics_line(header, header_no);
    }

    /// The [`Col`] of each trace header name, noting the names warpscope does not read (in
    /// time linear in the header's length).
    fn trace_columns<'h>(&mut self, names: impl IntoIterator<Item = &'h str>) -> Vec<Option<Col>> {
        names
            .into_iter()
            .map(|name| {
                let col = Col::from_header(name);
                let n = name.trim();
                if col.is_none() && !n.is_empty() && !self.unknown_seen.contains(n) {
                    if self.unknown_seen.len() >= MAX_UNKNOWN_SEEN {
                        self.unknown_extra += 1;
                        return col;
                    }
                    self.unknown_seen.insert(n.to_string());
                    if self.unknown_columns.len() < SHOWN_COLUMNS {
                        self.unknown_columns.push(shown(n, 80));
                    }
                }
                col
            })
            .collect()
    }

    // -- events ------------------------------------------------------------------------------

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
    fn trace_row(
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
        let start_ns = match time_ns(cells[Col::Start as usize], units[Col::Start as usize]) {
            Ok(Some(v)) => v,
            Ok(None) => {
                self.bad_row(line, "the Start cell is empty");
                return None;
            }
            Err(e) => {
                self.bad_row(line, &format!("Start {e}"));
                return None;
            }
        };
        let name = cells[Col::Name as usize].trim();
        if name.is_empty() {
            self.bad_row(line, "the Name cell is empty");
            return None;
        }
        let mut dur_ns = match time_ns(cells[Col::Duration as usize], units[Col::Duration as usize])
        {
            Ok(dur_ns) => dur_ns.unwrap_or(0),
            Err(e) => {
                self.bad_row(line, &format!("Duration {e}"));
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
    fn summary_row(
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
            Err(e) => self.bad_row(line, &e),
        }
    }

    /// A `Total Time` cell of the Unified Memory summary table: inline unit, or a bare
    /// `0.000000`; anything else is left empty and counted.
    fn um_time(&mut self, cell: &str, line: usize) -> Option<i64> {
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
    fn um_summary_row(&mut self, row: UnifiedMemorySummaryRow) {
        self.rows += 1;
        if let Some((name, id)) = parse_device(&row.device) {
            self.add_device(name, id);
        }
        self.summary.unified_memory.push(row);
    }

    /// Turns what was collected into the profile, or an error when nothing was readable.
    fn finish(mut self) -> Result<Profile, ImportError> {
        if self.saw_csv {
            self.b.source.format = Format::NvprofCsv;
        }
        let has_summary = !self.summary.rows.is_empty()
            || !self.summary.unified_memory.is_empty()
            || self.summary.cpu_page_faults.is_some();
        let has_metrics = self
            .b
            .source
            .details
            .iter()
            .any(|(k, _)| k.starts_with("nvprof metric") || k.starts_with("nvprof event"));
        if self.rows == 0 && !has_summary && !has_metrics {
            if let Some((line, _)) = self.cpu_profile {
                return Err(ImportError::Unsupported {
                    path: self.path.to_path_buf(),
                    detail: format!(
                        "nvprof CPU-profiling output (a text tree, not a trace or summary; \
                         `CPU profiling result` on line {line}); profile with \
                         `--print-gpu-trace` or `--print-gpu-summary` instead"
                    ),
                });
            }
            if let Some((line, detail)) = self.first_problem.take() {
                return Err(self.corrupt(
                    line,
                    format!("no row of the table could be read ({detail})"),
                ));
            }
            if let Some(line) = self.empty_tables.0 {
                return Err(self.corrupt(line, "the table has a header but no rows"));
            }
            if self.nothing_profiled {
                return Err(ImportError::Unsupported {
                    path: self.path.to_path_buf(),
                    detail: "nvprof profiled nothing (`No kernels were profiled.`)".to_string(),
                });
            }
            let line = self.last_framing_line;
            return Err(self.corrupt(
                line,
                "no nvprof table found: expected a GPU trace, API trace or summary table \
                 (`\"Start\",\"Duration\",...`, `Start  Duration ...` or `Type  Time(%) ...`)",
            ));
        }
        if let Some((line, n)) = self.cpu_profile {
            self.b.warn(
                "cpu_profile_skipped",
                n.max(1),
                format!(
                    "the nvprof CPU-profiling tree (from line {line}) is not read; \
                     warpscope shows GPU traces and summaries"
                ),
            );
        }
        if let (Some(line), n) = self.empty_tables {
            self.problems_add("empty_table", n, || {
                format!("a table has a header but no rows (first at line {line})")
            });
        }
        if let Some(line) = self.metrics_cut {
            self.problem("metrics_truncated", || {
                format!(
                    "nvprof metric/event text past {} MiB was not kept (first at line {line})",
                    MAX_METRICS_TEXT >> 20
                )
            });
        }
        if !self.unknown_columns.is_empty() {
            let n = self.unknown_seen.len() as u64 + self.unknown_extra;
            let mut list = self
                .unknown_columns
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ");
            if n > self.unknown_columns.len() as u64 {
                let more = n - self.unknown_columns.len() as u64;
                list.push_str(&format!(" and {more} more"));
            }
            self.b.warn(
                "unknown_columns",
                n,
                format!("columns warpscope does not read were ignored: {list}"),
            );
        }
        for (code, p) in std::mem::take(&mut self.problems) {
            self.b.warn(code, p.count, p.message);
        }
        if has_summary {
            self.b.recorded_summary = Some(std::mem::take(&mut self.summary));
        }
        Ok(self.b.finish())
    }
}

/// Demangles an Itanium C++ name (`_ZN5Eigen...`), or `None` if it does not parse.
fn demangle(raw: &str) -> Option<String> {
    let sym = cpp_demangle::Symbol::new(raw.as_bytes()).ok()?;
    sym.demangle().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_lines_are_recognised() {
        assert_eq!(
            framing("==308065== Profiling result:"),
            Some((Some(308_065), "Profiling result:"))
        );
        assert_eq!(
            framing("======== CPU profiling result (bottom up):"),
            Some((None, "CPU profiling result (bottom up):"))
        );
        assert_eq!(framing("==abc== x"), None);
        assert_eq!(framing("\"Start\",\"Duration\""), None);
    }

    #[test]
    fn times_convert_exactly() {
        assert_eq!(time_ns("1.183779", Unit::Time(9)), Ok(Some(1_183_779_000)));
        assert_eq!(time_ns("0.000992", Unit::Time(6)), Ok(Some(992)));
        assert_eq!(time_ns("812ns", Unit::Inline), Ok(Some(812)));
        assert_eq!(time_ns("1.1840us", Unit::Inline), Ok(Some(1_184)));
        assert_eq!(time_ns("305.08ms", Unit::Inline), Ok(Some(305_080_000)));
        assert_eq!(time_ns("1.05294s", Unit::Inline), Ok(Some(1_052_940_000)));
        assert_eq!(time_ns("-", Unit::Inline), Ok(None));
        assert_eq!(time_ns("", Unit::Time(9)), Ok(None));
        assert!(time_ns("12", Unit::Inline).is_err());
        assert!(time_ns("abc", Unit::Time(3)).is_err());
        assert_eq!(
            time_ns("1e300", Unit::Time(6)),
            Err("`1e300` is out of range (beyond about 292 years in nanoseconds)".to_string())
        );
        assert_eq!(
            time_ns("0.0ms  1", Unit::Inline),
            Err("`0.0ms  1` is not a time".to_string())
        );
        assert_eq!(
            time_ns("9223372036.854775807s", Unit::Inline),
            Ok(Some(i64::MAX))
        );
        assert!(time_ns("9223372036.854775808s", Unit::Inline).is_err());
    }

    #[test]
    fn sizes_use_powers_of_1024() {
        // 6.304688 MB is 6610944.52 B: rounded to the nearest byte.
        assert_eq!(bytes_cell("6.304688MB", Unit::Inline), Ok(Some(6_610_945)));
        assert_eq!(bytes_cell("40.860352KB", Unit::Inline), Ok(Some(41_841)));
        assert_eq!(bytes_cell("8.0000KB", Unit::Inline), Ok(Some(8_192)));
        assert_eq!(bytes_cell("256.00MB", Unit::Inline), Ok(Some(268_435_456)));
        assert_eq!(bytes_cell("0B", Unit::Inline), Ok(Some(0)));
        assert_eq!(bytes_cell("0.000011", Unit::Bytes(2)), Ok(Some(12)));
        assert_eq!(bytes_cell("65536.000000", Unit::Bytes(0)), Ok(Some(65_536)));
        assert_eq!(bytes_cell("-", Unit::Inline), Ok(None));
        assert!(bytes_cell("1.2GB/s", Unit::Inline).is_err());
    }

    #[test]
    fn cells_parse() {
        assert_eq!(dims_cell("(32768 1 1)"), Some([32768, 1, 1]));
        assert_eq!(dims_cell("-"), None);
        assert_eq!(parse_device("TITAN Xp (0)"), Some(("TITAN Xp", 0)));
        assert_eq!(parse_device("Tesla K80 (1)"), Some(("Tesla K80", 1)));
        assert_eq!(parse_device("CPU, TITAN Xp ("), None);
        assert_eq!(
            strip_correlation_suffix("void k<double>(double*) [128]"),
            ("void k<double>(double*)", Some(128))
        );
        assert_eq!(
            strip_correlation_suffix("[CUDA memcpy DtoH]"),
            ("[CUDA memcpy DtoH]", None)
        );
        assert_eq!(percent_cell("71.05%"), Ok(71.05));
    }

    #[test]
    fn mangled_names_demangle() {
        assert_eq!(demangle("_Z3fooi").as_deref(), Some("foo(int)"));
        assert_eq!(demangle("_Znot a symbol"), None);
    }
}
