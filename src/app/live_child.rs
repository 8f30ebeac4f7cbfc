//! The GUI runs every live sweep in a child process (`warpscope live ... --out FILE`, this same
//! executable): a kernel that faults leaves a sticky error that no later CUDA call in that
//! process survives (not even a reset primary context), so the fault must end a process that is
//! not the app. The child's progress lines on stderr drive the progress bar; its saved run is
//! read back like any live run; Cancel kills it. (`WARPSCOPE_LIVE_EXE` names the executable to
//! run instead, for tests that drive the app from a test binary.)

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use warpscope_live::{LiveOutput, LiveProgress, LiveRun};

/// A progress line of `warpscope live`: `[12/60] saxpy N=10M` → (12, 60, "saxpy N=10M").
pub(crate) fn progress_line(line: &str) -> Option<(u64, u64, String)> {
    let rest = line.strip_prefix('[')?;
    let (counts, status) = rest.split_once("] ")?;
    let (done, total) = counts.split_once('/')?;
    Some((done.parse().ok()?, total.parse().ok()?, status.to_string()))
}

/// The error a child printed: everything from `warpscope: error: ` on (a compile log spans
/// several lines).
pub(crate) fn error_text(lines: &[String]) -> Option<String> {
    let start = lines
        .iter()
        .position(|l| l.starts_with("warpscope: error: "))?;
    let mut text = lines[start]
        .trim_start_matches("warpscope: error: ")
        .to_string();
    for l in &lines[start + 1..] {
        text.push('\n');
        text.push_str(l);
    }
    Some(text.trim_end().to_string())
}

fn out_path() -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "warpscope-live-{}-{}.json",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Starts `warpscope live ARGS` in a child process; the receiver gets the run (also when some
/// points failed or a check did not pass) or the child's error.
pub(crate) fn spawn(
    args: Vec<String>,
    title: String,
    progress: Arc<LiveProgress>,
    ctx: egui::Context,
) -> Receiver<Result<LiveOutput, String>> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let result = run_child(&args, &title, &progress);
        let _ = tx.send(result);
        ctx.request_repaint();
    });
    rx
}

fn run_child(
    args: &[String],
    title: &str,
    progress: &Arc<LiveProgress>,
) -> Result<LiveOutput, String> {
    // This executable; `WARPSCOPE_LIVE_EXE` names another (tests run from a test binary).
    let exe = match std::env::var_os("WARPSCOPE_LIVE_EXE") {
        Some(exe) => PathBuf::from(exe),
        None => {
            std::env::current_exe().map_err(|e| format!("cannot find warpscope itself: {e}"))?
        }
    };
    let out = out_path();
    let mut child = Command::new(&exe)
        .args(args)
        .arg("--out")
        .arg(&out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let stderr = child.stderr.take();
    // Progress lines move the bar as they come; the rest is kept for the error message.
    let reader = std::thread::spawn({
        let progress = Arc::clone(progress);
        move || -> Vec<String> {
            let mut lines = Vec::new();
            if let Some(stderr) = stderr {
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    match progress_line(&line) {
                        Some((done, total, status)) => progress.report(done, total, status),
                        None => lines.push(line),
                    }
                }
            }
            lines
        }
    });
    let status = loop {
        if progress.is_cancelled() {
            let _ = child.kill();
            let _ = child.wait();
            let _ = std::fs::remove_file(&out);
            return Err("cancelled".into());
        }
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for the live run failed: {e}")),
        }
    };
    let text = reader.join().unwrap_or_default();
    if !out.exists() {
        return Err(error_text(&text)
            .unwrap_or_else(|| format!("the live run ended ({status}) without a result")));
    }
    let imported = warpscope_core::import_file(&out, &warpscope_core::Progress::new());
    let _ = std::fs::remove_file(&out);
    let mut profile = imported.map_err(|e| format!("cannot read the live run back: {e}"))?;
    profile.source.path = PathBuf::from(title);
    let run = LiveRun::from_profile(&profile).ok_or("the live run saved no results")?;
    Ok(LiveOutput { run, profile })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_and_error_lines_are_read() {
        assert_eq!(
            progress_line("[12/60] saxpy N=10M"),
            Some((12, 60, "saxpy N=10M".to_string()))
        );
        assert_eq!(progress_line("warpscope: error: no"), None);
        let lines: Vec<String> = [
            "Your kernel k",
            "warpscope: error: compiling bad.cu for compute_90 failed:",
            "bad.cu(2): error: identifier \"x\" is undefined",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            error_text(&lines).unwrap(),
            "compiling bad.cu for compute_90 failed:\nbad.cu(2): error: identifier \"x\" is undefined"
        );
        assert_eq!(error_text(&lines[..1]), None);
    }
}
