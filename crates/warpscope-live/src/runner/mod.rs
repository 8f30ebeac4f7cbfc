//! Runs a planned sweep on the GPU: measures the device's ceilings, compiles the kernel, and for
//! every point sets up fresh random inputs, warms up, times each launch (or each batch of
//! `--batch` back-to-back launches) between two CUDA events (with CUPTI collecting the kernel and
//! copy records where present), checks the result of a single launch against the CPU reference,
//! and records everything for the timeline.

mod gemm;
mod kernels;
mod records;
mod user;

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use warpscope_core::model::{CopyKind, MemoryKind};
use warpscope_core::{EventKind, Profile};

use crate::Resources;
use crate::blas::Blas;
use crate::cupti::Collector;
use crate::error::LiveError;
use crate::gpu::{Arg, DeviceBuffer, Gpu, HostFlag};
use crate::host::check_host_memory;
use crate::plan::{Point, SweepPlan, format_size, per_launch_ns};
use crate::profile::{EventSpan, GpuOp, GpuOpKind, HostSpan, Recording, build_profile};
use crate::reference::Rng;
use crate::results::{LiveRun, Peaks, PointResult, median_ns, per_second};
use crate::watchdog::{Watchdog, context_abandoned};
use cudarc::driver::sys::CUfunction;
use records::attribute;

