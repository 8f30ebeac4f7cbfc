//! nvprof CSV and plain-text output (`formats.md` section 1): GPU traces, API traces, summaries,
//! the Unified Memory table, and the framing (`==PID== ` lines, application output) around them.
//!
//! The file is streamed line by line (`lines.rs`). nvprof's own lines (`==PID== Profiling
//! result:`) set the section; a CSV header (`"Start","Duration",...`) is handed to `csv.rs`, a
//! text header (`   Start  Duration ...`) to `text.rs`; everything else is application output and
//! is ignored. Both table readers turn rows into the same cells (`cells.rs`: columns, units,
//! exact conversions), `rows.rs` turns cells into events and summary rows, and this module keeps
//! the state, follows the framing and reports warnings.

mod cells;
mod csv;
mod lines;
mod rows;
mod text;

use std::path::Path;
use std::time::Instant;

use rustc_hash::{FxHashMap, FxHashSet};

use self::cells::{Col, shown, um_device};
use self::lines::Lines;

use super::{ImportError, ImportTimings, Input, Progress};
use crate::builder::ProfileBuilder;
use crate::model::{Format, Profile, RecordedSummary, TraceId};
use crate::strings::StrId;

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
    fn bad_row(&mut self, line: usize, detail: impl FnOnce() -> String) {
        // Once the first bad row is known and the warning exists, a bad row is only counted:
        // no message is built for it.
        if self.first_problem.is_some() && self.problems.iter().any(|(c, _)| *c == "skipped_rows") {
            self.problem("skipped_rows", String::new);
            return;
        }
        let detail = detail();
        if self.first_problem.is_none() {
            self.first_problem = Some((line, detail.clone()));
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
}
