//! Walks a snapshot's value tree into a [`ProfileBuilder`]: segments and blocks, the device
//! traces with their replayed totals, stacks, settings and annotations.
//!
//! Lists shared between places (memo references) are recognised by their arena index: a frames
//! list referenced from thousands of entries becomes one stack, looked at once. The same
//! sharing could multiply a small file into a huge profile (a list of a million entries
//! referenced from every device), so a trace or block list met twice is read once and counted.

use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};

mod trace;

use super::not_a_snapshot;
use crate::builder::{ProfileBuilder, TrackId};
use crate::import::ImportError;
use crate::import::pickle::{Pickle, Value, python_float_repr};
use crate::model::memory::{BlockState, MemoryBlock, MemorySegment, NO_STACK, StackFrame};
use crate::model::{EventKind, MemoryDevice, TraceId, TrackKey};
use crate::strings::StrId;

/// Marks a string of the pickle not interned yet.
const NOT_INTERNED: StrId = StrId(u32::MAX);

/// Deepest nesting of `allocator_settings` flattened, and most settings kept.
const MAX_SETTINGS_DEPTH: usize = 8;
const MAX_SETTINGS: usize = 10_000;

/// Walks `pk` (the whole snapshot) into `b`.
pub(super) fn convert(pk: &Pickle, b: &mut ProfileBuilder, path: &Path) -> Result<(), ImportError> {
    let root = pk.root();
    if !matches!(root, Value::Dict(_)) {
        return Err(not_a_snapshot(
            path,
            root,
            "a snapshot is a dict with `segments` and `device_traces`",
        ));
    }
    let Some(segments) = pk.get(root, "segments") else {
        return Err(not_a_snapshot(path, root, "no `segments` key"));
    };
    let traces = pk.get(root, "device_traces");
    let mut w = Walker::new(pk, b);
    let ends = w.segments(segments);
    let entries = match traces {
        Some(t) => w.traces(t, &ends),
        None => {
            w.b.warn(
                "snapshot_no_device_traces",
                1,
                "the snapshot has no `device_traces` (memory history was not recorded): only the \
                 segments at the end are shown",
            );
            0
        }
    };
    if w.b.memory.segments.is_empty() && entries == 0 {
        return Err(ImportError::Unsupported {
            path: path.to_path_buf(),
            detail: "a PyTorch memory snapshot with no CUDA memory: no segments and no trace \
                     entries (a CPU-only run, or one where memory history was not recorded)"
                .to_string(),
        });
    }
    if let Some(a) = pk.get(root, "external_annotations") {
        w.annotations(a);
    }
    if let Some(s) = pk.get(root, "allocator_settings") {
        let mut out = Vec::new();
        let cut = w.settings("", s, 0, &mut out);
        w.b.memory.settings = out;
        w.b.warn(
            "snapshot_settings_cut",
            u64::from(cut),
            format!(
                "allocator settings nested deeper than {MAX_SETTINGS_DEPTH} levels or past \
                 {MAX_SETTINGS} entries were left out"
            ),
        );
    }
    w.b.origin_raw_ns = w.earliest_ns;
    w.b.unix_offset_ns = w.earliest_ns.map(|_| 0);
    w.report();
    Ok(())
}

/// Problems counted while walking, reported once each.
#[derive(Default)]
struct Problems {
    bad_segments: u64,
    bad_blocks: u64,
    unknown_states: (u64, String),
    shared_lists: u64,
    bad_entries: u64,
    unknown_actions: (u64, String),
    missing_times: u64,
    backwards: u64,
    bad_frames: u64,
    huge_stacks: u64,
    bad_annotations: u64,
    unmatched_ends: u64,
    unclosed_starts: u64,
    /// Devices whose blocks' sizes do not add up to the segments' `allocated_size`.
    allocated_mismatch: Vec<String>,
}

/// The walk's state: caches that make shared lists cost nothing, and the counted problems.
struct Walker<'p, 'b> {
    pk: &'p Pickle,
    b: &'b mut ProfileBuilder,
    /// Interned id of each pickle string, by its arena index.
    str_ids: Vec<StrId>,
    /// Frame index of each frame dict, by its arena index.
    frame_of_dict: FxHashMap<u32, u32>,
    frame_index: FxHashMap<StackFrame, u32>,
    /// Stack of each frames list, by its arena index.
    stack_of_list: FxHashMap<u32, u32>,
    stack_index: FxHashMap<Box<[u32]>, u32>,
    scratch: Vec<u32>,
    /// What each pickle string means as a key or an action of a trace entry, by its arena
    /// index (0: not looked at yet).
    entry_words: Vec<u8>,
    /// Lists of traces and blocks already read.
    seen_lists: FxHashSet<u32>,
    earliest_ns: Option<i64>,
    problems: Problems,
}

