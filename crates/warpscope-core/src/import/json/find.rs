//! Finding the next of two or three bytes: JSON's strings and the gaps between its quotes and
//! brackets are mostly a few bytes long, where calling into `memchr` costs more than the search.
//! These look at the first [`NEAR`] bytes eight at a time in plain integer arithmetic (SWAR)
//! and hand anything further to `memchr`; the answer is the same as `memchr2`/`memchr3`.
//! [`printable_ascii`] checks a string's bytes the same way, and [`container_end`] finds where
//! an object or array ends.

/// How far the word-at-a-time search looks before handing over to `memchr`.
const NEAR: usize = 64;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` equal to `b`, exact up to the lowest such byte (a borrow
/// can mark bytes above it, never below, so `trailing_zeros` finds the first match).
#[inline(always)]
fn matches(word: u64, b: u8) -> u64 {
    let x = word ^ (ONES * u64::from(b));
    x.wrapping_sub(ONES) & !x & HIGHS
}

#[inline(always)]
fn word_at(hay: &[u8], at: usize) -> Option<u64> {
    let bytes: [u8; 8] = hay.get(at..at + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(bytes))
}

/// The first offset in `hay` holding `a` or `b` (as `memchr::memchr2`).
#[inline]
pub(crate) fn find2(a: u8, b: u8, hay: &[u8]) -> Option<usize> {
    near([a, b], hay).unwrap_or_else(|at| memchr::memchr2(a, b, &hay[at..]).map(|k| at + k))
}

/// The first offset in `hay` holding `a`, `b` or `c` (as `memchr::memchr3`).
#[inline]
pub(crate) fn find3(a: u8, b: u8, c: u8, hay: &[u8]) -> Option<usize> {
    near([a, b, c], hay).unwrap_or_else(|at| memchr::memchr3(a, b, c, &hay[at..]).map(|k| at + k))
}

/// The first offset in the first [`NEAR`] bytes of `hay` holding one of `set`, looked for
/// eight bytes at a time: `Ok` with the answer when it is found there or `hay` ends there,
/// else `Err` with the offset from which `memchr` takes over.
#[inline(always)]
fn near<const N: usize>(set: [u8; N], hay: &[u8]) -> Result<Option<usize>, usize> {
    let mut at = 0;
    while at < NEAR {
        let Some(word) = word_at(hay, at) else {
            return Ok(hay[at..]
                .iter()
                .position(|x| set.contains(x))
                .map(|k| at + k));
        };
        let m = set.iter().fold(0, |m, &b| m | matches(word, b));
        if m != 0 {
            return Ok(Some(at + (m.trailing_zeros() / 8) as usize));
        }
        at += 8;
    }
    Err(at)
}

/// The offset just past the object or array that opens at `hay[0]` (`{` or `[`), honouring
/// strings and their escapes; `None` if it does not close within `hay`. The same answer as
/// [`super::split::ValueScanner`] in one pass, 64 bytes at a time ([`CHUNK`]):
/// - bit masks of the chunk's quotes, backslashes and the container's own brackets ([`marks`];
///   the other kind of bracket is balanced inside and does not matter);
/// - without a backslash, the bytes inside strings are the running XOR of the quote bits
///   ([`prefix_xor`]), and the brackets outside them are counted: a chunk with fewer closing
///   brackets than the depth cannot end the container, and is passed by adding the counts;
/// - otherwise, and in the last bytes short of a chunk, the marked bytes are looked at one by
///   one, in order ([`Scan::look`]).
pub(crate) fn container_end(hay: &[u8]) -> Option<usize> {
    let (open, close) = match hay.first()? {
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let mut scan = Scan {
        open,
        close,
        depth: 1,
        in_string: false,
        skip_to: 0,
    };
    let mut at = 1;
    while let Some(chunk) = hay.get(at..at + CHUNK) {
        let m = marks(chunk, open, close);
        if m.backslash == 0 && scan.skip_to <= at {
            let mut inside = prefix_xor(m.quote);
            if scan.in_string {
                inside = !inside;
            }
            scan.in_string = inside >> 63 != 0;
            let opens = m.open & !inside;
            let closes = m.close & !inside;
            let closing = closes.count_ones();
            if closing < scan.depth {
                scan.depth = scan.depth + opens.count_ones() - closing;
            } else {
                let mut bits = opens | closes;
                while bits != 0 {
                    let i = bits.trailing_zeros();
                    if opens >> i & 1 != 0 {
                        scan.depth += 1;
                    } else {
                        scan.depth -= 1;
                        if scan.depth == 0 {
                            return Some(at + i as usize + 1);
                        }
                    }
                    bits &= bits - 1;
                }
            }
        } else {
            let mut bits = m.quote | m.backslash | m.open | m.close;
            while bits != 0 {
                let pos = at + bits.trailing_zeros() as usize;
                if scan.look(hay[pos], pos) {
                    return Some(pos + 1);
                }
                bits &= bits - 1;
            }
        }
        at += CHUNK;
    }
    // The last bytes: eight at a time, then one by one.
    while let Some(word) = word_at(hay, at) {
        let mut m =
            matches(word, b'"') | matches(word, b'\\') | matches(word, open) | matches(word, close);
        while m != 0 {
            let pos = at + (m.trailing_zeros() / 8) as usize;
            if scan.look(hay[pos], pos) {
                return Some(pos + 1);
            }
            m &= m - 1;
        }
        at += 8;
    }
    (at..hay.len())
        .find(|&pos| scan.look(hay[pos], pos))
        .map(|pos| pos + 1)
}

/// How many bytes [`container_end`] looks at at once: one bit of a `u64` each.
const CHUNK: usize = 64;

/// Where [`container_end`] is in the container.
struct Scan {
    open: u8,
    close: u8,
    /// Brackets open, the container's own included.
    depth: u32,
    in_string: bool,
    /// A byte escaped by a backslash is skipped wherever it falls: bytes before this offset
    /// were seen.
    skip_to: usize,
}

impl Scan {
    /// Takes in `b`, the byte at `pos` (a quote, a backslash or a bracket; any other byte
    /// changes nothing). True when it closes the container.
    #[inline(always)]
    fn look(&mut self, b: u8, pos: usize) -> bool {
        if pos < self.skip_to {
            return false;
        }
        if self.in_string {
            if b == b'\\' {
                self.skip_to = pos + 2;
            } else if b == b'"' {
                self.in_string = false;
            }
        } else if b == b'"' {
            self.in_string = true;
        } else if b == self.open {
            self.depth += 1;
        } else if b == self.close {
            self.depth -= 1;
            return self.depth == 0;
        }
        false
    }
}

/// Bit `i` set where byte `i` of a chunk is a quote, a backslash, `open` or `close`.
#[derive(Debug, PartialEq, Eq)]
struct Marks {
    quote: u64,
    backslash: u64,
    open: u64,
    close: u64,
}

impl From<[u64; 4]> for Marks {
    /// The marks of quotes, backslashes, `open` and `close`, in that order.
    fn from([quote, backslash, open, close]: [u64; 4]) -> Self {
        Marks {
            quote,
            backslash,
            open,
            close,
        }
    }
}

/// The [`Marks`] of `chunk` ([`CHUNK`] bytes).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn marks(chunk: &[u8], open: u8, close: u8) -> Marks {
    #[allow(unsafe_code)]
    // SAFETY: SSE2 is part of every x86-64 processor (the baseline the target is built for).
    unsafe {
        marks_sse2(chunk, open, close)
    }
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn marks(chunk: &[u8], open: u8, close: u8) -> Marks {
    marks_words(chunk, open, close)
}

/// [`marks`] sixteen bytes at a time with SSE2 compares.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
fn marks_sse2(chunk: &[u8], open: u8, close: u8) -> Marks {
    use std::arch::x86_64::{_mm_cmpeq_epi8, _mm_movemask_epi8, _mm_set_epi64x, _mm_set1_epi8};
    let targets = [b'"', b'\\', open, close].map(|b| _mm_set1_epi8(b as i8));
    let mut found = [0u64; 4];
    for (k, sixteen) in chunk.chunks_exact(16).enumerate() {
        let half = |i: usize| {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(&sixteen[i..i + 8]);
            i64::from_le_bytes(bytes)
        };
        let v = _mm_set_epi64x(half(8), half(0));
        for (bits, target) in found.iter_mut().zip(&targets) {
            let m = _mm_movemask_epi8(_mm_cmpeq_epi8(v, *target)) as u16;
            *bits |= u64::from(m) << (16 * k);
        }
    }
    Marks::from(found)
}

/// [`marks`] eight bytes at a time in plain integer arithmetic, for other processors.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
fn marks_words(chunk: &[u8], open: u8, close: u8) -> Marks {
    // The high bit of each byte of `word` equal to `b`, exactly (no borrow between bytes).
    let equal = |word: u64, b: u8| {
        let x = word ^ (ONES * u64::from(b));
        !(((x & !HIGHS) + !HIGHS) | x) & HIGHS
    };
    // The high bits of the eight bytes gathered into the low eight bits, in byte order.
    let gather = |high: u64| (high >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56;
    let mut found = [0u64; 4];
    for (k, eight) in chunk.chunks_exact(8).enumerate() {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(eight);
        let word = u64::from_le_bytes(bytes);
        for (bits, b) in found.iter_mut().zip([b'"', b'\\', open, close]) {
            *bits |= gather(equal(word, b)) << (8 * k);
        }
    }
    Marks::from(found)
}

/// Bit `i` of the result is the XOR of bits `0..=i` of `x`: with `x` the quotes of a chunk,
/// the bytes from an opening quote up to (not including) its closing one.
#[inline(always)]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// True when every byte of `bytes` is printable ASCII (0x20 to 0x7F): a string that is valid
/// UTF-8 and holds no control character, told in one pass of eight bytes at a time.
pub(crate) fn printable_ascii(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    // A byte below 0x20 borrows in the subtraction, one from 0x80 up has its high bit set;
    // bytes from 0x20 to 0x7F do neither. A borrow can only mark bytes above a byte that
    // fails anyway, so "any high bit" is exact.
    let fails = |w: u64| (w.wrapping_sub(ONES * 0x20) | w) & HIGHS != 0;
    for chunk in &mut words {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        if fails(u64::from_le_bytes(word)) {
            return false;
        }
    }
    words.remainder().iter().all(|&b| (0x20..0x80).contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_ascii_is_told_exactly_for_every_byte_at_every_place() {
        for len in 0..20 {
            for at in 0..len {
                for b in 0..=255u8 {
                    let mut s = vec![b'a'; len];
                    s[at] = b;
                    let expected = (0x20..0x80).contains(&b);
                    assert_eq!(
                        printable_ascii(&s),
                        expected,
                        "byte {b:#x} at {at} of {len}"
                    );
                }
            }
        }
        assert!(printable_ascii(b""));
        assert!(printable_ascii(
            b"void at::native::elementwise_kernel<128, 4>(int)"
        ));
    }

    #[test]
    fn finds_what_memchr_finds_at_every_distance_and_alignment() {
        // Every byte value as a neighbour (0x80 and 0xFF test the borrow, 0x00 the wrap),
        // targets at every offset up to past NEAR, haystacks of every length up to 150.
        let fill = [b'a', 0x00, 0x7F, 0x80, 0xFF, b'"' + 1, b'"' - 1];
        for &f in &fill {
            for len in 0..150 {
                for hit in (0..len).chain([usize::MAX]) {
                    let mut hay = vec![f; len];
                    if hit < len {
                        hay[hit] = b'"';
                    }
                    // A second candidate after the first must never be reported first.
                    if hit < len && hit + 3 < len {
                        hay[hit + 3] = b'\\';
                    }
                    assert_eq!(
                        find2(b'"', b'\\', &hay),
                        memchr::memchr2(b'"', b'\\', &hay),
                        "fill {f:#x} len {len} hit {hit}"
                    );
                    assert_eq!(
                        find3(b'"', b'{', b'}', &hay),
                        memchr::memchr3(b'"', b'{', b'}', &hay),
                        "fill {f:#x} len {len} hit {hit}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_byte_just_above_a_match_is_not_taken_for_one() {
        // 0x23 ('"' + 1) after a 0x22 borrows into the next byte in the subtraction.
        let hay = [0x21u8, 0x23, 0x22, 0x23, 0x5C];
        assert_eq!(find2(b'"', b'\\', &hay), Some(2));
        assert_eq!(find2(b'#', b'\\', &[0x22, 0x23]), Some(1));
    }

    /// Pseudo-random bytes (xorshift), the same on every run.
    fn noise(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    #[test]
    fn long_containers_end_where_the_value_scanner_says() {
        // Containers over a few chunks: strings, escapes and brackets falling on every side of
        // chunk boundaries, with the bytes that matter made frequent (a quote or bracket in
        // about one byte of four) or rare (long plain stretches, where chunks are counted).
        let alphabet = [b'{', b'}', b'[', b']', b'"', b'\\', b'a', b' ', b'x', b':'];
        let mut next = noise(0x9e37_79b9_7f4a_7c15);
        for case in 0..20_000 {
            let open = if case % 2 == 0 { b'{' } else { b'[' };
            let len = 1 + (next() % 400) as usize;
            let rare = case % 3 == 0;
            let mut hay = vec![open];
            for _ in 0..len {
                let r = next();
                let b = if rare && !r.is_multiple_of(16) {
                    b'a'
                } else {
                    alphabet[(r >> 8) as usize % alphabet.len()]
                };
                hay.push(b);
            }
            let pad = (next() % 9) as usize;
            let mut padded = vec![b' '; pad];
            padded.extend_from_slice(&hay);
            let expected = super::super::split::ValueScanner::default().feed(&padded, pad);
            assert_eq!(
                container_end(&hay).map(|e| pad + e),
                expected,
                "case {case}: {:?}",
                String::from_utf8_lossy(&hay)
            );
        }
    }

    #[test]
    fn containers_passed_chunk_by_chunk_end_where_they_close() {
        // Nested objects whose strings hold brackets and escaped quotes, closing far away: the
        // chunks without a backslash are passed by counting, the others byte by byte.
        let mut text = b"{".to_vec();
        for i in 0..200 {
            text.extend_from_slice(
                format!(r#""k{i}": {{"s": "}}]{{[", "e": "\"}}\\"}}, "#).as_bytes(),
            );
        }
        text.extend_from_slice(br#""last": [1, 2, {"x": "}"}]}"#);
        let end = text.len();
        text.extend_from_slice(br#", "after": {"y": 1}}"#);
        assert_eq!(container_end(&text), Some(end));
        let expected = super::super::split::ValueScanner::default().feed(&text, 0);
        assert_eq!(expected, Some(end));
        // Cut before its end, it does not close.
        assert_eq!(container_end(&text[..end - 1]), None);
    }

    #[test]
    fn an_escape_at_the_end_of_a_chunk_reaches_into_the_next() {
        // `{"s": "aaa\"}]", "t": "bbb"}` with the backslash at every offset around the first
        // two chunk boundaries: the escaped quote does not end the string, so the `}` after it
        // does not close the object (and the next chunk is whole, so it is read as a chunk).
        for k in 50..140 {
            let mut text = br#"{"s": ""#.to_vec();
            text.resize(k, b'a');
            text.extend_from_slice(br#"\"}]", "t": ""#);
            text.extend_from_slice(&[b'b'; 150]);
            text.extend_from_slice(br#""}"#);
            let end = text.len();
            text.extend_from_slice(b" }");
            assert_eq!(container_end(&text), Some(end), "backslash at {k}");
        }
    }

    #[test]
    fn the_chunk_marks_are_the_same_either_way() {
        let mut next = noise(42);
        for _ in 0..2_000 {
            let chunk: Vec<u8> = (0..CHUNK)
                .map(|_| {
                    let r = next();
                    // Mostly the bytes that matter and their neighbours (borrows), else any.
                    match r % 4 {
                        0 => [b'"', b'\\', b'{', b'}', b'[', b']'][(r >> 8) as usize % 6],
                        1 => [0x21, 0x23, 0x5B, 0x5D, 0x7A, 0x7C, 0x7E][(r >> 8) as usize % 7],
                        _ => (r >> 16) as u8,
                    }
                })
                .collect();
            let expected = |b: u8| {
                chunk
                    .iter()
                    .enumerate()
                    .fold(0u64, |m, (i, &x)| m | (u64::from(x == b) << i))
            };
            for (open, close) in [(b'{', b'}'), (b'[', b']')] {
                let exact = Marks {
                    quote: expected(b'"'),
                    backslash: expected(b'\\'),
                    open: expected(open),
                    close: expected(close),
                };
                assert_eq!(marks(&chunk, open, close), exact);
                assert_eq!(marks_words(&chunk, open, close), exact);
            }
        }
    }

    #[test]
    fn prefix_xor_marks_the_inside_of_strings() {
        // Quotes at 1 and 4, and at 62 (opened, not closed in this chunk).
        let quotes = (1 << 1) | (1 << 4) | (1 << 62);
        let inside = prefix_xor(quotes);
        assert_eq!(inside, 0b1110 | (0b11 << 62));
    }

    #[test]
    fn a_container_ends_where_the_value_scanner_says() {
        // Every short sequence over the bytes that matter (and two that do not), at every
        // alignment, against the streaming scanner the reader uses.
        let alphabet = [b'{', b'}', b'[', b']', b'"', b'\\', b'a', b' '];
        let mut cases: Vec<Vec<u8>> = vec![
            br#"{"a": "}", "b": [1, {"c": "\\\""}], "d": "\\"}"#.to_vec(),
            br#"[{"x": "]"}, "[", "\\]"]"#.to_vec(),
            br#"{"unterminated": "}"#.to_vec(),
        ];
        let mut seq = [0usize; 6];
        loop {
            for open in [b'{', b'['] {
                let mut case = vec![open];
                case.extend(seq.iter().map(|&k| alphabet[k]));
                cases.push(case);
            }
            // The next sequence, as a number in base 8.
            let mut i = 0;
            while i < seq.len() && seq[i] == alphabet.len() - 1 {
                seq[i] = 0;
                i += 1;
            }
            if i == seq.len() {
                break;
            }
            seq[i] += 1;
        }
        for case in &cases {
            for pad in 0..9 {
                let mut hay = vec![b' '; pad];
                hay.extend_from_slice(case);
                hay.extend_from_slice(b"  , \"x\": 1");
                let expected = super::super::split::ValueScanner::default().feed(&hay, pad);
                assert_eq!(
                    container_end(&hay[pad..]).map(|e| pad + e),
                    expected,
                    "{:?}",
                    String::from_utf8_lossy(case)
                );
            }
        }
    }
}
