//! Tokenizing the event array: elements into [`RawEvent`]s, on the importing thread (lenient)
//! or on a worker thread (strict, see `parallel.rs`).

use std::borrow::Cow;

use super::classify::{Class, GpuArgs, classify, kind_reads_args, read_gpu_args};
use super::memory::{MEMORY_EVENT, MemoryArgs, OOM_EVENT, read_plain};
use crate::import::json::{self, Parser, SyntaxError, Value};

/// A pid or tid as read, before normalisation.
#[derive(Clone, Debug)]
pub(super) enum RawId<'a> {
    Int(i64),
    Str(Cow<'a, str>),
}

/// The fields of one event that matter, borrowed from the block.
#[derive(Default)]
pub(super) struct RawEvent<'a> {
    pub(super) ph: u8,
    pub(super) name: Option<Cow<'a, str>>,
    pub(super) cat: Option<Cow<'a, str>>,
    pub(super) ts: Option<&'a [u8]>,
    pub(super) dur: Option<&'a [u8]>,
    pub(super) pid: Option<RawId<'a>>,
    pub(super) tid: Option<RawId<'a>>,
    pub(super) id: Option<RawId<'a>>,
    pub(super) bind_id: Option<RawId<'a>>,
    pub(super) flow_in: bool,
    pub(super) flow_out: bool,
    pub(super) bp_enclosing: bool,
    pub(super) scope: u8,
    pub(super) args: Option<&'a [u8]>,
    /// The args read in place as [`GpuArgs`], for a complete event whose category reads them
    /// (read once instead of skipped, then parsed again): valid when `gpu_args_read` holds the
    /// lenient tokens in them.
    pub(super) gpu_args: GpuArgs,
    pub(super) gpu_args_read: Option<u64>,
    /// The args of a memory instant, read in place where they are laid out as Kineto writes
    /// them ([`read_plain`]; `None` otherwise, and they are parsed from `args`).
    pub(super) memory_args: Option<MemoryArgs>,
    /// The class of `cat`, where the tokenizer needed it to decide on reading the args (the
    /// importer then does not classify it again).
    pub(super) class: Option<Class>,
    /// Fields present with a type that makes no sense (`"ts": true`).
    pub(super) bad_field: Option<&'static str>,
    pub(super) keys: u32,
}

/// Why [`tokenize`] stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Stop {
    /// The data ended between elements.
    End,
    /// The element starting here runs past the end of the data.
    Incomplete(usize),
    /// Strict mode: the element starting here is not a valid event.
    Error(usize),
    /// The `]` closing the event array is here.
    ArrayEnd(usize),
}

/// A problem with one element, reported in lenient mode.
pub(super) enum TokenIssue {
    /// Broken JSON inside a complete element, at this offset.
    Syntax(usize, &'static str),
    /// This many elements in a row that are not objects (numbers are counted in runs).
    NotObjects(u64),
    /// An event of more than [`MAX_EVENT_BYTES`].
    Oversized,
}

/// The largest event read: a bigger one is skipped and counted (real events are at most a
/// few kB; one of hundreds of MB would be held whole while it is read).
pub(super) const MAX_EVENT_BYTES: usize = 64 << 20;

/// Walks the elements of (part of) the event array, calling `on` for each. In strict mode
/// (on a worker thread) it stops at the first problem; in lenient mode it skips broken elements
/// and reports them. When `on` returns false for an event, the walk stops there as at an error
/// (`Stop::Error` at the event's start). Events are read into one [`RawEvent`] lent to `on`
/// (half a kilobyte, which moving per event cost 4% of an import).
pub(super) fn tokenize<'a>(
    data: &'a [u8],
    strict: bool,
    mut on: impl FnMut(Result<&RawEvent<'a>, TokenIssue>, &Parser<'a>) -> bool,
) -> Stop {
    let mut p = Parser::new(data);
    let mut ev = RawEvent::default();
    loop {
        p.skip_separators();
        let Some(b) = p.peek() else { return Stop::End };
        let start = p.offset();
        match b {
            b'{' => match parse_event(&mut p, &mut ev) {
                Ok(()) if p.offset() - start > MAX_EVENT_BYTES => {
                    if strict {
                        return Stop::Error(start);
                    }
                    on(Err(TokenIssue::Oversized), &p);
                }
                Ok(()) => {
                    if !on(Ok(&ev), &p) {
                        return Stop::Error(start);
                    }
                }
                Err(e) => match json::ValueScanner::default().feed(data, start) {
                    None => return Stop::Incomplete(start),
                    Some(_) if strict => return Stop::Error(start),
                    Some(end) => {
                        on(Err(TokenIssue::Syntax(e.offset, e.detail)), &p);
                        p.seek(end);
                    }
                },
            },
            b']' => return Stop::ArrayEnd(start),
            _ if strict => return Stop::Error(start),
            b'0'..=b'9' if let Some((n, first_end, end)) = number_run(&data[start..]) => {
                // A run of numbers (a gigabyte of `0,` is a small gzip): counted in one go.
                p.seek(start + first_end);
                on(Err(TokenIssue::NotObjects(n)), &p);
                p.seek(start + end);
            }
            _ => match p.skip_value() {
                Ok(()) => {
                    on(Err(TokenIssue::NotObjects(1)), &p);
                }
                Err(e) if e.offset >= data.len() => return Stop::Incomplete(start),
                Err(e) => {
                    on(Err(TokenIssue::Syntax(e.offset, e.detail)), &p);
                    p.seek(start + 1);
                }
            },
        }
    }
}

