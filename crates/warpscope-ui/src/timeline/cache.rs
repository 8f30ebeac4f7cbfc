//! What the timeline derives once per profile: lanes, per-depth event indices with their
//! end-time buckets (so folding a zoomed-out level costs a lookup per box, not a binary search
//! over millions of events), flow lookups, the colours of kernel names, the utilisation lanes'
//! index, the run's span and the occurrences of the highlighted name.

use egui::Color32;
use warpscope_core::analysis::insight::{AnalyzeOptions, device_activity};
use warpscope_core::analysis::memory::{Attribution, MemoryCurve, attribute};
use warpscope_core::analysis::range_index::{ActivityCover, TimeBuckets};
use warpscope_core::model::MemoryDevice;
use warpscope_core::model::{EventKind, EventRef, Events};
use warpscope_core::{Profile, StrId};

use super::layout::{self, Group};
use super::paint::{self, Level};
use crate::ProfileKey;

/// Levels with fewer events are searched without buckets.
const BUCKETED_LEVEL: usize = 512;
/// Events per end-time bucket of a level (when spread evenly).
const EVENTS_PER_BUCKET: usize = 8;

/// Data derived once per profile.
pub(super) struct ProfileCache {
    /// Address and event count of the profile it was built for.
    pub key: ProfileKey,
    pub groups: Vec<Group>,
    /// Per track, per depth level, the indices of that level's events (empty for tracks with a
    /// single level, whose events are all on depth 0).
    levels: Vec<Vec<Vec<u32>>>,
    /// Per track, per depth level (one for single-level tracks), buckets over the level's
    /// event ends (empty buckets for small levels).
    level_ends: Vec<Vec<TimeBuckets>>,
    /// Colour of each string as a kernel name, for the names of kernels (transparent for the
    /// others).
    kernel_colors: Vec<Color32>,
    /// Flow indices sorted by their `from` event, and by their `to` event.
    flows_from: Vec<u32>,
    flows_to: Vec<u32>,
    pub span_ns: Option<(i64, i64)>,
    /// Name whose occurrences are listed, and per track the indices of its events.
    pub occurrences: Option<(StrId, Vec<Vec<u32>>)>,
    /// Busy time and idle causes per device, for the utilisation lanes, by device.
    pub activity: Vec<ActivityCover>,
    /// Allocated and reserved memory per device, for the memory lanes.
    pub memory: Vec<MemoryCurve>,
    /// The operator of every memory record, for the memory lanes' tooltips.
    pub memory_ops: Attribution,
}

impl ProfileCache {
    pub fn build(profile: &Profile) -> Self {
        let levels: Vec<Vec<Vec<u32>>> = profile
            .tracks
            .iter()
            .map(|t| {
                if t.max_depth <= 1 {
                    return Vec::new();
                }
                let mut lv = vec![Vec::new(); usize::from(t.max_depth)];
                for (i, &d) in t.events.depth.iter().enumerate() {
                    if let Some(l) = lv.get_mut(usize::from(d)) {
                        l.push(u32::try_from(i).unwrap_or(u32::MAX));
                    }
                }
                lv
            })
            .collect();
        let level_ends = profile
            .tracks
            .iter()
            .zip(&levels)
            .map(|(t, lv)| {
                let ev = &t.events;
                if lv.is_empty() {
                    vec![end_buckets(ev, None)]
                } else {
                    lv.iter().map(|ix| end_buckets(ev, Some(ix))).collect()
                }
            })
            .collect();
        let mut kernel_colors = vec![Color32::TRANSPARENT; profile.strings.len()];
        for t in profile.tracks.iter().filter(|t| t.key.is_gpu()) {
            let ev = &t.events;
            for (&kind, &name) in ev.kind.iter().zip(&ev.name) {
                if kind == EventKind::Kernel
                    && let Some(c) = kernel_colors.get_mut(name.0 as usize)
                    && *c == Color32::TRANSPARENT
                {
                    *c = crate::colors::kernel_color(profile.str(name));
                }
            }
        }
        let n = u32::try_from(profile.flows.len()).unwrap_or(u32::MAX);
        let mut flows_from: Vec<u32> = (0..n).collect();
        flows_from.sort_unstable_by_key(|&f| profile.flows[f as usize].from);
        let mut flows_to: Vec<u32> = (0..n).collect();
        flows_to.sort_unstable_by_key(|&f| profile.flows[f as usize].to);
        Self {
            key: ProfileKey::of(profile),
            groups: layout::build_groups(profile),
            levels,
            level_ends,
            kernel_colors,
            flows_from,
            flows_to,
            span_ns: span_with_memory(profile),
            occurrences: None,
            activity: device_activity(profile, &AnalyzeOptions::default())
                .iter()
                .map(ActivityCover::new)
                .collect(),
            memory: MemoryCurve::all(profile),
            memory_ops: attribute(profile),
        }
    }

