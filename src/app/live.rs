//! The Live lab window (pick a bundled kernel, sizes and configurations, run it on the GPU off
//! the UI thread, watch progress, cancel) and the live results page of a profile made by a live
//! run (the result table and the log-log plot of time against size).

use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};

use egui::{Color32, RichText};
use egui_plot::{Legend, Line, Plot, Points};
use warpscope_live::{
    CATALOG, DeviceFacts, LiveOutput, LiveProgress, LiveRun, PointResult, RunOptions, SweepPlan,
    Target, format_size, parse_sizes,
};

struct Running {
    progress: Arc<LiveProgress>,
    rx: Receiver<Result<LiveOutput, String>>,
    kernel: &'static str,
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
    use_cupti: bool,
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
            use_cupti: true,
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
        SweepPlan::new(k, Some(&sizes), Some(&configs), self.repeat, self.warmup)
            .map_err(|e| e.to_string())
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
        let progress = Arc::new(LiveProgress::default());
        let (tx, rx) = channel();
        let opts = RunOptions {
            use_cupti: self.use_cupti,
            profile_path: format!("live {}", plan.kernel.name).into(),
            ..RunOptions::default()
        };
        let (p, ctx) = (Arc::clone(&progress), ctx.clone());
        let kernel = plan.kernel.name;
        std::thread::spawn(move || {
            // A bug in a run must end it with a message, not leave the window busy forever.
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                warpscope_live::run_sweep(&plan, &opts, &p).map_err(|e| e.to_string())
            }))
            .unwrap_or_else(|panic| {
                Err(format!(
                    "the live run failed: {}",
                    crate::panic_text(panic.as_ref())
                ))
            });
            let _ = tx.send(result);
            ctx.request_repaint();
        });
        self.running = Some(Running {
            progress,
            rx,
            kernel,
        });
    }

    /// Collects a finished run, if one finished.
    pub fn poll(&mut self) -> Option<LiveOutput> {
        let running = self.running.as_ref()?;
        let result = match running.rx.try_recv() {
            Ok(result) => result,
            Err(std::sync::mpsc::TryRecvError::Empty) => return None,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                Err("the live run stopped without a result".to_string())
            }
        };
        self.running = None;
        match result {
            Ok(output) => Some(output),
            Err(e) => {
                if e != "cancelled" {
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
                ui.colored_label(Color32::from_rgb(0xe0, 0x60, 0x50), e.clone());
                false
            }
        };
        ui.separator();
        let busy = self.busy();
        ui.add_enabled_ui(!busy, |ui| self.inputs_ui(ui));
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
            if ui.button("Cancel").clicked() {
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
            ui.colored_label(Color32::from_rgb(0xe0, 0x60, 0x50), e);
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
                let label = ui.label("Timed launches per point");
                ui.add(egui::DragValue::new(&mut self.repeat).range(1..=1000))
                    .labelled_by(label.id);
                ui.end_row();
                let label = ui.label("Warm-up launches");
                ui.add(egui::DragValue::new(&mut self.warmup).range(0..=100))
                    .labelled_by(label.id);
                ui.end_row();
                ui.label("");
                ui.checkbox(&mut self.use_cupti, "Collect CUPTI activity records");
                ui.end_row();
            });
        if chosen_kernel != self.kernel {
            self.select_kernel(chosen_kernel);
        }
    }
}

/// The results of a live run: a row per point, then time against size on log-log axes, one line
/// per configuration (CPU included).
pub fn live_results_ui(ui: &mut egui::Ui, run: &LiveRun) {
    let d = &run.device;
    ui.horizontal_wrapped(|ui| {
        ui.strong(format!("{} on {}", run.kernel, d.name));
        let mut facts = vec![if run.cupti {
            "timed with CUDA events and CUPTI".to_string()
        } else {
            "timed with CUDA events".to_string()
        }];
        if let Some(bw) = run.peaks.d2d_bytes_per_s {
            facts.push(format!("measured copy peak {:.0} GB/s", bw * 1e-9));
        }
        if let Some(f) = run.peaks.sgemm_flops_per_s {
            facts.push(format!("cuBLAS SGEMM {:.0} GFLOP/s", f * 1e-9));
        }
        ui.weak(facts.join(" · "));
    });
    for w in &run.warnings {
        ui.colored_label(Color32::from_rgb(0xe0, 0xa0, 0x40), w);
    }
    // The table on the left, the plot on the right: both keep the panel's full height.
    let height = ui.available_height().max(160.0);
    // The table gets the wider share: its Check column must not hide behind the plot.
    let table_width = (ui.available_width() * 0.58).max(300.0);
    ui.horizontal_top(|ui| {
        ui.allocate_ui(egui::vec2(table_width, height), |ui| {
            egui::ScrollArea::both()
                .id_salt("live_results_table")
                .max_height(height)
                .auto_shrink(false)
                .show(ui, |ui| results_table_ui(ui, run));
        });
        let rest = ui.available_width();
        ui.allocate_ui(egui::vec2(rest, height), |ui| {
            results_plot_ui(ui, run, height);
        });
    });
}

