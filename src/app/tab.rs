//! One open profile as a tab: its timeline above; below it the tables, the Insights, Memory or
//! Roofline panel, a
//! live run's results or a job's rank × step map, with the selected event's details beside.

use std::sync::Arc;

use egui::{Align, Layout};
use warpscope_core::Profile;
use warpscope_core::analysis::fleet::FleetReport;
use warpscope_core::analysis::flops::PeakOverride;
use warpscope_live::LiveRun;
use warpscope_ui::Selection;
use warpscope_ui::fleet::{FleetState, fleet_ui};
use warpscope_ui::insights::{InsightsState, insights_ui};
use warpscope_ui::memory::{MemoryState, memory_ui};
use warpscope_ui::range_stats::range_stats_ui;
use warpscope_ui::roofline::{RooflineState, roofline_ui};
use warpscope_ui::tables::{TablesState, tables_ui};
use warpscope_ui::timeline::{TimelineState, selected_event_ui, timeline_ui};
use warpscope_ui::warnings::import_warnings_ui;

use super::{file_name, live_results_ui};

/// One open profile.
pub struct Tab {
    /// The profile.
    pub profile: Arc<Profile>,
    /// Timeline view state.
    pub timeline: TimelineState,
    /// Tables state.
    pub tables: TablesState,
    /// What is selected in this tab.
    pub selection: Selection,
    /// The results of the live run this profile came from, if it did.
    pub live: Option<LiveRun>,
    /// What the panel below the timeline shows.
    pub bottom: BottomView,
    /// The Insights panel's state.
    pub insights: InsightsState,
    /// The Memory panel's state.
    pub memory: MemoryState,
    /// The Roofline view's state.
    pub roofline: RooflineState,
    /// For a job opened as a directory: the cross-rank analysis of its ranks.
    pub job: Option<Arc<FleetReport>>,
    /// The job view's state.
    pub fleet: FleetState,
    /// The file (or job directory) this tab was opened from, as a canonical path, so that
    /// opening it again shows this tab; `None` for comparisons merged, live runs.
    pub opened_from: Option<std::path::PathBuf>,
}

/// The id of the panel below the timeline (its height is kept between runs with egui's memory).
const TABLES_PANEL: &str = "tables";

/// The most of the window's height that the panel below the timeline gets back from an earlier
/// run: the timeline keeps at least half.
pub const RESTORED_TABLES_MAX: f32 = 0.5;

/// On the first frame of a run that shows a profile, brings a height of the panel below the
/// timeline kept from an earlier run down to `most`, so that the timeline is not left a
/// sliver by what another profile (or a Job or Insights view) needed then. What the user drags
/// in this run is kept as it is.
fn restore_tables_height(ui: &egui::Ui, most: f32) {
    let done = egui::Id::unique("warpscope.tables_height_restored");
    if ui.ctx().data(|d| d.get_temp::<bool>(done)).unwrap_or(false) {
        return;
    }
    ui.ctx().data_mut(|d| d.insert_temp(done, true));
    // The key egui keeps the panel's size under (`Panel::id`).
    let id = ui.scope_id().with_salt(egui::IdSalt::new(TABLES_PANEL));
    if let Some(mut state) = egui::PanelState::load(ui.ctx(), id)
        && state.outer_rect.height() > most
    {
        state.outer_rect.min.y = state.outer_rect.max.y - most;
        ui.ctx().data_mut(|d| d.insert_persisted(id, state));
    }
}

/// What the panel below the timeline shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BottomView {
    /// The ranked tables.
    Tables,
    /// Why the GPU is not busy: breakdown, findings, gaps.
    Insights,
    /// Where the memory goes: peaks, what was live then, allocating operators.
    Memory,
    /// How close to the hardware: the operators on the device's roofline.
    Roofline,
    /// The results of a live run.
    Live,
    /// A job's rank × step map and stragglers.
    Job,
}

impl Tab {
    pub(crate) fn new(profile: Profile) -> Self {
        let timeline = TimelineState::new(&profile);
        let live = LiveRun::from_profile(&profile);
        Self {
            bottom: if live.is_some() {
                BottomView::Live
            } else {
                BottomView::Tables
            },
            insights: InsightsState::default(),
            memory: MemoryState::default(),
            roofline: RooflineState::default(),
            live,
            profile: Arc::new(profile),
            timeline,
            tables: TablesState::default(),
            selection: Selection::default(),
            job: None,
            fleet: FleetState::default(),
            opened_from: None,
        }
    }

    /// A job's tab: the ranks merged into `profile`, and their cross-rank analysis, shown
    /// first.
    pub(crate) fn job(profile: Profile, report: FleetReport) -> Self {
        let mut tab = Self::new(profile);
        tab.job = Some(Arc::new(report));
        tab.bottom = BottomView::Job;
        tab
    }

    /// The tab's title: the file name.
    pub fn title(&self) -> String {
        let name = file_name(&self.profile.source.path);
        match &self.job {
            Some(job) => format!(
                "{name} (job of {})",
                warpscope_ui::fleet::ranks_text(job.ranks.len())
            ),
            None => name,
        }
    }
}