/// Numbers in a row at the start of `data`, as the parser reads them (a digit, then any of
/// `0-9 + - . e E`), separated by commas and blanks, counted up to the last comma before
/// anything else: `(count, end of the first number, offset after that comma)`, or `None` for
/// fewer than two (what follows the last comma is left to the parser, which also sees where
/// the data is cut).
fn number_run(data: &[u8]) -> Option<(u64, usize, usize)> {
    let number_byte = |b: u8| b.is_ascii_digit() || matches!(b, b'+' | b'-' | b'.' | b'e' | b'E');
    let (mut count, mut i, mut first_end) = (0u64, 0usize, 0usize);
    let (mut counted, mut end) = (0u64, 0usize);
    loop {
        while let Some(&b) = data.get(i) {
            if b == b',' {
                counted = count;
                end = i + 1;
            } else if !b.is_ascii_whitespace() {
                break;
            }
            i += 1;
        }
        if !data.get(i).is_some_and(u8::is_ascii_digit) {
            break;
        }
        while data.get(i).is_some_and(|&b| number_byte(b)) {
            i += 1;
        }
        if count == 0 {
            first_end = i;
        }
        count += 1;
    }
    (counted >= 2).then_some((counted, first_end, end))
}

/// Parses the fields of one event object into `ev`, which is cleared first.
pub(super) fn parse_event<'a>(
    p: &mut Parser<'a>,
    ev: &mut RawEvent<'a>,
) -> Result<(), SyntaxError> {
    ev.clear();
    p.object(|p, key| {
        ev.keys += 1;
        match key {
            b"ph" => match p.value()? {
                Value::Str(s) => ev.ph = s.as_bytes().first().copied().unwrap_or(0),
                Value::Null => {}
                _ => ev.bad_field = Some("ph"),
            },
            b"name" => match p.value()? {
                Value::Str(s) => ev.name = Some(s),
                Value::Num(n) => {
                    ev.name = Some(Cow::Owned(String::from_utf8_lossy(n).into_owned()));
                }
                Value::Null => {}
                _ => ev.bad_field = Some("name"),
            },
            b"cat" => match p.value()? {
                Value::Str(s) => {
                    ev.cat = Some(s);
                    ev.class = None;
                }
                Value::Null => {}
                _ => ev.bad_field = Some("cat"),
            },
            b"ts" => ev.ts = number_text(p, &mut ev.bad_field, "ts")?,
            b"dur" => ev.dur = number_text(p, &mut ev.bad_field, "dur")?,
            b"pid" => ev.pid = raw_id(p, &mut ev.bad_field, "pid")?,
            b"tid" => ev.tid = raw_id(p, &mut ev.bad_field, "tid")?,
            b"id" => ev.id = raw_id(p, &mut ev.bad_field, "id")?,
            b"id2" => {
                p.object(|p, k| {
                    if k == b"local" || k == b"global" {
                        ev.id = raw_id(p, &mut ev.bad_field, "id2")?;
                        Ok(())
                    } else {
                        p.skip_value()
                    }
                })?;
            }
            b"bind_id" => ev.bind_id = raw_id(p, &mut ev.bad_field, "bind_id")?,
            b"flow_in" => ev.flow_in = matches!(p.value()?, Value::Bool(true)),
            b"flow_out" => ev.flow_out = matches!(p.value()?, Value::Bool(true)),
            b"bp" => ev.bp_enclosing = matches!(p.value()?, Value::Str(s) if s == "e"),
            b"s" => {
                if let Value::Str(s) = p.value()? {
                    ev.scope = s.as_bytes().first().copied().unwrap_or(b't');
                }
            }
            b"args" => {
                if ev.ph == b'X'
                    && let Some(cat) = ev.cat.as_deref()
                    && kind_reads_args(ev.class.insert(classify(cat)).slice_kind())
                    && p.peek() == Some(b'{')
                {
                    let start = p.offset();
                    let mut sub = p.fork();
                    if read_gpu_args(&mut sub, &mut ev.gpu_args).is_ok() {
                        ev.args = Some(p.text(start, sub.offset()));
                        ev.gpu_args_read = Some(sub.lenient_tokens);
                        p.seek(sub.offset());
                        return Ok(());
                    }
                    // Broken inside: skipped as any object, and read from its text later.
                }
                ev.gpu_args_read = None;
                if matches!(ev.ph, b'i' | b'I' | b'R')
                    && ev
                        .name
                        .as_deref()
                        .is_some_and(|n| n == MEMORY_EVENT || n == OOM_EVENT)
                    && p.peek() == Some(b'{')
                {
                    let start = p.offset();
                    if let Some((args, len)) = read_plain(p.text(start, usize::MAX)) {
                        ev.memory_args = Some(args);
                        ev.args = Some(p.text(start, start + len));
                        p.seek(start + len);
                        return Ok(());
                    }
                }
                ev.memory_args = None;
                if let Value::Object(text) = p.value()? {
                    ev.args = Some(text);
                }
            }
            _ => p.skip_value()?,
        }
        Ok(())
    })
}

