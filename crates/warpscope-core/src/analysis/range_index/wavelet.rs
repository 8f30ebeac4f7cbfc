//! A wavelet matrix: a sequence of small integer codes that answers "the k-th smallest code
//! among positions `a..b`" in one pass over the code's bits, in about 3 bytes per element
//! (the order statistics of the GPU-activities table over any time range: min, max, median).

/// Bits with their running count of ones, for `rank` in constant time.
#[derive(Clone, Debug, Default)]
struct RankedBits {
    words: Vec<u64>,
    /// `ones[w]`: the ones in `words[..w]`.
    ones: Vec<u32>,
}

impl RankedBits {
    fn new(bits: &[bool]) -> Self {
        let mut words = vec![0u64; bits.len() / 64 + 1];
        for (i, &b) in bits.iter().enumerate() {
            if b {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        let mut ones = Vec::with_capacity(words.len());
        let mut n = 0u32;
        for w in &words {
            ones.push(n);
            n += w.count_ones();
        }
        Self { words, ones }
    }

    /// Ones in positions `..p`.
    fn rank1(&self, p: usize) -> usize {
        let (w, r) = (p / 64, p % 64);
        let below = self.words[w] & ((1u64 << r) - 1);
        self.ones[w] as usize + below.count_ones() as usize
    }
}

/// Codes `0..2^bits` in one bit plane per level, most significant first; each level's ones are
/// moved after its zeros (stably) for the next level.
#[derive(Clone, Debug, Default)]
pub struct WaveletMatrix {
    levels: Vec<RankedBits>,
    /// Zeros of each level.
    zeros: Vec<usize>,
    len: usize,
}

impl WaveletMatrix {
    /// The matrix of `codes`, each below `2^bits`. At most `u32::MAX` codes.
    pub fn new(codes: &[u32], bits: u32) -> Self {
        let mut cur = codes.to_vec();
        let mut levels = Vec::with_capacity(bits as usize);
        let mut zeros = Vec::with_capacity(bits as usize);
        let mut plane = vec![false; codes.len()];
        for level in (0..bits).rev() {
            for (b, &c) in plane.iter_mut().zip(&cur) {
                *b = (c >> level) & 1 == 1;
            }
            levels.push(RankedBits::new(&plane));
            let mut next: Vec<u32> = cur
                .iter()
                .copied()
                .filter(|c| (c >> level) & 1 == 0)
                .collect();
            zeros.push(next.len());
            next.extend(cur.iter().copied().filter(|c| (c >> level) & 1 == 1));
            cur = next;
        }
        Self {
            levels,
            zeros,
            len: codes.len(),
        }
    }

    /// Number of codes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Approximate heap size in bytes.
    pub fn heap_bytes(&self) -> usize {
        self.levels
            .iter()
            .map(|l| l.words.len() * size_of::<u64>() + l.ones.len() * size_of::<u32>())
            .sum()
    }

    /// True when there are no codes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `k`-th smallest code (0-based) among the positions of `pieces` (ranges of positions,
    /// taken together), or `None` when they hold `k` codes or fewer. `pieces` is used as scratch.
    pub fn kth_smallest(&self, pieces: &mut [(usize, usize)], mut k: usize) -> Option<u32> {
        let total: usize = pieces.iter().map(|&(a, b)| b.saturating_sub(a)).sum();
        if k >= total {
            return None;
        }
        let mut code = 0u32;
        for (level, bits) in self.levels.iter().enumerate() {
            let zeros_here: usize = pieces
                .iter()
                .map(|&(a, b)| (b - bits.rank1(b)) - (a - bits.rank1(a)))
                .sum();
            code <<= 1;
            if k < zeros_here {
                for p in pieces.iter_mut() {
                    *p = (p.0 - bits.rank1(p.0), p.1 - bits.rank1(p.1));
                }
            } else {
                k -= zeros_here;
                code |= 1;
                let z = self.zeros[level];
                for p in pieces.iter_mut() {
                    *p = (z + bits.rank1(p.0), z + bits.rank1(p.1));
                }
            }
        }
        Some(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kth_smallest_matches_sorting() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for bits in [1u32, 3, 7, 12] {
            let codes: Vec<u32> = (0..700)
                .map(|_| u32::try_from(next() % (1 << bits)).unwrap())
                .collect();
            let wm = WaveletMatrix::new(&codes, bits);
            assert_eq!(wm.len(), codes.len());
            for _ in 0..300 {
                let a = usize::try_from(next() % 700).unwrap();
                let b = a + usize::try_from(next() % (701 - a as u64)).unwrap();
                let c = a + (b - a) / 3;
                let d = c + (b - c) / 2;
                // Two pieces: a..c and d..b.
                let mut want: Vec<u32> = codes[a..c].iter().chain(&codes[d..b]).copied().collect();
                want.sort_unstable();
                for (k, w) in want.iter().enumerate() {
                    let mut pieces = [(a, c), (d, b)];
                    assert_eq!(wm.kth_smallest(&mut pieces, k), Some(*w));
                }
                let mut pieces = [(a, c), (d, b)];
                assert_eq!(wm.kth_smallest(&mut pieces, want.len()), None);
            }
        }
    }
}