impl Tab {
    /// The timeline above; below it the details of the selected event on the right and the
    /// range header and tables on the left (so selecting never moves the timeline). Every FLOPs
    /// figure is measured against `peaks` (the app's override), which the Roofline view edits.
    pub(crate) fn ui(&mut self, ui: &mut egui::Ui, peaks: &mut PeakOverride) {
        let tab = self;
        let profile = Arc::clone(&tab.profile);
        // The tables (or insights) get what the timeline does not need, within 38-70% of the
        // height (more for insights): a short timeline leaves no empty band above them.
        let available = ui.available_height();
        let least = if matches!(
            tab.bottom,
            BottomView::Insights | BottomView::Job | BottomView::Memory | BottomView::Roofline
        ) {
            0.5
        } else {
            0.38
        };
        let timeline_needs = tab.timeline.content_height(&profile) + 16.0;
        let bottom = (available - timeline_needs).clamp(available * least, available * 0.7);
        restore_tables_height(ui, available * RESTORED_TABLES_MAX);
        egui::Panel::bottom(TABLES_PANEL)
            .resizable(true)
            .default_size(bottom)
            .show(ui, |ui| {
                egui::Panel::right("details")
                    .resizable(true)
                    .default_size(360.0)
                    .show(ui, |ui| {
                        Self::details_ui(tab, &profile, ui);
                    });
                egui::CentralPanel::default().show(ui, |ui| {
                    ui.horizontal(|ui| {
                        if tab.job.is_some() {
                            ui.selectable_value(&mut tab.bottom, BottomView::Job, "Job")
                                .on_hover_text("Ranks × steps, stragglers");
                        }
                        if tab.live.is_some() {
                            ui.selectable_value(&mut tab.bottom, BottomView::Live, "Live results");
                        }
                        ui.selectable_value(&mut tab.bottom, BottomView::Tables, "Tables");
                        ui.selectable_value(&mut tab.bottom, BottomView::Insights, "Insights")
                            .on_hover_text(
                                "Why the GPU is not busy: time breakdown, idle causes, findings",
                            );
                        ui.selectable_value(&mut tab.bottom, BottomView::Memory, "Memory")
                            .on_hover_text(
                                "Where the memory goes: peaks, what was live at the peak, the \
                                 operators that allocate most",
                            );
                        // A live run's results page has its own roofline, under the ceilings
                        // measured in the run: one Roofline button per view.
                        if tab.live.is_none() {
                            ui.selectable_value(&mut tab.bottom, BottomView::Roofline, "Roofline")
                                .on_hover_text(
                                    "How close to the hardware: each operator's achieved TFLOP/s \
                                     against its FLOPs per byte, under the GPU's ceilings",
                                );
                        }
                    });
                    match (tab.bottom, &tab.live) {
                        (BottomView::Live, Some(run)) => live_results_ui(ui, run),
                        (BottomView::Job, _) if tab.job.is_some() => {
                            if let Some(job) = &tab.job {
                                fleet_ui(ui, &profile, job, &mut tab.fleet, &mut tab.timeline);
                            }
                        }
                        (BottomView::Memory, _) => {
                            range_stats_ui(ui, &profile, &mut tab.selection);
                            memory_ui(
                                ui,
                                &profile,
                                &mut tab.memory,
                                &mut tab.timeline,
                                &mut tab.selection,
                            );
                        }
                        (BottomView::Roofline, _) => {
                            range_stats_ui(ui, &profile, &mut tab.selection);
                            roofline_ui(
                                ui,
                                &profile,
                                &mut tab.roofline,
                                &mut tab.timeline,
                                &mut tab.selection,
                                peaks,
                            );
                        }
                        (BottomView::Insights, _) => {
                            range_stats_ui(ui, &profile, &mut tab.selection);
                            insights_ui(
                                ui,
                                &profile,
                                &mut tab.insights,
                                &mut tab.timeline,
                                &mut tab.selection,
                                *peaks,
                            );
                        }
                        _ => {
                            range_stats_ui(ui, &profile, &mut tab.selection);
                            let response = tables_ui(
                                ui,
                                &profile,
                                &mut tab.tables,
                                &mut tab.selection,
                                *peaks,
                            );
                            if let Some(forward) = response.step {
                                tab.timeline.step_to_occurrence(
                                    &profile,
                                    &mut tab.selection,
                                    forward,
                                );
                            }
                        }
                    }
                });
            });
        egui::CentralPanel::default().show(ui, |ui| {
            timeline_ui(ui, &profile, &mut tab.timeline, &mut tab.selection);
        });
    }

    fn details_ui(tab: &mut Tab, profile: &Profile, ui: &mut egui::Ui) {
        import_warnings_ui(ui, profile);
        ui.horizontal(|ui| {
            ui.strong("Selected event");
            if tab.selection.event.is_some() {
                ui.with_layout(Layout::right_to_left(Align::Center), |ui| {
                    if ui
                        .small_button("×")
                        .on_hover_text("Clear the selection")
                        .clicked()
                    {
                        tab.selection.event = None;
                    }
                });
            }
        });
        ui.separator();
        if tab.selection.event.is_none() {
            ui.weak("Click an event on the timeline to see everything known about it.");
            return;
        }
        egui::ScrollArea::vertical()
            .auto_shrink(false)
            .show(ui, |ui| {
                selected_event_ui(ui, profile, &mut tab.timeline, &mut tab.selection);
            });
    }
}
