//! `warpscope memory`: where the memory goes, as a readable report, the operators as CSV, or a
//! stable JSON contract.

use std::fmt::Write as _;

use anyhow::Result;
use warpscope_core::Profile;
use warpscope_core::analysis::SourceReport;
use warpscope_core::analysis::contract::MemoryJson;
use warpscope_core::analysis::memory::{DeviceMemory, LiveGroup, MemoryReport};
use warpscope_core::model::MemorySource;
use warpscope_core::time::format_duration_ns as dur;
use warpscope_core::units::{format_bytes, format_share};

use super::{AnalyzedRange, csv_field, describe_tool, short_name, write_warnings};
use crate::output::OutputFormat;

/// Renders `warpscope memory`.
pub fn memory(
    profile: &Profile,
    r: &MemoryReport,
    analyzed: &AnalyzedRange,
    format: OutputFormat,
) -> Result<String> {
    Ok(match format {
        OutputFormat::Json => {
            serde_json::to_string_pretty(&MemoryJson::new(profile, r, analyzed))? + "\n"
        }
        OutputFormat::Csv => operators_csv(r),
        OutputFormat::Table => memory_table(profile, r, analyzed),
    })
}

fn operators_csv(r: &MemoryReport) -> String {
    let mut out = String::from("name,alloc_count,alloc_bytes,self_alloc_count,self_alloc_bytes\n");
    for o in &r.operators {
        let _ = writeln!(
            out,
            "{},{},{},{},{}",
            csv_field(&o.name),
            o.alloc_count,
            o.alloc_bytes,
            o.self_alloc_count,
            o.self_alloc_bytes
        );
    }
    out
}

/// What the records are, in words.
fn source_text(source: MemorySource) -> &'static str {
    match source {
        MemorySource::None => "no memory records",
        MemorySource::KinetoEvents => {
            "PyTorch profiler memory events (profile_memory=True); totals as the allocator counted them"
        }
        MemorySource::AllocatorSnapshot => {
            "CUDA caching-allocator snapshot; totals replayed from its trace, anchored on its segments at the end"
        }
        MemorySource::Nsys => "Nsight Systems CUDA memory records",
        MemorySource::Rocpd => "rocprofv3 memory-allocation records (HIP/HSA allocations)",
    }
}

fn b(bytes: i64) -> String {
    format_bytes(bytes)
}

fn bu(bytes: u64) -> String {
    format_bytes(i64::try_from(bytes).unwrap_or(i64::MAX))
}

fn memory_table(profile: &Profile, r: &MemoryReport, analyzed: &AnalyzedRange) -> String {
    let mut out = String::new();
    let source = SourceReport::of(profile);
    let _ = writeln!(
        out,
        "==warpscope== Memory: {} ({})",
        source.path,
        describe_tool(&source)
    );
    write_warnings(&mut out, &profile.warnings);
    if let (Some(a), Some(e)) = (analyzed.start_ns, analyzed.end_ns) {
        let _ = writeln!(out, "==warpscope== Range: {}..{}", dur(a), dur(e));
    }
    let _ = writeln!(out, "==warpscope== Records: {}", source_text(r.source));
    let _ = writeln!(
        out,
        "==warpscope== Peaks are those of the recorded window; torch.cuda.max_memory_allocated() \
         covers the whole process"
    );
    if r.devices.is_empty() {
        let _ = writeln!(
            out,
            "\nThis profile records no allocations: memory was not recorded, or nothing was \
             allocated in the recorded window (CUDA graph replays allocate nothing). Record \
             memory with torch.profiler.profile(profile_memory=True), or open a snapshot from \
             torch.cuda.memory._dump_snapshot()."
        );
        return out;
    }
    for d in &r.devices {
        device_table(&mut out, d);
    }
    if !r.operators.is_empty() {
        let _ = writeln!(
            out,
            "\nAllocating operators (bytes allocated in the range, with the operators they call)"
        );
        let _ = writeln!(
            out,
            "{:>12}  {:>8}  {:>12}  {:>8}  Operator",
            "Bytes", "Allocs", "Self bytes", "Self"
        );
        for o in &r.operators {
            let _ = writeln!(
                out,
                "{:>12}  {:>8}  {:>12}  {:>8}  {}",
                bu(o.alloc_bytes),
                o.alloc_count,
                bu(o.self_alloc_bytes),
                o.self_alloc_count,
                short_name(&o.name, 100)
            );
        }
    }
    if !r.findings.is_empty() {
        let _ = writeln!(out, "\nFindings");
        for (i, f) in r.findings.iter().enumerate() {
            let _ = writeln!(out, "{:>2}. [{}] {}", i + 1, f.rule.as_str(), f.message);
        }
    }
    out
}

