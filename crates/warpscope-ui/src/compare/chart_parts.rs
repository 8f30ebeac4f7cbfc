//! Parts the compare charts share: the sweep's x axis (linear or log2), an axis of named slots
//! for grouped bars, and a legend drawn under a plot.

use egui::{Color32, Ui};
use egui_plot::{GridMark, Plot};

/// The x axis of the scaling charts: linear, or log2 with a tick at each power of two when the
/// swept values are positive and span a factor of 4 or more.
#[derive(Clone, Copy)]
pub(super) struct SweepAxis {
    /// log2 of the smallest and largest value, when the axis is log2.
    log2: Option<(f64, f64)>,
}

impl SweepAxis {
    pub(super) fn of(values: &[(f64, usize)]) -> Self {
        let lo = values.iter().map(|v| v.0).fold(f64::INFINITY, f64::min);
        let hi = values.iter().map(|v| v.0).fold(f64::NEG_INFINITY, f64::max);
        Self {
            log2: (lo > 0.0 && hi / lo >= 4.0).then(|| (lo.log2(), hi.log2())),
        }
    }

    pub(super) fn x(self, value: f64) -> f64 {
        if self.log2.is_some() {
            value.log2()
        } else {
            value
        }
    }

    pub(super) fn label(self, key: &str) -> String {
        if self.log2.is_some() {
            format!("{key} (log scale)")
        } else {
            key.to_string()
        }
    }

    pub(super) fn apply<'a>(self, plot: Plot<'a>) -> Plot<'a> {
        let Some((lo, hi)) = self.log2 else {
            return plot;
        };
        #[allow(clippy::cast_possible_truncation)]
        let (first, last) = (lo.floor() as i32, hi.ceil() as i32);
        plot.x_grid_spacer(move |_| {
            (first..=last)
                .map(|p| GridMark {
                    value: f64::from(p),
                    step_size: 1.0,
                })
                .collect()
        })
        .x_axis_formatter(|mark, _| {
            let v = 2f64.powf(mark.value);
            if (v - v.round()).abs() < 1e-6 {
                format!("{}", v.round())
            } else {
                format!("{v:.2}")
            }
        })
        .include_x(lo - 0.25)
        .include_x(hi + 0.25)
    }
}

/// `plot` with one x-axis mark per slot 0, 1, 2... named by `labels` (groups of bars).
pub(super) fn slot_axis(plot: Plot<'_>, labels: Vec<String>) -> Plot<'_> {
    let slots = labels.len();
    plot.x_grid_spacer(move |_| {
        (0..slots)
            .map(|i| GridMark {
                #[allow(clippy::cast_precision_loss)]
                value: i as f64,
                step_size: 1.0,
            })
            .collect()
    })
    .x_axis_formatter(move |mark, _| {
        let slot = mark.value.round();
        if (mark.value - slot).abs() > 1e-6 || slot < 0.0 {
            return String::new();
        }
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        labels.get(slot as usize).cloned().unwrap_or_default()
    })
}

/// A plot's legend, under it rather than over its points: a colour swatch and a name per
/// series, in the order drawn, wrapping as the width needs.
pub(super) fn legend_ui(ui: &mut Ui, entries: impl IntoIterator<Item = (String, Color32)>) {
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        for (name, color) in entries {
            // One widget per entry, so that it moves to the next line as a whole: its swatch
            // stays with its name.
            let galley = ui.painter().layout_no_wrap(
                name.clone(),
                egui::FontId::proportional(11.5),
                ui.visuals().text_color(),
            );
            let size = egui::vec2(18.0 + galley.size().x + 12.0, galley.size().y.max(12.0));
            let (rect, response) = ui.allocate_exact_size(size, egui::Sense::hover());
            response
                .widget_info(|| egui::WidgetInfo::labeled(egui::Role::Label, true, name.as_str()));
            let swatch = egui::Rect::from_center_size(
                egui::pos2(rect.left() + 7.0, rect.center().y),
                egui::vec2(14.0, 6.0),
            );
            ui.painter().rect_filled(swatch, 1.0, color);
            let text_at = egui::pos2(rect.left() + 18.0, rect.center().y - galley.size().y / 2.0);
            ui.painter()
                .galley(text_at, galley, ui.visuals().text_color());
        }
    });
}
