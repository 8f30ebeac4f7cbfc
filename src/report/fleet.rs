//! `warpscope fleet`: the cross-rank analysis of a job, as a readable report, the per-rank
//! table as CSV, or the whole report as a stable JSON contract (times in integer ns).

use std::fmt::Write as _;

use anyhow::Result;
use warpscope_core::analysis::fleet::FleetReport;
use warpscope_core::names::cut_text;
use warpscope_core::time::format_duration_ns as dur;

use super::csv_field;
use crate::output::OutputFormat;

/// Renders `warpscope fleet`; `top` cuts the straggler and collective tables of the text
/// report (JSON and CSV keep every row).
pub fn fleet(r: &FleetReport, top: usize, format: OutputFormat) -> Result<String> {
    Ok(match format {
        OutputFormat::Json => serde_json::to_string_pretty(r)? + "\n",
        OutputFormat::Csv => fleet_csv(r),
        OutputFormat::Table => fleet_table(r, top),
    })
}

fn fleet_csv(r: &FleetReport) -> String {
    let mut out = String::from(
        "rank,file,steps,step_ns,compute_ns,comm_ns,memory_ns,idle_ns,kernel_ns,window_ns,score\n",
    );
    for row in &r.ranks {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{}",
            row.rank,
            csv_field(&row.file),
            row.steps,
            row.step_ns,
            row.compute_ns,
            row.comm_ns,
            row.memory_ns,
            row.idle_ns,
            row.kernel_ns,
            row.window_ns,
            r.score_of(row.rank),
        );
    }
    out
}

fn fleet_table(r: &FleetReport, top: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "==warpscope== Job of {}{}",
        warpscope_ui::fleet::ranks_text(r.ranks.len()),
        if r.aligned {
            ", on one clock (Unix-epoch origins)"
        } else {
            ", NOT on one clock (a trace has no Unix-epoch origin): arrival times are not comparable"
        }
    );
    for w in &r.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let _ = writeln!(out, "\nPer rank (whole run; step = mean ProfilerStep):");
    let _ = writeln!(
        out,
        "{:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}  File",
        "Rank", "Steps", "Step", "Compute", "Comm", "Idle", "Kernel", "Score"
    );
    for row in &r.ranks {
        let _ = writeln!(
            out,
            "{:>6} {:>6} {:>11} {:>11} {:>11} {:>11} {:>11} {:>11}  {}",
            row.rank,
            row.steps,
            dur(row.step_ns),
            dur(row.compute_ns),
            dur(row.comm_ns),
            dur(row.idle_ns),
            dur(row.kernel_ns),
            dur(r.score_of(row.rank)),
            row.file
        );
    }
    if !r.no_gpu_ranks.is_empty() {
        let list: Vec<String> = r.no_gpu_ranks.iter().map(i64::to_string).collect();
        let _ = writeln!(
            out,
            "\nNo GPU activity in the trace of rank {} (left out of the median compute)",
            list.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nStragglers, highest score first (score = lateness past the median arrival + compute \
         above the median rank; docs/fleet.md):"
    );
    if r.stragglers.is_empty() {
        let _ = writeln!(
            out,
            "  none: no rank arrived late or computed longer than the median"
        );
    }
    for (i, s) in r.stragglers.iter().take(top).enumerate() {
        let _ = writeln!(
            out,
            "  {}. rank {}: score {}: {}",
            i + 1,
            s.rank,
            dur(s.score),
            s.reason
        );
    }
    if r.stragglers.len() > top {
        let _ = writeln!(out, "  ... {} more", r.stragglers.len() - top);
    }
    let _ = writeln!(
        out,
        "\nCollectives matched across ranks: {} (by process group, step and order); the longest \
         waits:",
        r.collectives.len()
    );
    if !r.collectives.is_empty() {
        let _ = writeln!(
            out,
            "{:>8} {:>6} {:>4} {:<14} {:>6} {:>12} {:>6} {:>11} {:>11}",
            "Group", "Step", "#", "Collective", "Ranks", "Start", "Last", "Skew", "Waited"
        );
    }
    let mut by_wait: Vec<_> = r.collectives.iter().collect();
    by_wait.sort_by(|a, b| {
        b.wait_ns
            .cmp(&a.wait_ns)
            .then(a.first_start_ns.cmp(&b.first_start_ns))
    });
    for c in by_wait.iter().take(top) {
        let _ = writeln!(
            out,
            "{:>8} {:>6} {:>4} {:<14} {:>6} {:>12} {:>6} {:>11} {:>11}",
            if c.group.is_empty() {
                "-".to_string()
            } else {
                cell(&c.group, GROUP_CHARS)
            },
            c.step.map_or_else(|| "-".to_string(), |s| s.to_string()),
            c.index,
            cell(&c.name, COLLECTIVE_CHARS),
            c.ranks,
            dur(c.first_start_ns),
            c.last_rank,
            dur(c.skew_ns),
            dur(c.wait_ns)
        );
    }
    if r.collectives.len() > top {
        let _ = writeln!(out, "  ... {} more", r.collectives.len() - top);
    }
    out
}

/// Longest process-group name shown in the text report (the JSON keeps it whole).
const GROUP_CHARS: usize = 24;
/// Longest collective name shown in the text report.
const COLLECTIVE_CHARS: usize = 40;

/// Text from a trace made safe for one table cell: control and bidirectional-override
/// characters written as escapes (a newline in a process-group name would break the row), then
/// cut to `max_chars` with `...`.
fn cell(text: &str, max_chars: usize) -> String {
    let mut safe = String::new();
    for c in text.chars() {
        if c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        {
            safe.extend(c.escape_default());
        } else {
            safe.push(c);
        }
        // Enough to cut from; a 1 MB name is not copied whole.
        if safe.len() > 4 * max_chars + 16 {
            break;
        }
    }
    cut_text(&safe, max_chars)
}
