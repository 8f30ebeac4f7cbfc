//! FLOPs in the viewer (`docs/flops.md`), driven with egui_kittest on the ResNet-50 FP32 training
//! step recorded with shapes on an H200: the FLOPs columns of the operator and kernel tables,
//! the Roofline view (a click on a point selects the operator), MFU in the Insights panel, and
//! snapshots. The FLOPs and GPU times asserted are those of `scripts/flops_reference.py` on the
//! same file (the independent implementation of docs/flops.md); the rates are worked out from
//! them by hand in the comments.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly

mod common;

use std::sync::OnceLock;

use common::load;
use egui::{Event, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope_core::analysis::flops::PeakOverride;
use warpscope_core::{Profile, TimeRange};
use warpscope_ui::Selection;
use warpscope_ui::insights::{InsightsState, insights_ui};
use warpscope_ui::roofline::{RooflineState, roofline_ui};
use warpscope_ui::tables::{Cell, SortBy, TableKind, TableRows, filtered_sorted};
use warpscope_ui::timeline::{TimelineState, timeline_ui};

fn fp32() -> &'static Profile {
    static P: OnceLock<Profile> = OnceLock::new();
    P.get_or_init(|| load("resnet50_b32_fp32_mem_flops.pt.trace.json.gz"))
}

/// The same step with its GPU renamed to one the peaks table lacks.
fn mystery() -> &'static Profile {
    static P: OnceLock<Profile> = OnceLock::new();
    P.get_or_init(|| {
        let mut p = load("resnet50_b32_fp32_mem_flops.pt.trace.json.gz");
        for d in &mut p.devices {
            d.name = "Mystery GPU 9000".to_string();
        }
        p
    })
}

fn row<'a>(t: &'a TableRows, name: &str) -> &'a warpscope_ui::tables::Row {
    t.rows
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

/// The texts of the FLOPs, TFLOP/s, % of peak and AI cells of a row (the last four of the
/// operator table).
fn flops_texts(r: &warpscope_ui::tables::Row, first: usize) -> Vec<String> {
    r.cells[first..first + 4].iter().map(Cell::text).collect()
}

#[test]
fn the_operator_table_shows_flops_rate_peak_and_intensity() {
    let t = TableRows::compute(
        fp32(),
        TableKind::CpuOps,
        TimeRange::ALL,
        PeakOverride::default(),
    );
    let titles: Vec<&str> = t.columns.iter().map(|c| c.title.as_ref()).collect();
    assert_eq!(titles[6..], ["FLOPs", "TFLOP/s", "% of peak", "AI"]);
    // convolution_backward: 1 031 201 095 680 FLOPs, 8 641 072 128 bytes in 11 597 917 ns:
    // 88.91 TFLOP/s, 119.34 FLOP/byte; its kernels are TF32 (494.5 TFLOP/s dense on the H200):
    // 88.91 / 494.5 = 18.0%.
    let bwd = row(&t, "aten::convolution_backward");
    assert_eq!(
        flops_texts(bwd, 6),
        ["1.031 TFLOP", "88.91", "18.0%", "119.34"]
    );
    let peak_note = bwd.cells[8].note().unwrap();
    assert!(
        peak_note
            .starts_with("TF32 peak 494.5 TFLOP/s, memory 4800 GB/s (peaks table, NVIDIA H200: "),
        "{peak_note}"
    );
    assert!(
        bwd.cells[6]
            .note()
            .unwrap()
            .starts_with("1031201095680 FLOPs")
    );
    // cudnn_convolution: 523 153 440 768 FLOPs, 5 762 393 600 bytes in 5 019 055 ns: 104.2
    // TFLOP/s (21.1%), 90.79 FLOP/byte, below the ridge of 494.5 / 4.8 = 103: memory-bound.
    let fwd = row(&t, "aten::cudnn_convolution");
    assert_eq!(
        flops_texts(fwd, 6),
        ["523.2 GFLOP", "104.2", "21.1%", "90.79"]
    );
    let fwd_ai = fwd.cells[9].note().unwrap();
    assert!(
        fwd_ai.starts_with("90.79 FLOP/byte over 5762393600 bytes: memory-bound; TF32 peak"),
        "{fwd_ai}"
    );
    // add_ is elementwise FP32 on the CUDA cores: 712 901 036 FLOPs in 2 060 329 ns.
    let add = row(&t, "aten::add_");
    assert_eq!(flops_texts(add, 6)[..2], ["712.9 MFLOP", "0.346"]);
    // cudnn_batch_norm: 3 556 474 880 FLOPs over 5 691 209 728 bytes, against the FP32 peak.
    let bn = row(&t, "aten::cudnn_batch_norm");
    assert_eq!(flops_texts(bn, 6), ["3.556 GFLOP", "1.02", "1.5%", "0.62"]);
    assert!(
        bn.cells[8]
            .note()
            .unwrap()
            .starts_with("FP32 peak 67.00 TFLOP/s")
    );
    // conv2d counts nothing itself (its FLOPs are counted at cudnn_convolution): unknown, not 0.
    let conv2d = row(&t, "aten::conv2d");
    assert_eq!(flops_texts(conv2d, 6), ["—", "—", "—", "—"]);
    assert!(conv2d.cells[6].note().unwrap().starts_with("unknown"));
}

