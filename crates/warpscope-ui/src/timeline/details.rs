//! What the timeline tells about one event: the hover tooltip and the details panel of the
//! selected event, with the events linked to it by flows.

use crate::format_duration;
use warpscope_core::Profile;
use warpscope_core::analysis::insight::occupancy::kernel_occupancy;
use warpscope_core::model::{EventKind, EventRef, FlowKind};

use super::layout::LaneContent;
use super::{Hit, TimelineState};
use crate::Selection;

/// The details panel of the selected event: everything known about it, the events linked to it
/// by flows (the API call that launched a kernel, the kernels and copies an API call launched) as
/// links that select them, and buttons to zoom to it and to step through its name's occurrences.
/// Shows nothing when no event is selected.
pub fn selected_event_ui(
    ui: &mut egui::Ui,
    profile: &Profile,
    state: &mut TimelineState,
    selection: &mut Selection,
) {
    let Some(ev) = selection.event.filter(|ev| {
        profile
            .tracks
            .get(ev.track as usize)
            .is_some_and(|t| (ev.index as usize) < t.events.len())
    }) else {
        return;
    };
    let _ = state.cache(profile);
    event_details_ui(ui, profile, state, ev);
    ui.horizontal(|ui| {
        if ui
            .button("Zoom to it")
            .on_hover_text("F or double-click")
            .clicked()
        {
            state.zoom_to_event(profile, ev);
        }
        if ui.button("◀ Previous").clicked() {
            let _ = state.step_to_occurrence(profile, selection, false);
        }
        if ui.button("Next ▶").clicked() {
            let _ = state.step_to_occurrence(profile, selection, true);
        }
    });
    let linked: Vec<EventRef> = state.cache.as_ref().map_or_else(Vec::new, |c| {
        c.flows_of(profile, ev)
            .into_iter()
            .map(|fi| profile.flows[fi])
            .filter(|f| f.kind == FlowKind::Launch)
            .map(|f| if f.from == ev { f.to } else { f.from })
            .collect()
    });
    if linked.is_empty() {
        return;
    }
    ui.separator();
    let is_launcher = !profile.tracks[ev.track as usize].key.is_gpu();
    ui.strong(if is_launcher {
        format!("Launched ({})", linked.len())
    } else {
        "Launched by".to_string()
    });
    for other in linked.into_iter().take(64) {
        let t = &profile.tracks[other.track as usize];
        let i = other.index as usize;
        let label = format!(
            "{} · {} at {}",
            profile.str(t.events.name[i]),
            format_duration(t.events.dur_ns[i]),
            format_duration(t.events.start_ns[i]),
        );
        if ui.link(label).clicked() {
            selection.select_event(profile, other);
            let (s, e) = (t.events.start_ns[i], t.events.end_ns(i));
            #[allow(clippy::cast_precision_loss)]
            let centre = 0.5 * (s as f64 + e as f64);
            state.view.centre_on(centre);
        }
    }
}

/// The tooltip of an event or a folded run.
pub(super) fn tooltip_ui(ui: &mut egui::Ui, profile: &Profile, state: &TimelineState, hit: Hit) {
    ui.set_max_width(520.0);
    match hit {
        Hit::Fold {
            track,
            depth,
            first,
            count,
            start_ns,
            end_ns,
        } => {
            let total_ns: i64 = state.cache.as_ref().map_or(0, |c| {
                let level = c.level(profile, track as usize, depth);
                (first as usize..first as usize + count as usize)
                    .map(|k| level.events.dur_ns[level.event(k)])
                    .sum()
            });
            ui.strong(format!(
                "{count} events, total {}",
                format_duration(total_ns)
            ));
            ui.label(format!(
                "from {} to {} (span {})",
                format_duration(start_ns),
                format_duration(end_ns),
                format_duration(end_ns - start_ns)
            ));
            ui.weak("zoom in (W, wheel or double-click) to see them");
        }
        Hit::Event(ev) => event_details_ui(ui, profile, state, ev),
        Hit::Utilisation {
            device,
            start_ns,
            end_ns,
        } => {
            ui.strong(format!("GPU {device} utilisation"));
            if let Some(act) = state.cache.as_ref().and_then(|c| c.activity_of(device)) {
                let t = act.time_in(start_ns, end_ns);
                ui.label(super::utilisation::describe(&t, start_ns, end_ns));
            }
            ui.weak("Click the lane's name to show or hide the idle causes.");
        }
        Hit::Memory {
            device,
            start_ns,
            end_ns,
        } => {
            if let Some(cache) = state.cache.as_ref()
                && let Some(curve) = cache.memory_of(device)
            {
                ui.label(super::memory_lane::describe(
                    profile,
                    curve,
                    &cache.memory_ops,
                    start_ns,
                    end_ns,
                ));
            }
            ui.weak("The Memory panel below says what was live at the peak.");
        }
    }
}

