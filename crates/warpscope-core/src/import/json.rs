//! A small, lenient JSON layer for big trace files.
//!
//! Two parts:
//! - [`split_stream`] runs on a reader thread: it walks the top level of a Chrome trace
//!   (object or bare array form), hands every top-level value other than `traceEvents` over
//!   whole, and cuts the `traceEvents` array into blocks of complete elements, so memory stays
//!   bounded by the block size whatever the file size.
//! - [`Parser`] parses values out of one in-memory block without building a tree: numbers stay
//!   text (so timestamps convert to nanoseconds exactly) and strings are borrowed unless they
//!   hold escapes.
//!
//! It accepts what real writers produce and strict parsers reject: trailing commas, empty
//! elements, raw control characters and invalid UTF-8 inside strings, and bare `N/A`, `NaN`,
//! `Infinity` tokens (read as null and counted).

use std::borrow::Cow;
use std::io::{self, Read};
use std::sync::mpsc::SyncSender;

/// Size of the blocks of events handed to the parser.
pub const BLOCK_BYTES: usize = 1 << 20;

/// What the reader thread sends.
#[derive(Debug)]
pub enum Chunk {
    /// A top-level key other than `traceEvents`, with its raw JSON value.
    TopLevel {
        /// The key.
        key: String,
        /// The value's JSON text.
        value: Vec<u8>,
    },
    /// Complete elements of the events array, separated by commas and whitespace.
    Events {
        /// The text.
        bytes: Vec<u8>,
        /// Line number (1-based) at which the block starts, for error messages.
        first_line: u64,
    },
    /// The end of the input.
    End(StreamEnd),
    /// The input could not be read, or its top level is not a trace.
    Error(SplitError),
}

/// How the input ended.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StreamEnd {
    /// True for the bare-array form.
    pub array_form: bool,
    /// True if an events array was found.
    pub found_events: bool,
    /// True if the input ended inside the events array or the top-level object.
    pub truncated: bool,
    /// True if the input ended inside the events array.
    pub truncated_in_events: bool,
    /// Decompressed bytes read.
    pub bytes: u64,
}

/// A failure of the reader thread.
#[derive(Debug)]
pub enum SplitError {
    /// Reading failed.
    Io(io::Error),
    /// The top level is not an object or array of the expected shape.
    Syntax {
        /// 1-based line.
        line: u64,
        /// What was expected.
        detail: String,
    },
}

struct Input<R> {
    reader: R,
    buf: Vec<u8>,
    pos: usize,
    eof: bool,
    /// Bytes dropped from the front of `buf` so far.
    dropped: u64,
    /// Newlines in the dropped bytes.
    dropped_lines: u64,
}

impl<R: Read> Input<R> {
    /// Reads more data, keeping `buf[keep_from..]`. Returns how far indices shifted (callers
    /// must move their offsets back by it) and whether more data arrived (false at the end).
    fn fill(&mut self, keep_from: usize) -> io::Result<(usize, bool)> {
        if self.eof {
            return Ok((0, false));
        }
        let shift = keep_from;
        if shift > 0 {
            self.dropped_lines += memchr::memchr_iter(b'\n', &self.buf[..shift]).count() as u64;
            self.dropped += shift as u64;
            self.buf.drain(..shift);
            self.pos -= shift;
        }
        let want = (BLOCK_BYTES * 2).max(self.buf.len()) as u64;
        let old_len = self.buf.len();
        loop {
            match (&mut self.reader).take(want).read_to_end(&mut self.buf) {
                Ok(0) => {
                    self.eof = true;
                    return Ok((shift, false));
                }
                Ok(_) => return Ok((shift, true)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.truncate(old_len);
                    return Err(e);
                }
            }
        }
    }

    fn line_at(&self, pos: usize) -> u64 {
        1 + self.dropped_lines
            + memchr::memchr_iter(b'\n', &self.buf[..pos.min(self.buf.len())]).count() as u64
    }

