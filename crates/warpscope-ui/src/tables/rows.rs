//! The rows of the tables: what each column holds and how each cell prints and sorts, computed
//! from the analysis over a time range.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::format_duration;
use warpscope_core::analysis::insight::{KernelInsight, kernel_insights};
use warpscope_core::analysis::range_index::ActivityIndex;
use warpscope_core::analysis::{self, ActivityKind};
use warpscope_core::{Profile, TimeRange};

use super::TableKind;
use super::flops_cells::{FLOPS_COLUMNS, FlopsFigures};

/// One value of a table cell; it knows how to print and how to compare itself.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A duration in nanoseconds.
    DurationNs(i64),
    /// A duration that may be unknown (the median of recorded nvprof rows).
    MaybeDurationNs(Option<i64>),
    /// A count.
    Count(u64),
    /// A size in bytes, printed 1024-based like nvprof.
    Bytes(u64),
    /// A percentage.
    Percent(f64),
    /// A bandwidth in GB/s (10^9 bytes per second).
    Gbps(f64),
    /// A count that may be absent (a kernel a run does not have).
    MaybeCount(Option<u64>),
    /// A ratio against a baseline (`1.25×`), absent when there is nothing to compare.
    Ratio(Option<f64>),
    /// A signed difference of durations (`+1.2000ms`, `-35.000us`).
    DiffNs(i64),
    /// A percentage that may be unknown (occupancy without launch details).
    MaybePercent(Option<f64>),
    /// Yes or nothing (runs on Tensor Cores).
    Flag(bool),
    /// A FLOPs figure that may be unknown (`—`, never 0; sorted last either way), with what it
    /// rests on, shown on hover.
    Figure {
        /// The value, in the figure's unit.
        value: Option<f64>,
        /// What the value is.
        unit: FigureUnit,
        /// The hover text: what the figure is, and the peak it is measured against.
        note: String,
    },
    /// Text (names, kinds).
    Text(String),
}

/// What a [`Cell::Figure`] holds (`docs/flops.md`, section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureUnit {
    /// A FLOP count.
    Flops,
    /// Achieved TFLOP/s.
    TflopsPerS,
    /// A percentage of the peak.
    PctOfPeak,
    /// FLOPs per byte.
    Intensity,
}

impl Cell {
    /// The cell as shown.
    pub fn text(&self) -> String {
        match self {
            Self::DurationNs(ns) => format_duration(*ns),
            Self::MaybeDurationNs(Some(ns)) => format_duration(*ns),
            Self::MaybeDurationNs(None) => "–".to_string(),
            Self::Count(n) => n.to_string(),
            Self::Bytes(b) => format_bytes(*b),
            Self::Percent(p) => format!("{p:.2}%"),
            Self::Gbps(g) => format!("{g:.2} GB/s"),
            Self::MaybeCount(Some(n)) => n.to_string(),
            Self::MaybeCount(None) | Self::Ratio(None) => "–".to_string(),
            Self::Ratio(Some(r)) => format!("{r:.2}×"),
            Self::DiffNs(0) => "0".to_string(),
            Self::DiffNs(d) if *d > 0 => format!("+{}", format_duration(*d)),
            Self::DiffNs(d) => format!("-{}", format_duration(d.saturating_abs())),
            Self::MaybePercent(Some(p)) => format!("{p:.0}%"),
            Self::MaybePercent(None) => "–".to_string(),
            Self::Flag(true) => "yes".to_string(),
            Self::Flag(false) => String::new(),
            Self::Figure { value: None, .. } => crate::flops::UNKNOWN.to_string(),
            Self::Figure {
                value: Some(v),
                unit,
                ..
            } => match unit {
                FigureUnit::Flops => crate::flops::format_flops(*v),
                FigureUnit::TflopsPerS => crate::flops::format_tflops(*v),
                FigureUnit::PctOfPeak => format!("{v:.1}%"),
                FigureUnit::Intensity => format!("{v:.2}"),
            },
            Self::Text(s) => s.clone(),
        }
    }

    /// What hovering the cell tells beyond its text, if anything.
    pub fn note(&self) -> Option<&str> {
        match self {
            Self::Figure { note, .. } if !note.is_empty() => Some(note),
            _ => None,
        }
    }

