//! A small, lenient JSON layer for big trace files.
//!
//! Two parts:
//! - [`split_stream`] runs on a reader thread: it walks the top level of a Chrome trace
//!   (object or bare array form) up to the event array, hands every wanted top-level value
//!   before it over whole (the others are scanned and dropped as they are read; line numbers
//!   are counted forward once, so many keys cost linear time), then cuts the rest of the input
//!   into blocks of about [`BLOCK_BYTES`] (or [`SplitOptions::block_bytes`]) at
//!   *candidate* element boundaries (a `{` whose previous non-blank byte is a `,`), without
//!   scanning every byte. A cut can be wrong (inside a string or a nested object); the consumer
//!   detects that because the block before a wrong cut always ends inside an element, and
//!   re-parses across the cut. When the consumer is behind (its queue is full), the reader
//!   thread also tokenizes the next block itself, so both cores parse.
//! - [`Parser`] parses values out of one in-memory slice without building a tree: numbers stay
//!   text (so timestamps convert to nanoseconds exactly) and strings are borrowed unless they
//!   hold escapes.
//!
//! It accepts what real writers produce and strict parsers reject: trailing commas, empty
//! elements, raw control characters and invalid UTF-8 inside strings, and bare `N/A`, `NaN`,
//! `Infinity` tokens (read as null and counted).

use std::borrow::Cow;
use std::io::{self, Read};
use std::sync::mpsc::{SyncSender, TrySendError};

/// Size of the blocks of events handed to the parser.
pub const BLOCK_BYTES: usize = 1 << 20;

/// What the reader thread sends. `T` is what the consumer's tokenizer makes of a block.
#[derive(Debug)]
pub enum Chunk<T> {
    /// A top-level key before the event array, with its raw JSON value.
    TopLevel {
        /// The key.
        key: String,
        /// The value's JSON text.
        value: Vec<u8>,
    },
    /// The event array starts: the blocks of [`Chunk::Events`] follow.
    EventsStart {
        /// True for the bare-array form (nothing but blanks may follow the array).
        array_form: bool,
    },
    /// A block of input from inside the event array (the last blocks also hold whatever follows
    /// the array). It starts at a candidate element boundary.
    Events {
        /// The text.
        bytes: Vec<u8>,
        /// Line number (1-based) at which the block starts, for error messages.
        first_line: u64,
        /// The block already tokenized on the reader thread, when it had time to spare.
        pre: Option<T>,
    },
    /// The end of the input.
    End(StreamEnd),
    /// The input could not be read, or its top level is not a trace.
    Error(SplitError),
}

/// How the input ended, as far as the reader can tell.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StreamEnd {
    /// True for the bare-array form.
    pub array_form: bool,
    /// True if an event array was found.
    pub found_events: bool,
    /// True if the input ended in the top-level object before any event array.
    pub truncated_before_events: bool,
    /// True if the gzip stream ended before its end marker.
    pub compressed_stream_cut: bool,
    /// Decompressed bytes read.
    pub bytes: u64,
    /// Line (1-based) at which the input ended.
    pub end_line: u64,
}

/// How [`split_stream_with`] cuts and what it hands over.
#[derive(Clone, Copy)]
pub struct SplitOptions {
    /// Size of the blocks of events (the default is [`BLOCK_BYTES`]; tests and fuzzers use
    /// tiny blocks to put block boundaries inside events).
    pub block_bytes: usize,
    /// Which top-level keys before the event array are wanted: the values of the others are
    /// scanned and dropped as they are read, never held whole.
    pub keep_key: fn(&str) -> bool,
}

