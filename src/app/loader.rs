//! Loading profiles off the UI thread: one thread per file, progress and cancel through
//! [`Progress`], results back through a channel, and a repaint request when one arrives.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Instant;

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
    /// The file could not be read; the message names the file and the problem.
    Failed(PathBuf, String),
    /// The user cancelled.
    Cancelled(PathBuf),
}

/// Runs and tracks loading threads.
pub struct Loader {
    jobs: Vec<Job>,
    tx: Sender<Loaded>,
    rx: Receiver<Loaded>,
}

impl Default for Loader {
    fn default() -> Self {
        let (tx, rx) = channel();
        Self {
            jobs: Vec::new(),
            tx,
            rx,
        }
    }
}

impl Loader {
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
        let spawned = std::thread::Builder::new()
            .name("warpscope-loader".to_string())
            .spawn(move || {
                let result = match warpscope_core::import_file(&thread_path, &job_progress) {
                    Ok(profile) => Loaded::Done(thread_path, Box::new(profile)),
                    Err(ImportError::Cancelled { .. }) => Loaded::Cancelled(thread_path),
                    Err(e) => Loaded::Failed(thread_path, e.to_string()),
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
                Loaded::Done(p, _) | Loaded::Failed(p, _) | Loaded::Cancelled(p) => p,
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
