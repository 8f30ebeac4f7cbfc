//! A table built column by column in memory and written as one Parquet file with the
//! low-level column writer: integers as INT64/INT32 exactly, text as UTF-8 strings, missing
//! values as nulls (optional columns).

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::ExportError;

/// Rows per row group: large enough for engines to scan fast, small enough to bound what a
/// reader holds at once.
const ROW_GROUP_ROWS: usize = 1 << 20;

/// The values of one column.
enum Values {
    I64(Vec<i64>),
    I32(Vec<i32>),
    F64(Vec<f64>),
    Str(Vec<ByteArray>),
}

/// One column: its name, whether it may hold nulls, its non-null values and, for an optional
/// column, one definition level per row (1: a value, 0: null).
struct Column {
    name: &'static str,
    optional: bool,
    values: Values,
    def: Vec<i16>,
}

impl Column {
    fn parquet_type(&self) -> &'static str {
        match self.values {
            Values::I64(_) => "int64",
            Values::I32(_) => "int32",
            Values::F64(_) => "double",
            Values::Str(_) => "binary",
        }
    }
}

/// A table under construction: columns declared once, then rows pushed column by column.
pub(crate) struct Table {
    name: &'static str,
    columns: Vec<Column>,
    rows: usize,
}

/// A column of a [`Table`], by position.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Col(usize);

impl Col {
    /// No column (a table without that column).
    pub const NONE: Self = Self(usize::MAX);
}

impl Table {
    /// An empty table named `name` (the Parquet schema's name).
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            columns: Vec::new(),
            rows: 0,
        }
    }

    fn add(&mut self, name: &'static str, optional: bool, values: Values) -> Col {
        self.columns.push(Column {
            name,
            optional,
            values,
            def: Vec::new(),
        });
        Col(self.columns.len() - 1)
    }

    /// Declares an INT64 column.
    pub fn i64(&mut self, name: &'static str, optional: bool) -> Col {
        self.add(name, optional, Values::I64(Vec::new()))
    }

    /// Declares an INT32 column.
    pub fn i32(&mut self, name: &'static str, optional: bool) -> Col {
        self.add(name, optional, Values::I32(Vec::new()))
    }

    /// Declares a DOUBLE column.
    pub fn f64(&mut self, name: &'static str, optional: bool) -> Col {
        self.add(name, optional, Values::F64(Vec::new()))
    }

    /// Declares a UTF-8 string column.
    pub fn str(&mut self, name: &'static str, optional: bool) -> Col {
        self.add(name, optional, Values::Str(Vec::new()))
    }

    fn present(&mut self, c: Col, present: bool) -> &mut Values {
        let col = &mut self.columns[c.0];
        if col.optional {
            col.def.push(i16::from(present));
        }
        &mut col.values
    }

    /// Appends an integer (or a null) to an INT64 column.
    pub fn put_i64(&mut self, c: Col, v: Option<i64>) {
        if let (Values::I64(vals), Some(v)) = (self.present(c, v.is_some()), v) {
            vals.push(v);
        }
    }

    /// Appends an integer (or a null) to an INT32 column.
    pub fn put_i32(&mut self, c: Col, v: Option<i32>) {
        if let (Values::I32(vals), Some(v)) = (self.present(c, v.is_some()), v) {
            vals.push(v);
        }
    }

    /// Appends a number (or a null) to a DOUBLE column.
    pub fn put_f64(&mut self, c: Col, v: Option<f64>) {
        if let (Values::F64(vals), Some(v)) = (self.present(c, v.is_some()), v) {
            vals.push(v);
        }
    }

    /// Appends a string (or a null) to a string column.
    pub fn put_str(&mut self, c: Col, v: Option<&str>) {
        if let (Values::Str(vals), Some(v)) = (self.present(c, v.is_some()), v) {
            vals.push(ByteArray::from(v));
        }
    }

    /// Ends a row (every column must have had one value or null pushed since the last).
    pub fn end_row(&mut self) {
        self.rows += 1;
    }

    /// Number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The Parquet schema of the table.
    fn schema(&self) -> String {
        let mut s = format!("message {} {{\n", self.name);
        for c in &self.columns {
            let repetition = if c.optional { "optional" } else { "required" };
            let annotation = if matches!(c.values, Values::Str(_)) {
                " (UTF8)"
            } else {
                ""
            };
            s.push_str(&format!(
                "  {repetition} {} {}{annotation};\n",
                c.parquet_type(),
                c.name
            ));
        }
        s.push('}');
        s
    }

    /// Writes the table to `path` (Snappy-compressed, row groups of [`ROW_GROUP_ROWS`]).
    pub fn write(&self, path: &Path) -> Result<(), ExportError> {
        let err = |source| ExportError::Parquet {
            path: path.to_path_buf(),
            source,
        };
        let schema = Arc::new(parse_message_type(&self.schema()).map_err(err)?);
        let props = Arc::new(
            WriterProperties::builder()
                .set_compression(Compression::SNAPPY)
                .set_created_by(format!("warpscope {}", env!("CARGO_PKG_VERSION")))
                .build(),
        );
        let file = File::create(path).map_err(|source| ExportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let mut writer = SerializedFileWriter::new(file, schema, props).map_err(err)?;
        // Per column, where its values of the next row group start.
        let mut value_at = vec![0usize; self.columns.len()];
        let mut row = 0;
        while row < self.rows || (row == 0 && self.rows == 0) {
            let end = (row + ROW_GROUP_ROWS).min(self.rows);
            let mut group = writer.next_row_group().map_err(err)?;
            for (c, at) in self.columns.iter().zip(value_at.iter_mut()) {
                let Some(mut w) = group.next_column().map_err(err)? else {
                    break;
                };
                let def = c.optional.then(|| &c.def[row..end]);
                let n = def.map_or(end - row, |d| d.iter().filter(|&&l| l == 1).count());
                let range = *at..*at + n;
                *at += n;
                match &c.values {
                    Values::I64(v) => w.typed::<Int64Type>().write_batch(&v[range], def, None),
                    Values::I32(v) => w.typed::<Int32Type>().write_batch(&v[range], def, None),
                    Values::F64(v) => w.typed::<DoubleType>().write_batch(&v[range], def, None),
                    Values::Str(v) => w.typed::<ByteArrayType>().write_batch(&v[range], def, None),
                }
                .map_err(err)?;
                w.close().map_err(err)?;
            }
            group.close().map_err(err)?;
            if self.rows == 0 {
                break;
            }
            row = end;
        }
        writer.close().map_err(err)?;
        Ok(())
    }
}
