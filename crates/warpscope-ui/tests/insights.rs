//! The Insights panel and the utilisation lane, driven with egui_kittest on a real Kineto
//! profile: what a user reads, and what clicking a finding or a gap does to the timeline.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly

mod common;

use std::sync::OnceLock;

use common::{alexnet, load};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope_core::analysis::insight::{AnalyzeOptions, analyze, device_activity};
use warpscope_core::{Profile, TimeRange};
use warpscope_ui::Selection;
use warpscope_ui::insights::{InsightsState, insights_ui};
use warpscope_ui::timeline::{TimelineState, timeline_ui};

struct App {
    profile: &'static Profile,
    timeline: TimelineState,
    insights: InsightsState,
    selection: Selection,
}

fn harness() -> Harness<'static, App> {
    harness_for(alexnet())
}

fn harness_for(profile: &'static Profile) -> Harness<'static, App> {
    let app = App {
        profile,
        timeline: TimelineState::new(profile),
        insights: InsightsState::default(),
        selection: Selection::default(),
    };
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 1000.0))
        .build_ui_state(
            |ui, app: &mut App| {
                egui::Panel::bottom("insights")
                    .exact_size(600.0)
                    .show(ui, |ui| {
                        insights_ui(
                            ui,
                            app.profile,
                            &mut app.insights,
                            &mut app.timeline,
                            &mut app.selection,
                            warpscope_core::analysis::flops::PeakOverride::default(),
                        );
                    });
                egui::CentralPanel::default().show(ui, |ui| {
                    timeline_ui(ui, app.profile, &mut app.timeline, &mut app.selection);
                });
            },
            app,
        );
    h.run();
    h
}

#[test]
fn the_panel_lists_the_breakdown_and_the_ranked_findings() {
    let h = harness();
    let expected = analyze(alexnet(), TimeRange::ALL, &AnalyzeOptions::default());
    h.get_by_label_contains("window 12.963ms, busy 4.8709ms (37.6%)");
    h.get_by_label_contains("host wait 7.6985ms (59.4%)");
    for (i, f) in expected.findings.iter().enumerate() {
        h.get_by_label_contains(&format!("{}. {}", i + 1, f.rule.as_str()));
        h.get_by_label(&f.message);
    }
    assert_eq!(h.state().insights.computations(), 1);
}

#[test]
fn show_finding_zooms_to_its_events_and_selects_the_first() {
    let mut h = harness();
    let whole = h.state().timeline.visible_range();
    h.get_by_label("Show finding 2").click();
    h.run();
    let app = h.state();
    let finding = &app.insights.insights().unwrap().findings[1];
    assert_eq!(app.selection.event, Some(finding.events[0]));
    let view = app.timeline.visible_range();
    assert!(
        view.duration_ns() < whole.duration_ns(),
        "{view:?} vs {whole:?}"
    );
    // Every event behind the finding is in view.
    for e in &finding.events {
        let ev = &app.profile.tracks[e.track as usize].events;
        let i = e.index as usize;
        assert!(ev.start_ns[i] >= view.start_ns && ev.end_ns(i) <= view.end_ns);
    }
}

#[test]
fn zoom_to_gap_shows_the_gap_and_selects_the_work_after_it() {
    let mut h = harness();
    h.get_by_label("Zoom to gap 1").click();
    h.run();
    let app = h.state();
    let gap = &app.insights.insights().unwrap().gaps[0];
    assert_eq!(app.selection.event, Some(gap.next));
    let view = app.timeline.visible_range();
    assert!(view.start_ns < gap.start_ns && view.end_ns > gap.start_ns + gap.dur_ns);
    assert!(view.duration_ns() < 3 * gap.dur_ns, "{view:?}");
}