    /// True for a figure that is unknown: such cells sort last whichever the direction.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Figure { value: None, .. })
    }

    /// True for numbers (right-aligned, monospace).
    pub fn is_numeric(&self) -> bool {
        !matches!(self, Self::Text(_))
    }

    /// Orders two cells of one column (absent values first).
    pub fn compare(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::DurationNs(a), Self::DurationNs(b)) => a.cmp(b),
            (Self::MaybeDurationNs(a), Self::MaybeDurationNs(b)) => a.cmp(b),
            (Self::Count(a) | Self::Bytes(a), Self::Count(b) | Self::Bytes(b)) => a.cmp(b),
            (Self::Percent(a) | Self::Gbps(a), Self::Percent(b) | Self::Gbps(b)) => a.total_cmp(b),
            (Self::MaybeCount(a), Self::MaybeCount(b)) => a.cmp(b),
            (Self::Ratio(a), Self::Ratio(b)) => match (a, b) {
                (Some(x), Some(y)) => x.total_cmp(y),
                _ => a.is_some().cmp(&b.is_some()),
            },
            (Self::DiffNs(a), Self::DiffNs(b)) => a.cmp(b),
            (Self::MaybePercent(a), Self::MaybePercent(b)) => match (a, b) {
                (Some(x), Some(y)) => x.total_cmp(y),
                _ => a.is_some().cmp(&b.is_some()),
            },
            (Self::Flag(a), Self::Flag(b)) => a.cmp(b),
            (Self::Figure { value: a, .. }, Self::Figure { value: b, .. }) => match (a, b) {
                (Some(x), Some(y)) => x.total_cmp(y),
                _ => a.is_some().cmp(&b.is_some()),
            },
            (Self::Text(a), Self::Text(b)) => a.to_lowercase().cmp(&b.to_lowercase()),
            _ => Ordering::Equal,
        }
    }
}

/// A byte count the way nvprof prints it: 1024-based units, 5 significant digits
/// (`512B`, `4.0000KB`, `1.5000MB`, `12.000GB`).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes}B");
    }
    #[allow(clippy::cast_precision_loss)]
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let decimals = if value >= 100.0 {
        2
    } else if value >= 10.0 {
        3
    } else {
        4
    };
    format!("{value:.decimals$}{}", UNITS[unit])
}

/// One column of a table.
#[derive(Clone, Debug)]
pub struct ColumnSpec {
    /// Header text.
    pub title: Cow<'static, str>,
    /// What the column holds, shown when hovering the header.
    pub hint: Cow<'static, str>,
    /// Initial width in points; the name column takes the rest.
    pub width: f32,
}

impl ColumnSpec {
    /// A column whose texts are made at run time (one per compared run, say), at least
    /// `width` points wide and wide enough for its title.
    pub fn new(title: impl Into<String>, hint: impl Into<String>, width: f32) -> Self {
        let title = title.into();
        #[allow(clippy::cast_precision_loss)]
        let title_width = title.chars().count() as f32 * 7.5 + 26.0;
        Self {
            title: Cow::Owned(title),
            hint: Cow::Owned(hint.into()),
            width: if width > 0.0 {
                width.max(title_width)
            } else {
                0.0
            },
        }
    }
}

const fn col(title: &'static str, hint: &'static str, width: f32) -> ColumnSpec {
    ColumnSpec {
        title: Cow::Borrowed(title),
        hint: Cow::Borrowed(hint),
        width,
    }
}

const ACTIVITY_COLUMNS: [ColumnSpec; 8] = [
    col("Time(%)", "Share of the total time of the table", 72.0),
    col("Time", "Summed duration", 86.0),
    col("Calls", "Number of executions", 64.0),
    col("Avg", "Mean duration", 86.0),
    col("Min", "Shortest", 86.0),
    col("Max", "Longest", 86.0),
    col("Median", "Median duration", 86.0),
    col("Name", "Kernel name, or the kind of copy or set", 0.0),
];

/// The kernel table's columns before the FLOPs columns and the name.
const KERNEL_COLUMNS: [ColumnSpec; 11] = [
    col("Time(%)", "Share of all kernel time", 72.0),
    col("Time", "Summed duration", 86.0),
    col("Calls", "Number of executions", 64.0),
    col("Avg", "Mean duration", 86.0),
    col("Median", "Median duration", 86.0),
    col(
        "Occ.",
        "Theoretical occupancy (GPU-time-weighted), as the CUDA occupancy calculator computes it",
        56.0,
    ),
    col(
        "Limited by",
        "The resource that caps the resident blocks: warps, registers, shared_memory, blocks",
        112.0,
    ),
    col(
        "Achieved",
        "Kineto's estimated achieved occupancy (GPU-time-weighted)",
        76.0,
    ),
    col("TC", "Runs on Tensor Cores (from its name)", 40.0),
    col(
        "Delay med",
        "Median launch delay: kernel start − end of its launching call",
        86.0,
    ),
    col("Delay p95", "95th-percentile launch delay", 86.0),
];

