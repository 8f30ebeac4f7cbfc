//! Runs a planned sweep on the GPU: measures the device's ceilings, compiles the kernel, and for
//! every point sets up fresh random inputs, warms up, times each launch between two CUDA events
//! (with CUPTI collecting the kernel and copy records where present), checks the last result
//! against the CPU reference, and records everything for the timeline.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use warpscope_core::model::{CopyKind, MemoryKind};
use warpscope_core::{EventKind, Profile};

use crate::catalog::{KernelId, Memory, Target};
use crate::cupti::{Collector, Record};
use crate::error::LiveError;
use crate::gpu::{Arg, Blas, DeviceBuffer, Gpu, HostFlag};
use cudarc::driver::sys::CUfunction;

const TIMING_SOURCE: &str = include_str!("../../../assets/kernels/timing.cu");
/// The lab's own timing kernels, left out of the profile (a warning counts them).
const TIMING_KERNELS: [&str; 2] = ["hold_stream", "flush_l2"];
/// The hold releases itself after this long if the host never does.
const HOLD_TIMEOUT_NS: u64 = 2_000_000_000;
use crate::plan::{Point, SweepPlan, format_size};
use crate::profile::{EventSpan, GpuOp, GpuOpKind, HostSpan, Recording, build_profile};
use crate::reference::{self, Check, Rng};
use crate::results::{LiveRun, Peaks, PointResult, median_ns};

/// How a run is made.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Measure the device-to-device bandwidth and the cuBLAS SGEMM rate first, so rates can be
    /// given as a share of the measured peak.
    pub measure_peaks: bool,
    /// Collect CUPTI activity records when libcupti is present.
    pub use_cupti: bool,
    /// What the profile calls its source (the output file when saved).
    pub profile_path: PathBuf,
    /// Hold the stream with a spinning kernel while the timing events and the launch are queued,
    /// so event times leave out the host's launch latency. Turn off under profilers that
    /// serialize launches (Nsight Compute), where the hold would wait for its timeout.
    pub queue_ahead: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            measure_peaks: true,
            use_cupti: true,
            profile_path: PathBuf::from("live run"),
            queue_ahead: true,
        }
    }
}

/// Progress of a run, shared with the thread that shows it; also carries the cancel request.
#[derive(Debug, Default)]
pub struct LiveProgress {
    done: AtomicU64,
    total: AtomicU64,
    cancel: AtomicBool,
    status: Mutex<String>,
}

impl LiveProgress {
    /// Launches done and planned.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.total.load(Ordering::Relaxed),
        )
    }

    /// Fraction done, 0 to 1.
    pub fn fraction(&self) -> f32 {
        let (done, total) = self.counts();
        if total == 0 {
            0.0
        } else {
            (done as f32 / total as f32).min(1.0)
        }
    }

    /// What the run is doing now.
    pub fn status(&self) -> String {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Asks the run to stop after the launch in flight.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// True once [`LiveProgress::cancel`] was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    fn set_status(&self, text: String) {
        if let Ok(mut s) = self.status.lock() {
            *s = text;
        }
    }

    fn step(&self) {
        self.done.fetch_add(1, Ordering::Relaxed);
    }
}

/// A finished run: its results and its profile.
#[derive(Clone, Debug)]
pub struct LiveOutput {
    /// Results per point.
    pub run: LiveRun,
    /// The profile (timeline, tables), with the results inside it.
    pub profile: Profile,
}

/// What a timed operation is, for the timeline when CUPTI is absent.
struct OpDesc {
    api: &'static str,
    name: String,
    kind: GpuOpKind,
    /// Queue the events and the operation behind a held stream (only for calls that never block
    /// the host: a blocking call behind a held stream would wait for the hold's timeout).
    queue: bool,
}

/// A timed launch: its external correlation id and the point it belongs to.
struct Timed {
    id: u64,
    point: Option<usize>,
}

/// Fields drop in order: the buffers, flag and events go before `gpu`, whose context they
/// belong to.
struct Lab<'a> {
    progress: &'a LiveProgress,
    t0: Instant,
    cupti: bool,
    next_id: u64,
    stream_id: u64,
    rng: Rng,
    seed: u64,
    host: Vec<HostSpan>,
    own_ops: Vec<GpuOp>,
    event_spans: Vec<EventSpan>,
    timed: Vec<Timed>,
    /// The stream-holding kernel and its release flag.
    hold: Option<(CUfunction, HostFlag)>,
    /// The cache-flushing kernel and the buffer (twice the L2 size, plus a sink) it reads
    /// before every timed launch, so no launch finds its inputs in the cache from the one before.
    flush: Option<(CUfunction, DeviceBuffer)>,
    /// Timed operations whose stream hold gave up waiting for the host.
    hold_timeouts: u64,
    gpu: Gpu,
}