    /// Skips whitespace (and a UTF-8 BOM) and returns the next byte without consuming it.
    fn peek_nonws(&mut self, keep_from: &mut usize) -> io::Result<Option<u8>> {
        loop {
            while self.pos < self.buf.len() {
                let b = self.buf[self.pos];
                if b.is_ascii_whitespace() || b == 0xEF || b == 0xBB || b == 0xBF {
                    self.pos += 1;
                } else {
                    return Ok(Some(b));
                }
            }
            let (shift, more) = self.fill(*keep_from)?;
            *keep_from -= shift;
            if !more {
                return Ok(None);
            }
        }
    }

    /// Scans one complete JSON value starting at `pos`; returns its end, refilling as needed.
    /// `keep_from` is adjusted when the buffer moves. `None` means the input ended inside it.
    fn scan_value(&mut self, keep_from: &mut usize) -> io::Result<Option<usize>> {
        let mut start = self.pos;
        let mut scanner = ValueScanner::default();
        let mut at = start;
        loop {
            if let Some(end) = scanner.feed(&self.buf, at) {
                return Ok(Some(end));
            }
            at = self.buf.len();
            let keep = (*keep_from).min(start);
            let (shift, more) = self.fill(keep)?;
            *keep_from -= shift;
            start -= shift;
            at -= shift;
            if !more {
                return Ok(None);
            }
        }
    }
}

/// Resumable scanner that finds the end of one JSON value.
///
/// Inside a container only its own bracket pair and quotes matter (other brackets are balanced
/// within it), so the scan jumps between them with `memchr3`.
#[derive(Default)]
struct ValueScanner {
    started: bool,
    /// The container's open and close bytes, for objects and arrays.
    brackets: Option<(u8, u8)>,
    depth: u32,
    in_string: bool,
    escape: bool,
}

impl ValueScanner {
    /// Continues scanning `buf[from..]`; returns the offset just past the value if it ends here.
    fn feed(&mut self, buf: &[u8], from: usize) -> Option<usize> {
        let mut i = from;
        if !self.started {
            // Caller guarantees buf[from] is the first byte of the value.
            let b = *buf.get(i)?;
            self.started = true;
            match b {
                b'{' => {
                    self.brackets = Some((b'{', b'}'));
                    self.depth = 1;
                    i += 1;
                }
                b'[' => {
                    self.brackets = Some((b'[', b']'));
                    self.depth = 1;
                    i += 1;
                }
                b'"' => {
                    self.in_string = true;
                    i += 1;
                }
                _ => {}
            }
        }
        loop {
            let rest = buf.get(i..)?;
            if self.in_string {
                if self.escape {
                    if rest.is_empty() {
                        return None;
                    }
                    self.escape = false;
                    i += 1;
                    continue;
                }
                let k = memchr::memchr2(b'"', b'\\', rest)?;
                i += k;
                if buf[i] == b'\\' {
                    self.escape = true;
                    i += 1;
                    continue;
                }
                self.in_string = false;
                i += 1;
                if self.brackets.is_none() {
                    return Some(i);
                }
            } else if let Some((open, close)) = self.brackets {
                let k = memchr::memchr3(b'"', open, close, rest)?;
                i += k;
                let b = buf[i];
                i += 1;
                if b == b'"' {
                    self.in_string = true;
                } else if b == open {
                    self.depth += 1;
                } else {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Some(i);
                    }
                }
            } else {
                // A bare scalar ends at a delimiter.
                let k = rest
                    .iter()
                    .position(|&b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())?;
                return Some(i + k);
            }
        }
    }
}

/// Reads a Chrome trace from `reader` and sends its parts to `tx`. Runs on the reader thread;
/// returns when the input ends or the receiver hangs up.
pub fn split_stream<R: Read>(reader: R, tx: &SyncSender<Chunk>) {
    let mut input = Input {
        reader,
        buf: Vec::with_capacity(BLOCK_BYTES * 3),
        pos: 0,
        eof: false,
        dropped: 0,
        dropped_lines: 0,
    };
    let chunk = match split_top(&mut input, tx) {
        Ok(Some(mut end)) => {
            end.bytes = input.dropped + input.buf.len() as u64;
            Chunk::End(end)
        }
        Ok(None) => return,
        Err(e) => Chunk::Error(e),
    };
    let _ = tx.send(chunk);
}

