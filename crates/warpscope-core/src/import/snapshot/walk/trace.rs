//! The device traces: each entry becomes a memory record, with the totals after it replayed by
//! the rule of `docs/memory.md` ("Allocator snapshots").
//!
//! A device's entries are read twice: once for the net change of the totals over the trace
//! (which, with the end state of the segments, gives the totals before it), then for the
//! records, pushed straight into the builder with their totals. Keys and actions are strings
//! the pickle stores once and refers to through its memo, so what each means is looked up once
//! per string, not once per entry.

use rustc_hash::FxHashMap;

use super::{End, Walker};
use crate::builder::MemoryRecord;
use crate::import::pickle::{Items, Pickle, Value};
use crate::model::{MemoryAction, MemoryDevice};

/// Meanings of strings in [`Walker::entry_words`].
const ACTION: u8 = 1;
const ADDR: u8 = 2;
const SIZE: u8 = 3;
const STREAM: u8 = 4;
const TIME_US: u8 = 5;
const FRAMES: u8 = 6;
/// An action: `ACTIONS + i` for `ACTION_NAMES[i]`.
const ACTIONS: u8 = 16;
/// Any other string.
const OTHER: u8 = 255;

const ACTION_NAMES: [(&str, MemoryAction); 9] = [
    ("alloc", MemoryAction::Alloc),
    ("free_requested", MemoryAction::FreeRequested),
    ("free_completed", MemoryAction::Free),
    ("segment_alloc", MemoryAction::SegmentAlloc),
    ("segment_map", MemoryAction::SegmentAlloc),
    ("segment_free", MemoryAction::SegmentFree),
    ("segment_unmap", MemoryAction::SegmentFree),
    ("oom", MemoryAction::Oom),
    ("snapshot", MemoryAction::Snapshot),
];

/// The record action of a trace entry's `action` text.
#[cfg(test)]
pub(super) fn action_of(action: &str) -> Option<MemoryAction> {
    let i = word_of(action).checked_sub(ACTIONS)?;
    ACTION_NAMES.get(usize::from(i)).map(|&(_, a)| a)
}

/// What a string means in a trace entry.
fn word_of(text: &str) -> u8 {
    match text {
        "action" => ACTION,
        "addr" => ADDR,
        "size" => SIZE,
        "stream" => STREAM,
        "time_us" => TIME_US,
        "frames" => FRAMES,
        _ => ACTION_NAMES
            .iter()
            .position(|(name, _)| *name == text)
            .and_then(|i| u8::try_from(i).ok())
            .map_or(OTHER, |i| ACTIONS + i),
    }
}

/// Bytes allocated and reserved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Totals {
    pub(super) allocated: i128,
    pub(super) reserved: i128,
}

impl Totals {
    /// The change one record makes: allocated +size on `alloc`, -size on `free_completed`;
    /// reserved +size on `segment_alloc`/`segment_map`, -size on `segment_free`/`segment_unmap`.
    pub(super) fn apply(&mut self, action: MemoryAction, bytes: u64) {
        let size = i128::from(bytes);
        match action {
            MemoryAction::Alloc => self.allocated += size,
            MemoryAction::Free => self.allocated -= size,
            MemoryAction::SegmentAlloc => self.reserved += size,
            MemoryAction::SegmentFree => self.reserved -= size,
            MemoryAction::FreeRequested | MemoryAction::Oom | MemoryAction::Snapshot => {}
        }
    }

    /// The totals before a trace whose net change is `net` and that ends at `end`.
    pub(super) fn before(end: End, net: Totals) -> Totals {
        Totals {
            allocated: end.allocated - net.allocated,
            reserved: end.reserved - net.reserved,
        }
    }
}

/// The fields of one trace entry.
struct Fields {
    action: MemoryAction,
    addr: u64,
    size: u64,
    stream: u64,
    /// `time_us` in ns: `None` when absent, `Some(None)` when not a usable integer.
    time_ns: Option<Option<i64>>,
    frames: Value,
}

/// What one trace entry is.
enum Entry<'p> {
    Ok(Fields),
    /// Not a dict, no string `action`, or a field of the wrong type.
    Bad,
    /// An action warpscope does not know.
    Unknown(&'p str),
}

