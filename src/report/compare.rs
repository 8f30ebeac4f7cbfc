//! Text, CSV and JSON renderings of `warpscope compare`.

use std::fmt::Write as _;

use anyhow::Result;
use warpscope_core::analysis::compare::{Aligned, Presence, RunSummary};
use warpscope_core::time::format_duration_ns;

use super::{csv_field, distinct_short_names, format_bytes};
use crate::compare::CompareOutput;
use crate::output::OutputFormat;

/// Width the table output is laid out for.
const WIDTH: usize = 120;

/// Widest label shown in the run tables.
const LABEL_MAX: usize = 24;

/// Renders `warpscope compare`.
///
/// # Errors
///
/// Only if the comparison cannot be serialised to JSON.
pub fn compare(o: &CompareOutput, format: OutputFormat) -> Result<String> {
    Ok(match format {
        OutputFormat::Json => serde_json::to_string_pretty(&o.comparison)? + "\n",
        OutputFormat::Csv => compare_csv(o),
        OutputFormat::Table => compare_table(o),
    })
}

fn ratio_text(r: Option<f64>) -> String {
    r.map_or_else(|| "-".to_string(), |r| format!("{r:.2}x"))
}

fn mark(p: Presence) -> &'static str {
    match p {
        Presence::New => "new",
        Presence::Vanished => "gone",
        Presence::Both | Presence::Neither => "",
    }
}

fn nanos_f(v: f64) -> String {
    #[allow(clippy::cast_possible_truncation)]
    format_duration_ns(v.round() as i64)
}

/// Rows limited by `--top`: "top 20 of 58" or "58".
fn shown(kept: usize, all: usize) -> String {
    if kept < all {
        format!("top {kept} of {all}")
    } else {
        format!("{all}")
    }
}

/// One table with a block of lines per row: one line per run (run number, the run's cells,
/// ratio to the baseline, new/gone), the row's name on the first line.
struct Stacked<'a> {
    /// Header and width of each cell column.
    columns: &'a [(&'a str, usize)],
    /// Name of the last column (`Name`, `Kind`).
    name_header: &'a str,
}