#[test]
fn a_selected_range_is_analysed_once_and_the_toggle_reaches_the_timeline() {
    let mut h = harness();
    let step = warpscope_core::analysis::compare::step_range(alexnet(), 3).unwrap();
    h.state_mut().selection.range = Some(step);
    h.step();
    // A new range is analysed once it holds still (dragging does not re-run it every frame).
    assert!(h.state().insights.updating());
    assert_eq!(h.state().insights.computations(), 1);
    h.get_by_label_contains("updating");
    for _ in 0..30 {
        h.step();
    }
    assert!(!h.state().insights.updating());
    assert_eq!(
        h.state().insights.computations(),
        2,
        "once for the run, once for the range"
    );
    let shown = &h.state().insights.insights().unwrap().devices[0];
    let direct = &analyze(alexnet(), step, &AnalyzeOptions::default()).devices[0];
    assert_eq!(shown.busy_ns, direct.busy_ns);
    h.get_by_label_contains("Over the selected range");
    assert!(h.state().timeline.show_idle_causes);
    h.get_by_label("Colour idle time by cause on the timeline")
        .click();
    h.run();
    assert!(!h.state().timeline.show_idle_causes);
}

#[test]
fn the_utilisation_lane_tells_busy_and_idle_time_by_cause() {
    let mut h = harness();
    let names = {
        let app = h.state_mut();
        app.timeline.lane_names(app.profile)
    };
    let lane = names
        .iter()
        .find(|n| n.contains("utilisation"))
        .expect("a utilisation lane")
        .clone();
    assert!(
        names[0].contains("utilisation"),
        "first lane of the GPU: {names:?}"
    );
    // Its header toggles the idle causes.
    h.get_by_label(&lane).click();
    h.run();
    assert!(!h.state().timeline.show_idle_causes);
    h.get_by_label(&lane).click();
    h.run();
    assert!(h.state().timeline.show_idle_causes);
    // Hovering the lane explains the column under the pointer.
    let header = h.get_by_label(&lane).rect();
    let lanes = h.get_by_label("timeline").rect();
    h.hover_at(egui::pos2(lanes.center().x, header.center().y));
    h.run();
    h.get_by_label_contains("GPU 0 utilisation");
    h.get_by_label_contains("idle, host wait");
}

/// The index the lane draws from answers every span exactly: the sums over the whole run equal
/// the analysis, whatever the column widths.
#[test]
fn the_lane_index_sums_to_the_analysis() {
    let profile = alexnet();
    let ins = analyze(profile, TimeRange::ALL, &AnalyzeOptions::default());
    let act = &device_activity(profile, &AnalyzeOptions::default())[0];
    let d = &ins.devices[0];
    let (a, b) = (d.window_start_ns, d.window_end_ns);
    for columns in [1_i64, 7, 640, 1_999] {
        let (mut busy, mut host, mut kernel, mut other) = (0, 0, 0, 0);
        for c in 0..columns {
            let t = act.time_in(a + (b - a) * c / columns, a + (b - a) * (c + 1) / columns);
            busy += t.busy_ns;
            host += t.host_wait_ns;
            kernel += t.kernel_wait_ns;
            other += t.other_ns;
        }
        assert_eq!(busy, d.busy_ns);
        assert_eq!(
            (host, kernel, other),
            (
                d.idle_breakdown.host_wait_ns,
                d.idle_breakdown.kernel_wait_ns,
                d.idle_breakdown.other_ns
            )
        );
    }
}

/// A profile with several streams lists each stream's idle time under a collapsed header.
#[test]
fn each_stream_has_its_idle_time() {
    static P: OnceLock<Profile> = OnceLock::new();
    let mut h = harness_for(P.get_or_init(|| load("live_vector_add_h100.json.gz")));
    h.run();
    h.get_by_label("Idle time per stream").click();
    h.run();
    let streams = &h.state().insights.insights().unwrap().streams;
    assert!(streams.len() >= 2);
    for st in streams {
        h.get_by_label(&format!("stream {}", st.stream));
    }
}
