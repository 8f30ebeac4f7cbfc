//! [`ProfileBuilder`]: what every importer uses to assemble a [`Profile`]. Importers push events
//! in any order on the file's own clock; `finish` sorts each track, computes nesting, links CPU
//! launches to GPU work through correlation ids and moves time zero to the first event.
//!
//! `finish` is also the last line of defence against impossible times, whatever the importer
//! checked: an event with a negative duration, an end that overflows `i64`, or a start or end
//! further than [`TIME_LIMIT_NS`] from the origin is left out and counted in the warning
//! `event_time_out_of_range`; counter samples and markers likewise (`sample_time_out_of_range`).
//! So every time in a finished profile lies in `(-TIME_LIMIT_NS, TIME_LIMIT_NS]` and the
//! difference of any two of them fits in an `i64`.

mod correlate;
mod memory;
mod merge;
mod op_args;

pub use memory::{MemoryRecord, UNKNOWN_TOTAL};
pub use merge::Remap;

use std::path::PathBuf;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::model::column::OptColumn;
use crate::model::{
    ApiInfo, ApiTable, CopyInfo, CopyTable, CounterTrack, Device, DistributedInfo, EventKind,
    EventRef, Events, Flow, FlowKind, Format, KernelInfo, KernelTable, Marker, MemoryData,
    NO_DETAIL, NO_PARENT, Profile, RecordedSummary, Source, TimeOrigin, TraceId, Track, TrackKey,
    Warning,
};
use crate::strings::{StrId, StringTable};

/// The largest distance from the profile origin that a time in a finished profile may have:
/// 2^62 ns, about 146 years. Any two times of a profile then differ by less than `i64::MAX`, so
/// spans and differences cannot overflow.
pub const TIME_LIMIT_NS: i64 = 1 << 62;

/// Marks, in the old-to-new index maps of `finish`, an event that was left out.
const DROPPED: u32 = u32::MAX;

/// An event as pushed: its track and its index in push order.
pub type PushedEvent = (TrackId, u32);

/// Index of a track inside a [`ProfileBuilder`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TrackId(pub u32);

/// A flow whose ends are given as times on tracks; bound to events in `finish`.
#[derive(Clone, Copy, Debug)]
pub struct PendingFlow {
    /// Track of the start.
    pub from_track: TrackId,
    /// Time of the start: binds to the deepest event enclosing it.
    pub from_ns: i64,
    /// Track of the end.
    pub to_track: TrackId,
    /// Time of the end.
    pub to_ns: i64,
    /// True if the end binds to the enclosing event, false for the next event starting at or
    /// after `to_ns` (Chrome `bp`).
    pub to_enclosing: bool,
    /// What the flow means.
    pub kind: FlowKind,
}

/// Assembles a [`Profile`].
#[derive(Debug)]
pub struct ProfileBuilder {
    /// Source description (filled by the importer).
    pub source: Source,
    /// Devices.
    pub devices: Vec<Device>,
    /// Labels.
    pub labels: Vec<(String, String)>,
    /// Distributed-training metadata.
    pub distributed: Option<DistributedInfo>,
    /// Process names.
    pub process_names: Vec<(TraceId, String)>,
    /// Interned strings.
    pub strings: StringTable,
    /// Kernel side table.
    pub kernels: KernelTable,
    /// Copy side table.
    pub copies: CopyTable,
    /// API side table.
    pub api_calls: ApiTable,
    /// Counter tracks.
    pub counters: Vec<CounterTrack>,
    /// Markers (raw file clock until `finish`).
    pub markers: Vec<Marker>,
    /// Recorded summary (nvprof summary files).
    pub recorded_summary: Option<RecordedSummary>,
    /// Memory data other than the records (source, stacks, segments, settings); the records
    /// are pushed with [`ProfileBuilder::push_memory`] and put in order by `finish`.
    pub memory: MemoryData,
    /// Memory records as pushed.
    memory_records: Vec<MemoryRecord>,
    /// Flows to bind by time in `finish`.
    pub pending_flows: Vec<PendingFlow>,
    /// Flows between known events: ((track, index), (track, index), kind), indices as pushed.
    exact_flows: Vec<(PushedEvent, PushedEvent, FlowKind)>,
    /// Time zero on the file clock, if the importer knows it; otherwise the earliest event.
    pub origin_raw_ns: Option<i64>,
    /// Offset that turns the file clock into Unix-epoch nanoseconds, if known.
    pub unix_offset_ns: Option<i64>,
    pub(crate) tracks: Vec<Track>,
    track_ids: FxHashMap<TrackKey, TrackId>,
    warnings: Vec<Warning>,
    /// Position of each warning code in `warnings` (a file can raise thousands of codes).
    warning_index: FxHashMap<String, usize>,
    /// For [`ProfileBuilder::warn_at`]: per warning code, what happened and the count per place.
    places: FxHashMap<String, (String, Vec<(String, u64)>)>,
    /// The correlation-id scope of each row of the side tables, where not 0.
    pub(super) scopes: Scopes,
    /// The recorded inputs of CPU operators ([`ProfileBuilder::push_op`]).
    op_args: op_args::OpArgsInterner,
}

