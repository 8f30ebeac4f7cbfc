//! Tokenizing the event array: elements into [`RawEvent`]s, on this thread (lenient) or
//! speculatively on the reader thread (strict, into a [`PreBlock`]).

use std::borrow::Cow;

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
/// (speculative tokenizing on the reader thread) it stops at the first problem; in lenient mode
/// it skips broken elements and reports them.
pub(super) fn tokenize<'a>(
    data: &'a [u8],
    strict: bool,
    mut on: impl FnMut(Result<RawEvent<'a>, TokenIssue>, &Parser<'a>),
) -> Stop {
    let mut p = Parser::new(data);
    loop {
        p.skip_separators();
        let Some(b) = p.peek() else { return Stop::End };
        let start = p.offset();
        match b {
            b'{' => match parse_event(&mut p) {
                Ok(_) if p.offset() - start > MAX_EVENT_BYTES => {
                    if strict {
                        return Stop::Error(start);
                    }
                    on(Err(TokenIssue::Oversized), &p);
                }
                Ok(ev) => on(Ok(ev), &p),
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
                Ok(()) => on(Err(TokenIssue::NotObjects(1)), &p),
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

pub(super) use crate::import::json::count_newlines as count_lines;

/// Text of an event field inside a block, or an unescaped copy.
#[derive(Clone, Copy, Debug)]
pub(super) enum TextRef {
    Slice(u32, u32),
    Owned(u32),
}

/// A pid/tid/id inside a block.
#[derive(Clone, Copy, Debug)]
pub(super) enum IdRef {
    Int(i64),
    Text(TextRef),
}

/// A [`RawEvent`] made on the reader thread, as offsets into its block (so it can cross
/// threads without copying strings).
#[derive(Debug)]
pub(super) struct PreEvent {
    pub(super) ph: u8,
    pub(super) scope: u8,
    pub(super) flow_in: bool,
    pub(super) flow_out: bool,
    pub(super) bp_enclosing: bool,
    pub(super) keys: u32,
    pub(super) bad_field: Option<&'static str>,
    pub(super) name: Option<TextRef>,
    pub(super) cat: Option<TextRef>,
    pub(super) ts: Option<TextRef>,
    pub(super) dur: Option<TextRef>,
    pub(super) pid: Option<IdRef>,
    pub(super) tid: Option<IdRef>,
    pub(super) id: Option<IdRef>,
    pub(super) bind_id: Option<IdRef>,
    pub(super) args: Option<TextRef>,
}

/// A block tokenized on the reader thread.
#[derive(Debug)]
pub(super) struct PreBlock {
    pub(super) events: Vec<PreEvent>,
    /// Unescaped strings referred to by [`TextRef::Owned`].
    pub(super) owned: Vec<String>,
    /// Where tokenizing stopped; the consumer parses the rest itself.
    pub(super) stop_at: usize,
    pub(super) lenient_tokens: u64,
    pub(super) repaired_strings: u64,
    pub(super) control_strings: u64,
}

/// Tokenizes a block on the reader thread (strict: stops at the first problem).
pub(super) fn pre_tokenize(bytes: &[u8]) -> PreBlock {
    let mut block = PreBlock {
        events: Vec::with_capacity(bytes.len() / 256),
        owned: Vec::new(),
        stop_at: 0,
        lenient_tokens: 0,
        repaired_strings: 0,
        control_strings: 0,
    };
    if u32::try_from(bytes.len()).is_err() {
        return block;
    }
    let stop = tokenize(bytes, true, |ev, p| {
        if let Ok(ev) = ev {
            let e = PreEvent::from_raw(&ev, bytes, &mut block.owned);
            block.events.push(e);
        }
        block.lenient_tokens = p.lenient_tokens;
        block.repaired_strings = p.repaired_strings;
        block.control_strings = p.control_strings;
    });
    block.stop_at = match stop {
        Stop::End => bytes.len(),
        Stop::Incomplete(at) | Stop::Error(at) | Stop::ArrayEnd(at) => at,
    };
    block
}

impl PreEvent {
    pub(super) fn from_raw(ev: &RawEvent<'_>, data: &[u8], owned: &mut Vec<String>) -> Self {
        let base = data.as_ptr() as usize;
        let slice = |s: &[u8]| -> Option<TextRef> {
            let start = (s.as_ptr() as usize).checked_sub(base)?;
            let end = start + s.len();
            (end <= data.len()).then(|| {
                TextRef::Slice(
                    u32::try_from(start).unwrap_or(0),
                    u32::try_from(end).unwrap_or(0),
                )
            })
        };
        let mut text = |c: &Cow<'_, str>| -> TextRef {
            match c {
                Cow::Borrowed(s) => slice(s.as_bytes()),
                Cow::Owned(_) => None,
            }
            .unwrap_or_else(|| {
                owned.push(c.to_string());
                TextRef::Owned(u32::try_from(owned.len() - 1).unwrap_or(0))
            })
        };
        let name = ev.name.as_ref().map(&mut text);
        let cat = ev.cat.as_ref().map(&mut text);
        let mut id = |r: &RawId<'_>| -> IdRef {
            match r {
                RawId::Int(v) => IdRef::Int(*v),
                RawId::Str(c) => IdRef::Text(text(c)),
            }
        };
        let pid = ev.pid.as_ref().map(&mut id);
        let tid = ev.tid.as_ref().map(&mut id);
        let eid = ev.id.as_ref().map(&mut id);
        let bind_id = ev.bind_id.as_ref().map(&mut id);
        Self {
            ph: ev.ph,
            scope: ev.scope,
            flow_in: ev.flow_in,
            flow_out: ev.flow_out,
            bp_enclosing: ev.bp_enclosing,
            keys: ev.keys,
            bad_field: ev.bad_field,
            name,
            cat,
            ts: ev.ts.and_then(slice),
            dur: ev.dur.and_then(slice),
            pid,
            tid,
            id: eid,
            bind_id,
            args: ev.args.and_then(slice),
        }
    }

    pub(super) fn to_raw<'a>(&self, bytes: &'a [u8], owned: &'a [String]) -> RawEvent<'a> {
        let raw = |t: TextRef| -> &'a [u8] {
            match t {
                TextRef::Slice(a, b) => bytes.get(a as usize..b as usize).unwrap_or(&[]),
                TextRef::Owned(i) => owned.get(i as usize).map_or(&[][..], |s| s.as_bytes()),
            }
        };
        let text = |t: TextRef| -> Cow<'a, str> {
            match std::str::from_utf8(raw(t)) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => Cow::Owned(String::from_utf8_lossy(raw(t)).into_owned()),
            }
        };
        let id = |r: IdRef| -> RawId<'a> {
            match r {
                IdRef::Int(v) => RawId::Int(v),
                IdRef::Text(t) => RawId::Str(text(t)),
            }
        };
        RawEvent {
            ph: self.ph,
            name: self.name.map(text),
            cat: self.cat.map(text),
            ts: self.ts.map(raw),
            dur: self.dur.map(raw),
            pid: self.pid.map(id),
            tid: self.tid.map(id),
            id: self.id.map(id),
            bind_id: self.bind_id.map(id),
            flow_in: self.flow_in,
            flow_out: self.flow_out,
            bp_enclosing: self.bp_enclosing,
            scope: self.scope,
            args: self.args.map(raw),
            bad_field: self.bad_field,
            keys: self.keys,
        }
    }
}

/// Parses the fields of one event object.
pub(super) fn parse_event<'a>(p: &mut Parser<'a>) -> Result<RawEvent<'a>, SyntaxError> {
    let mut ev = RawEvent::default();
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
                Value::Str(s) => ev.cat = Some(s),
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
                if let Value::Object(text) = p.value()? {
                    ev.args = Some(text);
                }
            }
            _ => p.skip_value()?,
        }
        Ok(())
    })?;
    Ok(ev)
}

pub(super) fn number_text<'a>(
    p: &mut Parser<'a>,
    bad: &mut Option<&'static str>,
    field: &'static str,
) -> Result<Option<&'a [u8]>, SyntaxError> {
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
    Ok(match p.value()? {
        Value::Num(n) => match json::int_from_text(n) {
            Some(v) => Some(RawId::Int(v)),
            None => Some(RawId::Str(Cow::Owned(
                String::from_utf8_lossy(n).into_owned(),
            ))),
        },
        Value::Str(s) => Some(RawId::Str(s)),
        Value::Null => None,
        Value::Bool(_) | Value::Object(_) | Value::Array(_) => {
            *bad = Some(field);
            None
        }
    })
}
