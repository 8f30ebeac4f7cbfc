//! After the last event: flows matched, TensorFlow layout, track names, devices, warnings.

use rustc_hash::{FxHashMap, FxHashSet};

/// Unknown categories warned about one by one; the rest share one warning.
const MAX_CATEGORY_WARNINGS: usize = 32;

use super::ChromeState;
use super::metadata::Carried;
use crate::builder::{PendingFlow, TrackId};
use crate::import::ImportError;
use crate::model::{
    CopyInfo, CopyKind, Device, EventKind, FlowKind, GpuLane, MemorySource, NO_DETAIL, Profile,
    TraceId, TrackKey,
};
use crate::strings::StrId;

impl ChromeState {
    pub(super) fn finish(mut self) -> Result<Profile, ImportError> {
        if self.events_read == 0 && self.b.event_count() == 0 && self.b.counters.is_empty() {
            self.b.warn("no_events", 1, "the trace contains no events");
        }
        // Close begins that never ended at the end of the trace (a scan of every event, made
        // only when there are some).
        let trace_end = if self.open_begins.values().all(Vec::is_empty) {
            None
        } else {
            self.b
                .tracks()
                .iter()
                .flat_map(|t| (0..t.events.len()).map(move |i| t.events.end_ns(i)))
                .max()
        };
        let mut unclosed = 0u64;
        let mut opens: Vec<_> = std::mem::take(&mut self.open_begins).into_iter().collect();
        opens.sort_by_key(|(k, _)| *k);
        for ((pid, tid), stack) in opens {
            for open in stack {
                unclosed += 1;
                let end = trace_end.unwrap_or(open.ts_ns).max(open.ts_ns);
                let name = self.b.strings.get(open.name).to_string();
                let dur_ns = self.span(open.ts_ns, end);
                self.slice(
                    open.class,
                    pid,
                    tid,
                    open.ts_ns,
                    dur_ns,
                    &name,
                    open.args.as_deref(),
                    None,
                );
            }
        }
        if unclosed > 0 {
            self.b.warn(
                "unclosed_begin",
                unclosed,
                "begin (`B`) events without an end were extended to the end of the trace",
            );
        }
        let unclosed_async: u64 = self.open_async.values().map(|v| v.len() as u64).sum();
        if unclosed_async > 0 {
            self.b.warn(
                "unclosed_async",
                unclosed_async,
                "async begin (`b`) events without an end were skipped",
            );
        }
        let launches_linked = self.launches_have_correlations();
        self.match_flow_points(launches_linked);
        self.apply_tensorflow_layout();
        self.name_tracks();
        self.bind_flows(launches_linked);
        self.renumber_amd_devices();
        self.fill_devices();
        self.mark_amd_devices();
        self.report_counts();
        self.describe_tool();
        let carried = self.carried.take();
        if let Some(c) = &carried {
            self.apply_carried(c);
        }
        // Time base: Kineto 2024+ writes times relative to baseTimeNanoseconds; older traces use
        // Unix-epoch microseconds.
        self.b.unix_offset_ns = match self.base_time_ns {
            Some(base) => Some(base),
            None => {
                let earliest = self
                    .b
                    .tracks()
                    .iter()
                    .filter_map(|t| t.events.start_ns.iter().min().copied())
                    .min();
                earliest.filter(|&t| t > 946_684_800_000_000_000).map(|_| 0)
            }
        };
        if self.b.memory_record_count() > 0 {
            self.b.memory.source = MemorySource::KinetoEvents;
        }
        let mut profile = self.b.finish();
        if let Some(c) = carried {
            if let Some(origin) = c.origin {
                profile.origin = origin;
            }
            // The original import's warnings come first, as they were; one the re-import raised
            // again under the same code is not counted twice.
            let own = std::mem::replace(&mut profile.warnings, c.warnings);
            let carried: FxHashSet<String> =
                profile.warnings.iter().map(|w| w.code.clone()).collect();
            profile
                .warnings
                .extend(own.into_iter().filter(|w| !carried.contains(&w.code)));
        }
        Ok(profile)
    }

    /// Restores what a trace written by warpscope says about the profile it came from.
    pub(super) fn apply_carried(&mut self, c: &Carried) {
        let source = &mut self.b.source;
        if let Some(tool) = &c.tool {
            source.tool.clone_from(tool);
        }
        source.tool_version.clone_from(&c.tool_version);
        source.schema_version.clone_from(&c.schema_version);
        source.details.clone_from(&c.details);
        for (key, value) in [("original path", &c.path), ("original format", &c.format)] {
            if let Some(v) = value
                && !source.details.iter().any(|(k, _)| k == key)
            {
                source.details.push((key.to_string(), v.clone()));
            }
        }
        self.b.labels.clone_from(&c.labels);
        for (key, name, sort_index) in &c.tracks {
            if let Some(id) = self.b.find_track(key) {
                let t = self.b.track_mut(id);
                t.name.clone_from(name);
                t.sort_index = *sort_index;
            }
        }
        if c.origin.is_some() {
            // Event times are relative to the carried origin.
            self.b.origin_raw_ns = Some(0);
        }
    }

