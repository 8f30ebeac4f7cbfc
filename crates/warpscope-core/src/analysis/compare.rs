//! Comparing runs: N profiles (a batch-size sweep, 1 vs 2 vs 4 GPUs, FP32 vs AMP) side by side,
//! with kernels, copies and CPU operators aligned by name across runs and measured against a
//! baseline run.
//!
//! [`compare_runs`] computes everything once from the profiles; the UI filters and sorts the result,
//! the CLI serialises it (the [`Comparison`] struct is the JSON contract). Labels come from
//! [`RunLabel`], steps from [`detect_steps`], and several ranks of one distributed job become one
//! profile with [`merge_ranks`].

mod by_operator;
mod labels;
mod ranks;
mod run_flops;
mod steps;

pub use by_operator::{NAMES_SHOWN, OperatorKernels, kernels_by_operator};
pub use labels::{LabelParam, RunLabel, file_stem, parse_params};
pub use ranks::{MergeError, is_nccl_kernel, merge_ranks, profile_rank, rank_shifts_ns};
pub use run_flops::RunFlops;
pub use steps::{StepSource, StepStats, detect_steps, step_numbers, step_range, step_ranges};

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::{
    ActivityKind, ActivityRow, CopyRow, OpRow, copies_by_kind, cpu_ops, gbps, gpu_activities,
    gpu_busy_ns, is_recorded_only, pct,
};
use crate::model::Profile;
use crate::time::TimeRange;

/// Why runs could not be compared.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    /// No run was given.
    #[error("no runs to compare")]
    NoRuns,
    /// The number of labels differs from the number of profiles.
    #[error("{profiles} profiles but {labels} labels")]
    LabelCount {
        /// Number of profiles.
        profiles: usize,
        /// Number of labels.
        labels: usize,
    },
    /// The baseline index is not one of the runs.
    #[error("baseline {baseline} is not one of the {runs} runs")]
    BaselineOutOfRange {
        /// The index asked for.
        baseline: usize,
        /// Number of runs.
        runs: usize,
    },
}

/// Totals of one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunSummary {
    /// The run's label.
    pub label: String,
    /// The parameters in the label (`batch=32`).
    pub params: Vec<LabelParam>,
    /// File the run was read from.
    pub path: String,
    /// Format id (`chrome-json`, `nsys-sqlite`, ...).
    pub format: &'static str,
    /// True for the baseline run.
    pub is_baseline: bool,
    /// Summed duration of all kernels, copies and sets (nvprof's GPU activities total).
    pub gpu_total_ns: i64,
    /// Summed duration of kernels only.
    pub kernel_total_ns: i64,
    /// Summed duration of NCCL kernels ([`is_nccl_kernel`]).
    pub nccl_total_ns: i64,
    /// `gpu_total_ns` of this run divided by that of the baseline.
    pub gpu_total_ratio_vs_baseline: Option<f64>,
    /// Number of devices with GPU work.
    pub devices: u32,
    /// Time during which the GPUs were busy, summed over devices (overlapping work on one device
    /// counts once).
    pub gpu_busy_ns: i64,
    /// `gpu_busy_ns` as a share of `span_ns` times the number of devices, in percent.
    pub gpu_busy_pct: f64,
    /// Wall time from the first to the last event of the profile (0 for a summary without
    /// events).
    pub span_ns: i64,
    /// Training steps, when the profile marks them.
    pub steps: Option<StepStats>,
    /// Mean wall time of a step.
    pub time_per_step_ns: Option<i64>,
    /// GPU time (`gpu_total_ns`) divided by the number of steps.
    pub gpu_time_per_step_ns: Option<i64>,
    /// The batch size (label parameter `batch`).
    pub batch: Option<f64>,
    /// `time_per_step_ns` divided by the batch size.
    pub time_per_sample_ns: Option<f64>,
    /// Value of the sweep parameter ([`Comparison::sweep`]) for this run.
    pub sweep_value: Option<f64>,
    /// True if the profile has CPU operators (the `ops` table has entries for it).
    pub has_cpu_ops: bool,
    /// Why the GPUs were not busy (`docs/analysis.md`), summed over devices; `None` for a
    /// profile without events.
    pub why: Option<RunWhy>,
    /// The largest allocated-memory peak of any GPU (`docs/memory.md`); `None` where the
    /// profile records no GPU memory.
    pub peak_allocated_bytes: Option<i64>,
    /// The largest reserved-memory peak of any GPU.
    pub peak_reserved_bytes: Option<i64>,
    /// Model FLOPs, TFLOP/s and MFU (`docs/flops.md`); `None` where no operator has known
    /// FLOPs.
    pub flops: Option<RunFlops>,
}

