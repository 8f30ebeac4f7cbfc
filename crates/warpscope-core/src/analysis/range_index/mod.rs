//! Indexes that answer time-range questions without scanning the events, so that a range dragged
//! on the timeline costs the same on a profile of millions of events as on a small one:
//!
//! - [`ActivityIndex`]: the GPU-activities table, the GPU time and the busy time of each device
//!   over any range, with exactly the numbers of [`super::gpu_activities`],
//!   [`super::gpu_total_ns`] and [`super::gpu_busy_ns`] (events straddling the range's edges are
//!   clipped the same way). Per row: the row's events sorted by start, prefix sums of their
//!   durations (count and total are two binary searches and a subtraction), a wavelet matrix of
//!   their durations (min, max and median of the events inside the range), and a tree of their
//!   ends (the few events that straddle an edge, whose clipped durations replace their own).
//! - [`CoverIndex`] and [`ActivityCover`]: covered time of sorted intervals over any span with a
//!   bucket lookup instead of a binary search over the whole array (the utilisation lanes).

mod cover;
mod wavelet;

#[cfg(test)]
mod tests;

pub use cover::{ActivityCover, CoverIndex, TimeBuckets, span_between};
pub use wavelet::WaveletMatrix;

use rustc_hash::FxHashMap;

use super::{ActivityKey, ActivityKind, ActivityRow, Stats, is_recorded_only, rank};
use crate::model::{Profile, TrackKey};
use crate::time::TimeRange;

/// Events per leaf of [`EndTree`].
const LEAF: usize = 16;

/// The maximum end of every block of [`LEAF`] positions, in a binary tree, so that the positions
/// of a range whose event ends after a time are listed in `O((hits + 1) log n)`.
#[derive(Clone, Debug, Default)]
struct EndTree {
    /// Leaves start at `leaves`; node `i` has children `2i` and `2i + 1`.
    max_end: Vec<i64>,
    leaves: usize,
}

impl EndTree {
    fn new(end_ns: impl Fn(usize) -> i64, len: usize) -> Self {
        let blocks = len.div_ceil(LEAF).max(1);
        let leaves = blocks.next_power_of_two();
        let mut max_end = vec![i64::MIN; 2 * leaves];
        for p in 0..len {
            let leaf = &mut max_end[leaves + p / LEAF];
            *leaf = (*leaf).max(end_ns(p));
        }
        for i in (1..leaves).rev() {
            max_end[i] = max_end[2 * i].max(max_end[2 * i + 1]);
        }
        Self { max_end, leaves }
    }

    /// Appends to `out`, in order, the positions in `lo..hi` whose end is after `t_ns`.
    fn ends_after(
        &self,
        end_ns: &impl Fn(usize) -> i64,
        lo: usize,
        hi: usize,
        t_ns: i64,
        out: &mut Vec<usize>,
    ) {
        if lo >= hi {
            return;
        }
        self.visit(end_ns, 1, 0, self.leaves, (lo, hi), t_ns, out);
    }

    /// Node `node` covers blocks `first..last`.
    #[allow(clippy::too_many_arguments)]
    fn visit(
        &self,
        end_ns: &impl Fn(usize) -> i64,
        node: usize,
        first: usize,
        last: usize,
        (lo, hi): (usize, usize),
        t_ns: i64,
        out: &mut Vec<usize>,
    ) {
        if self.max_end[node] <= t_ns || last * LEAF <= lo || first * LEAF >= hi {
            return;
        }
        if last - first == 1 {
            for p in (first * LEAF).max(lo)..(last * LEAF).min(hi) {
                if end_ns(p) > t_ns {
                    out.push(p);
                }
            }
            return;
        }
        let mid = first + (last - first) / 2;
        self.visit(end_ns, 2 * node, first, mid, (lo, hi), t_ns, out);
        self.visit(end_ns, 2 * node + 1, mid, last, (lo, hi), t_ns, out);
    }
}

/// One row of the GPU-activities table: what it counts and where its events lie in the index.
#[derive(Clone, Debug)]
struct Group {
    name: String,
    kind: ActivityKind,
    /// Positions `first..end` of the index arrays, sorted by start.
    first: usize,
    end: usize,
    /// The summed duration of all the row's events fits in an `i64`, so prefix-sum differences
    /// are exact.
    sums_fit: bool,
}

