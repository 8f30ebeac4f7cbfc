//! CPU references for the bundled kernels, in `f64`, and the check of a GPU result against them:
//! the relative error ‖got − want‖ / ‖want‖ over every element (or, for the products, over a
//! fixed sample of rows and outputs), with NaN never passing, so an unwritten (poisoned) output
//! fails.

use serde::{Deserialize, Serialize};

use crate::catalog::CONV;

/// The outcome of comparing a result with its CPU reference.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// ‖got − want‖₂ / ‖want‖₂ (NaN if any compared element was NaN).
    pub rel_error: f64,
    /// The largest relative error accepted.
    pub tolerance: f64,
    /// How many elements were compared.
    pub compared: u64,
    /// True when `rel_error <= tolerance` (never for NaN).
    pub ok: bool,
}

impl Check {
    pub(crate) fn new(err2: f64, ref2: f64, compared: u64, tolerance: f64) -> Self {
        let rel_error = if ref2 > 0.0 {
            (err2 / ref2).sqrt()
        } else {
            err2.sqrt()
        };
        Self {
            rel_error,
            tolerance,
            compared,
            ok: rel_error <= tolerance,
        }
    }

    /// The check as a user reads it: `ok (rel. error 0)`, `ok (rel. error 2.4e-7)`,
    /// `FAILED (rel. error 3.0e-2 > 1e-6)`.
    pub fn text(&self) -> String {
        let err = if self.rel_error == 0.0 {
            "0".to_string()
        } else {
            format!("{:.1e}", self.rel_error)
        };
        if self.ok {
            format!("ok (rel. error {err})")
        } else {
            format!("FAILED (rel. error {err} > {:.0e})", self.tolerance)
        }
    }
}

/// ‖got − want‖₂ / ‖want‖₂ over two slices of equal length.
pub fn relative_error(got: &[f32], want: &[f64]) -> f64 {
    let mut acc = Accumulator::default();
    for (&g, &w) in got.iter().zip(want) {
        acc.add(g, w);
    }
    Check::new(acc.err2, acc.ref2, acc.n, 0.0).rel_error
}

#[derive(Default)]
struct Accumulator {
    err2: f64,
    ref2: f64,
    n: u64,
}

impl Accumulator {
    fn add(&mut self, got: f32, want: f64) {
        let d = f64::from(got) - want;
        self.err2 += d * d;
        self.ref2 += want * want;
        self.n += 1;
    }

    fn check(&self, tolerance: f64) -> Check {
        Check::new(self.err2, self.ref2, self.n, tolerance)
    }
}

/// Single-precision element-wise results are exact up to one rounding.
const ELEMENTWISE_TOL: f64 = 1e-6;
/// Sums of many products in `f32` drift further from the `f64` reference.
pub(crate) const ACCUMULATE_TOL: f64 = 1e-4;

