//! The ranked tables of a profile: GPU activities (nvprof-style), kernels, copies by kind, API
//! calls and CPU operators, over the selected time range. Sortable by any column, filtered by
//! name, virtualised so thousands of rows cost only the visible ones per frame; clicking a row
//! selects that name on the timeline, and a name selected on the timeline selects its row.

use std::cmp::Ordering;
use std::hash::Hash;

use crate::format_duration;
use egui::{Align, Align2, Color32, FontId, Role, Sense, TextStyle, Ui, WidgetInfo};
use egui_extras::{Column, TableBuilder};
use warpscope_core::analysis::flops::PeakOverride;
use warpscope_core::analysis::strip_version_suffix;
use warpscope_core::strings::StrId;
use warpscope_core::{Profile, TimeRange};

use crate::activity_index::activity_index;
use crate::{ProfileKey, Selection};

mod cell;
mod columns;
mod flops_cells;
mod rows;

pub use cell::{Cell, FigureUnit, format_bytes};
pub use columns::{
    ACTIVITY_COLUMNS, API_COLUMNS, COPY_COLUMNS, KERNEL_COLUMNS, KernelEntry, OP_COLUMNS, OpEntry,
};
pub use flops_cells::FlopsFigures;
pub use rows::{ColumnDef, ColumnSpec, Row, TableRows, cells_of, name_column};

/// Which of the five tables is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TableKind {
    /// Kernels, copies and sets ranked together by total time, as nvprof prints them.
    #[default]
    GpuActivities,
    /// Kernels only.
    Kernels,
    /// Copies and sets grouped by direction, with bytes and bandwidth.
    Copies,
    /// CUDA runtime and driver API calls.
    ApiCalls,
    /// Framework (PyTorch) operators with CPU and GPU time.
    CpuOps,
}

impl TableKind {
    /// The tables in tab order.
    pub const ALL: [Self; 5] = [
        Self::GpuActivities,
        Self::Kernels,
        Self::Copies,
        Self::ApiCalls,
        Self::CpuOps,
    ];

    /// The tab title.
    pub fn title(self) -> &'static str {
        match self {
            Self::GpuActivities => "GPU activities",
            Self::Kernels => "Kernels",
            Self::Copies => "Copies",
            Self::ApiCalls => "API calls",
            Self::CpuOps => "CPU operators",
        }
    }

    /// True for the tables with FLOPs figures, which change with the user's peaks.
    fn has_flops(self) -> bool {
        matches!(self, Self::Kernels | Self::CpuOps)
    }

    fn index(self) -> usize {
        match self {
            Self::GpuActivities => 0,
            Self::Kernels => 1,
            Self::Copies => 2,
            Self::ApiCalls => 3,
            Self::CpuOps => 4,
        }
    }
}

/// Which column the rows are sorted by; `None` keeps the analysis ranking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortBy {
    /// The column.
    pub col: usize,
    /// Largest (or Z) first.
    pub descending: bool,
}

impl SortBy {
    /// The order after a click on the header of `col`: sort by it, or reverse if it already
    /// is; numbers start largest first, text A to Z.
    pub fn after_click(current: Option<Self>, col: usize, numeric: bool) -> Self {
        match current {
            Some(s) if s.col == col => Self {
                col,
                descending: !s.descending,
            },
            _ => Self {
                col,
                descending: numeric,
            },
        }
    }
}

/// The indices of `rows` whose name contains `filter` (case-insensitive), in `sort` order
/// (ties, and no sort, keep the given order).
pub fn filtered_sorted(rows: &[Row], filter: &str, sort: Option<SortBy>) -> Vec<usize> {
    let needle = filter.trim().to_lowercase();
    let mut view: Vec<usize> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| needle.is_empty() || r.name_lower.contains(&needle))
        .map(|(i, _)| i)
        .collect();
    if let Some(sort) = sort {
        let unknown = |i: usize| rows[i].cells.get(sort.col).is_some_and(Cell::is_unknown);
        view.sort_by(|&a, &b| {
            let o = match (rows[a].cells.get(sort.col), rows[b].cells.get(sort.col)) {
                (Some(x), Some(y)) => x.compare(y),
                _ => Ordering::Equal,
            };
            let o = if sort.descending { o.reverse() } else { o };
            // Unknown figures last, whichever the direction.
            unknown(a).cmp(&unknown(b)).then(o).then(a.cmp(&b))
        });
    }
    view
}

/// What the cached rows were computed for: the profile (by address and size, so another
/// profile at the same address is still told apart) and the range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct CacheKey {
    profile: ProfileKey,
    range: TimeRange,
}

