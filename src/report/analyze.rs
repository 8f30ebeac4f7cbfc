//! `warpscope analyze`: why the GPU is not busy, as a readable report or a stable JSON contract.

use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;
use warpscope_core::Profile;
use warpscope_core::TimeRange;
use warpscope_core::analysis::SourceReport;
use warpscope_core::analysis::flops::{FlopsFinding, FlopsReport};
use warpscope_core::analysis::insight::{
    DeviceBreakdown, Finding, GapCause, HostWaitOp, Insights, KernelInsight, LaunchStats,
    StreamIdle,
};
use warpscope_core::analysis::memory::{MemoryFinding, MemoryPeak, memory_peaks, memory_report};
use warpscope_core::model::EventRef;
use warpscope_core::time::format_duration_ns as dur;

use super::{describe_tool, short_name, write_warnings};
use crate::output::OutputFormat;

/// The range that was analysed, as the user asked for it.
#[derive(Clone, Debug, Serialize)]
pub struct AnalyzedRange {
    /// `all`, `range` or `step`.
    pub kind: &'static str,
    /// The step number for `step`.
    pub step: Option<u64>,
    /// Start in profile nanoseconds (`None` for the whole run).
    pub start_ns: Option<i64>,
    /// End in profile nanoseconds.
    pub end_ns: Option<i64>,
}

/// An event as JSON: where it is and what it is.
#[derive(Serialize)]
struct EventJson<'a> {
    track: u32,
    index: u32,
    name: &'a str,
    start_ns: i64,
    dur_ns: i64,
}

fn event_json(p: &Profile, e: EventRef) -> EventJson<'_> {
    let ev = &p.tracks[e.track as usize].events;
    let i = e.index as usize;
    EventJson {
        track: e.track,
        index: e.index,
        name: p.str(ev.name[i]),
        start_ns: ev.start_ns[i],
        dur_ns: ev.dur_ns[i],
    }
}

#[derive(Serialize)]
struct GapJson<'a> {
    device: u32,
    start_ns: i64,
    dur_ns: i64,
    cause: GapCause,
    next: EventJson<'a>,
    launch: Option<EventJson<'a>>,
    operator: Option<&'a str>,
    /// The blocking synchronisation the launching thread was in when the gap began.
    sync: Option<EventJson<'a>>,
}

#[derive(Serialize)]
struct FindingJson<'a> {
    rule: &'static str,
    device: Option<u32>,
    time_ns: i64,
    /// `measured` or `estimate`: what `time_ns` is.
    at_stake_basis: &'static str,
    message: &'a str,
    events: Vec<EventJson<'a>>,
}

#[derive(Serialize)]
struct AnalyzeJson<'a> {
    source: SourceReport,
    range: &'a AnalyzedRange,
    devices: &'a [DeviceBreakdown],
    streams: &'a [StreamIdle],
    kernels: &'a [KernelInsight],
    tensor_core_pct: f64,
    launch: &'a LaunchStats,
    gaps: Vec<GapJson<'a>>,
    host_wait_ops: &'a [HostWaitOp],
    findings: Vec<FindingJson<'a>>,
    /// Memory peaks per device, where the profile records memory.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    memory: Vec<MemoryPeak>,
    /// The memory findings (`docs/memory.md`), where the profile records memory.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    memory_findings: Vec<MemoryFinding>,
    /// FLOPs, MFU and the operator roofline (`docs/flops.md`).
    flops: super::flops::FlopsJson<'a>,
}

impl AnalyzedRange {
    /// The range as a [`TimeRange`].
    pub fn time_range(&self) -> TimeRange {
        match (self.start_ns, self.end_ns) {
            (Some(s), Some(e)) => TimeRange::new(s, e),
            _ => TimeRange::ALL,
        }
    }
}

fn operator_name(p: &Profile, e: Option<EventRef>) -> Option<&str> {
    e.map(|e| p.str(p.tracks[e.track as usize].events.name[e.index as usize]))
}

