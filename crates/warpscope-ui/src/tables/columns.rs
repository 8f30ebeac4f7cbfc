//! The five tables of the tables panel, each described once: the rows it is made of (what the
//! analysis returns, or an entry that gathers more about a row) and one list of columns, each
//! column one [`ColumnDef`] with its header, tooltip, width and cell. A new column is one entry
//! in a list (see ARCHITECTURE.md, "A new column in a viewer table").

use std::collections::HashMap;

use warpscope_core::analysis::flops::PeakOverride;
use warpscope_core::analysis::insight::{KernelInsight, kernel_insights};
use warpscope_core::analysis::range_index::ActivityIndex;
use warpscope_core::analysis::{self, ActivityKind, ActivityRow, ApiRow, CopyRow, OpRow};
use warpscope_core::{Profile, TimeRange};

use super::flops_cells::{
    AI_HINT, FLOPS_HINT, FlopsFigures, PCT_HINT, TFLOPS_HINT, figures_by_name, flops_cell,
    intensity_cell, pct_of_peak_cell, tflops_cell,
};
use super::{Cell, ColumnDef, TableKind, TableRows};

/// The columns of the GPU activities table (kernels, copies and sets, as nvprof prints them).
pub const ACTIVITY_COLUMNS: &[ColumnDef<ActivityRow>] = &[
    ColumnDef::new(
        "Time(%)",
        "Share of the total time of the table",
        72.0,
        |r| Cell::Percent(r.time_pct),
    ),
    ColumnDef::new("Time", "Summed duration", 86.0, |r| {
        Cell::DurationNs(r.stats.total_ns)
    }),
    ColumnDef::new("Calls", "Number of executions", 64.0, |r| {
        Cell::Count(r.stats.calls)
    }),
    ColumnDef::new("Avg", "Mean duration", 86.0, |r| {
        Cell::DurationNs(r.stats.avg_ns)
    }),
    ColumnDef::new("Min", "Shortest", 86.0, |r| {
        Cell::DurationNs(r.stats.min_ns)
    }),
    ColumnDef::new("Max", "Longest", 86.0, |r| Cell::DurationNs(r.stats.max_ns)),
    ColumnDef::new("Median", "Median duration", 86.0, |r| {
        Cell::MaybeDurationNs(r.stats.median_ns)
    }),
    ColumnDef::name("Name", "Kernel name, or the kind of copy or set", |r| {
        Cell::Text(r.name.clone())
    }),
];

/// A row of the Kernels table: the kernel's GPU activity, what the insights know of it, and its
/// share of the kernel time. Data a new column needs goes here (filled in [`kernel_entries`]).
#[derive(Clone, Debug)]
pub struct KernelEntry {
    /// Calls and durations.
    pub activity: ActivityRow,
    /// Occupancy, Tensor Cores, launch delays; `None` when the insights have no such kernel.
    pub insight: Option<KernelInsight>,
    /// Share of all kernel time in the range, in percent.
    pub share_pct: f64,
    /// Its FLOPs figures (its operators' split by time over their arithmetic kernels); `None`
    /// when unknown.
    pub flops: Option<FlopsFigures>,
}