/// Returns `Ok(None)` if the receiver went away.
fn split_top<R: Read>(
    input: &mut Input<R>,
    tx: &SyncSender<Chunk>,
) -> Result<Option<StreamEnd>, SplitError> {
    let mut keep = 0usize;
    let first = input.peek_nonws(&mut keep).map_err(SplitError::Io)?;
    let mut end = StreamEnd::default();
    match first {
        Some(b'[') => {
            end.array_form = true;
            end.found_events = true;
            input.pos += 1;
            let events = split_events(input, tx).map_err(SplitError::Io)?;
            match events {
                EventsEnd::Receiver => return Ok(None),
                EventsEnd::Closed => {}
                EventsEnd::Eof => {
                    end.truncated = true;
                    end.truncated_in_events = true;
                }
            }
            Ok(Some(end))
        }
        Some(b'{') => {
            input.pos += 1;
            loop {
                keep = input.pos;
                let b = input.peek_nonws(&mut keep).map_err(SplitError::Io)?;
                match b {
                    None => {
                        end.truncated = true;
                        return Ok(Some(end));
                    }
                    Some(b'}') => {
                        input.pos += 1;
                        return Ok(Some(end));
                    }
                    Some(b',') => input.pos += 1,
                    Some(b'"') => {
                        let Some(key_end) = input.scan_value(&mut keep).map_err(SplitError::Io)?
                        else {
                            end.truncated = true;
                            return Ok(Some(end));
                        };
                        let key = String::from_utf8_lossy(&input.buf[input.pos + 1..key_end - 1])
                            .into_owned();
                        input.pos = key_end;
                        keep = input.pos;
                        match input.peek_nonws(&mut keep).map_err(SplitError::Io)? {
                            Some(b':') => input.pos += 1,
                            None => {
                                end.truncated = true;
                                return Ok(Some(end));
                            }
                            Some(_) => {
                                return Err(SplitError::Syntax {
                                    line: input.line_at(input.pos),
                                    detail: format!("expected ':' after key {key:?}"),
                                });
                            }
                        }
                        keep = input.pos;
                        let v = input.peek_nonws(&mut keep).map_err(SplitError::Io)?;
                        if key == "traceEvents" && v == Some(b'[') {
                            end.found_events = true;
                            input.pos += 1;
                            match split_events(input, tx).map_err(SplitError::Io)? {
                                EventsEnd::Receiver => return Ok(None),
                                EventsEnd::Closed => {}
                                EventsEnd::Eof => {
                                    end.truncated = true;
                                    end.truncated_in_events = true;
                                    return Ok(Some(end));
                                }
                            }
                            continue;
                        }
                        if v.is_none() {
                            end.truncated = true;
                            return Ok(Some(end));
                        }
                        keep = input.pos;
                        let start_line = input.line_at(input.pos);
                        let Some(value_end) =
                            input.scan_value(&mut keep).map_err(SplitError::Io)?
                        else {
                            end.truncated = true;
                            return Ok(Some(end));
                        };
                        if value_end == input.pos {
                            return Err(SplitError::Syntax {
                                line: start_line,
                                detail: format!("missing value for key {key:?}"),
                            });
                        }
                        let value = input.buf[input.pos..value_end].to_vec();
                        input.pos = value_end;
                        if tx.send(Chunk::TopLevel { key, value }).is_err() {
                            return Ok(None);
                        }
                    }
                    Some(other) => {
                        return Err(SplitError::Syntax {
                            line: input.line_at(input.pos),
                            detail: format!(
                                "expected a quoted key in the top-level object, found {:?}",
                                char::from(other)
                            ),
                        });
                    }
                }
            }
        }
        None => Ok(Some(end)),
        Some(other) => Err(SplitError::Syntax {
            line: input.line_at(input.pos),
            detail: format!(
                "expected '{{' or '[' at the start, found {:?}",
                char::from(other)
            ),
        }),
    }
}

enum EventsEnd {
    Closed,
    Eof,
    Receiver,
}

