//! The recorded inputs of CPU operators while a profile is built: one row per distinct text,
//! found again by that text, so that a trace of many steps stores each shape once.

use rustc_hash::FxHashMap;

use super::{ProfileBuilder, TrackId};
use crate::model::{EventKind, NO_DETAIL, OpArgs, OpArgsTable, Track};
use crate::strings::StrId;

/// Operator inputs by the text they were read from.
#[derive(Debug, Default)]
pub(super) struct OpArgsInterner {
    /// The rows, made or still to be read from their texts.
    rows: Vec<Row>,
    /// The text of each row, by row.
    keys: Vec<Box<[u8]>>,
    /// The row of each text.
    index: FxHashMap<Box<[u8]>, u32>,
}

/// One row of operator inputs.
#[derive(Debug)]
enum Row {
    /// Made when its text was first seen.
    Made(OpArgs),
    /// To be read from its text by this function when the profile is finished: a file read in
    /// blocks on several threads repeats most texts in every block, and each distinct text is
    /// read once for the whole file.
    Text(fn(&[u8]) -> OpArgs),
}

/// How many operator events the finished rows give unusable inputs: (dimensions, types).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Unusable {
    pub(super) dims: u64,
    pub(super) dtypes: u64,
}

impl OpArgsInterner {
    /// Moves `other`'s rows into this one; returns the new row of each of `other`'s rows. Rows
    /// new here are added in `other`'s order, so that appending the parts of a file in file
    /// order numbers the rows as reading it whole would.
    pub(super) fn append(&mut self, other: OpArgsInterner) -> Vec<u32> {
        other
            .keys
            .into_iter()
            .zip(other.rows)
            .map(|(key, row)| self.intern(key, || row))
            .collect()
    }

    /// The finished table, its rows numbered in the order the finished `tracks` first use
    /// them (so the numbering does not depend on the order of import: threads, blocks), rows
    /// no event uses left out; the events' details are renumbered to match. Also counts the
    /// events whose inputs cannot be used.
    pub(super) fn renumber(self, tracks: &mut [Track]) -> (OpArgsTable, Unusable) {
        let mut old_rows: Vec<Option<(Box<[u8]>, Row)>> =
            self.keys.into_iter().zip(self.rows).map(Some).collect();
        let mut new_of: Vec<u32> = vec![NO_DETAIL; old_rows.len()];
        let mut rows: Vec<OpArgs> = Vec::new();
        // Per new row: (invalid dims, unknown dtype).
        let mut flags: Vec<(bool, bool)> = Vec::new();
        let mut unusable = Unusable::default();
        for track in tracks {
            let ev = &mut track.events;
            for (d, &kind) in ev.detail.iter_mut().zip(&ev.kind) {
                if kind != EventKind::CpuOp || *d == NO_DETAIL {
                    continue;
                }
                let old = *d as usize;
                let Some(slot) = new_of.get_mut(old) else {
                    *d = NO_DETAIL;
                    continue;
                };
                if *slot == NO_DETAIL
                    && let Some((key, row)) = old_rows.get_mut(old).and_then(Option::take)
                {
                    let row = match row {
                        Row::Made(args) => args,
                        Row::Text(read) => read(&key),
                    };
                    *slot = u32::try_from(rows.len()).unwrap_or(NO_DETAIL);
                    flags.push((row.has_invalid_dims(), row.has_unknown_dtype()));
                    rows.push(row);
                }
                *d = *slot;
                if let Some(&(dims, dtypes)) = flags.get(*slot as usize) {
                    unusable.dims += u64::from(dims);
                    unusable.dtypes += u64::from(dtypes);
                }
            }
        }
        (OpArgsTable { rows }, unusable)
    }

    fn intern(&mut self, key: Box<[u8]>, make: impl FnOnce() -> Row) -> u32 {
        if let Some(&row) = self.index.get(&key) {
            return row;
        }
        let row = u32::try_from(self.rows.len()).unwrap_or(u32::MAX);
        self.rows.push(make());
        self.keys.push(key.clone());
        self.index.insert(key, row);
        row
    }
}

impl ProfileBuilder {
    /// The row of the operator inputs read from text `key`, made by `make` the first time the
    /// text is seen.
    pub fn intern_op_args(&mut self, key: &[u8], make: impl FnOnce() -> OpArgs) -> u32 {
        if let Some(&row) = self.op_args.index.get(key) {
            return row;
        }
        self.op_args.intern(key.into(), || Row::Made(make()))
    }

    /// The row of the operator inputs held in text `key`, read from it by `read` once for
    /// the whole import, when the profile is finished ([`ProfileBuilder::finish`]): the way
    /// for an importer that reads a file in parallel blocks.
    pub fn intern_op_args_text(&mut self, key: &[u8], read: fn(&[u8]) -> OpArgs) -> u32 {
        if let Some(&row) = self.op_args.index.get(key) {
            return row;
        }
        self.op_args.intern(key.into(), || Row::Text(read))
    }

    /// Adds a framework operator (`CpuOp`) whose recorded inputs are row `args` of the
    /// operator-inputs table ([`ProfileBuilder::intern_op_args`]). Operators whose inputs have
    /// dimensions or a type that cannot be used are counted in a warning when the profile is
    /// finished: their FLOPs are unknown.
    pub fn push_op(&mut self, track: TrackId, start_ns: i64, dur_ns: i64, name: StrId, args: u32) {
        self.tracks[track.0 as usize]
            .events
            .push(start_ns, dur_ns, name, EventKind::CpuOp, args);
    }

    /// Warns of the operators whose recorded inputs cannot be used (counted by
    /// [`OpArgsInterner::renumber`]).
    pub(super) fn warn_unusable_op_args(&mut self, unusable: Unusable) {
        self.warn(
            "op_dims_invalid",
            unusable.dims,
            "operators whose `Input Dims` hold a negative or non-integer size, or sizes \
             whose product overflows, get unknown FLOPs and bytes",
        );
        self.warn(
            "op_dtype_unknown",
            unusable.dtypes,
            "operators with a tensor input of an unknown `Input type` get unknown FLOPs \
             and bytes",
        );
    }
}
