//! The CSV tables of `nvprof --csv`: GPU and API traces and summaries (header, then a units row
//! with one unit per column), the Unified Memory table (no units row, units inside the values)
//! and metric/event tables (kept as text). Rows are split with the `csv` crate in flexible mode,
//! because kernel names hold commas inside quotes.

use ::csv::{ByteRecord, ReaderBuilder};

use super::{
    Col, Line, Lines, NCOL, Quantity, Section, State, SummaryCells, Unit, Units, ends_table,
    int_cell, um_sizes,
};
use crate::import::{ImportError, Progress};
use crate::model::{SummarySection, UnifiedMemorySummaryRow};

/// What a CSV header announces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    GpuTrace,
    ApiTrace,
    /// `"Type","Time(%)",...` (`typed`) or the ≤ CUDA 8 `"Time(%)","Time",...`.
    Summary {
        typed: bool,
    },
    UnifiedMemory,
    Metrics,
    Unknown,
}

fn classify(names: &[String]) -> Kind {
    let has = |n: &str| names.iter().any(|c| c == n);
    let first = names.first().map_or("", String::as_str);
    if has("Start") && has("Duration") && has("Name") {
        let gpu = [
            "Device",
            "Grid X",
            "Stream",
            "Size",
            "Context",
            "Registers Per Thread",
        ];
        if gpu.iter().any(|n| has(n)) {
            return Kind::GpuTrace;
        }
        return Kind::ApiTrace;
    }
    if first == "Type" && has("Time(%)") {
        return Kind::Summary { typed: true };
    }
    if first == "Time(%)" && has("Calls") {
        return Kind::Summary { typed: false };
    }
    if has("Device") && has("Count") && has("Total Size") {
        return Kind::UnifiedMemory;
    }
    if has("Kernel") && has("Invocations") {
        return Kind::Metrics;
    }
    Kind::Unknown
}

/// Splits one CSV line into its cells.
fn split_line(line: &str) -> Vec<String> {
    let mut rdr = ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(line.as_bytes());
    let mut rec = ByteRecord::new();
    match rdr.read_byte_record(&mut rec) {
        Ok(true) => rec
            .iter()
            .map(|f| String::from_utf8_lossy(f).trim().to_string())
            .collect(),
        _ => Vec::new(),
    }
}

/// A data region: the lines after the header (and units row) up to the end of the table.
struct Region<'t> {
    bytes: &'t [u8],
    /// Byte offset of the region in the file.
    start: usize,
    /// Line number of its first line.
    first_no: usize,
    /// Byte offset of its last line.
    last_line_start: usize,
    /// The file ends inside the region's last line (no final newline): it may be cut short.
    open_end: bool,
    /// Number of lines.
    lines: usize,
}

fn region<'t>(lines: &mut Lines<'_>, text: &'t str) -> Region<'t> {
    let start = lines.pos();
    let first_no = lines.peek().map_or(0, |l| l.no);
    let mut last_line_start = start;
    let mut n = 0;
    while let Some(l) = lines.next_row() {
        last_line_start = l.start;
        n += 1;
    }
    let end = lines.pos();
    Region {
        bytes: text.as_bytes().get(start..end).unwrap_or(&[]),
        start,
        first_no,
        last_line_start,
        open_end: n > 0 && end == text.len() && !text.ends_with('\n'),
        lines: n,
    }
}

/// Reads the table whose header is `header` (already consumed from `lines`).
pub(super) fn table(
    st: &mut State<'_>,
    lines: &mut Lines<'_>,
    header: Line<'_>,
    text: &str,
    progress: &Progress,
) -> Result<(), ImportError> {
    let names = split_line(header.text);
    let kind = if st.section == Section::Metrics {
        Kind::Metrics
    } else {
        classify(&names)
    };
    match kind {
        Kind::Unknown => {
            let shown: String = header.text.chars().take(60).collect();
            let no = header.no;
            st.problem("unknown_table", || {
                format!("a CSV table warpscope does not know was skipped (header on line {no}: `{shown}`)")
            });
            lines.skip_table();
            Ok(())
        }
        Kind::Metrics => {
            let mut body = format!("{}\n", header.text);
            let mut rows = 0u64;
            while let Some(l) = lines.next_row() {
                body.push_str(l.text);
                body.push('\n');
                rows += 1;
            }
            st.metrics_table(header.no, &body, rows);
            Ok(())
        }
        Kind::UnifiedMemory => {
            let r = region(lines, text);
            unified_memory(st, &names, &r, header.no)
        }
        Kind::GpuTrace | Kind::ApiTrace | Kind::Summary { .. } => {
            let Some(units) = units_row(st, lines, &names, header.no)? else {
                st.empty_tables.push(header.no);
                return Ok(());
            };
            let r = region(lines, text);
            if r.lines == 0 {
                st.empty_tables.push(header.no);
                return Ok(());
            }
            match kind {
                Kind::Summary { typed } => summary(st, &names, &units, &r, typed, progress),
                _ => trace(st, &names, &units, &r, kind == Kind::GpuTrace, progress),
            }
        }
    }
}

