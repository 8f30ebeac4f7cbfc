//! The comparison of several runs: per-run totals, aligned kernels, copies and CPU operators
//! with ratios against the baseline, scaling charts for sweeps, and the runs' timelines stacked
//! with linked zoom and pan.
//!
//! Build a [`CompareState`] once from the profiles (the comparison is computed then) and call
//! [`compare_ui`] every frame.

use std::sync::Arc;

use egui::Ui;
use warpscope_core::analysis::compare::{
    CompareError, Comparison, RunFlops, RunLabel, compare_runs,
};
use warpscope_core::analysis::flops::PeakOverride;
use warpscope_core::model::EventKind;
use warpscope_core::{Profile, TimeRange};

mod chart_parts;
mod charts;
mod flops_chart;
mod memory_chart;
mod tables;
mod totals;

use charts::charts_ui;
pub use charts::{per_step_series, run_color, top_kernels};
pub use tables::{KERNEL_RUN_COLUMNS, KernelColumns, KernelToggle};
use tables::{by_operator_table, copy_table, kernel_table, op_table};

use crate::Selection;
use crate::tables::{Row, SortBy, TableRows, filtered_sorted, rows_table_ui};
use crate::timeline::{TimelineState, timeline_ui};

/// The pages of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ComparePage {
    /// Per-kernel table.
    #[default]
    Kernels,
    /// Kernels grouped by the framework operator that launched them: where runs on GPUs of
    /// two vendors share no kernel name, the same operator's kernels still meet.
    ByOperator,
    /// Copies by kind.
    Copies,
    /// CPU operators.
    Ops,
    /// Scaling charts and the top kernels per run.
    Charts,
    /// The runs' timelines, stacked.
    Timelines,
}

impl ComparePage {
    /// The pages in tab order.
    pub const ALL: [Self; 6] = [
        Self::Kernels,
        Self::ByOperator,
        Self::Copies,
        Self::Ops,
        Self::Charts,
        Self::Timelines,
    ];

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            Self::Kernels => "Kernels",
            Self::ByOperator => "Kernels by operator",
            Self::Copies => "Copies",
            Self::Ops => "CPU operators",
            Self::Charts => "Charts",
            Self::Timelines => "Timelines",
        }
    }

    /// What the tab's tooltip says of the page, where its title does not say enough.
    pub fn hint(self) -> Option<&'static str> {
        match self {
            Self::ByOperator => Some(
                "Each run's kernels under the framework operator whose call launched them \
                 (the innermost one around it), matched across runs by operator name: runs on \
                 GPUs of two vendors (cuBLAS and hipBLASLt kernels) meet here although no \
                 kernel name is shared (docs/analysis.md)",
            ),
            _ => None,
        }
    }

    fn table_index(self) -> Option<usize> {
        match self {
            Self::Kernels => Some(0),
            Self::Copies => Some(1),
            Self::Ops => Some(2),
            Self::ByOperator => Some(3),
            Self::Charts | Self::Timelines => None,
        }
    }
}

/// Where the stacked timelines line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alignment {
    /// At each run's first GPU activity.
    FirstGpuActivity,
    /// At the start of `ProfilerStep#N` in each run (runs without it: at the first GPU
    /// activity).
    Step(u32),
}

/// A comparison tab: the runs, the comparison computed once, and what the user looks at.
pub struct CompareState {
    /// The comparison.
    pub comparison: Comparison,
    /// The runs, in the comparison's order.
    pub profiles: Vec<Arc<Profile>>,
    /// The page shown.
    pub page: ComparePage,
    /// The filter text of the tables (case-insensitive substring of the name).
    pub filter: String,
    /// The kernel columns shown.
    pub kernel_columns: KernelColumns,
    /// The name selected in a table or on a timeline; highlighted in every run.
    pub selected: Option<String>,
    /// How the stacked timelines line up.
    pub alignment: Alignment,
    /// One timeline per run.
    pub timelines: Vec<TimelineState>,
    /// One selection per run (its highlighted name follows [`Self::selected`]).
    pub selections: Vec<Selection>,
    tables: [TableRows; 4],
    sort: [Option<SortBy>; 4],
    view: Vec<usize>,
    view_key: Option<(usize, String, Option<SortBy>, KernelColumns)>,
    /// The window shared by the timelines, relative to each run's alignment point, and the
    /// alignment it was made for.
    linked: Option<(Alignment, TimeRange)>,
    /// The peaks the runs' FLOPs figures (MFU) are measured against ([`Self::set_peaks`]).
    peaks: PeakOverride,
}

