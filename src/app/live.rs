//! The Live lab window: pick a bundled kernel, sizes, configurations and block sizes, or drop a
//! `.cu` file to time your own kernel; run it on the GPU off the UI thread, watch progress,
//! stop it (mid-launch too: the run's process is ended).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};

use egui::RichText;
use warpscope_live::{
    CATALOG, DeviceFacts, LiveOutput, LiveProgress, SweepPlan, format_size, parse_blocks,
    parse_sizes,
};

use super::live_child::{ChildRun, live_exe, scratch_path};
use super::live_source::{ERROR, SourceForm};

/// `warpscope live`'s default `--budget`, which the window's runs use.
const DEFAULT_BUDGET_S: f64 = 5.0;

struct Running {
    progress: Arc<LiveProgress>,
    /// The child process; dropping it (the app closing) kills it.
    child: ChildRun,
    kernel: String,
}

/// The Live lab window's state.
pub struct LiveLab {
    /// Whether the window is shown.
    pub open: bool,
    /// What probing the GPU said (probed when the window first opens).
    availability: Option<Result<DeviceFacts, String>>,
    /// The probe in flight: loading the driver and `cuInit` can take seconds, so it runs on its
    /// own thread.
    probing: Option<Receiver<Result<DeviceFacts, String>>>,
    kernel: usize,
    sizes: String,
    chosen: Vec<bool>,
    repeat: u32,
    warmup: u32,
    /// Launches per pair of CUDA events (`--batch`).
    batch: u32,
    /// The longest one launch may run, in seconds (`--timeout`).
    pub timeout_s: f64,
    use_cupti: bool,
    /// Time every point again with CUPTI paused.
    cupti_cost: bool,
    /// Block sizes of a launch-configuration sweep of a bundled kernel ("" for none).
    blocks: String,
    /// The user's own kernel, once a `.cu` file was dropped or opened.
    pub source: Option<SourceForm>,
    /// NVRTC's log of the user's kernel (its errors when compiling failed).
    compile_log: Option<String>,
    running: Option<Running>,
    /// The last run's error, or why the inputs cannot run.
    pub error: Option<String>,
}

impl Default for LiveLab {
    fn default() -> Self {
        let mut lab = Self {
            open: false,
            availability: None,
            probing: None,
            kernel: 0,
            sizes: String::new(),
            chosen: Vec::new(),
            repeat: 5,
            warmup: 1,
            batch: 1,
            // The command line's default for its default budget (the window has no budget).
            timeout_s: warpscope_live::default_timeout_s(DEFAULT_BUDGET_S),
            use_cupti: true,
            cupti_cost: false,
            blocks: String::new(),
            source: None,
            compile_log: None,
            running: None,
            error: None,
        };
        lab.select_kernel(0);
        lab
    }
}

impl LiveLab {
    fn select_kernel(&mut self, index: usize) {
        let Some(k) = CATALOG.get(index) else {
            return;
        };
        self.kernel = index;
        self.sizes = k
            .default_sizes
            .iter()
            .map(|&s| format_size(s, k.size_unit).replace(' ', ""))
            .collect::<Vec<_>>()
            .join(",");
        self.chosen = vec![true; k.configs.len()];
    }

