//! The host's memory: how much is available, checked before a sweep allocates its host buffers
//! (a failed allocation would abort the process). Used by the plan (a user kernel's form, at
//! every keystroke) and by the runner (before each point).

use crate::error::LiveError;

/// Fails with [`LiveError::OutOfMemory`] when the host has less memory available than `need`
/// bytes (a failed allocation would abort the process). Skipped where `/proc/meminfo` is absent.
pub(crate) fn check_host_memory(what: &str, need: u64) -> Result<(), LiveError> {
    check_memory_against(what, need, host_available_kb())
}

/// The host's available memory in kB (`MemAvailable` in `/proc/meminfo`), where it says.
pub(crate) fn host_available_kb() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
}

/// [`check_host_memory`] against an `available_kb` already read (`None`: nothing to check).
pub(crate) fn check_memory_against(
    what: &str,
    need: u64,
    available_kb: Option<u64>,
) -> Result<(), LiveError> {
    match available_kb {
        Some(kb) if need > kb.saturating_mul(1024) => Err(LiveError::OutOfMemory {
            what: format!("{what} (host memory)"),
            need_mb: need as f64 / 1e6,
            free_mb: kb as f64 * 1024.0 / 1e6,
        }),
        _ => Ok(()),
    }
}
