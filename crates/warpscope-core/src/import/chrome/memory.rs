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
#[derive(Default)]
struct MemoryArgs {
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

fn parse(args: &[u8]) -> MemoryArgs {
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
    /// memory record. Records that cannot be read are left out with a counted warning.
    pub(super) fn memory_event(
        &mut self,
        oom: bool,
        pid: TraceId,
        tid: TraceId,
        ts_ns: i64,
        args: Option<&[u8]>,
    ) {
        let a = parse(args.unwrap_or_default());
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
