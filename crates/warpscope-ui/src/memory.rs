//! The Memory panel: per device the allocated and reserved peaks and when, what was live at
//! the peak by the operator that allocated it and by size, the operators that allocate most,
//! what is never freed, and the memory findings, over the selected range (or the whole run).
//! Clicking an operator selects the operator that made its largest allocation on the timeline.
//! The rules are those of `docs/memory.md` ([`warpscope_core::analysis::memory`]).

use crate::format_duration;
use egui::{RichText, Ui};
use warpscope_core::analysis::memory::{
    Attribution, DeviceMemory, LiveGroup, MemoryReport, attribute, memory_report_with,
};
use warpscope_core::model::{MemoryDevice, MemorySource};
use warpscope_core::names::short_name;
use warpscope_core::units::{format_bytes, format_share};
use warpscope_core::{Profile, TimeRange};

use crate::memory_blocks::{ActiveMemory, active_memory_ui, provenance, segments_ui};
use crate::timeline::TimelineState;
use crate::timeline::layout::device_title;
use crate::{ProfileKey, Selection};

/// Rows of the live and operator tables.
const TOP: usize = 15;

/// What the panel keeps between frames: the operators of the profile's records, and the report
/// of the last range it showed.
#[derive(Default)]
pub struct MemoryState {
    attribution: Option<(ProfileKey, Attribution)>,
    report: Option<((ProfileKey, TimeRange), MemoryReport)>,
    /// The active-memory layout of each device, made when first shown.
    active: Vec<(MemoryDevice, ActiveMemory)>,
}

impl MemoryState {
    /// The report on display, once computed.
    pub fn report(&self) -> Option<&MemoryReport> {
        self.report.as_ref().map(|(_, r)| r)
    }

    fn refresh(&mut self, profile: &Profile, range: TimeRange) {
        let key = ProfileKey::of(profile);
        if self.attribution.as_ref().is_none_or(|(k, _)| *k != key) {
            self.attribution = Some((key, attribute(profile)));
            self.report = None;
            self.active.clear();
        }
        if self
            .report
            .as_ref()
            .is_some_and(|(k, _)| *k == (key, range))
        {
            return;
        }
        if let Some((_, a)) = &self.attribution {
            self.report = Some(((key, range), memory_report_with(profile, a, range, TOP)));
        }
    }
}

/// What a click in the panel asks of the timeline.
enum Jump {
    /// Show this time, a little around it.
    Time(i64),
    /// Select the operator that made this memory record.
    Record(u32),
}

/// Draws the panel over `selection.range` (the whole run when none).
pub fn memory_ui(
    ui: &mut Ui,
    profile: &Profile,
    state: &mut MemoryState,
    timeline: &mut TimelineState,
    selection: &mut Selection,
) {
    let range = selection.range.unwrap_or(TimeRange::ALL);
    if profile.memory.is_empty() {
        ui.weak(
            "This profile records no allocations. Record them with \
             torch.profiler.profile(profile_memory=True), or open a snapshot from \
             torch.cuda.memory._dump_snapshot(); nothing is allocated in CUDA graph replays.",
        );
        return;
    }
    state.refresh(profile, range);
    let (Some((_, report)), Some((_, ops))) = (&state.report, &state.attribution) else {
        return;
    };
    let active = &mut state.active;
    ui.weak(match report.source {
        MemorySource::AllocatorSnapshot => {
            "From the allocator snapshot: totals replayed from its trace, anchored on its segments \
             at the end. Peaks are those of the recorded window."
        }
        _ => {
            "From the profiler's memory events: totals as the allocator counted them. Peaks are \
             those of the recorded window; torch.cuda.max_memory_allocated() covers the whole \
             process."
        }
    });
    let mut jump: Option<Jump> = None;
    egui::ScrollArea::vertical()
        .auto_shrink(false)
        .show(ui, |ui| {
            if !report.findings.is_empty() {
                ui.strong("Findings");
                for (i, f) in report.findings.iter().enumerate() {
                    ui.label(format!("{}. {}", i + 1, f.message));
                }
                ui.separator();
            }
            for d in &report.devices {
                if d.device == MemoryDevice::Cpu && d.peak_allocated_bytes < (1 << 20) {
                    continue;
                }
                device_ui(ui, profile, ops, d, &mut jump);
                blocks_ui(ui, profile, ops, d.device, active);
                ui.separator();
            }
            operators_ui(ui, report, &mut jump);
        });
    match jump {
        Some(Jump::Time(t)) => {
            let half = (timeline.visible_range().duration_ns() / 20).max(1_000);
            timeline.set_visible_range(TimeRange::new(t - half, t + half));
        }
        Some(Jump::Record(r)) => {
            let i = r as usize;
            if let Some(event) = ops.operator_event(i) {
                timeline.zoom_to_event(profile, event);
                selection.select_event(profile, event);
            } else if let Some(&t) = profile.memory.events.time_ns.get(i) {
                let half = (timeline.visible_range().duration_ns() / 20).max(1_000);
                timeline.set_visible_range(TimeRange::new(t - half, t + half));
            }
        }
        None => {}
    }
}

