//! One event into the builder: slices, begin/end pairs, instants, counters, flows, async
//! events and metadata.

use super::classify::{
    Class, GpuArgs, LANE_ARG_KEY, classify, gpu_lane, kind_reads_args, parse_gpu_args,
    parse_memcpy_name, parse_memset_kind,
};
use super::memory::{MEMORY_EVENT, OOM_EVENT};
use super::op_args;
use super::tokenize::{RawEvent, RawId};
use super::{ChromeState, FlowPoint, OpenBegin};
use crate::builder::{TIME_LIMIT_NS, TrackId};
use crate::cupti_cbid;
use crate::import::json::{self, Parser, Value};
use crate::model::{
    ApiInfo, CopyInfo, CopyKind, CounterTrack, EventKind, FlowKind, KernelInfo, Marker, TraceId,
    TrackKey,
};
use crate::time::parse_decimal_scaled;

/// The latest (and, negated, the earliest) time an event may have: just under the builder's
/// [`TIME_LIMIT_NS`] (2^62 ns) around 1970, the years 1824 to 2116. Within it, any two times
/// are less than i64::MAX apart, so no span or shift to the profile's origin can overflow.
pub(super) const MAX_TIME_NS: i64 = TIME_LIMIT_NS - 1;

impl ChromeState {
    /// Counts a complete event with a negative `dur` (any size); its duration becomes 0.
    fn negative_dur(&mut self) -> i64 {
        self.b.warn(
            "negative_dur",
            1,
            "complete events with a negative `dur` were given duration 0",
        );
        0
    }

