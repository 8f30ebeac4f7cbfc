//! Text, CSV and JSON renderings of the reports printed by the CLI.

use std::fmt::Write as _;

use anyhow::Result;
use serde::Serialize;
use warpscope_core::Profile;
use warpscope_core::analysis::{SourceReport, SummaryReport, event_counts};
use warpscope_core::model::{EventKind, GpuLane, TrackKey, Warning};
pub(crate) use warpscope_core::names::{distinct_short_names, short_name};
use warpscope_core::time::format_duration_ns;

use crate::output::OutputFormat;

mod analyze;
mod compare;
mod fleet;
mod live;
mod memory;

pub use analyze::{AnalyzedRange, analyze};
pub use compare::compare;
pub use fleet::fleet;
pub use live::{live_catalog, live_run};
pub use memory::memory;

/// Renders `warpscope summary`.
pub fn summary(r: &SummaryReport, format: OutputFormat) -> Result<String> {
    Ok(match format {
        OutputFormat::Json => serde_json::to_string_pretty(r)? + "\n",
        OutputFormat::Csv => summary_csv(r),
        OutputFormat::Table => summary_table(r),
    })
}

/// Longest name the text tables print.
const NAME_CHARS: usize = 100;

fn pct(p: f64) -> String {
    format!("{p:.2}%")
}

fn summary_table(r: &SummaryReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "==warpscope== Profile: {} ({})",
        r.source.path,
        describe_tool(&r.source)
    );
    write_warnings(&mut out, &r.warnings);
    let _ = writeln!(
        out,
        "==warpscope== GPU activities total: {}",
        format_duration_ns(r.gpu_total_ns)
    );
    write_memory_peaks(&mut out, &r.memory);
    let header = format!(
        "{:>16}  {:>7}  {:>9}  {:>8}  {:>9}  {:>9}  {:>9}  {:>9}  Name",
        "Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Median"
    );
    let _ = writeln!(out, "{header}");
    let mut section = |label: &str, rows: Vec<(f64, &warpscope_core::analysis::Stats, &str)>| {
        // Long C++ names are shortened as `compare` does; CSV and JSON keep them whole.
        let names: Vec<&str> = rows.iter().map(|r| r.2).collect();
        let short = distinct_short_names(&names, NAME_CHARS);
        for (i, ((p, s, _), name)) in rows.into_iter().zip(short).enumerate() {
            let _ = writeln!(
                out,
                "{:>16}  {:>7}  {:>9}  {:>8}  {:>9}  {:>9}  {:>9}  {:>9}  {}",
                if i == 0 { label } else { "" },
                pct(p),
                format_duration_ns(s.total_ns),
                s.calls,
                format_duration_ns(s.avg_ns),
                format_duration_ns(s.min_ns),
                format_duration_ns(s.max_ns),
                s.median_ns
                    .map_or_else(|| "-".to_string(), format_duration_ns),
                name
            );
        }
    };
    section(
        "GPU activities:",
        r.gpu_activities
            .iter()
            .map(|a| (a.time_pct, &a.stats, a.name.as_str()))
            .collect(),
    );
    section(
        "API calls:",
        r.api
            .iter()
            .map(|a| (a.time_pct, &a.stats, a.name.as_str()))
            .collect(),
    );
    if !r.memcpy.is_empty() {
        let _ = writeln!(out, "\nMemory operations by kind:");
        let _ = writeln!(
            out,
            "{:>14}  {:>8}  {:>12}  {:>9}  {:>10}",
            "Kind", "Count", "Bytes", "Time", "Throughput"
        );
        for c in &r.memcpy {
            let _ = writeln!(
                out,
                "{:>14}  {:>8}  {:>12}  {:>9}  {:>10}",
                c.kind,
                c.calls,
                format_bytes(c.bytes),
                format_duration_ns(c.total_ns),
                format!("{:.2}GB/s", c.gbps)
            );
        }
    }
    if !r.ops.is_empty() {
        let _ = writeln!(out, "\nCPU operators:");
        let _ = writeln!(
            out,
            "{:>8}  {:>9}  {:>9}  {:>9}  {:>9}  Name",
            "Calls", "Self CPU", "CPU total", "GPU self", "GPU total"
        );
        for o in &r.ops {
            let _ = writeln!(
                out,
                "{:>8}  {:>9}  {:>9}  {:>9}  {:>9}  {}",
                o.calls,
                format_duration_ns(o.self_ns),
                format_duration_ns(o.total_ns),
                format_duration_ns(o.gpu_self_ns),
                format_duration_ns(o.gpu_ns),
                short_name(&o.name, NAME_CHARS)
            );
        }
    }
    if !r.unified_memory.is_empty() {
        let _ = writeln!(out, "\nUnified Memory profiling result (as recorded):");
        let _ = writeln!(
            out,
            "{:>8}  {:>10}  {:>10}  {:>10}  {:>11}  {:>10}  {:<20}  Device",
            "Count", "Avg Size", "Min Size", "Max Size", "Total Size", "Total Time", "Name"
        );
        let size = |b: Option<u64>| b.map_or_else(|| "-".to_string(), format_bytes);
        for u in &r.unified_memory {
            let _ = writeln!(
                out,
                "{:>8}  {:>10}  {:>10}  {:>10}  {:>11}  {:>10}  {:<20}  {}",
                u.count.map_or_else(|| "-".to_string(), |c| c.to_string()),
                size(u.avg_bytes),
                size(u.min_bytes),
                size(u.max_bytes),
                size(u.total_bytes),
                u.total_ns
                    .map_or_else(|| "-".to_string(), format_duration_ns),
                u.name,
                u.device
            );
        }
    }
    if let Some(n) = r.cpu_page_faults {
        let _ = writeln!(out, "Total CPU Page faults: {n}");
    }
    out
}

