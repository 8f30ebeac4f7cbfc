//! Time values: exact conversion of decimal text to integer nanoseconds, time ranges, and
//! human-readable formatting of durations.

/// A half-open time range `[start_ns, end_ns)` in profile nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeRange {
    /// First nanosecond of the range.
    pub start_ns: i64,
    /// One past the last nanosecond of the range.
    pub end_ns: i64,
}

impl TimeRange {
    /// The range that contains every time.
    pub const ALL: Self = Self {
        start_ns: i64::MIN,
        end_ns: i64::MAX,
    };

    /// A range from `start_ns` to `end_ns` (swapped if given in the wrong order).
    pub fn new(start_ns: i64, end_ns: i64) -> Self {
        Self {
            start_ns: start_ns.min(end_ns),
            end_ns: start_ns.max(end_ns),
        }
    }

    /// Length of the range in nanoseconds.
    pub fn duration_ns(&self) -> i64 {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// True if this is [`TimeRange::ALL`].
    pub fn is_all(&self) -> bool {
        *self == Self::ALL
    }

    /// The part of `[start_ns, start_ns + dur_ns)` that lies in the range, in nanoseconds.
    /// A zero-length event inside the range counts as 0 but is still "in" it (see
    /// [`TimeRange::contains_event`]).
    pub fn overlap_ns(&self, start_ns: i64, dur_ns: i64) -> i64 {
        let end_ns = start_ns.saturating_add(dur_ns);
        (end_ns.min(self.end_ns) - start_ns.max(self.start_ns)).max(0)
    }

    /// True if an event `[start_ns, start_ns + dur_ns)` touches the range. Zero-length events
    /// count when their start lies in the range.
    pub fn contains_event(&self, start_ns: i64, dur_ns: i64) -> bool {
        if self.is_all() {
            return true;
        }
        if dur_ns <= 0 {
            return start_ns >= self.start_ns && start_ns < self.end_ns;
        }
        start_ns < self.end_ns && start_ns.saturating_add(dur_ns) > self.start_ns
    }
}

/// Powers of ten that fit in an `i128`, for exact decimal scaling.
fn pow10_i128(exp: u32) -> Option<i128> {
    10i128.checked_pow(exp)
}

/// Parses a JSON number (as text) and scales it by `10^scale`, rounding to the nearest integer
/// (halves away from zero), without going through floating point.
///
/// `parse_decimal_scaled(b"1712195495519689.047", 3)` is `Some(1712195495519689047)`: microseconds
/// with three decimals become exact nanoseconds. Returns `None` for text that is not a number or
/// a result outside `i64`.
pub fn parse_decimal_scaled(text: &[u8], scale: i32) -> Option<i64> {
    plain_decimal_scaled(text, scale).or_else(|| exact_decimal_scaled(text, scale))
}

/// The common case of [`parse_decimal_scaled`] in 64-bit arithmetic: `[-]digits[.digits]` with
/// at most `scale` decimals (0 to 9) and a result below 10^18, so nothing is rounded and
/// nothing can overflow. `None` for anything else, which [`exact_decimal_scaled`] reads.
fn plain_decimal_scaled(text: &[u8], scale: i32) -> Option<i64> {
    let scale = usize::try_from(scale).ok().filter(|&s| s <= 9)?;
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    // At most 19 digits (and a point): the value read below stays under 10^19 < u64::MAX.
    if digits.len() > 19 {
        return None;
    }
    let mut value: u64 = 0;
    let mut i = 0;
    while let Some(&b) = digits.get(i).filter(|b| b.is_ascii_digit()) {
        value = value * 10 + u64::from(b - b'0');
        i += 1;
    }
    let whole_digits = i;
    let mut decimals = 0;
    if digits.get(i) == Some(&b'.') {
        i += 1;
        while let Some(&b) = digits.get(i).filter(|b| b.is_ascii_digit()) {
            value = value * 10 + u64::from(b - b'0');
            i += 1;
            decimals += 1;
        }
        if decimals == 0 {
            return None;
        }
    }
    if whole_digits == 0 || i != digits.len() || decimals > scale || whole_digits + scale > 18 {
        return None;
    }
    let value = i64::try_from(value * 10u64.pow(u32::try_from(scale - decimals).ok()?)).ok()?;
    Some(if negative { -value } else { value })
}

/// [`parse_decimal_scaled`] for any JSON number, in 128-bit arithmetic.
fn exact_decimal_scaled(text: &[u8], scale: i32) -> Option<i64> {
    let mut i = 0;
    let negative = match text.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let mut mantissa: i128 = 0;
    let mut digits = 0u32;
    let mut exp10: i32 = scale;
    let mut seen_digit = false;
    let mut dropped_exp = 0i32;
    while i < text.len() && text[i].is_ascii_digit() {
        seen_digit = true;
        if digits < 36 {
            mantissa = mantissa * 10 + i128::from(text[i] - b'0');
            if mantissa != 0 {
                digits += 1;
            }
        } else {
            dropped_exp += 1;
        }
        i += 1;
    }
    if i < text.len() && text[i] == b'.' {
        i += 1;
        while i < text.len() && text[i].is_ascii_digit() {
            seen_digit = true;
            if digits < 36 {
                mantissa = mantissa * 10 + i128::from(text[i] - b'0');
                if mantissa != 0 {
                    digits += 1;
                }
                exp10 -= 1;
            }
            i += 1;
        }
    }
    if !seen_digit {
        return None;
    }
    exp10 += dropped_exp;
    if i < text.len() && (text[i] == b'e' || text[i] == b'E') {
        i += 1;
        let mut exp_negative = false;
        if i < text.len() && (text[i] == b'+' || text[i] == b'-') {
            exp_negative = text[i] == b'-';
            i += 1;
        }
        let mut e: i32 = 0;
        let mut seen = false;
        while i < text.len() && text[i].is_ascii_digit() {
            seen = true;
            e = e
                .saturating_mul(10)
                .saturating_add(i32::from(text[i] - b'0'));
            i += 1;
        }
        if !seen {
            return None;
        }
        exp10 = exp10.saturating_add(if exp_negative { -e } else { e });
    }
    if i != text.len() {
        return None;
    }
    let magnitude: i128 = if mantissa == 0 {
        0
    } else if exp10 >= 0 {
        mantissa.checked_mul(pow10_i128(u32::try_from(exp10).ok()?)?)?
    } else {
        // Dividing by more than 10^38 leaves nothing.
        let Some(divisor) = pow10_i128(exp10.unsigned_abs()) else {
            return Some(0);
        };
        let q = mantissa / divisor;
        let r = mantissa % divisor;
        if r * 2 >= divisor { q + 1 } else { q }
    };
    let value = if negative { -magnitude } else { magnitude };
    i64::try_from(value).ok()
}

/// Formats a duration the way nvprof does, 5 significant digits with the unit chosen per value,
/// but with microseconds written `µs` (`812ns`, `1.1840µs`, `305.08ms`, `1.05294s`): one spelling
/// in the viewer, the reports and the command line's tables.
pub fn format_duration_ns(ns: i64) -> String {
    let abs = ns.unsigned_abs();
    let sign = if ns < 0 { "-" } else { "" };
    if abs < 1_000 {
        return format!("{sign}{abs}ns");
    }
    #[allow(clippy::cast_precision_loss)]
    let (value, unit) = if abs < 1_000_000 {
        (abs as f64 / 1e3, "µs")
    } else if abs < 1_000_000_000 {
        (abs as f64 / 1e6, "ms")
    } else {
        (abs as f64 / 1e9, "s")
    };
    let decimals = if value >= 100.0 {
        2
    } else if value >= 10.0 {
        3
    } else {
        4
    };
    format!("{sign}{value:.decimals$}{unit}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_short_path_reads_what_the_exact_one_reads() {
        // Every shape of number text around the short path's limits: signs, points, exponents,
        // leading zeros, too many decimals (rounded by the exact path), 18 and 19 digits.
        let mut texts: Vec<String> = Vec::new();
        for whole in [
            "",
            "0",
            "00",
            "7",
            "123",
            "999999999999999",
            "4475950336227",
            "12345678901234567",
            "999999999999999999",
            "9999999999999999999",
            "99999999999999999999",
        ] {
            for frac in [
                None,
                Some(""),
                Some("5"),
                Some("223"),
                Some("000"),
                Some("4999"),
                Some("5000"),
                Some("123456789"),
            ] {
                for sign in ["", "-", "+"] {
                    for exp in ["", "e3", "E-2"] {
                        let mut t = format!("{sign}{whole}");
                        if let Some(f) = frac {
                            t.push('.');
                            t.push_str(f);
                        }
                        t.push_str(exp);
                        texts.push(t);
                    }
                }
            }
        }
        texts.extend(
            [
                "-", ".", "1..2", "1.2.3", "--1", "1-", " 1", "1 ", "0x10", "",
            ]
            .map(String::from),
        );
        for t in &texts {
            for scale in [0, 3, 6, 9, 10, -3] {
                let fast = plain_decimal_scaled(t.as_bytes(), scale);
                let exact = exact_decimal_scaled(t.as_bytes(), scale);
                if fast.is_some() {
                    assert_eq!(fast, exact, "{t:?} scale {scale}");
                }
                assert_eq!(
                    parse_decimal_scaled(t.as_bytes(), scale),
                    exact,
                    "{t:?} scale {scale}"
                );
            }
        }
        // The common cases do take the short path.
        assert_eq!(
            plain_decimal_scaled(b"4475950336227.223", 3),
            Some(4_475_950_336_227_223)
        );
        assert_eq!(plain_decimal_scaled(b"-119.39", 3), Some(-119_390));
        assert_eq!(plain_decimal_scaled(b"42", 3), Some(42_000));
    }

    #[test]
    fn microsecond_text_becomes_exact_nanoseconds() {
        assert_eq!(
            parse_decimal_scaled(b"1712195495519689.047", 3),
            Some(1_712_195_495_519_689_047)
        );
        assert_eq!(
            parse_decimal_scaled(b"4458676388068.751", 3),
            Some(4_458_676_388_068_751)
        );
        assert_eq!(parse_decimal_scaled(b"22.51", 3), Some(22_510));
        assert_eq!(parse_decimal_scaled(b"68.0", 3), Some(68_000));
        assert_eq!(
            parse_decimal_scaled(b"1623142623460016", 3),
            Some(1_623_142_623_460_016_000)
        );
        assert_eq!(parse_decimal_scaled(b"0", 3), Some(0));
        assert_eq!(parse_decimal_scaled(b"-1.5", 3), Some(-1500));
    }

    #[test]
    fn extra_digits_round_to_nearest_nanosecond() {
        assert_eq!(parse_decimal_scaled(b"1.2345", 3), Some(1235));
        assert_eq!(parse_decimal_scaled(b"1.2344", 3), Some(1234));
        assert_eq!(parse_decimal_scaled(b"0.0004", 3), Some(0));
        assert_eq!(parse_decimal_scaled(b"-1.2345", 3), Some(-1235));
    }

    #[test]
    fn exponents_and_garbage() {
        assert_eq!(parse_decimal_scaled(b"1.5e3", 3), Some(1_500_000));
        assert_eq!(parse_decimal_scaled(b"15E-1", 3), Some(1500));
        assert_eq!(parse_decimal_scaled(b"", 3), None);
        assert_eq!(parse_decimal_scaled(b"-", 3), None);
        assert_eq!(parse_decimal_scaled(b"1.2.3", 3), None);
        assert_eq!(parse_decimal_scaled(b"abc", 3), None);
        assert_eq!(parse_decimal_scaled(b"1e", 3), None);
        assert_eq!(parse_decimal_scaled(b"99999999999999999999999", 3), None);
    }

    #[test]
    fn durations_format_like_nvprof() {
        assert_eq!(format_duration_ns(812), "812ns");
        assert_eq!(format_duration_ns(1_184), "1.1840µs");
        assert_eq!(format_duration_ns(305_080_000), "305.08ms");
        assert_eq!(format_duration_ns(50_846), "50.846µs");
        assert_eq!(format_duration_ns(1_052_940_000), "1.0529s");
    }

    #[test]
    fn ranges_clip_events() {
        let r = TimeRange::new(100, 200);
        assert_eq!(r.overlap_ns(50, 100), 50);
        assert_eq!(r.overlap_ns(150, 100), 50);
        assert_eq!(r.overlap_ns(0, 10), 0);
        assert!(r.contains_event(150, 0));
        assert!(!r.contains_event(200, 0));
        assert!(!r.contains_event(0, 100));
    }
}