    pub(super) fn event(&mut self, ev: &RawEvent<'_>) {
        if ev.keys == 0 {
            self.b
                .warn("empty_event", 1, "empty `{}` events were skipped");
            return;
        }
        if let Some(field) = ev.bad_field {
            self.b.warn(
                &format!("bad_type_{field}"),
                1,
                format!("events whose `{field}` has the wrong type were skipped"),
            );
            return;
        }
        let pid = self.norm_id(ev.pid.as_ref());
        let tid = self.norm_id(ev.tid.as_ref());
        if ev.ph == b'M' {
            self.metadata(ev, pid, tid);
            return;
        }
        if ev.ph == 0 {
            self.b.warn(
                "missing_ph",
                1,
                "events without a `ph` (phase) were skipped",
            );
            return;
        }
        let Some(ts_text) = ev.ts else {
            self.b
                .warn("missing_ts", 1, "events without a `ts` were skipped");
            return;
        };
        let parsed = parse_decimal_scaled(ts_text, 3);
        if parsed.is_some_and(|t| !(-MAX_TIME_NS..=MAX_TIME_NS).contains(&t))
            || (parsed.is_none() && json::float_from_text(ts_text).is_some_and(f64::is_finite))
        {
            self.b.warn(
                "ts_out_of_range",
                1,
                "events whose `ts` lies outside the years 1824 to 2116 (±2^62 ns around 1970) \
                 were skipped",
            );
            return;
        }
        let Some(ts_ns) = parsed else {
            self.b.warn(
                "bad_ts",
                1,
                "events whose `ts` is not a number were skipped",
            );
            return;
        };
        let name_text = ev.name.as_deref().unwrap_or("");
        match ev.ph {
            b'X' => {
                let dur_ns = match ev.dur {
                    Some(d) => {
                        match parse_decimal_scaled(d, 3) {
                            Some(v) if v < 0 => self.negative_dur(),
                            Some(v) => v,
                            None if json::float_from_text(d).is_some_and(|f| f < 0.0) => {
                                self.negative_dur()
                            }
                            None if json::float_from_text(d).is_some_and(f64::is_finite) => {
                                self.b.warn(
                                    "dur_out_of_range",
                                    1,
                                    "complete events whose `dur` is beyond ±292 years in \
                                     nanoseconds were made to end in 2116 (2^62 ns)",
                                );
                                i64::MAX
                            }
                            None => {
                                self.b.warn("bad_dur", 1, "complete events whose `dur` is not a number were given duration 0");
                                0
                            }
                        }
                    }
                    None => {
                        self.b.warn(
                            "missing_dur",
                            1,
                            "complete events without `dur` were given duration 0",
                        );
                        0
                    }
                };
                let dur_ns = self.clamp_dur(ts_ns, dur_ns);
                let cat = ev.cat.as_deref().unwrap_or("");
                let class = self.class_of(cat, ev.class);
                let gpu_args = ev.gpu_args_read.map(|lenient| (&ev.gpu_args, lenient));
                let track =
                    self.slice(class, pid, tid, ts_ns, dur_ns, name_text, ev.args, gpu_args);
                if let Some(id) = ev.bind_id.as_ref().and_then(|i| self.flow_id(i)) {
                    let index = self.b.tracks()[track.0 as usize]
                        .events
                        .len()
                        .saturating_sub(1);
                    let index = u32::try_from(index).unwrap_or(0);
                    if ev.flow_out {
                        self.bind_points.push((id, true, track, index, ts_ns));
                    }
                    if ev.flow_in {
                        self.bind_points.push((id, false, track, index, ts_ns));
                    }
                }
            }
            b'B' => {
                let cat = ev.cat.as_deref().unwrap_or("");
                let class = self.class_of(cat, None);
                let name = self.b.intern(name_text);
                self.open_begins
                    .entry((pid, tid))
                    .or_default()
                    .push(OpenBegin {
                        ts_ns,
                        name,
                        class,
                        // Kept only when the slice will read them, so that open begins do not
                        // hold every argument object of the file.
                        args: ev
                            .args
                            .filter(|a| slice_reads_args(class, a))
                            .map(<[u8]>::to_vec),
                    });
            }
            b'E' => {
                let open = self.open_begins.get_mut(&(pid, tid)).and_then(Vec::pop);
                match open {
                    Some(open) => {
                        let name = self.b.strings.get(open.name).to_string();
                        let merged = merge_args(open.args.as_deref(), ev.args);
                        let args = merged.as_deref();
                        let dur_ns = self.span(open.ts_ns, ts_ns);
                        self.slice(open.class, pid, tid, open.ts_ns, dur_ns, &name, args, None);
                    }
                    None => self.b.warn(
                        "unmatched_end",
                        1,
                        "end (`E`) events without a matching begin were skipped",
                    ),
                }
            }
            b'i' | b'I' | b'R' => {
                if ev.scope == b'g' || ev.scope == b'p' {
                    self.b.markers.push(Marker {
                        time_ns: ts_ns,
                        name: name_text.to_string(),
                    });
                } else if name_text == MEMORY_EVENT || name_text == OOM_EVENT {
                    self.memory_event(
                        name_text == OOM_EVENT,
                        pid,
                        tid,
                        ts_ns,
                        ev.args,
                        ev.memory_args,
                    );
                } else {
                    let name = self.b.intern(name_text);
                    let track = self.thread_track(pid, tid);
                    self.b.push(track, ts_ns, 0, name, EventKind::Instant);
                }
            }
            b'C' => self.counter(pid, name_text, ev.id.as_ref(), ts_ns, ev.args),
            b's' | b't' | b'f' => self.flow(ev, pid, tid, ts_ns),
            b'b' | b'e' | b'n' => self.async_event(ev, pid, ts_ns, name_text),
            other => *self.ignored_phases.entry(other).or_insert(0) += 1,
        }
    }

    /// The duration from `start_ns` to `end_ns` (0 when the end comes first), clamped with a
    /// counted warning where it does not fit in i64 or would end past the last representable
    /// time.
    pub(super) fn span(&mut self, start_ns: i64, end_ns: i64) -> i64 {
        match end_ns.checked_sub(start_ns) {
            Some(dur) => self.clamp_dur(start_ns, dur.max(0)),
            None => {
                self.warn_time_overflow();
                MAX_TIME_NS.saturating_sub(start_ns).max(0)
            }
        }
    }