/// The insight figures of one run, summed over its devices ([`super::insight::analyze`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunWhy {
    /// Summed device windows (first to last GPU activity).
    pub window_ns: i64,
    /// Busy over window, in percent.
    pub busy_pct: f64,
    /// Idle time the GPUs waited for the CPU.
    pub host_wait_ns: i64,
    /// Short idle time between queued work.
    pub kernel_wait_ns: i64,
    /// Other idle time.
    pub other_idle_ns: i64,
    /// Share of kernel time on Tensor Cores, in percent.
    pub tensor_core_pct: f64,
    /// Share of kernel time in kernels shorter than a typical launch, in percent.
    pub launch_bound_pct: f64,
    /// The rule of the finding with the most time at stake.
    pub top_finding: Option<&'static str>,
}

impl RunWhy {
    /// The figures of `profile` over the whole run.
    pub fn of(profile: &Profile) -> Option<Self> {
        let ins = super::insight::analyze(profile, TimeRange::ALL, &Default::default());
        if ins.devices.is_empty() {
            return None;
        }
        let sum = |f: fn(&super::insight::DeviceBreakdown) -> i64| {
            super::saturating_sum(ins.devices.iter().map(f))
        };
        let window_ns = sum(|d| d.window_ns);
        Some(Self {
            window_ns,
            busy_pct: pct(sum(|d| d.busy_ns), window_ns),
            host_wait_ns: sum(|d| d.idle_breakdown.host_wait_ns),
            kernel_wait_ns: sum(|d| d.idle_breakdown.kernel_wait_ns),
            other_idle_ns: sum(|d| d.idle_breakdown.other_ns),
            tensor_core_pct: ins.tensor_core_pct,
            launch_bound_pct: ins.launch.launch_bound_pct,
            top_finding: ins.findings.first().map(|f| f.rule.as_str()),
        })
    }
}

/// A row's figures in one run, for the measure compared across runs.
pub trait Measured {
    /// The time compared against the baseline.
    fn compared_ns(&self) -> i64;
}

/// A kernel's figures in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelStats {
    /// Number of executions.
    pub calls: u64,
    /// Summed duration.
    pub total_ns: i64,
    /// Mean duration (rounded down).
    pub avg_ns: i64,
    /// Shortest execution.
    pub min_ns: i64,
    /// Longest execution.
    pub max_ns: i64,
    /// Share of the run's GPU time (`gpu_total_ns`), in percent.
    pub share_pct: f64,
}

impl Measured for KernelStats {
    fn compared_ns(&self) -> i64 {
        self.total_ns
    }
}

/// A kind of copy in one run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CopyStats {
    /// Number of copies.
    pub calls: u64,
    /// Bytes moved (copies of unknown size count 0).
    pub bytes: u64,
    /// Summed duration.
    pub total_ns: i64,
    /// Achieved bandwidth in GB/s over the summed duration.
    pub gbps: f64,
    /// Share of the run's GPU time, in percent.
    pub share_pct: f64,
}

impl Measured for CopyStats {
    fn compared_ns(&self) -> i64 {
        self.total_ns
    }
}

/// A CPU operator in one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpStats {
    /// Number of calls.
    pub calls: u64,
    /// CPU time including nested events.
    pub total_ns: i64,
    /// Mean CPU time per call (rounded down).
    pub avg_ns: i64,
    /// CPU time in the operator itself.
    pub self_ns: i64,
    /// GPU time of the work it launched.
    pub gpu_ns: i64,
}

impl Measured for OpStats {
    fn compared_ns(&self) -> i64 {
        self.total_ns
    }
}

/// Whether a row is present in a run and in the baseline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Presence {
    /// In this run and in the baseline.
    Both,
    /// In this run, not in the baseline: new.
    New,
    /// In the baseline, not in this run: vanished.
    Vanished,
    /// In neither (only in some other run).
    Neither,
}

/// One name aligned across runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Aligned<T> {
    /// Display name (for kernels, the name as the first run that has it writes it; a name
    /// that only the mangled form gives is shown demangled).
    pub name: String,
    /// The figures in each run, in run order; `None` where the run does not have it.
    pub per_run: Vec<Option<T>>,
    /// Time in each run divided by the time in the baseline (total time for kernels and copies,
    /// total CPU time for operators); `None` where either is missing or the baseline's is 0.
    pub ratio_vs_baseline: Vec<Option<f64>>,
    /// Time in each run minus the time in the baseline, a missing entry counting 0 (so a new
    /// kernel shows its whole time, a vanished one minus the baseline's).
    pub diff_vs_baseline_ns: Vec<i64>,
    /// Presence in each run relative to the baseline.
    pub presence: Vec<Presence>,
}

