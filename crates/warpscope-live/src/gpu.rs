//! A small owned layer over the CUDA driver (through cudarc's `result` functions, loaded at run
//! time): the device and its primary context, one stream, buffers of device, managed and pinned
//! memory that free themselves, timing events, NVRTC compilation and kernel launches.
//!
//! Nothing here runs unless [`probe`] found the driver: cudarc panics when a library is
//! missing, so every entry point checks presence first.

use std::ffi::{CString, c_void};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cudarc::driver::result;
use cudarc::driver::sys::{
    self, CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUfunction, CUmodule,
    CUstream,
};
use serde::{Deserialize, Serialize};

use crate::error::LiveError;
use crate::watchdog::{abandon, context_abandoned};

/// A wait polls without sleeping for this long, then sleeps [`WAIT_NAP`] between polls.
const WAIT_SPIN: Duration = Duration::from_millis(2);
/// The pause between two polls of a long wait.
const WAIT_NAP: Duration = Duration::from_micros(100);

/// What a compiled function uses, from its attributes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// Registers per thread.
    pub registers: Option<u32>,
    /// Static shared memory per block, in bytes.
    pub static_shared_bytes: Option<u64>,
    /// Local memory per thread (spills, arrays the compiler could not keep in registers), bytes.
    pub local_bytes: Option<u64>,
    /// The most threads per block a launch can have with these resources.
    pub max_threads_per_block: Option<u32>,
}

/// Theoretical occupancy of a launch configuration, from the driver's occupancy API.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    /// Blocks that fit on one SM at once.
    pub blocks_per_sm: u32,
    /// Their warps.
    pub warps_per_sm: u32,
    /// Warps over the SM's warp slots, 0 to 1.
    pub fraction: f64,
}

/// What the live lab knows about the GPU it runs on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceFacts {
    /// Device ordinal.
    pub ordinal: u32,
    /// Name (`NVIDIA H100 80GB HBM3`).
    pub name: String,
    /// Compute capability.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Global memory in bytes.
    pub memory_bytes: u64,
    /// Driver's CUDA version (`13.0`).
    pub driver_version: String,
}

/// Folders where CUDA libraries live when they are not on the loader's path.
fn library_dirs() -> Vec<std::path::PathBuf> {
    let mut dirs = Vec::new();
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(home) = std::env::var_os(var) {
            let home = std::path::PathBuf::from(home);
            dirs.push(home.join("lib64"));
            dirs.push(home.join("extras/CUPTI/lib64"));
        }
    }
    for d in [
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/extras/CUPTI/lib64",
        "/usr/local/cuda/targets/x86_64-linux/lib",
        "/usr/lib/x86_64-linux-gnu",
    ] {
        dirs.push(d.into());
    }
    // Python wheels (nvidia-cuda-nvrtc, nvidia-cuda-cupti, nvidia-cublas) bundle the libraries.
    for root in [
        "/usr/local/lib",
        "/usr/lib",
        "/opt/torch/.venv/lib",
        "/opt/conda/lib",
    ] {
        let Ok(entries) = std::fs::read_dir(root) else {
            continue;
        };
        for python in entries.flatten() {
            for packages in ["site-packages", "dist-packages"] {
                let nvidia = python.path().join(packages).join("nvidia");
                let Ok(subs) = std::fs::read_dir(&nvidia) else {
                    continue;
                };
                for sub in subs.flatten() {
                    dirs.push(sub.path().join("lib"));
                }
            }
        }
    }
    dirs
}

/// Folders with CUDA's headers, where present.
fn cuda_include_dirs() -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|h| std::path::PathBuf::from(h).join("include"))
        .collect();
    dirs.push("/usr/local/cuda/include".into());
    dirs.retain(|d| d.join("cuda_fp16.h").is_file());
    dirs.dedup();
    dirs
}