    fn warn_time_overflow(&mut self) {
        self.b.warn(
            "time_overflow",
            1,
            "events ending after the year 2116 (2^62 ns after 1970) were cut there",
        );
    }

    /// `dur_ns`, shortened with a counted warning where the event would end after
    /// [`MAX_TIME_NS`]. `start_ns` is within ±[`MAX_TIME_NS`], so any two times of the trace are
    /// less than i64::MAX apart.
    pub(super) fn clamp_dur(&mut self, start_ns: i64, dur_ns: i64) -> i64 {
        if start_ns
            .checked_add(dur_ns)
            .is_some_and(|end| end <= MAX_TIME_NS)
        {
            return dur_ns;
        }
        self.warn_time_overflow();
        MAX_TIME_NS.saturating_sub(start_ns).max(0)
    }

    /// The class of category `cat` (`known` where it was worked out already), counting an
    /// unknown category.
    pub(super) fn class_of(&mut self, cat: &str, known: Option<Class>) -> Class {
        let class = known.unwrap_or_else(|| classify(cat));
        if class == Class::Unknown && !cat.is_empty() {
            if let Some(n) = self.unknown_categories.get_mut(cat) {
                *n += 1;
            } else {
                self.unknown_categories.insert(cat.to_string(), 1);
            }
        }
        class
    }

    pub(super) fn norm_id(&mut self, id: Option<&RawId<'_>>) -> TraceId {
        match id {
            None => TraceId::Int(0),
            Some(RawId::Int(v)) => TraceId::Int(*v),
            Some(RawId::Str(s)) => {
                let t = s.trim();
                match t.parse::<i64>() {
                    Ok(v) if !t.is_empty() => TraceId::Int(v),
                    _ => TraceId::Name(self.b.intern(s)),
                }
            }
        }
    }

    pub(super) fn flow_id(&self, id: &RawId<'_>) -> Option<u64> {
        match id {
            RawId::Int(v) => Some(*v as u64),
            RawId::Str(s) => {
                let t = s.trim();
                let t = t
                    .strip_prefix("0x")
                    .map_or_else(|| t.parse().ok(), |h| u64::from_str_radix(h, 16).ok());
                t.or_else(|| {
                    // Hash opaque string ids.
                    use std::hash::{Hash, Hasher};
                    let mut h = rustc_hash::FxHasher::default();
                    s.hash(&mut h);
                    Some(h.finish())
                })
            }
        }
    }

    pub(super) fn thread_track(&mut self, pid: TraceId, tid: TraceId) -> TrackId {
        let key = TrackKey::Thread { pid, tid };
        let id = self.track(key);
        self.thread_tracks.entry((pid, tid)).or_insert(id);
        id
    }

    pub(super) fn track(&mut self, key: TrackKey) -> TrackId {
        if let Some((k, id)) = self.last_track
            && k == key
        {
            return id;
        }
        let id = self.b.track(key);
        self.last_track = Some((key, id));
        id
    }

