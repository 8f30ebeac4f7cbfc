//! Kineto's memory instants: `[memory]` (one allocation or free, `profile_memory=True`) and
//! `[OutOfMemory]` (a failed allocation) into memory records.
//!
//! Their args: `Device Type` (c10's `DeviceType`: 0 the CPU, anything else an accelerator),
//! `Device Id` (-1 for the CPU), `Addr`, `Bytes` (negative for a free), `Total Allocated` and
//! `Total Reserved` (the allocator's totals on that device after the call). See
//! `docs/memory.md`.

use super::ChromeState;
use crate::builder::{MemoryRecord, UNKNOWN_TOTAL};
use crate::import::json::{self, Parser, Value};
use crate::model::{MemoryAction, MemoryDevice, TraceId};

/// The name of an allocation or free.
pub(super) const MEMORY_EVENT: &str = "[memory]";
/// The name of a failed allocation.
pub(super) const OOM_EVENT: &str = "[OutOfMemory]";

/// The args of a memory instant, as numbers where they were numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct MemoryArgs {
    device_type: Option<i64>,
    device_id: Option<i64>,
    addr: Option<i64>,
    bytes: Option<i64>,
    total_allocated: Option<i64>,
    total_reserved: Option<i64>,
}

/// An integer written as a JSON number (or a numeric string): exact for integers, and floats
/// that hold a whole number within ±2^53 are taken too.
fn integer(value: &Value<'_>) -> Option<i64> {
    let text: &[u8] = match value {
        Value::Num(n) => n,
        Value::Str(s) => s.trim().as_bytes(),
        _ => return None,
    };
    json::int_from_text(text).or_else(|| {
        let f = json::float_from_text(text)?;
        #[allow(clippy::cast_possible_truncation)]
        let whole = f as i64;
        (f.is_finite() && f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15).then_some(whole)
    })
}

/// The args of a memory instant: [`read_plain`] where they are laid out as Kineto writes them,
/// else the general parser.
fn parse(args: &[u8]) -> MemoryArgs {
    parse_plain(args).unwrap_or_else(|| parse_any(args))
}

/// [`read_plain`] of a whole args text (blanks may follow the object).
fn parse_plain(args: &[u8]) -> Option<MemoryArgs> {
    let (a, end) = read_plain(args)?;
    args[end..].iter().all(|&b| b <= b' ').then_some(a)
}

/// Kineto's layout of a memory instant's args, read in one pass from the `{` that starts
/// `buf`: an object of keys without escapes whose values are integers of up to 18 digits (read
/// exactly, as [`integer`] reads them), `true`, `false` or `null`. Returns the args and the
/// offset just past the object's `}`. Anything else (a float, a string, a nested value, an odd
/// separator, the end of `buf`) is `None`, and the general parser reads the args instead, so
/// both give the same record.
///
/// The tokenizer reads a memory instant's args with this where it finds them, instead of
/// skipping the object and parsing it again (see `tokenize::parse_event`). A memory-dense trace
/// has eight members per memory event and one event in six a memory event: the general
/// parser, a value and a call per member, took a tenth of the import's instructions there.
pub(super) fn read_plain(buf: &[u8]) -> Option<(MemoryArgs, usize)> {
    let mut a = MemoryArgs::default();
    if buf.first() != Some(&b'{') {
        return None;
    }
    let mut i = skip_blanks(buf, 1)?;
    loop {
        match buf[i] {
            b'}' => return Some((a, i + 1)),
            b'"' => i += 1,
            _ => return None,
        }
        // The six keys read are matched whole with their closing quote (Kineto writes them in
        // this order); any other key is found by its closing quote.
        let rest = &buf[i..];
        let known = KEYS.iter().position(|k| rest.starts_with(k));
        match known {
            Some(k) => i += KEYS[k].len(),
            None => {
                let len = memchr::memchr2(b'"', b'\\', rest)?;
                if rest[len] != b'"' {
                    return None;
                }
                i += len + 1;
            }
        }
        i = skip_blanks(buf, i)?;
        if buf[i] != b':' {
            return None;
        }
        i = skip_blanks(buf, i + 1)?;
        let value = match buf[i] {
            b'-' | b'0'..=b'9' => {
                let negative = buf[i] == b'-';
                let digits_start = i + usize::from(negative);
                let mut j = digits_start;
                let mut v: i64 = 0;
                while let Some(&d) = buf.get(j).filter(|d| d.is_ascii_digit()) {
                    if j - digits_start == 18 {
                        return None;
                    }
                    v = v * 10 + i64::from(d - b'0');
                    j += 1;
                }
                if j == digits_start || matches!(buf.get(j), Some(b'.' | b'e' | b'E' | b'+' | b'-'))
                {
                    return None;
                }
                i = j;
                Some(if negative { -v } else { v })
            }
            b't' if buf[i..].starts_with(b"true") => {
                i += 4;
                None
            }
            b'f' if buf[i..].starts_with(b"false") => {
                i += 5;
                None
            }
            b'n' if buf[i..].starts_with(b"null") => {
                i += 4;
                None
            }
            _ => return None,
        };
        match known {
            Some(0) => a.total_reserved = value,
            Some(1) => a.total_allocated = value,
            Some(2) => a.bytes = value,
            Some(3) => a.device_id = value,
            Some(4) => a.device_type = value,
            Some(5) => a.addr = value,
            _ => {}
        }
        i = skip_blanks(buf, i)?;
        match buf[i] {
            b',' => i = skip_blanks(buf, i + 1)?,
            b'}' => {}
            _ => return None,
        }
    }
}

