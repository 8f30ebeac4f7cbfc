//! CPU time per frame of the viewer's main view, laid out as in the app (timeline above; range
//! header and GPU-activities table below): `egui::Context::run_ui` at 1920x1080, zoomed out to
//! the whole run and zoomed in to 10 µs in the middle, on the 466k-event resnet50_b32_60steps
//! trace and on a 10× larger profile built from it. Tessellation is timed separately. The
//! utilisation lanes are also timed alone (their index built once, then painted every frame), and
//! so are the memory lanes (their curves built once), on the memory sample in `sample_profiles/`
//! and on any profile with memory records.
//! Run with `cargo bench -p warpscope-ui --bench frame`.
//!
//! `WARPSCOPE_BENCH_TRACE=FILE` also measures a real file (the 1.4 GB trace that
//! `scripts/gen_kineto_trace.py SRC OUT --copies 10` writes, say; for the memory lanes, a
//! memory-dense one: `scripts/gen_kineto_trace.py
//! sample_profiles/resnet50_b32_fp32_mem_flops.pt.trace.json.gz OUT --copies 219`, 4.7 M
//! events of which 782 k memory records); `WARPSCOPE_BENCH_FRAMES=N` times N frames per view
//! instead of 50. `WARPSCOPE_BENCH_SAMPLES=0` skips the traces of `../shared/samples`.

use std::path::Path;
use std::time::Instant;

use warpscope_core::analysis::insight::{AnalyzeOptions, device_activity};
use warpscope_core::analysis::memory::MemoryCurve;
use warpscope_core::analysis::range_index::ActivityCover;
use warpscope_core::model::{EventKind, TrackKey};
use warpscope_core::{Profile, ProfileBuilder, Progress, TimeRange, import_file};
use warpscope_ui::Selection;
use warpscope_ui::activity_index::activity_index;
use warpscope_ui::range_stats::range_stats_ui;
use warpscope_ui::tables::{TableKind, TablesState, tables_ui};
use warpscope_ui::timeline::memory_lane::memory_lane_ui;
use warpscope_ui::timeline::utilisation::utilisation_ui;
use warpscope_ui::timeline::view::Viewport;
use warpscope_ui::timeline::{TimelineState, timeline_ui};

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/samples/kineto-h100/resnet50_b32_60steps.pt.trace.json.gz"
);
/// A trace with memory records (3,572 of them), shipped with the repository.
const MEMORY_SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../sample_profiles/resnet50_b32_fp32_mem_flops.pt.trace.json.gz"
);
/// Frames per view unless `WARPSCOPE_BENCH_FRAMES` says otherwise.
const FRAMES: usize = 50;