impl<T> Aligned<T> {
    /// True if the row is present in every run.
    pub fn in_all_runs(&self) -> bool {
        self.per_run.iter().all(Option::is_some)
    }
}

/// A kernel aligned across runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KernelRow {
    /// The aligned figures.
    #[serde(flatten)]
    pub row: Aligned<KernelStats>,
    /// True for NCCL communication kernels.
    pub nccl: bool,
}

/// Several runs side by side.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Index of the baseline run.
    pub baseline: usize,
    /// The label parameter that varies across runs and is a number in every run (`batch`,
    /// `gpus`), the x axis of per-sample plots; `None` when there is none.
    pub sweep: Option<String>,
    /// The runs, in the order given.
    pub runs: Vec<RunSummary>,
    /// Kernels aligned by name ([`kernel_match_key`]), by time in the baseline then longest
    /// elsewhere.
    pub kernels: Vec<KernelRow>,
    /// Copies and sets aligned by kind (`HtoD`, `Memset`, ...).
    pub copies: Vec<Aligned<CopyStats>>,
    /// CPU operators aligned by name (empty when no run has any).
    pub ops: Vec<Aligned<OpStats>>,
    /// Kernels grouped by the framework operator that launched them, aligned by operator name
    /// ([`kernels_by_operator`]): where kernel names differ (runs on GPUs of two vendors), the
    /// same operator's kernels still meet. Empty when no run links operators to kernels.
    pub kernels_by_operator: Vec<Aligned<OperatorKernels>>,
}

impl Comparison {
    /// Orders each table by the row's longest time in any run (longest first, ties in the
    /// order [`compare_runs`] gave) and keeps its first `top` rows (all for 0): the tables
    /// `warpscope compare` prints and its JSON holds.
    pub fn rank_and_cut(&mut self, top: usize) {
        self.kernels
            .sort_by_key(|k| std::cmp::Reverse(longest_ns(&k.row)));
        self.copies
            .sort_by_key(|r| std::cmp::Reverse(longest_ns(r)));
        self.ops.sort_by_key(|r| std::cmp::Reverse(longest_ns(r)));
        self.kernels_by_operator
            .sort_by_key(|r| std::cmp::Reverse(longest_ns(r)));
        if top > 0 {
            self.kernels_by_operator.truncate(top);
            self.kernels.truncate(top);
            self.copies.truncate(top);
            self.ops.truncate(top);
        }
    }
}

/// The longest time of a row in any run (what rows are ranked by).
fn longest_ns<T: Measured>(row: &Aligned<T>) -> i64 {
    row.per_run
        .iter()
        .flatten()
        .map(Measured::compared_ns)
        .max()
        .unwrap_or(0)
}

/// The key kernels are matched on across runs: the display name, demangled when it is still
/// an Itanium-mangled name (`_Z...`), with white space next to punctuation removed so that
/// `float const *` and `float const*`, or `> >` and `>>`, written by different tools, match.
///
/// Importers store demangled display names (keeping the mangled form in
/// [`crate::model::KernelInfo::mangled_name`]); a file that gives only the mangled name is
/// demangled here, so both forms of one kernel meet.
pub fn kernel_match_key(name: &str) -> String {
    let demangled = crate::demangle::demangle(name);
    let text = demangled.as_deref().unwrap_or(name).trim();
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        if c.is_whitespace() {
            // Keep one space only between two word characters (`unsigned long`).
            while chars.peek().is_some_and(|n| n.is_whitespace()) {
                chars.next();
            }
            let next = chars.peek().copied();
            if prev.is_some_and(word) && next.is_some_and(word) {
                out.push(' ');
            }
            continue;
        }
        out.push(c);
        prev = Some(c);
    }
    out
}

