//! The consumer side of the streaming reader: blocks of the event array, what follows it,
//! and how the input ended.

use super::ChromeState;
use super::parallel::Cooked;
use super::tokenize::{MAX_EVENT_BYTES, Stop, TokenIssue, tokenize};
use crate::import::ImportError;
use crate::import::json::{self, Chunk, Parser, Place, SplitError, StreamEnd};

impl ChromeState {
    pub(super) fn chunk(&mut self, chunk: Chunk<Cooked>) -> Result<(), ImportError> {
        match chunk {
            Chunk::Events {
                bytes,
                first_line,
                pre,
            } => {
                self.events_block(&bytes, first_line, pre);
                Ok(())
            }
            Chunk::TopLevel { key, value } => {
                self.top_level(&key, &value);
                Ok(())
            }
            Chunk::EventsStart { array_form, lines } => {
                self.stream.array_form = array_form;
                self.stream.lines = lines;
                Ok(())
            }
            Chunk::End(end) => self.end(end),
            Chunk::Error(SplitError::Io(source)) => Err(ImportError::reading(
                self.path(),
                self.b.source.compressed,
                source,
            )),
            Chunk::Error(SplitError::Syntax { line, detail }) => {
                Err(self.corrupt(line, format!("not valid trace JSON: {detail}")))
            }
        }
    }

    /// The input ended: report truncation and read what followed the event array. A file that
    /// yields nothing because it is broken (cut before or inside its first event, or holding
    /// only broken elements) is an error naming where it ends or breaks.
    pub(super) fn end(&mut self, end: StreamEnd) -> Result<(), ImportError> {
        self.b.source.content_bytes = end.bytes;
        // Only a message counts the lines of the whole file.
        let where_it_ends = |state: &mut Self| {
            let line = state.line(end.end_line);
            (line, format!("byte {} (line {line})", end.bytes))
        };
        if end.compressed_stream_cut && !end.found_events {
            let (end_line, where_it_ends) = where_it_ends(self);
            return Err(self.corrupt(
                end_line,
                format!(
                    "the gzip data ends at {where_it_ends}, before any event: the file is cut off"
                ),
            ));
        }
        if !end.found_events {
            if end.truncated_before_events {
                let (end_line, where_it_ends) = where_it_ends(self);
                return Err(self.corrupt(
                    end_line,
                    format!(
                        "the file ends at {where_it_ends} before any \"traceEvents\" array: it \
                         is cut off or not a trace"
                    ),
                ));
            }
            return Err(ImportError::UnknownFormat {
                path: self.path().to_path_buf(),
                detail: "JSON without a \"traceEvents\" array: not a Chrome trace".to_string(),
            });
        }
        if self.stream.carry_pending {
            // The last element never completed: parse it once more as it is.
            let data = std::mem::take(&mut self.stream.carry);
            self.stream.carry_pending = false;
            let line = self.stream.carry_line;
            self.parse_here(&data, line);
        }
        let closing = if end.array_form { "]" } else { "]}" };
        if !self.stream.in_tail {
            let cut_mid_event = self.stream.skipping
                || self
                    .stream
                    .carry
                    .iter()
                    .any(|b| !b.is_ascii_whitespace() && *b != b',');
            if self.events_read == 0 {
                let what = if cut_mid_event {
                    "inside its first event"
                } else {
                    "before its first event"
                };
                let line = self.line(self.stream.carry_line).max(1);
                let (_, where_it_ends) = where_it_ends(self);
                return Err(self.corrupt(
                    line,
                    format!(
                        "the file ends at {where_it_ends} {what} (no closing `{closing}`): it is \
                         cut off and holds no complete event"
                    ),
                ));
            }
            let what = if cut_mid_event {
                "in the middle of an event"
            } else {
                "inside the event list"
            };
            self.b.warn(
                "truncated",
                1,
                format!(
                    "the file ends {what} (no closing `{closing}`): it was cut off; the complete \
                     events before the cut were loaded"
                ),
            );
            return Ok(());
        }
        if self.events_read == 0
            && let Some((place, detail)) = self.stream.first_broken
        {
            let line = self.line(place);
            return Err(self.corrupt(
                line,
                format!(
                    "no event could be read: every element of \"traceEvents\" is broken or not \
                     an object (the first: {detail})"
                ),
            ));
        }
        self.tail_step(true);
        Ok(())
    }