impl Stacked<'_> {
    /// Room left for the name in a line of [`WIDTH`] characters.
    fn name_width(&self) -> usize {
        // Run, cells, Ratio and Mark, with two spaces before each and before the name.
        let prefix = 5 + self.columns.iter().map(|(_, w)| w + 2).sum::<usize>() + 10 + 6 + 2;
        WIDTH.saturating_sub(prefix).max(20)
    }

    /// The names of `rows` as shown.
    fn names<'r>(&self, rows: impl Iterator<Item = &'r str>) -> Vec<String> {
        let names: Vec<&str> = rows.collect();
        distinct_short_names(&names, self.name_width())
    }

    fn header(&self, out: &mut String) {
        let mut line = format!("{:>5}", "Run");
        for (h, w) in self.columns {
            let _ = write!(line, "  {h:>w$}");
        }
        let _ = writeln!(
            line,
            "  {:>8}  {:<4}  {}",
            "Ratio", "Mark", self.name_header
        );
        out.push_str(&line);
    }

    fn rows<T>(
        &self,
        out: &mut String,
        row: &Aligned<T>,
        name: &str,
        cells: impl Fn(&T) -> Vec<String>,
    ) {
        for (run, stats) in row.per_run.iter().enumerate() {
            let mut line = format!("{:>5}", format!("#{}", run + 1));
            let values = stats
                .as_ref()
                .map_or_else(|| vec!["-".to_string(); self.columns.len()], &cells);
            for ((_, w), v) in self.columns.iter().zip(values) {
                let _ = write!(line, "  {v:>w$}");
            }
            let _ = write!(
                line,
                "  {:>8}  {:<4}",
                ratio_text(row.ratio_vs_baseline[run]),
                mark(row.presence[run])
            );
            if run == 0 {
                let _ = write!(line, "  {name}");
            }
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
}

/// A label cut in the middle to `max_chars` (`cfd_titanx...gpu-summary`): file stems differ
/// at either end.
fn short_label(label: &str, max_chars: usize) -> String {
    let n = label.chars().count();
    if n <= max_chars {
        return label.to_string();
    }
    let room = max_chars.saturating_sub(3);
    let head: String = label.chars().take(room - room / 2).collect();
    let tail: String = label.chars().skip(n - room / 2).collect();
    format!("{head}...{tail}")
}

fn label_width(runs: &[RunSummary]) -> usize {
    runs.iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(5, LABEL_MAX)
}

/// Per run: why the GPUs were not busy (`docs/analysis.md`).
fn write_why(out: &mut String, o: &CompareOutput, lw: usize) {
    let runs = &o.comparison.runs;
    if runs.iter().all(|r| r.why.is_none()) {
        return;
    }
    let _ = writeln!(out, "\nWhy (per run, all GPUs; rules in docs/analysis.md):");
    let _ = writeln!(
        out,
        "{:>5}  {:<lw$}  {:>6}  {:>9}  {:>11}  {:>10}  {:>12}  {:>12}  Top finding",
        "Run",
        "Label",
        "Busy",
        "Host wait",
        "Kernel wait",
        "Other idle",
        "Tensor Cores",
        "Launch-bound"
    );
    for (i, r) in runs.iter().enumerate() {
        let Some(w) = &r.why else {
            continue;
        };
        let share = |ns: i64| format!("{:.1}%", warpscope_core::analysis::pct(ns, w.window_ns));
        let _ = writeln!(
            out,
            "{:>5}  {:<lw$}  {:>6}  {:>9}  {:>11}  {:>10}  {:>12}  {:>12}  {}",
            format!("#{}", i + 1),
            short_label(&r.label, lw),
            format!("{:.1}%", w.busy_pct),
            share(w.host_wait_ns),
            share(w.kernel_wait_ns),
            share(w.other_idle_ns),
            format!("{:.1}%", w.tensor_core_pct),
            format!("{:.1}%", w.launch_bound_pct),
            w.top_finding.unwrap_or("-")
        );
    }
    let _ = writeln!(
        out,
        "Busy and idle as a share of the GPU window; Tensor Cores and Launch-bound as a share of kernel time."
    );
}

fn compare_table(o: &CompareOutput) -> String {
    let c = &o.comparison;
    let base = c.baseline;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "==warpscope== Comparing {} runs; baseline #{} ({}){}",
        c.runs.len(),
        base + 1,
        c.runs[base].label,
        c.sweep
            .as_ref()
            .map(|s| format!("; sweep: {s}"))
            .unwrap_or_default()
    );
    for w in &o.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let lw = label_width(&c.runs);
    let _ = writeln!(out, "Runs:");
    let rw = c
        .runs
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0);
    for (i, (run, spec)) in c.runs.iter().zip(&o.runs).enumerate() {
        let files = if spec.files.len() > 1 {
            format!(
                "{} ranks merged{}:",
                spec.files.len(),
                if spec.auto_merged {
                    " (same name but for the rank; --no-merge keeps them apart)"
                } else {
                    ""
                }
            )
        } else {
            run.path.clone()
        };
        let _ = writeln!(
            out,
            "{:>5}  {:<rw$}  {files}",
            format!("#{}", i + 1),
            run.label
        );
        if spec.files.len() > 1 {
            for f in &spec.files {
                let _ = writeln!(out, "{:>5}  {:<rw$}    {}", "", "", f.display());
            }
        }
    }

    // Totals.
    let nccl = c.runs.iter().any(|r| r.nccl_total_ns > 0);
    let vs = format!("vs #{}", base + 1);
    let _ = writeln!(out, "\nTotals:");
    let mut header = format!(
        "{:>5}  {:<lw$}  {:>9}  {:>7}  {:>8}  {:>9}  {:>4}  {:>5}  {:>9}  {:>10}",
        "Run",
        "Label",
        "GPU time",
        vs,
        "GPU busy",
        "Span",
        "GPUs",
        "Steps",
        "Per step",
        "Per sample"
    );
    if nccl {
        let _ = write!(header, "  {:>9}", "NCCL");
    }
    let _ = writeln!(out, "{header}");
    for (i, r) in c.runs.iter().enumerate() {
        let dash = || "-".to_string();
        // An nvprof summary has totals but no events: no span, no busy time.
        let events = r.span_ns > 0;
        let mut line = format!(
            "{:>5}  {:<lw$}  {:>9}  {:>7}  {:>8}  {:>9}  {:>4}  {:>5}  {:>9}  {:>10}",
            format!("#{}", i + 1),
            short_label(&r.label, lw),
            format_duration_ns(r.gpu_total_ns),
            ratio_text(r.gpu_total_ratio_vs_baseline),
            if events {
                format!("{:.2}%", r.gpu_busy_pct)
            } else {
                dash()
            },
            if events {
                format_duration_ns(r.span_ns)
            } else {
                dash()
            },
            if events {
                r.devices.to_string()
            } else {
                dash()
            },
            r.steps.as_ref().map_or_else(dash, |s| s.count.to_string()),
            r.time_per_step_ns.map_or_else(dash, format_duration_ns),
            r.time_per_sample_ns.map_or_else(dash, nanos_f),
        );
        if nccl {
            let _ = write!(line, "  {:>9}", format_duration_ns(r.nccl_total_ns));
        }
        let _ = writeln!(out, "{line}");
    }
    let _ = writeln!(
        out,
        "GPU time: kernels, copies and sets summed; GPU busy: share of the span during which the GPUs \
         worked;\nPer step: mean wall time of a training step; Per sample: per step / batch."
    );

    write_why(&mut out, o, lw);
    write_memory(&mut out, o, lw);

    // Kernels.
    let _ = writeln!(
        out,
        "\nKernels ({} by the longest total in any run; Ratio = total / total in #{}):",
        shown(c.kernels.len(), o.counts.kernels),
        base + 1
    );
    if c.kernels.is_empty() {
        let _ = writeln!(out, "  (none)");
    } else {
        let table = Stacked {
            columns: &[("Calls", 7), ("Total", 9), ("Avg", 9)],
            name_header: "Name",
        };
        table.header(&mut out);
        let full: Vec<String> = c
            .kernels
            .iter()
            .map(|k| {
                if k.nccl {
                    format!("[NCCL] {}", k.row.name)
                } else {
                    k.row.name.clone()
                }
            })
            .collect();
        let names = table.names(full.iter().map(String::as_str));
        for (k, name) in c.kernels.iter().zip(&names) {
            table.rows(&mut out, &k.row, name, |s| {
                vec![
                    s.calls.to_string(),
                    format_duration_ns(s.total_ns),
                    format_duration_ns(s.avg_ns),
                ]
            });
        }
    }

    // Copies.
    if !c.copies.is_empty() {
        let _ = writeln!(
            out,
            "\nCopies and sets by kind ({}; Ratio = time / time in #{}):",
            shown(c.copies.len(), o.counts.copies),
            base + 1
        );
        let table = Stacked {
            columns: &[("Count", 7), ("Bytes", 10), ("Time", 9), ("Throughput", 10)],
            name_header: "Kind",
        };
        table.header(&mut out);
        let names = table.names(c.copies.iter().map(|r| r.name.as_str()));
        for (row, name) in c.copies.iter().zip(&names) {
            table.rows(&mut out, row, name, |s| {
                let known = s.bytes > 0;
                vec![
                    s.calls.to_string(),
                    if known {
                        format_bytes(s.bytes)
                    } else {
                        "-".to_string()
                    },
                    format_duration_ns(s.total_ns),
                    if known {
                        format!("{:.2}GB/s", s.gbps)
                    } else {
                        "-".to_string()
                    },
                ]
            });
        }
    }

    // Kernels by the operator that launched them: where kernel names differ (two vendors),
    // the operator still matches.
    if !c.kernels_by_operator.is_empty() {
        let _ = writeln!(
            out,
            "\nKernels by launching operator ({}; Ratio = kernel time / kernel time in #{}):",
            shown(c.kernels_by_operator.len(), o.counts.kernels_by_operator),
            base + 1
        );
        let table = Stacked {
            columns: &[("Kernels", 7), ("Time", 9)],
            name_header: "Operator",
        };
        table.header(&mut out);
        let names = table.names(c.kernels_by_operator.iter().map(|r| r.name.as_str()));
        for (row, name) in c.kernels_by_operator.iter().zip(&names) {
            table.rows(&mut out, row, name, |s| {
                vec![s.kernels.to_string(), format_duration_ns(s.total_ns)]
            });
        }
    }

    // CPU operators.
    if !c.ops.is_empty() {
        let _ = writeln!(
            out,
            "\nCPU operators ({} by the longest CPU total in any run; Ratio = CPU total / CPU total in #{}):",
            shown(c.ops.len(), o.counts.ops),
            base + 1
        );
        let table = Stacked {
            columns: &[
                ("Calls", 7),
                ("CPU total", 9),
                ("Self CPU", 9),
                ("GPU total", 9),
            ],
            name_header: "Name",
        };
        table.header(&mut out);
        let names = table.names(c.ops.iter().map(|r| r.name.as_str()));
        for (row, name) in c.ops.iter().zip(&names) {
            table.rows(&mut out, row, name, |s| {
                vec![
                    s.calls.to_string(),
                    format_duration_ns(s.total_ns),
                    format_duration_ns(s.self_ns),
                    format_duration_ns(s.gpu_ns),
                ]
            });
        }
    }
    out
}

