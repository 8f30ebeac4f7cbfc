//! The Insights panel: why the GPU is not busy over the selected range (or the whole run) — the
//! time breakdown of every GPU as a bar, the ranked findings, the largest idle gaps and the launch
//! figures. A click on a finding or a gap zooms the timeline to its events and selects them.
//! The rules are those of `docs/analysis.md` ([`warpscope_core::analysis::insight`]).

use crate::format_duration as dur;
use egui::{Color32, RichText, Sense, Ui, Vec2};
use warpscope_core::analysis::flops::PeakOverride;
use warpscope_core::analysis::insight::{
    AnalyzeOptions, DeviceBreakdown, Finding, Gap, Insights, analyze,
};
use warpscope_core::analysis::pct;
use warpscope_core::model::EventRef;
use warpscope_core::names::short_name;
use warpscope_core::{Profile, TimeRange};

use crate::flops::FlopsCache;
use crate::timeline::TimelineState;
use crate::timeline::layout::device_title;
use crate::timeline::utilisation::{BUSY, HOST_WAIT, KERNEL_WAIT, OTHER_IDLE};
use crate::{ProfileKey, Selection};

mod mfu;

/// Colour of communication time.
const COMM: Color32 = Color32::from_rgb(0xa0, 0x6c, 0xd5);
/// Colour of memory (copy and set) time.
const MEMORY: Color32 = Color32::from_rgb(0x3f, 0x9f, 0xb0);

/// What an analysis was computed for: the profile (address, event count) and the range.
type AnalysisKey = (ProfileKey, TimeRange);

/// What the panel keeps between frames: the analysis of the last range it showed.
#[derive(Default)]
pub struct InsightsState {
    key: Option<AnalysisKey>,
    insights: Option<Insights>,
    flops: FlopsCache,
    computations: u64,
    /// A range that changed and when (egui time, s): it is analysed once it has held still for
    /// [`SETTLE_S`], so dragging a range does not re-run the whole analysis every frame.
    pending: Option<(AnalysisKey, f64)>,
}

/// How long a new range must hold still before it is analysed, in seconds.
pub const SETTLE_S: f64 = 0.15;

impl InsightsState {
    /// The insights on display, once computed.
    pub fn insights(&self) -> Option<&Insights> {
        self.insights.as_ref()
    }

    /// The FLOPs analysis on display (MFU), once computed.
    pub fn flops(&self) -> Option<&warpscope_core::analysis::flops::FlopsReport> {
        self.flops.report()
    }

    /// How many times the analysis ran (it runs again only when the range or profile changes).
    pub fn computations(&self) -> u64 {
        self.computations
    }

    /// True while a new range waits to be analysed (the panel still shows the last one).
    pub fn updating(&self) -> bool {
        self.pending.is_some()
    }

    fn refresh(&mut self, ctx: &egui::Context, profile: &Profile, range: TimeRange) {
        let key = (ProfileKey::of(profile), range);
        if self.key == Some(key) {
            self.pending = None;
            return;
        }
        // A new profile is analysed at once; a new range of the same profile once it settles.
        let same_profile = self.key.is_some_and(|k| k.0 == key.0);
        let now = ctx.input(|i| i.time);
        let since = match self.pending {
            Some((k, t)) if k == key => t,
            _ => now,
        };
        if same_profile && now - since < SETTLE_S {
            self.pending = Some((key, since));
            #[allow(clippy::cast_possible_truncation)]
            ctx.request_repaint_after(std::time::Duration::from_secs_f64(
                (SETTLE_S - (now - since)).max(0.01),
            ));
            return;
        }
        self.insights = Some(analyze(profile, range, &AnalyzeOptions::default()));
        self.key = Some(key);
        self.pending = None;
        self.computations += 1;
    }
}