    /// Reads the complete top-level members at the front of `tail` (what follows the event
    /// array) and drops them; at the `}` closing the trace, or at text that cannot belong to a
    /// trace, the rest of the input is ignored. `last` is true at the end of the input, when
    /// whatever is left is reported as cut off.
    fn tail_step(&mut self, last: bool) {
        const CUT: &str =
            "the file ends before its closing `}`: it was cut off after the event list";
        if self.stream.tail_done {
            return;
        }
        let tail = std::mem::take(&mut self.stream.tail);
        let array_form = self.stream.array_form;
        let mut p = Parser::new(&tail);
        let mut consumed;
        let outcome = loop {
            p.skip_separators();
            consumed = p.offset();
            let failed_at = match p.peek() {
                None => break None,
                Some(b'}') if !array_form => break Some(None),
                Some(b'"') if !array_form => match p.key() {
                    Ok(k) => {
                        let key = String::from_utf8_lossy(&k).into_owned();
                        p.peek();
                        let start = p.offset();
                        match p.skip_value() {
                            Ok(()) => {
                                let value = tail[start..p.offset()].to_vec();
                                self.top_level(&key, &value);
                                continue;
                            }
                            Err(e) => e.offset,
                        }
                    }
                    Err(e) => e.offset,
                },
                Some(_) => p.offset(),
            };
            if failed_at >= tail.len() {
                // A member runs on past what has been read.
                break None;
            }
            break Some(Some(()));
        };
        match outcome {
            // The closing `}`.
            Some(None) => self.stream.tail_done = true,
            Some(Some(())) => {
                self.stream.tail_done = true;
                self.b.warn(
                    "trailing_garbage",
                    1,
                    "text after the event list that is not valid trace JSON was ignored",
                );
            }
            None => {
                let rest = &tail[consumed..];
                if last {
                    if !array_form {
                        self.b.warn("truncated", 1, CUT);
                    }
                } else {
                    self.stream.tail_parsed_len = rest.len();
                    self.stream.tail = rest.to_vec();
                }
            }
        }
    }

    /// Handles one block of the event array. What a worker imported from the block is merged
    /// when the block starts where the previous one ended (no incomplete element carried over),
    /// and the rest of the block is parsed here; otherwise the carried-over bytes and the block
    /// are parsed here.
    pub(super) fn events_block(&mut self, bytes: &[u8], first_line: Place, pre: Option<Cooked>) {
        if self.stream.in_tail {
            self.tail_block(bytes);
            return;
        }
        if self.stream.skipping {
            // Inside an element too big to keep: look for its end, keeping nothing.
            let Some(end) = self.stream.carry_scan.feed(bytes, 0) else {
                return;
            };
            self.stream.skipping = false;
            self.stream.carry.clear();
            self.parse_here(&bytes[end..], first_line.after(&bytes[..end]));
            return;
        }
        let carry_is_blank = self
            .stream
            .carry
            .iter()
            .all(|b| b.is_ascii_whitespace() || *b == b',');
        if carry_is_blank {
            if let Some(pre) = pre {
                if let Some(cooked) = pre.state {
                    self.absorb(*cooked);
                }
                self.stream.carry.clear();
                self.stream.carry_line = first_line;
                // Continue after the last element the reader parsed.
                let rest = &bytes[pre.stop_at..];
                if rest.is_empty() {
                    self.stream.carry_pending = false;
                } else {
                    self.parse_here(rest, first_line.after(&bytes[..pre.stop_at]));
                }
                return;
            }
            self.stream.carry.clear();
            self.stream.carry_line = first_line;
            self.parse_here(bytes, first_line);
        } else {
            let stream = &mut self.stream;
            stream.carry.extend_from_slice(bytes);
            if stream.carry_pending {
                // Parsing the element again before it can have ended would make one huge
                // element cost a pass per block.
                let ended = stream
                    .carry_scan
                    .feed(&stream.carry, stream.carry_scanned)
                    .is_some();
                stream.carry_scanned = stream.carry.len();
                if !ended && stream.carry.len() > MAX_EVENT_BYTES {
                    // Counted as what a whole read would make of it.
                    if stream.carry.first() == Some(&b'{') {
                        stream.oversized += 1;
                    } else {
                        stream.non_objects += 1;
                        if stream.first_broken.is_none() {
                            stream.first_broken =
                                Some((stream.carry_line, "an element that is not an object"));
                        }
                    }
                    stream.skipping = true;
                    stream.carry_pending = false;
                    stream.carry = Vec::new();
                    return;
                }
                if !ended && stream.carry.len() < stream.carry_parsed_len.saturating_mul(2) {
                    return;
                }
            }
            let data = std::mem::take(&mut self.stream.carry);
            let line = self.stream.carry_line;
            self.parse_here(&data, line);
        }
    }

