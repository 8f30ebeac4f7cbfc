//! The CSV tables of `nvprof --csv`: GPU and API traces and summaries (header, then a units row
//! with one unit per column), the Unified Memory table (no units row, units inside the values)
//! and metric/event tables (kept as text). Lines are split by one [`Splitter`] per file whose
//! buffers serve every line; kernel names hold commas inside quotes.

use super::cells::{Col, NCOL, Quantity, SummaryCells, Unit, Units, int_cell, shown, um_sizes};
use super::lines::{Line, Lines};
use super::{Section, State, ends_table};
use crate::import::ImportError;
use crate::model::{SummarySection, UnifiedMemorySummaryRow};

/// Splits CSV lines (RFC 4180: `,` between fields, `"` around fields that hold commas, `""`
/// for a quote inside them) into cells, in time linear in the line. One serves a whole file:
/// its buffers are reused for every line.
#[derive(Debug, Default)]
pub(super) struct Splitter {
    /// The cells of the last line, unquoted, one after the other.
    buf: String,
    /// End of each cell in `buf`.
    ends: Vec<usize>,
}

impl Splitter {
    /// Splits `line` into cells. A quote left open runs to the end of the line; text after a
    /// closing quote is kept as written.
    pub(super) fn split(&mut self, line: &str) {
        self.buf.clear();
        self.ends.clear();
        let b = line.as_bytes();
        let len = b.len();
        let mut i = 0;
        loop {
            if b.get(i) == Some(&b'"') {
                i += 1;
                loop {
                    match memchr::memchr(b'"', &b[i..]) {
                        None => {
                            self.buf.push_str(&line[i..]);
                            i = len;
                            break;
                        }
                        Some(k) => {
                            self.buf.push_str(&line[i..i + k]);
                            i += k + 1;
                            if b.get(i) == Some(&b'"') {
                                self.buf.push('"');
                                i += 1;
                            } else {
                                break;
                            }
                        }
                    }
                }
            }
            let end = memchr::memchr(b',', &b[i..]).map_or(len, |k| i + k);
            self.buf.push_str(&line[i..end]);
            self.ends.push(self.buf.len());
            if end >= len {
                break;
            }
            i = end + 1;
        }
    }

    /// Number of cells.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Cell `i`, as written (not trimmed).
    pub(super) fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)?;
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        self.buf.get(start..end)
    }

    /// The cells in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.ends.len()).map(|i| self.get(i).unwrap_or(""))
    }

    /// The cells, trimmed, as owned strings (for headers, which outlive the next line).
    fn owned(&self) -> Vec<String> {
        self.iter().map(|c| c.trim().to_string()).collect()
    }
}

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

/// Reads the table whose header (line number and text) was just consumed from `lines`.
pub(super) fn table(
    st: &mut State<'_>,
    lines: &mut Lines<'_>,
    sp: &mut Splitter,
    (header_no, header): (usize, String),
) -> Result<(), ImportError> {
    sp.split(&header);
    let names = sp.owned();
    let kind = if st.section == Section::Metrics {
        Kind::Metrics
    } else {
        classify(&names)
    };
    match kind {
        Kind::Unknown => {
            let shown = shown(&header, 60);
            st.problem("unknown_table", || {
                format!(
                    "a CSV table warpscope does not know was skipped (header on line \
                     {header_no}: `{shown}`)"
                )
            });
            lines.skip_table()
        }
        Kind::Metrics => {
            st.begin_metrics_table(header_no, &header);
            while let Some(l) = lines.next_row()? {
                st.metrics_line(l.text, l.no);
            }
            st.flush_metrics();
            Ok(())
        }
        Kind::UnifiedMemory => unified_memory(st, lines, sp, &names, header_no),
        Kind::GpuTrace | Kind::ApiTrace | Kind::Summary { .. } => {
            let Some(units) = units_row(st, lines, sp, &names, header_no)? else {
                st.empty_table(header_no);
                return Ok(());
            };
            if lines.peek()?.is_none_or(|l| ends_table(l.text)) {
                st.empty_table(header_no);
                return Ok(());
            }
            match kind {
                Kind::Summary { typed } => summary(st, lines, sp, &names, &units, typed, header_no),
                _ => trace(st, lines, sp, &names, &units, kind == Kind::GpuTrace),
            }
        }
    }
}

/// Reads the units row after a header: one unit per header cell. `None` if the table ends
/// right after the header (an empty table).
fn units_row(
    st: &State<'_>,
    lines: &mut Lines<'_>,
    sp: &mut Splitter,
    names: &[String],
    header_no: usize,
) -> Result<Option<Vec<Unit>>, ImportError> {
    let Some(line) = lines.peek()?.filter(|l| !ends_table(l.text)) else {
        return Ok(None);
    };
    let no = line.no;
    if line.text.bytes().any(|b| b.is_ascii_digit()) {
        let shown = shown(line.text, 40);
        return Err(st.corrupt(
            no,
            format!(
                "the units row is missing: nvprof writes one unit per column (`s,ms,,...`) on \
                 the line after the header (line {header_no}), but this line is data (`{shown}`)"
            ),
        ));
    }
    sp.split(line.text);
    let mut units = Vec::with_capacity(names.len());
    for (i, name) in names.iter().enumerate() {
        let cell = sp.get(i).unwrap_or("").trim();
        let Some(unit) = Unit::parse(cell) else {
            return Err(st.corrupt(
                no,
                format!(
                    "unknown unit `{}` for column `{}` in the units row",
                    shown(cell, 40),
                    shown(name, 80)
                ),
            ));
        };
        let needs_time = matches!(
            name.as_str(),
            "Start" | "Duration" | "Time" | "Avg" | "Min" | "Max"
        );
        if needs_time && !matches!(unit, Unit::Time(_)) {
            return Err(st.corrupt(
                no,
                format!(
                    "column `{name}` has unit `{cell}` in the units row; expected s, ms, us or ns"
                ),
            ));
        }
        let needs_size = Col::from_header(name).is_some_and(|c| c.quantity() == Quantity::Bytes);
        if needs_size && !matches!(unit, Unit::Bytes(_) | Unit::Plain) {
            return Err(st.corrupt(
                no,
                format!(
                    "column `{name}` has unit `{cell}` in the units row; expected B, KB, MB or GB"
                ),
            ));
        }
        units.push(unit);
    }
    lines.next()?;
    Ok(Some(units))
}

