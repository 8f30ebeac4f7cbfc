//! Covered time of a set of intervals over any span, and the bucket table that finds a time's
//! position in a sorted array with a lookup and a short local search instead of a binary search
//! over the whole array (whose probes miss the cache on arrays of millions).

use crate::analysis::insight::{DeviceActivity, SpanTime, activity::CoveredIndex};

/// The positions of a sorted array of times, cut into buckets of `2^shift` ns from the first
/// time: each bucket knows the first position at or after its start, so the first position at or
/// after any time lies between two adjacent entries.
#[derive(Clone, Debug, Default)]
pub struct TimeBuckets {
    origin_ns: i64,
    shift: u32,
    /// `first[b]`: the first position whose time is at least `origin_ns + (b << shift)`, for
    /// every bucket and one past the last; empty when the times are not sorted.
    first: Vec<u32>,
    len: usize,
}

impl TimeBuckets {
    /// Buckets over the `len` times `time_ns(0..len)`, about `per_bucket` of them per bucket
    /// when they are spread evenly. Times that are not sorted get no buckets (every window is
    /// then the whole array).
    pub fn new(len: usize, per_bucket: usize, time_ns: impl Fn(usize) -> i64) -> Self {
        let none = Self {
            len,
            ..Self::default()
        };
        if len == 0 || u32::try_from(len).is_err() {
            return none;
        }
        let (lo, hi) = (time_ns(0), time_ns(len - 1));
        if hi < lo {
            return none;
        }
        let span = u128::try_from(i128::from(hi) - i128::from(lo)).unwrap_or(0);
        let target = u128::try_from((len / per_bucket.max(1)).max(1)).unwrap_or(1);
        let mut shift = 0u32;
        while (span >> shift) + 1 > target {
            shift += 1;
        }
        let Ok(buckets) = usize::try_from((span >> shift) + 1) else {
            return none;
        };
        let mut first = Vec::with_capacity(buckets + 1);
        let mut p = 0usize;
        let mut sorted = true;
        for b in 0..=buckets {
            let start = i128::from(lo) + (i128::try_from(b).unwrap_or(i128::MAX) << shift);
            while p < len && i128::from(time_ns(p)) < start {
                if p > 0 && time_ns(p) < time_ns(p - 1) {
                    sorted = false;
                }
                p += 1;
            }
            first.push(u32::try_from(p).unwrap_or(u32::MAX));
        }
        if !sorted || p != len {
            return none;
        }
        Self {
            origin_ns: lo,
            shift,
            first,
            len,
        }
    }

    /// True when the times were sorted and got buckets (else every window is the whole array).
    pub fn has_buckets(&self) -> bool {
        !self.first.is_empty()
    }

    /// Positions `lo..=hi` between which the first position whose time is at least `t_ns` lies.
    pub fn window(&self, t_ns: i64) -> (usize, usize) {
        if self.first.is_empty() {
            return (0, self.len);
        }
        if t_ns <= self.origin_ns {
            return (0, 0);
        }
        let offset = u128::try_from(i128::from(t_ns) - i128::from(self.origin_ns)).unwrap_or(0);
        let b = offset >> self.shift;
        let last = self.first.len() - 1;
        match usize::try_from(b) {
            Ok(b) if b < last => (self.first[b] as usize, self.first[b + 1] as usize),
            _ => (self.len, self.len),
        }
    }
}

/// Sorted, disjoint intervals with prefix sums of their lengths, answering "how much of this
/// span do they cover" exactly with a bucket lookup and a short search (the same answers as
/// [`CoveredIndex::covered_in`]).
#[derive(Clone, Debug, Default)]
pub struct CoverIndex {
    intervals: Vec<(i64, i64)>,
    /// `prefix[i]`: summed length of `intervals[..i]` (wrapping; differences are exact).
    prefix: Vec<i64>,
    /// Over the intervals' ends.
    ends: TimeBuckets,
}

impl CoverIndex {
    /// An index over sorted, disjoint intervals `[start_ns, end_ns)`.
    pub fn new(intervals: Vec<(i64, i64)>) -> Self {
        let mut prefix = Vec::with_capacity(intervals.len() + 1);
        let mut sum = 0i64;
        prefix.push(0);
        for &(s, e) in &intervals {
            sum = sum.wrapping_add(e.wrapping_sub(s));
            prefix.push(sum);
        }
        let ends = TimeBuckets::new(intervals.len(), 4, |i| intervals[i].1);
        Self {
            intervals,
            prefix,
            ends,
        }
    }