/// The keys [`read_plain`] reads, each with its closing quote, in the order Kineto writes
/// them.
const KEYS: [&[u8]; 6] = [
    b"Total Reserved\"",
    b"Total Allocated\"",
    b"Bytes\"",
    b"Device Id\"",
    b"Device Type\"",
    b"Addr\"",
];

/// The first offset from `i` on of a byte of `buf` that is not blank; `None` if there is none.
#[inline(always)]
fn skip_blanks(buf: &[u8], mut i: usize) -> Option<usize> {
    while *buf.get(i)? <= b' ' {
        i += 1;
    }
    Some(i)
}

/// The args of a memory instant through the general parser (any layout the importer accepts).
fn parse_any(args: &[u8]) -> MemoryArgs {
    let mut a = MemoryArgs::default();
    let mut p = Parser::new(args);
    let _ = p.object(|p, key| {
        let v = p.value()?;
        let slot = match key {
            b"Device Type" => &mut a.device_type,
            b"Device Id" => &mut a.device_id,
            b"Addr" => &mut a.addr,
            b"Bytes" => &mut a.bytes,
            b"Total Allocated" => &mut a.total_allocated,
            b"Total Reserved" => &mut a.total_reserved,
            _ => return Ok(()),
        };
        *slot = integer(&v);
        Ok(())
    });
    a
}