fn main() {
    let frames = std::env::var("WARPSCOPE_BENCH_FRAMES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(FRAMES);
    if let Some(profile) = load(Path::new(MEMORY_SAMPLE)) {
        measure_memory("memory sample", &profile, frames);
    }
    let samples = std::env::var("WARPSCOPE_BENCH_SAMPLES").map_or(true, |v| v != "0");
    if samples && let Some(profile) = load(Path::new(SAMPLE)) {
        measure("466k", &profile, frames);
        let t = Instant::now();
        let big = replicate(&profile, 10);
        println!(
            "built a 10x profile: {} events in {:.1} s",
            big.event_count(),
            t.elapsed().as_secs_f64()
        );
        drop(profile);
        measure("10x", &big, frames);
    }
    if let Some(path) = std::env::var_os("WARPSCOPE_BENCH_TRACE")
        && let Some(profile) = load(Path::new(&path))
    {
        measure("trace", &profile, frames);
        measure_memory("trace", &profile, frames);
    }
    if let Ok(load) = std::fs::read_to_string("/proc/loadavg") {
        println!("loadavg: {}", load.trim());
    }
}

/// The profile in `path`, or `None` (said why) when it is absent or unreadable.
fn load(path: &Path) -> Option<Profile> {
    if !path.exists() {
        println!("skipped: {} is absent", path.display());
        return None;
    }
    let t = Instant::now();
    match import_file(path, &Progress::new()) {
        Ok(p) => {
            println!(
                "loaded {}: {} events on {} tracks in {:.1} s",
                path.display(),
                p.event_count(),
                p.tracks.len(),
                t.elapsed().as_secs_f64()
            );
            Some(p)
        }
        Err(e) => {
            println!("skipped: cannot read {}: {e}", path.display());
            None
        }
    }
}

/// Frames of each view; prints median and p95 of the UI pass and of tessellation.
fn measure(label: &str, profile: &Profile, frames: usize) {
    let ctx = egui::Context::default();
    let mut state = TimelineState::new(profile);
    let mut tables = TablesState::new(TableKind::GpuActivities);
    let mut selection = Selection::default();
    let whole = state.visible_range();
    let mid = whole.start_ns + whole.duration_ns() / 2;
    let t = Instant::now();
    let _ = run_frame(&ctx, profile, &mut state, &mut tables, &mut selection); // builds the caches
    println!("{label}: first frame (builds caches) {:.1} ms", ms(t));
    // What the first range selected on the profile builds (once), so that dragging reads
    // prefix sums instead of scanning the events.
    let t = Instant::now();
    let index = activity_index(&ctx, profile);
    println!(
        "{label}: range index built in {:.1} ms ({} events, {:.1} MB)",
        ms(t),
        index.len(),
        mb(index.heap_bytes())
    );
    // The views: the whole run, 10 µs in the middle, and the whole run while a range is being
    // dragged on the axis (a new range every frame, so the table is recomputed every frame).
    let views = [
        ("whole run", whole, false),
        ("10 µs", TimeRange::new(mid - 5_000, mid + 5_000), false),
        ("dragging", whole, true),
    ];
    for (name, range, dragging) in views {
        let mut ui_ms = Vec::new();
        let mut ui_cpu_ms = Vec::new();
        let mut tess_ms = Vec::new();
        let mut shapes = 0;
        for frame in 0..frames {
            state.set_visible_range(range);
            selection.range = dragging.then(|| {
                let step = whole.duration_ns() / 200;
                let frame = i64::try_from(frame % 50).unwrap_or(0);
                TimeRange::new(mid - step * (frame + 1), mid + step * (frame + 1))
            });
            let cpu = on_cpu_ns();
            let t = Instant::now();
            let out = run_frame(&ctx, profile, &mut state, &mut tables, &mut selection);
            ui_ms.push(ms(t));
            if let (Some(before), Some(after)) = (cpu, on_cpu_ns()) {
                #[allow(clippy::cast_precision_loss)]
                ui_cpu_ms.push(after.saturating_sub(before) as f64 / 1e6);
            }
            shapes = out.shapes.len();
            let t = Instant::now();
            let prims = ctx.tessellate(out.shapes, out.pixels_per_point);
            tess_ms.push(ms(t));
            drop(prims);
        }
        println!(
            "{label} {name:>10}: ui median {:.2} ms, p95 {:.2} ms (on CPU: median {:.2} ms, p95 {:.2} ms) | tessellation median {:.2} ms, p95 {:.2} ms | {shapes} shapes",
            pct(&mut ui_ms, 0.5),
            pct(&mut ui_ms, 0.95),
            pct(&mut ui_cpu_ms, 0.5),
            pct(&mut ui_cpu_ms, 0.95),
            pct(&mut tess_ms, 0.5),
            pct(&mut tess_ms, 0.95),
        );
    }
    measure_utilisation(label, profile, whole, frames);
}

/// The utilisation lanes alone: the index built once, then every lane painted at 1700 px per
/// frame, for the whole run and for 10 µs.
fn measure_utilisation(label: &str, profile: &Profile, whole: TimeRange, frames: usize) {
    let t = Instant::now();
    let activity: Vec<ActivityCover> = device_activity(profile, &AnalyzeOptions::default())
        .iter()
        .map(ActivityCover::new)
        .collect();
    println!("{label}: utilisation index built in {:.1} ms", ms(t));
    let ctx = egui::Context::default();
    let mid = whole.start_ns + whole.duration_ns() / 2;
    for (name, range) in [
        ("whole run", whole),
        ("10 µs", TimeRange::new(mid - 5_000, mid + 5_000)),
    ] {
        #[allow(clippy::cast_precision_loss)]
        let view = Viewport::new(range.start_ns as f64, range.end_ns as f64);
        let mut ui_ms = Vec::new();
        let mut tess_ms = Vec::new();
        let mut shapes = 0;
        for _ in 0..frames {
            let t = Instant::now();
            let mut out = ctx.run_ui(full_hd(), |ui| {
                let painter = ui.painter();
                for (i, act) in activity.iter().enumerate() {
                    #[allow(clippy::cast_precision_loss)]
                    let top = 40.0 + 30.0 * i as f32;
                    let rect =
                        egui::Rect::from_min_size(egui::pos2(200.0, top), egui::vec2(1700.0, 28.0));
                    utilisation_ui(painter, rect, act, &view, true);
                }
            });
            ui_ms.push(ms(t));
            out.textures_delta.clear();
            shapes = out.shapes.len();
            let t = Instant::now();
            drop(ctx.tessellate(out.shapes, out.pixels_per_point));
            tess_ms.push(ms(t));
        }
        println!(
            "{label} utilisation lanes {name:>10}: paint median {:.3} ms, p95 {:.3} ms | tessellation median {:.3} ms | {shapes} shapes, {} lanes",
            pct(&mut ui_ms, 0.5),
            pct(&mut ui_ms, 0.95),
            pct(&mut tess_ms, 0.5),
            activity.len()
        );
    }
}

/// The memory lanes alone: the curves built once, then every device's lane painted at 1700 px
/// per frame, zoomed out to the whole run, to a thousandth of it, and to 10 µs. Each pixel
/// column is two binary searches and a walk up the block maxima, so the cost should not grow
/// with the records.
fn measure_memory(label: &str, profile: &Profile, frames: usize) {
    let t = Instant::now();
    let curves = MemoryCurve::all(profile);
    let points: usize = curves.iter().map(MemoryCurve::len).sum();
    println!(
        "{label}: memory curves built in {:.1} ms ({} records, {points} points, {} lanes)",
        ms(t),
        profile.memory.events.len(),
        curves.len()
    );
    let Some((start_ns, end_ns)) = curves
        .iter()
        .filter_map(|c| Some((*c.time_ns.first()?, *c.time_ns.last()?)))
        .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
    else {
        return;
    };
    let whole = TimeRange::new(start_ns, end_ns + 1);
    let mid = whole.start_ns + whole.duration_ns() / 2;
    let half = (whole.duration_ns() / 2_000).max(1);
    let ctx = egui::Context::default();
    for (name, range) in [
        ("whole run", whole),
        ("1/1000", TimeRange::new(mid - half, mid + half)),
        ("10 µs", TimeRange::new(mid - 5_000, mid + 5_000)),
    ] {
        #[allow(clippy::cast_precision_loss)]
        let view = Viewport::new(range.start_ns as f64, range.end_ns as f64);
        let mut ui_ms = Vec::new();
        let mut ui_cpu_ms = Vec::new();
        let mut tess_ms = Vec::new();
        let mut shapes = 0;
        for _ in 0..frames {
            let cpu = on_cpu_ns();
            let t = Instant::now();
            let mut out = ctx.run_ui(full_hd(), |ui| {
                let painter = ui.painter();
                for (i, curve) in curves.iter().enumerate() {
                    #[allow(clippy::cast_precision_loss)]
                    let top = 40.0 + 30.0 * i as f32;
                    let rect =
                        egui::Rect::from_min_size(egui::pos2(200.0, top), egui::vec2(1700.0, 28.0));
                    memory_lane_ui(painter, rect, curve, &view, egui::Color32::GRAY);
                }
            });
            ui_ms.push(ms(t));
            if let (Some(before), Some(after)) = (cpu, on_cpu_ns()) {
                #[allow(clippy::cast_precision_loss)]
                ui_cpu_ms.push(after.saturating_sub(before) as f64 / 1e6);
            }
            out.textures_delta.clear();
            shapes = out.shapes.len();
            let t = Instant::now();
            drop(ctx.tessellate(out.shapes, out.pixels_per_point));
            tess_ms.push(ms(t));
        }
        println!(
            "{label} memory lanes {name:>10}: paint median {:.3} ms, p95 {:.3} ms (on CPU: median {:.3} ms, p95 {:.3} ms) | tessellation median {:.3} ms | {shapes} shapes, {} lanes",
            pct(&mut ui_ms, 0.5),
            pct(&mut ui_ms, 0.95),
            pct(&mut ui_cpu_ms, 0.5),
            pct(&mut ui_cpu_ms, 0.95),
            pct(&mut tess_ms, 0.5),
            curves.len()
        );
    }
}

fn run_frame(
    ctx: &egui::Context,
    profile: &Profile,
    state: &mut TimelineState,
    tables: &mut TablesState,
    selection: &mut Selection,
) -> egui::FullOutput {
    let mut out = ctx.run_ui(full_hd(), |ui| {
        egui::Panel::bottom("tables")
            .exact_size(400.0)
            .show(ui, |ui| {
                range_stats_ui(ui, profile, selection);
                let _ = tables_ui(
                    ui,
                    profile,
                    tables,
                    selection,
                    warpscope_core::analysis::flops::PeakOverride::default(),
                );
            });
        egui::CentralPanel::default().show(ui, |ui| {
            let _ = timeline_ui(ui, profile, state, selection);
        });
    });
    // No renderer takes the font atlas here (debug builds check that someone did).
    out.textures_delta.clear();
    out
}

/// The input of one frame at 1920x1080.
fn full_hd() -> egui::RawInput {
    egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(
            egui::Pos2::ZERO,
            egui::vec2(1920.0, 1080.0),
        )),
        ..egui::RawInput::default()
    }
}

