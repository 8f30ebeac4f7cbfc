//! The comparison's tables (kernels, copies, CPU operators), each described once: a few lead
//! columns ([`ColumnDef`]) and columns repeated for every run ([`RunColumn`]), each with the
//! cell it holds, so headers and cells are made from the same entry.

use warpscope_core::analysis::compare::{
    Aligned, Comparison, CopyStats, KernelRow, OpStats, OperatorKernels, Presence,
};

use crate::tables::{
    Cell, ColumnDef, ColumnSpec, Row, TableRows, cells_of, format_bytes, name_column,
};

/// Which per-run columns the kernel table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::struct_excessive_bools)] // one switch per column kind, shown as checkboxes
pub struct KernelColumns {
    /// Summed time per run.
    pub total: bool,
    /// Calls per run.
    pub calls: bool,
    /// Mean time per run.
    pub avg: bool,
    /// Share of the run's GPU time.
    pub share: bool,
    /// Ratio of the total against the baseline's.
    pub ratio: bool,
    /// Difference of the total against the baseline's.
    pub diff: bool,
}

impl Default for KernelColumns {
    fn default() -> Self {
        Self {
            total: true,
            calls: true,
            avg: false,
            share: false,
            ratio: true,
            diff: false,
        }
    }
}

/// A column repeated for every run: the title gets the run's label, `{run}` in the tooltip
/// becomes it, and the cell is that of the run; columns measured against the baseline are left
/// out for the baseline itself.
pub struct RunColumn<R> {
    title: &'static str,
    tip: &'static str,
    width: f32,
    against_baseline: bool,
    cell: fn(&R, usize) -> Cell,
}

impl<R> RunColumn<R> {
    const fn every(
        title: &'static str,
        tip: &'static str,
        width: f32,
        cell: fn(&R, usize) -> Cell,
    ) -> Self {
        Self {
            title,
            tip,
            width,
            against_baseline: false,
            cell,
        }
    }

    const fn vs_baseline(
        title: &'static str,
        tip: &'static str,
        width: f32,
        cell: fn(&R, usize) -> Cell,
    ) -> Self {
        Self {
            title,
            tip,
            width,
            against_baseline: true,
            cell,
        }
    }
}

/// A per-run column of the kernel table that a checkbox shows or hides.
pub struct KernelToggle {
    /// The checkbox's text.
    pub label: &'static str,
    /// The switch in [`KernelColumns`].
    pub shown: fn(&mut KernelColumns) -> &mut bool,
    column: RunColumn<KernelRow>,
}

impl KernelToggle {
    fn is_shown(&self, mut columns: KernelColumns) -> bool {
        *(self.shown)(&mut columns)
    }
}

/// The figures of run `r` in an aligned row, if the run has it.
fn of_run<T>(a: &Aligned<T>, r: usize) -> Option<&T> {
    a.per_run.get(r).and_then(Option::as_ref)
}

fn ratio<T>(a: &Aligned<T>, r: usize) -> Cell {
    Cell::Ratio(a.ratio_vs_baseline.get(r).copied().flatten())
}

const KERNEL_LEAD: &[ColumnDef<KernelRow>] = &[
    ColumnDef::name("Kernel", "Kernel name (matched across runs)", |k| {
        Cell::Text(k.row.name.clone())
    }),
    ColumnDef::new(
        "Status",
        "Which runs have it (two runs: new / gone against the baseline); NCCL",
        110.0,
        |k| Cell::Text(status(&k.row, k.nccl)),
    ),
];

/// The per-run columns of the kernel table, in order, each with its checkbox.
pub const KERNEL_RUN_COLUMNS: &[KernelToggle] = &[
    KernelToggle {
        label: "Total",
        shown: |k| &mut k.total,
        column: RunColumn::every("Total", "Summed time in {run}", 92.0, |k, r| {
            Cell::MaybeDurationNs(of_run(&k.row, r).map(|s| s.total_ns))
        }),
    },
    KernelToggle {
        label: "Calls",
        shown: |k| &mut k.calls,
        column: RunColumn::every("Calls", "Executions in {run}", 70.0, |k, r| {
            Cell::MaybeCount(of_run(&k.row, r).map(|s| s.calls))
        }),
    },
    KernelToggle {
        label: "Avg",
        shown: |k| &mut k.avg,
        column: RunColumn::every("Avg", "Mean time in {run}", 86.0, |k, r| {
            Cell::MaybeDurationNs(of_run(&k.row, r).map(|s| s.avg_ns))
        }),
    },
    KernelToggle {
        label: "Share",
        shown: |k| &mut k.share,
        column: RunColumn::every("Share", "Share of the GPU time of {run}", 72.0, |k, r| {
            Cell::Percent(of_run(&k.row, r).map_or(0.0, |s| s.share_pct))
        }),
    },
    KernelToggle {
        label: "Ratio",
        shown: |k| &mut k.ratio,
        column: RunColumn::vs_baseline(
            "×",
            "Total in {run} over total in the baseline",
            70.0,
            |k, r| ratio(&k.row, r),
        ),
    },
    KernelToggle {
        label: "Diff",
        shown: |k| &mut k.diff,
        column: RunColumn::vs_baseline(
            "Δ",
            "Total in {run} minus total in the baseline",
            92.0,
            |k, r| Cell::DiffNs(k.row.diff_vs_baseline_ns.get(r).copied().unwrap_or(0)),
        ),
    },
];

