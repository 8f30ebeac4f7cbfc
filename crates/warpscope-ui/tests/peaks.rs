//! The user's peak override in the viewer (`docs/flops.md`, section 5), driven with egui_kittest
//! on the ResNet-50 FP32 training step with its GPU renamed to one the peaks table lacks: no % of
//! peak and no MFU at first; peaks typed into the Roofline view's fields reach the CPU operators
//! table, the Roofline view, the Insights panel's MFU and a comparison's MFU, each figure equal
//! to achieved / the typed peak; bad text is refused with a message and never applied; the
//! analyses run again once per change, not every frame.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly

mod common;

use std::sync::{Arc, OnceLock};

use common::load;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope_core::Profile;
use warpscope_core::analysis::compare::RunLabel;
use warpscope_core::analysis::flops::PeakOverride;
use warpscope_ui::Selection;
use warpscope_ui::compare::{CompareState, compare_ui};
use warpscope_ui::insights::{InsightsState, insights_ui};
use warpscope_ui::peak_override::{APPLY_LABEL, CLEAR_LABEL, GBS_LABEL, TFLOPS_LABEL};
use warpscope_ui::roofline::{RooflineState, roofline_ui};
use warpscope_ui::tables::{Cell, TableKind, TablesState, tables_ui};
use warpscope_ui::timeline::TimelineState;

/// A long name no row of the peaks table matches.
const MYSTERY: &str = "Prototype Accelerator XG-9000 Engineering Sample (rev B, 141 GB HBM3e)";

/// The ResNet-50 FP32 step, its GPU renamed to [`MYSTERY`].
fn mystery() -> &'static Profile {
    static P: OnceLock<Profile> = OnceLock::new();
    P.get_or_init(|| {
        let mut p = load("resnet50_b32_fp32_mem_flops.pt.trace.json.gz");
        for d in &mut p.devices {
            d.name = MYSTERY.to_string();
        }
        p
    })
}

#[derive(Clone, Copy, PartialEq)]
enum View {
    Tables,
    Roofline,
    Insights,
}

/// The widgets of one profile tab, with the one override the app holds for all of them.
struct App {
    profile: &'static Profile,
    timeline: TimelineState,
    tables: TablesState,
    roofline: RooflineState,
    insights: InsightsState,
    selection: Selection,
    peaks: PeakOverride,
    view: View,
}

fn harness(peaks: PeakOverride) -> Harness<'static, App> {
    let profile = mystery();
    let app = App {
        profile,
        timeline: TimelineState::new(profile),
        tables: TablesState::new(TableKind::CpuOps),
        roofline: RooflineState::default(),
        insights: InsightsState::default(),
        selection: Selection::default(),
        peaks,
        view: View::Tables,
    };
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1400.0, 900.0))
        .build_ui_state(
            |ui, app: &mut App| {
                egui::CentralPanel::default().show(ui, |ui| match app.view {
                    View::Tables => {
                        tables_ui(
                            ui,
                            app.profile,
                            &mut app.tables,
                            &mut app.selection,
                            app.peaks,
                        );
                    }
                    View::Roofline => roofline_ui(
                        ui,
                        app.profile,
                        &mut app.roofline,
                        &mut app.timeline,
                        &mut app.selection,
                        &mut app.peaks,
                    ),
                    View::Insights => insights_ui(
                        ui,
                        app.profile,
                        &mut app.insights,
                        &mut app.timeline,
                        &mut app.selection,
                        app.peaks,
                    ),
                });
            },
            app,
        );
    h.run();
    h
}

fn show(h: &mut Harness<'_, App>, view: View) {
    h.state_mut().view = view;
    h.run();
}