/// Scratch space of one query.
#[derive(Default)]
struct Scratch {
    left: Vec<usize>,
    right: Vec<usize>,
    clipped: Vec<i64>,
    pieces: Vec<(usize, usize)>,
    pieces_work: Vec<(usize, usize)>,
}

/// The GPU-activities table, GPU time and busy time of each device over any time range, from
/// prefix sums and order statistics instead of a scan of the events (see the module's docs).
/// Built once per profile; the answers are those of the scans in [`super`].
#[derive(Clone, Debug, Default)]
pub struct ActivityIndex {
    /// False when the scans answer: a profile made of an nvprof summary's recorded rows, or one
    /// too large for 32-bit positions.
    indexed: bool,
    groups: Vec<Group>,
    start_ns: Vec<i64>,
    /// `sum_ns[p]`: summed durations of positions `..p` (negative ones as 0, what a range
    /// clips them to), wrapping: differences are exact when they fit, and the duration of `p`
    /// is `sum_ns[p + 1] - sum_ns[p]`.
    sum_ns: Vec<u64>,
    /// The distinct durations, sorted; the wavelet matrix holds indices into it.
    values_ns: Vec<i64>,
    codes: WaveletMatrix,
    ends: EndTree,
    /// Per device with a GPU track, by device: the union of its kernels, copies and sets.
    busy: Vec<(u32, CoverIndex)>,
}

impl ActivityIndex {
    /// The index of `profile`'s kernels, copies and sets.
    pub fn new(profile: &Profile) -> Self {
        let mut busy_by_device: FxHashMap<u32, Vec<(i64, i64)>> = FxHashMap::default();
        let mut key_ids: FxHashMap<ActivityKey, u32> = FxHashMap::default();
        let mut keys: Vec<ActivityKey> = Vec::new();
        // (key, start, duration), in track order.
        let mut items: Vec<(u32, i64, i64)> = Vec::new();
        for track in &profile.tracks {
            let TrackKey::Gpu { device, .. } = track.key else {
                continue;
            };
            let intervals = busy_by_device.entry(device).or_default();
            let ev = &track.events;
            for i in 0..ev.len() {
                let Some(key) = ActivityKey::of(profile, track, i) else {
                    continue;
                };
                let id = *key_ids.entry(key).or_insert_with(|| {
                    keys.push(key);
                    u32::try_from(keys.len() - 1).unwrap_or(u32::MAX)
                });
                let (start, dur) = (ev.start_ns[i], ev.dur_ns[i].max(0));
                items.push((id, start, dur));
                if dur > 0 {
                    intervals.push((start, start.saturating_add(dur)));
                }
            }
        }
        let mut busy: Vec<(u32, CoverIndex)> = busy_by_device
            .into_iter()
            .map(|(d, iv)| (d, CoverIndex::of_union(iv)))
            .collect();
        busy.sort_unstable_by_key(|b| b.0);
        let mut index = Self {
            busy,
            ..Self::default()
        };
        if is_recorded_only(profile) || u32::try_from(items.len()).is_err() {
            return index;
        }
        // By key, then start: each track's events are already sorted, so the sort merges runs.
        items.sort_by_key(|&(k, s, _)| (k, s));
        let mut values_ns: Vec<i64> = items.iter().map(|it| it.2).collect();
        values_ns.sort_unstable();
        values_ns.dedup();
        let bits = usize::BITS - values_ns.len().saturating_sub(1).leading_zeros();
        let codes: Vec<u32> = items
            .iter()
            .map(|it| {
                let c = values_ns.partition_point(|&v| v < it.2);
                u32::try_from(c).unwrap_or(u32::MAX)
            })
            .collect();
        index.codes = WaveletMatrix::new(&codes, bits.max(1));
        drop(codes);
        index.values_ns = values_ns;
        let mut sum = 0u64;
        index.sum_ns.reserve(items.len() + 1);
        index.sum_ns.push(0);
        for it in &items {
            sum = sum.wrapping_add(it.2.unsigned_abs());
            index.sum_ns.push(sum);
        }
        let mut p = 0;
        while p < items.len() {
            let key = items[p].0;
            let q = p + items[p..].partition_point(|it| it.0 == key);
            let total: i128 = items[p..q].iter().map(|it| i128::from(it.2)).sum();
            let (name, kind) = keys[key as usize].name_and_kind(profile);
            index.groups.push(Group {
                name,
                kind,
                first: p,
                end: q,
                sums_fit: total <= i128::from(i64::MAX),
            });
            p = q;
        }
        index.start_ns = items.iter().map(|it| it.1).collect();
        drop(items);
        index.ends = EndTree::new(|p| index.end_ns(p), index.len());
        index.indexed = true;
        index
    }

