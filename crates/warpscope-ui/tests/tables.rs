//! The ranked tables and the range header, driven with egui_kittest on real Kineto profiles from
//! `sample_profiles/`: what a user reads in them, what clicking and typing do, and a snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly

mod common;

use common::{alexnet, resnet};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use warpscope_core::analysis::flops::PeakOverride;
use warpscope_core::analysis::{self, ActivityKind};
use warpscope_core::model::{Format, GpuLane, KernelInfo};
use warpscope_core::{Profile, ProfileBuilder, TimeRange, TrackKey};
use warpscope_ui::Selection;
use warpscope_ui::format_duration;
use warpscope_ui::range_stats::range_stats_ui;
use warpscope_ui::tables::{Cell, TableKind, TablesResponse, TablesState, tables_ui};

/// What the test harness keeps between frames.
struct App {
    profile: &'static Profile,
    tables: TablesState,
    selection: Selection,
    last: TablesResponse,
    with_range_header: bool,
}

fn harness(profile: &'static Profile, kind: TableKind, size: (f32, f32)) -> Harness<'static, App> {
    let app = App {
        profile,
        tables: TablesState::new(kind),
        selection: Selection::default(),
        last: TablesResponse::default(),
        with_range_header: false,
    };
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(size.0, size.1))
        .build_ui_state(
            |ui, app: &mut App| {
                if app.with_range_header {
                    range_stats_ui(ui, app.profile, &mut app.selection);
                }
                let r = tables_ui(
                    ui,
                    app.profile,
                    &mut app.tables,
                    &mut app.selection,
                    PeakOverride::default(),
                );
                if r != TablesResponse::default() {
                    app.last = r;
                }
            },
            app,
        );
    h.run();
    h
}

fn first_row_name(h: &Harness<'_, App>) -> String {
    h.state().tables.visible_rows()[0].name.clone()
}

/// The text a label shows.
fn text_of(node: &egui_kittest::Node<'_>) -> String {
    let n = node.accesskit_node();
    n.label()
        .filter(|l| !l.is_empty())
        .or_else(|| n.value())
        .unwrap_or_default()
}

/// The "N of M rows" line.
fn row_count_line(h: &Harness<'_, App>) -> String {
    text_of(&h.get_by_label_contains(" rows"))
}

#[test]
fn top_kernel_of_alexnet_leads_the_kernels_table() {
    let mut h = harness(alexnet(), TableKind::Kernels, (1200.0, 700.0));
    h.run();
    let rows = h.state().tables.visible_rows();
    let top = rows[0];
    assert!(
        top.name
            .starts_with("void at::native::(anonymous namespace)::multi_tensor_apply_kernel<"),
        "{}",
        top.name
    );
    assert!(top.name.contains("BinaryOpListAlphaFunctor"));
    assert_eq!(top.cells[2], Cell::Count(12));
    assert_eq!(top.cells[1].text(), "1.0611ms");
    // Only kernels, and the user sees the row with its figures.
    let kernels = analysis::gpu_activities(alexnet(), TimeRange::ALL)
        .into_iter()
        .filter(|r| r.kind == ActivityKind::Kernel)
        .count();
    assert_eq!(rows.len(), kernels);
    let name = top.name.clone();
    h.get_by_label(&name);
    h.get_by_label("Calls 12");
    h.get_by_label("Time 1.0611ms");
    assert!(row_count_line(&h).starts_with(&format!("{kernels} of {kernels} rows")));
}

/// The Kernels table adds what the insight layer knows: theoretical occupancy with its limiter,
/// Kineto's achieved occupancy, Tensor Cores and the launch delay.
#[test]
fn the_kernels_table_shows_occupancy_tensor_cores_and_launch_delay() {
    let mut h = harness(alexnet(), TableKind::Kernels, (1600.0, 700.0));
    h.run();
    let rows = h.state().tables.visible_rows();
    // The fused SGD update runs at full occupancy, queued behind the backward pass.
    let top = rows[0];
    assert_eq!(top.cells[5], Cell::MaybePercent(Some(100.0)));
    assert_eq!(top.cells[6].text(), "(full)");
    assert_eq!(top.cells[7].text(), "60%");
    assert_eq!(top.cells[9].text(), "290.42µs");
    // cuBLAS's gemmSN_TN at 31% is limited by its registers.
    let gemm = rows
        .iter()
        .find(|r| r.name.starts_with("void gemmSN_TN_kernel"))
        .unwrap();
    assert_eq!(gemm.cells[5].text(), "31%");
    assert_eq!(gemm.cells[6].text(), "registers");
    // cuDNN's TF32 kernels run on Tensor Cores.
    let tf32 = rows
        .iter()
        .find(|r| {
            r.name
                .starts_with("sm90_xmma_dgrad_implicit_gemm_f32f32_tf32f32")
        })
        .unwrap();
    assert_eq!(tf32.cells[8], Cell::Flag(true));
    h.get_by_label("Occ.");
    h.get_by_label("Limited by");
}

