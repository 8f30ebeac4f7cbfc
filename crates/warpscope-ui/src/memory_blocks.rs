//! Memory block by block, as PyTorch's memory_viz draws it: the *active memory timeline* (each
//! allocation a band from its allocation to its free, stacked in the order of allocation, so a
//! free lets the bands above it fall; hover a band for its size and where it was allocated),
//! and the *segments* at the end of an allocator snapshot (each `cudaMalloc` of the caching
//! allocator as a bar of its blocks, coloured by state).

use egui::{Color32, Mesh, Pos2, Rect, Sense, Shape, Stroke, Ui, Vec2};
use warpscope_core::Profile;
use warpscope_core::analysis::memory::Attribution;
use warpscope_core::model::memory::{BlockState, NO_STACK};
use warpscope_core::model::{MemoryAction, MemoryDevice};
use warpscope_core::names::short_name;
use warpscope_core::units::format_bytes;

use crate::format_duration;

/// Columns the active-memory timeline is drawn in.
const COLUMNS: usize = 480;
/// Height of the active-memory timeline in points.
const TIMELINE_HEIGHT: f32 = 220.0;

/// One allocation of a device: when it was made and freed (the end of the records when it was
/// not), its size and its record.
#[derive(Clone, Copy, Debug)]
struct Block {
    start_ns: i64,
    end_ns: i64,
    bytes: u64,
    record: u32,
}

/// The allocations of a device, matched to their frees by address, in allocation order.
fn blocks_of(profile: &Profile, device: MemoryDevice) -> Vec<Block> {
    let ev = &profile.memory.events;
    let last = ev.time_ns.last().copied().unwrap_or(0);
    let mut blocks: Vec<Block> = Vec::new();
    let mut open: std::collections::HashMap<u64, usize> = std::collections::HashMap::default();
    for i in 0..ev.len() {
        if ev.device[i] != device || ev.addr[i] == 0 {
            continue;
        }
        match ev.action[i] {
            MemoryAction::Alloc => {
                open.insert(ev.addr[i], blocks.len());
                blocks.push(Block {
                    start_ns: ev.time_ns[i],
                    end_ns: last,
                    bytes: ev.bytes[i],
                    record: u32::try_from(i).unwrap_or(u32::MAX),
                });
            }
            MemoryAction::Free => {
                if let Some(b) = open.remove(&ev.addr[i]) {
                    blocks[b].end_ns = ev.time_ns[i];
                }
            }
            _ => {}
        }
    }
    blocks
}

/// The stacked layout of one device's allocations over columns of time: per column, the live
/// blocks from the bottom up with their offsets.
#[derive(Clone, Debug, Default)]
pub struct ActiveMemory {
    blocks: Vec<Block>,
    /// Per column: (block index, offset in bytes) of the live blocks, bottom first.
    columns: Vec<Vec<(u32, u64)>>,
    start_ns: i64,
    end_ns: i64,
    max_bytes: u64,
}

impl ActiveMemory {
    /// Lays out `device`'s allocations between the first and the last record.
    pub fn new(profile: &Profile, device: MemoryDevice) -> Self {
        let blocks = blocks_of(profile, device);
        let t = &profile.memory.events.time_ns;
        let (Some(&start_ns), Some(&end_ns)) = (t.first(), t.last()) else {
            return Self::default();
        };
        let span = (end_ns - start_ns).max(1);
        // Sweep the columns in time order, keeping the live blocks in allocation order.
        let mut by_end: Vec<u32> = (0..u32::try_from(blocks.len()).unwrap_or(0)).collect();
        by_end.sort_by_key(|&b| blocks[b as usize].end_ns);
        let (mut next_alloc, mut next_free) = (0usize, 0usize);
        let mut live: std::collections::BTreeSet<u32> = std::collections::BTreeSet::new();
        let mut columns = Vec::with_capacity(COLUMNS);
        let mut max_bytes = 0u64;
        for c in 0..COLUMNS {
            #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
            let t = start_ns + (i128::from(span) * c as i128 / COLUMNS as i128) as i64;
            while next_alloc < blocks.len() && blocks[next_alloc].start_ns <= t {
                live.insert(u32::try_from(next_alloc).unwrap_or(u32::MAX));
                next_alloc += 1;
            }
            while next_free < by_end.len() && blocks[by_end[next_free] as usize].end_ns <= t {
                let b = by_end[next_free];
                // A block allocated and freed between two columns never shows.
                live.remove(&b);
                next_free += 1;
            }
            let mut offset = 0u64;
            let column: Vec<(u32, u64)> = live
                .iter()
                .map(|&b| {
                    let here = offset;
                    offset = offset.saturating_add(blocks[b as usize].bytes);
                    (b, here)
                })
                .collect();
            max_bytes = max_bytes.max(offset);
            columns.push(column);
        }
        Self {
            blocks,
            columns,
            start_ns,
            end_ns,
            max_bytes,
        }
    }

