//! Reading cells: integers, text and blobs that may hold anything, and the plausibility rule
//! for times (`TimeCheck`). Nothing here knows the database (`db.rs` reads through these).

use rusqlite::Row;
use rusqlite::types::ValueRef;

use crate::builder::ProfileBuilder;

/// Stream id that CUPTI writes for "no stream" (`-1` as an unsigned 32-bit value), used by
/// synchronisation records of whole contexts.
pub(super) const NO_STREAM: u64 = 0xFFFF_FFFF;

/// An INTEGER cell, or `None` for NULL (REAL is truncated, or `None` outside `i64`; numeric TEXT
/// parsed, BLOBs read as `None`).
pub(super) fn int(row: &Row<'_>, i: usize) -> Option<i64> {
    match row.get_ref(i).ok()? {
        ValueRef::Integer(v) => Some(v),
        ValueRef::Real(f) => real_to_i64(f),
        ValueRef::Text(t) => std::str::from_utf8(t).ok()?.trim().parse().ok(),
        ValueRef::Null | ValueRef::Blob(_) => None,
    }
}

/// A TEXT cell, or `None`.
pub(super) fn text<'r>(row: &'r Row<'_>, i: usize) -> Option<&'r str> {
    match row.get_ref(i) {
        Ok(ValueRef::Text(t)) => std::str::from_utf8(t).ok(),
        _ => None,
    }
}

/// A BLOB cell, or `None`.
pub(super) fn blob<'r>(row: &'r Row<'_>, i: usize) -> Option<&'r [u8]> {
    match row.get_ref(i) {
        Ok(ValueRef::Blob(b)) => Some(b),
        _ => None,
    }
}

/// A non-negative cell as `u32` (`None` for NULL or out of range).
pub(super) fn uint32(row: &Row<'_>, i: usize) -> Option<u32> {
    int(row, i).and_then(|v| u32::try_from(v).ok())
}

/// A non-negative cell as `u64` (`None` for NULL or negative).
pub(super) fn uint64(row: &Row<'_>, i: usize) -> Option<u64> {
    int(row, i).and_then(|v| u64::try_from(v).ok())
}

/// A CUPTI correlation id: 0 and NULL mean none.
pub(super) fn correlation(row: &Row<'_>, i: usize) -> Option<u64> {
    uint64(row, i).filter(|&c| c != 0)
}

/// A stream id as CUPTI means it: `-1` (stored signed or as 4294967295) is "no stream".
pub(super) fn stream_id(row: &Row<'_>, i: usize) -> u64 {
    match int(row, i) {
        Some(v) if v < 0 => NO_STREAM,
        Some(v) => u64::try_from(v).unwrap_or(NO_STREAM),
        None => 0,
    }
}

/// Three cells as a dimension triple (grid or block), if all are present.
pub(super) fn dim3(row: &Row<'_>, x: usize, y: usize, z: usize) -> Option<[u32; 3]> {
    Some([uint32(row, x)?, uint32(row, y)?, uint32(row, z)?])
}

/// A time cell as read from a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Time {
    /// NULL (or a missing optional column).
    Null,
    /// An integer (or a REAL or numeric TEXT that holds one).
    Ns(i64),
    /// Something that is not a time: a BLOB, non-numeric TEXT, a REAL outside `i64`.
    Invalid,
}

/// The time in cell `i` (see [`Time`]).
pub(super) fn time(row: &Row<'_>, i: usize) -> Time {
    // `ok()` first: matching the `Result` itself made every call drop a `rusqlite::Error`
    // out of line, 6% of an nsys import.
    match row.get_ref(i).ok() {
        Some(ValueRef::Null) => Time::Null,
        Some(ValueRef::Integer(v)) => Time::Ns(v),
        Some(ValueRef::Real(f)) => real_to_i64(f).map_or(Time::Invalid, Time::Ns),
        Some(ValueRef::Text(t)) => std::str::from_utf8(t)
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .map_or(Time::Invalid, Time::Ns),
        Some(ValueRef::Blob(_)) | None => Time::Invalid,
    }
}

/// A REAL truncated to an integer, or `None` if it is not finite or outside `i64` (a plain
/// `as` cast would silently saturate `1e300` to `i64::MAX`).
fn real_to_i64(f: f64) -> Option<i64> {
    // -2^63 is exact in f64; 2^63 is the first value above i64::MAX.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    #[allow(clippy::cast_possible_truncation)]
    (f.is_finite() && (-LIMIT..LIMIT).contains(&f)).then_some(f as i64)
}