/// Checks the field count of the row on line `no` (`cut`: the file ends inside it). Returns
/// false if the row must be skipped.
fn check_fields(st: &mut State<'_>, n: usize, ncols: usize, no: usize, cut: bool) -> bool {
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
        st.bad_row(no, || format!("{n} fields where the header has {ncols}"));
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

/// Splits the next row of the table, checking its field count: `None` at the end of the
/// table, `Some(None)` for a row to skip, else the row's line number.
fn next_record(
    st: &mut State<'_>,
    lines: &mut Lines<'_>,
    sp: &mut Splitter,
    ncols: usize,
) -> Result<Option<Option<usize>>, ImportError> {
    let Some(Line { no, text, open_end }) = lines.next_row()? else {
        return Ok(None);
    };
    // A line without quotes and with more commas than the header has separators is a row of
    // too many fields: rejected without splitting it, so that a gigabyte of commas (a small
    // gzip) costs a scan, not a billion empty cells.
    let bytes = text.as_bytes();
    if !open_end
        && memchr::memchr(b'"', bytes).is_none()
        && memchr::memchr_iter(b',', bytes)
            .nth(ncols.saturating_sub(1))
            .is_some()
    {
        st.bad_row(no, || {
            format!("more than {ncols} fields where the header has {ncols}")
        });
        return Ok(Some(None));
    }
    sp.split(text);
    Ok(Some(
        check_fields(st, sp.len(), ncols, no, open_end).then_some(no),
    ))
}

/// A GPU trace (`gpu`) or API trace.
fn trace(
    st: &mut State<'_>,
    lines: &mut Lines<'_>,
    sp: &mut Splitter,
    names: &[String],
    col_units: &[Unit],
    gpu: bool,
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
    while let Some(row) = next_record(st, lines, sp, ncols)? {
        let Some(no) = row else {
            continue;
        };
        let mut cells = [""; NCOL];
        for (f, c) in sp.iter().zip(&map) {
            if let Some(c) = c {
                cells[*c as usize] = f;
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
    lines: &mut Lines<'_>,
    sp: &mut Splitter,
    names: &[String],
    units: &[Unit],
    typed: bool,
    header_no: usize,
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
            header_no,
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
    let units = [units[time], units[avg], units[min], units[max]];
    while let Some(row) = next_record(st, lines, sp, ncols)? {
        let Some(no) = row else {
            continue;
        };
        let cell = |i: usize| sp.get(i).unwrap_or("").trim();
        let section = if typed {
            let t = ty.map_or("", cell);
            match t {
                "GPU activities" => SummarySection::GpuActivities,
                "API calls" => SummarySection::ApiCalls,
                _ => {
                    st.problem("unread_summary_section", || {
                        let t = shown(t, 60);
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
        st.summary_row(section, cell(name), &cells, units, no);
    }
    Ok(())
}

/// The CSV Unified Memory table: `"Device","Count","Avg Size","Min Size","Max Size",
/// "Total Size","Total Time",""` with units inside the values and no units row.
fn unified_memory(
    st: &mut State<'_>,
    lines: &mut Lines<'_>,
    sp: &mut Splitter,
    names: &[String],
    header_no: usize,
) -> Result<(), ImportError> {
    if lines.peek()?.is_none_or(|l| ends_table(l.text)) {
        st.empty_table(header_no);
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
    while let Some(row) = next_record(st, lines, sp, ncols)? {
        let Some(no) = row else {
            continue;
        };
        let cell = |i: Option<usize>| i.and_then(|i| sp.get(i)).unwrap_or("").trim();
        let parsed = um_sizes(cols.map(cell)).and_then(|sizes| Ok((int_cell(cell(count))?, sizes)));
        let (count, [avg, min, max, total]) = match parsed {
            Ok(v) => v,
            Err(e) => {
                st.bad_row(no, || e);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cells(line: &str) -> Vec<String> {
        let mut sp = Splitter::default();
        sp.split(line);
        sp.iter().map(str::to_string).collect()
    }

    #[test]
    fn splitter_handles_quotes() {
        assert_eq!(cells(r#""a","b, c",,d"#), ["a", "b, c", "", "d"]);
        assert_eq!(cells(r#""say ""hi""",x"#), [r#"say "hi""#, "x"]);
        assert_eq!(cells(r#""open, to the end"#), ["open, to the end"]);
        assert_eq!(cells(r#""q"after,z"#), ["qafter", "z"]);
        assert_eq!(cells(r#"mid"quote,z"#), [r#"mid"quote"#, "z"]);
        assert_eq!(cells(""), [""]);
        assert_eq!(cells("a,"), ["a", ""]);
    }
}