/// The value and text under `title` in the CPU operators table's row `name`.
fn op_cell(h: &Harness<'_, App>, name: &str, title: &str) -> (Option<f64>, String) {
    let app = h.state();
    let rows = app.tables.visible_rows();
    let row = rows
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no row {name}"));
    let col = warpscope_ui::tables::OP_COLUMNS
        .iter()
        .position(|c| c.title == title)
        .unwrap_or_else(|| panic!("no column {title}"));
    let cell = &row.cells[col];
    let value = match cell {
        Cell::Figure { value, .. } => *value,
        _ => None,
    };
    (value, cell.text())
}

/// Types `text` into the field labelled `label` (replacing what it held) and applies it.
fn type_peak(h: &mut Harness<'_, App>, label: &str, text: &str) {
    h.get_by_label(label).focus();
    h.run();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.get_by_label(label).type_text(text);
    h.run();
    h.get_by_label(APPLY_LABEL).click();
    h.run();
}

#[test]
fn typed_peaks_give_every_figure_and_bad_text_is_refused() {
    let mut h = harness(PeakOverride::default());
    // An unknown device: rates, but no % of peak.
    let (rate, _) = op_cell(&h, "aten::convolution_backward", "TFLOP/s");
    let rate = rate.expect("the rate needs no peak");
    assert_eq!(
        op_cell(&h, "aten::convolution_backward", "% of peak").1,
        "—"
    );
    let tables_before = h.state().tables.computations();

    show(&mut h, View::Roofline);
    h.get_by_label_contains("unknown device, not in the peaks table");
    h.get_by_label_contains("in use: unknown device");
    let runs = h.state().roofline.computations();
    type_peak(&mut h, TFLOPS_LABEL, "400");
    assert_eq!(h.state().peaks.tflops, Some(400.0));
    h.get_by_label_contains("in use: user override: 400 TFLOP/s; no bandwidth known");
    type_peak(&mut h, GBS_LABEL, "3000");
    assert_eq!(
        h.state().peaks,
        PeakOverride {
            tflops: Some(400.0),
            gbs: Some(3000.0)
        }
    );
    h.get_by_label_contains("in use: user override: 400 TFLOP/s, 3000 GB/s");
    h.get_by_label_contains("(user override)");
    // Two changes, two analyses; frames without a change compute nothing.
    assert_eq!(h.state().roofline.computations(), runs + 2);
    h.run();
    h.run();
    assert_eq!(h.state().roofline.computations(), runs + 2);
    // The view's ceilings are the typed ones: the ridge at 400e12 / 3000e9 = 133.3 FLOP/byte.
    let report = h.state().roofline.report().unwrap();
    let d = &report.devices[0];
    assert_eq!(d.peaks.bytes_per_s(), Some(3000e9));
    let bwd = report
        .operators
        .iter()
        .find(|r| r.name == "aten::convolution_backward")
        .unwrap();
    // 119.34 FLOP/byte is below the ridge: memory-bound, its roof 119.34 × 3 TB/s.
    assert_eq!(bwd.roofline.bound.map(|b| b.as_str()), Some("memory"));

    // Bad text is refused, visibly, and the override stays.
    type_peak(&mut h, TFLOPS_LABEL, "-5");
    h.get_by_label("Not applied: --peak-tflops must be a number greater than 0");
    assert_eq!(h.state().peaks.tflops, Some(400.0));
    type_peak(&mut h, GBS_LABEL, "fast");
    h.get_by_label("Not applied: --peak-gbs must be a number greater than 0, not \"fast\"");
    type_peak(&mut h, TFLOPS_LABEL, "400");
    h.get_by_label("Not applied: --peak-gbs must be a number greater than 0, not \"fast\"");
    assert_eq!(
        h.state().peaks,
        PeakOverride {
            tflops: Some(400.0),
            gbs: Some(3000.0)
        }
    );
    // Put right, the same peaks again: the message goes, nothing is computed again.
    type_peak(&mut h, GBS_LABEL, "3000");
    assert!(h.state().roofline.refused_peaks().is_none());
    assert!(h.query_by_label_contains("Not applied").is_none());
    assert_eq!(h.state().roofline.computations(), runs + 2);

    // The table shows % of peak = achieved / the typed peak: 88.91 / 400 = 22.2%.
    show(&mut h, View::Tables);
    let (pct, text) = op_cell(&h, "aten::convolution_backward", "% of peak");
    assert_eq!(text, "22.2%");
    let expected = rate / 400.0 * 100.0;
    assert!(
        (pct.unwrap() - expected).abs() < 1e-9,
        "{pct:?} against {expected}"
    );
    assert_eq!(h.state().tables.computations(), tables_before + 1);

    // Insights: MFU = model FLOPs / (window × 400 TFLOP/s) =
    // 1 555 140 968 448 / (0.082984 s × 400e12) = 4.7%.
    show(&mut h, View::Insights);
    let d = h.state().insights.flops().unwrap().devices[0].clone();
    #[allow(clippy::cast_precision_loss)]
    let mfu = d.model_flops as f64 / (d.window_ns as f64 * 1e-9 * 400e12);
    assert!((d.mfu.unwrap() - mfu).abs() < 1e-12);
    h.get_by_label_contains(&format!("MFU {:.1}%", mfu * 100.0));
    h.get_by_label_contains("MFU 4.7%");
    h.get_by_label_contains("from user override: 400 TFLOP/s, 3000 GB/s");

    // Back to the table's figures: unknown again.
    show(&mut h, View::Roofline);
    h.get_by_label(CLEAR_LABEL).click();
    h.run();
    assert_eq!(h.state().peaks, PeakOverride::default());
    show(&mut h, View::Tables);
    assert_eq!(
        op_cell(&h, "aten::convolution_backward", "% of peak").1,
        "—"
    );
}