/// Columns of the CSV output (one layout for every row; a row fills the columns of its table).
const CSV_HEADER: &str = "Table,Run,Label,Name,Presence,NCCL,Calls,Total_ns,Avg_ns,Min_ns,Max_ns,\
Share_pct,Ratio_vs_baseline,Diff_vs_baseline_ns,Bytes,GBps,Self_ns,GPU_ns,Baseline,Devices,\
Kernel_ns,NCCL_ns,GPU_busy_ns,GPU_busy_pct,Span_ns,Steps,Step_ns,GPU_step_ns,Sample_ns\n";

/// Presence as its JSON name.
fn presence_text(p: Presence) -> &'static str {
    match p {
        Presence::Both => "both",
        Presence::New => "new",
        Presence::Vanished => "vanished",
        Presence::Neither => "neither",
    }
}

fn opt_i(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn opt_f(v: Option<f64>) -> String {
    v.map(|v| format!("{v:.6}")).unwrap_or_default()
}

/// Long layout: one row per (table, row, run); `Table` is `run`, `kernel`, `copy` or `op`;
/// `Run` counts from 1 like `--baseline`.
fn compare_csv(o: &CompareOutput) -> String {
    let c = &o.comparison;
    let mut out = String::from(CSV_HEADER);
    for (i, r) in c.runs.iter().enumerate() {
        let _ = writeln!(
            out,
            "run,{},{},{},,,,{},,,,,{},,,,,,{},{},{},{},{},{:.6},{},{},{},{},{}",
            i + 1,
            csv_field(&r.label),
            csv_field(&r.path),
            r.gpu_total_ns,
            opt_f(r.gpu_total_ratio_vs_baseline),
            r.is_baseline,
            r.devices,
            r.kernel_total_ns,
            r.nccl_total_ns,
            r.gpu_busy_ns,
            r.gpu_busy_pct,
            r.span_ns,
            r.steps
                .as_ref()
                .map(|s| s.count.to_string())
                .unwrap_or_default(),
            opt_i(r.time_per_step_ns),
            opt_i(r.gpu_time_per_step_ns),
            opt_f(r.time_per_sample_ns),
        );
    }
    let label = |run: usize| csv_field(&c.runs[run].label);
    // Name, presence, ratio and diff of a row in one run: the columns every table shares.
    let common = |row_name: &str, run: usize, presence: Presence| {
        format!(
            "{},{},{},{}",
            run + 1,
            label(run),
            csv_field(row_name),
            presence_text(presence)
        )
    };
    for k in &c.kernels {
        let r = &k.row;
        for run in 0..r.per_run.len() {
            let stats = r.per_run[run].as_ref().map_or_else(
                || ",,,,,".to_string(),
                |s| {
                    format!(
                        "{},{},{},{},{},{:.6}",
                        s.calls, s.total_ns, s.avg_ns, s.min_ns, s.max_ns, s.share_pct
                    )
                },
            );
            let _ = writeln!(
                out,
                "kernel,{},{},{stats},{},{},,,,,,,,,,,,,,,",
                common(&r.name, run, r.presence[run]),
                k.nccl,
                opt_f(r.ratio_vs_baseline[run]),
                r.diff_vs_baseline_ns[run],
            );
        }
    }
    for r in &c.copies {
        for run in 0..r.per_run.len() {
            let (calls_total, share, bytes) = r.per_run[run].as_ref().map_or_else(
                || (",".to_string(), String::new(), ",".to_string()),
                |s| {
                    (
                        format!("{},{}", s.calls, s.total_ns),
                        format!("{:.6}", s.share_pct),
                        format!("{},{:.6}", s.bytes, s.gbps),
                    )
                },
            );
            let _ = writeln!(
                out,
                "copy,{},false,{calls_total},,,,{share},{},{},{bytes},,,,,,,,,,,,,",
                common(&r.name, run, r.presence[run]),
                opt_f(r.ratio_vs_baseline[run]),
                r.diff_vs_baseline_ns[run],
            );
        }
    }
    for r in &c.ops {
        for run in 0..r.per_run.len() {
            let (calls_total_avg, self_gpu) = r.per_run[run].as_ref().map_or_else(
                || (",,".to_string(), ",".to_string()),
                |s| {
                    (
                        format!("{},{},{}", s.calls, s.total_ns, s.avg_ns),
                        format!("{},{}", s.self_ns, s.gpu_ns),
                    )
                },
            );
            let _ = writeln!(
                out,
                "op,{},false,{calls_total_avg},,,,{},{},,,{self_gpu},,,,,,,,,,,",
                common(&r.name, run, r.presence[run]),
                opt_f(r.ratio_vs_baseline[run]),
                r.diff_vs_baseline_ns[run],
            );
        }
    }
    out
}

/// The memory peaks of the runs that record memory, against the baseline's.
fn write_memory(out: &mut String, o: &CompareOutput, lw: usize) {
    use warpscope_core::units::format_bytes;
    let c = &o.comparison;
    if c.runs.iter().all(|r| r.peak_allocated_bytes.is_none()) {
        return;
    }
    let base = c.runs.iter().find(|r| r.is_baseline);
    let _ = writeln!(
        out,
        "\nMemory (largest peak of any GPU in the recorded window; docs/memory.md):"
    );
    let _ = writeln!(
        out,
        "{:>5}  {:<lw$}  {:>12}  {:>7}  {:>12}  {:>7}",
        "Run", "Label", "Allocated", "Ratio", "Reserved", "Ratio"
    );
    let ratio = |v: Option<i64>, b: Option<i64>| match (v, b) {
        #[allow(clippy::cast_precision_loss)]
        (Some(v), Some(b)) if b > 0 => ratio_text(Some(v as f64 / b as f64)),
        _ => "-".to_string(),
    };
    for (i, r) in c.runs.iter().enumerate() {
        let text = |v: Option<i64>| v.map_or_else(|| "-".to_string(), format_bytes);
        let _ = writeln!(
            out,
            "{:>5}  {:<lw$}  {:>12}  {:>7}  {:>12}  {:>7}",
            format!("#{}", i + 1),
            short_label(&r.label, lw),
            text(r.peak_allocated_bytes),
            ratio(
                r.peak_allocated_bytes,
                base.and_then(|b| b.peak_allocated_bytes)
            ),
            text(r.peak_reserved_bytes),
            ratio(
                r.peak_reserved_bytes,
                base.and_then(|b| b.peak_reserved_bytes)
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_cut_in_the_middle() {
        assert_eq!(short_label("batch=8", 24), "batch=8");
        assert_eq!(
            short_label("cfd_titanxp_print-gpu-summary", 24),
            "cfd_titanxp...pu-summary"
        );
        assert_eq!(
            short_label("cfd_titanxp_print-gpu-summary", 24)
                .chars()
                .count(),
            24
        );
    }
}