    /// The memory curve of `device`, if it has records.
    pub fn memory_of(&self, device: MemoryDevice) -> Option<&MemoryCurve> {
        self.memory.iter().find(|c| c.device == device)
    }

    pub fn level<'a>(&'a self, profile: &'a Profile, track: usize, depth: u16) -> Level<'a> {
        let events = &profile.tracks[track].events;
        let lv = &self.levels[track];
        let d = usize::from(depth);
        let ends = self.level_ends[track].get(if lv.is_empty() { 0 } else { d });
        Level {
            events,
            indices: if lv.is_empty() {
                None
            } else {
                Some(lv.get(d).map_or(&[][..], Vec::as_slice))
            },
            ends: ends.filter(|b| b.has_buckets()),
        }
    }

    /// Colour of event `i` of `events` ([`paint::event_color`], kernels' from the table).
    pub fn event_color(
        &self,
        profile: &Profile,
        events: &Events,
        kind: EventKind,
        i: usize,
    ) -> Color32 {
        if kind == EventKind::Kernel
            && let Some(&c) = self.kernel_colors.get(events.name[i].0 as usize)
            && c != Color32::TRANSPARENT
        {
            return c;
        }
        paint::event_color(profile, events, kind, i)
    }

    /// The busy time and idle causes of `device` (the list is sorted by device).
    pub fn activity_of(&self, device: u32) -> Option<&ActivityCover> {
        self.activity
            .binary_search_by_key(&device, |a| a.device)
            .ok()
            .map(|k| &self.activity[k])
    }

    /// Per track, the indices of the events named `name` (computed once per name).
    pub fn occurrences(&mut self, profile: &Profile, name: StrId) -> &[Vec<u32>] {
        if self.occurrences.as_ref().is_none_or(|(n, _)| *n != name) {
            let lists = profile
                .tracks
                .iter()
                .map(|t| {
                    t.events
                        .name
                        .iter()
                        .enumerate()
                        .filter(|(_, n)| **n == name)
                        .map(|(i, _)| u32::try_from(i).unwrap_or(u32::MAX))
                        .collect()
                })
                .collect();
            self.occurrences = Some((name, lists));
        }
        self.occurrences.as_ref().map_or(&[], |(_, l)| l.as_slice())
    }

    /// The flows that start or end at `ev`.
    pub fn flows_of(&self, profile: &Profile, ev: EventRef) -> Vec<usize> {
        let mut out = Vec::new();
        let f = &profile.flows;
        let a = self
            .flows_from
            .partition_point(|&i| f[i as usize].from < ev);
        out.extend(
            self.flows_from[a..]
                .iter()
                .take_while(|&&i| f[i as usize].from == ev)
                .map(|&i| i as usize),
        );
        let b = self.flows_to.partition_point(|&i| f[i as usize].to < ev);
        out.extend(
            self.flows_to[b..]
                .iter()
                .take_while(|&&i| f[i as usize].to == ev)
                .map(|&i| i as usize),
        );
        out
    }
}

/// Buckets over the ends of a level's events (all of `events`, or those at `indices`); none
/// for small levels.
fn end_buckets(events: &Events, indices: Option<&Vec<u32>>) -> TimeBuckets {
    match indices {
        None if events.len() >= BUCKETED_LEVEL => {
            TimeBuckets::new(events.len(), EVENTS_PER_BUCKET, |k| events.end_ns(k))
        }
        Some(ix) if ix.len() >= BUCKETED_LEVEL => {
            TimeBuckets::new(ix.len(), EVENTS_PER_BUCKET, |k| {
                events.end_ns(ix[k] as usize)
            })
        }
        _ => TimeBuckets::default(),
    }
}

/// The run's span, widened to take in the memory records (an allocator snapshot has few other
/// events).
fn span_with_memory(profile: &Profile) -> Option<(i64, i64)> {
    let t = &profile.memory.events.time_ns;
    let memory = t.first().zip(t.last()).map(|(&a, &b)| (a, b));
    match (profile.span_ns(), memory) {
        (Some((a, b)), Some((c, d))) => Some((a.min(c), b.max(d))),
        (span, None) => span,
        (None, memory) => memory,
    }
}
