//! Columns and rows of a table: a column is described once ([`ColumnDef`]: header, tooltip,
//! width and the cell it holds, which is also its sort key), and the rows are made from those
//! descriptions, so a header and its cells cannot drift apart.

use std::borrow::Cow;

use super::Cell;

/// One column of a table, described once: its header, the tooltip of the header, its starting
/// width and the [`Cell`] it holds for a row of type `R`. The cell prints the value and is its
/// sort key ([`Cell::compare`]).
#[derive(Clone, Copy, Debug)]
pub struct ColumnDef<R> {
    /// Header text.
    pub title: &'static str,
    /// What the column holds, shown when hovering the header.
    pub hint: &'static str,
    /// Starting width in points; the name column takes what is left.
    pub width: f32,
    /// True for the column that names the row: the filter matches it, a click selects it.
    pub is_name: bool,
    /// The cell of this column for a row.
    pub cell: fn(&R) -> Cell,
}

impl<R> ColumnDef<R> {
    /// A column `width` points wide.
    pub const fn new(
        title: &'static str,
        hint: &'static str,
        width: f32,
        cell: fn(&R) -> Cell,
    ) -> Self {
        Self {
            title,
            hint,
            width,
            is_name: false,
            cell,
        }
    }

    /// The column that names the row (its cell's text is the row's name); it takes the width
    /// the other columns leave.
    pub const fn name(title: &'static str, hint: &'static str, cell: fn(&R) -> Cell) -> Self {
        Self {
            title,
            hint,
            width: 0.0,
            is_name: true,
            cell,
        }
    }

    /// The header as the table draws it.
    pub fn spec(&self) -> ColumnSpec {
        ColumnSpec {
            title: Cow::Borrowed(self.title),
            hint: Cow::Borrowed(self.hint),
            width: self.width,
        }
    }
}

/// The index of the name column of `columns` (the first one marked, else the first column).
pub fn name_column<R>(columns: &[ColumnDef<R>]) -> usize {
    columns.iter().position(|c| c.is_name).unwrap_or(0)
}

/// The cells of `item`, one per column of `columns`, in their order.
pub fn cells_of<R>(columns: &[ColumnDef<R>], item: &R) -> Vec<Cell> {
    columns.iter().map(|c| (c.cell)(item)).collect()
}

/// The header of a column as drawn: its texts may be made at run time (one column per compared
/// run, say).
#[derive(Clone, Debug)]
pub struct ColumnSpec {
    /// Header text.
    pub title: Cow<'static, str>,
    /// What the column holds, shown when hovering the header.
    pub hint: Cow<'static, str>,
    /// Initial width in points; the name column takes the rest.
    pub width: f32,
}

impl ColumnSpec {
    /// A column whose texts are made at run time (one per compared run, say), at least
    /// `width` points wide and wide enough for its title.
    pub fn new(title: impl Into<String>, hint: impl Into<String>, width: f32) -> Self {
        let title = title.into();
        #[allow(clippy::cast_precision_loss)]
        let title_width = title.chars().count() as f32 * 7.5 + 26.0;
        Self {
            title: Cow::Owned(title),
            hint: Cow::Owned(hint.into()),
            width: if width > 0.0 {
                width.max(title_width)
            } else {
                0.0
            },
        }
    }
}

/// One row of a table.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The name the filter matches and a click selects.
    pub name: String,
    /// The cells, one per column (the name column holds [`Cell::Text`]).
    pub cells: Vec<Cell>,
    pub(super) name_lower: String,
}

impl Row {
    /// A row; `cells` includes the name column.
    pub fn new(name: String, cells: Vec<Cell>) -> Self {
        let name_lower = name.to_lowercase();
        Self {
            name,
            cells,
            name_lower,
        }
    }

    /// A row named by the text of its cell in column `name_col`.
    pub fn named_by(cells: Vec<Cell>, name_col: usize) -> Self {
        let name = cells.get(name_col).map(Cell::text).unwrap_or_default();
        Self::new(name, cells)
    }
}

/// The rows of one table, as the analysis ranked them (longest total first).
#[derive(Clone, Debug)]
pub struct TableRows {
    /// The columns.
    pub columns: Vec<ColumnSpec>,
    /// Which column holds the name.
    pub name_col: usize,
    /// The rows.
    pub rows: Vec<Row>,
    /// True if a row's name can be selected on the timeline.
    pub selects_names: bool,
    /// The summed time of all rows and what it is called (`GPU time`), when it means something.
    pub total: Option<(&'static str, i64)>,
}

impl TableRows {
    /// The table of `items` (in their order) under `columns`: one row per item, one cell per
    /// column.
    pub fn from_columns<R>(
        columns: &[ColumnDef<R>],
        items: impl IntoIterator<Item = R>,
        selects_names: bool,
        total: Option<(&'static str, i64)>,
    ) -> Self {
        let name_col = name_column(columns);
        let rows = items
            .into_iter()
            .map(|item| Row::named_by(cells_of(columns, &item), name_col))
            .collect();
        Self {
            columns: columns.iter().map(ColumnDef::spec).collect(),
            name_col,
            rows,
            selects_names,
            total,
        }
    }
}