/// Makes `stem` (`nvrtc`, `cupti`, `cublas`) loadable by the name cudarc asks for: if the
/// loader cannot find it by name, load it once by full path from a known folder, so that the
/// later load by soname finds it already mapped. Returns whether the library is present.
fn preload(stem: &str, present: fn() -> bool) -> bool {
    if present() {
        return true;
    }
    for dir in library_dirs() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let prefix = format!("lib{stem}.so");
        let mut candidates: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(&prefix))
            })
            .collect();
        // `libcupti.so.13` before `libcupti.so.2025.3.1`: the soname cudarc asks for.
        candidates.sort_by_key(|p| p.as_os_str().len());
        for path in candidates {
            // SAFETY: loading a CUDA library runs its initialisers, which only set up its own
            // state; the handle is leaked on purpose so the library stays mapped for the
            // process's lifetime, as cudarc's own handle would.
            if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
                std::mem::forget(lib);
                if present() {
                    return true;
                }
            }
        }
    }
    false
}

/// True if the loader finds `lib{stem}` by one of the names cudarc would ask for.
fn loadable(stem: &str) -> bool {
    cudarc::get_lib_name_candidates(stem)
        .iter()
        // SAFETY: only opens a CUDA library by name (running its initialisers).
        .any(|name| unsafe { libloading::Library::new(name) }.is_ok())
}

/// True if libcuda can be loaded.
pub(crate) fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen libcuda by its usual names.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// True if libnvrtc can be loaded (looking in the usual CUDA folders too).
pub(crate) fn nvrtc_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen libnvrtc.
    *PRESENT.get_or_init(|| {
        preload("nvrtc", || unsafe {
            cudarc::nvrtc::sys::is_culib_present()
        })
    })
}

/// True if libcupti can be loaded.
pub(crate) fn cupti_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen libcupti.
    *PRESENT.get_or_init(|| {
        preload("cupti", || unsafe {
            cudarc::cupti::sys::is_culib_present()
        })
    })
}

/// True if libcublas can be loaded.
pub(crate) fn cublas_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to dlopen libcublas (and its libcublasLt).
    *PRESENT.get_or_init(|| {
        // libcublas needs libcublasLt beside it: load the first one found, once.
        preload("cublasLt", || loadable("cublasLt"));
        preload("cublas", || unsafe {
            cudarc::cublas::sys::is_culib_present()
        })
    })
}

/// Checks that the driver loads and sees a GPU, and describes GPU 0. On a machine without CUDA
/// this returns [`LiveError::NoDriver`] without panicking.
pub fn probe() -> Result<DeviceFacts, LiveError> {
    if !driver_present() {
        return Err(LiveError::NoDriver);
    }
    // The bindings are CUDA 13.0's: some calls (cuEventElapsedTime_v2, cuStreamGetId) exist only
    // from the 12.8 driver on, and cudarc panics on a missing symbol. Check first.
    let mut version = 0i32;
    // SAFETY: writes one int; cuDriverGetVersion exists in every driver and needs no cuInit.
    unsafe { sys::cuDriverGetVersion(&raw mut version) }
        .result()
        .map_err(|e| LiveError::driver("cuDriverGetVersion", e))?;
    if version < 12_080 {
        return Err(LiveError::OldDriver {
            found: format!("{}.{}", version / 1000, (version % 1000) / 10),
        });
    }
    result::init().map_err(|e| LiveError::driver("cuInit", e))?;
    let count =
        result::device::get_count().map_err(|e| LiveError::driver("cuDeviceGetCount", e))?;
    if count < 1 {
        return Err(LiveError::NoDevice);
    }
    let dev = result::device::get(0).map_err(|e| LiveError::driver("cuDeviceGet", e))?;
    facts(dev, 0)
}