/// The correlation-id scope (see [`ProfileBuilder::push_kernel`]) of each row of the side
/// tables. Files with one scope, 0, store nothing here.
#[derive(Debug, Default)]
pub(super) struct Scopes {
    kernels: OptColumn<u32>,
    copies: OptColumn<u32>,
    api_calls: OptColumn<u32>,
}

impl Scopes {
    /// Notes the scope of row `row` of a side table's column.
    fn note(column: &mut OptColumn<u32>, row: usize, scope: u32) {
        column.push(row, (scope != 0).then_some(scope));
    }

    /// Appends `other`'s rows; `rows` and `other_rows` are the (kernels, copies, API calls)
    /// rows of the two builders.
    pub(super) fn append(&mut self, rows: [usize; 3], other: Scopes, other_rows: [usize; 3]) {
        self.kernels.append(rows[0], other.kernels, other_rows[0]);
        self.copies.append(rows[1], other.copies, other_rows[1]);
        self.api_calls
            .append(rows[2], other.api_calls, other_rows[2]);
    }
}

impl ProfileBuilder {
    /// A builder for a file at `path` in `format`.
    pub fn new(path: PathBuf, format: Format) -> Self {
        Self {
            source: Source {
                path,
                format,
                tool: String::new(),
                tool_version: None,
                schema_version: None,
                compressed: false,
                file_bytes: 0,
                content_bytes: 0,
                details: Vec::new(),
            },
            devices: Vec::new(),
            labels: Vec::new(),
            distributed: None,
            process_names: Vec::new(),
            strings: StringTable::default(),
            kernels: KernelTable::default(),
            copies: CopyTable::default(),
            api_calls: ApiTable::default(),
            counters: Vec::new(),
            markers: Vec::new(),
            recorded_summary: None,
            memory: MemoryData::default(),
            memory_records: Vec::new(),
            pending_flows: Vec::new(),
            exact_flows: Vec::new(),
            origin_raw_ns: None,
            unix_offset_ns: None,
            tracks: Vec::new(),
            track_ids: FxHashMap::default(),
            warnings: Vec::new(),
            warning_index: FxHashMap::default(),
            places: FxHashMap::default(),
            scopes: Scopes::default(),
            op_args: op_args::OpArgsInterner::default(),
        }
    }

    /// Interns a string.
    pub fn intern(&mut self, s: &str) -> StrId {
        self.strings.intern(s)
    }

    /// The track for `key`, created (with `name`) if new.
    pub fn track(&mut self, key: TrackKey) -> TrackId {
        if let Some(&id) = self.track_ids.get(&key) {
            return id;
        }
        let id = TrackId(u32::try_from(self.tracks.len()).unwrap_or(u32::MAX));
        self.tracks.push(Track {
            key,
            name: String::new(),
            sort_index: None,
            events: Events::default(),
            max_depth: 0,
            max_dur_ns: 0,
        });
        self.track_ids.insert(key, id);
        id
    }

    /// The track for `key` if it exists.
    pub fn find_track(&self, key: &TrackKey) -> Option<TrackId> {
        self.track_ids.get(key).copied()
    }

    /// Mutable access to a track (to set its name or sort index).
    pub fn track_mut(&mut self, id: TrackId) -> &mut Track {
        &mut self.tracks[id.0 as usize]
    }

    /// All tracks built so far.
    pub fn tracks(&self) -> &[Track] {
        &self.tracks
    }