/// The active-memory timeline of `device` (laid out when first opened) and, for a snapshot,
/// its segments at the end.
fn blocks_ui(
    ui: &mut Ui,
    profile: &Profile,
    ops: &Attribution,
    device: MemoryDevice,
    active: &mut Vec<(MemoryDevice, ActiveMemory)>,
) {
    let id = format!("{device:?}");
    egui::CollapsingHeader::new("Active memory timeline (every allocation a band)")
        .id_salt(("active_memory", &id))
        .default_open(profile.memory.source == MemorySource::AllocatorSnapshot)
        .show(ui, |ui| {
            if !active.iter().any(|(d, _)| *d == device) {
                active.push((device, ActiveMemory::new(profile, device)));
            }
            if let Some((_, layout)) = active.iter().find(|(d, _)| *d == device) {
                active_memory_ui(ui, profile, ops, layout);
            }
        });
    if profile.memory.segments.iter().any(|s| s.device == device) {
        egui::CollapsingHeader::new("Segments at the end of the snapshot")
            .id_salt(("segments", &id))
            .show(ui, |ui| segments_ui(ui, profile, device));
    }
}

fn device_name(profile: &Profile, d: MemoryDevice) -> String {
    match d {
        MemoryDevice::Gpu(id) => device_title(profile, id),
        MemoryDevice::Cpu => "CPU".to_string(),
    }
}

fn device_ui(
    ui: &mut Ui,
    profile: &Profile,
    ops: &Attribution,
    d: &DeviceMemory,
    jump: &mut Option<Jump>,
) {
    let capacity = d
        .capacity_bytes
        .map(|c| format!(" ({})", format_bytes(i64::try_from(c).unwrap_or(i64::MAX))))
        .unwrap_or_default();
    ui.strong(format!("{}{capacity}", device_name(profile, d.device)));
    let id = format!("{:?}", d.device);
    egui::Grid::new(("memory_device", &id))
        .num_columns(3)
        .striped(true)
        .show(ui, |ui| {
            ui.label("Peak allocated");
            ui.label(RichText::new(format_bytes(d.peak_allocated_bytes)).strong());
            if ui
                .link(format!("at {}", format_duration(d.peak_allocated_ns)))
                .on_hover_text("Show the peak on the timeline")
                .clicked()
            {
                *jump = Some(Jump::Time(d.peak_allocated_ns));
            }
            ui.end_row();
            ui.label("Peak reserved");
            ui.label(format_bytes(d.peak_reserved_bytes));
            if ui
                .link(format!("at {}", format_duration(d.peak_reserved_ns)))
                .on_hover_text("Show it on the timeline")
                .clicked()
            {
                *jump = Some(Jump::Time(d.peak_reserved_ns));
            }
            ui.end_row();
            ui.label("Reserved, not allocated, at the peak");
            ui.label(format_bytes(d.fragmentation_at_peak_bytes));
            ui.weak("fragmentation and cache");
            ui.end_row();
            ui.label("Allocated at start / lowest / end");
            ui.label(format!(
                "{} / {} / {}",
                format_bytes(d.start_allocated_bytes),
                format_bytes(d.low_allocated_bytes),
                format_bytes(d.end_allocated_bytes)
            ));
            ui.label("");
            ui.end_row();
            ui.label("Allocations / frees");
            ui.label(format!("{} / {}", d.allocations, d.frees));
            ui.weak(format!(
                "{} allocated",
                format_bytes(i64::try_from(d.allocated_total_bytes).unwrap_or(i64::MAX))
            ));
            ui.end_row();
            ui.label("Never freed");
            ui.label(format!(
                "{} blocks, {}",
                d.never_freed.count,
                format_bytes(i64::try_from(d.never_freed.bytes).unwrap_or(i64::MAX))
            ));
            ui.weak("allocated in the range, live at the end of the recording");
            ui.end_row();
            for oom in &d.ooms {
                ui.colored_label(ui.visuals().error_fg_color, "Out of memory");
                ui.label(format!(
                    "{} asked by {}",
                    format_bytes(i64::try_from(oom.bytes).unwrap_or(i64::MAX)),
                    oom.operator
                ));
                if ui
                    .link(format!("at {}", format_duration(oom.time_ns)))
                    .clicked()
                {
                    *jump = Some(Jump::Time(oom.time_ns));
                }
                ui.end_row();
            }
        });
    ui.add_space(4.0);
    ui.label("Live at the peak, by the operator that allocated it:");
    live_ui(
        ui,
        profile,
        ops,
        ("live_ops", &id),
        &d.live_at_peak,
        d.peak_allocated_bytes,
        jump,
    );
    ui.label("Live at the peak, by size:");
    live_ui(
        ui,
        profile,
        ops,
        ("live_sizes", &id),
        &d.live_at_peak_by_size,
        d.peak_allocated_bytes,
        jump,
    );
}