fn facts(dev: CUdevice, ordinal: u32) -> Result<DeviceFacts, LiveError> {
    let attr = |a: CUdevice_attribute| -> Result<u32, LiveError> {
        // SAFETY: `dev` came from cuDeviceGet.
        unsafe { result::device::get_attribute(dev, a) }
            .map(|v| u32::try_from(v).unwrap_or(0))
            .map_err(|e| LiveError::driver("cuDeviceGetAttribute", e))
    };
    let name =
        result::device::get_name(dev).map_err(|e| LiveError::driver("cuDeviceGetName", e))?;
    // SAFETY: `dev` came from cuDeviceGet.
    let memory = unsafe { result::device::total_mem(dev) }
        .map_err(|e| LiveError::driver("cuDeviceTotalMem", e))?;
    let mut version = 0i32;
    // SAFETY: writes one int.
    let driver_version = match unsafe { sys::cuDriverGetVersion(&raw mut version) }.result() {
        Ok(()) => format!("{}.{}", version / 1000, (version % 1000) / 10),
        Err(_) => String::new(),
    };
    Ok(DeviceFacts {
        ordinal,
        name,
        compute_capability: (
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ),
        sm_count: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        memory_bytes: memory as u64,
        driver_version,
    })
}

/// A kernel argument.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Arg {
    /// A device pointer.
    Ptr(CUdeviceptr),
    U64(u64),
    U32(u32),
    I32(i32),
    F32(f32),
}

/// The GPU, its primary context made current on this thread, and the stream the lab uses.
pub(crate) struct Gpu {
    dev: CUdevice,
    ctx: CUcontext,
    pub(crate) stream: CUstream,
    pub(crate) facts: DeviceFacts,
    modules: Vec<CUmodule>,
    /// Size of the L2 cache in bytes.
    pub(crate) l2_bytes: u64,
    /// Resident threads one SM can hold.
    pub(crate) max_threads_per_sm: u32,
    /// The longest [`Gpu::sync`] waits before it gives up and abandons the context.
    time_limit_ns: Option<u64>,
}