/// A small, fast generator for test data (xorshift64*), seeded per run so every check sees
/// fresh inputs.
#[derive(Clone, Debug)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [lo, hi).
    pub(crate) fn fill(&mut self, buf: &mut [f32], lo: f32, hi: f32) {
        for v in buf {
            let unit = (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            *v = lo + (hi - lo) * unit;
        }
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// The CPU baseline of `vector_add`: one thread, the same loop as the kernel.
pub(crate) fn cpu_vector_add(a: &[f32], b: &[f32], c: &mut [f32]) {
    for ((c, &a), &b) in c.iter_mut().zip(a).zip(b) {
        *c = a + b;
    }
}

pub(crate) fn check_vector_add(a: &[f32], b: &[f32], c: &[f32]) -> Check {
    let mut acc = Accumulator::default();
    for ((&a, &b), &c) in a.iter().zip(b).zip(c) {
        acc.add(c, f64::from(a) + f64::from(b));
    }
    acc.check(ELEMENTWISE_TOL)
}

pub(crate) fn check_saxpy(alpha: f32, x: &[f32], y_before: &[f32], y: &[f32]) -> Check {
    let mut acc = Accumulator::default();
    for ((&x, &y0), &y) in x.iter().zip(y_before).zip(y) {
        acc.add(y, f64::from(alpha) * f64::from(x) + f64::from(y0));
    }
    acc.check(ELEMENTWISE_TOL)
}

/// A copy must be bit-exact.
pub(crate) fn check_copy(src: &[f32], dst: &[f32]) -> Check {
    let mut acc = Accumulator::default();
    for (&s, &d) in src.iter().zip(dst) {
        acc.add(d, f64::from(s));
    }
    acc.check(0.0)
}

/// Host-device transfers of bytes must arrive unchanged.
pub(crate) fn check_bytes(src: &[u8], dst: &[u8]) -> Check {
    let differing = src.iter().zip(dst).filter(|(a, b)| a != b).count() as f64;
    let n = src.len().min(dst.len()) as u64;
    Check {
        rel_error: if n == 0 { 0.0 } else { differing / n as f64 },
        tolerance: 0.0,
        compared: n,
        ok: differing == 0.0 && src.len() == dst.len(),
    }
}

/// TF32 rounds the inputs to 10 mantissa bits: products off by about 2⁻¹¹ each, which add up
/// to a few 1e-4 over a long sum.
pub(crate) const TF32_TOL: f64 = 2e-3;

/// Row-major `n x n` product checked on 16 sampled rows (every column of each) in `f64`, with
/// `tolerance`; any NaN anywhere in `c` (an element never written over the poison) fails.
pub(crate) fn check_gemm(
    a: &[f32],
    b: &[f32],
    c: &[f32],
    n: usize,
    seed: u64,
    tolerance: f64,
) -> Check {
    let unwritten = c.iter().filter(|v| v.is_nan()).count();
    if unwritten > 0 {
        return Check {
            rel_error: f64::NAN,
            tolerance,
            compared: c.len() as u64,
            ok: false,
        };
    }
    let mut acc = Accumulator::default();
    let mut rng = Rng::new(seed);
    let rows = n.min(16);
    let mut want = vec![0f64; n];
    for r in 0..rows {
        let row = if rows == n {
            r
        } else {
            rng.below(n as u64) as usize
        };
        want.iter_mut().for_each(|w| *w = 0.0);
        for p in 0..n {
            let x = f64::from(a[row * n + p]);
            for (w, &y) in want.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *w += x * f64::from(y);
            }
        }
        for (col, &w) in want.iter().enumerate() {
            acc.add(c[row * n + col], w);
        }
    }
    acc.check(tolerance)
}

/// The IEEE half nearest to `x` (ties to even), as bits; values past the half range saturate to
/// infinity, tiny ones flush to zero.
pub(crate) fn f32_to_f16_bits(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let mant = bits & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if mant != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        // Subnormal half: shift the mantissa (with its hidden bit) into place, rounding to even.
        let m = mant | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = m >> shift;
        let rest = m & ((1 << shift) - 1);
        let mid = 1 << (shift - 1);
        let round = u32::from(rest > mid || (rest == mid && half & 1 == 1));
        return sign | (half + round) as u16;
    }
    let half = ((e as u32) << 10) | (mant >> 13);
    let rest = mant & 0x1fff;
    let round = u32::from(rest > 0x1000 || (rest == 0x1000 && half & 1 == 1));
    // A carry out of the mantissa moves into the exponent, as it should.
    sign | (half + round) as u16
}

/// The value of a half given as bits.
pub(crate) fn f16_bits_to_f32(h: u16) -> f32 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f32::from(h & 0x3ff);
    sign * match exp {
        0 => mant * 2f32.powi(-24),
        0x1f if mant == 0.0 => f32::INFINITY,
        0x1f => f32::NAN,
        e => (1.0 + mant / 1024.0) * 2f32.powi(e - 15),
    }
}

pub(crate) fn check_reduce(x: &[f32], got: f32) -> Check {
    let want: f64 = x.iter().map(|&v| f64::from(v)).sum();
    let mut acc = Accumulator::default();
    acc.add(got, want);
    acc.check(ACCUMULATE_TOL)
}