/// The end state of one device from its segments: bytes allocated (blocks in use, pending frees
/// included), reserved (segments), and the segments' own `allocated_size`.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct End {
    allocated: i128,
    reserved: i128,
    stated_allocated: i128,
}

impl<'p, 'b> Walker<'p, 'b> {
    fn new(pk: &'p Pickle, b: &'b mut ProfileBuilder) -> Self {
        Self {
            pk,
            b,
            str_ids: Vec::new(),
            frame_of_dict: FxHashMap::default(),
            frame_index: FxHashMap::default(),
            stack_of_list: FxHashMap::default(),
            stack_index: FxHashMap::default(),
            scratch: Vec::new(),
            entry_words: Vec::new(),
            seen_lists: FxHashSet::default(),
            earliest_ns: None,
            problems: Problems::default(),
        }
    }

    /// The interned id of a string value ("" for anything else).
    fn intern(&mut self, v: Value) -> StrId {
        let Value::Str(i) = v else {
            return StrId(0);
        };
        let i = i as usize;
        if let Some(&id) = self.str_ids.get(i)
            && id != NOT_INTERNED
        {
            return id;
        }
        let id = self.b.intern(self.pk.str(v).unwrap_or_default());
        if self.str_ids.len() <= i {
            self.str_ids.resize(i + 1, NOT_INTERNED);
        }
        self.str_ids[i] = id;
        id
    }

    /// True the first time a list is met (`false` for a list shared with an earlier place,
    /// which is counted).
    fn first_visit(&mut self, list: Value) -> bool {
        let (Value::List(id) | Value::Tuple(id)) = list else {
            return true;
        };
        if self.seen_lists.insert(id) {
            return true;
        }
        self.problems.shared_lists += 1;
        false
    }

    fn note_time(&mut self, t_ns: i64) {
        self.earliest_ns = Some(self.earliest_ns.map_or(t_ns, |e| e.min(t_ns)));
    }

    // --------------------------------------------------------------------------------------
    // Stacks

    /// The stack of a frames list, [`NO_STACK`] for an empty or missing one.
    fn stack(&mut self, frames: Value) -> u32 {
        let (Value::List(id) | Value::Tuple(id)) = frames else {
            if frames != Value::None {
                self.problems.bad_frames += 1;
            }
            return NO_STACK;
        };
        if let Some(&s) = self.stack_of_list.get(&id) {
            return s;
        }
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        if let Some(items) = self.pk.items(frames) {
            ids.extend(items.filter_map(|f| self.frame(f)));
        }
        let s = if ids.is_empty() {
            NO_STACK
        } else if let Some(&s) = self.stack_index.get(ids.as_slice()) {
            s
        } else {
            self.new_stack(&ids)
        };
        self.scratch = ids;
        self.stack_of_list.insert(id, s);
        s
    }

    fn new_stack(&mut self, ids: &[u32]) -> u32 {
        let stacks = &mut self.b.memory.stacks;
        let end = stacks.frame_ids.len() + ids.len();
        let (Ok(end), Ok(s)) = (u32::try_from(end), u32::try_from(stacks.len())) else {
            self.problems.huge_stacks += 1;
            return NO_STACK;
        };
        if s == NO_STACK {
            self.problems.huge_stacks += 1;
            return NO_STACK;
        }
        if stacks.starts.is_empty() {
            stacks.starts.push(0);
        }
        stacks.frame_ids.extend_from_slice(ids);
        stacks.starts.push(end);
        self.stack_index.insert(ids.into(), s);
        s
    }