impl Gpu {
    /// Opens GPU 0 (call [`probe`] first).
    pub(crate) fn open() -> Result<Self, LiveError> {
        if context_abandoned() {
            return Err(LiveError::Abandoned);
        }
        let facts = probe()?;
        let dev = result::device::get(0).map_err(|e| LiveError::driver("cuDeviceGet", e))?;
        // SAFETY: `dev` is a valid device; the context is released in Drop.
        let ctx = unsafe { result::primary_ctx::retain(dev) }
            .map_err(|e| LiveError::driver("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: `ctx` was just retained.
        let current = unsafe { result::ctx::set_current(ctx) }
            .map_err(|e| LiveError::driver("cuCtxSetCurrent", e));
        let stream = current.and_then(|()| {
            result::stream::create(result::stream::StreamKind::NonBlocking)
                .map_err(|e| LiveError::driver("cuStreamCreate", e))
        });
        let stream = match stream {
            Ok(s) => s,
            Err(e) => {
                // SAFETY: releases the retain above; nothing else holds the context.
                let _ = unsafe { result::primary_ctx::release(dev) };
                return Err(e);
            }
        };
        let mut l2 = 0i32;
        // SAFETY: `dev` is valid; writes one int.
        let _ = unsafe {
            sys::cuDeviceGetAttribute(
                &raw mut l2,
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
                dev,
            )
        };
        let mut per_sm = 0i32;
        // SAFETY: `dev` is valid; writes one int.
        let _ = unsafe {
            sys::cuDeviceGetAttribute(
                &raw mut per_sm,
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
                dev,
            )
        };
        Ok(Self {
            dev,
            ctx,
            stream,
            facts,
            modules: Vec::new(),
            l2_bytes: u64::try_from(l2).unwrap_or(0),
            max_threads_per_sm: u32::try_from(per_sm).unwrap_or(0),
            time_limit_ns: None,
        })
    }

    /// Sets how long [`Gpu::sync`] waits (`None`: as long as it takes).
    pub(crate) fn set_time_limit(&mut self, limit_ns: Option<u64>) {
        self.time_limit_ns = limit_ns;
    }

    /// The time limit of one wait for one operation.
    pub(crate) fn time_limit_ns(&self) -> Option<u64> {
        self.time_limit_ns
    }

    /// The context's id (as CUPTI reports it).
    pub(crate) fn context_id(&self) -> u32 {
        let mut id: std::ffi::c_ulonglong = 0;
        // SAFETY: `ctx` is a live context; writes one integer.
        match unsafe { sys::cuCtxGetId(self.ctx, &raw mut id) }.result() {
            Ok(()) => u32::try_from(id).unwrap_or(0),
            Err(_) => 0,
        }
    }

    /// The stream's id (as CUPTI reports it).
    pub(crate) fn stream_id(&self) -> u64 {
        let mut id: std::ffi::c_ulonglong = 0;
        // SAFETY: `stream` is a live stream; writes one integer.
        match unsafe { sys::cuStreamGetId(self.stream, &raw mut id) }.result() {
            Ok(()) => id,
            Err(_) => 0,
        }
    }

    /// Free and total device memory in bytes.
    pub(crate) fn memory(&self) -> Result<(u64, u64), LiveError> {
        result::mem_get_info()
            .map(|(f, t)| (f as u64, t as u64))
            .map_err(|e| LiveError::driver("cuMemGetInfo", e))
    }

    /// Compiles `source` with NVRTC for this device and loads it.
    pub(crate) fn compile(&mut self, source: &str, file: &str) -> Result<CUmodule, LiveError> {
        self.compile_with(source, file, &[], &[]).map(|(m, _, _)| m)
    }

    /// Compiles `source` (named `file` in the log) with extra NVRTC `options`, loads it, and
    /// returns the module, the symbol of each of `names` (`None` where NVRTC found none) and the
    /// compiler's log.
    pub(crate) fn compile_with(
        &mut self,
        source: &str,
        file: &str,
        options: &[String],
        names: &[&str],
    ) -> Result<(CUmodule, Vec<Option<String>>, String), LiveError> {
        if !nvrtc_present() {
            return Err(LiveError::NoNvrtc);
        }
        let (major, minor) = self.facts.compute_capability;
        let arch = format!("compute_{major}{minor}");
        let mut opts = options.to_vec();
        // CUDA's own headers (cuda_fp16.h, mma.h) for sources that include them.
        for dir in cuda_include_dirs() {
            opts.push(format!("-I{}", dir.display()));
        }
        let compiled = crate::nvrtc::compile(source, file, &arch, &opts, names)?;
        // SAFETY: `ptx` is NUL-terminated PTX text that outlives the call.
        let module = unsafe { result::module::load_data(compiled.ptx.as_ptr().cast()) }
            .map_err(|e| LiveError::driver(format!("cuModuleLoadData({file})"), e))?;
        self.modules.push(module);
        Ok((module, compiled.lowered, compiled.log))
    }

    /// The function `name` of a loaded module.
    pub(crate) fn function(&self, module: CUmodule, name: &str) -> Result<CUfunction, LiveError> {
        let cname = CString::new(name).map_err(|_| LiveError::Plan(format!("bad name {name}")))?;
        // SAFETY: `module` was loaded by `compile` and is unloaded only in Drop.
        unsafe { result::module::get_function(module, cname) }
            .map_err(|e| LiveError::driver(format!("cuModuleGetFunction({name})"), e))
    }

    /// The size in bytes of each parameter of a function, in order (`cuFuncGetParamInfo`, CUDA
    /// 12.4; [`probe`] already asks for 12.8).
    pub(crate) fn param_sizes(&self, f: CUfunction) -> Result<Vec<usize>, LiveError> {
        let mut sizes = Vec::new();
        // A kernel's parameters fit in 32,764 bytes, so there are fewer than that many.
        for index in 0..32_768usize {
            let (mut offset, mut size) = (0usize, 0usize);
            // SAFETY: `f` is a loaded function; writes two integers.
            let r = unsafe { sys::cuFuncGetParamInfo(f, index, &raw mut offset, &raw mut size) };
            match r {
                sys::CUresult::CUDA_SUCCESS => sizes.push(size),
                // The index past the last parameter.
                sys::CUresult::CUDA_ERROR_INVALID_VALUE => break,
                e => {
                    return Err(LiveError::driver(
                        "cuFuncGetParamInfo",
                        cudarc::driver::DriverError(e),
                    ));
                }
            }
        }
        Ok(sizes)
    }

    /// What a function uses per thread and block, from its attributes.
    pub(crate) fn resources(&self, f: CUfunction) -> Resources {
        use sys::CUfunction_attribute as A;
        let get = |a: A| {
            let mut v = 0i32;
            // SAFETY: `f` is a loaded function; writes one int.
            unsafe { sys::cuFuncGetAttribute(&raw mut v, a, f) }
                .result()
                .ok()
                .and_then(|()| u32::try_from(v).ok())
        };
        Resources {
            registers: get(A::CU_FUNC_ATTRIBUTE_NUM_REGS),
            static_shared_bytes: get(A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES).map(u64::from),
            local_bytes: get(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES).map(u64::from),
            max_threads_per_block: get(A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
        }
    }

    /// Theoretical occupancy of `f` launched with `threads` per block: the driver's count of
    /// blocks that fit on one SM (registers, shared memory, block and warp limits), times the
    /// block's warps, over the SM's warp slots.
    pub(crate) fn occupancy(&self, f: CUfunction, threads: u32) -> Option<Occupancy> {
        let mut blocks = 0i32;
        let threads_i = i32::try_from(threads).ok()?;
        // SAFETY: `f` is a loaded function of the current context; writes one int.
        unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(&raw mut blocks, f, threads_i, 0)
        }
        .result()
        .ok()?;
        let blocks = u32::try_from(blocks).ok()?;
        let warps = blocks * threads.div_ceil(32);
        let slots = self.max_threads_per_sm / 32;
        (slots > 0).then(|| Occupancy {
            blocks_per_sm: blocks,
            warps_per_sm: warps,
            fraction: f64::from(warps) / f64::from(slots),
        })
    }

    /// Launches `f` on the lab's stream.
    pub(crate) fn launch(
        &self,
        f: CUfunction,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        args: &[Arg],
    ) -> Result<(), LiveError> {
        let mut storage = args.to_vec();
        let mut params: Vec<*mut c_void> = storage
            .iter_mut()
            .map(|a| match a {
                Arg::Ptr(p) | Arg::U64(p) => std::ptr::from_mut(p).cast(),
                Arg::U32(v) => std::ptr::from_mut(v).cast(),
                Arg::I32(v) => std::ptr::from_mut(v).cast(),
                Arg::F32(v) => std::ptr::from_mut(v).cast(),
            })
            .collect();
        // SAFETY: `f` is a loaded function whose parameters match `args` (each kernel's call
        // site passes exactly its signature); the driver copies the parameter values during the
        // call, while `storage` is alive.
        unsafe { result::launch_kernel(f, grid, block, 0, self.stream, &mut params) }
            .map_err(|e| LiveError::driver("cuLaunchKernel", e))
    }

    /// Waits for the stream, within the time limit when one is set (see [`Gpu::sync_within`]).
    pub(crate) fn sync(&self) -> Result<(), LiveError> {
        match self.time_limit_ns {
            Some(limit_ns) => self.sync_within("the kernel", limit_ns, limit_ns),
            None => {
                // SAFETY: `stream` is live.
                unsafe { result::stream::synchronize(self.stream) }
                    .map_err(|e| LiveError::driver("cuStreamSynchronize", e))
            }
        }
    }

    /// Waits for the stream for at most `wait_ns`, polling it (`cuStreamQuery`). Past that, the
    /// work still running cannot be cancelled and every later call could wait for it: the
    /// context is abandoned (see [`crate::context_abandoned`]) and the answer is
    /// [`LiveError::Timeout`] for `what`, which had a limit of `limit_ns` (per launch: a batch
    /// of K launches waits K limits).
    pub(crate) fn sync_within(
        &self,
        what: &str,
        wait_ns: u64,
        limit_ns: u64,
    ) -> Result<(), LiveError> {
        let start = Instant::now();
        let wait = Duration::from_nanos(wait_ns);
        loop {
            // SAFETY: `stream` is live; the call only reads its state.
            match unsafe { sys::cuStreamQuery(self.stream) } {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {}
                err => {
                    return Err(LiveError::driver(
                        "cuStreamQuery",
                        cudarc::driver::DriverError(err),
                    ));
                }
            }
            let waited = start.elapsed();
            if waited >= wait {
                abandon();
                return Err(LiveError::Timeout {
                    what: what.to_string(),
                    limit_ns,
                });
            }
            if waited < WAIT_SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(WAIT_NAP);
            }
        }
    }

    /// Allocates `bytes` of device memory.
    pub(crate) fn alloc(&self, bytes: u64) -> Result<DeviceBuffer, LiveError> {
        self.check_free(bytes, "cuMemAlloc")?;
        // SAFETY: plain allocation; freed in Drop.
        let ptr = unsafe { result::malloc_sync(bytes as usize) }
            .map_err(|e| LiveError::driver(format!("cuMemAlloc of {}", mb(bytes)), e))?;
        Ok(DeviceBuffer { ptr, bytes })
    }

    /// Allocates `bytes` of managed memory, never more than the device has free.
    pub(crate) fn alloc_managed(&self, bytes: u64) -> Result<ManagedBuffer, LiveError> {
        self.check_free(bytes, "cuMemAllocManaged")?;
        // SAFETY: plain allocation, attached globally; freed in Drop.
        let ptr = unsafe {
            result::malloc_managed(bytes as usize, sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL)
        }
        .map_err(|e| LiveError::driver(format!("cuMemAllocManaged of {}", mb(bytes)), e))?;
        Ok(ManagedBuffer { ptr, bytes })
    }

    /// Allocates `bytes` of pinned host memory.
    pub(crate) fn alloc_pinned(&self, bytes: u64) -> Result<PinnedBuffer, LiveError> {
        // SAFETY: plain allocation; freed in Drop.
        let ptr = unsafe { result::malloc_host(bytes as usize, 0) }
            .map_err(|e| LiveError::driver(format!("cuMemHostAlloc of {}", mb(bytes)), e))?;
        // SAFETY: `ptr` holds `bytes` writable bytes; zeroing them makes the memory initialised
        // before any slice is made over it.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes as usize) };
        Ok(PinnedBuffer { ptr, bytes })
    }

    fn check_free(&self, bytes: u64, what: &str) -> Result<(), LiveError> {
        let (free, _) = self.memory()?;
        // Keep a margin for the context, modules and the other buffers of the point.
        if bytes.saturating_add(256 << 20) > free {
            return Err(LiveError::OutOfMemory {
                what: format!("{what} of {}", mb(bytes)),
                need_mb: bytes as f64 / 1e6,
                free_mb: free as f64 / 1e6,
            });
        }
        Ok(())
    }

    /// Copies host bytes to the device, synchronously (pageable source).
    pub(crate) fn upload<T: Copy>(&self, dst: &DeviceBuffer, src: &[T]) -> Result<(), LiveError> {
        debug_assert!(std::mem::size_of_val(src) as u64 <= dst.bytes);
        // SAFETY: `dst` holds at least `src`'s bytes (callers allocate to size).
        unsafe { result::memcpy_htod_sync(dst.ptr, src) }
            .map_err(|e| LiveError::driver("cuMemcpyHtoD", e))
    }

    /// Copies device bytes to the host, synchronously.
    pub(crate) fn download<T: Copy>(
        &self,
        dst: &mut [T],
        src: &DeviceBuffer,
    ) -> Result<(), LiveError> {
        debug_assert!(std::mem::size_of_val(dst) as u64 <= src.bytes);
        // SAFETY: `src` holds at least `dst`'s bytes.
        unsafe { result::memcpy_dtoh_sync(dst, src.ptr) }
            .map_err(|e| LiveError::driver("cuMemcpyDtoH", e))
    }

    /// Copies `bytes` from pinned or pageable host memory to the device on the lab's stream.
    pub(crate) fn upload_async(
        &self,
        dst: CUdeviceptr,
        src: *const u8,
        bytes: u64,
    ) -> Result<(), LiveError> {
        // SAFETY: callers pass a host range and a device range of at least `bytes`, both alive
        // until the stream is synchronised.
        unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), bytes as usize, self.stream) }
            .result()
            .map_err(|e| LiveError::driver("cuMemcpyHtoDAsync", e))
    }

    /// Copies `bytes` from the device to host memory on the lab's stream.
    pub(crate) fn download_async(
        &self,
        dst: *mut u8,
        src: CUdeviceptr,
        bytes: u64,
    ) -> Result<(), LiveError> {
        // SAFETY: as `upload_async`.
        unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes as usize, self.stream) }
            .result()
            .map_err(|e| LiveError::driver("cuMemcpyDtoHAsync", e))
    }

    /// Device-to-device copy on the lab's stream.
    pub(crate) fn copy_d2d(
        &self,
        dst: CUdeviceptr,
        src: CUdeviceptr,
        bytes: u64,
    ) -> Result<(), LiveError> {
        // SAFETY: both ranges are live device allocations of at least `bytes`.
        unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, bytes as usize, self.stream) }
            .result()
            .map_err(|e| LiveError::driver("cuMemcpyDtoDAsync", e))
    }

    /// Fills device memory with a byte on the lab's stream (0xFF poisons floats as NaN).
    pub(crate) fn fill(&self, dst: CUdeviceptr, byte: u8, bytes: u64) -> Result<(), LiveError> {
        // SAFETY: `dst` is a live device (or managed) allocation of at least `bytes`.
        unsafe { sys::cuMemsetD8Async(dst, byte, bytes as usize, self.stream) }
            .result()
            .map_err(|e| LiveError::driver("cuMemsetD8Async", e))
    }

    /// A timing event (`CU_EVENT_DEFAULT`: events created without it cannot time).
    pub(crate) fn event(&self) -> Result<Event, LiveError> {
        result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT)
            .map(Event)
            .map_err(|e| LiveError::driver("cuEventCreate", e))
    }

    /// Records `event` on the lab's stream.
    pub(crate) fn record(&self, event: &Event) -> Result<(), LiveError> {
        // SAFETY: both handles are live.
        unsafe { result::event::record(event.0, self.stream) }
            .map_err(|e| LiveError::driver("cuEventRecord", e))
    }

    /// The handle cuBLAS needs.
    pub(crate) fn raw_stream(&self) -> CUstream {
        self.stream
    }
}

