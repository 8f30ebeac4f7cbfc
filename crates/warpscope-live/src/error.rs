//! What can stop a live run.

use thiserror::Error;

/// Why a live run could not start or finish.
#[derive(Debug, Error)]
pub enum LiveError {
    /// libcuda could not be loaded: no NVIDIA driver on this machine.
    #[error(
        "no CUDA driver found: libcuda.so.1 could not be loaded (the live lab needs an NVIDIA GPU \
         and its driver; opening and comparing profiles works without one)"
    )]
    NoDriver,
    /// The driver is older than the CUDA 12.8 API the lab is built against.
    #[error(
        "the NVIDIA driver supports CUDA {found}; the live lab needs a driver for CUDA 12.8 or newer"
    )]
    OldDriver {
        /// The CUDA version the driver supports.
        found: String,
    },
    /// The driver loaded but reports no device.
    #[error("the CUDA driver found no GPU")]
    NoDevice,
    /// libnvrtc could not be loaded, so the bundled kernels cannot be compiled.
    #[error(
        "NVRTC (libnvrtc.so) not found: the bundled kernels are compiled at run time and need it; \
         install the CUDA toolkit or add its lib64 folder to LD_LIBRARY_PATH"
    )]
    NoNvrtc,
    /// A driver call failed.
    #[error("CUDA {call} failed: {message}")]
    Driver {
        /// What was being done (`cuMemAlloc of 400 MB`).
        call: String,
        /// The driver's error name and text.
        message: String,
    },
    /// NVRTC rejected a bundled kernel.
    #[error("compiling {file} for {arch} failed:\n{log}")]
    Compile {
        /// Source file name.
        file: String,
        /// Target architecture.
        arch: String,
        /// The compiler's log.
        log: String,
    },
    /// A point needs more memory than the device has free.
    #[error("{what} needs {need_mb:.0} MB but only {free_mb:.0} MB are free; pick smaller sizes")]
    OutOfMemory {
        /// Which point.
        what: String,
        /// Megabytes needed.
        need_mb: f64,
        /// Megabytes free.
        free_mb: f64,
    },
    /// The sweep asked for something that does not exist or cannot run.
    #[error("{0}")]
    Plan(String),
    /// The user cancelled the run.
    #[error("cancelled")]
    Cancelled,
}

/// Driver errors after which the context is unusable until it is destroyed: a kernel faulted.
const STICKY: [&str; 10] = [
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
    "CUDA_ERROR_INVALID_PC",
    "CUDA_ERROR_HARDWARE_STACK_ERROR",
    "CUDA_ERROR_INVALID_ADDRESS_SPACE",
    "CUDA_ERROR_ASSERT",
    "CUDA_ERROR_LAUNCH_TIMEOUT",
    "CUDA_ERROR_TENSOR_MEMORY_LEAK",
];

impl LiveError {
    /// True for a fault that leaves the CUDA context unusable (an out-of-bounds access, a trap,
    /// a failed `assert`): nothing more can run in it.
    pub fn is_sticky(&self) -> bool {
        matches!(self, Self::Driver { message, .. } if STICKY.iter().any(|s| message.starts_with(s)))
    }

    pub(crate) fn driver(call: impl Into<String>, err: cudarc::driver::DriverError) -> Self {
        let name = err
            .error_name()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_else(|_| format!("{:?}", err.0));
        let text = err
            .error_string()
            .map(|c| c.to_string_lossy().into_owned())
            .unwrap_or_default();
        Self::Driver {
            call: call.into(),
            message: if text.is_empty() {
                name
            } else {
                format!("{name} ({text})")
            },
        }
    }
}