/// Compares runs. `labels[i]` labels `profiles[i]` (use [`RunLabel::of_profile`] for the
/// labels their file names give); `baseline` is the index of the run the others are measured
/// against. Linear in the number of events (each profile's tables are computed once).
///
/// # Errors
///
/// [`CompareError::NoRuns`] for no profiles, [`CompareError::LabelCount`] when `labels` and
/// `profiles` differ in length, [`CompareError::BaselineOutOfRange`] for a bad `baseline`.
pub fn compare_runs(
    profiles: &[&Profile],
    labels: &[RunLabel],
    baseline: usize,
) -> Result<Comparison, CompareError> {
    if profiles.is_empty() {
        return Err(CompareError::NoRuns);
    }
    if labels.len() != profiles.len() {
        return Err(CompareError::LabelCount {
            profiles: profiles.len(),
            labels: labels.len(),
        });
    }
    if baseline >= profiles.len() {
        return Err(CompareError::BaselineOutOfRange {
            baseline,
            runs: profiles.len(),
        });
    }
    let activities: Vec<Vec<ActivityRow>> = profiles
        .iter()
        .map(|p| gpu_activities(p, TimeRange::ALL))
        .collect();
    let gpu_totals: Vec<i64> = activities
        .iter()
        .map(|rows| super::saturating_sum(rows.iter().map(|r| r.stats.total_ns)))
        .collect();
    let ops: Vec<Vec<OpRow>> = profiles
        .iter()
        .map(|p| cpu_ops(p, TimeRange::ALL))
        .collect();

    let kernels = align_kernels(&activities, &gpu_totals, baseline);
    let copies: Vec<Vec<(String, CopyStats)>> = profiles
        .iter()
        .zip(&activities)
        .zip(&gpu_totals)
        .map(|((p, rows), &total)| copies_of(p, rows, total))
        .collect();
    let copies = align(copies, baseline);
    let op_rows: Vec<Vec<(String, OpStats)>> = ops
        .iter()
        .map(|rows| {
            rows.iter()
                .map(|r| {
                    let stats = OpStats {
                        calls: r.calls,
                        total_ns: r.total_ns,
                        avg_ns: r.total_ns / i64::try_from(r.calls.max(1)).unwrap_or(i64::MAX),
                        self_ns: r.self_ns,
                        gpu_ns: r.gpu_ns,
                    };
                    (r.name.clone(), stats)
                })
                .collect()
        })
        .collect();
    let ops_aligned = align(op_rows, baseline);
    let by_op = align(
        profiles.iter().map(|p| kernels_by_operator(p)).collect(),
        baseline,
    );

    let sweep = sweep_key(labels);
    let mut runs: Vec<RunSummary> = Vec::with_capacity(profiles.len());
    for (i, profile) in profiles.iter().enumerate() {
        runs.push(run_summary(
            profile,
            &labels[i],
            &activities[i],
            !ops[i].is_empty(),
            sweep.as_deref(),
        ));
    }
    let base_total = runs[baseline].gpu_total_ns;
    for (i, run) in runs.iter_mut().enumerate() {
        run.is_baseline = i == baseline;
        run.gpu_total_ratio_vs_baseline = ratio(run.gpu_total_ns, base_total);
    }
    Ok(Comparison {
        baseline,
        sweep,
        runs,
        kernels,
        copies,
        ops: ops_aligned,
        kernels_by_operator: by_op,
    })
}

