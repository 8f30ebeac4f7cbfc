//! What an event is: its category's class, its lane, and the arguments kept for GPU work
//! and API calls.

use crate::import::json::{self, Parser, Value};
use crate::model::{CopyKind, EventKind, GpuLane, MemoryKind};

/// How a category is treated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    Kind(EventKind),
    /// Flow categories that link launches (`ac2g`, legacy `async`).
    LaunchFlow,
    /// Known category shown as a plain slice (`Trace`, `overhead`).
    Plain(EventKind),
    Unknown,
}

impl Class {
    /// The kind a slice of this class gets: its own, or a plain slice.
    pub(super) fn slice_kind(self) -> EventKind {
        match self {
            Class::Kind(k) | Class::Plain(k) => k,
            Class::LaunchFlow | Class::Unknown => EventKind::Slice,
        }
    }
}

/// True for kinds whose slices read their args as [`GpuArgs`]: GPU work and API calls.
pub(super) fn kind_reads_args(kind: EventKind) -> bool {
    gpu_lane(kind).is_some() || kind.is_api()
}

pub(super) fn classify(cat: &str) -> Class {
    // Kineto's own categories, spelled as Kineto writes them: most events, matched at once.
    match cat {
        "cpu_op" => return Class::Kind(EventKind::CpuOp),
        "cuda_runtime" => return Class::Kind(EventKind::Runtime),
        "kernel" => return Class::Kind(EventKind::Kernel),
        "python_function" => return Class::Kind(EventKind::PythonFunction),
        "ac2g" => return Class::LaunchFlow,
        "fwdbwd" => return Class::Plain(EventKind::Slice),
        _ => {}
    }
    pub(super) const TABLE: &[(&str, Class)] = &[
        ("kernel", Class::Kind(EventKind::Kernel)),
        ("gpu_memcpy", Class::Kind(EventKind::Memcpy)),
        ("memcpy", Class::Kind(EventKind::Memcpy)),
        ("gpu_memset", Class::Kind(EventKind::Memset)),
        ("memset", Class::Kind(EventKind::Memset)),
        ("cuda_runtime", Class::Kind(EventKind::Runtime)),
        ("runtime", Class::Kind(EventKind::Runtime)),
        ("cuda_driver", Class::Kind(EventKind::Driver)),
        ("cpu_op", Class::Kind(EventKind::CpuOp)),
        ("operator", Class::Kind(EventKind::CpuOp)),
        ("user_annotation", Class::Kind(EventKind::UserAnnotation)),
        ("gpu_user_annotation", Class::Kind(EventKind::GpuAnnotation)),
        ("python_function", Class::Kind(EventKind::PythonFunction)),
        ("python", Class::Kind(EventKind::PythonFunction)),
        ("cuda_sync", Class::Kind(EventKind::GpuSync)),
        ("overhead", Class::Kind(EventKind::Overhead)),
        // Not Kineto's: written by warpscope's exporter for kinds Kineto has no category for.
        ("nvtx", Class::Kind(EventKind::Nvtx)),
        ("unified_memory", Class::Kind(EventKind::UnifiedMemory)),
        ("ac2g", Class::LaunchFlow),
        ("async", Class::LaunchFlow),
        ("async_cpu_to_gpu", Class::LaunchFlow),
        ("cpu_to_cuda", Class::LaunchFlow),
        ("cpu_instant_event", Class::Plain(EventKind::Instant)),
        ("memory", Class::Plain(EventKind::Instant)),
        ("trace", Class::Plain(EventKind::Slice)),
        ("fwdbwd", Class::Plain(EventKind::Slice)),
        ("external_correlation", Class::Plain(EventKind::Slice)),
        ("cuda_event", Class::Plain(EventKind::Slice)),
        (
            "cuda_profiler_range",
            Class::Plain(EventKind::UserAnnotation),
        ),
        ("collective_comm", Class::Plain(EventKind::UserAnnotation)),
        ("hpu_op", Class::Kind(EventKind::CpuOp)),
        ("xpu_runtime", Class::Kind(EventKind::Runtime)),
        ("xpu_driver", Class::Kind(EventKind::Driver)),
        ("mtia_runtime", Class::Kind(EventKind::Runtime)),
        ("privateuse1_runtime", Class::Kind(EventKind::Runtime)),
        ("privateuse1_driver", Class::Kind(EventKind::Driver)),
        ("mtia_ccp_events", Class::Plain(EventKind::Slice)),
        ("mtia_insight", Class::Plain(EventKind::Slice)),
        ("mtia_counters", Class::Plain(EventKind::Slice)),
        ("glow_runtime", Class::Plain(EventKind::Slice)),
        ("xpu_scope_profiler", Class::Plain(EventKind::Slice)),
        ("xpu_sync", Class::Plain(EventKind::GpuSync)),
        ("hardware_counters", Class::Plain(EventKind::Slice)),
    ];
    // Categories may be comma-separated lists; the first known one decides.
    for part in cat.split(',') {
        let part = part.trim();
        if let Some((_, class)) = TABLE
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(part))
        {
            return *class;
        }
    }
    Class::Unknown
}

