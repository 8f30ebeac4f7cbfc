//! One value of a table cell: how it prints and how it sorts.

use std::cmp::Ordering;

use crate::format_duration;

/// One value of a table cell; it knows how to print and how to compare itself.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    /// A duration in nanoseconds.
    DurationNs(i64),
    /// A duration that may be unknown (the median of recorded nvprof rows).
    MaybeDurationNs(Option<i64>),
    /// A count.
    Count(u64),
    /// A size in bytes, printed 1024-based like nvprof.
    Bytes(u64),
    /// A percentage.
    Percent(f64),
    /// A bandwidth in GB/s (10^9 bytes per second).
    Gbps(f64),
    /// A count that may be absent (a kernel a run does not have).
    MaybeCount(Option<u64>),
    /// A ratio against a baseline (`1.25×`), absent when there is nothing to compare.
    Ratio(Option<f64>),
    /// A signed difference of durations (`+1.2000ms`, `-35.000µs`).
    DiffNs(i64),
    /// A percentage that may be unknown (occupancy without launch details).
    MaybePercent(Option<f64>),
    /// Yes or nothing (runs on Tensor Cores).
    Flag(bool),
    /// A FLOPs figure that may be unknown (`—`, never 0; sorted last either way), with what it
    /// rests on, shown on hover.
    Figure {
        /// The value, in the figure's unit.
        value: Option<f64>,
        /// What the value is.
        unit: FigureUnit,
        /// The hover text: what the figure is, and the peak it is measured against.
        note: String,
    },
    /// Text (names, kinds).
    Text(String),
}

/// What a [`Cell::Figure`] holds (`docs/flops.md`, section 6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FigureUnit {
    /// A FLOP count.
    Flops,
    /// Achieved TFLOP/s.
    TflopsPerS,
    /// A percentage of the peak.
    PctOfPeak,
    /// FLOPs per byte.
    Intensity,
}

impl Cell {
    /// The cell as shown.
    pub fn text(&self) -> String {
        match self {
            Self::DurationNs(ns) => format_duration(*ns),
            Self::MaybeDurationNs(Some(ns)) => format_duration(*ns),
            Self::MaybeDurationNs(None) => "–".to_string(),
            Self::Count(n) => n.to_string(),
            Self::Bytes(b) => format_bytes(*b),
            Self::Percent(p) => format!("{p:.2}%"),
            Self::Gbps(g) => format!("{g:.2} GB/s"),
            Self::MaybeCount(Some(n)) => n.to_string(),
            Self::MaybeCount(None) | Self::Ratio(None) => "–".to_string(),
            Self::Ratio(Some(r)) => format!("{r:.2}×"),
            Self::DiffNs(0) => "0".to_string(),
            Self::DiffNs(d) if *d > 0 => format!("+{}", format_duration(*d)),
            Self::DiffNs(d) => format!("-{}", format_duration(d.saturating_abs())),
            Self::MaybePercent(Some(p)) => format!("{p:.0}%"),
            Self::MaybePercent(None) => "–".to_string(),
            Self::Flag(true) => "yes".to_string(),
            Self::Flag(false) => String::new(),
            Self::Figure { value: None, .. } => crate::flops::UNKNOWN.to_string(),
            Self::Figure {
                value: Some(v),
                unit,
                ..
            } => match unit {
                FigureUnit::Flops => crate::flops::format_flops(*v),
                FigureUnit::TflopsPerS => crate::flops::format_tflops(*v),
                FigureUnit::PctOfPeak => format!("{v:.1}%"),
                FigureUnit::Intensity => format!("{v:.2}"),
            },
            Self::Text(s) => s.clone(),
        }
    }

    /// What hovering the cell tells beyond its text, if anything.
    pub fn note(&self) -> Option<&str> {
        match self {
            Self::Figure { note, .. } if !note.is_empty() => Some(note),
            _ => None,
        }
    }

    /// True for a figure that is unknown: such cells sort last whichever the direction.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Self::Figure { value: None, .. })
    }

    /// True for numbers (right-aligned, monospace).
    pub fn is_numeric(&self) -> bool {
        !matches!(self, Self::Text(_))
    }

    /// Orders two cells of one column (absent values first).
    pub fn compare(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::DurationNs(a), Self::DurationNs(b)) => a.cmp(b),
            (Self::MaybeDurationNs(a), Self::MaybeDurationNs(b)) => a.cmp(b),
            (Self::Count(a) | Self::Bytes(a), Self::Count(b) | Self::Bytes(b)) => a.cmp(b),
            (Self::Percent(a) | Self::Gbps(a), Self::Percent(b) | Self::Gbps(b)) => a.total_cmp(b),
            (Self::MaybeCount(a), Self::MaybeCount(b)) => a.cmp(b),
            (Self::Ratio(a), Self::Ratio(b)) => match (a, b) {
                (Some(x), Some(y)) => x.total_cmp(y),
                _ => a.is_some().cmp(&b.is_some()),
            },
            (Self::DiffNs(a), Self::DiffNs(b)) => a.cmp(b),
            (Self::MaybePercent(a), Self::MaybePercent(b)) => match (a, b) {
                (Some(x), Some(y)) => x.total_cmp(y),
                _ => a.is_some().cmp(&b.is_some()),
            },
            (Self::Flag(a), Self::Flag(b)) => a.cmp(b),
            (Self::Figure { value: a, .. }, Self::Figure { value: b, .. }) => match (a, b) {
                (Some(x), Some(y)) => x.total_cmp(y),
                _ => a.is_some().cmp(&b.is_some()),
            },
            (Self::Text(a), Self::Text(b)) => a.to_lowercase().cmp(&b.to_lowercase()),
            _ => Ordering::Equal,
        }
    }
}

/// A byte count the way nvprof prints it: 1024-based units, 5 significant digits
/// (`512B`, `4.0000KB`, `1.5000MB`, `12.000GB`).
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1024 {
        return format!("{bytes}B");
    }
    #[allow(clippy::cast_precision_loss)]
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let decimals = if value >= 100.0 {
        2
    } else if value >= 10.0 {
        3
    } else {
        4
    };
    format!("{value:.decimals$}{}", UNITS[unit])
}