    /// TensorFlow 1.x timelines put every device event twice: on its `/stream:N` pid and on
    /// `stream:all` (kernels) or `memcpy` (copies). Keep the per-stream copies as GPU tracks,
    /// classify them by their twin, and drop the twins.
    pub(super) fn apply_tensorflow_layout(&mut self) {
        #[derive(Clone, Copy, PartialEq)]
        enum Role {
            Stream(u32, u64),
            All(u32),
            Memcpy(u32),
        }
        let mut roles: FxHashMap<TraceId, Role> = FxHashMap::default();
        for (pid, name) in &self.b.process_names {
            let Some(rest) = name.split("/device:GPU:").nth(1) else {
                continue;
            };
            let Some(rest) = rest.strip_suffix(" Compute") else {
                continue;
            };
            let mut parts = rest.splitn(2, '/');
            let Some(device) = parts.next().and_then(|d| d.parse::<u32>().ok()) else {
                continue;
            };
            match parts.next() {
                Some("stream:all") => {
                    roles.insert(*pid, Role::All(device));
                }
                Some("memcpy") => {
                    roles.insert(*pid, Role::Memcpy(device));
                }
                Some(s) => {
                    if let Some(stream) = s
                        .strip_prefix("stream:")
                        .and_then(|n| n.parse::<u64>().ok())
                    {
                        roles.insert(*pid, Role::Stream(device, stream));
                    }
                }
                None => {}
            }
        }
        if !roles.values().any(|r| matches!(r, Role::Stream(..))) {
            if self
                .b
                .process_names
                .iter()
                .any(|(_, n)| n.contains("/device:GPU:"))
            {
                self.b.source.tool = "TensorFlow 1.x timeline".to_string();
                self.b.warn(
                    "tf_no_streams",
                    1,
                    "this TensorFlow timeline has no per-stream GPU lanes (recorded without device \
                     tracing); GPU ops appear only as launches on the device's op track",
                );
            }
            return;
        }
        self.b.source.tool = "TensorFlow 1.x timeline".to_string();
        // Events on the twin pids, by (device, start, duration, name).
        let mut twins: FxHashMap<(u32, i64, i64, StrId), EventKind> = FxHashMap::default();
        for t in self.b.tracks() {
            let TrackKey::Thread { pid, .. } = t.key else {
                continue;
            };
            let (device, kind) = match roles.get(&pid) {
                Some(Role::All(d)) => (*d, EventKind::Kernel),
                Some(Role::Memcpy(d)) => (*d, EventKind::Memcpy),
                _ => continue,
            };
            let ev = &t.events;
            for i in 0..ev.len() {
                twins.insert((device, ev.start_ns[i], ev.dur_ns[i], ev.name[i]), kind);
            }
        }
        let mut unmatched = 0u64;
        let stream_tracks: Vec<(TrackId, u32, u64)> = self
            .b
            .tracks()
            .iter()
            .enumerate()
            .filter_map(|(i, t)| match t.key {
                TrackKey::Thread { pid, .. } => match roles.get(&pid) {
                    Some(Role::Stream(d, s)) => {
                        Some((TrackId(u32::try_from(i).unwrap_or(0)), *d, *s))
                    }
                    _ => None,
                },
                _ => None,
            })
            .collect();
        for &(track_id, device, _) in &stream_tracks {
            let n = self.b.tracks()[track_id.0 as usize].events.len();
            for i in 0..n {
                let (start, dur, name, kind) = {
                    let ev = &self.b.tracks()[track_id.0 as usize].events;
                    (ev.start_ns[i], ev.dur_ns[i], ev.name[i], ev.kind[i])
                };
                if kind == EventKind::Instant {
                    continue;
                }
                let twin = twins.get(&(device, start, dur, name)).copied();
                let new_kind = twin.unwrap_or_else(|| {
                    unmatched += 1;
                    EventKind::Kernel
                });
                let detail = if new_kind == EventKind::Memcpy {
                    let text = self.b.strings.get(name);
                    let kind = text
                        .strip_prefix("MEMCPY")
                        .and_then(CopyKind::from_short)
                        .unwrap_or(CopyKind::Unknown);
                    self.b.copies.push(CopyInfo {
                        kind,
                        bytes: None,
                        src_kind: None,
                        dst_kind: None,
                        correlation: None,
                        external_id: None,
                    });
                    u32::try_from(self.b.copies.len() - 1).unwrap_or(NO_DETAIL)
                } else {
                    NO_DETAIL
                };
                let ev = &mut self.b.track_mut(track_id).events;
                ev.kind[i] = new_kind;
                ev.detail[i] = detail;
            }
        }
        if unmatched > 0 {
            self.b.warn(
                "tf_unmatched",
                unmatched,
                "TensorFlow stream events without a twin on stream:all or memcpy were counted as kernels",
            );
        }
        for &(track_id, device, stream) in &stream_tracks {
            self.b.rekey_track(
                track_id,
                TrackKey::Gpu {
                    device,
                    context: 0,
                    stream,
                    lane: GpuLane::Work,
                },
            );
        }
        // Drop the twins, and tracks emptied by merging several tids of one stream pid.
        self.b.remove_tracks(|t| match t.key {
            TrackKey::Thread { pid, .. } => {
                t.events.is_empty()
                    || matches!(roles.get(&pid), Some(Role::All(_) | Role::Memcpy(_)))
            }
            _ => t.events.is_empty(),
        });
        self.thread_tracks.clear();
        self.last_track = None;
    }

