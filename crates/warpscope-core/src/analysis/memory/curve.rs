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
        let upto_start = self.time_ns.partition_point(|&t| t <= start_ns);
        let before_end = self.time_ns.partition_point(|&t| t < end_ns);
        self.max_of(upto_start, before_end)
    }

    /// A [`Sweep`]: [`MemoryCurve::max_in`] for spans that move forward, as the columns of a
    /// lane do.
    pub fn sweep(&self) -> Sweep<'_> {
        Sweep {
            curve: self,
            upto_start: 0,
            before_end: 0,
            last: (i64::MIN, i64::MIN),
        }
    }

    /// [`MemoryCurve::max_in`] of a span given by the number of points at or before its start
    /// and the number before its end.
    fn max_of(&self, upto_start: usize, before_end: usize) -> Option<SpanMax> {
        let at_start = upto_start.checked_sub(1);
        let first = at_start.unwrap_or(0);
        if before_end == 0 || first >= before_end {
            return at_start.map(|i| SpanMax {
                allocated_bytes: self.allocated_bytes[i],
                reserved_bytes: self.reserved_bytes[i],
            });
        }
        Some(SpanMax {
            allocated_bytes: self.range_max(first, before_end, |l| &l.0, &self.allocated_bytes),
            reserved_bytes: self.range_max(first, before_end, |l| &l.1, &self.reserved_bytes),
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

/// [`MemoryCurve::max_in`] for a run of spans whose starts and ends do not move back (the pixel
/// columns of a lane, left to right): each span's bounds are searched forward from the last
/// one's, first in steps that double and then by halving, so a column costs the logarithm of
/// the points it holds rather than of all of them, and reads memory near the last column's. Two
/// binary searches over the whole curve per column were most of a lane's frame at 782 k
/// points: each step of them a cache miss.
pub struct Sweep<'a> {
    curve: &'a MemoryCurve,
    /// Points at or before the last span's start.
    upto_start: usize,
    /// Points before the last span's end.
    before_end: usize,
    /// The last span.
    last: (i64, i64),
}

impl Sweep<'_> {
    /// [`MemoryCurve::max_in`] of `[start_ns, end_ns)`. A span that starts or ends before the
    /// last one is searched from the first point again (same result, the cost of `max_in`).
    pub fn max_in(&mut self, start_ns: i64, end_ns: i64) -> Option<SpanMax> {
        if start_ns < self.last.0 || end_ns < self.last.1 {
            (self.upto_start, self.before_end) = (0, 0);
        }
        self.last = (start_ns, end_ns);
        let t = &self.curve.time_ns;
        self.upto_start = gallop(t, self.upto_start, |x| x <= start_ns);
        self.before_end = gallop(t, self.before_end, |x| x < end_ns);
        self.curve.max_of(self.upto_start, self.before_end)
    }
}

/// `from` plus the number of points from `from` on that hold `pred`, for a `pred` that holds
/// for a prefix of `t` (as `partition_point`), found by doubling steps from `from` and then a
/// binary search within the last step.
fn gallop(t: &[i64], from: usize, pred: impl Fn(i64) -> bool) -> usize {
    let (mut lo, mut hi, mut step) = (from, from, 1usize);
    // Every point before `lo` holds `pred`; the answer is at most `hi`.
    while hi < t.len() && pred(t[hi]) {
        lo = hi + 1;
        hi = hi.saturating_add(step);
        step = step.saturating_mul(2);
    }
    let hi = hi.min(t.len());
    lo + t[lo..hi].partition_point(|&x| pred(x))
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

    #[test]
    fn a_sweep_equals_max_in_at_every_column() {
        // Points at equal times too, and columns of every width from below one point's spacing
        // to many points, some of them moving back (a new sweep from the first point).
        let v: Vec<i64> = (0..(BLOCK * BLOCK * 2 + 5) as i64)
            .map(|i| (i * 7919) % 1000)
            .collect();
        let mut c = curve(&v);
        // The block maxima depend on the values only.
        for (i, t) in c.time_ns.iter_mut().enumerate() {
            *t = (i as i64 / 3) * 10;
        }
        let end = *c.time_ns.last().unwrap() + 20;
        for width in [1i64, 3, 10, 25, 70, 640, 5000] {
            let mut sweep = c.sweep();
            let mut a = -15;
            let mut k = 0;
            while a < end {
                let b = a + width;
                assert_eq!(
                    sweep.max_in(a, b),
                    c.max_in(a, b),
                    "width {width}, {a}..{b}"
                );
                k += 1;
                // Now and then a span that starts earlier, or one just as wide.
                a = if k % 17 == 0 { a - width * 3 } else { b };
            }
        }
        // Empty spans, and spans before and after every point.
        let mut sweep = c.sweep();
        for (a, b) in [
            (-50, -40),
            (-40, -40),
            (0, 0),
            (0, 1),
            (end, end + 5),
            (end + 9, end + 9),
        ] {
            assert_eq!(sweep.max_in(a, b), c.max_in(a, b), "{a}..{b}");
        }
    }

    #[test]
    fn gallop_equals_partition_point_from_any_start() {
        let t: Vec<i64> = (0..300).map(|i| i / 2).collect();
        for x in -1..152 {
            let want = t.partition_point(|&v| v <= x);
            for from in (0..=want).step_by(7).chain([want]) {
                assert_eq!(gallop(&t, from, |v| v <= x), want, "x {x} from {from}");
            }
        }
    }
}