fn live_ui(
    ui: &mut Ui,
    profile: &Profile,
    ops: &Attribution,
    id: (&str, &str),
    groups: &[LiveGroup],
    total: i64,
    jump: &mut Option<Jump>,
) {
    egui::Grid::new(id)
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            ui.strong("Bytes");
            ui.strong("Share");
            ui.strong("Blocks");
            ui.strong("Operator");
            ui.end_row();
            for g in groups {
                ui.label(format_bytes(g.bytes));
                ui.label(format_share(g.bytes, total));
                ui.label(if g.count == 0 {
                    "-".to_string()
                } else {
                    g.count.to_string()
                });
                let name = short_name(&g.operator, 90);
                match g.largest_record {
                    Some(r) => {
                        let hover = format!(
                            "Largest block: {}\n{}\nClick: select its operator on the timeline",
                            format_bytes(
                                profile
                                    .memory
                                    .events
                                    .bytes
                                    .get(r as usize)
                                    .map_or(0, |&b| i64::try_from(b).unwrap_or(i64::MAX))
                            ),
                            provenance(profile, ops, r as usize)
                        );
                        if ui.link(name).on_hover_text(hover).clicked() {
                            *jump = Some(Jump::Record(r));
                        }
                    }
                    None => {
                        ui.label(name);
                    }
                }
                ui.end_row();
            }
        });
}

fn operators_ui(ui: &mut Ui, report: &MemoryReport, jump: &mut Option<Jump>) {
    if report.operators.is_empty() {
        return;
    }
    ui.strong("Allocating operators (in the range, with the operators they call)");
    egui::Grid::new("memory_operators")
        .num_columns(5)
        .striped(true)
        .show(ui, |ui| {
            for h in ["Bytes", "Allocs", "Self bytes", "Self allocs", "Operator"] {
                ui.strong(h);
            }
            ui.end_row();
            for o in &report.operators {
                let b = |v: u64| format_bytes(i64::try_from(v).unwrap_or(i64::MAX));
                ui.label(b(o.alloc_bytes));
                ui.label(o.alloc_count.to_string());
                ui.label(b(o.self_alloc_bytes));
                ui.label(o.self_alloc_count.to_string());
                let name = short_name(&o.name, 90);
                match o.largest_record {
                    Some(r) => {
                        if ui
                            .link(name)
                            .on_hover_text(format!(
                                "{}\nClick: select the operator of its largest allocation",
                                o.name
                            ))
                            .clicked()
                        {
                            *jump = Some(Jump::Record(r));
                        }
                    }
                    None => {
                        ui.label(name);
                    }
                }
                ui.end_row();
            }
        });
}