    /// Opens the window on the user's own kernel in `path` (a dropped or opened `.cu` file).
    pub fn open_source(&mut self, path: &Path) {
        self.open = true;
        self.compile_log = None;
        match SourceForm::from_file(path) {
            Ok(form) => {
                self.source = Some(form);
                self.error = None;
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The "Live lab…" button; opens the window. Returns whether it was clicked.
    pub fn open_button_ui(&mut self, ui: &mut egui::Ui) -> bool {
        let clicked = ui
            .button("Live lab…")
            .on_hover_text("Launch bundled CUDA kernels on this machine's GPU and time them")
            .clicked();
        if clicked {
            self.open = true;
        }
        clicked
    }

    /// True while a run is in flight.
    pub fn busy(&self) -> bool {
        self.running.is_some()
    }

    /// The GPU, or why there is none; `None` until the probe (started on first call, off the
    /// UI thread) has answered.
    pub fn availability(&mut self, ctx: &egui::Context) -> Option<&Result<DeviceFacts, String>> {
        if self.availability.is_none() {
            match &self.probing {
                None => {
                    let (tx, rx) = channel();
                    let ctx = ctx.clone();
                    std::thread::spawn(move || {
                        let _ = tx.send(warpscope_live::probe().map_err(|e| e.to_string()));
                        ctx.request_repaint();
                    });
                    self.probing = Some(rx);
                }
                Some(rx) => match rx.try_recv() {
                    Ok(answer) => {
                        self.availability = Some(answer);
                        self.probing = None;
                    }
                    Err(std::sync::mpsc::TryRecvError::Empty) => {}
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                        self.availability = Some(Err("looking for a GPU failed".to_string()));
                        self.probing = None;
                    }
                },
            }
        }
        self.availability.as_ref()
    }

    fn plan(&self) -> Result<SweepPlan, String> {
        if let Some(form) = &self.source {
            return form
                .plan(self.repeat, self.warmup)?
                .with_batch(self.batch)
                .map_err(|e| e.to_string());
        }
        let k = CATALOG.get(self.kernel).ok_or("no kernel chosen")?;
        let sizes = parse_sizes(&self.sizes).map_err(|e| e.to_string())?;
        let configs: Vec<String> = k
            .configs
            .iter()
            .zip(&self.chosen)
            .filter(|(_, on)| **on)
            .map(|(c, _)| c.name.to_string())
            .collect();
        if configs.is_empty() {
            return Err("choose at least one configuration".into());
        }
        let plan = SweepPlan::new(k, Some(&sizes), Some(&configs), self.repeat, self.warmup)
            .and_then(|p| p.with_batch(self.batch))
            .map_err(|e| e.to_string())?;
        if self.blocks.trim().is_empty() {
            return Ok(plan);
        }
        let blocks = parse_blocks(&self.blocks)?;
        plan.with_blocks(&blocks).map_err(|e| e.to_string())
    }

    fn start(&mut self, ctx: &egui::Context) {
        let plan = match self.plan() {
            Ok(p) => p,
            Err(e) => {
                self.error = Some(e);
                return;
            }
        };
        self.error = None;
        self.compile_log = None;
        let kernel = plan.kernel_name().to_string();
        let progress = Arc::new(LiveProgress::default());
        let child = live_exe().and_then(|exe| {
            let (args, scratch, user_file) = self.cli_args()?;
            super::live_child::spawn(
                &exe,
                &args,
                scratch,
                user_file,
                format!("live {kernel}"),
                Arc::clone(&progress),
                ctx.clone(),
            )
        });
        match child {
            Ok(child) => {
                self.running = Some(Running {
                    progress,
                    child,
                    kernel,
                });
            }
            Err(e) => self.error = Some(e),
        }
    }

    /// The `warpscope live` arguments of the window's inputs (checked by [`LiveLab::plan`]
    /// first), the run's scratch folder and the user's file. A user kernel runs from a copy of
    /// the source the form checked, written to the scratch folder, so an edit on disk after the
    /// check does not run unseen.
    #[allow(clippy::type_complexity)]
    fn cli_args(&self) -> Result<(Vec<OsString>, Option<PathBuf>, Option<String>), String> {
        let mut args: Vec<OsString> = vec!["live".into()];
        let (mut scratch, mut user_file) = (None, None);
        if let Some(form) = &self.source {
            let dir = scratch_path("");
            let copy = form.write_copy(&dir)?;
            args.extend(form.cli_args(&copy));
            scratch = Some(dir);
            user_file = Some(form.path.display().to_string());
        } else if let Some(k) = CATALOG.get(self.kernel) {
            let configs: Vec<&str> = k
                .configs
                .iter()
                .zip(&self.chosen)
                .filter(|(_, on)| **on)
                .map(|(c, _)| c.name)
                .collect();
            args.extend([
                k.name.into(),
                "--sizes".into(),
                self.sizes.clone().into(),
                "--configs".into(),
                configs.join(",").into(),
            ]);
            if !self.blocks.trim().is_empty() {
                args.extend(["--blocks".into(), self.blocks.trim().into()]);
            }
        }
        args.extend([
            "--repeat".into(),
            self.repeat.to_string().into(),
            "--warmup".into(),
            self.warmup.to_string().into(),
            "--batch".into(),
            self.batch.to_string().into(),
            "--timeout".into(),
            self.timeout_s.to_string().into(),
            "--format".into(),
            "json".into(),
        ]);
        if !self.use_cupti {
            args.push("--no-cupti".into());
        } else if self.cupti_cost {
            args.push("--cupti-cost".into());
        }
        Ok((args, scratch, user_file))
    }

    /// Collects a finished run, if one finished.
    pub fn poll(&mut self) -> Option<LiveOutput> {
        let running = self.running.as_ref()?;
        let result = match running.child.rx.try_recv() {
            Ok(result) => result,
            Err(std::sync::mpsc::TryRecvError::Empty) => return None,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                Err("the live run stopped without a result".to_string())
            }
        };
        self.running = None;
        match result {
            Ok(output) => {
                self.compile_log = output.run.user.as_ref().map(|u| u.compile_log.clone());
                Some(output)
            }
            Err(e) => {
                if self.source.is_some() && e.starts_with("compiling ") {
                    // NVRTC's log, with the file's own line numbers, under the source.
                    self.compile_log = Some(e);
                    self.error = Some("the kernel did not compile: see the log".into());
                } else if e != "cancelled" {
                    self.error = Some(e);
                }
                None
            }
        }
    }

    /// The window. Returns nothing: finished runs are collected by [`LiveLab::poll`].
    pub fn window_ui(&mut self, ctx: &egui::Context) {
        if !self.open {
            return;
        }
        let mut open = true;
        egui::Window::new("Live lab")
            .open(&mut open)
            .default_width(460.0)
            .show(ctx, |ui| self.contents_ui(ui));
        self.open = open;
        if self.busy() {
            ctx.request_repaint_after(std::time::Duration::from_millis(100));
        }
    }

    fn contents_ui(&mut self, ui: &mut egui::Ui) {
        let gpu = match self.availability(ui.ctx()) {
            None => {
                ui.weak("Looking for a GPU…");
                false
            }
            Some(Ok(facts)) => {
                let text = format!(
                    "{} · {} SMs · compute capability {}.{} · CUDA {}",
                    facts.name,
                    facts.sm_count,
                    facts.compute_capability.0,
                    facts.compute_capability.1,
                    facts.driver_version
                );
                ui.label(RichText::new(text).strong());
                true
            }
            Some(Err(e)) => {
                ui.colored_label(ERROR, e.clone());
                false
            }
        };
        ui.separator();
        let busy = self.busy();
        if self.source.is_some() {
            ui.horizontal(|ui| {
                ui.strong("Your kernel");
                if ui
                    .add_enabled(!busy, egui::Button::new("Bundled kernels"))
                    .on_hover_text("Back to the kernels that come with warpscope")
                    .clicked()
                {
                    self.source = None;
                    self.compile_log = None;
                    self.error = None;
                }
            });
        }
        ui.add_enabled_ui(!busy, |ui| {
            if let Some(form) = &mut self.source {
                form.form_ui(ui);
            } else {
                self.inputs_ui(ui);
            }
            self.options_ui(ui);
        });
        if let Some(form) = &mut self.source {
            // Checked as you type, with the command line's rules: no GPU needed.
            match form.checked(self.repeat, self.warmup) {
                Ok(points) => {
                    ui.weak(format!("Ready: {points} point(s)"));
                }
                Err(e) => {
                    ui.colored_label(ERROR, e);
                }
            }
            form.source_ui(ui, self.compile_log.as_deref());
        } else {
            ui.weak("Drop a .cu file here to time your own kernel.");
        }
        ui.separator();
        if let Some(running) = &self.running {
            let (done, total) = running.progress.counts();
            ui.add(
                egui::ProgressBar::new(running.progress.fraction()).text(format!(
                    "{}: {} ({done}/{total})",
                    running.kernel,
                    running.progress.status()
                )),
            );
            if ui
                .button("Stop")
                .on_hover_text(
                    "Stops the run now, mid-launch too: its process is ended, which is what \
                     stops a kernel on the GPU",
                )
                .clicked()
            {
                running.progress.cancel();
            }
        } else {
            let run = ui
                .add_enabled(gpu, egui::Button::new("Run"))
                .on_disabled_hover_text("Needs an NVIDIA GPU and its driver");
            if run.clicked() {
                self.start(ui.ctx());
            }
        }
        if let Some(e) = &self.error {
            ui.colored_label(ERROR, e);
        }
    }

    fn inputs_ui(&mut self, ui: &mut egui::Ui) {
        let mut chosen_kernel = self.kernel;
        egui::Grid::new("live_inputs")
            .num_columns(2)
            .spacing([12.0, 6.0])
            .show(ui, |ui| {
                let label = ui.label("Kernel");
                egui::ComboBox::from_id_salt("live_kernel")
                    .selected_text(CATALOG.get(self.kernel).map_or("", |k| k.name))
                    .show_ui(ui, |ui| {
                        for (i, k) in CATALOG.iter().enumerate() {
                            ui.selectable_value(&mut chosen_kernel, i, k.name)
                                .on_hover_text(k.summary);
                        }
                    })
                    .response
                    .labelled_by(label.id);
                ui.end_row();
                if let Some(k) = CATALOG.get(self.kernel) {
                    ui.label("");
                    ui.label(RichText::new(k.summary).weak());
                    ui.end_row();
                    let label = ui.label("Block sizes");
                    ui.text_edit_singleline(&mut self.blocks)
                        .labelled_by(label.id)
                        .on_hover_text(
                            "A launch-configuration sweep: 32,64,128,256,512,1024 (for \
                             configurations whose block size can change)",
                        );
                    ui.end_row();
                    let label = ui.label(format!("Sizes ({})", k.size_unit.as_str()));
                    ui.text_edit_singleline(&mut self.sizes)
                        .labelled_by(label.id)
                        .on_hover_text(
                            "Comma-separated: 1M,5M,10M (K, M, G = 1000³…; Ki, Mi, Gi = 1024…)",
                        );
                    ui.end_row();
                    ui.label("Configurations");
                    ui.vertical(|ui| {
                        for (c, on) in k.configs.iter().zip(self.chosen.iter_mut()) {
                            ui.checkbox(on, c.name).on_hover_text(c.summary);
                        }
                    });
                    ui.end_row();
                }
            });
        if chosen_kernel != self.kernel {
            self.select_kernel(chosen_kernel);
        }
    }

    /// Timing options, the same for bundled kernels and the user's.
    fn options_ui(&mut self, ui: &mut egui::Ui) {
        egui::Grid::new("live_options")
            .num_columns(2)
            .spacing([12.0, 6.0])
            .show(ui, |ui| {
                let label = ui.label("Timed launches per point");
                ui.add(egui::DragValue::new(&mut self.repeat).range(1..=1000))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Warm-up launches");
                ui.add(egui::DragValue::new(&mut self.warmup).range(0..=100))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Launches per event pair");
                ui.add(egui::DragValue::new(&mut self.batch).range(1..=warpscope_live::MAX_BATCH))
                    .labelled_by(label.id)
                    .on_hover_text(
                        "Batch: back-to-back launches between one pair of CUDA events, the L2 \
                         flushed once before them; the time is elapsed / launches (1: each launch \
                         on its own, cold L2)",
                    );
                ui.end_row();
                let label = ui.label("Time limit per launch (s)");
                ui.add(
                    egui::DragValue::new(&mut self.timeout_s)
                        .range(0.1..=86_400.0)
                        .speed(1.0),
                )
                .labelled_by(label.id)
                .on_hover_text(
                    "A launch still running after this long fails its point (\"did not finish \
                     within …; it was stopped\"), the rest of the sweep is not run, and the run's \
                     process is ended, which frees the GPU. A batch gets K times this.",
                );
                ui.end_row();
                ui.label("");
                ui.checkbox(&mut self.use_cupti, "Collect CUPTI activity records");
                ui.end_row();
                ui.label("");
                ui.add_enabled(
                    self.use_cupti,
                    egui::Checkbox::new(&mut self.cupti_cost, "Show CUPTI's cost per point"),
                )
                .on_hover_text("Times every point again with CUPTI paused");
                ui.end_row();
            });
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_forms_batch_reaches_the_plan_and_the_command_line() {
        let mut lab = LiveLab::default();
        let sgemm = CATALOG.iter().position(|k| k.name == "sgemm").unwrap();
        lab.select_kernel(sgemm);
        assert_eq!(lab.plan().unwrap().batch, 1);
        lab.batch = 20;
        assert_eq!(lab.plan().unwrap().batch, 20);
        let (args, _, _) = lab.cli_args().unwrap();
        let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
        let at = args.iter().position(|a| a == "--batch").unwrap();
        assert_eq!(args[at + 1], "20");
        lab.batch = 0;
        assert!(lab.plan().unwrap_err().contains("--batch 0"));
    }

    #[test]
    fn the_forms_time_limit_reaches_the_command_line() {
        let mut lab = LiveLab::default();
        let value = |lab: &LiveLab| {
            let (args, _, _) = lab.cli_args().unwrap();
            let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into()).collect();
            let at = args.iter().position(|a| a == "--timeout").unwrap();
            args[at + 1].clone()
        };
        // The command line's default for its default budget.
        assert_eq!(value(&lab), "20");
        lab.timeout_s = 2.5;
        assert_eq!(value(&lab), "2.5");
        assert_eq!(
            crate::live::parse_timeout(&value(&lab)),
            Ok(crate::live::Timeout::Seconds(2.5))
        );
    }
}