/// The columns of the Kernels table.
pub const KERNEL_COLUMNS: &[ColumnDef<KernelEntry>] = &[
    ColumnDef::new("Time(%)", "Share of all kernel time", 72.0, |k| {
        Cell::Percent(k.share_pct)
    }),
    ColumnDef::new("Time", "Summed duration", 86.0, |k| {
        Cell::DurationNs(k.activity.stats.total_ns)
    }),
    ColumnDef::new("Calls", "Number of executions", 64.0, |k| {
        Cell::Count(k.activity.stats.calls)
    }),
    ColumnDef::new("Avg", "Mean duration", 86.0, |k| {
        Cell::DurationNs(k.activity.stats.avg_ns)
    }),
    ColumnDef::new("Median", "Median duration", 86.0, |k| {
        Cell::MaybeDurationNs(k.activity.stats.median_ns)
    }),
    ColumnDef::new(
        "Occ.",
        "Theoretical occupancy (GPU-time-weighted), as the CUDA occupancy calculator computes it",
        56.0,
        |k| Cell::MaybePercent(k.insight.as_ref().and_then(|i| i.theoretical_occupancy_pct)),
    ),
    ColumnDef::new(
        "Limited by",
        "The resource that caps the resident blocks: warps, registers, shared_memory, blocks",
        112.0,
        |k| {
            let limiter = k.insight.as_ref().and_then(KernelInsight::shown_limiter);
            Cell::Text(limiter.unwrap_or("–").to_string())
        },
    ),
    ColumnDef::new(
        "Achieved",
        "Kineto's estimated achieved occupancy (GPU-time-weighted)",
        76.0,
        |k| Cell::MaybePercent(k.insight.as_ref().and_then(|i| i.achieved_occupancy_pct)),
    ),
    ColumnDef::new("TC", "Runs on Tensor Cores (from its name)", 40.0, |k| {
        Cell::Flag(k.insight.as_ref().is_some_and(|i| i.tensor_cores))
    }),
    ColumnDef::new(
        "Delay med",
        "Median launch delay: kernel start − end of its launching call",
        86.0,
        |k| Cell::MaybeDurationNs(k.insight.as_ref().and_then(|i| i.launch_delay_median_ns)),
    ),
    ColumnDef::new("Delay p95", "95th-percentile launch delay", 86.0, |k| {
        Cell::MaybeDurationNs(k.insight.as_ref().and_then(|i| i.launch_delay_p95_ns))
    }),
    ColumnDef::new("FLOPs", FLOPS_HINT, 84.0, |k| flops_cell(k.flops.as_ref())),
    ColumnDef::new("TFLOP/s", TFLOPS_HINT, 64.0, |k| {
        tflops_cell(k.flops.as_ref())
    }),
    ColumnDef::new("% of peak", PCT_HINT, 76.0, |k| {
        pct_of_peak_cell(k.flops.as_ref())
    }),
    ColumnDef::new("AI", AI_HINT, 52.0, |k| intensity_cell(k.flops.as_ref())),
    ColumnDef::name("Name", "Kernel name", |k| {
        Cell::Text(k.activity.name.clone())
    }),
];

/// The columns of the Copies table.
pub const COPY_COLUMNS: &[ColumnDef<CopyRow>] = &[
    ColumnDef::name("Kind", "Direction of the copy, or set", |r| {
        Cell::Text(r.kind.clone())
    }),
    ColumnDef::new("Count", "Number of copies", 72.0, |r| Cell::Count(r.calls)),
    ColumnDef::new("Bytes", "Bytes moved (1024-based units)", 96.0, |r| {
        Cell::Bytes(r.bytes)
    }),
    ColumnDef::new("Time", "Summed duration", 96.0, |r| {
        Cell::DurationNs(r.total_ns)
    }),
    ColumnDef::new(
        "Bandwidth",
        "Bytes over summed duration, in GB/s (10^9 bytes/s)",
        110.0,
        |r| Cell::Gbps(r.gbps),
    ),
];

/// The columns of the API calls table.
pub const API_COLUMNS: &[ColumnDef<ApiRow>] = &[
    ColumnDef::name("Name", "API function", |r| Cell::Text(r.name.clone())),
    ColumnDef::new("Kind", "CUDA runtime or driver API", 64.0, |r| {
        Cell::Text(r.kind.as_str().to_string())
    }),
    ColumnDef::new("Calls", "Number of calls", 64.0, |r| {
        Cell::Count(r.stats.calls)
    }),
    ColumnDef::new("Total", "Summed duration", 86.0, |r| {
        Cell::DurationNs(r.stats.total_ns)
    }),
    ColumnDef::new("Avg", "Mean duration", 86.0, |r| {
        Cell::DurationNs(r.stats.avg_ns)
    }),
    ColumnDef::new("Min", "Shortest", 86.0, |r| {
        Cell::DurationNs(r.stats.min_ns)
    }),
    ColumnDef::new("Max", "Longest", 86.0, |r| Cell::DurationNs(r.stats.max_ns)),
    ColumnDef::new("Median", "Median duration", 86.0, |r| {
        Cell::MaybeDurationNs(r.stats.median_ns)
    }),
    ColumnDef::new("Time(%)", "Share of all API time", 72.0, |r| {
        Cell::Percent(r.time_pct)
    }),
];