impl CompareState {
    /// Compares `profiles` labelled `labels` against run `baseline` (an index).
    pub fn new(
        profiles: Vec<Arc<Profile>>,
        labels: &[RunLabel],
        baseline: usize,
    ) -> Result<Self, CompareError> {
        let refs: Vec<&Profile> = profiles.iter().map(AsRef::as_ref).collect();
        let comparison = compare_runs(&refs, labels, baseline)?;
        let kernel_columns = KernelColumns::default();
        let tables = [
            kernel_table(&comparison, kernel_columns),
            copy_table(&comparison),
            op_table(&comparison),
            by_operator_table(&comparison),
        ];
        let timelines = profiles.iter().map(|p| TimelineState::new(p)).collect();
        let selections = vec![Selection::default(); profiles.len()];
        Ok(Self {
            comparison,
            profiles,
            page: ComparePage::default(),
            filter: String::new(),
            kernel_columns,
            selected: None,
            alignment: Alignment::FirstGpuActivity,
            timelines,
            selections,
            tables,
            sort: [None; 4],
            view: Vec::new(),
            view_key: None,
            linked: None,
            peaks: PeakOverride::default(),
        })
    }

    /// Measures the runs' FLOPs figures (MFU) against `peaks` (the viewer's override): computed
    /// again for every run when they differ from the peaks used so far, else nothing to do.
    pub fn set_peaks(&mut self, peaks: PeakOverride) {
        if self.peaks == peaks {
            return;
        }
        for (run, profile) in self.comparison.runs.iter_mut().zip(&self.profiles) {
            run.flops = RunFlops::with_peaks(profile, peaks);
        }
        self.peaks = peaks;
    }

    /// The tab title: the runs' labels.
    pub fn title(&self) -> String {
        let labels: Vec<&str> = self
            .comparison
            .runs
            .iter()
            .map(|r| r.label.as_str())
            .collect();
        format!("Compare {}", labels.join(" | "))
    }

    /// The rows of the current table page in display order (filtered and sorted).
    pub fn visible_rows(&self) -> Vec<&Row> {
        let Some(t) = self.page.table_index() else {
            return Vec::new();
        };
        self.view
            .iter()
            .filter_map(|&i| self.tables[t].rows.get(i))
            .collect()
    }

    /// The table of `page` (kernels, kernels by operator, copies or operators).
    pub fn table(&self, page: ComparePage) -> Option<&TableRows> {
        page.table_index().map(|t| &self.tables[t])
    }

    /// Selects `name` in the tables and highlights it on every run's timeline.
    pub fn select(&mut self, name: Option<String>) {
        for (sel, p) in self.selections.iter_mut().zip(&self.profiles) {
            sel.name = name.as_deref().and_then(|n| p.strings.find(n));
            sel.event = None;
        }
        self.selected = name;
    }

    /// Each run's alignment point, in its own profile nanoseconds.
    pub fn anchors_ns(&self) -> Vec<i64> {
        self.profiles
            .iter()
            .map(|p| anchor_ns(p, self.alignment))
            .collect()
    }

    fn refresh_view(&mut self) {
        let Some(t) = self.page.table_index() else {
            return;
        };
        let key = (t, self.filter.clone(), self.sort[t], self.kernel_columns);
        if self.view_key.as_ref() == Some(&key) {
            return;
        }
        if t == 0
            && self
                .view_key
                .as_ref()
                .is_none_or(|k| k.3 != self.kernel_columns)
        {
            self.tables[0] = kernel_table(&self.comparison, self.kernel_columns);
            self.sort[0] = None;
        }
        self.view = filtered_sorted(&self.tables[t].rows, &self.filter, self.sort[t]);
        self.view_key = Some((t, self.filter.clone(), self.sort[t], self.kernel_columns));
    }
}