const COPY_COLUMNS: [ColumnSpec; 5] = [
    col("Kind", "Direction of the copy, or set", 0.0),
    col("Count", "Number of copies", 72.0),
    col("Bytes", "Bytes moved (1024-based units)", 96.0),
    col("Time", "Summed duration", 96.0),
    col(
        "Bandwidth",
        "Bytes over summed duration, in GB/s (10^9 bytes/s)",
        110.0,
    ),
];

const API_COLUMNS: [ColumnSpec; 9] = [
    col("Name", "API function", 0.0),
    col("Kind", "CUDA runtime or driver API", 64.0),
    col("Calls", "Number of calls", 64.0),
    col("Total", "Summed duration", 86.0),
    col("Avg", "Mean duration", 86.0),
    col("Min", "Shortest", 86.0),
    col("Max", "Longest", 86.0),
    col("Median", "Median duration", 86.0),
    col("Time(%)", "Share of all API time", 72.0),
];

const OP_COLUMNS: [ColumnSpec; 6] = [
    col("Name", "Operator", 0.0),
    col("Calls", "Number of calls", 64.0),
    col("Self CPU", "CPU time in the operator itself", 92.0),
    col("CPU total", "CPU time including nested operators", 92.0),
    col(
        "GPU self",
        "GPU time of work launched by the operator itself",
        92.0,
    ),
    col(
        "GPU total",
        "GPU time of work launched by it or nested operators",
        92.0,
    ),
];

/// One row of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The name the filter matches and a click selects.
    pub name: String,
    /// The cells, one per column (the name column holds [`Cell::Text`]).
    pub cells: Vec<Cell>,
    pub(super) name_lower: String,
}

impl Row {
    /// A row; `cells` includes the name column.
    pub fn new(name: String, cells: Vec<Cell>) -> Self {
        let name_lower = name.to_lowercase();
        Self {
            name,
            cells,
            name_lower,
        }
    }
}

/// The rows of one table, as the analysis ranked them (longest total first).
#[derive(Clone, Debug)]
pub struct TableRows {
    /// The columns.
    pub columns: Vec<ColumnSpec>,
    /// Which column holds the name.
    pub name_col: usize,
    /// The rows.
    pub rows: Vec<Row>,
    /// True if a row's name can be selected on the timeline.
    pub selects_names: bool,
    /// The summed time of all rows and what it is called (`GPU time`), when it means something.
    pub total: Option<(&'static str, i64)>,
}

impl TableRows {
    /// The rows of `kind` over `range`, from [`warpscope_core::analysis`].
    pub fn compute(profile: &Profile, kind: TableKind, range: TimeRange) -> Self {
        Self::compute_indexed(profile, None, kind, range)
    }