#[allow(clippy::cast_precision_loss)]
fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

/// The time this thread has spent on a CPU so far (its CPU clock), so a frame's own cost can be
/// told from time spent waiting for a core on a busy machine.
fn on_cpu_ns() -> Option<u64> {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    let ns = i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec);
    u64::try_from(ns).ok()
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn pct(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
}

/// A profile with every track's events repeated `times` times, each copy shifted by the run's
/// span, built through `ProfileBuilder` (kernels, copies and API calls keep their details).
fn replicate(p: &Profile, times: i64) -> Profile {
    let mut b = ProfileBuilder::new(p.source.path.clone(), p.source.format);
    b.devices = p.devices.clone();
    b.process_names = p.process_names.clone();
    b.origin_raw_ns = Some(0);
    let (s, e) = p.span_ns().unwrap_or((0, 1));
    let period = e - s + 1_000;
    for track in &p.tracks {
        let key = match track.key {
            TrackKey::Async { pid, name } => TrackKey::Async {
                pid,
                name: b.intern(p.str(name)),
            },
            TrackKey::Thread { pid, tid } => {
                let mut re = |id| match id {
                    warpscope_core::model::TraceId::Name(s) => {
                        warpscope_core::model::TraceId::Name(b.intern(p.str(s)))
                    }
                    other => other,
                };
                let pid = re(pid);
                let tid = re(tid);
                TrackKey::Thread { pid, tid }
            }
            gpu => gpu,
        };
        let id = b.track(key);
        b.track_mut(id).name = track.name.clone();
        b.track_mut(id).sort_index = track.sort_index;
        let ev = &track.events;
        let names: Vec<_> = ev.name.iter().map(|&n| b.intern(p.str(n))).collect();
        for k in 0..times {
            let off = k * period;
            for (i, &name) in names.iter().enumerate() {
                let (start, dur, kind) = (ev.start_ns[i] + off, ev.dur_ns[i], ev.kind[i]);
                match kind {
                    EventKind::Kernel => {
                        let info = p.kernel_info(track, i).unwrap_or_default();
                        b.push_kernel(id, start, dur, name, info, 0);
                    }
                    EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory
                        if p.copy_info(track, i).is_some() =>
                    {
                        let info = p.copy_info(track, i);
                        if let Some(info) = info {
                            b.push_copy(id, start, dur, name, kind, info, 0);
                        }
                    }
                    _ => b.push(id, start, dur, name, kind),
                }
            }
        }
    }
    b.finish()
}