    /// True if there is nothing to draw.
    pub fn is_empty(&self) -> bool {
        self.max_bytes == 0
    }
}

/// A colour per allocation, stable across frames.
fn block_color(record: u32) -> Color32 {
    let h = record.wrapping_mul(2_654_435_761);
    let pick = |shift: u32| 70 + u8::try_from((h >> shift) & 0x7f).unwrap_or(0);
    Color32::from_rgb(pick(0), pick(8), pick(16))
}

/// What an allocation's record says of where it came from: the snapshot's stack, or the
/// operator stack of a trace.
pub(crate) fn provenance(profile: &Profile, ops: &Attribution, record: usize) -> String {
    let stack = profile
        .memory
        .events
        .stack
        .get(record)
        .copied()
        .unwrap_or(NO_STACK);
    if stack == NO_STACK {
        return ops.stack_text(record);
    }
    profile
        .memory
        .stacks
        .frames_of(stack)
        .take(20)
        .map(|f| {
            let name = short_name(profile.str(f.name), 110);
            match profile.str(f.filename) {
                "" | "??" => name,
                file => format!("{name}  ({file}:{})", f.line),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Draws the active-memory timeline of `layout`.
pub fn active_memory_ui(ui: &mut Ui, profile: &Profile, ops: &Attribution, layout: &ActiveMemory) {
    if layout.is_empty() {
        ui.weak("No allocations matched to their frees on this device.");
        return;
    }
    let width = ui.available_width().max(200.0);
    let (rect, response) =
        ui.allocate_exact_size(Vec2::new(width, TIMELINE_HEIGHT), Sense::hover());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
    #[allow(clippy::cast_precision_loss)]
    let y_of = |bytes: u64| {
        rect.bottom() - (bytes as f64 / layout.max_bytes as f64) as f32 * (rect.height() - 2.0)
    };
    #[allow(clippy::cast_precision_loss)]
    let col_w = rect.width() / COLUMNS as f32;
    let mut mesh = Mesh::default();
    // A quad per (block, run of columns at the same offset).
    let mut runs: std::collections::HashMap<u32, (usize, u64)> =
        std::collections::HashMap::default();
    let flush = |mesh: &mut Mesh, b: u32, from: usize, to: usize, offset: u64| {
        let blk = layout.blocks[b as usize];
        #[allow(clippy::cast_precision_loss)]
        let r = Rect::from_min_max(
            Pos2::new(
                rect.left() + from as f32 * col_w,
                y_of(offset.saturating_add(blk.bytes)),
            ),
            Pos2::new(rect.left() + to as f32 * col_w, y_of(offset)),
        );
        mesh.add_colored_rect(r, block_color(blk.record));
    };
    for (c, column) in layout.columns.iter().enumerate() {
        let mut seen: Vec<u32> = Vec::with_capacity(column.len());
        for &(b, offset) in column {
            seen.push(b);
            match runs.get(&b) {
                Some(&(_, o)) if o == offset => {}
                Some(&(from, o)) => {
                    flush(&mut mesh, b, from, c, o);
                    runs.insert(b, (c, offset));
                }
                None => {
                    runs.insert(b, (c, offset));
                }
            }
        }
        seen.sort_unstable();
        let ended: Vec<u32> = runs
            .keys()
            .copied()
            .filter(|b| seen.binary_search(b).is_err())
            .collect();
        for b in ended {
            if let Some((from, o)) = runs.remove(&b) {
                flush(&mut mesh, b, from, c, o);
            }
        }
    }
    for (b, (from, o)) in runs {
        flush(&mut mesh, b, from, COLUMNS, o);
    }
    painter.add(Shape::mesh(mesh));
    painter.text(
        rect.left_top() + Vec2::new(4.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!(
            "{} at the top",
            format_bytes(i64::try_from(layout.max_bytes).unwrap_or(i64::MAX))
        ),
        egui::FontId::proportional(11.0),
        ui.visuals().weak_text_color(),
    );
    if let Some(p) = response.hover_pos() {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let c = (((p.x - rect.left()) / col_w) as usize).min(COLUMNS - 1);
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let bytes =
            ((rect.bottom() - p.y) / (rect.height() - 2.0) * layout.max_bytes as f32) as u64;
        let hit = layout.columns[c]
            .iter()
            .find(|&&(b, off)| off <= bytes && bytes < off + layout.blocks[b as usize].bytes);
        if let Some(&(b, _)) = hit {
            let blk = layout.blocks[b as usize];
            painter.rect_stroke(
                Rect::from_min_max(
                    Pos2::new(p.x - 1.0, rect.top()),
                    Pos2::new(p.x + 1.0, rect.bottom()),
                ),
                0.0,
                Stroke::new(1.0, ui.visuals().text_color()),
                egui::StrokeKind::Inside,
            );
            let text = format!(
                "{} allocated at {}, freed at {}\n{}",
                format_bytes(i64::try_from(blk.bytes).unwrap_or(i64::MAX)),
                format_duration(blk.start_ns),
                if blk.end_ns >= layout.end_ns {
                    "(never in the recording)".to_string()
                } else {
                    format_duration(blk.end_ns)
                },
                provenance(profile, ops, blk.record as usize)
            );
            response.on_hover_text_at_pointer(text);
        }
    }
    ui.weak(format!(
        "{} to {}: every allocation a band from its allocation to its free, stacked in \
         allocation order; a free lets the bands above fall. Hover a band for where it was \
         allocated.",
        format_duration(layout.start_ns),
        format_duration(layout.end_ns)
    ));
}

/// Colour of a block state in the segment view.
fn state_color(state: BlockState) -> Color32 {
    match state {
        BlockState::ActiveAllocated => Color32::from_rgb(0x4e, 0x8f, 0xd8),
        BlockState::ActivePendingFree => Color32::from_rgb(0xe8, 0x8a, 0x2e),
        BlockState::Inactive => Color32::from_gray(90),
    }
}

/// The segments of `device` at the end of a snapshot: a row per segment, its width in
/// proportion to the largest, its blocks coloured by state (allocated blue, freed but still in
/// use by a stream orange, cached grey). Hover a block for its size and stack.
pub fn segments_ui(ui: &mut Ui, profile: &Profile, device: MemoryDevice) {
    let segments: Vec<_> = profile
        .memory
        .segments
        .iter()
        .filter(|s| s.device == device)
        .collect();
    if segments.is_empty() {
        return;
    }
    let largest = segments
        .iter()
        .map(|s| s.total_bytes)
        .max()
        .unwrap_or(1)
        .max(1);
    let b = |v: u64| format_bytes(i64::try_from(v).unwrap_or(i64::MAX));
    let total: u64 = segments.iter().map(|s| s.total_bytes).sum();
    let allocated: u64 = segments.iter().map(|s| s.allocated_bytes).sum();
    ui.label(format!(
        "{} segments, {} reserved, {} allocated ({} cached): blue allocated, orange freed but in \
         use by a stream, grey cached",
        segments.len(),
        b(total),
        b(allocated),
        b(total.saturating_sub(allocated))
    ));
    let label_w = 250.0;
    for s in segments {
        ui.horizontal(|ui| {
            ui.add_sized(
                [label_w, 14.0],
                egui::Label::new(
                    egui::RichText::new(format!(
                        "{} {} · {} pool",
                        b(s.total_bytes),
                        if s.expandable { "expandable" } else { "" },
                        s.pool
                    ))
                    .small(),
                ),
            );
            let full = (ui.available_width() - 8.0).max(100.0);
            #[allow(clippy::cast_precision_loss)]
            let w = (s.total_bytes as f64 / largest as f64 * f64::from(full)) as f32;
            let (rect, response) =
                ui.allocate_exact_size(Vec2::new(w.max(2.0), 12.0), Sense::hover());
            let painter = ui.painter_at(rect);
            let mut hovered = None;
            let mut x = rect.left();
            for blk in &s.blocks {
                #[allow(clippy::cast_precision_loss)]
                let bw = (blk.bytes as f64 / s.total_bytes.max(1) as f64) as f32 * rect.width();
                let r =
                    Rect::from_min_max(Pos2::new(x, rect.top()), Pos2::new(x + bw, rect.bottom()));
                painter.rect_filled(r.shrink2(Vec2::new(0.0, 0.5)), 0.0, state_color(blk.state));
                if response.hover_pos().is_some_and(|p| r.contains(p)) {
                    hovered = Some(blk);
                }
                x += bw;
            }
            if let Some(blk) = hovered {
                let frames: Vec<String> = profile
                    .memory
                    .stacks
                    .frames_of(blk.stack)
                    .take(20)
                    .map(|f| short_name(profile.str(f.name), 110))
                    .collect();
                response.on_hover_text_at_pointer(format!(
                    "{} ({} asked), {:?} at {:#x}\n{}",
                    b(blk.bytes),
                    b(blk.requested_bytes),
                    blk.state,
                    blk.addr,
                    frames.join("\n")
                ));
            }
        });
    }
}