impl Drop for Gpu {
    fn drop(&mut self) {
        if context_abandoned() {
            // A kernel may still run: every call below would wait for it. The process's end
            // frees all of it.
            return;
        }
        // SAFETY: the handles were created by `open`/`compile` and are released once; errors
        // at teardown have nowhere to go.
        unsafe {
            let _ = result::stream::synchronize(self.stream);
            for m in self.modules.drain(..) {
                let _ = result::module::unload(m);
            }
            let _ = result::stream::destroy(self.stream);
            let _ = result::primary_ctx::release(self.dev);
        }
    }
}

/// A CUDA event that can time.
pub(crate) struct Event(CUevent);

impl Event {
    /// Nanoseconds from `self` to `end` (both recorded and complete).
    pub(crate) fn elapsed_ns(&self, end: &Event) -> Result<i64, LiveError> {
        // SAFETY: both events are live and were recorded.
        let ms = unsafe { result::event::elapsed(self.0, end.0) }
            .map_err(|e| LiveError::driver("cuEventElapsedTime", e))?;
        Ok((f64::from(ms) * 1e6).round() as i64)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        if context_abandoned() {
            return;
        }
        // SAFETY: created by cuEventCreate, destroyed once.
        let _ = unsafe { result::event::destroy(self.0) };
    }
}