/// Runs `plan` on GPU 0. Fails with [`LiveError::NoDriver`] on a machine without CUDA.
pub fn run_sweep(
    plan: &SweepPlan,
    opts: &RunOptions,
    progress: &LiveProgress,
) -> Result<LiveOutput, LiveError> {
    let facts = crate::gpu::probe()?;
    if plan.configs.iter().any(|c| c.name == "cublas") && !crate::gpu::cublas_present() {
        return Err(LiveError::Plan(
            "cuBLAS (libcublas.so) not found: leave out the cublas configuration \
             (--configs naive,tiled)"
                .into(),
        ));
    }
    let peak_launches = if opts.measure_peaks { 14 } else { 0 };
    progress
        .total
        .store(plan.launches() + peak_launches, Ordering::Relaxed);
    progress.set_status(format!("starting on {}", facts.name));

    // CUPTI must be enabled before the context exists.
    let (collector, cupti_note) = if opts.use_cupti {
        match Collector::start() {
            Ok(c) => (Some(c), None),
            Err(note) => (None, Some(note)),
        }
    } else {
        (None, Some("CUPTI not requested".to_string()))
    };
    let gpu = Gpu::open()?;
    let t0 = Instant::now();
    // Only ask CUPTI for its clock when it is loaded: cudarc panics on a missing library.
    let cupti_t0 = collector.as_ref().and_then(|_| Collector::now_ns());
    let unix_start_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|d| i64::try_from(d.as_nanos()).ok());
    let seed = unix_start_ns.map_or(0x5eed, |t| t as u64);
    let context = gpu.context_id();
    let stream_id = gpu.stream_id();
    let mut lab = Lab {
        gpu,
        progress,
        t0,
        cupti: collector.is_some(),
        next_id: 1,
        stream_id,
        rng: Rng::new(seed),
        seed,
        host: Vec::new(),
        own_ops: Vec::new(),
        event_spans: Vec::new(),
        timed: Vec::new(),
        hold: None,
        flush: None,
        hold_timeouts: 0,
    };
    let timing = lab.gpu.compile(TIMING_SOURCE, "timing.cu")?;
    let flush_bytes = (2 * lab.gpu.l2_bytes).max(64 << 20);
    let flush = lab.gpu.alloc(flush_bytes + 16)?;
    lab.gpu.fill(flush.ptr, 0, flush.bytes)?;
    lab.flush = Some((lab.gpu.function(timing, "flush_l2")?, flush));
    if opts.queue_ahead {
        let f = lab.gpu.function(timing, "hold_stream")?;
        lab.hold = Some((f, HostFlag::new()?));
    }

    let peaks = if opts.measure_peaks {
        lab.measure_peaks()?
    } else {
        Peaks::default()
    };
    let mut points = Vec::new();
    let module = match plan.kernel.source {
        Some(src) => {
            progress.set_status(format!("compiling {}", plan.kernel.name));
            let file = plan.kernel.source_file.unwrap_or(plan.kernel.name);
            let start = lab.now_ns();
            let m = lab.gpu.compile(src, file)?;
            lab.host_span(
                format!("NVRTC compile {file}"),
                EventKind::CpuOp,
                start,
                None,
            );
            Some(m)
        }
        None => None,
    };
    for config in &plan.configs {
        let mut first = true;
        for &size in &plan.sizes {
            let point = Point { config, size };
            let index = points.len();
            let warmup = if first { plan.warmup } else { 0 };
            first = false;
            let result = lab.run_point(plan, module, point, index, warmup)?;
            points.push(result);
        }
    }
    lab.gpu.sync()?;

    // Gather CUPTI's records and attribute them to the timed launches.
    let mut rec = Recording {
        pid: i64::from(std::process::id()),
        tid: 1,
        context,
        host: std::mem::take(&mut lab.host),
        gpu: Vec::new(),
        event_spans: std::mem::take(&mut lab.event_spans),
        unix_start_ns,
        timing_launches: 0,
    };
    let mut cupti_note = cupti_note;
    if let (Some(collector), Some(cupti_t0)) = (collector, cupti_t0) {
        let (records, dropped) = collector.finish();
        if dropped > 0 {
            cupti_note = Some(format!("CUPTI dropped {dropped} records"));
        }
        let spans = attribute(&records, cupti_t0, &mut rec);
        for t in &lab.timed {
            if let (Some(p), Some(&ns)) = (t.point, spans.get(&t.id)) {
                points[p].cupti_ns.push(ns);
            }
        }
    } else {
        rec.gpu = std::mem::take(&mut lab.own_ops);
    }

    let mut warnings = Vec::new();
    if lab.hold_timeouts > 0 {
        warnings.push(format!(
            "{} timed operations waited for the stream hold's {} s timeout (the host was slow \
             to queue them): their CUDA-event times include part of that wait",
            lab.hold_timeouts,
            HOLD_TIMEOUT_NS / 1_000_000_000
        ));
    }
    let run = LiveRun {
        warnings,
        kernel: plan.kernel.name.to_string(),
        size_unit: plan.kernel.size_unit,
        device: lab.gpu.facts.clone(),
        peaks,
        cupti: lab.cupti,
        cupti_note,
        warmup: plan.warmup,
        points,
    };
    let profile = build_profile(&run, &rec, opts.profile_path.clone());
    progress.set_status("done".into());
    Ok(LiveOutput { run, profile })
}