#[test]
fn unknown_figures_sort_last_both_ways() {
    let t = TableRows::compute(
        fp32(),
        TableKind::CpuOps,
        TimeRange::ALL,
        PeakOverride::default(),
    );
    for descending in [true, false] {
        let view = filtered_sorted(&t.rows, "", Some(SortBy { col: 7, descending }));
        let known: Vec<bool> = view
            .iter()
            .map(|&i| !t.rows[i].cells[7].is_unknown())
            .collect();
        let first_unknown = known.iter().position(|k| !k).unwrap();
        assert!(first_unknown > 5, "too few rates known: {first_unknown}");
        assert!(
            known[first_unknown..].iter().all(|k| !k),
            "descending {descending}"
        );
        let top = &t.rows[view[0]];
        if descending {
            assert_eq!(top.name, "aten::cudnn_convolution");
        } else {
            assert!(!top.cells[7].is_unknown());
        }
    }
}

#[test]
fn kernels_inherit_their_operators_figures() {
    let t = TableRows::compute(
        fp32(),
        TableKind::Kernels,
        TimeRange::ALL,
        PeakOverride::default(),
    );
    let titles: Vec<&str> = t.columns.iter().map(|c| c.title.as_ref()).collect();
    assert_eq!(
        titles[11..],
        ["FLOPs", "TFLOP/s", "% of peak", "AI", "Name"]
    );
    assert_eq!(t.name_col, 15);
    // A kernel inherits its operator's FLOPs split by GPU time over the operator's kernels
    // that do arithmetic (not cuDNN's layout kernels): the TF32 weight-gradient kernel,
    // 225 630 773 769 FLOPs over 841 871 941 bytes in 28 calls of 1.47482 ms
    // (scripts/flops_reference.py gives the same).
    let wgrad = row(
        &t,
        "sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_warpgroupsize1x1x1_g1_execute_segment_k_on_kernel__5x_cudnn",
    );
    assert_eq!(
        flops_texts(wgrad, 11),
        ["225.6 GFLOP", "153.0", "30.9%", "268.01"]
    );
    // An elementwise kernel: the FLOPs of the add_ calls that launched it, against FP32.
    let add = row(
        &t,
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)",
    );
    assert_eq!(
        flops_texts(add, 11),
        ["712.9 MFLOP", "0.368", "0.5%", "0.08"]
    );
    let known = t.rows.iter().filter(|r| !r.cells[12].is_unknown()).count();
    assert!(known > 10, "{known} kernels with a rate");
}

struct RoofApp {
    profile: &'static Profile,
    timeline: TimelineState,
    roofline: RooflineState,
    insights: InsightsState,
    selection: Selection,
    insights_view: bool,
    peaks: PeakOverride,
}