impl ChromeState {
    /// A `[memory]` or `[OutOfMemory]` instant of thread (`pid`, `tid`) at `ts_ns` into a
    /// memory record (its args as the tokenizer read them, else parsed from their text).
    /// Records that cannot be read are left out with a counted warning.
    pub(super) fn memory_event(
        &mut self,
        oom: bool,
        pid: TraceId,
        tid: TraceId,
        ts_ns: i64,
        args: Option<&[u8]>,
        read: Option<MemoryArgs>,
    ) {
        let a = read.unwrap_or_else(|| parse(args.unwrap_or_default()));
        let skip = |this: &mut Self, code: &str, what: &str| {
            this.b.warn(
                code,
                1,
                format!("`{MEMORY_EVENT}` and `{OOM_EVENT}` events {what} were left out"),
            );
        };
        let (Some(device_type), Some(bytes)) = (a.device_type, a.bytes) else {
            return skip(
                self,
                "memory_missing_field",
                "without a numeric `Device Type` or `Bytes`",
            );
        };
        // PyTorch before 1.10 wrote neither total: `finish` replays them from `Bytes`.
        let (allocated, reserved) = match (a.total_allocated, a.total_reserved) {
            (Some(t), Some(r)) => (t, r),
            (None, None) => (UNKNOWN_TOTAL, UNKNOWN_TOTAL),
            _ => {
                return skip(
                    self,
                    "memory_missing_total",
                    "with one of `Total Allocated` and `Total Reserved` but not the other",
                );
            }
        };
        if (allocated < 0 && allocated != UNKNOWN_TOTAL)
            || (reserved < 0 && reserved != UNKNOWN_TOTAL)
        {
            return skip(
                self,
                "memory_negative_total",
                "with a negative `Total Allocated` or `Total Reserved`",
            );
        }
        let device = if device_type == 0 {
            MemoryDevice::Cpu
        } else {
            match a.device_id.and_then(|d| u32::try_from(d).ok()) {
                Some(id) => MemoryDevice::Gpu(id),
                None => {
                    return skip(
                        self,
                        "memory_bad_device",
                        "of an accelerator without a valid `Device Id`",
                    );
                }
            }
        };
        let action = if oom {
            MemoryAction::Oom
        } else if bytes < 0 {
            MemoryAction::Free
        } else {
            MemoryAction::Alloc
        };
        if !oom && a.addr.is_none() {
            self.b.warn(
                "memory_missing_addr",
                1,
                format!(
                    "`{MEMORY_EVENT}` events without an `Addr` were kept in the totals but \
                     cannot be matched to their allocation or free"
                ),
            );
        }
        let track = self.thread_track(pid, tid);
        // Addresses are unsigned; Kineto writes them as signed 64-bit numbers.
        #[allow(clippy::cast_sign_loss)]
        let addr = a.addr.map_or(0, |v| v as u64);
        self.b.push_memory(MemoryRecord {
            allocated_bytes: allocated,
            reserved_bytes: reserved,
            track: Some(track),
            ..MemoryRecord::new(ts_ns, device, action, addr, bytes.unsigned_abs())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::{parse_any, parse_plain, read_plain};

    #[test]
    fn kineto_layout_is_read_in_one_pass_as_the_general_parser_reads_it() {
        let kineto: &[u8] = br#"{
      "Total Reserved": 3932160000, "Total Allocated": 3145056256, "Bytes": -512, "Device Id": 0, "Device Type": 1, "Addr": 139929589906944, "finished": false, "Ev Idx": 3143
    }"#;
        let plain = parse_plain(kineto).expect("Kineto's layout");
        assert_eq!(plain, parse_any(kineto));
        assert_eq!(plain.bytes, Some(-512));
        assert_eq!(plain.addr, Some(139_929_589_906_944));
        // Older and odd layouts: where the one pass reads them, it must agree; where it does
        // not, the general parser does.
        for args in [
            &b"{}"[..],
            b"{ }",
            b"{\"Bytes\": 8,}",
            b"{\"Bytes\":-0,\"Device Type\":0}",
            b"{\"Device Type\": 1, \"Device Id\": 0, \"Bytes\": 007}",
            b"{\"Bytes\": 8, \"Bytes\": null, \"Device Type\": true}",
            b"{\"Bytes\": 8.0, \"Device Type\": 1}",
            b"{\"Bytes\": 1e3}",
            b"{\"Bytes\": \"512\"}",
            b"{\"Bytes\": 9223372036854775807}",
            b"{\"Bytes\": 99999999999999999999}",
            b"{\"Byt\\u0065s\": 5}",
            b"{\"Bytes\": 5,, \"Addr\": 1}",
            b"{\"Bytes\": -}",
            b"{\"Bytes\": 5 6}",
            b"{\"Bytes\": NaN}",
            b"{\"Addr\": [1, 2], \"Bytes\": 3}",
            b"{\"Bytes\": 3",
            b"",
            b"[1]",
        ] {
            let any = parse_any(args);
            if let Some(plain) = parse_plain(args) {
                assert_eq!(plain, any, "{}", String::from_utf8_lossy(args));
            }
        }
        // In place: the object's end, wherever the buffer goes on.
        let text = b"{\"Bytes\": -4, \"Addr\": 16}, {\"ph\": \"X\"}";
        let (a, end) = read_plain(text).expect("plain");
        assert_eq!((a.bytes, a.addr, end), (Some(-4), Some(16), 25));
        assert!(read_plain(b"{\"Bytes\": 4").is_none());
        assert!(parse_plain(b"{\"Bytes\": 8.0}").is_none());
        assert!(parse_plain(b"{\"Bytes\": 99999999999999999999}").is_none());
    }
}
