//! The plain-text tables of nvprof logs: the `--print-gpu-trace` / `--print-api-trace` tables
//! (fixed-width, right-aligned cells read by the header's column end offsets, `Name` from its
//! header's start to the end of the line), the summary in the CUDA ≥ 9 layout (`Type` column with
//! `GPU activities:` / `API calls:` labels) and the ≤ CUDA 8 layout (no `Type` column), and the
//! Unified Memory block. Every value carries its own unit (`812ns`, `8.0000KB`); `-` is missing.

use super::cells::{
    Cells, Col, NCOL, SummaryCells, Unit, Units, int_cell, shown, um_device, um_sizes,
};
use super::lines::Lines;
use super::{Section, State};
use crate::import::ImportError;
use crate::model::{SummarySection, UnifiedMemorySummaryRow};

/// What a text table header announces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum HeaderKind {
    /// `   Start  Duration ... Name` (GPU or API trace).
    Trace,
    /// `Type  Time(%)  Time  Calls  Avg  Min  Max  Name` (`typed`) or the same without `Type`.
    Summary {
        /// True for the CUDA ≥ 9 layout with a `Type` column.
        typed: bool,
    },
    /// `Count  Avg Size  Min Size  Max Size  Total Size  Total Time  Name`.
    UnifiedMemory,
}

/// The column names of a header line with their byte spans. Names are separated by two or more
/// spaces and may contain single spaces (`Grid Size`).
fn header_columns(line: &str) -> Vec<(usize, usize, &str)> {
    let b = line.as_bytes();
    let mut cols = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i] == b' ' {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        let start = i;
        let mut end = i;
        while end < b.len() && !(b[end] == b' ' && (end + 1 >= b.len() || b[end + 1] == b' ')) {
            end += 1;
        }
        cols.push((start, end, line.get(start..end).unwrap_or("")));
        i = end;
    }
    cols
}

/// Recognises a text table header.
pub(super) fn header_kind(line: &str) -> Option<HeaderKind> {
    if !line.trim_end().ends_with("Name") {
        return None;
    }
    let cols = header_columns(line);
    let names: Vec<&str> = cols.iter().map(|c| c.2).collect();
    match names.as_slice() {
        ["Start", "Duration", .., "Name"] => Some(HeaderKind::Trace),
        [
            "Type",
            "Time(%)",
            "Time",
            "Calls",
            "Avg",
            "Min",
            "Max",
            "Name",
        ] => Some(HeaderKind::Summary { typed: true }),
        ["Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"] => {
            Some(HeaderKind::Summary { typed: false })
        }
        [
            "Count",
            "Avg Size",
            "Min Size",
            "Max Size",
            "Total Size",
            "Total Time",
            "Name",
        ] => Some(HeaderKind::UnifiedMemory),
        _ => None,
    }
}

/// Reads the table whose header (line number and text) was just consumed from `lines`.
pub(super) fn table(
    st: &mut State<'_>,
    lines: &mut Lines<'_>,
    (header_no, header): (usize, String),
    kind: HeaderKind,
) -> Result<(), ImportError> {
    let rows_before = st.rows;
    let mut any_line = false;
    match kind {
        HeaderKind::Trace => trace(st, lines, &header, &mut any_line)?,
        HeaderKind::Summary { typed } => summary(st, lines, typed, &mut any_line)?,
        HeaderKind::UnifiedMemory => unified_memory(st, lines, &mut any_line)?,
    }
    if !any_line && st.rows == rows_before {
        st.empty_table(header_no);
    }
    Ok(())
}

/// Where the cell of a known column lies in a fixed-width row.
#[derive(Clone, Copy, Debug)]
struct Span {
    col: Col,
    /// Where the cell starts: the end of the previous column's header.
    from: usize,
    /// Where the cell (and its header) ends.
    end: usize,
    /// Where the header starts (the `Name` cell runs from there to the end of the line).
    start: usize,
}