#[test]
fn filter_keeps_only_matching_rows() {
    let mut h = harness(alexnet(), TableKind::GpuActivities, (1200.0, 700.0));
    let all = analysis::gpu_activities(alexnet(), TimeRange::ALL);
    let expected = all
        .iter()
        .filter(|r| r.name.to_lowercase().contains("gemm"))
        .count();
    assert!(expected > 0);
    h.get_by_role(egui::Role::TextInput).click();
    h.run();
    h.get_by_role(egui::Role::TextInput).type_text("GEMM");
    h.run();
    let rows = h.state().tables.visible_rows();
    assert_eq!(rows.len(), expected);
    assert!(rows.iter().all(|r| r.name.to_lowercase().contains("gemm")));
    assert!(row_count_line(&h).starts_with(&format!("{expected} of {} rows", all.len())));
}

#[test]
fn clicking_a_header_sorts_by_it_and_again_reverses() {
    let mut h = harness(alexnet(), TableKind::GpuActivities, (1200.0, 700.0));
    let all = analysis::gpu_activities(alexnet(), TimeRange::ALL);
    // By default: the analysis ranking, longest total first.
    assert_eq!(first_row_name(&h), all[0].name);

    h.get_by_label("Calls").click();
    h.run();
    let most = all.iter().map(|r| r.stats.calls).max().unwrap();
    let first_most = all.iter().find(|r| r.stats.calls == most).unwrap();
    assert_eq!(first_row_name(&h), first_most.name);
    h.get_by_label("Calls (descending)");

    h.get_by_label("Calls (descending)").click();
    h.run();
    let fewest = all.iter().map(|r| r.stats.calls).min().unwrap();
    let rows = h.state().tables.visible_rows();
    assert_eq!(rows[0].cells[2], Cell::Count(fewest));
    assert_eq!(rows.last().unwrap().cells[2], Cell::Count(most));
    h.get_by_label("Calls (ascending)");

    // Text sorts A to Z.
    h.get_by_label("Name").click();
    h.run();
    let names: Vec<String> = h
        .state()
        .tables
        .visible_rows()
        .iter()
        .map(|r| r.name.to_lowercase())
        .collect();
    assert!(names.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn clicking_a_row_selects_that_kernel() {
    // 1400 points: with the FLOPs columns the kernel names start past 1100.
    let profile = alexnet();
    let mut h = harness(profile, TableKind::Kernels, (1400.0, 700.0));
    let second = h.state().tables.visible_rows()[1].name.clone();
    h.get_by_label(&second).click();
    h.run();
    let id = profile.strings.find(&second).unwrap();
    assert_eq!(h.state().selection.name, Some(id));
    assert_eq!(h.state().last.clicked_name, Some(id));
    assert_eq!(h.state().tables.selected_row(), Some(second.as_str()));

    // With a name selected, the step buttons appear and ask for the next or previous one.
    h.get_by_label("next occurrence").click();
    h.run();
    assert_eq!(h.state().last.step, Some(true));
    h.get_by_label("previous occurrence").click();
    h.run();
    assert_eq!(h.state().last.step, Some(false));
}

#[test]
fn copy_rows_highlight_but_select_nothing_on_the_timeline() {
    let mut h = harness(alexnet(), TableKind::GpuActivities, (1200.0, 700.0));
    h.get_by_label("Name").click();
    h.run();
    let copy = h
        .state()
        .tables
        .visible_rows()
        .iter()
        .find(|r| r.name.starts_with("[CUDA memcpy"))
        .map(|r| r.name.clone())
        .expect("alexnet copies data to the GPU");
    h.get_by_label(&copy).click();
    h.run();
    assert_eq!(h.state().selection.name, None);
    assert_eq!(h.state().tables.selected_row(), Some(copy.as_str()));
}

#[test]
fn a_name_selected_on_the_timeline_selects_and_reveals_its_row() {
    let profile = resnet();
    let mut h = harness(profile, TableKind::Kernels, (1000.0, 300.0));
    let rows = h.state().tables.visible_rows().len();
    assert!(
        rows > 30,
        "needs a table longer than the view ({rows} rows)"
    );
    let last = h.state().tables.visible_rows()[rows - 1].name.clone();
    assert!(
        h.query_by_label(&last).is_none(),
        "the last row starts out of view"
    );
    h.state_mut().selection.name = profile.strings.find(&last);
    h.run();
    assert_eq!(h.state().tables.selected_row(), Some(last.as_str()));
    h.get_by_label(&last);
}

#[test]
fn a_range_shows_its_own_totals_and_header() {
    let profile = alexnet();
    let mut h = harness(profile, TableKind::GpuActivities, (1200.0, 700.0));
    let (lo, hi) = profile
        .tracks
        .iter()
        .filter(|t| t.key.is_gpu() && !t.events.is_empty())
        .fold((i64::MAX, i64::MIN), |(lo, hi), t| {
            let n = t.events.len() - 1;
            (
                lo.min(t.events.start_ns[0]),
                hi.max(t.events.start_ns[n] + t.events.dur_ns[n]),
            )
        });
    let range = TimeRange::new(lo + (hi - lo) / 3, lo + (hi - lo) * 2 / 3);
    let all_total = analysis::gpu_total_ns(profile, TimeRange::ALL);
    let range_total = analysis::gpu_total_ns(profile, range);
    assert!(range_total < all_total);
    assert!(row_count_line(&h).contains(&format!("GPU time {}", format_duration(all_total))));

    h.state_mut().selection.range = Some(range);
    h.state_mut().with_range_header = true;
    h.run();
    let summed: i64 = h
        .state()
        .tables
        .visible_rows()
        .iter()
        .map(|r| match r.cells[1] {
            Cell::DurationNs(ns) => ns,
            _ => panic!("Time column holds durations"),
        })
        .sum();
    assert_eq!(summed, range_total);
    assert!(row_count_line(&h).contains(&format!("GPU time {}", format_duration(range_total))));

    // The header: the range's length, how busy the GPU was, and the GPU time in it.
    let busy = analysis::gpu_busy_ns(profile, range);
    assert_eq!(busy.len(), 1);
    #[allow(clippy::cast_precision_loss)]
    let pct = busy[0].1 as f64 * 100.0 / range.duration_ns() as f64;
    let header = text_of(&h.get_by_label_contains("Range "));
    assert_eq!(
        header,
        format!(
            "Range {} · GPU {} busy {pct:.1}% · GPU time {}",
            format_duration(range.duration_ns()),
            busy[0].0,
            format_duration(range_total)
        )
    );
    h.get_by_label("clear").click();
    h.run();
    assert_eq!(h.state().selection.range, None);
    assert!(h.query_by_label_contains("Range ").is_none());
    assert!(row_count_line(&h).contains(&format!("GPU time {}", format_duration(all_total))));
}

#[test]
fn rows_are_computed_once_per_profile_and_range() {
    let mut h = harness(alexnet(), TableKind::GpuActivities, (1200.0, 700.0));
    for _ in 0..5 {
        h.run();
    }
    assert_eq!(h.state().tables.computations(), 1);
    h.state_mut().selection.range = Some(TimeRange::new(0, 1));
    h.run();
    h.run();
    assert_eq!(h.state().tables.computations(), 2);
}

/// A profile with `n` kernels of distinct names.
fn many_kernels(n: usize) -> Profile {
    let mut b = ProfileBuilder::new("synthetic".into(), Format::ChromeJson);
    let track = b.track(TrackKey::Gpu {
        device: 0,
        context: 1,
        stream: 7,
        lane: GpuLane::Work,
    });
    for i in 0..n {
        let name = b.intern(&format!("kernel_{i:05}"));
        let i = i64::try_from(i).unwrap();
        b.push_kernel(track, i * 1000, 100 + i, name, KernelInfo::default(), 0);
    }
    b.finish()
}

#[test]
fn ten_thousand_rows_lay_out_only_the_visible_ones() {
    let profile: &'static Profile = Box::leak(Box::new(many_kernels(10_000)));
    let mut h = harness(profile, TableKind::Kernels, (1200.0, 700.0));
    assert!(row_count_line(&h).starts_with("10000 of 10000 rows"));
    assert_eq!(h.state().tables.visible_rows().len(), 10_000);
    let drawn = h.state().tables.rows_drawn();
    assert!((10..100).contains(&drawn), "laid out {drawn} rows");
    // The longest kernel leads; the shortest is not laid out at all.
    h.get_by_label("kernel_09999");
    assert!(h.query_by_label("kernel_00000").is_none());
    // Selecting the shortest from the timeline scrolls to it: still only a screenful laid out.
    h.state_mut().selection.name = profile.strings.find("kernel_00000");
    h.run();
    h.get_by_label("kernel_00000");
    assert!(h.state().tables.rows_drawn() < 100);
}

#[test]
fn every_table_shows_rows_for_resnet() {
    for kind in TableKind::ALL {
        let h = harness(resnet(), kind, (1200.0, 700.0));
        assert!(
            !h.state().tables.visible_rows().is_empty(),
            "{} is empty",
            kind.title()
        );
    }
}

#[test]
fn snapshot_resnet50_gpu_activities() {
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(1200.0, 700.0))
        .wgpu()
        .build_ui_state(
            |ui, app: &mut App| {
                egui::Frame::central_panel(ui.style()).show(ui, |ui| {
                    range_stats_ui(ui, app.profile, &mut app.selection);
                    tables_ui(
                        ui,
                        app.profile,
                        &mut app.tables,
                        &mut app.selection,
                        PeakOverride::default(),
                    );
                });
            },
            App {
                profile: resnet(),
                tables: TablesState::default(),
                selection: Selection::default(),
                last: TablesResponse::default(),
                with_range_header: true,
            },
        );
    h.run();
    let second = h.state().tables.visible_rows()[2].name.clone();
    h.state_mut().selection.name = resnet().strings.find(&second);
    h.run();
    h.snapshot("tables_resnet50_b64_fp32");
}

/// What the tables and the header show for a range comes from the profile's activity index
/// (prefix sums and order statistics instead of a scan): the same rows, cell for cell, and the
/// same header, over random ranges and ranges whose edges fall inside events.
#[test]
fn tables_and_header_from_the_index_equal_the_scan() {
    use warpscope_core::analysis::range_index::ActivityIndex;
    use warpscope_ui::range_stats::RangeStats;
    use warpscope_ui::tables::TableRows;
    fn sorted(rows: &[warpscope_ui::tables::Row]) -> Vec<(String, Vec<String>)> {
        let mut v: Vec<_> = rows
            .iter()
            .map(|r| (r.name.clone(), r.cells.iter().map(Cell::text).collect()))
            .collect();
        v.sort();
        v
    }
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: i64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        i64::try_from(seed % u64::try_from(n.max(1)).unwrap()).unwrap()
    };
    for profile in [alexnet(), resnet()] {
        let index = ActivityIndex::new(profile);
        let (lo, hi) = profile.span_ns().unwrap();
        let kernels = &profile
            .tracks
            .iter()
            .find(|t| t.key.is_gpu() && t.events.len() > 100)
            .unwrap()
            .events;
        for k in 0..60 {
            let range = if k % 2 == 0 {
                let a = lo + next(hi - lo);
                TimeRange::new(a, a + next(hi - lo) / 4)
            } else {
                // From inside one kernel to inside another.
                let i = usize::try_from(next(i64::try_from(kernels.len()).unwrap())).unwrap();
                let j = usize::try_from(next(i64::try_from(kernels.len()).unwrap())).unwrap();
                let inside = |i: usize| kernels.start_ns[i] + kernels.dur_ns[i] / 2;
                TimeRange::new(inside(i), inside(j) + 1)
            };
            for kind in [TableKind::GpuActivities, TableKind::Kernels] {
                let scan = TableRows::compute(profile, kind, range, PeakOverride::default());
                let fast = TableRows::compute_indexed(
                    profile,
                    Some(&index),
                    kind,
                    range,
                    PeakOverride::default(),
                );
                assert_eq!(sorted(&fast.rows), sorted(&scan.rows), "{kind:?} {range:?}");
                assert_eq!(fast.total, scan.total);
            }
            assert_eq!(
                RangeStats::compute_indexed(profile, &index, range),
                RangeStats::compute(profile, range),
                "{range:?}"
            );
        }
    }
}