/// Where `profile` lines up under `alignment`.
fn anchor_ns(profile: &Profile, alignment: Alignment) -> i64 {
    let first_gpu = || {
        profile
            .tracks
            .iter()
            .filter(|t| t.key.is_gpu())
            .filter_map(|t| {
                t.events
                    .kind
                    .iter()
                    .position(|k| k.is_gpu_activity())
                    .map(|i| t.events.start_ns[i])
            })
            .min()
            .unwrap_or(0)
    };
    match alignment {
        Alignment::FirstGpuActivity => first_gpu(),
        Alignment::Step(n) => profile
            .strings
            .find(&format!("ProfilerStep#{n}"))
            .and_then(|id| {
                profile
                    .tracks
                    .iter()
                    .filter(|t| !t.key.is_gpu())
                    .filter_map(|t| {
                        t.events
                            .name
                            .iter()
                            .zip(&t.events.kind)
                            .position(|(&name, &kind)| name == id && kind != EventKind::Instant)
                            .map(|i| t.events.start_ns[i])
                    })
                    .min()
            })
            .unwrap_or_else(first_gpu),
    }
}

/// Draws the comparison: the per-run totals, the page tabs and the current page; MFU against
/// `peaks` (the viewer's override).
pub fn compare_ui(ui: &mut Ui, state: &mut CompareState, peaks: PeakOverride) {
    state.set_peaks(peaks);
    totals::totals_ui(ui, state);
    if let Some(t) = state.peaks.tflops {
        ui.label(
            egui::RichText::new(format!(
                "MFU against the user override: {t} TFLOP/s for every run and precision (a \
                 profile's Roofline view changes it)"
            ))
            .small(),
        );
    }
    ui.separator();
    ui.horizontal(|ui| {
        for page in ComparePage::ALL {
            // No run links kernels to operators (nvprof, Nsight Systems without NVTX ops).
            if page == ComparePage::ByOperator && state.comparison.kernels_by_operator.is_empty() {
                continue;
            }
            let tab = ui.selectable_label(state.page == page, page.title());
            let tab = match page.hint() {
                Some(hint) => tab.on_hover_text(hint),
                None => tab,
            };
            if tab.clicked() {
                state.page = page;
            }
        }
        if state.page.table_index().is_some() {
            ui.separator();
            ui.add(
                egui::TextEdit::singleline(&mut state.filter)
                    .hint_text("Filter by name")
                    .desired_width(220.0),
            );
        }
        if state.page == ComparePage::Kernels {
            ui.separator();
            for toggle in KERNEL_RUN_COLUMNS {
                ui.checkbox((toggle.shown)(&mut state.kernel_columns), toggle.label);
            }
        }
        if state.page == ComparePage::Timelines {
            ui.separator();
            alignment_ui(ui, state);
        }
    });
    ui.add_space(2.0);
    match state.page {
        ComparePage::Kernels | ComparePage::ByOperator | ComparePage::Copies | ComparePage::Ops => {
            page_table_ui(ui, state);
        }
        ComparePage::Charts => charts_ui(ui, state),
        ComparePage::Timelines => timelines_ui(ui, state),
    }
}

/// The per-run totals: one row per run.
fn page_table_ui(ui: &mut Ui, state: &mut CompareState) {
    state.refresh_view();
    let Some(t) = state.page.table_index() else {
        return;
    };
    let table = &state.tables[t];
    ui.label(
        egui::RichText::new(format!(
            "{} of {} rows · ratios against {}",
            state.view.len(),
            table.rows.len(),
            state.comparison.runs[state.comparison.baseline].label
        ))
        .weak(),
    );
    let selected = state.selected.clone();
    let out = egui::ScrollArea::horizontal()
        .id_salt(("compare_table_scroll", t))
        .show(ui, |ui| {
            rows_table_ui(
                ui,
                ("compare_table", t),
                table,
                &state.view,
                state.sort[t],
                &|r| selected.as_deref() == Some(r.name.as_str()),
                None,
            )
        })
        .inner;
    if let Some((col, numeric)) = out.header_clicked {
        state.sort[t] = Some(SortBy::after_click(state.sort[t], col, numeric));
    }
    if let Some(ri) = out.clicked {
        let name = state.tables[t].rows.get(ri).map(|r| r.name.clone());
        if state.tables[t].selects_names {
            state.select(name);
        } else {
            state.selected = name;
        }
    }
}

