//! The one-line header of a selected time range: its duration, how busy each GPU was in it and
//! the GPU time it holds, with a button to clear the range.

use std::sync::Arc;

use crate::format_duration;
use egui::{RichText, Ui};
use warpscope_core::analysis::range_index::ActivityIndex;
use warpscope_core::{Profile, TimeRange, analysis};

use crate::activity_index::activity_index;
use crate::{ProfileKey, Selection};

/// What the header shows for one range.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeStats {
    /// Length of the range.
    pub duration_ns: i64,
    /// (device, busy ns): time with at least one kernel, copy or set running.
    pub busy_ns: Vec<(u32, i64)>,
    /// Summed duration of the kernels, copies and sets inside the range.
    pub gpu_time_ns: i64,
}

impl RangeStats {
    /// The statistics of `range` in `profile`, by scanning its events.
    pub fn compute(profile: &Profile, range: TimeRange) -> Self {
        Self {
            duration_ns: range.duration_ns(),
            busy_ns: analysis::gpu_busy_ns(profile, range),
            gpu_time_ns: analysis::gpu_total_ns(profile, range),
        }
    }

    /// The same statistics from `index` (built from `profile`), in time that does not grow
    /// with the number of events.
    pub fn compute_indexed(profile: &Profile, index: &ActivityIndex, range: TimeRange) -> Self {
        Self {
            duration_ns: range.duration_ns(),
            busy_ns: index.gpu_busy_ns(profile, range),
            gpu_time_ns: index.gpu_total_ns(profile, range),
        }
    }

    /// Busy time as a share of the range, in percent.
    pub fn busy_pct(&self, busy_ns: i64) -> f64 {
        if self.duration_ns <= 0 {
            return 0.0;
        }
        #[allow(clippy::cast_precision_loss)]
        let p = busy_ns as f64 * 100.0 / self.duration_ns as f64;
        p
    }

    /// The header text without the clear button:
    /// `Range 1.2345ms · GPU 0 busy 87.3% · GPU time 2.1000ms`.
    pub fn text(&self) -> String {
        let mut s = format!("Range {}", format_duration(self.duration_ns));
        for &(device, busy_ns) in &self.busy_ns {
            s.push_str(&format!(
                " · GPU {device} busy {:.1}%",
                self.busy_pct(busy_ns)
            ));
        }
        s.push_str(&format!(
            " · GPU time {}",
            format_duration(self.gpu_time_ns)
        ));
        s
    }
}

/// Cached statistics, kept in egui's memory so the header costs nothing per frame.
#[derive(Clone, Default)]
struct Cached {
    key: Option<(ProfileKey, TimeRange)>,
    stats: Option<Arc<RangeStats>>,
}

/// A one-line header for the selected range: its duration, GPU busy % per device, GPU time;
/// nothing when `selection.range` is None. The clear button sets `selection.range = None`.
pub fn range_stats_ui(ui: &mut Ui, profile: &Profile, selection: &mut Selection) {
    let Some(range) = selection.range else {
        return;
    };
    let id = ui.scope_id().with("warpscope-range-stats");
    let key = (ProfileKey::of(profile), range);
    let cached = ui.data(|d| d.get_temp::<Cached>(id));
    let stats = match cached {
        Some(Cached {
            key: Some(k),
            stats: Some(s),
        }) if k == key => s,
        _ => {
            let index = activity_index(ui.ctx(), profile);
            let s = Arc::new(RangeStats::compute_indexed(profile, &index, range));
            let c = Cached {
                key: Some(key),
                stats: Some(Arc::clone(&s)),
            };
            ui.data_mut(|d| d.insert_temp(id, c));
            s
        }
    };
    ui.horizontal(|ui| {
        ui.label(RichText::new(stats.text()).monospace());
        if ui
            .small_button("clear")
            .on_hover_text("Clear the range: statistics for the whole run")
            .clicked()
        {
            selection.range = None;
        }
    });
}
