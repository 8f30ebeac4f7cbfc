//! The timeline driven through egui_kittest over real profiles from `sample_profiles/`: the
//! lanes a user reads, what the keys, the wheel, clicks and drags do to the view and the
//! selection, the details panel and a snapshot.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers fail loudly

mod common;

use common::alexnet;
use egui::{Event, Key, Modifiers, MouseWheelUnit, PointerButton, Pos2, Rect, Vec2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use warpscope_core::analysis;
use warpscope_core::model::{EventKind, EventRef};
use warpscope_core::{Profile, TimeRange};
use warpscope_ui::Selection;
use warpscope_ui::timeline::layout::ROW_HEIGHT;
use warpscope_ui::timeline::{TimelineState, selected_event_ui, timeline_ui};

struct App {
    profile: &'static Profile,
    state: TimelineState,
    selection: Selection,
    clicked: Option<EventRef>,
    range_selected: Option<TimeRange>,
}

const W: f32 = 1600.0;
const H: f32 = 900.0;

fn harness(profile: &'static Profile) -> Harness<'static, App> {
    let app = App {
        profile,
        state: TimelineState::new(profile),
        selection: Selection::default(),
        clicked: None,
        range_selected: None,
    };
    common::quiet_renderer();
    let mut h = Harness::builder()
        .with_size(egui::vec2(W, H))
        .with_step_dt(1.0 / 60.0) // frames as fast as a user's, so two clicks make a double-click
        .with_max_steps(64)
        .build_ui_state(
            |ui, app: &mut App| {
                egui::Panel::bottom("details")
                    .exact_size(420.0)
                    .show(ui, |ui| {
                        selected_event_ui(ui, app.profile, &mut app.state, &mut app.selection);
                    });
                egui::CentralPanel::default().show(ui, |ui| {
                    let r = timeline_ui(ui, app.profile, &mut app.state, &mut app.selection);
                    if r.clicked.is_some() {
                        app.clicked = r.clicked;
                    }
                    if r.range_selected.is_some() {
                        app.range_selected = r.range_selected;
                    }
                });
            },
            app,
        );
    h.run();
    h
}

/// The lane area (events), from its accessibility node.
fn lanes_rect(h: &Harness<'_, App>) -> Rect {
    h.get_by_label("timeline").rect()
}

/// The lane header whose full name is `full` (its top is the lane's top).
fn lane_header(h: &Harness<'_, App>, full: &str) -> Rect {
    h.get_by_label(full).rect()
}

fn stream7(h: &mut Harness<'_, App>) -> String {
    let app = h.state_mut();
    app.state
        .lane_names(app.profile)
        .into_iter()
        .find(|n| n.ends_with("· stream 7"))
        .expect("alexnet runs on stream 7")
}

fn click_at(h: &mut Harness<'_, App>, pos: Pos2) {
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

/// The time under the x coordinate `x` of the lane area.
fn time_at(h: &Harness<'_, App>, x: f32) -> f64 {
    let r = lanes_rect(h);
    let v = h.state().state.visible_range();
    #[allow(clippy::cast_precision_loss)]
    let (a, b) = (v.start_ns as f64, v.end_ns as f64);
    a + f64::from((x - r.left()) / r.width()) * (b - a)
}

/// The first kernel on stream 7 and its place in the profile.
fn first_kernel(profile: &Profile) -> EventRef {
    let (ti, t) = profile
        .tracks
        .iter()
        .enumerate()
        .find(|(_, t)| t.key.is_gpu() && t.name.ends_with("stream 7"))
        .expect("a stream 7 track");
    let i = t
        .events
        .kind
        .iter()
        .position(|&k| k == EventKind::Kernel)
        .expect("kernels on stream 7");
    EventRef {
        track: u32::try_from(ti).unwrap(),
        index: u32::try_from(i).unwrap(),
    }
}

fn approx(a: i64, b: i64, tol: i64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn lanes_show_the_gpu_stream_and_the_python_threads() {
    let mut h = harness(alexnet());
    let app = h.state_mut();
    let names = app.state.lane_names(app.profile);
    assert!(
        names
            .iter()
            .any(|n| n == "GPU 0 · NVIDIA H100 80GB HBM3 · stream 7"),
        "{names:#?}"
    );
    assert!(
        names
            .iter()
            .any(|n| n.contains("python") && n.contains("thread")),
        "{names:#?}"
    );
    // Kineto names thread 481 twice; the lane shows the specific name only.
    assert!(
        names
            .iter()
            .any(|n| n == "python3 (450) · thread 481 (pt_autograd_0)"),
        "{names:#?}"
    );
    // The GPU comes before the CPU threads.
    let gpu = names.iter().position(|n| n.starts_with("GPU 0")).unwrap();
    let cpu = names.iter().position(|n| n.contains("thread")).unwrap();
    assert!(gpu < cpu);
    // Headers are on screen: the group and the lane, with its full name for the tooltip.
    h.get_by_label("GPU 0 · NVIDIA H100 80GB HBM3");
    h.get_by_label("GPU 0 · NVIDIA H100 80GB HBM3 · stream 7");
}

#[test]
fn clicking_a_group_header_collapses_and_expands_it() {
    let mut h = harness(alexnet());
    let stream = stream7(&mut h);
    h.get_by_label("GPU 0 · NVIDIA H100 80GB HBM3").click();
    h.run();
    let app = h.state_mut();
    let names = app.state.lane_names(app.profile);
    assert!(
        !names.contains(&stream),
        "collapsed group still lists its lanes"
    );
    assert!(h.query_by_label(&stream).is_none());
    h.get_by_label("GPU 0 · NVIDIA H100 80GB HBM3").click();
    h.run();
    h.get_by_label(&stream);
}

#[test]
fn keys_zoom_pan_and_fit_the_view() {
    let mut h = harness(alexnet());
    let whole = h.state().state.visible_range();
    let r = lanes_rect(&h);
    // With the pointer in the middle of the lanes, W zooms in around it.
    h.hover_at(r.center());
    h.run();
    let anchor = time_at(&h, r.center().x);
    h.key_press(Key::W);
    h.run();
    let v = h.state().state.visible_range();
    assert!(approx(
        v.duration_ns(),
        whole.duration_ns() * 3 / 4,
        whole.duration_ns() / 1000
    ));
    #[allow(clippy::cast_possible_truncation)]
    let tol = (whole.duration_ns() / 1000).max(2);
    #[allow(clippy::cast_possible_truncation)]
    let anchor_ns = anchor as i64;
    assert!(approx(time_at(&h, r.center().x) as i64, anchor_ns, tol));

    // D pans right by 15 % of the window, A back.
    let before = h.state().state.visible_range();
    h.key_press(Key::D);
    h.run();
    let after = h.state().state.visible_range();
    assert!(approx(
        after.start_ns - before.start_ns,
        before.duration_ns() * 15 / 100,
        2
    ));
    assert!(approx(after.duration_ns(), before.duration_ns(), 2));
    h.key_press(Key::A);
    h.run();
    assert!(approx(
        h.state().state.visible_range().start_ns,
        before.start_ns,
        2
    ));

    // S zooms out again.
    h.key_press(Key::S);
    h.run();
    assert!(approx(
        h.state().state.visible_range().duration_ns(),
        whole.duration_ns(),
        tol
    ));

    // Zoom far in, then F fits the whole run.
    for _ in 0..10 {
        h.key_press(Key::W);
    }
    h.run();
    assert!(h.state().state.visible_range().duration_ns() < whole.duration_ns() / 10);
    h.key_press(Key::F);
    h.run();
    assert_eq!(h.state().state.visible_range(), whole);

    // With a range selected, F fits the range.
    let range = TimeRange::new(whole.start_ns + 1_000_000, whole.start_ns + 1_500_000);
    h.state_mut().selection.range = Some(range);
    h.key_press(Key::F);
    h.run();
    assert_eq!(h.state().state.visible_range(), range);
}

#[test]
fn the_wheel_zooms_at_the_cursor() {
    let mut h = harness(alexnet());
    let r = lanes_rect(&h);
    let pos = Pos2::new(r.left() + r.width() * 0.25, r.center().y);
    h.hover_at(pos);
    h.run();
    let whole = h.state().state.visible_range();
    let under = time_at(&h, pos.x);
    h.event(Event::MouseWheel {
        unit: MouseWheelUnit::Point,
        delta: Vec2::new(0.0, 100.0),
        phase: egui::TouchPhase::Move,
        modifiers: Modifiers::NONE,
        source: egui::MouseWheelSource::Wheel,
    });
    h.run();
    let v = h.state().state.visible_range();
    assert!(v.duration_ns() < whole.duration_ns() * 7 / 10, "{v:?}");
    #[allow(clippy::cast_possible_truncation)]
    let moved = (time_at(&h, pos.x) - under).abs() as i64;
    assert!(
        moved <= whole.duration_ns() / 1000,
        "anchor moved {moved} ns"
    );
}

#[test]
fn clicking_an_event_selects_it_and_shows_its_details_and_launch() {
    let profile = alexnet();
    let mut h = harness(profile);
    let kernel = first_kernel(profile);
    h.state_mut().state.zoom_to_event(profile, kernel);
    h.run();
    let stream = stream7(&mut h);
    let r = lanes_rect(&h);
    let lane_top = lane_header(&h, &stream).top();
    click_at(&mut h, Pos2::new(r.center().x, lane_top + ROW_HEIGHT / 2.0));
    let app = h.state();
    assert_eq!(app.selection.event, Some(kernel));
    assert_eq!(app.clicked, Some(kernel));
    let t = &profile.tracks[kernel.track as usize];
    let name = t.events.name[kernel.index as usize];
    assert_eq!(app.selection.name, Some(name));

    // The details panel: the name, the launch geometry and the API call that launched it.
    let info = profile.kernel_info(t, kernel.index as usize).unwrap();
    let grid = info.grid.unwrap();
    h.get_by_label(&format!("[{}, {}, {}]", grid[0], grid[1], grid[2]));
    let corr = info.correlation.unwrap();
    h.get_by_label(&corr.to_string());
    h.get_by_label("Launched by");
    // Following the link selects the API call on the CPU thread.
    h.get_by_label_contains("cudaLaunchKernel").click();
    h.run();
    let sel = h.state().selection.event.unwrap();
    let api_track = &profile.tracks[sel.track as usize];
    assert!(!api_track.key.is_gpu());
    assert_eq!(
        profile.str(api_track.events.name[sel.index as usize]),
        "cudaLaunchKernel"
    );
    assert!(h.query_by_label_contains("Launched (1)").is_some());
}

#[test]
fn clicking_empty_space_clears_the_selection() {
    let profile = alexnet();
    let mut h = harness(profile);
    h.state_mut().selection.event = Some(first_kernel(profile));
    h.run();
    let r = lanes_rect(&h);
    click_at(&mut h, Pos2::new(r.center().x, r.bottom() - 5.0));
    assert_eq!(h.state().selection.event, None);
    assert_eq!(h.state().selection.name, None);
}

#[test]
fn double_clicking_an_event_zooms_to_it() {
    let profile = alexnet();
    let mut h = harness(profile);
    let kernel = first_kernel(profile);
    h.state_mut().state.zoom_to_event(profile, kernel);
    let target = h.state().state.visible_range();
    // Zoom out around it so that it is a few points wide in the middle.
    let wide = TimeRange::new(
        target.start_ns - target.duration_ns() * 3,
        target.end_ns + target.duration_ns() * 3,
    );
    h.state_mut().state.set_visible_range(wide);
    h.run();
    let stream = stream7(&mut h);
    let r = lanes_rect(&h);
    let y = lane_header(&h, &stream).top() + ROW_HEIGHT / 2.0;
    let pos = Pos2::new(r.center().x, y);
    h.hover_at(pos);
    h.step();
    for _ in 0..2 {
        for pressed in [true, false] {
            h.event(Event::PointerButton {
                pos,
                button: PointerButton::Primary,
                pressed,
                modifiers: Modifiers::NONE,
            });
            h.step();
        }
    }
    h.run();
    assert_eq!(h.state().state.visible_range(), target);
}

#[test]
fn dragging_on_the_time_axis_selects_a_range() {
    let profile = alexnet();
    let mut h = harness(profile);
    let axis = h.get_by_label("time axis").rect();
    let (x0, x1) = (
        axis.left() + axis.width() * 0.3,
        axis.left() + axis.width() * 0.6,
    );
    let (t0, t1) = (time_at(&h, x0), time_at(&h, x1));
    let y = axis.center().y;
    h.drag_at(Pos2::new(x0, y));
    h.step();
    for k in 1..=5 {
        h.hover_at(Pos2::new(x0 + (x1 - x0) * k as f32 / 5.0, y));
        h.step();
    }
    h.drop_at(Pos2::new(x1, y));
    h.run();
    let range = h.state().selection.range.expect("a range");
    #[allow(clippy::cast_possible_truncation)]
    let px_ns = (h.state().state.visible_range().duration_ns() as f32 / axis.width()) as i64;
    #[allow(clippy::cast_possible_truncation)]
    let (t0, t1) = (t0 as i64, t1 as i64);
    assert!(approx(range.start_ns, t0, px_ns), "{range:?} vs {t0}..{t1}");
    assert!(approx(range.end_ns, t1, px_ns), "{range:?} vs {t0}..{t1}");
    assert_eq!(h.state().range_selected, Some(range));
    // A click on the axis clears it.
    click_at(&mut h, Pos2::new(x0, y));
    assert_eq!(h.state().selection.range, None);
}

#[test]
fn stepping_visits_every_occurrence_of_a_kernel_in_time_order() {
    let profile = alexnet();
    let mut h = harness(profile);
    let activities = analysis::gpu_activities(profile, TimeRange::ALL);
    let top = activities
        .iter()
        .find(|r| r.kind == analysis::ActivityKind::Kernel)
        .unwrap();
    let name = profile.strings.find(&top.name).unwrap();
    h.state_mut().selection.name = Some(name);
    h.state_mut()
        .state
        .set_visible_range(TimeRange::new(-10_000, -5_000));
    let mut seen = Vec::new();
    loop {
        let app = h.state_mut();
        let Some(ev) = app
            .state
            .step_to_occurrence(app.profile, &mut app.selection, true)
        else {
            break;
        };
        let t = &profile.tracks[ev.track as usize];
        assert_eq!(t.events.name[ev.index as usize], name);
        let start = t.events.start_ns[ev.index as usize];
        // The occurrence is in view.
        let v = app.state.visible_range();
        assert!(v.start_ns <= start && start <= v.end_ns);
        seen.push(start);
        assert!(seen.len() <= 10_000, "stepping does not end");
    }
    assert_eq!(seen.len() as u64, top.stats.calls);
    assert!(seen.windows(2).all(|w| w[0] <= w[1]));
    // And backwards from the last one.
    let app = h.state_mut();
    let prev = app
        .state
        .step_to_occurrence(app.profile, &mut app.selection, false)
        .unwrap();
    let t = &profile.tracks[prev.track as usize];
    assert_eq!(t.events.start_ns[prev.index as usize], seen[seen.len() - 2]);
}

#[test]
fn snapshot_alexnet_timeline() {
    let profile = alexnet();
    let mut h = harness(profile);
    let kernel = first_kernel(profile);
    h.state_mut().selection.event = Some(kernel);
    h.state_mut().selection.name =
        Some(profile.tracks[kernel.track as usize].events.name[kernel.index as usize]);
    h.run();
    h.snapshot("timeline_alexnet_b8");
}

/// A CPU thread and a GPU stream for a synthetic profile.
fn thread_and_stream(
    b: &mut warpscope_core::ProfileBuilder,
) -> (
    warpscope_core::builder::TrackId,
    warpscope_core::builder::TrackId,
) {
    use warpscope_core::TrackKey;
    use warpscope_core::model::{GpuLane, TraceId};
    let cpu = b.track(TrackKey::Thread {
        pid: TraceId::Int(1),
        tid: TraceId::Int(1),
    });
    let gpu = b.track(TrackKey::Gpu {
        device: 0,
        context: 1,
        stream: 7,
        lane: GpuLane::Work,
    });
    (cpu, gpu)
}

/// A run whose GPU work sits in its last 5% opens on the GPU work, not on empty lanes; one whose
/// GPU work fills most of it opens on the whole run.
#[test]
fn a_run_opens_on_its_gpu_activity_when_that_is_a_small_part() {
    use warpscope_core::ProfileBuilder;
    use warpscope_core::model::{Format, KernelInfo};
    let build = |gpu_start_ns: i64| {
        let mut b = ProfileBuilder::new("late.nvvp".into(), Format::NvprofSqlite);
        b.origin_raw_ns = Some(0);
        let (cpu, gpu) = thread_and_stream(&mut b);
        let main = b.intern("main");
        let k = b.intern("kernel");
        b.push(cpu, 0, 100_000_000, main, EventKind::CpuOp);
        b.push_kernel(
            gpu,
            gpu_start_ns,
            100_000_000 - gpu_start_ns,
            k,
            KernelInfo::default(),
            0,
        );
        b.finish()
    };
    let late = build(95_000_000);
    let view = TimelineState::new(&late).visible_range();
    assert!(
        view.start_ns > 90_000_000 && view.end_ns < 101_000_000,
        "{view:?}"
    );
    let busy = build(10_000_000);
    let view = TimelineState::new(&busy).visible_range();
    assert!(view.start_ns <= 0 && view.end_ns >= 100_000_000, "{view:?}");
}

/// The details of an API call name it as the tables do (no `_v3020` suffix), and a Kineto
/// occupancy of 0 reads "not estimated", not "0 %".
#[test]
fn details_name_api_calls_as_the_tables_and_do_not_invent_an_occupancy() {
    use warpscope_core::ProfileBuilder;
    use warpscope_core::model::{ApiInfo, Format, KernelInfo};
    let mut b = ProfileBuilder::new("x.sqlite".into(), Format::NsysSqlite);
    b.origin_raw_ns = Some(0);
    let (cpu, gpu) = thread_and_stream(&mut b);
    let sync = b.intern("cudaDeviceSynchronize_v3020");
    let k = b.intern("kernel");
    b.push_api(
        cpu,
        0,
        1_000,
        sync,
        EventKind::Runtime,
        ApiInfo::default(),
        0,
    );
    let info = KernelInfo {
        occupancy_pct: Some(0.0),
        ..KernelInfo::default()
    };
    b.push_kernel(gpu, 2_000, 1_000, k, info, 0);
    let profile: &'static Profile = Box::leak(Box::new(b.finish()));
    let mut h = harness(profile);
    let find = |kind: EventKind| {
        let (t, track) = profile
            .tracks
            .iter()
            .enumerate()
            .find(|(_, t)| t.events.kind.contains(&kind))
            .unwrap();
        let i = track.events.kind.iter().position(|&x| x == kind).unwrap();
        EventRef {
            track: u32::try_from(t).unwrap(),
            index: u32::try_from(i).unwrap(),
        }
    };
    h.state_mut().selection.event = Some(find(EventKind::Runtime));
    h.run();
    h.get_by_label("cudaDeviceSynchronize");
    assert!(h.query_by_label_contains("_v3020").is_none());
    h.state_mut().selection.event = Some(find(EventKind::Kernel));
    h.run();
    h.get_by_label("achieved not estimated");
    assert!(h.query_by_label_contains("0 %").is_none());
}

/// The widget tests' harnesses get a usable `XDG_RUNTIME_DIR`, as the app's `main` gives its
/// window, so that Mesa's drivers do not print `error: XDG_RUNTIME_DIR is invalid or not set`.
#[cfg(target_os = "linux")]
#[test]
fn harnesses_get_a_runtime_directory() {
    common::quiet_renderer();
    let dir = std::env::var_os("XDG_RUNTIME_DIR").expect("XDG_RUNTIME_DIR is set");
    assert!(
        std::path::Path::new(&dir).is_dir(),
        "{}",
        dir.to_string_lossy()
    );
}
