//! warpscope: a fast viewer for GPU profiles. See the library (`warpscope::cli`, `warpscope::app`).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // SAFETY: first thing in `main`: no other thread exists yet, so nothing reads or writes the
    // environment concurrently.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    unsafe {
        warpscope::ensure_runtime_dir();
    }
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
