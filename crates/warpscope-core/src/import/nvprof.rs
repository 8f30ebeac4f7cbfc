//! nvprof CSV and text output (placeholder until the importer lands in this session).

use std::path::Path;

use super::{ImportError, ImportTimings, Progress};
use crate::model::Profile;

/// Imports nvprof `--csv` output or a plain-text nvprof log.
pub fn import(path: &Path, _progress: &Progress) -> Result<(Profile, ImportTimings), ImportError> {
    Err(ImportError::Unsupported {
        path: path.to_path_buf(),
        detail: "nvprof text/CSV import is not finished".to_string(),
    })
}