/// The status column of the tables of aligned rows without NCCL marks (copies, operators,
/// kernels by operator).
const fn status_column<T>() -> ColumnDef<Aligned<T>> {
    ColumnDef::new(
        "Status",
        "Which runs have it (two runs: new / gone)",
        110.0,
        |a| Cell::Text(status(a, false)),
    )
}

const COPY_LEAD: &[ColumnDef<Aligned<CopyStats>>] = &[
    ColumnDef::name("Kind", "Direction of the copy, or set", |a| {
        Cell::Text(a.name.clone())
    }),
    status_column(),
];

const COPY_RUN_COLUMNS: &[RunColumn<Aligned<CopyStats>>] = &[
    RunColumn::every("Count", "Copies in {run}", 70.0, |a, r| {
        Cell::MaybeCount(of_run(a, r).map(|s| s.calls))
    }),
    RunColumn::every("Bytes", "Bytes moved in {run}", 90.0, |a, r| {
        Cell::Text(of_run(a, r).map_or_else(|| "–".to_string(), |s| format_bytes(s.bytes)))
    }),
    RunColumn::every("Time", "Summed time in {run}", 90.0, |a, r| {
        Cell::MaybeDurationNs(of_run(a, r).map(|s| s.total_ns))
    }),
    RunColumn::every("GB/s", "Bandwidth in {run}", 86.0, |a, r| {
        Cell::Gbps(of_run(a, r).map_or(0.0, |s| s.gbps))
    }),
];

const OP_LEAD: &[ColumnDef<Aligned<OpStats>>] = &[
    ColumnDef::name("Operator", "Framework operator", |a| {
        Cell::Text(a.name.clone())
    }),
    status_column(),
];

const OP_RUN_COLUMNS: &[RunColumn<Aligned<OpStats>>] = &[
    RunColumn::every("Calls", "Calls in {run}", 70.0, |a, r| {
        Cell::MaybeCount(of_run(a, r).map(|s| s.calls))
    }),
    RunColumn::every(
        "CPU total",
        "CPU time including nested operators in {run}",
        96.0,
        |a, r| Cell::MaybeDurationNs(of_run(a, r).map(|s| s.total_ns)),
    ),
    RunColumn::every(
        "GPU",
        "GPU time of the work it launched in {run}",
        92.0,
        |a, r| Cell::MaybeDurationNs(of_run(a, r).map(|s| s.gpu_ns)),
    ),
    RunColumn::vs_baseline("×", "CPU total in {run} over the baseline's", 70.0, ratio),
];

const BY_OPERATOR_LEAD: &[ColumnDef<Aligned<OperatorKernels>>] = &[
    ColumnDef::name(
        "Operator",
        "Framework operator whose call launched the kernels (matched across runs)",
        |a| Cell::Text(a.name.clone()),
    ),
    status_column(),
];

const BY_OPERATOR_RUN_COLUMNS: &[RunColumn<Aligned<OperatorKernels>>] = &[
    RunColumn::every(
        "Time",
        "Summed time of its kernels in {run}",
        92.0,
        |a, r| Cell::MaybeDurationNs(of_run(a, r).map(|s| s.total_ns)),
    ),
    RunColumn::vs_baseline("×", "Time in {run} over time in the baseline", 70.0, ratio),
    RunColumn::every("Kernels", "Kernel executions in {run}", 74.0, |a, r| {
        Cell::MaybeCount(of_run(a, r).map(|s| s.kernels))
    }),
    RunColumn::every(
        "Longest kernels",
        "The kernel names with the most time in {run}, longest first (and how many distinct \
         names it ran)",
        280.0,
        |a, r| {
            Cell::Text(of_run(a, r).map_or_else(
                || "–".to_string(),
                |s| {
                    let names = s.top_kernels.join(" · ");
                    if s.distinct_kernels > s.top_kernels.len() {
                        format!("{} names: {names} …", s.distinct_kernels)
                    } else {
                        names
                    }
                },
            ))
        },
    ),
];

