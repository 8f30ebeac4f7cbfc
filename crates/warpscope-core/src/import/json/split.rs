//! The reader thread's side: walking the top level of a trace and cutting the event array
//! into blocks (see the module above).

use std::io;
use std::ops::Deref;
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Mutex, PoisonError};

use crate::import::read::AppendRead;

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
        /// For text held whole: the line of any [`Place::Byte`] in it.
        lines: Option<Lines>,
    },
    /// A block of input from inside the event array (the last blocks also hold whatever follows
    /// the array). It starts at a candidate element boundary.
    Events {
        /// The text.
        bytes: Block,
        /// Where the block starts, for error messages.
        first_line: Place,
        /// The block already tokenized on the reader thread, when it had time to spare.
        pre: Option<T>,
    },
    /// The end of the input.
    End(StreamEnd),
    /// The input could not be read, or its top level is not a trace.
    Error(SplitError),
}

/// Text held whole in memory, shared by the blocks cut from it: a file mapped into memory, or
/// bytes given whole. Blocks of it are handed to the parser without copying.
pub trait WholeText: Send + Sync {
    /// The text.
    fn bytes(&self) -> &[u8];

    /// The block ending at `end` was parsed: memory holding the text before it may be given
    /// back (a mapped file's pages are read again from the file if they are needed after all).
    fn release(&self, _end: usize) {}
}

impl WholeText for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
}

/// A [`WholeText`] shared between threads.
pub type SharedText = Arc<dyn WholeText>;

/// The buffers of blocks read from a stream, given back when the blocks are dropped (parsed)
/// and read into again: the reader then writes into memory already paged in and in the caches,
/// where fresh buffers cost a page fault per 4 KiB, the kernel zeroing the page, and handing
/// the memory back (4-6% of the CPU time of a gzip-compressed trace). It keeps the buffers given
/// back, about as many as blocks were in flight at once: where the blocks grow (elements
/// bigger and bigger), the buffers too small for them are dropped rather than kept.
#[derive(Default)]
pub struct Buffers {
    free: Mutex<Vec<Vec<u8>>>,
}

impl Buffers {
    /// An empty buffer that can hold at least `capacity` bytes: one given back if one is big
    /// enough, else a new one an eighth bigger, so that it fits the next blocks too, whose
    /// sizes vary by what follows their cut. A buffer given back is never grown here: growing
    /// copies it, and growing by doubling would let the sizes asked for creep upwards.
    fn take(&self, capacity: usize) -> Vec<u8> {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = free.iter().position(|b| b.capacity() >= capacity) {
            let mut bytes = free.swap_remove(i);
            bytes.clear();
            return bytes;
        }
        // None fits: the blocks are growing, and the buffers kept are too small for them.
        free.clear();
        Vec::with_capacity(capacity.saturating_add(capacity / 8))
    }

    fn give_back(&self, bytes: Vec<u8>) {
        if bytes.capacity() > 0 {
            let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
            free.push(bytes);
        }
    }
}

/// The text of one block of events.
pub enum Block {
    /// Read from a stream (gzip, or a reader); the buffer goes back to `buffers` when the block
    /// is dropped.
    Owned {
        /// The text.
        bytes: Vec<u8>,
        /// Where the buffer goes back to.
        buffers: Arc<Buffers>,
    },
    /// `text[start..end]`, not copied; released ([`WholeText::release`]) when dropped.
    Shared {
        /// The whole text.
        text: SharedText,
        /// Where the block starts in it.
        start: usize,
        /// Where the block ends in it.
        end: usize,
    },
}

impl Deref for Block {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Block::Owned { bytes, .. } => bytes,
            Block::Shared { text, start, end } => &text.bytes()[*start..*end],
        }
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        match self {
            Block::Owned { bytes, buffers } => buffers.give_back(std::mem::take(bytes)),
            Block::Shared { text, end, .. } => text.release(*end),
        }
    }
}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Block({} bytes)", self.len())
    }
}

/// Where a piece of the input starts, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Its line (1-based), counted as the input was read.
    Line(u64),
    /// Its byte offset in text held whole: the line is counted only if a message needs it
    /// ([`Lines::line`]), so that reading a good file counts no lines at all.
    Byte(usize),
}