    /// The rows of `kind` over `range`, the GPU activities from `index` (built from `profile`)
    /// when given: the same rows, in time that does not grow with the number of events.
    pub fn compute_indexed(
        profile: &Profile,
        index: Option<&ActivityIndex>,
        kind: TableKind,
        range: TimeRange,
    ) -> Self {
        let gpu_activities = |range| match index {
            Some(index) => index.gpu_activities(profile, range),
            None => analysis::gpu_activities(profile, range),
        };
        match kind {
            TableKind::GpuActivities => {
                let rows = gpu_activities(range);
                let total_ns: i64 = rows.iter().map(|r| r.stats.total_ns).sum();
                let rows = rows
                    .into_iter()
                    .map(|r| {
                        let s = r.stats;
                        let cells = vec![
                            Cell::Percent(r.time_pct),
                            Cell::DurationNs(s.total_ns),
                            Cell::Count(s.calls),
                            Cell::DurationNs(s.avg_ns),
                            Cell::DurationNs(s.min_ns),
                            Cell::DurationNs(s.max_ns),
                            Cell::MaybeDurationNs(s.median_ns),
                            Cell::Text(r.name.clone()),
                        ];
                        Row::new(r.name, cells)
                    })
                    .collect();
                Self {
                    columns: ACTIVITY_COLUMNS.to_vec(),
                    name_col: 7,
                    rows,
                    selects_names: true,
                    total: Some(("GPU time", total_ns)),
                }
            }
            TableKind::Kernels => {
                let mut rows = gpu_activities(range);
                rows.retain(|r| r.kind == ActivityKind::Kernel);
                let total_ns: i64 = rows.iter().map(|r| r.stats.total_ns).sum();
                let insights: std::collections::HashMap<String, _> =
                    kernel_insights(profile, range)
                        .into_iter()
                        .map(|k| (k.name.clone(), k))
                        .collect();
                let flops = FlopsFigures::of(profile, range, true);
                let rows = rows
                    .into_iter()
                    .map(|r| {
                        let s = r.stats;
                        let k = insights.get(&r.name);
                        #[allow(clippy::cast_precision_loss)]
                        let pct = if total_ns > 0 {
                            s.total_ns as f64 * 100.0 / total_ns as f64
                        } else {
                            0.0
                        };
                        let occupancy = k.and_then(|k| k.theoretical_occupancy_pct);
                        let limiter = k.and_then(KernelInsight::shown_limiter).unwrap_or("–");
                        let mut cells = vec![
                            Cell::Percent(pct),
                            Cell::DurationNs(s.total_ns),
                            Cell::Count(s.calls),
                            Cell::DurationNs(s.avg_ns),
                            Cell::MaybeDurationNs(s.median_ns),
                            Cell::MaybePercent(occupancy),
                            Cell::Text(limiter.to_string()),
                            Cell::MaybePercent(k.and_then(|k| k.achieved_occupancy_pct)),
                            Cell::Flag(k.is_some_and(|k| k.tensor_cores)),
                            Cell::MaybeDurationNs(k.and_then(|k| k.launch_delay_median_ns)),
                            Cell::MaybeDurationNs(k.and_then(|k| k.launch_delay_p95_ns)),
                        ];
                        cells.extend(flops.cells(&r.name));
                        cells.push(Cell::Text(r.name.clone()));
                        Row::new(r.name, cells)
                    })
                    .collect();
                let mut columns = KERNEL_COLUMNS.to_vec();
                columns.extend(FLOPS_COLUMNS);
                columns.push(col("Name", "Kernel name", 0.0));
                Self {
                    name_col: columns.len() - 1,
                    columns,
                    rows,
                    selects_names: true,
                    total: Some(("kernel time", total_ns)),
                }
            }
            TableKind::Copies => {
                let rows = analysis::copies_by_kind(profile, range);
                let total_ns = rows.iter().map(|r| r.total_ns).sum();
                let rows = rows
                    .into_iter()
                    .map(|r| {
                        let cells = vec![
                            Cell::Text(r.kind.clone()),
                            Cell::Count(r.calls),
                            Cell::Bytes(r.bytes),
                            Cell::DurationNs(r.total_ns),
                            Cell::Gbps(r.gbps),
                        ];
                        Row::new(r.kind, cells)
                    })
                    .collect();
                Self {
                    columns: COPY_COLUMNS.to_vec(),
                    name_col: 0,
                    rows,
                    selects_names: false,
                    total: Some(("copy time", total_ns)),
                }
            }
            TableKind::ApiCalls => {
                let rows = analysis::api_calls(profile, range);
                let total_ns = rows.iter().map(|r| r.stats.total_ns).sum();
                let rows = rows
                    .into_iter()
                    .map(|r| {
                        let s = r.stats;
                        let cells = vec![
                            Cell::Text(r.name.clone()),
                            Cell::Text(r.kind.as_str().to_string()),
                            Cell::Count(s.calls),
                            Cell::DurationNs(s.total_ns),
                            Cell::DurationNs(s.avg_ns),
                            Cell::DurationNs(s.min_ns),
                            Cell::DurationNs(s.max_ns),
                            Cell::MaybeDurationNs(s.median_ns),
                            Cell::Percent(r.time_pct),
                        ];
                        Row::new(r.name, cells)
                    })
                    .collect();
                Self {
                    columns: API_COLUMNS.to_vec(),
                    name_col: 0,
                    rows,
                    selects_names: true,
                    total: Some(("API time", total_ns)),
                }
            }
            TableKind::CpuOps => {
                let flops = FlopsFigures::of(profile, range, false);
                let rows = analysis::cpu_ops(profile, range)
                    .into_iter()
                    .map(|r| {
                        let mut cells = vec![
                            Cell::Text(r.name.clone()),
                            Cell::Count(r.calls),
                            Cell::DurationNs(r.self_ns),
                            Cell::DurationNs(r.total_ns),
                            Cell::DurationNs(r.gpu_self_ns),
                            Cell::DurationNs(r.gpu_ns),
                        ];
                        cells.extend(flops.cells(&r.name));
                        Row::new(r.name, cells)
                    })
                    .collect();
                let mut columns = OP_COLUMNS.to_vec();
                columns.extend(FLOPS_COLUMNS);
                Self {
                    columns,
                    name_col: 0,
                    rows,
                    selects_names: true,
                    total: None,
                }
            }
        }
    }
}