/// Reads the units row after a header: one unit per header cell. `None` if the table ends
/// right after the header (an empty table).
fn units_row(
    st: &State<'_>,
    lines: &mut Lines<'_>,
    names: &[String],
    header_no: usize,
) -> Result<Option<Vec<Unit>>, ImportError> {
    let Some(line) = lines.peek().filter(|l| !ends_table(l.text)) else {
        return Ok(None);
    };
    let cells = split_line(line.text);
    if cells.iter().any(|c| c.bytes().any(|b| b.is_ascii_digit())) {
        let shown: String = line.text.chars().take(40).collect();
        return Err(st.corrupt(
            line.no,
            format!(
                "the units row is missing: nvprof writes one unit per column (`s,ms,,...`) on \
                 the line after the header (line {header_no}), but this line is data (`{shown}`)"
            ),
        ));
    }
    lines.next();
    let mut units = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let cell = cells.get(i).map_or("", String::as_str);
        let Some(unit) = Unit::parse(cell) else {
            return Err(st.corrupt(
                line.no,
                format!("unknown unit `{cell}` for column `{name}` in the units row"),
            ));
        };
        let needs_time = matches!(
            name.as_str(),
            "Start" | "Duration" | "Time" | "Avg" | "Min" | "Max"
        );
        if needs_time && !matches!(unit, Unit::Time(_)) {
            return Err(st.corrupt(
                line.no,
                format!(
                    "column `{name}` has unit `{cell}` in the units row; expected s, ms, us or ns"
                ),
            ));
        }
        let needs_size = Col::from_header(name).is_some_and(|c| c.quantity() == Quantity::Bytes);
        if needs_size && !matches!(unit, Unit::Bytes(_) | Unit::Plain) {
            return Err(st.corrupt(
                line.no,
                format!(
                    "column `{name}` has unit `{cell}` in the units row; expected B, KB, MB or GB"
                ),
            ));
        }
        units.push(unit);
    }
    Ok(Some(units))
}

fn reader(bytes: &[u8]) -> ::csv::Reader<&[u8]> {
    ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(1 << 16)
        .from_reader(bytes)
}

/// Where a record starts: (line number, true if it is the region's last line and the file ends
/// inside it).
fn record_place(rec: &ByteRecord, r: &Region<'_>) -> (usize, bool) {
    let (line, byte) = rec.position().map_or((1, 0), |p| {
        (
            usize::try_from(p.line()).unwrap_or(1),
            usize::try_from(p.byte()).unwrap_or(0),
        )
    });
    let no = r.first_no + line.saturating_sub(1);
    (no, r.open_end && r.start + byte >= r.last_line_start)
}

/// Checks a record's field count. Returns false if the record must be skipped.
fn check_fields(st: &mut State<'_>, rec: &ByteRecord, ncols: usize, no: usize, cut: bool) -> bool {
    let n = rec.len();
    if cut && n < ncols {
        st.problem("truncated", || {
            format!(
                "the file ends in the middle of a row: line {no} has {n} of {ncols} fields and \
                 was skipped"
            )
        });
        return false;
    }
    if cut {
        st.problem("maybe_truncated", || {
            format!(
                "the file ends without a line break after line {no}; its last row may be cut short"
            )
        });
    }
    if n > ncols {
        st.bad_row(no, &format!("{n} fields where the header has {ncols}"));
        return false;
    }
    if n < ncols {
        st.problem("short_rows", || {
            format!(
                "rows with fewer fields than the header's {ncols} were read with the missing \
                 cells empty (first at line {no})"
            )
        });
    }
    true
}

fn field(f: &[u8]) -> &str {
    std::str::from_utf8(f).unwrap_or("")
}

/// A GPU trace (`gpu`) or API trace.
fn trace(
    st: &mut State<'_>,
    names: &[String],
    col_units: &[Unit],
    r: &Region<'_>,
    gpu: bool,
    progress: &Progress,
) -> Result<(), ImportError> {
    let map = st.trace_columns(names.iter().map(String::as_str));
    let mut units: Units = [Unit::Plain; NCOL];
    for (c, u) in map.iter().zip(col_units) {
        if let Some(c) = c {
            units[*c as usize] = *u;
        }
    }
    let has_corr = map.contains(&Some(Col::Correlation));
    let ncols = names.len();
    let mut rdr = reader(r.bytes);
    let mut rec = ByteRecord::new();
    let mut n = 0u64;
    loop {
        match rdr.read_byte_record(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                let (no, _) = record_place(&rec, r);
                return Err(st.corrupt(no, format!("unreadable CSV: {e}")));
            }
        }
        n += 1;
        let (no, cut) = record_place(&rec, r);
        st.checkpoint(
            progress,
            n,
            rec.position().map_or(0, |p| p.byte()) + r.start as u64,
        )?;
        if !check_fields(st, &rec, ncols, no, cut) {
            continue;
        }
        let mut cells = [""; NCOL];
        for (f, c) in rec.iter().zip(&map) {
            if let Some(c) = c {
                cells[*c as usize] = field(f);
            }
        }
        st.trace_row(gpu, &cells, &units, has_corr, no);
    }
    Ok(())
}