impl Default for Place {
    fn default() -> Self {
        Place::Line(0)
    }
}

impl Place {
    /// The place just after `text`, which starts here.
    pub fn after(self, text: &[u8]) -> Place {
        match self {
            Place::Line(line) => Place::Line(line + count_newlines(text)),
            Place::Byte(at) => Place::Byte(at + text.len()),
        }
    }
}

/// The lines of text held whole, counted on demand from the last place asked about (asking in
/// file order costs one pass in all).
pub struct Lines {
    text: SharedText,
    /// A byte offset and its line.
    mark: (usize, u64),
}

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lines(mark {:?})", self.mark)
    }
}

impl Lines {
    /// The line of `place`.
    pub fn line(&mut self, place: Place) -> u64 {
        let at = match place {
            Place::Line(line) => return line,
            Place::Byte(at) => at.min(self.text.bytes().len()),
        };
        line_from_mark(self.text.bytes(), &mut self.mark, at)
    }
}

/// The line of `text[at]`, counted from `mark` (an offset in `text` and its line) forward or
/// back, whichever way `at` lies; `mark` moves to `at`, so that asking in order costs one pass.
fn line_from_mark(text: &[u8], mark: &mut (usize, u64), at: usize) -> u64 {
    let (mark_at, mark_line) = *mark;
    let line = if at >= mark_at {
        mark_line + count_newlines(&text[mark_at..at])
    } else {
        mark_line - count_newlines(&text[at..mark_at])
    };
    *mark = (at, line);
    line
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
    /// Where the input ended.
    pub end_line: Place,
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
    /// A place in `buf` and its line: line numbers are counted from it, so that asking for the
    /// line of each of many top-level keys stays linear.
    line_mark: (usize, u64),
    /// True if the compressed stream ended early.
    cut_short: bool,
    /// Least number of bytes one read asks for.
    read_bytes: usize,
    /// The whole text, when the reader reads from text held in memory: the event array is then
    /// cut into blocks of it without copying (see [`stream_shared`]).
    shared: Option<SharedText>,
    /// True once the event array was cut into blocks of `shared` ([`stream_shared`]), which
    /// counts no lines: where the input ends is a byte offset in it.
    cut_in_place: bool,
    /// The buffers of the blocks sent, as they come back.
    buffers: Arc<Buffers>,
}

impl<R: AppendRead> Input<R> {
    /// Reads more data, keeping `buf[keep_from..]`. Returns how far indices shifted (callers
    /// must move their offsets back by it) and whether more data arrived (false at the end).
    fn fill(&mut self, keep_from: usize) -> io::Result<(usize, bool)> {
        self.fill_to(keep_from, 0)
    }