    /// The frame index of a frame dict (`name`, `filename`, `line`).
    fn frame(&mut self, f: Value) -> Option<u32> {
        let Value::Dict(id) = f else {
            self.problems.bad_frames += 1;
            return None;
        };
        if let Some(&i) = self.frame_of_dict.get(&id) {
            return Some(i);
        }
        let mut frame = StackFrame {
            name: StrId(0),
            filename: StrId(0),
            line: 0,
        };
        for (k, v) in self.pk.dict(f).into_iter().flatten() {
            match self.pk.str(k) {
                Some("name") => frame.name = self.intern(v),
                Some("filename") => frame.filename = self.intern(v),
                Some("line") => {
                    frame.line = self
                        .pk
                        .int(v)
                        .and_then(|l| u32::try_from(l).ok())
                        .unwrap_or(0);
                }
                _ => {}
            }
        }
        let i = match self.frame_index.get(&frame) {
            Some(&i) => i,
            None => {
                let frames = &mut self.b.memory.stacks.frames;
                let i = u32::try_from(frames.len()).ok()?;
                frames.push(frame);
                self.frame_index.insert(frame, i);
                i
            }
        };
        self.frame_of_dict.insert(id, i);
        Some(i)
    }

    // --------------------------------------------------------------------------------------
    // Segments

    /// Reads the segments into `memory.segments` (by device and address); the end state per
    /// device.
    fn segments(&mut self, segments: Value) -> FxHashMap<u32, End> {
        let mut ends: FxHashMap<u32, End> = FxHashMap::default();
        let pk = self.pk;
        let Some(items) = pk.items(segments) else {
            self.problems.bad_segments += 1;
            return ends;
        };
        let mut out = Vec::with_capacity(items.len());
        for seg in items {
            match self.segment(seg) {
                Some((s, allocated)) => {
                    let end = ends.entry(match s.device {
                        MemoryDevice::Gpu(d) => d,
                        MemoryDevice::Cpu => u32::MAX,
                    });
                    let end = end.or_default();
                    end.allocated += allocated;
                    end.reserved += i128::from(s.total_bytes);
                    end.stated_allocated += i128::from(s.allocated_bytes);
                    out.push(s);
                }
                None => self.problems.bad_segments += 1,
            }
        }
        out.sort_by_key(|s| (s.device, s.addr));
        self.b.memory.segments = out;
        let mut devices: Vec<(&u32, &End)> = ends.iter().collect();
        devices.sort_unstable_by_key(|(d, _)| **d);
        for (d, e) in devices {
            if e.allocated != e.stated_allocated {
                self.problems.allocated_mismatch.push(format!(
                    "GPU {d}: blocks in use {} B, segments' allocated_size {} B",
                    e.allocated, e.stated_allocated
                ));
            }
        }
        ends
    }

    /// One segment and the bytes of its blocks in use; `None` for one without its device,
    /// address or size.
    fn segment(&mut self, seg: Value) -> Option<(MemorySegment, i128)> {
        let pk = self.pk;
        let field = |k: &str| pk.get(seg, k);
        let device = u32::try_from(field("device").and_then(|v| pk.int(v))?).ok()?;
        let addr = pk.u64(field("address")?)?;
        let total_bytes = pk.u64(field("total_size")?)?;
        let int_or_0 = |k: &str| field(k).and_then(|v| pk.u64(v)).unwrap_or(0);
        let mut s = MemorySegment {
            device: MemoryDevice::Gpu(device),
            addr,
            total_bytes,
            allocated_bytes: int_or_0("allocated_size"),
            stream: int_or_0("stream"),
            pool: field("segment_type")
                .and_then(|v| pk.str(v))
                .unwrap_or_default()
                .to_string(),
            expandable: field("is_expandable") == Some(Value::Bool(true)),
            blocks: Vec::new(),
        };
        let mut in_use = 0i128;
        if let Some(blocks) = field("blocks")
            && self.first_visit(blocks)
        {
            let items = pk.items(blocks).into_iter().flatten();
            s.blocks.reserve(items.size_hint().0);
            // Blocks without an `address` (older snapshots) follow one another from the
            // segment's start, as PyTorch's memory_viz places them.
            let mut next = addr;
            for b in items {
                if let Some(block) = self.block(b, next) {
                    next = block.addr.saturating_add(block.bytes);
                    if block.state != BlockState::Inactive {
                        in_use += i128::from(block.bytes);
                    }
                    s.blocks.push(block);
                }
            }
            s.blocks.sort_by_key(|b| b.addr);
        }
        Some((s, in_use))
    }