/// The spans of the known columns of a trace header (unknown columns only bound their
/// neighbours).
fn spans(st: &mut State<'_>, header: &str) -> Vec<Span> {
    let cols = header_columns(header);
    let map = st.trace_columns(cols.iter().map(|c| c.2));
    let mut prev_end = 0;
    let mut spans = Vec::new();
    for (col, &(start, end, _)) in map.into_iter().zip(&cols) {
        if let Some(col) = col {
            spans.push(Span {
                col,
                from: prev_end,
                end,
                start,
            });
        }
        prev_end = end;
    }
    spans
}

/// A `--print-gpu-trace` or `--print-api-trace` table.
fn trace(
    st: &mut State<'_>,
    lines: &mut Lines<'_>,
    header: &str,
    any_line: &mut bool,
) -> Result<(), ImportError> {
    let spans = spans(st, header);
    let has = |c: Col| spans.iter().any(|s| s.col == c);
    let gpu = [
        Col::Device,
        Col::GridSize,
        Col::Stream,
        Col::Size,
        Col::Context,
    ]
    .into_iter()
    .any(has);
    let has_corr = has(Col::Correlation);
    let units: Units = [Unit::Inline; NCOL];
    while let Some(l) = lines.next_row()? {
        *any_line = true;
        let Some(cells) = row_cells(l.text, &spans) else {
            st.bad_row(l.no, || {
                "the line does not fit the table's columns".to_string()
            });
            continue;
        };
        st.trace_row(gpu, &cells, &units, has_corr, l.no);
    }
    Ok(())
}

/// Cuts a fixed-width row into cells: each cell ends where its header ends (cells are
/// right-aligned) and starts where the previous header ended; `Name` runs to the end of the line.
/// Time linear in the row: columns past its end are empty and not visited.
fn row_cells<'a>(line: &'a str, spans: &[Span]) -> Option<Cells<'a>> {
    let mut cells = [""; NCOL];
    let len = line.len();
    for s in spans {
        if s.col == Col::Name {
            cells[Col::Name as usize] = line.get(s.start.min(len)..)?.trim();
            break;
        }
        if s.from >= len {
            break;
        }
        cells[s.col as usize] = line.get(s.from..s.end.min(len))?.trim();
    }
    Some(cells)
}

/// Splits the first `N` whitespace-separated values off `s`; the rest (trimmed) is the name.
fn values<const N: usize>(s: &str) -> Option<([&str; N], &str)> {
    let mut out = [""; N];
    let mut rest = s;
    for v in &mut out {
        rest = rest.trim_start();
        let end = rest.find(' ').unwrap_or(rest.len());
        if end == 0 {
            return None;
        }
        *v = &rest[..end];
        rest = &rest[end..];
    }
    Some((out, rest.trim()))
}

/// Which summary table the rows are in, from the labels of the CUDA ≥ 9 layout.
#[derive(Clone, Copy)]
enum Label {
    Unset,
    Known(SummarySection),
    Skipped,
}

/// A `Profiling result:` summary, in either layout.
fn summary(
    st: &mut State<'_>,
    lines: &mut Lines<'_>,
    typed: bool,
    any_line: &mut bool,
) -> Result<(), ImportError> {
    let mut label = if typed {
        Label::Unset
    } else if st.section == Section::ApiCalls {
        Label::Known(SummarySection::ApiCalls)
    } else {
        Label::Known(SummarySection::GpuActivities)
    };
    while let Some(l) = lines.next_row()? {
        *any_line = true;
        let mut rest = l.text.trim_start();
        if typed && rest.starts_with(|c: char| c.is_ascii_alphabetic()) {
            let Some((name, after)) = rest.split_once(':') else {
                st.bad_row(l.no, || {
                    "a summary row must start with a value or a `Type:` label".to_string()
                });
                continue;
            };
            label = match name.trim() {
                "GPU activities" => Label::Known(SummarySection::GpuActivities),
                "API calls" => Label::Known(SummarySection::ApiCalls),
                other => {
                    let no = l.no;
                    st.problem("unread_summary_section", || {
                        let other = shown(other, 60);
                        format!("summary rows of type `{other}` are not read (first at line {no})")
                    });
                    Label::Skipped
                }
            };
            rest = after;
        }
        let section = match label {
            Label::Known(s) => s,
            Label::Skipped => continue,
            Label::Unset => {
                st.bad_row(l.no, || {
                    "a summary row comes before any `GPU activities:` / `API calls:` label"
                        .to_string()
                });
                continue;
            }
        };
        let Some(([pct, time, calls, avg, min, max], name)) = values::<6>(rest) else {
            st.bad_row(l.no, || {
                "a summary row needs Time(%), Time, Calls, Avg, Min, Max and Name".to_string()
            });
            continue;
        };
        if name.is_empty() {
            st.bad_row(l.no, || "the Name is empty".to_string());
            continue;
        }
        let cells = SummaryCells {
            pct,
            times: [time, avg, min, max],
            calls,
        };
        st.summary_row(section, name, &cells, [Unit::Inline; 4], l.no);
    }
    Ok(())
}

