//! Viewport math of the timeline: the visible time window mapped onto a pixel span, zooming and
//! panning around a fixed point, and the choice of time-axis ticks (1-2-5 steps with units).

use warpscope_core::TimeRange;

/// Narrowest window one can zoom into, in nanoseconds.
pub const MIN_VIEW_NS: f64 = 20.0;

/// The visible time window `[start_ns, end_ns)` in profile nanoseconds (fractional, so zooming
/// deep stays smooth).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Viewport {
    /// Time at the left edge of the lane area.
    pub start_ns: f64,
    /// Time at the right edge of the lane area.
    pub end_ns: f64,
}

impl Viewport {
    /// A window over `[start_ns, end_ns)` (at least [`MIN_VIEW_NS`] wide).
    pub fn new(start_ns: f64, end_ns: f64) -> Self {
        let (a, b) = if start_ns <= end_ns {
            (start_ns, end_ns)
        } else {
            (end_ns, start_ns)
        };
        let mut v = Self {
            start_ns: a,
            end_ns: b,
        };
        v.clamp_width();
        v
    }

    /// Width of the window in nanoseconds.
    pub fn width_ns(&self) -> f64 {
        self.end_ns - self.start_ns
    }

    /// Time at the middle of the window.
    pub fn centre_ns(&self) -> f64 {
        0.5 * (self.start_ns + self.end_ns)
    }

    /// The window as a whole-nanosecond range (rounded outwards).
    pub fn range(&self) -> TimeRange {
        #[allow(clippy::cast_possible_truncation)]
        TimeRange::new(self.start_ns.floor() as i64, self.end_ns.ceil() as i64)
    }

    /// Nanoseconds per pixel when the window spans `width_px` pixels.
    pub fn ns_per_px(&self, width_px: f32) -> f64 {
        self.width_ns() / f64::from(width_px.max(1.0))
    }

    /// Pixel offset (from the left edge) of time `t_ns` over a span of `width_px` pixels.
    pub fn x_of(&self, t_ns: f64, width_px: f32) -> f32 {
        #[allow(clippy::cast_possible_truncation)]
        let x = ((t_ns - self.start_ns) / self.ns_per_px(width_px)) as f32;
        x
    }

    /// Time at pixel offset `x_px` (from the left edge) over a span of `width_px` pixels.
    pub fn t_of(&self, x_px: f32, width_px: f32) -> f64 {
        self.start_ns + f64::from(x_px) * self.ns_per_px(width_px)
    }

    /// Zooms by `factor` (< 1 zooms in) keeping time `anchor_ns` at the same screen position.
    pub fn zoom_at(&mut self, anchor_ns: f64, factor: f64) {
        let factor = factor.max(MIN_VIEW_NS / self.width_ns().max(MIN_VIEW_NS));
        self.start_ns = anchor_ns - (anchor_ns - self.start_ns) * factor;
        self.end_ns = anchor_ns + (self.end_ns - anchor_ns) * factor;
        self.clamp_width();
    }

    /// Shifts the window by `delta_ns` (positive moves later in time).
    pub fn pan_ns(&mut self, delta_ns: f64) {
        self.start_ns += delta_ns;
        self.end_ns += delta_ns;
    }

    /// Moves the window so that it is centred on `t_ns`, keeping its width.
    pub fn centre_on(&mut self, t_ns: f64) {
        let half = 0.5 * self.width_ns();
        self.start_ns = t_ns - half;
        self.end_ns = t_ns + half;
    }

    fn clamp_width(&mut self) {
        if self.width_ns() < MIN_VIEW_NS {
            let c = self.centre_ns();
            self.start_ns = c - MIN_VIEW_NS / 2.0;
            self.end_ns = c + MIN_VIEW_NS / 2.0;
        }
    }
}

/// A unit of the time axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl TimeUnit {
    /// Nanoseconds in one unit.
    pub fn ns(self) -> f64 {
        match self {
            Self::Ns => 1.0,
            Self::Us => 1e3,
            Self::Ms => 1e6,
            Self::S => 1e9,
        }
    }

    /// Symbol printed after numbers.
    pub fn symbol(self) -> &'static str {
        match self {
            Self::Ns => "ns",
            Self::Us => "µs",
            Self::Ms => "ms",
            Self::S => "s",
        }
    }

    /// The largest unit not larger than `step_ns` (so tick labels never read `0.001 s`).
    pub fn for_step(step_ns: f64) -> Self {
        if step_ns >= 1e9 {
            Self::S
        } else if step_ns >= 1e6 {
            Self::Ms
        } else if step_ns >= 1e3 {
            Self::Us
        } else {
            Self::Ns
        }
    }
}

/// Tick spacing for the time axis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ticks {
    /// Distance between major ticks in nanoseconds (1, 2 or 5 times a power of ten, at least 1).
    pub step_ns: f64,
    /// Unit of the labels.
    pub unit: TimeUnit,
    /// Decimals needed in the labels so that consecutive ticks read differently.
    pub decimals: usize,
}