/// The time span of a list of events, widened by a tenth on each side.
fn events_span(profile: &Profile, events: &[EventRef]) -> Option<TimeRange> {
    let mut span: Option<(i64, i64)> = None;
    for e in events {
        let ev = &profile.tracks.get(e.track as usize)?.events;
        let i = e.index as usize;
        let (a, b) = (ev.start_ns[i], ev.end_ns(i));
        span = Some(span.map_or((a, b), |(s, t)| (s.min(a), t.max(b))));
    }
    let (a, b) = span?;
    let pad = ((b - a) / 10).max(1_000);
    Some(TimeRange::new(a - pad, b + pad))
}

/// Draws the panel over `selection.range` (the whole run when none), MFU against `peaks` (the
/// viewer's override). Clicking "Show" on a finding or a gap zooms `timeline` to it and selects
/// its first event.
pub fn insights_ui(
    ui: &mut Ui,
    profile: &Profile,
    state: &mut InsightsState,
    timeline: &mut TimelineState,
    selection: &mut Selection,
    peaks: PeakOverride,
) {
    let range = selection.range.unwrap_or(TimeRange::ALL);
    state.refresh(ui.ctx(), profile, range);
    // MFU over the range analysed; again at once when the peaks change (cached otherwise).
    if let Some((_, analysed)) = state.key {
        state.flops.get(profile, analysed, peaks);
    }
    let Some(ins) = state.insights.as_ref() else {
        return;
    };
    ui.horizontal(|ui| {
        let scope = if range.is_all() {
            "the whole run".to_string()
        } else {
            format!(
                "the selected range {}..{}",
                dur(range.start_ns),
                dur(range.end_ns)
            )
        };
        ui.strong(format!("Why is it slow? Over {scope}"));
        if state.updating() {
            ui.weak("(updating…)");
        }
        ui.checkbox(
            &mut timeline.show_idle_causes,
            "Colour idle time by cause on the timeline",
        );
    });
    if ins.devices.is_empty() {
        ui.weak("No kernels, copies or sets in this range: nothing to analyse.");
        return;
    }
    let mut zoom: Option<(TimeRange, EventRef)> = None;
    egui::ScrollArea::vertical()
        .auto_shrink(false)
        .show(ui, |ui| {
            for d in &ins.devices {
                device_ui(ui, profile, d);
            }
            if let Some(report) = state.flops.report() {
                ui.add_space(6.0);
                mfu::mfu_ui(ui, profile, report);
            }
            ui.add_space(6.0);
            ui.strong("Findings, largest time at stake first")
                .on_hover_text(
                    "measured: a time measured in this profile, the most that fixing the cause \
                     gives back; estimate: a modelled saving (docs/analysis.md, section 7)",
                );
            if ins.findings.is_empty() {
                ui.weak("None: no rule of docs/analysis.md fired in this range.");
            }
            for (i, f) in ins.findings.iter().enumerate() {
                if let Some(z) = finding_ui(ui, profile, i + 1, f) {
                    zoom = Some(z);
                }
            }
            ui.add_space(6.0);
            let l = &ins.launch;
            ui.label(format!(
                "Launches: {} kernels; typical launch {}; delay median {}, p95 {}; {} kernels \
                 shorter than a launch ({:.1}% of kernel time); {} {} graph launches. \
                 {}: {:.1}% of kernel time.",
                l.kernels,
                l.typical_launch_ns.map_or_else(|| "–".to_string(), dur),
                l.delay_median_ns.map_or_else(|| "–".to_string(), dur),
                l.delay_p95_ns.map_or_else(|| "–".to_string(), dur),
                l.launch_bound_kernels,
                l.launch_bound_pct,
                l.graph_launches,
                profile.runtime_name(),
                profile.matrix_unit_name(),
                ins.tensor_core_pct
            ));
            if ins.streams.len() > 1 {
                ui.add_space(6.0);
                egui::CollapsingHeader::new("Idle time per stream")
                    .default_open(false)
                    .show(ui, |ui| streams_ui(ui, &ins.streams));
            }
            if !ins.host_wait_ops.is_empty() {
                ui.add_space(6.0);
                egui::CollapsingHeader::new("Host wait by the CPU operator the GPU waited on")
                    .default_open(false)
                    .show(ui, |ui| host_wait_ops_ui(ui, ins));
            }
            if !ins.gaps.is_empty() {
                ui.add_space(6.0);
                ui.strong("Largest idle gaps");
                if let Some(z) = gaps_ui(ui, profile, &ins.gaps) {
                    zoom = Some(z);
                }
            }
        });
    if let Some((range, event)) = zoom {
        timeline.set_visible_range(range);
        selection.select_event(profile, event);
    }
}

