//! The comparison of several runs: per-run totals, aligned kernels, copies and CPU operators
//! with ratios against the baseline, scaling charts for sweeps, and the runs' timelines stacked
//! with linked zoom and pan.
//!
//! Build a [`CompareState`] once from the profiles (the comparison is computed then) and call
//! [`compare_ui`] every frame.

use std::sync::Arc;

use egui::{Color32, Ui};
use egui_plot::{Bar, BarChart, GridMark, Line, Plot, Points};
use warpscope_core::analysis::compare::{CompareError, Comparison, RunLabel, compare_runs};
use warpscope_core::model::EventKind;
use warpscope_core::{Profile, TimeRange};

mod memory_chart;
mod tables;
mod totals;

pub use tables::{KERNEL_RUN_COLUMNS, KernelColumns, KernelToggle};
use tables::{copy_table, kernel_table, op_table};

use crate::Selection;
use crate::tables::{Row, SortBy, TableRows, filtered_sorted, rows_table_ui};
use crate::timeline::{TimelineState, timeline_ui};

/// The pages of a comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ComparePage {
    /// Per-kernel table.
    #[default]
    Kernels,
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
    pub const ALL: [Self; 5] = [
        Self::Kernels,
        Self::Copies,
        Self::Ops,
        Self::Charts,
        Self::Timelines,
    ];

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            Self::Kernels => "Kernels",
            Self::Copies => "Copies",
            Self::Ops => "CPU operators",
            Self::Charts => "Charts",
            Self::Timelines => "Timelines",
        }
    }

    fn table_index(self) -> Option<usize> {
        match self {
            Self::Kernels => Some(0),
            Self::Copies => Some(1),
            Self::Ops => Some(2),
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
    tables: [TableRows; 3],
    sort: [Option<SortBy>; 3],
    view: Vec<usize>,
    view_key: Option<(usize, String, Option<SortBy>, KernelColumns)>,
    /// The window shared by the timelines, relative to each run's alignment point, and the
    /// alignment it was made for.
    linked: Option<(Alignment, TimeRange)>,
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
            sort: [None; 3],
            view: Vec::new(),
            view_key: None,
            linked: None,
        })
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

    /// The table of `page` (kernels, copies or operators).
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