/// The totals of one run.
fn run_summary(
    profile: &Profile,
    label: &RunLabel,
    activities: &[ActivityRow],
    has_cpu_ops: bool,
    sweep: Option<&str>,
) -> RunSummary {
    let gpu_total_ns = super::saturating_sum(activities.iter().map(|r| r.stats.total_ns));
    let kernels = activities.iter().filter(|r| r.kind == ActivityKind::Kernel);
    let kernel_total_ns = super::saturating_sum(kernels.clone().map(|r| r.stats.total_ns));
    let nccl_total_ns = super::saturating_sum(
        kernels
            .filter(|r| is_nccl_kernel(&r.name))
            .map(|r| r.stats.total_ns),
    );
    let busy = gpu_busy_ns(profile, TimeRange::ALL);
    let devices = u32::try_from(busy.len()).unwrap_or(u32::MAX);
    let gpu_busy_ns = super::saturating_sum(busy.iter().map(|&(_, b)| b));
    let span_ns = profile.span_ns().map_or(0, |(s, e)| e.saturating_sub(s));
    let steps = detect_steps(profile);
    let step_count = steps
        .as_ref()
        .map(|s| i64::try_from(s.count).unwrap_or(i64::MAX))
        .filter(|&n| n > 0);
    let time_per_step_ns = steps.as_ref().map(|s| s.mean_ns);
    let gpu_peaks: Vec<_> = super::memory::memory_peaks(profile, TimeRange::ALL)
        .into_iter()
        .filter(|p| matches!(p.device, crate::model::MemoryDevice::Gpu(_)))
        .collect();
    let batch = label.number("batch").filter(|&b| b > 0.0);
    #[allow(clippy::cast_precision_loss)]
    let time_per_sample_ns = time_per_step_ns
        .zip(batch)
        .map(|(step, batch)| step as f64 / batch);
    RunSummary {
        label: label.text.clone(),
        params: label.params.clone(),
        path: profile.source.path.display().to_string(),
        format: profile.source.format.as_str(),
        is_baseline: false,
        gpu_total_ns,
        kernel_total_ns,
        nccl_total_ns,
        gpu_total_ratio_vs_baseline: None,
        devices,
        gpu_busy_ns,
        gpu_busy_pct: pct(
            gpu_busy_ns,
            span_ns.saturating_mul(i64::from(devices.max(1))),
        ),
        span_ns,
        time_per_step_ns,
        gpu_time_per_step_ns: step_count.map(|n| gpu_total_ns / n),
        steps,
        batch,
        time_per_sample_ns,
        sweep_value: sweep.and_then(|key| label.number(key)),
        has_cpu_ops,
        why: RunWhy::of(profile),
        peak_allocated_bytes: gpu_peaks.iter().map(|p| p.peak_allocated_bytes).max(),
        peak_reserved_bytes: gpu_peaks.iter().map(|p| p.peak_reserved_bytes).max(),
        flops: RunFlops::of(profile),
    }
}

/// The order to show runs in: by the swept number ([`sweep_key`]) when there is one (batch 8,
/// 16, 32, 128 whatever order the files came in; runs with equal values keep their order),
/// otherwise as given. Returns indices into `labels`.
pub fn sweep_order(labels: &[RunLabel]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..labels.len()).collect();
    if let Some(key) = sweep_key(labels) {
        order.sort_by(|&a, &b| {
            let (x, y) = (labels[a].number(&key), labels[b].number(&key));
            x.partial_cmp(&y).unwrap_or(std::cmp::Ordering::Equal)
        });
    }
    order
}

/// Puts runs (anything kept per run, with their labels) in the order of the swept number
/// ([`sweep_order`]) and finds the baseline there: the run given at index `baseline` in the
/// original order, or the first after sorting (the smallest swept number) when `None`.
pub fn order_by_sweep<T>(
    runs: Vec<T>,
    labels: Vec<RunLabel>,
    baseline: Option<usize>,
) -> (Vec<T>, Vec<RunLabel>, usize) {
    let order = sweep_order(&labels);
    let baseline = baseline
        .and_then(|b| order.iter().position(|&i| i == b))
        .unwrap_or(0);
    let mut runs: Vec<Option<T>> = runs.into_iter().map(Some).collect();
    let mut labels: Vec<Option<RunLabel>> = labels.into_iter().map(Some).collect();
    let runs = order.iter().filter_map(|&i| runs[i].take()).collect();
    let labels = order.iter().filter_map(|&i| labels[i].take()).collect();
    (runs, labels, baseline)
}

/// The label parameter to plot against: numeric in every run and not the same in all; `batch`
/// and `gpus` first, then the others in the order of the first run's label.
pub fn sweep_key(labels: &[RunLabel]) -> Option<String> {
    let candidates = ["batch", "gpus"]
        .into_iter()
        .map(str::to_string)
        .chain(labels.first()?.params.iter().map(|p| p.key.clone()));
    for key in candidates {
        let values: Option<Vec<f64>> = labels.iter().map(|l| l.number(&key)).collect();
        let Some(values) = values else {
            continue;
        };
        if labels.len() == 1 || values.iter().any(|&v| v.to_bits() != values[0].to_bits()) {
            return Some(key);
        }
    }
    None
}

fn ratio(value_ns: i64, base_ns: i64) -> Option<f64> {
    #[allow(clippy::cast_precision_loss)]
    (base_ns > 0).then(|| value_ns as f64 / base_ns as f64)
}