impl CacheKey {
    fn of(profile: &Profile, range: TimeRange) -> Self {
        Self {
            profile: ProfileKey::of(profile),
            range,
        }
    }
}

/// The visible rows (indices into [`TableRows::rows`], filtered and sorted) and what they were
/// made from.
#[derive(Clone, Debug, PartialEq)]
struct ViewKey {
    kind: TableKind,
    filter: String,
    sort: Option<SortBy>,
    generation: u64,
}

/// What the tables remember between frames: the current table, the filter, each table's sort
/// order, and the rows computed for the current profile and range.
#[derive(Default)]
pub struct TablesState {
    /// The table shown.
    pub kind: TableKind,
    /// The filter text (case-insensitive substring of the name).
    pub filter: String,
    sort: [Option<SortBy>; 5],
    cache_key: Option<CacheKey>,
    /// The peaks the FLOPs figures of the cached tables are measured against.
    cache_peaks: PeakOverride,
    tables: [Option<TableRows>; 5],
    generation: u64,
    view: Vec<usize>,
    view_key: Option<ViewKey>,
    /// The name of the highlighted row.
    selected_row: Option<String>,
    /// `selection.name` as last seen, to notice when the timeline changes it.
    seen_name: Option<StrId>,
    /// Set when the highlighted row must be scrolled into view.
    scroll_pending: bool,
    rows_drawn: usize,
    computed: u64,
}

impl TablesState {
    /// A state showing `kind`.
    pub fn new(kind: TableKind) -> Self {
        Self {
            kind,
            ..Self::default()
        }
    }

    /// How many rows the last frame laid out (the visible ones, not all of them).
    pub fn rows_drawn(&self) -> usize {
        self.rows_drawn
    }

    /// How many times a table's rows were computed from the profile (they are cached per
    /// profile and range).
    pub fn computations(&self) -> u64 {
        self.computed
    }

    /// The name of the highlighted row, if any.
    pub fn selected_row(&self) -> Option<&str> {
        self.selected_row.as_deref()
    }

    /// The rows of the current table in display order (filtered and sorted), once
    /// [`tables_ui`] has run.
    pub fn visible_rows(&self) -> Vec<&Row> {
        let Some(table) = &self.tables[self.kind.index()] else {
            return Vec::new();
        };
        self.view
            .iter()
            .filter_map(|&i| table.rows.get(i))
            .collect()
    }

    /// Makes sure the rows of the current table are those of `profile` over `range` (the GPU
    /// activities of a range from the profile's [`activity_index`]), their FLOPs figures
    /// against `peaks`: the tables with FLOPs are computed again when the peaks change.
    fn refresh(
        &mut self,
        ctx: &egui::Context,
        profile: &Profile,
        range: TimeRange,
        peaks: PeakOverride,
    ) {
        let key = CacheKey::of(profile, range);
        if self.cache_key != Some(key) {
            self.cache_key = Some(key);
            self.tables = [None, None, None, None, None];
            self.generation += 1;
        }
        if self.cache_peaks != peaks {
            self.cache_peaks = peaks;
            for kind in TableKind::ALL.into_iter().filter(|k| k.has_flops()) {
                self.tables[kind.index()] = None;
            }
            self.generation += 1;
        }
        let slot = &mut self.tables[self.kind.index()];
        if slot.is_none() {
            let index = (!range.is_all()
                && matches!(self.kind, TableKind::GpuActivities | TableKind::Kernels))
            .then(|| activity_index(ctx, profile));
            *slot = Some(TableRows::compute_indexed(
                profile,
                index.as_deref(),
                self.kind,
                range,
                peaks,
            ));
            self.computed += 1;
            self.generation += 1;
        }
        let view_key = ViewKey {
            kind: self.kind,
            filter: self.filter.clone(),
            sort: self.sort[self.kind.index()],
            generation: self.generation,
        };
        if self.view_key.as_ref() != Some(&view_key) {
            self.rebuild_view(&view_key);
            self.view_key = Some(view_key);
        }
    }

    fn rebuild_view(&mut self, key: &ViewKey) {
        self.view = match &self.tables[key.kind.index()] {
            Some(table) => filtered_sorted(&table.rows, &key.filter, key.sort),
            None => Vec::new(),
        };
    }

    /// Clicking a header: sort by that column, or reverse if it already is.
    fn click_header(&mut self, col: usize, numeric: bool) {
        let slot = &mut self.sort[self.kind.index()];
        *slot = Some(SortBy::after_click(*slot, col, numeric));
    }