    /// Devices that have GPU tracks but no entry in [`ProfileBuilder::devices`], in order.
    pub fn undescribed_gpu_ids(&self) -> Vec<u32> {
        let described: FxHashSet<u32> = self.devices.iter().map(|d| d.id).collect();
        let mut ids: Vec<u32> = self
            .tracks
            .iter()
            .filter_map(|t| match t.key {
                TrackKey::Gpu { device, .. } => Some(device),
                _ => None,
            })
            .filter(|id| !described.contains(id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Number of events pushed so far.
    pub fn event_count(&self) -> usize {
        self.tracks.iter().map(|t| t.events.len()).sum()
    }

    /// Adds an event without side-table details.
    pub fn push(
        &mut self,
        track: TrackId,
        start_ns: i64,
        dur_ns: i64,
        name: StrId,
        kind: EventKind,
    ) {
        self.tracks[track.0 as usize]
            .events
            .push(start_ns, dur_ns, name, kind, NO_DETAIL);
    }

    /// Adds a kernel with its launch details. `scope` separates correlation-id spaces (one per
    /// process); use 0 when the file has one process.
    pub fn push_kernel(
        &mut self,
        track: TrackId,
        start_ns: i64,
        dur_ns: i64,
        name: StrId,
        info: KernelInfo,
        scope: u32,
    ) {
        let row = self.kernels.len();
        let detail = u32::try_from(row).unwrap_or(NO_DETAIL);
        Scopes::note(&mut self.scopes.kernels, row, scope);
        self.kernels.push(info);
        self.tracks[track.0 as usize].events.push(
            start_ns,
            dur_ns,
            name,
            EventKind::Kernel,
            detail,
        );
    }

    /// Adds a copy, set or unified-memory transfer (`kind` says which) with its details.
    #[allow(clippy::too_many_arguments)] // one argument per event column, as in `push_kernel`
    pub fn push_copy(
        &mut self,
        track: TrackId,
        start_ns: i64,
        dur_ns: i64,
        name: StrId,
        kind: EventKind,
        info: CopyInfo,
        scope: u32,
    ) {
        let row = self.copies.len();
        let detail = u32::try_from(row).unwrap_or(NO_DETAIL);
        Scopes::note(&mut self.scopes.copies, row, scope);
        self.copies.push(info);
        self.tracks[track.0 as usize]
            .events
            .push(start_ns, dur_ns, name, kind, detail);
    }

    /// Adds a runtime or driver API call (`kind`) with its details.
    #[allow(clippy::too_many_arguments)] // one argument per event column, as in `push_kernel`
    pub fn push_api(
        &mut self,
        track: TrackId,
        start_ns: i64,
        dur_ns: i64,
        name: StrId,
        kind: EventKind,
        info: ApiInfo,
        scope: u32,
    ) {
        let row = self.api_calls.len();
        let detail = u32::try_from(row).unwrap_or(NO_DETAIL);
        Scopes::note(&mut self.scopes.api_calls, row, scope);
        self.api_calls.push(info);
        self.tracks[track.0 as usize]
            .events
            .push(start_ns, dur_ns, name, kind, detail);
    }

    /// Adds a flow between two pushed events, given as (track, index in push order).
    pub fn push_exact_flow(&mut self, from: PushedEvent, to: PushedEvent, kind: FlowKind) {
        self.exact_flows.push((from, to, kind));
    }

    /// Rows of the kernel, copy and API-call tables.
    pub(super) fn side_table_rows(&self) -> [usize; 3] {
        [self.kernels.len(), self.copies.len(), self.api_calls.len()]
    }

    /// Records a problem `count` times. Warnings with the same `code` are merged: counts add up
    /// and the first message is kept, so give each distinct situation its own code.
    pub fn warn(&mut self, code: &str, count: u64, message: impl Into<String>) {
        if count == 0 {
            return;
        }
        if let Some(&i) = self.warning_index.get(code) {
            let w = &mut self.warnings[i];
            w.count = w.count.saturating_add(count);
            return;
        }
        self.warning_index
            .insert(code.to_string(), self.warnings.len());
        self.warnings.push(Warning {
            code: code.to_string(),
            message: message.into(),
            count,
        });
    }

    /// Records a problem found `count` times at `place` (a table, a section). Unlike
    /// [`ProfileBuilder::warn`], the message names every place the code was reported from, with
    /// its count: `CUPTI_ACTIVITY_KIND_KERNEL (2), CUPTI_ACTIVITY_KIND_RUNTIME (1): rows ...`.
    /// `what` is kept from the first report of `code`.
    pub fn warn_at(&mut self, code: &str, count: u64, place: &str, what: &str) {
        if count == 0 {
            return;
        }
        let (what, places) = self
            .places
            .entry(code.to_string())
            .or_insert_with(|| (what.to_string(), Vec::new()));
        match places.iter_mut().find(|(p, _)| p == place) {
            Some((_, n)) => *n = n.saturating_add(count),
            None => places.push((place.to_string(), count)),
        }
        let message = if places.len() == 1 {
            format!("{}: {what}", places[0].0)
        } else {
            let list: Vec<String> = places.iter().map(|(p, n)| format!("{p} ({n})")).collect();
            format!("{}: {what}", list.join(", "))
        };
        self.warn(code, count, "");
        self.set_warning_message(code, message);
    }

    /// Replaces the message of warning `code` (used when the text depends on the final count).
    pub fn set_warning_message(&mut self, code: &str, message: impl Into<String>) {
        if let Some(&i) = self.warning_index.get(code) {
            self.warnings[i].message = message.into();
        }
    }

    /// Removes the tracks for which `drop` returns true, with their events.
    pub fn remove_tracks(&mut self, mut drop: impl FnMut(&Track) -> bool) {
        let mut remap = Vec::with_capacity(self.tracks.len());
        let mut kept = Vec::with_capacity(self.tracks.len());
        for (old, track) in std::mem::take(&mut self.tracks).into_iter().enumerate() {
            if drop(&track) {
                remap.push(None);
            } else {
                remap.push(Some(TrackId(u32::try_from(kept.len()).unwrap_or(0))));
                kept.push(track);
            }
            debug_assert_eq!(remap.len(), old + 1);
        }
        self.tracks = kept;
        self.track_ids = self
            .tracks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.key, TrackId(u32::try_from(i).unwrap_or(0))))
            .collect();
        self.exact_flows.retain_mut(|(from, to, _)| {
            match (remap[from.0.0 as usize], remap[to.0.0 as usize]) {
                (Some(a), Some(b)) => {
                    from.0 = a;
                    to.0 = b;
                    true
                }
                _ => false,
            }
        });
        self.pending_flows.retain_mut(|f| {
            match (remap[f.from_track.0 as usize], remap[f.to_track.0 as usize]) {
                (Some(a), Some(b)) => {
                    f.from_track = a;
                    f.to_track = b;
                    true
                }
                _ => false,
            }
        });
        // A memory record keeps its place when its thread's track goes (it loses the thread).
        for r in &mut self.memory_records {
            r.track = r.track.and_then(|t| remap[t.0 as usize]);
        }
    }

    /// Re-keys a track (e.g. a TensorFlow stream pid recognised as a GPU stream). If a track with
    /// the new key exists, the events are appended to it.
    pub fn rekey_track(&mut self, id: TrackId, key: TrackKey) {
        if let Some(&existing) = self.track_ids.get(&key) {
            if existing == id {
                return;
            }
            let moved = std::mem::take(&mut self.tracks[id.0 as usize].events);
            let target = &mut self.tracks[existing.0 as usize].events;
            target.start_ns.extend(moved.start_ns);
            target.dur_ns.extend(moved.dur_ns);
            target.name.extend(moved.name);
            target.kind.extend(moved.kind);
            target.detail.extend(moved.detail);
            return;
        }
        let old = self.tracks[id.0 as usize].key;
        self.track_ids.remove(&old);
        self.tracks[id.0 as usize].key = key;
        self.track_ids.insert(key, id);
    }

    /// Sorts, nests, links and shifts everything; returns the finished profile. Events, counter
    /// samples and markers whose times cannot be placed within [`TIME_LIMIT_NS`] of the origin
    /// are left out with a counted warning (see the module documentation).
    pub fn finish(mut self) -> Profile {
        let origin_raw_ns = self.origin_raw_ns.unwrap_or_else(|| self.earliest_raw_ns());
        // Sort every track by start (longest first on ties) and remember where events moved.
        // Where events moved matters only to flows given by event (exact flows).
        let want_moves = !self.exact_flows.is_empty();
        let finish_track = |track: &mut Track| {
            let (map, n) = sort_and_shift(&mut track.events, origin_raw_ns, want_moves);
            let (depth, parent, max_depth, _) = nest(&track.events);
            track.events.depth = depth;
            track.events.parent = parent;
            track.max_depth = max_depth;
            let dur_ns = &track.events.dur_ns;
            let piece_max =
                crate::parallel::map_ranges(&crate::parallel::ranges(dur_ns.len()), |r| {
                    dur_ns[r].iter().copied().max().unwrap_or(0)
                });
            track.max_dur_ns = piece_max.into_iter().max().unwrap_or(0).max(0);
            (map, n)
        };
        // Tracks are independent and finished side by side: those of less than a thread's
        // share of the events on one thread each; a larger one (a Kineto trace has two or three
        // threads of millions of events) on a part of the threads in proportion to its events,
        // each step of it in pieces.
        let threads = crate::parallel::threads().max(1);
        let share = self.event_count() / threads;
        let is_large = |t: &Track| threads > 1 && t.events.len() > share;
        let large_events: usize = self
            .tracks
            .iter()
            .filter(|t| is_large(t))
            .map(|t| t.events.len())
            .sum();
        let finished = crate::parallel::map_mut(
            &mut self.tracks,
            |t| t.events.len(),
            |t| {
                let part = if is_large(t) {
                    (threads * t.events.len() / large_events.max(1)).max(1)
                } else {
                    1
                };
                crate::parallel::with_threads(part, || finish_track(t))
            },
        );
        let dropped: u64 = finished.iter().map(|(_, n)| n).sum();
        let new_index_of: Vec<Option<Vec<u32>>> =
            finished.into_iter().map(|(map, _)| map).collect();
        self.warn(
            "event_time_out_of_range",
            dropped,
            "events with a negative duration, or a start or end that cannot be placed within \
             2^62 ns (about 146 years) of the profile's start, were left out",
        );
        let mut samples_dropped = 0u64;
        for c in &mut self.counters {
            let before = c.time_ns.len();
            let (times, values): (Vec<i64>, Vec<f64>) = c
                .time_ns
                .iter()
                .zip(&c.value)
                .filter_map(|(&t, &v)| Some((shift(t, origin_raw_ns)?, v)))
                .unzip();
            samples_dropped += (before - times.len()) as u64;
            c.time_ns = times;
            c.value = values;
            sort_counter(c);
        }
        let before = self.markers.len();
        self.markers
            .retain_mut(|m| match shift(m.time_ns, origin_raw_ns) {
                Some(t) => {
                    m.time_ns = t;
                    true
                }
                None => false,
            });
        samples_dropped += (before - self.markers.len()) as u64;
        self.markers.sort_by_key(|m| m.time_ns);
        self.warn(
            "sample_time_out_of_range",
            samples_dropped,
            "counter samples and markers that cannot be placed within 2^62 ns (about 146 years) \
             of the profile's start were left out",
        );

        let mut flows = correlate::link_correlations(
            &self.tracks,
            &self.kernels,
            &self.copies,
            &self.api_calls,
            &self.scopes,
            self.exact_flows.len() + self.pending_flows.len(),
        );
        for ((ft, fi), (tt, ti), kind) in std::mem::take(&mut self.exact_flows) {
            let new_index = |t: TrackId, i: u32| match &new_index_of[t.0 as usize] {
                Some(map) => map.get(i as usize).copied().filter(|&n| n != DROPPED),
                None => ((i as usize) < self.tracks[t.0 as usize].events.len()).then_some(i),
            };
            if let (Some(a), Some(b)) = (new_index(ft, fi), new_index(tt, ti)) {
                flows.push(Flow {
                    from: EventRef {
                        track: ft.0,
                        index: a,
                    },
                    to: EventRef {
                        track: tt.0,
                        index: b,
                    },
                    kind,
                });
            }
        }
        // Each flow is bound on its own: on all threads, in pieces of the list, kept in order.
        let pending = std::mem::take(&mut self.pending_flows);
        let tracks = &self.tracks;
        let bind = |pf: &PendingFlow| {
            let from_track = &tracks[pf.from_track.0 as usize];
            let to_track = &tracks[pf.to_track.0 as usize];
            let from = shift(pf.from_ns, origin_raw_ns)
                .and_then(|t| enclosing_event(&from_track.events, t));
            let to = shift(pf.to_ns, origin_raw_ns).and_then(|t| {
                if pf.to_enclosing {
                    enclosing_event(&to_track.events, t)
                } else {
                    next_event(&to_track.events, t)
                }
            });
            Some(Flow {
                from: EventRef {
                    track: pf.from_track.0,
                    index: from?,
                },
                to: EventRef {
                    track: pf.to_track.0,
                    index: to?,
                },
                kind: pf.kind,
            })
        };
        // A binding is two binary searches.
        let mut pieces = crate::parallel::pieces_for_searches(&[pending.len()]);
        let bound = crate::parallel::map_mut(
            &mut pieces,
            |(_, range)| range.len(),
            |(_, range)| pending[range.clone()].iter().map(bind).collect::<Vec<_>>(),
        );
        let mut unbound = 0u64;
        for found in bound.into_iter().flatten() {
            match found {
                Some(flow) => flows.push(flow),
                None => unbound += 1,
            }
        }
        if unbound > 0 {
            self.warn(
                "flow_unbound",
                unbound,
                "flow arrows whose start or end falls on no event were left out",
            );
        }
        // The kind decides between flows that link the same two events, so the order does not
        // depend on the sort.
        // The key is the whole flow: sorted in place.
        crate::parallel::sort_unique_by_key(&mut flows, |f| (f.from, f.to, f.kind as u8));
        flows.shrink_to_fit();

        let (mut tracks, position) = order_tracks(std::mem::take(&mut self.tracks), &mut flows);
        let (op_args, unusable) = std::mem::take(&mut self.op_args).renumber(&mut tracks);
        self.warn_unusable_op_args(unusable);
        self.devices.sort_by_key(|d| d.id);
        let (memory_events, memory_dropped) = self.finish_memory(origin_raw_ns, &position);
        self.warn(
            "memory_time_out_of_range",
            memory_dropped,
            "memory records that cannot be placed within 2^62 ns (about 146 years) of the \
             profile's start were left out",
        );
        let mut memory = std::mem::take(&mut self.memory);
        memory.events = memory_events;

        Profile {
            source: self.source,
            origin: TimeOrigin {
                raw_ns: origin_raw_ns,
                unix_ns: self
                    .unix_offset_ns
                    .map(|off| off.saturating_add(origin_raw_ns)),
            },
            devices: self.devices,
            labels: self.labels,
            distributed: self.distributed,
            process_names: self.process_names,
            warnings: self.warnings,
            strings: self.strings,
            tracks,
            kernels: self.kernels,
            copies: self.copies,
            api_calls: self.api_calls,
            op_args,
            flows,
            counters: self.counters,
            markers: self.markers,
            recorded_summary: self.recorded_summary,
            memory,
        }
    }

    /// Time zero when the importer gives none: the earliest start of an event with a usable
    /// duration (so that an event `finish` drops cannot move it) or the earliest counter sample
    /// or marker within reach of the events, else the earliest counter sample or marker, else 0. If the events spread over more than [`TIME_LIMIT_NS`], some
    /// times are bogus: the half of the clock range that holds more events wins, so that one
    /// outlier cannot push every real event out of the profile.
    fn earliest_raw_ns(&self) -> i64 {
        // The bounds of every usable event: in pieces of the tracks, on all threads.
        let lens: Vec<usize> = self.tracks.iter().map(|t| t.events.len()).collect();
        let mut pieces = crate::parallel::pieces(&lens);
        let piece_bounds = crate::parallel::map_mut(
            &mut pieces,
            |(_, range)| range.len(),
            |(track, range)| {
                let ev = &self.tracks[*track].events;
                range
                    .clone()
                    .filter_map(|i| usable_span(ev, i))
                    .fold(None, widen)
            },
        );
        let bounds = piece_bounds.into_iter().flatten().fold(None, widen);
        if let Some((lo, hi)) = bounds {
            if i128::from(hi) - i128::from(lo) <= i128::from(TIME_LIMIT_NS) {
                // Counter samples and markers before the first event move time zero too, as
                // long as they stay within the limit of the last event's end.
                let floor = hi.saturating_sub(TIME_LIMIT_NS);
                let samples = self.counters.iter().flat_map(|c| c.time_ns.iter().copied());
                let markers = self.markers.iter().map(|m| m.time_ns);
                return samples
                    .chain(markers)
                    .filter(|&t| t >= floor)
                    .fold(lo, i64::min);
            }
            let mid = lo / 2 + hi / 2;
            let (mut low, mut high, mut high_min) = (0u64, 0u64, i64::MAX);
            let usable = self.tracks.iter().flat_map(|t| {
                let ev = &t.events;
                (0..ev.len()).filter_map(move |i| usable_span(ev, i))
            });
            for (s, _) in usable {
                if s < mid {
                    low += 1;
                } else {
                    high += 1;
                    high_min = high_min.min(s);
                }
            }
            return if low >= high { lo } else { high_min };
        }
        let counters = self
            .counters
            .iter()
            .filter_map(|c| c.time_ns.iter().min().copied());
        match counters.min() {
            Some(t) => t,
            None => self.markers.iter().map(|m| m.time_ns).min().unwrap_or(0),
        }
    }
}

/// Event `i`'s (start, end), if its duration is usable (not negative, and its end within
/// `i64`).
fn usable_span(ev: &Events, i: usize) -> Option<(i64, i64)> {
    let (s, d) = (ev.start_ns[i], ev.dur_ns[i]);
    (d >= 0).then(|| s.checked_add(d).map(|e| (s, e))).flatten()
}

/// `bounds` widened to take in `span`.
fn widen(bounds: Option<(i64, i64)>, (s, e): (i64, i64)) -> Option<(i64, i64)> {
    Some(bounds.map_or((s, e), |(lo, hi)| (lo.min(s), hi.max(e))))
}

/// Puts tracks in profile order — GPU tracks by device, context, stream and lane, then the others
/// by sort index and key — and moves the flows' ends with them. Also returns the new place of
/// each track, by old index.
pub(crate) fn order_tracks(tracks: Vec<Track>, flows: &mut [Flow]) -> (Vec<Track>, Vec<u32>) {
    let order_key = |t: &Track| {
        let gpu = match t.key {
            TrackKey::Gpu {
                device,
                context,
                stream,
                lane,
            } => (device, context, stream, lane as u8),
            _ => (0, 0, 0, 0),
        };
        (
            !t.key.is_gpu(),
            gpu,
            t.sort_index.unwrap_or(i64::MAX),
            t.key,
        )
    };
    let mut order: Vec<usize> = (0..tracks.len()).collect();
    order.sort_by(|&a, &b| order_key(&tracks[a]).cmp(&order_key(&tracks[b])));
    let mut position = vec![0u32; order.len()];
    for (new, &old) in order.iter().enumerate() {
        position[old] = u32::try_from(new).unwrap_or(0);
    }
    let mut slots: Vec<Option<Track>> = tracks.into_iter().map(Some).collect();
    let ordered = order.iter().filter_map(|&old| slots[old].take()).collect();
    for f in flows {
        f.from.track = position[f.from.track as usize];
        f.to.track = position[f.to.track as usize];
    }
    (ordered, position)
}

/// `t_ns` (raw file clock) relative to `origin_raw_ns`, or `None` if that is outside
/// `(-TIME_LIMIT_NS, TIME_LIMIT_NS]` (so that the difference of two such times fits in `i64`).
fn shift(t_ns: i64, origin_raw_ns: i64) -> Option<i64> {
    t_ns.checked_sub(origin_raw_ns)
        .filter(|t| (-TIME_LIMIT_NS + 1..=TIME_LIMIT_NS).contains(t))
}

/// The shifted start of an event, or `None` if it must be left out: a negative duration, or a
/// start or end that is not within [`TIME_LIMIT_NS`] of the origin.
fn shifted_start(start_ns: i64, dur_ns: i64, origin_raw_ns: i64) -> Option<i64> {
    if dur_ns < 0 {
        return None;
    }
    let start = shift(start_ns, origin_raw_ns)?;
    let end = start.checked_add(dur_ns)?;
    (end <= TIME_LIMIT_NS).then_some(start)
}

/// Leaves out the events [`shifted_start`] rejects, subtracts the origin, sorts the columns by
/// (start, longer first) and returns how many were left out and, if `want_moves`, for each old
/// index its new index ([`DROPPED`] for the events left out; `None` when no event moved).
fn sort_and_shift(
    ev: &mut Events,
    origin_raw_ns: i64,
    want_moves: bool,
) -> (Option<Vec<u32>>, u64) {
    use crate::parallel::{for_each_piece_mut, map_indices, map_ranges, ranges};
    let n = ev.len();
    let pieces = ranges(n);
    // Old index of each kept event, built only once an event is dropped.
    let mut kept: Option<Vec<u32>> = None;
    let all_kept = map_ranges(&pieces, |r| {
        r.into_iter()
            .all(|i| shifted_start(ev.start_ns[i], ev.dur_ns[i], origin_raw_ns).is_some())
    })
    .into_iter()
    .all(|k| k);
    if all_kept {
        let dur_ns = &ev.dur_ns;
        for_each_piece_mut(&mut ev.start_ns, |at, starts| {
            for (s, &d) in starts.iter_mut().zip(&dur_ns[at..]) {
                *s = shifted_start(*s, d, origin_raw_ns).unwrap_or(*s);
            }
        });
    } else {
        for i in 0..n {
            match shifted_start(ev.start_ns[i], ev.dur_ns[i], origin_raw_ns) {
                Some(s) => {
                    ev.start_ns[i] = s;
                    if let Some(k) = kept.as_mut() {
                        k.push(u32::try_from(i).unwrap_or(u32::MAX));
                    }
                }
                None => {
                    if kept.is_none() {
                        kept = Some((0..u32::try_from(i).unwrap_or(u32::MAX)).collect());
                    }
                }
            }
        }
    }
    let dropped = match &kept {
        Some(k) => {
            ev.pick(k);
            (n - k.len()) as u64
        }
        None => 0,
    };
    let m = ev.len();
    let (start_ns, dur_ns) = (&ev.start_ns, &ev.dur_ns);
    let sorted = map_ranges(&ranges(m), |r| {
        (r.start.max(1)..r.end).all(|i| {
            let (s0, s1, d0, d1) = (start_ns[i - 1], start_ns[i], dur_ns[i - 1], dur_ns[i]);
            s0 < s1 || (s0 == s1 && d0 >= d1)
        })
    })
    .into_iter()
    .all(|s| s);
    let perm: Option<Vec<u32>> = (!sorted).then(|| {
        // Sort compact keys (start, longest first, original index) rather than indices into
        // the columns: far fewer cache misses on tracks with millions of events.
        let mut keys: Vec<(i64, std::cmp::Reverse<i64>, u32)> = map_indices(m, |i| {
            let index = u32::try_from(i).unwrap_or(u32::MAX);
            (start_ns[i], std::cmp::Reverse(dur_ns[i]), index)
        });
        // The keys tell every event apart: any sort gives this order.
        crate::parallel::sort_unique_by_key(&mut keys, |&k| k);
        map_indices(m, |i| keys[i].2)
    });
    if let Some(perm) = &perm {
        ev.pick(perm);
    }
    if kept.is_none() && perm.is_none() {
        return (None, 0);
    }
    if !want_moves {
        return (None, dropped);
    }
    let mut new_index_of = vec![DROPPED; n];
    for new in 0..m {
        let compact = perm.as_ref().map_or(new, |p| p[new] as usize);
        let old = kept.as_ref().map_or(compact, |k| k[compact] as usize);
        new_index_of[old] = u32::try_from(new).unwrap_or(DROPPED);
    }
    (Some(new_index_of), dropped)
}

/// Computes depth and parent for sorted events. An event nests under the innermost open event
/// that contains it; an event that starts inside another but ends after it (a partial overlap)
/// goes one row below it, so nothing is hidden. Returns (depth, parent, rows, partial overlaps).
///
/// A long track is cut where nothing earlier is still open (every earlier event ends by the
/// next one's start: a new top-level event), and the segments are nested side by side; each
/// starts with an empty stack, as the one pass over the whole track would reach it.
pub(crate) fn nest(ev: &Events) -> (Vec<u16>, Vec<u32>, u16, u64) {
    let n = ev.len();
    let cuts = top_level_cuts(ev);
    // Zeros (fresh pages, written by the segments side by side): every entry is set below.
    let mut depth = vec![0u16; n];
    let mut parent = vec![0u32; n];
    let lens = || cuts.windows(2).map(|w| w[1] - w[0]);
    let mut segments: Vec<_> = crate::parallel::split_mut(&mut depth, lens())
        .into_iter()
        .zip(crate::parallel::split_mut(&mut parent, lens()))
        .collect();
    let results = crate::parallel::map_mut(
        &mut segments,
        |((_, d), _)| d.len(),
        |((first, d), (_, p))| nest_segment(ev, *first, d, p),
    );
    let max_depth = results.iter().map(|r| r.0).max().unwrap_or(0);
    let partial = results.iter().map(|r| r.1).sum();
    (depth, parent, max_depth, partial)
}

/// Where [`nest`] may cut a sorted track: `0`, then indices whose event starts at or after the
/// end of every event before it, about one per thread's share, then `ev.len()`.
fn top_level_cuts(ev: &Events) -> Vec<usize> {
    let n = ev.len();
    let pieces = crate::parallel::ranges(n);
    let mut cuts = vec![0];
    if pieces.len() > 1 {
        let piece_max = crate::parallel::map_ranges(&pieces, |r| {
            r.map(|i| ev.end_ns(i)).max().unwrap_or(i64::MIN)
        });
        // The latest end of the events before the piece searched, then of those searched.
        let mut before = piece_max[0];
        for (r, &max) in pieces.iter().zip(&piece_max).skip(1) {
            let mut reach = before;
            let cut = r.clone().find(|&i| {
                let top_level = ev.start_ns[i] >= reach;
                reach = reach.max(ev.end_ns(i));
                top_level
            });
            cuts.extend(cut);
            before = before.max(max);
        }
    }
    if n > 0 {
        cuts.push(n);
    }
    cuts
}

/// The one pass of [`nest`] over the events from `first` on, as many as `depth` holds, with
/// an empty stack at `first`. Returns (rows, partial overlaps).
fn nest_segment(ev: &Events, first: usize, depth: &mut [u16], parent: &mut [u32]) -> (u16, u64) {
    let mut stack: Vec<(i64, u32)> = Vec::new(); // (end, index)
    let mut max_depth = 0u16;
    let mut partial = 0u64;
    for (k, (d_out, p_out)) in depth.iter_mut().zip(parent.iter_mut()).enumerate() {
        let i = first + k;
        let start = ev.start_ns[i];
        let end = ev.end_ns(i);
        while let Some(&(top_end, _)) = stack.last() {
            if top_end <= start {
                stack.pop();
            } else {
                break;
            }
        }
        let p = stack.last().map_or(NO_PARENT, |&(top_end, idx)| {
            if top_end < end {
                partial += 1;
            }
            idx
        });
        let d = u16::try_from(stack.len()).unwrap_or(u16::MAX);
        max_depth = max_depth.max(d.saturating_add(1));
        *d_out = d;
        *p_out = p;
        stack.push((end, u32::try_from(i).unwrap_or(u32::MAX)));
    }
    (max_depth, partial)
}

fn sort_counter(c: &mut CounterTrack) {
    if c.time_ns.windows(2).all(|w| w[0] <= w[1]) {
        return;
    }
    let mut pairs: Vec<(i64, f64)> = c
        .time_ns
        .iter()
        .copied()
        .zip(c.value.iter().copied())
        .collect();
    pairs.sort_by_key(|p| p.0);
    c.time_ns = pairs.iter().map(|p| p.0).collect();
    c.value = pairs.iter().map(|p| p.1).collect();
}

/// The deepest event that contains `t_ns` (start ≤ t ≤ end). With events sorted by start, that
/// is the latest-starting one that still contains `t_ns`; the search looks back a bounded
/// distance so a pathological track cannot make it quadratic.
pub(crate) fn enclosing_event(ev: &Events, t_ns: i64) -> Option<u32> {
    let upto = ev.start_ns.partition_point(|&s| s <= t_ns);
    (upto.saturating_sub(4096)..upto)
        .rev()
        .find(|&i| ev.end_ns(i) >= t_ns)
        .and_then(|i| u32::try_from(i).ok())
}

/// The first event starting at or after `t_ns`.
fn next_event(ev: &Events, t_ns: i64) -> Option<u32> {
    let i = ev.first_starting_at_or_after(t_ns);
    (i < ev.len()).then(|| u32::try_from(i).ok()).flatten()
}

#[cfg(test)]
mod tests;