    /// Adds one slice; returns its track.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn slice(
        &mut self,
        class: Class,
        pid: TraceId,
        tid: TraceId,
        ts_ns: i64,
        dur_ns: i64,
        name_text: &str,
        args: Option<&[u8]>,
        read_args: Option<(&GpuArgs, u64)>,
    ) -> TrackId {
        let kind = class.slice_kind();
        let name = self.b.intern(name_text);
        let natural_lane = gpu_lane(kind);
        let parsed;
        let a = match args {
            Some(a) if slice_reads_args(class, a) => match read_args {
                Some((read, lenient)) => {
                    self.lenient_tokens += lenient;
                    read
                }
                None => {
                    parsed = parse_gpu_args(a, &mut self.lenient_tokens);
                    &parsed
                }
            },
            _ => &GpuArgs::NONE,
        };
        let lane = a.lane.unwrap_or(natural_lane);
        let track = if let Some(lane) = lane {
            let device = a
                .device
                .or(match pid {
                    TraceId::Int(v) => Some(v),
                    TraceId::Name(_) => None,
                })
                .unwrap_or(0);
            let stream = a.stream.or_else(|| self.stream_from_tid(tid)).unwrap_or(0);
            let key = TrackKey::Gpu {
                device: u32::try_from(device).unwrap_or(0),
                context: u32::try_from(a.context.unwrap_or(0)).unwrap_or(0),
                stream: u64::try_from(stream).unwrap_or(0),
                lane,
            };
            let track = self.track(key);
            self.thread_tracks.entry((pid, tid)).or_insert(track);
            track
        } else {
            self.thread_track(pid, tid)
        };
        let correlation = a.correlation.and_then(|c| u64::try_from(c).ok());
        let external_id = a.external_id.and_then(|c| u64::try_from(c).ok());
        match kind {
            EventKind::Kernel => {
                let mangled_name = a.mangled_name.as_deref().map(|m| self.b.intern(m));
                let process_group = a.process_group.as_deref().map(|g| self.b.intern(g));
                let info = KernelInfo {
                    grid: a.grid,
                    block: a.block,
                    registers_per_thread: a.registers.and_then(|v| u32::try_from(v).ok()),
                    static_shared_bytes: a.static_shared.and_then(|v| u64::try_from(v).ok()),
                    dynamic_shared_bytes: a.dynamic_shared.and_then(|v| u64::try_from(v).ok()),
                    shared_memory_bytes: a.shared_memory.and_then(|v| u64::try_from(v).ok()),
                    occupancy_pct: a.occupancy.map(|v| v as f32),
                    blocks_per_sm: a.blocks_per_sm.map(|v| v as f32),
                    warps_per_sm: a.warps_per_sm.map(|v| v as f32),
                    correlation,
                    external_id,
                    mangled_name,
                    process_group,
                    ..KernelInfo::default()
                };
                self.b.push_kernel(track, ts_ns, dur_ns, name, info, 0);
            }
            EventKind::Memcpy | EventKind::Memset | EventKind::UnifiedMemory
                if kind != EventKind::UnifiedMemory || a.copy_kind.is_some() =>
            {
                let (copy_kind, src_kind, dst_kind) = if let Some(k) = a.copy_kind {
                    (k, a.src_memory, a.dst_memory)
                } else if kind == EventKind::Memset {
                    (CopyKind::Memset, None, parse_memset_kind(name_text))
                } else {
                    parse_memcpy_name(name_text)
                };
                let info = CopyInfo {
                    kind: copy_kind,
                    bytes: a.bytes.and_then(|v| u64::try_from(v).ok()),
                    src_kind,
                    dst_kind,
                    correlation,
                    external_id,
                };
                self.b.push_copy(track, ts_ns, dur_ns, name, kind, info, 0);
            }
            _ if kind.is_api() => {
                let cbid = a.cbid.and_then(|v| u32::try_from(v).ok());
                let name = if name_text == "INVALID" || name_text.is_empty() {
                    let looked_up = cbid.and_then(|c| {
                        if kind == EventKind::Driver {
                            cupti_cbid::driver_api_name(c)
                        } else {
                            cupti_cbid::runtime_api_name(c)
                        }
                    });
                    match looked_up {
                        Some(n) => {
                            self.b.warn(
                                "invalid_api_name",
                                1,
                                "API calls named \"INVALID\" were named from their callback id (cbid)",
                            );
                            self.b.intern(n)
                        }
                        None => name,
                    }
                } else {
                    name
                };
                let info = ApiInfo {
                    correlation,
                    cbid,
                    external_id,
                };
                self.b.push_api(track, ts_ns, dur_ns, name, kind, info, 0);
            }
            EventKind::CpuOp => {
                let keep = op_args::keeps_concrete(name_text);
                match args.and_then(|a| op_args::find(a, keep)) {
                    Some(raw) => {
                        raw.key_into(&mut self.op_key);
                        let row = self.b.intern_op_args_text(&self.op_key, op_args::read_key);
                        self.b.push_op(track, ts_ns, dur_ns, name, row);
                    }
                    None => self.b.push(track, ts_ns, dur_ns, name, kind),
                }
            }
            _ => self.b.push(track, ts_ns, dur_ns, name, kind),
        }
        track
    }

    pub(super) fn stream_from_tid(&self, tid: TraceId) -> Option<i64> {
        match tid {
            TraceId::Int(v) => Some(v),
            TraceId::Name(s) => {
                let text = self.b.strings.get(s);
                let digits: String = text
                    .chars()
                    .rev()
                    .skip_while(|c| !c.is_ascii_digit())
                    .take_while(char::is_ascii_digit)
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect();
                digits.parse().ok()
            }
        }
    }

    pub(super) fn metadata(&mut self, ev: &RawEvent<'_>, pid: TraceId, tid: TraceId) {
        let Some(args) = ev.args else { return };
        let mut name: Option<String> = None;
        let mut sort_index: Option<i64> = None;
        let mut labels: Option<String> = None;
        let mut p = Parser::new(args);
        let _ = p.object(|p, k| {
            match (k, p.value()?) {
                (b"name", Value::Str(s)) => name = Some(s.trim().to_string()),
                (b"labels", Value::Str(s)) => labels = Some(s.trim().to_string()),
                (b"sort_index", Value::Num(n)) => sort_index = json::int_from_text(n),
                _ => {}
            }
            Ok(())
        });
        match ev.name.as_deref() {
            Some("process_name") => {
                if let Some(n) = name {
                    self.set_process_name(pid, n, true);
                }
            }
            Some("process_labels") => {
                if let Some(l) = labels {
                    self.process_labels.insert(pid, l);
                }
            }
            Some("thread_name") => {
                if let Some(n) = name {
                    let names = self.thread_names.entry((pid, tid)).or_default();
                    if names.seen.insert(n.clone()) {
                        names.list.push(n);
                    }
                }
            }
            Some("thread_sort_index") => {
                if let Some(s) = sort_index {
                    self.thread_sort.insert((pid, tid), s);
                }
            }
            _ => {}
        }
    }

    /// Names process `pid` (`replace`: a name it already has is replaced), through the index
    /// that keeps this a lookup however many processes there are.
    pub(super) fn set_process_name(&mut self, pid: TraceId, name: String, replace: bool) {
        match self.process_index.get(&pid) {
            Some(&i) => {
                if replace && let Some(entry) = self.b.process_names.get_mut(i) {
                    entry.1 = name;
                }
            }
            None => {
                self.process_index.insert(pid, self.b.process_names.len());
                self.b.process_names.push((pid, name));
            }
        }
    }

    pub(super) fn counter(
        &mut self,
        pid: TraceId,
        name: &str,
        id: Option<&RawId<'_>>,
        ts_ns: i64,
        args: Option<&[u8]>,
    ) {
        let Some(args) = args else { return };
        let mut series: Vec<(String, f64)> = Vec::new();
        let mut p = Parser::new(args);
        let _ = p.object(|p, k| {
            match p.value()? {
                Value::Num(n) => {
                    if let Some(v) = json::float_from_text(n) {
                        series.push((String::from_utf8_lossy(k).into_owned(), v));
                    }
                }
                Value::Str(s) => {
                    if let Ok(v) = s.trim().parse::<f64>() {
                        series.push((String::from_utf8_lossy(k).into_owned(), v));
                    }
                }
                _ => {}
            }
            Ok(())
        });
        let base = match id {
            Some(RawId::Int(v)) => format!("{name} {v}"),
            Some(RawId::Str(s)) => format!("{name} {s}"),
            None => name.to_string(),
        };
        let single = series.len() == 1;
        for (key, value) in series {
            let full = if single && (key == "value" || key == name) {
                base.clone()
            } else {
                format!("{base} {key}")
            };
            let index = match self.counters.get(&(pid, full.clone())) {
                Some(&i) => i,
                None => {
                    self.b.counters.push(CounterTrack {
                        pid,
                        name: full.clone(),
                        time_ns: Vec::new(),
                        value: Vec::new(),
                    });
                    let i = self.b.counters.len() - 1;
                    self.counters.insert((pid, full), i);
                    i
                }
            };
            self.b.counters[index].time_ns.push(ts_ns);
            self.b.counters[index].value.push(value);
        }
    }

    pub(super) fn flow(&mut self, ev: &RawEvent<'_>, pid: TraceId, tid: TraceId, ts_ns: i64) {
        let Some(id) = ev.id.as_ref().and_then(|i| self.flow_id(i)) else {
            self.b.warn(
                "flow_without_id",
                1,
                "flow events without an `id` were skipped",
            );
            return;
        };
        let cat_text = ev.cat.as_deref().unwrap_or("");
        let kind = match classify(cat_text) {
            Class::LaunchFlow => FlowKind::Launch,
            _ if cat_text == "fwdbwd" => FlowKind::ForwardBackward,
            _ => FlowKind::Other,
        };
        let cat = if kind == FlowKind::Launch {
            self.unsorted_cat
        } else {
            self.b.intern(cat_text)
        };
        let thread = self.flow_threads.id(pid, tid);
        self.flow_points.push(FlowPoint {
            key: (cat, id),
            ts_ns,
            thread,
            ph: ev.ph,
            enclosing: ev.ph == b't' || ev.bp_enclosing,
            kind,
        });
    }

    pub(super) fn async_event(
        &mut self,
        ev: &RawEvent<'_>,
        pid: TraceId,
        ts_ns: i64,
        name_text: &str,
    ) {
        let id = ev.id.as_ref().and_then(|i| self.flow_id(i)).unwrap_or(0);
        let cat = self.b.intern(ev.cat.as_deref().unwrap_or(""));
        let name = self.b.intern(name_text);
        match ev.ph {
            b'b' => self
                .open_async
                .entry((pid, cat, id))
                .or_default()
                .push((ts_ns, name)),
            b'e' => {
                let open = self.open_async.get_mut(&(pid, cat, id)).and_then(Vec::pop);
                match open {
                    Some((start, begin_name)) => {
                        let track = self.track(TrackKey::Async {
                            pid,
                            name: begin_name,
                        });
                        let dur_ns = self.span(start, ts_ns);
                        self.b
                            .push(track, start, dur_ns, begin_name, EventKind::Slice);
                    }
                    None => self.b.warn(
                        "unmatched_async_end",
                        1,
                        "async end (`e`) events without a matching begin were skipped",
                    ),
                }
            }
            _ => {
                let track = self.track(TrackKey::Async { pid, name });
                self.b.push(track, ts_ns, 0, name, EventKind::Instant);
            }
        }
    }
}

/// The args of a `B` and its `E` merged into one object (the end's keys win).
pub(super) fn merge_args(begin: Option<&[u8]>, end: Option<&[u8]>) -> Option<Vec<u8>> {
    match (begin, end) {
        (Some(b), Some(e)) if b.len() >= 2 && e.len() >= 2 => {
            let mut m = b[..b.len() - 1].to_vec();
            m.push(b',');
            m.extend_from_slice(&e[1..]);
            Some(m)
        }
        (Some(b), _) => Some(b.to_vec()),
        (None, e) => e.map(<[u8]>::to_vec),
    }
}

/// True when a slice of `class` with these args reads them: args matter for GPU work and API
/// calls, and for events that say where they go.
fn slice_reads_args(class: Class, args: &[u8]) -> bool {
    kind_reads_args(class.slice_kind()) || lane_finder().find(args).is_some()
}

/// The search for [`LANE_ARG_KEY`], built once (building it costs more than searching a
/// typical event's args).
fn lane_finder() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(LANE_ARG_KEY));
    &FINDER
}
