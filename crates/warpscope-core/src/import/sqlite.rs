//! nvprof and Nsight Systems SQLite databases (placeholder until the importer lands in this session).

use std::path::Path;

use super::{ImportError, ImportTimings, Progress};
use crate::model::Profile;

/// Imports an nvprof `.nvvp` or Nsight Systems SQLite export.
pub fn import(path: &Path, _progress: &Progress) -> Result<(Profile, ImportTimings), ImportError> {
    Err(ImportError::Unsupported {
        path: path.to_path_buf(),
        detail: "SQLite import is not finished".to_string(),
    })
}