    pub(super) fn name_tracks(&mut self) {
        let n = self.b.tracks().len();
        for i in 0..n {
            let key = self.b.tracks()[i].key;
            let (name, sort) = match key {
                TrackKey::Gpu { stream, lane, .. } => {
                    let base = format!("stream {stream}");
                    let name = match lane {
                        GpuLane::Work => base,
                        GpuLane::Annotations => format!("{base} annotations"),
                        GpuLane::UnifiedMemory => "unified memory".to_string(),
                    };
                    (name, None)
                }
                TrackKey::Thread { pid, tid } => {
                    let name = match self.thread_names.get(&(pid, tid)) {
                        Some(names) if !names.list.is_empty() => names.joined(),
                        _ => format!("thread {}", self.id_text(tid)),
                    };
                    (name, self.thread_sort.get(&(pid, tid)).copied())
                }
                TrackKey::Async { name, .. } => (self.b.strings.get(name).to_string(), None),
            };
            let t = self.b.track_mut(TrackId(u32::try_from(i).unwrap_or(0)));
            t.name = name;
            t.sort_index = sort;
        }
        for (pid, labels) in std::mem::take(&mut self.process_labels) {
            self.set_process_name(pid, labels, false);
        }
    }

    pub(super) fn id_text(&self, id: TraceId) -> String {
        match id {
            TraceId::Int(v) => v.to_string(),
            TraceId::Name(s) => self.b.strings.get(s).to_string(),
        }
    }

    /// True when kernels carry correlation ids, which link launches to kernels exactly; the
    /// launch arrows (`ac2g` flows) would then only repeat those links.
    fn launches_have_correlations(&self) -> bool {
        self.b.kernels.has_correlations()
    }

    pub(super) fn bind_flows(&mut self, launches_linked: bool) {
        let mut thread_tracks = std::mem::take(&mut self.thread_tracks);
        if thread_tracks.is_empty() {
            for (i, t) in self.b.tracks().iter().enumerate() {
                if let TrackKey::Thread { pid, tid } = t.key {
                    thread_tracks.insert((pid, tid), TrackId(u32::try_from(i).unwrap_or(0)));
                }
            }
        }
        // The track of each thread flow points were read on, looked up once per thread.
        let track_of: Vec<Option<TrackId>> = self
            .flow_threads
            .list
            .iter()
            .map(|key| thread_tracks.get(key).copied())
            .collect();
        let track = |thread: u32| {
            debug_assert!((thread as usize) < track_of.len(), "a flow thread numbered");
            track_of.get(thread as usize).copied().flatten()
        };
        for f in std::mem::take(&mut self.raw_flows).into_iter().flatten() {
            if f.kind == FlowKind::Launch && launches_linked {
                // Correlation ids already link every launch; the arrows would duplicate them.
                continue;
            }
            let (Some(from_track), Some(to_track)) = (track(f.from.0), track(f.to.0)) else {
                continue;
            };
            self.b.pending_flows.push(PendingFlow {
                from_track,
                from_ns: f.from.1,
                to_track,
                to_ns: f.to.1,
                to_enclosing: f.to_enclosing,
                kind: f.kind,
            });
        }
    }

    pub(super) fn fill_devices(&mut self) {
        for id in self.b.undescribed_gpu_ids() {
            let label = self
                .process_label_of_device(id)
                .unwrap_or_else(|| format!("GPU {id}"));
            self.b.devices.push(Device {
                id,
                name: label,
                ..Device::default()
            });
        }
    }

