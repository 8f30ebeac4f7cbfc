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
/// [`super::split::ValueScanner`] in one pass: each word of eight bytes marks quotes,
/// backslashes and the container's own brackets at once, and only the marked bytes are looked
/// at, in order (the other kind of bracket is balanced inside and does not matter).
pub(crate) fn container_end(hay: &[u8]) -> Option<usize> {
    let (open, close) = match hay.first()? {
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => return None,
    };
    let mut depth = 1u32;
    let mut in_string = false;
    // A byte escaped by a backslash: skipped wherever it falls.
    let mut skip_to = 0usize;
    let mut at = 1;
    let mut look = |pos: usize, depth: &mut u32, in_string: &mut bool| -> bool {
        if pos < skip_to {
            return false;
        }
        let b = hay[pos];
        if *in_string {
            if b == b'\\' {
                skip_to = pos + 2;
            } else if b == b'"' {
                *in_string = false;
            }
        } else if b == b'"' {
            *in_string = true;
        } else if b == open {
            *depth += 1;
        } else if b == close {
            *depth -= 1;
            return *depth == 0;
        }
        false
    };
    while let Some(word) = word_at(hay, at) {
        let mut m =
            matches(word, b'"') | matches(word, b'\\') | matches(word, open) | matches(word, close);
        while m != 0 {
            let pos = at + (m.trailing_zeros() / 8) as usize;
            if look(pos, &mut depth, &mut in_string) {
                return Some(pos + 1);
            }
            m &= m - 1;
        }
        at += 8;
    }
    for pos in at..hay.len() {
        if look(pos, &mut depth, &mut in_string) {
            return Some(pos + 1);
        }
    }
    None
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