/// Streams the elements of an array whose `[` was just consumed.
fn split_events<R: Read>(input: &mut Input<R>, tx: &SyncSender<Chunk>) -> io::Result<EventsEnd> {
    let mut block_start = input.pos;
    let mut block_line = input.line_at(block_start);
    let flush = |input: &Input<R>, from: usize, to: usize, line: u64| -> Option<u64> {
        if to <= from {
            return Some(line);
        }
        let bytes = input.buf[from..to].to_vec();
        let next_line = line + memchr::memchr_iter(b'\n', &bytes).count() as u64;
        tx.send(Chunk::Events {
            bytes,
            first_line: line,
        })
        .ok()?;
        Some(next_line)
    };
    loop {
        let b = input.peek_nonws(&mut block_start)?;
        match b {
            None => {
                let to = input.buf.len().min(input.pos);
                return Ok(match flush(input, block_start, to, block_line) {
                    Some(_) => EventsEnd::Eof,
                    None => EventsEnd::Receiver,
                });
            }
            Some(b']') => {
                let to = input.pos;
                input.pos += 1;
                return Ok(match flush(input, block_start, to, block_line) {
                    Some(_) => EventsEnd::Closed,
                    None => EventsEnd::Receiver,
                });
            }
            Some(b',') => input.pos += 1,
            Some(_) => {
                let element_start = input.pos;
                let before = block_start;
                match input.scan_value(&mut block_start)? {
                    Some(end) => {
                        input.pos = end.max(input.pos + 1);
                    }
                    None => {
                        let shift = before - block_start;
                        let to = element_start - shift;
                        return Ok(match flush(input, block_start, to, block_line) {
                            Some(_) => EventsEnd::Eof,
                            None => EventsEnd::Receiver,
                        });
                    }
                }
                if input.pos - block_start >= BLOCK_BYTES {
                    match flush(input, block_start, input.pos, block_line) {
                        Some(next) => block_line = next,
                        None => return Ok(EventsEnd::Receiver),
                    }
                    block_start = input.pos;
                }
            }
        }
    }
}

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

/// A pull parser over one in-memory slice.
pub struct Parser<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Lenient tokens (`N/A`, `NaN`, ...) read as null so far.
    pub lenient_tokens: u64,
    /// Strings with invalid UTF-8 repaired so far.
    pub repaired_strings: u64,
}