/// The kind a slice of category `cat` gets (what [`ChromeState::slice`] does with it).
#[cfg(test)]
pub(crate) fn category_kind(cat: &str) -> EventKind {
    classify(cat).slice_kind()
}

/// GPU-side categories whose events belong on a GPU stream track.
pub(crate) fn gpu_lane(kind: EventKind) -> Option<GpuLane> {
    match kind {
        EventKind::Kernel | EventKind::Memcpy | EventKind::Memset => Some(GpuLane::Work),
        EventKind::GpuAnnotation | EventKind::GpuSync => Some(GpuLane::Annotations),
        EventKind::UnifiedMemory => Some(GpuLane::UnifiedMemory),
        _ => None,
    }
}

/// The arg with which warpscope's exporter places an event on another lane than its category's.
pub(crate) const LANE_ARG: &str = "warpscope lane";
/// [`LANE_ARG`] as a quoted JSON key.
pub(super) const LANE_ARG_KEY: &[u8] = b"\"warpscope lane\"";

/// Text of a lane for [`LANE_ARG`] (`cpu` is the thread track of the event's pid and tid).
pub(crate) fn lane_text(lane: Option<GpuLane>) -> &'static str {
    match lane {
        Some(GpuLane::Work) => "work",
        Some(GpuLane::Annotations) => "annotations",
        Some(GpuLane::UnifiedMemory) => "unified_memory",
        None => "cpu",
    }
}

pub(super) fn lane_from_text(text: &str) -> Option<Option<GpuLane>> {
    [
        Some(GpuLane::Work),
        Some(GpuLane::Annotations),
        Some(GpuLane::UnifiedMemory),
        None,
    ]
    .into_iter()
    .find(|&l| lane_text(l) == text)
}

/// Parses [`CopyKind::as_str`] text back.
pub(super) fn copy_kind_from_text(text: &str) -> Option<CopyKind> {
    CopyKind::from_short(text).or(match text {
        "Unified HtoD" => Some(CopyKind::UnifiedHtoD),
        "Unified DtoH" => Some(CopyKind::UnifiedDtoH),
        "Unified DtoD" => Some(CopyKind::UnifiedDtoD),
        "Memset" => Some(CopyKind::Memset),
        "Unknown" => Some(CopyKind::Unknown),
        _ => None,
    })
}

/// Arguments of GPU events and API calls that the model keeps.
pub(super) struct GpuArgs {
    pub(super) device: Option<i64>,
    pub(super) context: Option<i64>,
    pub(super) stream: Option<i64>,
    pub(super) correlation: Option<i64>,
    pub(super) external_id: Option<i64>,
    pub(super) cbid: Option<i64>,
    pub(super) registers: Option<i64>,
    pub(super) shared_memory: Option<i64>,
    pub(super) blocks_per_sm: Option<f64>,
    pub(super) warps_per_sm: Option<f64>,
    pub(super) occupancy: Option<f64>,
    pub(super) grid: Option<[u32; 3]>,
    pub(super) block: Option<[u32; 3]>,
    pub(super) bytes: Option<i64>,
    // Written by warpscope's Chrome writer only (see `crate::write::chrome`).
    /// [`LANE_ARG`]: `Some(None)` puts the event on its thread's track.
    pub(super) lane: Option<Option<GpuLane>>,
    /// `copy kind`; when present, `src memory` and `dst memory` are taken from args too.
    pub(super) copy_kind: Option<CopyKind>,
    pub(super) src_memory: Option<MemoryKind>,
    pub(super) dst_memory: Option<MemoryKind>,
    pub(super) static_shared: Option<i64>,
    pub(super) dynamic_shared: Option<i64>,
    pub(super) mangled_name: Option<String>,
    /// Kineto's `Process Group Name` of a communication kernel.
    pub(super) process_group: Option<String>,
}

