//! The live lab: bundled CUDA kernels, compiled at run time with NVRTC for the device, launched
//! over a sweep of sizes and launch configurations, timed with CUDA events (and CUPTI activity
//! records where libcupti is present), checked against CPU references, and turned into a
//! [`warpscope_core::Profile`] so the timeline, tables and comparisons show them like any file.
//!
//! CUDA is loaded at run time: the same binary runs on a machine without a GPU, where
//! [`probe`] answers with [`LiveError::NoDriver`] and nothing panics.

mod catalog;
#[allow(unsafe_code)] // FFI to CUPTI: every block says why it is sound.
mod cupti;
mod error;
#[allow(unsafe_code)] // FFI to the CUDA driver: every block says why it is sound.
mod gpu;
mod plan;
mod profile;
mod reference;
mod results;
mod runner;

pub use catalog::{
    CATALOG, ConfigSpec, KernelId, KernelSpec, Memory, Metric, SizeUnit, Target, Work, kernel,
};
pub use error::LiveError;
pub use gpu::{DeviceFacts, probe};
pub use plan::{Point, SweepPlan, format_size, parse_sizes};
pub use profile::{EventSpan, GpuOp, GpuOpKind, HostSpan, Recording, build_profile};
pub use reference::{Check, relative_error};
pub use results::{LiveRun, Peaks, PointResult, RESULTS_DETAIL_KEY, median_ns};
pub use runner::{LiveOutput, LiveProgress, RunOptions, run_sweep};