#[test]
fn peaks_from_the_command_line_fill_the_fields() {
    let mut h = harness(PeakOverride {
        tflops: Some(494.5),
        gbs: None,
    });
    // 88.91 / 494.5 = 18.0%: what the H200's TF32 row gives for the same step.
    assert_eq!(
        op_cell(&h, "aten::convolution_backward", "% of peak").1,
        "18.0%"
    );
    show(&mut h, View::Roofline);
    h.get_by_label_contains("in use: user override: 494.5 TFLOP/s; no bandwidth known");
    let field = h.get_by_label(TFLOPS_LABEL);
    assert_eq!(field.value().as_deref(), Some("494.5"));
}

#[test]
fn a_comparison_measures_mfu_against_the_override() {
    let runs: Vec<Arc<Profile>> = vec![Arc::new(mystery().clone())];
    let labels: Vec<RunLabel> = runs.iter().map(|p| RunLabel::of_profile(p)).collect();
    let state = CompareState::new(runs, &labels, 0).unwrap();
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1600.0, 700.0))
        .build_ui_state(
            |ui, (state, peaks): &mut (CompareState, PeakOverride)| {
                egui::CentralPanel::default().show(ui, |ui| compare_ui(ui, state, *peaks));
            },
            (state, PeakOverride::default()),
        );
    h.run();
    h.get_by_label("MFU run 0: —");
    assert!(h.query_by_label_contains("user override").is_none());
    h.state_mut().1 = PeakOverride {
        tflops: Some(400.0),
        gbs: None,
    };
    h.run();
    let f = h.state().0.comparison.runs[0].flops.clone().unwrap();
    // One GPU: the run's MFU is its device's, model FLOPs / (window × 400 TFLOP/s), which is
    // its model TFLOP/s over 400.
    let mfu = f.mfu.unwrap();
    let expected = f.tflops_per_s.unwrap() / 400.0;
    assert!((mfu - expected).abs() < 1e-12, "{mfu} against {expected}");
    h.get_by_label(&format!("MFU run 0: {:.1}%", mfu * 100.0));
    h.get_by_label("MFU run 0: 4.7%");
    h.get_by_label_contains("MFU against the user override: 400 TFLOP/s");
}
