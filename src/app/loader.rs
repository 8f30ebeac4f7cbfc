//! Loading profiles off the UI thread: one thread per file, progress and cancel through
//! [`Progress`], results back through a channel, and a repaint request when one arrives. A
//! directory is a distributed job: its ranks are read on all cores, analysed across ranks and
//! merged into one profile.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Instant;

use warpscope_core::analysis::compare::merge_ranks;
use warpscope_core::analysis::fleet::{FleetReport, JobError, JobOptions, job_files, load_job};
use warpscope_core::{ImportError, Profile, Progress};

/// A file being loaded.
pub struct Job {
    /// The file.
    pub path: PathBuf,
    /// Shared with the loading thread: how far it got, and the cancel switch.
    pub progress: Arc<Progress>,
    /// When loading started.
    pub started: Instant,
}

/// What a loading thread reports.
pub enum Loaded {
    /// The profile is ready.
    Done(PathBuf, Box<Profile>),
    /// A directory's ranks, merged into one profile, with their cross-rank analysis.
    Job(PathBuf, Box<Profile>, Box<FleetReport>),
    /// The file could not be read; the message names the file and the problem.
    Failed(PathBuf, String),
    /// The user cancelled.
    Cancelled(PathBuf),
}

/// What reads a file into a profile: `warpscope_core::import_file`, or a stand-in in tests.
pub type ImportFn = fn(&Path, &Progress) -> Result<Profile, ImportError>;

/// Runs and tracks loading threads.
pub struct Loader {
    jobs: Vec<Job>,
    tx: Sender<Loaded>,
    rx: Receiver<Loaded>,
    import: ImportFn,
}

impl Default for Loader {
    fn default() -> Self {
        Self::with_importer(warpscope_core::import_file)
    }
}

impl Loader {
    /// A loader that reads files with `import`.
    pub fn with_importer(import: ImportFn) -> Self {
        let (tx, rx) = channel();
        Self {
            jobs: Vec::new(),
            tx,
            rx,
            import,
        }
    }

    /// Starts loading `path` on a new thread; `ctx` is asked to repaint when it is done.
    pub fn open(&mut self, path: PathBuf, ctx: &egui::Context) {
        if self.jobs.iter().any(|j| j.path == path) {
            return;
        }
        let progress = Progress::new();
        let job_progress = Arc::clone(&progress);
        let tx = self.tx.clone();
        let ctx = ctx.clone();
        let thread_path = path.clone();
        let import = self.import;
        let spawned = std::thread::Builder::new()
            .name("warpscope-loader".to_string())
            .spawn(move || {
                // A bug in an importer must end this file's load with a message, not leave its
                // progress bar up forever; what is open stays open.
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    // A directory of rocprofv3 CSV traces is one run, any other one a job.
                    if thread_path.is_dir()
                        && !warpscope_core::import::rocprof::is_run_dir(&thread_path)
                    {
                        load_dir(&thread_path, &job_progress)
                    } else {
                        loaded(&thread_path, import(&thread_path, &job_progress))
                    }
                }));
                let result = match outcome {
                    Ok(result) => result,
                    Err(panic) => {
                        let message = format!(
                            "{}: warpscope failed while reading this file (internal error: {}); \
                             please report it with the file",
                            thread_path.display(),
                            crate::panic_text(panic.as_ref())
                        );
                        Loaded::Failed(thread_path, message)
                    }
                };
                // The receiver only goes away when the app closes.
                let _ = tx.send(result);
                ctx.request_repaint();
            });
        match spawned {
            Ok(_) => self.jobs.push(Job {
                path,
                progress,
                started: Instant::now(),
            }),
            Err(e) => {
                let _ = self.tx.send(Loaded::Failed(
                    path.clone(),
                    format!("{}: cannot start a loading thread: {e}", path.display()),
                ));
            }
        }
    }

    /// Results that arrived since the last call.
    pub fn poll(&mut self) -> Vec<Loaded> {
        let done: Vec<Loaded> = self.rx.try_iter().collect();
        for d in &done {
            let path = match d {
                Loaded::Done(p, _)
                | Loaded::Job(p, _, _)
                | Loaded::Failed(p, _)
                | Loaded::Cancelled(p) => p,
            };
            self.jobs.retain(|j| &j.path != path);
        }
        done
    }

    /// Files still loading.
    pub fn jobs(&self) -> &[Job] {
        &self.jobs
    }

    /// True while any file is loading.
    pub fn busy(&self) -> bool {
        !self.jobs.is_empty()
    }
}

/// What an import's result becomes.
fn loaded(path: &Path, result: Result<Profile, ImportError>) -> Loaded {
    match result {
        Ok(profile) => Loaded::Done(path.to_path_buf(), Box::new(profile)),
        Err(ImportError::Cancelled { .. }) => Loaded::Cancelled(path.to_path_buf()),
        Err(e) => Loaded::Failed(path.to_path_buf(), e.to_string()),
    }
}

/// Reads every rank of the job in `dir` (on all cores), analyses them across ranks and merges
/// them into one profile named after the directory.
fn load_dir(dir: &Path, progress: &Progress) -> Loaded {
    let failed = |message: String| Loaded::Failed(dir.to_path_buf(), message);
    let job = match job_files(&[dir.to_path_buf()]).and_then(|files| {
        load_job(
            &files,
            JobOptions {
                keep_profiles: true,
            },
            progress,
        )
    }) {
        Ok(job) => job,
        Err(JobError::Import(ImportError::Cancelled { .. })) => {
            return Loaded::Cancelled(dir.to_path_buf());
        }
        Err(e) => return failed(e.to_string()),
    };
    match merge_ranks(job.profiles) {
        Ok(mut merged) => {
            merged.source.path = dir.to_path_buf();
            Loaded::Job(dir.to_path_buf(), Box::new(merged), Box::new(job.report))
        }
        Err(e) => failed(format!("{}: cannot merge the ranks: {e}", dir.display())),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::time::Duration;

    use super::*;

    fn panicking_import(_: &Path, _: &Progress) -> Result<Profile, ImportError> {
        panic!("index out of bounds: the len is 3 but the index is 7")
    }

    fn failing_import(path: &Path, _: &Progress) -> Result<Profile, ImportError> {
        Err(ImportError::Empty {
            path: path.to_path_buf(),
        })
    }

    /// Waits (at most 10 s) for the one result of a load.
    fn result_of(loader: &mut Loader) -> Loaded {
        for _ in 0..1000 {
            if let Some(r) = loader.poll().pop() {
                return r;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the load never reported back");
    }

    #[test]
    fn a_panicking_importer_ends_the_load_with_an_error_naming_the_file() {
        let mut loader = Loader::with_importer(panicking_import);
        loader.open(PathBuf::from("bad.json"), &egui::Context::default());
        assert!(loader.busy());
        let Loaded::Failed(path, message) = result_of(&mut loader) else {
            panic!("expected a failure");
        };
        assert_eq!(path, Path::new("bad.json"));
        assert!(
            message.starts_with("bad.json: warpscope failed while reading this file"),
            "{message}"
        );
        assert!(message.contains("index out of bounds"), "{message}");
        assert!(!loader.busy(), "the job must not stay in the loading list");
    }

    #[test]
    fn an_import_error_is_reported_as_is() {
        let mut loader = Loader::with_importer(failing_import);
        loader.open(PathBuf::from("empty.json"), &egui::Context::default());
        let Loaded::Failed(_, message) = result_of(&mut loader) else {
            panic!("expected a failure");
        };
        assert_eq!(message, "empty.json: file is empty");
    }
}