/// Draws the comparison: the per-run totals, the page tabs and the current page.
pub fn compare_ui(ui: &mut Ui, state: &mut CompareState) {
    totals::totals_ui(ui, state);
    ui.separator();
    ui.horizontal(|ui| {
        for page in ComparePage::ALL {
            if ui
                .selectable_label(state.page == page, page.title())
                .clicked()
            {
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
        ComparePage::Kernels | ComparePage::Copies | ComparePage::Ops => page_table_ui(ui, state),
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

/// How many kernels the charts follow.
const CHART_KERNELS: usize = 8;

/// The scaling charts (when the labels carry a number that varies) and the top kernels' time
/// per run.
fn charts_ui(ui: &mut Ui, state: &CompareState) {
    let c = &state.comparison;
    let top: Vec<usize> = top_kernels(c, CHART_KERNELS);
    let names = chart_names(c, &top);
    // Room for the titles and the legends under the plots (the top kernels' legend wraps).
    let height = (ui.available_height() / 2.0 - 75.0).max(150.0);
    let step_colour = Color32::from_rgb(0x4e, 0x9a, 0xd8);
    let gpu_colour = Color32::from_rgb(0x6a, 0xb0, 0x4c);
    match &c.sweep {
        Some(key) => {
            let raw: Vec<(f64, usize)> = c
                .runs
                .iter()
                .enumerate()
                .filter_map(|(i, r)| r.sweep_value.map(|x| (x, i)))
                .collect();
            // Sweeps span powers of two (batch 8 to 128, 1 to 8 GPUs): a log2 axis spaces them
            // evenly, with a tick at each power of two.
            let axis = SweepAxis::of(&raw);
            let runs: Vec<(f64, usize)> = raw.iter().map(|&(x, i)| (axis.x(x), i)).collect();
            let x_label = axis.label(key);
            let series = |f: &dyn Fn(usize) -> Option<f64>| -> Vec<[f64; 2]> {
                let mut v: Vec<[f64; 2]> = runs
                    .iter()
                    .filter_map(|&(x, i)| f(i).map(|y| [x, y]))
                    .collect();
                v.sort_by(|a, b| a[0].total_cmp(&b[0]));
                v
            };
            let [step, gpu] = per_step_series(c).map(|points| {
                points
                    .into_iter()
                    .map(|(x, y)| [axis.x(x), y])
                    .collect::<Vec<[f64; 2]>>()
            });
            // Per sample is a thousand times smaller: its own chart, in µs.
            let sample = series(&|i| c.runs[i].time_per_sample_ns.map(|t| t / 1e3));
            ui.columns(2, |cols| {
                cols[0].strong(format!("Time per step and GPU time per step against {key}"));
                let step_series = [
                    ("time per step", &step, step_colour),
                    ("GPU time per step", &gpu, gpu_colour),
                ];
                axis.apply(Plot::new("compare_step_scaling"))
                    .height(height)
                    .x_axis_label(x_label.clone())
                    .y_axis_label("ms")
                    .include_y(0.0)
                    .show(&mut cols[0], |plot| {
                        for (name, pts, color) in step_series {
                            if pts.is_empty() {
                                continue;
                            }
                            plot.line(Line::new(name, pts.clone()).color(color).width(2.0));
                            plot.points(Points::new(name, pts.clone()).color(color).radius(3.5));
                        }
                    });
                legend_ui(
                    &mut cols[0],
                    step_series
                        .iter()
                        .filter(|(_, pts, _)| !pts.is_empty())
                        .map(|(name, _, color)| ((*name).to_string(), *color)),
                );
                cols[1].strong(format!("Time per sample against {key}"));
                axis.apply(Plot::new("compare_sample_scaling"))
                    .height(height)
                    .x_axis_label(x_label.clone())
                    .y_axis_label("µs")
                    .include_y(0.0)
                    .show(&mut cols[1], |plot| {
                        if sample.is_empty() {
                            return;
                        }
                        let color = Color32::from_rgb(0xe0, 0x8a, 0x3c);
                        plot.line(
                            Line::new("time per sample", sample.clone())
                                .color(color)
                                .width(2.0),
                        );
                        plot.points(
                            Points::new("time per sample", sample.clone())
                                .color(color)
                                .radius(3.5),
                        );
                    });
            });
            ui.columns(2, |cols| {
                cols[0].strong(format!("Top kernels' time against {key}"));
                axis.apply(Plot::new("compare_kernel_scaling"))
                    .height(height)
                    .x_axis_label(x_label.clone())
                    .y_axis_label("ms")
                    .show(&mut cols[0], |plot| {
                        for (slot, (&k, name)) in top.iter().zip(&names).enumerate() {
                            let row = &c.kernels[k].row;
                            let mut pts: Vec<[f64; 2]> = runs
                                .iter()
                                .filter_map(|&(x, i)| {
                                    let s = row.per_run.get(i)?.as_ref()?;
                                    #[allow(clippy::cast_precision_loss)]
                                    Some([x, s.total_ns as f64 / 1e6])
                                })
                                .collect();
                            pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
                            // A qualitative palette: hashed kernel colours can be too alike
                            // to tell eight lines apart.
                            let color = run_color(slot);
                            plot.line(Line::new(name.clone(), pts.clone()).color(color).width(1.5));
                            plot.points(Points::new(name.clone(), pts).color(color).radius(3.0));
                        }
                    });
                legend_ui(
                    &mut cols[0],
                    names
                        .iter()
                        .enumerate()
                        .map(|(slot, name)| (name.clone(), run_color(slot))),
                );
                cols[1].strong("Top kernels: time per run");
                top_kernel_bars_ui(&mut cols[1], c, &top, &names, height);
            });
            if memory_chart::has_memory(c) {
                ui.strong(format!(
                    "Peak memory per run (largest of any GPU, recorded window) against {key}"
                ));
                memory_chart::memory_chart_ui(ui, c, height);
            }
        }
        None => {
            ui.weak(
                "No scaling chart: the run labels carry no number that differs between runs \
                 (name files like model_b8, model_b16, or label them batch=8).",
            );
            ui.strong("Top kernels: time per run");
            top_kernel_bars_ui(ui, c, &top, &names, height);
            if memory_chart::has_memory(c) {
                ui.strong("Peak memory per run (largest of any GPU, recorded window)");
                memory_chart::memory_chart_ui(ui, c, height);
            }
        }
    }
}

/// The two series of the first scaling chart, as (swept value, ms) sorted by the swept value:
/// time per step, and GPU time per step (like with like: the whole run's GPU time beside one
/// step's time would read as the GPU working longer than the step).
pub fn per_step_series(c: &Comparison) -> [Vec<(f64, f64)>; 2] {
    let series = |f: &dyn Fn(&warpscope_core::analysis::compare::RunSummary) -> Option<i64>| {
        let mut v: Vec<(f64, f64)> = c
            .runs
            .iter()
            .filter_map(|r| {
                #[allow(clippy::cast_precision_loss)]
                Some((r.sweep_value?, f(r)? as f64 / 1e6))
            })
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        v
    };
    [
        series(&|r| r.time_per_step_ns),
        series(&|r| r.gpu_time_per_step_ns),
    ]
}

/// The x axis of the scaling charts: linear, or log2 with a tick at each power of two when the
/// swept values are positive and span a factor of 4 or more.
#[derive(Clone, Copy)]
struct SweepAxis {
    /// log2 of the smallest and largest value, when the axis is log2.
    log2: Option<(f64, f64)>,
}

impl SweepAxis {
    fn of(values: &[(f64, usize)]) -> Self {
        let lo = values.iter().map(|v| v.0).fold(f64::INFINITY, f64::min);
        let hi = values.iter().map(|v| v.0).fold(f64::NEG_INFINITY, f64::max);
        Self {
            log2: (lo > 0.0 && hi / lo >= 4.0).then(|| (lo.log2(), hi.log2())),
        }
    }

    fn x(self, value: f64) -> f64 {
        if self.log2.is_some() {
            value.log2()
        } else {
            value
        }
    }

    fn label(self, key: &str) -> String {
        if self.log2.is_some() {
            format!("{key} (log scale)")
        } else {
            key.to_string()
        }
    }

    fn apply<'a>(self, plot: Plot<'a>) -> Plot<'a> {
        let Some((lo, hi)) = self.log2 else {
            return plot;
        };
        #[allow(clippy::cast_possible_truncation)]
        let (first, last) = (lo.floor() as i32, hi.ceil() as i32);
        plot.x_grid_spacer(move |_| {
            (first..=last)
                .map(|p| GridMark {
                    value: f64::from(p),
                    step_size: 1.0,
                })
                .collect()
        })
        .x_axis_formatter(|mark, _| {
            let v = 2f64.powf(mark.value);
            if (v - v.round()).abs() < 1e-6 {
                format!("{}", v.round())
            } else {
                format!("{v:.2}")
            }
        })
        .include_x(lo - 0.25)
        .include_x(hi + 0.25)
    }
}

/// The top kernels' time in each run as grouped bars, the kernels named under their group.
fn top_kernel_bars_ui(ui: &mut Ui, c: &Comparison, top: &[usize], names: &[String], height: f32) {
    // Under each group its key (`K1`, as in the legend of the kernel chart, which names it); a
    // name would not fit eight groups. Hovering a bar gives the name.
    let labels: Vec<String> = (1..=names.len()).map(|k| format!("K{k}")).collect();
    // One mark per kernel group, so every group is named under its bars.
    slot_axis(Plot::new("compare_top_kernels"), labels)
        .height(height)
        .y_axis_label("ms")
        .show(ui, |plot| {
            let n = c.runs.len();
            #[allow(clippy::cast_precision_loss)]
            let width = 0.8 / n as f64;
            for r in 0..n {
                let bars: Vec<Bar> = top
                    .iter()
                    .zip(names)
                    .enumerate()
                    .map(|(slot, (&k, name))| {
                        let total = c.kernels[k]
                            .row
                            .per_run
                            .get(r)
                            .and_then(Option::as_ref)
                            .map_or(0, |s| s.total_ns);
                        #[allow(clippy::cast_precision_loss)]
                        let x = slot as f64 - 0.4 + width * (r as f64 + 0.5);
                        #[allow(clippy::cast_precision_loss)]
                        Bar::new(x, total as f64 / 1e6)
                            .width(width * 0.9)
                            .name(format!("{name} · {}", c.runs[r].label))
                    })
                    .collect();
                plot.bar_chart(BarChart::new(c.runs[r].label.clone(), bars).color(run_color(r)));
            }
        });
    legend_ui(
        ui,
        (0..c.runs.len()).map(|r| (format!("#{} {}", r + 1, c.runs[r].label), run_color(r))),
    );
}

/// `plot` with one x-axis mark per slot 0, 1, 2... named by `labels` (groups of bars).
fn slot_axis(plot: Plot<'_>, labels: Vec<String>) -> Plot<'_> {
    let slots = labels.len();
    plot.x_grid_spacer(move |_| {
        (0..slots)
            .map(|i| GridMark {
                #[allow(clippy::cast_precision_loss)]
                value: i as f64,
                step_size: 1.0,
            })
            .collect()
    })
    .x_axis_formatter(move |mark, _| {
        let slot = mark.value.round();
        if (mark.value - slot).abs() > 1e-6 || slot < 0.0 {
            return String::new();
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        labels.get(slot as usize).cloned().unwrap_or_default()
    })
}

/// A plot's legend, under it rather than over its points: a colour swatch and a name per
/// series, in the order drawn, wrapping as the width needs.
fn legend_ui(ui: &mut Ui, entries: impl IntoIterator<Item = (String, Color32)>) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for (name, color) in entries {
            // One widget per entry, so that it moves to the next line as a whole: its swatch
            // stays with its name.
            let galley = ui.painter().layout_no_wrap(
                name.clone(),
                egui::FontId::proportional(11.5),
                ui.visuals().text_color(),
            );
            let size = egui::vec2(18.0 + galley.size().x + 12.0, galley.size().y.max(12.0));
            let (rect, response) = ui.allocate_exact_size(size, egui::Sense::hover());
            response
                .widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, name.as_str()));
            let swatch = egui::Rect::from_center_size(
                egui::pos2(rect.left() + 7.0, rect.center().y),
                egui::vec2(14.0, 6.0),
            );
            ui.painter().rect_filled(swatch, 1.0, color);
            let text_at = egui::pos2(rect.left() + 18.0, rect.center().y - galley.size().y / 2.0);
            ui.painter()
                .galley(text_at, galley, ui.visuals().text_color());
        }
    });
}