/// Device memory.
pub(crate) struct DeviceBuffer {
    pub(crate) ptr: CUdeviceptr,
    pub(crate) bytes: u64,
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if context_abandoned() {
            // Freeing waits for the kernel that never ended (see `Gpu`'s drop).
            return;
        }
        // SAFETY: allocated by cuMemAlloc, freed once (synchronising: no launch can still use it).
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// Managed (unified) memory, reachable from host and device.
pub(crate) struct ManagedBuffer {
    pub(crate) ptr: CUdeviceptr,
    pub(crate) bytes: u64,
}

impl ManagedBuffer {
    /// The memory as host floats. Callers synchronise the stream before touching it.
    pub(crate) fn as_f32_mut(&mut self) -> &mut [f32] {
        // SAFETY: managed memory is host-addressable at the same address; the buffer holds
        // `bytes / 4` floats, lives as long as `self`, and the exclusive borrow prevents aliasing
        // on the host. Callers synchronise before host access so the GPU is not using it.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut f32, (self.bytes / 4) as usize) }
    }
}

impl Drop for ManagedBuffer {
    fn drop(&mut self) {
        if context_abandoned() {
            // Freeing waits for the kernel that never ended (see `Gpu`'s drop).
            return;
        }
        // SAFETY: allocated by cuMemAllocManaged, freed once.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// Two `int`s in pinned host memory mapped into the device's address space: the host sets the
/// first to release the `hold_stream` kernel of `assets/kernels/timing.cu`; the kernel sets the
/// second when it gave up waiting.
pub(crate) struct HostFlag {
    host: *mut c_void,
    pub(crate) device: CUdeviceptr,
}

impl HostFlag {
    /// Allocates the flag, cleared.
    pub(crate) fn new() -> Result<Self, LiveError> {
        let mut host = std::ptr::null_mut();
        // SAFETY: allocates 8 bytes of pinned, device-mapped (0x02), portable (0x01) memory;
        // freed in Drop.
        unsafe { sys::cuMemHostAlloc(&raw mut host, 8, 0x03) }
            .result()
            .map_err(|e| LiveError::driver("cuMemHostAlloc (flag)", e))?;
        let mut device: CUdeviceptr = 0;
        // SAFETY: `host` was allocated with the device-map flag just above.
        let mapped = unsafe { sys::cuMemHostGetDevicePointer_v2(&raw mut device, host, 0) }
            .result()
            .map_err(|e| LiveError::driver("cuMemHostGetDevicePointer", e));
        let flag = Self { host, device };
        mapped?;
        flag.arm();
        Ok(flag)
    }

    /// Clears both words: the next hold waits, and has not timed out.
    pub(crate) fn arm(&self) {
        // SAFETY: `host` points to 8 live, aligned bytes; no kernel is using the flag (the
        // stream was synchronised after the last hold).
        unsafe { std::ptr::write_volatile(self.host.cast::<i32>().add(1), 0) };
        self.set(0);
    }

    /// True if the last hold gave up waiting (read after the stream was synchronised).
    pub(crate) fn timed_out(&self) -> bool {
        // SAFETY: `host` points to 8 live, aligned bytes; the kernel that writes the second word
        // has finished (the stream was synchronised).
        unsafe { std::ptr::read_volatile(self.host.cast::<i32>().add(1)) != 0 }
    }

    /// Writes the flag; the GPU sees it through the mapping.
    pub(crate) fn set(&self, value: i32) {
        // SAFETY: `host` points to 4 live, aligned bytes; the volatile write is what the
        // spinning kernel polls, and the fence orders it after the host's earlier calls.
        unsafe { std::ptr::write_volatile(self.host.cast::<i32>(), value) };
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    }
}

impl Drop for HostFlag {
    fn drop(&mut self) {
        if context_abandoned() {
            // Freeing waits for the kernel that never ended (see `Gpu`'s drop).
            return;
        }
        // SAFETY: allocated by cuMemHostAlloc, freed once.
        let _ = unsafe { result::free_host(self.host) };
    }
}

/// Pinned (page-locked) host memory.
pub(crate) struct PinnedBuffer {
    ptr: *mut c_void,
    bytes: u64,
}

impl PinnedBuffer {
    /// The memory as bytes.
    pub(crate) fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: cuMemHostAlloc returned `bytes` bytes at `ptr`, alive as long as `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.cast::<u8>(), self.bytes as usize) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        if context_abandoned() {
            // Freeing waits for the kernel that never ended (see `Gpu`'s drop).
            return;
        }
        // SAFETY: allocated by cuMemHostAlloc, freed once.
        let _ = unsafe { result::free_host(self.ptr) };
    }
}

/// A size in MB for messages.
pub(crate) fn mb(bytes: u64) -> String {
    format!("{:.0} MB", bytes as f64 / 1e6)
}
