//! CUPTI activity collection: kernel, copy, set and driver-API records with their real GPU and
//! CPU start and end times, and external correlation records that tie each record to the
//! measurement that caused it.
//!
//! Activity must be enabled before the CUDA context is created. Records are read field by field
//! from the leading part of each record, which every CUPTI version since CUDA 11 lays out the
//! same way (`CUpti_ActivityKernel*`, `CUpti_ActivityMemcpy*`), so a newer libcupti than the
//! one the bindings were made for still parses.

use std::alloc::Layout;
use std::ffi::CStr;
use std::ptr::addr_of;
use std::sync::Mutex;

use cudarc::cupti::sys::{
    self, CUpti_Activity, CUpti_ActivityAPI, CUpti_ActivityExternalCorrelation,
    CUpti_ActivityKernel10, CUpti_ActivityKind, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4,
    CUpti_ExternalCorrelationKind, CUptiResult,
};

/// One activity record, copied out of CUPTI's buffer.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Record {
    Kernel {
        name: String,
        start: u64,
        end: u64,
        stream: u32,
        grid: [i32; 3],
        block: [i32; 3],
        registers: u16,
        static_shared: i32,
        dynamic_shared: i32,
        correlation: u32,
    },
    Memcpy {
        copy_kind: u8,
        src_kind: u8,
        dst_kind: u8,
        bytes: u64,
        start: u64,
        end: u64,
        stream: u32,
        correlation: u32,
    },
    Memset {
        bytes: u64,
        start: u64,
        end: u64,
        stream: u32,
        correlation: u32,
    },
    Api {
        runtime: bool,
        cbid: u32,
        start: u64,
        end: u64,
        pid: u32,
        tid: u32,
        correlation: u32,
    },
    External {
        external_id: u64,
        correlation: u32,
    },
}

static RECORDS: Mutex<Vec<Record>> = Mutex::new(Vec::new());

const BUFFER_BYTES: usize = 8 << 20;
const BUFFER_ALIGN: usize = 8;

const KINDS: [CUpti_ActivityKind; 6] = [
    CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMCPY,
    CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMSET,
    CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_DRIVER,
    // cuBLAS launches through the runtime API: its external ids come with runtime records.
    CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_RUNTIME,
    CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
];

fn check(what: &str, r: CUptiResult) -> Result<(), String> {
    if r == CUptiResult::CUPTI_SUCCESS {
        Ok(())
    } else {
        Err(format!("{what} failed: {r:?}"))
    }
}

/// Collection in progress. Create before the CUDA context; [`Collector::finish`] returns the
/// records.
pub(crate) struct Collector {
    finished: bool,
}

impl Collector {
    /// Registers the buffer callbacks and enables the activity kinds.
    pub(crate) fn start() -> Result<Self, String> {
        if !crate::gpu::cupti_present() {
            return Err("CUPTI (libcupti.so) not found; timings come from CUDA events only".into());
        }
        take_records();
        // SAFETY: the callbacks are `extern "C"` functions that live for the whole program.
        check("cuptiActivityRegisterCallbacks", unsafe {
            sys::cuptiActivityRegisterCallbacks(Some(buffer_requested), Some(buffer_completed))
        })?;
        let collector = Self { finished: false };
        for kind in KINDS {
            // SAFETY: plain call with an enum value.
            check(&format!("cuptiActivityEnable({kind:?})"), unsafe {
                sys::cuptiActivityEnable(kind)
            })?;
        }
        Ok(collector)
    }

    /// CUPTI's clock, in nanoseconds (the clock of every record).
    pub(crate) fn now_ns() -> Option<u64> {
        let mut t = 0u64;
        // SAFETY: writes one integer.
        (unsafe { sys::cuptiGetTimestamp(&raw mut t) } == CUptiResult::CUPTI_SUCCESS).then_some(t)
    }

    /// Pauses collection (the activity kinds are disabled) until [`Collector::resume`], so
    /// launches can be timed without CUPTI's instrumentation.
    pub(crate) fn pause() {
        for kind in KINDS {
            // SAFETY: plain call with an enum value.
            let _ = unsafe { sys::cuptiActivityDisable(kind) };
        }
    }