    /// As [`Input::fill`], reading only up to `total` bytes in the buffer where it holds less:
    /// the event blocks are read to about their size, so that a block can be handed over
    /// without copying it.
    fn fill_to(&mut self, keep_from: usize, total: usize) -> io::Result<(usize, bool)> {
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
        let want = if self.buf.len() < total {
            total - self.buf.len()
        } else {
            self.read_bytes.max(self.buf.len())
        };
        let old_len = self.buf.len();
        loop {
            match self.reader.append(&mut self.buf, want) {
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

    /// The event array starts at `pos`: for text held whole, line numbers are counted from
    /// here on demand.
    fn events_start<T>(&mut self, array_form: bool) -> Chunk<T> {
        let lines = self.shared.clone().map(|text| Lines {
            mark: (self.offset(self.pos), self.line_at(self.pos)),
            text,
        });
        Chunk::EventsStart { array_form, lines }
    }

    /// Where `buf[pos]` lies in the whole input.
    fn offset(&self, pos: usize) -> usize {
        usize::try_from(self.dropped)
            .unwrap_or(usize::MAX)
            .saturating_add(pos)
    }

    /// The line of `buf[pos]`, counted from the last place asked about ([`line_from_mark`]), so
    /// a walk through the buffer costs one pass in all.
    fn line_at(&mut self, pos: usize) -> u64 {
        let pos = pos.min(self.buf.len());
        line_from_mark(&self.buf, &mut self.line_mark, pos)
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
                let k = super::find::find2(b'"', b'\\', rest)?;
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
                let k = super::find::find3(b'"', open, close, rest)?;
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
pub fn split_stream<R: AppendRead, T>(
    reader: R,
    tx: &SyncSender<Chunk<T>>,
    tokenize: impl FnMut(&[u8]) -> T,
) {
    split_stream_with(reader, tx, tokenize, SplitOptions::default());
}

/// [`split_stream`] with the block size and the wanted top-level keys given.
pub fn split_stream_with<R: AppendRead, T>(
    reader: R,
    tx: &SyncSender<Chunk<T>>,
    tokenize: impl FnMut(&[u8]) -> T,
    options: SplitOptions,
) {
    split_input(reader, None, tx, tokenize, options);
}

/// [`split_stream_with`] for text held whole in memory: the blocks of events are ranges of
/// `text` ([`Block::Shared`]) instead of copies, cut exactly where a stream of the same text
/// would be cut by the same rule. Only what precedes the event array is copied (top-level values are sent
/// whole either way).
pub fn split_shared<T>(
    text: SharedText,
    tx: &SyncSender<Chunk<T>>,
    tokenize: impl FnMut(&[u8]) -> T,
    options: SplitOptions,
) {
    let whole = Arc::clone(&text);
    split_input(whole.bytes(), Some(text), tx, tokenize, options);
}

fn split_input<R: AppendRead, T>(
    reader: R,
    shared: Option<SharedText>,
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
        shared,
        cut_in_place: false,
        buffers: Arc::default(),
    };
    let chunk = match split_top(&mut input, tx, &mut tokenize, options.keep_key, block_bytes) {
        Ok(Some(mut end)) => {
            end.end_line = if input.cut_in_place {
                Place::Byte(input.offset(input.buf.len()))
            } else {
                Place::Line(input.line_at(input.buf.len()))
            };
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
fn split_top<R: AppendRead, T>(
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
            if tx.send(input.events_start(true)).is_err() {
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
                            if tx.send(input.events_start(false)).is_err() {
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

/// Line breaks in `bytes` (for line numbers in messages).
pub(crate) fn count_newlines(bytes: &[u8]) -> u64 {
    memchr::memchr_iter(b'\n', bytes).count() as u64
}

/// How much input without a candidate boundary the reader holds before it cuts anyway: four
/// blocks, and at least 16 MiB (real traces always have a boundary well within that).
fn forced_cut_bytes(block_bytes: usize) -> usize {
    block_bytes.saturating_mul(4).max(16 << 20)
}

/// Finds a candidate element boundary at or after `from`: a `{` whose previous non-blank byte
/// is a `,`. Returns the offset of the `{`.
pub(super) fn find_cut(buf: &[u8], from: usize) -> Option<usize> {
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

/// Sends `bytes` as a block; when the receiver's queue is full, tokenizes it first (the parser
/// is behind). False if the receiver went away.
fn send_block<T>(
    tx: &SyncSender<Chunk<T>>,
    tokenize: &mut impl FnMut(&[u8]) -> T,
    bytes: Block,
    first_line: Place,
) -> bool {
    let chunk = Chunk::Events {
        bytes,
        first_line,
        pre: None,
    };
    match tx.try_send(chunk) {
        Ok(()) => true,
        Err(TrySendError::Full(Chunk::Events {
            bytes, first_line, ..
        })) => {
            let pre = Some(tokenize(&bytes));
            let chunk = Chunk::Events {
                bytes,
                first_line,
                pre,
            };
            tx.send(chunk).is_ok()
        }
        Err(_) => false,
    }
}

/// [`stream_events`] for text held whole (`input` reads from `text`): the rest of the text
/// from `input.pos` is sent in blocks that are ranges of it, cut by the same rule as a stream
/// (the first candidate boundary `block_bytes` or more into the block; without one within
/// [`forced_cut_bytes`], after the last comma there). Leaves `input` at the end of the text.
///
/// Unlike a stream's, these blocks are never tokenized here when the receiver's queue is full:
/// cutting text held whole costs next to nothing, so this thread has no reading to overlap and
/// would only take a core from the workers (on 2 cores, waiting instead is 6-9% faster).
fn stream_shared<R: AppendRead, T>(
    input: &mut Input<R>,
    text: &SharedText,
    tx: &SyncSender<Chunk<T>>,
    block_bytes: usize,
) -> bool {
    let whole = text.bytes();
    let mut start = input.offset(input.pos).min(whole.len());
    while start < whole.len() {
        let search_from = start.saturating_add(block_bytes);
        let limit = start.saturating_add(forced_cut_bytes(block_bytes));
        let end = if search_from >= whole.len() {
            whole.len()
        } else if let Some(cut) = find_cut(&whole[..limit.min(whole.len())], search_from) {
            cut
        } else if limit >= whole.len() {
            whole.len()
        } else {
            memchr::memrchr(b',', &whole[search_from..limit]).map_or(limit, |k| search_from + k + 1)
        };
        let block = Block::Shared {
            text: Arc::clone(text),
            start,
            end,
        };
        let chunk = Chunk::Events {
            bytes: block,
            first_line: Place::Byte(start),
            pre: None,
        };
        if tx.send(chunk).is_err() {
            return false;
        }
        start = end;
    }
    // As if the whole text had been read and dropped: the end is reported from here.
    input.dropped = whole.len() as u64;
    input.buf.clear();
    input.pos = 0;
    input.eof = true;
    input.cut_in_place = true;
    true
}

/// Sends the rest of the input from `input.pos` in blocks cut at candidate boundaries. Returns
/// false if the receiver went away.
fn stream_events<R: AppendRead, T>(
    input: &mut Input<R>,
    tx: &SyncSender<Chunk<T>>,
    tokenize: &mut impl FnMut(&[u8]) -> T,
    block_bytes: usize,
) -> io::Result<bool> {
    if let Some(text) = input.shared.clone() {
        return Ok(stream_shared(input, &text, tx, block_bytes));
    }
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
                let (shift, more) = input.fill_to(block_start, block_bytes + block_bytes / 16)?;
                block_start -= shift;
                search_from -= shift;
                if more {
                    continue;
                }
                (input.buf.len(), true)
            }
        };
        // Where the block is the front of the buffer and little follows it, the buffer itself
        // is sent and only what follows is copied; indices then move back by `shift`.
        let mut shift = 0;
        if end > block_start {
            let bytes = if block_start == 0 && input.buf.len() - end <= end / 8 {
                // Room for what follows the cut and the next block read into it (a bigger
                // block grows the buffer as it is read); after the last block, none.
                let mut rest = if last {
                    Vec::new()
                } else {
                    let next_block = block_bytes.saturating_add(block_bytes / 16);
                    let rest_len = input.buf.len() - end;
                    input
                        .buffers
                        .take(rest_len.saturating_add(next_block.min(2 * BLOCK_BYTES)))
                };
                rest.extend_from_slice(&input.buf[end..]);
                let mut bytes = std::mem::replace(&mut input.buf, rest);
                bytes.truncate(end);
                shift = end;
                input.dropped += end as u64;
                bytes
            } else {
                let mut bytes = input.buffers.take(end - block_start);
                bytes.extend_from_slice(&input.buf[block_start..end]);
                bytes
            };
            let next_line = line + count_newlines(&bytes);
            let block = Block::Owned {
                bytes,
                buffers: Arc::clone(&input.buffers),
            };
            if !send_block(tx, tokenize, block, Place::Line(line)) {
                return Ok(false);
            }
            line = next_line;
            // The lines up to the cut are counted: where the buffer is trimmed later, counting
            // starts from here rather than again from the last mark.
            input.line_mark = (end - shift, line);
        }
        if last {
            input.pos = input.buf.len();
            return Ok(true);
        }
        block_start = end - shift;
        input.pos = block_start;
        search_from = block_start + block_bytes;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_a_stream_are_read_into_the_buffers_of_blocks_already_parsed() {
        let mut text = b"{\"traceEvents\": [".to_vec();
        for i in 0..5_000 {
            text.extend_from_slice(format!("{{\"ph\":\"X\",\"name\":\"k{i}\"}},\n").as_bytes());
        }
        text.extend_from_slice(b"{}]}");
        let expected = text[text.iter().position(|&b| b == b'[').unwrap() + 1..].to_vec();
        // Blocks of one byte (a block per element) and of a few elements.
        for block_bytes in [1, 512] {
            let (tx, rx) = std::sync::mpsc::sync_channel(1);
            let options = SplitOptions {
                block_bytes,
                ..SplitOptions::default()
            };
            let input = text.clone();
            let reader = std::thread::spawn(move || {
                split_stream_with(&input[..], &tx, |b: &[u8]| b.len(), options);
            });
            let (mut all, mut blocks, mut buffers, mut biggest) = (Vec::new(), 0, None, 0);
            for chunk in rx {
                if let Chunk::Events { bytes, .. } = chunk {
                    all.extend_from_slice(&bytes);
                    blocks += 1;
                    if let Block::Owned { bytes, buffers: b } = &bytes {
                        buffers.get_or_insert_with(|| Arc::clone(b));
                        biggest = biggest.max(bytes.capacity());
                    }
                    // Dropped here: its buffer goes back for a later block.
                }
            }
            reader.join().unwrap();
            assert_eq!(all, expected, "blocks of {block_bytes}");
            assert!(blocks > 200, "{blocks} blocks of {block_bytes}");
            // Every buffer came back; there are only as many as were in flight at once (the
            // queue's one, the one being sent, the one read into, the one held here).
            let free = buffers.unwrap().free.lock().unwrap().len();
            assert!(
                (1..=6).contains(&free),
                "{free} buffers for {blocks} blocks of {block_bytes}"
            );
            // Reusing buffers does not let their sizes creep up from block to block.
            assert!(
                biggest <= 4 * block_bytes.max(64),
                "a buffer of {biggest} bytes for blocks of {block_bytes}"
            );
        }
    }

    #[test]
    fn buffers_too_small_for_growing_blocks_are_not_kept() {
        // Elements growing from 100 bytes to 400 KB, read in blocks of 4 KiB: every few blocks
        // need a bigger buffer than any given back so far.
        let mut text = b"[".to_vec();
        let mut size = 100usize;
        while size < 400_000 {
            text.extend_from_slice(format!("{{\"name\":\"{}\"}},\n", "x".repeat(size)).as_bytes());
            size += size / 4;
        }
        text.extend_from_slice(b"{}]");
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let options = SplitOptions {
            block_bytes: 4096,
            ..SplitOptions::default()
        };
        let input = text.clone();
        let reader = std::thread::spawn(move || {
            split_stream_with(&input[..], &tx, |b: &[u8]| b.len(), options);
        });
        let (mut all, mut buffers, mut biggest) = (b"[".to_vec(), None, 0);
        for chunk in rx {
            if let Chunk::Events { bytes, .. } = chunk {
                all.extend_from_slice(&bytes);
                if let Block::Owned { bytes, buffers: b } = &bytes {
                    buffers.get_or_insert_with(|| Arc::clone(b));
                    biggest = biggest.max(bytes.capacity());
                }
            }
        }
        reader.join().unwrap();
        assert_eq!(all, text);
        let free = buffers.unwrap().free.lock().unwrap().len();
        // Those of the blocks in flight since the last growth, not one per size ever seen.
        assert!(
            (1..=6).contains(&free),
            "{free} buffers kept (biggest {biggest} bytes)"
        );
    }

    #[test]
    fn lines_of_text_held_whole_are_counted_on_demand_in_any_order() {
        let text: SharedText = Arc::new(b"a\nb\n\nc\nd".to_vec());
        // The event array starts at byte 2, on line 2.
        let mut lines = Lines { text, mark: (2, 2) };
        assert_eq!(lines.line(Place::Byte(5)), 4);
        assert_eq!(lines.line(Place::Byte(7)), 5);
        assert_eq!(lines.line(Place::Byte(0)), 1);
        assert_eq!(lines.line(Place::Byte(4)), 3);
        assert_eq!(lines.line(Place::Byte(100)), 5);
        assert_eq!(lines.line(Place::Line(42)), 42);
        assert_eq!(Place::Byte(3).after(b"x\ny"), Place::Byte(6));
        assert_eq!(Place::Line(3).after(b"x\ny"), Place::Line(4));
    }
}