    /// The same intervals as `index`.
    pub fn from_covered(index: &CoveredIndex) -> Self {
        Self::new(index.intervals().to_vec())
    }

    /// Merges possibly overlapping intervals (in any order) and indexes their union.
    pub fn of_union(mut intervals: Vec<(i64, i64)>) -> Self {
        intervals.retain(|&(s, e)| e > s);
        intervals.sort_unstable();
        let mut merged: Vec<(i64, i64)> = Vec::with_capacity(intervals.len());
        for (s, e) in intervals {
            match merged.last_mut() {
                Some(last) if s <= last.1 => last.1 = last.1.max(e),
                _ => merged.push((s, e)),
            }
        }
        merged.shrink_to_fit();
        Self::new(merged)
    }

    /// The intervals.
    pub fn intervals(&self) -> &[(i64, i64)] {
        &self.intervals
    }

    /// How much of `(-inf, t_ns)` the intervals cover (wrapping: only differences are
    /// meaningful when the total overflows).
    pub fn covered_before(&self, t_ns: i64) -> i64 {
        let iv = &self.intervals;
        // The first interval that ends after t.
        let i = if t_ns == i64::MAX {
            iv.len()
        } else {
            let (lo, hi) = self.ends.window(t_ns + 1);
            lo + iv[lo..hi].partition_point(|&(_, e)| e <= t_ns)
        };
        let mut total = self.prefix[i];
        if let Some(&(s, _)) = iv.get(i)
            && s < t_ns
        {
            total = total.wrapping_add(t_ns.wrapping_sub(s));
        }
        total
    }

    /// How much of `[start_ns, end_ns)` the intervals cover.
    pub fn covered_in(&self, start_ns: i64, end_ns: i64) -> i64 {
        if end_ns <= start_ns {
            return 0;
        }
        self.covered_before(end_ns)
            .wrapping_sub(self.covered_before(start_ns))
    }
}

/// [`DeviceActivity`] with [`CoverIndex`]es: busy time and idle causes of one device over any
/// span, the same numbers as [`DeviceActivity::time_in`] at a fraction of the cost on large
/// profiles.
#[derive(Clone, Debug, Default)]
pub struct ActivityCover {
    /// Device ordinal.
    pub device: u32,
    /// Busy intervals.
    pub busy: CoverIndex,
    /// Idle gaps by cause: host wait, kernel wait, other.
    pub idle: [CoverIndex; 3],
}

impl ActivityCover {
    /// The same intervals as `activity`.
    pub fn new(activity: &DeviceActivity) -> Self {
        Self {
            device: activity.device,
            busy: CoverIndex::from_covered(&activity.busy),
            idle: [
                CoverIndex::from_covered(&activity.idle[0]),
                CoverIndex::from_covered(&activity.idle[1]),
                CoverIndex::from_covered(&activity.idle[2]),
            ],
        }
    }

    /// Where the time before `t_ns` went (cumulative; subtract two to get a span).
    pub fn time_before(&self, t_ns: i64) -> SpanTime {
        SpanTime {
            busy_ns: self.busy.covered_before(t_ns),
            host_wait_ns: self.idle[0].covered_before(t_ns),
            kernel_wait_ns: self.idle[1].covered_before(t_ns),
            other_ns: self.idle[2].covered_before(t_ns),
        }
    }

    /// Where the time of `[start_ns, end_ns)` went.
    pub fn time_in(&self, start_ns: i64, end_ns: i64) -> SpanTime {
        if end_ns <= start_ns {
            return SpanTime::default();
        }
        span_between(&self.time_before(start_ns), &self.time_before(end_ns))
    }
}

/// The time between two cumulative [`ActivityCover::time_before`] values.
pub fn span_between(before: &SpanTime, after: &SpanTime) -> SpanTime {
    SpanTime {
        busy_ns: after.busy_ns.wrapping_sub(before.busy_ns),
        host_wait_ns: after.host_wait_ns.wrapping_sub(before.host_wait_ns),
        kernel_wait_ns: after.kernel_wait_ns.wrapping_sub(before.kernel_wait_ns),
        other_ns: after.other_ns.wrapping_sub(before.other_ns),
    }
}