    /// Duration of position `p` (negative ones as 0).
    fn dur_ns(&self, p: usize) -> i64 {
        i64::try_from(self.sum_ns[p + 1].wrapping_sub(self.sum_ns[p])).unwrap_or(i64::MAX)
    }

    /// End of position `p`'s event.
    fn end_ns(&self, p: usize) -> i64 {
        self.start_ns[p].saturating_add(self.dur_ns(p))
    }

    /// Number of kernels, copies and sets indexed.
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// True when no event is indexed (the scans answer).
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    /// Approximate heap size of the index in bytes.
    pub fn heap_bytes(&self) -> usize {
        let per_event = size_of::<i64>() * 2;
        let busy: usize = self
            .busy
            .iter()
            .map(|b| b.1.intervals().len() * (size_of::<(i64, i64)>() + size_of::<i64>()))
            .sum();
        self.len() * per_event
            + self.values_ns.len() * size_of::<i64>()
            + self.ends.max_end.len() * size_of::<i64>()
            + self.codes.heap_bytes()
            + busy
    }

    /// The GPU-activities table over `range`: the rows of [`super::gpu_activities`].
    pub fn gpu_activities(&self, profile: &Profile, range: TimeRange) -> Vec<ActivityRow> {
        if !self.indexed || range.is_all() {
            return super::gpu_activities(profile, range);
        }
        let mut scratch = Scratch::default();
        let mut rows: Vec<ActivityRow> = self
            .groups
            .iter()
            .filter_map(|g| {
                let stats = self.group_stats(g, range, &mut scratch)?;
                Some(ActivityRow {
                    name: g.name.clone(),
                    kind: g.kind,
                    stats,
                    time_pct: 0.0,
                })
            })
            .collect();
        rank(&mut rows);
        rows
    }

    /// Summed duration of the kernels, copies and sets in `range`: [`super::gpu_total_ns`].
    pub fn gpu_total_ns(&self, profile: &Profile, range: TimeRange) -> i64 {
        if !self.indexed || range.is_all() {
            return super::gpu_total_ns(profile, range);
        }
        let mut scratch = Scratch::default();
        self.groups
            .iter()
            .filter_map(|g| self.group_total(g, range, &mut scratch))
            .fold(0, i64::saturating_add)
    }

    /// Busy time of each device in `range`: [`super::gpu_busy_ns`].
    pub fn gpu_busy_ns(&self, profile: &Profile, range: TimeRange) -> Vec<(u32, i64)> {
        if range.is_all() {
            return super::gpu_busy_ns(profile, range);
        }
        self.busy
            .iter()
            .map(|(d, cover)| (*d, cover.covered_in(range.start_ns, range.end_ns)))
            .collect()
    }

    /// The events of `g` in `range`: positions `a..b` start inside it (those in `scratch.right`
    /// end after it), those in `scratch.left` start before it and end inside or after it, and
    /// `scratch.clipped` holds the clipped durations of both lists. `None` when none touches it.
    fn locate(&self, g: &Group, range: TimeRange, s: &mut Scratch) -> Option<(usize, usize)> {
        let (rs, re) = (range.start_ns, range.end_ns);
        let starts = &self.start_ns[g.first..g.end];
        let a = g.first + starts.partition_point(|&t| t < rs);
        let b = a + starts[a - g.first..].partition_point(|&t| t < re);
        let end_ns = |p: usize| self.end_ns(p);
        s.left.clear();
        s.right.clear();
        s.clipped.clear();
        self.ends.ends_after(&end_ns, g.first, a, rs, &mut s.left);
        self.ends.ends_after(&end_ns, a, b, re, &mut s.right);
        if b == a && s.left.is_empty() {
            return None;
        }
        for &p in s.left.iter().chain(&s.right) {
            s.clipped
                .push(range.overlap_ns(self.start_ns[p], self.dur_ns(p)));
        }
        Some((a, b))
    }