/// The import's warnings as `warning: ...` lines, written right under a report's first line:
/// they say what the figures below leave out or could not trust (a file cut off, events
/// skipped), so they are read before the figures.
fn write_warnings(out: &mut String, warnings: &[Warning]) {
    for w in warnings {
        let _ = writeln!(out, "warning: {}", crate::warning_text(w));
    }
}

fn describe_tool(s: &SourceReport) -> String {
    match &s.tool_version {
        Some(v) => format!("{}, {v}", s.tool),
        None => s.tool.clone(),
    }
}

/// One line per device with memory records: the peaks, and where to look further.
fn write_memory_peaks(out: &mut String, peaks: &[warpscope_core::analysis::memory::MemoryPeak]) {
    use warpscope_core::units::format_bytes;
    for p in peaks {
        let _ = writeln!(
            out,
            "==warpscope== Memory {}: peak {} allocated at {}, {} reserved (warpscope memory FILE)",
            p.device.label(),
            format_bytes(p.peak_allocated_bytes),
            format_duration_ns(p.peak_allocated_ns),
            format_bytes(p.peak_reserved_bytes)
        );
    }
}

/// Bytes in binary units, as nvprof prints sizes.
fn format_bytes(b: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let v = b as f64;
    if b < 1024 {
        format!("{b}B")
    } else if b < 1024 * 1024 {
        format!("{:.3}KB", v / 1024.0)
    } else if b < 1024 * 1024 * 1024 {
        format!("{:.3}MB", v / (1024.0 * 1024.0))
    } else {
        format!("{:.3}GB", v / (1024.0 * 1024.0 * 1024.0))
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt(v: Option<i64>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

fn summary_csv(r: &SummaryReport) -> String {
    let mut out = String::from(
        "Type,Name,Kind,Calls,Total_ns,Avg_ns,Min_ns,Max_ns,Median_ns,Time_pct,Bytes,GBps,Self_ns,GPU_ns\n",
    );
    for a in &r.gpu_activities {
        let s = &a.stats;
        let kind = serde_json::to_value(a.kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "GPU activities,{},{kind},{},{},{},{},{},{},{:.6},,,,",
            csv_field(&a.name),
            s.calls,
            s.total_ns,
            s.avg_ns,
            s.min_ns,
            s.max_ns,
            opt(s.median_ns),
            a.time_pct
        );
    }
    for a in &r.api {
        let s = &a.stats;
        let _ = writeln!(
            out,
            "API calls,{},{},{},{},{},{},{},{},{:.6},,,,",
            csv_field(&a.name),
            a.kind.as_str(),
            s.calls,
            s.total_ns,
            s.avg_ns,
            s.min_ns,
            s.max_ns,
            opt(s.median_ns),
            a.time_pct
        );
    }
    for c in &r.memcpy {
        let _ = writeln!(
            out,
            "Memory,{},{},{},{},,,,,,{},{:.6},,",
            csv_field(&c.kind),
            csv_field(&c.kind),
            c.calls,
            c.total_ns,
            c.bytes,
            c.gbps
        );
    }
    for o in &r.ops {
        let _ = writeln!(
            out,
            "CPU operators,{},cpu_op,{},{},,,,,,,,{},{}",
            csv_field(&o.name),
            o.calls,
            o.total_ns,
            o.self_ns,
            o.gpu_ns
        );
    }
    out
}

/// One track in `warpscope info`.
#[derive(Serialize)]
struct TrackInfo {
    name: String,
    kind: &'static str,
    device: Option<u32>,
    stream: Option<u64>,
    process: Option<String>,
    thread: Option<String>,
    events: usize,
    by_kind: Vec<(EventKind, usize)>,
}

/// Everything `warpscope info` prints.
#[derive(Serialize)]
struct InfoReport {
    source: SourceReport,
    details: Vec<(String, String)>,
    file_bytes: u64,
    content_bytes: u64,
    origin_unix_ns: Option<i64>,
    span_ns: Option<i64>,
    devices: Vec<warpscope_core::model::Device>,
    distributed: Option<warpscope_core::model::DistributedInfo>,
    events: usize,
    events_by_kind: Vec<(EventKind, u64)>,
    flows: usize,
    counters: usize,
    markers: usize,
    tracks: Vec<TrackInfo>,
    warnings: Vec<Warning>,
}

fn track_infos(p: &Profile) -> Vec<TrackInfo> {
    p.tracks
        .iter()
        .map(|t| {
            let mut by_kind: Vec<(EventKind, usize)> = Vec::new();
            for &k in &t.events.kind {
                match by_kind.iter_mut().find(|(kk, _)| *kk == k) {
                    Some(e) => e.1 += 1,
                    None => by_kind.push((k, 1)),
                }
            }
            by_kind.sort();
            let (kind, device, stream, process, thread) = match t.key {
                TrackKey::Gpu {
                    device,
                    stream,
                    lane,
                    ..
                } => (
                    match lane {
                        GpuLane::Work => "gpu_stream",
                        GpuLane::Annotations => "gpu_annotations",
                        GpuLane::UnifiedMemory => "unified_memory",
                    },
                    Some(device),
                    Some(stream),
                    None,
                    None,
                ),
                TrackKey::Thread { pid, tid } => (
                    "thread",
                    None,
                    None,
                    Some(process_label(p, pid)),
                    Some(p.id_text(tid)),
                ),
                TrackKey::Async { pid, .. } => {
                    ("async", None, None, Some(process_label(p, pid)), None)
                }
            };
            TrackInfo {
                name: t.name.clone(),
                kind,
                device,
                stream,
                process,
                thread,
                events: t.events.len(),
                by_kind,
            }
        })
        .collect()
}

fn process_label(p: &Profile, pid: warpscope_core::model::TraceId) -> String {
    match p.process_name(pid) {
        Some(name) => format!("{name} ({})", p.id_text(pid)),
        None => format!("process {}", p.id_text(pid)),
    }
}

/// Renders `warpscope info`.
pub fn info(p: &Profile, format: OutputFormat) -> Result<String> {
    let report = InfoReport {
        source: SourceReport::of(p),
        details: p.source.details.clone(),
        file_bytes: p.source.file_bytes,
        content_bytes: p.source.content_bytes,
        origin_unix_ns: p.origin.unix_ns,
        span_ns: p.span_ns().map(|(a, b)| b - a),
        devices: p.devices.clone(),
        distributed: p.distributed.clone(),
        events: p.event_count(),
        events_by_kind: event_counts(p),
        flows: p.flows.len(),
        counters: p.counters.len(),
        markers: p.markers.len(),
        tracks: track_infos(p),
        warnings: p.warnings.clone(),
    };
    if format == OutputFormat::Json {
        return Ok(serde_json::to_string_pretty(&report)? + "\n");
    }
    if format == OutputFormat::Csv {
        let mut out = String::from("Track,Kind,Device,Stream,Process,Thread,Events\n");
        for t in &report.tracks {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{}",
                csv_field(&t.name),
                t.kind,
                t.device.map(|d| d.to_string()).unwrap_or_default(),
                t.stream.map(|d| d.to_string()).unwrap_or_default(),
                csv_field(t.process.as_deref().unwrap_or("")),
                csv_field(t.thread.as_deref().unwrap_or("")),
                t.events
            );
        }
        return Ok(out);
    }
    let mut out = String::new();
    let s = &report.source;
    let _ = writeln!(out, "File:      {}", s.path);
    write_warnings(&mut out, &report.warnings);
    let size = if s.compressed {
        format!(
            "{} gzip, {} uncompressed",
            format_bytes(report.file_bytes),
            format_bytes(report.content_bytes)
        )
    } else {
        format_bytes(report.file_bytes)
    };
    let _ = writeln!(out, "Size:      {size}");
    let _ = writeln!(
        out,
        "Format:    {} ({})",
        p.source.format.description(),
        s.format
    );
    let _ = writeln!(out, "Tool:      {}", describe_tool(s));
    if let Some(v) = &s.schema_version {
        let _ = writeln!(out, "Schema:    {v}");
    }
    for (k, v) in &report.details {
        if k == warpscope_live::RESULTS_DETAIL_KEY {
            // The live lab's per-point results (JSON): `warpscope live` and the viewer show them.
            let _ = writeln!(out, "           {k}: {} bytes of JSON", v.len());
        } else {
            let _ = writeln!(out, "           {k}: {v}");
        }
    }
    match report.origin_unix_ns {
        Some(ns) => {
            let _ = writeln!(out, "Start:     {} ns since the Unix epoch", ns);
        }
        None => {
            let _ = writeln!(
                out,
                "Start:     unknown wall-clock time (the file's clock is relative)"
            );
        }
    }
    if let Some(span) = report.span_ns {
        let _ = writeln!(out, "Span:      {}", format_duration_ns(span));
    }
    if let Some(d) = &report.distributed {
        let _ = writeln!(
            out,
            "Ranks:     rank {} of {} ({})",
            d.rank.map_or("?".into(), |v| v.to_string()),
            d.world_size.map_or("?".into(), |v| v.to_string()),
            d.backend.as_deref().unwrap_or("?")
        );
    }
    let _ = writeln!(out, "Devices:   {}", report.devices.len());
    for d in &report.devices {
        let mut parts = vec![format!(
            "GPU {}: {}",
            d.id,
            if d.name.is_empty() { "?" } else { &d.name }
        )];
        if let Some((a, b)) = d.compute_capability {
            parts.push(format!("compute {a}.{b}"));
        }
        if let Some(sm) = d.sm_count {
            parts.push(format!("{sm} SMs"));
        }
        if let Some(m) = d.memory_bytes {
            parts.push(format_bytes(m));
        }
        let _ = writeln!(out, "  {}", parts.join(", "));
    }
    let kinds: Vec<String> = report
        .events_by_kind
        .iter()
        .map(|(k, n)| format!("{} {n}", k.as_str()))
        .collect();
    let _ = writeln!(out, "Events:    {} ({})", report.events, kinds.join(", "));
    let _ = writeln!(out, "Flows:     {}", report.flows);
    if report.counters > 0 || report.markers > 0 {
        let _ = writeln!(
            out,
            "Counters:  {}   Markers: {}",
            report.counters, report.markers
        );
    }
    let _ = writeln!(out, "Tracks:    {}", report.tracks.len());
    for t in &report.tracks {
        let place = match (t.device, &t.process) {
            (Some(d), _) => format!("GPU {d} · {}", t.name),
            (None, Some(proc_)) => format!("{proc_} · {}", t.name),
            (None, None) => t.name.clone(),
        };
        let kinds: Vec<String> = t
            .by_kind
            .iter()
            .map(|(k, n)| format!("{} {n}", k.as_str()))
            .collect();
        let _ = writeln!(
            out,
            "  {place:<60} {:>8} events  ({})",
            t.events,
            kinds.join(", ")
        );
    }
    Ok(out)
}
