//! warpscope-ui: the egui widgets of warpscope over a [`warpscope_core::Profile`]: the timeline,
//! the ranked tables, the Insights, Memory and Roofline panels, the range statistics and the import warnings. No eframe and no file I/O here, so the widgets can
//! be driven by the app, by egui_kittest tests and by benchmarks alike.

pub mod activity_index;
pub mod colors;
pub mod compare;
pub mod fleet;
pub mod flops;
pub mod insights;
pub mod log_plot;
pub mod memory;
pub mod memory_blocks;
pub mod peak_override;
pub mod range_stats;
pub mod roofline;
pub mod tables;
pub mod timeline;
pub mod warnings;

use warpscope_core::model::EventRef;
use warpscope_core::strings::StrId;
use warpscope_core::{Profile, TimeRange};

/// A duration as the widgets show it: five significant digits with the unit chosen per value
/// (`812ns`, `1.1840µs`, `305.08ms`), as the reports print it.
pub use warpscope_core::time::format_duration_ns as format_duration;

/// Tells the open profiles apart for the widgets' caches: the profile's address, with its
/// event, string and track counts, so that another profile later at the same address is not
/// taken for the old one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ProfileKey(usize, usize, usize, usize);

impl ProfileKey {
    /// The key of `profile`.
    pub fn of(profile: &Profile) -> Self {
        Self(
            std::ptr::from_ref(profile) as usize,
            profile.event_count(),
            profile.strings.len(),
            profile.tracks.len(),
        )
    }
}

/// What the user has picked, shared by the timeline and the tables of one profile tab.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selection {
    /// The event clicked on the timeline.
    pub event: Option<EventRef>,
    /// A kernel (or other event) name whose occurrences are highlighted, set by clicking a table
    /// row or selecting an event.
    pub name: Option<StrId>,
    /// The time range dragged on the time axis; the tables show statistics for it.
    pub range: Option<TimeRange>,
}

impl Selection {
    /// Selects `event` and highlights the occurrences of its name (what a click on it does).
    pub fn select_event(&mut self, profile: &Profile, event: EventRef) {
        self.event = Some(event);
        self.name = profile
            .tracks
            .get(event.track as usize)
            .and_then(|t| t.events.name.get(event.index as usize))
            .copied();
    }
}

/// Wayland and Mesa's Vulkan drivers print `error: XDG_RUNTIME_DIR is invalid or not set` (four
/// times) on starts that succeed when the variable is missing (containers, `su`, ssh sessions).
/// Gives them a private directory instead (`$TMPDIR/warpscope-runtime-$USER`, mode 0700), unless
/// `XDG_RUNTIME_DIR` already names a directory. `main` calls it first thing; the GUI tests (the app's
/// and this crate's) call it before their first window.
///
/// # Safety
///
/// It may set an environment variable: no other thread may read or write the environment
/// while it runs (call it before starting threads, or while every thread that would is
/// waiting for it).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub unsafe fn ensure_runtime_dir() {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let usable = |d: &std::path::Path| d.is_dir();
    if std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| usable(std::path::Path::new(&d))) {
        return;
    }
    let user = std::env::var("USER").unwrap_or_else(|_| "user".to_string());
    let dir = std::env::temp_dir().join(format!("warpscope-runtime-{user}"));
    let _ = std::fs::DirBuilder::new().mode(0o700).create(&dir);
    // Only a directory of ours that nobody else can enter will do.
    let ours = std::fs::metadata(&dir).is_ok_and(|m| m.is_dir() && m.mode() & 0o077 == 0);
    if ours {
        // SAFETY: the caller guarantees that nothing else reads or writes the environment now.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    }
}
