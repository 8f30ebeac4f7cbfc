//! A device's allocated and reserved memory over time as step curves, with the largest value
//! of any time span found in logarithmic time, so that a memory lane costs the same per frame
//! at any zoom (one query per pixel column, however many records the column holds).

use crate::model::{MemoryAction, MemoryDevice, Profile};

/// Records per block of the first level of maxima.
const BLOCK: usize = 64;

/// One device's curves: the value after each record, and maxima of blocks, blocks of blocks...
#[derive(Clone, Debug, Default)]
pub struct MemoryCurve {
    /// The device.
    pub device: MemoryDevice,
    /// Time of each change, sorted.
    pub time_ns: Vec<i64>,
    /// Bytes allocated after each change.
    pub allocated_bytes: Vec<i64>,
    /// Bytes reserved after each change.
    pub reserved_bytes: Vec<i64>,
    /// Index of each point in the profile's memory records.
    pub record: Vec<u32>,
    /// The first point with the largest allocated value.
    pub peak: Option<usize>,
    /// The largest reserved value.
    pub max_reserved_bytes: i64,
    /// Maxima of allocated and reserved over blocks of [`BLOCK`] points, then of [`BLOCK`] of
    /// those, and so on.
    levels: Vec<(Vec<i64>, Vec<i64>)>,
}

/// The largest values of a span of time, and what held them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpanMax {
    /// Largest allocated bytes in the span (the value carried into it included).
    pub allocated_bytes: i64,
    /// Largest reserved bytes in the span.
    pub reserved_bytes: i64,
}

impl MemoryCurve {
    /// The curves of every device with memory records, CPU first.
    pub fn all(profile: &Profile) -> Vec<Self> {
        profile
            .memory
            .devices()
            .into_iter()
            .map(|d| Self::of(profile, d))
            .filter(|c| !c.time_ns.is_empty())
            .collect()
    }

    /// The curves of one device: a point at every record that can change the totals.
    pub fn of(profile: &Profile, device: MemoryDevice) -> Self {
        let ev = &profile.memory.events;
        let mut c = Self {
            device,
            ..Self::default()
        };
        for i in 0..ev.len() {
            if ev.device[i] != device
                || matches!(ev.action[i], MemoryAction::Snapshot | MemoryAction::Oom)
            {
                continue;
            }
            c.time_ns.push(ev.time_ns[i]);
            c.allocated_bytes.push(ev.allocated_bytes[i]);
            c.reserved_bytes.push(ev.reserved_bytes[i]);
            c.record.push(u32::try_from(i).unwrap_or(u32::MAX));
        }
        c.index();
        c
    }

    /// Works out the peak and the block maxima of the points.
    fn index(&mut self) {
        let max = self.allocated_bytes.iter().copied().max();
        self.peak = max.and_then(|m| self.allocated_bytes.iter().position(|&v| v == m));
        self.max_reserved_bytes = self.reserved_bytes.iter().copied().max().unwrap_or(0);
        let mut below = (self.allocated_bytes.clone(), self.reserved_bytes.clone());
        while below.0.len() > BLOCK {
            let level = (block_max(&below.0), block_max(&below.1));
            self.levels.push(level.clone());
            below = level;
        }
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// True if there are no points.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// The point in force at `t_ns` (the last at or before it), if any.
    pub fn at(&self, t_ns: i64) -> Option<usize> {
        self.time_ns.partition_point(|&t| t <= t_ns).checked_sub(1)
    }

    /// The largest values over `[start_ns, end_ns)`: the value in force at `start_ns` and every
    /// point inside. `None` where the span ends before the first point.
    pub fn max_in(&self, start_ns: i64, end_ns: i64) -> Option<SpanMax> {
        let first = self.at(start_ns).unwrap_or(0);
        let end = self.time_ns.partition_point(|&t| t < end_ns);
        if end == 0 || first >= end {
            return self.at(start_ns).map(|i| SpanMax {
                allocated_bytes: self.allocated_bytes[i],
                reserved_bytes: self.reserved_bytes[i],
            });
        }
        Some(SpanMax {
            allocated_bytes: self.range_max(first, end, |l| &l.0, &self.allocated_bytes),
            reserved_bytes: self.range_max(first, end, |l| &l.1, &self.reserved_bytes),
        })
    }

    /// Largest value of `points[from..to]`, using the levels for whole blocks.
    fn range_max(
        &self,
        from: usize,
        to: usize,
        pick: impl Fn(&(Vec<i64>, Vec<i64>)) -> &Vec<i64>,
        points: &[i64],
    ) -> i64 {
        let (mut from, mut to, mut best) = (from, to, i64::MIN);
        let mut values = points;
        let mut level = 0;
        loop {
            // The ragged ends at this level, then whole blocks one level up.
            let block_from = from.div_ceil(BLOCK);
            let block_to = to / BLOCK;
            if level >= self.levels.len() || block_from >= block_to {
                best = best.max(values[from..to].iter().copied().max().unwrap_or(i64::MIN));
                return best;
            }
            best = best.max(
                values[from..block_from * BLOCK]
                    .iter()
                    .chain(&values[block_to * BLOCK..to])
                    .copied()
                    .max()
                    .unwrap_or(i64::MIN),
            );
            values = pick(&self.levels[level]);
            (from, to) = (block_from, block_to);
            level += 1;
        }
    }
}

fn block_max(values: &[i64]) -> Vec<i64> {
    values
        .chunks(BLOCK)
        .map(|c| c.iter().copied().max().unwrap_or(i64::MIN))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(values: &[i64]) -> MemoryCurve {
        let mut c = MemoryCurve {
            time_ns: (0..values.len() as i64).map(|t| t * 10).collect(),
            allocated_bytes: values.to_vec(),
            reserved_bytes: values.iter().map(|v| v * 2).collect(),
            record: (0..values.len() as u32).collect(),
            ..MemoryCurve::default()
        };
        c.index();
        c
    }

    #[test]
    fn span_maxima_equal_a_scan_at_every_span() {
        // A pseudo-random walk over three levels of blocks.
        let mut v = Vec::new();
        let mut x: i64 = 1000;
        let mut seed: u64 = 7;
        for _ in 0..(BLOCK * BLOCK * 3 + 17) {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x += ((seed >> 33) % 201) as i64 - 100;
            v.push(x);
        }
        let c = curve(&v);
        assert!(c.levels.len() >= 2);
        let n = v.len() as i64;
        let mut seed: u64 = 3;
        for _ in 0..3000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = ((seed >> 20) % (n as u64 * 10 + 20)) as i64 - 10;
            let b = a + ((seed >> 40) % (n as u64 * 10)) as i64 + 1;
            let got = c.max_in(a, b);
            // The value in force at a, and every point with a < t < b.
            let carried = v.iter().enumerate().rfind(|(i, _)| (*i as i64) * 10 <= a);
            let inside = v
                .iter()
                .enumerate()
                .filter(|(i, _)| (*i as i64) * 10 > a && (*i as i64) * 10 < b);
            let want = carried.into_iter().chain(inside).map(|(_, &x)| x).max();
            assert_eq!(got.map(|m| m.allocated_bytes), want, "span {a}..{b}");
            assert_eq!(
                got.map(|m| m.reserved_bytes),
                want.map(|w| w * 2),
                "span {a}..{b}"
            );
        }
    }
}
