//! Parsing values out of one in-memory slice without building a tree (see the module above).

use std::borrow::Cow;

/// A scalar or container found by [`Parser::value`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// A string (unescaped).
    Str(Cow<'a, str>),
    /// A number, as its text.
    Num(&'a [u8]),
    /// `true` or `false`.
    Bool(bool),
    /// `null`, or a lenient token read as null (`N/A`, `NaN`, `Infinity`).
    Null,
    /// An object, as its raw text.
    Object(&'a [u8]),
    /// An array, as its raw text.
    Array(&'a [u8]),
}

/// A syntax error at a byte offset of the parsed slice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Offset in the slice.
    pub offset: usize,
    /// What was expected.
    pub detail: &'static str,
}

/// The bytes a number is read up to: digits, signs, the point and the exponent.
static NUMBER_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b as u8, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E');
        b += 1;
    }
    table
};

/// A pull parser over one in-memory slice.
pub struct Parser<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Lenient tokens (`N/A`, `NaN`, ...) read as null so far.
    pub lenient_tokens: u64,
    /// Strings with invalid UTF-8 repaired so far.
    pub repaired_strings: u64,
    /// Strings holding raw control characters (invalid JSON, kept as they are) so far.
    pub control_strings: u64,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            lenient_tokens: 0,
            repaired_strings: 0,
            control_strings: 0,
        }
    }

    /// Current offset.
    pub fn offset(&self) -> usize {
        self.pos
    }

    /// A parser of the same slice at the same offset, with its own counts (for reading a value
    /// in place whose counts are kept apart).
    pub fn fork(&self) -> Self {
        Self::new(self.buf).at(self.pos)
    }

    fn at(mut self, pos: usize) -> Self {
        self.pos = pos;
        self
    }

    /// `buf[start..end]` of the parsed slice (clamped to it).
    pub fn text(&self, start: usize, end: usize) -> &'a [u8] {
        let end = end.min(self.buf.len());
        &self.buf[start.min(end)..end]
    }

    /// Moves to `offset` (clamped to the end).
    pub fn seek(&mut self, offset: usize) {
        self.pos = offset.min(self.buf.len());
    }

    fn err<T>(&self, detail: &'static str) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            offset: self.pos,
            detail,
        })
    }

    /// Skips whitespace and returns the next byte.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        // Most often no whitespace at all: every JSON whitespace byte is at most b' '.
        match self.buf.get(self.pos) {
            Some(&b) if b > b' ' => Some(b),
            _ => self.peek_past_whitespace(),
        }
    }

    fn peek_past_whitespace(&mut self) -> Option<u8> {
        while let Some(&b) = self.buf.get(self.pos) {
            if b.is_ascii_whitespace() {
                self.pos += 1;
            } else {
                return Some(b);
            }
        }
        None
    }

    /// Consumes `b` if it is next.
    pub fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Skips whitespace and any number of commas (lenient element separator).
    pub fn skip_separators(&mut self) {
        while matches!(self.peek(), Some(b',')) {
            self.pos += 1;
        }
    }

    /// Parses a string at the current position, returning its raw bytes (between the quotes)
    /// and whether it contains escapes. Inlined, as [`Parser::string`] is, into the callers:
    /// returned through memory, the pair and the string made of it were stored and read back in
    /// pieces the processor could not forward from store to load (a stall of about 4% of the
    /// CPU time of a Kineto trace).
    #[inline(always)]
    fn raw_string(&mut self) -> Result<(&'a [u8], bool), SyntaxError> {
        if !self.eat(b'"') {
            return self.err("expected a string");
        }
        let start = self.pos;
        let mut escaped = false;
        let mut i = start;
        loop {
            match super::find::find2(b'"', b'\\', &self.buf[i..]) {
                None => {
                    self.pos = self.buf.len();
                    return self.err("unterminated string");
                }
                Some(k) => {
                    i += k;
                    if self.buf[i] == b'\\' {
                        escaped = true;
                        i += 2;
                        if i > self.buf.len() {
                            self.pos = self.buf.len();
                            return self.err("unterminated string");
                        }
                    } else {
                        self.pos = i + 1;
                        return Ok((&self.buf[start..i], escaped));
                    }
                }
            }
        }
    }

    /// Parses a string key or value, unescaping when needed.
    #[inline(always)]
    pub fn string(&mut self) -> Result<Cow<'a, str>, SyntaxError> {
        let (raw, escaped) = self.raw_string()?;
        Ok(self.decode(raw, escaped))
    }

    /// Parses an object key and the following colon; returns the raw key bytes (keys with
    /// escapes are unescaped into an owned string).
    pub fn key(&mut self) -> Result<Cow<'a, [u8]>, SyntaxError> {
        let (raw, escaped) = self.raw_string()?;
        if !self.eat(b':') {
            return self.err("expected ':' after an object key");
        }
        if escaped {
            Ok(Cow::Owned(self.decode(raw, true).into_owned().into_bytes()))
        } else {
            Ok(Cow::Borrowed(raw))
        }
    }

    /// The text of a string's raw bytes. Inlined for the common case (printable ASCII without
    /// escapes, borrowed as it is), so that the result is built in registers where it is used:
    /// returned from a call, it went through the stack and stalled the load that read it back
    /// (2% of the CPU time of a Kineto trace).
    #[inline(always)]
    fn decode(&mut self, raw: &'a [u8], escaped: bool) -> Cow<'a, str> {
        if !escaped && super::find::printable_ascii(raw) {
            #[allow(unsafe_code)]
            // SAFETY: every byte is ASCII (below 0x80), and ASCII is valid UTF-8.
            return Cow::Borrowed(unsafe { std::str::from_utf8_unchecked(raw) });
        }
        self.decode_rest(raw, escaped)
    }

    /// [`Parser::decode`] for strings with escapes, control characters or bytes from 0x80 up.
    #[inline(never)]
    fn decode_rest(&mut self, raw: &'a [u8], escaped: bool) -> Cow<'a, str> {
        if raw.iter().any(|&b| b < 0x20) {
            self.control_strings += 1;
        }
        if !escaped {
            return match std::str::from_utf8(raw) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => {
                    self.repaired_strings += 1;
                    Cow::Owned(String::from_utf8_lossy(raw).into_owned())
                }
            };
        }
        let mut out: Vec<u8> = Vec::with_capacity(raw.len());
        let mut i = 0;
        while i < raw.len() {
            let b = raw[i];
            if b != b'\\' || i + 1 >= raw.len() {
                out.push(b);
                i += 1;
                continue;
            }
            let e = raw[i + 1];
            i += 2;
            match e {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'u' => {
                    let mut code = hex4(raw.get(i..i + 4));
                    i += 4;
                    if let Some(hi @ 0xD800..=0xDBFF) = code
                        && raw.get(i..i + 2) == Some(b"\\u")
                        && let Some(lo @ 0xDC00..=0xDFFF) = hex4(raw.get(i + 2..i + 6))
                    {
                        code = Some(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
                        i += 6;
                    }
                    let c = code.and_then(char::from_u32).unwrap_or('\u{FFFD}');
                    let mut tmp = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
                }
                other => out.push(other),
            }
        }
        match String::from_utf8(out) {
            Ok(s) => Cow::Owned(s),
            Err(e) => {
                self.repaired_strings += 1;
                Cow::Owned(String::from_utf8_lossy(e.as_bytes()).into_owned())
            }
        }
    }

    /// The number at the parser when it starts with a digit, as its text (what [`Parser::value`]
    /// gives as [`Value::Num`] there), without building a [`Value`]: most numbers of a trace
    /// (`ts`, `dur`, `pid`) are read this way, and a `Value` returned through the call stalled
    /// on its copy. `None`, with nothing consumed, for anything else.
    #[inline]
    pub fn digit_number(&mut self) -> Option<&'a [u8]> {
        if !self.peek()?.is_ascii_digit() {
            return None;
        }
        Some(self.number_bytes())
    }

    /// The run of number bytes (`0-9 + - . e E`) at the parser, consumed.
    #[inline]
    fn number_bytes(&mut self) -> &'a [u8] {
        let start = self.pos;
        let len = self.buf[start..]
            .iter()
            .position(|&b| !NUMBER_BYTE[usize::from(b)])
            .unwrap_or(self.buf.len() - start);
        self.pos = start + len;
        &self.buf[start..self.pos]
    }

    /// Parses any value.
    pub fn value(&mut self) -> Result<Value<'a>, SyntaxError> {
        match self.peek() {
            None => self.err("expected a value"),
            Some(b'"') => Ok(Value::Str(self.string()?)),
            Some(b'{' | b'[') => {
                let start = self.pos;
                let open = self.buf[start];
                self.skip_container()?;
                let text = &self.buf[start..self.pos];
                Ok(if open == b'{' {
                    Value::Object(text)
                } else {
                    Value::Array(text)
                })
            }
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9' | b'+' | b'.') => {
                let text = self.number_bytes();
                if text == b"-" {
                    // `-Infinity`
                    if self.buf[self.pos..].starts_with(b"Infinity") {
                        self.pos += 8;
                        self.lenient_tokens += 1;
                        return Ok(Value::Null);
                    }
                    return self.err("invalid number");
                }
                Ok(Value::Num(text))
            }
            Some(_) => {
                for token in [&b"N/A"[..], b"NaN", b"Infinity", b"undefined", b"None"] {
                    if self.buf[self.pos..].starts_with(token) {
                        self.pos += token.len();
                        self.lenient_tokens += 1;
                        return Ok(Value::Null);
                    }
                }
                self.err("expected a value")
            }
        }
    }

    fn literal(&mut self, word: &[u8], v: Value<'a>) -> Result<Value<'a>, SyntaxError> {
        if self.buf[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(v)
        } else {
            self.err("invalid literal")
        }
    }

    /// Skips an object or array, honouring strings.
    fn skip_container(&mut self) -> Result<(), SyntaxError> {
        match super::find::container_end(&self.buf[self.pos..]) {
            Some(len) => {
                self.pos += len;
                Ok(())
            }
            None => {
                self.pos = self.buf.len();
                self.err("unterminated object or array")
            }
        }
    }

    /// Skips any value.
    pub fn skip_value(&mut self) -> Result<(), SyntaxError> {
        self.value().map(|_| ())
    }

    /// Iterates the members of an object: calls `f(parser, key)` for each key with the parser
    /// positioned at the value, which `f` must consume. Tolerates trailing commas.
    pub fn object(
        &mut self,
        mut f: impl FnMut(&mut Self, &[u8]) -> Result<(), SyntaxError>,
    ) -> Result<(), SyntaxError> {
        if !self.eat(b'{') {
            return self.err("expected an object");
        }
        loop {
            self.skip_separators();
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'"') => {
                    let key = self.key()?;
                    f(self, &key)?;
                }
                None => return self.err("unterminated object"),
                Some(_) => return self.err("expected a quoted key"),
            }
        }
    }

    /// Iterates the elements of an array: `f` must consume each element.
    pub fn array(
        &mut self,
        mut f: impl FnMut(&mut Self) -> Result<(), SyntaxError>,
    ) -> Result<(), SyntaxError> {
        if !self.eat(b'[') {
            return self.err("expected an array");
        }
        loop {
            self.skip_separators();
            match self.peek() {
                Some(b']') => {
                    self.pos += 1;
                    return Ok(());
                }
                None => return self.err("unterminated array"),
                Some(_) => f(self)?,
            }
        }
    }

    /// True when only whitespace remains.
    pub fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }
}

fn hex4(b: Option<&[u8]>) -> Option<u32> {
    let b = b?;
    let s = std::str::from_utf8(b).ok()?;
    u32::from_str_radix(s, 16).ok()
}

/// Parses an integer from number text (`12`, `12.0`, `1e3`); `None` if it is not integral or
/// does not fit.
pub fn int_from_text(text: &[u8]) -> Option<i64> {
    let mut v: i64 = 0;
    let mut neg = false;
    let mut i = 0;
    if text.first() == Some(&b'-') {
        neg = true;
        i = 1;
    }
    if i == text.len() {
        return None;
    }
    let digits_end = text[i..]
        .iter()
        .position(|b| !b.is_ascii_digit())
        .map_or(text.len(), |k| i + k);
    if digits_end == text.len() {
        for &b in &text[i..] {
            v = v.checked_mul(10)?.checked_add(i64::from(b - b'0'))?;
        }
        return Some(if neg { -v } else { v });
    }
    crate::time::parse_decimal_scaled(text, 0).filter(|_| {
        // Accept only if the value was integral.
        let f: f64 = std::str::from_utf8(text)
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0.5);
        f.fract() == 0.0
    })
}

/// Parses a float from number text.
pub fn float_from_text(text: &[u8]) -> Option<f64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}