/// One GPU: a line of figures and the time breakdown as a bar.
fn device_ui(ui: &mut Ui, profile: &Profile, d: &DeviceBreakdown) {
    let name = device_title(profile, d.device);
    ui.label(
        RichText::new(format!(
            "{name}: window {}, busy {} ({:.1}%)",
            dur(d.window_ns),
            dur(d.busy_ns),
            d.busy_pct
        ))
        .strong(),
    );
    let b = &d.idle_breakdown;
    let parts = [
        ("compute", d.compute_ns, BUSY),
        ("communication", d.comm_ns, COMM),
        ("memory", d.memory_ns, MEMORY),
        ("host wait", b.host_wait_ns, HOST_WAIT),
        ("kernel wait", b.kernel_wait_ns, KERNEL_WAIT),
        ("other idle", b.other_ns, OTHER_IDLE),
    ];
    let width = ui.available_width().min(900.0);
    let (rect, response) = ui.allocate_exact_size(Vec2::new(width, 14.0), Sense::hover());
    let mut x = rect.left();
    for &(_, ns, colour) in &parts {
        #[allow(clippy::cast_possible_truncation)]
        let w = (pct(ns, d.window_ns) / 100.0) as f32 * width;
        if w > 0.0 {
            ui.painter().rect_filled(
                egui::Rect::from_min_size(egui::pos2(x, rect.top()), Vec2::new(w, rect.height())),
                0.0,
                colour,
            );
        }
        x += w;
    }
    let pct = |ns: i64| pct(ns, d.window_ns);
    let legend: Vec<String> = parts
        .iter()
        .map(|&(label, ns, _)| format!("{label} {} ({:.1}%)", dur(ns), pct(ns)))
        .collect();
    response.on_hover_text(legend.join("\n"));
    ui.horizontal_wrapped(|ui| {
        for (&(_, _, colour), text) in parts.iter().zip(&legend) {
            let (r, _) = ui.allocate_exact_size(Vec2::splat(10.0), Sense::hover());
            ui.painter().rect_filled(r, 2.0, colour);
            ui.label(RichText::new(text).small());
        }
    });
    let pct_text = |v: Option<f64>| v.map_or_else(|| "–".to_string(), |v| format!("{v:.0}%"));
    // Kineto's achieved occupancy beside the theoretical one of the same kernels, both
    // weighted by time (docs/analysis.md, section 5).
    let achieved = match d.achieved_occupancy_pct {
        None => "achieved (Kineto) –".to_string(),
        Some(a) => format!(
            "where Kineto estimated it ({:.1}% of kernel time), achieved {a:.0}% of theoretical {}",
            d.achieved_occupancy_time_pct,
            pct_text(d.theoretical_occupancy_where_achieved_pct)
        ),
    };
    ui.label(
        RichText::new(format!(
            "Overlap: communication with compute {} ({:.1}% of communication), copies with \
             compute {}. {} {:.1}% of kernel time. Occupancy: theoretical {}; {achieved}.",
            dur(d.overlap_comm_compute_ns),
            d.overlap_comm_pct,
            dur(d.overlap_copy_compute_ns),
            profile.matrix_unit_name(),
            d.tensor_core_pct,
            pct_text(d.theoretical_occupancy_pct),
        ))
        .small(),
    );
    ui.add_space(4.0);
}