    /// Resumes collection after [`Collector::pause`].
    pub(crate) fn resume() {
        for kind in KINDS {
            // SAFETY: plain call with an enum value.
            let _ = unsafe { sys::cuptiActivityEnable(kind) };
        }
    }

    /// Tags the CUDA calls made until [`Collector::pop`] with `id`.
    pub(crate) fn push(id: u64) {
        // SAFETY: plain call; pushes onto this thread's stack of external ids.
        let _ = unsafe {
            sys::cuptiActivityPushExternalCorrelationId(
                CUpti_ExternalCorrelationKind::CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                id,
            )
        };
    }

    /// Ends the tag of [`Collector::push`].
    pub(crate) fn pop() {
        let mut last = 0u64;
        // SAFETY: writes one integer.
        let _ = unsafe {
            sys::cuptiActivityPopExternalCorrelationId(
                CUpti_ExternalCorrelationKind::CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
                &raw mut last,
            )
        };
    }

    /// Flushes every buffer, stops collecting, and returns the records and how many CUPTI
    /// dropped.
    pub(crate) fn finish(mut self) -> (Vec<Record>, usize) {
        self.stop();
        let mut dropped = 0usize;
        // SAFETY: null context and stream 0 ask for the global count; writes one integer.
        let _ = unsafe {
            sys::cuptiActivityGetNumDroppedRecords(std::ptr::null_mut(), 0, &raw mut dropped)
        };
        (take_records(), dropped)
    }