/// Every table of the panel, on a real trace: each row has one cell under each header, the row
/// is named by the cell under its name column, and a kernel's figures sit under the headers that
/// name them (read by title, as a user reads them, not by position).
#[test]
fn every_table_has_a_cell_under_each_header() {
    use warpscope_ui::tables::TableRows;
    let profile = resnet();
    for kind in TableKind::ALL {
        let table = TableRows::compute(profile, kind, TimeRange::ALL, PeakOverride::default());
        assert!(
            !table.rows.is_empty() || kind == TableKind::ApiCalls,
            "{kind:?}"
        );
        for row in &table.rows {
            assert_eq!(
                row.cells.len(),
                table.columns.len(),
                "{kind:?} {}",
                row.name
            );
            assert_eq!(row.cells[table.name_col].text(), row.name, "{kind:?}");
        }
    }
    let kernels = TableRows::compute(
        profile,
        TableKind::Kernels,
        TimeRange::ALL,
        PeakOverride::default(),
    );
    let top = &kernels.rows[0];
    let under = |title: &str| {
        let col = kernels.columns.iter().position(|c| c.title == title);
        top.cells[col.unwrap_or_else(|| panic!("no column {title}"))].clone()
    };
    let activity = analysis::gpu_activities(profile, TimeRange::ALL)
        .into_iter()
        .find(|r| r.name == top.name)
        .unwrap();
    assert_eq!(under("Time"), Cell::DurationNs(activity.stats.total_ns));
    assert_eq!(under("Calls"), Cell::Count(activity.stats.calls));
    assert_eq!(
        under("Median"),
        Cell::MaybeDurationNs(activity.stats.median_ns)
    );
    assert_eq!(
        kernels.columns.last().map(|c| c.title.as_ref()),
        Some("Name")
    );
}
