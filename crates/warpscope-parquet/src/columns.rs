//! A table built column by column and written as one Parquet file with the low-level column
//! writer: integers as INT64/INT32 exactly, text as UTF-8 strings, missing values as nulls
//! (optional columns). Rows are held in memory only until a row group is full, then written,
//! so memory follows [`ROW_GROUP_ROWS`], not the profile.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::Compression;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::ParquetError;
use crate::sink::{Col, ColumnSink, ColumnType};

/// Rows per row group: large enough for engines to scan fast (DuckDB's own groups are 122,880
/// rows), small enough to bound what the writer and a reader hold at once (about 400 bytes per
/// event row while buffered: 2^20 rows held 460 MB for a trace of 1 M events).
pub(crate) const ROW_GROUP_ROWS: usize = 1 << 17;

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

/// A table under construction: columns declared once, then rows pushed column by column; every
/// [`ROW_GROUP_ROWS`] rows are written to `path` as a row group and dropped.
pub(crate) struct Table {
    name: &'static str,
    path: PathBuf,
    columns: Vec<Column>,
    /// Rows pushed in all.
    rows: usize,
    /// Rows held, not yet written.
    held: usize,
    /// The file, once the first row group is written.
    writer: Option<SerializedFileWriter<File>>,
    /// The first write that failed; later rows are dropped and [`Table::finish`] returns it.
    error: Option<ParquetError>,
}

impl Table {
    /// An empty table named `name` (the Parquet schema's name), to be written to `path`
    /// (created, with its directory, when the first row group is full or at [`Table::finish`]).
    pub fn new(name: &'static str, path: PathBuf) -> Self {
        Self {
            name,
            path,
            columns: Vec::new(),
            rows: 0,
            held: 0,
            writer: None,
            error: None,
        }
    }

    /// Records whether column `c` has a value in this row and gives its values; `None` for
    /// [`Col::NONE`].
    fn present(&mut self, c: Col, present: bool) -> Option<&mut Values> {
        let col = self.columns.get_mut(c.index()?)?;
        if col.optional {
            col.def.push(i16::from(present));
        }
        Some(&mut col.values)
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

    /// Writes the rows not yet written and closes the file (Snappy-compressed, row groups of
    /// [`ROW_GROUP_ROWS`]; a table without rows is one empty row group). Returns the path.
    ///
    /// # Errors
    ///
    /// The first write that failed, naming the file.
    pub fn finish(mut self) -> Result<PathBuf, ParquetError> {
        if self.held > 0 || self.rows == 0 {
            self.write_held();
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(writer) = self.writer.take() {
            writer.close().map_err(|source| ParquetError::Writer {
                path: self.path.clone(),
                source,
            })?;
        }
        Ok(self.path)
    }

    /// Writes the held rows as one row group and drops them; a failure is kept for
    /// [`Table::finish`].
    fn write_held(&mut self) {
        if self.error.is_none()
            && let Err(e) = self.try_write_held()
        {
            self.error = Some(e);
        }
        for c in &mut self.columns {
            c.def.clear();
            match &mut c.values {
                Values::I64(v) => v.clear(),
                Values::I32(v) => v.clear(),
                Values::F64(v) => v.clear(),
                Values::Str(v) => v.clear(),
            }
        }
        self.held = 0;
    }

    fn try_write_held(&mut self) -> Result<(), ParquetError> {
        let path = &self.path;
        let err = |source| ParquetError::Writer {
            path: path.clone(),
            source,
        };
        if self.writer.is_none() {
            self.writer = Some(open(path, &self.schema())?);
        }
        let Some(writer) = self.writer.as_mut() else {
            return Ok(());
        };
        let mut group = writer.next_row_group().map_err(err)?;
        for c in &self.columns {
            let Some(mut w) = group.next_column().map_err(err)? else {
                break;
            };
            let def = c.optional.then_some(c.def.as_slice());
            match &c.values {
                Values::I64(v) => w.typed::<Int64Type>().write_batch(v, def, None),
                Values::I32(v) => w.typed::<Int32Type>().write_batch(v, def, None),
                Values::F64(v) => w.typed::<DoubleType>().write_batch(v, def, None),
                Values::Str(v) => w.typed::<ByteArrayType>().write_batch(v, def, None),
            }
            .map_err(err)?;
            w.close().map_err(err)?;
        }
        group.close().map_err(err)?;
        Ok(())
    }
}

impl ColumnSink for Table {
    fn column(&mut self, name: &'static str, ty: ColumnType, optional: bool) -> Col {
        let values = match ty {
            ColumnType::I64 => Values::I64(Vec::new()),
            ColumnType::I32 => Values::I32(Vec::new()),
            ColumnType::F64 => Values::F64(Vec::new()),
            ColumnType::Str => Values::Str(Vec::new()),
        };
        self.columns.push(Column {
            name,
            optional,
            values,
            def: Vec::new(),
        });
        Col::at(self.columns.len() - 1)
    }

    fn put_i64(&mut self, c: Col, v: Option<i64>) {
        if let (Some(Values::I64(vals)), Some(v)) = (self.present(c, v.is_some()), v) {
            vals.push(v);
        }
    }

    fn put_i32(&mut self, c: Col, v: Option<i32>) {
        if let (Some(Values::I32(vals)), Some(v)) = (self.present(c, v.is_some()), v) {
            vals.push(v);
        }
    }

    fn put_f64(&mut self, c: Col, v: Option<f64>) {
        if let (Some(Values::F64(vals)), Some(v)) = (self.present(c, v.is_some()), v) {
            vals.push(v);
        }
    }

    fn put_str(&mut self, c: Col, v: Option<&str>) {
        if let (Some(Values::Str(vals)), Some(v)) = (self.present(c, v.is_some()), v) {
            vals.push(ByteArray::from(v));
        }
    }

    /// Ends a row (every column must have had one value or null pushed since the last); a full
    /// row group is written.
    fn end_row(&mut self) {
        self.rows += 1;
        self.held += 1;
        if self.held >= ROW_GROUP_ROWS {
            self.write_held();
        }
    }
}

/// Creates `path` (and its directory) as a Parquet file of `schema`.
fn open(path: &Path, schema: &str) -> Result<SerializedFileWriter<File>, ParquetError> {
    let err = |source| ParquetError::Writer {
        path: path.to_path_buf(),
        source,
    };
    let io = |source| ParquetError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| ParquetError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let schema = Arc::new(parse_message_type(schema).map_err(err)?);
    let props = Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("warpscope {}", env!("CARGO_PKG_VERSION")))
            .build(),
    );
    let file = File::create(path).map_err(io)?;
    SerializedFileWriter::new(file, schema, props).map_err(err)
}
