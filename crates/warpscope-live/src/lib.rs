//! The live lab: bundled CUDA kernels, compiled at run time with NVRTC for the device, launched
//! over a sweep of sizes and launch configurations, timed with CUDA events (and CUPTI activity
//! records where libcupti is present), checked against CPU references, and turned into a
//! [`warpscope_core::Profile`] so the timeline, tables and comparisons show them like any file.
//!
//! CUDA is loaded at run time: the same binary runs on a machine without a GPU, where
//! [`probe`] answers with [`LiveError::NoDriver`] and nothing panics.

#[allow(unsafe_code)] // FFI to cuBLAS: every block says why it is sound.
mod blas;
mod catalog;
#[allow(unsafe_code)] // FFI to CUPTI: every block says why it is sound.
mod cupti;
mod error;
#[allow(unsafe_code)] // FFI to the CUDA driver: every block says why it is sound.
mod gpu;
mod host;
#[allow(unsafe_code)] // FFI to NVRTC: every block says why it is sound.
mod nvrtc;
mod plan;
mod profile;
mod reference;
mod results;
mod roofline;
mod runner;
pub mod user;
#[allow(unsafe_code)] // `_exit`, to end a process whose kernel never ends: the block says why.
mod watchdog;

pub use catalog::{
    CATALOG, ConfigSpec, KernelId, KernelSpec, Math, Memory, Metric, SizeUnit, Target, USER_KERNEL,
    Work, kernel,
};
pub use error::{LiveError, format_limit_ns};
pub use gpu::{DeviceFacts, Occupancy, Resources, probe};
pub use plan::{MAX_BATCH, Point, SweepPlan, format_size, parse_sizes, per_launch_ns};
pub use profile::{EventSpan, GpuOp, GpuOpKind, HostSpan, Recording, build_profile};
pub use reference::{Check, relative_error};
pub use results::{LiveRun, Peaks, PointResult, RESULTS_DETAIL_KEY, median_ns};
pub use roofline::{Bound, RooflinePoint, roof};
pub use runner::{LiveOutput, LiveProgress, RunOptions, run_sweep};
pub use user::{UserInfo, UserKernel, UserRequest, parse_blocks};
pub use watchdog::{
    MIN_DEFAULT_TIMEOUT_S, TIMEOUT_BUDGETS, context_abandoned, default_timeout_s, exit_now,
    timeout_ns,
};
