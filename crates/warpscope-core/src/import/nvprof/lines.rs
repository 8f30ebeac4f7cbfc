//! Streaming line reader: the (decompressed) content is read through a `BufReader` one line at a
//! time, so memory follows what the importer keeps, not the size of the file. Each line is
//! converted to UTF-8 (invalid bytes replaced, and noted), its line end (`\n` or `\r\n`) removed,
//! and capped at [`MAX_LINE_BYTES`]. Progress and cancellation are checked every 65 536 lines.

use std::io::{BufRead, BufReader, ErrorKind, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use super::ends_table;
use crate::import::{ImportError, Progress};

/// The longest line read, in bytes. nvprof never writes lines near this long (its longest are
/// kernel names of a few kilobytes); a longer line is an error naming it.
pub(super) const MAX_LINE_BYTES: usize = 8 << 20;

/// Lines between progress reports and cancellation checks.
const CHECK_EVERY: usize = 65_536;

/// One line of the file, without its line end.
#[derive(Clone, Copy, Debug)]
pub(super) struct Line<'a> {
    /// 1-based line number.
    pub(super) no: usize,
    /// The text, without `\n` or `\r\n`.
    pub(super) text: &'a str,
    /// The file ends inside this line (no line break after it): it may be cut short.
    pub(super) open_end: bool,
}

/// A cursor over the lines of the content, with one line of look-ahead.
pub(super) struct Lines<'r> {
    inner: BufReader<Box<dyn Read + Send + 'r>>,
    path: &'r Path,
    compressed: bool,
    file_bytes: u64,
    progress: &'r Progress,
    /// The current line's bytes while it is read (its buffer is swapped with `text`'s).
    raw: Vec<u8>,
    /// The current line.
    text: String,
    /// `text` holds a line not yet consumed.
    pending: bool,
    /// Line number of the line in `text`.
    no: usize,
    /// The line in `text` ended at the end of the file without a line break.
    open_end: bool,
    /// Content bytes read so far.
    read_bytes: u64,
    eof: bool,
    /// Some line held bytes that are not UTF-8.
    pub(super) lossy: bool,
    /// Some byte was not ASCII whitespace.
    pub(super) any_content: bool,
    /// Time spent waiting for the reader (reading and decompressing).
    pub(super) read_time: Duration,
}

impl<'r> Lines<'r> {
    /// Reads lines from `reader`; `path` and `compressed` shape the errors, `file_bytes` (the size
    /// on disk) the progress.
    pub(super) fn new(
        reader: Box<dyn Read + Send + 'r>,
        path: &'r Path,
        compressed: bool,
        file_bytes: u64,
        progress: &'r Progress,
    ) -> Self {
        Self {
            inner: BufReader::with_capacity(1 << 16, reader),
            path,
            compressed,
            file_bytes,
            progress,
            raw: Vec::new(),
            text: String::new(),
            pending: false,
            no: 0,
            open_end: false,
            read_bytes: 0,
            eof: false,
            lossy: false,
            any_content: false,
            read_time: Duration::ZERO,
        }
    }

    /// Content bytes read so far.
    pub(super) fn read_bytes(&self) -> u64 {
        self.read_bytes
    }

    /// Reports progress: content bytes for a plain file; for gzip (whose content size is
    /// unknown) an estimate with a typical 12x ratio, capped below the file size.
    fn report(&self) {
        let done = if self.compressed {
            (self.read_bytes / 12).min(self.file_bytes.saturating_sub(1))
        } else {
            self.read_bytes
        };
        self.progress.set_done(done);
    }

