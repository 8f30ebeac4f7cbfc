//! Writers: a [`Profile`](crate::Profile) written in a format other tools read. One module per
//! format; today Chrome Trace Event Format JSON ([`chrome`]), which warpscope itself, Perfetto,
//! chrome://tracing and the PyTorch profiler's tools open.

pub mod chrome;
mod op_args;

use std::io;
use std::path::PathBuf;

pub use chrome::{save_chrome_trace, write_chrome_trace};

/// Why a profile could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// Writing to the caller's writer failed.
    #[error("cannot write the trace: {source}")]
    Write {
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// The file could not be created or written.
    #[error("{path}: cannot write file: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl From<io::Error> for WriteError {
    fn from(source: io::Error) -> Self {
        Self::Write { source }
    }
}