/// Kernels of each run keyed by [`kernel_match_key`], aligned. Names that meet on one key in
/// one run (a mangled and a demangled form) are added together.
fn align_kernels(
    activities: &[Vec<ActivityRow>],
    gpu_totals: &[i64],
    baseline: usize,
) -> Vec<KernelRow> {
    // Demangling costs; do it once per distinct name over all runs.
    let mut keys: FxHashMap<&str, String> = FxHashMap::default();
    // The name shown for a key: as the first run that has it writes it.
    let mut display: FxHashMap<String, String> = FxHashMap::default();
    let mut per_run: Vec<Vec<(String, KernelStats)>> = Vec::with_capacity(activities.len());
    for (rows, &total) in activities.iter().zip(gpu_totals) {
        let mut by_key: FxHashMap<String, usize> = FxHashMap::default();
        let mut run: Vec<(String, KernelStats)> = Vec::new();
        for r in rows.iter().filter(|r| r.kind == ActivityKind::Kernel) {
            let key = keys
                .entry(r.name.as_str())
                .or_insert_with(|| kernel_match_key(&r.name))
                .clone();
            let s = &r.stats;
            if let Some(&at) = by_key.get(&key) {
                let k = &mut run[at].1;
                k.calls = k.calls.saturating_add(s.calls);
                k.total_ns = k.total_ns.saturating_add(s.total_ns);
                k.min_ns = k.min_ns.min(s.min_ns);
                k.max_ns = k.max_ns.max(s.max_ns);
                k.avg_ns = k.total_ns / i64::try_from(k.calls.max(1)).unwrap_or(i64::MAX);
                k.share_pct = pct(k.total_ns, total);
                continue;
            }
            let shown = display.entry(key.clone()).or_insert_with(|| r.name.clone());
            if shown.starts_with("_Z") && !r.name.starts_with("_Z") {
                shown.clone_from(&r.name);
            }
            by_key.insert(key.clone(), run.len());
            run.push((
                key,
                KernelStats {
                    calls: s.calls,
                    total_ns: s.total_ns,
                    avg_ns: s.avg_ns,
                    min_ns: s.min_ns,
                    max_ns: s.max_ns,
                    share_pct: pct(s.total_ns, total),
                },
            ));
        }
        per_run.push(run);
    }
    align(per_run, baseline)
        .into_iter()
        .map(|mut row| {
            // A name only ever seen mangled is shown demangled (the key).
            if let Some(name) = display.remove(&row.name)
                && !(name.starts_with("_Z") && name != row.name)
            {
                row.name = name;
            }
            KernelRow {
                nccl: is_nccl_kernel(&row.name),
                row,
            }
        })
        .collect()
}

/// Copies of one run by kind: from the copy events, or, for an nvprof summary without events,
/// from its recorded `[CUDA memcpy HtoD]` / `[CUDA memset]` rows (sizes unknown there).
fn copies_of(
    profile: &Profile,
    activities: &[ActivityRow],
    total: i64,
) -> Vec<(String, CopyStats)> {
    let stats = |calls: u64, bytes: u64, total_ns: i64| CopyStats {
        calls,
        bytes,
        total_ns,
        gbps: gbps(bytes, total_ns),
        share_pct: pct(total_ns, total),
    };
    if is_recorded_only(profile) {
        return activities
            .iter()
            .filter(|r| r.kind != ActivityKind::Kernel)
            .map(|r| {
                let kind = r
                    .name
                    .strip_prefix("[CUDA memcpy ")
                    .or_else(|| r.name.strip_prefix("[HIP memcpy "))
                    .and_then(|k| k.strip_suffix(']'))
                    .unwrap_or(if r.kind == ActivityKind::Memset {
                        "Memset"
                    } else {
                        r.name.as_str()
                    });
                (kind.to_string(), stats(r.stats.calls, 0, r.stats.total_ns))
            })
            .collect();
    }
    copies_by_kind(profile, TimeRange::ALL)
        .into_iter()
        .map(|r: CopyRow| (r.kind, stats(r.calls, r.bytes, r.total_ns)))
        .collect()
}