impl GpuArgs {
    /// No arguments: what an event whose args are not read has.
    pub(super) const NONE: GpuArgs = GpuArgs {
        device: None,
        context: None,
        stream: None,
        correlation: None,
        external_id: None,
        cbid: None,
        registers: None,
        shared_memory: None,
        blocks_per_sm: None,
        warps_per_sm: None,
        occupancy: None,
        grid: None,
        block: None,
        bytes: None,
        lane: None,
        copy_kind: None,
        src_memory: None,
        dst_memory: None,
        static_shared: None,
        dynamic_shared: None,
        mangled_name: None,
        process_group: None,
    };
}

impl Default for GpuArgs {
    fn default() -> Self {
        Self::NONE
    }
}

/// Reads the arguments kept for GPU events and API calls.
pub(super) fn parse_gpu_args(args: &[u8], lenient_tokens: &mut u64) -> GpuArgs {
    let mut p = Parser::new(args);
    let mut a = GpuArgs::default();
    // What was read up to a syntax error is kept.
    let _ = read_gpu_args(&mut p, &mut a);
    *lenient_tokens += p.lenient_tokens;
    a
}

/// [`parse_gpu_args`] from a parser at the args object, into `a` (reset first, so that one
/// can be filled again and again without moving it): what was read up to a syntax error is
/// kept, and the error returned.
pub(super) fn read_gpu_args(p: &mut Parser<'_>, a: &mut GpuArgs) -> Result<(), json::SyntaxError> {
    *a = GpuArgs::default();
    let int = |v: &Value<'_>| -> Option<i64> {
        match v {
            Value::Num(n) => {
                json::int_from_text(n).or_else(|| json::float_from_text(n).map(|f| f as i64))
            }
            Value::Str(s) => {
                let t = s.trim();
                t.strip_prefix("0x")
                    .map_or_else(|| t.parse().ok(), |h| i64::from_str_radix(h, 16).ok())
            }
            _ => None,
        }
    };
    let float = |v: &Value<'_>| -> Option<f64> {
        match v {
            Value::Num(n) => json::float_from_text(n),
            Value::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    };
    p.object(|p, key| {
        // Read where the parser left it: moved out of the `Result` (`?`), the value was copied
        // in halves that stalled on the parser's stores of it.
        let read = p.value();
        let v = match &read {
            Ok(v) => v,
            Err(e) => return Err(e.clone()),
        };
        match key {
            b"device" | b"Device" => a.device = int(v),
            b"context" => a.context = int(v),
            b"stream" => a.stream = int(v),
            b"correlation" => a.correlation = int(v),
            b"External id" | b"external id" => a.external_id = int(v),
            b"cbid" => a.cbid = int(v),
            b"registers per thread" => a.registers = int(v),
            b"shared memory" => a.shared_memory = int(v),
            b"blocks per SM" => a.blocks_per_sm = float(v),
            b"warps per SM" => a.warps_per_sm = float(v),
            b"est. achieved occupancy %" => a.occupancy = float(v),
            b"bytes" => a.bytes = int(v),
            b"grid" => a.grid = dims(v),
            b"block" => a.block = dims(v),
            b"static shared memory" => a.static_shared = int(v),
            b"dynamic shared memory" => a.dynamic_shared = int(v),
            k => {
                let Value::Str(s) = v else { return Ok(()) };
                match k {
                    b"copy kind" => a.copy_kind = copy_kind_from_text(s),
                    b"src memory" => a.src_memory = Some(MemoryKind::from_word(s)),
                    b"dst memory" => a.dst_memory = Some(MemoryKind::from_word(s)),
                    b"mangled name" => a.mangled_name = Some(s.to_string()),
                    b"Process Group Name" => a.process_group = Some(s.to_string()),
                    k if k == LANE_ARG.as_bytes() => a.lane = lane_from_text(s),
                    _ => {}
                }
            }
        }
        Ok(())
    })
}

pub(super) fn dims(v: &Value<'_>) -> Option<[u32; 3]> {
    let Value::Array(text) = v else { return None };
    let mut out = [1u32; 3];
    let mut n = 0;
    let mut p = Parser::new(text);
    p.array(|p| {
        let v = p.value()?;
        if let Value::Num(t) = v
            && n < 3
        {
            out[n] = json::int_from_text(t)
                .and_then(|x| u32::try_from(x).ok())
                .unwrap_or(0);
        }
        n += 1;
        Ok(())
    })
    .ok()?;
    (n > 0).then_some(out)
}