/// A FLOPs finding as a finding of the list.
fn flops_finding_json<'a>(p: &'a Profile, f: &'a FlopsFinding) -> FindingJson<'a> {
    FindingJson {
        rule: f.rule.as_str(),
        device: f.device,
        time_ns: f.time_ns,
        at_stake_basis: f.at_stake_basis.as_str(),
        message: &f.message,
        events: f.events.iter().map(|&e| event_json(p, e)).collect(),
    }
}

/// Renders `warpscope analyze`.
pub fn analyze(
    p: &Profile,
    ins: &Insights,
    flops: &FlopsReport,
    range: &AnalyzedRange,
    top: usize,
    format: OutputFormat,
) -> Result<String> {
    Ok(match format {
        OutputFormat::Json => {
            let json = AnalyzeJson {
                source: SourceReport::of(p),
                range,
                devices: &ins.devices,
                streams: &ins.streams,
                kernels: &ins.kernels,
                tensor_core_pct: ins.tensor_core_pct,
                launch: &ins.launch,
                gaps: ins
                    .gaps
                    .iter()
                    .map(|g| GapJson {
                        device: g.device,
                        start_ns: g.start_ns,
                        dur_ns: g.dur_ns,
                        cause: g.cause,
                        next: event_json(p, g.next),
                        launch: g.launch.map(|e| event_json(p, e)),
                        operator: operator_name(p, g.operator),
                        sync: g.sync.map(|e| event_json(p, e)),
                    })
                    .collect(),
                host_wait_ops: &ins.host_wait_ops,
                findings: {
                    let mut all: Vec<FindingJson<'_>> = ins
                        .findings
                        .iter()
                        .map(|f| FindingJson {
                            rule: f.rule.as_str(),
                            device: f.device,
                            time_ns: f.time_ns,
                            at_stake_basis: f.at_stake_basis.as_str(),
                            message: &f.message,
                            events: f.events.iter().map(|&e| event_json(p, e)).collect(),
                        })
                        .collect();
                    all.extend(flops.findings.iter().map(|f| flops_finding_json(p, f)));
                    // Largest time at stake first, as each list is (a stable sort keeps ties
                    // in their order).
                    all.sort_by_key(|f| std::cmp::Reverse(f.time_ns));
                    all
                },
                memory: memory_peaks(p, range.time_range()),
                memory_findings: memory_report(p, range.time_range(), 1).findings,
                flops: super::flops::flops_json(flops),
            };
            serde_json::to_string_pretty(&json)? + "\n"
        }
        OutputFormat::Table | OutputFormat::Csv => table(p, ins, flops, range, top),
    })
}

fn pct_of(part: i64, whole: i64) -> String {
    if whole <= 0 {
        return "-".to_string();
    }
    format!("{:.1}%", warpscope_core::analysis::pct(part, whole))
}

fn opt_pct(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), |v| format!("{v:.0}%"))
}

fn opt_ns(v: Option<i64>) -> String {
    v.map_or_else(|| "—".to_string(), dur)
}

/// Utilisation as a line of block characters, `width` wide.
fn sparkline(values: &[f64], width: usize) -> String {
    const BARS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    if values.is_empty() {
        return String::new();
    }
    let width = width.min(values.len());
    (0..width)
        .map(|c| {
            let lo = c * values.len() / width;
            let hi = ((c + 1) * values.len() / width).max(lo + 1);
            #[allow(clippy::cast_precision_loss)]
            let mean = values[lo..hi].iter().sum::<f64>() / (hi - lo) as f64;
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let level = (mean * 8.0).round().clamp(0.0, 8.0) as usize;
            BARS[level]
        })
        .collect()
}