/// A row of the CPU operators table: the operator's times and its FLOPs figures.
#[derive(Clone, Debug)]
pub struct OpEntry {
    /// Calls, CPU and GPU times.
    pub op: OpRow,
    /// Its FLOPs figures; `None` when unknown (no shapes, no formula, or counted at an operator
    /// nested in it).
    pub flops: Option<FlopsFigures>,
}

/// The columns of the CPU operators table.
pub const OP_COLUMNS: &[ColumnDef<OpEntry>] = &[
    ColumnDef::name("Name", "Operator", |r| Cell::Text(r.op.name.clone())),
    ColumnDef::new("Calls", "Number of calls", 64.0, |r| {
        Cell::Count(r.op.calls)
    }),
    ColumnDef::new("Self CPU", "CPU time in the operator itself", 92.0, |r| {
        Cell::DurationNs(r.op.self_ns)
    }),
    ColumnDef::new(
        "CPU total",
        "CPU time including nested operators",
        92.0,
        |r| Cell::DurationNs(r.op.total_ns),
    ),
    ColumnDef::new(
        "GPU self",
        "GPU time of work launched by the operator itself",
        92.0,
        |r| Cell::DurationNs(r.op.gpu_self_ns),
    ),
    ColumnDef::new(
        "GPU total",
        "GPU time of work launched by it or nested operators",
        92.0,
        |r| Cell::DurationNs(r.op.gpu_ns),
    ),
    ColumnDef::new("FLOPs", FLOPS_HINT, 84.0, |r| flops_cell(r.flops.as_ref())),
    ColumnDef::new("TFLOP/s", TFLOPS_HINT, 64.0, |r| {
        tflops_cell(r.flops.as_ref())
    }),
    ColumnDef::new("% of peak", PCT_HINT, 76.0, |r| {
        pct_of_peak_cell(r.flops.as_ref())
    }),
    ColumnDef::new("AI", AI_HINT, 52.0, |r| intensity_cell(r.flops.as_ref())),
];

/// The kernels among `activities`, each with its insight, share of the kernel time and FLOPs
/// figures (against the peaks `over`ridden where the user says), and that kernel time.
fn kernel_entries(
    profile: &Profile,
    activities: Vec<ActivityRow>,
    range: TimeRange,
    over: PeakOverride,
) -> (Vec<KernelEntry>, i64) {
    let kernels: Vec<ActivityRow> = activities
        .into_iter()
        .filter(|r| r.kind == ActivityKind::Kernel)
        .collect();
    let total_ns: i64 = kernels.iter().map(|r| r.stats.total_ns).sum();
    let mut insights: HashMap<String, KernelInsight> = kernel_insights(profile, range)
        .into_iter()
        .map(|k| (k.name.clone(), k))
        .collect();
    let mut flops = figures_by_name(profile, range, true, over);
    let entries = kernels
        .into_iter()
        .map(|activity| KernelEntry {
            insight: insights.remove(&activity.name),
            flops: flops.remove(&activity.name),
            share_pct: analysis::pct(activity.stats.total_ns, total_ns),
            activity,
        })
        .collect();
    (entries, total_ns)
}

impl TableRows {
    /// The rows of `kind` over `range`, from [`warpscope_core::analysis`]; FLOPs figures
    /// against the peaks `over`ridden where the user says.
    pub fn compute(
        profile: &Profile,
        kind: TableKind,
        range: TimeRange,
        over: PeakOverride,
    ) -> Self {
        Self::compute_indexed(profile, None, kind, range, over)
    }