/// Turns CUPTI records into timeline events (times relative to `t0`) and returns, per external
/// id, the span from the first start to the last end of the GPU work it caused.
fn attribute(records: &[Record], t0: u64, rec: &mut Recording) -> HashMap<u64, i64> {
    let rel = |t: u64| (i128::from(t) - i128::from(t0)) as i64;
    let mut external: HashMap<u32, u64> = HashMap::new();
    for r in records {
        if let Record::External {
            external_id,
            correlation,
        } = r
        {
            external.insert(*correlation, *external_id);
        }
    }
    let mut extent: HashMap<u64, (u64, u64)> = HashMap::new();
    let mut note = |corr: u32, start: u64, end: u64| {
        if let Some(&id) = external.get(&corr) {
            let e = extent.entry(id).or_insert((start, end));
            e.0 = e.0.min(start);
            e.1 = e.1.max(end);
        }
    };
    for r in records {
        match r {
            Record::Kernel {
                name,
                start,
                end,
                stream,
                grid,
                block,
                registers,
                static_shared,
                dynamic_shared,
                correlation,
            } => {
                if TIMING_KERNELS.contains(&name.as_str()) {
                    rec.timing_launches += 1;
                    continue;
                }
                note(*correlation, *start, *end);
                let dims = |d: &[i32; 3]| d.map(|v| u32::try_from(v).unwrap_or(0));
                rec.gpu.push(GpuOp {
                    name: name.clone(),
                    start_ns: rel(*start),
                    dur_ns: end.saturating_sub(*start) as i64,
                    stream: u64::from(*stream),
                    kind: GpuOpKind::Kernel {
                        grid: dims(grid),
                        block: dims(block),
                        registers: Some(u32::from(*registers)),
                        static_shared: u64::try_from(*static_shared).ok(),
                        dynamic_shared: u64::try_from(*dynamic_shared).ok(),
                    },
                    correlation: Some(u64::from(*correlation)),
                });
            }
            Record::Memcpy {
                copy_kind,
                src_kind,
                dst_kind,
                bytes,
                start,
                end,
                stream,
                correlation,
            } => {
                note(*correlation, *start, *end);
                let kind = CopyKind::from_cupti(i64::from(*copy_kind));
                rec.gpu.push(GpuOp {
                    name: kind.activity_name(),
                    start_ns: rel(*start),
                    dur_ns: end.saturating_sub(*start) as i64,
                    stream: u64::from(*stream),
                    kind: GpuOpKind::Copy {
                        kind,
                        bytes: *bytes,
                        src: MemoryKind::from_cupti(i64::from(*src_kind)),
                        dst: MemoryKind::from_cupti(i64::from(*dst_kind)),
                    },
                    correlation: Some(u64::from(*correlation)),
                });
            }
            Record::Memset {
                bytes,
                start,
                end,
                stream,
                correlation,
            } => {
                note(*correlation, *start, *end);
                rec.gpu.push(GpuOp {
                    name: CopyKind::Memset.activity_name(),
                    start_ns: rel(*start),
                    dur_ns: end.saturating_sub(*start) as i64,
                    stream: u64::from(*stream),
                    kind: GpuOpKind::Memset { bytes: *bytes },
                    correlation: Some(u64::from(*correlation)),
                });
            }
            Record::Api {
                runtime,
                cbid,
                start,
                end,
                correlation,
                ..
            } => {
                let (name, kind) = if *runtime {
                    (
                        warpscope_core::cupti_cbid::runtime_api_name(*cbid),
                        EventKind::Runtime,
                    )
                } else {
                    (
                        warpscope_core::cupti_cbid::driver_api_name(*cbid),
                        EventKind::Driver,
                    )
                };
                let name = name.map_or_else(|| format!("CUDA API {cbid}"), str::to_string);
                rec.host.push(HostSpan {
                    name,
                    kind,
                    start_ns: rel(*start),
                    dur_ns: end.saturating_sub(*start) as i64,
                    correlation: Some(u64::from(*correlation)),
                    cbid: Some(*cbid),
                });
            }
            Record::External { .. } => {}
        }
    }
    // CUPTI numbers streams its own way: put the CUDA-event lane on the stream CUPTI saw the
    // measured work on.
    let measured_stream = records.iter().find_map(|r| match r {
        Record::Kernel {
            stream,
            correlation,
            name,
            ..
        } if external.contains_key(correlation) && !TIMING_KERNELS.contains(&name.as_str()) => {
            Some(*stream)
        }
        Record::Memcpy {
            stream,
            correlation,
            ..
        } if external.contains_key(correlation) => Some(*stream),
        _ => None,
    });
    if let Some(stream) = measured_stream {
        for span in &mut rec.event_spans {
            span.stream = u64::from(stream);
        }
    }
    extent
        .into_iter()
        .map(|(id, (s, e))| (id, e.saturating_sub(s) as i64))
        .collect()
}

fn ceil_div(a: u64, b: u64) -> u32 {
    u32::try_from(a.div_ceil(b)).unwrap_or(u32::MAX)
}

/// Fails with [`LiveError::OutOfMemory`] when the host has less memory available than `need`
/// bytes (a failed allocation would abort the process). Skipped where `/proc/meminfo` is absent.
fn check_host_memory(what: &str, need: u64) -> Result<(), LiveError> {
    let Ok(info) = std::fs::read_to_string("/proc/meminfo") else {
        return Ok(());
    };
    let available_kb = info
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    match available_kb {
        Some(kb) if need > kb.saturating_mul(1024) => Err(LiveError::OutOfMemory {
            what: format!("{what} (host memory)"),
            need_mb: need as f64 / 1e6,
            free_mb: kb as f64 * 1024.0 / 1e6,
        }),
        _ => Ok(()),
    }
}

/// Bytes of `n` floats.
fn floats(n: u64) -> u64 {
    n * 4
}

/// The `vector_add` launch of a configuration over `n` floats at `[a, b, c]`.
fn vector_add_launch(f: CUfunction, config: &str, n: u64, [a, b, c]: [u64; 3]) -> Launch<'static> {
    let (blocks, threads) = launch_shape(config, n);
    Launch {
        f,
        name: "vector_add",
        grid: (blocks, 1, 1),
        block: (threads, 1, 1),
        args: vec![Arg::Ptr(a), Arg::Ptr(b), Arg::Ptr(c), Arg::U64(n)],
    }
}

/// (blocks, threads per block) of a `vector_add` configuration over `n` floats.
fn launch_shape(config: &str, n: u64) -> (u32, u32) {
    match config {
        c if c.starts_with("1x1-") => (1, 1),
        c if c.starts_with("1x256-") => (1, 256),
        _ => (ceil_div(n, 256).max(1), 256),
    }
}

