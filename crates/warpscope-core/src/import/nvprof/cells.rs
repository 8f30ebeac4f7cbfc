//! Columns, units and cell values of nvprof tables: which header names warpscope reads, the
//! units of a CSV units row or of a value's suffix, and exact conversions of cells to
//! nanoseconds, bytes and counts (`Err` with a message naming the cell when one does not read).

use crate::time::parse_decimal_scaled;

/// The trace columns warpscope reads, matched by header name (CSV and text spellings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub(super) enum Col {
    Start,
    Duration,
    GridX,
    GridY,
    GridZ,
    BlockX,
    BlockY,
    BlockZ,
    GridSize,
    BlockSize,
    Registers,
    StaticSmem,
    DynamicSmem,
    Size,
    Throughput,
    SrcMemType,
    DstMemType,
    Device,
    Context,
    Stream,
    SrcDev,
    SrcCtx,
    DstDev,
    DstCtx,
    UnifiedMemory,
    VirtualAddress,
    Name,
    Correlation,
}

/// Number of [`Col`] variants.
pub(super) const NCOL: usize = Col::Correlation as usize + 1;

impl Col {
    pub(super) fn from_header(name: &str) -> Option<Self> {
        Some(match name.trim() {
            "Start" => Self::Start,
            "Duration" => Self::Duration,
            "Grid X" => Self::GridX,
            "Grid Y" => Self::GridY,
            "Grid Z" => Self::GridZ,
            "Block X" => Self::BlockX,
            "Block Y" => Self::BlockY,
            "Block Z" => Self::BlockZ,
            "Grid Size" => Self::GridSize,
            "Block Size" => Self::BlockSize,
            "Registers Per Thread" | "Regs*" | "Regs" => Self::Registers,
            "Static SMem" | "SSMem*" | "SSMem" => Self::StaticSmem,
            "Dynamic SMem" | "DSMem*" | "DSMem" => Self::DynamicSmem,
            "Size" => Self::Size,
            "Throughput" => Self::Throughput,
            "SrcMemType" => Self::SrcMemType,
            "DstMemType" => Self::DstMemType,
            "Device" => Self::Device,
            "Context" => Self::Context,
            "Stream" => Self::Stream,
            "Src Dev" => Self::SrcDev,
            "Src Ctx" => Self::SrcCtx,
            "Dst Dev" => Self::DstDev,
            "Dst Ctx" => Self::DstCtx,
            "Unified Memory" => Self::UnifiedMemory,
            "Virtual Address" => Self::VirtualAddress,
            "Name" => Self::Name,
            "Correlation_ID" | "Correlation ID" | "CorrelationId" => Self::Correlation,
            _ => return None,
        })
    }

    /// What kind of unit the column must carry.
    pub(super) fn quantity(self) -> Quantity {
        match self {
            Self::Start | Self::Duration => Quantity::Time,
            Self::StaticSmem | Self::DynamicSmem | Self::Size | Self::UnifiedMemory => {
                Quantity::Bytes
            }
            _ => Quantity::Other,
        }
    }
}

/// What a column measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Quantity {
    Time,
    Bytes,
    Other,
}

/// The unit of a column (CSV units row) or [`Unit::Inline`] when every value carries its own
/// suffix (text logs, the CSV Unified Memory table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Unit {
    /// Values carry their own unit (`812ns`, `8.0000KB`).
    Inline,
    /// The units row leaves the column empty: plain numbers.
    Plain,
    /// A time unit: the power of ten that turns it into nanoseconds (`s` = 9).
    Time(i32),
    /// A size unit: the power of 1024 that turns it into bytes (`KB` = 1).
    Bytes(u32),
    /// A throughput (`GB/s`), not read.
    Rate,
    /// A percentage.
    Percent,
}