impl<'a> Parser<'a> {
    /// A parser at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self {
            buf,
            pos: 0,
            lenient_tokens: 0,
            repaired_strings: 0,
        }
    }

    /// Current offset.
    pub fn offset(&self) -> usize {
        self.pos
    }

    fn err<T>(&self, detail: &'static str) -> Result<T, SyntaxError> {
        Err(SyntaxError {
            offset: self.pos,
            detail,
        })
    }

    /// Skips whitespace and returns the next byte.
    pub fn peek(&mut self) -> Option<u8> {
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
    /// and whether it contains escapes.
    fn raw_string(&mut self) -> Result<(&'a [u8], bool), SyntaxError> {
        if !self.eat(b'"') {
            return self.err("expected a string");
        }
        let start = self.pos;
        let mut escaped = false;
        let mut i = start;
        loop {
            match memchr::memchr2(b'"', b'\\', &self.buf[i..]) {
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

    fn decode(&mut self, raw: &'a [u8], escaped: bool) -> Cow<'a, str> {
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
                    if let Some(hi @ 0xD800..=0xDBFF) = code {
                        if raw.get(i..i + 2) == Some(b"\\u") {
                            if let Some(lo @ 0xDC00..=0xDFFF) = hex4(raw.get(i + 2..i + 6)) {
                                code = Some(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00));
                                i += 6;
                            }
                        }
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
                let start = self.pos;
                while let Some(&b) = self.buf.get(self.pos) {
                    if b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E') {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                let text = &self.buf[start..self.pos];
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
        let mut scanner = ValueScanner::default();
        match scanner.feed(self.buf, self.pos) {
            Some(end) => {
                self.pos = end;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::sync_channel;

    fn split(text: &[u8]) -> (Vec<(String, Vec<u8>)>, Vec<u8>, StreamEnd) {
        let (tx, rx) = sync_channel(1024);
        split_stream(text, &tx);
        drop(tx);
        let mut top = Vec::new();
        let mut events = Vec::new();
        let mut end = None;
        for c in rx {
            match c {
                Chunk::TopLevel { key, value } => top.push((key, value)),
                Chunk::Events { bytes, .. } => {
                    events.extend_from_slice(&bytes);
                    events.push(b',');
                }
                Chunk::End(e) => end = Some(e),
                Chunk::Error(e) => panic!("{e:?}"),
            }
        }
        (top, events, end.unwrap())
    }

    #[test]
    fn splits_object_form_with_keys_after_events() {
        let text = br#"
{"schemaVersion": 1, "deviceProperties": [{"id": 0}], "traceEvents": [
 {"ph": "X", "name": "a}{\"", "ts": 1},
 {"ph": "X", "name": "b", "args": {"x": [1, 2]}},
], "baseTimeNanoseconds": 1700000000000000000}"#;
        let (top, events, end) = split(text);
        assert_eq!(top.len(), 3);
        assert_eq!(top[0], ("schemaVersion".to_string(), b"1".to_vec()));
        assert_eq!(top[1].1, b"[{\"id\": 0}]".to_vec());
        assert_eq!(top[2].0, "baseTimeNanoseconds");
        assert!(!end.truncated);
        assert!(end.found_events);
        let mut p = Parser::new(&events);
        let mut names = Vec::new();
        loop {
            p.skip_separators();
            if p.at_end() {
                break;
            }
            p.object(|p, k| {
                if k == b"name" {
                    names.push(p.string()?.into_owned());
                    Ok(())
                } else {
                    p.skip_value()
                }
            })
            .unwrap();
        }
        assert_eq!(names, vec!["a}{\"", "b"]);
    }

    #[test]
    fn truncated_array_keeps_complete_elements() {
        let text = br#"[{"ph":"X","name":"a"},{"ph":"X","name":"b"},{"ph":"X","na"#;
        let (_, events, end) = split(text);
        assert!(end.array_form && end.truncated && end.truncated_in_events);
        assert_eq!(
            events,
            br#"{"ph":"X","name":"a"},{"ph":"X","name":"b"},"#.to_vec()
        );
    }

    #[test]
    fn rejects_text_that_is_not_a_trace() {
        let (tx, rx) = sync_channel(16);
        split_stream(&b"{ this is not json }"[..], &tx);
        drop(tx);
        let last = rx.into_iter().last().unwrap();
        assert!(matches!(
            last,
            Chunk::Error(SplitError::Syntax { line: 1, .. })
        ));
    }

    #[test]
    fn big_input_is_cut_into_blocks_of_whole_elements() {
        let mut text = b"[".to_vec();
        let n = 40_000;
        for i in 0..n {
            text.extend_from_slice(
                format!("{{\"ph\":\"X\",\"name\":\"ev{i}\",\"args\":{{\"s\":\"{{}}\"}}}},\n")
                    .as_bytes(),
            );
        }
        text.push(b']');
        let (tx, rx) = sync_channel(1024);
        split_stream(&text[..], &tx);
        drop(tx);
        let mut blocks = 0;
        let mut count = 0;
        for c in rx {
            if let Chunk::Events { bytes, .. } = c {
                blocks += 1;
                let mut p = Parser::new(&bytes);
                loop {
                    p.skip_separators();
                    if p.at_end() {
                        break;
                    }
                    p.skip_value().unwrap();
                    count += 1;
                }
            }
        }
        assert!(blocks > 1);
        assert_eq!(count, n);
    }

    #[test]
    fn lenient_values() {
        let mut p = Parser::new(
            br#"{"a": N/A, "b": NaN, "c": -Infinity, "d": "x\u00e9\n", "e": "\ud83d\ude00",}"#,
        );
        let mut got = Vec::new();
        p.object(|p, k| {
            got.push((String::from_utf8_lossy(k).into_owned(), p.value()?.clone()));
            Ok(())
        })
        .unwrap();
        assert_eq!(p.lenient_tokens, 3);
        assert_eq!(got[3].1, Value::Str(Cow::Owned("xé\n".into())));
        assert_eq!(got[4].1, Value::Str(Cow::Owned("😀".into())));
    }

    #[test]
    fn integers_from_text() {
        assert_eq!(int_from_text(b"42"), Some(42));
        assert_eq!(int_from_text(b"-7"), Some(-7));
        assert_eq!(int_from_text(b"68.0"), Some(68));
        assert_eq!(int_from_text(b"1.5"), None);
        assert_eq!(int_from_text(b"-"), None);
    }
}