impl Lab<'_> {
    fn now_ns(&self) -> i64 {
        i64::try_from(self.t0.elapsed().as_nanos()).unwrap_or(i64::MAX)
    }

    fn host_span(&mut self, name: String, kind: EventKind, start_ns: i64, corr: Option<u64>) {
        let dur_ns = self.now_ns() - start_ns;
        self.host.push(HostSpan {
            name,
            kind,
            start_ns,
            dur_ns,
            correlation: corr,
            cbid: None,
        });
    }

    fn check_cancel(&self) -> Result<(), LiveError> {
        if self.progress.is_cancelled() {
            Err(LiveError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Times one GPU operation between two CUDA events and waits for it.
    fn timed(
        &mut self,
        label: &str,
        point: Option<usize>,
        op: OpDesc,
        f: impl FnOnce(&Gpu) -> Result<(), LiveError>,
    ) -> Result<i64, LiveError> {
        self.check_cancel()?;
        let id = self.next_id;
        self.next_id += 1;
        let (start, end) = (self.gpu.event()?, self.gpu.event()?);
        if let Some((flush, buf)) = &self.flush {
            let n4 = (buf.bytes - 16) / 16;
            let blocks = self.gpu.facts.sm_count.max(1) * 8;
            self.gpu.launch(
                *flush,
                (blocks, 1, 1),
                (256, 1, 1),
                &[Arg::Ptr(buf.ptr), Arg::U64(n4), Arg::Ptr(buf.ptr + n4 * 16)],
            )?;
        }
        let held = match (&self.hold, op.queue) {
            (Some((hold, flag)), true) => {
                flag.arm();
                self.gpu.launch(
                    *hold,
                    (1, 1, 1),
                    (1, 1, 1),
                    &[Arg::Ptr(flag.device), Arg::U64(HOLD_TIMEOUT_NS)],
                )?;
                Some(flag)
            }
            _ => None,
        };
        if self.cupti {
            Collector::push(id);
        }
        let host_start = self.now_ns();
        let recorded_start = self.gpu.record(&start);
        let api_start = self.now_ns();
        let launched = recorded_start.and_then(|()| f(&self.gpu));
        let api_end = self.now_ns();
        let recorded = self.gpu.record(&end);
        if self.cupti {
            Collector::pop();
        }
        if let Some(flag) = held {
            // Release the stream even when queuing failed, so nothing waits for the timeout.
            flag.set(1);
        }
        launched?;
        recorded?;
        self.gpu.sync()?;
        if held.is_some_and(HostFlag::timed_out) {
            self.hold_timeouts += 1;
        }
        let elapsed_ns = start.elapsed_ns(&end)?;
        self.timed.push(Timed { id, point });
        self.event_spans.push(EventSpan {
            name: label.to_string(),
            start_ns: host_start,
            dur_ns: elapsed_ns,
            stream: self.stream_id,
        });
        if !self.cupti {
            // Without CUPTI the timeline shows the launch call as the host saw it and the GPU
            // work where the events put it (the stream was idle, so it starts with the call).
            self.host.push(HostSpan {
                name: op.api.to_string(),
                kind: EventKind::Driver,
                start_ns: api_start,
                dur_ns: api_end - api_start,
                correlation: Some(id),
                cbid: None,
            });
            self.own_ops.push(GpuOp {
                name: op.name,
                start_ns: api_start,
                dur_ns: elapsed_ns,
                stream: self.stream_id,
                kind: op.kind,
                correlation: Some(id),
            });
        }
        self.progress.step();
        Ok(elapsed_ns)
    }

    /// Device-to-device memcpy bandwidth (512 MB, median of 5) and the cuBLAS SGEMM rate
    /// (4096³, median of 5), the yardsticks for "percent of peak".
    fn measure_peaks(&mut self) -> Result<Peaks, LiveError> {
        self.progress
            .set_status("measuring the device's peaks".into());
        let start = self.now_ns();
        let bytes: u64 = 512 << 20;
        let src = self.gpu.alloc(bytes)?;
        let dst = self.gpu.alloc(bytes)?;
        self.gpu.fill(src.ptr, 0x3f, bytes)?;
        let mut times = Vec::new();
        for i in 0..7 {
            let op = OpDesc {
                api: "cuMemcpyDtoDAsync",
                queue: true,
                name: CopyKind::DtoD.activity_name(),
                kind: copy_op(
                    CopyKind::DtoD,
                    bytes,
                    MemoryKind::Device,
                    MemoryKind::Device,
                ),
            };
            let (s, d) = (src.ptr, dst.ptr);
            let t = self.timed("peak: cuMemcpyDtoD 512 MiB", None, op, |g| {
                g.copy_d2d(d, s, bytes)
            })?;
            if i >= 2 {
                times.push(t);
            }
        }
        drop((src, dst));
        let d2d = median_ns(&times)
            .filter(|&t| t > 0)
            .map(|t| 2.0 * bytes as f64 / (t as f64 * 1e-9));

        let n: u64 = 4096;
        let sgemm = match Blas::new(&self.gpu) {
            Ok(blas) => {
                let bytes = n * n * 4;
                let (a, b, c) = (
                    self.gpu.alloc(bytes)?,
                    self.gpu.alloc(bytes)?,
                    self.gpu.alloc(bytes)?,
                );
                let mut host = vec![0f32; (n * n) as usize];
                self.rng.fill(&mut host, -1.0, 1.0);
                self.gpu.upload(&a, &host)?;
                self.rng.fill(&mut host, -1.0, 1.0);
                self.gpu.upload(&b, &host)?;
                blas.sgemm(a.ptr, b.ptr, c.ptr, n as i32)?;
                self.gpu.sync()?;
                let mut times = Vec::new();
                for i in 0..7 {
                    let op = kernel_op("cublasSgemm", "cublasSgemm (4096)", [0; 3], [0; 3]);
                    let (pa, pb, pc) = (a.ptr, b.ptr, c.ptr);
                    let t = self.timed("peak: cuBLAS SGEMM 4096", None, op, |_| {
                        blas.sgemm(pa, pb, pc, n as i32)
                    })?;
                    if i >= 2 {
                        times.push(t);
                    }
                }
                median_ns(&times)
                    .filter(|&t| t > 0)
                    .map(|t| 2.0 * (n * n * n) as f64 / (t as f64 * 1e-9))
            }
            Err(_) => {
                // Still count the planned steps so the progress bar ends at 100%.
                for _ in 0..7 {
                    self.progress.step();
                }
                None
            }
        };
        self.host_span(
            "measure peaks".into(),
            EventKind::UserAnnotation,
            start,
            None,
        );
        Ok(Peaks {
            d2d_bytes_per_s: d2d,
            sgemm_flops_per_s: sgemm,
        })
    }

    fn run_point(
        &mut self,
        plan: &SweepPlan,
        module: Option<cudarc::driver::sys::CUmodule>,
        point: Point,
        index: usize,
        warmup: u32,
    ) -> Result<PointResult, LiveError> {
        let kernel = plan.kernel;
        let label = format!(
            "{} {} {}",
            kernel.name,
            point.config.name,
            format_size(point.size, kernel.size_unit)
        );
        self.progress.set_status(label.clone());
        check_host_memory(&label, kernel.host_bytes(point.size))?;
        let start = self.now_ns();
        let mut result = PointResult {
            config: point.config.name.to_string(),
            target: point.config.target,
            memory: point.config.memory,
            size: point.size,
            work: kernel.work(point.size),
            planned: plan.repeat,
            event_ns: Vec::new(),
            cupti_ns: Vec::new(),
            check: None,
        };
        // Every point gets fresh inputs from the run's generator.
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.rng = Rng::new(self.seed);
        let ctx = PointCtx {
            plan,
            module,
            point,
            index,
            warmup,
            label: label.clone(),
        };
        let check = match kernel.id {
            KernelId::VectorAdd => match point.config.memory {
                Memory::Host => self.vector_add_cpu(&ctx, &mut result),
                Memory::Unified => self.vector_add_unified(&ctx, &mut result),
                _ => self.vector_add_device(&ctx, &mut result),
            },
            KernelId::Saxpy => self.saxpy(&ctx, &mut result),
            KernelId::Copy => self.copy(&ctx, &mut result),
            KernelId::Sgemm => self.sgemm(&ctx, &mut result),
            KernelId::Reduce => self.reduce(&ctx, &mut result),
            KernelId::Transfer => self.transfer(&ctx, &mut result),
            KernelId::Conv2d => self.conv2d(&ctx, &mut result),
        }?;
        result.check = Some(check);
        self.host_span(label, EventKind::UserAnnotation, start, None);
        Ok(result)
    }

    /// Runs `warmup` untimed and then up to `repeat` timed launches of `launch`, stopping early
    /// once the timed ones add up to the plan's budget. `before` runs before every launch
    /// (poisoning the output, resetting inputs).
    fn repeat(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
        desc: &dyn Fn() -> OpDesc,
        before: &mut dyn FnMut(&mut Self) -> Result<(), LiveError>,
        launch: &dyn Fn(&Gpu) -> Result<(), LiveError>,
    ) -> Result<(), LiveError> {
        for w in 0..ctx.warmup {
            before(self)?;
            let label = format!("{} warm-up {}", ctx.label, w + 1);
            self.timed(&label, None, desc(), launch)?;
        }
        let mut total_ns = 0i64;
        for r in 0..ctx.plan.repeat {
            before(self)?;
            let label = format!("{} #{}", ctx.label, r + 1);
            let t = self.timed(&label, Some(ctx.index), desc(), launch)?;
            result.event_ns.push(t);
            total_ns += t;
            if total_ns as f64 * 1e-9 >= ctx.plan.budget_s {
                // Count the skipped launches as done for the progress bar.
                for _ in r + 1..ctx.plan.repeat {
                    self.progress.step();
                }
                break;
            }
        }
        Ok(())
    }

    /// [`Lab::repeat`] for a kernel launch.
    fn repeat_launch(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
        launch: &Launch<'_>,
        before: &mut dyn FnMut(&mut Self) -> Result<(), LiveError>,
    ) -> Result<(), LiveError> {
        let desc = self.kernel_desc(launch.f, launch.name, launch.grid, launch.block);
        self.repeat(ctx, result, &desc, before, &|g| {
            g.launch(launch.f, launch.grid, launch.block, &launch.args)
        })
    }

    fn function(
        &self,
        ctx: &PointCtx<'_>,
        name: &str,
    ) -> Result<cudarc::driver::sys::CUfunction, LiveError> {
        let module = ctx.module.ok_or_else(|| {
            LiveError::Plan(format!("{} has no CUDA source", ctx.plan.kernel.name))
        })?;
        self.gpu.function(module, name)
    }

    fn kernel_desc(
        &self,
        f: cudarc::driver::sys::CUfunction,
        name: &str,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
    ) -> impl Fn() -> OpDesc + use<> {
        let (registers, static_shared) = self.gpu.function_resources(f);
        let name = name.to_string();
        move || OpDesc {
            api: "cuLaunchKernel",
            queue: true,
            name: name.clone(),
            kind: GpuOpKind::Kernel {
                grid: [grid.0, grid.1, grid.2],
                block: [block.0, block.1, block.2],
                registers,
                static_shared,
                dynamic_shared: Some(0),
            },
        }
    }

    fn random(&mut self, n: u64, lo: f32, hi: f32) -> Vec<f32> {
        let mut v = vec![0f32; n as usize];
        self.rng.fill(&mut v, lo, hi);
        v
    }

    fn upload_new(&mut self, host: &[f32]) -> Result<DeviceBuffer, LiveError> {
        let buf = self.gpu.alloc(floats(host.len() as u64))?;
        self.gpu.upload(&buf, host)?;
        Ok(buf)
    }

    fn vector_add_device(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let f = self.function(ctx, "vector_add")?;
        let (a_h, b_h) = (self.random(n, -1.0, 1.0), self.random(n, -1.0, 1.0));
        let a = self.upload_new(&a_h)?;
        let b = self.upload_new(&b_h)?;
        let c = self.gpu.alloc(floats(n))?;
        let launch = vector_add_launch(f, ctx.point.config.name, n, [a.ptr, b.ptr, c.ptr]);
        let pc = c.ptr;
        self.repeat_launch(ctx, result, &launch, &mut |lab| {
            lab.gpu.fill(pc, 0xff, floats(n))
        })?;
        let mut c_h = vec![0f32; n as usize];
        self.gpu.download(&mut c_h, &c)?;
        Ok(reference::check_vector_add(&a_h, &b_h, &c_h))
    }

    fn vector_add_unified(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let f = self.function(ctx, "vector_add")?;
        let bytes = floats(n);
        // All three at once must fit in what the device has free.
        let (free, _) = self.gpu.memory()?;
        if 3 * bytes + (256 << 20) > free {
            return Err(LiveError::OutOfMemory {
                what: format!("{} (unified memory)", ctx.label),
                need_mb: 3.0 * bytes as f64 / 1e6,
                free_mb: free as f64 / 1e6,
            });
        }
        let mut a = self.gpu.alloc_managed(bytes)?;
        let mut b = self.gpu.alloc_managed(bytes)?;
        let mut c = self.gpu.alloc_managed(bytes)?;
        let launch = vector_add_launch(f, ctx.point.config.name, n, [a.ptr, b.ptr, c.ptr]);
        let mut rng = self.rng.clone();
        // Before every launch the host writes fresh inputs and poisons the output, so the pages
        // live on the host and each launch pays for faulting them over, as a program without
        // explicit copies does.
        self.repeat_launch(ctx, result, &launch, &mut |_| {
            rng.fill(a.as_f32_mut(), -1.0, 1.0);
            rng.fill(b.as_f32_mut(), -1.0, 1.0);
            c.as_f32_mut().fill(f32::NAN);
            Ok(())
        })?;
        self.gpu.sync()?;
        let a_h = a.as_f32_mut().to_vec();
        let b_h = b.as_f32_mut().to_vec();
        Ok(reference::check_vector_add(&a_h, &b_h, c.as_f32_mut()))
    }

    fn vector_add_cpu(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let (a, b) = (self.random(n, -1.0, 1.0), self.random(n, -1.0, 1.0));
        let mut c = vec![f32::NAN; n as usize];
        for w in 0..ctx.warmup {
            let start = self.now_ns();
            reference::cpu_vector_add(&a, &b, &mut c);
            self.host_span(
                format!("{} warm-up {}", ctx.label, w + 1),
                EventKind::CpuOp,
                start,
                None,
            );
            self.progress.step();
        }
        let mut total_ns = 0;
        for r in 0..ctx.plan.repeat {
            self.check_cancel()?;
            c.fill(f32::NAN);
            let start = self.now_ns();
            let clock = Instant::now();
            reference::cpu_vector_add(std::hint::black_box(&a), &b, &mut c);
            std::hint::black_box(&c);
            let t = i64::try_from(clock.elapsed().as_nanos()).unwrap_or(i64::MAX);
            self.host_span(
                format!("{} #{}", ctx.label, r + 1),
                EventKind::CpuOp,
                start,
                None,
            );
            result.event_ns.push(t);
            self.progress.step();
            total_ns += t;
            if total_ns as f64 * 1e-9 >= ctx.plan.budget_s {
                for _ in r + 1..ctx.plan.repeat {
                    self.progress.step();
                }
                break;
            }
        }
        debug_assert_eq!(result.target, Target::Cpu);
        Ok(reference::check_vector_add(&a, &b, &c))
    }

    fn saxpy(&mut self, ctx: &PointCtx<'_>, result: &mut PointResult) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let f = self.function(ctx, "saxpy")?;
        let alpha = 2.5f32;
        let (x_h, y_h) = (self.random(n, -1.0, 1.0), self.random(n, -1.0, 1.0));
        let x = self.upload_new(&x_h)?;
        let y0 = self.upload_new(&y_h)?;
        let y = self.gpu.alloc(floats(n))?;
        let launch = Launch {
            f,
            name: "saxpy",
            grid: (ceil_div(n, 256).max(1), 1, 1),
            block: (256, 1, 1),
            args: vec![
                Arg::F32(alpha),
                Arg::Ptr(x.ptr),
                Arg::Ptr(y.ptr),
                Arg::U64(n),
            ],
        };
        let (py0, py) = (y0.ptr, y.ptr);
        // y is updated in place: restore it from the pristine copy before every launch.
        self.repeat_launch(ctx, result, &launch, &mut |lab| {
            lab.gpu.copy_d2d(py, py0, floats(n))
        })?;
        let mut out = vec![0f32; n as usize];
        self.gpu.download(&mut out, &y)?;
        Ok(reference::check_saxpy(alpha, &x_h, &y_h, &out))
    }

    fn copy(&mut self, ctx: &PointCtx<'_>, result: &mut PointResult) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let src_h = self.random(n, -1.0, 1.0);
        let src = self.upload_new(&src_h)?;
        let dst = self.gpu.alloc(floats(n))?;
        let (ps, pd) = (src.ptr, dst.ptr);
        let poison = &mut |lab: &mut Self| lab.gpu.fill(pd, 0xff, floats(n));
        match ctx.point.config.name {
            "memcpy" => {
                let desc = || OpDesc {
                    api: "cuMemcpyDtoDAsync",
                    queue: true,
                    name: CopyKind::DtoD.activity_name(),
                    kind: copy_op(
                        CopyKind::DtoD,
                        floats(n),
                        MemoryKind::Device,
                        MemoryKind::Device,
                    ),
                };
                self.repeat(ctx, result, &desc, poison, &|g| {
                    g.copy_d2d(pd, ps, floats(n))
                })?;
            }
            "vec4" => {
                let f = self.function(ctx, "copy_vec4")?;
                let blocks = self.gpu.facts.sm_count.max(1) * 8;
                let n4 = n / 4;
                let tail = u32::try_from(n % 4).unwrap_or(0);
                let launch = Launch {
                    f,
                    name: "copy_vec4",
                    grid: (blocks, 1, 1),
                    block: (256, 1, 1),
                    args: vec![
                        Arg::Ptr(ps),
                        Arg::Ptr(pd),
                        Arg::U64(n4),
                        Arg::Ptr(ps + n4 * 16),
                        Arg::Ptr(pd + n4 * 16),
                        Arg::U32(tail),
                    ],
                };
                self.repeat_launch(ctx, result, &launch, poison)?;
            }
            _ => {
                let f = self.function(ctx, "copy_scalar")?;
                let launch = Launch {
                    f,
                    name: "copy_scalar",
                    grid: (ceil_div(n, 256).max(1), 1, 1),
                    block: (256, 1, 1),
                    args: vec![Arg::Ptr(ps), Arg::Ptr(pd), Arg::U64(n)],
                };
                self.repeat_launch(ctx, result, &launch, poison)?;
            }
        }
        let mut out = vec![0f32; n as usize];
        self.gpu.download(&mut out, &dst)?;
        Ok(reference::check_copy(&src_h, &out))
    }

    fn sgemm(&mut self, ctx: &PointCtx<'_>, result: &mut PointResult) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let (a_h, b_h) = (self.random(n * n, -1.0, 1.0), self.random(n * n, -1.0, 1.0));
        let a = self.upload_new(&a_h)?;
        let b = self.upload_new(&b_h)?;
        let c = self.gpu.alloc(floats(n * n))?;
        let (pa, pb, pc) = (a.ptr, b.ptr, c.ptr);
        let side = i32::try_from(n).map_err(|_| LiveError::Plan("matrix too large".into()))?;
        let poison = &mut |lab: &mut Self| lab.gpu.fill(pc, 0xff, floats(n * n));
        match ctx.point.config.name {
            "cublas" => {
                let blas = Blas::new(&self.gpu).map_err(LiveError::Plan)?;
                blas.sgemm(pa, pb, pc, side)?;
                self.gpu.sync()?;
                let desc = || kernel_op("cublasSgemm", "cublasSgemm", [0; 3], [0; 3]);
                self.repeat(ctx, result, &desc, poison, &|_| {
                    blas.sgemm(pa, pb, pc, side)
                })?;
            }
            name => {
                let (fname, tile) = if name == "naive" {
                    ("sgemm_naive", 16)
                } else {
                    ("sgemm_tiled", 32)
                };
                let f = self.function(ctx, fname)?;
                let g = ceil_div(n, tile);
                let launch = Launch {
                    f,
                    name: fname,
                    grid: (g, g, 1),
                    block: (tile as u32, tile as u32, 1),
                    args: vec![
                        Arg::Ptr(pa),
                        Arg::Ptr(pb),
                        Arg::Ptr(pc),
                        Arg::I32(side),
                        Arg::I32(side),
                        Arg::I32(side),
                    ],
                };
                self.repeat_launch(ctx, result, &launch, poison)?;
            }
        }
        let mut out = vec![0f32; (n * n) as usize];
        self.gpu.download(&mut out, &c)?;
        Ok(reference::check_sgemm(
            &a_h, &b_h, &out, n as usize, self.seed,
        ))
    }

    fn reduce(&mut self, ctx: &PointCtx<'_>, result: &mut PointResult) -> Result<Check, LiveError> {
        let n = ctx.point.size;
        let f = self.function(ctx, "reduce_sum")?;
        let x_h = self.random(n, 0.0, 1.0);
        let x = self.upload_new(&x_h)?;
        let out = self.gpu.alloc(4)?;
        let launch = Launch {
            f,
            name: "reduce_sum",
            grid: (self.gpu.facts.sm_count.max(1) * 8, 1, 1),
            block: (256, 1, 1),
            args: vec![Arg::Ptr(x.ptr), Arg::Ptr(out.ptr), Arg::U64(n)],
        };
        let po = out.ptr;
        // The sum starts from zero: an unwritten result stays 0 and fails the check.
        self.repeat_launch(ctx, result, &launch, &mut |lab| lab.gpu.fill(po, 0, 4))?;
        let mut got = [0f32; 1];
        self.gpu.download(&mut got, &out)?;
        Ok(reference::check_reduce(&x_h, got[0]))
    }

    fn transfer(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
    ) -> Result<Check, LiveError> {
        let bytes = ctx.point.size;
        let name = ctx.point.config.name;
        let to_device = name.starts_with("h2d");
        let pinned = ctx.point.config.memory == Memory::Pinned;
        let mut pattern = vec![0u8; bytes as usize];
        for (i, b) in pattern.iter_mut().enumerate() {
            *b = (i.wrapping_mul(2_654_435_761) >> 13) as u8;
        }
        let dev = self.gpu.alloc(bytes)?;
        let mut pinned_buf = if pinned {
            Some(self.gpu.alloc_pinned(bytes)?)
        } else {
            None
        };
        let mut pageable = if pinned {
            Vec::new()
        } else {
            vec![0u8; bytes as usize]
        };
        let host: &mut [u8] = match pinned_buf.as_mut() {
            Some(p) => p.as_bytes_mut(),
            None => &mut pageable,
        };
        let (kind, src, dst, api) = if to_device {
            host.copy_from_slice(&pattern);
            let src = if pinned {
                MemoryKind::Pinned
            } else {
                MemoryKind::Pageable
            };
            (CopyKind::HtoD, src, MemoryKind::Device, "cuMemcpyHtoDAsync")
        } else {
            self.gpu.upload(&dev, &pattern)?;
            let dst = if pinned {
                MemoryKind::Pinned
            } else {
                MemoryKind::Pageable
            };
            (CopyKind::DtoH, MemoryKind::Device, dst, "cuMemcpyDtoHAsync")
        };
        let host_ptr = host.as_mut_ptr();
        let pd = dev.ptr;
        // Copies from pageable memory block the host: never queue them behind a hold.
        let desc = || OpDesc {
            api,
            queue: pinned,
            name: kind.activity_name(),
            kind: copy_op(kind, bytes, src, dst),
        };
        let launch = |g: &Gpu| {
            if to_device {
                g.upload_async(pd, host_ptr, bytes)
            } else {
                g.download_async(host_ptr, pd, bytes)
            }
        };
        // Poison the destination before every copy, so the check proves the last copy arrived.
        // (The host side is written only between copies, after the stream was synchronised.)
        let mut poison = |lab: &mut Self| {
            if to_device {
                lab.gpu.fill(pd, 0xff, bytes)
            } else {
                host.fill(0xff);
                Ok(())
            }
        };
        self.repeat(ctx, result, &desc, &mut poison, &launch)?;
        if to_device {
            let mut back = vec![0u8; bytes as usize];
            self.gpu.download(&mut back, &dev)?;
            Ok(reference::check_bytes(&pattern, &back))
        } else {
            let arrived: &[u8] = match pinned_buf.as_mut() {
                Some(p) => p.as_bytes_mut(),
                None => &pageable,
            };
            Ok(reference::check_bytes(&pattern, arrived))
        }
    }

    fn conv2d(&mut self, ctx: &PointCtx<'_>, result: &mut PointResult) -> Result<Check, LiveError> {
        let batch = ctx.point.size;
        let (cin, cout, side, ks) = crate::catalog::CONV;
        let f = self.function(ctx, "conv2d_forward")?;
        let input_h = self.random(batch * cin * side * side, 0.0, 1.0);
        let weight_h = self.random(cout * cin * ks * ks, -0.2, 0.2);
        let bias_h = self.random(cout, -0.1, 0.1);
        let input = self.upload_new(&input_h)?;
        let weight = self.upload_new(&weight_h)?;
        let bias = self.upload_new(&bias_h)?;
        let outputs = batch * cout * side * side;
        let output = self.gpu.alloc(floats(outputs))?;
        let batch32 =
            u32::try_from(batch).map_err(|_| LiveError::Plan("batch too large".into()))?;
        let launch = Launch {
            f,
            name: "conv2d_forward",
            grid: (ceil_div(outputs, 256), 1, 1),
            block: (256, 1, 1),
            args: vec![
                Arg::Ptr(input.ptr),
                Arg::Ptr(weight.ptr),
                Arg::Ptr(bias.ptr),
                Arg::Ptr(output.ptr),
                Arg::U32(batch32),
            ],
        };
        let po = output.ptr;
        self.repeat_launch(ctx, result, &launch, &mut |lab| {
            lab.gpu.fill(po, 0xff, floats(outputs))
        })?;
        let mut out = vec![0f32; outputs as usize];
        self.gpu.download(&mut out, &output)?;
        Ok(reference::check_conv2d(
            &input_h, &weight_h, &bias_h, &out, self.seed,
        ))
    }
}

/// One kernel launch, as [`Lab::repeat_launch`] times it.
struct Launch<'a> {
    f: CUfunction,
    name: &'a str,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    args: Vec<Arg>,
}

/// What one point needs to know about the sweep.
struct PointCtx<'p> {
    plan: &'p SweepPlan,
    module: Option<cudarc::driver::sys::CUmodule>,
    point: Point,
    index: usize,
    warmup: u32,
    label: String,
}