fn device_table(out: &mut String, d: &DeviceMemory) {
    let capacity = d
        .capacity_bytes
        .map(|c| format!(" of {}", bu(c)))
        .unwrap_or_default();
    let _ = writeln!(out, "\n{}{capacity}", d.device.label());
    let _ = writeln!(
        out,
        "  peak allocated   {:>12}  at {}",
        b(d.peak_allocated_bytes),
        dur(d.peak_allocated_ns)
    );
    let _ = writeln!(
        out,
        "  peak reserved    {:>12}  at {}",
        b(d.peak_reserved_bytes),
        dur(d.peak_reserved_ns)
    );
    let _ = writeln!(
        out,
        "  at the peak      {:>12}  reserved, {} of it not allocated (fragmentation and cache)",
        b(d.reserved_at_peak_bytes),
        b(d.fragmentation_at_peak_bytes)
    );
    let _ = writeln!(
        out,
        "  allocated        {:>12}  at the start, {} lowest, {} at the end",
        b(d.start_allocated_bytes),
        b(d.low_allocated_bytes),
        b(d.end_allocated_bytes)
    );
    let _ = writeln!(
        out,
        "  allocations      {:>12}  ({}), frees {}",
        d.allocations,
        bu(d.allocated_total_bytes),
        d.frees
    );
    if d.never_freed.count > 0 {
        let _ = writeln!(
            out,
            "  never freed      {:>12}  blocks ({}) allocated in the range are still live at the end of the recording",
            d.never_freed.count,
            bu(d.never_freed.bytes)
        );
    }
    if d.frees_without_allocation.count > 0 {
        let _ = writeln!(
            out,
            "  frees of older   {:>12}  blocks ({}) allocated before the recording",
            d.frees_without_allocation.count,
            bu(d.frees_without_allocation.bytes)
        );
    }
    for oom in &d.ooms {
        let _ = writeln!(
            out,
            "  OUT OF MEMORY    {:>12}  asked at {} by {} ({} allocated, {} reserved)",
            bu(oom.bytes),
            dur(oom.time_ns),
            oom.operator,
            b(oom.allocated_bytes),
            b(oom.reserved_bytes)
        );
    }
    live_table(
        out,
        "Live at the peak, by the operator that allocated it",
        &d.live_at_peak,
        d.peak_allocated_bytes,
    );
    live_table(
        out,
        "Live at the peak, by size",
        &d.live_at_peak_by_size,
        d.peak_allocated_bytes,
    );
}

fn live_table(out: &mut String, title: &str, groups: &[LiveGroup], total: i64) {
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(out, "  {title}");
    let _ = writeln!(
        out,
        "  {:>12}  {:>7}  {:>7}  Operator",
        "Bytes", "Share", "Blocks"
    );
    for g in groups {
        let count = if g.count == 0 {
            "-".to_string()
        } else {
            g.count.to_string()
        };
        let _ = writeln!(
            out,
            "  {:>12}  {:>7}  {:>7}  {}",
            b(g.bytes),
            format_share(g.bytes, total),
            count,
            short_name(&g.operator, 100)
        );
    }
}