/// Chooses the smallest 1-2-5 step whose ticks are at least `min_spacing_px` apart.
pub fn choose_ticks(ns_per_px: f64, min_spacing_px: f64) -> Ticks {
    let raw = (ns_per_px * min_spacing_px).max(1.0);
    let mut exp = raw.log10().floor();
    let mut step;
    loop {
        let base = 10f64.powf(exp);
        step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * base)
            .find(|s| *s >= raw * (1.0 - 1e-9));
        if step.is_some() {
            break;
        }
        exp += 1.0;
    }
    let step_ns = step.unwrap_or(raw).round().max(1.0);
    let unit = TimeUnit::for_step(step_ns);
    let in_unit = step_ns / unit.ns();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let decimals = if in_unit >= 1.0 {
        0
    } else {
        (-in_unit.log10()).ceil().max(0.0) as usize
    };
    Ticks {
        step_ns,
        unit,
        decimals,
    }
}

impl Ticks {
    /// The tick times inside `[start_ns, end_ns]`.
    pub fn positions(&self, start_ns: f64, end_ns: f64) -> impl Iterator<Item = f64> + use<> {
        let step = self.step_ns;
        let first = (start_ns / step).ceil();
        #[allow(clippy::cast_possible_truncation)]
        let count = (((end_ns - first * step) / step).floor() + 1.0).clamp(0.0, 10_000.0) as usize;
        (0..count).map(move |k| (first + k as f64) * step)
    }

    /// The label of the tick at `t_ns` (`1.5 ms`).
    pub fn label(&self, t_ns: f64) -> String {
        let v = t_ns / self.unit.ns();
        let v = if v.abs() < 1e-12 { 0.0 } else { v };
        format!("{v:.*} {}", self.decimals, self.unit.symbol())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pixels_and_times_convert_both_ways() {
        let v = Viewport::new(1_000.0, 2_000.0);
        assert!((v.x_of(1_500.0, 100.0) - 50.0).abs() < 1e-4);
        assert!((v.t_of(25.0, 100.0) - 1_250.0).abs() < 1e-9);
        assert_eq!(v.range(), TimeRange::new(1_000, 2_000));
    }

    #[test]
    fn zoom_keeps_the_anchor_in_place() {
        let mut v = Viewport::new(0.0, 1_000_000.0);
        let anchor = 300_000.0;
        let x_before = v.x_of(anchor, 800.0);
        v.zoom_at(anchor, 0.5);
        assert!((v.width_ns() - 500_000.0).abs() < 1e-6);
        assert!((v.x_of(anchor, 800.0) - x_before).abs() < 1e-3);
        v.zoom_at(anchor, 1e-9);
        assert!((v.width_ns() - MIN_VIEW_NS).abs() < 1e-6);
    }

    #[test]
    fn pan_and_centre_keep_the_width() {
        let mut v = Viewport::new(0.0, 100.0);
        v.pan_ns(50.0);
        assert_eq!((v.start_ns, v.end_ns), (50.0, 150.0));
        v.centre_on(1_000.0);
        assert_eq!((v.start_ns, v.end_ns), (950.0, 1_050.0));
    }

    #[test]
    fn ticks_use_1_2_5_steps_and_readable_units() {
        // 1 ms over 1000 px, 100 px apart: 100 µs.
        let t = choose_ticks(1_000.0, 100.0);
        assert_eq!(t.step_ns, 100_000.0);
        assert_eq!(t.unit, TimeUnit::Us);
        assert_eq!(t.label(300_000.0), "300 µs");
        // 130 ns/px: 13 µs wanted, 20 µs chosen.
        let t = choose_ticks(130.0, 100.0);
        assert_eq!(t.step_ns, 20_000.0);
        // 4 ms/px: 400 ms wanted, 500 ms chosen, in ms.
        let t = choose_ticks(4e6, 100.0);
        assert_eq!(t.step_ns, 5e8);
        assert_eq!(t.label(1.5e9), "1500 ms");
        // 2.5 s wanted: 5 s.
        let t = choose_ticks(2.5e7, 100.0);
        assert_eq!(t.step_ns, 5e9);
        assert_eq!(t.label(1e10), "10 s");
        // Tiny steps never go below 1 ns.
        let t = choose_ticks(0.001, 100.0);
        assert_eq!(t.step_ns, 1.0);
        assert_eq!(t.label(7.0), "7 ns");
    }

    #[test]
    fn tick_positions_cover_the_window() {
        let t = choose_ticks(10.0, 100.0); // 1 µs steps
        let p: Vec<f64> = t.positions(1_500.0, 5_200.0).collect();
        assert_eq!(p, vec![2_000.0, 3_000.0, 4_000.0, 5_000.0]);
    }
}