/// Everything known about one event, as a grid of name/value rows.
fn event_details_ui(ui: &mut egui::Ui, profile: &Profile, state: &TimelineState, ev: EventRef) {
    let track = &profile.tracks[ev.track as usize];
    let i = ev.index as usize;
    let e = &track.events;
    let name = profile.str(e.name[i]);
    ui.strong(if e.kind[i].is_api() {
        warpscope_core::analysis::strip_version_suffix(name)
    } else {
        name
    });
    let lane_name = state
        .cache
        .as_ref()
        .and_then(|c| {
            c.groups
                .iter()
                .flat_map(|g| g.lanes.iter())
                .find(|l| l.content == LaneContent::Track(ev.track as usize))
                .map(|l| l.full_name.clone())
        })
        .unwrap_or_else(|| track.name.clone());
    let mut rows: Vec<(&str, String)> = vec![
        ("kind", e.kind[i].as_str().replace('_', " ")),
        ("start", format_duration(e.start_ns[i])),
        ("duration", format_duration(e.dur_ns[i])),
        ("lane", lane_name),
    ];
    if let Some(k) = profile.kernel_info(track, i) {
        let dims = |d: [u32; 3]| format!("[{}, {}, {}]", d[0], d[1], d[2]);
        if let Some(g) = k.grid {
            rows.push(("grid", dims(g)));
        }
        if let Some(b) = k.block {
            rows.push(("block", dims(b)));
        }
        if let Some(r) = k.registers_per_thread {
            rows.push(("registers/thread", r.to_string()));
        }
        if let Some(s) = k.shared_memory_bytes {
            rows.push(("shared memory", format_bytes(s)));
        }
        if let Some(s) = k.static_shared_bytes {
            rows.push(("static shared", format_bytes(s)));
        }
        if let Some(s) = k.dynamic_shared_bytes {
            rows.push(("dynamic shared", format_bytes(s)));
        }
        // Theoretical occupancy (the calculator's) and Kineto's estimated achieved occupancy,
        // which Kineto writes as 0 when it did not estimate it.
        let theoretical = kernel_occupancy(profile, track, i);
        let achieved = k.occupancy_pct.map(|o| {
            if o > 0.0 {
                format!("est. achieved {o:.0} %")
            } else {
                "achieved not estimated".to_string()
            }
        });
        let occupancy = match (&theoretical, achieved) {
            (Some(Ok(o)), Some(a)) => Some(format!("{:.0} % theoretical, {a}", o.occupancy_pct)),
            (Some(Ok(o)), None) => Some(format!("{:.0} % theoretical", o.occupancy_pct)),
            (Some(Err(_)), _) => Some("cannot launch as recorded".to_string()),
            (None, a) => a,
        };
        if let Some(text) = occupancy {
            rows.push(("occupancy", text));
        }
        if let Some(Ok(o)) = theoretical
            && o.occupancy_pct < 99.95
        {
            rows.push((
                "limited by",
                format!(
                    "{} ({} blocks/SM)",
                    o.limiter_text().replace('_', " "),
                    o.blocks_per_sm
                ),
            ));
        }
        if let Some(b) = k.blocks_per_sm {
            rows.push(("blocks/SM", format!("{b:.2}")));
        }
        if let Some(w) = k.warps_per_sm {
            rows.push(("warps/SM", format!("{w:.2}")));
        }
        if let Some(c) = k.correlation {
            rows.push(("correlation id", c.to_string()));
        }
        if let Some(x) = k.external_id {
            rows.push(("external id", x.to_string()));
        }
    }
    if let Some(c) = profile.copy_info(track, i) {
        rows.push(("copy kind", c.kind.as_str().to_string()));
        if let Some(b) = c.bytes {
            rows.push(("bytes", format_bytes(b)));
            if e.dur_ns[i] > 0 {
                #[allow(clippy::cast_precision_loss)]
                let gbps = b as f64 / e.dur_ns[i] as f64;
                rows.push(("throughput", format!("{gbps:.2} GB/s")));
            }
        }
        if let Some(s) = c.src_kind {
            rows.push(("source", format!("{s:?}")));
        }
        if let Some(d) = c.dst_kind {
            rows.push(("destination", format!("{d:?}")));
        }
        if let Some(x) = c.correlation {
            rows.push(("correlation id", x.to_string()));
        }
    }
    if let Some(a) = profile.api_info(track, i) {
        if let Some(c) = a.correlation {
            rows.push(("correlation id", c.to_string()));
        }
        if let Some(c) = a.cbid {
            rows.push(("callback id", c.to_string()));
        }
        if let Some(x) = a.external_id {
            rows.push(("external id", x.to_string()));
        }
    }
    if e.kind[i] != EventKind::Kernel && e.depth[i] > 0 {
        rows.push(("depth", e.depth[i].to_string()));
    }
    if let Some(c) = state.cache.as_ref() {
        let n = c.flows_of(profile, ev).len();
        if n > 0 {
            rows.push(("flows", n.to_string()));
        }
    }
    egui::Grid::new("timeline_tooltip")
        .num_columns(2)
        .spacing([12.0, 2.0])
        .show(ui, |ui| {
            for (k, v) in rows {
                ui.weak(k);
                ui.label(v);
                ui.end_row();
            }
        });
}

/// Bytes with a binary unit (`1.50 MiB`).
fn format_bytes(b: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let f = b as f64;
    if f >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", f / (1024.0 * 1024.0 * 1024.0))
    } else if f >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", f / (1024.0 * 1024.0))
    } else if f >= 1024.0 {
        format!("{:.2} KiB", f / 1024.0)
    } else {
        format!("{b} B")
    }
}
