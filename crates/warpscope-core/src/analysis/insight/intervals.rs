//! Sets of time as sorted, disjoint half-open intervals `[start_ns, end_ns)`: union, length,
//! intersection and difference, each linear in the inputs.

/// Sorted, disjoint, non-empty intervals.
pub type Intervals = Vec<(i64, i64)>;

/// The union of `intervals` (any order, any overlap; empty ones are dropped).
pub fn union(mut intervals: Vec<(i64, i64)>) -> Intervals {
    intervals.retain(|&(s, e)| e > s);
    intervals.sort_unstable();
    let mut out: Intervals = Vec::with_capacity(intervals.len());
    for (s, e) in intervals {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Total length of disjoint intervals.
pub fn length(intervals: &[(i64, i64)]) -> i64 {
    intervals
        .iter()
        .fold(0i64, |acc, &(s, e)| acc.saturating_add(e - s))
}

/// `a ∩ b` of two sorted disjoint sets.
pub fn intersect(a: &[(i64, i64)], b: &[(i64, i64)]) -> Intervals {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() && j < b.len() {
        let s = a[i].0.max(b[j].0);
        let e = a[i].1.min(b[j].1);
        if e > s {
            out.push((s, e));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// `a \ b` of two sorted disjoint sets.
pub fn subtract(a: &[(i64, i64)], b: &[(i64, i64)]) -> Intervals {
    let mut out = Vec::new();
    let mut j = 0;
    for &(s, e) in a {
        let mut cur = s;
        while j < b.len() && b[j].1 <= cur {
            j += 1;
        }
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            if b[k].0 > cur {
                out.push((cur, b[k].0));
            }
            cur = cur.max(b[k].1);
            k += 1;
        }
        if cur < e {
            out.push((cur, e));
        }
    }
    out
}

/// The gaps between consecutive intervals of a sorted disjoint set.
pub fn gaps(intervals: &[(i64, i64)]) -> impl Iterator<Item = (i64, i64)> + '_ {
    intervals.windows(2).map(|w| (w[0].1, w[1].0))
}

/// Busy time inside each of `buckets` equal buckets of `[start_ns, end_ns)` (the last takes the
/// remainder), as a fraction of the bucket's length. At most one bucket per nanosecond.
pub fn bucket_fractions(
    intervals: &[(i64, i64)],
    start_ns: i64,
    end_ns: i64,
    buckets: usize,
) -> (Vec<f64>, i64) {
    let span = end_ns - start_ns;
    if span <= 0 || buckets == 0 {
        return (Vec::new(), 0);
    }
    let n = i64::try_from(buckets).unwrap_or(i64::MAX).min(span);
    let width = span / n;
    let mut out = Vec::with_capacity(n as usize);
    let mut j = 0;
    for b in 0..n {
        let lo = start_ns + b * width;
        let hi = if b == n - 1 { end_ns } else { lo + width };
        while j < intervals.len() && intervals[j].1 <= lo {
            j += 1;
        }
        let mut busy = 0i64;
        let mut k = j;
        while k < intervals.len() && intervals[k].0 < hi {
            busy += intervals[k].1.min(hi) - intervals[k].0.max(lo);
            k += 1;
        }
        #[allow(clippy::cast_precision_loss)]
        out.push(busy as f64 / (hi - lo) as f64);
    }
    (out, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let a = union(vec![(5, 10), (0, 3), (2, 4), (10, 12), (20, 20)]);
        assert_eq!(a, vec![(0, 4), (5, 12)]);
        assert_eq!(length(&a), 11);
        let b = vec![(3, 6), (11, 30)];
        assert_eq!(intersect(&a, &b), vec![(3, 4), (5, 6), (11, 12)]);
        assert_eq!(subtract(&a, &b), vec![(0, 3), (6, 11)]);
        assert_eq!(subtract(&b, &a), vec![(4, 5), (12, 30)]);
        assert_eq!(gaps(&a).collect::<Vec<_>>(), vec![(4, 5)]);
        let (f, w) = bucket_fractions(&a, 0, 12, 3);
        assert_eq!(w, 4);
        assert_eq!(f, vec![1.0, 0.75, 1.0]);
    }
}