/// Names of the charted kernels, keyed `K1`, `K2`... (the bar chart's groups) and shortened
/// readably (template arguments folded); the keys keep two kernels from sharing a legend entry,
/// which would also mix their colours.
fn chart_names(c: &Comparison, top: &[usize]) -> Vec<String> {
    let full: Vec<&str> = top
        .iter()
        .map(|&k| c.kernels[k].row.name.as_str())
        .collect();
    warpscope_core::names::distinct_short_names(&full, 48)
        .into_iter()
        .enumerate()
        .map(|(i, n)| format!("K{} {}", i + 1, n.strip_prefix("void ").unwrap_or(&n)))
        .collect()
}

/// The kernels with the largest total in any run, largest first.
pub fn top_kernels(c: &Comparison, count: usize) -> Vec<usize> {
    let mut order: Vec<(i64, usize)> = c
        .kernels
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let max = k
                .row
                .per_run
                .iter()
                .flatten()
                .map(|s| s.total_ns)
                .max()
                .unwrap_or(0);
            (max, i)
        })
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    order.into_iter().take(count).map(|(_, i)| i).collect()
}

/// A colour per run, or per line of any plot (a small qualitative palette, repeating after 8).
pub fn run_color(r: usize) -> Color32 {
    const PALETTE: [Color32; 8] = [
        Color32::from_rgb(0x4e, 0x79, 0xa7),
        Color32::from_rgb(0xf2, 0x8e, 0x2b),
        Color32::from_rgb(0x59, 0xa1, 0x4f),
        Color32::from_rgb(0xe1, 0x57, 0x59),
        Color32::from_rgb(0x76, 0xb7, 0xb2),
        Color32::from_rgb(0xed, 0xc9, 0x48),
        Color32::from_rgb(0xb0, 0x7a, 0xa1),
        Color32::from_rgb(0xff, 0x9d, 0xa7),
    ];
    PALETTE[r % PALETTE.len()]
}