/// A summary table: `"Type","Time(%)","Time","Calls","Avg","Min","Max","Name"` (or without
/// `Type`, the section then comes from the `==PID== API calls:` line).
fn summary(
    st: &mut State<'_>,
    names: &[String],
    units: &[Unit],
    r: &Region<'_>,
    typed: bool,
    progress: &Progress,
) -> Result<(), ImportError> {
    let idx = |n: &str| names.iter().position(|c| c == n);
    let (Some(pct), Some(time), Some(calls), Some(avg), Some(min), Some(max), Some(name)) = (
        idx("Time(%)"),
        idx("Time"),
        idx("Calls"),
        idx("Avg"),
        idx("Min"),
        idx("Max"),
        idx("Name"),
    ) else {
        return Err(st.corrupt(
            r.first_no.saturating_sub(2),
            "summary header lacks one of Time(%), Time, Calls, Avg, Min, Max, Name",
        ));
    };
    let ty = idx("Type");
    let ncols = names.len();
    let untyped_section = if st.section == Section::ApiCalls {
        SummarySection::ApiCalls
    } else {
        SummarySection::GpuActivities
    };
    let mut rdr = reader(r.bytes);
    let mut rec = ByteRecord::new();
    while rdr.read_byte_record(&mut rec).unwrap_or(false) {
        let (no, cut) = record_place(&rec, r);
        if progress.is_cancelled() {
            return Err(st.cancelled());
        }
        if !check_fields(st, &rec, ncols, no, cut) {
            continue;
        }
        let cell = |i: usize| rec.get(i).map_or("", field).trim();
        let section = if typed {
            let t = ty.map_or("", cell);
            match t {
                "GPU activities" => SummarySection::GpuActivities,
                "API calls" => SummarySection::ApiCalls,
                _ => {
                    st.problem("unread_summary_section", || {
                        format!("summary rows of type `{t}` are not read (first at line {no})")
                    });
                    continue;
                }
            }
        } else {
            untyped_section
        };
        let cells = SummaryCells {
            pct: cell(pct),
            times: [cell(time), cell(avg), cell(min), cell(max)],
            calls: cell(calls),
        };
        let units = [units[time], units[avg], units[min], units[max]];
        st.summary_row(section, cell(name), &cells, units, no);
    }
    Ok(())
}

/// The CSV Unified Memory table: `"Device","Count","Avg Size","Min Size","Max Size",
/// "Total Size","Total Time",""` with units inside the values and no units row.
fn unified_memory(
    st: &mut State<'_>,
    names: &[String],
    r: &Region<'_>,
    header_no: usize,
) -> Result<(), ImportError> {
    if r.lines == 0 {
        st.empty_tables.push(header_no);
        return Ok(());
    }
    let idx = |n: &str| names.iter().position(|c| c == n);
    let name_col = names
        .iter()
        .rposition(|c| c.is_empty() || c == "Name")
        .unwrap_or(names.len().saturating_sub(1));
    let cols = [
        idx("Avg Size"),
        idx("Min Size"),
        idx("Max Size"),
        idx("Total Size"),
    ];
    let (device, count, time) = (idx("Device"), idx("Count"), idx("Total Time"));
    let ncols = names.len();
    let mut rdr = reader(r.bytes);
    let mut rec = ByteRecord::new();
    while rdr.read_byte_record(&mut rec).unwrap_or(false) {
        let (no, cut) = record_place(&rec, r);
        if !check_fields(st, &rec, ncols, no, cut) {
            continue;
        }
        let cell = |i: Option<usize>| i.and_then(|i| rec.get(i)).map_or("", field).trim();
        let parsed = um_sizes(cols.map(cell)).and_then(|sizes| Ok((int_cell(cell(count))?, sizes)));
        let (count, [avg, min, max, total]) = match parsed {
            Ok(v) => v,
            Err(e) => {
                st.bad_row(no, &e);
                continue;
            }
        };
        let total_ns = st.um_time(cell(time), no);
        let mut row = UnifiedMemorySummaryRow {
            device: cell(device).to_string(),
            name: cell(Some(name_col)).to_string(),
            count,
            avg_bytes: avg,
            min_bytes: min,
            max_bytes: max,
            total_bytes: total,
            total_ns,
        };
        // nvprof's CSV puts the fault-group count of `Gpu page fault groups` under Total Size
        // (`16B`) with Count empty; the text form of the same table has it under Count.
        if row.count.is_none()
            && row.avg_bytes.is_none()
            && row.min_bytes.is_none()
            && row.max_bytes.is_none()
            && row.name.to_ascii_lowercase().contains("fault")
        {
            row.count = row.total_bytes.take();
        }
        st.um_summary_row(row);
    }
    Ok(())
}