fn results_table_ui(ui: &mut egui::Ui, run: &LiveRun) {
    let unit = run.rate_unit();
    egui::Grid::new("live_results_grid")
        .striped(true)
        .num_columns(8)
        .spacing([14.0, 3.0])
        .show(ui, |ui| {
            for h in [
                "Configuration",
                "Size",
                "Timed",
                "Event median",
                "CUPTI median",
                unit,
                "% of peak",
                "Check",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for p in &run.points {
                let rate = run.rate(p);
                ui.label(&p.config);
                ui.label(format_size(p.size, run.size_unit));
                ui.label(format!("{}/{}", p.event_ns.len(), p.planned));
                ui.monospace(ns_text(p.median_event_ns()));
                ui.monospace(ns_text(p.median_cupti_ns()));
                ui.monospace(rate.map_or_else(|| "-".into(), |r| format!("{:.1}", r.0)));
                ui.monospace(
                    rate.and_then(|r| r.1)
                        .map_or_else(|| "-".into(), |v| format!("{v:.1}%")),
                );
                match p.check {
                    Some(c) if c.ok => {
                        ui.label(c.text());
                    }
                    Some(c) => {
                        ui.colored_label(Color32::from_rgb(0xe0, 0x60, 0x50), c.text());
                    }
                    None => {
                        ui.label("-");
                    }
                }
                ui.end_row();
            }
        });
}

/// A time tick of a log axis with as many digits as it needs (`1 µs`, `20 ms`, `1.5 s`), the
/// same precision on every tick.
fn tick_time(ns: f64) -> String {
    let (value, unit) = match ns.abs() {
        n if n >= 1e9 => (ns / 1e9, "s"),
        n if n >= 1e6 => (ns / 1e6, "ms"),
        n if n >= 1e3 => (ns / 1e3, "µs"),
        _ => (ns, "ns"),
    };
    let rounded = (value * 10.0).round() / 10.0;
    if (rounded - rounded.round()).abs() < 1e-9 {
        format!("{} {unit}", rounded.round())
    } else {
        format!("{rounded:.1} {unit}")
    }
}

fn ns_text(v: Option<i64>) -> String {
    v.map_or_else(|| "-".into(), warpscope_core::time::format_duration_ns)
}

fn results_plot_ui(ui: &mut egui::Ui, run: &LiveRun, height: f32) {
    let unit = run.size_unit;
    // Headroom above the slowest point keeps the legend (top left, about half the plot's
    // height) off the lines.
    let times_ms: Vec<f64> = run
        .points
        .iter()
        .filter_map(PointResult::best_ns)
        .filter(|&t| t > 0)
        .map(|t| (t as f64 / 1e6).log10())
        .collect();
    let (low, high) = times_ms
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &t| {
            (lo.min(t), hi.max(t))
        });
    // A quarter of the data's span above it, between 0.3 and 1 decade: room for the legend
    // without stretching the axis far past the data.
    let headroom = if high.is_finite() {
        high + (0.25 * (high - low)).clamp(0.3, 1.0)
    } else {
        1.0
    };
    Plot::new("live_results_plot")
        .height(height)
        .include_y(headroom)
        .x_grid_spacer(egui_plot::log_grid_spacer(10))
        .y_grid_spacer(egui_plot::log_grid_spacer(10))
        // Time grows with size: the top left stays empty.
        .legend(Legend::default().position(egui_plot::Corner::LeftTop))
        .x_axis_label(format!("size ({}, log scale)", unit.as_str()))
        .y_axis_label("time (log scale)")
        .x_axis_formatter(move |mark, _| format_size(10f64.powf(mark.value).round() as u64, unit))
        .y_axis_formatter(|mark, _| tick_time(10f64.powf(mark.value) * 1e6))
        .label_formatter(move |hover| {
            let (name, point) = match hover {
                egui_plot::HoverPosition::NearDataPoint {
                    plot_name,
                    position,
                    ..
                } => (*plot_name, position),
                egui_plot::HoverPosition::Elsewhere { position } => ("", position),
            };
            Some(format!(
                "{name}\n{}: {}",
                format_size(10f64.powf(point.x).round() as u64, unit),
                warpscope_core::time::format_duration_ns((10f64.powf(point.y) * 1e6) as i64)
            ))
        })
        .show(ui, |plot| {
            let mut configs: Vec<&str> = Vec::new();
            for p in &run.points {
                if !configs.contains(&p.config.as_str()) {
                    configs.push(&p.config);
                }
            }
            for (i, config) in configs.iter().enumerate() {
                let pts: Vec<[f64; 2]> = run
                    .points
                    .iter()
                    .filter(|p| p.config == *config)
                    .filter_map(|p| {
                        let t = p.best_ns()?;
                        (t > 0).then(|| [(p.size as f64).log10(), (t as f64 / 1e6).log10()])
                    })
                    .collect();
                let cpu = run
                    .points
                    .iter()
                    .any(|p| p.config == *config && p.target == Target::Cpu);
                let color = warpscope_ui::compare::run_color(i);
                let mut line = Line::new(*config, pts.clone()).color(color).width(2.0);
                if cpu {
                    line = line.style(egui_plot::LineStyle::dashed_loose());
                }
                plot.line(line);
                // A marker shape per configuration: lines that lie on top of each other (the
                // same time for two configurations) stay visible as two kinds of markers.
                const SHAPES: [egui_plot::MarkerShape; 6] = [
                    egui_plot::MarkerShape::Circle,
                    egui_plot::MarkerShape::Square,
                    egui_plot::MarkerShape::Diamond,
                    egui_plot::MarkerShape::Up,
                    egui_plot::MarkerShape::Cross,
                    egui_plot::MarkerShape::Down,
                ];
                plot.points(
                    Points::new(*config, pts)
                        .color(color)
                        .radius(4.0)
                        .shape(SHAPES[i % SHAPES.len()])
                        .filled(i % 2 == 0),
                );
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ticks_have_one_precision() {
        assert_eq!(tick_time(1e3), "1 µs");
        assert_eq!(tick_time(1e5), "100 µs");
        assert_eq!(tick_time(2e7), "20 ms");
        assert_eq!(tick_time(1.5e9), "1.5 s");
        assert_eq!(tick_time(100.0), "100 ns");
    }
}
