//! warpscope: a fast viewer for GPU profiles. See the library (`warpscope::cli`, `warpscope::app`).

use std::process::ExitCode;

use clap::Parser;

/// Wayland and Mesa's Vulkan drivers print `error: XDG_RUNTIME_DIR is invalid or not set` (four
/// times) on starts that succeed when the variable is missing (containers, `su`, ssh sessions).
/// Give them a private directory instead, before anything reads the environment.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn ensure_runtime_dir() {
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
        // SAFETY: called first thing in `main`, before any other thread exists, so nothing
        // reads or writes the environment concurrently.
        unsafe { std::env::set_var("XDG_RUNTIME_DIR", &dir) };
    }
}

fn main() -> ExitCode {
    #[cfg(target_os = "linux")]
    ensure_runtime_dir();
    // A bug must still end in one readable line, not a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = warpscope::panic_text(info.payload());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("warpscope: internal error: {msg}{at} (please report this)");
    }));
    let args = warpscope::cli::Cli::parse();
    match warpscope::cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("warpscope: error: {}", warpscope::error_text(&e));
            if warpscope_live::context_abandoned() {
                // A kernel that never ended: no exit handler may wait for it.
                warpscope_live::exit_now(1);
            }
            ExitCode::FAILURE
        }
    }
}