fn alignment_ui(ui: &mut Ui, state: &mut CompareState) {
    ui.label("Align at");
    let mut step = match state.alignment {
        Alignment::Step(n) => Some(n),
        Alignment::FirstGpuActivity => None,
    };
    if ui
        .selectable_label(step.is_none(), "first GPU activity")
        .clicked()
    {
        state.alignment = Alignment::FirstGpuActivity;
    }
    let step_button = ui.selectable_label(step.is_some(), "ProfilerStep#");
    if step_button.clicked() && step.is_none() {
        let n = first_step_number(&state.profiles).unwrap_or(1);
        step = Some(n);
        state.alignment = Alignment::Step(n);
    }
    if let Some(mut n) = step
        && ui
            .add(egui::DragValue::new(&mut n).range(0..=100_000))
            .labelled_by(step_button.id)
            .changed()
    {
        state.alignment = Alignment::Step(n);
    }
}

/// The lowest `ProfilerStep#N` in any run.
fn first_step_number(profiles: &[Arc<Profile>]) -> Option<u32> {
    profiles
        .iter()
        .flat_map(|p| {
            (0..u32::try_from(p.strings.len()).unwrap_or(u32::MAX)).filter_map(|i| {
                p.strings
                    .get(warpscope_core::StrId(i))
                    .strip_prefix("ProfilerStep#")?
                    .parse::<u32>()
                    .ok()
            })
        })
        .min()
}

/// The runs' timelines stacked, each with its label; zoom and pan in one moves all of them,
/// kept aligned at each run's alignment point.
fn timelines_ui(ui: &mut Ui, state: &mut CompareState) {
    let anchors = state.anchors_ns();
    let n = state.profiles.len();
    // The shared window, relative to the anchors: the baseline's whole run at first.
    let base = state.comparison.baseline;
    let rel = match state.linked {
        Some((a, r)) if a == state.alignment => r,
        _ => {
            let v = state.timelines[base].visible_range();
            let off = anchors[base];
            TimeRange::new(v.start_ns - off, v.end_ns - off)
        }
    };
    let gap = 6.0;
    #[allow(clippy::cast_precision_loss)]
    let each_h = ((ui.available_height() - gap * n as f32) / n as f32).max(150.0);
    let mut changed: Option<TimeRange> = None;
    let mut clicked_name: Option<Option<String>> = None;
    egui::ScrollArea::vertical()
        .id_salt("compare_timelines")
        .auto_shrink(false)
        .show(ui, |ui| {
            for (i, &off) in anchors.iter().enumerate() {
                let expected = TimeRange::new(rel.start_ns + off, rel.end_ns + off);
                if state.timelines[i].visible_range() != expected {
                    state.timelines[i].set_visible_range(expected);
                }
                ui.horizontal(|ui| {
                    ui.strong(&state.comparison.runs[i].label);
                    ui.weak(&state.comparison.runs[i].path);
                });
                let width = ui.available_width();
                let before_name = state.selections[i].name;
                ui.allocate_ui(egui::vec2(width, each_h), |ui| {
                    ui.push_id(("compare_timeline", i), |ui| {
                        let _ = timeline_ui(
                            ui,
                            &state.profiles[i],
                            &mut state.timelines[i],
                            &mut state.selections[i],
                        );
                    });
                });
                let now = state.timelines[i].visible_range();
                if now != expected && changed.is_none() {
                    changed = Some(TimeRange::new(now.start_ns - off, now.end_ns - off));
                }
                if state.selections[i].name != before_name {
                    clicked_name = Some(
                        state.selections[i]
                            .name
                            .map(|id| state.profiles[i].str(id).to_string()),
                    );
                }
                ui.add_space(gap);
            }
        });
    let rel = changed.unwrap_or(rel);
    state.linked = Some((state.alignment, rel));
    if changed.is_some() {
        ui.ctx().request_repaint();
    }
    if let Some(name) = clicked_name {
        let keep: Vec<_> = state.selections.iter().map(|s| s.event).collect();
        state.select(name);
        for (s, e) in state.selections.iter_mut().zip(keep) {
            s.event = e;
        }
    }
}