/// One finding; returns where to zoom when its button was clicked.
fn finding_ui(
    ui: &mut Ui,
    profile: &Profile,
    n: usize,
    f: &Finding,
) -> Option<(TimeRange, EventRef)> {
    let mut zoom = None;
    ui.horizontal(|ui| {
        let where_ = f
            .device
            .map_or_else(|| "whole run".to_string(), |d| format!("GPU {d}"));
        ui.label(
            RichText::new(format!(
                "{n}. {} · {} at stake ({}) · {where_}",
                f.rule.as_str(),
                dur(f.time_ns),
                f.at_stake_basis.as_str()
            ))
            .strong(),
        );
        if !f.events.is_empty()
            && ui
                .small_button(format!("Show finding {n}"))
                .on_hover_text("Zoom the timeline to the events behind it and select the first")
                .clicked()
            && let Some(span) = events_span(profile, &f.events)
        {
            zoom = Some((span, f.events[0]));
        }
    });
    ui.label(&f.message);
    ui.add_space(3.0);
    zoom
}

/// Host-wait time by the CPU operator the GPU waited on, per GPU: the list `warpscope analyze`
/// prints, whose first entry the `host_wait` finding names.
fn host_wait_ops_ui(ui: &mut Ui, ins: &Insights) {
    egui::Grid::new("insight_host_wait_ops")
        .striped(true)
        .num_columns(4)
        .show(ui, |ui| {
            for h in ["GPU", "host wait", "gaps", "CPU operator"] {
                ui.strong(h);
            }
            ui.end_row();
            for d in &ins.devices {
                for o in ins.host_wait_ops_of(d.device).iter().take(10) {
                    ui.label(o.device.to_string());
                    ui.label(dur(o.time_ns));
                    ui.label(o.gaps.to_string());
                    ui.label(short_name(
                        o.operator
                            .as_deref()
                            .unwrap_or("(no CPU operator: between operators)"),
                        80,
                    ));
                    ui.end_row();
                }
            }
        });
}

/// Each stream's window, busy share and idle causes.
fn streams_ui(ui: &mut Ui, streams: &[warpscope_core::analysis::insight::StreamIdle]) {
    egui::Grid::new("insight_streams")
        .striped(true)
        .num_columns(7)
        .show(ui, |ui| {
            for h in [
                "GPU",
                "stream",
                "window",
                "busy",
                "host wait",
                "kernel wait",
                "other",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for st in streams {
                let share = |ns: i64| format!("{} ({:.1}%)", dur(ns), pct(ns, st.window_ns));
                ui.label(st.device.to_string());
                ui.label(format!("stream {}", st.stream));
                ui.label(dur(st.window_ns));
                ui.label(share(st.busy_ns));
                ui.label(share(st.idle_breakdown.host_wait_ns));
                ui.label(share(st.idle_breakdown.kernel_wait_ns));
                ui.label(share(st.idle_breakdown.other_ns));
                ui.end_row();
            }
        });
}

/// The largest gaps as a grid; returns where to zoom when a gap's button was clicked.
fn gaps_ui(ui: &mut Ui, profile: &Profile, gaps: &[Gap]) -> Option<(TimeRange, EventRef)> {
    let mut zoom = None;
    egui::Grid::new("insight_gaps")
        .striped(true)
        .num_columns(7)
        .show(ui, |ui| {
            for h in [
                "",
                "GPU",
                "start",
                "length",
                "cause",
                "next work",
                "CPU operator",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for (i, g) in gaps.iter().enumerate() {
                if ui.small_button(format!("Zoom to gap {}", i + 1)).clicked() {
                    let pad = (g.dur_ns / 2).max(1_000);
                    zoom = Some((
                        TimeRange::new(g.start_ns - pad, g.start_ns + g.dur_ns + pad),
                        g.next,
                    ));
                }
                ui.label(g.device.to_string());
                ui.label(dur(g.start_ns));
                ui.label(dur(g.dur_ns));
                ui.label(g.cause.as_str().replace('_', " "));
                let name_of = |e: EventRef| {
                    let ev = &profile.tracks[e.track as usize].events;
                    profile.str(ev.name[e.index as usize]).to_string()
                };
                ui.label(short_name(&name_of(g.next), 60));
                ui.label(
                    g.operator
                        .map_or_else(|| "–".to_string(), |e| short_name(&name_of(e), 60)),
                );
                ui.end_row();
            }
        });
    zoom
}