/// How a table orders its per-run columns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum RunOrder {
    /// Each run's columns together, run after run.
    ByRun,
    /// Each column for every run together (all runs' times side by side), column after column.
    ByColumn,
}

/// The table of `items`: the `lead` columns, then the `per_run` columns of every run in
/// `order`.
fn run_table<R>(
    c: &Comparison,
    lead: &[ColumnDef<R>],
    per_run: &[&RunColumn<R>],
    items: &[R],
    selects_names: bool,
    order: RunOrder,
) -> TableRows {
    let runs = c.runs.len();
    // (column, run) in display order, leaving out columns measured against the baseline for
    // the baseline itself.
    let mut slots: Vec<(&RunColumn<R>, usize)> = match order {
        RunOrder::ByRun => (0..runs)
            .flat_map(|r| per_run.iter().map(move |&col| (col, r)))
            .collect(),
        RunOrder::ByColumn => per_run
            .iter()
            .flat_map(|&col| (0..runs).map(move |r| (col, r)))
            .collect(),
    };
    slots.retain(|(col, r)| !(col.against_baseline && *r == c.baseline));
    let labels: Vec<String> = (0..runs).map(|r| run_label(c, r)).collect();
    let mut columns: Vec<ColumnSpec> = lead.iter().map(ColumnDef::spec).collect();
    columns.extend(slots.iter().map(|(col, r)| {
        let l = &labels[*r];
        ColumnSpec::new(
            format!("{} {l}", col.title),
            col.tip.replace("{run}", l),
            col.width,
        )
    }));
    let name_col = name_column(lead);
    let rows = items
        .iter()
        .map(|item| {
            let mut cells = cells_of(lead, item);
            cells.extend(slots.iter().map(|(col, r)| (col.cell)(item, *r)));
            Row::named_by(cells, name_col)
        })
        .collect();
    TableRows {
        columns,
        name_col,
        rows,
        selects_names,
        total: None,
    }
}

/// The kernels across runs, with the per-run columns `shown` switches on.
pub fn kernel_table(c: &Comparison, shown: KernelColumns) -> TableRows {
    let per_run: Vec<&RunColumn<KernelRow>> = KERNEL_RUN_COLUMNS
        .iter()
        .filter(|t| t.is_shown(shown))
        .map(|t| &t.column)
        .collect();
    run_table(c, KERNEL_LEAD, &per_run, &c.kernels, true, RunOrder::ByRun)
}

/// The copies by kind across runs.
pub fn copy_table(c: &Comparison) -> TableRows {
    let per_run: Vec<_> = COPY_RUN_COLUMNS.iter().collect();
    run_table(c, COPY_LEAD, &per_run, &c.copies, false, RunOrder::ByRun)
}

/// The CPU operators across runs.
pub fn op_table(c: &Comparison) -> TableRows {
    let per_run: Vec<_> = OP_RUN_COLUMNS.iter().collect();
    run_table(c, OP_LEAD, &per_run, &c.ops, true, RunOrder::ByRun)
}

/// The kernels by launching operator across runs: each figure for every run side by side
/// (the runs' kernel names differ, so the long name columns come last).
pub fn by_operator_table(c: &Comparison) -> TableRows {
    let per_run: Vec<_> = BY_OPERATOR_RUN_COLUMNS.iter().collect();
    run_table(
        c,
        BY_OPERATOR_LEAD,
        &per_run,
        &c.kernels_by_operator,
        true,
        RunOrder::ByColumn,
    )
}

/// The status of an aligned row: with two runs, `new` or `gone` against the baseline; with
/// more, which runs have it (`not in #3`, `only in #2, #4`), since one "gone" cannot say which;
/// and `NCCL`.
fn status<T>(row: &Aligned<T>, nccl: bool) -> String {
    let mut words = Vec::new();
    let runs = row.per_run.len();
    let listed = |pick: bool| {
        row.per_run
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_some() == pick)
            .map(|(i, _)| format!("#{}", i + 1))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let present = row.per_run.iter().filter(|r| r.is_some()).count();
    if runs <= 2 {
        if row.presence.contains(&Presence::New) {
            words.push("new".to_string());
        }
        if row.presence.contains(&Presence::Vanished) {
            words.push("gone".to_string());
        }
    } else if present < runs {
        words.push(if present * 2 <= runs {
            format!("only in {}", listed(true))
        } else {
            format!("not in {}", listed(false))
        });
    }
    if nccl {
        words.push("NCCL".to_string());
    }
    words.join(" ")
}

/// A run as the column headers name it: its number (what `only in #2` means), its label, and
/// `(base)` for the baseline.
fn run_label(c: &Comparison, r: usize) -> String {
    let label = &c.runs[r].label;
    if r == c.baseline {
        format!("#{} {label} (base)", r + 1)
    } else {
        format!("#{} {label}", r + 1)
    }
}
