//! The recorded inputs of CPU operators while a profile is built: one row per distinct text,
//! found again by that text, so that a trace of many steps stores each shape once.

use rustc_hash::FxHashMap;

use super::{ProfileBuilder, TrackId};
use crate::model::{EventKind, NO_DETAIL, OpArgs, OpArgsTable, Track};
use crate::strings::StrId;

/// Operator inputs by the text they were read from.
#[derive(Debug, Default)]
pub(super) struct OpArgsInterner {
    /// The rows, as the profile will hold them.
    pub(super) table: OpArgsTable,
    /// The text of each row, by row.
    keys: Vec<Box<[u8]>>,
    /// The row of each text.
    index: FxHashMap<Box<[u8]>, u32>,
}

impl OpArgsInterner {
    /// Moves `other`'s rows into this one; returns the new row of each of `other`'s rows. Rows
    /// new here are added in `other`'s order, so that appending the parts of a file in file
    /// order numbers the rows as reading it whole would.
    pub(super) fn append(&mut self, other: OpArgsInterner) -> Vec<u32> {
        other
            .keys
            .into_iter()
            .zip(other.table.rows)
            .map(|(key, row)| self.intern(key, || row))
            .collect()
    }

    /// The finished table, its rows numbered in the order the finished `tracks` first use
    /// them (so the numbering does not depend on the order of import: threads, blocks), rows
    /// no event uses left out; the events' details are renumbered to match.
    pub(super) fn renumber(self, tracks: &mut [Track]) -> OpArgsTable {
        let mut old_rows: Vec<Option<OpArgs>> = self.table.rows.into_iter().map(Some).collect();
        let mut new_of: Vec<u32> = vec![NO_DETAIL; old_rows.len()];
        let mut rows: Vec<OpArgs> = Vec::new();
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
                    && let Some(row) = old_rows.get_mut(old).and_then(Option::take)
                {
                    *slot = u32::try_from(rows.len()).unwrap_or(NO_DETAIL);
                    rows.push(row);
                }
                *d = *slot;
            }
        }
        OpArgsTable { rows }
    }

    fn intern(&mut self, key: Box<[u8]>, make: impl FnOnce() -> OpArgs) -> u32 {
        if let Some(&row) = self.index.get(&key) {
            return row;
        }
        let row = u32::try_from(self.table.rows.len()).unwrap_or(u32::MAX);
        self.table.rows.push(make());
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
        self.op_args.intern(key.into(), make)
    }

    /// Adds a framework operator (`CpuOp`) whose recorded inputs are row `args` of the
    /// operator-inputs table ([`ProfileBuilder::intern_op_args`]). Inputs whose dimensions or
    /// type cannot be used are counted in a warning: such an operator's FLOPs are unknown.
    pub fn push_op(&mut self, track: TrackId, start_ns: i64, dur_ns: i64, name: StrId, args: u32) {
        let flags = self
            .op_args
            .table
            .get(args as usize)
            .map(|row| (row.has_invalid_dims(), row.has_unknown_dtype()));
        if let Some((invalid, unknown)) = flags {
            if invalid {
                self.warn(
                    "op_dims_invalid",
                    1,
                    "operators whose `Input Dims` hold a negative or non-integer size, or sizes \
                     whose product overflows, get unknown FLOPs and bytes",
                );
            }
            if unknown {
                self.warn(
                    "op_dtype_unknown",
                    1,
                    "operators with a tensor input of an unknown `Input type` get unknown FLOPs \
                     and bytes",
                );
            }
        }
        self.tracks[track.0 as usize]
            .events
            .push(start_ns, dur_ns, name, EventKind::CpuOp, args);
    }
}