fn table(
    p: &Profile,
    ins: &Insights,
    flops: &FlopsReport,
    range: &AnalyzedRange,
    top: usize,
) -> String {
    let mut out = String::new();
    let source = SourceReport::of(p);
    let scope = match (range.kind, range.step, range.start_ns, range.end_ns) {
        ("step", Some(n), Some(s), Some(e)) => format!("step {n} ({}..{})", dur(s), dur(e)),
        (_, _, Some(s), Some(e)) => format!("{}..{}", dur(s), dur(e)),
        _ => "the whole run".to_string(),
    };
    let _ = writeln!(
        out,
        "==warpscope== Why is it slow? {} ({}), {scope}",
        source.path,
        describe_tool(&source)
    );
    write_warnings(&mut out, &p.warnings);
    super::write_memory_peaks(&mut out, &memory_peaks(p, range.time_range()));
    if ins.devices.is_empty() {
        let _ = writeln!(
            out,
            "\nNo kernels, copies or sets in this range: nothing to analyse."
        );
        return out;
    }
    for d in &ins.devices {
        let name = p
            .device(d.device)
            .map(|x| format!(" ({})", x.name))
            .filter(|s| s != " ()")
            .unwrap_or_default();
        let b = &d.idle_breakdown;
        let w = d.window_ns;
        // A time with its share of the window: `3.8780ms (29.9%)`.
        let share = |ns: i64| format!("{} ({})", dur(ns), pct_of(ns, w));
        let _ = writeln!(
            out,
            "\nGPU {}{name}: window {}, busy {}, idle {}",
            d.device,
            dur(w),
            share(d.busy_ns),
            share(d.idle_ns)
        );
        let _ = writeln!(
            out,
            "  time:    compute {}  communication {}  memory {}  idle {}",
            share(d.compute_ns),
            share(d.comm_ns),
            share(d.memory_ns),
            share(d.idle_ns)
        );
        let _ = writeln!(
            out,
            "  idle:    host wait {}  kernel wait {}  other {}",
            share(b.host_wait_ns),
            share(b.kernel_wait_ns),
            share(b.other_ns)
        );
        let _ = writeln!(
            out,
            "  overlap: communication with compute {} ({:.1}% of communication)  copies with compute {}",
            dur(d.overlap_comm_compute_ns),
            d.overlap_comm_pct,
            dur(d.overlap_copy_compute_ns)
        );
        let _ = writeln!(
            out,
            "  kernels: {:.1}% of kernel time on Tensor Cores; {}",
            d.tensor_core_pct,
            occupancy_text(d)
        );
        let _ = writeln!(
            out,
            "  busy over time ({} per column): |{}|",
            dur(d.utilisation_bucket_ns
                * i64::try_from(d.utilisation.len().div_ceil(60))
                    .unwrap_or(1)
                    .max(1)),
            sparkline(&d.utilisation, 60)
        );
    }

    let _ = writeln!(
        out,
        "\nFindings, largest time at stake first (measured: time in this profile, the most that fixing the cause gives back; estimate: a modelled saving):"
    );
    if ins.findings.is_empty() && flops.findings.is_empty() {
        let _ = writeln!(
            out,
            "  none: no rule of docs/analysis.md or docs/flops.md fired."
        );
    }
    for (i, f) in ins.findings.iter().enumerate() {
        let _ = writeln!(out, "{}", finding_line(i + 1, f));
    }
    for (i, f) in flops.findings.iter().enumerate() {
        let _ = writeln!(
            out,
            "  {}. [{}] {} at stake, {} (GPU {}): {}",
            ins.findings.len() + i + 1,
            f.rule.as_str(),
            dur(f.time_ns),
            f.at_stake_basis.as_str(),
            f.device
                .map_or_else(|| "run".to_string(), |d| d.to_string()),
            f.message
        );
    }
    let memory = memory_report(p, range.time_range(), 1).findings;
    if !memory.is_empty() {
        let _ = writeln!(
            out,
            "\nMemory findings (bytes at stake are estimates; docs/memory.md, warpscope memory FILE):"
        );
        for (i, f) in memory.iter().enumerate() {
            let _ = writeln!(out, "{:>2}. [{}] {}", i + 1, f.rule.as_str(), f.message);
        }
    }

    let l = &ins.launch;
    let _ = writeln!(
        out,
        "\nLaunches: {} kernels, {} with a launching call; typical launch {}; launch delay median {}, p95 {}",
        l.kernels,
        l.kernels_with_launch,
        opt_ns(l.typical_launch_ns),
        opt_ns(l.delay_median_ns),
        opt_ns(l.delay_p95_ns)
    );
    let _ = writeln!(
        out,
        "  {} kernels shorter than a typical launch: {} ({:.1}% of kernel time); {} CUDA graph launches ran {} kernels",
        l.launch_bound_kernels,
        dur(l.launch_bound_ns),
        l.launch_bound_pct,
        l.graph_launches,
        l.graph_kernels
    );

    if !ins.gaps.is_empty() {
        let _ = writeln!(out, "\nLargest gaps:");
        let _ = writeln!(
            out,
            "  {:>5} {:>12} {:>12}  {:<11}  {:<40}  CPU operator during the gap",
            "GPU", "start", "length", "cause", "next work"
        );
        for g in &ins.gaps {
            let ev = &p.tracks[g.next.track as usize].events;
            let next = p.str(ev.name[g.next.index as usize]);
            let _ = writeln!(
                out,
                "  {:>5} {:>12} {:>12}  {:<11}  {:<40}  {}",
                g.device,
                dur(g.start_ns),
                dur(g.dur_ns),
                g.cause.as_str(),
                short_name(next, 40),
                short_name(operator_name(p, g.operator).unwrap_or("—"), 50)
            );
        }
    }

    if !ins.host_wait_ops.is_empty() {
        let _ = writeln!(
            out,
            "\nHost wait by the CPU operator the GPU waited on (innermost; step and profiler annotations do not count):"
        );
        for d in &ins.devices {
            for o in ins.host_wait_ops_of(d.device).iter().take(top) {
                let _ = writeln!(
                    out,
                    "  GPU {} {:>12} in {:>5} gaps  {}",
                    o.device,
                    dur(o.time_ns),
                    o.gaps,
                    short_name(
                        o.operator
                            .as_deref()
                            .unwrap_or("(no CPU operator: between operators)"),
                        80
                    )
                );
            }
        }
    }

    let _ = writeln!(out, "\nKernels by time:");
    let _ = writeln!(
        out,
        "  {:>12} {:>7}  {:>6} {:<22} {:>8}  {:>3}  {:>10} {:>10}  Name",
        "Total", "Calls", "Occ.", "limited by", "Achieved", "TC", "Delay med", "Delay p95"
    );
    for k in ins.kernels.iter().take(top) {
        let _ = writeln!(
            out,
            "  {:>12} {:>7}  {:>6} {:<22} {:>8}  {:>3}  {:>10} {:>10}  {}",
            dur(k.total_ns),
            k.calls,
            opt_pct(k.theoretical_occupancy_pct),
            k.shown_limiter().unwrap_or("—"),
            opt_pct(k.achieved_occupancy_pct),
            if k.tensor_cores { "yes" } else { "" },
            opt_ns(k.launch_delay_median_ns),
            opt_ns(k.launch_delay_p95_ns),
            short_name(&k.name, 80)
        );
    }
    if ins.kernels.len() > top {
        let _ = writeln!(
            out,
            "  ... {} more (--top N to see more)",
            ins.kernels.len() - top
        );
    }
    super::flops::write_flops_section(&mut out, flops, top);
    let _ = writeln!(
        out,
        "\nRules, thresholds and formulas: docs/analysis.md. Tensor Cores: {:.1}% of all kernel time.",
        ins.tensor_core_pct
    );
    out
}

fn finding_line(n: usize, f: &Finding) -> String {
    let device = f
        .device
        .map_or_else(|| "run".to_string(), |d| format!("GPU {d}"));
    format!(
        "  {n}. [{}] {} at stake, {} ({device}): {}",
        f.rule.as_str(),
        dur(f.time_ns),
        f.at_stake_basis.as_str(),
        f.message
    )
}

/// A device's occupancy figures: the theoretical mean over every kernel with launch details,
/// then Kineto's achieved beside the theoretical mean of the same kernels (`docs/analysis.md`,
/// section 5).
fn occupancy_text(d: &DeviceBreakdown) -> String {
    let theoretical = format!(
        "occupancy theoretical {}",
        opt_pct(d.theoretical_occupancy_pct)
    );
    match d.achieved_occupancy_pct {
        None => format!("{theoretical}, achieved (Kineto) —"),
        Some(achieved) => format!(
            "{theoretical}; where Kineto estimated it ({:.1}% of kernel time): achieved {achieved:.0}% of theoretical {}",
            d.achieved_occupancy_time_pct,
            opt_pct(d.theoretical_occupancy_where_achieved_pct)
        ),
    }
}