/// One output of the bundled convolution, in `f64`.
fn conv_output(input: &[f32], weight: &[f32], bias: &[f32], index: usize) -> f64 {
    let (cin, cout, side, ks) = CONV;
    let (cin, cout, side, ks) = (cin as usize, cout as usize, side as usize, ks as usize);
    let pad = ks / 2;
    let x = index % side;
    let y = (index / side) % side;
    let co = (index / (side * side)) % cout;
    let img = index / (side * side * cout);
    let mut sum = f64::from(bias[co]);
    for ci in 0..cin {
        for ky in 0..ks {
            let Some(iy) = (y + ky).checked_sub(pad).filter(|&v| v < side) else {
                continue;
            };
            for kx in 0..ks {
                let Some(ix) = (x + kx).checked_sub(pad).filter(|&v| v < side) else {
                    continue;
                };
                let i = ((img * cin + ci) * side + iy) * side + ix;
                let w = ((co * cin + ci) * ks + ky) * ks + kx;
                sum += f64::from(input[i]) * f64::from(weight[w]);
            }
        }
    }
    sum
}

/// The convolution, checked on every output of the first image and 65,536 sampled others.
pub(crate) fn check_conv2d(
    input: &[f32],
    weight: &[f32],
    bias: &[f32],
    output: &[f32],
    seed: u64,
) -> Check {
    let (_, cout, side, _) = CONV;
    let per_image = (cout * side * side) as usize;
    let mut acc = Accumulator::default();
    for (i, &got) in output.iter().enumerate().take(per_image) {
        acc.add(got, conv_output(input, weight, bias, i));
    }
    let mut rng = Rng::new(seed);
    if output.len() > per_image {
        for _ in 0..65_536 {
            let i = rng.below(output.len() as u64) as usize;
            acc.add(output[i], conv_output(input, weight, bias, i));
        }
    }
    acc.check(ACCUMULATE_TOL)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_texts_say_what_was_compared() {
        assert_eq!(Check::new(0.0, 4.0, 2, 1e-6).text(), "ok (rel. error 0)");
        assert_eq!(
            Check::new(0.0009, 1.0, 2, 1e-6).text(),
            "FAILED (rel. error 3.0e-2 > 1e-6)"
        );
        assert_eq!(
            Check::new(1e-14, 1.0, 2, 1e-6).text(),
            "ok (rel. error 1.0e-7)"
        );
    }

    fn data(n: usize, seed: u64) -> Vec<f32> {
        let mut v = vec![0f32; n];
        Rng::new(seed).fill(&mut v, -1.0, 1.0);
        v
    }

    #[test]
    fn generator_is_uniform_in_range_and_seeded() {
        let v = data(100_000, 7);
        assert!(v.iter().all(|&x| (-1.0..1.0).contains(&x)));
        let mean: f64 = v.iter().map(|&x| f64::from(x)).sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.01, "{mean}");
        assert_eq!(data(10, 7), data(10, 7));
        assert_ne!(data(10, 7), data(10, 8));
    }

    #[test]
    fn vector_add_reference_accepts_the_cpu_loop_and_rejects_errors() {
        let (a, b) = (data(10_000, 1), data(10_000, 2));
        let mut c = vec![0f32; a.len()];
        cpu_vector_add(&a, &b, &mut c);
        let check = check_vector_add(&a, &b, &c);
        assert!(check.ok, "{check:?}");
        assert_eq!(check.compared, 10_000);
        // One element off by one: about 1/sqrt(n * 2/3) relative error.
        c[17] += 1.0;
        assert!(!check_vector_add(&a, &b, &c).ok);
        // A poisoned (never written) element is NaN and never passes.
        c[17] = f32::NAN;
        let check = check_vector_add(&a, &b, &c);
        assert!(check.rel_error.is_nan() && !check.ok);
    }

    #[test]
    fn saxpy_copy_and_bytes_references() {
        let (x, y0) = (data(1000, 3), data(1000, 4));
        let y: Vec<f32> = x.iter().zip(&y0).map(|(&x, &y)| 2.5 * x + y).collect();
        assert!(check_saxpy(2.5, &x, &y0, &y).ok);
        assert!(!check_saxpy(2.0, &x, &y0, &y).ok);
        assert!(check_copy(&x, &x).ok);
        let mut z = x.clone();
        z[999] = f32::from_bits(z[999].to_bits() ^ 1); // one bit: a copy must be exact
        assert!(!check_copy(&x, &z).ok);
        assert!(check_bytes(b"abc", b"abc").ok);
        assert!(!check_bytes(b"abc", b"abd").ok);
    }

    #[test]
    fn sgemm_reference_matches_a_plain_product() {
        let n = 24;
        let (a, b) = (data(n * n, 5), data(n * n, 6));
        let mut c = vec![0f32; n * n];
        for i in 0..n {
            for j in 0..n {
                c[i * n + j] = (0..n).map(|p| a[i * n + p] * b[p * n + j]).sum();
            }
        }
        let check = check_gemm(&a, &b, &c, n, 9, ACCUMULATE_TOL);
        assert!(check.ok, "{check:?}");
        assert_eq!(check.compared, 16 * 24);
        // Transposed B is a different product.
        let mut bt = b.clone();
        for i in 0..n {
            for j in 0..n {
                bt[i * n + j] = b[j * n + i];
            }
        }
        assert!(!check_gemm(&a, &bt, &c, n, 9, ACCUMULATE_TOL).ok);
    }

    #[test]
    fn halves_round_to_nearest_even_and_back() {
        // (value, its half's bits, the half's value)
        for (x, bits, back) in [
            (0.0f32, 0u16, 0.0f32),
            (1.0, 0x3c00, 1.0),
            (-2.0, 0xc000, -2.0),
            (0.5, 0x3800, 0.5),
            (65504.0, 0x7bff, 65504.0),
            (1e6, 0x7c00, f32::INFINITY),
            (2f32.powi(-14), 0x0400, 2f32.powi(-14)),
            (2f32.powi(-24), 0x0001, 2f32.powi(-24)),
        ] {
            assert_eq!(f32_to_f16_bits(x), bits, "{x}");
            assert_eq!(f16_bits_to_f32(bits), back, "{bits:#x}");
        }
        // 1 + 2^-11 is halfway between 1 and the next half: ties go to the even one (1).
        assert_eq!(f32_to_f16_bits(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(f32_to_f16_bits(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        // Every value in [-1, 1) comes back within half a unit of the 11-bit mantissa.
        let mut rng = Rng::new(3);
        let mut v = vec![0f32; 10_000];
        rng.fill(&mut v, -1.0, 1.0);
        for x in v {
            let back = f16_bits_to_f32(f32_to_f16_bits(x));
            assert!(
                (back - x).abs() <= x.abs() * 2f32.powi(-11) + 3e-8,
                "{x} {back}"
            );
        }
        assert!(f16_bits_to_f32(0x7e00).is_nan());
    }

    #[test]
    fn an_unwritten_product_element_fails_the_check() {
        let n = 8;
        let a = data(n * n, 1);
        let b = data(n * n, 2);
        let mut c = vec![0f32; n * n];
        for i in 0..n {
            for j in 0..n {
                c[i * n + j] = (0..n).map(|p| a[i * n + p] * b[p * n + j]).sum();
            }
        }
        assert!(check_gemm(&a, &b, &c, n, 1, 1e-4).ok);
        c[63] = f32::NAN;
        let check = check_gemm(&a, &b, &c, n, 1, 1e-4);
        assert!(!check.ok && check.rel_error.is_nan());
    }

    #[test]
    fn reduce_reference() {
        let mut x = vec![0f32; 100_000];
        Rng::new(11).fill(&mut x, 0.0, 1.0);
        let exact: f64 = x.iter().map(|&v| f64::from(v)).sum();
        assert!(check_reduce(&x, exact as f32).ok);
        assert!(!check_reduce(&x, (exact * 1.001) as f32).ok);
    }

    #[test]
    fn conv_reference_handles_padding() {
        // One image of ones, weights of ones, bias 0.5: an interior output sums 3 x 5 x 5 ones,
        // a corner only 3 x 3 x 3.
        let (cin, cout, side, ks) = CONV;
        let input = vec![1f32; (cin * side * side) as usize];
        let weight = vec![1f32; (cout * cin * ks * ks) as usize];
        let bias = vec![0.5f32; cout as usize];
        let interior = (10 * side + 10) as usize;
        assert_eq!(conv_output(&input, &weight, &bias, interior), 75.5);
        assert_eq!(conv_output(&input, &weight, &bias, 0), 27.5);
        let output: Vec<f32> = (0..(cout * side * side) as usize)
            .map(|i| conv_output(&input, &weight, &bias, i) as f32)
            .collect();
        assert!(check_conv2d(&input, &weight, &bias, &output, 1).ok);
    }
}