impl<'p> Walker<'p, '_> {
    /// What the string of arena index `i` means in a trace entry.
    #[inline]
    fn word(&mut self, i: u32) -> u8 {
        let v = Value::Str(i);
        let i = i as usize;
        match self.entry_words.get(i) {
            Some(&w) if w != 0 => w,
            _ => {
                let w = word_of(self.pk.str(v).unwrap_or_default());
                if self.entry_words.len() <= i {
                    self.entry_words.resize(i + 1, 0);
                }
                self.entry_words[i] = w;
                w
            }
        }
    }

    /// Reads one entry (without counting its problems).
    fn read_entry(&mut self, e: Value) -> Entry<'p> {
        let pk = self.pk;
        let Some(pairs) = pk.dict_raw(e) else {
            return Entry::Bad;
        };
        let (mut action, mut addr, mut size, mut stream) = (None, 0, 0, 0);
        let (mut time_ns, mut frames) = (None, None);
        let mut bad = false;
        for &(k, v) in pairs {
            let Some(k) = Pickle::str_index(k) else {
                continue;
            };
            let mut int = |x: &mut u64| match pk.u64_of(v) {
                Some(n) => *x = n,
                None => bad = true,
            };
            match self.word(k) {
                ACTION => action = Pickle::str_index(v),
                ADDR => int(&mut addr),
                SIZE => int(&mut size),
                STREAM => int(&mut stream),
                TIME_US => time_ns = Some(pk.i64_of(v).and_then(|us| us.checked_mul(1000))),
                FRAMES => frames = Some(v),
                _ => {}
            }
        }
        let frames = frames.map_or(Value::None, |f| pk.value(f));
        let Some(action) = action else {
            return Entry::Bad;
        };
        let word = self.word(action);
        let Some(&(_, action)) = word
            .checked_sub(ACTIONS)
            .and_then(|i| ACTION_NAMES.get(usize::from(i)))
        else {
            return Entry::Unknown(pk.str(Value::Str(action)).unwrap_or_default());
        };
        if bad || time_ns == Some(None) {
            return Entry::Bad;
        }
        Entry::Ok(Fields {
            action,
            addr,
            size,
            stream,
            time_ns,
            frames,
        })
    }

    /// Reads `device_traces` (one list per device ordinal) into memory records with the
    /// replayed totals; the number of records.
    pub(super) fn traces(&mut self, traces: Value, ends: &FxHashMap<u32, End>) -> usize {
        let pk = self.pk;
        let Some(devices) = pk.items(traces) else {
            self.problems.bad_entries += 1;
            return 0;
        };
        let mut total = 0;
        for (device, list) in devices.enumerate() {
            let Ok(device) = u32::try_from(device) else {
                break;
            };
            if !self.first_visit(list) {
                continue;
            }
            let Some(entries) = pk.items(list) else {
                self.problems.bad_entries += 1;
                continue;
            };
            let mut net = Totals::default();
            for e in entries.clone() {
                if let Entry::Ok(f) = self.read_entry(e) {
                    net.apply(f.action, f.size);
                }
            }
            let end = ends.get(&device).copied().unwrap_or_default();
            total += self.push_records(entries, device, Totals::before(end, net));
        }
        total
    }

    /// Pushes the records of one device's entries, totals replayed from `totals`; how many.
    fn push_records(&mut self, entries: Items<'p>, device: u32, mut totals: Totals) -> usize {
        let clamp = |v: i128| i64::try_from(v).unwrap_or(if v < 0 { i64::MIN } else { i64::MAX });
        let mut last_ns: Option<i64> = None;
        let mut pushed = 0;
        for e in entries {
            let f = match self.read_entry(e) {
                Entry::Ok(f) => f,
                Entry::Bad => {
                    self.problems.bad_entries += 1;
                    continue;
                }
                Entry::Unknown(text) => {
                    let (n, first) = &mut self.problems.unknown_actions;
                    *n += 1;
                    if first.is_empty() {
                        *first = crate::import::shown(text, 40);
                    }
                    continue;
                }
            };
            let time_ns = match f.time_ns {
                Some(t) => t.unwrap_or(0),
                None => {
                    self.problems.missing_times += 1;
                    last_ns.unwrap_or(0)
                }
            };
            // Records of a device stay in trace order: a time before the previous one is moved
            // up to it (the totals are replayed in that order).
            let time_ns = match last_ns {
                Some(last) if time_ns < last => {
                    self.problems.backwards += 1;
                    last
                }
                _ => time_ns,
            };
            if last_ns.is_none() {
                self.note_time(time_ns);
            }
            last_ns = Some(time_ns);
            totals.apply(f.action, f.size);
            let mut r =
                MemoryRecord::new(time_ns, MemoryDevice::Gpu(device), f.action, f.addr, f.size);
            r.allocated_bytes = clamp(totals.allocated);
            r.reserved_bytes = clamp(totals.reserved);
            r.stream = f.stream;
            r.stack = self.stack(f.frames);
            self.b.push_memory(r);
            pushed += 1;
        }
        pushed
    }
}
