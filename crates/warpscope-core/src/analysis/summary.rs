//! The `warpscope summary` report: every table of a profile in one serialisable value, the
//! stable JSON contract for scripts.

use serde::Serialize;

use super::{
    ActivityRow, ApiRow, CopyRow, OpRow, api_calls, copies_by_kind, cpu_ops, gpu_activities,
};
use crate::model::{Profile, UnifiedMemorySummaryRow, Warning};
use crate::parallel::join;
use crate::time::TimeRange;

/// Where the profile came from, as reported.
#[derive(Clone, Debug, Serialize)]
pub struct SourceReport {
    /// Path as given.
    pub path: String,
    /// Format id (`chrome-json`, `nvprof-csv`, ...).
    pub format: &'static str,
    /// Writing tool.
    pub tool: String,
    /// Tool version, if known.
    pub tool_version: Option<String>,
    /// Schema version, if known.
    pub schema_version: Option<String>,
    /// True if gzip-compressed.
    pub compressed: bool,
}

impl SourceReport {
    /// The report of a profile's source.
    pub fn of(profile: &Profile) -> Self {
        let s = &profile.source;
        Self {
            path: s.path.display().to_string(),
            format: s.format.as_str(),
            tool: s.tool.clone(),
            tool_version: s.tool_version.clone(),
            schema_version: s.schema_version.clone(),
            compressed: s.compressed,
        }
    }
}

/// Everything `warpscope summary` prints.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryReport {
    /// The file.
    pub source: SourceReport,
    /// Summed duration of all kernels, copies and sets (not limited by `--top`).
    pub gpu_total_ns: i64,
    /// Kernels, copies and sets ranked by total time.
    pub gpu_activities: Vec<ActivityRow>,
    /// Copies and sets by kind.
    pub memcpy: Vec<CopyRow>,
    /// CUDA API calls.
    pub api: Vec<ApiRow>,
    /// CPU operators.
    pub ops: Vec<OpRow>,
    /// nvprof's "Unified Memory profiling result" table, when the file is an nvprof summary.
    pub unified_memory: Vec<UnifiedMemorySummaryRow>,
    /// nvprof's `Total CPU Page faults`, when the file is an nvprof summary.
    pub cpu_page_faults: Option<u64>,
    /// Memory peaks per device, where the profile records memory (`warpscope memory`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub memory: Vec<super::memory::MemoryPeak>,
    /// Problems met while importing.
    pub warnings: Vec<Warning>,
}

/// Builds the summary of `profile` over `range`, keeping the first `top` rows of each table
/// (all rows if `None`).
pub fn summary_report(profile: &Profile, range: TimeRange, top: Option<usize>) -> SummaryReport {
    let cut = |n: usize| top.map_or(n, |t| t.min(n));
    // The tables are independent: the copies and the CPU-operators table (which spreads over
    // the threads itself) on a thread of their own, beside the GPU activities and then the API
    // calls on this one. Those two hold the durations of their rows: one after the other, and
    // on this thread, whose allocator has the memory the import gave back (a 200 MB Nsight
    // Systems export's peak grew by a tenth with both at once, and by 4% on a new thread).
    let ((memcpy, mut ops), (mut gpu, mut api)) = join(
        || (copies_by_kind(profile, range), cpu_ops(profile, range)),
        || (gpu_activities(profile, range), api_calls(profile, range)),
    );
    let gpu_total_ns = super::saturating_sum(gpu.iter().map(|r| r.stats.total_ns));
    gpu.truncate(cut(gpu.len()));
    api.truncate(cut(api.len()));
    ops.truncate(cut(ops.len()));
    SummaryReport {
        source: SourceReport::of(profile),
        gpu_total_ns,
        gpu_activities: gpu,
        memcpy,
        api,
        ops,
        unified_memory: profile
            .recorded_summary
            .as_ref()
            .map(|r| r.unified_memory.clone())
            .unwrap_or_default(),
        cpu_page_faults: profile
            .recorded_summary
            .as_ref()
            .and_then(|r| r.cpu_page_faults),
        memory: super::memory::memory_peaks(profile, range),
        warnings: profile.warnings.clone(),
    }
}
