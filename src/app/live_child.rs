//! The GUI runs every live sweep in a child process (`warpscope live ... --out FILE`, this same
//! executable): a kernel that faults leaves a sticky error that no later CUDA call in that
//! process survives (not even a reset primary context), so the fault must end a process that is
//! not the app. The child's progress lines on stderr drive the progress bar; its saved run is
//! read back like any live run; Cancel, or dropping the [`ChildRun`] (closing the app), kills it
//! and removes its files. (`WARPSCOPE_LIVE_EXE` names the executable to run instead, for tests
//! that drive the app from a test binary.)

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use warpscope_live::{LiveOutput, LiveProgress, LiveRun};

/// Lines of the child's stderr kept before its error line (the rest only move the bar).
const KEPT_BEFORE_ERROR: usize = 100;
/// Lines kept from the error line on (a compile log can be long).
const KEPT_FROM_ERROR: usize = 2000;
/// Bytes kept of one line.
const KEPT_LINE_BYTES: usize = 4096;

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

/// A fresh name in the temporary folder (`warpscope-live-PID-K` plus `suffix`).
pub(crate) fn scratch_path(suffix: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    std::env::temp_dir().join(format!(
        "warpscope-live-{}-{}{suffix}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The executable that runs sweeps: `WARPSCOPE_LIVE_EXE`, or this one.
pub(crate) fn live_exe() -> Result<PathBuf, String> {
    match std::env::var_os("WARPSCOPE_LIVE_EXE") {
        Some(exe) => Ok(PathBuf::from(exe)),
        None => std::env::current_exe().map_err(|e| format!("cannot find warpscope itself: {e}")),
    }
}

/// What a run leaves on disk besides the child: its output file and, for a user kernel, the
/// folder with the copy of the checked source.
#[derive(Debug)]
struct Files {
    out: PathBuf,
    scratch: Option<PathBuf>,
}

impl Files {
    fn remove(&self) {
        let _ = std::fs::remove_file(&self.out);
        if let Some(dir) = &self.scratch {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// A sweep running in a child process. Dropping it kills the child, waits for it and removes
/// its files.
pub(crate) struct ChildRun {
    /// The run (also when some points failed or a check did not pass) or the child's error.
    pub rx: Receiver<Result<LiveOutput, String>>,
    child: Arc<Mutex<Child>>,
    files: Arc<Files>,
}

impl ChildRun {
    /// The child's process id.
    #[cfg(test)]
    fn id(&self) -> u32 {
        self.child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .id()
    }
}

impl Drop for ChildRun {
    fn drop(&mut self) {
        let mut child = self.child.lock().unwrap_or_else(PoisonError::into_inner);
        // Both are harmless on a child that already ended and was waited for.
        let _ = child.kill();
        let _ = child.wait();
        drop(child);
        self.files.remove();
    }
}

/// Starts `EXE ARGS --out FILE` in a child process. `scratch` is a folder the run owns (removed
/// with it); `user_file`, when set, is the file the saved run names as its kernel's source
/// (the child compiled a copy of it).
pub(crate) fn spawn(
    exe: &Path,
    args: &[OsString],
    scratch: Option<PathBuf>,
    user_file: Option<String>,
    title: String,
    progress: Arc<LiveProgress>,
    ctx: egui::Context,
) -> Result<ChildRun, String> {
    let files = Arc::new(Files {
        out: scratch_path(".json"),
        scratch,
    });
    // Never read back a file some earlier run left under the same name.
    let _ = std::fs::remove_file(&files.out);
    let mut child = match Command::new(exe)
        .args(args)
        .arg("--out")
        .arg(&files.out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) => {
            files.remove();
            return Err(format!("cannot start {}: {e}", exe.display()));
        }
    };
    let reader = child.stderr.take().map(|stderr| {
        let progress = Arc::clone(&progress);
        std::thread::spawn(move || read_stderr(stderr, &progress))
    });
    let child = Arc::new(Mutex::new(child));
    let (tx, rx) = channel();
    std::thread::spawn({
        let (child, files) = (Arc::clone(&child), Arc::clone(&files));
        move || {
            let result = wait_child(&child, reader, &files, user_file, &title, &progress);
            let _ = tx.send(result);
            ctx.request_repaint();
        }
    });
    Ok(ChildRun { rx, child, files })
}

/// Reads the child's stderr to its end (so the pipe never fills): progress lines move the bar,
/// the others are kept for the error message (lossily decoded; a bounded number).
fn read_stderr(stderr: impl Read, progress: &LiveProgress) -> Vec<String> {
    let mut before: VecDeque<String> = VecDeque::new();
    let mut from_error: Vec<String> = Vec::new();
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        buf.truncate(KEPT_LINE_BYTES);
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        if let Some((done, total, status)) = progress_line(line) {
            progress.report(done, total, status);
        } else if !from_error.is_empty() || line.starts_with("warpscope: error: ") {
            if from_error.len() < KEPT_FROM_ERROR {
                from_error.push(line.to_string());
            }
        } else {
            if before.len() == KEPT_BEFORE_ERROR {
                before.pop_front();
            }
            before.push_back(line.to_string());
        }
    }
    before.into_iter().chain(from_error).collect()
}

fn wait_child(
    child: &Mutex<Child>,
    reader: Option<JoinHandle<Vec<String>>>,
    files: &Files,
    user_file: Option<String>,
    title: &str,
    progress: &LiveProgress,
) -> Result<LiveOutput, String> {
    let lock = || child.lock().unwrap_or_else(PoisonError::into_inner);
    let status: ExitStatus = loop {
        if progress.is_cancelled() {
            let mut c = lock();
            let _ = c.kill();
            let _ = c.wait();
            return Err("cancelled".into());
        }
        match lock().try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("waiting for the live run failed: {e}")),
        }
    };
    let text = reader
        .map(|r| r.join().unwrap_or_default())
        .unwrap_or_default();
    if !files.out.exists() {
        return Err(error_text(&text)
            .unwrap_or_else(|| format!("the live run ended ({status}) without a result")));
    }
    let imported = warpscope_core::import_file(&files.out, &warpscope_core::Progress::new());
    files.remove();
    let mut profile = imported.map_err(|e| format!("cannot read the live run back: {e}"))?;
    profile.source.path = PathBuf::from(title);
    let mut run = LiveRun::from_profile(&profile).ok_or("the live run saved no results")?;
    if let (Some(u), Some(file)) = (run.user.as_mut(), user_file) {
        // The child compiled a copy of the checked source: name the user's own file.
        u.file = file;
        let json = run.to_json();
        for (k, v) in &mut profile.source.details {
            if k == warpscope_live::RESULTS_DETAIL_KEY {
                v.clone_from(&json);
            }
        }
    }
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

    /// `EXE ARGS` as the child, owning `scratch`.
    fn start(
        exe: &str,
        args: &[OsString],
        scratch: Option<PathBuf>,
        progress: &Arc<LiveProgress>,
    ) -> Result<ChildRun, String> {
        spawn(
            Path::new(exe),
            args,
            scratch,
            None,
            "live test".into(),
            Arc::clone(progress),
            egui::Context::default(),
        )
    }

    /// `sh -c SCRIPT` as the child (`--out FILE` lands in `$0 $1`).
    fn shell(script: &str, progress: &Arc<LiveProgress>) -> Result<ChildRun, String> {
        start("/bin/sh", &["-c".into(), script.into()], None, progress)
    }

    fn result(run: &ChildRun) -> Result<(), String> {
        run.rx.recv().map_err(|e| e.to_string())?.map(|_| ())
    }

    /// Waits (up to a minute, polling) until the child reported `done` points.
    fn wait_for_progress(progress: &LiveProgress, done: u64) {
        for _ in 0..6000 {
            if progress.counts().0 == done {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("no progress line came: {:?}", progress.counts());
    }

    fn process_exists(pid: u32) -> bool {
        Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn a_child_that_cannot_start_or_ends_without_a_result_says_so() {
        let progress = Arc::new(LiveProgress::default());
        let err = start("/no/such/warpscope", &[], None, &progress)
            .err()
            .unwrap();
        assert_eq!(
            err,
            "cannot start /no/such/warpscope: No such file or directory (os error 2)"
        );
        let run = start("/bin/false", &[], None, &progress).unwrap();
        assert_eq!(
            result(&run).unwrap_err(),
            "the live run ended (exit status: 1) without a result"
        );
    }

    #[test]
    fn progress_and_the_error_come_through_a_line_that_is_not_utf8() {
        let progress = Arc::new(LiveProgress::default());
        let run = shell(
            r"printf 'noise \377\376\n' >&2; echo '[1/2] saxpy N=1M' >&2;
              echo 'warpscope: error: the kernel faulted' >&2; echo 'at N = 1M' >&2; exit 1",
            &progress,
        )
        .unwrap();
        assert_eq!(result(&run).unwrap_err(), "the kernel faulted\nat N = 1M");
        assert_eq!(progress.counts(), (1, 2));
        assert_eq!(progress.status(), "saxpy N=1M");
    }

    #[test]
    fn cancel_kills_the_child() {
        let progress = Arc::new(LiveProgress::default());
        let run = shell("echo '[1/2] x' >&2; exec sleep 600", &progress).unwrap();
        wait_for_progress(&progress, 1);
        let pid = run.id();
        assert!(process_exists(pid));
        progress.cancel();
        assert_eq!(result(&run).unwrap_err(), "cancelled");
        assert!(!process_exists(pid), "the child {pid} still runs");
    }

    #[test]
    fn dropping_a_run_kills_the_child_and_removes_its_files() {
        let progress = Arc::new(LiveProgress::default());
        let scratch = scratch_path("-test");
        std::fs::create_dir_all(&scratch).unwrap();
        // The child writes its output file, then waits: the run is dropped (the app closes).
        let script = "echo '{}' > \"$1\"; echo '[1/3] x' >&2; exec sleep 600";
        let run = start(
            "/bin/sh",
            &["-c".into(), script.into()],
            Some(scratch.clone()),
            &progress,
        )
        .unwrap();
        wait_for_progress(&progress, 1);
        let (pid, out) = (run.id(), run.files.out.clone());
        assert!(out.exists());
        drop(run);
        assert!(!process_exists(pid), "the child {pid} still runs");
        assert!(!out.exists() && !scratch.exists());
    }
}