    pub(super) fn process_label_of_device(&self, id: u32) -> Option<String> {
        let pid = TraceId::Int(i64::from(id));
        let &i = self.process_index.get(&pid)?;
        let (_, name) = self.b.process_names.get(i)?;
        name.starts_with("GPU").then(|| name.clone())
    }

    pub(super) fn report_counts(&mut self) {
        if self.stream.oversized > 0 {
            self.b.warn(
                "oversized_event",
                self.stream.oversized,
                "events of more than 64 MiB were skipped",
            );
        }
        if self.stream.non_objects > 0 {
            self.b.warn(
                "non_object_event",
                self.stream.non_objects,
                "elements of traceEvents that are not objects were skipped",
            );
        }
        if let Some((place, detail)) = self.stream.first_bad_syntax {
            let line = self.line(place);
            self.b.warn(
                "bad_event_syntax",
                self.stream.bad_syntax,
                format!("events with broken JSON were skipped (first at line {line}: {detail})"),
            );
        }
        if self.lenient_tokens > 0 {
            self.b.warn(
                "lenient_tokens",
                self.lenient_tokens,
                "invalid JSON tokens (N/A, NaN, Infinity) were read as null",
            );
        }
        if self.control_strings > 0 {
            self.b.warn(
                "control_characters",
                self.control_strings,
                "strings with raw control characters (invalid JSON) were kept as they are",
            );
        }
        if self.repaired_strings > 0 {
            self.b.warn(
                "invalid_utf8",
                self.repaired_strings,
                "strings with invalid UTF-8 were repaired (bad bytes shown as �)",
            );
        }
        let is_kineto = self.is_kineto;
        let mut unknown: Vec<_> = std::mem::take(&mut self.unknown_categories)
            .into_iter()
            .collect();
        unknown.sort();
        if is_kineto {
            // One warning per category, for the first few: a file with thousands of made-up
            // categories gets one more warning that counts the rest.
            let more = unknown.len().saturating_sub(MAX_CATEGORY_WARNINGS);
            let rest: u64 = unknown[MAX_CATEGORY_WARNINGS.min(unknown.len())..]
                .iter()
                .map(|(_, n)| n)
                .sum();
            for (cat, n) in unknown.into_iter().take(MAX_CATEGORY_WARNINGS) {
                let cat = crate::import::shown(&cat, 80);
                self.b.warn(
                    &format!("unknown_category:{cat}"),
                    n,
                    format!("events of unknown category {cat:?} are shown as plain slices"),
                );
            }
            self.b.warn(
                "unknown_categories_more",
                rest,
                format!("events of {more} more unknown categories are shown as plain slices"),
            );
        }
        let mut ignored: Vec<_> = std::mem::take(&mut self.ignored_phases)
            .into_iter()
            .collect();
        ignored.sort_unstable();
        for (ph, n) in ignored {
            let what = match ph {
                b'N' | b'O' | b'D' => "object events",
                b'P' => "sample events",
                b'S' | b'T' | b'p' | b'F' => "legacy async events",
                b'c' | b'(' | b')' | b'V' | b'v' => "clock-sync, context and memory-dump events",
                _ => "events of an unknown phase",
            };
            self.b.warn(
                &format!("ignored_phase:{}", char::from(ph)),
                n,
                format!("{what} (ph {:?}) are not shown", char::from(ph)),
            );
        }
    }

    /// The versions the trace's details hold among `keys`, each after its label, joined:
    /// `CUDA runtime 13000, CUPTI 130001`; `None` when it holds none of them.
    pub(super) fn versions(&self, keys: &[(&str, &str)]) -> Option<String> {
        let parts: Vec<String> = keys
            .iter()
            .filter_map(|(key, label)| {
                let (_, v) = self.b.source.details.iter().find(|(k, _)| k == key)?;
                Some(format!("{label} {v}"))
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join(", "))
    }

    pub(super) fn describe_tool(&mut self) {
        if self.is_kineto {
            self.b.source.tool = "PyTorch profiler (Kineto)".to_string();
            let cuda = self.versions(&[
                ("cuda_runtime_version", "CUDA runtime"),
                ("cupti_version", "CUPTI"),
            ]);
            if cuda.is_some() {
                self.b.source.tool_version = cuda;
            }
            if let Some(rocm) = self.rocm_tool_version() {
                self.b.source.tool = "PyTorch profiler (Kineto, ROCm)".to_string();
                self.b.source.tool_version = Some(rocm);
            }
        } else if self.b.source.tool == "Chrome trace" {
            let has_gpu = self.b.tracks().iter().any(|t| t.key.is_gpu());
            if has_gpu {
                self.b.source.tool = "Chrome trace (GPU events)".to_string();
            }
        }
    }
}