    /// Loads the next line into `text` unless one is pending. False at the end of the content.
    fn fill(&mut self) -> Result<bool, ImportError> {
        if self.pending {
            return Ok(true);
        }
        if self.eof {
            return Ok(false);
        }
        self.raw.clear();
        let mut newline = false;
        let no = self.no + 1;
        loop {
            if self.inner.buffer().is_empty() {
                let t = Instant::now();
                let r = self.inner.fill_buf().map(<[u8]>::len);
                self.read_time += t.elapsed();
                match r {
                    Ok(0) => {
                        self.eof = true;
                        break;
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(source) => {
                        return Err(ImportError::reading(self.path, self.compressed, source));
                    }
                }
            }
            let buf = self.inner.buffer();
            let (take, used) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i, i + 1),
                None => (buf.len(), buf.len()),
            };
            if self.raw.len() + take > MAX_LINE_BYTES {
                return Err(ImportError::Corrupt {
                    path: self.path.to_path_buf(),
                    location: format!("line {no}"),
                    detail: format!(
                        "the line is longer than {} MiB; nvprof does not write such lines",
                        MAX_LINE_BYTES >> 20
                    ),
                });
            }
            self.raw.extend_from_slice(&buf[..take]);
            self.inner.consume(used);
            self.read_bytes += used as u64;
            if used > take {
                newline = true;
                break;
            }
        }
        if !newline && self.raw.is_empty() {
            return Ok(false);
        }
        if self.raw.last() == Some(&b'\r') {
            self.raw.pop();
        }
        if !self.any_content && self.raw.iter().any(|b| !b.is_ascii_whitespace()) {
            self.any_content = true;
        }
        let raw = std::mem::take(&mut self.raw);
        match String::from_utf8(raw) {
            Ok(s) => {
                self.raw = std::mem::replace(&mut self.text, s).into_bytes();
            }
            Err(e) => {
                self.lossy = true;
                let bytes = e.into_bytes();
                self.text = String::from_utf8_lossy(&bytes).into_owned();
                self.raw = bytes;
            }
        }
        self.no = no;
        self.open_end = !newline;
        self.pending = true;
        if no.is_multiple_of(CHECK_EVERY) {
            self.report();
            if self.progress.is_cancelled() {
                return Err(ImportError::Cancelled {
                    path: self.path.to_path_buf(),
                });
            }
        }
        Ok(true)
    }

    fn line(&self) -> Line<'_> {
        Line {
            no: self.no,
            text: &self.text,
            open_end: self.open_end,
        }
    }

    /// The next line, without consuming it.
    pub(super) fn peek(&mut self) -> Result<Option<Line<'_>>, ImportError> {
        Ok(self.fill()?.then(|| self.line()))
    }

    /// The next line.
    pub(super) fn next(&mut self) -> Result<Option<Line<'_>>, ImportError> {
        if !self.fill()? {
            return Ok(None);
        }
        self.pending = false;
        Ok(Some(self.line()))
    }

    /// The next line of the current table, or `None` (consuming nothing) at its end: a blank
    /// line, an nvprof line or the end of the file.
    pub(super) fn next_row(&mut self) -> Result<Option<Line<'_>>, ImportError> {
        if !self.fill()? || ends_table(&self.text) {
            return Ok(None);
        }
        self.pending = false;
        Ok(Some(self.line()))
    }

    /// Skips lines up to the end of the current table.
    pub(super) fn skip_table(&mut self) -> Result<(), ImportError> {
        while self.next_row()?.is_some() {}
        Ok(())
    }

    /// Reports the final progress.
    pub(super) fn finish(&self) {
        self.report();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(data: &'static [u8]) -> Vec<(usize, String, bool)> {
        let progress = Progress::default();
        let mut lines = Lines::new(
            Box::new(data),
            Path::new("t"),
            false,
            data.len() as u64,
            &progress,
        );
        let mut out = Vec::new();
        while let Ok(Some(l)) = lines.next() {
            out.push((l.no, l.text.to_string(), l.open_end));
        }
        out
    }

    #[test]
    fn lines_end_at_newlines_and_crlf() {
        assert_eq!(
            collect(b"a\r\nb\n\nc"),
            [
                (1, "a".to_string(), false),
                (2, "b".to_string(), false),
                (3, String::new(), false),
                (4, "c".to_string(), true)
            ]
        );
        assert_eq!(collect(b"a\n"), [(1, "a".to_string(), false)]);
        assert!(collect(b"").is_empty());
    }

    #[test]
    fn invalid_utf8_is_replaced_and_noted() {
        let progress = Progress::default();
        let data: &[u8] = b"ok\nb\xFFd\n";
        let mut lines = Lines::new(Box::new(data), Path::new("t"), false, 7, &progress);
        assert_eq!(lines.next().ok().flatten().map(|l| l.text), Some("ok"));
        assert!(!lines.lossy);
        assert_eq!(
            lines.next().ok().flatten().map(|l| l.text),
            Some("b\u{FFFD}d")
        );
        assert!(lines.lossy);
    }
}