fn harness(profile: &'static Profile, insights_view: bool) -> Harness<'static, RoofApp> {
    let app = RoofApp {
        profile,
        timeline: TimelineState::new(profile),
        roofline: RooflineState::default(),
        insights: InsightsState::default(),
        selection: Selection::default(),
        insights_view,
        peaks: PeakOverride::default(),
    };
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 1000.0))
        .build_ui_state(
            |ui, app: &mut RoofApp| {
                egui::Panel::bottom("panel")
                    .exact_size(620.0)
                    .show(ui, |ui| {
                        if app.insights_view {
                            insights_ui(
                                ui,
                                app.profile,
                                &mut app.insights,
                                &mut app.timeline,
                                &mut app.selection,
                                app.peaks,
                            );
                        } else {
                            roofline_ui(
                                ui,
                                app.profile,
                                &mut app.roofline,
                                &mut app.timeline,
                                &mut app.selection,
                                &mut app.peaks,
                            );
                        }
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

fn click_at(h: &mut Harness<'_, RoofApp>, pos: Pos2) {
    h.hover_at(pos);
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    h.run();
}

#[test]
fn a_click_on_a_roofline_point_selects_the_operator() {
    let mut h = harness(fp32(), false);
    h.get_by_label("· ceilings of GPU 0 · NVIDIA H200");
    let points = h.state().roofline.points().to_vec();
    let names: Vec<&str> = points.iter().map(|p| p.name.as_str()).collect();
    assert!(names.contains(&"aten::convolution_backward"), "{names:?}");
    assert!(
        !names.contains(&"aten::conv2d"),
        "conv2d has no FLOPs of its own"
    );
    // The longest operator is drawn largest.
    let largest = points
        .iter()
        .max_by(|a, b| a.radius.total_cmp(&b.radius))
        .unwrap();
    assert_eq!(largest.name, "aten::convolution_backward");
    let whole = h.state().timeline.visible_range();
    let target = points
        .iter()
        .find(|p| p.name == "aten::cudnn_batch_norm")
        .unwrap()
        .clone();
    click_at(&mut h, target.pos);
    let app = h.state();
    let selected = app.selection.name.map(|id| app.profile.str(id));
    assert_eq!(selected, Some("aten::cudnn_batch_norm"));
    let event = app.selection.event.expect("its longest call is selected");
    let ev = &app.profile.tracks[event.track as usize].events;
    assert_eq!(
        app.profile.str(ev.name[event.index as usize]),
        "aten::cudnn_batch_norm"
    );
    let zoomed = app.timeline.visible_range();
    assert!(zoomed.end_ns - zoomed.start_ns < (whole.end_ns - whole.start_ns) / 10);
    // The line above the plot now gives the operator's figures.
    h.get_by_label_contains("aten::cudnn_batch_norm · 106 calls");
}

#[test]
fn a_profile_without_shapes_says_how_to_record_them() {
    static P: OnceLock<Profile> = OnceLock::new();
    let p = P.get_or_init(|| load("live_vector_add_h100.json.gz"));
    let h = harness(p, false);
    h.get_by_label_contains("record_shapes=True");
}

#[test]
fn an_unknown_device_draws_no_ceilings_and_says_so() {
    let h = harness(mystery(), false);
    h.get_by_label_contains("unknown device, not in the peaks table");
    assert!(!h.state().roofline.points().is_empty());
}

#[test]
fn insights_show_mfu_per_step_and_the_peak_used() {
    let h = harness(fp32(), true);
    // Model FLOPs 1 555 140 968 448 (the reference's) over the 82.984 ms window at the TF32
    // peak: 1.555e12 / (0.082984 s × 494.5e12) = 3.8%; 18.74 TFLOP/s.
    h.get_by_label_contains(
        "GPU 0 · NVIDIA H200: MFU 3.8% · HFU 3.8% · model FLOPs 1.555 TFLOP (18.74 TFLOP/s)",
    );
    h.get_by_label_contains("Peak used: TF32 494.5 TFLOP/s");
    // Step 2: 777 570 484 224 FLOPs in 37.299 ms = 4.2%; step 3 in 45.228 ms = 3.5%.
    h.get_by_label("4.2%");
    h.get_by_label("3.5%");
    h.get_by_label("MFU");
    let report = h.state().insights.flops().unwrap();
    let d = &report.devices[0];
    assert_eq!(d.model_flops, 1_555_140_968_448);
    for st in &d.steps {
        h.get_by_label(&format!("step {}", st.step));
    }
}

#[test]
fn insights_say_an_unknown_device_plainly() {
    let h = harness(mystery(), true);
    h.get_by_label_contains("Unknown device \"Mystery GPU 9000\": not in the peaks table");
    h.get_by_label_contains("MFU —");
}

#[test]
fn snapshot_roofline_resnet50_fp32() {
    let app = RoofApp {
        profile: fp32(),
        timeline: TimelineState::new(fp32()),
        roofline: RooflineState::default(),
        insights: InsightsState::default(),
        selection: Selection::default(),
        insights_view: false,
        peaks: PeakOverride::default(),
    };
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 700.0))
        .wgpu()
        .build_ui_state(
            |ui, app: &mut RoofApp| {
                egui::Frame::central_panel(ui.style()).show(ui, |ui| {
                    roofline_ui(
                        ui,
                        app.profile,
                        &mut app.roofline,
                        &mut app.timeline,
                        &mut app.selection,
                        &mut app.peaks,
                    );
                });
            },
            app,
        );
    h.run();
    h.state_mut().selection.name = fp32().strings.find("aten::convolution_backward");
    h.run();
    h.snapshot("roofline_resnet50_b32_fp32");
}

#[test]
fn snapshot_insights_mfu_resnet50_fp32() {
    let app = RoofApp {
        profile: fp32(),
        timeline: TimelineState::new(fp32()),
        roofline: RooflineState::default(),
        insights: InsightsState::default(),
        selection: Selection::default(),
        insights_view: true,
        peaks: PeakOverride::default(),
    };
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .wgpu()
        .build_ui_state(
            |ui, app: &mut RoofApp| {
                egui::Frame::central_panel(ui.style()).show(ui, |ui| {
                    insights_ui(
                        ui,
                        app.profile,
                        &mut app.insights,
                        &mut app.timeline,
                        &mut app.selection,
                        app.peaks,
                    );
                });
            },
            app,
        );
    h.run();
    h.snapshot("insights_mfu_resnet50_b32_fp32");
}
