//! Appending one builder to another: how an importer that builds parts of a file on several
//! threads puts them back together in file order.

use super::{PendingFlow, ProfileBuilder, PushedEvent, TrackId};
use crate::model::{EventKind, NO_DETAIL, TraceId, TrackKey};
use crate::strings::StrId;

/// How the ids of an appended builder map to the ids of the builder it was appended to.
pub struct Remap {
    /// New id of each string of the appended builder, by old id.
    pub strings: Vec<StrId>,
    /// New id of each track of the appended builder, by old id.
    pub tracks: Vec<TrackId>,
    /// Number of events each of those tracks held before the append, by old track id: an event
    /// at index `i` of old track `t` is now at `offsets[t] + i` of `tracks[t]`.
    pub offsets: Vec<u32>,
}

impl Remap {
    /// The new id of string `s`.
    pub fn string(&self, s: StrId) -> StrId {
        self.strings.get(s.0 as usize).copied().unwrap_or_default()
    }

    /// The new id of a pid or tid.
    pub fn trace_id(&self, id: TraceId) -> TraceId {
        match id {
            TraceId::Int(v) => TraceId::Int(v),
            TraceId::Name(s) => TraceId::Name(self.string(s)),
        }
    }

    /// The new id of track `t`.
    pub fn track(&self, t: TrackId) -> TrackId {
        self.tracks[t.0 as usize]
    }

    /// The new place of an event pushed to the appended builder.
    pub fn event(&self, (track, index): PushedEvent) -> PushedEvent {
        let t = track.0 as usize;
        (self.tracks[t], self.offsets[t].saturating_add(index))
    }

    fn key(&self, key: TrackKey) -> TrackKey {
        match key {
            TrackKey::Gpu { .. } => key,
            TrackKey::Thread { pid, tid } => TrackKey::Thread {
                pid: self.trace_id(pid),
                tid: self.trace_id(tid),
            },
            TrackKey::Async { pid, name } => TrackKey::Async {
                pid: self.trace_id(pid),
                name: self.string(name),
            },
        }
    }
}

impl ProfileBuilder {
    /// Appends everything `other` holds of a file's events, as if its pushes had been made here
    /// after the pushes already made: strings and tracks new to this builder are added in the
    /// order `other` first used them, events go to the end of their tracks, kernels, copies and
    /// API calls to the end of the side tables, and warnings add up (a code new here keeps
    /// `other`'s message). Returns how `other`'s ids map to this builder's, for the importer's
    /// own references into `other`.
    ///
    /// Only what importers set per event is carried: tracks and their events, the side tables,
    /// markers, flows, correlations and warnings. Devices, counters, process names, labels
    /// and the source belong to the whole file and must be set on this builder.
    pub fn append(&mut self, other: ProfileBuilder) -> Remap {
        let strings: Vec<StrId> = (0..other.strings.len())
            .map(|i| {
                let id = StrId(u32::try_from(i).unwrap_or(u32::MAX));
                self.strings.intern(other.strings.get(id))
            })
            .collect();
        let mut remap = Remap {
            strings,
            tracks: Vec::with_capacity(other.tracks.len()),
            offsets: Vec::with_capacity(other.tracks.len()),
        };
        let (rows, other_rows) = (self.side_table_rows(), other.side_table_rows());
        let [kernels, copies, api_calls] = rows.map(|r| u32::try_from(r).unwrap_or(u32::MAX));
        let op_rows = self.op_args.append(other.op_args);
        for track in other.tracks {
            let id = self.track(remap.key(track.key));
            let events = &mut self.tracks[id.0 as usize].events;
            remap.tracks.push(id);
            remap
                .offsets
                .push(u32::try_from(events.len()).unwrap_or(u32::MAX));
            let mut from = track.events;
            for s in &mut from.name {
                *s = remap.string(*s);
            }
            for (d, &kind) in from.detail.iter_mut().zip(&from.kind) {
                let offset = match kind {
                    _ if *d == NO_DETAIL => continue,
                    EventKind::Kernel => kernels,
                    EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory => copies,
                    k if k.is_api() => api_calls,
                    EventKind::CpuOp => {
                        *d = op_rows.get(*d as usize).copied().unwrap_or(NO_DETAIL);
                        continue;
                    }
                    _ => continue,
                };
                *d = offset.saturating_add(*d);
            }
            if events.is_empty() {
                // A track new here takes the columns as they are.
                *events = from;
                continue;
            }
            events.start_ns.extend_from_slice(&from.start_ns);
            events.dur_ns.extend_from_slice(&from.dur_ns);
            events.name.extend_from_slice(&from.name);
            events.kind.extend_from_slice(&from.kind);
            events.detail.extend_from_slice(&from.detail);
        }
        self.scopes.append(rows, other.scopes, other_rows);
        self.kernels.append(other.kernels, |s| remap.string(s));
        self.copies.append(other.copies);
        self.api_calls.append(other.api_calls);
        self.markers.extend(other.markers);
        self.memory_records.extend(
            other
                .memory_records
                .into_iter()
                .map(|r| super::MemoryRecord {
                    track: r.track.map(|t| remap.track(t)),
                    ..r
                }),
        );
        for (from, to, kind) in other.exact_flows {
            self.exact_flows
                .push((remap.event(from), remap.event(to), kind));
        }
        self.pending_flows
            .extend(other.pending_flows.into_iter().map(|f| PendingFlow {
                from_track: remap.track(f.from_track),
                to_track: remap.track(f.to_track),
                ..f
            }));
        for w in other.warnings {
            match other.places.get(&w.code) {
                Some((what, places)) => {
                    for (place, count) in places {
                        self.warn_at(&w.code, *count, place, what);
                    }
                }
                None => self.warn(&w.code, w.count, w.message),
            }
        }
        remap
    }
}