    /// One block; `None` (counted) for one without a size or with an unknown state.
    fn block(&mut self, b: Value, next_addr: u64) -> Option<MemoryBlock> {
        let pk = self.pk;
        let field = |k: &str| pk.get(b, k);
        let Some(bytes) = field("size").and_then(|v| pk.u64(v)) else {
            self.problems.bad_blocks += 1;
            return None;
        };
        let state_text = field("state").and_then(|v| pk.str(v)).unwrap_or_default();
        let state = match state_text {
            "active_allocated" => BlockState::ActiveAllocated,
            "active_pending_free" => BlockState::ActivePendingFree,
            "inactive" => BlockState::Inactive,
            other => {
                let (n, first) = &mut self.problems.unknown_states;
                *n += 1;
                if first.is_empty() {
                    *first = crate::import::shown(other, 40);
                }
                return None;
            }
        };
        Some(MemoryBlock {
            addr: field("address")
                .and_then(|v| pk.u64(v))
                .unwrap_or(next_addr),
            bytes,
            requested_bytes: field("requested_size")
                .and_then(|v| pk.u64(v))
                .unwrap_or(bytes),
            state,
            stack: field("frames").map_or(NO_STACK, |f| self.stack(f)),
        })
    }

    // --------------------------------------------------------------------------------------
    // Annotations and settings

    /// `external_annotations` (`{stage: START|END, name, device, time_us}`) as slices on one
    /// track per device.
    fn annotations(&mut self, list: Value) {
        let pk = self.pk;
        let Some(items) = pk.items(list) else {
            self.problems.bad_annotations += 1;
            return;
        };
        // Open ranges per device: (name, start).
        let mut open: FxHashMap<u32, Vec<(StrId, i64)>> = FxHashMap::default();
        let mut tracks: FxHashMap<u32, TrackId> = FxHashMap::default();
        for a in items {
            let field = |k: &str| pk.get(a, k);
            let stage = field("stage").and_then(|v| pk.str(v));
            let device = field("device")
                .and_then(|v| pk.int(v))
                .and_then(|d| u32::try_from(d).ok());
            let time_ns = field("time_us")
                .and_then(|v| pk.int(v))
                .and_then(|us| us.checked_mul(1000));
            let (Some(stage), Some(device), Some(time_ns), Some(name)) =
                (stage, device, time_ns, field("name"))
            else {
                self.problems.bad_annotations += 1;
                continue;
            };
            let name = self.intern(name);
            let stack = open.entry(device).or_default();
            match stage {
                "START" => stack.push((name, time_ns)),
                "END" => match stack.iter().rposition(|&(n, _)| n == name) {
                    Some(i) => {
                        let (_, start) = stack.remove(i);
                        let track = *tracks
                            .entry(device)
                            .or_insert_with(|| annotation_track(self.b, device));
                        let dur = time_ns.saturating_sub(start).max(0);
                        self.b
                            .push(track, start, dur, name, EventKind::UserAnnotation);
                        self.note_time(start);
                    }
                    None => self.problems.unmatched_ends += 1,
                },
                _ => self.problems.bad_annotations += 1,
            }
        }
        self.problems.unclosed_starts += open.values().map(|s| s.len() as u64).sum::<u64>();
    }

    /// Flattens `allocator_settings` into (`a.b`, text) pairs; true if some were left out.
    fn settings(
        &self,
        prefix: &str,
        v: Value,
        depth: usize,
        out: &mut Vec<(String, String)>,
    ) -> bool {
        let pk = self.pk;
        let Some(pairs) = pk.dict(v) else {
            if out.len() >= MAX_SETTINGS {
                return true;
            }
            out.push((prefix.to_string(), display(pk, v, 0)));
            return false;
        };
        if depth > MAX_SETTINGS_DEPTH {
            return true;
        }
        let mut cut = false;
        for (k, v) in pairs {
            let key = pk.str(k).map_or_else(|| display(pk, k, 0), str::to_string);
            let name = if prefix.is_empty() {
                key
            } else {
                format!("{prefix}.{key}")
            };
            cut |= self.settings(&name, v, depth + 1, out);
        }
        cut
    }