const TIMING_SOURCE: &str = include_str!("../../../../assets/kernels/timing.cu");
/// The lab's own timing kernels, left out of the profile (a warning counts them).
const TIMING_KERNELS: [&str; 2] = ["hold_stream", "flush_l2"];
/// The hold releases itself after this long if the host never does.
const HOLD_TIMEOUT_NS: u64 = 2_000_000_000;
/// Launches of a batch queued behind the hold before it is released; the rest are queued while
/// the GPU runs these. CUDA's launch queue holds fewer than 2000 (on the H200 a batch of 2000
/// behind the hold waited for its timeout), and a launch call blocks while it is full.
const HOLD_QUEUE_LAUNCHES: u32 = 256;
/// Runs of each peak measurement: [`PEAK_WARMUPS`] warm-ups, the median of the rest is kept.
const PEAK_RUNS: usize = 7;
/// Peak-measurement runs not counted (clocks rising, caches and cuBLAS's heuristics warming).
const PEAK_WARMUPS: usize = 2;
/// Peak measurements: the D2D copy, cuBLAS SGEMM and the two tensor-op GEMMs.
const PEAK_MEASUREMENTS: usize = 4;
/// After a time limit was hit, how long gathering CUPTI's records may take before the backstop
/// ends the process.
const FINISH_AFTER_TIMEOUT_NS: u64 = 10_000_000_000;

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
    /// Time every point a second time with CUPTI's collection paused, to show what tracing
    /// costs each launch.
    pub cupti_cost: bool,
    /// The longest one launch may run, in nanoseconds (a batch of K launches gets K times
    /// this); `None` waits as long as it takes. Past it the point fails with
    /// [`LiveError::Timeout`], the rest of the sweep is not run and the CUDA context is
    /// abandoned: a kernel that never ends cannot be cancelled, so the caller must end the
    /// process ([`crate::exit_now`]) once it has the results, which is what frees the GPU.
    /// With a limit, a thread also ends the process (exit status 1, a message on stderr) if
    /// the host itself stays blocked in a CUDA call 5 s past a limit (a launch queue full
    /// behind a kernel that never ends).
    pub timeout_ns: Option<u64>,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            measure_peaks: true,
            use_cupti: true,
            profile_path: PathBuf::from("live run"),
            queue_ahead: true,
            cupti_cost: false,
            timeout_ns: None,
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

    /// Sets the counts and status from outside (a run in a child process reporting back).
    pub fn report(&self, done: u64, total: u64, status: String) {
        self.done.store(done, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        self.set_status(status);
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

/// A kernel launch of `name` with the `resources` its function was found to use.
fn kernel_desc(
    name: &str,
    grid: (u32, u32, u32),
    block: (u32, u32, u32),
    resources: &Resources,
) -> OpDesc {
    OpDesc {
        api: "cuLaunchKernel",
        queue: true,
        name: name.to_string(),
        kind: GpuOpKind::Kernel {
            grid: [grid.0, grid.1, grid.2],
            block: [block.0, block.1, block.2],
            registers: resources.registers,
            static_shared: resources.static_shared_bytes,
            dynamic_shared: Some(0),
        },
    }
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
    /// Time each point again with CUPTI paused.
    cupti_cost: bool,
    /// CUPTI is paused: launches are neither tagged nor attributed.
    cupti_paused: bool,
    /// The backstop for waits the host cannot leave (with a time limit only).
    watchdog: Option<Watchdog>,
    gpu: Gpu,
}

/// A failed point's error text, and what the rest of the sweep says when the failure left the
/// CUDA context unusable (a fault, or a kernel that did not finish within the time limit).
pub(crate) fn failure_text(e: &LiveError) -> (String, Option<&'static str>) {
    if matches!(e, LiveError::Timeout { .. } | LiveError::Abandoned) {
        (
            e.to_string(),
            Some(
                "not run: an earlier kernel did not finish within the time limit and was \
                 stopped",
            ),
        )
    } else if e.is_sticky() {
        (
            format!("the kernel faulted: {e}"),
            Some("not run: an earlier point faulted and left the CUDA context unusable"),
        )
    } else {
        (e.to_string(), None)
    }
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
    let peak_launches = if opts.measure_peaks {
        (PEAK_MEASUREMENTS * PEAK_RUNS) as u64
    } else {
        0
    };
    progress.set_status(format!("starting on {}", facts.name));
    let cost_passes = if opts.cupti_cost && opts.use_cupti {
        2
    } else {
        1
    };
    // The check launches of a batched plan run once, after the CUPTI-paused pass.
    progress.total.store(
        (plan.launches() - plan.check_launches())
            .saturating_mul(cost_passes)
            .saturating_add(plan.check_launches())
            .saturating_add(peak_launches),
        Ordering::Relaxed,
    );

    // CUPTI must be enabled before the context exists.
    let (collector, cupti_note) = if opts.use_cupti {
        match Collector::start() {
            Ok(c) => (Some(c), None),
            Err(note) => (None, Some(note)),
        }
    } else {
        (None, Some("CUPTI not requested".to_string()))
    };
    let mut gpu = Gpu::open()?;
    gpu.set_time_limit(opts.timeout_ns);
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
        cupti_cost: opts.cupti_cost,
        cupti_paused: false,
        watchdog: opts.timeout_ns.map(|_| Watchdog::ending_the_process()),
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
    let mut user_module = None;
    let module = if let Some(user) = plan.user.as_deref() {
        progress.set_status(format!("compiling {}", user.file_name));
        let start = lab.now_ns();
        let compiled = user::compile(&mut lab.gpu, user)?;
        lab.host_span(
            format!("NVRTC compile {}", user.file_name),
            EventKind::CpuOp,
            start,
            None,
        );
        let m = compiled.module;
        user_module = Some(compiled);
        Some(m)
    } else {
        match plan.kernel.source {
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
        }
    };
    // A point that fails is recorded as failed when the sweep is the user's or sweeps blocks;
    // after a fault (a sticky error) the context is unusable, so the rest are not run.
    // A kernel that did not finish within the time limit ends the sweep the same way, whatever
    // the sweep.
    let tolerant = plan.user.is_some() || !plan.blocks.is_empty();
    let mut broken: Option<&'static str> = None;
    let mut last_group = None;
    for point in plan.points() {
        let index = points.len();
        let group = (point.config.name, point.block);
        let warmup = if last_group == Some(group) {
            0
        } else {
            plan.warmup
        };
        last_group = Some(group);
        if let Some(reason) = broken {
            let mut failed = lab.point_result(plan, point);
            failed.error = Some(reason.into());
            points.push(failed);
            continue;
        }
        match lab.run_point(plan, module, user_module.as_ref(), point, index, warmup) {
            Ok(result) => points.push(result),
            Err(e) if (tolerant || e.ends_the_context()) && !matches!(e, LiveError::Cancelled) => {
                // A sticky error poisons every later CUDA call of this process (CUDA's rule:
                // only a new process recovers), and a kernel that never ends holds the context
                // until the process ends, so the rest are not run.
                let (text, rest) = failure_text(&e);
                broken = rest;
                let mut failed = lab.point_result(plan, point);
                failed.error = Some(text);
                points.push(failed);
            }
            Err(e) => return Err(e),
        }
    }
    if broken.is_none() {
        lab.gpu.sync()?;
    }
    // Should CUPTI's flush wait for the kernel that never ended, the backstop ends the process.
    let _finishing = match (&lab.watchdog, context_abandoned()) {
        (Some(dog), true) => Some(dog.arm(
            FINISH_AFTER_TIMEOUT_NS,
            lab.gpu.time_limit_ns().unwrap_or(0),
        )),
        _ => None,
    };

    // Gather CUPTI's records and attribute them to the timed launches.
    let mut rec = Recording {
        pid: i64::from(std::process::id()),
        tid: 1,
        context,
        host: std::mem::take(&mut lab.host),
        gpu: Vec::new(),
        event_spans: std::mem::take(&mut lab.event_spans),
        stream: stream_id,
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
                // A batch's span runs from its first launch's start to its last one's end,
                // like the event pair around it.
                let batch = points[p].batch;
                points[p].cupti_ns.push(per_launch_ns(ns, batch));
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
        user: plan
            .user
            .as_deref()
            .map(|u| u.info(user_module.map(|m| m.log).unwrap_or_default())),
        kernel: plan.kernel_name().to_string(),
        size_unit: plan.kernel.size_unit,
        device: lab.gpu.facts.clone(),
        peaks,
        cupti: lab.cupti,
        cupti_note,
        warmup: plan.warmup,
        points,
        batch: plan.batch,
    };
    let profile = build_profile(&run, &rec, opts.profile_path.clone());
    progress.set_status("done".into());
    Ok(LiveOutput { run, profile })
}

fn ceil_div(a: u64, b: u64) -> u32 {
    u32::try_from(a.div_ceil(b)).unwrap_or(u32::MAX)
}

/// Bytes of `n` floats.
fn floats(n: u64) -> u64 {
    n * 4
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
        op: &OpDesc,
        f: impl Fn(&Gpu) -> Result<(), LiveError>,
    ) -> Result<i64, LiveError> {
        self.timed_batch(label, point, op, 1, f)
    }

    /// Times `batch` back-to-back runs of one GPU operation between one pair of CUDA events
    /// (the L2 cache flushed once before them) and waits for them; returns the events' elapsed
    /// time for the whole batch.
    fn timed_batch(
        &mut self,
        label: &str,
        point: Option<usize>,
        op: &OpDesc,
        batch: u32,
        f: impl Fn(&Gpu) -> Result<(), LiveError>,
    ) -> Result<i64, LiveError> {
        self.check_cancel()?;
        let batch = batch.max(1);
        let limit_ns = self.gpu.time_limit_ns();
        // Disarmed when dropped, on every way out of this function.
        let armed = match (&self.watchdog, limit_ns) {
            (Some(dog), Some(limit)) => {
                Some(dog.arm(limit.saturating_mul(u64::from(batch)), limit))
            }
            _ => None,
        };
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
        let tag = self.cupti && !self.cupti_paused;
        if tag {
            Collector::push(id);
        }
        let host_start = self.now_ns();
        let recorded_start = self.gpu.record(&start);
        // The host's start and end of each call of the batch.
        let mut calls = Vec::with_capacity(batch as usize);
        let launched = recorded_start.and_then(|()| {
            for i in 0..batch {
                if i >= HOLD_QUEUE_LAUNCHES
                    && let (Some(armed), Some(limit)) = (&armed, limit_ns)
                {
                    // A launch call blocks while CUDA's queue is full, until an earlier launch
                    // ends: each may wait one launch's limit.
                    armed.rearm(limit);
                }
                let api_start = self.now_ns();
                f(&self.gpu)?;
                calls.push((api_start, self.now_ns()));
                if i + 1 == HOLD_QUEUE_LAUNCHES
                    && let Some(flag) = held
                {
                    // A full launch queue would block the next call until the hold's timeout.
                    flag.set(1);
                }
            }
            Ok(())
        });
        let recorded = self.gpu.record(&end);
        if tag {
            Collector::pop();
        }
        if let Some(flag) = held {
            // Release the stream even when queuing failed, so nothing waits for the timeout.
            flag.set(1);
        }
        launched?;
        recorded?;
        match limit_ns {
            Some(limit) => {
                if let Some(armed) = &armed {
                    armed.rearm(limit.saturating_mul(u64::from(batch)));
                }
                let what = match (&op.kind, batch) {
                    (_, 2..) => format!("the batch of {batch} launches"),
                    (GpuOpKind::Kernel { .. }, _) => "the kernel".to_string(),
                    (GpuOpKind::Copy { .. }, _) => "the copy".to_string(),
                    (GpuOpKind::Memset { .. }, _) => "the memset".to_string(),
                };
                self.gpu
                    .sync_within(&what, limit.saturating_mul(u64::from(batch)), limit)?;
            }
            None => self.gpu.sync()?,
        }
        if held.is_some_and(HostFlag::timed_out) {
            self.hold_timeouts += 1;
        }
        let elapsed_ns = start.elapsed_ns(&end)?;
        self.timed.push(Timed { id, point });
        self.event_spans.push(EventSpan {
            name: if batch > 1 {
                format!("{label} (batch: {batch} launches in this event pair)")
            } else {
                label.to_string()
            },
            start_ns: host_start,
            dur_ns: elapsed_ns,
        });
        if !self.cupti {
            // Without CUPTI the timeline shows each call as the host saw it and the GPU work
            // where the events put it (the stream was idle, so it starts with the first call).
            // The events time a batch as a whole: its launches are shown back to back, each
            // with the batch's mean time.
            let first_ns = calls.first().map_or(host_start, |c| c.0);
            let each_ns = per_launch_ns(elapsed_ns, batch);
            for (i, &(api_start, api_end)) in calls.iter().enumerate() {
                self.host.push(HostSpan {
                    name: op.api.to_string(),
                    kind: EventKind::Driver,
                    start_ns: api_start,
                    dur_ns: api_end - api_start,
                    correlation: Some(id),
                    cbid: None,
                });
                self.own_ops.push(GpuOp {
                    name: op.name.clone(),
                    start_ns: first_ns + i as i64 * each_ns,
                    dur_ns: if batch > 1 { each_ns } else { elapsed_ns },
                    stream: self.stream_id,
                    kind: op.kind.clone(),
                    correlation: Some(id),
                });
            }
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
        let t = self.peak_median_ns("peak: cuMemcpyDtoD 512 MiB", &op, |g| {
            g.copy_d2d(d, s, bytes)
        })?;
        drop((src, dst));
        let d2d = per_second(2.0 * bytes as f64, t);

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
                let op = kernel_op("cublasSgemm", "cublasSgemm (4096)", [0; 3], [0; 3]);
                let (pa, pb, pc) = (a.ptr, b.ptr, c.ptr);
                let t = self.peak_median_ns("peak: cuBLAS SGEMM 4096", &op, |_| {
                    blas.sgemm(pa, pb, pc, n as i32)
                })?;
                per_second(2.0 * (n * n * n) as f64, t)
            }
            Err(_) => {
                // Still count the planned steps so the progress bar ends at 100%.
                for _ in 0..PEAK_RUNS {
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
        let (tf32_flops_per_s, fp16_flops_per_s) = self.measure_tensor_peaks(n)?;
        Ok(Peaks {
            d2d_bytes_per_s: d2d,
            sgemm_flops_per_s: sgemm,
            tf32_flops_per_s,
            fp16_flops_per_s,
        })
    }

    /// Runs a peak measurement [`PEAK_RUNS`] times and returns the median time of the runs after
    /// the first [`PEAK_WARMUPS`].
    fn peak_median_ns(
        &mut self,
        label: &str,
        op: &OpDesc,
        f: impl Fn(&Gpu) -> Result<(), LiveError>,
    ) -> Result<Option<i64>, LiveError> {
        let mut times = Vec::with_capacity(PEAK_RUNS);
        for i in 0..PEAK_RUNS {
            let t = self.timed(label, None, op, &f)?;
            if i >= PEAK_WARMUPS {
                times.push(t);
            }
        }
        Ok(median_ns(&times))
    }

    /// A point's result before anything is measured.
    fn point_result(&self, plan: &SweepPlan, point: Point) -> PointResult {
        let work = match plan.user.as_deref() {
            Some(u) => u.work(u.vars(point.size, point.block)).unwrap_or_default(),
            None => plan.kernel.config_work(point.config, point.size),
        };
        PointResult {
            config: match plan.user.as_deref() {
                Some(u) => u.kernel.clone(),
                None => point.config.name.to_string(),
            },
            target: point.config.target,
            memory: point.config.memory,
            size: point.size,
            work,
            planned: plan.repeat,
            event_ns: Vec::new(),
            cupti_ns: Vec::new(),
            check: None,
            block: point.block,
            resources: None,
            occupancy: None,
            math: point.config.math,
            cupti_off_ns: Vec::new(),
            error: None,
            batch: 1,
        }
    }

    fn run_point(
        &mut self,
        plan: &SweepPlan,
        module: Option<cudarc::driver::sys::CUmodule>,
        user: Option<&user::UserModule>,
        point: Point,
        index: usize,
        warmup: u32,
    ) -> Result<PointResult, LiveError> {
        let kernel = plan.kernel;
        let mut label = format!(
            "{} {} {}",
            plan.kernel_name(),
            point.config.name,
            format_size(point.size, kernel.size_unit)
        );
        if plan.user.is_some() {
            label = format!(
                "{} N={}",
                plan.kernel_name(),
                format_size(point.size, kernel.size_unit)
            );
        }
        if let Some(b) = point.block {
            label.push_str(&format!(" block {b}"));
        }
        self.progress.set_status(label.clone());
        let host_bytes = match plan.user.as_deref() {
            Some(u) => u.host_bytes(u.vars(point.size, point.block))?,
            None => kernel.host_bytes(point.size),
        };
        check_host_memory(&label, host_bytes)?;
        let start = self.now_ns();
        let mut result = self.point_result(plan, point);
        // Every point gets fresh inputs from the run's generator.
        self.seed = self.seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        self.rng = Rng::new(self.seed);
        let ctx = PointCtx {
            plan,
            module,
            user,
            point,
            index,
            warmup,
            label: label.clone(),
        };
        let check = self.measure(&ctx, &mut result)?;
        result.check = check;
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
        desc: &OpDesc,
        before: &mut dyn FnMut(&mut Self) -> Result<(), LiveError>,
        launch: &dyn Fn(&Gpu) -> Result<(), LiveError>,
    ) -> Result<(), LiveError> {
        let batch = ctx.plan.batch.max(1);
        result.batch = batch;
        self.schedule(ctx, result, batch, &mut |lab, label, timed| {
            before(lab)?;
            lab.timed_batch(label, timed.then_some(ctx.index), desc, batch, launch)
        })?;
        if self.cupti_cost && self.cupti {
            // The same launches again with CUPTI's collection paused.
            Collector::pause();
            self.cupti_paused = true;
            let mut off = Vec::new();
            let mut run = || -> Result<(), LiveError> {
                for r in 0..result.event_ns.len() {
                    before(self)?;
                    let label = format!("{} #{} (CUPTI paused)", ctx.label, r + 1);
                    let t = self.timed_batch(&label, None, desc, batch, launch)?;
                    off.push(per_launch_ns(t, batch));
                }
                Ok(())
            };
            let outcome = run();
            self.cupti_paused = false;
            Collector::resume();
            outcome?;
            result.cupti_off_ns = off;
        }
        if batch > 1 {
            // The check reads the result of one launch from fresh inputs, as without batching:
            // a batch of a kernel that updates a buffer in place leaves its accumulated result.
            before(self)?;
            let label = format!("{} check launch (one launch, untimed)", ctx.label);
            self.timed(&label, None, desc, launch)?;
        }
        Ok(())
    }

    /// The schedule every point follows: `warmup` untimed runs, then up to `repeat` timed ones,
    /// stopping once the timed ones add up to the plan's budget. `run` makes one run of `batch`
    /// launches, given its label and whether it is timed, and returns how long it took; the
    /// result keeps the time per launch, the budget counts the whole batch.
    fn schedule(
        &mut self,
        ctx: &PointCtx<'_>,
        result: &mut PointResult,
        batch: u32,
        run: &mut dyn FnMut(&mut Self, &str, bool) -> Result<i64, LiveError>,
    ) -> Result<(), LiveError> {
        for w in 0..ctx.warmup {
            run(self, &format!("{} warm-up {}", ctx.label, w + 1), false)?;
        }
        let mut total_ns = 0i64;
        for r in 0..ctx.plan.repeat {
            let t = run(self, &format!("{} #{}", ctx.label, r + 1), true)?;
            result.event_ns.push(per_launch_ns(t, batch));
            total_ns += t;
            if ctx.plan.budget_reached(total_ns) {
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
        let threads = launch.block.0 * launch.block.1 * launch.block.2;
        let resources = self.gpu.resources(launch.f);
        if let Some(max) = resources.max_threads_per_block
            && threads > max
        {
            return Err(LiveError::Plan(format!(
                "{} cannot run {threads} threads per block: with {} registers per thread it \
                 allows at most {max}",
                launch.name,
                resources.registers.unwrap_or(0)
            )));
        }
        let desc = kernel_desc(launch.name, launch.grid, launch.block, &resources);
        result.resources = Some(resources);
        result.occupancy = self.gpu.occupancy(launch.f, threads);
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
    /// The user's compiled kernel, for a user sweep.
    user: Option<&'p user::UserModule>,
    point: Point,
    index: usize,
    warmup: u32,
    label: String,
}

impl PointCtx<'_> {
    /// Threads per block: the sweep's, or `default` (the configuration's own).
    fn threads(&self, default: u32) -> u32 {
        self.point.block.unwrap_or(default)
    }
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
    fn a_timeout_fails_its_point_and_the_rest_are_not_run() {
        let timeout = LiveError::Timeout {
            what: "the kernel".into(),
            limit_ns: 10_000_000_000,
        };
        let (text, rest) = failure_text(&timeout);
        assert_eq!(
            text,
            "the kernel did not finish within 10 s; it was stopped"
        );
        assert_eq!(
            rest,
            Some("not run: an earlier kernel did not finish within the time limit and was stopped")
        );
        let fault = LiveError::Driver {
            call: "cuStreamQuery".into(),
            message: "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access)".into(),
        };
        let (text, rest) = failure_text(&fault);
        assert!(
            text.starts_with("the kernel faulted: CUDA cuStreamQuery failed"),
            "{text}"
        );
        assert!(
            rest.unwrap()
                .starts_with("not run: an earlier point faulted")
        );
        // Other failures end only their point.
        let (text, rest) = failure_text(&LiveError::Plan("too many threads".into()));
        assert_eq!((text.as_str(), rest), ("too many threads", None));
    }
}