    /// Follows `selection.name` when something else (the timeline) changed it.
    fn follow_selection(&mut self, profile: &Profile, selection: &Selection) {
        if selection.name == self.seen_name {
            return;
        }
        self.seen_name = selection.name;
        match selection.name {
            Some(id) => {
                self.selected_row = Some(profile.str(id).to_string());
                self.scroll_pending = true;
            }
            None => self.selected_row = None,
        }
    }

    fn row_is_selected(&self, row: &Row) -> bool {
        self.selected_row
            .as_deref()
            .is_some_and(|s| s == row.name || strip_version_suffix(s) == row.name)
    }
}

/// What happened in the tables this frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TablesResponse {
    /// A row was clicked: the name to highlight on the timeline (also written to
    /// `selection.name`).
    pub clicked_name: Option<StrId>,
    /// The user asked to step to the next (true) or previous (false) occurrence of the
    /// selected name.
    pub step: Option<bool>,
}

/// Draws the table tabs, the filter bar and the current table over `selection.range` (the whole
/// run when none), FLOPs figures against `peaks` (the viewer's override). Rows are computed only
/// when the profile, range or peaks change.
pub fn tables_ui(
    ui: &mut Ui,
    profile: &Profile,
    state: &mut TablesState,
    selection: &mut Selection,
    peaks: PeakOverride,
) -> TablesResponse {
    let mut response = TablesResponse::default();
    let range = selection.range.unwrap_or(TimeRange::ALL);
    state.follow_selection(profile, selection);

    state.refresh(ui.ctx(), profile, range, peaks);
    toolbar_ui(ui, state, selection, &mut response);
    state.refresh(ui.ctx(), profile, range, peaks);
    ui.add_space(2.0);

    if let Some(clicked) = table_ui(ui, state) {
        let Some(table) = &state.tables[state.kind.index()] else {
            return response;
        };
        let Some(row) = table.rows.get(clicked) else {
            return response;
        };
        let id = if table.selects_names {
            profile.strings.find(&row.name)
        } else {
            None
        };
        state.selected_row = Some(row.name.clone());
        state.seen_name = id;
        selection.name = id;
        response.clicked_name = id;
    }
    response
}

/// Tabs, filter box and step buttons.
fn toolbar_ui(
    ui: &mut Ui,
    state: &mut TablesState,
    selection: &Selection,
    response: &mut TablesResponse,
) {
    ui.horizontal(|ui| {
        for kind in TableKind::ALL {
            if ui
                .selectable_label(state.kind == kind, kind.title())
                .clicked()
            {
                state.kind = kind;
                state.scroll_pending = state.selected_row.is_some();
            }
        }
        ui.separator();
        let filter = egui::TextEdit::singleline(&mut state.filter)
            .hint_text("Filter by name")
            .desired_width(220.0);
        ui.add(filter);
        if !state.filter.is_empty() {
            let clear = ui.small_button("×").on_hover_text("Clear the filter");
            clear.widget_info(|| WidgetInfo::labeled(Role::Button, true, "clear filter"));
            if clear.clicked() {
                state.filter.clear();
            }
        }
        if selection.name.is_some() {
            if triangle_button_ui(ui, false, "previous occurrence").clicked() {
                response.step = Some(false);
            }
            if triangle_button_ui(ui, true, "next occurrence").clicked() {
                response.step = Some(true);
            }
        }
        ui.with_layout(egui::Layout::right_to_left(Align::Center), |ui| {
            summary_line_ui(ui, state);
        });
    });
}

/// A small button showing ◀ or ▶ (painted, so no font needs the glyph), named `name` for
/// assistive technology and tests.
fn triangle_button_ui(ui: &mut Ui, right: bool, name: &'static str) -> egui::Response {
    let size = egui::vec2(ui.spacing().interact_size.y, ui.spacing().interact_size.y);
    let resp = ui.add_sized(size, egui::Button::new(""));
    let color = ui.style().interact(&resp).fg_stroke.color;
    let c = resp.rect.center();
    let h = size.y * 0.22;
    let (tip, back) = if right { (h, -h) } else { (-h, h) };
    let points = vec![
        egui::pos2(c.x + tip, c.y),
        egui::pos2(c.x + back, c.y - h),
        egui::pos2(c.x + back, c.y + h),
    ];
    ui.painter().add(egui::Shape::convex_polygon(
        points,
        color,
        egui::Stroke::NONE,
    ));
    resp.widget_info(|| WidgetInfo::labeled(Role::Button, true, name));
    let hint = if right {
        "Next occurrence on the timeline"
    } else {
        "Previous occurrence on the timeline"
    };
    resp.on_hover_text(hint)
}