/// Aligns rows by name across runs: one [`Aligned`] per name present in any run, ordered by
/// time in the baseline (longest first), then by the longest time in any run, then by name.
fn align<T: Measured>(per_run: Vec<Vec<(String, T)>>, baseline: usize) -> Vec<Aligned<T>> {
    let runs = per_run.len();
    let mut index: FxHashMap<String, usize> = FxHashMap::default();
    let mut rows: Vec<Aligned<T>> = Vec::new();
    for (run, entries) in per_run.into_iter().enumerate() {
        for (name, stats) in entries {
            let at = if let Some(&at) = index.get(&name) {
                at
            } else {
                index.insert(name.clone(), rows.len());
                rows.push(Aligned {
                    name,
                    per_run: (0..runs).map(|_| None).collect(),
                    ratio_vs_baseline: vec![None; runs],
                    diff_vs_baseline_ns: vec![0; runs],
                    presence: vec![Presence::Neither; runs],
                });
                rows.len() - 1
            };
            rows[at].per_run[run] = Some(stats);
        }
    }
    for row in &mut rows {
        let base = row.per_run[baseline].as_ref().map(Measured::compared_ns);
        for run in 0..runs {
            let this = row.per_run[run].as_ref().map(Measured::compared_ns);
            row.diff_vs_baseline_ns[run] = this.unwrap_or(0) - base.unwrap_or(0);
            row.ratio_vs_baseline[run] = this.zip(base).and_then(|(t, b)| ratio(t, b));
            row.presence[run] = match (this.is_some(), base.is_some()) {
                (true, true) => Presence::Both,
                (true, false) => Presence::New,
                (false, true) => Presence::Vanished,
                (false, false) => Presence::Neither,
            };
        }
    }
    let sort_key = |row: &Aligned<T>| {
        let base = row.per_run[baseline]
            .as_ref()
            .map_or(0, Measured::compared_ns);
        let most = row
            .per_run
            .iter()
            .flatten()
            .map(Measured::compared_ns)
            .max()
            .unwrap_or(0);
        (std::cmp::Reverse(base), std::cmp::Reverse(most))
    };
    rows.sort_by(|a, b| {
        sort_key(a)
            .cmp(&sort_key(b))
            .then_with(|| a.name.cmp(&b.name))
    });
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::ProfileBuilder;
    use crate::model::{EventKind, Format, GpuLane, KernelInfo, TraceId, TrackKey};

    #[test]
    fn mangled_and_demangled_names_match() {
        assert_eq!(kernel_match_key("_Z3fooi"), "foo(int)");
        assert_eq!(kernel_match_key("foo(int)"), "foo(int)");
        assert_eq!(
            kernel_match_key("_Z6kernelPfS_i"),
            kernel_match_key("kernel(float*, float*, int)")
        );
        assert_eq!(
            kernel_match_key("void f<std::array<char*, 3ul> >(float const *)"),
            kernel_match_key("void f<std::array<char*, 3ul>>(float const*)")
        );
        assert_eq!(kernel_match_key("g(unsigned  long)"), "g(unsigned long)");
        // Not a valid mangled name: kept as written.
        assert_eq!(kernel_match_key("_Znot a symbol"), "_Znot a symbol");
        assert_eq!(
            kernel_match_key("volta_sgemm_128x64_nn"),
            "volta_sgemm_128x64_nn"
        );
    }

    /// A run with the given (kernel name, duration) list on device 0, stream 7, and a
    /// `ProfilerStep#1` covering it all.
    fn run(path: &str, kernels: &[(&str, i64)]) -> Profile {
        let mut b = ProfileBuilder::new(path.into(), Format::ChromeJson);
        let gpu = b.track(TrackKey::Gpu {
            device: 0,
            context: 1,
            stream: 7,
            lane: GpuLane::Work,
        });
        let cpu = b.track(TrackKey::Thread {
            pid: TraceId::Int(1),
            tid: TraceId::Int(1),
        });
        let mut t = 0;
        for &(name, dur) in kernels {
            let id = b.intern(name);
            b.push_kernel(gpu, t, dur, id, KernelInfo::default(), 0);
            t += dur;
        }
        let step = b.intern("ProfilerStep#1");
        b.push(cpu, 0, t.max(1), step, EventKind::UserAnnotation);
        b.finish()
    }

    #[test]
    fn kernels_align_with_ratios_and_presence() {
        let base = run("m_b8.json", &[("a", 100), ("b", 50), ("_Z3fooi", 10)]);
        let other = run(
            "m_b16.json",
            &[("a", 150), ("c", 40), ("foo(int)", 30), ("a", 50)],
        );
        let labels = [RunLabel::of_profile(&base), RunLabel::of_profile(&other)];
        let c = compare_runs(&[&base, &other], &labels, 0).unwrap();
        assert_eq!(c.sweep.as_deref(), Some("batch"));
        let names: Vec<&str> = c.kernels.iter().map(|k| k.row.name.as_str()).collect();
        assert_eq!(names, vec!["a", "b", "foo(int)", "c"]);
        let a = &c.kernels[0].row;
        assert_eq!(a.per_run[1].as_ref().unwrap().calls, 2);
        assert_eq!(a.per_run[1].as_ref().unwrap().total_ns, 200);
        assert_eq!(a.per_run[1].as_ref().unwrap().avg_ns, 100);
        assert_eq!(a.ratio_vs_baseline, vec![Some(1.0), Some(2.0)]);
        assert_eq!(a.diff_vs_baseline_ns, vec![0, 100]);
        assert_eq!(a.presence, vec![Presence::Both, Presence::Both]);
        assert!(a.in_all_runs());
        let b = &c.kernels[1].row;
        assert_eq!(b.presence, vec![Presence::Both, Presence::Vanished]);
        assert_eq!(b.diff_vs_baseline_ns, vec![0, -50]);
        assert_eq!(b.ratio_vs_baseline, vec![Some(1.0), None]);
        let foo = &c.kernels[2].row;
        assert_eq!(foo.ratio_vs_baseline[1], Some(3.0));
        let new = &c.kernels[3].row;
        assert_eq!(new.presence, vec![Presence::Neither, Presence::New]);
        assert_eq!(new.diff_vs_baseline_ns, vec![0, 40]);
        assert!(!new.in_all_runs());
        // Shares of each run's GPU time.
        assert!((a.per_run[0].as_ref().unwrap().share_pct - 100.0 * 100.0 / 160.0).abs() < 1e-9);
        // Runs: totals, steps, per-sample time.
        assert_eq!(c.runs[0].gpu_total_ns, 160);
        assert_eq!(c.runs[1].gpu_total_ns, 270);
        assert_eq!(c.runs[1].gpu_total_ratio_vs_baseline, Some(270.0 / 160.0));
        assert!(c.runs[0].is_baseline && !c.runs[1].is_baseline);
        assert_eq!(c.runs[1].time_per_step_ns, Some(270));
        assert_eq!(c.runs[1].time_per_sample_ns, Some(270.0 / 16.0));
        assert_eq!(c.runs[1].sweep_value, Some(16.0));
        assert_eq!(c.runs[0].gpu_busy_pct, 100.0);
        assert!(c.ops.is_empty());
    }

    #[test]
    fn comparison_errors() {
        let p = run("x.json", &[("a", 1)]);
        let label = RunLabel::of_profile(&p);
        assert_eq!(compare_runs(&[], &[], 0), Err(CompareError::NoRuns));
        assert_eq!(
            compare_runs(&[&p], &[], 0),
            Err(CompareError::LabelCount {
                profiles: 1,
                labels: 0
            })
        );
        assert_eq!(
            compare_runs(&[&p], &[label], 1),
            Err(CompareError::BaselineOutOfRange {
                baseline: 1,
                runs: 1
            })
        );
    }

    #[test]
    fn json_contract() {
        let base = run("m_b8.json", &[("a", 100)]);
        let other = run("m_b16.json", &[("b", 100)]);
        let labels = [RunLabel::of_profile(&base), RunLabel::of_profile(&other)];
        let c = compare_runs(&[&base, &other], &labels, 0).unwrap();
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["runs"][0]["label"], "batch=8");
        assert_eq!(v["runs"][0]["path"], "m_b8.json");
        assert_eq!(v["runs"][0]["gpu_total_ns"], 100);
        assert_eq!(v["kernels"][0]["name"], "a");
        assert_eq!(v["kernels"][0]["per_run"][0]["calls"], 1);
        assert_eq!(v["kernels"][0]["per_run"][0]["total_ns"], 100);
        assert_eq!(v["kernels"][0]["per_run"][0]["avg_ns"], 100);
        assert!(v["kernels"][0]["per_run"][1].is_null());
        assert_eq!(v["kernels"][0]["ratio_vs_baseline"][0], 1.0);
        assert!(v["kernels"][0]["ratio_vs_baseline"][1].is_null());
        assert_eq!(v["kernels"][0]["presence"][1], "vanished");
        assert_eq!(v["kernels"][1]["presence"][1], "new");
        assert_eq!(v["kernels"][0]["nccl"], false);
        assert_eq!(v["sweep"], "batch");
    }

    #[test]
    fn sweep_needs_a_number_that_varies() {
        let l = |s: &str| RunLabel::from_file_name(s);
        assert_eq!(sweep_key(&[l("m_b8_amp"), l("m_b8_fp32")]), None);
        assert_eq!(
            sweep_key(&[l("m_b8_ddp1"), l("m_b8_ddp2")]).as_deref(),
            Some("gpus")
        );
        assert_eq!(sweep_key(&[l("m_b8"), l("m")]), None);
        assert_eq!(
            sweep_key(&[l("m_seq128"), l("m_seq256")]).as_deref(),
            Some("seq")
        );
    }
}