fn copy_op(kind: CopyKind, bytes: u64, src: MemoryKind, dst: MemoryKind) -> GpuOpKind {
    GpuOpKind::Copy {
        kind,
        bytes,
        src,
        dst,
    }
}

/// A library call that launches kernels itself (cuBLAS). Queued like a launch: every handle
/// makes one untimed call first, so no timed call allocates or synchronises.
fn kernel_op(api: &'static str, name: &str, grid: [u32; 3], block: [u32; 3]) -> OpDesc {
    OpDesc {
        api,
        queue: true,
        name: name.to_string(),
        kind: GpuOpKind::Kernel {
            grid,
            block,
            registers: None,
            static_shared: None,
            dynamic_shared: None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cupti_records_become_timeline_events_and_per_launch_times() {
        let t0 = 1_000_000;
        let records = vec![
            Record::External {
                external_id: 7,
                correlation: 40,
            },
            Record::Api {
                runtime: false,
                cbid: 307,
                start: t0 + 100,
                end: t0 + 900,
                pid: 1,
                tid: 2,
                correlation: 40,
            },
            Record::Kernel {
                name: "vector_add".into(),
                start: t0 + 2_000,
                end: t0 + 12_000,
                stream: 13,
                grid: [4, 1, 1],
                block: [256, 1, 1],
                registers: 16,
                static_shared: 0,
                dynamic_shared: 0,
                correlation: 40,
            },
            // The lab's own cache flush is left out of the profile, and counted.
            Record::Kernel {
                name: "flush_l2".into(),
                start: t0 + 1_000,
                end: t0 + 1_900,
                stream: 13,
                grid: [1056, 1, 1],
                block: [256, 1, 1],
                registers: 16,
                static_shared: 0,
                dynamic_shared: 0,
                correlation: 38,
            },
            // Untagged work (a poisoning memset) is on the timeline but times nothing.
            Record::Memset {
                bytes: 4096,
                start: t0 + 500,
                end: t0 + 900,
                stream: 13,
                correlation: 39,
            },
            Record::Memcpy {
                copy_kind: 1,
                src_kind: 1,
                dst_kind: 3,
                bytes: 4096,
                start: t0 + 20_000,
                end: t0 + 21_000,
                stream: 13,
                correlation: 41,
            },
        ];
        let mut rec = Recording::default();
        rec.event_spans.push(EventSpan {
            name: "vector_add grid-device 1M #1".into(),
            start_ns: 1_900,
            dur_ns: 10_500,
            stream: 14,
        });
        let spans = attribute(&records, t0, &mut rec);
        assert_eq!(
            rec.event_spans[0].stream, 13,
            "the events' lane is CUPTI's stream"
        );
        assert_eq!(spans.get(&7), Some(&10_000));
        assert_eq!(spans.len(), 1);
        assert_eq!(rec.host.len(), 1);
        assert_eq!(rec.host[0].start_ns, 100);
        assert_eq!(rec.host[0].correlation, Some(40));
        assert_eq!(rec.gpu.len(), 3);
        assert_eq!(rec.timing_launches, 1);
        assert_eq!(rec.gpu[0].start_ns, 2_000);
        assert_eq!(rec.gpu[1].name, "[CUDA memset]");
        assert_eq!(rec.gpu[2].name, "[CUDA memcpy HtoD]");
        assert!(matches!(
            rec.gpu[2].kind,
            GpuOpKind::Copy {
                kind: CopyKind::HtoD,
                src: MemoryKind::Pageable,
                dst: MemoryKind::Device,
                ..
            }
        ));
    }

    #[test]
    fn launch_shapes() {
        let shape = launch_shape;
        assert_eq!(shape("1x1-device", 1_000_000), (1, 1));
        assert_eq!(shape("1x256-unified", 1_000_000), (1, 256));
        assert_eq!(shape("grid-device", 1_000_000), (3907, 256));
        assert_eq!(ceil_div(256, 256), 1);
        assert_eq!(ceil_div(257, 256), 2);
    }
}
