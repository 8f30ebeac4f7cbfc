//! Sizes as people read them.

/// Bytes with a binary unit and two decimals (`512 B`, `1.50 KiB`, `3.02 GiB`); negative
/// values keep their sign.
pub fn format_bytes(bytes: i64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    let sign = if bytes < 0 { "-" } else { "" };
    let abs = bytes.unsigned_abs();
    if abs < 1024 {
        return format!("{sign}{abs} B");
    }
    #[allow(clippy::cast_precision_loss)]
    let mut value = abs as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{sign}{value:.2} {}", UNITS[unit])
}

/// `part` as a share of `whole` with one decimal (`44.5%`), or `-` when `whole` is not positive.
pub fn format_share(part: i64, whole: i64) -> String {
    if whole <= 0 {
        return "-".to_string();
    }
    #[allow(clippy::cast_precision_loss)]
    let p = part as f64 * 100.0 / whole as f64;
    format!("{p:.1}%")
}

#[cfg(test)]
mod tests {
    use super::{format_bytes, format_share};

    #[test]
    fn shares_have_one_decimal() {
        assert_eq!(format_share(1, 3), "33.3%");
        assert_eq!(format_share(5, 0), "-");
    }

    #[test]
    fn bytes_read_in_binary_units() {
        assert_eq!(format_bytes(0), "0 B");
        assert_eq!(format_bytes(1023), "1023 B");
        assert_eq!(format_bytes(1536), "1.50 KiB");
        assert_eq!(format_bytes(7_865_240_064), "7.33 GiB");
        assert_eq!(format_bytes(-(3 << 20)), "-3.00 MiB");
        assert_eq!(format_bytes(i64::MIN), "-8192.00 PiB");
    }
}
