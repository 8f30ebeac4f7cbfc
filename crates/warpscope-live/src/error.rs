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
    /// GPU work ran past the run's time limit (`--timeout`). It cannot be cancelled inside the
    /// process: the context is abandoned and only ending the process frees the GPU.
    #[error("{what} did not finish within {}; it was stopped", format_limit_ns(*limit_ns))]
    Timeout {
        /// What was waited for (`the kernel`, `the batch of 20 launches`).
        what: String,
        /// The time limit it had, in nanoseconds.
        limit_ns: u64,
    },
    /// An earlier run of this process hit its time limit: its kernel may still be running, and
    /// no CUDA call of this process can be trusted to return.
    #[error(
        "an earlier kernel of this process did not finish within its time limit; the GPU is \
         unusable until the process ends"
    )]
    Abandoned,
}

/// A time limit for messages: `10 s`, `2.5 s`, `500 ms`.
pub fn format_limit_ns(limit_ns: u64) -> String {
    if limit_ns >= 1_000_000_000 {
        let s = limit_ns as f64 / 1e9;
        if limit_ns.is_multiple_of(1_000_000_000) {
            format!("{s:.0} s")
        } else {
            format!("{} s", trim_zeros(&format!("{s:.3}")))
        }
    } else {
        format!(
            "{} ms",
            trim_zeros(&format!("{:.3}", limit_ns as f64 / 1e6))
        )
    }
}

/// `2.500` → `2.5`, `3.000` → `3`.
fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
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

    /// True when nothing more can run in this process's CUDA context: a fault
    /// ([`LiveError::is_sticky`]) or a kernel that did not finish within the time limit.
    pub fn ends_the_context(&self) -> bool {
        self.is_sticky() || matches!(self, Self::Timeout { .. } | Self::Abandoned)
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