    /// Turns the counted problems into warnings.
    fn report(&mut self) {
        let p = std::mem::take(&mut self.problems);
        let b = &mut *self.b;
        b.warn(
            "snapshot_bad_segment",
            p.bad_segments,
            "segments without a device, address or total_size were left out",
        );
        b.warn(
            "snapshot_bad_block",
            p.bad_blocks,
            "blocks without a size were left out",
        );
        b.warn(
            "snapshot_unknown_block_state",
            p.unknown_states.0,
            format!(
                "blocks in a state warpscope does not know (first: {:?}) were left out",
                p.unknown_states.1
            ),
        );
        b.warn(
            "snapshot_shared_list",
            p.shared_lists,
            "trace or block lists that the pickle shares with an earlier place were read once",
        );
        b.warn(
            "snapshot_bad_trace_entry",
            p.bad_entries,
            "trace entries that are not a dict with a string `action` and integer `addr`, \
             `size`, `stream` and `time_us` were left out",
        );
        b.warn(
            "snapshot_unknown_action",
            p.unknown_actions.0,
            format!(
                "trace entries with an action warpscope does not know (first: {:?}) were left out",
                p.unknown_actions.1
            ),
        );
        b.warn(
            "snapshot_missing_time",
            p.missing_times,
            "trace entries without `time_us` were given the time of the entry before them",
        );
        b.warn(
            "snapshot_time_backwards",
            p.backwards,
            "trace entries earlier than the entry before them were moved up to its time, so \
             that the replayed totals keep the allocator's order",
        );
        b.warn(
            "snapshot_bad_frame",
            p.bad_frames,
            "stack frames that are not dicts (or frames that are not lists) were left out",
        );
        b.warn(
            "snapshot_stack_too_large",
            p.huge_stacks,
            "stacks past 2^32 frames in all were left out",
        );
        b.warn(
            "snapshot_bad_annotation",
            p.bad_annotations,
            "annotations without a stage (START or END), name, device or time_us were left out",
        );
        b.warn(
            "annotation_unmatched_end",
            p.unmatched_ends,
            "annotation ENDs without a START of the same name were left out",
        );
        b.warn(
            "annotation_unclosed_start",
            p.unclosed_starts,
            "annotation STARTs without an END were left out",
        );
        if !p.allocated_mismatch.is_empty() {
            b.warn(
                "snapshot_allocated_mismatch",
                p.allocated_mismatch.len() as u64,
                format!(
                    "the blocks in use do not add up to the segments' allocated_size (the \
                     replayed curve is anchored on the blocks): {}",
                    p.allocated_mismatch.join("; ")
                ),
            );
        }
        let lossy = self.pk.lossy_strings();
        b.warn(
            "pickle_lossy_strings",
            lossy,
            "strings that are not valid UTF-8 had their invalid bytes replaced with U+FFFD",
        );
        let trailing = self.pk.trailing_bytes();
        if trailing > 0 {
            b.warn(
                "pickle_trailing_bytes",
                1,
                format!("{trailing} bytes after the end of the pickle were ignored"),
            );
        }
    }
}

/// The annotation track of a device.
fn annotation_track(b: &mut ProfileBuilder, device: u32) -> TrackId {
    let tid = b.intern(&format!("GPU {device} annotations"));
    let track = b.track(TrackKey::Thread {
        pid: TraceId::Int(0),
        tid: TraceId::Name(tid),
    });
    b.track_mut(track).name = format!("allocator annotations (GPU {device})");
    if b.process_names.is_empty() {
        b.process_names
            .push((TraceId::Int(0), super::TOOL.to_string()));
    }
    track
}

/// Short Python-like text of a setting's value (`True`, `0.0`, `[1, 2]`, `'a'` inside lists).
fn display(pk: &Pickle, v: Value, depth: usize) -> String {
    match v {
        Value::None => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Int(_) | Value::BigInt(_) => pk.int_text(v).unwrap_or_default(),
        Value::Float(f) => python_float_repr(f),
        Value::Str(_) if depth == 0 => pk.str(v).unwrap_or_default().to_string(),
        Value::Str(_) => format!("{:?}", pk.str(v).unwrap_or_default()),
        Value::Bytes(_) => format!("<{} bytes>", pk.bytes(v).map_or(0, <[u8]>::len)),
        Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::FrozenSet(_) | Value::Dict(_)
            if depth >= MAX_SETTINGS_DEPTH =>
        {
            "...".to_string()
        }
        Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::FrozenSet(_) => {
            let n = pk.items(v).map_or(0, |i| i.len());
            let mut parts: Vec<String> = (pk.items(v).into_iter().flatten())
                .take(32)
                .map(|x| display(pk, x, depth + 1))
                .collect();
            if n > 32 {
                parts.push("...".to_string());
            }
            format!("[{}]", parts.join(", "))
        }
        Value::Dict(_) => {
            let parts: Vec<String> = (pk.dict(v).into_iter().flatten())
                .take(32)
                .map(|(k, x)| {
                    format!(
                        "{}: {}",
                        display(pk, k, depth + 1),
                        display(pk, x, depth + 1)
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

#[cfg(test)]
mod tests;
