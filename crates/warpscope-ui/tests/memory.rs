//! The Memory panel and the memory lane, driven with egui_kittest on the ResNet-50 training
//! step recorded with `profile_memory=True`: what a user reads, the active-memory timeline, and
//! what a click on an operator does to the timeline.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly

mod common;

use std::sync::OnceLock;

use common::load;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope_core::Profile;
use warpscope_core::analysis::memory::MemoryCurve;
use warpscope_core::model::MemoryDevice;
use warpscope_ui::Selection;
use warpscope_ui::memory::{MemoryState, memory_ui};
use warpscope_ui::memory_blocks::ActiveMemory;
use warpscope_ui::timeline::{TimelineState, timeline_ui};

fn fp32() -> &'static Profile {
    static P: OnceLock<Profile> = OnceLock::new();
    P.get_or_init(|| load("resnet50_b32_fp32_mem_flops.pt.trace.json.gz"))
}

struct App {
    profile: &'static Profile,
    timeline: TimelineState,
    memory: MemoryState,
    selection: Selection,
}

fn harness(profile: &'static Profile) -> Harness<'static, App> {
    let app = App {
        profile,
        timeline: TimelineState::new(profile),
        memory: MemoryState::default(),
        selection: Selection::default(),
    };
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 1200.0))
        .build_ui_state(
            |ui, app: &mut App| {
                egui::Panel::bottom("memory")
                    .exact_size(800.0)
                    .show(ui, |ui| {
                        memory_ui(
                            ui,
                            app.profile,
                            &mut app.memory,
                            &mut app.timeline,
                            &mut app.selection,
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
fn the_panel_reads_the_peak_and_its_holders() {
    let mut h = harness(fp32());
    h.get_by_label("3.03 GiB");
    h.get_by_label("GPU 0 · NVIDIA H200 (139.80 GiB)");
    assert!(h.query_all_by_label("aten::cudnn_convolution").count() >= 1);
    assert_eq!(
        h.query_all_by_label("(allocated before the recording)")
            .count(),
        2
    );
    h.get_by_label_contains("1. GPU 0: the reserved peak is 3.66 GiB");
    // The peak's time takes the timeline there.
    h.get_by_label("at 58.794ms").click_accesskit();
    h.run();
    let view = h.state().timeline.visible_range();
    assert!(
        view.start_ns <= 58_794_000 && 58_794_000 <= view.end_ns,
        "{view:?}"
    );
    assert!(view.duration_ns() < 85_000_000);
}

#[test]
fn the_active_memory_timeline_stacks_every_live_block() {
    let p = fp32();
    let layout = ActiveMemory::new(p, MemoryDevice::Gpu(0));
    assert!(!layout.is_empty());
    let mut h = harness(p);
    h.get_by_label("Active memory timeline (every allocation a band)")
        .click_accesskit();
    h.run();
    h.get_by_label_contains("every allocation a band from its allocation to its free");
    h.snapshot("memory_panel_resnet50_fp32");
}

#[test]
fn the_lane_curve_peaks_where_the_report_does() {
    let p = fp32();
    let curve = MemoryCurve::of(p, MemoryDevice::Gpu(0));
    let k = curve.peak.unwrap();
    assert_eq!(curve.allocated_bytes[k], 3_254_683_136);
    // The largest value over the whole run, found through the block maxima, is the peak.
    let all = curve.max_in(i64::MIN / 2, i64::MAX / 2).unwrap();
    assert_eq!(all.allocated_bytes, 3_254_683_136);
    assert_eq!(all.reserved_bytes, curve.max_reserved_bytes);
}