impl Default for SplitOptions {
    fn default() -> Self {
        Self {
            block_bytes: BLOCK_BYTES,
            keep_key: |_| true,
        }
    }
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
    /// A place in `buf` and its line: line numbers are counted forward from it, so that asking
    /// for the line of each of many top-level keys stays linear.
    line_mark: (usize, u64),
    /// True if the compressed stream ended early.
    cut_short: bool,
    /// Least number of bytes one read asks for.
    read_bytes: usize,
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
            let line = self.line_at(shift);
            self.line_mark = (0, line);
            self.dropped += shift as u64;
            self.buf.drain(..shift);
            self.pos -= shift;
        }
        let want = self.read_bytes.max(self.buf.len()) as u64;
        let old_len = self.buf.len();
        loop {
            match (&mut self.reader).take(want).read_to_end(&mut self.buf) {
                Ok(0) => {
                    self.eof = true;
                    return Ok((shift, false));
                }
                Ok(_) => return Ok((shift, true)),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A gzip stream cut short: what was decompressed is all there is.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    self.eof = true;
                    self.cut_short = true;
                    return Ok((shift, self.buf.len() > old_len));
                }
                Err(e) => {
                    self.buf.truncate(old_len);
                    return Err(e);
                }
            }
        }
    }

    /// The line of `buf[pos]`. Counts from the last place asked about when `pos` is at or
    /// after it (the usual case), so a walk through the buffer costs one pass in all.
    fn line_at(&mut self, pos: usize) -> u64 {
        let pos = pos.min(self.buf.len());
        let (from, line) = if pos >= self.line_mark.0 {
            self.line_mark
        } else {
            (
                0,
                self.line_mark.1 - count_newlines(&self.buf[..self.line_mark.0]),
            )
        };
        let line = line + count_newlines(&self.buf[from..pos]);
        self.line_mark = (pos, line);
        line
    }

    /// Skips whitespace (and a UTF-8 BOM) and returns the next byte without consuming it.
    fn peek_nonws(&mut self, keep_from: &mut usize) -> io::Result<Option<u8>> {
        loop {
            while self.pos < self.buf.len() {
                let b = self.buf[self.pos];
                if b.is_ascii_whitespace() || (self.dropped == 0 && self.pos < 3 && b >= 0xBB) {
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

    /// Scans one complete JSON value starting at `pos` without keeping it: the bytes scanned are
    /// dropped as more are read. Returns false if the input ended inside it.
    fn skip_value(&mut self) -> io::Result<bool> {
        let mut scanner = ValueScanner::default();
        let mut at = self.pos;
        loop {
            if let Some(end) = scanner.feed(&self.buf, at) {
                self.pos = end;
                return Ok(true);
            }
            let keep = self.buf.len();
            self.pos = keep;
            let (shift, more) = self.fill(keep)?;
            at = keep - shift;
            if !more {
                return Ok(false);
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
pub(crate) struct ValueScanner {
    started: bool,
    /// The container's open and close bytes, for objects and arrays.
    brackets: Option<(u8, u8)>,
    depth: u32,
    in_string: bool,
    escape: bool,
}

impl ValueScanner {
    /// Continues scanning `buf[from..]`; returns the offset just past the value if it ends here.
    pub(crate) fn feed(&mut self, buf: &[u8], from: usize) -> Option<usize> {
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
/// returns when the input ends or the receiver hangs up. `tokenize` is applied to a block on
/// this thread when the receiver's queue is full.
pub fn split_stream<R: Read, T>(
    reader: R,
    tx: &SyncSender<Chunk<T>>,
    tokenize: impl FnMut(&[u8]) -> T,
) {
    split_stream_with(reader, tx, tokenize, SplitOptions::default());
}

/// [`split_stream`] with the block size and the wanted top-level keys given.
pub fn split_stream_with<R: Read, T>(
    reader: R,
    tx: &SyncSender<Chunk<T>>,
    mut tokenize: impl FnMut(&[u8]) -> T,
    options: SplitOptions,
) {
    let block_bytes = options.block_bytes.max(1);
    let mut input = Input {
        reader,
        buf: Vec::with_capacity(block_bytes.saturating_mul(3).min(BLOCK_BYTES * 3)),
        pos: 0,
        eof: false,
        dropped: 0,
        line_mark: (0, 1),
        cut_short: false,
        read_bytes: block_bytes.saturating_mul(2),
    };
    let chunk = match split_top(&mut input, tx, &mut tokenize, options.keep_key, block_bytes) {
        Ok(Some(mut end)) => {
            end.end_line = input.line_at(input.buf.len());
            end.bytes = input.dropped + input.buf.len() as u64;
            end.compressed_stream_cut = input.cut_short;
            Chunk::End(end)
        }
        Ok(None) => return,
        Err(e) => Chunk::Error(e),
    };
    let _ = tx.send(chunk);
}

/// Walks the top level up to the event array. Returns `Ok(None)` if the receiver went away.
fn split_top<R: Read, T>(
    input: &mut Input<R>,
    tx: &SyncSender<Chunk<T>>,
    tokenize: &mut impl FnMut(&[u8]) -> T,
    keep_key: fn(&str) -> bool,
    block_bytes: usize,
) -> Result<Option<StreamEnd>, SplitError> {
    let mut keep = 0usize;
    let first = input.peek_nonws(&mut keep).map_err(SplitError::Io)?;
    let mut end = StreamEnd::default();
    match first {
        Some(b'[') => {
            end.array_form = true;
            end.found_events = true;
            input.pos += 1;
            if tx.send(Chunk::EventsStart { array_form: true }).is_err() {
                return Ok(None);
            }
            let alive = stream_events(input, tx, tokenize, block_bytes).map_err(SplitError::Io)?;
            Ok(alive.then_some(end))
        }
        Some(b'{') => {
            input.pos += 1;
            loop {
                keep = input.pos;
                let b = input.peek_nonws(&mut keep).map_err(SplitError::Io)?;
                match b {
                    None => {
                        end.truncated_before_events = true;
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
                            end.truncated_before_events = true;
                            return Ok(Some(end));
                        };
                        let key = String::from_utf8_lossy(&input.buf[input.pos + 1..key_end - 1])
                            .into_owned();
                        input.pos = key_end;
                        keep = input.pos;
                        match input.peek_nonws(&mut keep).map_err(SplitError::Io)? {
                            Some(b':') => input.pos += 1,
                            None => {
                                end.truncated_before_events = true;
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
                            if tx.send(Chunk::EventsStart { array_form: false }).is_err() {
                                return Ok(None);
                            }
                            let alive = stream_events(input, tx, tokenize, block_bytes)
                                .map_err(SplitError::Io)?;
                            return Ok(alive.then_some(end));
                        }
                        if v.is_none() {
                            end.truncated_before_events = true;
                            return Ok(Some(end));
                        }
                        if matches!(v, Some(b',' | b'}' | b']')) {
                            return Err(SplitError::Syntax {
                                line: input.line_at(input.pos),
                                detail: format!("missing value for key {key:?}"),
                            });
                        }
                        if !keep_key(&key) {
                            if !input.skip_value().map_err(SplitError::Io)? {
                                end.truncated_before_events = true;
                                return Ok(Some(end));
                            }
                            continue;
                        }
                        keep = input.pos;
                        let start_line = input.line_at(input.pos);
                        let Some(value_end) =
                            input.scan_value(&mut keep).map_err(SplitError::Io)?
                        else {
                            end.truncated_before_events = true;
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

fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// How much input without a candidate boundary the reader holds before it cuts anyway: four
/// blocks, and at least 16 MiB (real traces always have a boundary well within that).
fn forced_cut_bytes(block_bytes: usize) -> usize {
    block_bytes.saturating_mul(4).max(16 << 20)
}

/// Finds a candidate element boundary at or after `from`: a `{` whose previous non-blank byte
/// is a `,`. Returns the offset of the `{`.
fn find_cut(buf: &[u8], from: usize) -> Option<usize> {
    let mut at = from;
    while let Some(k) = memchr::memchr(b'{', buf.get(at..)?) {
        let p = at + k;
        let before = buf[..p].iter().rev().find(|b| !b.is_ascii_whitespace());
        if before == Some(&b',') {
            return Some(p);
        }
        at = p + 1;
    }
    None
}

/// Sends the rest of the input from `input.pos` in blocks cut at candidate boundaries. Returns
/// false if the receiver went away.
fn stream_events<R: Read, T>(
    input: &mut Input<R>,
    tx: &SyncSender<Chunk<T>>,
    tokenize: &mut impl FnMut(&[u8]) -> T,
    block_bytes: usize,
) -> io::Result<bool> {
    let mut block_start = input.pos;
    let mut line = input.line_at(block_start);
    let mut search_from = block_start + block_bytes;
    loop {
        let cut = if input.buf.len() > search_from {
            find_cut(&input.buf, search_from)
        } else {
            None
        };
        let held = input.buf.len() - block_start;
        let (end, last) = match cut {
            Some(c) => (c, false),
            // No candidate boundary in a long stretch (one huge element, or no objects at all):
            // cut anyway, after the last comma if there is one, so that what this thread holds
            // stays bounded; the consumer carries an element that runs across the cut.
            None if held >= forced_cut_bytes(block_bytes) => {
                let from = block_start + block_bytes;
                let end = memchr::memrchr(b',', &input.buf[from..])
                    .map_or(input.buf.len(), |k| from + k + 1);
                (end, false)
            }
            None => {
                search_from = search_from.max(input.buf.len());
                let (shift, more) = input.fill(block_start)?;
                block_start -= shift;
                search_from -= shift;
                if more {
                    continue;
                }
                (input.buf.len(), true)
            }
        };
        if end > block_start {
            let bytes = input.buf[block_start..end].to_vec();
            let next_line = line + memchr::memchr_iter(b'\n', &bytes).count() as u64;
            let chunk = Chunk::Events {
                bytes,
                first_line: line,
                pre: None,
            };
            match tx.try_send(chunk) {
                Ok(()) => {}
                Err(TrySendError::Full(Chunk::Events {
                    bytes, first_line, ..
                })) => {
                    // The parser is behind: tokenize this block here.
                    let pre = Some(tokenize(&bytes));
                    let chunk = Chunk::Events {
                        bytes,
                        first_line,
                        pre,
                    };
                    if tx.send(chunk).is_err() {
                        return Ok(false);
                    }
                }
                Err(_) => return Ok(false),
            }
            line = next_line;
        }
        if last {
            input.pos = input.buf.len();
            return Ok(true);
        }
        block_start = end;
        input.pos = end;
        search_from = end + block_bytes;
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

    type Split = (Vec<(String, Vec<u8>)>, Vec<u8>, StreamEnd);

    fn split(text: &[u8]) -> Split {
        let (tx, rx) = sync_channel(1024);
        split_stream(text, &tx, |b: &[u8]| b.len());
        drop(tx);
        let mut top = Vec::new();
        let mut events = Vec::new();
        let mut end = None;
        for c in rx {
            match c {
                Chunk::TopLevel { key, value } => top.push((key, value)),
                Chunk::Events { bytes, .. } => events.extend_from_slice(&bytes),
                Chunk::End(e) => end = Some(e),
                Chunk::EventsStart { .. } => {}
                Chunk::Error(e) => panic!("{e:?}"),
            }
        }
        (top, events, end.unwrap())
    }

    #[test]
    fn keys_before_the_events_are_sent_whole_and_the_rest_streamed() {
        let text = br#"
{"schemaVersion": 1, "deviceProperties": [{"id": 0}], "traceEvents": [
 {"ph": "X", "name": "a}{\"", "ts": 1},
 {"ph": "X", "name": "b", "args": {"x": [1, 2]}},
], "baseTimeNanoseconds": 1700000000000000000}"#;
        let (top, events, end) = split(text);
        assert_eq!(top.len(), 2);
        assert_eq!(top[0], ("schemaVersion".to_string(), b"1".to_vec()));
        assert_eq!(top[1].1, b"[{\"id\": 0}]".to_vec());
        assert!(end.found_events && !end.array_form && !end.truncated_before_events);
        // Everything after `[` arrives as event blocks, the tail included.
        assert!(events.ends_with(b"], \"baseTimeNanoseconds\": 1700000000000000000}"));
    }

    #[test]
    fn rejects_text_that_is_not_a_trace() {
        let (tx, rx) = sync_channel::<Chunk<()>>(16);
        split_stream(&b"{ this is not json }"[..], &tx, |_| ());
        drop(tx);
        let last = rx.into_iter().last().unwrap();
        assert!(matches!(
            last,
            Chunk::Error(SplitError::Syntax { line: 1, .. })
        ));
    }

    #[test]
    fn big_input_is_cut_at_element_starts_and_loses_nothing() {
        let mut text = b"[".to_vec();
        let n = 40_000;
        for i in 0..n {
            text.extend_from_slice(
                format!("{{\"ph\":\"X\",\"name\":\"ev{i}, {{\"}},\n").as_bytes(),
            );
        }
        text.push(b']');
        // Without a queue (and a slow consumer) the reader tokenizes blocks itself.
        let (tx, rx) = sync_channel(0);
        let t = std::thread::spawn(move || split_stream(&text[..], &tx, |b: &[u8]| b.len()));
        let mut all = b"[".to_vec();
        let mut blocks = 0;
        let mut tokenized = 0;
        for c in rx {
            if let Chunk::Events { bytes, pre, .. } = c {
                // A slow consumer makes the queue fill up.
                std::thread::sleep(std::time::Duration::from_millis(20));
                blocks += 1;
                if let Some(len) = pre {
                    assert_eq!(len, bytes.len());
                    tokenized += 1;
                }
                if blocks > 1 {
                    assert_eq!(bytes[0], b'{');
                }
                all.extend_from_slice(&bytes);
            }
        }
        t.join().unwrap();
        assert!(blocks > 1);
        assert!(tokenized > 0);
        let mut expected = b"[".to_vec();
        for i in 0..n {
            expected.extend_from_slice(
                format!("{{\"ph\":\"X\",\"name\":\"ev{i}, {{\"}},\n").as_bytes(),
            );
        }
        expected.push(b']');
        assert_eq!(all, expected);
    }

    #[test]
    fn cuts_follow_a_comma() {
        assert_eq!(find_cut(b"{\"a\":{\"b\":1}},\n  {\"c\":2}", 1), Some(17));
        assert_eq!(find_cut(b"[{\"a\":{}}]", 1), None);
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
