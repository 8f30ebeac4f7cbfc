//! The consumer side of the streaming reader: blocks of the event array, what follows it,
//! and how the input ended.

use super::ChromeState;
use super::tokenize::{PreBlock, Stop, TokenIssue, count_lines, tokenize};
use crate::import::ImportError;
use crate::import::json::{Chunk, Parser, SplitError, StreamEnd};

impl ChromeState {
    pub(super) fn chunk(&mut self, chunk: Chunk<PreBlock>) -> Result<(), ImportError> {
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

    /// The input ended: report truncation and read what followed the event array.
    pub(super) fn end(&mut self, end: StreamEnd) -> Result<(), ImportError> {
        self.b.source.content_bytes = end.bytes;
        if end.compressed_stream_cut && !end.found_events {
            return Err(self.corrupt(
                1,
                "the gzip data ends before any event: the file is cut off",
            ));
        }
        if !end.found_events {
            if end.truncated_before_events {
                return Err(self.corrupt(
                    1,
                    "the file ends before any \"traceEvents\" array: it is cut off or not a trace",
                ));
            }
            return Err(ImportError::UnknownFormat {
                path: self.path().to_path_buf(),
                detail: "JSON without a \"traceEvents\" array: not a Chrome trace".to_string(),
            });
        }
        let closing = if end.array_form { "]" } else { "]}" };
        if !self.stream.in_tail {
            let cut_mid_event = self
                .stream
                .carry
                .iter()
                .any(|b| !b.is_ascii_whitespace() && *b != b',');
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
        let tail = std::mem::take(&mut self.stream.tail);
        self.tail(&tail, end.array_form);
        Ok(())
    }

    /// Parses what follows the event array: more top-level keys and the closing `}`.
    pub(super) fn tail(&mut self, tail: &[u8], array_form: bool) {
        const CUT: &str =
            "the file ends before its closing `}`: it was cut off after the event list";
        let mut p = Parser::new(tail);
        loop {
            p.skip_separators();
            let failed_at = match p.peek() {
                None if array_form => return,
                None => {
                    self.b.warn("truncated", 1, CUT);
                    return;
                }
                Some(b'}') if !array_form => return,
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
                self.b.warn("truncated", 1, CUT);
            } else {
                self.b.warn(
                    "trailing_garbage",
                    1,
                    "text after the event list that is not valid trace JSON was ignored",
                );
            }
            return;
        }
    }

    /// Handles one block of the event array. A block tokenized on the reader thread is used
    /// when it starts where the previous block ended (no incomplete element carried over);
    /// otherwise the carried-over bytes and the block are parsed here.
    pub(super) fn events_block(&mut self, bytes: &[u8], first_line: u64, pre: Option<PreBlock>) {
        if self.stream.in_tail {
            self.stream.tail.extend_from_slice(bytes);
            return;
        }
        let carry_is_blank = self
            .stream
            .carry
            .iter()
            .all(|b| b.is_ascii_whitespace() || *b == b',');
        if carry_is_blank {
            if let Some(pre) = pre {
                self.lenient_tokens += pre.lenient_tokens;
                self.repaired_strings += pre.repaired_strings;
                self.control_strings += pre.control_strings;
                for e in &pre.events {
                    let ev = e.to_raw(bytes, &pre.owned);
                    self.events_read += 1;
                    self.event(&ev);
                }
                self.stream.carry.clear();
                self.stream.carry_line = first_line;
                // Continue after the last element the reader parsed.
                let rest = &bytes[pre.stop_at..];
                let rest_line = first_line + count_lines(&bytes[..pre.stop_at]);
                self.parse_here(rest, rest_line);
                return;
            }
            self.stream.carry.clear();
            self.stream.carry_line = first_line;
            self.parse_here(bytes, first_line);
        } else {
            let mut data = std::mem::take(&mut self.stream.carry);
            data.extend_from_slice(bytes);
            let line = self.stream.carry_line;
            self.parse_here(&data, line);
        }
    }

    /// Parses elements leniently until the data ends, an element is incomplete (kept as the
    /// carry for the next block) or the array closes (the rest is the tail).
    pub(super) fn parse_here(&mut self, data: &[u8], first_line: u64) {
        let mut bad_syntax = 0u64;
        let mut first_bad: Option<(u64, &'static str)> = None;
        let mut non_objects = 0u64;
        let mut lenient = 0u64;
        let mut repaired = 0u64;
        let mut control = 0u64;
        let stop = tokenize(data, false, |ev, p| {
            match ev {
                Ok(ev) => {
                    self.events_read += 1;
                    self.event(&ev);
                }
                Err(TokenIssue::Syntax(offset, detail)) => {
                    bad_syntax += 1;
                    if first_bad.is_none() {
                        first_bad = Some((
                            first_line + count_lines(&data[..offset.min(data.len())]),
                            detail,
                        ));
                    }
                }
                Err(TokenIssue::NotObject) => non_objects += 1,
            }
            lenient = p.lenient_tokens;
            repaired = p.repaired_strings;
            control = p.control_strings;
        });
        self.lenient_tokens += lenient;
        self.repaired_strings += repaired;
        self.control_strings += control;
        match stop {
            Stop::End => {}
            Stop::Incomplete(at) | Stop::Error(at) => {
                self.stream.carry = data[at..].to_vec();
                self.stream.carry_line = first_line + count_lines(&data[..at]);
            }
            Stop::ArrayEnd(at) => {
                self.stream.in_tail = true;
                self.stream.tail = data[at + 1..].to_vec();
            }
        }
        if non_objects > 0 {
            self.b.warn(
                "non_object_event",
                non_objects,
                "elements of traceEvents that are not objects were skipped",
            );
        }
        if let Some((line, detail)) = first_bad {
            self.b.warn(
                "bad_event_syntax",
                bad_syntax,
                format!("events with broken JSON were skipped (first at line {line}: {detail})"),
            );
        }
    }
}