impl RawEvent<'_> {
    /// Back to no fields read, for the next event. `gpu_args` is left as it is: it is read
    /// only where `gpu_args_read` says it was filled, and filling it starts from the default.
    fn clear(&mut self) {
        let RawEvent {
            ph,
            name,
            cat,
            ts,
            dur,
            pid,
            tid,
            id,
            bind_id,
            flow_in,
            flow_out,
            bp_enclosing,
            scope,
            args,
            gpu_args: _,
            gpu_args_read,
            memory_args,
            class,
            bad_field,
            keys,
        } = self;
        (*ph, *name, *cat, *ts, *dur) = (0, None, None, None, None);
        (*pid, *tid, *id, *bind_id) = (None, None, None, None);
        (*flow_in, *flow_out, *bp_enclosing, *scope) = (false, false, false, 0);
        (*args, *gpu_args_read, *class, *bad_field, *keys) = (None, None, None, None, 0);
        *memory_args = None;
    }
}

pub(super) fn number_text<'a>(
    p: &mut Parser<'a>,
    bad: &mut Option<&'static str>,
    field: &'static str,
) -> Result<Option<&'a [u8]>, SyntaxError> {
    if let Some(n) = p.digit_number() {
        return Ok(Some(n));
    }
    Ok(match p.value()? {
        Value::Num(n) => Some(n),
        Value::Str(Cow::Borrowed(s)) => Some(s.trim().as_bytes()),
        Value::Str(Cow::Owned(_)) | Value::Bool(_) | Value::Object(_) | Value::Array(_) => {
            *bad = Some(field);
            None
        }
        Value::Null => None,
    })
}

pub(super) fn raw_id<'a>(
    p: &mut Parser<'a>,
    bad: &mut Option<&'static str>,
    field: &'static str,
) -> Result<Option<RawId<'a>>, SyntaxError> {
    let number = |n: &[u8]| match json::int_from_text(n) {
        Some(v) => RawId::Int(v),
        None => RawId::Str(Cow::Owned(String::from_utf8_lossy(n).into_owned())),
    };
    if let Some(n) = p.digit_number() {
        return Ok(Some(number(n)));
    }
    Ok(match p.value()? {
        Value::Num(n) => Some(number(n)),
        Value::Str(s) => Some(RawId::Str(s)),
        Value::Null => None,
        Value::Bool(_) | Value::Object(_) | Value::Array(_) => {
            *bad = Some(field);
            None
        }
    })
}
