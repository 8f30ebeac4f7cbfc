//! Busy time and idle causes per device, indexed for drawing: the viewer's utilisation lane asks
//! "how much of `[a, b)` was busy, and why was the rest idle?" for every pixel column of every
//! frame, so each answer is two binary searches over prefix sums, whatever the zoom.

use super::{AnalyzeOptions, GapCause, activities, idle};
use crate::model::Profile;
use crate::time::TimeRange;

/// Disjoint sorted intervals with prefix sums of their lengths.
#[derive(Clone, Debug, Default)]
pub struct CoveredIndex {
    intervals: Vec<(i64, i64)>,
    /// `prefix[i]` = summed length of `intervals[..i]`.
    prefix: Vec<i64>,
}

impl CoveredIndex {
    /// An index over sorted, disjoint intervals.
    pub fn new(intervals: Vec<(i64, i64)>) -> Self {
        let mut prefix = Vec::with_capacity(intervals.len() + 1);
        let mut sum = 0i64;
        prefix.push(0);
        for &(s, e) in &intervals {
            sum = sum.saturating_add(e - s);
            prefix.push(sum);
        }
        Self { intervals, prefix }
    }

    /// How much of `[start_ns, end_ns)` the intervals cover.
    pub fn covered_in(&self, start_ns: i64, end_ns: i64) -> i64 {
        if end_ns <= start_ns {
            return 0;
        }
        let iv = &self.intervals;
        let i = iv.partition_point(|&(_, e)| e <= start_ns);
        let j = iv.partition_point(|&(s, _)| s < end_ns);
        if i >= j {
            return 0;
        }
        let mut total = self.prefix[j] - self.prefix[i];
        total -= (start_ns - iv[i].0).max(0);
        total -= (iv[j - 1].1 - end_ns).max(0);
        total
    }

    /// The intervals.
    pub fn intervals(&self) -> &[(i64, i64)] {
        &self.intervals
    }
}

/// Where the time of a span went on one device.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SpanTime {
    /// Time with GPU work running.
    pub busy_ns: i64,
    /// Idle, waiting for the CPU.
    pub host_wait_ns: i64,
    /// Idle between queued work.
    pub kernel_wait_ns: i64,
    /// Idle for other reasons.
    pub other_ns: i64,
}

/// The busy time and the idle gaps by cause of one device over the whole run.
#[derive(Clone, Debug)]
pub struct DeviceActivity {
    /// Device ordinal.
    pub device: u32,
    /// Busy intervals.
    pub busy: CoveredIndex,
    /// Idle gaps by cause: host wait, kernel wait, other.
    pub idle: [CoveredIndex; 3],
}

impl DeviceActivity {
    /// Where the time of `[start_ns, end_ns)` went.
    pub fn time_in(&self, start_ns: i64, end_ns: i64) -> SpanTime {
        SpanTime {
            busy_ns: self.busy.covered_in(start_ns, end_ns),
            host_wait_ns: self.idle[0].covered_in(start_ns, end_ns),
            kernel_wait_ns: self.idle[1].covered_in(start_ns, end_ns),
            other_ns: self.idle[2].covered_in(start_ns, end_ns),
        }
    }
}

/// The activity index of every device with GPU work, by device.
pub fn device_activity(profile: &Profile, opts: &AnalyzeOptions) -> Vec<DeviceActivity> {
    let acts = activities(profile, TimeRange::ALL);
    acts.chunk_by(|a, b| a.device == b.device)
        .map(|dev| {
            let refs: Vec<&super::Activity> = dev.iter().collect();
            let busy = idle::busy_of(dev);
            let (_, gaps) =
                idle::classify_gaps(profile, &refs, &busy, opts.kernel_wait_threshold_ns);
            let mut by_cause: [Vec<(i64, i64)>; 3] = Default::default();
            for g in gaps {
                let slot = match g.cause {
                    GapCause::HostWait => 0,
                    GapCause::KernelWait => 1,
                    GapCause::Other => 2,
                };
                by_cause[slot].push((g.start_ns, g.start_ns + g.dur_ns));
            }
            DeviceActivity {
                device: dev[0].device,
                busy: CoveredIndex::new(busy),
                idle: by_cause.map(CoveredIndex::new),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covered_time_is_exact_at_any_span() {
        let idx = CoveredIndex::new(vec![(10, 20), (30, 40), (50, 60)]);
        assert_eq!(idx.covered_in(0, 100), 30);
        assert_eq!(idx.covered_in(15, 35), 10);
        assert_eq!(idx.covered_in(20, 30), 0);
        assert_eq!(idx.covered_in(12, 18), 6);
        assert_eq!(idx.covered_in(35, 55), 10);
        assert_eq!(idx.covered_in(60, 10), 0);
        // Against a brute-force count at every span of a small grid.
        for a in 0..70 {
            for b in a..70 {
                let brute = (a..b)
                    .filter(|&t| idx.intervals().iter().any(|&(s, e)| s <= t && t < e))
                    .count() as i64;
                assert_eq!(idx.covered_in(a, b), brute, "[{a}, {b})");
            }
        }
    }
}