    /// The rows of `kind` over `range`, the GPU activities from `index` (built from `profile`)
    /// when given: the same rows, in time that does not grow with the number of events.
    pub fn compute_indexed(
        profile: &Profile,
        index: Option<&ActivityIndex>,
        kind: TableKind,
        range: TimeRange,
        over: PeakOverride,
    ) -> Self {
        let gpu_activities = || match index {
            Some(index) => index.gpu_activities(profile, range),
            None => analysis::gpu_activities(profile, range),
        };
        match kind {
            TableKind::GpuActivities => {
                let rows = gpu_activities();
                let total_ns = rows.iter().map(|r| r.stats.total_ns).sum();
                Self::from_columns(ACTIVITY_COLUMNS, rows, true, Some(("GPU time", total_ns)))
            }
            TableKind::Kernels => {
                let (entries, total_ns) = kernel_entries(profile, gpu_activities(), range, over);
                Self::from_columns(
                    KERNEL_COLUMNS,
                    entries,
                    true,
                    Some(("kernel time", total_ns)),
                )
            }
            TableKind::Copies => {
                let rows = analysis::copies_by_kind(profile, range);
                let total_ns = rows.iter().map(|r| r.total_ns).sum();
                Self::from_columns(COPY_COLUMNS, rows, false, Some(("copy time", total_ns)))
            }
            TableKind::ApiCalls => {
                let rows = analysis::api_calls(profile, range);
                let total_ns = rows.iter().map(|r| r.stats.total_ns).sum();
                Self::from_columns(API_COLUMNS, rows, true, Some(("API time", total_ns)))
            }
            TableKind::CpuOps => {
                let mut flops = figures_by_name(profile, range, false, over);
                let entries = analysis::cpu_ops(profile, range)
                    .into_iter()
                    .map(|op| OpEntry {
                        flops: flops.remove(&op.name),
                        op,
                    });
                Self::from_columns(OP_COLUMNS, entries, true, None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names<R>(columns: &[ColumnDef<R>]) -> usize {
        columns.iter().filter(|c| c.is_name).count()
    }

    #[test]
    fn every_table_has_one_name_column() {
        assert_eq!(names(ACTIVITY_COLUMNS), 1);
        assert_eq!(names(KERNEL_COLUMNS), 1);
        assert_eq!(names(COPY_COLUMNS), 1);
        assert_eq!(names(API_COLUMNS), 1);
        assert_eq!(names(OP_COLUMNS), 1);
    }

    #[test]
    fn a_kernel_row_has_a_cell_under_every_header_and_is_named_by_its_name_column() {
        let activity = ActivityRow {
            name: "sgemm_128x64".to_string(),
            kind: ActivityKind::Kernel,
            stats: analysis::Stats {
                calls: 3,
                total_ns: 3_000,
                avg_ns: 1_000,
                min_ns: 900,
                max_ns: 1_100,
                median_ns: Some(1_000),
            },
            time_pct: 60.0,
        };
        let entry = KernelEntry {
            activity,
            insight: None,
            share_pct: 75.0,
            flops: None,
        };
        let table = TableRows::from_columns(KERNEL_COLUMNS, [entry], true, None);
        assert_eq!(table.columns.len(), table.rows[0].cells.len());
        assert_eq!(table.columns[table.name_col].title, "Name");
        assert_eq!(table.rows[0].name, "sgemm_128x64");
        let cell = |title: &str| {
            let i = table.columns.iter().position(|c| c.title == title);
            i.map(|i| table.rows[0].cells[i].text())
        };
        assert_eq!(cell("Time(%)").as_deref(), Some("75.00%"));
        assert_eq!(cell("Calls").as_deref(), Some("3"));
        assert_eq!(cell("Limited by").as_deref(), Some("–"));
        assert_eq!(cell("Occ.").as_deref(), Some("–"));
        // Without FLOPs the figures are unknown, never 0.
        assert_eq!(cell("FLOPs").as_deref(), Some("—"));
        assert_eq!(cell("% of peak").as_deref(), Some("—"));
    }
}
