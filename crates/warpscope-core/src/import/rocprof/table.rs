//! CSV tables read by column name: ROCm's tools add, drop and reorder columns between versions
//! (rocprofv3 added `Stream_Id` after `Queue_Id`), so no reader counts columns.

use std::io::Read;
use std::path::Path;

use rustc_hash::FxHashMap;

use crate::import::ImportError;

/// The names of a header line, unquoted and trimmed (for sniffing: no full CSV parse).
pub(super) fn header_names(line: &str) -> impl Iterator<Item = &str> {
    line.trim_end_matches(['\r', '\n'])
        .split(',')
        .map(|h| h.trim().trim_matches('"').trim())
}

/// A CSV table being read: its columns by name, and the rows one by one.
pub(super) struct Table<R: Read> {
    reader: csv::Reader<R>,
    columns: FxHashMap<String, usize>,
    record: csv::StringRecord,
    /// Line of the row read last (1 is the header).
    pub(super) line: u64,
    /// Bytes read so far.
    pub(super) bytes: u64,
}

impl<R: Read> Table<R> {
    /// Opens the table and reads its header.
    pub(super) fn open(input: R, path: &Path) -> Result<Self, ImportError> {
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(true)
            .from_reader(input);
        let headers = reader.headers().map_err(|e| csv_error(path, 1, &e))?;
        let columns = headers
            .iter()
            .enumerate()
            .map(|(i, h)| (h.trim().trim_start_matches('\u{feff}').to_string(), i))
            .collect();
        Ok(Self {
            reader,
            columns,
            record: csv::StringRecord::new(),
            line: 1,
            bytes: 0,
        })
    }

    /// The index of column `name`, if the table has it.
    pub(super) fn column(&self, name: &str) -> Option<usize> {
        self.columns.get(name).copied()
    }

    /// The index of the first of `names` the table has.
    pub(super) fn any_column(&self, names: &[&str]) -> Option<usize> {
        names.iter().find_map(|n| self.column(n))
    }

    /// The index of column `name`, or an error naming the file and the missing column.
    pub(super) fn required(
        &self,
        path: &Path,
        name: &str,
        what: &str,
    ) -> Result<usize, ImportError> {
        self.column(name).ok_or_else(|| ImportError::Corrupt {
            path: path.to_path_buf(),
            location: "line 1 (header)".to_string(),
            detail: format!("{what} without a `{name}` column"),
        })
    }

    /// The next row, or `None` at the end. A row the CSV layer cannot read (broken quoting,
    /// invalid UTF-8) is an error naming its line.
    pub(super) fn next_row(&mut self, path: &Path) -> Result<Option<Row<'_>>, ImportError> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => Ok(None),
            Ok(true) => {
                self.line = self
                    .record
                    .position()
                    .map_or(self.line + 1, csv::Position::line);
                self.bytes = self
                    .record
                    .position()
                    .map_or(self.bytes, csv::Position::byte);
                Ok(Some(Row {
                    record: &self.record,
                    line: self.line,
                }))
            }
            Err(e) => {
                let line = e.position().map_or(self.line + 1, csv::Position::line);
                Err(csv_error(path, line, &e))
            }
        }
    }

    /// Bytes of the whole input, once every row was read.
    pub(super) fn total_bytes(&self) -> u64 {
        self.reader.position().byte()
    }
}

fn csv_error(path: &Path, line: u64, e: &csv::Error) -> ImportError {
    ImportError::Corrupt {
        path: path.to_path_buf(),
        location: format!("line {line}"),
        detail: format!("unreadable CSV: {e}"),
    }
}

/// One row of a [`Table`].
pub(super) struct Row<'a> {
    record: &'a csv::StringRecord,
    /// The row's line in the file.
    pub(super) line: u64,
}

impl Row<'_> {
    /// The text of column `col`, trimmed; `None` when the column or the cell is missing or
    /// blank.
    pub(super) fn text(&self, col: Option<usize>) -> Option<&str> {
        let t = self.record.get(col?)?.trim();
        (!t.is_empty()).then_some(t)
    }

    /// The integer in column `col` (decimal, or hex with `0x`; a float with no fraction, as
    /// rocprofv3's stats write them, counts).
    pub(super) fn int(&self, col: Option<usize>) -> Option<i64> {
        parse_int(self.text(col)?)
    }

    /// The number in column `col` as a float.
    pub(super) fn float(&self, col: Option<usize>) -> Option<f64> {
        self.text(col)?.parse().ok()
    }

    /// The unsigned 32-bit integer in column `col`.
    pub(super) fn u32(&self, col: Option<usize>) -> Option<u32> {
        u32::try_from(self.int(col)?).ok()
    }

    /// The unsigned integer in column `col`.
    pub(super) fn u64(&self, col: Option<usize>) -> Option<u64> {
        u64::try_from(self.int(col)?).ok()
    }
}

/// An integer cell: decimal, `0x` hex, or a decimal with a zero fraction (`65624351.000000`);
/// an agent written `Agent 2` or `GPU 2` gives its number.
pub(super) fn parse_int(t: &str) -> Option<i64> {
    let t = t.trim();
    if let Some(hex) = t.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    if let Ok(v) = t.parse::<i64>() {
        return Some(v);
    }
    if let Some((whole, frac)) = t.split_once('.')
        && frac.bytes().all(|b| b == b'0')
    {
        return whole.parse().ok();
    }
    let digits = t.bytes().rev().take_while(u8::is_ascii_digit).count();
    if digits > 0 && digits < t.len() && t.as_bytes()[t.len() - digits - 1] == b' ' {
        return t[t.len() - digits..].parse().ok();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_as_rocm_writes_them() {
        assert_eq!(parse_int("42"), Some(42));
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("65624351.000000"), Some(65_624_351));
        assert_eq!(parse_int("65624351.500000"), None);
        assert_eq!(parse_int("Agent 2"), Some(2));
        assert_eq!(parse_int("GPU"), None);
        assert_eq!(parse_int(""), None);
        let names: Vec<&str> = header_names("\"Kind\", \"Agent_Id\",Queue_Id\r\n").collect();
        assert_eq!(names, ["Kind", "Agent_Id", "Queue_Id"]);
    }

    #[test]
    fn columns_are_found_by_name_and_missing_ones_named() {
        let text = b"\"B\",\"A\"\n1,2\n3";
        let path = Path::new("t.csv");
        let mut t = Table::open(&text[..], path).unwrap();
        let a = t.column("A");
        let b = t.column("B");
        assert_eq!(a, Some(1));
        let err = t.required(path, "C", "a kernel trace").err().unwrap();
        assert_eq!(
            err.to_string(),
            "t.csv: line 1 (header): a kernel trace without a `C` column"
        );
        let row = t.next_row(path).unwrap().unwrap();
        assert_eq!(row.int(a), Some(2));
        // The last row has no trailing newline and lacks a cell.
        let row = t.next_row(path).unwrap().unwrap();
        assert_eq!(row.int(b), Some(3));
        assert_eq!(row.int(a), None);
        assert!(t.next_row(path).unwrap().is_none());
    }
}