/// `Memcpy HtoD (Pageable -> Device)` → (HtoD, Pageable, Device). ROCm writes
/// `Memcpy HtoD (Host -> Device)`.
pub(super) fn parse_memcpy_name(name: &str) -> (CopyKind, Option<MemoryKind>, Option<MemoryKind>) {
    let rest = name.strip_prefix("Memcpy ").unwrap_or(name);
    let kind_word = rest.split_whitespace().next().unwrap_or("");
    let kind = CopyKind::from_short(kind_word).unwrap_or(CopyKind::Unknown);
    let (src, dst) = match (rest.find('('), rest.rfind(')')) {
        (Some(a), Some(b)) if a < b => {
            let inner = &rest[a + 1..b];
            match inner.split_once("->") {
                Some((s, d)) => (
                    Some(MemoryKind::from_word(s)),
                    Some(MemoryKind::from_word(d)),
                ),
                None => (None, None),
            }
        }
        _ => (None, None),
    };
    (kind, src, dst)
}

/// `Memset (Device)` → Device.
pub(super) fn parse_memset_kind(name: &str) -> Option<MemoryKind> {
    let a = name.find('(')?;
    let b = name.rfind(')')?;
    (a < b).then(|| MemoryKind::from_word(&name[a + 1..b]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memcpy_names() {
        assert_eq!(
            parse_memcpy_name("Memcpy HtoD (Pageable -> Device)"),
            (
                CopyKind::HtoD,
                Some(MemoryKind::Pageable),
                Some(MemoryKind::Device)
            )
        );
        assert_eq!(
            parse_memcpy_name("Memcpy DtoD (Device -> Device)").0,
            CopyKind::DtoD
        );
        assert_eq!(
            parse_memcpy_name("Memcpy HtoD (Host -> Device)").1,
            Some(MemoryKind::Host)
        );
        assert_eq!(parse_memcpy_name("weird").0, CopyKind::Unknown);
        assert_eq!(
            parse_memset_kind("Memset (Device)"),
            Some(MemoryKind::Device)
        );
    }

    #[test]
    fn what_warpscope_writes_maps_back() {
        assert_eq!(category_kind("nvtx"), EventKind::Nvtx);
        assert_eq!(category_kind("unified_memory"), EventKind::UnifiedMemory);
        assert_eq!(category_kind("cpu_instant_event"), EventKind::Instant);
        assert_eq!(category_kind(""), EventKind::Slice);
        assert_eq!(
            gpu_lane(EventKind::UnifiedMemory),
            Some(GpuLane::UnifiedMemory)
        );
        for lane in [
            Some(GpuLane::Work),
            Some(GpuLane::Annotations),
            Some(GpuLane::UnifiedMemory),
            None,
        ] {
            assert_eq!(lane_from_text(lane_text(lane)), Some(lane));
        }
        for kind in (0..=14).map(CopyKind::from_cupti).chain([CopyKind::Memset]) {
            assert_eq!(copy_kind_from_text(kind.as_str()), Some(kind));
        }
        let a = parse_gpu_args(
            br#"{"copy kind": "Unified DtoH", "src memory": "Device Static",
                 "static shared memory": 16, "mangled name": "_Z1kv", "warpscope lane": "cpu"}"#,
            &mut 0,
        );
        assert_eq!(a.copy_kind, Some(CopyKind::UnifiedDtoH));
        assert_eq!(a.src_memory, Some(MemoryKind::DeviceStatic));
        assert_eq!(a.dst_memory, None);
        assert_eq!(a.static_shared, Some(16));
        assert_eq!(a.mangled_name.as_deref(), Some("_Z1kv"));
        assert_eq!(a.lane, Some(None));
    }

    #[test]
    fn categories_are_case_insensitive_with_legacy_names() {
        assert_eq!(classify("Kernel"), Class::Kind(EventKind::Kernel));
        assert_eq!(classify("kernel"), Class::Kind(EventKind::Kernel));
        assert_eq!(classify("Runtime"), Class::Kind(EventKind::Runtime));
        assert_eq!(classify("Operator"), Class::Kind(EventKind::CpuOp));
        assert_eq!(classify("async_cpu_to_gpu"), Class::LaunchFlow);
        assert_eq!(classify("foo,kernel"), Class::Kind(EventKind::Kernel));
        assert_eq!(classify("never_seen"), Class::Unknown);
    }
}