/// The plausibility rule for timestamps of both formats: nvprof writes nanoseconds since the
/// Unix epoch and Nsight Systems nanoseconds on the capture's clock (from about its start), so a
/// time is a non-negative integer below [`TIME_LIMIT_NS`] (2^62 ns: 146 years after the clock's
/// zero, year 2116 for nvprof). Rows with a time outside it are skipped and counted; the bound
/// also keeps every sum and difference of two times inside `i64`.
pub(super) const TIME_LIMIT_NS: i64 = crate::builder::TIME_LIMIT_NS;

/// What a time that is zero means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Zero {
    /// Only `start = end = 0` means "not collected" (Nsight Systems: 0 is the capture's start).
    BothUncollected,
    /// A start or end of 0 means "not collected" (nvprof: CUPTI writes 0 when it could not
    /// collect a timestamp, and its clock is the Unix epoch, so 0 is never a real time).
    EitherUncollected,
}

/// Applies the plausibility rule to rows and counts those it rejects, so the importers can warn
/// once per table.
pub(super) struct TimeCheck {
    /// What a zero time means in this format.
    zero: Zero,
    /// Rows with NULL start or end.
    pub(super) missing: u64,
    /// Rows whose time could not be collected (see [`Zero`]).
    pub(super) uncollected: u64,
    /// Rows with a time that is not an integer, negative or beyond [`TIME_LIMIT_NS`].
    pub(super) out_of_range: u64,
    /// Rows whose end lies before their start (kept with zero duration).
    pub(super) negative: u64,
}

impl TimeCheck {
    /// A check for a format whose zero times mean `zero`.
    pub(super) fn new(zero: Zero) -> Self {
        Self {
            zero,
            missing: 0,
            uncollected: 0,
            out_of_range: 0,
            negative: 0,
        }
    }

    /// A single time (an instant): `Some` if it passes the rule, else `None` (counted).
    pub(super) fn instant(&mut self, t: Time) -> Option<i64> {
        match t {
            Time::Null => {
                self.missing += 1;
                None
            }
            Time::Ns(0) if self.zero == Zero::EitherUncollected => {
                self.uncollected += 1;
                None
            }
            Time::Ns(t) if (0..TIME_LIMIT_NS).contains(&t) => Some(t),
            Time::Ns(_) | Time::Invalid => {
                self.out_of_range += 1;
                None
            }
        }
    }

    /// `(start, duration)` of a row, or `None` (counted) when it cannot be placed in time. An end
    /// before the start (both plausible) is kept with zero duration, counted: the activity
    /// happened, only its length is unknown.
    pub(super) fn span(&mut self, start: Time, end: Time) -> Option<(i64, i64)> {
        match (start, end) {
            (Time::Null, _) | (_, Time::Null) => {
                self.missing += 1;
                return None;
            }
            (Time::Ns(0), Time::Ns(0)) => {
                self.uncollected += 1;
                return None;
            }
            _ => {}
        }
        let start = self.instant(start)?;
        // A row with both times wrong is counted once, as the start's fault.
        let end = self.instant(end)?;
        if end < start {
            self.negative += 1;
            return Some((start, 0));
        }
        Some((start, end - start))
    }

    /// Turns the counts into warnings on `b` that name `table`.
    pub(super) fn report(self, b: &mut ProfileBuilder, table: &str) {
        b.warn_at(
            "sqlite_null_time",
            self.missing,
            table,
            "rows without a start or end time were skipped",
        );
        b.warn_at(
            "sqlite_uncollected_time",
            self.uncollected,
            table,
            match self.zero {
                Zero::BothUncollected => {
                    "rows with start = end = 0 (timestamp not collected by CUPTI) were skipped"
                }
                Zero::EitherUncollected => {
                    "rows with a start or end of 0 (timestamp not collected by CUPTI) were skipped"
                }
            },
        );
        b.warn_at(
            "sqlite_time_out_of_range",
            self.out_of_range,
            table,
            "rows with a time that is negative, not an integer or beyond 2^62 ns (146 years \
             after the clock's zero) were skipped",
        );
        b.warn_at(
            "sqlite_negative_duration",
            self.negative,
            table,
            "rows ending before they start were kept with zero duration",
        );
    }
}