/// A faint bar behind a percentage, as long as the share.
fn percent_bar_ui(ui: &Ui, pct: f64) {
    let rect = ui.max_rect().shrink2(egui::vec2(2.0, 3.0));
    #[allow(clippy::cast_possible_truncation)]
    let frac = (pct / 100.0).clamp(0.0, 1.0) as f32;
    let bar = egui::Rect::from_min_size(rect.min, egui::vec2(rect.width() * frac, rect.height()));
    let color = ui.visuals().selection.bg_fill.gamma_multiply(0.45);
    ui.painter().rect_filled(bar, 2.0, color);
}

/// A small sort arrow, pointing down for descending order, at the right of `rect`.
fn sort_arrow_ui(ui: &Ui, rect: egui::Rect, descending: bool, color: Color32) {
    let c = egui::pos2(rect.right() - 10.0, rect.center().y);
    let h = 3.5;
    let (tip, back) = if descending { (h, -h) } else { (-h, h) };
    let points = vec![
        egui::pos2(c.x, c.y + tip),
        egui::pos2(c.x - h * 1.2, c.y + back),
        egui::pos2(c.x + h * 1.2, c.y + back),
    ];
    ui.painter().add(egui::Shape::convex_polygon(
        points,
        color,
        egui::Stroke::NONE,
    ));
}

/// "N of M rows · GPU time 12.345ms".
fn summary_line_ui(ui: &mut Ui, state: &TablesState) {
    let Some(table) = &state.tables[state.kind.index()] else {
        return;
    };
    let mut text = format!("{} of {} rows", state.view.len(), table.rows.len());
    if let Some((label, total_ns)) = table.total {
        text.push_str(&format!(" · {label} {}", format_duration(total_ns)));
    }
    ui.label(egui::RichText::new(text).weak());
}

/// Paints `text` in the cell, clipped with an ellipsis; returns true if it was clipped.
fn cell_text_ui(ui: &Ui, text: &str, font: FontId, color: Color32, right: bool) -> bool {
    let rect = ui.max_rect().shrink2(egui::vec2(6.0, 0.0));
    let mut job = egui::text::LayoutJob::simple_singleline(text.to_owned(), font, color);
    job.wrap = egui::text::TextWrapping::truncate_at_width(rect.width().max(1.0));
    let galley = ui.fonts_mut(|f| f.layout_job(job));
    let elided = galley.elided;
    let (x, align) = if right {
        (rect.right(), Align2::RIGHT_CENTER)
    } else {
        (rect.left(), Align2::LEFT_CENTER)
    };
    let pos = align
        .align_size_within_rect(
            galley.size(),
            egui::Rect::from_x_y_ranges(x..=x, rect.y_range()),
        )
        .min;
    ui.painter().galley(pos, galley, color);
    elided
}

/// The table itself; returns the index (into the table's rows) of a clicked row.
fn table_ui(ui: &mut Ui, state: &mut TablesState) -> Option<usize> {
    let kind = state.kind;
    let table = state.tables[kind.index()].as_ref()?;
    let scroll_to = if state.scroll_pending {
        state.scroll_pending = false;
        state
            .view
            .iter()
            .position(|&i| table.rows.get(i).is_some_and(|r| state.row_is_selected(r)))
    } else {
        None
    };
    let out = rows_table_ui(
        ui,
        ("warpscope-table", kind.index()),
        table,
        &state.view,
        state.sort[kind.index()],
        &|r| state.row_is_selected(r),
        scroll_to,
    );
    state.rows_drawn = out.drawn;
    if let Some((col, numeric)) = out.header_clicked {
        state.click_header(col, numeric);
    }
    out.clicked
}

/// What happened in a [`rows_table_ui`] this frame.
#[derive(Clone, Copy, Debug, Default)]
pub struct RowsTableOutput {
    /// A header was clicked: its column, and whether the column holds numbers.
    pub header_clicked: Option<(usize, bool)>,
    /// A row was clicked: its index into the table's rows.
    pub clicked: Option<usize>,
    /// How many rows were laid out (the visible ones).
    pub drawn: usize,
}