impl Unit {
    /// Parses a unit as written in a units row or after a value; `None` if unknown.
    pub(super) fn parse(s: &str) -> Option<Self> {
        Some(match s.trim() {
            "" => Self::Plain,
            "s" => Self::Time(9),
            "ms" => Self::Time(6),
            "us" | "\u{b5}s" => Self::Time(3),
            "ns" => Self::Time(0),
            "B" => Self::Bytes(0),
            "KB" => Self::Bytes(1),
            "MB" => Self::Bytes(2),
            "GB" => Self::Bytes(3),
            "TB" => Self::Bytes(4),
            "B/s" | "KB/s" | "MB/s" | "GB/s" | "TB/s" => Self::Rate,
            "%" => Self::Percent,
            _ => return None,
        })
    }
}

/// Splits `1.0837GB/s` into (`1.0837`, `GB/s`).
pub(super) fn split_suffix(cell: &str) -> (&str, &str) {
    let end = cell
        .bytes()
        .position(|b| !(b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+')))
        .unwrap_or(cell.len());
    (&cell[..end], &cell[end..])
}

/// True for an empty cell or nvprof's `-` (not applicable).
pub(super) fn is_missing(cell: &str) -> bool {
    cell.is_empty() || cell == "-"
}

/// A time cell in nanoseconds: `Ok(None)` when empty or `-`, `Err` when it is not a time.
pub(super) fn time_ns(cell: &str, unit: Unit) -> Result<Option<i64>, String> {
    time_value(cell, unit).map_err(|p| p.message(cell))
}

/// Why a cell is not a time, with its message built only when it is shown (a table of a
/// million bad rows would otherwise format a million messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum TimeProblem {
    /// Not a number with a time unit.
    NotATime,
    /// A number, but too large for i64 nanoseconds (`1e300`, `99999999999s`).
    OutOfRange,
}

impl TimeProblem {
    /// The message for `cell`.
    pub(super) fn message(self, cell: &str) -> String {
        let c = shown(cell.trim(), 40);
        match self {
            Self::NotATime => format!("`{c}` is not a time"),
            Self::OutOfRange => {
                format!("`{c}` is out of range (beyond about 292 years in nanoseconds)")
            }
        }
    }
}

/// [`time_ns`] with the reason as a [`TimeProblem`].
pub(super) fn time_value(cell: &str, unit: Unit) -> Result<Option<i64>, TimeProblem> {
    let c = cell.trim();
    if is_missing(c) {
        return Ok(None);
    }
    let (num, scale) = match unit {
        Unit::Time(scale) => (c, scale),
        Unit::Inline => {
            let (num, suffix) = split_suffix(c);
            match Unit::parse(suffix) {
                Some(Unit::Time(scale)) => (num, scale),
                _ => return Err(TimeProblem::NotATime),
            }
        }
        _ => return Err(TimeProblem::NotATime),
    };
    match parse_decimal_scaled(num.as_bytes(), scale) {
        Some(v) => Ok(Some(v)),
        None if num.parse::<f64>().is_ok_and(f64::is_finite) => Err(TimeProblem::OutOfRange),
        None => Err(TimeProblem::NotATime),
    }
}

/// `text` (a decimal number) times `1024^pow`, rounded to the nearest integer, exactly.
pub(super) fn scaled_bytes(text: &str, pow: u32) -> Option<u64> {
    let factor = 1024i128.checked_pow(pow)?;
    for scale in [9u32, 6, 3, 0] {
        let Some(v) = parse_decimal_scaled(text.as_bytes(), i32::try_from(scale).ok()?) else {
            continue;
        };
        if v < 0 {
            return None;
        }
        let divisor = 10i128.pow(scale);
        let x = (i128::from(v) * factor + divisor / 2) / divisor;
        return u64::try_from(x).ok();
    }
    None
}

/// A size cell in bytes: `Ok(None)` when empty or `-`. Plain numbers count as bytes.
pub(super) fn bytes_cell(cell: &str, unit: Unit) -> Result<Option<u64>, String> {
    let c = cell.trim();
    if is_missing(c) {
        return Ok(None);
    }
    let bad = || format!("`{}` is not a size", shown(c, 40));
    let (num, pow) = match unit {
        Unit::Bytes(pow) => (c, pow),
        Unit::Plain => (c, 0),
        Unit::Inline => {
            let (num, suffix) = split_suffix(c);
            match Unit::parse(suffix) {
                Some(Unit::Bytes(pow)) => (num, pow),
                Some(Unit::Plain) => (num, 0),
                _ => return Err(bad()),
            }
        }
        _ => return Err(bad()),
    };
    scaled_bytes(num, pow).map(Some).ok_or_else(bad)
}

/// An unsigned integer cell (`Ok(None)` when empty or `-`).
pub(super) fn int_cell(cell: &str) -> Result<Option<u64>, String> {
    let c = cell.trim();
    if is_missing(c) {
        return Ok(None);
    }
    c.parse::<u64>()
        .map(Some)
        .map_err(|_| format!("`{}` is not a whole number", shown(c, 40)))
}

/// An unsigned integer cell, `None` when empty, `-` or unreadable (for optional columns).
pub(super) fn opt_int_cell(cell: &str) -> Option<u64> {
    int_cell(cell).ok().flatten()
}

/// A percentage (`71.05%` or `71.05`).
pub(super) fn percent_cell(cell: &str) -> Result<f64, String> {
    let c = cell.trim();
    let num = c.strip_suffix('%').unwrap_or(c);
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{}` is not a percentage", shown(c, 40))),
    }
}

/// The device of a text Unified Memory block, from its trimmed `Device "TITAN Xp (0)"` line.
pub(super) fn um_device(line: &str) -> Option<&str> {
    line.strip_prefix("Device \"")?.strip_suffix('"')
}

/// `(32768 1 1)` → `[32768, 1, 1]`.
pub(super) fn dims_cell(cell: &str) -> Option<[u32; 3]> {
    let inner = cell.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut it = inner.split_whitespace().map(|v| v.parse::<u32>().ok());
    let dims = [it.next()??, it.next()??, it.next()??];
    it.next().is_none().then_some(dims)
}

/// `TITAN Xp (0)` → (`TITAN Xp`, 0).
pub(super) fn parse_device(cell: &str) -> Option<(&str, u32)> {
    let c = cell.trim();
    let inner = c.strip_suffix(')')?;
    let open = inner.rfind(" (")?;
    let id = inner[open + 2..].parse::<u32>().ok()?;
    Some((inner[..open].trim(), id))
}

/// `void k<double>(double*) [128]` → (`void k<double>(double*)`, Some(128)).
pub(super) fn strip_correlation_suffix(name: &str) -> (&str, Option<u64>) {
    if let Some(body) = name.strip_suffix(']')
        && let Some(open) = body.rfind(" [")
    {
        let digits = &body[open + 2..];
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            return (&name[..open], digits.parse().ok());
        }
    }
    (name, None)
}

/// The value cells of a summary row as written (CSV or text): `Time(%)`, `Time`, `Avg`, `Min`,
/// `Max` and `Calls`.
pub(super) struct SummaryCells<'a> {
    pub(super) pct: &'a str,
    /// `Time`, `Avg`, `Min` and `Max`.
    pub(super) times: [&'a str; 4],
    pub(super) calls: &'a str,
}

impl SummaryCells<'_> {
    /// Converts the cells, the times in `units`: (Time(%), [Time, Avg, Min, Max] in ns, Calls).
    pub(super) fn parse(&self, units: [Unit; 4]) -> Result<(f64, [i64; 4], u64), String> {
        let time_pct = percent_cell(self.pct)?;
        let mut out = [0i64; 4];
        let labels = ["Time", "Avg", "Min", "Max"];
        for i in 0..4 {
            out[i] = time_ns(self.times[i], units[i])?
                .ok_or_else(|| format!("{} is empty", labels[i]))?;
            if out[i] < 0 {
                return Err(format!(
                    "{} `{}` is negative",
                    labels[i],
                    shown(self.times[i], 40)
                ));
            }
        }
        let calls = int_cell(self.calls)?.ok_or_else(|| "Calls is empty".to_string())?;
        Ok((time_pct, out, calls))
    }
}

/// The size cells of a Unified Memory summary row (`Avg Size`, `Min Size`, `Max Size`,
/// `Total Size`), each with its unit inside.
pub(super) fn um_sizes(cells: [&str; 4]) -> Result<[Option<u64>; 4], String> {
    let [avg, min, max, total] = cells.map(|c| bytes_cell(c, Unit::Inline));
    Ok([avg?, min?, max?, total?])
}

/// The cells of one trace row, by column (empty when the column is absent).
pub(super) type Cells<'a> = [&'a str; NCOL];

/// The unit of each column of a table.
pub(super) type Units = [Unit; NCOL];

pub(super) use crate::import::shown;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_convert_exactly() {
        assert_eq!(time_ns("1.183779", Unit::Time(9)), Ok(Some(1_183_779_000)));
        assert_eq!(time_ns("0.000992", Unit::Time(6)), Ok(Some(992)));
        assert_eq!(time_ns("812ns", Unit::Inline), Ok(Some(812)));
        assert_eq!(time_ns("1.1840us", Unit::Inline), Ok(Some(1_184)));
        assert_eq!(time_ns("305.08ms", Unit::Inline), Ok(Some(305_080_000)));
        assert_eq!(time_ns("1.05294s", Unit::Inline), Ok(Some(1_052_940_000)));
        assert_eq!(time_ns("-", Unit::Inline), Ok(None));
        assert_eq!(time_ns("", Unit::Time(9)), Ok(None));
        assert!(time_ns("12", Unit::Inline).is_err());
        assert!(time_ns("abc", Unit::Time(3)).is_err());
        assert_eq!(
            time_ns("1e300", Unit::Time(6)),
            Err("`1e300` is out of range (beyond about 292 years in nanoseconds)".to_string())
        );
        assert_eq!(
            time_ns("0.0ms  1", Unit::Inline),
            Err("`0.0ms  1` is not a time".to_string())
        );
        assert_eq!(
            time_ns("9223372036.854775807s", Unit::Inline),
            Ok(Some(i64::MAX))
        );
        assert!(time_ns("9223372036.854775808s", Unit::Inline).is_err());
    }

    #[test]
    fn sizes_use_powers_of_1024() {
        // 6.304688 MB is 6610944.52 B: rounded to the nearest byte.
        assert_eq!(bytes_cell("6.304688MB", Unit::Inline), Ok(Some(6_610_945)));
        assert_eq!(bytes_cell("40.860352KB", Unit::Inline), Ok(Some(41_841)));
        assert_eq!(bytes_cell("8.0000KB", Unit::Inline), Ok(Some(8_192)));
        assert_eq!(bytes_cell("256.00MB", Unit::Inline), Ok(Some(268_435_456)));
        assert_eq!(bytes_cell("0B", Unit::Inline), Ok(Some(0)));
        assert_eq!(bytes_cell("0.000011", Unit::Bytes(2)), Ok(Some(12)));
        assert_eq!(bytes_cell("65536.000000", Unit::Bytes(0)), Ok(Some(65_536)));
        assert_eq!(bytes_cell("-", Unit::Inline), Ok(None));
        assert!(bytes_cell("1.2GB/s", Unit::Inline).is_err());
    }

    #[test]
    fn cells_parse() {
        assert_eq!(dims_cell("(32768 1 1)"), Some([32768, 1, 1]));
        assert_eq!(dims_cell("-"), None);
        assert_eq!(parse_device("TITAN Xp (0)"), Some(("TITAN Xp", 0)));
        assert_eq!(parse_device("Tesla K80 (1)"), Some(("Tesla K80", 1)));
        assert_eq!(parse_device("CPU, TITAN Xp ("), None);
        assert_eq!(
            strip_correlation_suffix("void k<double>(double*) [128]"),
            ("void k<double>(double*)", Some(128))
        );
        assert_eq!(
            strip_correlation_suffix("[CUDA memcpy DtoH]"),
            ("[CUDA memcpy DtoH]", None)
        );
        assert_eq!(percent_cell("71.05%"), Ok(71.05));
    }
}