    /// Summed clipped duration (saturating) of `g`'s events found by [`Self::locate`].
    fn total_of(&self, g: &Group, (a, b): (usize, usize), s: &Scratch) -> i64 {
        let inside: i128 = if g.sums_fit {
            i128::from(self.sum_ns[b].wrapping_sub(self.sum_ns[a]))
        } else {
            (a..b).map(|p| i128::from(self.dur_ns(p))).sum()
        };
        let replaced: i128 = s.right.iter().map(|&p| i128::from(self.dur_ns(p))).sum();
        let clipped: i128 = s.clipped.iter().map(|&d| i128::from(d)).sum();
        i64::try_from(inside - replaced + clipped).unwrap_or(i64::MAX)
    }

    /// Summed clipped duration of `g`'s events in `range` (saturating), `None` when none.
    fn group_total(&self, g: &Group, range: TimeRange, s: &mut Scratch) -> Option<i64> {
        let found = self.locate(g, range, s)?;
        Some(self.total_of(g, found, s))
    }

    /// The statistics of `g`'s events in `range` (durations clipped to it), as [`Stats::of`]
    /// computes them; `None` when none touches it.
    fn group_stats(&self, g: &Group, range: TimeRange, s: &mut Scratch) -> Option<Stats> {
        let (a, b) = self.locate(g, range, s)?;
        let total_ns = self.total_of(g, (a, b), s);
        // Inside: a..b without the right-edge events, whose clipped durations join the left's.
        s.pieces.clear();
        let mut from = a;
        for &p in &s.right {
            if p > from {
                s.pieces.push((from, p));
            }
            from = p + 1;
        }
        if b > from {
            s.pieces.push((from, b));
        }
        s.clipped.sort_unstable();
        let inside = b - a - s.right.len();
        let n = inside + s.clipped.len();
        let select = |k: usize, s: &mut Scratch| self.select(k, inside, s);
        let min_ns = select(0, s);
        let max_ns = select(n - 1, s);
        let upper = select(n / 2, s);
        let median_ns = if n % 2 == 1 {
            upper
        } else {
            let lower = select(n / 2 - 1, s);
            i64::try_from((i128::from(lower) + i128::from(upper)).div_euclid(2)).unwrap_or(upper)
        };
        let calls = n as u64;
        Some(Stats {
            calls,
            total_ns,
            avg_ns: total_ns / i64::try_from(n).unwrap_or(i64::MAX),
            min_ns,
            max_ns,
            median_ns: Some(median_ns),
        })
    }

    /// The `k`-th smallest inside duration (of `inside` in `s.pieces`).
    fn inside_kth(&self, k: usize, s: &mut Scratch) -> i64 {
        s.pieces_work.clear();
        s.pieces_work.extend_from_slice(&s.pieces);
        self.codes
            .kth_smallest(&mut s.pieces_work, k)
            .and_then(|c| self.values_ns.get(c as usize).copied())
            .unwrap_or(0)
    }

    /// The `k`-th smallest (0-based) of the inside durations (`inside` of them, in
    /// `s.pieces`) and the sorted clipped ones in `s.clipped` taken together.
    fn select(&self, k: usize, inside: usize, s: &mut Scratch) -> i64 {
        let y = s.clipped.len();
        if y == 0 {
            return self.inside_kth(k, s);
        }
        if inside == 0 {
            return s.clipped.get(k).copied().unwrap_or(0);
        }
        // The first k + 1 values are the j smallest clipped ones and the i = k + 1 - j smallest
        // inside ones, for the j where both sides agree.
        let take = k + 1;
        let mut answer = 0;
        for j in take.saturating_sub(inside)..=y.min(take) {
            let i = take - j;
            let a_prev = if i > 0 {
                self.inside_kth(i - 1, s)
            } else {
                i64::MIN
            };
            let a_next = if i < inside {
                self.inside_kth(i, s)
            } else {
                i64::MAX
            };
            let y_prev = if j > 0 { s.clipped[j - 1] } else { i64::MIN };
            let y_next = if j < y { s.clipped[j] } else { i64::MAX };
            answer = a_prev.max(y_prev);
            if a_prev <= y_next && y_prev <= a_next {
                break;
            }
        }
        answer
    }
}