/// A sortable, virtualised table of `table`'s rows in `view` order: headers with sort arrows
/// and hints, numbers right-aligned in monospace, long texts cut with an ellipsis and shown
/// whole on hover, `is_selected` rows highlighted, `scroll_to` (a position in `view`) brought
/// into view. Only the visible rows are laid out.
pub fn rows_table_ui(
    ui: &mut Ui,
    id_salt: impl Hash + std::fmt::Debug,
    table: &TableRows,
    view: &[usize],
    sort: Option<SortBy>,
    is_selected: &dyn Fn(&Row) -> bool,
    scroll_to: Option<usize>,
) -> RowsTableOutput {
    let columns = &table.columns;
    let name_col = table.name_col;
    let mono = TextStyle::Monospace.resolve(ui.style());
    let body_font = TextStyle::Body.resolve(ui.style());
    let row_height = ui.text_style_height(&TextStyle::Body).max(mono.size) + 6.0;
    let text_color = ui.visuals().text_color();
    let strong_color = ui.visuals().strong_text_color();

    let mut builder = TableBuilder::new(ui)
        .id_salt(id_salt)
        .striped(true)
        .resizable(true)
        .sense(Sense::click())
        .cell_layout(egui::Layout::left_to_right(Align::Center))
        .min_scrolled_height(0.0)
        .auto_shrink([false, false]);
    for (i, c) in columns.iter().enumerate() {
        let column = if i == name_col {
            if name_col + 1 == columns.len() {
                Column::remainder().at_least(160.0).clip(true)
            } else {
                Column::initial(420.0).at_least(120.0).clip(true)
            }
        } else {
            Column::initial(c.width).at_least(40.0).clip(true)
        };
        builder = builder.column(column);
    }
    if let Some(row) = scroll_to {
        builder = builder.scroll_to_row(row, Some(Align::Center));
    }

    let mut out = RowsTableOutput::default();
    let numeric_cols: Vec<bool> = columns
        .iter()
        .enumerate()
        .map(|(i, _)| {
            table
                .rows
                .iter()
                .find_map(|r| r.cells.get(i))
                .is_some_and(Cell::is_numeric)
        })
        .collect();

    builder
        .header(row_height + 2.0, |mut header| {
            for (i, c) in columns.iter().enumerate() {
                let numeric = numeric_cols.get(i).copied().unwrap_or(false);
                let (_, resp) = header.col(|ui| {
                    let mut rect = ui.max_rect();
                    if let Some(s) = sort.filter(|s| s.col == i) {
                        sort_arrow_ui(ui, rect, s.descending, strong_color);
                        rect.max.x -= 14.0;
                    }
                    let mut child = ui.new_child(egui::UiBuilder::new().max_rect(rect));
                    child.set_clip_rect(rect.intersect(ui.clip_rect()));
                    cell_text_ui(&child, &c.title, body_font.clone(), strong_color, numeric);
                });
                let name = match sort {
                    Some(s) if s.col == i && s.descending => format!("{} (descending)", c.title),
                    Some(s) if s.col == i => format!("{} (ascending)", c.title),
                    _ => c.title.to_string(),
                };
                resp.widget_info(|| WidgetInfo::labeled(Role::Button, true, &name));
                if resp.on_hover_text(c.hint.as_ref()).clicked() {
                    out.header_clicked = Some((i, numeric));
                }
            }
        })
        .body(|body| {
            body.rows(row_height, view.len(), |mut row| {
                out.drawn += 1;
                let Some(&ri) = view.get(row.index()) else {
                    return;
                };
                let Some(data) = table.rows.get(ri) else {
                    return;
                };
                let selected = is_selected(data);
                row.set_selected(selected);
                for (ci, cell) in data.cells.iter().enumerate() {
                    let numeric = cell.is_numeric();
                    let mut elided = false;
                    let (_, resp) = row.col(|ui| {
                        let font = if numeric {
                            mono.clone()
                        } else {
                            body_font.clone()
                        };
                        if let Cell::Percent(p) = cell {
                            percent_bar_ui(ui, *p);
                        }
                        let text = cell.text();
                        elided = cell_text_ui(ui, &text, font, text_color, numeric);
                    });
                    if ci == name_col {
                        resp.widget_info(|| {
                            WidgetInfo::selected(Role::Cell, true, selected, &data.name)
                        });
                    } else {
                        let title = columns.get(ci).map_or("", |c| c.title.as_ref());
                        resp.widget_info(|| {
                            WidgetInfo::labeled(
                                Role::Cell,
                                true,
                                format!("{title} {}", cell.text()),
                            )
                        });
                    }
                    let resp = match (cell.note(), elided) {
                        (Some(note), _) => resp.on_hover_text(note),
                        (None, true) => resp.on_hover_text(cell.text()),
                        (None, false) => resp,
                    };
                    if resp.clicked() {
                        out.clicked = Some(ri);
                    }
                }
            });
        });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_print_like_nvprof() {
        assert_eq!(format_bytes(512), "512B");
        assert_eq!(format_bytes(4096), "4.0000KB");
        assert_eq!(format_bytes(1536 * 1024), "1.5000MB");
        assert_eq!(format_bytes(12 * 1024 * 1024 * 1024), "12.000GB");
    }
}