    /// Takes a block that follows the event array. Blanks before anything else are not kept;
    /// what is complete is read at once (again only once the text held has doubled, so one
    /// huge member is not read again for every block).
    fn tail_block(&mut self, bytes: &[u8]) {
        let stream = &mut self.stream;
        if stream.tail_done {
            return;
        }
        let bytes = if stream.tail.is_empty() {
            let start = bytes
                .iter()
                .position(|b| !b.is_ascii_whitespace() && *b != b',')
                .unwrap_or(bytes.len());
            &bytes[start..]
        } else {
            bytes
        };
        stream.tail.extend_from_slice(bytes);
        if stream.tail.len() >= stream.tail_parsed_len.saturating_mul(2) {
            self.tail_step(false);
        }
    }

    /// Parses elements leniently until the data ends, an element is incomplete (kept as the
    /// carry for the next block) or the array closes (the rest is the tail).
    pub(super) fn parse_here(&mut self, data: &[u8], first_line: Place) {
        let mut bad_syntax = 0u64;
        let mut first_bad: Option<(Place, &'static str)> = None;
        let mut non_objects = 0u64;
        let mut first_non_object: Option<(Place, &'static str)> = None;
        let mut oversized = 0u64;
        let mut lenient = 0u64;
        let mut repaired = 0u64;
        let mut control = 0u64;
        let stop = tokenize(data, false, |ev, p| {
            match ev {
                Ok(ev) => {
                    self.events_read += 1;
                    self.event(ev);
                }
                Err(TokenIssue::Syntax(offset, detail)) => {
                    bad_syntax += 1;
                    if first_bad.is_none() {
                        first_bad =
                            Some((first_line.after(&data[..offset.min(data.len())]), detail));
                    }
                }
                Err(TokenIssue::Oversized) => oversized += 1,
                Err(TokenIssue::NotObjects(n)) => {
                    non_objects += n;
                    if first_non_object.is_none() {
                        first_non_object = Some((
                            first_line.after(&data[..p.offset().min(data.len())]),
                            "an element that is not an object",
                        ));
                    }
                }
            }
            lenient = p.lenient_tokens;
            repaired = p.repaired_strings;
            control = p.control_strings;
            true
        });
        self.lenient_tokens += lenient;
        self.repaired_strings += repaired;
        self.control_strings += control;
        let stream = &mut self.stream;
        stream.oversized += oversized;
        stream.bad_syntax += bad_syntax;
        stream.non_objects += non_objects;
        if stream.first_bad_syntax.is_none() {
            stream.first_bad_syntax = first_bad;
        }
        if stream.first_broken.is_none() {
            stream.first_broken = first_bad.or(first_non_object);
        }
        self.stream.carry_pending = false;
        match stop {
            Stop::End => {}
            Stop::Incomplete(at) | Stop::Error(at) => {
                let stream = &mut self.stream;
                stream.carry = data[at..].to_vec();
                stream.carry_line = first_line.after(&data[..at]);
                stream.carry_pending = true;
                stream.carry_parsed_len = stream.carry.len();
                stream.carry_scan = json::ValueScanner::default();
                // Where the element would end if it were complete: nowhere yet (else it would
                // not have stopped here), so the scan goes on from the end of the carry.
                let ended = stream.carry_scan.feed(&stream.carry, 0).is_some();
                stream.carry_scanned = stream.carry.len();
                stream.carry_pending = !ended;
            }
            Stop::ArrayEnd(at) => {
                self.stream.in_tail = true;
                self.tail_block(&data[at + 1..]);
            }
        }
    }
}