    fn stop(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        // SAFETY: plain calls; flushing with the forced flag delivers every buffer, including
        // partly filled ones, through `buffer_completed` before returning.
        unsafe {
            let _ = sys::cuptiActivityFlushAll(1);
            for kind in KINDS {
                let _ = sys::cuptiActivityDisable(kind);
            }
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.stop();
    }
}

fn take_records() -> Vec<Record> {
    std::mem::take(
        &mut *RECORDS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
}

fn buffer_layout() -> Option<Layout> {
    Layout::from_size_align(BUFFER_BYTES, BUFFER_ALIGN).ok()
}

/// CUPTI asks for an empty buffer.
extern "C" fn buffer_requested(buffer: *mut *mut u8, size: *mut usize, max_records: *mut usize) {
    let ptr = match buffer_layout() {
        // SAFETY: the layout has a non-zero size.
        Some(layout) => unsafe { std::alloc::alloc(layout) },
        None => std::ptr::null_mut(),
    };
    // SAFETY: CUPTI passes valid out-pointers; a null buffer tells CUPTI to drop records.
    unsafe {
        *buffer = ptr;
        *size = if ptr.is_null() { 0 } else { BUFFER_BYTES };
        *max_records = 0;
    }
}

/// CUPTI hands back a filled buffer: copy its records out and free it.
extern "C" fn buffer_completed(
    _ctx: cudarc::driver::sys::CUcontext,
    _stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if buffer.is_null() {
        return;
    }
    let mut parsed = Vec::new();
    let mut record: *mut CUpti_Activity = std::ptr::null_mut();
    loop {
        // SAFETY: `buffer` holds `valid` bytes of records written by CUPTI; `record` is the
        // iteration cursor CUPTI expects (null to start).
        let r = unsafe { sys::cuptiActivityGetNextRecord(buffer, valid, &raw mut record) };
        if r != CUptiResult::CUPTI_SUCCESS || record.is_null() {
            break;
        }
        // SAFETY: CUPTI returned a pointer to a complete record inside the buffer.
        if let Some(rec) = unsafe { parse(record) } {
            parsed.push(rec);
        }
    }
    RECORDS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .extend(parsed);
    if let Some(layout) = buffer_layout() {
        // SAFETY: the buffer came from `buffer_requested` with this layout and CUPTI is done
        // with it.
        unsafe { std::alloc::dealloc(buffer, layout) };
    }
}

/// Reads a record's leading fields.
///
/// # Safety
/// `record` points to a whole activity record of the kind its first word says.
unsafe fn parse(record: *const CUpti_Activity) -> Option<Record> {
    // The kind is read as a plain integer: a value the bindings do not know is not an error.
    // SAFETY (all reads below): the caller guarantees a whole record; fields are read unaligned
    // because the structs are `packed(8)`.
    let kind = unsafe { record.cast::<u32>().read_unaligned() };
    let rec = match kind {
        k if k == CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL as u32
            || k == CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_KERNEL as u32 =>
        {
            let p = record.cast::<CUpti_ActivityKernel10>();
            unsafe {
                let name_ptr = addr_of!((*p).name).read_unaligned();
                let name = if name_ptr.is_null() {
                    String::from("(unnamed kernel)")
                } else {
                    CStr::from_ptr(name_ptr).to_string_lossy().into_owned()
                };
                Record::Kernel {
                    name,
                    start: addr_of!((*p).start).read_unaligned(),
                    end: addr_of!((*p).end).read_unaligned(),
                    stream: addr_of!((*p).streamId).read_unaligned(),
                    grid: [
                        addr_of!((*p).gridX).read_unaligned(),
                        addr_of!((*p).gridY).read_unaligned(),
                        addr_of!((*p).gridZ).read_unaligned(),
                    ],
                    block: [
                        addr_of!((*p).blockX).read_unaligned(),
                        addr_of!((*p).blockY).read_unaligned(),
                        addr_of!((*p).blockZ).read_unaligned(),
                    ],
                    registers: addr_of!((*p).registersPerThread).read_unaligned(),
                    static_shared: addr_of!((*p).staticSharedMemory).read_unaligned(),
                    dynamic_shared: addr_of!((*p).dynamicSharedMemory).read_unaligned(),
                    correlation: addr_of!((*p).correlationId).read_unaligned(),
                }
            }
        }
        k if k == CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMCPY as u32 => {
            let p = record.cast::<CUpti_ActivityMemcpy6>();
            unsafe {
                Record::Memcpy {
                    copy_kind: addr_of!((*p).copyKind).read_unaligned(),
                    src_kind: addr_of!((*p).srcKind).read_unaligned(),
                    dst_kind: addr_of!((*p).dstKind).read_unaligned(),
                    bytes: addr_of!((*p).bytes).read_unaligned(),
                    start: addr_of!((*p).start).read_unaligned(),
                    end: addr_of!((*p).end).read_unaligned(),
                    stream: addr_of!((*p).streamId).read_unaligned(),
                    correlation: addr_of!((*p).correlationId).read_unaligned(),
                }
            }
        }
        k if k == CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_MEMSET as u32 => {
            let p = record.cast::<CUpti_ActivityMemset4>();
            unsafe {
                Record::Memset {
                    bytes: addr_of!((*p).bytes).read_unaligned(),
                    start: addr_of!((*p).start).read_unaligned(),
                    end: addr_of!((*p).end).read_unaligned(),
                    stream: addr_of!((*p).streamId).read_unaligned(),
                    correlation: addr_of!((*p).correlationId).read_unaligned(),
                }
            }
        }
        k if k == CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_DRIVER as u32
            || k == CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_RUNTIME as u32 =>
        {
            let p = record.cast::<CUpti_ActivityAPI>();
            unsafe {
                Record::Api {
                    runtime: k == CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_RUNTIME as u32,
                    cbid: addr_of!((*p).cbid).read_unaligned(),
                    start: addr_of!((*p).start).read_unaligned(),
                    end: addr_of!((*p).end).read_unaligned(),
                    pid: addr_of!((*p).processId).read_unaligned(),
                    tid: addr_of!((*p).threadId).read_unaligned(),
                    correlation: addr_of!((*p).correlationId).read_unaligned(),
                }
            }
        }
        k if k == CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION as u32 => {
            let p = record.cast::<CUpti_ActivityExternalCorrelation>();
            unsafe {
                Record::External {
                    external_id: addr_of!((*p).externalId).read_unaligned(),
                    correlation: addr_of!((*p).correlationId).read_unaligned(),
                }
            }
        }
        _ => return None,
    };
    Some(rec)
}