/// The Unified Memory block: `Device "TITAN Xp (0)"`, then the table (repeated per device).
fn unified_memory(
    st: &mut State<'_>,
    lines: &mut Lines<'_>,
    any_line: &mut bool,
) -> Result<(), ImportError> {
    while let Some(l) = lines.next_row()? {
        *any_line = true;
        let t = l.text.trim();
        if let Some(device) = um_device(t) {
            st.um_device = device.to_string();
            continue;
        }
        if header_kind(l.text) == Some(HeaderKind::UnifiedMemory) {
            continue;
        }
        let Some(([count, avg, min, max, total, time], name)) = values::<6>(t) else {
            st.bad_row(l.no, || {
                "a Unified Memory row needs six values and a name".to_string()
            });
            continue;
        };
        let parsed =
            int_cell(count).and_then(|count| Ok((count, um_sizes([avg, min, max, total])?)));
        let (count, [avg, min, max, total]) = match parsed {
            Ok(v) => v,
            Err(e) => {
                st.bad_row(l.no, || e);
                continue;
            }
        };
        let total_ns = st.um_time(time, l.no);
        let row = UnifiedMemorySummaryRow {
            device: st.um_device.clone(),
            name: name.to_string(),
            count,
            avg_bytes: avg,
            min_bytes: min,
            max_bytes: max,
            total_bytes: total,
            total_ns,
        };
        st.um_summary_row(row);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_columns_keep_single_spaces() {
        let h = "   Start  Duration            Grid Size      Block Size  Name";
        let cols = header_columns(h);
        let names: Vec<&str> = cols.iter().map(|c| c.2).collect();
        assert_eq!(
            names,
            ["Start", "Duration", "Grid Size", "Block Size", "Name"]
        );
        assert_eq!(cols[0], (3, 8, "Start"));
        assert_eq!(header_kind(h), Some(HeaderKind::Trace));
        assert_eq!(
            header_kind("Time(%)      Time  Name"),
            None,
            "the CPU-profiling tree header is not a summary"
        );
    }

    #[test]
    fn rows_are_cut_at_column_ends() {
        let h = "   Start  Duration            Grid Size           Device  Name";
        let r = "309.24ms  1.6783ms          (32768 1 1)     TITAN Xp (0)  void k(int) [128]";
        let mut st = State::new(std::path::Path::new("t"));
        let spans = spans(&mut st, h);
        let cells = row_cells(r, &spans).unwrap_or([""; NCOL]);
        assert_eq!(cells[Col::Start as usize], "309.24ms");
        assert_eq!(cells[Col::GridSize as usize], "(32768 1 1)");
        assert_eq!(cells[Col::Device as usize], "TITAN Xp (0)");
        assert_eq!(cells[Col::Name as usize], "void k(int) [128]");
    }

    #[test]
    fn values_then_name() {
        let (v, name) = values::<2>("  1.5%  3ms   a b  c ").unwrap_or((["", ""], ""));
        assert_eq!(v, ["1.5%", "3ms"]);
        assert_eq!(name, "a b  c");
        assert!(values::<3>("1 2").is_none());
    }
}
